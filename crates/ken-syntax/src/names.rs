//! Names as written: cleaning, splitting a path at its last separator,
//! unquoting module strings.

/// `text` without whitespace (a space is kept between two words, so
/// `extends Foo` is not mistaken for one name); without `<...>` generic
/// arguments (and a `::` turbofish before them) when `generics`; without
/// `[...]` when `brackets`.
pub(crate) fn clean(text: &str, generics: bool, brackets: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut angle = 0usize;
    let mut square = 0usize;
    let mut space = false;
    for c in text.chars() {
        match c {
            '<' if generics => {
                angle += 1;
                if angle == 1 && out.ends_with("::") {
                    out.truncate(out.len() - 2);
                }
            }
            '>' if generics && angle > 0 => angle -= 1,
            '[' if brackets => square += 1,
            ']' if brackets && square > 0 => square -= 1,
            c if c.is_whitespace() => space = true,
            c if angle == 0 && square == 0 => {
                if space && name_char(c) && out.ends_with(name_char) {
                    out.push(' ');
                }
                space = false;
                out.push(c);
            }
            _ => {}
        }
    }
    out
}

/// A character of a name (`save!`, `$el`, `~Foo`, `is_empty?`).
fn name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '!' | '?' | '~' | '@')
}

/// A plausible short name: not empty, not a number, no separators.
pub(crate) fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars().all(name_char)
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// A plausible imported name: a name, a file name (`stdio.h`), `*`.
pub(crate) fn is_module(s: &str) -> bool {
    !s.is_empty() && s.len() <= 200 && !s.contains(char::is_whitespace)
}

/// Only names and separators (`a.b`, `a::b`, `a->b`, `a\\b`, `a?.b`).
pub(crate) fn is_path(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| name_char(c) || matches!(c, '.' | ':' | '\\' | '-' | '>' | '&'))
}

/// A quick no: text holding call arguments, strings or blocks is not a path.
pub(crate) fn may_be_path(text: &str) -> bool {
    !text
        .bytes()
        .any(|b| matches!(b, b'(' | b'"' | b'\'' | b'{' | b';' | b'=' | b'`'))
}

/// Split a path at its last separator: `os.path.join` → (`os.path`,
/// `join`), `crate::walk::f` → (`crate::walk`, `f`), `\\strlen` → (None,
/// `strlen`). The qualifier is kept as written.
pub(crate) fn split_last(path: &str) -> (Option<&str>, &str) {
    let b = path.as_bytes();
    let mut i = b.len();
    while i > 0 {
        let c = b[i - 1];
        let sep_start = match c {
            b'.' => {
                if i >= 2 && matches!(b[i - 2], b'?' | b'&') {
                    Some(i - 2)
                } else {
                    Some(i - 1)
                }
            }
            b':' if i >= 2 && b[i - 2] == b':' => Some(i - 2),
            b'>' if i >= 2 && b[i - 2] == b'-' => Some(i - 2),
            b'\\' => Some(i - 1),
            _ => None,
        };
        if let Some(s) = sep_start {
            let qualifier = &path[..s];
            let name = &path[i..];
            return ((!qualifier.is_empty()).then_some(qualifier), name);
        }
        i -= 1;
    }
    (None, path)
}

/// A string literal's content: quotes (`'`, `"`, `` ` ``, `<>`) removed.
pub(crate) fn unquote(s: &str) -> &str {
    let s = s.trim();
    let s = s.strip_prefix(['"', '\'', '`', '<']).unwrap_or(s);
    s.strip_suffix(['"', '\'', '`', '>']).unwrap_or(s)
}

/// The last segment of a module path: `a.b.c` → `c`, `./lib/router.js` →
/// `router`, `github.com/spf13/cobra` → `cobra`, `a::b` → `b`.
pub(crate) fn last_segment(path: &str) -> &str {
    let trimmed = path.trim_end_matches(['/', '.', ':', '\\']);
    if trimmed.contains('/') {
        let file = trimmed.rsplit('/').next().unwrap_or(trimmed);
        return match file.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && ext.len() <= 4 => stem,
            _ => file,
        };
    }
    trimmed
        .rsplit(['.', ':', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or(trimmed)
}

/// Cut `s` to at most `max` bytes at a character boundary, marking the cut.
pub(crate) fn capped(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning_drops_generics_and_whitespace() {
        assert_eq!(clean("Vec::<u8>::new", true, false), "Vec::new");
        assert_eq!(clean("HashMap<K, V>", true, false), "HashMap");
        assert_eq!(clean("a . b", false, false), "a.b");
        assert_eq!(clean("Generic[T]", false, true), "Generic");
        assert_eq!(clean("a[0]", false, false), "a[0]");
        assert_eq!(clean("a->b", true, false), "a->b");
        assert_eq!(clean("extends  Foo", false, false), "extends Foo");
        assert_eq!(clean("Map<K, V> x", true, false), "Map x");
    }

    #[test]
    fn paths_split_at_the_last_separator() {
        assert_eq!(split_last("os.path.join"), (Some("os.path"), "join"));
        assert_eq!(split_last("crate::walk::f"), (Some("crate::walk"), "f"));
        assert_eq!(split_last("self->buf"), (Some("self"), "buf"));
        assert_eq!(split_last("App\\Models\\User").1, "User");
        assert_eq!(split_last("\\strlen"), (None, "strlen"));
        assert_eq!(split_last("a?.b"), (Some("a"), "b"));
        assert_eq!(split_last("f"), (None, "f"));
        assert!(is_path("a.b::c->d") && !is_path("a(b)") && !is_path(""));
        assert!(is_name("save!") && !is_name("a.b") && !is_name("1x"));
    }

    #[test]
    fn module_segments() {
        assert_eq!(last_segment("a.b.c"), "c");
        assert_eq!(last_segment("./lib/router"), "router");
        assert_eq!(last_segment("./lib/router.js"), "router");
        assert_eq!(last_segment("github.com/spf13/cobra"), "cobra");
        assert_eq!(last_segment("std::io"), "io");
        assert_eq!(last_segment("sys/types.h"), "types");
        assert_eq!(unquote("'./x'"), "./x");
        assert_eq!(unquote("<stdio.h>"), "stdio.h");
    }
}
