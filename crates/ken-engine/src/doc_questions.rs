//! The repository's own documentation read as questions.
//!
//! A section of a reStructuredText or Markdown page asks what its heading
//! says; the code that defines what the section cross-references answers
//! (`:func:`, `:class:`, `:meth:`… and `.. autoclass::` in Sphinx pages,
//! inline code naming a definition in Markdown). These are the questions a
//! user asks `ken ask` ("how does the app context work?"), unlike commit
//! messages, so the fusion learns from them separately
//! ([`crate::tune`]). Read from the indexed commit's files only.

use std::collections::{BTreeSet, HashSet};

use ken_core::{Language, is_test_path};
use ken_store::Store;

use crate::Result;

/// One documentation section read as a question.
#[derive(Debug, Clone, PartialEq)]
pub struct DocQuestion {
    /// The page it is on.
    pub page: String,
    /// The section's heading, as written.
    pub heading: String,
    /// The question asked: the heading, and its first sentence when the
    /// heading is shorter than three words.
    pub query: String,
    /// The indexed code files defining what it cross-references.
    pub gold: Vec<String>,
}

/// A section of a page: heading, then the lines under it up to the next
/// heading.
#[derive(Debug, Clone, PartialEq)]
struct Section {
    heading: String,
    body: Vec<String>,
}

/// Most definitions one reference may name before it says nothing.
const MAX_DEFINERS: usize = 3;
/// A question answered by more files than this is an overview.
const MAX_GOLD: usize = 4;
/// Most sections with references resolved, questions or not: a
/// documentation site of thousands of pages costs a bounded time.
const MAX_RESOLVED: usize = 3000;

/// A documentation page worth reading: reStructuredText or Markdown, not a
/// changelog, licence or list of authors.
fn is_doc_page(path: &str) -> Option<bool> {
    let lower = path.to_ascii_lowercase();
    let rst = lower.ends_with(".rst");
    if !rst && !lower.ends_with(".md") && !lower.ends_with(".markdown") {
        return None;
    }
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    const NOT: &[&str] = &[
        "change",
        "history",
        "news",
        "release",
        "license",
        "licence",
        "authors",
        "contribut",
        "code_of_conduct",
        "security",
        "upgrad",
        "migrat",
    ];
    if NOT.iter().any(|n| name.contains(n)) || lower.contains("changelog") {
        return None;
    }
    Some(rst)
}

/// The questions the documentation of the indexed files asks, in page
/// order, at most `max`.
pub fn doc_questions(
    store: &dyn Store,
    indexed: &[String],
    max: usize,
) -> Result<Vec<DocQuestion>> {
    let code: HashSet<&str> = indexed
        .iter()
        .filter(|p| Language::from_path(p).is_code() && !is_test_path(p))
        .map(String::as_str)
        .collect();
    let mut pages: Vec<(&String, bool)> = indexed
        .iter()
        .filter_map(|p| is_doc_page(p).map(|rst| (p, rst)))
        .collect();
    pages.sort();
    let mut out = Vec::new();
    let mut resolved = 0;
    for (page, rst) in pages {
        let Some(text) = store.file_text(page)? else {
            continue;
        };
        let sections = if rst {
            rst_sections(&text)
        } else {
            md_sections(&text)
        };
        for s in sections {
            let refs = references(&s.body, rst);
            if refs.is_empty() {
                continue;
            }
            if resolved >= MAX_RESOLVED {
                return Ok(out);
            }
            resolved += 1;
            let gold = resolve(store, &code, &refs)?;
            if gold.is_empty() || gold.len() > MAX_GOLD {
                continue;
            }
            let Some(query) = question_text(&s) else {
                continue;
            };
            out.push(DocQuestion {
                page: page.clone(),
                heading: clean_inline(&s.heading),
                query,
                gold,
            });
            if out.len() >= max {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// The files defining what `refs` name: a reference defined in more than
/// [`MAX_DEFINERS`] files is left out; a dotted one keeps the definitions
/// whose qualified name ends as it does, when there are such.
fn resolve(store: &dyn Store, code: &HashSet<&str>, refs: &[String]) -> Result<Vec<String>> {
    let names: Vec<(String, bool)> = refs
        .iter()
        .map(|r| (r.rsplit('.').next().unwrap_or(r).to_string(), false))
        .collect();
    let found = store.lookup_symbols_many(&names, 50)?;
    let mut gold = BTreeSet::new();
    for (r, matches) in refs.iter().zip(found) {
        let name = r.rsplit('.').next().unwrap_or(r);
        let defs: Vec<_> = matches
            .into_iter()
            .filter(|m| m.name == name && code.contains(m.path.as_str()))
            .collect();
        let parts: Vec<&str> = r.split('.').collect();
        let tail = (parts.len() >= 2).then(|| parts[parts.len() - 2..].join("."));
        let narrowed: Vec<&str> = match &tail {
            Some(t) => defs
                .iter()
                .filter(|m| m.qualname == *t || m.qualname.ends_with(&format!(".{t}")))
                .map(|m| m.path.as_str())
                .collect(),
            None => Vec::new(),
        };
        let mut files: BTreeSet<&str> = if narrowed.is_empty() {
            defs.iter().map(|m| m.path.as_str()).collect()
        } else {
            narrowed.into_iter().collect()
        };
        if files.is_empty() {
            // a module: `pkg.mod` names `pkg/mod.py` or `pkg/mod/__init__.py`
            files = module_files(code, &parts);
        }
        if files.len() <= MAX_DEFINERS {
            gold.extend(files.into_iter().map(str::to_string));
        }
    }
    Ok(gold.into_iter().collect())
}

/// The files a dotted module path names.
fn module_files<'a>(code: &HashSet<&'a str>, parts: &[&str]) -> BTreeSet<&'a str> {
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return BTreeSet::new();
    }
    let joined = parts.join("/");
    let wants = [format!("{joined}.py"), format!("{joined}/__init__.py")];
    code.iter()
        .filter(|p| {
            wants
                .iter()
                .any(|w| **p == w.as_str() || p.ends_with(&format!("/{w}")))
        })
        .copied()
        .collect()
}

/// The question a section asks: its heading, with the first sentence of
/// its text when the heading has fewer than three words. `None` when the
/// heading is an identifier (an API listing) or says nothing.
fn question_text(s: &Section) -> Option<String> {
    let heading = clean_inline(&s.heading);
    let words = heading.split_whitespace().count();
    if words == 0 || (words == 1 && heading.contains(['.', '_', '('])) {
        return None;
    }
    if words >= 3 {
        return Some(heading);
    }
    match first_sentence(&s.body) {
        Some(first) => Some(format!("{heading}: {first}")),
        None => Some(heading),
    }
}

/// The first sentence of a section's first paragraph of prose (directives,
/// indented blocks, lists and code fences skipped).
fn first_sentence(body: &[String]) -> Option<String> {
    let mut para = String::new();
    let mut fenced = false;
    for line in body {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if t.is_empty() {
            if !para.is_empty() {
                break;
            }
            continue;
        }
        let prose = !line.starts_with([' ', '\t'])
            && !t.starts_with("..")
            && !t.starts_with(['-', '*', '|', '>', '<', '!', '[', '#', ':', '+', '='])
            && !t.chars().next().is_some_and(|c| c.is_ascii_digit());
        if !prose {
            if !para.is_empty() {
                break;
            }
            continue;
        }
        if !para.is_empty() {
            para.push(' ');
        }
        para.push_str(t);
    }
    let para = clean_inline(&para);
    if para.is_empty() {
        return None;
    }
    let end = para
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '.' | '?' | '!')
                && para[i + c.len_utf8()..]
                    .chars()
                    .next()
                    .is_none_or(char::is_whitespace)
        })
        .map_or(para.len(), |(i, c)| i + c.len_utf8());
    let sentence: String = para[..end].chars().take(200).collect();
    Some(sentence)
}

/// Inline markup taken out: roles, backticks, emphasis and link targets.
fn clean_inline(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(':') {
        // `:role:`text`` keeps the text
        let after = &rest[i + 1..];
        let role_end = after.find(':');
        let is_role = role_end.is_some_and(|e| {
            e > 0
                && after[..e]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':')
                && after[e + 1..].starts_with('`')
        });
        if is_role {
            out.push_str(&rest[..i]);
            rest = &after[role_end.unwrap_or(0) + 1..];
        } else {
            out.push_str(&rest[..=i]);
            rest = after;
        }
    }
    out.push_str(rest);
    let out = strip_targets(&out);
    let out: String = out
        .chars()
        .filter(|c| !matches!(c, '`' | '*'))
        .collect::<String>()
        .replace("_ ", " ");
    let out = out.trim_end_matches('_').trim().trim_end_matches(':');
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text <target>` keeps the text; a Markdown link `[text](url)` too.
fn strip_targets(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' => {
                // skip to the closing '>'
                let mut inner = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == '>' {
                        closed = true;
                        break;
                    }
                    inner.push(d);
                }
                if !closed {
                    out.push('<');
                    out.push_str(&inner);
                }
            }
            ']' if chars.peek() == Some(&'(') => {
                for d in chars.by_ref() {
                    if d == ')' {
                        break;
                    }
                }
            }
            '[' => {}
            _ => out.push(c),
        }
    }
    out
}

/// The identifiers a section's text cross-references, in order, once each.
fn references(body: &[String], rst: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |r: &str| {
        let r = r.replace("::", ".");
        let r = r
            .trim()
            .trim_start_matches(['~', '!', '.'])
            .trim_end_matches("()")
            .trim();
        let ok = !r.is_empty()
            && r.len() <= 120
            && r.split('.').all(|p| {
                !p.is_empty()
                    && p.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && !p.chars().next().is_some_and(|c| c.is_ascii_digit())
            })
            && r.rsplit('.').next().is_some_and(|n| n.chars().count() >= 3);
        if ok && !out.iter().any(|o| o == r) {
            out.push(r.to_string());
        }
    };
    let mut fenced = false;
    for line in body {
        let t = line.trim();
        if rst {
            for target in rst_roles(line) {
                push(&target);
            }
            if let Some(rest) = t.strip_prefix("..")
                && let Some((directive, arg)) = rest.trim().split_once("::")
            {
                let d = directive.trim().trim_start_matches("py:");
                let d = d.strip_prefix("auto").unwrap_or(d);
                if matches!(
                    d,
                    "function"
                        | "class"
                        | "method"
                        | "attribute"
                        | "exception"
                        | "data"
                        | "decorator"
                        | "module"
                        | "fixture"
                ) {
                    let arg = arg.trim();
                    let arg = arg.split(['(', ' ']).next().unwrap_or(arg);
                    push(arg);
                }
            }
        } else {
            if t.starts_with("```") || t.starts_with("~~~") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            for span in line.split('`').skip(1).step_by(2) {
                push(span);
            }
        }
    }
    out
}

/// The targets of `:role:`target`` in one line (Sphinx's Python roles).
fn rst_roles(line: &str) -> Vec<String> {
    const ROLES: &[&str] = &[
        "func", "class", "meth", "attr", "exc", "data", "obj", "mod", "fixture", "hook",
    ];
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find(":`") {
        let before = &rest[..i];
        let role = before
            .rsplit(':')
            .next()
            .unwrap_or("")
            .trim_start_matches("py");
        let after = &rest[i + 2..];
        let Some(end) = after.find('`') else { break };
        if ROLES.contains(&role) {
            let inner = &after[..end];
            let target = match (inner.rfind('<'), inner.rfind('>')) {
                (Some(a), Some(b)) if b > a => &inner[a + 1..b],
                _ => inner,
            };
            out.push(target.to_string());
        }
        rest = &after[end + 1..];
    }
    out
}

/// A reStructuredText page's sections: a title line underlined (and
/// perhaps overlined) by one punctuation character repeated.
fn rst_sections(text: &str) -> Vec<Section> {
    let lines: Vec<&str> = text.lines().collect();
    let is_rule = |l: &str| {
        let t = l.trim_end();
        let mut cs = t.chars();
        match cs.next() {
            Some(c) if "=-~^\"'*+#_:.`".contains(c) => t.len() >= 3 && cs.all(|d| d == c),
            _ => false,
        }
    };
    let mut out: Vec<Section> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let title = line.trim();
        let heading = i + 1 < lines.len()
            && !title.is_empty()
            && !line.starts_with([' ', '\t'])
            && !title.starts_with("..")
            && !is_rule(line)
            && is_rule(lines[i + 1])
            && lines[i + 1].trim_end().len() >= title.chars().count();
        if heading {
            // an overline above belongs to this title, not to the text
            if let Some(last) = out.last_mut()
                && last.body.last().is_some_and(|l| is_rule(l))
            {
                last.body.pop();
            }
            out.push(Section {
                heading: title.to_string(),
                body: Vec::new(),
            });
            i += 2;
            continue;
        }
        if let Some(last) = out.last_mut() {
            last.body.push(line.to_string());
        }
        i += 1;
    }
    out
}

/// A Markdown page's sections: ATX headings (`#` to `######`) outside code
/// fences.
fn md_sections(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            let hashes = line.chars().take_while(|&c| c == '#').count();
            let rest = &line[hashes..];
            if hashes <= 6 && rest.starts_with(' ') {
                out.push(Section {
                    heading: rest.trim().trim_end_matches('#').trim().to_string(),
                    body: Vec::new(),
                });
                continue;
            }
        }
        if let Some(last) = out.last_mut() {
            last.body.push(line.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn sphinx_sections_and_their_references() {
        let page = "\
=================
The App Context
=================

Intro text.

Lifecycle of the Context
------------------------

Flask calls :meth:`~.Flask.teardown_appcontext` and the
:data:`appcontext_pushed <flask.signals.appcontext_pushed>` signal.

.. autoclass:: flask.ctx.AppContext
   :members:

Storing Data
~~~~~~~~~~~~

The :data:`g` object is for storing data during a request.
";
        let s = rst_sections(page);
        let headings: Vec<&str> = s.iter().map(|s| s.heading.as_str()).collect();
        assert_eq!(
            headings,
            [
                "The App Context",
                "Lifecycle of the Context",
                "Storing Data"
            ]
        );
        assert_eq!(
            references(&s[1].body, true),
            [
                "Flask.teardown_appcontext",
                "flask.signals.appcontext_pushed",
                "flask.ctx.AppContext"
            ]
        );
        // `g` is too short to name anything by itself
        assert!(references(&s[2].body, true).is_empty());
        // a short heading is asked with its first sentence
        assert_eq!(
            question_text(&s[2]).as_deref(),
            Some("Storing Data: The g object is for storing data during a request.")
        );
        assert_eq!(
            question_text(&s[1]).as_deref(),
            Some("Lifecycle of the Context")
        );
    }

    #[test]
    fn markdown_sections_reference_inline_code_outside_fences() {
        let page = "\
# Guide

## Searching compressed files

Use `search_zip` or the `DecompressionReader::new()` call.

```rust
let ignored = `not_this`;
```
";
        let s = md_sections(page);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].heading, "Searching compressed files");
        assert_eq!(
            references(&s[1].body, false),
            ["search_zip", "DecompressionReader.new"]
        );
    }

    #[test]
    fn markup_is_taken_out_of_questions() {
        assert_eq!(
            clean_inline("Using :func:`url_for` with `links <https://x>`_"),
            "Using url_for with links"
        );
        assert_eq!(clean_inline("**Bold** heading:"), "Bold heading");
        assert_eq!(
            first_sentence(&lines("   indented\n\nFirst one. Second one.")).as_deref(),
            Some("First one.")
        );
    }

    #[test]
    fn changelogs_and_licences_are_not_read() {
        assert_eq!(is_doc_page("docs/changes.rst"), None);
        assert_eq!(is_doc_page("CHANGELOG.md"), None);
        assert_eq!(is_doc_page("LICENSE.md"), None);
        assert_eq!(is_doc_page("docs/quickstart.rst"), Some(true));
        assert_eq!(is_doc_page("GUIDE.md"), Some(false));
        assert_eq!(is_doc_page("src/app.py"), None);
    }
}
