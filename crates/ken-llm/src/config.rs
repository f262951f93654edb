//! Where the chat model lives and how patiently to talk to it.

use std::fmt;
use std::time::Duration;

use reqwest::Url;

use crate::LlmError;

/// Settings of a [`ChatClient`](crate::ChatClient). Resolved once by the caller
/// (config file < environment < flags); nothing here reads the environment.
///
/// `Debug` never shows the API key.
#[derive(Clone, PartialEq)]
pub struct ChatConfig {
    /// The OpenAI-compatible API root, e.g. `http://localhost:11434/v1`,
    /// `https://api.openai.com/v1`, `https://api.groq.com/openai/v1`.
    /// See [`endpoint_url`] for how it is completed.
    pub base_url: String,
    /// Model name as the server knows it (`gpt-4o-mini`, `qwen2.5-coder:7b`).
    pub model: String,
    /// Sent as `Authorization: Bearer <key>`; local servers need none.
    pub api_key: Option<String>,
    /// How long to wait for the response headers, and then for the body
    /// (`complete`) or for each piece of a stream (`stream`): a stream that
    /// keeps producing is never cut, a stall longer than this is.
    pub timeout: Duration,
    /// How long to wait for the TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Extra attempts after a 429 or a 5xx (0: try once).
    pub max_retries: u32,
    /// Sampling temperature; `None` leaves it to the server (some reasoning
    /// models accept only their default).
    pub temperature: Option<f32>,
    /// Cap on the answer's length in tokens; `None` leaves it to the server.
    pub max_tokens: Option<u32>,
}

impl ChatConfig {
    /// Defaults: 120 s timeout, 10 s connect timeout, 2 retries, temperature 0,
    /// no token cap, no key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> ChatConfig {
        ChatConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_retries: 2,
            temperature: Some(0.0),
            max_tokens: None,
        }
    }

    /// Set the key; a blank key means none.
    pub fn with_api_key(mut self, key: impl Into<String>) -> ChatConfig {
        let key = key.into();
        self.api_key = if key.trim().is_empty() {
            None
        } else {
            Some(key.trim().to_string())
        };
        self
    }
}

impl fmt::Debug for ChatConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatConfig")
            .field("base_url", &display_url(&self.base_url))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_retries", &self.max_retries)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

/// The chat-completions URL for a base URL.
///
/// - surrounding whitespace and trailing slashes are ignored
///   (`http://h:8080/v1/` = `http://h:8080/v1`);
/// - a URL with no path gets `/v1` (`http://localhost:11434` →
///   `http://localhost:11434/v1`), since every server we target serves there;
/// - any other path is kept as given (`https://api.groq.com/openai/v1`,
///   `https://openrouter.ai/api/v1`): we never guess a version segment;
/// - a URL that already ends in `/chat/completions` is used as is.
///
/// Then `/chat/completions` is appended. Only `http` and `https` are accepted.
pub fn endpoint_url(base_url: &str) -> Result<Url, LlmError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    if trimmed.is_empty() {
        return Err(LlmError::Config(
            "no LLM base URL: set KEN_LLM_BASE_URL (e.g. http://localhost:11434/v1)".into(),
        ));
    }
    let mut url = Url::parse(trimmed).map_err(|e| {
        LlmError::Config(format!(
            "KEN_LLM_BASE_URL `{}` is not a URL ({e}); expected e.g. http://localhost:11434/v1",
            display_url(trimmed)
        ))
    })?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(LlmError::Config(format!(
            "KEN_LLM_BASE_URL `{}` must start with http:// or https://",
            display_url(trimmed)
        )));
    }
    if url.cannot_be_a_base() || url.host_str().is_none() {
        return Err(LlmError::Config(format!(
            "KEN_LLM_BASE_URL `{}` has no host",
            display_url(trimmed)
        )));
    }
    let path = url.path().trim_end_matches('/').to_string();
    let path = if path.ends_with("/chat/completions") {
        path
    } else if path.is_empty() {
        "/v1/chat/completions".to_string()
    } else {
        format!("{path}/chat/completions")
    };
    url.set_path(&path);
    Ok(url)
}

/// A URL fit for messages: user name and password removed.
pub(crate) fn display_url(url: &str) -> String {
    match Url::parse(url.trim()) {
        Ok(mut u) => {
            if !u.username().is_empty() || u.password().is_some() {
                let _ = u.set_username("");
                let _ = u.set_password(None);
            }
            u.as_str().trim_end_matches('/').to_string()
        }
        // Not a URL: keep what is before any `@` out of messages.
        Err(_) => match url.rsplit_once('@') {
            Some((_, host)) => format!("<redacted>@{host}"),
            None => url.trim().to_string(),
        },
    }
}

/// Is the host a loopback address (a local Ollama, llama.cpp, vLLM)?
/// Such servers are reached directly, never through a proxy from the environment.
pub(crate) fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_completed() {
        let e = |s: &str| endpoint_url(s).unwrap().to_string();
        assert_eq!(e("http://h:8080/v1"), "http://h:8080/v1/chat/completions");
        assert_eq!(e("http://h:8080/v1/"), "http://h:8080/v1/chat/completions");
        assert_eq!(e(" http://h:8080 "), "http://h:8080/v1/chat/completions");
        assert_eq!(e("http://h:8080/"), "http://h:8080/v1/chat/completions");
        assert_eq!(
            e("https://api.groq.com/openai/v1"),
            "https://api.groq.com/openai/v1/chat/completions"
        );
        assert_eq!(
            e("http://h/v1/chat/completions/"),
            "http://h/v1/chat/completions"
        );
        assert!(endpoint_url("").is_err());
        assert!(endpoint_url("localhost:11434").is_err());
        assert!(endpoint_url("ftp://h/v1").is_err());
    }

    #[test]
    fn debug_and_messages_hide_secrets() {
        let c = ChatConfig::new("http://user:hunter2@h/v1", "m").with_api_key("sk-secret-123");
        let d = format!("{c:?}");
        assert!(!d.contains("sk-secret-123"), "{d}");
        assert!(!d.contains("hunter2"), "{d}");
        assert!(d.contains("<redacted>"), "{d}");
        assert_eq!(ChatConfig::new("x", "m").with_api_key("  ").api_key, None);
    }

    #[test]
    fn loopback_hosts() {
        for (u, l) in [
            ("http://localhost:1/v1", true),
            ("http://127.0.0.1:1/v1", true),
            ("http://[::1]:1/v1", true),
            ("https://api.openai.com/v1", false),
        ] {
            assert_eq!(is_loopback(&Url::parse(u).unwrap()), l, "{u}");
        }
    }
}
