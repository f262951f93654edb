//! Plain data shared by every Kenning layer.
//!
//! Nothing here does I/O. Every other crate depends on this one and it
//! depends on nothing of ours: ids, [`Chunk`], [`Definition`], [`Language`],
//! search hits with their per-signal scores, filters, and the identifier
//! splitter used both at index time and at query time.

pub mod chunk;
pub mod graph;
pub mod hit;
pub mod ident;
pub mod lang;
pub mod repo_name;
pub mod ticket;
pub mod time;

pub use chunk::{Chunk, ChunkKind, Definition, FileSyntax, RefKind, Reference, TypedValue};
pub use graph::{DefKey, Edge, FileFacts, MODULE, Rule};
pub use hit::{AuthorShare, Filters, Hit, Signal, Signals};
pub use lang::{Language, is_test_path};
pub use ticket::Ticket;

/// A content hash: the first 16 bytes of BLAKE3, as 32 lowercase hex digits.
pub fn content_hash(bytes: &[u8]) -> String {
    let h = blake3::hash(bytes);
    let mut s = String::with_capacity(32);
    for b in &h.as_bytes()[..16] {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Lowercase hex of `bytes`.
pub fn encode_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The bytes of a hex string (either case), or None when it is not one.
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// Line number (1-based) of a byte offset in `text`.
pub fn line_of(text: &str, byte: usize) -> u32 {
    let end = byte.min(text.len());
    1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_decodes_either_case_and_refuses_anything_else() {
        assert_eq!(super::decode_hex("00ffAb"), Some(vec![0, 255, 0xab]));
        assert_eq!(super::decode_hex(""), Some(vec![]));
        for bad in ["abc", "zz", "+1", "é0", " 1"] {
            assert_eq!(super::decode_hex(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn hex_encodes_lowercase_and_round_trips() {
        assert_eq!(super::encode_hex(&[0, 255, 0xab, 9]), "00ffab09");
        assert_eq!(super::encode_hex(&[]), "");
        let sha = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        assert_eq!(super::encode_hex(&super::decode_hex(sha).unwrap()), sha);
    }
}
