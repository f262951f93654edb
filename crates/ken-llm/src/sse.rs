//! Server-sent events, as chat-completion streams use them: an incremental
//! parser fed with whatever bytes the network delivers.
//!
//! Tolerances: `\n`, `\r\n` and `\r` line ends (split anywhere across reads),
//! comment / keep-alive lines (`: ping`), fields other than `data` ignored,
//! multi-line `data` joined with `\n`, and servers that forget the blank line
//! between events (a new `data:` line after a complete JSON value starts a new
//! event).

use serde::de::IgnoredAny;

/// Longest line accepted; a longer one means we are not reading a chat stream.
const MAX_LINE: usize = 4 << 20;

#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: String,
    has_data: bool,
    /// The previous byte was a `\r` (a `\n` right after it ends nothing new).
    after_cr: bool,
}

impl SseParser {
    /// Feed bytes; complete events' data are pushed to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<String>) -> Result<(), String> {
        for &b in bytes {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.end_line(out)?;
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() >= MAX_LINE {
                        return Err(format!("a line longer than {} MiB", MAX_LINE >> 20));
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(())
    }

    /// The input ended: an unterminated last line and event still count.
    pub(crate) fn finish(&mut self, out: &mut Vec<String>) -> Result<(), String> {
        if !self.line.is_empty() {
            self.end_line(out)?;
        }
        self.dispatch(out);
        Ok(())
    }

    /// What is buffered and not yet dispatched (for error messages).
    pub(crate) fn pending(&self) -> String {
        let mut s = self.data.clone();
        s.push_str(&String::from_utf8_lossy(&self.line));
        s
    }

    fn end_line(&mut self, out: &mut Vec<String>) -> Result<(), String> {
        let raw = std::mem::take(&mut self.line);
        let line = String::from_utf8(raw).map_err(|e| {
            format!(
                "a line is not UTF-8 ({e}): {:?}",
                String::from_utf8_lossy(e.as_bytes())
            )
        })?;
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(()); // comment / keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        if field != "data" {
            return Ok(()); // event:, id:, retry:, unknown
        }
        if self.has_data && complete_value(&self.data) {
            self.dispatch(out);
        }
        if self.has_data {
            self.data.push('\n');
        }
        self.data.push_str(value);
        self.has_data = true;
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<String>) {
        if self.has_data {
            out.push(std::mem::take(&mut self.data));
            self.has_data = false;
        }
    }
}

fn complete_value(data: &str) -> bool {
    let d = data.trim();
    d == "[DONE]" || (d.starts_with('{') && serde_json::from_str::<IgnoredAny>(d).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_pieces(input: &str, piece: usize) -> Vec<String> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for c in input.as_bytes().chunks(piece) {
            p.feed(c, &mut out).unwrap();
        }
        p.finish(&mut out).unwrap();
        out
    }

    #[test]
    fn events_survive_any_split() {
        let input = ": keep-alive\r\n\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\ndata:{\"b\":\"é\"}\n\nid: 3\ndata: [DONE]\n\n";
        for piece in 1..input.len() {
            assert_eq!(
                parse_in_pieces(input, piece),
                ["{\"a\":1}", "{\"b\":\"é\"}", "[DONE]"],
                "piece {piece}"
            );
        }
    }

    #[test]
    fn multi_line_data_and_missing_blank_lines() {
        assert_eq!(parse_in_pieces("data: a\ndata: b\n\n", 3), ["a\nb"]);
        assert_eq!(
            parse_in_pieces("data: {\"a\":1}\ndata: {\"b\":2}\ndata: [DONE]\n", 5),
            ["{\"a\":1}", "{\"b\":2}", "[DONE]"]
        );
        assert_eq!(parse_in_pieces("\r\r: x\r", 1), Vec::<String>::new());
    }

    #[test]
    fn unterminated_tail_is_kept_for_the_caller_to_judge() {
        assert_eq!(parse_in_pieces("data: {\"a\":", 4), ["{\"a\":"]);
    }
}
