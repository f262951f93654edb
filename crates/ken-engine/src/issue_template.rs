//! A repository's issue templates, and the lines of a report that only
//! repeat them.
//!
//! A bug report written from a template keeps the template's headings and
//! prompts: "**Describe the bug**", "**To Reproduce**", "### Pylint output",
//! "### Expected behavior", "_No response_". They name no code, yet their
//! words pull files like `output_line.py`, `option.py` and the template
//! itself up the ranking. Which lines are boilerplate differs per
//! repository, and each repository says which in its own templates, so
//! they are read from the index, not from a list.

use std::borrow::Cow;
use std::collections::HashSet;

use ken_store::{ChunkStore, FileRecord, IndexStore};

use crate::error::Result;

/// At most this many template files are read, the first by path: a
/// repository is input, and a hostile one may hold thousands.
const MAX_FILES: usize = 32;

/// Larger files are not templates anyone fills in.
const MAX_FILE_BYTES: u64 = 64 << 10;

/// GitHub's text for a field of an issue form left empty.
const EMPTY_FIELD: &str = "_No response_";

/// Keys of issue forms and template front matter whose values are the
/// template's text (`label: Bug description`, `about: Report a bug`).
const KEYS: &[&str] = &[
    "label",
    "description",
    "placeholder",
    "value",
    "name",
    "title",
    "about",
];

/// The lines of a repository's issue templates, each as [`line_key`] reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IssueTemplate {
    lines: HashSet<String>,
    /// The files they were read from.
    files: Vec<String>,
}

impl IssueTemplate {
    /// The templates among the store's indexed files.
    pub fn load(store: &(impl ChunkStore + IndexStore + ?Sized)) -> Result<IssueTemplate> {
        let mut texts = Vec::new();
        let mut files = Vec::new();
        for path in pick(&store.files()?) {
            if let Some(text) = store.file_text(path)? {
                texts.push(text);
                files.push(path.to_string());
            }
        }
        Ok(IssueTemplate {
            files,
            ..IssueTemplate::from_texts(texts.iter().map(String::as_str))
        })
    }

    /// From the templates' texts.
    pub fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> IssueTemplate {
        let lines = texts
            .into_iter()
            .flat_map(str::lines)
            .filter_map(|l| line_key(strip_key(l)))
            .collect();
        IssueTemplate {
            lines,
            files: Vec::new(),
        }
    }

    /// The template files read (sorted), for `ken status`.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// No template: nothing to strip.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The report without the lines that repeat its template and without
    /// the empty fields of an issue form. The first line (the title) and
    /// everything inside a code fence stay.
    pub fn strip<'q>(&self, query: &'q str) -> Cow<'q, str> {
        if self.is_empty() && !query.contains(EMPTY_FIELD) {
            return Cow::Borrowed(query);
        }
        let mut in_fence = false;
        let mut title_seen = false;
        let mut kept = Vec::new();
        let mut dropped = false;
        for line in query.lines() {
            let t = line.trim();
            let fence = t.starts_with("```") || t.starts_with("~~~");
            let keep = fence
                || in_fence
                || !title_seen
                || !(t == EMPTY_FIELD || line_key(t).is_some_and(|k| self.lines.contains(&k)));
            if fence {
                in_fence = !in_fence;
            }
            title_seen |= !t.is_empty();
            if keep {
                kept.push(line);
            } else {
                dropped = true;
            }
        }
        if dropped {
            Cow::Owned(kept.join("\n"))
        } else {
            Cow::Borrowed(query)
        }
    }
}

/// The indexed template files to read, by path, within the limits.
fn pick(files: &[FileRecord]) -> Vec<&str> {
    let mut paths: Vec<&str> = files
        .iter()
        .filter(|f| f.skip.is_none() && f.size <= MAX_FILE_BYTES && is_template_path(&f.path))
        .map(|f| f.path.as_str())
        .collect();
    paths.sort_unstable();
    paths.truncate(MAX_FILES);
    paths
}

/// `.github/ISSUE_TEMPLATE/bug_report.md`, `.github/ISSUE_TEMPLATE.md`,
/// `docs/issue_template.md`, `.gitlab/issue_templates/Bug.md`: markdown,
/// YAML forms or text. Not the folder's `config.yml`, which lists links.
pub fn is_template_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let (dir, name) = lower.rsplit_once('/').unwrap_or(("", &lower));
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if !matches!(ext, "md" | "yml" | "yaml" | "txt") {
        return false;
    }
    let in_folder = dir
        .rsplit('/')
        .next()
        .is_some_and(|d| d == "issue_template" || d == "issue_templates");
    (in_folder && stem != "config") || stem == "issue_template"
}

/// A template line without its YAML key: `- label: Bug description` gives
/// `Bug description`, `value: |` gives `|`.
fn strip_key(line: &str) -> &str {
    let t = line.trim_start();
    let t = t.strip_prefix("- ").unwrap_or(t).trim_start();
    for key in KEYS {
        if let Some(rest) = t.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
            return rest.trim().trim_matches(|c| c == '"' || c == '\'');
        }
    }
    t
}

/// A line's words, lower-cased, without markdown (`#`, `**`, `_`, `>`,
/// list marks, check boxes) and punctuation around them: `### Pylint
/// output` and `**Pylint output:**` read the same. None for a line of
/// fewer than three letters, which says too little to be boilerplate.
fn line_key(line: &str) -> Option<String> {
    let mut key = String::with_capacity(line.len());
    for word in line.split(|c: char| {
        c.is_whitespace() || matches!(c, '#' | '*' | '_' | '`' | '>' | '-' | ':' | '[' | ']')
    }) {
        if word.is_empty() {
            continue;
        }
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(word.chars().flat_map(char::to_lowercase));
    }
    (key.chars().filter(|c| c.is_alphabetic()).count() >= 3).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: &str = "name: Bug report
description: Report a bug in pylint
body:
  - type: textarea
    id: what-happened
    attributes:
      label: Bug description
      placeholder: |
        # Please disable message unused-import because it doesn't apply to our use case
  - type: textarea
    attributes:
      label: Pylint output
      render: shell
  - type: textarea
    attributes:
      label: Expected behavior
";

    const MARKDOWN: &str = "---
name: Bug report
about: Create a report to help us improve
---

**Describe the bug**
A clear and concise description of what the bug is.

**To Reproduce**
Steps to reproduce the behavior:
";

    #[test]
    fn templates_are_found_by_their_paths() {
        for p in [
            ".github/ISSUE_TEMPLATE/BUG-REPORT.yml",
            ".github/ISSUE_TEMPLATE/bug_report.md",
            ".github/ISSUE_TEMPLATE.md",
            "docs/issue_template.md",
            ".gitlab/issue_templates/Bug.md",
        ] {
            assert!(is_template_path(p), "{p}");
        }
        for p in [
            ".github/ISSUE_TEMPLATE/config.yml",
            ".github/PULL_REQUEST_TEMPLATE.md",
            "src/issue_template.py",
            "sphinx/templates/issue.md",
        ] {
            assert!(!is_template_path(p), "{p}");
        }
    }

    #[test]
    fn a_report_loses_the_lines_of_its_template_and_keeps_its_own() {
        let t = IssueTemplate::from_texts([FORM, MARKDOWN]);
        let report = "\"--notes\" option ignores note tags\n\
### Bug description\n\
\n\
If a note tag is entirely punctuation, pylint won't report a fixme warning.\n\
\n\
### Pylint output\n\
\n\
```shell\n\
### Pylint output\n\
test.py:1:1: W0511: YES: yes (fixme)\n\
```\n\
\n\
### Expected behavior\n\
_No response_\n\
**Describe the bug:**\n\
A clear and concise description of what the bug is.\n\
The output is wrong.";
        let out = t.strip(report);
        assert_eq!(
            out,
            "\"--notes\" option ignores note tags\n\
\n\
If a note tag is entirely punctuation, pylint won't report a fixme warning.\n\
\n\
\n\
```shell\n\
### Pylint output\n\
test.py:1:1: W0511: YES: yes (fixme)\n\
```\n\
\n\
The output is wrong."
        );
    }

    #[test]
    fn without_a_template_only_empty_form_fields_go() {
        let t = IssueTemplate::default();
        assert!(t.is_empty());
        let q = "Bug description\nIt fails.\n### Expected behavior\nIt works.";
        assert!(matches!(t.strip(q), Cow::Borrowed(_)));
        assert_eq!(
            t.strip("Title\n_No response_\nIt fails."),
            "Title\nIt fails."
        );
        // the title stays whatever it says
        let t = IssueTemplate::from_texts([MARKDOWN]);
        assert_eq!(t.strip("Bug report\nIt fails."), "Bug report\nIt fails.");
    }

    #[test]
    fn only_a_bounded_number_of_small_indexed_templates_is_read() {
        let file = |path: String, size: u64, skip: Option<&str>| FileRecord {
            path,
            id: String::new(),
            language: ken_core::Language::from_path("x.md"),
            size,
            skip: skip.map(str::to_string),
        };
        let mut files: Vec<FileRecord> = (0..1000)
            .rev()
            .map(|i| file(format!(".github/ISSUE_TEMPLATE/t{i:04}.md"), 100, None))
            .collect();
        files.push(file(".github/ISSUE_TEMPLATE/0big.md".into(), 1 << 20, None));
        files.push(file(
            ".github/ISSUE_TEMPLATE/0bin.md".into(),
            10,
            Some("binary"),
        ));
        files.push(file("src/main.py".into(), 10, None));
        let picked = pick(&files);
        assert_eq!(picked.len(), MAX_FILES);
        assert_eq!(picked[0], ".github/ISSUE_TEMPLATE/t0000.md");
        assert_eq!(picked[MAX_FILES - 1], ".github/ISSUE_TEMPLATE/t0031.md");
    }

    #[test]
    fn short_lines_say_too_little_to_be_boilerplate() {
        let t = IssueTemplate::from_texts(["OS:\n- [ ] yes\nPython version\n"]);
        assert_eq!(line_key("- [ ] yes"), Some("yes".into()));
        assert_eq!(line_key("OS:"), None);
        assert_eq!(t.strip("T\nOS:\nPython version:\nyes"), "T\nOS:");
    }
}
