//! Identifier-aware word splitting, shared by indexing and querying.
//!
//! `parseConfig`, `parse_config`, `parse-config` and `ParseConfig` all yield the
//! sub-words `parse` and `config`; at index time the whole identifier is kept
//! as a token too (`parseconfig`, `parse_config`), so an exact identifier in a
//! query scores above a loose match of its parts.

/// Split one identifier into lowercase sub-words.
///
/// Boundaries: `_`, `-`, `.`, `:`, `$`, lower→upper (`parseConfig`),
/// acronym→word (`HTTPServer` → `http`, `server`), letter↔digit is *not* a
/// boundary (`utf8`, `sha256` stay whole).
pub fn split_identifier(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in ident.split(|c: char| !c.is_alphanumeric()) {
        if part.is_empty() {
            continue;
        }
        split_case(part, &mut out);
    }
    out
}

fn split_case(part: &str, out: &mut Vec<String>) {
    let chars: Vec<char> = part.chars().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (prev, cur) = (chars[i - 1], chars[i]);
        let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
        let boundary = (prev.is_lowercase() && cur.is_uppercase())
            || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
            || (prev.is_ascii_digit() && cur.is_uppercase() && next_lower);
        if boundary {
            out.push(chars[start..i].iter().collect::<String>().to_lowercase());
            start = i;
        }
    }
    out.push(chars[start..].iter().collect::<String>().to_lowercase());
}

/// Call `emit(token, position, start, end)` for every token of `text` as it
/// is indexed: each identifier-like run (`[A-Za-z0-9_]` and non-ASCII
/// letters) yields its lowercase sub-words and, when it has more than one,
/// the whole identifier lowercased with separators removed (`parse_config`,
/// `parseConfig` → `parseconfig`). Positions advance once per sub-word, so
/// phrase queries over sub-words still work.
pub fn index_tokens(text: &str, mut emit: impl FnMut(&str, usize, usize, usize)) {
    let mut pos = 0usize;
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut buf = String::new();
    for (start, word) in words(text) {
        let end = start + word.len();
        parts.clear();
        if word.is_ascii() {
            ascii_parts(word.as_bytes(), &mut parts);
            if parts.len() > 1 {
                buf.clear();
                for &(a, b) in &parts {
                    buf.push_str(&word[a..b]);
                }
                buf.make_ascii_lowercase();
                emit(&buf, pos, start, end);
            }
            for &(a, b) in &parts {
                buf.clear();
                buf.push_str(&word[a..b]);
                buf.make_ascii_lowercase();
                emit(&buf, pos, start, end);
                pos += 1;
            }
        } else {
            let subs = split_identifier(word);
            if subs.len() > 1 {
                emit(&subs.concat(), pos, start, end);
            }
            for s in &subs {
                emit(s, pos, start, end);
                pos += 1;
            }
        }
    }
}

/// Sub-word byte ranges of an ASCII identifier (same rules as [`split_identifier`]).
fn ascii_parts(w: &[u8], out: &mut Vec<(usize, usize)>) {
    let mut i = 0;
    while i < w.len() {
        while i < w.len() && !w[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let part_start = i;
        while i < w.len() && w[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if part_start == i {
            break;
        }
        let mut s = part_start;
        for j in part_start + 1..i {
            let (prev, cur) = (w[j - 1], w[j]);
            let next_lower = j + 1 < i && w[j + 1].is_ascii_lowercase();
            let boundary = (prev.is_ascii_lowercase() && cur.is_ascii_uppercase())
                || (prev.is_ascii_uppercase() && cur.is_ascii_uppercase() && next_lower)
                || (prev.is_ascii_digit() && cur.is_ascii_uppercase() && next_lower);
            if boundary {
                out.push((s, j));
                s = j;
            }
        }
        out.push((s, i));
    }
}

/// Identifier-like runs of `text`, with their byte offsets.
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0usize;
    // the length of the word character at `at`, or None; ASCII without decoding
    let word_char = move |at: usize| -> Option<usize> {
        let b = bytes[at];
        if b < 0x80 {
            return (b.is_ascii_alphanumeric() || b == b'_').then_some(1);
        }
        let c = text[at..].chars().next()?;
        is_word_char(c).then(|| c.len_utf8())
    };
    std::iter::from_fn(move || {
        loop {
            // skip to the next word character (char boundaries only)
            while i < bytes.len() {
                if word_char(i).is_some() {
                    break;
                }
                i += 1;
                while i < bytes.len() && !text.is_char_boundary(i) {
                    i += 1;
                }
            }
            if i >= bytes.len() {
                return None;
            }
            let start = i;
            while i < bytes.len() {
                match word_char(i) {
                    Some(n) => i += n,
                    None => break,
                }
            }
            let w = &text[start..i];
            if !is_data(w) {
                return Some((start, w));
            }
        }
    })
}

/// Over-long runs are data (hashes, base64), not identifiers — unless they
/// read like one: a long test name such as
/// `a_reader_that_goes_away_stops_output_quietly_when_piped` is words
/// joined by underscores.
fn is_data(w: &str) -> bool {
    if w.len() <= 64 {
        return false;
    }
    if w.len() > 256 {
        return true;
    }
    let parts: Vec<&str> = w.split('_').filter(|p| !p.is_empty()).collect();
    let wordy = parts.len() >= 3
        && parts
            .iter()
            .all(|p| p.len() <= 24 && p.chars().any(|c| c.is_alphabetic()));
    !wordy
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Does this word look like a code identifier rather than an English word?
/// (`parse_config`, `parseConfig`, `HTTPServer`, `__init__`, `Cmd`-style
/// capitalised words are *not* enough on their own: "Fix" starts sentences.)
pub fn looks_like_identifier(word: &str) -> bool {
    if word.len() < 2 {
        return false;
    }
    if word.contains('_') && word.chars().any(|c| c.is_alphabetic()) {
        return true;
    }
    let chars: Vec<char> = word.chars().collect();
    // an upper-case letter after the first character: camelCase / PascalCase / HTTP
    let inner_upper = chars[1..].iter().any(|c| c.is_uppercase());
    let has_lower = chars.iter().any(|c| c.is_lowercase());
    inner_upper && has_lower
}

/// English words too common in questions and commit messages to carry meaning.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "done", "each",
    "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me",
    "more", "most", "my", "no", "not", "now", "of", "on", "only", "or", "other", "our", "out",
    "over", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "too", "up", "use", "used", "uses", "using",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "why", "will",
    "with", "would", "you", "your",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_every_convention() {
        assert_eq!(split_identifier("parseConfig"), ["parse", "config"]);
        assert_eq!(split_identifier("ParseConfig"), ["parse", "config"]);
        assert_eq!(split_identifier("parse_config"), ["parse", "config"]);
        assert_eq!(split_identifier("parse-config"), ["parse", "config"]);
        assert_eq!(split_identifier("os.path.join"), ["os", "path", "join"]);
        assert_eq!(split_identifier("HTTPServer"), ["http", "server"]);
        assert_eq!(
            split_identifier("getHTTPResponse"),
            ["get", "http", "response"]
        );
        assert_eq!(split_identifier("utf8"), ["utf8"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
        assert_eq!(
            split_identifier("Searcher::search_path"),
            ["searcher", "search", "path"]
        );
    }

    #[test]
    fn index_tokens_keep_the_whole_identifier() {
        let mut toks = Vec::new();
        index_tokens("fn parseConfig(x)", |t, p, _, _| {
            toks.push((t.to_string(), p))
        });
        assert_eq!(
            toks,
            [
                ("fn".to_string(), 0),
                ("parseconfig".to_string(), 1),
                ("parse".to_string(), 1),
                ("config".to_string(), 2),
                ("x".to_string(), 3)
            ]
        );
    }

    #[test]
    fn ascii_fast_path_agrees_with_the_general_splitter() {
        for w in [
            "parseConfig",
            "HTTPServer",
            "getHTTPResponse",
            "__init__",
            "utf8",
            "a_b_c",
            "X",
            "ABC",
            "v2Beta",
            "snake_Case_X",
        ] {
            let mut fast = Vec::new();
            index_tokens(w, |t, _, _, _| fast.push(t.to_string()));
            let subs = split_identifier(w);
            let mut slow = Vec::new();
            if subs.len() > 1 {
                slow.push(subs.concat());
            }
            slow.extend(subs);
            assert_eq!(fast, slow, "{w}");
        }
    }

    /// `words` as a plain walk over chars: what the byte-wise one must equal.
    fn words_by_char(text: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            match (is_word_char(c), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    if !is_data(&text[s..i]) {
                        out.push((s, &text[s..i]));
                    }
                    start = None;
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn words_match_a_walk_over_chars() {
        let long = "x".repeat(300);
        for text in [
            "parse_config(self, path='a.toml') -> Config",
            "naïve café — 東京 mañana_x2 ÅngströmUnit",
            "emoji 🚀rocket_ship🚀 tab\tend €uro",
            "a\u{301}b (combining) ℕ⁵ x²",
            long.as_str(),
            "",
            "___",
        ] {
            assert_eq!(
                words(text).collect::<Vec<_>>(),
                words_by_char(text),
                "{text}"
            );
        }
    }

    #[test]
    fn words_skip_data_runs() {
        let long = "a".repeat(100);
        let text = format!("x {long} y");
        let w: Vec<_> = words(&text).map(|(_, w)| w).collect();
        assert_eq!(w, ["x", "y"]);
        let hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let b64 = "dGhpc19pc19ub3RfYW5faWRlbnRpZmllcl9idXRfYmFzZTY0X2RhdGFfdGhhdF9nb2VzX29u";
        let name = "a_reader_that_goes_away_stops_output_quietly_when_the_pipe_closes";
        assert!(name.len() > 64);
        let text = format!("{hash}00 {b64} {name}");
        let w: Vec<_> = words(&text).map(|(_, w)| w).collect();
        assert_eq!(
            w,
            [name],
            "long test names are identifiers, hashes and base64 are not"
        );
    }

    #[test]
    fn identifier_shapes() {
        assert!(looks_like_identifier("parse_config"));
        assert!(looks_like_identifier("AppContext"));
        assert!(looks_like_identifier("getX"));
        assert!(!looks_like_identifier("Fix"));
        assert!(!looks_like_identifier("HTTP"));
        assert!(!looks_like_identifier("teardown"));
    }

    #[test]
    fn stop_words_are_sorted() {
        let mut s = STOP_WORDS.to_vec();
        s.sort();
        assert_eq!(s, STOP_WORDS);
        assert!(is_stop_word("the"));
        assert!(!is_stop_word("config"));
    }
}
