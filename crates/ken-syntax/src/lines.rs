//! Line numbers, character boundaries and whitespace.

/// Byte offsets of line starts, for byte → line lookups.
pub(crate) struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        starts.push(0);
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// 0-based line of a byte offset.
    pub fn line_of(&self, byte: usize) -> usize {
        let byte = byte.min(self.len);
        self.starts.partition_point(|&s| s <= byte) - 1
    }

    /// 1-based line of the first byte of `start..end`.
    pub fn first_line(&self, start: usize) -> u32 {
        self.line_of(start) as u32 + 1
    }

    /// 1-based line of the last byte of `start..end` (the first line when empty).
    pub fn last_line(&self, start: usize, end: usize) -> u32 {
        self.line_of(end.max(start + 1) - 1) as u32 + 1
    }

    /// Byte offset where a 0-based line starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.len)
    }
}

/// Move `start` back to its line start when only spaces and tabs precede it
/// on that line (so a chunk keeps its first line's indentation).
pub(crate) fn back_to_line_start(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = start.min(bytes.len());
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    if i == 0 || bytes[i - 1] == b'\n' {
        i
    } else {
        start
    }
}

/// The largest char boundary ≤ `i`.
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Does `s` hold more than `limit` characters? (Cheap when it is short in bytes.)
pub(crate) fn longer_than(s: &str, limit: usize) -> bool {
    s.len() > limit && s.chars().nth(limit).is_some()
}

/// Whitespace runs collapsed to one space, trimmed, at most `max_chars`
/// characters (an ellipsis marks a cut).
pub(crate) fn collapse_ws(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars * 2));
    let mut n = 0;
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = n > 0;
            continue;
        }
        let need = if pending_space { 2 } else { 1 };
        if n + need > max_chars {
            while n + 1 > max_chars && out.pop().is_some() {
                n -= 1;
            }
            if max_chars > 0 {
                out.push('…');
            }
            return out;
        }
        if pending_space {
            out.push(' ');
            n += 1;
            pending_space = false;
        }
        out.push(c);
        n += 1;
    }
    out
}

/// Cut `s` to at most `max_chars` characters, at a char boundary.
pub(crate) fn truncate_chars(mut s: String, max_chars: usize) -> String {
    if let Some((i, _)) = s.char_indices().nth(max_chars) {
        s.truncate(i);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_bytes() {
        let t = "ab\ncd\n\nef";
        let li = LineIndex::new(t);
        assert_eq!(li.line_of(0), 0);
        assert_eq!(li.line_of(2), 0);
        assert_eq!(li.line_of(3), 1);
        assert_eq!(li.line_of(6), 2);
        assert_eq!(li.line_of(7), 3);
        assert_eq!(li.line_of(100), 3);
        assert_eq!(li.last_line(3, 6), 2);
        assert_eq!(li.line_start(3), 7);
    }

    #[test]
    fn whitespace_and_boundaries() {
        assert_eq!(
            collapse_ws("  fn  foo(\n   a: u32,\r\n) ", 300),
            "fn foo( a: u32, )"
        );
        assert_eq!(collapse_ws("abcdef", 3), "ab…");
        assert_eq!(collapse_ws("ab cd", 3), "ab…");
        assert_eq!(collapse_ws("ab c", 4), "ab c");
        assert_eq!(collapse_ws(&"word ".repeat(100), 300).chars().count(), 300);
        assert_eq!(floor_boundary("aé", 2), 1);
        assert!(longer_than("ééé", 2));
        assert!(!longer_than("ééé", 3));
        assert_eq!(back_to_line_start("x\n    def", 6), 2);
        assert_eq!(back_to_line_start("x = 1; def", 7), 7);
        assert_eq!(truncate_chars("héllo".into(), 2), "hé…");
    }
}
