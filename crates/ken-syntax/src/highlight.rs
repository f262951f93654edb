//! Syntax highlighting for display: code in, one HTML string per line out,
//! each token in a `<span class="hl-…">`. The grammars' own highlight
//! queries drive tree-sitter-highlight; a language without one, a file too
//! large, or anything that goes wrong gives plain escaped lines.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::AtomicUsize;

use ken_core::Language;
use tree_sitter_highlight::{HighlightConfiguration, Highlighter, HtmlRenderer};

/// The highlight names recognised, each a CSS class `hl-<name with - for .>`.
const NAMES: &[&str] = &[
    "attribute",
    "comment",
    "constant",
    "constant.builtin",
    "constructor",
    "embedded",
    "escape",
    "function",
    "function.builtin",
    "function.method",
    "keyword",
    "label",
    "module",
    "number",
    "operator",
    "property",
    "punctuation",
    "punctuation.bracket",
    "punctuation.delimiter",
    "string",
    "string.special",
    "tag",
    "type",
    "type.builtin",
    "variable",
    "variable.builtin",
    "variable.parameter",
];

/// Files larger than this are shown plain.
const MAX_BYTES: usize = 1 << 20;

fn classes() -> &'static [String] {
    static CLASSES: OnceLock<Vec<String>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        NAMES
            .iter()
            .map(|n| format!("class=\"hl-{}\"", n.replace('.', "-")))
            .collect()
    })
}

fn config(lang: Language) -> Option<&'static HighlightConfiguration> {
    static CONFIGS: OnceLock<HashMap<Language, HighlightConfiguration>> = OnceLock::new();
    CONFIGS
        .get_or_init(|| {
            let mut m = HashMap::new();
            for lang in Language::ALL {
                if let Some(c) = build(lang) {
                    m.insert(lang, c);
                }
            }
            m
        })
        .get(&lang)
}

fn build(lang: Language) -> Option<HighlightConfiguration> {
    let ts = crate::spec::tree_sitter_language(lang)?;
    let typescript = format!(
        "{}\n{}",
        tree_sitter_javascript::HIGHLIGHT_QUERY,
        tree_sitter_typescript::HIGHLIGHTS_QUERY
    );
    // the C++ query adds to C's
    let cpp = format!(
        "{}\n{}",
        tree_sitter_c::HIGHLIGHT_QUERY,
        tree_sitter_cpp::HIGHLIGHT_QUERY
    );
    let (highlights, locals): (&str, &str) = match lang {
        Language::Python => (tree_sitter_python::HIGHLIGHTS_QUERY, ""),
        Language::Rust => (tree_sitter_rust::HIGHLIGHTS_QUERY, ""),
        Language::JavaScript => (
            tree_sitter_javascript::HIGHLIGHT_QUERY,
            tree_sitter_javascript::LOCALS_QUERY,
        ),
        Language::TypeScript | Language::Tsx => (&typescript, ""),
        Language::Go => (tree_sitter_go::HIGHLIGHTS_QUERY, ""),
        Language::Java => (tree_sitter_java::HIGHLIGHTS_QUERY, ""),
        Language::C => (tree_sitter_c::HIGHLIGHT_QUERY, ""),
        Language::Cpp => (&cpp, ""),
        Language::CSharp => (tree_sitter_c_sharp::HIGHLIGHTS_QUERY, ""),
        Language::Ruby => (tree_sitter_ruby::HIGHLIGHTS_QUERY, ""),
        Language::Php => (tree_sitter_php::HIGHLIGHTS_QUERY, ""),
        Language::Bash => (tree_sitter_bash::HIGHLIGHT_QUERY, ""),
        Language::Scala => (tree_sitter_scala::HIGHLIGHTS_QUERY, ""),
        _ => return None,
    };
    let mut c = HighlightConfiguration::new(ts, lang.name(), highlights, "", locals).ok()?;
    c.configure(NAMES);
    Some(c)
}

/// Escape text for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn plain(text: &str) -> Vec<String> {
    text.lines().map(escape).collect()
}

/// `text` as HTML, one string per line (as many as `text.lines()` gives).
pub fn highlight_lines(lang: Language, text: &str) -> Vec<String> {
    let wanted = text.lines().count();
    if text.len() > MAX_BYTES {
        return plain(text);
    }
    let Some(config) = config(lang) else {
        return plain(text);
    };
    let mut highlighter = Highlighter::new();
    let cancel = AtomicUsize::new(0);
    let events = match highlighter.highlight(config, text.as_bytes(), None, Some(&cancel), |_| None)
    {
        Ok(e) => e,
        Err(_) => return plain(text),
    };
    let mut renderer = HtmlRenderer::new();
    let classes = classes();
    let attribute = |h: tree_sitter_highlight::Highlight, out: &mut Vec<u8>| {
        if let Some(c) = classes.get(h.0) {
            out.extend_from_slice(c.as_bytes());
        }
    };
    if renderer
        .render(events, text.as_bytes(), &attribute)
        .is_err()
    {
        return plain(text);
    }
    let mut lines: Vec<String> = renderer
        .lines()
        .map(|l| l.trim_end_matches(['\n', '\r']).to_string())
        .collect();
    if lines.len() < wanted {
        return plain(text);
    }
    lines.truncate(wanted);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_highlighted_line_by_line_and_escaped() {
        let src = "def f(x):\n    \"\"\"a <doc>\n    more\"\"\"\n    return x & 1\n";
        let lines = highlight_lines(Language::Python, src);
        assert_eq!(lines.len(), 4);
        assert!(
            lines[0].contains("<span class=\"hl-keyword\">def</span>"),
            "{}",
            lines[0]
        );
        // a string spanning lines is closed and reopened on each
        assert!(
            lines[1].starts_with("    <span class=\"hl-string\">"),
            "{}",
            lines[1]
        );
        assert!(lines[1].contains("&lt;doc&gt;"), "{}", lines[1]);
        assert!(lines[2].ends_with("</span>"), "{}", lines[2]);
        assert!(lines[3].contains("&amp;"), "{}", lines[3]);
        for l in &lines {
            assert_eq!(
                l.matches("<span").count(),
                l.matches("</span>").count(),
                "{l}"
            );
        }
    }

    #[test]
    fn every_grammar_has_a_working_query() {
        for lang in Language::ALL {
            if crate::spec::tree_sitter_language(lang).is_some() {
                assert!(config(lang).is_some(), "{}", lang.name());
            }
        }
        let go = highlight_lines(Language::Go, "package main\n\nfunc main() {}\n");
        assert!(go[2].contains("hl-keyword"), "{}", go[2]);
    }

    #[test]
    fn unknown_languages_and_odd_text_stay_plain() {
        assert_eq!(
            highlight_lines(Language::Text, "a <b>\nc"),
            vec!["a &lt;b&gt;", "c"]
        );
        assert!(highlight_lines(Language::Rust, "").is_empty());
        let broken = highlight_lines(Language::Rust, "fn (((( {\n\"unterminated\n");
        assert_eq!(broken.len(), 2);
    }
}
