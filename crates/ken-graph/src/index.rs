//! The symbol index: every definition of the repository by short name,
//! qualified name, member name (`Type.method`) and file, every file by
//! path and module key, and what each file imports and mentions.
//!
//! The index holds only what resolution reads from *other* files, so it
//! is small: definitions (no signatures), import entries, base classes and
//! the set of names each file mentions. It serialises as that list of
//! files; the lookup maps are rebuilt on load (see `BENCHMARKS.md` for
//! the cost).

use std::collections::{BTreeSet, HashMap, HashSet};

use ken_core::{ChunkKind, Language, RefKind, TypedValue};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::modpath::{
    Family, Layout, Lookup, family, module_keys, module_lookups, rust_crate_dir, rust_module,
};
use ken_core::graph::{DefKey, FileFacts, MODULE};

/// A definition's number in an index (valid until the index changes).
pub type DefId = u32;
/// A file's number in an index (valid until the index changes).
pub type FileId = u32;

/// One file as the index keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub language: Language,
    pub defs: Vec<DefEntry>,
    /// Import references: (imported name, module as written).
    pub imports: Vec<ImportEntry>,
    /// Base classes named by the file's classes.
    pub bases: Vec<BaseEntry>,
    /// Module-level variables of a known class (`request: RequestProxy`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<TypedValue>,
    /// Every name the file's references mention (names and qualifier
    /// segments), sorted: what [`SymbolIndex::update`] matches changes against.
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DefEntry {
    pub name: String,
    pub qualname: String,
    pub kind: ChunkKind,
    pub start_line: u32,
    pub end_line: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ImportEntry {
    pub name: String,
    pub module: String,
    /// The name it is bound under in the file (`from m import a as b`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BaseEntry {
    /// Qualified name of the class that inherits.
    pub container: String,
    pub name: String,
    pub qualifier: Option<String>,
}

impl FileEntry {
    pub fn from_facts(facts: &FileFacts) -> FileEntry {
        let defs = facts
            .definitions
            .iter()
            .map(|d| DefEntry {
                name: d.name.clone(),
                qualname: d.qualname.clone(),
                kind: d.kind,
                start_line: d.start_line,
                end_line: d.end_line,
            })
            .collect();
        let mut imports = Vec::new();
        let mut bases = Vec::new();
        let mut names = BTreeSet::new();
        for r in &facts.references {
            names.insert(r.name.clone());
            if let Some(q) = &r.qualifier {
                names.extend(segments(q).map(str::to_string));
            }
            match r.kind {
                RefKind::Import => imports.push(ImportEntry {
                    name: r.name.clone(),
                    module: r.qualifier.clone().unwrap_or_default(),
                    alias: r.alias.clone(),
                }),
                RefKind::Inherit => {
                    if let Some(c) = &r.from {
                        bases.push(BaseEntry {
                            container: c.clone(),
                            name: r.name.clone(),
                            qualifier: r.qualifier.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        imports.sort();
        imports.dedup();
        bases.sort();
        bases.dedup();
        FileEntry {
            path: facts.path.clone(),
            language: facts.language,
            defs,
            imports,
            bases,
            values: facts.values.clone(),
            names: names.into_iter().collect(),
        }
    }

    /// What other files' resolution may depend on: definitions (qualified
    /// name and kind), imports, base classes; as short names.
    fn signature(&self) -> BTreeSet<(String, String)> {
        let mut s = BTreeSet::new();
        for d in &self.defs {
            s.insert((d.name.clone(), format!("def {} {}", d.qualname, d.kind)));
        }
        for i in &self.imports {
            s.insert((i.name.clone(), format!("import {}", i.module)));
        }
        for v in &self.values {
            s.insert((v.name.clone(), format!("value {}", v.class)));
        }
        for b in &self.bases {
            let short = b.container.rsplit('.').next().unwrap_or(&b.container);
            s.insert((
                short.to_string(),
                format!("base {} {}", b.container, b.name),
            ));
        }
        s
    }

    /// Names by which the file itself is imported (module segments).
    fn module_names(&self) -> impl Iterator<Item = &str> {
        segments(&self.path).flat_map(|s| [s, s.split('.').next().unwrap_or(s)])
    }
}

/// Identifier-like pieces of a qualifier or path (`self.foo`, `crate::walk`,
/// `./lib/router`).
pub(crate) fn segments(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|p| !p.is_empty())
}

/// What [`SymbolIndex::update`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    /// Files whose edges must be computed again: the changed files and
    /// every file mentioning a name whose definitions changed. Sorted.
    pub reresolve: Vec<String>,
    /// The names whose definitions, imports or base classes changed.
    pub changed_names: BTreeSet<String>,
}

/// A definition as a lookup returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    pub key: DefKey,
    pub kind: ChunkKind,
    pub start_line: u32,
    pub end_line: u32,
}

/// Definitions and modules of a repository, for resolution and look-ups.
#[derive(Debug, Clone, Default)]
pub struct SymbolIndex {
    files: Vec<FileEntry>,
    maps: Maps,
}

#[derive(Debug, Clone, Default)]
struct Maps {
    /// First DefId of each file (and the total at the end).
    first: Vec<DefId>,
    def_file: Vec<FileId>,
    /// Rank among the file's definitions with the same qualified name.
    nth: Vec<u32>,
    /// Written inside a function or method (reachable only from there).
    nested: Vec<bool>,
    by_path: HashMap<String, FileId>,
    by_name: HashMap<String, Vec<DefId>>,
    by_qualname: HashMap<String, Vec<DefId>>,
    /// `Parent.name` (the last two segments of a qualified name).
    by_member: HashMap<String, Vec<DefId>>,
    by_key: HashMap<String, Vec<FileId>>,
    /// Rust crate directory name (`ignore`) → present.
    rust_crates: BTreeSet<String>,
    /// Python package directories (holding an `__init__.py`).
    py_packages: HashSet<String>,
    layout: Layout,
    /// Name → files that mention it.
    mentions: HashMap<String, Vec<FileId>>,
}

impl Serialize for SymbolIndex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.files.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SymbolIndex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SymbolIndex, D::Error> {
        let files = Vec::<FileEntry>::deserialize(d)?;
        Ok(SymbolIndex::from_entries(files))
    }
}

impl SymbolIndex {
    /// The index of `files` (a path given twice: the last one wins).
    pub fn build<'a>(files: impl IntoIterator<Item = &'a FileFacts>) -> SymbolIndex {
        SymbolIndex::from_entries(files.into_iter().map(FileEntry::from_facts).collect())
    }

    /// The index of already extracted entries.
    pub fn from_entries(mut files: Vec<FileEntry>) -> SymbolIndex {
        files.sort_by(|a, b| a.path.cmp(&b.path));
        // keep the last of duplicate paths
        files.reverse();
        files.dedup_by(|a, b| a.path == b.path);
        files.reverse();
        let mut index = SymbolIndex {
            files,
            maps: Maps::default(),
        };
        index.rebuild_maps();
        index
    }

    fn rebuild_maps(&mut self) {
        let mut m = Maps::default();
        for f in &self.files {
            m.layout.add(&f.path);
        }
        let total: usize = self.files.iter().map(|f| f.defs.len()).sum();
        m.def_file.reserve(total);
        m.nth.reserve(total);
        let mut next: DefId = 0;
        for (fid, f) in self.files.iter().enumerate() {
            let fid = fid as FileId;
            m.first.push(next);
            m.by_path.insert(f.path.clone(), fid);
            let mut seen: HashMap<&str, u32> = HashMap::new();
            let functions: HashSet<&str> = f
                .defs
                .iter()
                .filter(|d| matches!(d.kind, ChunkKind::Function | ChunkKind::Method))
                .map(|d| d.qualname.as_str())
                .collect();
            for d in &f.defs {
                m.nested.push(
                    d.qualname
                        .rsplit_once('.')
                        .is_some_and(|(parent, _)| functions.contains(parent)),
                );
                let id = next;
                next += 1;
                m.def_file.push(fid);
                let n = seen.entry(d.qualname.as_str()).or_insert(0);
                m.nth.push(*n);
                *n += 1;
                m.by_name.entry(d.name.clone()).or_default().push(id);
                m.by_qualname
                    .entry(d.qualname.clone())
                    .or_default()
                    .push(id);
                if let Some(member) = member_key(&d.qualname) {
                    m.by_member.entry(member.to_string()).or_default().push(id);
                }
            }
            for key in module_keys(&f.path, f.language, &m.layout) {
                m.by_key.entry(key).or_default().push(fid);
            }
            if f.language == Language::Rust {
                let (root, _) = rust_module(&f.path, &m.layout);
                m.rust_crates.insert(rust_crate_dir(&root).to_string());
            }
            if let Some(dir) = f.path.strip_suffix("/__init__.py") {
                m.py_packages.insert(dir.to_string());
            } else if f.path == "__init__.py" {
                m.py_packages.insert(String::new());
            }
            for name in &f.names {
                m.mentions.entry(name.clone()).or_default().push(fid);
            }
        }
        m.first.push(next);
        for files in m.by_key.values_mut() {
            files.dedup();
        }
        self.maps = m;
    }

    /// Apply a batch of changes: `changed` files are added or replaced,
    /// `removed` paths dropped. Returns the files to resolve again.
    ///
    /// Invariant: after re-resolving exactly `reresolve` (and dropping the
    /// edges of removed files), the edges of every file equal what
    /// [`resolve_file`](crate::resolve_file) computes against the new index.
    /// Resolution of a file reads other files only through names it
    /// mentions (its references' names and qualifier segments): the
    /// definitions with that name (qualified name, kind, rank), the import
    /// entries and base classes of the files it reaches, and module keys
    /// (whose segments it mentions when it imports them). So a file not
    /// mentioning any changed name cannot resolve differently.
    pub fn update(&mut self, changed: &[FileFacts], removed: &[&str]) -> Update {
        let mut names = BTreeSet::new();
        let mut touched: BTreeSet<String> = BTreeSet::new();
        let mut by_path: HashMap<String, FileEntry> = std::mem::take(&mut self.files)
            .into_iter()
            .map(|f| (f.path.clone(), f))
            .collect();
        for path in removed {
            if let Some(old) = by_path.remove(*path) {
                names.extend(old.signature().into_iter().map(|(n, _)| n));
                names.extend(old.module_names().map(str::to_string));
            }
        }
        for facts in changed {
            let new = FileEntry::from_facts(facts);
            match by_path.get(&facts.path) {
                Some(old) => {
                    let (a, b) = (old.signature(), new.signature());
                    names.extend(a.symmetric_difference(&b).map(|(n, _)| n.clone()));
                }
                None => {
                    names.extend(new.signature().into_iter().map(|(n, _)| n));
                    names.extend(new.module_names().map(str::to_string));
                }
            }
            touched.insert(facts.path.clone());
            by_path.insert(facts.path.clone(), new);
        }
        self.files = by_path.into_values().collect();
        self.files.sort_by(|a, b| a.path.cmp(&b.path));
        self.rebuild_maps();
        for name in &names {
            for &f in self.maps.mentions.get(name).into_iter().flatten() {
                touched.insert(self.files[f as usize].path.clone());
            }
        }
        Update {
            reresolve: touched.into_iter().collect(),
            changed_names: names,
        }
    }

    pub fn files(&self) -> &[FileEntry] {
        &self.files
    }

    pub fn file(&self, id: FileId) -> &FileEntry {
        &self.files[id as usize]
    }

    pub fn file_id(&self, path: &str) -> Option<FileId> {
        self.maps.by_path.get(path).copied()
    }

    pub fn def_count(&self) -> usize {
        self.maps.def_file.len()
    }

    pub fn def(&self, id: DefId) -> &DefEntry {
        let f = self.maps.def_file[id as usize];
        let local = id - self.maps.first[f as usize];
        &self.files[f as usize].defs[local as usize]
    }

    /// Is the definition written inside a function or method?
    pub fn is_nested(&self, id: DefId) -> bool {
        self.maps.nested[id as usize]
    }

    pub fn def_file(&self, id: DefId) -> FileId {
        self.maps.def_file[id as usize]
    }

    /// The definitions of a file, as ids.
    pub fn file_defs(&self, file: FileId) -> std::ops::Range<DefId> {
        self.maps.first[file as usize]..self.maps.first[file as usize + 1]
    }

    pub fn key(&self, id: DefId) -> DefKey {
        let f = &self.files[self.def_file(id) as usize];
        DefKey::new(
            f.path.clone(),
            self.def(id).qualname.clone(),
            self.maps.nth[id as usize],
        )
    }

    /// The definition a key names (`None` for module keys and unknown keys).
    pub fn find(&self, key: &DefKey) -> Option<DefId> {
        let file = self.file_id(&key.path)?;
        self.file_defs(file).find(|&id| {
            self.def(id).qualname == key.qualname && self.maps.nth[id as usize] == key.nth
        })
    }

    pub fn by_name(&self, name: &str) -> &[DefId] {
        self.maps.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    pub fn by_qualname(&self, qualname: &str) -> &[DefId] {
        self.maps
            .by_qualname
            .get(qualname)
            .map_or(&[], Vec::as_slice)
    }

    /// Definitions whose qualified name ends with `Parent.name`.
    pub fn by_member(&self, parent: &str, name: &str) -> &[DefId] {
        self.maps
            .by_member
            .get(&format!("{parent}.{name}"))
            .map_or(&[], Vec::as_slice)
    }

    pub(crate) fn family(&self, file: FileId) -> Family {
        family(self.files[file as usize].language)
    }

    /// Files that may be the module `spec` imported from `importer`.
    pub(crate) fn module_files(&self, importer: &str, lang: Language, spec: &str) -> Vec<FileId> {
        let fam = family(lang);
        for lookup in module_lookups(importer, lang, spec, &self.maps.layout) {
            let found: Vec<FileId> = match &lookup {
                Lookup::Path(p) => self.file_id(p).into_iter().collect(),
                Lookup::Key(k) => match k.strip_prefix("rscrate:") {
                    Some(rest) => self.rust_crate_files(rest),
                    None => self.maps.by_key.get(k).cloned().unwrap_or_default(),
                },
            };
            let mut found: Vec<FileId> = found
                .into_iter()
                .filter(|&f| self.family(f) == fam)
                .filter(|&f| match (&lookup, fam) {
                    (Lookup::Key(k), Family::Python) => self.python_root(f, k),
                    _ => true,
                })
                .collect();
            if found.is_empty() {
                continue;
            }
            if found.len() > 1
                && fam == Family::Python
                && let Lookup::Key(k) = &lookup
            {
                // Where sys.path would find them: keep the modules whose
                // directory is a likely search path entry, if any.
                let likely: Vec<FileId> = found
                    .iter()
                    .copied()
                    .filter(|&f| likely_sys_path(importer, &self.python_base(f, k)))
                    .collect();
                if !likely.is_empty() {
                    found = likely;
                }
            }
            if found.len() > 1 && fam != Family::Go {
                // The candidates nearest to the importer.
                let best = found
                    .iter()
                    .map(|&f| common_prefix(importer, &self.files[f as usize].path))
                    .max()
                    .unwrap_or(0);
                found.retain(|&f| common_prefix(importer, &self.files[f as usize].path) == best);
            }
            return found;
        }
        Vec::new()
    }

    /// Is the file `f`, matched by the absolute module key `key` (`a/b`),
    /// really module `a.b`: does `a` sit where packages start (its
    /// directory is not itself a package)? `import typing` is not
    /// `flask/typing.py`.
    fn python_root(&self, f: FileId, key: &str) -> bool {
        !self.maps.py_packages.contains(&self.python_base(f, key))
    }

    /// The directory the file `f` is module `key` (`a/b`) from: the one
    /// above `a` (`src` for `src/a/b.py`; `""` for `a/b.py`).
    fn python_base(&self, f: FileId, key: &str) -> String {
        let path = &self.files[f as usize].path;
        let module_dir = path.strip_suffix("/__init__.py").unwrap_or(path);
        let depth = key.split('/').count();
        let segs: Vec<&str> = module_dir.split('/').collect();
        let above = segs.len().saturating_sub(depth);
        segs[..above].join("/")
    }

    /// `grep_searcher#sinks` → the `sinks` module of the crate in `crates/searcher`.
    fn rust_crate_files(&self, spec: &str) -> Vec<FileId> {
        let (name, module) = spec.split_once('#').unwrap_or((spec, ""));
        let name = name.replace('-', "_");
        let mut out = Vec::new();
        for dir in &self.maps.rust_crates {
            let d = dir.replace('-', "_");
            if name == d || name.ends_with(&format!("_{d}")) {
                let key = format!("rsname:{dir}#{module}");
                out.extend(self.maps.by_key.get(&key).into_iter().flatten());
            }
        }
        out
    }

    /// Files in the same directory and family as `file` (Go packages).
    pub(crate) fn package_files(&self, path: &str, lang: Language) -> Vec<FileId> {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let key = format!("pkg:{dir}");
        if dir.is_empty() {
            // the repository root: files without a `/`
            return self
                .files
                .iter()
                .enumerate()
                .filter(|(_, f)| !f.path.contains('/') && family(f.language) == family(lang))
                .map(|(i, _)| i as FileId)
                .collect();
        }
        self.maps
            .by_key
            .get(&key)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&f| self.files[f as usize].path.rsplit_once('/').map(|(d, _)| d) == Some(dir))
            .collect()
    }

    /// Definitions named (or qualified-named) `name`: exact qualified
    /// names first, then qualified-name suffixes (`Command.Name` for
    /// `Name`), then short names. Sorted by path, then line.
    pub fn lookup(&self, name: &str) -> Vec<Candidate> {
        let mut ids: Vec<DefId> = self.by_qualname(name).to_vec();
        if ids.is_empty() {
            ids = self.by_name(name).to_vec();
        }
        if ids.is_empty()
            && let Some((parent, short)) = name.rsplit_once(['.', ':'])
        {
            let parent = parent.trim_end_matches(':');
            let parent = parent.rsplit(['.', ':']).next().unwrap_or(parent);
            ids = self.by_member(parent, short).to_vec();
        }
        let mut out: Vec<Candidate> = ids
            .into_iter()
            .map(|id| {
                let d = self.def(id);
                Candidate {
                    key: self.key(id),
                    kind: d.kind,
                    start_line: d.start_line,
                    end_line: d.end_line,
                }
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.key.path, a.start_line, &a.key).cmp(&(&b.key.path, b.start_line, &b.key))
        });
        out
    }

    /// Definitions directly inside `container` (same file, qualified name
    /// one segment longer): the members an impact query may add to a class.
    pub fn members(&self, container: &DefKey) -> Vec<DefKey> {
        let Some(file) = self.file_id(&container.path) else {
            return Vec::new();
        };
        let prefix = if container.is_module() {
            String::new()
        } else {
            format!("{}.", container.qualname)
        };
        self.file_defs(file)
            .filter(|&id| {
                let q = &self.def(id).qualname;
                q.strip_prefix(&prefix)
                    .is_some_and(|rest| !rest.contains('.'))
                    && q != MODULE
            })
            .map(|id| self.key(id))
            .collect()
    }
}

/// `a.b.c` → `b.c`; `None` for a name without a parent.
pub(crate) fn member_key(qualname: &str) -> Option<&str> {
    let last = qualname.rfind('.')?;
    let start = qualname[..last].rfind('.').map_or(0, |i| i + 1);
    Some(&qualname[start..])
}

/// Is `base` a directory Python would likely search for the absolute
/// imports of the file `importer`: the repository root, the importer's own
/// directory or any directory above it (the script's directory, pytest's rootdir
/// insertion), or a conventional source root (`src`, `lib`, at any depth)?
/// Not, say, a fixture directory deep inside `tests/` that only a test's
/// own `sys.path` manipulation makes importable.
fn likely_sys_path(importer: &str, base: &str) -> bool {
    if base.is_empty() {
        return true;
    }
    let dir = importer.rsplit_once('/').map_or("", |(d, _)| d);
    let above_importer = dir == base
        || dir
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'));
    let source_root = matches!(base.rsplit('/').next(), Some("src" | "lib"));
    above_importer || source_root
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sys_path_entries() {
        let t = "tests/test_x.py";
        assert!(likely_sys_path(t, ""));
        assert!(likely_sys_path(t, "tests"));
        assert!(likely_sys_path(t, "src"));
        assert!(likely_sys_path(t, "packages/core/src"));
        assert!(likely_sys_path("a/b/c.py", "a"));
        assert!(!likely_sys_path(t, "tests/apps/a/b"));
        assert!(!likely_sys_path(t, "test"));
        assert!(!likely_sys_path("testsuite/x.py", "tests"));
    }
}
