//! Engine errors, split into the user's to fix and ours.

use ken_source::SourceError;
use ken_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request is wrong; the message says how to fix it.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
}

impl EngineError {
    /// Exit code for the command line: 2 for the user's errors, 1 for ours.
    pub fn exit_code(&self) -> i32 {
        match self {
            EngineError::Usage(_) => 2,
            EngineError::Source(e) if e.is_user_error() => 2,
            EngineError::Store(StoreError::Locked(_)) => 3,
            _ => 1,
        }
    }
}

pub type Result<T> = std::result::Result<T, EngineError>;
