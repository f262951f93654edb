//! The `Reranker` seam: relevance of candidate texts to a query, scored by
//! a model that reads both together (a cross-encoder), after retrieval.
//!
//! [`HttpReranker`] speaks the `/rerank` shape most servers share:
//! `POST {base_url}/rerank` with `{"model", "query", "documents": [...]}`,
//! answered by `{"results": [{"index", "relevance_score"}]}` (Cohere, Jina,
//! vLLM, Infinity) or `{"data": [...]}` (Voyage). text-embeddings-inference
//! takes `{"query", "texts": [...]}` and answers a bare list of
//! `{"index", "score"}`: [`RerankApi::Tei`]. Blocking, like the embedder.

use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::error::{EmbedError, Result};

/// Scores candidates against a query.
pub trait Reranker: Send + Sync {
    /// Names the model (shown with the cost of each query).
    fn id(&self) -> &str;
    /// One score per document, in the documents' order; higher is more relevant.
    fn score(&self, query: &str, documents: &[String]) -> Result<Vec<f32>>;
}

/// Which request shape the endpoint takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RerankApi {
    /// `documents` in, `results`/`data` out (Cohere, Jina, Voyage, vLLM, Infinity).
    #[default]
    Cohere,
    /// `texts` in, a bare list out (Hugging Face text-embeddings-inference).
    Tei,
}

/// Where and how to reach a rerank endpoint.
#[derive(Clone)]
pub struct RerankConfig {
    /// E.g. `https://api.cohere.com/v2`; `/rerank` is appended unless the
    /// URL already ends with it.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer ...`. Never logged or shown.
    pub api_key: Option<String>,
    pub api: RerankApi,
    pub timeout: Duration,
}

impl RerankConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> RerankConfig {
        RerankConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api: RerankApi::Cohere,
            timeout: Duration::from_secs(30),
        }
    }
}

impl std::fmt::Debug for RerankConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RerankConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api", &self.api)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A [`Reranker`] over HTTP.
pub struct HttpReranker {
    cfg: RerankConfig,
    url: String,
    id: String,
    client: reqwest::blocking::Client,
}

#[derive(Deserialize)]
struct Scored {
    index: usize,
    #[serde(alias = "score")]
    relevance_score: f32,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Answer {
    Results { results: Vec<Scored> },
    Data { data: Vec<Scored> },
    Bare(Vec<Scored>),
}

impl HttpReranker {
    /// Checks the configuration and builds the client; sends nothing.
    pub fn new(cfg: RerankConfig) -> Result<HttpReranker> {
        let (base, url) =
            crate::http::endpoint(&cfg.base_url, "/rerank", "rerank", "; set rerank_base_url")?;
        if cfg.api == RerankApi::Cohere && cfg.model.trim().is_empty() {
            return Err(EmbedError::BadConfig(
                "no rerank model name; set rerank_model".into(),
            ));
        }
        let client = crate::http::client(cfg.timeout)?;
        Ok(HttpReranker {
            id: format!("http:{base}:{}", cfg.model),
            url,
            client,
            cfg,
        })
    }

    fn redact(&self, text: &str) -> String {
        crate::http::redact(text, self.cfg.api_key.as_deref())
    }

    fn send(&self, body: &serde_json::Value) -> Result<reqwest::blocking::Response> {
        let mut last = None;
        // one retry after a connection error or a 5xx
        for attempt in 0..2 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            let mut req = self.client.post(&self.url).json(body);
            if let Some(k) = &self.cfg.api_key {
                req = req.bearer_auth(k);
            }
            match req.send() {
                Ok(r) if r.status().is_server_error() => {
                    let status = r.status().as_u16();
                    let text = r.text().unwrap_or_default();
                    last = Some(EmbedError::Server {
                        status: Some(status),
                        detail: format!("rerank endpoint {}: {}", self.url, self.redact(&text)),
                    });
                }
                Ok(r) => return Ok(r),
                Err(e) if e.is_timeout() => {
                    return Err(EmbedError::Timeout {
                        after: self.cfg.timeout,
                        attempts: attempt + 1,
                    });
                }
                Err(e) => {
                    last = Some(EmbedError::Server {
                        status: None,
                        detail: format!(
                            "cannot reach the rerank endpoint {}: {}",
                            self.url,
                            self.redact(&e.to_string())
                        ),
                    });
                }
            }
        }
        Err(last.unwrap_or_else(|| EmbedError::Server {
            status: None,
            detail: "no answer".into(),
        }))
    }
}

impl Reranker for HttpReranker {
    fn id(&self) -> &str {
        &self.id
    }

    fn score(&self, query: &str, documents: &[String]) -> Result<Vec<f32>> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let body = match self.cfg.api {
            RerankApi::Cohere => serde_json::json!({
                "model": self.cfg.model,
                "query": query,
                "documents": documents,
                "top_n": documents.len(),
                "return_documents": false,
            }),
            RerankApi::Tei => serde_json::json!({
                "query": query,
                "texts": documents,
                "raw_scores": false,
            }),
        };
        let resp = self.send(&body)?;
        let status = resp.status();
        let text = resp.text().map_err(|e| EmbedError::Server {
            status: Some(status.as_u16()),
            detail: format!("unreadable rerank answer: {e}"),
        })?;
        match status.as_u16() {
            200..=299 => {}
            401 | 403 => {
                return Err(EmbedError::Auth {
                    status: status.as_u16(),
                    hint: "check rerank_api_key".into(),
                });
            }
            404 => {
                return Err(EmbedError::NotFound {
                    url: self.url.clone(),
                    hint:
                        "check rerank_base_url (the endpoint is {base_url}/rerank) and rerank_model"
                            .into(),
                });
            }
            s => {
                return Err(EmbedError::Server {
                    status: Some(s),
                    detail: format!("rerank endpoint {}: {}", self.url, self.redact(&text)),
                });
            }
        }
        let answer: Answer = serde_json::from_str(&text).map_err(|e| EmbedError::Server {
            status: Some(status.as_u16()),
            detail: format!("not a rerank answer ({e}): {}", self.redact(&text)),
        })?;
        let items = match answer {
            Answer::Results { results } => results,
            Answer::Data { data } => data,
            Answer::Bare(v) => v,
        };
        let mut scores = vec![f32::NEG_INFINITY; documents.len()];
        let mut seen = 0;
        for s in items {
            let Some(slot) = scores.get_mut(s.index) else {
                return Err(EmbedError::Server {
                    status: Some(status.as_u16()),
                    detail: format!(
                        "the rerank answer names document {} of {}",
                        s.index,
                        documents.len()
                    ),
                });
            };
            if slot.is_finite() {
                continue;
            }
            *slot = if s.relevance_score.is_finite() {
                s.relevance_score
            } else {
                f32::MIN
            };
            seen += 1;
        }
        if seen < documents.len() {
            return Err(EmbedError::Server {
                status: Some(status.as_u16()),
                detail: format!(
                    "the rerank answer scores {seen} of {} documents",
                    documents.len()
                ),
            });
        }
        Ok(scores)
    }
}

/// Reorder `items` by a reranker's scores of their texts, best first (ties
/// keep the given order); returns how long the model took.
pub fn rerank_in_place<T>(
    reranker: &dyn Reranker,
    query: &str,
    items: &mut Vec<T>,
    text: impl Fn(&T) -> String,
) -> Result<Duration> {
    let started = Instant::now();
    let docs: Vec<String> = items.iter().map(&text).collect();
    let scores = reranker.score(query, &docs)?;
    let mut order: Vec<(usize, f32)> = scores.into_iter().enumerate().collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut taken: Vec<Option<T>> = items.drain(..).map(Some).collect();
    for (i, _) in order {
        if let Some(t) = taken[i].take() {
            items.push(t);
        }
    }
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<f32>);
    impl Reranker for Fixed {
        fn id(&self) -> &str {
            "fixed"
        }
        fn score(&self, _q: &str, docs: &[String]) -> Result<Vec<f32>> {
            Ok(self.0[..docs.len()].to_vec())
        }
    }

    #[test]
    fn items_follow_the_scores_and_ties_keep_their_order() {
        let mut items = vec!["a", "b", "c", "d"];
        rerank_in_place(&Fixed(vec![0.1, 0.9, 0.1, 0.5]), "q", &mut items, |s| {
            s.to_string()
        })
        .unwrap();
        assert_eq!(items, ["b", "d", "a", "c"]);
    }

    #[test]
    fn answers_of_every_common_shape_parse() {
        for text in [
            r#"{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}"#,
            r#"{"data":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}"#,
            r#"[{"index":1,"score":0.9},{"index":0,"score":0.1}]"#,
        ] {
            let a: Answer = serde_json::from_str(text).unwrap();
            let items = match a {
                Answer::Results { results } => results,
                Answer::Data { data } => data,
                Answer::Bare(v) => v,
            };
            assert_eq!(items.len(), 2, "{text}");
            assert_eq!(items[0].index, 1);
        }
    }

    #[test]
    fn bad_configurations_are_refused_before_any_request() {
        assert!(HttpReranker::new(RerankConfig::new("ftp://x", "m")).is_err());
        assert!(HttpReranker::new(RerankConfig::new("http://x", " ")).is_err());
        let r = HttpReranker::new(RerankConfig::new("http://x/v1/", "m")).unwrap();
        assert_eq!(r.url, "http://x/v1/rerank");
        let cfg = RerankConfig {
            api_key: Some("secret-key".into()),
            ..RerankConfig::new("http://x", "m")
        };
        assert!(!format!("{cfg:?}").contains("secret-key"));
    }
}
