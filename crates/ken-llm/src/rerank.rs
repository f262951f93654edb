//! Listwise reranking with a chat model: the retrieved passages are shown
//! numbered, the model answers with their numbers best first
//! (`[3] > [1] > [2]`), and a tolerant parser turns that into an order.
//! Whatever the model leaves out keeps its retrieval order, after the ones
//! it ranked; an answer with no usable number changes nothing.

use crate::Message;
use crate::message::strip_reasoning;

/// Characters of one passage shown to the model at most.
const MAX_PASSAGE_CHARS: usize = 1200;

/// One passage to rank: where it is and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// `path:start-end`, or any short label.
    pub label: String,
    pub text: String,
}

/// Messages asking the model to order `passages` by how well they answer
/// `question`.
pub fn rerank_messages(question: &str, passages: &[Passage]) -> Vec<Message> {
    let system = "You rank code passages by how useful each is for answering a developer's \
                  question about a codebase: the code that implements or directly decides \
                  the behaviour asked about first, then code that calls or configures it, \
                  then tests and documentation.\n\
                  Answer with the numbers of all passages, most useful first, in the form \
                  [2] > [1] > [3]. Output only the ranking.";
    let mut user = format!("Question: {}\n", question.trim());
    for (i, p) in passages.iter().enumerate() {
        user.push_str(&format!("\n[{}] {}\n```\n", i + 1, p.label));
        user.push_str(&p.text[..p.text.floor_char_boundary(MAX_PASSAGE_CHARS)]);
        if !p.text.ends_with('\n') {
            user.push('\n');
        }
        user.push_str("```\n");
    }
    user.push_str(&format!(
        "\nRank all {} passages for the question. Ranking:",
        passages.len()
    ));
    vec![Message::system(system), Message::user(user)]
}

/// The order in a ranking answer, as indices into the `n` passages (every
/// one exactly once): the numbers the model gave, in its order (bracketed
/// ones if there are any, else bare numbers), out-of-range and repeated
/// ones skipped, then the passages it left out in their first order.
/// `None` when the answer names no passage.
pub fn parse_ranking(answer: &str, n: usize) -> Option<Vec<usize>> {
    let text = strip_reasoning(answer);
    let bracketed = numbers(text, true);
    let found = if bracketed.is_empty() {
        numbers(text, false)
    } else {
        bracketed
    };
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for k in found {
        if (1..=n).contains(&k) && !seen[k - 1] {
            seen[k - 1] = true;
            order.push(k - 1);
        }
    }
    if order.is_empty() {
        return None;
    }
    order.extend((0..n).filter(|&i| !seen[i]));
    Some(order)
}

/// The decimal numbers in `text`; `bracketed`: only those written `[k]`.
fn numbers(text: &str, bracketed: bool) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let open = start > 0 && b[start - 1] == b'[';
        let close = i < b.len() && b[i] == b']';
        if (!bracketed || (open && close))
            && let Ok(k) = text[start..i].parse::<usize>()
        {
            out.push(k);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_answer_gives_the_order() {
        assert_eq!(parse_ranking("[3] > [1] > [2]", 3), Some(vec![2, 0, 1]));
    }

    #[test]
    fn left_out_passages_follow_in_their_first_order() {
        assert_eq!(parse_ranking("[4] > [2]", 5), Some(vec![3, 1, 0, 2, 4]));
    }

    #[test]
    fn repeats_and_numbers_out_of_range_are_skipped() {
        assert_eq!(
            parse_ranking("[2] > [9] > [2] > [0] > [1]", 3),
            Some(vec![1, 0, 2])
        );
    }

    #[test]
    fn reasoning_and_chatter_are_ignored() {
        let a = "<think>passage [1] looks like a test, [3] is the code</think>\n\
                 Sure! Here is the ranking: [3] > [2] > [1]";
        assert_eq!(parse_ranking(a, 3), Some(vec![2, 1, 0]));
    }

    #[test]
    fn bare_numbers_count_when_nothing_is_bracketed() {
        assert_eq!(parse_ranking("2, 3, 1", 3), Some(vec![1, 2, 0]));
        // but numbers in prose do not, once brackets are used
        assert_eq!(
            parse_ranking("Of the 3 passages: [2] > [1]", 3),
            Some(vec![1, 0, 2])
        );
    }

    #[test]
    fn no_passage_named_is_no_ranking() {
        assert_eq!(parse_ranking("I cannot rank these.", 3), None);
        assert_eq!(parse_ranking("[7] > [8]", 3), None);
        assert_eq!(parse_ranking("", 0), None);
    }

    #[test]
    fn the_prompt_numbers_every_passage_and_cuts_long_ones() {
        let long = "é".repeat(2000);
        let m = rerank_messages(
            "  how are tokens refreshed? ",
            &[
                Passage {
                    label: "src/a.py:1-5".into(),
                    text: "def a(): pass".into(),
                },
                Passage {
                    label: "src/b.py:9-40".into(),
                    text: long,
                },
            ],
        );
        assert_eq!(m.len(), 2);
        let user = &m[1].content;
        assert!(user.starts_with("Question: how are tokens refreshed?\n"));
        assert!(user.contains("[1] src/a.py:1-5\n```\ndef a(): pass\n```"));
        assert!(user.contains("[2] src/b.py:9-40\n```\n"));
        assert!(user.len() < 1600, "{}", user.len());
        assert!(user.ends_with("Rank all 2 passages for the question. Ranking:"));
    }
}
