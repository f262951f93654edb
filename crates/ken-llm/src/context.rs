//! The context an answer may use: retrieved chunks merged into blocks, within
//! a token budget, and the messages that ask for a cited answer.
//!
//! Invariants:
//! - chunks are taken best first; a chunk that does not fit is left out (and
//!   listed in [`Context::omitted`]), a smaller one after it may still fit;
//! - overlapping or adjacent chunks of the same file become one block whose
//!   range is the union, each line shown once;
//! - a block's range is exactly the lines it shows, so a citation inside a
//!   block's range always points at text the model saw.

use std::collections::BTreeMap;

use ken_core::{Hit, Language};
use serde::{Deserialize, Serialize};

use crate::Message;
use crate::cite::SourceRange;

/// One retrieved chunk, as an answer needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextChunk {
    pub repo: String,
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// Qualified name of the defined symbol, if any.
    pub symbol: Option<String>,
    pub language: Language,
    /// Authors and their share of the chunk's lines (0..=1).
    pub authors: Vec<(String, f32)>,
    /// The chunk's text: lines `start_line..=end_line` of the file.
    pub text: String,
}

impl ContextChunk {
    /// From a search hit and the chunk's full text (a hit's snippet may be cut).
    pub fn from_hit(hit: &Hit, text: impl Into<String>) -> ContextChunk {
        ContextChunk {
            repo: hit.repo.clone(),
            path: hit.path.clone(),
            start_line: hit.start_line,
            end_line: hit.end_line,
            symbol: hit.symbol.clone(),
            language: hit.language,
            authors: hit
                .authors
                .iter()
                .map(|a| (a.name.clone(), a.share))
                .collect(),
            text: text.into(),
        }
    }
}

/// How to build a context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextOptions {
    /// Tokens the rendered blocks may take (see [`estimate_tokens`]). Leave
    /// room in the model's window for the system prompt (~300 tokens), the
    /// question and the answer.
    pub budget_tokens: usize,
    /// Prefix each line with its number (`  12 | `): models cite far more
    /// precise ranges when they can see the numbers.
    pub line_numbers: bool,
    /// Authors shown per block.
    pub max_authors: usize,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            budget_tokens: 6000,
            line_numbers: true,
            max_authors: 3,
        }
    }
}

/// Lines of one file shown to the model under one header.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    pub repo: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Symbols of the chunks merged here, best chunk first.
    pub symbols: Vec<String>,
    pub language: Language,
    /// Authors weighted by the lines of each merged chunk, largest share first.
    pub authors: Vec<(String, f32)>,
    /// Indices (into the input) of the chunks merged here.
    pub chunks: Vec<usize>,
    /// The chunk text did not match its line range (a synthetic chunk: module
    /// summary, class skeleton, notebook cell): shown as is, never merged.
    pub synthetic: bool,
    /// Cut to fit the budget; the range covers only what is shown.
    pub truncated: bool,
    #[serde(skip)]
    lines: BTreeMap<u32, String>,
    #[serde(skip)]
    raw: String,
}

impl Block {
    /// `path:start-end`, as citations must repeat it.
    pub fn location(&self) -> String {
        format!("{}:{}-{}", self.path, self.start_line, self.end_line)
    }

    /// The block's text (without line numbers).
    pub fn text(&self) -> String {
        if self.synthetic {
            return self.raw.clone();
        }
        let mut s = String::new();
        for l in self.lines.values() {
            s.push_str(l);
            s.push('\n');
        }
        s
    }

    fn render(&self, n: usize, opts: &ContextOptions, many_repos: bool) -> String {
        let mut h = format!("[{n}] {}", self.location());
        if !self.symbols.is_empty() {
            h.push_str(" · symbol: ");
            h.push_str(&self.symbols.join(", "));
        }
        if !self.authors.is_empty() && opts.max_authors > 0 {
            h.push_str(" · authors: ");
            let a: Vec<String> = self
                .authors
                .iter()
                .take(opts.max_authors)
                .map(|(name, share)| format!("{name} {:.0}%", share * 100.0))
                .collect();
            h.push_str(&a.join(", "));
        }
        if many_repos {
            h.push_str(" · repo: ");
            h.push_str(&self.repo);
        }
        if self.truncated {
            h.push_str(" · (cut to fit)");
        }
        let fence = fence_for(&self.text());
        let mut s = format!("{h}\n{fence}{}\n", self.language.name());
        if self.synthetic || !opts.line_numbers {
            s.push_str(&self.text());
        } else {
            let width = self.end_line.to_string().len();
            for (n, l) in &self.lines {
                s.push_str(&format!("{n:>width$} | {l}\n"));
            }
        }
        s.push_str(&fence);
        s.push('\n');
        s
    }
}

/// A fence longer than any backtick run in the text.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

/// The blocks an answer may cite, in the order shown (best first).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Context {
    pub blocks: Vec<Block>,
    /// Estimated tokens of [`Context::render`].
    pub tokens: usize,
    pub budget_tokens: usize,
    /// Input chunks left out for lack of budget.
    pub omitted: Vec<usize>,
    #[serde(skip)]
    opts: ContextOptions,
}

impl Context {
    /// Merge and fit `chunks` (best first) into the budget.
    pub fn build(chunks: &[ContextChunk], opts: &ContextOptions) -> Context {
        let mut blocks: Vec<Block> = Vec::new();
        let mut omitted = Vec::new();
        let many = chunks.iter().any(|c| c.repo != chunks[0].repo);
        for (i, chunk) in chunks.iter().enumerate() {
            let mut next = blocks.clone();
            add_chunk(&mut next, i, chunk);
            if total_tokens(&next, opts, many) <= opts.budget_tokens {
                blocks = next;
            } else if blocks.is_empty() {
                // The best chunk alone is too big: show as much of it as fits.
                if let Some(b) = cut_to_fit(&next[0], opts, many) {
                    blocks.push(b);
                } else {
                    omitted.push(i);
                }
            } else {
                omitted.push(i);
            }
        }
        let tokens = total_tokens(&blocks, opts, many);
        Context {
            blocks,
            tokens,
            budget_tokens: opts.budget_tokens,
            omitted,
            opts: opts.clone(),
        }
    }

    /// No block fitted (or no chunk was given).
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The blocks as the model reads them.
    pub fn render(&self) -> String {
        let many = self.blocks.iter().any(|b| b.repo != self.blocks[0].repo);
        let mut s = String::new();
        for (i, b) in self.blocks.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            s.push_str(&b.render(i + 1, &self.opts, many));
        }
        s
    }

    /// What citations may point at.
    pub fn sources(&self) -> Vec<SourceRange> {
        self.blocks
            .iter()
            .map(|b| SourceRange {
                repo: Some(b.repo.clone()),
                path: b.path.clone(),
                start_line: b.start_line,
                end_line: b.end_line,
            })
            .collect()
    }
}

fn total_tokens(blocks: &[Block], opts: &ContextOptions, many: bool) -> usize {
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| estimate_tokens(&b.render(i + 1, opts, many)) + 1)
        .sum()
}

fn new_block(i: usize, c: &ContextChunk) -> Block {
    let text_lines: Vec<&str> = c.text.lines().collect();
    let span = c.end_line.saturating_sub(c.start_line) as usize + 1;
    // A chunk's text normally holds exactly its lines; allow one missing
    // (a trailing empty line dropped). Anything else was assembled.
    let contiguous = c.start_line >= 1
        && c.end_line >= c.start_line
        && text_lines.len() + 1 >= span
        && text_lines.len() <= span;
    let mut lines = BTreeMap::new();
    if contiguous {
        for n in 0..span {
            lines.insert(
                c.start_line + n as u32,
                text_lines.get(n).unwrap_or(&"").to_string(),
            );
        }
    }
    Block {
        repo: c.repo.clone(),
        path: c.path.clone(),
        start_line: c.start_line,
        end_line: c.end_line.max(c.start_line),
        symbols: c.symbol.iter().cloned().collect(),
        language: c.language,
        authors: c.authors.clone(),
        chunks: vec![i],
        synthetic: !contiguous,
        truncated: false,
        lines,
        raw: c.text.clone(),
    }
}

/// Merge a chunk into the blocks: into every block of the same file it
/// overlaps or touches (coalescing them), or as a new block at the end.
fn add_chunk(blocks: &mut Vec<Block>, i: usize, c: &ContextChunk) {
    let b = new_block(i, c);
    if b.synthetic {
        blocks.push(b);
        return;
    }
    // Absorb every touching block, keeping the position of the best one.
    let mut touching: Vec<Block> = Vec::new();
    let mut at: Option<usize> = None;
    let mut k = 0;
    while k < blocks.len() {
        let o = &blocks[k];
        let touches = !o.synthetic
            && o.repo == b.repo
            && o.path == b.path
            && o.start_line <= b.end_line.saturating_add(1)
            && b.start_line <= o.end_line.saturating_add(1);
        if touches {
            touching.push(blocks.remove(k));
            at.get_or_insert(k);
        } else {
            k += 1;
        }
    }
    // Better-ranked blocks first, the new chunk last.
    touching.push(b);
    let mut it = touching.into_iter();
    let first = it.next().expect("the new block is there");
    let merged = it.fold(first, merge);
    match at {
        Some(pos) => blocks.insert(pos, merged),
        None => blocks.push(merged),
    }
}

/// `first` is the better-ranked block; its symbols and lines come first.
fn merge(first: Block, second: Block) -> Block {
    let weight = |b: &Block| f32::from(u16::try_from(b.lines.len()).unwrap_or(u16::MAX));
    let (w1, w2) = (weight(&first), weight(&second));
    let mut authors: Vec<(String, f32)> = Vec::new();
    for (list, w) in [(&first.authors, w1), (&second.authors, w2)] {
        for (name, share) in list {
            match authors.iter_mut().find(|(n, _)| n == name) {
                Some((_, s)) => *s += share * w,
                None => authors.push((name.clone(), share * w)),
            }
        }
    }
    let total = (w1 + w2).max(1.0);
    for (_, s) in &mut authors {
        *s /= total;
    }
    authors.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut symbols = first.symbols;
    for s in second.symbols {
        if !symbols.contains(&s) {
            symbols.push(s);
        }
    }
    let mut lines = second.lines;
    lines.extend(first.lines);
    let mut chunks = first.chunks;
    chunks.extend(second.chunks);
    Block {
        start_line: first.start_line.min(second.start_line),
        end_line: first.end_line.max(second.end_line),
        symbols,
        authors,
        chunks,
        truncated: first.truncated || second.truncated,
        lines,
        ..first
    }
}

/// The first lines of a block that fit the budget alone; `None` if not even
/// a few lines fit.
fn cut_to_fit(b: &Block, opts: &ContextOptions, many: bool) -> Option<Block> {
    let mut cut = b.clone();
    cut.truncated = true;
    if b.synthetic {
        // No line numbers to keep honest: cut the text by an estimate.
        let mut lines: Vec<&str> = b.raw.lines().collect();
        while !lines.is_empty() {
            cut.raw = lines.join("\n");
            if total_tokens(std::slice::from_ref(&cut), opts, many) <= opts.budget_tokens {
                return Some(cut);
            }
            let keep = lines.len() * 3 / 4;
            lines.truncate(keep);
        }
        return None;
    }
    let all: Vec<(u32, String)> = b.lines.iter().map(|(n, l)| (*n, l.clone())).collect();
    let (mut lo, mut hi) = (0usize, all.len());
    // Binary search for the most lines that fit.
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        cut.lines = all[..mid].iter().cloned().collect();
        cut.end_line = all[mid - 1].0;
        if total_tokens(std::slice::from_ref(&cut), opts, many) <= opts.budget_tokens {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return None;
    }
    cut.lines = all[..lo].iter().cloned().collect();
    cut.end_line = all[lo - 1].0;
    Some(cut)
}

/// Estimated tokens of a text for BPE tokenizers (cl100k / o200k, Llama,
/// Qwen): better than `chars / 4` on code, where punctuation and short
/// identifiers make tokens shorter, and on indentation, where runs of spaces
/// collapse into one token.
///
/// Each run of ASCII letters and digits costs one token per 6 characters
/// (common words are one token), each ASCII punctuation character 0.7 (pairs
/// like `->`, `);` often merge), each non-ASCII character 1, each whitespace
/// run containing a line break or more than one space 1 (a single space
/// rides on the next word). Measured against cl100k on a few samples it
/// overestimates by 0–25%, which is the safe side for a budget.
pub fn estimate_tokens(text: &str) -> usize {
    let mut tokens = 0.0f64;
    let mut word = 0usize;
    let mut space = 0usize;
    let mut newline = false;
    let flush_word = |word: &mut usize, tokens: &mut f64| {
        if *word > 0 {
            *tokens += word.div_ceil(6) as f64;
            *word = 0;
        }
    };
    let flush_space = |space: &mut usize, newline: &mut bool, tokens: &mut f64| {
        if *newline || *space > 1 {
            *tokens += 1.0;
        }
        *space = 0;
        *newline = false;
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            flush_space(&mut space, &mut newline, &mut tokens);
            word += 1;
        } else if c.is_whitespace() {
            flush_word(&mut word, &mut tokens);
            space += 1;
            newline |= c == '\n';
        } else {
            flush_word(&mut word, &mut tokens);
            flush_space(&mut space, &mut newline, &mut tokens);
            tokens += if c.is_ascii() { 0.7 } else { 1.0 };
        }
    }
    flush_word(&mut word, &mut tokens);
    flush_space(&mut space, &mut newline, &mut tokens);
    tokens.ceil() as usize
}

/// The system prompt of a cited answer.
pub const ANSWER_SYSTEM_PROMPT: &str = "\
You answer questions about a codebase using ONLY the source blocks in the user's message.

Rules:
1. Use only what the blocks show. Do not rely on outside knowledge of this project, and never invent files, functions, line numbers or behaviour.
2. After each claim, cite the lines that support it, written exactly as [path:start-end] (one line: [path:start]), copying the path from a block header and keeping the range inside that block's range. Several sources: [src/a.py:3-9] [src/b.py:40-52].
3. If the blocks do not contain the answer, say \"I don't know\" and, briefly, what the blocks do show. A partial answer with citations is better than a guess.
4. Be concise: short sentences or a bullet list, one claim per sentence or bullet. Put code in fenced blocks right after the sentence that introduces it.
5. Block lines are prefixed with their line numbers (`12 | `); the numbers are not part of the code.";

/// Messages asking for a cited answer to `question` from `context`.
pub fn answer_messages(question: &str, context: &Context) -> Vec<Message> {
    let blocks = if context.is_empty() {
        "(no source blocks were found for this question)\n".to_string()
    } else {
        context.render()
    };
    vec![
        Message::system(ANSWER_SYSTEM_PROMPT),
        Message::user(format!(
            "Source blocks:\n\n{blocks}\nQuestion: {}\n\nAnswer using only the blocks above, citing [path:start-end] after each claim.",
            question.trim()
        )),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(path: &str, start: u32, end: u32, sym: &str) -> ContextChunk {
        let text: String = (start..=end)
            .map(|n| format!("line {n} of {path}\n"))
            .collect();
        ContextChunk {
            repo: "r".into(),
            path: path.into(),
            start_line: start,
            end_line: end,
            symbol: (!sym.is_empty()).then(|| sym.to_string()),
            language: Language::from_path(path),
            authors: vec![("Ana".into(), 1.0)],
            text,
        }
    }

    #[test]
    fn overlapping_and_adjacent_chunks_merge_into_one_block() {
        let chunks = [
            chunk("a.py", 10, 20, "A.run"),
            chunk("b.py", 1, 5, "helper"),
            chunk("a.py", 15, 30, "A.stop"),
            chunk("a.py", 31, 35, "A.close"),
            chunk("a.py", 50, 60, "A.far"),
            chunk("./b.py", 100, 101, ""),
        ];
        let ctx = Context::build(&chunks, &ContextOptions::default());
        let locs: Vec<String> = ctx.blocks.iter().map(Block::location).collect();
        assert_eq!(
            locs,
            ["a.py:10-35", "b.py:1-5", "a.py:50-60", "./b.py:100-101"]
        );
        assert_eq!(ctx.blocks[0].symbols, ["A.run", "A.stop", "A.close"]);
        assert_eq!(ctx.blocks[0].chunks, [0, 2, 3]);
        let text = ctx.blocks[0].text();
        assert_eq!(text.lines().count(), 26, "each line once");
        assert!(text.starts_with("line 10 of a.py\n"));
        assert!(text.ends_with("line 35 of a.py\n"));
        let r = ctx.render();
        assert!(
            r.contains("[1] a.py:10-35 · symbol: A.run, A.stop, A.close · authors: Ana 100%"),
            "{r}"
        );
        assert!(r.contains("\n35 | line 35 of a.py\n"), "{r}");
        assert!(ctx.omitted.is_empty());
    }

    #[test]
    fn a_chunk_bridging_two_blocks_coalesces_them() {
        let chunks = [
            chunk("a.py", 1, 10, "x"),
            chunk("a.py", 30, 40, "y"),
            chunk("a.py", 8, 32, "z"),
        ];
        let ctx = Context::build(&chunks, &ContextOptions::default());
        assert_eq!(ctx.blocks.len(), 1);
        assert_eq!(ctx.blocks[0].location(), "a.py:1-40");
        assert_eq!(ctx.blocks[0].symbols, ["x", "y", "z"]);
    }

    #[test]
    fn the_budget_keeps_best_chunks_and_skips_what_does_not_fit() {
        let chunks = [
            chunk("a.py", 1, 10, ""),
            chunk("big.py", 1, 400, ""),
            chunk("c.py", 1, 10, ""),
        ];
        let opts = ContextOptions {
            budget_tokens: 300,
            ..Default::default()
        };
        let ctx = Context::build(&chunks, &opts);
        let paths: Vec<&str> = ctx.blocks.iter().map(|b| b.path.as_str()).collect();
        assert_eq!(paths, ["a.py", "c.py"]);
        assert_eq!(ctx.omitted, [1]);
        assert!(ctx.tokens <= 300, "{}", ctx.tokens);
        assert!(estimate_tokens(&ctx.render()) <= 300);
    }

    #[test]
    fn a_too_big_best_chunk_is_cut_and_its_range_shrinks() {
        let opts = ContextOptions {
            budget_tokens: 120,
            ..Default::default()
        };
        let ctx = Context::build(&[chunk("big.py", 100, 500, "")], &opts);
        let b = &ctx.blocks[0];
        assert!(b.truncated);
        assert_eq!(b.start_line, 100);
        assert!(b.end_line > 100 && b.end_line < 500, "{}", b.end_line);
        assert_eq!(b.text().lines().count() as u32, b.end_line - 99);
        assert!(ctx.tokens <= 120);
    }

    #[test]
    fn synthetic_chunks_stay_apart() {
        let mut module = chunk("m.py", 1, 200, "m");
        module.text = "import os\nCONST = 1\n".into();
        let ctx = Context::build(
            &[module, chunk("m.py", 5, 9, "f")],
            &ContextOptions::default(),
        );
        assert_eq!(ctx.blocks.len(), 2);
        assert!(ctx.blocks[0].synthetic);
        assert!(ctx.render().contains("import os\nCONST = 1\n"));
    }

    #[test]
    fn token_estimate_is_near_real_tokenizers() {
        // (text, cl100k token count)
        let samples = [
            ("fn parse_config(path: &Path) -> Result<Config> {", 14),
            (
                "    def __init__(self, name):\n        self.name = name\n",
                15,
            ),
            ("The quick brown fox jumps over the lazy dog.", 10),
        ];
        for (text, real) in samples {
            let e = estimate_tokens(text);
            assert!(
                e >= real && e <= real * 5 / 4 + 1,
                "{text:?}: {e} vs {real}"
            );
        }
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn messages_carry_rules_context_and_question() {
        let ctx = Context::build(&[chunk("a.py", 1, 3, "f")], &ContextOptions::default());
        let m = answer_messages("what does f do?", &ctx);
        assert_eq!(m.len(), 2);
        assert!(m[0].content.contains("[path:start-end]"));
        assert!(m[0].content.contains("I don't know"));
        assert!(m[1].content.contains("[1] a.py:1-3"));
        assert!(m[1].content.contains("Question: what does f do?"));
        assert_eq!(ctx.sources()[0].path, "a.py");
    }
}
