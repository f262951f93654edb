//! Jupyter notebooks: code cells only, with cell numbers for citations.
//!
//! Line numbers (and byte ranges) refer to the *code view* of the notebook:
//! its non-empty code cells joined in order with one blank line between
//! them, as jupytext would write them. Outputs, attachments and markdown
//! cells are never read.

use std::ops::Range;

use ken_core::{ChunkKind, FileSyntax, Language};
use serde_json::Value;

use crate::ChunkOptions;
use crate::code::{analyze, definitions};
use crate::lines::{LineIndex, longer_than};
use crate::window::{new_chunk, split};

pub(crate) struct Notebook {
    /// (index in the notebook's cells, source) of each code cell.
    pub(crate) cells: Vec<(u32, String)>,
    python: bool,
    problems: Vec<String>,
}

pub(crate) fn chunk_notebook(text: &str, opts: &ChunkOptions) -> FileSyntax {
    let nb = match read(text) {
        Ok(nb) => nb,
        Err(why) => {
            let li = LineIndex::new(text);
            let chunks = split(text, 0..text.len(), opts)
                .into_iter()
                .map(|r| {
                    let t = text[r.clone()].to_string();
                    new_chunk(&li, r, Language::Notebook, ChunkKind::Window, t)
                })
                .collect();
            return FileSyntax {
                chunks,
                definitions: Vec::new(),
                diagnostics: vec![format!("broken notebook: {why}; fell back to line windows")],
                ..FileSyntax::default()
            };
        }
    };
    let mut out = FileSyntax {
        diagnostics: nb.problems.clone(),
        ..FileSyntax::default()
    };

    let (view, spans) = code_view(&nb);
    if view.is_empty() {
        return out;
    }
    let li = LineIndex::new(&view);

    let mut defs = Vec::new();
    if nb.python {
        match analyze(Language::Python, &mask_magics(&view), opts) {
            Ok(a) => {
                out.definitions = definitions(&a.defs, &li);
                out.references = a.refs;
                out.diagnostics.extend(a.diagnostics);
                defs = a.defs;
            }
            Err(why) => out
                .diagnostics
                .push(format!("notebook code not parsed: {why}")),
        }
    }

    for (index, range) in spans {
        let pieces = if longer_than(&view[range.clone()], opts.max_chunk_chars) {
            split(&view, range.clone(), opts)
        } else {
            vec![range.clone()]
        };
        let mut top = defs.iter().filter(|d| {
            d.parent.is_none() && d.range.start >= range.start && d.range.end <= range.end
        });
        let single = match (top.next(), top.next()) {
            (Some(d), None) => Some(d),
            _ => None,
        };
        for p in pieces {
            let mut c = new_chunk(
                &li,
                p.clone(),
                Language::Notebook,
                ChunkKind::Cell,
                view[p].to_string(),
            );
            c.cell = Some(index);
            c.synthetic = true;
            if let Some(d) = single {
                c.symbol = Some(d.name.clone());
                c.qualname = Some(d.qualname.clone());
                c.signature = (!d.signature.is_empty()).then(|| d.signature.clone());
                c.doc = d.doc.clone();
            }
            out.chunks.push(c);
        }
    }
    out
}

/// The notebook's code view (what is indexed of it, and what its line
/// numbers count), or why the notebook cannot be read.
pub fn notebook_code(text: &str) -> Result<String, String> {
    read(text).map(|nb| code_view(&nb).0)
}

/// The non-empty code cells joined with a blank line, and the span of each
/// (by its index among all cells).
pub(crate) fn code_view(nb: &Notebook) -> (String, Vec<(u32, Range<usize>)>) {
    let mut view = String::new();
    let mut spans: Vec<(u32, Range<usize>)> = Vec::new();
    for (at, source) in kept_cells(nb) {
        if !view.is_empty() {
            view.push_str("\n\n");
        }
        let start = view.len();
        view.push_str(source);
        spans.push((nb.cells[at].0, start..view.len()));
    }
    (view, spans)
}

/// The code cells the code view holds, in order: (position in
/// `nb.cells`, source without trailing white space); empty cells are left out.
pub(crate) fn kept_cells(nb: &Notebook) -> impl Iterator<Item = (usize, &str)> {
    nb.cells
        .iter()
        .enumerate()
        .map(|(at, (_, source))| (at, source.trim_end()))
        .filter(|(_, source)| !source.trim().is_empty())
}

/// Read the code cells, or say what is wrong with the notebook.
pub(crate) fn read(text: &str) -> Result<Notebook, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let obj = v.as_object().ok_or("the top level is not a JSON object")?;
    // nbformat 4 has `cells` with `source`; nbformat 3 has `worksheets[0].cells` with `input`.
    let (cells, key) = if let Some(c) = obj.get("cells") {
        (c.as_array().ok_or("`cells` is not an array")?, "source")
    } else if let Some(ws) = obj.get("worksheets") {
        let cells = ws
            .get(0)
            .and_then(|w| w.get("cells"))
            .and_then(Value::as_array);
        (
            cells.ok_or("`worksheets[0].cells` is not an array")?,
            "input",
        )
    } else {
        return Err("no `cells` array".to_string());
    };
    let language = obj
        .get("metadata")
        .and_then(|m| {
            m.pointer("/kernelspec/language")
                .or_else(|| m.pointer("/language_info/name"))
        })
        .and_then(Value::as_str);
    let mut nb = Notebook {
        cells: Vec::new(),
        python: language.is_none_or(|l| l.eq_ignore_ascii_case("python")),
        problems: Vec::new(),
    };
    for (i, cell) in cells.iter().enumerate() {
        let Some(cell) = cell.as_object() else {
            nb.problems
                .push(format!("notebook cell {i} is not an object; skipped"));
            continue;
        };
        if cell.get("cell_type").and_then(Value::as_str) != Some("code") {
            continue;
        }
        let source = match cell.get(key) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) if parts.iter().all(Value::is_string) => {
                parts.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => {
                nb.problems.push(format!(
                    "notebook cell {i} has a malformed `{key}`; skipped"
                ));
                continue;
            }
        };
        nb.cells.push((i as u32, source));
    }
    Ok(nb)
}

/// IPython magics and shell escapes (`%matplotlib`, `!pip`) turned into
/// comments, byte for byte, so the Python grammar does not trip on them.
fn mask_magics(view: &str) -> String {
    let mut bytes = view.as_bytes().to_vec();
    let mut at_line_start = true;
    for b in bytes.iter_mut() {
        match *b {
            b'\n' => at_line_start = true,
            b' ' | b'\t' => {}
            b'%' | b'!' if at_line_start => {
                *b = b'#';
                at_line_start = false;
            }
            _ => at_line_start = false,
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|_| view.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magics_become_comments() {
        assert_eq!(
            mask_magics("%matplotlib inline\nx = 1\n  !pip install y"),
            "#matplotlib inline\nx = 1\n  #pip install y"
        );
        assert_eq!(mask_magics("a != b"), "a != b");
    }
}
