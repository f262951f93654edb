//! How files are cut.

/// Sizes that decide how a file is cut into chunks.
///
/// Sizes named `_chars` count characters; `max_window_bytes` counts bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkOptions {
    /// A code or text file of at most this many characters is one chunk, whole.
    pub whole_file_chars: usize,
    /// A class / impl / interface larger than this is stored as a skeleton
    /// of signatures instead of whole; Markdown sections and configuration
    /// files larger than this are split into windows.
    pub max_chunk_chars: usize,
    /// A single function larger than this is split into line windows that
    /// all carry its symbol (smaller functions are never cut).
    pub max_definition_chars: usize,
    /// Lines per window in the line-window fallback.
    pub window_lines: usize,
    /// Lines shared by consecutive windows.
    pub window_overlap: usize,
    /// Windows are also cut by bytes (at character boundaries), so one
    /// 5 MB minified line still yields bounded chunks.
    pub max_window_bytes: usize,
    /// Parsing one file stops after this long and falls back to windows.
    pub parse_timeout_ms: u64,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            whole_file_chars: 3000,
            max_chunk_chars: 8000,
            max_definition_chars: 24000,
            window_lines: 60,
            window_overlap: 10,
            max_window_bytes: 6000,
            parse_timeout_ms: 2000,
        }
    }
}

impl ChunkOptions {
    /// The same options with nonsense values made workable (no zero-line
    /// windows, an overlap smaller than a window, room for one character).
    pub(crate) fn sanitized(&self) -> ChunkOptions {
        let window_lines = self.window_lines.max(1);
        ChunkOptions {
            window_lines,
            window_overlap: self.window_overlap.min(window_lines - 1),
            max_window_bytes: self.max_window_bytes.max(16),
            max_definition_chars: self.max_definition_chars.max(self.max_chunk_chars),
            parse_timeout_ms: self.parse_timeout_ms.max(1),
            ..self.clone()
        }
    }
}
