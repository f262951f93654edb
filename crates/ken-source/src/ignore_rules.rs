//! `.kenignore`: gitignore syntax, read from the repository root.

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Build a matcher from the text of a root-level ignore file.
pub(crate) fn matcher(text: &str) -> Gitignore {
    let mut b = GitignoreBuilder::new("");
    for line in text.lines() {
        // A bad line is skipped, the rest still apply.
        let _ = b.add_line(None, line);
    }
    b.build().unwrap_or_else(|_| Gitignore::empty())
}

pub(crate) fn is_ignored(m: &Gitignore, path: &str) -> bool {
    m.matched_path_or_any_parents(path, false).is_ignore()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_syntax() {
        let m = matcher("# comment\n*.log\nbuild/\n!keep.log\n");
        assert!(is_ignored(&m, "a/b.log"));
        assert!(!is_ignored(&m, "keep.log"));
        assert!(is_ignored(&m, "build/x.rs"));
        assert!(!is_ignored(&m, "src/x.rs"));
    }
}
