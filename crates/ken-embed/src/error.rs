//! One error type for every embedder, in two tiers: what the user must fix
//! (no model installed, a bad key, a wrong URL, a bad setting) and what failed
//! on the way (rate limits after retries, timeouts, server errors, bad
//! responses, I/O, the model itself).

use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong while loading a model or embedding text.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// No usable local model directory was found.
    #[error("no embedding model found (looked in: {}); {hint}", display_paths(.looked_in))]
    NoModel {
        looked_in: Vec<PathBuf>,
        hint: String,
    },

    /// The endpoint refused the credentials (HTTP 401/403).
    #[error("the embedding endpoint refused the request (HTTP {status}): {hint}")]
    Auth { status: u16, hint: String },

    /// The endpoint or the model does not exist (HTTP 404).
    #[error("not found (HTTP 404) at {url}: {hint}")]
    NotFound { url: String, hint: String },

    /// A setting is wrong: a malformed URL, a model directory missing a file, a zero batch size...
    #[error("bad embedding configuration: {0}")]
    BadConfig(String),

    /// The endpoint kept answering 429 after every retry.
    #[error("rate limited by the embedding endpoint after {attempts} attempts: {detail}")]
    RateLimited { attempts: u32, detail: String },

    /// No answer within the configured timeout.
    #[error("the embedding endpoint did not answer within {after:?} ({attempts} attempts)")]
    Timeout { after: Duration, attempts: u32 },

    /// The endpoint failed (5xx after retries, other unexpected statuses, connection errors).
    #[error("embedding endpoint error{}: {detail}", .status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Server { status: Option<u16>, detail: String },

    /// The endpoint answered something we cannot use: bad JSON, wrong count or dimension.
    #[error("malformed embedding response: {0}")]
    Malformed(String),

    /// Reading or writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The model failed to load or to run (bad weights, tokenizer errors...).
    #[error("embedding model error: {0}")]
    Model(String),
}

impl EmbedError {
    /// True when the user can fix it (install a model, set a key, correct a
    /// URL or a setting); false for failures of the model, the network or the
    /// endpoint.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            EmbedError::NoModel { .. }
                | EmbedError::Auth { .. }
                | EmbedError::NotFound { .. }
                | EmbedError::BadConfig(_)
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> EmbedError {
        EmbedError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn model(e: impl std::fmt::Display) -> EmbedError {
        EmbedError::Model(e.to_string())
    }
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nowhere".to_string();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> Self {
        EmbedError::Model(e.to_string())
    }
}

/// Result alias for this crate.
pub type Result<T, E = EmbedError> = std::result::Result<T, E>;
