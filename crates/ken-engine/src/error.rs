//! Engine errors: a kind (what the caller can do about it), a message, and a
//! hint on what to do next. Each edge maps the kind once: the command line
//! to an exit code, HTTP to a status and a stable `code`, MCP to a tool error.

use ken_source::SourceError;
use ken_store::StoreError;
use serde::Serialize;

/// What kind of failure, as far as the caller is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request is wrong; changing it fixes it.
    BadInput,
    /// A repository, file, job or symbol that does not exist (or that the
    /// caller may not see: the two answer the same).
    NotFound,
    /// The caller is known but may not do this (a read token queuing an
    /// index job).
    Forbidden,
    /// Another writer holds the index; try again later.
    Busy,
    /// Something the engine needs is not there or not answering: a model
    /// endpoint, a remote, an index that is not built yet.
    Unavailable,
    /// Our fault.
    Internal,
}

impl ErrorKind {
    /// The stable code used on the wire.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::BadInput => "bad_request",
            ErrorKind::NotFound => "not_found",
            // the wire's codes are fixed (docs/http.md): a known caller
            // without the right is `unauthorized` (with HTTP 403)
            ErrorKind::Forbidden => "unauthorized",
            ErrorKind::Busy => "busy",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Internal => "internal",
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    kind: ErrorKind,
    message: String,
    hint: Option<String>,
}

impl EngineError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> EngineError {
        EngineError {
            kind,
            message: message.into(),
            hint: None,
        }
    }

    pub fn bad_input(message: impl Into<String>) -> EngineError {
        EngineError::new(ErrorKind::BadInput, message)
    }

    pub fn not_found(message: impl Into<String>) -> EngineError {
        EngineError::new(ErrorKind::NotFound, message)
    }

    pub fn busy(message: impl Into<String>) -> EngineError {
        EngineError::new(ErrorKind::Busy, message)
    }

    pub fn unavailable(message: impl Into<String>) -> EngineError {
        EngineError::new(ErrorKind::Unavailable, message)
    }

    pub fn internal(message: impl Into<String>) -> EngineError {
        EngineError::new(ErrorKind::Internal, message)
    }

    /// A run stopped on request before it finished (what it committed stays).
    pub fn stopped() -> EngineError {
        EngineError::unavailable("stopped before it finished")
            .with_hint("the next run resumes where this one stopped")
    }

    /// What to do next, shown after the message.
    pub fn with_hint(mut self, hint: impl Into<String>) -> EngineError {
        self.hint = Some(hint.into());
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// An embedding model's error: the user's (a bad directory, a refused
    /// key) or the endpoint's.
    pub fn from_embed(e: ken_embed::EmbedError) -> EngineError {
        if e.is_user_error() {
            EngineError::bad_input(e.to_string())
        } else {
            EngineError::unavailable(e.to_string())
        }
    }
}

impl From<SourceError> for EngineError {
    fn from(e: SourceError) -> Self {
        let kind = match &e {
            SourceError::NoSuchPath(_) | SourceError::NoSuchFile { .. } => ErrorKind::NotFound,
            SourceError::Clone { .. } => ErrorKind::Unavailable,
            e if e.is_user_error() => ErrorKind::BadInput,
            _ => ErrorKind::Internal,
        };
        EngineError::new(kind, e.to_string())
    }
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        match &e {
            StoreError::Locked(_) => EngineError::busy(e.to_string()),
            StoreError::Incompatible(_) => EngineError::unavailable(e.to_string()),
            _ => EngineError::internal(e.to_string()),
        }
    }
}

pub type Result<T> = std::result::Result<T, EngineError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_their_causes() {
        let locked: EngineError = StoreError::Locked("pid 1".into()).into();
        assert_eq!(locked.kind(), ErrorKind::Busy);
        let rev: EngineError = SourceError::UnknownRev {
            rev: "x".into(),
            repo: "r".into(),
        }
        .into();
        assert_eq!(rev.kind(), ErrorKind::BadInput);
        let path: EngineError = SourceError::NoSuchPath("/nope".into()).into();
        assert_eq!(path.kind(), ErrorKind::NotFound);
        let e = EngineError::not_found("no repository named `x`").with_hint("run `ken status`");
        assert_eq!(e.to_string(), "no repository named `x`");
        assert_eq!(e.hint(), Some("run `ken status`"));
        assert_eq!(e.kind().code(), "not_found");
    }
}
