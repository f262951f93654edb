//! A report as Markdown (terminals, pull requests) or as one self-contained
//! HTML file with inline SVG charts (no external asset).

mod html;
mod md;

pub use html::html;
pub use md::markdown;

/// The first 10 characters of a sha.
pub(crate) fn short(sha: &str) -> &str {
    sha.get(..10).unwrap_or(sha)
}
