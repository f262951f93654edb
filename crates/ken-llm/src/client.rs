//! A blocking client for OpenAI-compatible chat completions (OpenAI, Groq,
//! Ollama, llama.cpp server, vLLM), whole or streamed.
//!
//! Blocking on purpose: the engine is synchronous. Inside an async runtime
//! (the HTTP server), call it from `spawn_blocking`.

use std::io::Read;
use std::time::{Duration, SystemTime};

use reqwest::Url;
use reqwest::blocking::{Client, Response};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use serde::Serialize;
use serde_json::Value;

use crate::config::{display_url, endpoint_url, is_loopback};
use crate::error::{NotFoundCause, TimeoutPhase, head, redact};
use crate::message::strip_reasoning;
use crate::retry::{MAX_WAIT, backoff_delay, is_retryable_status, parse_retry_after};
use crate::sse::SseParser;
use crate::{ChatConfig, Completion, LlmError, Message, Usage};

/// Something that answers chat messages: the HTTP [`ChatClient`], or a
/// scripted stand-in in tests ([`ScriptedChat`]).
pub trait ChatModel {
    /// The configured model name (for `"model"` in `ken ask --json`).
    fn model_name(&self) -> &str;

    /// A whole answer to `messages`.
    fn complete(&self, messages: &[Message]) -> Result<Completion, LlmError>;

    /// Like `complete`, calling `on_delta` with each piece of text as it arrives.
    fn stream(
        &self,
        messages: &[Message],
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        let c = self.complete(messages)?;
        on_delta(&c.text);
        Ok(c)
    }
}

/// The HTTP chat client. Cheap to share by reference; holds a connection pool.
pub struct ChatClient {
    config: ChatConfig,
    endpoint: Url,
    http: Client,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("config", &self.config)
            .field("endpoint", &display_url(self.endpoint.as_str()))
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    stream: bool,
}

/// What the server said so far, however it said it.
#[derive(Default)]
struct Collected {
    text: String,
    model: Option<String>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

impl ChatClient {
    /// Check the configuration and build the HTTP client (no request is made).
    pub fn new(config: ChatConfig) -> Result<ChatClient, LlmError> {
        let endpoint = endpoint_url(&config.base_url)?;
        if config.model.trim().is_empty() {
            return Err(LlmError::Config(
                "no LLM model name: set KEN_LLM_MODEL (e.g. gpt-4o-mini, qwen2.5-coder:7b)".into(),
            ));
        }
        let mut builder = Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("kenning/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&endpoint) {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| {
            LlmError::Config(format!("cannot build the HTTP client: {}", error_chain(&e)))
        })?;
        Ok(ChatClient {
            config,
            endpoint,
            http,
        })
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &ChatConfig {
        &self.config
    }

    /// The URL requests go to (`…/chat/completions`), without credentials.
    pub fn endpoint(&self) -> String {
        display_url(self.endpoint.as_str())
    }

    /// Ask for a whole answer.
    pub fn complete(&self, messages: &[Message]) -> Result<Completion, LlmError> {
        let (resp, attempts) = self.send(messages, false)?;
        let body = resp
            .bytes()
            .map_err(|e| self.transport_error(&e, TimeoutPhase::Response))?;
        let c = self.parse_whole(&body)?;
        self.finish(c, attempts)
    }

    /// Ask for a streamed answer: `on_delta` gets each piece of text as it
    /// arrives. Retries happen only before the first piece (a 429 / 5xx
    /// status); a stream that breaks later is an error, never silently
    /// restarted. A server that ignores `stream: true` and sends one JSON
    /// body is accepted (one delta with the whole text).
    pub fn stream(
        &self,
        messages: &[Message],
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        let (mut resp, attempts) = self.send(messages, true)?;
        let is_json = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("application/json"));
        if is_json {
            let body = resp
                .bytes()
                .map_err(|e| self.transport_error(&e, TimeoutPhase::Response))?;
            let c = self.parse_whole(&body)?;
            on_delta(strip_reasoning(&c.text));
            return self.finish(c, attempts);
        }
        let c = self.read_stream(&mut resp, on_delta)?;
        self.finish(c, attempts)
    }

    fn key(&self) -> Option<&str> {
        self.config.api_key.as_deref()
    }

    fn base(&self) -> String {
        display_url(&self.config.base_url)
    }

    /// POST the request, retrying 429 / 5xx; returns a 2xx response.
    fn send(&self, messages: &[Message], stream: bool) -> Result<(Response, u32), LlmError> {
        let body = serde_json::to_vec(&ChatRequest {
            model: &self.config.model,
            messages,
            temperature: self.config.temperature,
            max_tokens: self.config.max_tokens,
            stream,
        })
        .map_err(|e| LlmError::Config(format!("cannot encode the request: {e}")))?;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let mut req = self
                .http
                .post(self.endpoint.clone())
                .header(CONTENT_TYPE, "application/json")
                .header(
                    ACCEPT,
                    if stream {
                        "text/event-stream"
                    } else {
                        "application/json"
                    },
                )
                .body(body.clone());
            if let Some(key) = self.key() {
                let mut v = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    LlmError::Config(
                        "KEN_LLM_API_KEY contains characters not allowed in an HTTP header".into(),
                    )
                })?;
                v.set_sensitive(true);
                req = req.header(AUTHORIZATION, v);
            }
            let resp = match req.send() {
                Ok(resp) => resp,
                // A kept-alive connection the server had closed, or a server
                // that hung up without answering: nothing was processed, so
                // try again like a 5xx.
                Err(e) if is_dropped_connection(&e) && attempts <= self.config.max_retries => {
                    std::thread::sleep(backoff_delay(attempts - 1, Some(Duration::ZERO)));
                    continue;
                }
                Err(e) => return Err(self.transport_error(&e, TimeoutPhase::Response)),
            };
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return Ok((resp, attempts));
            }
            let retry_after = resp
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| parse_retry_after(v, SystemTime::now()));
            let err_body = read_capped(resp, 64 << 10);
            let retries_left = attempts <= self.config.max_retries;
            let too_long = retry_after.is_some_and(|d| d > MAX_WAIT);
            if is_retryable_status(status) && retries_left && !too_long {
                std::thread::sleep(backoff_delay(attempts - 1, retry_after));
                continue;
            }
            return Err(self.status_error(status, &err_body, attempts, retry_after));
        }
    }

    fn status_error(
        &self,
        status: u16,
        body: &[u8],
        attempts: u32,
        retry_after: Option<Duration>,
    ) -> LlmError {
        let (detail, was_json) = error_detail(body);
        let detail = redact(&detail, self.key());
        match status {
            401 | 403 => LlmError::Auth {
                status,
                base_url: self.base(),
                model: self.config.model.clone(),
                detail,
                key_sent: self.key().is_some(),
            },
            404 => {
                let d = detail.to_ascii_lowercase();
                let cause = if d.contains("model") {
                    NotFoundCause::Model
                } else if !was_json
                    || d.is_empty()
                    || d == "not found"
                    || d.contains("page not found")
                    || d.contains("no route")
                    || d.contains("unknown path")
                {
                    NotFoundCause::Url
                } else {
                    NotFoundCause::Unknown
                };
                LlmError::NotFound {
                    url: self.endpoint(),
                    model: self.config.model.clone(),
                    detail,
                    cause,
                }
            }
            429 => LlmError::RateLimited {
                attempts,
                retry_after,
                detail,
            },
            500..=599 => LlmError::Server {
                status,
                attempts,
                detail,
            },
            _ => LlmError::BadRequest { status, detail },
        }
    }

    fn transport_error(&self, e: &reqwest::Error, phase: TimeoutPhase) -> LlmError {
        let base = self.base();
        if e.is_connect() {
            if e.is_timeout() {
                return LlmError::Timeout {
                    phase: TimeoutPhase::Connect,
                    after: self.config.connect_timeout,
                    url: base,
                };
            }
            if io_kind_in_chain(e) == Some(std::io::ErrorKind::ConnectionRefused) {
                return LlmError::ConnectionRefused { base_url: base };
            }
            return LlmError::Connect {
                base_url: base,
                detail: self.describe(e),
            };
        }
        if e.is_timeout() {
            return LlmError::Timeout {
                phase,
                after: self.config.timeout,
                url: base,
            };
        }
        let detail = if is_dropped_connection(e) {
            format!(
                "the server at {base} closed the connection without answering; check its logs ({})",
                self.describe(e)
            )
        } else {
            self.describe(e)
        };
        LlmError::Transport { detail }
    }

    /// An error's messages, without the key or URL credentials.
    fn describe(&self, e: &reqwest::Error) -> String {
        let text = error_chain(e).replace(self.endpoint.as_str(), &self.endpoint());
        redact(&text, self.key())
    }

    fn io_error(&self, e: &std::io::Error, seen: &[u8]) -> LlmError {
        let timed_out = e.kind() == std::io::ErrorKind::TimedOut
            || e.get_ref()
                .and_then(|inner| inner.downcast_ref::<reqwest::Error>())
                .is_some_and(|r| r.is_timeout());
        if timed_out {
            return LlmError::Timeout {
                phase: TimeoutPhase::Stream,
                after: self.config.timeout,
                url: self.base(),
            };
        }
        LlmError::MalformedStream {
            what: format!(
                "the connection broke mid-stream ({})",
                redact(&e.to_string(), self.key())
            ),
            head: head(tail(seen), self.key()),
        }
    }

    /// Parse a non-streamed chat completion.
    fn parse_whole(&self, body: &[u8]) -> Result<Collected, LlmError> {
        let malformed = |what: String| LlmError::MalformedResponse {
            what,
            head: head(body, self.key()),
        };
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| malformed(format!("the body is not JSON ({e})")))?;
        if let Some(err) = embedded_error(&v, self.key()) {
            return Err(err);
        }
        let choice = v
            .get("choices")
            .and_then(|c| c.get(0))
            .ok_or_else(|| malformed("no `choices[0]` in the JSON".into()))?;
        let text = match choice.get("message").and_then(|m| m.get("content")) {
            Some(c) => content_text(c),
            None => match choice.get("text") {
                Some(Value::String(s)) => Some(s.clone()),
                _ => {
                    return Err(malformed(
                        "`choices[0]` has no `message.content` (nor `text`)".into(),
                    ));
                }
            },
        };
        Ok(Collected {
            text: text.unwrap_or_default(),
            model: str_field(&v, "model"),
            finish_reason: str_field(choice, "finish_reason"),
            usage: usage_of(&v),
        })
    }

    /// Read an SSE stream to its end.
    fn read_stream(
        &self,
        resp: &mut Response,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Collected, LlmError> {
        let mut parser = SseParser::default();
        let mut c = Collected::default();
        let mut buf = vec![0u8; 16 << 10];
        let mut seen: Vec<u8> = Vec::new(); // the last bytes, for messages
        let mut events = Vec::new();
        let mut done = false;
        let mut any_event = false;
        while !done {
            let n = match resp.read(&mut buf) {
                Ok(0) => {
                    parser
                        .finish(&mut events)
                        .map_err(|what| self.stream_error(what, &seen))?;
                    if events.is_empty() {
                        break;
                    }
                    0
                }
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_error(&e, &seen)),
            };
            seen.extend_from_slice(&buf[..n]);
            if seen.len() > 4096 {
                seen.drain(..seen.len() - 1024);
            }
            parser
                .feed(&buf[..n], &mut events)
                .map_err(|what| self.stream_error(what, &seen))?;
            for data in events.drain(..) {
                any_event = true;
                if data.trim() == "[DONE]" {
                    done = true;
                    break;
                }
                self.apply_chunk(&data, &mut c, on_delta)?;
            }
            if n == 0 {
                break;
            }
        }
        if !done && c.finish_reason.is_none() {
            let what = if any_event {
                "the stream ended before `data: [DONE]` (and no finish_reason): the answer is truncated"
            } else {
                "the body has no `data:` events: is this an OpenAI-compatible server?"
            };
            let mut context = seen.clone();
            context.extend_from_slice(parser.pending().as_bytes());
            return Err(self.stream_error(what.to_string(), &context));
        }
        Ok(c)
    }

    fn stream_error(&self, what: String, seen: &[u8]) -> LlmError {
        LlmError::MalformedStream {
            what,
            head: head(tail(seen), self.key()),
        }
    }

    /// One `data:` event of a chat-completion stream.
    fn apply_chunk(
        &self,
        data: &str,
        c: &mut Collected,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<(), LlmError> {
        let v: Value = serde_json::from_str(data).map_err(|e| LlmError::MalformedStream {
            what: format!("a `data:` line is not valid JSON ({e})"),
            head: head(data.as_bytes(), self.key()),
        })?;
        if let Some(err) = embedded_error(&v, self.key()) {
            return Err(err);
        }
        if c.model.is_none() {
            c.model = str_field(&v, "model");
        }
        if let Some(u) = usage_of(&v) {
            c.usage = Some(u);
        }
        if let Some(choice) = v.get("choices").and_then(|ch| ch.get(0)) {
            let piece = choice
                .get("delta")
                .and_then(|d| d.get("content"))
                .and_then(content_text)
                .or_else(|| str_field(choice, "text"));
            if let Some(piece) = piece.filter(|p| !p.is_empty()) {
                on_delta(&piece);
                c.text.push_str(&piece);
            }
            if let Some(r) = str_field(choice, "finish_reason") {
                c.finish_reason = Some(r);
            }
        }
        Ok(())
    }

    fn finish(&self, c: Collected, attempts: u32) -> Result<Completion, LlmError> {
        let text = strip_reasoning(&c.text).trim_end().to_string();
        if text.trim().is_empty() {
            return Err(LlmError::EmptyAnswer {
                finish_reason: c.finish_reason,
            });
        }
        Ok(Completion {
            text,
            model: c.model,
            finish_reason: c.finish_reason,
            usage: c.usage,
            attempts,
        })
    }
}

impl ChatModel for ChatClient {
    fn model_name(&self) -> &str {
        &self.config.model
    }
    fn complete(&self, messages: &[Message]) -> Result<Completion, LlmError> {
        ChatClient::complete(self, messages)
    }
    fn stream(
        &self,
        messages: &[Message],
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        ChatClient::stream(self, messages, on_delta)
    }
}

fn tail(bytes: &[u8]) -> &[u8] {
    &bytes[bytes.len().saturating_sub(160)..]
}

fn read_capped(resp: Response, cap: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = resp.take(cap).read_to_end(&mut out);
    out
}

/// The message in an error body (`{"error": {"message"}}`, `{"error": "..."}`,
/// `{"detail": ...}`, `{"message": ...}`, or plain text), and whether it was JSON.
fn error_detail(body: &[u8]) -> (String, bool) {
    let short = |s: &str| {
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if s.chars().count() > 300 {
            format!("{}…", s.chars().take(300).collect::<String>())
        } else {
            s
        }
    };
    match serde_json::from_slice::<Value>(body) {
        Ok(v) => {
            let msg = v
                .get("error")
                .map(|e| match e {
                    Value::String(s) => s.clone(),
                    e => str_field(e, "message").unwrap_or_else(|| e.to_string()),
                })
                .or_else(|| str_field(&v, "message"))
                .or_else(|| {
                    v.get("detail").map(|d| match d {
                        Value::String(s) => s.clone(),
                        d => d.to_string(),
                    })
                })
                .unwrap_or_else(|| v.to_string());
            (short(&msg), true)
        }
        Err(_) => {
            let text = String::from_utf8_lossy(body);
            let text = if text.trim_start().starts_with('<') {
                strip_tags(&text)
            } else {
                text.into_owned()
            };
            (short(&text), false)
        }
    }
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => {
                inside = false;
                out.push(' ');
            }
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// An `"error"` object inside a 2xx body or a stream event.
fn embedded_error(v: &Value, key: Option<&str>) -> Option<LlmError> {
    let e = v.get("error").filter(|e| !e.is_null())?;
    let detail = match e {
        Value::String(s) => s.clone(),
        e => str_field(e, "message").unwrap_or_else(|| e.to_string()),
    };
    let detail = redact(&detail, key);
    let code = e
        .get("code")
        .and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
        })
        .filter(|c| (400..600).contains(c))
        .map(|c| c as u16);
    Some(match code {
        Some(status) if status < 500 => LlmError::BadRequest { status, detail },
        status => LlmError::Server {
            status: status.unwrap_or(500),
            attempts: 1,
            detail,
        },
    })
}

/// `content` as a string, or as an array of `{"type": "text", "text"}` parts.
fn content_text(c: &Value) -> Option<String> {
    match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        ),
        _ => None,
    }
}

fn str_field(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_string)
}

/// `usage` at the top level, or Groq's `x_groq.usage`.
fn usage_of(v: &Value) -> Option<Usage> {
    let u = v
        .get("usage")
        .filter(|u| u.is_object())
        .or_else(|| v.get("x_groq").and_then(|x| x.get("usage")))?;
    let n = |name: &str| u.get(name).and_then(Value::as_u64).unwrap_or(0) as u32;
    let (p, c) = (n("prompt_tokens"), n("completion_tokens"));
    let t = match n("total_tokens") {
        0 => p + c,
        t => t,
    };
    Some(Usage {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: t,
    })
}

/// The messages of an error and its sources, joined.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut src = e.source();
    while let Some(s) = src {
        let m = s.to_string();
        if !parts.iter().any(|p| p.contains(&m)) {
            parts.push(m);
        }
        src = s.source();
    }
    parts.join(": ")
}

/// The connection closed before any response (not a refusal, not a timeout).
fn is_dropped_connection(e: &reqwest::Error) -> bool {
    if e.is_timeout() || e.is_connect() || e.is_builder() {
        return false;
    }
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    matches!(
        io_kind_in_chain(e),
        Some(ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof)
    ) || error_chain(e).contains("connection closed before message completed")
}

fn io_kind_in_chain(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        src = s.source();
    }
    None
}

/// A [`ChatModel`] that plays back scripted answers, for tests of code that
/// asks questions (no network). Each call takes the next answer; when the
/// script runs out, the last answer repeats.
#[derive(Debug)]
pub struct ScriptedChat {
    model: String,
    answers: std::sync::Mutex<(Vec<Result<String, String>>, usize)>,
    requests: std::sync::Mutex<Vec<Vec<Message>>>,
}

impl ScriptedChat {
    /// `Ok(text)` is an answer; `Err(msg)` becomes an `LlmError::Transport`.
    pub fn new(model: &str, answers: Vec<Result<String, String>>) -> ScriptedChat {
        ScriptedChat {
            model: model.to_string(),
            answers: std::sync::Mutex::new((answers, 0)),
            requests: Default::default(),
        }
    }

    /// The messages of every call so far.
    pub fn requests(&self) -> Vec<Vec<Message>> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl ChatModel for ScriptedChat {
    fn model_name(&self) -> &str {
        &self.model
    }
    fn complete(&self, messages: &[Message]) -> Result<Completion, LlmError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(messages.to_vec());
        }
        let mut guard = self.answers.lock().map_err(|_| LlmError::Transport {
            detail: "scripted model poisoned".into(),
        })?;
        let (answers, next) = &mut *guard;
        let Some(answer) = answers.get((*next).min(answers.len().saturating_sub(1))) else {
            return Err(LlmError::EmptyAnswer {
                finish_reason: None,
            });
        };
        let answer = answer.clone();
        *next += 1;
        match answer {
            Ok(text) if text.trim().is_empty() => Err(LlmError::EmptyAnswer {
                finish_reason: Some("stop".into()),
            }),
            Ok(text) => Ok(Completion {
                text,
                model: Some(self.model.clone()),
                finish_reason: Some("stop".into()),
                usage: None,
                attempts: 1,
            }),
            Err(detail) => Err(LlmError::Transport { detail }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_details_from_every_server_style() {
        let d = |b: &str| error_detail(b.as_bytes());
        assert_eq!(
            d(r#"{"error":{"message":"The model `x` does not exist","code":"model_not_found"}}"#),
            ("The model `x` does not exist".into(), true)
        );
        assert_eq!(
            d(r#"{"error":"model \"llama3\" not found, try pulling it first"}"#).0,
            "model \"llama3\" not found, try pulling it first"
        );
        assert_eq!(d(r#"{"detail":"Not Found"}"#), ("Not Found".into(), true));
        assert_eq!(
            d("<html><body><h1>404 Not Found</h1></body></html>"),
            ("404 Not Found".into(), false)
        );
    }

    #[test]
    fn usage_in_either_place() {
        let v: Value = serde_json::from_str(
            r#"{"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}"#,
        )
        .unwrap();
        assert_eq!(usage_of(&v).unwrap().total_tokens, 7);
        let v: Value = serde_json::from_str(
            r#"{"x_groq":{"usage":{"prompt_tokens":3,"completion_tokens":4}}}"#,
        )
        .unwrap();
        assert_eq!(usage_of(&v).unwrap().total_tokens, 7);
        assert!(usage_of(&serde_json::json!({"usage": null})).is_none());
    }

    #[test]
    fn scripted_chat_plays_back() {
        let m = ScriptedChat::new("fake", vec![Ok("one".into()), Ok("two".into())]);
        let msgs = [Message::user("q")];
        assert_eq!(m.complete(&msgs).unwrap().text, "one");
        let mut seen = String::new();
        assert_eq!(
            m.stream(&msgs, &mut |d| seen.push_str(d)).unwrap().text,
            "two"
        );
        assert_eq!(seen, "two");
        assert_eq!(m.complete(&msgs).unwrap().text, "two");
        assert_eq!(m.requests().len(), 3);
    }
}
