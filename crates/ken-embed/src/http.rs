//! Embeddings from any OpenAI-compatible endpoint: `POST {base_url}/embeddings`
//! with `{"model", "input": [...]}`, answered by `{"data": [{"index", "embedding"}]}`.
//!
//! `base_url` is used as given, API version included: `https://api.openai.com/v1`,
//! `http://127.0.0.1:11434/v1` (Ollama), `http://127.0.0.1:8080/v1` (llama.cpp).
//! `/v1` is never added, because not every provider puts its API there; a
//! trailing `/` is dropped and a URL already ending in `/embeddings` is taken
//! as the full endpoint. A 404 says to check exactly this.
//!
//! Blocking (reqwest's blocking client runs its own small runtime): call it
//! from a plain thread or `spawn_blocking`, not from inside an async task.

use std::sync::OnceLock;
use std::time::Duration;

use serde::Deserialize;

use crate::error::{EmbedError, Result};
use crate::{Embedder, l2_normalize};

/// Where and how to reach an embedding endpoint.
#[derive(Clone)]
pub struct HttpConfig {
    /// E.g. `https://api.openai.com/v1`; `/embeddings` is appended.
    pub base_url: String,
    /// The `model` field of each request.
    pub model: String,
    /// Sent as `Authorization: Bearer ...` (env `KEN_EMBED_API_KEY`). Never logged or shown.
    pub api_key: Option<String>,
    /// Texts per request. Default 64.
    pub batch_size: usize,
    /// Limit for one request, connection included. Default 60 s.
    pub timeout: Duration,
    /// Retries after a 429, a 5xx, a timeout or a connection error. Default 4.
    pub max_retries: u32,
    /// Expected vector length; learnt from the first response when `None`.
    pub dim: Option<usize>,
    /// What the model accepts, in tokens (reported by `max_tokens()`; the
    /// server truncates or refuses). Default 8192.
    pub max_tokens: usize,
    /// First wait before a retry (doubled each time, unless the server sends
    /// `Retry-After`). Default 500 ms.
    pub backoff: Duration,
}

impl HttpConfig {
    /// A configuration with the defaults above.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> HttpConfig {
        HttpConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            batch_size: 64,
            timeout: Duration::from_secs(60),
            max_retries: 4,
            dim: None,
            max_tokens: 8192,
            backoff: Duration::from_millis(500),
        }
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("batch_size", &self.batch_size)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("dim", &self.dim)
            .field("max_tokens", &self.max_tokens)
            .finish()
    }
}

/// An [`Embedder`] over HTTP.
pub struct HttpEmbedder {
    cfg: HttpConfig,
    url: String,
    id: String,
    client: reqwest::blocking::Client,
    dim: OnceLock<usize>,
}

impl std::fmt::Debug for HttpEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEmbedder")
            .field("url", &self.url)
            .field("config", &self.cfg)
            .finish()
    }
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

/// Longest part of a response body quoted in an error.
const BODY_EXCERPT: usize = 300;

/// `base_url` trimmed, and the URL of its `suffix` endpoint (`base/suffix`
/// unless `base` ends so already); a base that is not http(s) is a
/// configuration error about the `what` endpoint, ending in `hint`.
pub(crate) fn endpoint(
    base_url: &str,
    suffix: &str,
    what: &str,
    hint: &str,
) -> Result<(String, String)> {
    let base = base_url.trim().trim_end_matches('/').to_string();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(EmbedError::BadConfig(format!(
            "{what} base URL {base:?} must start with http:// or https://{hint}"
        )));
    }
    let url = if base.ends_with(suffix) {
        base.clone()
    } else {
        format!("{base}{suffix}")
    };
    Ok((base, url))
}

/// A blocking client whose requests and connections give up after `timeout`.
pub(crate) fn client(timeout: Duration) -> Result<reqwest::blocking::Client> {
    reqwest::blocking::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .build()
        .map_err(|e| EmbedError::BadConfig(format!("cannot build the HTTP client: {e}")))
}

/// A response body fit to quote in an error: its start, with the API key
/// (when one is set) never in it.
pub(crate) fn redact(text: &str, api_key: Option<&str>) -> String {
    let mut t: String = text.chars().take(BODY_EXCERPT).collect();
    if let Some(k) = api_key.filter(|k| k.len() >= 4) {
        t = t.replace(k, "<redacted>");
    }
    t
}

impl HttpEmbedder {
    /// Checks the configuration and builds the client; sends nothing.
    pub fn new(cfg: HttpConfig) -> Result<HttpEmbedder> {
        let (base, url) = endpoint(
            &cfg.base_url,
            "/embeddings",
            "embedding",
            " (e.g. https://api.openai.com/v1); set KEN_EMBED_BASE_URL",
        )?;
        if cfg.model.trim().is_empty() {
            return Err(EmbedError::BadConfig(
                "no embedding model name; set KEN_EMBED_MODEL".into(),
            ));
        }
        if cfg.batch_size == 0 {
            return Err(EmbedError::BadConfig(
                "batch_size must be at least 1".into(),
            ));
        }
        let client = client(cfg.timeout)?;
        let dim = OnceLock::new();
        if let Some(d) = cfg.dim {
            let _ = dim.set(d);
        }
        Ok(HttpEmbedder {
            id: format!("http:{base}:{}", cfg.model),
            url,
            client,
            dim,
            cfg,
        })
    }

    /// The full endpoint URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends one short request so that [`Embedder::dim`] is known.
    pub fn probe(&self) -> Result<usize> {
        self.embed_batch(&["dimension probe"])?;
        Ok(self.dim())
    }

    fn redact(&self, text: &str) -> String {
        redact(text, self.cfg.api_key.as_deref())
    }

    /// One request (with retries) for at most `batch_size` texts.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        // OpenAI refuses empty strings; a space embeds the same "nothing".
        let input: Vec<&str> = texts
            .iter()
            .map(|t| if t.is_empty() { " " } else { *t })
            .collect();
        let body = serde_json::json!({ "model": self.cfg.model, "input": input });
        let attempts = self.cfg.max_retries + 1;
        let mut last: Option<EmbedError> = None;
        // The server's Retry-After, when it sent one, replaces the backoff.
        let mut retry_after: Option<Duration> = None;
        for attempt in 0..attempts {
            if attempt > 0 {
                let wait = retry_after.take().unwrap_or_else(|| self.backoff(attempt));
                tracing::debug!(attempt, ?wait, url = %self.url, "retrying embedding request");
                std::thread::sleep(wait);
            }
            let mut req = self.client.post(&self.url).json(&body);
            if let Some(k) = &self.cfg.api_key {
                req = req.bearer_auth(k);
            }
            let resp = match req.send() {
                Ok(r) => r,
                Err(e) if e.is_timeout() => {
                    last = Some(EmbedError::Timeout {
                        after: self.cfg.timeout,
                        attempts: attempt + 1,
                    });
                    continue;
                }
                Err(e) => {
                    last = Some(EmbedError::Server {
                        status: None,
                        detail: self.redact(&format!("cannot reach {}: {e}", self.url)),
                    });
                    continue;
                }
            };
            let status = resp.status().as_u16();
            let server_wait = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Duration::from_secs_f64(s.min(120.0)));
            let text = match resp.text() {
                Ok(t) => t,
                Err(e) if e.is_timeout() => {
                    last = Some(EmbedError::Timeout {
                        after: self.cfg.timeout,
                        attempts: attempt + 1,
                    });
                    continue;
                }
                Err(e) => {
                    last = Some(EmbedError::Server {
                        status: Some(status),
                        detail: format!("reading the response failed: {e}"),
                    });
                    continue;
                }
            };
            match status {
                200..=299 => return self.parse(&text, texts.len()),
                401 | 403 => {
                    return Err(EmbedError::Auth {
                        status,
                        hint: format!(
                            "{}check KEN_EMBED_API_KEY (the key for {}); server said: {}",
                            if self.cfg.api_key.is_none() {
                                "no API key is set; "
                            } else {
                                ""
                            },
                            self.url,
                            self.redact(&text)
                        ),
                    });
                }
                404 => {
                    return Err(EmbedError::NotFound {
                        url: self.url.clone(),
                        hint: format!(
                            "check KEN_EMBED_BASE_URL (it must include the API path, e.g. \
                             http://127.0.0.1:11434/v1; /embeddings is appended) and \
                             KEN_EMBED_MODEL ({:?}); server said: {}",
                            self.cfg.model,
                            self.redact(&text)
                        ),
                    });
                }
                429 => {
                    retry_after = server_wait;
                    last = Some(EmbedError::RateLimited {
                        attempts: attempt + 1,
                        detail: self.redact(&text),
                    });
                }
                500..=599 => {
                    retry_after = server_wait;
                    last = Some(EmbedError::Server {
                        status: Some(status),
                        detail: self.redact(&text),
                    });
                }
                _ => {
                    return Err(EmbedError::Server {
                        status: Some(status),
                        detail: self.redact(&text),
                    });
                }
            }
        }
        Err(last.unwrap_or_else(|| EmbedError::Server {
            status: None,
            detail: "no attempt made".into(),
        }))
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << (attempt - 1).min(8);
        (self.cfg.backoff * factor).min(Duration::from_secs(30))
    }

    fn parse(&self, text: &str, expected: usize) -> Result<Vec<Vec<f32>>> {
        let resp: Response = serde_json::from_str(text).map_err(|e| {
            EmbedError::Malformed(format!("{e}; body starts: {}", self.redact(text)))
        })?;
        if resp.data.len() != expected {
            return Err(EmbedError::Malformed(format!(
                "sent {expected} texts, got {} vectors",
                resp.data.len()
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
        for item in resp.data {
            let slot = out.get_mut(item.index).ok_or_else(|| {
                EmbedError::Malformed(format!("index {} out of range 0..{expected}", item.index))
            })?;
            if slot.is_some() {
                return Err(EmbedError::Malformed(format!(
                    "index {} given twice",
                    item.index
                )));
            }
            *slot = Some(item.embedding);
        }
        let mut vecs: Vec<Vec<f32>> = out.into_iter().map(|v| v.unwrap_or_default()).collect();
        let want = *self.dim.get_or_init(|| vecs[0].len());
        for v in &mut vecs {
            if v.len() != want || want == 0 {
                return Err(EmbedError::Malformed(format!(
                    "vector of dimension {}, expected {want}",
                    v.len()
                )));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(EmbedError::Malformed("vector holds NaN or infinity".into()));
            }
            l2_normalize(v);
        }
        Ok(vecs)
    }
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    /// The configured dimension, else the one learnt from the first response
    /// (0 before any; [`HttpEmbedder::probe`] learns it eagerly).
    fn dim(&self) -> usize {
        self.dim.get().copied().unwrap_or(0)
    }

    fn max_tokens(&self) -> usize {
        self.cfg.max_tokens
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.cfg.batch_size) {
            out.extend(self.embed_batch(batch)?);
        }
        Ok(out)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed_batch(&[text])?.pop().unwrap_or_default())
    }
}
