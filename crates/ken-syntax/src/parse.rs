//! Time-bounded parsing with one reusable parser per language and thread.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use ken_core::Language;
use tree_sitter::{ParseOptions, Parser, Tree};

use crate::spec::tree_sitter_language;

thread_local! {
    static PARSERS: RefCell<Vec<(Language, Parser)>> = const { RefCell::new(Vec::new()) };
}

/// Parse `text` as `lang`, giving up after `timeout`. The error says why
/// no tree came back, for a diagnostic.
pub(crate) fn parse(lang: Language, text: &str, timeout: Duration) -> Result<Tree, String> {
    // The parser is taken out of the thread's cache while in use, so a
    // panic drops it instead of leaving a half-used parser behind.
    let cached = PARSERS.with(|p| {
        let mut p = p.borrow_mut();
        p.iter()
            .position(|(l, _)| *l == lang)
            .map(|i| p.swap_remove(i).1)
    });
    let mut parser = match cached {
        Some(p) => p,
        None => new_parser(lang)?,
    };
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let mut progress = |_: &tree_sitter::ParseState| {
        if Instant::now() >= deadline {
            timed_out = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = text.as_bytes();
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(ParseOptions::new().progress_callback(&mut progress)),
    );
    if tree.is_none() {
        parser.reset();
    }
    PARSERS.with(|p| p.borrow_mut().push((lang, parser)));
    match tree {
        Some(tree) => Ok(tree),
        None if timed_out => Err(format!(
            "parsing took longer than {} ms",
            timeout.as_millis()
        )),
        None => Err("the parser returned no tree".to_string()),
    }
}

fn new_parser(lang: Language) -> Result<Parser, String> {
    let ts = tree_sitter_language(lang).ok_or_else(|| format!("no grammar for {lang}"))?;
    let mut parser = Parser::new();
    parser
        .set_language(&ts)
        .map_err(|e| format!("cannot load the {lang} grammar: {e}"))?;
    Ok(parser)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_reuses_parsers() {
        let t = parse(
            Language::Python,
            "def f():\n    pass\n",
            Duration::from_secs(2),
        )
        .unwrap();
        assert_eq!(t.root_node().kind(), "module");
        let t = parse(Language::Python, "x = 1\n", Duration::from_secs(2)).unwrap();
        assert_eq!(t.root_node().named_child_count(), 1);
        PARSERS.with(|p| assert_eq!(p.borrow().len(), 1));
    }

    #[test]
    fn a_tiny_timeout_gives_up() {
        let text = "function f(a) { return [a, a, a]; }\n".repeat(20_000);
        let r = parse(Language::JavaScript, &text, Duration::from_nanos(1));
        assert!(r.unwrap_err().contains("longer than"));
        // the parser is usable again afterwards
        assert!(parse(Language::JavaScript, "f();", Duration::from_secs(2)).is_ok());
    }
}
