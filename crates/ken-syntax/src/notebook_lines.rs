//! Where each line of a notebook's code view is in the notebook's raw JSON,
//! so that what counts raw lines (git blame) can be read in the code-view
//! lines that chunks count.
//!
//! nbformat writes one source line per JSON string, one string per line of
//! the file; then each code-view line has the raw line of its own string.
//! A minified notebook, or a cell whose `source` is one string with `\n`
//! escapes, puts several code-view lines on one raw line: they all get that
//! line. The blank line between two cells gets the raw line of the line
//! before it.

use std::ops::Range;

use crate::notebook::{Notebook, kept_cells, read};

/// For a notebook's raw text, the raw line (1-based) of each line of its
/// code view ([`crate::notebook_code`]): element `i` is for code-view line
/// `i + 1`. `None` when the text is not a notebook that can be read (what is
/// stored of it is then the raw text, whose lines are their own). Never
/// panics: when the raw JSON cannot be followed to the cells, each code-view
/// line gets the raw line of the same number, or the last raw line.
pub fn notebook_raw_lines(text: &str) -> Option<Vec<u32>> {
    let nb = read(text).ok()?;
    if kept_cells(&nb).next().is_none() {
        return Some(Vec::new());
    }
    let lines = LineStarts::new(text);
    Some(match located_cells(text, &nb) {
        Some(located) => map_lines(&nb, &located, &lines),
        None => {
            let view_lines = crate::notebook::code_view(&nb).0.split('\n').count();
            let last = lines.count();
            (1..=view_lines)
                .map(|i| u32::try_from(i).unwrap_or(u32::MAX).min(last))
                .collect()
        }
    })
}

/// Byte offsets of the starts of the raw text's lines.
struct LineStarts(Vec<usize>);

impl LineStarts {
    fn new(text: &str) -> LineStarts {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineStarts(starts)
    }

    /// The 1-based line of a byte offset.
    fn line_of(&self, offset: usize) -> u32 {
        let line = self.0.partition_point(|&s| s <= offset).max(1);
        u32::try_from(line).unwrap_or(u32::MAX)
    }

    fn count(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }
}

/// The raw line of every code-view line, the cells' sources located.
fn map_lines(nb: &Notebook, located: &[Vec<usize>], lines: &LineStarts) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for (k, (source, offsets)) in kept_cells(nb)
        .map(|(i, source)| (source, &located[i]))
        .enumerate()
    {
        if k > 0 {
            // the blank line between two cells
            out.push(out.last().copied().unwrap_or(1));
        }
        let mut start = 0;
        for line in source.split('\n') {
            // a line's first character, or the newline ending an empty line
            let at = offsets
                .get(start)
                .or_else(|| offsets.last())
                .copied()
                .unwrap_or(0);
            out.push(lines.line_of(at));
            start += line.len() + 1;
        }
    }
    out
}

/// For each code cell of `nb` (in the order of `nb.cells`), the raw byte
/// offset each byte of its source came from; `None` unless the raw JSON,
/// followed here, gives exactly the sources `read` did.
fn located_cells(text: &str, nb: &Notebook) -> Option<Vec<Vec<usize>>> {
    let mut p = Parser {
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let root = p.value()?;
    let (cells, key) = match root.get(text, "cells") {
        Some(cells) => (cells, "source"),
        None => {
            let ws = root.get(text, "worksheets")?;
            let Node::Arr(sheets) = ws else { return None };
            (sheets.first()?.get(text, "cells")?, "input")
        }
    };
    let Node::Arr(cells) = cells else { return None };
    let mut out = Vec::with_capacity(nb.cells.len());
    let mut wanted = nb.cells.iter();
    for (i, cell) in cells.iter().enumerate() {
        if !matches!(cell, Node::Obj(_)) {
            continue;
        }
        let code = match cell.get(text, "cell_type") {
            Some(Node::Str(span)) => decode(text, span.clone())?.0 == "code",
            _ => false,
        };
        if !code {
            continue;
        }
        let (source, offsets) = match cell.get(text, key) {
            None | Some(Node::Null) => (String::new(), Vec::new()),
            Some(Node::Str(span)) => decode(text, span.clone())?,
            Some(Node::Arr(parts)) if parts.iter().all(|p| matches!(p, Node::Str(_))) => {
                let mut source = String::new();
                let mut offsets = Vec::new();
                for part in parts {
                    let Node::Str(span) = part else { return None };
                    let (s, o) = decode(text, span.clone())?;
                    source.push_str(&s);
                    offsets.extend(o);
                }
                (source, offsets)
            }
            Some(_) => continue,
        };
        let (index, expected) = wanted.next()?;
        if *index as usize != i || *expected != source {
            return None;
        }
        out.push(offsets);
    }
    wanted.next().is_none().then_some(out)
}

/// A JSON value with where its strings are (the bytes between the quotes).
enum Node {
    Obj(Vec<(Range<usize>, Node)>),
    Arr(Vec<Node>),
    Str(Range<usize>),
    Null,
    Other,
}

impl Node {
    /// The value of `key` in an object (the last, as serde_json keeps it).
    fn get(&self, text: &str, key: &str) -> Option<&Node> {
        let Node::Obj(fields) = self else { return None };
        fields
            .iter()
            .rev()
            .find(|(k, _)| decode(text, k.clone()).is_some_and(|(k, _)| k == key))
            .map(|(_, v)| v)
    }
}

/// Deeper than this is not a notebook (serde_json stops at 128 too).
const MAX_DEPTH: usize = 128;

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn value(&mut self) -> Option<Node> {
        self.ws();
        match *self.b.get(self.i)? {
            b'{' => {
                self.nest()?;
                let mut fields = Vec::new();
                if self.eat(b'}').is_none() {
                    loop {
                        self.ws();
                        let key = self.string()?;
                        self.eat(b':')?;
                        fields.push((key, self.value()?));
                        if self.eat(b',').is_none() {
                            self.eat(b'}')?;
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Some(Node::Obj(fields))
            }
            b'[' => {
                self.nest()?;
                let mut items = Vec::new();
                if self.eat(b']').is_none() {
                    loop {
                        items.push(self.value()?);
                        if self.eat(b',').is_none() {
                            self.eat(b']')?;
                            break;
                        }
                    }
                }
                self.depth -= 1;
                Some(Node::Arr(items))
            }
            b'"' => self.string().map(Node::Str),
            _ => {
                let start = self.i;
                while self.b.get(self.i).is_some_and(|c| {
                    !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.i += 1;
                }
                match &self.b[start..self.i] {
                    [] => None,
                    b"null" => Some(Node::Null),
                    _ => Some(Node::Other),
                }
            }
        }
    }

    /// `[` or `{` taken, one level deeper.
    fn nest(&mut self) -> Option<()> {
        self.i += 1;
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// A string: the bytes between its quotes.
    fn string(&mut self) -> Option<Range<usize>> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(start..self.i - 1);
                }
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
    }
}

/// A string's text, and for each of its bytes the raw byte offset it came
/// from (an escape's bytes all come from its backslash).
fn decode(text: &str, span: Range<usize>) -> Option<(String, Vec<usize>)> {
    let raw = text.get(span.clone())?;
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut offsets = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < b.len() {
        let at = span.start + i;
        let c = if b[i] == b'\\' {
            let (c, used) = escape(raw, i)?;
            i += used;
            c
        } else {
            let c = raw[i..].chars().next()?;
            i += c.len_utf8();
            c
        };
        out.push(c);
        offsets.extend(std::iter::repeat_n(at, c.len_utf8()));
    }
    Some((out, offsets))
}

/// The character of the escape at `i` (a backslash), and its length in bytes.
fn escape(raw: &str, i: usize) -> Option<(char, usize)> {
    let hex = |at: usize| {
        raw.get(at..at + 4)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    Some(match raw.as_bytes().get(i + 1)? {
        b'n' => ('\n', 2),
        b't' => ('\t', 2),
        b'r' => ('\r', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'u' => {
            let high = hex(i + 2)?;
            if (0xD800..0xDC00).contains(&high) && raw.get(i + 6..i + 8) == Some("\\u") {
                let low = hex(i + 8)?;
                let c = 0x10000 + ((high - 0xD800) << 10) + (low.checked_sub(0xDC00)? & 0x3FF);
                (char::from_u32(c)?, 12)
            } else {
                (char::from_u32(high)?, 6)
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notebook_code;

    /// A notebook as nbformat writes it: one source line per string, one per
    /// line of the file; a markdown cell first, then the code cells.
    fn pretty(cells: &[&str]) -> String {
        let mut out = String::from(
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"metadata\": {},\n   \"source\": [\n    \"# Title\\n\"\n   ]\n  }",
        );
        for code in cells {
            let lines: Vec<String> = code
                .split_inclusive('\n')
                .map(|l| format!("    {}", serde_json::to_string(l).unwrap()))
                .collect();
            out.push_str(&format!(
                ",\n  {{\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"metadata\": {{}},\n   \"outputs\": [],\n   \"source\": [\n{}\n   ]\n  }}",
                lines.join(",\n")
            ));
        }
        out.push_str("\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n");
        out
    }

    /// The raw lines' text for each code-view line.
    fn raw_of(text: &str) -> Vec<(String, String)> {
        let view = notebook_code(text).unwrap();
        let map = notebook_raw_lines(text).unwrap();
        let raw: Vec<&str> = text.lines().collect();
        assert_eq!(map.len(), view.split('\n').count());
        view.split('\n')
            .zip(map)
            .map(|(v, r)| (v.to_string(), raw[r as usize - 1].trim().to_string()))
            .collect()
    }

    #[test]
    fn each_code_line_has_its_own_raw_line() {
        let text = pretty(&[
            "import os\nx = 1\n",
            "\n",
            "def f():\n\n    return \"é\\\\\"\n",
        ]);
        let pairs = raw_of(&text);
        assert_eq!(pairs.len(), 6, "{pairs:?}");
        for (view, raw) in &pairs {
            if view.is_empty() {
                continue;
            }
            let json = serde_json::to_string(view).unwrap();
            assert!(
                raw.starts_with(json.trim_end_matches('"')),
                "{view} ← {raw}"
            );
        }
        // the empty line inside the cell is the `"\n"` string's line
        assert_eq!(pairs[4].1, "\"\\n\",");
        // the blank line between cells: the line before it
        assert_eq!(pairs[2].1, pairs[1].1);
    }

    #[test]
    fn minified_and_one_string_sources_map_to_their_line() {
        let one_line = r#"{"cells":[{"cell_type":"code","source":"a = 1\nb = 2"},{"cell_type":"code","source":["c = 3\n","d = 4"]}],"metadata":{},"nbformat":4}"#;
        assert_eq!(notebook_raw_lines(one_line).unwrap(), vec![1; 5]);
        let string_form = "{\n\"cells\": [\n{\"cell_type\": \"code\",\n\"source\": \"a = 1\\nb = 2\\n\"},\n{\"cell_type\": \"code\", \"source\": [\"c\\u0020= 3\\n\",\n\"d = 4\"]}\n]}";
        assert_eq!(
            notebook_code(string_form).unwrap(),
            "a = 1\nb = 2\n\nc = 3\nd = 4"
        );
        assert_eq!(
            notebook_raw_lines(string_form).unwrap(),
            vec![4, 4, 4, 5, 6]
        );
    }

    #[test]
    fn nbformat_3_worksheets_and_skipped_cells() {
        let text = "{\"worksheets\": [{\"cells\": [\n{\"cell_type\": \"code\", \"input\": [\"x = 1\\n\",\n\"y = 2\"]},\n{\"cell_type\": \"code\", \"input\": 5},\n{\"cell_type\": \"code\", \"input\": null},\n7,\n{\"cell_type\": \"code\", \"input\": [\"z = 3\"]}\n]}]}";
        assert_eq!(notebook_code(text).unwrap(), "x = 1\ny = 2\n\nz = 3");
        assert_eq!(notebook_raw_lines(text).unwrap(), vec![2, 3, 3, 7]);
    }

    #[test]
    fn odd_input_never_panics_and_every_line_gets_one() {
        assert_eq!(notebook_raw_lines("not json"), None);
        assert_eq!(notebook_raw_lines("{\"cells\": 3}"), None);
        // duplicate keys: serde_json keeps the last, and so does the map
        let dup = "{\"cells\": [{\"cell_type\": \"code\", \"source\": \"old\"}],\n\"cells\": [\n{\"cell_type\": \"code\", \"source\": \"new\"}]}";
        assert_eq!(notebook_code(dup).unwrap(), "new");
        assert_eq!(notebook_raw_lines(dup).unwrap(), vec![3]);
        let text = pretty(&["a = 1\nb = [\"x\", {\"k\": 2}]\n", "c = 'é😀'\n"]);
        for end in 0..=text.len() {
            let Some(cut) = text.get(..end) else { continue };
            if let Some(map) = notebook_raw_lines(cut) {
                let view = notebook_code(cut).unwrap();
                let view_lines = if view.is_empty() {
                    0
                } else {
                    view.split('\n').count()
                };
                assert_eq!(map.len(), view_lines, "{cut}");
                let lines = u32::try_from(cut.lines().count().max(1)).unwrap();
                assert!(map.iter().all(|&l| l >= 1 && l <= lines), "{cut}");
            }
        }
        assert_eq!(notebook_raw_lines("{\"cells\": []}"), Some(Vec::new()));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(notebook_raw_lines(&deep), None);
    }
}
