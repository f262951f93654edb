//! One cited answer, end to end: ask, check the citations, and when some
//! point outside the context, ask once more and keep the better answer.

use serde::Serialize;

use crate::cite::{CheckedAnswer, Claim, pick_better, retry_message, validate};
use crate::context::{Context, answer_messages};
use crate::{ChatModel, LlmError, Message, Usage};

/// A checked answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    pub text: String,
    /// The model that answered (as the server named it, else as configured).
    pub model: String,
    pub claims: Vec<Claim>,
    /// A second attempt was asked for because of invalid citations.
    pub retried: bool,
    /// The kept text is the second attempt's (a streamed first attempt the
    /// user already saw should be replaced by `text`).
    pub used_retry: bool,
    /// Why the second attempt failed, if it did (the first answer is kept).
    pub retry_error: Option<String>,
    /// Tokens of every request made, summed, when the server reported them.
    pub usage: Option<Usage>,
}

/// Ask `model` to answer `question` from `context` only. With `on_delta` the
/// first attempt is streamed through it; the retry (made only when the first
/// answer cites outside the context) is not streamed.
pub fn ask(
    model: &dyn ChatModel,
    question: &str,
    context: &Context,
    on_delta: Option<&mut dyn FnMut(&str)>,
) -> Result<Answer, LlmError> {
    let sources = context.sources();
    let messages = answer_messages(question, context);
    let first = match on_delta {
        Some(f) => model.stream(&messages, f)?,
        None => model.complete(&messages)?,
    };
    let checked = validate(&first.text, &sources);
    let mut answer = Answer {
        text: first.text.clone(),
        model: first
            .model
            .clone()
            .unwrap_or_else(|| model.model_name().to_string()),
        claims: checked.claims.clone(),
        retried: false,
        used_retry: false,
        retry_error: None,
        usage: first.usage,
    };
    let Some(retry) = retry_message(&checked, &sources) else {
        return Ok(answer);
    };
    answer.retried = true;
    let mut again: Vec<Message> = messages;
    again.push(Message::assistant(first.text.clone()));
    again.push(Message::user(retry));
    match model.complete(&again) {
        Ok(second) => {
            answer.usage = add_usage(answer.usage, second.usage);
            let second_checked = validate(&second.text, &sources);
            let kept: CheckedAnswer = pick_better(checked, second_checked);
            if kept.text != first.text {
                answer.used_retry = true;
                if let Some(m) = second.model {
                    answer.model = m;
                }
            }
            answer.text = kept.text;
            answer.claims = kept.claims;
        }
        Err(e) => answer.retry_error = Some(e.to_string()),
    }
    Ok(answer)
}

fn add_usage(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Usage {
            prompt_tokens: a.prompt_tokens + b.prompt_tokens,
            completion_tokens: a.completion_tokens + b.completion_tokens,
            total_tokens: a.total_tokens + b.total_tokens,
        }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{ContextChunk, ContextOptions};
    use crate::{ClaimStatus, ScriptedChat};
    use ken_core::Language;

    fn ctx() -> Context {
        let text: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        Context::build(
            &[ContextChunk {
                repo: "r".into(),
                path: "src/a.py".into(),
                start_line: 1,
                end_line: 20,
                symbol: Some("f".into()),
                language: Language::Python,
                authors: vec![],
                text,
            }],
            &ContextOptions::default(),
        )
    }

    #[test]
    fn invalid_citations_trigger_one_retry_and_the_better_answer_is_kept() {
        let model = ScriptedChat::new(
            "m",
            vec![
                Ok("f parses [src/a.py:2-4]. It caches [src/a.py:40-50].".into()),
                Ok("f parses [src/a.py:2-4]. It caches [src/a.py:10-12].".into()),
            ],
        );
        let mut streamed = String::new();
        let a = ask(
            &model,
            "what does f do?",
            &ctx(),
            Some(&mut |d| streamed.push_str(d)),
        )
        .unwrap();
        assert!(streamed.contains("[src/a.py:40-50]"));
        assert!(a.retried && a.used_retry);
        assert!(a.claims.iter().all(|c| c.status == ClaimStatus::Verified));
        let reqs = model.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[1].len(), 4);
        assert!(reqs[1][3].content.contains("[src/a.py:40-50]"));
    }

    #[test]
    fn a_worse_retry_is_not_kept_and_a_failed_one_is_not_fatal() {
        let first = "f parses [src/a.py:2-4]. It caches [src/a.py:40-50].";
        let model = ScriptedChat::new(
            "m",
            vec![
                Ok(first.into()),
                Ok("It caches [b.py:1]. And [c.py:2].".into()),
            ],
        );
        let a = ask(&model, "q", &ctx(), None).unwrap();
        assert!(a.retried && !a.used_retry);
        assert_eq!(a.text, first);
        let model = ScriptedChat::new("m", vec![Ok(first.into()), Err("boom".into())]);
        let a = ask(&model, "q", &ctx(), None).unwrap();
        assert_eq!(a.text, first);
        assert!(a.retry_error.unwrap().contains("boom"));
    }

    #[test]
    fn valid_answers_are_not_retried() {
        let model = ScriptedChat::new(
            "m",
            vec![Ok("f parses [src/a.py:2-4]. I don't know more.".into())],
        );
        let a = ask(&model, "q", &ctx(), None).unwrap();
        assert!(!a.retried);
        assert_eq!(model.requests().len(), 1);
        assert_eq!(a.claims[1].status, ClaimStatus::Unverified);
    }
}
