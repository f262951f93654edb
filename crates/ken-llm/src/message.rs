//! Chat messages and what a completion returns.

use serde::{Deserialize, Serialize};

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One chat message, as sent to a chat-completions endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    /// Instructions.
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    /// The user's turn.
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    /// A previous answer (for a follow-up such as the citation retry).
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// Token counts as the server reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

/// A finished answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The answer, with a leading `<think>…</think>` block (reasoning models
    /// served through Ollama / llama.cpp) removed. Never empty or blank.
    pub text: String,
    /// The model name the server reported (may differ from the configured one).
    pub model: Option<String>,
    /// `stop`, `length`, ... when the server said.
    pub finish_reason: Option<String>,
    /// Token counts, when the server sent them.
    pub usage: Option<Usage>,
    /// HTTP attempts made (1 when the first one succeeded).
    pub attempts: u32,
}

/// Remove a leading `<think>…</think>` block (and the whitespace after it).
/// An unterminated block is left alone: better to show it than to show nothing.
pub fn strip_reasoning(text: &str) -> &str {
    let t = text.trim_start();
    if let Some(rest) = t.strip_prefix("<think>")
        && let Some(end) = rest.find("</think>")
    {
        return rest[end + "</think>".len()..].trim_start();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_is_stripped() {
        assert_eq!(strip_reasoning("<think>hmm</think>\n\nAnswer"), "Answer");
        assert_eq!(strip_reasoning("Answer"), "Answer");
        assert_eq!(strip_reasoning("<think>never ends"), "<think>never ends");
    }

    #[test]
    fn messages_serialise_as_the_api_expects() {
        let m = Message::user("hi");
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"user","content":"hi"}"#
        );
    }
}
