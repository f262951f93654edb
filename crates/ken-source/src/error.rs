use std::path::PathBuf;

/// Errors of the source layer. The first group is the user's to fix (the
/// message says how); the rest are failures of ours or of the environment.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{0} does not exist")]
    NoSuchPath(PathBuf),
    #[error(
        "{0} is not a git repository (neither a working tree nor a .git directory); run `git init` there and commit, or point at the repository's root"
    )]
    NotARepository(PathBuf),
    #[error(
        "unknown revision `{rev}` in {repo}: check the name with `git log` (branches, tags and commit ids work)"
    )]
    UnknownRev { rev: String, repo: String },
    #[error("{path} does not exist in commit {rev}: check the path with `git ls-tree -r {rev}`")]
    NoSuchFile { path: String, rev: String },
    #[error(
        "the repository {0} has no commits yet: commit something first, or index its working tree without --rev"
    )]
    EmptyRepository(String),
    #[error(
        "refused to fetch {url}: {why} (an operator can allow private and local remotes with allow_private_urls = true)"
    )]
    RefusedUrl { url: String, why: String },
    #[error("could not clone {url}: {message}")]
    Clone { url: String, message: String },
    /// The code host's API refused or could not find what was asked (a
    /// token, an owner, a rate limit past the allowed wait).
    #[error("{url}: {message}")]
    Host { url: String, message: String },
    /// The code host's API failed or could not be reached.
    #[error("{url}: {message}")]
    HostService { url: String, message: String },
    #[error("git error: {0}")]
    Git(String),
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SourceError {
    /// True when the user can fix it by changing what they asked for.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            SourceError::NoSuchPath(_)
                | SourceError::NotARepository(_)
                | SourceError::UnknownRev { .. }
                | SourceError::NoSuchFile { .. }
                | SourceError::EmptyRepository(_)
                | SourceError::Clone { .. }
                | SourceError::RefusedUrl { .. }
                | SourceError::Host { .. }
        )
    }
}

pub(crate) fn git_err(e: impl std::fmt::Display) -> SourceError {
    SourceError::Git(e.to_string())
}
