//! LLM answers for Kenning: an OpenAI-compatible chat client, the context an
//! answer may use, citation checking, and question routing.
//!
//! A pure library: no terminal, no engine, no retrieval. The caller turns
//! search hits into [`ContextChunk`]s, builds a [`Context`], and asks.
//!
//! ```
//! use ken_core::Language;
//! use ken_llm::{ask, ClaimStatus, Context, ContextChunk, ContextOptions, ScriptedChat};
//!
//! let chunk = ContextChunk {
//!     repo: "demo".into(),
//!     path: "src/app.py".into(),
//!     start_line: 10,
//!     end_line: 12,
//!     symbol: Some("App.run".into()),
//!     language: Language::Python,
//!     authors: vec![("Ana".into(), 1.0)],
//!     text: "def run(self):\n    self.bind()\n    self.serve()\n".into(),
//! };
//! let context = Context::build(&[chunk], &ContextOptions::default());
//! // A real caller passes a `ChatClient::new(ChatConfig::new(url, model))?`.
//! let model = ScriptedChat::new("fake", vec![Ok("`run` binds, then serves [src/app.py:10-12].".into())]);
//! let answer = ask(&model, "how does the app start?", &context, None).unwrap();
//! assert_eq!(answer.claims[0].status, ClaimStatus::Verified);
//! ```
//!
//! Code map:
//! - [`client`]: [`ChatClient`] (blocking; `complete`, SSE `stream`), the
//!   [`ChatModel`] seam and [`ScriptedChat`] for tests; [`config`] (base URL
//!   rules), [`retry`] (backoff policy), [`error`] (what to do, key redacted);
//! - [`context`]: chunks → merged blocks within a token budget, the answer prompt;
//! - [`cite`]: parse citations, split claims, validate, retry message, pick the better answer;
//! - [`answer`]: [`ask`], the whole loop with one automatic retry;
//! - [`expand`]: query rewriting and HyDE prompts and parsers;
//! - [`rerank`]: listwise reranking of retrieved passages, prompt and parser;
//! - [`route`]: rule router, slots (people, times, symbols, paths), step plans,
//!   LLM confirmation.
//!
//! Invariants:
//! - the API key is never in an error, a `Debug` output or a message (there
//!   are no logs); server messages are redacted before they are kept;
//! - a claim is never dropped and a citation never stripped: every non-blank
//!   byte of an answer is in exactly one claim, and every citation found is
//!   reported with `valid: true|false`;
//! - a context block's range is exactly the lines it shows;
//! - only 429 / 5xx / a connection dropped before any answer are retried,
//!   and a stream is never retried once text was delivered.
//!
//! The client is blocking (the engine is synchronous): from async code
//! (`ken serve`), call it inside `spawn_blocking`.

pub mod answer;
pub mod cite;
pub mod client;
pub mod config;
pub mod context;
pub mod error;
pub mod expand;
pub mod message;
pub mod rerank;
pub mod retry;
pub mod route;
mod slots;
mod split;
mod sse;
mod time;

pub use answer::{Answer, ask};
pub use cite::{
    AnswerScore, CheckedAnswer, Citation, Claim, ClaimStatus, ParsedCitation, SourceRange,
    parse_citations, pick_better, retry_message, validate,
};
pub use client::{ChatClient, ChatModel, ScriptedChat};
pub use config::{ChatConfig, endpoint_url};
pub use context::{Block, Context, ContextChunk, ContextOptions, answer_messages, estimate_tokens};
pub use error::{LlmError, NotFoundCause, TimeoutPhase, redact};
pub use expand::{hyde_messages, parse_hyde, parse_rewrite, rewrite_messages};
pub use message::{Completion, Message, Role, Usage, strip_reasoning};
pub use rerank::{Passage, parse_ranking, rerank_messages};
pub use route::{Route, Router, Routing, Step, StepKind, parse_route, route, route_messages};
pub use slots::{Slots, TimeRange};
