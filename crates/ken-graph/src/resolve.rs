//! Resolution: each reference of a file to the definition(s) it names.
//!
//! Heuristics are tried in order, and the first that finds something
//! decides (see the crate docs for the order and [`Rule`] for the
//! confidences). A reference that none settles is counted as ambiguous
//! (several candidates) or unresolved (with a [`Reason`]) — never guessed.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use ken_core::{ChunkKind, Language, RefKind, Reference};

use crate::index::{DefId, FileId, ImportEntry, SymbolIndex, segments};
use crate::modpath::{Family, family};
use crate::outcome::{Outcome, Reason, Stats};
use crate::scip::{self, ScipIndex};
use ken_core::graph::{DefKey, Edge, FileFacts, Rule};

/// How far re-exports and base classes are followed.
const MAX_HOPS: u32 = 3;

/// Qualifiers that mean "the enclosing class".
const SELF: &[&str] = &["self", "this", "cls", "Self", "$this", "static", "@"];
/// Qualifiers that mean "a base of the enclosing class".
const SUPER: &[&str] = &["super", "super()", "parent"];

/// Names too common to resolve by name alone.
const COMMON: &[&str] = &[
    "new",
    "get",
    "set",
    "init",
    "__init__",
    "__call__",
    "__new__",
    "run",
    "main",
    "len",
    "str",
    "append",
    "push",
    "add",
    "update",
    "close",
    "open",
    "read",
    "write",
    "call",
    "apply",
    "next",
    "map",
    "from",
    "into",
    "to_string",
    "clone",
    "default",
    "fmt",
    "eq",
    "hash",
    "iter",
    "format",
    "join",
    "split",
    "start",
    "stop",
    "name",
    "value",
    "values",
    "keys",
    "items",
    "copy",
    "parse",
    "load",
    "send",
    "reset",
    "clear",
    "size",
    "length",
    "is_empty",
    "contains",
    "insert",
    "remove",
    "delete",
    "pop",
    "put",
    "print",
    "log",
    "debug",
    "info",
    "error",
    "warn",
    "test",
    "setUp",
    "tearDown",
    "String",
    "Error",
    "Ok",
    "Err",
    "Some",
    "None",
    "Result",
    "Option",
    "Vec",
    "toString",
    "equals",
    "hashCode",
    "constructor",
    "initialize",
    "Println",
    "Printf",
    "Sprintf",
    "Errorf",
    "handle",
    "process",
    "execute",
    "wrap",
    "unwrap",
    "expect",
    "count",
    "filter",
    "collect",
    "is_some",
    "is_none",
    "as_str",
    "as_ref",
    "as_bytes",
    "to_owned",
    "trim",
    "find",
    "any",
    "all",
    "sum",
    "min",
    "max",
    "sort",
    "first",
    "last",
    "lines",
    "chars",
    "bytes",
    "flush",
    "extend",
    "replace",
    "starts_with",
    "ends_with",
    "lock",
    "borrow",
    "take",
    "with",
    "ok",
    "err",
    "and_then",
    "map_err",
    "unwrap_or",
    "into_iter",
    "to_vec",
    "capacity",
    "drop",
    "then",
    "catch",
    "forEach",
    "slice",
    "splice",
    "indexOf",
    "concat",
    "keys",
    "entries",
];

/// One file's resolution: its edges, and what became of each reference.
#[derive(Debug, Clone, Default)]
pub struct FileResolution {
    /// Sorted by (from, line, to), without duplicates.
    pub edges: Vec<Edge>,
    /// One per reference of the file, in order.
    pub outcomes: Vec<Outcome>,
    pub stats: Stats,
}

/// The edges of one file. The index must be up to date with `facts` (built
/// from, or updated with, the same facts).
pub fn resolve_file(facts: &FileFacts, index: &SymbolIndex) -> Vec<Edge> {
    resolve_file_with_outcomes(facts, index).edges
}

/// [`resolve_file`], also saying what became of each reference.
pub fn resolve_file_with_outcomes(facts: &FileFacts, index: &SymbolIndex) -> FileResolution {
    resolve_file_scip(facts, index, None)
}

/// [`resolve_file_with_outcomes`], asking a SCIP index first: a
/// reference at a site the index describes (same line, same name) goes
/// where the index says ([`Rule::Scip`]; nowhere when it means a local or
/// something outside the repository), every other reference is resolved
/// by name; sites the index ties to a definition that no reference of the
/// file mentions are edges too (a read, or an import).
pub fn resolve_file_scip(
    facts: &FileFacts,
    index: &SymbolIndex,
    scip: Option<&ScipIndex>,
) -> FileResolution {
    let mut r = Resolver::new(facts, index);
    let mut out = FileResolution::default();
    let sites = scip.and_then(|s| Some((s, s.files.get(&facts.path)?)));
    let mut by_site: HashMap<(u32, &str), Vec<u32>> = HashMap::new();
    if let Some((_, file)) = sites {
        for s in &file.sites {
            by_site
                .entry((s.line, s.name.as_str()))
                .or_default()
                .push(s.target);
        }
    }
    let known = |key: &DefKey| {
        if key.is_module() {
            index.file_id(&key.path).is_some()
        } else {
            index.find(key).is_some()
        }
    };
    let mut mentioned: HashSet<(u32, &str)> = HashSet::new();
    for reference in &facts.references {
        if sites.is_some() {
            mentioned.insert((reference.line, reference.name.as_str()));
        }
        let told = sites.and_then(|(scip, _)| {
            let ids = by_site.get(&(reference.line, reference.name.as_str()))?;
            // a module is depended on where it is imported, not where
            // its name qualifies a member
            let mut keys: Vec<DefKey> = ids
                .iter()
                .flat_map(|&id| scip.target(id))
                .filter(|k| known(k) && (reference.kind == RefKind::Import || !k.is_module()))
                .cloned()
                .collect();
            keys.sort();
            keys.dedup();
            Some(if !keys.is_empty() {
                (Outcome::Resolved(Rule::Scip), keys)
            } else if ids.contains(&scip::LOCAL) {
                (Outcome::Unresolved(Reason::NoDefinition), keys)
            } else {
                (Outcome::Unresolved(Reason::External), keys)
            })
        });
        let (outcome, targets) = match told {
            Some(t) => t,
            None => r.resolve(reference),
        };
        // a module is depended on where it is imported, not where its
        // name is called, read or written in a type
        let (outcome, targets) =
            if reference.kind != RefKind::Import && targets.iter().any(DefKey::is_module) {
                let targets: Vec<DefKey> = targets.into_iter().filter(|k| !k.is_module()).collect();
                if targets.is_empty() {
                    (Outcome::Unresolved(Reason::NoDefinition), targets)
                } else {
                    (outcome, targets)
                }
            } else {
                (outcome, targets)
            };
        out.stats.add(reference.kind, outcome);
        out.outcomes.push(outcome);
        if let Outcome::Resolved(rule) = outcome {
            let from = r.source_key(reference);
            for to in targets {
                out.edges.push(Edge {
                    from: from.clone(),
                    to,
                    kind: reference.kind,
                    path: facts.path.clone(),
                    line: reference.line,
                    rule,
                    confidence: rule.confidence(),
                });
            }
        }
    }
    if let Some((scip, file)) = sites {
        // what the index saw that the file's references do not say
        for s in file.sites.iter().filter(|s| s.target > scip::OUTSIDE) {
            if mentioned.contains(&(s.line, s.name.as_str())) {
                continue;
            }
            let from = r.enclosing_key(s.line);
            let kind = if s.import {
                RefKind::Import
            } else {
                RefKind::Read
            };
            for to in scip
                .target(s.target)
                .iter()
                .filter(|k| known(k) && (s.import || !k.is_module()))
            {
                out.edges.push(Edge {
                    from: from.clone(),
                    to: to.clone(),
                    kind,
                    path: facts.path.clone(),
                    line: s.line,
                    rule: Rule::Scip,
                    confidence: Rule::Scip.confidence(),
                });
            }
        }
    }
    out.edges.sort_by(|a, b| {
        (&a.from, a.line, &a.to, a.kind.name()).cmp(&(&b.from, b.line, &b.to, b.kind.name()))
    });
    out.edges
        .dedup_by(|a, b| a.from == b.from && a.to == b.to && a.line == b.line && a.kind == b.kind);
    out
}

/// Every file's edges and the counts over all of them.
#[derive(Debug, Clone, Default)]
pub struct Resolution {
    pub edges: Vec<Edge>,
    pub stats: Stats,
}

/// Resolve every file against one index.
pub fn resolve_all(files: &[FileFacts], index: &SymbolIndex) -> Resolution {
    let mut out = Resolution::default();
    for facts in files {
        let r = resolve_file_with_outcomes(facts, index);
        out.edges.extend(r.edges);
        out.stats.merge(&r.stats);
    }
    out
}

/// What an imported name (or module) is bound to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    Defs(Vec<DefId>),
    /// A module: its files, and the spec it was imported by.
    Module(Vec<FileId>, String),
    /// A module outside the repository.
    External,
    /// Not found, in a language whose modules cannot be found reliably.
    Unknown,
}

/// Does a definition of `def` kind fit a reference of `kind`?
fn fits(kind: RefKind, def: ChunkKind) -> bool {
    use ChunkKind::*;
    match kind {
        RefKind::Call => matches!(
            def,
            Function | Method | Class | Struct | Enum | Macro | Type
        ),
        RefKind::Type => matches!(def, Class | Struct | Enum | Trait | Interface | Type),
        RefKind::Inherit => {
            matches!(
                def,
                Class | Struct | Enum | Trait | Interface | Type | Namespace
            )
        }
        RefKind::Import => def != Impl,
        RefKind::Read => matches!(def, Function | Method),
    }
}

fn is_type_like(def: ChunkKind) -> bool {
    fits(RefKind::Inherit, def)
}

/// `crate::walk`, `self.foo`, `a->b`, `App\\Models` → identifier segments.
fn qualifier_segments(q: &str) -> Vec<&str> {
    segments(q).collect()
}

/// The module spec `module` extended by `name`, in the language's syntax.
fn join_module(fam: Family, module: &str, name: &str) -> String {
    let sep = match fam {
        Family::Rust => "::",
        Family::Js | Family::Go | Family::Ruby | Family::C | Family::Bash => "/",
        Family::Php => "\\",
        _ => ".",
    };
    if module.is_empty()
        || module.ends_with(sep)
        || (fam == Family::Python && module.ends_with('.'))
    {
        format!("{module}{name}")
    } else {
        format!("{module}{sep}{name}")
    }
}

/// Definitions named `name` at the top level of `files`, following
/// re-exports (`from .app import Flask` in a package's `__init__`).
fn name_in_module(index: &SymbolIndex, files: &[FileId], name: &str, hops: u32) -> Vec<DefId> {
    // CommonJS modules name their exports `exports.name`.
    let exported = |q: &str| {
        q == name
            || q.strip_prefix("exports.") == Some(name)
            || q.strip_prefix("module.exports.") == Some(name)
    };
    let mut out: Vec<DefId> = files
        .iter()
        .flat_map(|&f| index.file_defs(f))
        .filter(|&id| exported(&index.def(id).qualname) && index.def(id).kind != ChunkKind::Impl)
        .collect();
    if out.is_empty() && hops < MAX_HOPS {
        for &f in files {
            let entry = index.file(f);
            // a name the file exports: imported under it (`from .app
            // import Flask`), or under another (`export { Hono as HonoBase }`)
            let exported = |i: &&ImportEntry| i.alias.as_deref().unwrap_or(&i.name) == name;
            for imp in entry.imports.iter().filter(exported) {
                if let Target::Defs(ids) = import_target(
                    index,
                    &entry.path,
                    entry.language,
                    &imp.name,
                    &imp.module,
                    hops + 1,
                ) {
                    out.extend(ids);
                }
            }
            if !out.is_empty() {
                break;
            }
        }
    }
    out
}

/// The parameter names of a signature as written (`def f(self, app:
/// Flask = None, *args)`, `function f(c: Context)`): what stands before a
/// `:` or `=` in each item of its first parenthesised list.
fn parameters(signature: &str) -> impl Iterator<Item = &str> {
    let inner = signature.split_once('(').map_or("", |(_, rest)| rest);
    let mut items: Vec<&str> = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' if depth == 0 => {
                items.push(&inner[start..i]);
                start = inner.len();
                break;
            }
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < inner.len() {
        items.push(&inner[start..]);
    }
    items.into_iter().filter_map(|item| {
        let item = item.trim().trim_start_matches(['*', '.', '&']);
        let name = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .next()?;
        (!name.is_empty()).then_some(name)
    })
}

/// The module-level variable `name` of `module` whose class that
/// module's file says (following re-exports, as [`name_in_module`]): the
/// file, and the class as written there.
fn imported_value(
    index: &SymbolIndex,
    importer: &str,
    lang: Language,
    name: &str,
    module: &str,
    hops: u32,
) -> Option<(FileId, String)> {
    let files = index.module_files(importer, lang, module);
    for &f in &files {
        if let Some(v) = index.file(f).values.iter().find(|v| v.name == name) {
            return Some((f, v.class.clone()));
        }
    }
    if hops >= MAX_HOPS {
        return None;
    }
    for &f in &files {
        let entry = index.file(f);
        for imp in entry
            .imports
            .iter()
            .filter(|i| i.alias.as_deref().unwrap_or(&i.name) == name)
        {
            let found = imported_value(
                index,
                &entry.path,
                entry.language,
                &imp.name,
                &imp.module,
                hops + 1,
            );
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

/// What `name` imported from `module` by the file `importer` is.
pub(crate) fn import_target(
    index: &SymbolIndex,
    importer: &str,
    lang: Language,
    name: &str,
    module: &str,
    hops: u32,
) -> Target {
    let fam = family(lang);
    // `export { a as b }`: an import from the file itself
    let files = if module.is_empty() {
        index.file_id(importer).into_iter().collect()
    } else {
        index.module_files(importer, lang, module)
    };
    if files.is_empty() {
        // `use a::b` where `a::b` is itself a module.
        let joined = join_module(fam, module, name);
        let sub = index.module_files(importer, lang, &joined);
        if !sub.is_empty() {
            return Target::Module(sub, joined);
        }
        // Go: a standard library path has no domain (`fmt`, `net/http`).
        let go_std = fam == Family::Go && !module.split('/').next().unwrap_or("").contains('.');
        return if fam.reliable_modules() || go_std {
            Target::External
        } else {
            Target::Unknown
        };
    }
    if name == "*" {
        return Target::Module(files, module.to_string());
    }
    let defs = name_in_module(index, &files, name, hops);
    if !defs.is_empty() {
        return Target::Defs(defs);
    }
    let joined = join_module(fam, module, name);
    let sub = index.module_files(importer, lang, &joined);
    if !sub.is_empty() {
        return Target::Module(sub, joined);
    }
    Target::Module(files, module.to_string())
}

struct Resolver<'a> {
    index: &'a SymbolIndex,
    facts: &'a FileFacts,
    fam: Family,
    file: Option<FileId>,
    /// This file's definitions by qualified name and by short name.
    local_qualname: HashMap<&'a str, Vec<DefId>>,
    local_name: HashMap<&'a str, Vec<DefId>>,
    /// Keys of `facts.definitions` (for `from`).
    from_keys: Vec<DefKey>,
    /// Imported name or module spec (`.`-joined segments) → target.
    bindings: HashMap<String, Target>,
    /// Targets of the import references, by (line, name).
    imports: HashMap<(u32, &'a str), Target>,
    /// Modules imported with `*`.
    stars: Vec<FileId>,
    /// Imported module-level variables of a known class, by the name
    /// they are bound under: the file that says the class, and the class
    /// as written there.
    values: HashMap<String, (FileId, String)>,
    /// [`Resolver::value_named`] through a module, found once per qualifier.
    module_values: RefCell<HashMap<String, Option<(FileId, String)>>>,
}

impl<'a> Resolver<'a> {
    fn new(facts: &'a FileFacts, index: &'a SymbolIndex) -> Resolver<'a> {
        let file = index.file_id(&facts.path);
        let mut local_qualname: HashMap<&str, Vec<DefId>> = HashMap::new();
        let mut local_name: HashMap<&str, Vec<DefId>> = HashMap::new();
        if let Some(f) = file {
            for id in index.file_defs(f) {
                let d = index.def(id);
                local_qualname
                    .entry(d.qualname.as_str())
                    .or_default()
                    .push(id);
                local_name.entry(d.name.as_str()).or_default().push(id);
            }
        }
        let mut seen: HashMap<&str, u32> = HashMap::new();
        let from_keys = facts
            .definitions
            .iter()
            .map(|d| {
                let n = seen.entry(d.qualname.as_str()).or_insert(0);
                *n += 1;
                DefKey::new(facts.path.clone(), d.qualname.clone(), *n - 1)
            })
            .collect();
        let mut r = Resolver {
            index,
            facts,
            fam: family(facts.language),
            file,
            local_qualname,
            local_name,
            from_keys,
            bindings: HashMap::new(),
            imports: HashMap::new(),
            stars: Vec::new(),
            values: HashMap::new(),
            module_values: RefCell::new(HashMap::new()),
        };
        r.bind_imports();
        r
    }

    fn bind_imports(&mut self) {
        let facts = self.facts;
        for reference in facts
            .references
            .iter()
            .filter(|r| r.kind == RefKind::Import)
        {
            let module = reference.qualifier.as_deref().unwrap_or("");
            let name = reference.name.as_str();
            let target = import_target(self.index, &facts.path, facts.language, name, module, 0);
            if name == "*" {
                if let Target::Module(files, _) = &target {
                    self.stars.extend(files);
                }
            } else {
                // `from m import a as b` binds `b`
                let bound = reference.alias.as_deref().unwrap_or(name);
                self.bindings
                    .entry(bound.to_string())
                    .or_insert_with(|| target.clone());
                // a variable, not a definition: `from flask import request`
                // (at the top of the file: an import inside a function
                // binds its name there only)
                if matches!(target, Target::Module(..))
                    && reference.from.is_none()
                    && let Some(value) =
                        imported_value(self.index, &facts.path, facts.language, name, module, 0)
                {
                    self.values.entry(bound.to_string()).or_insert(value);
                }
                // `import os.path` is used as `os.path.join`.
                let spec = qualifier_segments(module).join(".");
                if !spec.is_empty() && matches!(target, Target::Module(..) | Target::External) {
                    self.bindings.entry(spec).or_insert_with(|| target.clone());
                }
            }
            self.imports.insert((reference.line, name), target);
        }
    }

    /// The definition a reference is written in (the module pseudo-definition at top level).
    fn source_key(&self, r: &Reference) -> DefKey {
        let Some(from) = &r.from else {
            return DefKey::module(self.facts.path.clone());
        };
        let mut best: Option<(u32, usize)> = None;
        for (i, d) in self.facts.definitions.iter().enumerate() {
            if &d.qualname != from {
                continue;
            }
            let span = d.end_line.saturating_sub(d.start_line);
            let inside = d.start_line <= r.line && r.line <= d.end_line;
            let score = if inside { span } else { u32::MAX };
            if best.is_none_or(|(s, _)| score < s) {
                best = Some((score, i));
            }
        }
        match best {
            Some((_, i)) => self.from_keys[i].clone(),
            None => DefKey::module(self.facts.path.clone()),
        }
    }

    /// The key of the innermost definition around `line` (the module's
    /// outside every definition).
    fn enclosing_key(&self, line: u32) -> DefKey {
        self.facts
            .definitions
            .iter()
            .enumerate()
            .filter(|(_, d)| d.start_line <= line && line <= d.end_line)
            .min_by_key(|(_, d)| {
                (
                    d.end_line.saturating_sub(d.start_line),
                    std::cmp::Reverse(d.start_line),
                )
            })
            .map_or_else(
                || DefKey::module(self.facts.path.clone()),
                |(i, _)| self.from_keys[i].clone(),
            )
    }

    fn keys(&self, ids: &[DefId]) -> Vec<DefKey> {
        ids.iter().map(|&id| self.index.key(id)).collect()
    }

    fn same_family(&self, id: DefId) -> bool {
        self.index.family(self.index.def_file(id)) == self.fam
    }

    /// The file's definitions of `qualname` that fit `kind`: one of
    /// several (same name in sibling scopes, a redefinition, a C++
    /// declaration and its definition), chosen for a reference written on
    /// `line` when given.
    fn local(&self, qualname: &str, kind: RefKind, line: Option<u32>) -> Vec<DefId> {
        let ids = self
            .local_qualname
            .get(qualname)
            .map_or(&[][..], Vec::as_slice);
        let fitting: Vec<DefId> = ids
            .iter()
            .copied()
            .filter(|&id| fits(kind, self.index.def(id).kind))
            .collect();
        // Python and JavaScript: the one around the reference, else the
        // nearest before it (what straight-line code has bound by then;
        // `const Content = ...` in each of a file's test callbacks), else
        // the widest after it (a function called before `@overload` stubs
        // and their implementation: the implementation).
        if let (Some(line), true, true) = (
            line,
            fitting.len() > 1,
            matches!(self.fam, Family::Python | Family::Js),
        ) {
            let def = |id: DefId| self.index.def(id);
            let around = fitting
                .iter()
                .copied()
                .filter(|&id| def(id).start_line <= line && line <= def(id).end_line)
                .max_by_key(|&id| def(id).start_line);
            let before = || {
                fitting
                    .iter()
                    .copied()
                    .filter(|&id| def(id).end_line < line)
                    .max_by_key(|&id| def(id).start_line)
            };
            let after = || {
                fitting
                    .iter()
                    .copied()
                    .filter(|&id| def(id).start_line > line)
                    .max_by_key(|&id| {
                        let d = def(id);
                        (
                            d.end_line.saturating_sub(d.start_line),
                            std::cmp::Reverse(d.start_line),
                        )
                    })
            };
            if let Some(id) = around.or_else(before).or_else(after) {
                return vec![id];
            }
        }
        // A C++ declaration and its definition: the one with a body.
        match fitting.len() {
            0 | 1 => fitting,
            _ => {
                let widest = fitting.iter().copied().max_by_key(|&id| {
                    let d = self.index.def(id);
                    (d.end_line - d.start_line, std::cmp::Reverse(id))
                });
                widest.into_iter().collect()
            }
        }
    }

    fn resolve(&mut self, r: &Reference) -> (Outcome, Vec<DefKey>) {
        if r.kind == RefKind::Import {
            return self.resolve_import(r);
        }
        let name = r.name.as_str();
        let q = r.qualifier.as_deref().filter(|q| !q.is_empty());
        let from = r.from.as_deref();
        let found =
            |rule: Rule, ids: Vec<DefId>, me: &Self| (Outcome::Resolved(rule), me.keys(&ids));

        // (a) the file's scopes, the enclosing class and its bases
        match q {
            None => {
                if let Some(ids) = self.scope(from, name, r.kind, r.line) {
                    return found(Rule::Scope, ids, self);
                }
            }
            Some(q) if SELF.contains(&q) => {
                if let Some((rule, ids)) = self.member_of_self(from, name, r.kind, true) {
                    return found(rule, ids, self);
                }
            }
            Some(q) if SUPER.contains(&q) => {
                if let Some((rule, ids)) = self.member_of_self(from, name, r.kind, false) {
                    return found(rule, ids, self);
                }
                // a base's member that no base in the repository defines:
                // the base is a library's (never the caller itself, nor
                // another definition of the name found by guessing)
                return (Outcome::Unresolved(Reason::External), Vec::new());
            }
            _ => {}
        }
        // (a') a variable made from a known class: its member, or a base's
        if let Some(class) = r.receiver.as_deref().filter(|_| q.is_some())
            && let Some(ids) = self.member_of_receiver(class, name, r.kind)
        {
            return found(Rule::Receiver, ids, self);
        }
        // (a'') an imported module-level variable of a class its module
        // says (`from flask import request`, then `request.get_json()`)
        if let Some(q) = q
            && let Some((file, class)) = self.value_named(q)
            && !self.is_parameter(
                r.from.as_deref(),
                qualifier_segments(q).first().copied().unwrap_or(q),
            )
            && let Some(ids) = self.member_of_class_in(file, &class, name, r.kind)
        {
            return found(Rule::Receiver, ids, self);
        }
        // (b) imports
        if let Some(result) = self.via_imports(q, name, r.kind) {
            return match result {
                Ok(targets) => (Outcome::Resolved(Rule::Import), targets),
                Err(reason) => (Outcome::Unresolved(reason), Vec::new()),
            };
        }
        if q.is_none() {
            if self.fam.implicit_self()
                && let Some((rule, ids)) = self.member_of_self(from, name, r.kind, true)
            {
                return found(rule, ids, self);
            }
            if self.fam.package_dirs()
                && let Some(ids) = self.package(name, r.kind)
            {
                return found(Rule::Package, ids, self);
            }
        }
        // (c) a qualifier naming a known type or module
        if let Some(q) = q.filter(|q| !SELF.contains(q) && !SUPER.contains(q))
            && let Some(outcome) = self.qualified(q, name, r.kind)
        {
            return outcome;
        }
        // A member read is tied only by scope, imports, types or its
        // receiver's class: an attribute of the same name is far likelier
        // than a method found by guessing.
        if r.kind == RefKind::Read {
            return (Outcome::Unresolved(Reason::NoDefinition), Vec::new());
        }
        // A qualified type (`io::Result`, `t.Any`) or a path written with
        // `::` (`crate::a::name`) names its namespace statically: when
        // neither imports nor (c) found it, no other definition of the name
        // is the one meant.
        if let Some(q) = q {
            let first = qualifier_segments(q).first().copied().unwrap_or("");
            if self.fam.std_roots().contains(&first) {
                return (Outcome::Unresolved(Reason::External), Vec::new());
            }
            let static_path = matches!(r.kind, RefKind::Type | RefKind::Inherit)
                || q.contains("::")
                || q.contains('\\');
            if static_path {
                return (Outcome::Unresolved(Reason::NoDefinition), Vec::new());
            }
        }
        // the only definition of the name in this file (not one nested in
        // a function, which nothing outside it can reach)
        let same_file: Vec<DefId> = self
            .local_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&id| {
                let d = self.index.def(id);
                fits(r.kind, d.kind)
                    && !self.in_function(&d.qualname)
                    && (q.is_none() || d.qualname.contains('.'))
            })
            .collect();
        // (a call's result has an unknown type: `iter().count()` is not this file's `count`)
        let opaque = q.is_some_and(|q| q.contains(['(', '[', '…']));
        if same_file.len() == 1 && !opaque && !COMMON.contains(&name) {
            return found(Rule::SameFile, same_file, self);
        }
        // (d) the only definition in the repository; `pkg.Name` through a
        // module that could not be found names a top-level definition
        let through_module = q.is_some_and(|q| {
            let first = qualifier_segments(q).first().copied().unwrap_or("");
            matches!(self.bindings.get(first), Some(Target::Unknown))
        });
        self.global(q.is_some() && !through_module, name, r.kind)
    }

    /// A bare name in the enclosing scopes, innermost first.
    fn scope(
        &self,
        from: Option<&str>,
        name: &str,
        kind: RefKind,
        line: u32,
    ) -> Option<Vec<DefId>> {
        let mut prefix = from;
        loop {
            let candidate = match prefix {
                Some(p) => format!("{p}.{name}"),
                None => name.to_string(),
            };
            // A class body is not a scope for its methods (Python, JS,
            // Rust...), only for code written directly in it.
            let visible = match prefix {
                None => true,
                Some(p) => from == Some(p) || self.fam.implicit_self() || !self.is_container(p),
            };
            if visible {
                let ids = self.local(&candidate, kind, Some(line));
                if !ids.is_empty() {
                    return Some(ids);
                }
            }
            match prefix {
                None => return None,
                Some(p) => prefix = p.rsplit_once('.').map(|(a, _)| a),
            }
        }
    }

    /// Is `qualname` written inside a function or method of this file?
    /// The imported module-level variable `q` names, bound by name
    /// (`request`) or reached through an imported module (`flask.session`
    /// after `import flask`): its file and its class as written there.
    fn value_named(&self, q: &str) -> Option<(FileId, String)> {
        if let Some(v) = self.values.get(q) {
            return Some(v.clone());
        }
        let (head, last) = q.rsplit_once('.')?;
        let Some(Target::Module(_, spec)) = self.bindings.get(head) else {
            return None;
        };
        if let Some(known) = self.module_values.borrow().get(q) {
            return known.clone();
        }
        let found = imported_value(
            self.index,
            &self.facts.path,
            self.facts.language,
            last,
            spec,
            0,
        );
        self.module_values
            .borrow_mut()
            .insert(q.to_string(), found.clone());
        found
    }

    /// Whether `name` is a parameter of the definition `from` or of one
    /// around it (`def client(app)` shadows an imported `app`), as their
    /// signatures say.
    fn is_parameter(&self, from: Option<&str>, name: &str) -> bool {
        let mut scope = from;
        while let Some(q) = scope {
            let declares = self
                .facts
                .definitions
                .iter()
                .filter(|d| d.qualname == q)
                .filter_map(|d| d.signature.as_deref())
                .any(|s| parameters(s).any(|p| p == name));
            if declares {
                return true;
            }
            scope = q.rsplit_once('.').map(|(outer, _)| outer);
        }
        false
    }

    fn in_function(&self, qualname: &str) -> bool {
        let Some((parent, _)) = qualname.rsplit_once('.') else {
            return false;
        };
        self.local_qualname
            .get(parent)
            .into_iter()
            .flatten()
            .any(|&id| {
                matches!(
                    self.index.def(id).kind,
                    ChunkKind::Function | ChunkKind::Method
                )
            })
    }

    /// Is `qualname` a class-like definition of this file?
    fn is_container(&self, qualname: &str) -> bool {
        self.local_qualname
            .get(qualname)
            .into_iter()
            .flatten()
            .any(|&id| self.index.def(id).kind.is_container())
    }

    /// The class a reference is written in: the innermost class-like
    /// definition around it, else the qualifier of its method (`Command`
    /// for Go's `Command.AddCommand`, `res` for JS `res.send`).
    fn container_of(&self, from: Option<&str>) -> Option<String> {
        let from = from?;
        let mut p = Some(from);
        while let Some(q) = p {
            let is_class = self.local_qualname.get(q).into_iter().flatten().any(|&id| {
                is_type_like(self.index.def(id).kind) || self.index.def(id).kind == ChunkKind::Impl
            });
            if is_class {
                return Some(q.to_string());
            }
            p = q.rsplit_once('.').map(|(a, _)| a);
        }
        from.rsplit_once('.').map(|(a, _)| a.to_string())
    }

    /// `self.name` (or `super().name` when `own` is false).
    fn member_of_self(
        &self,
        from: Option<&str>,
        name: &str,
        kind: RefKind,
        own: bool,
    ) -> Option<(Rule, Vec<DefId>)> {
        let container = self.container_of(from)?;
        if own {
            let ids = self.local(&format!("{container}.{name}"), kind, None);
            if !ids.is_empty() {
                return Some((Rule::Scope, ids));
            }
            // impl blocks and methods in other files (Go, Rust)
            let qualname = format!("{container}.{name}");
            let ids: Vec<DefId> = self
                .index
                .by_qualname(&qualname)
                .iter()
                .copied()
                .filter(|&id| self.same_family(id) && fits(kind, self.index.def(id).kind))
                .collect();
            let ids = self.nearest(ids);
            if ids.len() == 1 {
                return Some((Rule::Qualified, ids));
            }
        }
        // base classes, breadth first
        let file = self.file?;
        self.member_of_bases(file, container, name, kind)
            .map(|ids| (Rule::Base, ids))
    }

    /// `name` in the bases of `container` (a class of `file`), breadth first.
    fn member_of_bases(
        &self,
        file: FileId,
        container: String,
        name: &str,
        kind: RefKind,
    ) -> Option<Vec<DefId>> {
        let mut level: Vec<(FileId, String)> = vec![(file, container)];
        for _ in 0..MAX_HOPS {
            let mut next = Vec::new();
            for (f, c) in &level {
                for base in self.bases(*f, c) {
                    let d = self.index.def(base);
                    let bf = self.index.def_file(base);
                    let qualname = format!("{}.{name}", d.qualname);
                    let ids: Vec<DefId> = self
                        .index
                        .file_defs(bf)
                        .filter(|&id| {
                            self.index.def(id).qualname == qualname
                                && fits(kind, self.index.def(id).kind)
                        })
                        .collect();
                    if !ids.is_empty() {
                        return Some(ids);
                    }
                    next.push((bf, d.qualname.clone()));
                }
            }
            if next.is_empty() {
                break;
            }
            level = next;
        }
        None
    }

    /// `name` of the class a variable was made from (`Db`, `flask.Flask`,
    /// as written at the assignment): the class found as a type named in
    /// this file, then its member or its bases'. None when the class or
    /// the member is not in the repository.
    fn member_of_receiver(&self, class: &str, name: &str, kind: RefKind) -> Option<Vec<DefId>> {
        let types: Vec<DefId> = match class.rsplit_once('.') {
            None => self.type_named(class),
            Some((q, last)) => match self.via_imports(Some(q), last, RefKind::Type) {
                Some(Ok(keys)) => keys.iter().filter_map(|k| self.index.find(k)).collect(),
                _ => Vec::new(),
            },
        };
        self.member_of_types(types, name, kind)
    }

    /// `name` of `class` as the file `file` names it (a module-level
    /// variable's class, read where the variable is defined).
    fn member_of_class_in(
        &self,
        file: FileId,
        class: &str,
        name: &str,
        kind: RefKind,
    ) -> Option<Vec<DefId>> {
        let types = match class.rsplit_once('.') {
            None => self.type_in_file(file, class, None),
            Some((q, last)) => self.type_in_file(file, last, Some(q)),
        };
        self.member_of_types(types, name, kind)
    }

    /// `name` defined in the first of `types` that has it, or in its bases.
    fn member_of_types(&self, types: Vec<DefId>, name: &str, kind: RefKind) -> Option<Vec<DefId>> {
        for t in types {
            let d = self.index.def(t);
            if !is_type_like(d.kind) {
                continue;
            }
            let file = self.index.def_file(t);
            let qualname = format!("{}.{name}", d.qualname);
            let own: Vec<DefId> = self
                .index
                .file_defs(file)
                .filter(|&id| {
                    self.index.def(id).qualname == qualname && fits(kind, self.index.def(id).kind)
                })
                .collect();
            if !own.is_empty() {
                return Some(own);
            }
            if let Some(ids) = self.member_of_bases(file, d.qualname.clone(), name, kind) {
                return Some(ids);
            }
        }
        None
    }

    /// The base classes of `container` in `file`, resolved in that file.
    fn bases(&self, file: FileId, container: &str) -> Vec<DefId> {
        let entry = self.index.file(file);
        let mut out = Vec::new();
        for b in entry.bases.iter().filter(|b| b.container == container) {
            out.extend(self.type_in_file(file, &b.name, b.qualifier.as_deref()));
        }
        out
    }

    /// A type named in another file: its own definitions, its imports, or
    /// the only one of that name.
    fn type_in_file(&self, file: FileId, name: &str, qualifier: Option<&str>) -> Vec<DefId> {
        let entry = self.index.file(file);
        let local: Vec<DefId> = self
            .index
            .file_defs(file)
            .filter(|&id| self.index.def(id).name == name && is_type_like(self.index.def(id).kind))
            .collect();
        if qualifier.is_none() && !local.is_empty() {
            return local;
        }
        let bound = qualifier.map_or(name, |q| q.split(['.', ':']).next().unwrap_or(q));
        // an import binds its alias where it has one (`from .sansio import
        // Blueprint as SansioBlueprint`; `class Blueprint(SansioBlueprint)`)
        for imp in entry
            .imports
            .iter()
            .filter(|i| i.alias.as_deref().unwrap_or(&i.name) == bound)
        {
            match import_target(
                self.index,
                &entry.path,
                entry.language,
                &imp.name,
                &imp.module,
                0,
            ) {
                Target::Defs(ids) if qualifier.is_none() => return ids,
                Target::Module(files, _) => {
                    let ids = name_in_module(self.index, &files, name, 0);
                    if !ids.is_empty() {
                        return ids;
                    }
                }
                _ => {}
            }
        }
        let fam = self.index.family(file);
        let global: Vec<DefId> = self
            .index
            .by_name(name)
            .iter()
            .copied()
            .filter(|&id| {
                is_type_like(self.index.def(id).kind)
                    && self.index.family(self.index.def_file(id)) == fam
            })
            .collect();
        if global.len() == 1 {
            global
        } else {
            Vec::new()
        }
    }

    /// Names and qualifiers bound by the file's imports. `Some(Err)` when
    /// the name is reached through a module outside the repository.
    fn via_imports(
        &self,
        q: Option<&str>,
        name: &str,
        kind: RefKind,
    ) -> Option<Result<Vec<DefKey>, Reason>> {
        // (only modules known to be outside are `External`)
        let external = || Some(Err(Reason::External));
        let Some(q) = q else {
            return match self.bindings.get(name) {
                Some(Target::Defs(ids)) => {
                    let ids: Vec<DefId> = ids
                        .iter()
                        .copied()
                        .filter(|&id| fits(kind, self.index.def(id).kind))
                        .collect();
                    (!ids.is_empty()).then(|| Ok(self.keys(&ids)))
                }
                Some(Target::Module(files, _)) => Some(Ok(files
                    .iter()
                    .map(|&f| DefKey::module(self.index.file(f).path.clone()))
                    .collect())),
                Some(Target::External) => external(),
                Some(Target::Unknown) | None => {
                    let ids: Vec<DefId> = name_in_module(self.index, &self.stars, name, 0)
                        .into_iter()
                        .filter(|&id| fits(kind, self.index.def(id).kind))
                        .collect();
                    (!ids.is_empty()).then(|| Ok(self.keys(&ids)))
                }
            };
        };
        let segs = qualifier_segments(q);
        for i in (1..=segs.len()).rev() {
            let Some(target) = self.bindings.get(&segs[..i].join(".")) else {
                continue;
            };
            let rest = &segs[i..];
            return match target {
                Target::Module(files, spec) => {
                    let ids = self.in_module(files, spec, rest, name, kind);
                    Some(if ids.is_empty() {
                        Err(Reason::NoDefinition)
                    } else {
                        Ok(self.keys(&ids))
                    })
                }
                Target::Defs(defs) => {
                    let mut ids = Vec::new();
                    for &d in defs {
                        let mut qualname = self.index.def(d).qualname.clone();
                        for r in rest {
                            qualname = format!("{qualname}.{r}");
                        }
                        qualname = format!("{qualname}.{name}");
                        let file = self.index.def_file(d);
                        ids.extend(self.index.file_defs(file).filter(|&id| {
                            self.index.def(id).qualname == qualname
                                && fits(kind, self.index.def(id).kind)
                        }));
                    }
                    (!ids.is_empty()).then(|| Ok(self.keys(&ids)))
                }
                Target::External => external(),
                Target::Unknown => None,
            };
        }
        None
    }

    /// `name` reached through the module `spec` (its `files`) and then the
    /// segments `rest` (`flask.json.dumps`: module `flask`, rest `json`).
    fn in_module(
        &self,
        files: &[FileId],
        spec: &str,
        rest: &[&str],
        name: &str,
        kind: RefKind,
    ) -> Vec<DefId> {
        let fits_kind = |ids: Vec<DefId>| -> Vec<DefId> {
            ids.into_iter()
                .filter(|&id| fits(kind, self.index.def(id).kind))
                .collect()
        };
        if rest.is_empty() {
            let ids = fits_kind(name_in_module(self.index, files, name, 0));
            if !ids.is_empty() || self.fam != Family::Go {
                return ids;
            }
        }
        // a class of the module (`mod.Class.method`)
        let qualname = rest
            .iter()
            .chain(std::iter::once(&name))
            .copied()
            .collect::<Vec<_>>()
            .join(".");
        let ids: Vec<DefId> = files
            .iter()
            .flat_map(|&f| self.index.file_defs(f))
            .filter(|&id| self.index.def(id).qualname == qualname)
            .collect();
        let ids = fits_kind(ids);
        if !ids.is_empty() {
            return ids;
        }
        // a submodule (`flask.json` of `flask`)
        if let Some((first, more)) = rest.split_first() {
            let sub_spec = join_module(self.fam, spec, first);
            let sub = self
                .index
                .module_files(&self.facts.path, self.facts.language, &sub_spec);
            if !sub.is_empty() {
                return self.in_module(&sub, &sub_spec, more, name, kind);
            }
        }
        Vec::new()
    }

    /// Go: a top-level definition in another file of the same directory.
    fn package(&self, name: &str, kind: RefKind) -> Option<Vec<DefId>> {
        let files = self
            .index
            .package_files(&self.facts.path, self.facts.language);
        let ids: Vec<DefId> = files
            .iter()
            .flat_map(|&f| self.index.file_defs(f))
            .filter(|&id| {
                let d = self.index.def(id);
                d.qualname == name && fits(kind, d.kind)
            })
            .collect();
        (!ids.is_empty()).then_some(ids)
    }

    /// Of several candidates, those in this file if any, else all.
    fn nearest(&self, ids: Vec<DefId>) -> Vec<DefId> {
        let here: Vec<DefId> = ids
            .iter()
            .copied()
            .filter(|&id| Some(self.index.def_file(id)) == self.file)
            .collect();
        if here.is_empty() { ids } else { here }
    }

    /// (c): `Type.name`, `Type::name`, `crate::module::name`.
    fn qualified(&self, q: &str, name: &str, kind: RefKind) -> Option<(Outcome, Vec<DefKey>)> {
        if q.contains('(') || q.contains('…') {
            return None; // reached through a call: the type is unknown
        }
        let segs = qualifier_segments(q);
        let last = *segs.last()?;
        // a module path written out
        let files = self
            .index
            .module_files(&self.facts.path, self.facts.language, q);
        if !files.is_empty() {
            let ids: Vec<DefId> = name_in_module(self.index, &files, name, 0)
                .into_iter()
                .filter(|&id| fits(kind, self.index.def(id).kind))
                .collect();
            if !ids.is_empty() {
                return Some((Outcome::Resolved(Rule::Qualified), self.keys(&ids)));
            }
        }
        // a member of a type named `last`
        let members: Vec<DefId> = self
            .index
            .by_member(last, name)
            .iter()
            .copied()
            .filter(|&id| {
                self.same_family(id)
                    && fits(kind, self.index.def(id).kind)
                    && !self.index.is_nested(id)
            })
            .collect();
        let members = self.nearest(members);
        match members.len() {
            0 => {}
            1 => return Some((Outcome::Resolved(Rule::Qualified), self.keys(&members))),
            n => {
                // the type itself may settle it
                let types = self.type_named(last);
                let ids: Vec<DefId> = members
                    .iter()
                    .copied()
                    .filter(|&m| {
                        types.iter().any(|&t| {
                            self.index.def_file(t) == self.index.def_file(m)
                                && self.index.def(m).qualname
                                    == format!("{}.{name}", self.index.def(t).qualname)
                        })
                    })
                    .collect();
                if ids.len() == 1 {
                    return Some((Outcome::Resolved(Rule::Qualified), self.keys(&ids)));
                }
                return Some((Outcome::Ambiguous(n), Vec::new()));
            }
        }
        // `Type.new` / `Type::new` without a `new` of its own: the type
        if name == "new" && kind == RefKind::Call {
            let types = self.type_named(last);
            if types.len() == 1 {
                return Some((Outcome::Resolved(Rule::Qualified), self.keys(&types)));
            }
        }
        None
    }

    /// Type-like definitions named `name`: this file's, else imported, else the only one.
    fn type_named(&self, name: &str) -> Vec<DefId> {
        let local: Vec<DefId> = self
            .local_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&id| is_type_like(self.index.def(id).kind))
            .collect();
        if !local.is_empty() {
            return local;
        }
        if let Some(Target::Defs(ids)) = self.bindings.get(name) {
            return ids.clone();
        }
        let global: Vec<DefId> = self
            .index
            .by_name(name)
            .iter()
            .copied()
            .filter(|&id| self.same_family(id) && is_type_like(self.index.def(id).kind))
            .collect();
        if global.len() == 1 {
            global
        } else {
            Vec::new()
        }
    }

    /// (d): the only fitting definition of the name in the repository.
    fn global(&self, qualified: bool, name: &str, kind: RefKind) -> (Outcome, Vec<DefKey>) {
        let ids: Vec<DefId> = self
            .index
            .by_name(name)
            .iter()
            .copied()
            .filter(|&id| {
                let d = self.index.def(id);
                self.same_family(id)
                    && fits(kind, d.kind)
                    && !self.index.is_nested(id)
                    && if qualified {
                        d.qualname.contains('.')
                    } else {
                        d.kind != ChunkKind::Method
                    }
            })
            .collect();
        if ids.is_empty() {
            return (Outcome::Unresolved(Reason::NoDefinition), Vec::new());
        }
        if COMMON.contains(&name) || name.chars().count() < 2 {
            return (Outcome::Unresolved(Reason::CommonName), Vec::new());
        }
        match ids.len() {
            1 => (Outcome::Resolved(Rule::UniqueGlobal), self.keys(&ids)),
            n => (Outcome::Ambiguous(n), Vec::new()),
        }
    }

    fn resolve_import(&self, r: &Reference) -> (Outcome, Vec<DefKey>) {
        let target = self
            .imports
            .get(&(r.line, r.name.as_str()))
            .cloned()
            .unwrap_or(Target::Unknown);
        match target {
            Target::Defs(ids) => (Outcome::Resolved(Rule::Import), self.keys(&ids)),
            Target::Module(files, _) => (
                Outcome::Resolved(Rule::Import),
                files
                    .iter()
                    .map(|&f| DefKey::module(self.index.file(f).path.clone()))
                    .collect(),
            ),
            Target::External => (Outcome::Unresolved(Reason::External), Vec::new()),
            Target::Unknown if r.name == "*" => {
                (Outcome::Unresolved(Reason::NoDefinition), Vec::new())
            }
            Target::Unknown => match self.global(false, &r.name, RefKind::Import) {
                // not in the repository as far as can be told
                (Outcome::Unresolved(Reason::NoDefinition), _) => {
                    (Outcome::Unresolved(Reason::External), Vec::new())
                }
                other => other,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_fit() {
        assert!(fits(RefKind::Call, ChunkKind::Function));
        assert!(fits(RefKind::Call, ChunkKind::Class));
        assert!(!fits(RefKind::Type, ChunkKind::Function));
        assert!(fits(RefKind::Inherit, ChunkKind::Namespace));
        assert!(!fits(RefKind::Import, ChunkKind::Impl));
    }

    #[test]
    fn parameters_are_read_from_signatures() {
        fn names(s: &str) -> Vec<&str> {
            parameters(s).collect()
        }
        assert_eq!(
            names("def f(self, app: Flask = None, *args, **kw)"),
            ["self", "app", "args", "kw"]
        );
        assert_eq!(names("def client(app)"), ["app"]);
        assert_eq!(
            names("function f(c: Context<Env, { a: 1, b: 2 }>, ...rest)"),
            ["c", "rest"]
        );
        assert!(names("class A").is_empty());
    }

    #[test]
    fn modules_join_per_language() {
        assert_eq!(join_module(Family::Python, "flask", "json"), "flask.json");
        assert_eq!(join_module(Family::Python, "..", "app"), "..app");
        assert_eq!(join_module(Family::Rust, "crate::a", "b"), "crate::a::b");
        assert_eq!(join_module(Family::Js, "./lib", "x"), "./lib/x");
    }
}
