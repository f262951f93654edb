//! Reading an issue-style question: a bug report with a title, prose, code
//! blocks, tracebacks, file paths and module names.
//!
//! [`parse`] splits such a question into what each part says; the search
//! weighs them apart: the title and prose as prose, the identifiers of code
//! and tracebacks as hints, and the files the report points at (traceback
//! frames, paths, dotted module names) as a ranked list of their own once
//! [`resolve`] has mapped them to indexed files.

use std::collections::{HashMap, HashSet};

use ken_core::Language;

/// A place a traceback points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// As written (absolute, relative, with backslashes...).
    pub path: String,
    pub line: Option<u32>,
    /// The function the frame is in, when the format says.
    pub function: Option<String>,
}

/// What an issue-style question says, part by part.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IssueQuery {
    /// The first non-empty line.
    pub title: String,
    /// Lines outside code blocks and tracebacks (the title included).
    pub prose: String,
    /// Lines of code blocks and tracebacks.
    pub code: String,
    /// Traceback frames, innermost first.
    pub frames: Vec<Frame>,
    /// Other file paths named anywhere, in order of appearance.
    pub paths: Vec<String>,
    /// Dotted module names (`sympy.core.basic`), from imports and prose.
    pub modules: Vec<String>,
    /// Error lines (`ValueError: Invalid IPv6 URL`).
    pub errors: Vec<String>,
}

/// An issue (see [`is_issue`]) with code in it: a code block, an indented
/// or `>>>` line, a traceback. Bug reports are mostly like this; commit
/// messages seldom are.
pub fn has_code(query: &str, words: usize) -> bool {
    is_issue(query, words) && !parse(query).code.trim().is_empty()
}

/// A question long enough to be read as an issue: several lines, or a code
/// block, or more than `words` words. Shorter ones are left as they are.
pub fn is_issue(query: &str, words: usize) -> bool {
    let lines = query.lines().filter(|l| !l.trim().is_empty()).count();
    lines >= 3 || query.contains("```") || query.split_whitespace().count() > words
}

/// The report without its environment dumps: blocks of package versions
/// (`show_versions()`, `pip list`, `pip freeze`, "pylint 2.14.4 / astroid
/// 2.11.7 / Python 3.9.13"), which name packages, interpreters and systems,
/// not the code at fault, and pull files like `print_versions.py` to the top.
/// A block is a run of non-blank lines between blank lines, fences and HTML
/// tags; it is dropped when at least three of its lines, and at least half,
/// read as `name: version`, `name==version` or `name version`.
pub fn strip_environment(query: &str) -> std::borrow::Cow<'_, str> {
    let lines: Vec<&str> = query.lines().collect();
    let mut drop = vec![false; lines.len()];
    let mut start = 0;
    for end in 0..=lines.len() {
        let boundary = lines.get(end).is_none_or(|l| {
            let t = l.trim();
            t.is_empty() || t.starts_with("```") || t.starts_with("~~~") || t.starts_with('<')
        });
        if !boundary {
            continue;
        }
        let block = start..end;
        let versions = lines[block.clone()]
            .iter()
            .filter(|l| is_version_line(l))
            .count();
        if versions >= 3 && versions * 2 >= block.len() {
            drop[block].iter_mut().for_each(|d| *d = true);
        }
        start = end + 1;
    }
    if !drop.contains(&true) {
        return std::borrow::Cow::Borrowed(query);
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&drop)
        .filter(|(_, d)| !**d)
        .map(|(l, _)| *l)
        .collect();
    std::borrow::Cow::Owned(kept.join("\n"))
}

/// `numpy: 1.18.5`, `scipy: None`, `attrs==19.3.0`, `pytest>=5.3`,
/// `NumPy 1.13.1`, `Python 3.9.13 (main, ...)`, `pip  19.0.3` (a list
/// marker or bold name allowed). Not `x = 1.5`: code assigns with one `=`.
fn is_version_line(line: &str) -> bool {
    let t = line.trim();
    let t = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .unwrap_or(t)
        .replace("**", "");
    let t = t.trim();
    let name_word = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_alphabetic())
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '+'))
    };
    let name = |n: &str| {
        let words: Vec<&str> = n.split_whitespace().collect();
        (1..=3).contains(&words.len()) && n.len() <= 40 && words.iter().all(|w| name_word(w))
    };
    // `name: value`, `name==value`, `name>=value`
    for sep in [":", "==", ">=", "~="] {
        if let Some((n, v)) = t.split_once(sep)
            && name(n)
        {
            let v = v.trim_start();
            let first = v.split_whitespace().next().unwrap_or("");
            if first == "None"
                || first
                    .trim_start_matches('v')
                    .starts_with(|c: char| c.is_ascii_digit())
            {
                return true;
            }
        }
    }
    // `name version [(...)]`
    let words: Vec<&str> = t.split_whitespace().collect();
    let Some(at) = words.iter().position(|w| is_version(w)) else {
        return false;
    };
    let rest = &words[at + 1..];
    (1..=3).contains(&at)
        && words[..at].iter().all(|w| name_word(w))
        && rest
            .first()
            .is_none_or(|w| w.starts_with(['(', '|', '/', '[']) || w.contains(":\\"))
}

/// `1.0`, `3.10.9`, `v2.0.0.1`, `0.20.dev0`, `7.1.0+/d3c91f951`: digits, a
/// dot, a digit.
fn is_version(w: &str) -> bool {
    let w = w.strip_prefix('v').unwrap_or(w);
    let b = w.as_bytes();
    b.first().is_some_and(u8::is_ascii_digit)
        && b.windows(2).any(|p| p[0] == b'.' && p[1].is_ascii_digit())
}

/// Split an issue into its parts.
pub fn parse(query: &str) -> IssueQuery {
    let mut out = IssueQuery::default();
    let mut prose: Vec<&str> = Vec::new();
    let mut code: Vec<&str> = Vec::new();
    let mut in_fence = false;
    let mut in_traceback = false;
    // Python frames (pytest's too) are written outermost first: collected,
    // then reversed
    let mut python_frames: Vec<Frame> = Vec::new();
    let mut other_frames: Vec<Frame> = Vec::new();
    for line in query.lines() {
        let t = line.trim();
        if out.title.is_empty() && !t.is_empty() {
            out.title = t.to_string();
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if t.find("Traceback (most recent call last)")
            .is_some_and(|at| is_relay_prefix(&t[..at]))
        {
            in_traceback = true;
            code.push(line);
            continue;
        }
        if let Some(f) = python_frame(t) {
            python_frames.push(f);
            code.push(line);
            continue;
        }
        if let Some((f, outermost_first)) = stack_frame(t) {
            if outermost_first {
                python_frames.push(f);
            } else {
                other_frames.push(f);
            }
            code.push(line);
            continue;
        }
        if let Some(e) = error_line(t) {
            out.errors.push(e.to_string());
            in_traceback = false;
        }
        let codeish = in_fence
            || in_traceback
            || line.starts_with("    ")
            || line.starts_with('\t')
            || t.starts_with(">>>")
            || t.starts_with("...")
            || t.starts_with("$ ")
            || t.starts_with("In [")
            || t.starts_with("Out[");
        if codeish {
            code.push(line);
        } else {
            prose.push(line);
        }
        collect_modules(t, &mut out.modules);
        for p in path_tokens(t) {
            if !out.paths.contains(&p) {
                out.paths.push(p);
            }
        }
    }
    python_frames.reverse();
    out.frames = python_frames;
    out.frames.extend(other_frames);
    let framed: HashSet<&str> = out.frames.iter().map(|f| f.path.as_str()).collect();
    out.paths.retain(|p| !framed.contains(p.as_str()));
    out.prose = prose.join("\n");
    out.code = code.join("\n");
    out
}

/// `File "path", line 12, in name` (Python tracebacks), also behind the
/// prefix of a tool that relays one (`INTERNALERROR>`, pytest's `E`, the
/// `|` of an exception group).
fn python_frame(t: &str) -> Option<Frame> {
    let at = t.find("File \"")?;
    if !is_relay_prefix(&t[..at]) {
        return None;
    }
    let rest = &t[at + "File \"".len()..];
    let (path, rest) = rest.split_once('"')?;
    let rest = rest.trim_start_matches(',').trim();
    let line = rest
        .strip_prefix("line ")
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok());
    let function = rest
        .split_once(", in ")
        .map(|(_, f)| f.trim().to_string())
        .filter(|f| !f.is_empty() && !f.starts_with('<'));
    Some(Frame {
        path: path.to_string(),
        line,
        function,
    })
}

/// What may stand before a traceback line: nothing, punctuation (`|`,
/// `>`), or one word ending in `>` or `:` (`INTERNALERROR>`, `E`).
fn is_relay_prefix(pre: &str) -> bool {
    let bare = |w: &str| !w.chars().any(char::is_alphanumeric);
    let mut words = pre.split_whitespace();
    words
        .next()
        .is_none_or(|w| bare(w) || w.ends_with('>') || w.ends_with(':') || w == "E")
        && words.all(bare)
}

/// Frames of the other common formats, and whether they are written
/// outermost first: `at name (path:12:5)` (JavaScript, Java's
/// `at a.b.C.m(C.java:12)`) and `at path:12:5` (Rust backtraces) come
/// innermost first; pytest's `path.py:12: in name` (or `…: ValueError`)
/// outermost first, like Python's own.
fn stack_frame(t: &str) -> Option<(Frame, bool)> {
    if let Some(rest) = t.strip_prefix("at ") {
        let (function, loc) = match rest.rsplit_once('(') {
            Some((f, loc)) => (Some(f.trim().to_string()), loc.trim_end_matches(')')),
            None => (None, rest),
        };
        let (path, line) = split_location(loc)?;
        let frame = Frame {
            path,
            line,
            function: function.filter(|f| !f.is_empty()),
        };
        return Some((frame, false));
    }
    let (loc, rest) = t.split_once(": ")?;
    let (path, line) = split_location(loc)?;
    line?;
    let function = rest
        .strip_prefix("in ")
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty());
    let frame = Frame {
        path,
        line,
        function,
    };
    Some((frame, true))
}

/// `path:12:5`, `path:12` or `path` with a source file's extension.
fn split_location(loc: &str) -> Option<(String, Option<u32>)> {
    let mut parts = loc.split(':');
    let mut path = parts.next()?.to_string();
    // a Windows drive letter (`C:\x\y.py:12`)
    if path.len() == 1 && loc.len() > 2 {
        path = format!("{path}:{}", parts.next()?);
    }
    let line = parts.next().and_then(|n| n.trim().parse().ok());
    is_source_path(&path).then_some((path, line))
}

/// A file name with the extension of a language Kenning reads as code.
fn is_source_path(p: &str) -> bool {
    let p = p.trim();
    !p.is_empty()
        && !p.contains(char::is_whitespace)
        && p.rsplit_once('.').is_some_and(|(stem, _)| !stem.is_empty())
        && Language::from_path(&p.replace('\\', "/")).is_code()
}

/// An exception line: `ValueError: message`, `error[E0308]: message`,
/// `E   TypeError: message` (pytest).
fn error_line(t: &str) -> Option<&str> {
    let t = t.strip_prefix("E ").map(str::trim).unwrap_or(t);
    let (head, _) = t.split_once(':')?;
    let name = head.rsplit('.').next().unwrap_or(head);
    let named =
        (name.ends_with("Error") || name.ends_with("Exception") || name.ends_with("Warning"))
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            || head.starts_with("error[")
            || head == "panicked at";
    named.then_some(t)
}

/// Tokens that are paths of source files (`django/forms/fields.py`, `a.rs:12`).
fn path_tokens(t: &str) -> Vec<String> {
    t.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '"' | '\'' | '(' | ')' | ',' | '[' | ']' | '<' | '>'
            )
    })
    .filter_map(|tok| {
        let tok = tok.trim_end_matches(['.', ':', ';']);
        let (path, _) = split_location(tok)?;
        // a dotted name (`np.ndarray`) is not a path unless it has a slash
        // or a real extension right after its stem
        (path.contains('/') || path.contains('\\') || path.matches('.').count() == 1)
            .then_some(path)
    })
    .collect()
}

/// Dotted module names: `from a.b import c`, `import a.b`, `a.b.c` in prose.
fn collect_modules(t: &str, out: &mut Vec<String>) {
    let mut push = |m: &str| {
        let m = m.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        if m.split('.').count() >= 2
            && m.split('.')
                .all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
            && !out.iter().any(|x| x == m)
        {
            out.push(m.to_string());
        }
    };
    if let Some(rest) = t.strip_prefix("from ")
        && let Some((module, _)) = rest.split_once(" import ")
    {
        push(module.trim());
        return;
    }
    if let Some(rest) = t.strip_prefix("import ") {
        for m in rest.split(',') {
            push(m.split(" as ").next().unwrap_or(m).trim());
        }
        return;
    }
    for tok in
        t.split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | ',' | '\'' | '"'))
    {
        if tok.contains('/') || is_source_path(tok.trim_end_matches(['.', ':'])) {
            continue;
        }
        push(tok.trim_end_matches(['.', ':']));
    }
}

/// Indexed files, looked up by the trailing components of a path.
pub struct FileFinder {
    by_name: HashMap<String, Vec<String>>,
}

impl FileFinder {
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Self {
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        for p in paths {
            let name = p.rsplit('/').next().unwrap_or(p);
            by_name
                .entry(name.to_string())
                .or_default()
                .push(p.to_string());
        }
        FileFinder { by_name }
    }

    /// The indexed files a written path most likely means: those sharing the
    /// most trailing components with it (an absolute prefix, a virtualenv's
    /// `site-packages/` or a checkout directory do not matter). A bare file
    /// name shared by more than `max_ambiguous` files means nothing.
    pub fn find(&self, written: &str, max_ambiguous: usize) -> Vec<String> {
        let norm = written.replace('\\', "/");
        let parts: Vec<&str> = norm
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        let Some(name) = parts.last() else {
            return Vec::new();
        };
        let Some(cands) = self.by_name.get(*name) else {
            return Vec::new();
        };
        let shared = |p: &str| {
            p.rsplit('/')
                .zip(parts.iter().rev())
                .take_while(|(a, b)| a == *b)
                .count()
        };
        let best = cands.iter().map(|c| shared(c)).max().unwrap_or(0);
        let found: Vec<String> = cands
            .iter()
            .filter(|c| shared(c) == best)
            .cloned()
            .collect();
        if best <= 1 && found.len() > max_ambiguous {
            return Vec::new();
        }
        found
    }

    /// The file a dotted module name means (`a.b.c` → `a/b/c.py`,
    /// `a/b/c/__init__.py`, or the longest prefix that is a module: the
    /// rest names something inside it).
    pub fn find_module(&self, module: &str) -> Vec<String> {
        let parts: Vec<&str> = module.split('.').collect();
        for n in (2..=parts.len()).rev() {
            let stem = parts[..n].join("/");
            for candidate in [format!("{stem}.py"), format!("{stem}/__init__.py")] {
                let found = self.find(&candidate, 0);
                // only a match of the whole dotted prefix counts
                let whole: Vec<String> = found
                    .into_iter()
                    .filter(|f| f.ends_with(&candidate))
                    .collect();
                if !whole.is_empty() {
                    return whole;
                }
            }
        }
        Vec::new()
    }
}

/// The indexed files an issue points at, most telling first: traceback
/// frames innermost first, then paths named, then modules; each once.
/// The first `framed` of them come from traceback frames.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mentions {
    pub files: Vec<String>,
    pub framed: usize,
}

/// [`Mentions`] of an issue among the files `finder` knows.
pub fn resolve(issue: &IssueQuery, finder: &FileFinder) -> Mentions {
    let mut out: Vec<String> = Vec::new();
    let add = |found: Vec<String>, out: &mut Vec<String>| {
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    };
    for f in &issue.frames {
        add(finder.find(&f.path, 1), &mut out);
    }
    let framed = out.len();
    for p in &issue.paths {
        add(finder.find(p, 3), &mut out);
    }
    for m in &issue.modules {
        add(finder.find_module(m), &mut out);
    }
    Mentions { files: out, framed }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DJANGO: &str = "URLField throws ValueError instead of ValidationError on clean\nDescription\n\t\nforms.URLField( ).clean('////]@N.AN')\nresults in:\n\tValueError: Invalid IPv6 URL\n\tTraceback (most recent call last):\n\t File \"basic_fuzzer.py\", line 22, in TestOneInput\n\t File \"fuzzers.py\", line 350, in test_forms_URLField\n\t File \"django/forms/fields.py\", line 151, in clean\n\t File \"django/forms/fields.py\", line 136, in run_validators\n\t File \"django/core/validators.py\", line 130, in __call__\n\t File \"urllib/parse.py\", line 440, in urlsplit\n";

    #[test]
    fn reports_with_code_are_told_from_prose() {
        // a traceback, a fenced block, an indented or `>>>` line: code
        assert!(has_code(DJANGO, 40));
        assert!(has_code("Wrong kind\n```\nd = Derivative(A, x)\n```\n", 40));
        assert!(has_code(
            "printing fails\n\nWith this:\n\n>>> pprint(x)\nboom\n",
            40
        ));
        assert!(has_code("a title\n\nsome words\n    indented()\n", 40));
        // a commit message: paragraphs of prose, a list
        let message = "ignore: increase pool capacity\n\n\
            When matching inside of `ignore` we need a scratch space.\n\
            - one\n- two\n";
        assert!(!has_code(message, 40));
        // a short question is no issue at all, whatever it holds
        assert!(!has_code("`parse_config()`", 40));
    }

    #[test]
    fn environment_dumps_are_left_out_of_a_report() {
        let report = "DataSet.update evaluates a chunked array\n\
            \n\
            ```python\n\
            ds.update({\"foo\": foo})\n\
            ```\n\
            \n\
            <details><summary>Output of <tt>xr.show_versions()</tt></summary>\n\
            INSTALLED VERSIONS\n\
            commit: None\n\
            python: 3.8.3 (default, Jul  2 2020, 11:26:31)\n\
            OS: Darwin\n\
            xarray: 0.16.0\n\
            pandas: 1.0.5\n\
            netCDF4: None\n\
            </details>\n\
            \n\
            Package        Version\n\
            -------------- -------\n\
            attrs          19.1.0\n\
            pluggy         0.9.0\n\
            zope.interface 4.7.1\n\
            \n\
            pylint 2.14.4\n\
            astroid 2.11.7\n\
            Python 3.9.13 (main, May 24 2022, 21:28:44)\n\
            [Clang 13.0.0 (clang-1300.0.29.30)]\n\
            \n\
            Running with pytest 7.1 it works.\n";
        let out = strip_environment(report);
        for gone in [
            "INSTALLED",
            "xarray: 0.16",
            "OS: Darwin",
            "attrs",
            "zope.interface",
            "astroid",
            "Clang",
        ] {
            assert!(!out.contains(gone), "{gone} left in:\n{out}");
        }
        for kept in [
            "DataSet.update evaluates",
            "ds.update({",
            "<details>",
            "Running with pytest 7.1 it works.",
        ] {
            assert!(out.contains(kept), "{kept} dropped:\n{out}");
        }
        // and parsing the rest finds no module in the dump
        assert!(!parse(&out).modules.iter().any(|m| m == "zope.interface"));
    }

    #[test]
    fn code_and_prose_with_numbers_stay() {
        for text in [
            // assignments with one `=` are code
            "Wrong result\n\n```python\nx = 1.5\ny = 2.0\nz = 3.25\nprint(x + y)\n```\n",
            // a single version line is prose about versions
            "Since 1.7 this fails\n\nsympy: 1.7\nIt worked in 1.6 and the docs say so, see below for more\n",
            // a dict literal's keys are quoted
            "Bad merge\n\n{\"a\": 1.5,\n \"b\": 2.5,\n \"c\": 3.5}\n",
        ] {
            assert_eq!(strip_environment(text), text, "{text}");
        }
        assert!(!is_version_line("return 1.5 + x"));
        assert!(is_version_line("- Sphinx version: 3.0.4"));
        assert!(is_version_line("attrs==19.3.0"));
        assert!(is_version_line("**NumPy** 1.13.1"));
    }

    #[test]
    fn python_tracebacks_give_frames_innermost_first() {
        let q = parse(DJANGO);
        assert_eq!(
            q.title,
            "URLField throws ValueError instead of ValidationError on clean"
        );
        let paths: Vec<&str> = q.frames.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "urllib/parse.py",
                "django/core/validators.py",
                "django/forms/fields.py",
                "django/forms/fields.py",
                "fuzzers.py",
                "basic_fuzzer.py"
            ]
        );
        assert_eq!(q.frames[1].line, Some(130));
        assert_eq!(q.frames[1].function.as_deref(), Some("__call__"));
        assert_eq!(q.errors, ["ValueError: Invalid IPv6 URL"]);
        assert!(q.prose.contains("URLField throws"));
        assert!(!q.prose.contains("run_validators"));
        assert!(q.code.contains("run_validators"));
    }

    #[test]
    fn tracebacks_relayed_behind_a_prefix_are_frames_too() {
        let q = parse(
            "INTERNALERROR when exception in __repr__\n\
             INTERNALERROR> Traceback (most recent call last):\n\
             INTERNALERROR>   File \"/usr/lib/site-packages/_pytest/main.py\", line 191, in wrap_session\n\
             INTERNALERROR>     session.exitstatus = doit(config, session) or 0\n\
             INTERNALERROR>   File \"/usr/lib/site-packages/_pytest/_io/saferepr.py\", line 23, in repr\n\
             INTERNALERROR> RuntimeError: No active exception to reraise\n\
             \x20 | Traceback (most recent call last):\n\
             \x20 |   File \"pkg/group.py\", line 3, in run\n\
             See the File \"notes.py\" for more\n",
        );
        let paths: Vec<&str> = q.frames.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "pkg/group.py",
                "/usr/lib/site-packages/_pytest/_io/saferepr.py",
                "/usr/lib/site-packages/_pytest/main.py"
            ]
        );
        assert_eq!(q.frames[1].function.as_deref(), Some("repr"));
        assert!(!q.prose.contains("wrap_session"));
    }

    #[test]
    fn frames_map_to_indexed_files_whatever_their_prefix() {
        let finder = FileFinder::new([
            "django/core/validators.py",
            "django/forms/fields.py",
            "django/db/models/fields/__init__.py",
            "tests/forms_tests/fields.py",
        ]);
        let q = parse(DJANGO);
        let m = resolve(&q, &finder);
        assert_eq!(
            m.files,
            ["django/core/validators.py", "django/forms/fields.py"]
        );
        assert_eq!(m.framed, 2);
        assert_eq!(
            finder.find("/usr/lib/python3.9/site-packages/django/forms/fields.py", 1),
            ["django/forms/fields.py"]
        );
        assert_eq!(
            finder.find("C:\\work\\django\\core\\validators.py", 1),
            ["django/core/validators.py"]
        );
        // a bare name shared by two files is ambiguous at 1, not at 3
        assert!(finder.find("fields.py", 1).is_empty());
        assert_eq!(finder.find("fields.py", 3).len(), 2);
        assert!(finder.find("nothing.py", 3).is_empty());
    }

    #[test]
    fn modules_resolve_by_their_longest_prefix() {
        let finder = FileFinder::new([
            "sympy/core/basic.py",
            "sympy/physics/units/__init__.py",
            "lib/sympy/other.py",
        ]);
        assert_eq!(
            finder.find_module("sympy.core.basic"),
            ["sympy/core/basic.py"]
        );
        assert_eq!(
            finder.find_module("sympy.core.basic.Basic.subs"),
            ["sympy/core/basic.py"]
        );
        assert_eq!(
            finder.find_module("sympy.physics.units"),
            ["sympy/physics/units/__init__.py"]
        );
        assert_eq!(finder.find_module("sympy.other"), ["lib/sympy/other.py"]);
        assert!(finder.find_module("numpy.linalg").is_empty());
        let q = parse(
            "Bug\n```python\nfrom sympy.physics.units import meter\nimport numpy as np, sympy.core.basic\n```\nsee sympy.core.basic.Basic too",
        );
        assert_eq!(
            q.modules,
            [
                "sympy.physics.units",
                "numpy",
                "sympy.core.basic",
                "sympy.core.basic.Basic"
            ]
            .into_iter()
            .filter(|m| m.contains('.'))
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn other_stack_formats_and_paths() {
        let q = parse(
            "crash\nthread 'main' panicked at src/lib.rs:10:5\n   at parse (/home/u/app/lib/router/index.js:12:7)\n   at Object.<anonymous> (/home/u/app/index.js:3:1)\nsee `crates/core/flags.rs` and setup.cfg",
        );
        let frames: Vec<(&str, Option<u32>)> =
            q.frames.iter().map(|f| (f.path.as_str(), f.line)).collect();
        assert_eq!(
            frames,
            [
                ("/home/u/app/lib/router/index.js", Some(12)),
                ("/home/u/app/index.js", Some(3)),
            ]
        );
        assert_eq!(q.frames[0].function.as_deref(), Some("parse"));
        // pytest writes its frames outermost first, the error last
        let pq = parse(
            "use `pytest -k xxx`, report an error\n\
             /usr/lib/site-packages/_pytest/runner.py:341: in from_call\n\
             /usr/lib/site-packages/_pytest/python.py:531: in collect\n\
             /usr/lib/site-packages/_pytest/assertion/rewrite.py:760: in is_rewrite_disabled\n\
             E   TypeError: argument of type 'int' is not iterable",
        );
        let frames: Vec<&str> = pq.frames.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            frames,
            [
                "/usr/lib/site-packages/_pytest/assertion/rewrite.py",
                "/usr/lib/site-packages/_pytest/python.py",
                "/usr/lib/site-packages/_pytest/runner.py"
            ]
        );
        assert_eq!(
            pq.frames[0].function.as_deref(),
            Some("is_rewrite_disabled")
        );
        assert_eq!(
            pq.errors,
            ["TypeError: argument of type 'int' is not iterable"]
        );
        assert!(q.paths.contains(&"src/lib.rs".to_string()));
        assert!(q.paths.contains(&"crates/core/flags.rs".to_string()));
        // not code, not a path
        assert!(!q.paths.iter().any(|p| p.contains("setup.cfg")));
        // dotted names are not paths
        let q = parse("np.ndarray breaks x.py and xr.Dataset.to_dict");
        assert_eq!(q.paths, ["x.py"]);
    }

    #[test]
    fn short_questions_are_not_issues() {
        assert!(!is_issue("how is the session token refreshed?", 30));
        assert!(is_issue("a\nb\nc", 30));
        assert!(is_issue("see ```x```", 30));
    }
}
