//! The code a model is given for a question (`ken ask`'s code steps), and
//! how `ken eval` measures it (`context_recall`): retrieval's best chunks,
//! no more than a share of them from one file unless the question names
//! that file, read from the store and packed into blocks within the token
//! budget.

use std::collections::HashMap;

use ken_core::Hit;
use ken_llm::{Context, ContextChunk, ContextOptions};
use ken_store::ChunkStore;

use crate::Result;

/// Chunks a code step keeps (`ken ask -n`, the HTTP and MCP default too).
pub const ASK_LIMIT: usize = 8;

/// Candidates retrieved per kept chunk, so that a capped file leaves
/// others to take its place.
pub(crate) const POOL_FACTOR: usize = 3;

/// The most chunks of one file among `limit`, for a share of them.
pub(crate) fn per_file(limit: usize, share: f64) -> usize {
    if share >= 1.0 {
        return limit.max(1);
    }
    ((limit as f64 * share).ceil() as usize).max(1)
}

/// The first `limit` of `hits` (ranked best first), at most `per_file` of
/// one file unless `question` names it; when the others run out, the
/// capped ones fill the rest in their order.
pub(crate) fn diversify(hits: Vec<Hit>, limit: usize, per_file: usize, question: &str) -> Vec<Hit> {
    let mut taken = Vec::with_capacity(limit);
    let mut held: HashMap<(String, String), usize> = HashMap::new();
    let mut named: HashMap<String, bool> = HashMap::new();
    let mut later = Vec::new();
    for h in hits {
        if taken.len() == limit {
            break;
        }
        let n = held.entry((h.repo.clone(), h.path.clone())).or_default();
        let is_named = *named
            .entry(h.path.clone())
            .or_insert_with(|| names_file(question, &h.path));
        if *n < per_file || is_named {
            *n += 1;
            taken.push(h);
        } else {
            later.push(h);
        }
    }
    let room = limit - taken.len();
    taken.extend(later.into_iter().take(room));
    taken
}

/// The question names the file: its path, or its file name with the
/// extension (`files.rs`), as written; or every word of a name of two
/// words or more (`zsh_completions.go`, `ZshCompletions.ts`: "zsh
/// completion"), plurals aside. A one-word stem (`files`) is too often an
/// ordinary word to count.
pub(crate) fn names_file(question: &str, path: &str) -> bool {
    let q = question.to_lowercase();
    let lower = path.to_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let word_at = |i: usize, len: usize| {
        let before = q[..i].chars().next_back();
        let after = q[i + len..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        edge(before) && edge(after)
    };
    if name.contains('.')
        && [lower.as_str(), name]
            .iter()
            .any(|n| q.match_indices(*n).any(|(i, m)| word_at(i, m.len())))
    {
        return true;
    }
    let original = path.rsplit('/').next().unwrap_or(path);
    let stem = original.split('.').next().unwrap_or(original);
    let stem_words = words(stem);
    if stem_words.len() < 2 {
        return false;
    }
    let asked: std::collections::HashSet<String> = words(question).into_iter().collect();
    stem_words.iter().all(|w| asked.contains(w))
}

/// Lowercase words of at least two letters, split at punctuation and at
/// camelCase humps, a plural's `s` dropped.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    let mut push = |cur: &mut String| {
        if cur.len() >= 2 {
            let w = match cur.strip_suffix('s') {
                Some(base) if base.len() >= 3 && !base.ends_with(['s', 'u']) => base.to_string(),
                _ => cur.clone(),
            };
            out.push(w);
        }
        cur.clear();
    };
    for c in text.chars() {
        if !c.is_alphanumeric() {
            push(&mut cur);
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            push(&mut cur);
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    push(&mut cur);
    out
}

/// A hit's lines read from its store, as the model sees them.
pub(crate) fn chunk_of(store: &dyn ChunkStore, h: &Hit) -> Result<Option<ContextChunk>> {
    let Some(text) = store.file_text(&h.path)? else {
        return Ok(None);
    };
    let lines: Vec<&str> = text
        .lines()
        .skip(h.start_line.saturating_sub(1) as usize)
        .take((h.end_line + 1 - h.start_line) as usize)
        .collect();
    if lines.is_empty() {
        return Ok(None);
    }
    Ok(Some(ContextChunk {
        repo: h.repo.clone(),
        path: h.path.clone(),
        start_line: h.start_line,
        end_line: h.start_line + lines.len() as u32 - 1,
        symbol: h.symbol.clone(),
        language: h.language,
        authors: h
            .authors
            .iter()
            .map(|a| (a.name.clone(), a.share))
            .collect(),
        text: lines.join("\n"),
    }))
}

/// The context of one repository's ranked hits for a question, as a code
/// step builds it: diversified, read, packed within `budget_tokens`.
pub(crate) fn build(
    store: &dyn ChunkStore,
    hits: Vec<Hit>,
    question: &str,
    share: f64,
    budget_tokens: usize,
) -> Result<Context> {
    let hits = diversify(hits, ASK_LIMIT, per_file(ASK_LIMIT, share), question);
    let mut chunks = Vec::new();
    for h in &hits {
        if let Some(c) = chunk_of(store, h)? {
            chunks.push(c);
        }
    }
    Ok(Context::build(
        &chunks,
        &ContextOptions {
            budget_tokens,
            ..ContextOptions::default()
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, line: u32) -> Hit {
        Hit {
            chunk_id: u64::from(line),
            repo: "r".into(),
            path: path.into(),
            start_line: line,
            end_line: line + 5,
            language: ken_core::Language::Rust,
            kind: ken_core::ChunkKind::File,
            symbol: None,
            signature: None,
            doc: None,
            score: 0.0,
            pinned: false,
            signals: Default::default(),
            commit: None,
            authors: Vec::new(),
            snippet: String::new(),
            cell: None,
        }
    }

    fn paths(hits: &[Hit]) -> Vec<String> {
        hits.iter()
            .map(|h| format!("{}:{}", h.path, h.start_line))
            .collect()
    }

    #[test]
    fn one_file_takes_no_more_than_its_share_while_others_wait() {
        let hits = vec![
            hit("a.rs", 1),
            hit("a.rs", 10),
            hit("a.rs", 20),
            hit("b.rs", 1),
            hit("a.rs", 30),
            hit("c.rs", 1),
        ];
        let got = diversify(hits, 4, 2, "how are large files skipped?");
        assert_eq!(paths(&got), ["a.rs:1", "a.rs:10", "b.rs:1", "c.rs:1"]);
    }

    #[test]
    fn capped_chunks_fill_what_the_others_leave() {
        let hits = vec![
            hit("a.rs", 1),
            hit("a.rs", 10),
            hit("a.rs", 20),
            hit("b.rs", 1),
        ];
        let got = diversify(hits, 4, 1, "q");
        assert_eq!(paths(&got), ["a.rs:1", "b.rs:1", "a.rs:10", "a.rs:20"]);
    }

    #[test]
    fn a_file_the_question_names_is_not_capped() {
        let hits = vec![
            hit("src/files.rs", 1),
            hit("src/files.rs", 10),
            hit("b.rs", 1),
        ];
        let got = diversify(hits.clone(), 2, 1, "what does files.rs do?");
        assert_eq!(paths(&got), ["src/files.rs:1", "src/files.rs:10"]);
        // a stem that is an ordinary word does not name it
        let got = diversify(hits, 2, 1, "how are large files skipped?");
        assert_eq!(paths(&got), ["src/files.rs:1", "b.rs:1"]);
    }

    #[test]
    fn names_are_whole_words() {
        assert!(names_file("bug in src/app.py when", "src/app.py"));
        assert!(names_file("see app.py", "src/app.py"));
        assert!(!names_file("see myapp.py", "src/app.py"));
        assert!(!names_file("the app crashes", "src/app.py"));
        assert!(!names_file("Makefile rules", "Makefile"));
    }

    #[test]
    fn a_name_of_several_words_is_named_by_its_words() {
        assert!(names_file(
            "Fix zsh completion on first use",
            "zsh_completions.go"
        ));
        assert!(names_file("zsh completions break", "src/ZshCompletions.ts"));
        assert!(!names_file("Fix zsh on first use", "zsh_completions.go"));
        // one word is not enough: "files" is an ordinary word
        assert!(!names_file(
            "how are large files skipped?",
            "history/files.rs"
        ));
        assert_eq!(words("parseHTTPConfig_v2"), ["parse", "httpconfig", "v2"]);
        assert_eq!(
            words("classes process status"),
            ["classe", "process", "status"]
        );
    }

    #[test]
    fn the_share_rounds_up_and_never_below_one() {
        assert_eq!(per_file(8, 0.25), 2);
        assert_eq!(per_file(8, 0.3), 3);
        assert_eq!(per_file(8, 0.0), 1);
        assert_eq!(per_file(8, 1.0), 8);
    }
}
