/// Errors of a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "another `ken index` is updating this index ({0}); wait for it to finish, or stop it — a killed indexer leaves the index consistent"
    )]
    Locked(String),
    #[error(
        "the index at {0} was made by a newer or incompatible version of ken; delete it and index again"
    )]
    Incompatible(String),
    #[error("SQLite: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("lexical index: {0}")]
    Lexical(#[from] tantivy::TantivyError),
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    #[error("{0}")]
    Other(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Postgres(e.to_string())
    }
}

impl From<tantivy::directory::error::OpenDirectoryError> for StoreError {
    fn from(e: tantivy::directory::error::OpenDirectoryError) -> Self {
        StoreError::Other(e.to_string())
    }
}
