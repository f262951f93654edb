//! SCIP in: what a compiler-grade indexer (scip-python, scip-typescript,
//! rust-analyzer, scip-java...) says each reference is, read from its
//! `.scip` file and kept per file as *sites*: a line, the name written
//! there, and the definitions of this repository it means (or that it
//! means none of them: a local, a library). [`crate::resolve_file_scip`]
//! asks a file's sites before its own rules.
//!
//! Reading checks the index against the indexed text: a document whose
//! definitions are not spelled where the index puts them describes another
//! version of the file and is left out (its file falls back to resolution
//! by name), as are documents of files this index does not hold.

use std::collections::{BTreeMap, HashMap, HashSet};

use ken_core::graph::{DefKey, FileFacts};
use protobuf::Message;
use scip::types::{Document, Occurrence, PositionEncoding, descriptor::Suffix, occurrence};
use serde::{Deserialize, Serialize};

use crate::index::SymbolIndex;

/// [`ScipSite::target`] of a local symbol (a variable, a parameter).
pub const LOCAL: u32 = 0;
/// [`ScipSite::target`] of a global symbol with no definition in this
/// repository (a library, a builtin, a name the index could not tie back).
pub const OUTSIDE: u32 = 1;

/// A SCIP index as read against one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScipIndex {
    /// The tool that wrote it, with its version (`scip-python 0.6.6`).
    pub tool: String,
    /// [`ken_core::content_hash`] of the file read, to tell whether it changed.
    pub digest: String,
    /// Targets by id: each a set of definitions one symbol means (several:
    /// overloads, a property's getter and setter). Ids [`LOCAL`] and
    /// [`OUTSIDE`] are empty.
    pub targets: Vec<Vec<DefKey>>,
    /// The sites of each file the index describes, by path.
    pub files: BTreeMap<String, ScipFile>,
}

/// What the index says about the references of one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScipFile {
    /// Sorted by (line, name, target).
    pub sites: Vec<ScipSite>,
}

/// One occurrence of a symbol that is not its definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ScipSite {
    /// 1-based.
    pub line: u32,
    /// The text the occurrence spans (the name as written).
    pub name: String,
    /// Index into [`ScipIndex::targets`].
    pub target: u32,
    /// The index marks it an import.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub import: bool,
}

/// What reading an index did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScipStats {
    pub tool: String,
    /// Documents in the index.
    pub documents: usize,
    /// Documents whose sites are used.
    pub files: usize,
    /// Documents of files this index does not hold.
    pub not_indexed: usize,
    /// Documents that describe another version of their file (a few examples in `stale_examples`).
    pub stale: usize,
    pub stale_examples: Vec<String>,
    /// Symbols defined in the used documents, and how many of them were
    /// tied to a definition of the repository's own.
    pub symbols: usize,
    pub symbols_matched: usize,
    /// Sites kept.
    pub sites: usize,
}

/// One file's facts and indexed text, as [`read`] asks for them.
pub struct ScipSource<'a> {
    pub facts: Option<&'a FileFacts>,
    pub text: String,
}

/// Read a `.scip` file's bytes against the symbol index of the snapshot
/// it should describe. `file` gives a path's facts and indexed text (None:
/// not indexed).
pub fn read<'a>(
    bytes: &[u8],
    index: &SymbolIndex,
    file: impl FnMut(&str) -> Option<ScipSource<'a>>,
) -> Result<(ScipIndex, ScipStats), String> {
    let scip = scip::types::Index::parse_from_bytes(bytes)
        .map_err(|e| format!("not a SCIP index (protobuf: {e})"))?;
    let tool = scip
        .metadata
        .tool_info
        .as_ref()
        .map(|t| format!("{} {}", t.name, t.version).trim().to_string())
        .unwrap_or_default();
    let mut stats = ScipStats {
        tool: tool.clone(),
        documents: scip.documents.len(),
        ..ScipStats::default()
    };
    let docs = usable_documents(&scip.documents, file, &mut stats);
    let defined = definitions(&docs, index, &mut stats);
    let mut out = ScipIndex {
        tool,
        digest: ken_core::content_hash(bytes),
        targets: vec![Vec::new(), Vec::new()],
        files: BTreeMap::new(),
    };
    let mut target_ids: HashMap<&str, u32> = HashMap::new();
    for (doc, source) in &docs {
        let mut target_of = |symbol: &str| -> u32 {
            if scip::symbol::is_local_symbol(symbol) {
                return LOCAL;
            }
            let Some((symbol, keys)) = defined.get_key_value(symbol) else {
                return OUTSIDE;
            };
            *target_ids.entry(symbol).or_insert_with(|| {
                out.targets.push(keys.clone());
                (out.targets.len() - 1) as u32
            })
        };
        let sites = sites_of(doc, source, &mut target_of);
        stats.sites += sites.len();
        stats.files += 1;
        out.files
            .insert(doc_path(doc).to_string(), ScipFile { sites });
    }
    Ok((out, stats))
}

fn doc_path(doc: &Document) -> &str {
    doc.relative_path.trim_start_matches("./")
}

/// The documents worth reading: of indexed files, and spelled where the
/// index says.
fn usable_documents<'d, 'a>(
    documents: &'d [Document],
    mut file: impl FnMut(&str) -> Option<ScipSource<'a>>,
    stats: &mut ScipStats,
) -> Vec<(&'d Document, ScipSource<'a>)> {
    let mut docs = Vec::new();
    for doc in documents {
        let path = doc_path(doc);
        let Some(source) = file(path) else {
            stats.not_indexed += 1;
            continue;
        };
        if !spelled_as_indexed(doc, &lines_of(&source.text)) {
            stats.stale += 1;
            if stats.stale_examples.len() < 5 {
                stats.stale_examples.push(path.to_string());
            }
            continue;
        }
        docs.push((doc, source));
    }
    docs
}

/// Each symbol the documents define, tied to the repository's
/// definitions: the innermost one of its name around its definition
/// occurrence, and those its other declarations name.
fn definitions<'d>(
    docs: &[(&'d Document, ScipSource<'_>)],
    index: &SymbolIndex,
    stats: &mut ScipStats,
) -> HashMap<&'d str, Vec<DefKey>> {
    let mut defined: HashMap<&str, Vec<DefKey>> = HashMap::new();
    let mut symbols: HashSet<&str> = HashSet::new();
    for (doc, _) in docs {
        let path = doc_path(doc);
        for occ in doc.occurrences.iter().filter(|o| is_definition(o)) {
            let Some((name, suffix)) = last_descriptor(&occ.symbol) else {
                continue;
            };
            symbols.insert(occ.symbol.as_str());
            let Some(range) = Range::of(occ) else {
                continue;
            };
            let key = if matches!(suffix, Suffix::Namespace | Suffix::Meta) && range.is_empty() {
                Some(DefKey::module(path))
            } else {
                definition_at(index, path, range.line + 1, &name)
            };
            if let Some(key) = key {
                let keys = defined.entry(occ.symbol.as_str()).or_default();
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    // another declaration of a symbol defined elsewhere (an `@overload`
    // stub or the implementation after them, a property's setter): the
    // same symbol, so its definition is one of the symbol's too
    for (doc, source) in docs {
        let path = doc_path(doc);
        let lines = lines_of(&source.text);
        let encoding = doc.position_encoding.enum_value_or_default();
        for occ in doc.occurrences.iter().filter(|o| !is_definition(o)) {
            let Some(keys) = defined.get_mut(occ.symbol.as_str()) else {
                continue;
            };
            let Some(range) = Range::of(occ) else {
                continue;
            };
            let (Some(name), Some(before)) =
                (range.text(&lines, encoding), range.before(&lines, encoding))
            else {
                continue;
            };
            if !declares(before) {
                continue;
            }
            if let Some(key) = definition_at(index, path, range.line + 1, name)
                && !keys.contains(&key)
            {
                keys.push(key);
            }
        }
    }
    stats.symbols = symbols.len();
    stats.symbols_matched = defined.len();
    defined
}

/// A document's sites, sorted; `target_of` gives a symbol's target id.
fn sites_of(
    doc: &Document,
    source: &ScipSource<'_>,
    target_of: &mut impl FnMut(&str) -> u32,
) -> Vec<ScipSite> {
    let lines = lines_of(&source.text);
    let encoding = doc.position_encoding.enum_value_or_default();
    // the names the file's own references mention, by line
    let mentioned: HashSet<(u32, &str)> = source
        .facts
        .map(|f| {
            f.references
                .iter()
                .map(|r| (r.line, r.name.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let mut sites = Vec::new();
    for occ in doc.occurrences.iter().filter(|o| !is_definition(o)) {
        if occ.symbol.is_empty() {
            continue;
        }
        let Some(range) = Range::of(occ) else {
            continue;
        };
        let Some(name) = range.text(&lines, encoding).filter(|n| !n.is_empty()) else {
            continue;
        };
        let before = range.before(&lines, encoding).unwrap_or_default();
        let target = target_of(&occ.symbol);
        let line = range.line + 1;
        // a site no reference of the file mentions is kept only when it
        // adds an edge
        if (target <= OUTSIDE || declares(before)) && !mentioned.contains(&(line, name)) {
            continue;
        }
        sites.push(ScipSite {
            line,
            name: name.to_string(),
            target,
            import: occ.symbol_roles & ROLE_IMPORT != 0,
        });
    }
    sites.sort();
    sites.dedup();
    sites
}

/// Whether the text before a name on its line declares it (`def`,
/// `function`, `class`...): another declaration of a symbol defined
/// elsewhere (an `@overload` stub, a TypeScript overload signature), not
/// a use of it.
fn declares(before: &str) -> bool {
    let Some(word) = before
        .trim_end()
        .rsplit(|c: char| !c.is_alphanumeric())
        .next()
    else {
        return false;
    };
    before.ends_with(char::is_whitespace)
        && matches!(
            word,
            "def" | "function" | "class" | "fn" | "func" | "fun" | "interface" | "struct"
        )
}

fn lines_of(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

const ROLE_DEFINITION: i32 = 1;
const ROLE_IMPORT: i32 = 2;

fn is_definition(occ: &Occurrence) -> bool {
    occ.symbol_roles & ROLE_DEFINITION != 0
}

/// The name and kind of a global symbol's last descriptor (`run` and
/// `Method` for `scip-python python flask 3.0 flask.app/Flask#run().`).
fn last_descriptor(symbol: &str) -> Option<(String, Suffix)> {
    if !scip::symbol::is_global_symbol(symbol) {
        return None;
    }
    let parsed = scip::symbol::parse_symbol(symbol).ok()?;
    let d = parsed.descriptors.last()?;
    Some((d.name.clone(), d.suffix.enum_value_or_default()))
}

/// The innermost definition named `name` around `line` in `path`.
fn definition_at(index: &SymbolIndex, path: &str, line: u32, name: &str) -> Option<DefKey> {
    let file = index.file_id(path)?;
    index
        .file_defs(file)
        .filter(|&id| {
            let d = index.def(id);
            d.name == name && d.start_line <= line && line <= d.end_line
        })
        .max_by_key(|&id| {
            let d = index.def(id);
            (d.start_line, std::cmp::Reverse(d.end_line))
        })
        .map(|id| index.key(id))
}

/// Whether every definition of a type, term or method of a document is
/// spelled in `lines` where the index puts it (synthetic names such as
/// `<constructor>` and empty ranges are not checked).
fn spelled_as_indexed(doc: &Document, lines: &[&str]) -> bool {
    let encoding = doc.position_encoding.enum_value_or_default();
    doc.occurrences
        .iter()
        .filter(|o| is_definition(o))
        .all(|occ| {
            let Some(range) = Range::of(occ) else {
                return true;
            };
            if range.line as usize >= lines.len() {
                return false;
            }
            let Some((name, suffix)) = last_descriptor(&occ.symbol) else {
                return true;
            };
            // meta descriptors, parameters and the like carry made-up names
            // (`status0:` for a property `status` of an object literal)
            let named = matches!(suffix, Suffix::Type | Suffix::Term | Suffix::Method);
            if !named || range.is_empty() || name.is_empty() || name.starts_with('<') {
                return true;
            }
            match range.text(lines, encoding) {
                Some(text) => text == name || text.trim_matches(['\'', '"', '`']) == name,
                None => true,
            }
        })
}

/// An occurrence's range (0-based line; characters in the document's encoding).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Range {
    line: u32,
    start: u32,
    /// None: it ends on another line.
    end: Option<u32>,
}

impl Range {
    fn of(occ: &Occurrence) -> Option<Range> {
        match &occ.typed_range {
            Some(occurrence::Typed_range::SingleLineRange(r)) => Some(Range {
                line: u32::try_from(r.line).ok()?,
                start: u32::try_from(r.start_character).ok()?,
                end: Some(u32::try_from(r.end_character).ok()?),
            }),
            Some(occurrence::Typed_range::MultiLineRange(r)) => Some(Range {
                line: u32::try_from(r.start_line).ok()?,
                start: u32::try_from(r.start_character).ok()?,
                end: (r.end_line == r.start_line)
                    .then(|| u32::try_from(r.end_character).ok())
                    .flatten(),
            }),
            None => match *occ.range.as_slice() {
                [line, start, end] => Some(Range {
                    line: u32::try_from(line).ok()?,
                    start: u32::try_from(start).ok()?,
                    end: Some(u32::try_from(end).ok()?),
                }),
                [line, start, end_line, end] => Some(Range {
                    line: u32::try_from(line).ok()?,
                    start: u32::try_from(start).ok()?,
                    end: (end_line == line)
                        .then(|| u32::try_from(end).ok())
                        .flatten(),
                }),
                _ => None,
            },
            // a kind of range this reader does not know
            Some(_) => None,
        }
    }

    fn is_empty(&self) -> bool {
        self.end == Some(self.start)
    }

    /// The text of its line before it.
    fn before<'t>(&self, lines: &[&'t str], encoding: PositionEncoding) -> Option<&'t str> {
        let line = *lines.get(self.line as usize)?;
        line.get(..byte_offset(line, self.start, encoding)?)
    }

    /// The text a single-line range spans (None: several lines, or
    /// outside the text).
    fn text<'t>(&self, lines: &[&'t str], encoding: PositionEncoding) -> Option<&'t str> {
        let line = *lines.get(self.line as usize)?;
        let end = self.end?;
        let a = byte_offset(line, self.start, encoding)?;
        let b = byte_offset(line, end, encoding)?;
        line.get(a..b)
    }
}

/// The byte offset of character `n` of `line`, counted in `encoding`
/// (unspecified: UTF-16, what the JavaScript-based indexers write).
fn byte_offset(line: &str, n: u32, encoding: PositionEncoding) -> Option<usize> {
    let n = n as usize;
    match encoding {
        PositionEncoding::UTF8CodeUnitOffsetFromLineStart => {
            (n <= line.len() && line.is_char_boundary(n)).then_some(n)
        }
        PositionEncoding::UTF32CodeUnitOffsetFromLineStart => line
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(line.len()))
            .nth(n),
        PositionEncoding::UTF16CodeUnitOffsetFromLineStart
        | PositionEncoding::UnspecifiedPositionEncoding => {
            let mut units = 0;
            for (i, c) in line.char_indices() {
                if units == n {
                    return Some(i);
                }
                units += c.len_utf16();
                if units > n {
                    return None;
                }
            }
            (units == n).then_some(line.len())
        }
    }
}

impl ScipIndex {
    /// Forget what the index said about these files (changed or removed
    /// since it was read).
    pub fn forget<'p>(&mut self, paths: impl IntoIterator<Item = &'p str>) {
        for p in paths {
            self.files.remove(p);
        }
    }

    /// The definitions a target id means.
    pub fn target(&self, id: u32) -> &[DefKey] {
        self.targets.get(id as usize).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_are_counted_in_the_documents_encoding() {
        let line = "x = 'é'; f(y)";
        let utf16 = PositionEncoding::UTF16CodeUnitOffsetFromLineStart;
        let utf8 = PositionEncoding::UTF8CodeUnitOffsetFromLineStart;
        let utf32 = PositionEncoding::UTF32CodeUnitOffsetFromLineStart;
        // `f` is the 10th character, 11th byte
        assert_eq!(byte_offset(line, 9, utf16), Some(10));
        assert_eq!(byte_offset(line, 9, utf32), Some(10));
        assert_eq!(byte_offset(line, 10, utf8), Some(10));
        // inside `é` in UTF-8
        assert_eq!(byte_offset(line, 6, utf8), None);
        assert_eq!(byte_offset(line, 13, utf16), Some(line.len()));
        assert_eq!(byte_offset(line, 14, utf16), None);
        // a character outside the basic plane is two UTF-16 units
        assert_eq!(byte_offset("😀f", 2, utf16), Some(4));
        assert_eq!(byte_offset("😀f", 1, utf16), None);
    }

    #[test]
    fn a_name_after_a_declaring_keyword_is_a_declaration() {
        assert!(declares("def "));
        assert!(declares("    async def "));
        assert!(declares("export function "));
        assert!(!declares("    @"));
        assert!(!declares("    return "));
        assert!(!declares("x = undefined"));
        assert!(!declares(""));
    }

    #[test]
    fn the_last_descriptor_names_the_symbol() {
        let (name, suffix) =
            last_descriptor("scip-python python flask 3.0 `flask.app`/Flask#run().").unwrap();
        assert_eq!((name.as_str(), suffix), ("run", Suffix::Method));
        let (name, suffix) = last_descriptor("scip-python python flask 3.0 `flask.app`/").unwrap();
        assert_eq!((name.as_str(), suffix), ("flask.app", Suffix::Namespace));
        assert_eq!(last_descriptor("local 3"), None);
    }

    use crate::resolve::resolve_file_scip;
    use ken_core::graph::Rule;
    use ken_core::{ChunkKind, Definition, Language, RefKind, Reference};
    use scip::types::{Index, Metadata, ToolInfo};

    fn def(name: &str, qualname: &str, kind: ChunkKind, lines: (u32, u32)) -> Definition {
        Definition {
            name: name.into(),
            qualname: qualname.into(),
            kind,
            start_line: lines.0,
            end_line: lines.1,
            signature: None,
        }
    }

    fn call(name: &str, qualifier: Option<&str>, line: u32, from: &str) -> Reference {
        Reference {
            kind: RefKind::Call,
            name: name.into(),
            qualifier: qualifier.map(Into::into),
            line,
            from: Some(from.into()),
            alias: None,
            receiver: None,
        }
    }

    const WORKERS: &str = "class Worker:\n    def run(self):\n        pass\n\nclass Printer:\n    def run(self):\n        pass\n\ndef make():\n    return Worker()\n";
    const MAIN: &str = "def main():\n    make().run()\n    handler = make\n    handler()\n";

    fn occ(range: [i32; 3], symbol: &str, roles: i32) -> Occurrence {
        Occurrence {
            range: range.to_vec(),
            symbol: symbol.into(),
            symbol_roles: roles,
            ..Default::default()
        }
    }

    const PKG: &str = "scip-python python fx 1.0 ";

    /// What scip-python says of the two files (0-based lines).
    fn scip_bytes(workers_def_line: i32) -> Vec<u8> {
        let sym = |d: &str| format!("{PKG}{d}");
        let workers = Document {
            relative_path: "app/workers.py".into(),
            occurrences: vec![
                occ([0, 6, 12], &sym("`app.workers`/Worker#"), 1),
                occ(
                    [workers_def_line, 8, 11],
                    &sym("`app.workers`/Worker#run()."),
                    1,
                ),
                occ([4, 6, 13], &sym("`app.workers`/Printer#"), 1),
                occ([5, 8, 11], &sym("`app.workers`/Printer#run()."), 1),
                occ([8, 4, 8], &sym("`app.workers`/make()."), 1),
                occ([9, 11, 17], &sym("`app.workers`/Worker#"), 0),
            ],
            ..Default::default()
        };
        let main = Document {
            relative_path: "app/main.py".into(),
            occurrences: vec![
                occ([0, 4, 8], &sym("`app.main`/main()."), 1),
                occ([1, 4, 8], &sym("`app.workers`/make()."), 0),
                occ([1, 11, 14], &sym("`app.workers`/Worker#run()."), 0),
                occ([2, 4, 11], "local 0", 1),
                occ([2, 14, 18], &sym("`app.workers`/make()."), 0),
                occ([3, 4, 11], "local 0", 0),
            ],
            ..Default::default()
        };
        let index = Index {
            metadata: Some(Metadata {
                tool_info: Some(ToolInfo {
                    name: "scip-python".into(),
                    version: "0.6.6".into(),
                    ..Default::default()
                })
                .into(),
                ..Default::default()
            })
            .into(),
            documents: vec![workers, main],
            ..Default::default()
        };
        index.write_to_bytes().unwrap()
    }

    fn facts() -> Vec<FileFacts> {
        let workers = FileFacts::new(
            "app/workers.py",
            Language::Python,
            vec![
                def("Worker", "Worker", ChunkKind::Class, (1, 3)),
                def("run", "Worker.run", ChunkKind::Method, (2, 3)),
                def("Printer", "Printer", ChunkKind::Class, (5, 7)),
                def("run", "Printer.run", ChunkKind::Method, (6, 7)),
                def("make", "make", ChunkKind::Function, (9, 10)),
                def("handler", "handler", ChunkKind::Function, (12, 13)),
            ],
            vec![call("Worker", None, 10, "make")],
        );
        let main = FileFacts::new(
            "app/main.py",
            Language::Python,
            vec![def("main", "main", ChunkKind::Function, (1, 4))],
            vec![
                call("make", None, 2, "main"),
                call("run", Some("make()"), 2, "main"),
                call("handler", None, 4, "main"),
            ],
        );
        vec![workers, main]
    }

    fn read_with(bytes: &[u8], files: &[FileFacts]) -> (ScipIndex, ScipStats) {
        let index = SymbolIndex::build(files.iter());
        read(bytes, &index, |p| {
            let f = files.iter().find(|f| f.path == p)?;
            let text = if p.ends_with("workers.py") {
                WORKERS
            } else {
                MAIN
            };
            Some(ScipSource {
                facts: Some(f),
                text: text.to_string(),
            })
        })
        .unwrap()
    }

    #[test]
    fn the_index_says_what_a_name_cannot() {
        let files = facts();
        let (scip, stats) = read_with(&scip_bytes(1), &files);
        assert_eq!((stats.documents, stats.files, stats.stale), (2, 2, 0));
        assert_eq!(stats.tool, "scip-python 0.6.6");
        let index = SymbolIndex::build(files.iter());
        let main = resolve_file_scip(&files[1], &index, Some(&scip));
        let to: Vec<(String, u32, &str, Rule)> = main
            .edges
            .iter()
            .map(|e| (e.to.to_string(), e.line, e.kind.name(), e.rule))
            .collect();
        assert_eq!(
            to,
            vec![
                // `make().run()`: two classes define `run`; the index knows which
                ("app/workers.py:Worker.run".into(), 2, "call", Rule::Scip),
                ("app/workers.py:make".into(), 2, "call", Rule::Scip),
                // `handler = make`: a use the file's references do not record
                ("app/workers.py:make".into(), 3, "read", Rule::Scip),
            ]
        );
        // `handler()` calls a local: by name alone it would be the module's
        // unique `handler`
        let by_name = resolve_file_scip(&files[1], &index, None);
        assert!(by_name.edges.iter().any(|e| e.to.qualname == "handler"));
        assert!(!main.edges.iter().any(|e| e.to.qualname == "handler"));
    }

    #[test]
    fn a_document_of_another_version_of_its_file_is_left_out() {
        let files = facts();
        // Worker.run's definition is put on line 3 (`pass`): not this text
        let (scip, stats) = read_with(&scip_bytes(2), &files);
        assert_eq!((stats.files, stats.stale), (1, 1));
        assert_eq!(stats.stale_examples, vec!["app/workers.py".to_string()]);
        assert!(!scip.files.contains_key("app/workers.py"));
        // a file the index does not describe is resolved by name
        let index = SymbolIndex::build(files.iter());
        let workers = resolve_file_scip(&files[0], &index, Some(&scip));
        assert!(workers.edges.iter().all(|e| e.rule != Rule::Scip));
        assert_eq!(workers.edges.len(), 1);
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_forgotten() {
        let files = facts();
        let (mut scip, _) = read_with(&scip_bytes(1), &files);
        scip.forget(["app/main.py"]);
        let index = SymbolIndex::build(files.iter());
        let main = resolve_file_scip(&files[1], &index, Some(&scip));
        assert!(main.edges.iter().all(|e| e.rule != Rule::Scip));
    }

    #[test]
    fn an_overloads_declarations_are_one_symbol() {
        // scip-python defines an overloaded function at its first stub;
        // the implementation's name is another occurrence of it
        let text = "@overload\ndef get(k: int) -> int: ...\ndef get(k):\n    return k\n\ndef main():\n    return get(1)\n";
        let sym = format!("{PKG}`app.cfg`/get().");
        let doc = Document {
            relative_path: "app/cfg.py".into(),
            occurrences: vec![
                occ([1, 4, 7], &sym, 1),
                occ([2, 4, 7], &sym, 0),
                occ([5, 4, 8], &format!("{PKG}`app.cfg`/main()."), 1),
                occ([6, 11, 14], &sym, 0),
            ],
            ..Default::default()
        };
        let bytes = Index {
            documents: vec![doc],
            ..Default::default()
        }
        .write_to_bytes()
        .unwrap();
        let facts = FileFacts::new(
            "app/cfg.py",
            Language::Python,
            vec![
                def("get", "get", ChunkKind::Function, (1, 2)),
                def("get", "get", ChunkKind::Function, (3, 4)),
                def("main", "main", ChunkKind::Function, (6, 7)),
            ],
            vec![call("get", None, 7, "main")],
        );
        let index = SymbolIndex::build([&facts]);
        let (scip, _) = read(&bytes, &index, |_| {
            Some(ScipSource {
                facts: Some(&facts),
                text: text.to_string(),
            })
        })
        .unwrap();
        let edges = resolve_file_scip(&facts, &index, Some(&scip)).edges;
        let to: Vec<(String, u32)> = edges.iter().map(|e| (e.to.to_string(), e.line)).collect();
        // the call ties to both declarations; the implementation's own
        // name is no use of it
        assert_eq!(
            to,
            vec![("app/cfg.py:get".into(), 7), ("app/cfg.py:get#1".into(), 7)]
        );
    }

    #[test]
    fn bytes_that_are_not_an_index_are_an_error() {
        let index = SymbolIndex::build(std::iter::empty::<&FileFacts>());
        let err = read(b"\xff\xff\xff\xff not protobuf", &index, |_| None).unwrap_err();
        assert!(err.contains("not a SCIP index"), "{err}");
    }
}
