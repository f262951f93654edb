//! Plain data shared by every Kenning layer.
//!
//! Nothing here does I/O. Every other crate depends on this one and it
//! depends on nothing of ours: ids, [`Chunk`], [`Definition`], [`Language`],
//! search hits with their per-signal scores, filters, and the identifier
//! splitter used both at index time and at query time.

pub mod chunk;
pub mod hit;
pub mod ident;
pub mod lang;
pub mod ticket;
pub mod time;

pub use chunk::{Chunk, ChunkKind, Definition, FileSyntax, RefKind, Reference};
pub use hit::{AuthorShare, Filters, Hit, Signal, Signals};
pub use lang::Language;
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

/// Line number (1-based) of a byte offset in `text`.
pub fn line_of(text: &str, byte: usize) -> u32 {
    let end = byte.min(text.len());
    1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
}
