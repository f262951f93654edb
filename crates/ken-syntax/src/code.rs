//! Source code: definitions from the walker, then chunks — one per file when
//! it is small, else one per definition plus the module chunk.

use std::ops::Range;
use std::time::{Duration, Instant};

use ken_core::{Chunk, ChunkKind, Definition, FileSyntax, Language, Reference};

use crate::ChunkOptions;
use crate::lines::{LineIndex, longer_than};
use crate::module::module_chunks;
use crate::refs::{self, MAX_REFERENCES};
use crate::skeleton;
use crate::spec::{spec, table};
use crate::walk::{Def, MAX_DEPTH, walk};
use crate::window::{new_chunk, slice_chunk, split, whole_or_windows, window_chunks};
use crate::{doc, parse};

/// Parse errors above this share of the file get a diagnostic.
const NOTE_ERRORS: f64 = 0.05;
/// Parse errors above this share of the file: line windows instead.
const MAX_ERRORS: f64 = 0.5;

/// What parsing a code file found.
pub(crate) struct Analysis {
    pub defs: Vec<Def>,
    /// Calls, imports, base classes and type uses, in file order.
    pub refs: Vec<Reference>,
    /// Module-level variables of a known class.
    pub values: Vec<ken_core::TypedValue>,
    /// The module docstring (Python) or inner doc comment (`//!`).
    pub module_doc: Option<String>,
    pub diagnostics: Vec<String>,
    /// Why the tree is not fit for chunking (mostly errors), if it is not.
    pub unfit: Option<String>,
}

/// Parse `text` and find its definitions. `Err` when there is no tree.
///
/// C files (`.h` headers above all) are C++ when they look like it; when
/// one of the two grammars reads a C file badly, the other is tried and
/// the better reading kept. Chunks keep the language of the path.
pub(crate) fn analyze(lang: Language, text: &str, opts: &ChunkOptions) -> Result<Analysis, String> {
    let started = Instant::now();
    let budget = Duration::from_millis(opts.parse_timeout_ms);
    let (grammar, other) = match lang {
        Language::C if looks_like_cpp(text) => (Language::Cpp, Some(Language::C)),
        Language::C => (Language::C, Some(Language::Cpp)),
        _ => (lang, None),
    };
    let first = analyze_as(grammar, text, budget);
    let share = match &first {
        Ok((_, share)) => *share,
        Err(_) => 1.0,
    };
    if let Some(other) = other
        && share > NOTE_ERRORS
    {
        let left = budget.saturating_sub(started.elapsed());
        if left > Duration::from_millis(50)
            && let Ok((second, second_share)) = analyze_as(other, text, left)
            && second_share < share
        {
            return Ok(second);
        }
    }
    first.map(|(a, _)| a)
}

/// C++ markers in a `.c`/`.h` file.
fn looks_like_cpp(text: &str) -> bool {
    [
        "namespace ",
        "template <",
        "template<",
        "std::",
        "public:",
        "private:",
        "class ",
    ]
    .iter()
    .filter(|m| text.contains(*m))
    .count()
        >= 2
}

/// [`analyze`] with one grammar; also returns the share of unreadable bytes.
fn analyze_as(lang: Language, text: &str, timeout: Duration) -> Result<(Analysis, f64), String> {
    let (Some(spec), Some(table)) = (spec(lang), table(lang)) else {
        return Err(format!("no grammar for {lang}"));
    };
    let tree = parse::parse(lang, text, timeout)?;
    let walk = walk(&tree, text, spec, table);
    let refs = refs::extract(&tree, text, spec, table, &walk.defs);
    let mut a = Analysis {
        refs: refs.references,
        values: refs.values,
        defs: walk.defs,
        module_doc: module_doc(&tree, text, lang),
        diagnostics: Vec::new(),
        unfit: None,
    };
    if refs.truncated {
        a.diagnostics.push(format!(
            "more than {MAX_REFERENCES} references; the rest of the file was not read for references"
        ));
    }
    if walk.too_deep {
        a.diagnostics.push(format!(
            "syntax nested deeper than {MAX_DEPTH} levels was not searched for definitions"
        ));
    }
    let share = (walk.error_bytes as f64 / text.len().max(1) as f64).min(1.0);
    if share > MAX_ERRORS {
        a.unfit = Some(format!(
            "the {lang} parser could not read {:.0}% of the file",
            share * 100.0
        ));
    } else if share > NOTE_ERRORS {
        a.diagnostics.push(format!(
            "syntax errors in {:.0}% of the file; chunk boundaries may be imprecise",
            share * 100.0
        ));
    }
    Ok((a, share))
}

fn module_doc(tree: &tree_sitter::Tree, text: &str, lang: Language) -> Option<String> {
    let root = tree.root_node();
    match lang {
        Language::Python => doc::docstring(root, text),
        Language::Rust => {
            let mut cursor = root.walk();
            let ranges: Vec<Range<usize>> = root
                .named_children(&mut cursor)
                .take_while(|n| n.kind() == "line_comment" || n.kind() == "block_comment")
                .filter(|n| text[n.start_byte()..n.end_byte()].starts_with("//!"))
                .map(|n| n.start_byte()..n.end_byte())
                .collect();
            doc::from_comments(text, &ranges)
        }
        _ => None,
    }
}

/// Definitions in the shape the symbol table takes.
pub(crate) fn definitions(defs: &[Def], li: &LineIndex) -> Vec<Definition> {
    defs.iter()
        .map(|d| Definition {
            name: d.name.clone(),
            qualname: d.qualname.clone(),
            kind: d.kind,
            start_line: li.first_line(d.def_start),
            end_line: li.last_line(d.def_start, d.range.end),
            signature: (!d.signature.is_empty()).then(|| d.signature.clone()),
        })
        .collect()
}

/// Chunks and definitions of a code file.
pub(crate) fn chunk_code(lang: Language, text: &str, opts: &ChunkOptions) -> FileSyntax {
    if text.trim().is_empty() {
        return FileSyntax::default();
    }
    if let Some(why) = looks_minified(text) {
        let mut out = whole_or_windows(text, lang, opts.whole_file_chars, opts);
        out.diagnostics
            .push(format!("{why}; split into line windows without parsing"));
        return out;
    }
    let a = match analyze(lang, text, opts) {
        Ok(a) => a,
        Err(why) => {
            let mut out = whole_or_windows(text, lang, opts.whole_file_chars, opts);
            out.diagnostics
                .push(format!("{why}; fell back to line windows"));
            return out;
        }
    };
    let li = LineIndex::new(text);
    let mut out = FileSyntax {
        definitions: definitions(&a.defs, &li),
        references: a.refs,
        values: a.values,
        diagnostics: a.diagnostics,
        ..FileSyntax::default()
    };
    if let Some(why) = a.unfit {
        let windows = whole_or_windows(text, lang, opts.whole_file_chars, opts);
        out.chunks = windows.chunks;
        out.diagnostics
            .push(format!("{why}; fell back to line windows"));
        return out;
    }
    out.chunks = if longer_than(text, opts.whole_file_chars) {
        large_file(text, &li, lang, &a.defs, a.module_doc, opts)
    } else {
        vec![small_file(text, &li, lang, &a.defs, a.module_doc)]
    };
    out
}

/// Minified or generated one-liners: parsing them is slow and chunking
/// them by definition is useless.
fn looks_minified(text: &str) -> Option<String> {
    if text.len() < 32 * 1024 {
        return None;
    }
    let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let average = text.len() / lines;
    (average > 1000).then(|| format!("lines average {average} bytes (minified or generated?)"))
}

/// A small file: one chunk, whole. When it holds exactly one top-level
/// definition, the chunk carries that definition's symbol, signature and doc.
fn small_file(
    text: &str,
    li: &LineIndex,
    lang: Language,
    defs: &[Def],
    module_doc: Option<String>,
) -> Chunk {
    let mut chunk = slice_chunk(text, li, 0..text.len(), lang, ChunkKind::File);
    let mut top = defs.iter().filter(|d| d.parent.is_none());
    chunk.doc = module_doc;
    if let (Some(d), None) = (top.next(), top.next()) {
        chunk.symbol = Some(d.name.clone());
        chunk.qualname = Some(d.qualname.clone());
        chunk.signature = (!d.signature.is_empty()).then(|| d.signature.clone());
        chunk.doc = chunk.doc.or_else(|| d.doc.clone());
    }
    chunk
}

fn is_function(kind: ChunkKind) -> bool {
    matches!(kind, ChunkKind::Function | ChunkKind::Method)
}

/// Which definitions get chunks of their own.
///
/// - Top level: every function with a body, and every other definition —
///   one-line types, aliases, typedefs, macros, structs and interfaces
///   included, so that an exact look-up of their name finds them and not
///   the module chunk around them. One-line function declarations without
///   a body (prototypes, overload signatures) stay in the module chunk.
/// - Members of a chunked class-like definition: methods and nested
///   classes, not fields or associated types. Declarations without a body
///   (interface or abstract methods) only when they span several lines
///   (Ruby's empty `def x` / `end`).
/// - Never anything nested in a function, nor functions in an object
///   literal passed to a call, nor a definition sharing its first or last
///   line with other code (`f({ m() {} })`): chunks of definitions are
///   whole lines, so the module chunk never holds half a line.
fn chunked(text: &str, defs: &[Def], li: &LineIndex) -> Vec<bool> {
    let mut own = vec![false; defs.len()];
    for (i, d) in defs.iter().enumerate() {
        let function = is_function(d.kind);
        let one_line = li.line_of(d.def_start) == li.line_of(d.range.end.max(1) - 1);
        let starts_line = d.range.start == 0 || text.as_bytes()[d.range.start - 1] == b'\n';
        let ends_line = text[d.range.end..]
            .split('\n')
            .next()
            .is_none_or(|r| r.trim().is_empty());
        own[i] = !d.in_function
            && !d.inline
            && starts_line
            && ends_line
            && match d.parent {
                None if function => d.body.is_some() || !one_line,
                // a one-line `namespace X;` names the rest of the file, it
                // holds nothing: it stays with the imports
                None => !(one_line && d.kind == ChunkKind::Namespace && d.body.is_none()),
                Some(p) if function => {
                    own[p] && defs[p].kind.is_container() && (d.body.is_some() || !one_line)
                }
                Some(p) => {
                    own[p]
                        && defs[p].kind.is_container()
                        && d.kind.is_container()
                        && d.body.is_some()
                }
            };
    }
    own
}

fn large_file(
    text: &str,
    li: &LineIndex,
    lang: Language,
    defs: &[Def],
    module_doc: Option<String>,
    opts: &ChunkOptions,
) -> Vec<Chunk> {
    let own = chunked(text, defs, li);
    // Bodies of each definition's chunked members, in file order.
    let mut members: Vec<Vec<Range<usize>>> = vec![Vec::new(); defs.len()];
    for (i, d) in defs.iter().enumerate() {
        if let (Some(p), true, Some(body)) = (d.parent, own[i], &d.body) {
            members[p].push(body.clone());
        }
    }
    let mut chunks = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        if own[i] {
            definition_chunks(text, li, lang, d, &members[i], opts, &mut chunks);
        }
    }
    let top: Vec<Range<usize>> = defs
        .iter()
        .zip(&own)
        .filter(|(d, own)| **own && d.parent.is_none())
        .map(|(d, _)| d.range.clone())
        .collect();
    chunks.extend(module_chunks(text, li, lang, &top, module_doc, opts));
    chunks.sort_by_key(|c| (c.start_byte, std::cmp::Reverse(c.end_byte)));
    chunks
}

/// The chunk(s) of one definition: whole; a skeleton for a container larger
/// than `max_chunk_chars` (itself cut into windows when still larger than
/// that); line windows for a definition larger than `max_definition_chars`.
fn definition_chunks(
    text: &str,
    li: &LineIndex,
    lang: Language,
    d: &Def,
    members: &[Range<usize>],
    opts: &ChunkOptions,
    out: &mut Vec<Chunk>,
) {
    let slice = &text[d.range.clone()];
    let base = |c: Chunk| Chunk {
        symbol: Some(d.name.clone()),
        qualname: Some(d.qualname.clone()),
        signature: (!d.signature.is_empty()).then(|| d.signature.clone()),
        doc: d.doc.clone(),
        ..c
    };
    let skeleton =
        d.kind.is_container() && !members.is_empty() && longer_than(slice, opts.max_chunk_chars);
    if skeleton {
        let sk = skeleton::build(text, li, d.range.clone(), members);
        let sk_li = LineIndex::new(&sk.text);
        let pieces = if longer_than(&sk.text, opts.max_chunk_chars) {
            split(&sk.text, 0..sk.text.len(), opts)
        } else {
            std::iter::once(0..sk.text.len()).collect()
        };
        for p in pieces {
            let first = sk.lines[sk_li.line_of(p.start)].0;
            let last = sk.lines[sk_li.line_of(p.end.max(p.start + 1) - 1)].1;
            let start = li.line_start(first).max(d.range.start);
            let end = li.line_start(last + 1).min(d.range.end);
            let mut c = new_chunk(li, start..end, lang, d.kind, sk.text[p].to_string());
            c.start_line = first as u32 + 1;
            c.end_line = last as u32 + 1;
            c.synthetic = true;
            out.push(base(c));
        }
    } else if longer_than(slice, opts.max_definition_chars) {
        for w in window_chunks(text, li, d.range.clone(), lang, d.kind, opts) {
            out.push(base(w));
        }
    } else {
        let mut c = base(slice_chunk(text, li, d.range.clone(), lang, d.kind));
        c.trivial = d.trivial;
        out.push(c);
    }
}
