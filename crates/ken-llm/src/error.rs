//! What can go wrong talking to a chat model, each case saying what to do.
//!
//! No error ever holds the API key: server messages are passed through
//! [`redact`] before they are stored, and request headers are never kept.

use std::time::Duration;

/// Which wait ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP/TLS connection (`connect_timeout`).
    Connect,
    /// Waiting for the response (headers, or the whole body of a non-streamed answer).
    Response,
    /// Waiting for the next piece of a streamed answer.
    Stream,
}

/// Why a 404 is most likely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotFoundCause {
    /// The server answered in the OpenAI error format and named the model.
    Model,
    /// The server does not serve chat completions at this URL.
    Url,
    /// Cannot tell.
    Unknown,
}

/// Why a chat request failed; every message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The configuration cannot work (no base URL, not a URL...).
    #[error("{0}")]
    Config(String),

    /// 401 / 403.
    #[error("{}", auth_message(*.status, .base_url, .model, .detail, *.key_sent))]
    Auth {
        status: u16,
        base_url: String,
        model: String,
        detail: String,
        key_sent: bool,
    },

    /// 404: the base URL or the model name is wrong.
    #[error("{}", not_found_message(.url, .model, .detail, *.cause))]
    NotFound {
        url: String,
        model: String,
        detail: String,
        cause: NotFoundCause,
    },

    /// Another 4xx: the request itself was refused (context too long, bad parameter).
    #[error("the LLM server refused the request (HTTP {status}){}{}", colon(.detail), bad_request_hint(.detail))]
    BadRequest { status: u16, detail: String },

    /// 429, still after every retry.
    #[error("the LLM server is rate-limiting us (HTTP 429) after {attempts} attempt(s){}{}: wait and ask again, lower the request rate, or raise the provider's limits",
        .retry_after.filter(|d| !d.is_zero()).map(|d| format!(", it asks to wait {}", human(d))).unwrap_or_default(), colon(.detail))]
    RateLimited {
        attempts: u32,
        retry_after: Option<Duration>,
        detail: String,
    },

    /// 5xx, still after every retry.
    #[error("the LLM server failed (HTTP {status}) after {attempts} attempt(s){}: the server is overloaded or broken; try again later or check its logs", colon(.detail))]
    Server {
        status: u16,
        attempts: u32,
        detail: String,
    },

    #[error("{}", timeout_message(*.phase, *.after, .url))]
    Timeout {
        phase: TimeoutPhase,
        after: Duration,
        url: String,
    },

    #[error(
        "could not connect to the LLM server at {base_url}: connection refused. Is the server running at {base_url}? (KEN_LLM_BASE_URL)"
    )]
    ConnectionRefused { base_url: String },

    /// DNS, TLS, unreachable network...
    #[error(
        "could not connect to the LLM server at {base_url}: {detail}. Check KEN_LLM_BASE_URL and the network"
    )]
    Connect { base_url: String, detail: String },

    /// A 2xx response that is not a chat completion.
    #[error(
        "malformed response from the LLM server: {what}; it began with {head}. Is KEN_LLM_BASE_URL an OpenAI-compatible API (…/v1)?"
    )]
    MalformedResponse { what: String, head: String },

    /// A streamed answer that broke off or could not be read.
    #[error("malformed answer stream from the LLM server: {what}; near {head}")]
    MalformedStream { what: String, head: String },

    /// The server answered, with nothing in it.
    #[error("the LLM returned an empty answer{}", empty_hint(.finish_reason))]
    EmptyAnswer { finish_reason: Option<String> },

    /// Any other transport failure.
    #[error("talking to the LLM server failed: {detail}")]
    Transport { detail: String },
}

impl LlmError {
    /// Is it the user's setup that is wrong (configuration, key, URL, model,
    /// request) rather than the server or the network failing?
    pub fn is_configuration(&self) -> bool {
        matches!(
            self,
            LlmError::Config(_)
                | LlmError::Auth { .. }
                | LlmError::NotFound { .. }
                | LlmError::BadRequest { .. }
                | LlmError::ConnectionRefused { .. }
        )
    }
}

fn colon(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

fn human(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

fn auth_message(status: u16, base_url: &str, model: &str, detail: &str, key_sent: bool) -> String {
    let what = if status == 403 {
        "denied access"
    } else {
        "rejected the request as unauthenticated"
    };
    let todo = match (key_sent, status) {
        (false, _) => "no API key was sent: set KEN_LLM_API_KEY".to_string(),
        (true, 403) => format!(
            "check KEN_LLM_API_KEY: the key was sent but may lack access to model `{model}`"
        ),
        (true, _) => "check KEN_LLM_API_KEY: the key was sent and rejected".to_string(),
    };
    format!(
        "the LLM server at {base_url} {what} (HTTP {status}){}; {todo}",
        colon(detail)
    )
}

fn not_found_message(url: &str, model: &str, detail: &str, cause: NotFoundCause) -> String {
    let todo = match cause {
        NotFoundCause::Model => format!(
            "the server does not know the model `{model}`: check KEN_LLM_MODEL (for Ollama, `ollama list`)"
        ),
        NotFoundCause::Url => format!(
            "nothing serves chat completions at {url}: check KEN_LLM_BASE_URL (it should end in the API root, e.g. http://localhost:11434/v1)"
        ),
        NotFoundCause::Unknown => format!(
            "either KEN_LLM_BASE_URL is wrong (requests go to {url}) or the model `{model}` does not exist there (KEN_LLM_MODEL)"
        ),
    };
    format!("the LLM server answered HTTP 404{}; {todo}", colon(detail))
}

fn bad_request_hint(detail: &str) -> &'static str {
    let d = detail.to_ascii_lowercase();
    if d.contains("context") && (d.contains("length") || d.contains("window") || d.contains("long"))
        || d.contains("too many tokens")
        || d.contains("maximum")
    {
        "; the prompt is too long for this model: lower the context budget or use a model with a larger window"
    } else {
        ""
    }
}

fn timeout_message(phase: TimeoutPhase, after: Duration, url: &str) -> String {
    match phase {
        TimeoutPhase::Connect => format!(
            "could not connect to the LLM server at {url} within the connect timeout ({}): is the host reachable?",
            human(after)
        ),
        TimeoutPhase::Response => format!(
            "the LLM server at {url} did not answer within the timeout ({}): the model may be loading or too slow; raise the timeout or use a smaller model",
            human(after)
        ),
        TimeoutPhase::Stream => format!(
            "the LLM server at {url} stopped sending the answer for longer than the timeout ({}): the stream stalled",
            human(after)
        ),
    }
}

fn empty_hint(finish_reason: &Option<String>) -> String {
    match finish_reason.as_deref() {
        Some("length") => " (finish_reason `length`): max_tokens is too small, or the prompt filled the model's window".into(),
        Some("content_filter") => " (finish_reason `content_filter`): the provider filtered it".into(),
        Some(r) => format!(" (finish_reason `{r}`): try again, or another model"),
        None => ": try again, or another model".into(),
    }
}

/// Remove the API key from a text that came from outside (a server's error
/// message may echo the key, whole or masked like `sk-abc1****wxyz`): the key
/// itself and any word sharing its first 6 or last 4 characters become
/// `<redacted>`.
pub fn redact(text: &str, key: Option<&str>) -> String {
    let Some(key) = key.map(str::trim).filter(|k| !k.is_empty()) else {
        return text.to_string();
    };
    let text = text.replace(key, "<redacted>");
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 12 {
        return text;
    }
    let prefix: String = chars[..6].iter().collect();
    let suffix: String = chars[chars.len() - 4..].iter().collect();
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.contains(&prefix) || word.contains(&suffix) {
            out.push_str("<redacted>");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() || matches!(c, '"' | '\'' | ',' | '`') {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The first bytes of a body, quoted so control characters show, for messages.
pub(crate) fn head(bytes: &[u8], key: Option<&str>) -> String {
    const MAX: usize = 160;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX)]);
    let more = if bytes.len() > MAX { "…" } else { "" };
    if bytes.is_empty() {
        return "nothing (an empty body)".to_string();
    }
    format!("{:?}{more}", redact(&text, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_catches_whole_and_masked_keys() {
        let key = "sk-abcdef1234567890wxyz";
        let msg = format!("Incorrect API key provided: sk-abcd************wxyz. Also {key}.");
        let r = redact(&msg, Some(key));
        assert!(!r.contains("wxyz"), "{r}");
        assert!(!r.contains(key), "{r}");
        assert!(
            r.starts_with("Incorrect API key provided: <redacted>"),
            "{r}"
        );
        assert_eq!(redact("nothing here", Some(key)), "nothing here");
        assert_eq!(redact("abc", None), "abc");
    }

    #[test]
    fn messages_say_what_to_do() {
        let e = LlmError::Auth {
            status: 401,
            base_url: "http://h/v1".into(),
            model: "m".into(),
            detail: String::new(),
            key_sent: true,
        };
        assert!(e.to_string().contains("check KEN_LLM_API_KEY"), "{e}");
        let e = LlmError::Timeout {
            phase: TimeoutPhase::Response,
            after: Duration::from_millis(300),
            url: "http://h/v1".into(),
        };
        assert!(e.to_string().contains("(300 ms)"), "{e}");
        let e = LlmError::BadRequest {
            status: 400,
            detail: "This model's maximum context length is 8192 tokens".into(),
        };
        assert!(e.to_string().contains("lower the context budget"), "{e}");
        let e = LlmError::EmptyAnswer {
            finish_reason: Some("length".into()),
        };
        assert!(e.to_string().contains("max_tokens"), "{e}");
    }
}
