//! Doc comments and docstrings, cleaned of their comment markers.

use std::ops::Range;

use tree_sitter::Node;

use crate::lines::truncate_chars;

/// Longest doc kept on a chunk, in characters.
const MAX_DOC_CHARS: usize = 4000;

/// The text of the comments at `ranges` (a block directly above a
/// definition) without `//`, `///`, `//!`, `#`, `/* */` markers.
pub(crate) fn from_comments(src: &str, ranges: &[Range<usize>]) -> Option<String> {
    let mut lines: Vec<&str> = Vec::new();
    for r in ranges {
        let Some(c) = src.get(r.clone()) else {
            continue;
        };
        let c = c.trim();
        if c.starts_with("#!") || c.starts_with("#region") || c.starts_with("#endregion") {
            continue; // shebang, editor folding markers
        }
        if let Some(block) = c.strip_prefix("/*") {
            let block = block.strip_suffix("*/").unwrap_or(block);
            let block = block.strip_prefix(['*', '!']).unwrap_or(block);
            for line in block.lines() {
                let line = line.trim();
                let line = line.strip_prefix('*').unwrap_or(line);
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end());
            }
        } else {
            for line in c.lines() {
                let line = line.trim();
                let stripped = ["///", "//!", "//", "#"]
                    .iter()
                    .find_map(|m| line.strip_prefix(m))
                    .unwrap_or(line);
                lines.push(stripped.strip_prefix(' ').unwrap_or(stripped).trim_end());
            }
        }
    }
    finish(lines)
}

/// The docstring of a Python body: its first statement, when that is a string.
pub(crate) fn docstring(body: Node<'_>, src: &str) -> Option<String> {
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    let string = first.named_child(0)?;
    if string.kind() != "string" {
        return None;
    }
    string_literal(src.get(string.start_byte()..string.end_byte())?)
}

/// A Python string literal's content, cleaned like `inspect.cleandoc`.
pub(crate) fn string_literal(lit: &str) -> Option<String> {
    let body = lit.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let quote = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|q| body.starts_with(q))?;
    let inner = body[quote.len()..]
        .strip_suffix(quote)
        .unwrap_or(&body[quote.len()..]);
    let mut iter = inner.lines();
    let first = iter.next().unwrap_or("").trim();
    let rest: Vec<&str> = iter.collect();
    let indent = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut lines = vec![first];
    for l in &rest {
        lines.push(l.get(indent..).unwrap_or(l.trim_start()).trim_end());
    }
    finish(lines)
}

/// Join lines, drop leading and trailing blank ones, cap the length.
fn finish(lines: Vec<&str>) -> Option<String> {
    let start = lines.iter().position(|l| !l.trim().is_empty())?;
    let end = lines.iter().rposition(|l| !l.trim().is_empty())? + 1;
    let text = lines[start..end].join("\n");
    let text = text.replace("<summary>", "").replace("</summary>", "");
    let text = text.trim();
    (!text.is_empty()).then(|| truncate_chars(text.to_string(), MAX_DOC_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(src: &str) -> Option<String> {
        from_comments(src, std::slice::from_ref(&(0..src.len())))
    }

    #[test]
    fn markers_are_removed() {
        assert_eq!(doc("/// Adds two.\n").as_deref(), Some("Adds two."));
        assert_eq!(doc("//! Crate doc").as_deref(), Some("Crate doc"));
        assert_eq!(doc("# a ruby comment").as_deref(), Some("a ruby comment"));
        assert_eq!(
            doc("/**\n * Sends a response.\n *\n * @param {string} body\n */").as_deref(),
            Some("Sends a response.\n\n@param {string} body")
        );
        assert_eq!(doc("/* plain */").as_deref(), Some("plain"));
        assert_eq!(
            doc("/// <summary>Does it.</summary>").as_deref(),
            Some("Does it.")
        );
        assert_eq!(doc("#!/bin/sh"), None);
        assert_eq!(doc("//"), None);
    }

    #[test]
    fn several_comments_join() {
        let src = "// first\n// second\n";
        assert_eq!(
            from_comments(src, &[0..8, 9..18]).as_deref(),
            Some("first\nsecond")
        );
    }

    #[test]
    fn docstrings_are_dedented() {
        let lit =
            "\"\"\"Summary line.\n\n        Details here\n          indented.\n        \"\"\"";
        assert_eq!(
            string_literal(lit).as_deref(),
            Some("Summary line.\n\nDetails here\n  indented.")
        );
        assert_eq!(string_literal("r'raw'").as_deref(), Some("raw"));
        assert_eq!(string_literal("''"), None);
    }
}
