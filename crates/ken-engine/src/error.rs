//! Engine errors: a kind (what the caller can do about it), a message, and a
//! hint on what to do next. Each edge maps the kind once: the command line
//! to an exit code, HTTP to a status and a stable `code`, MCP to a tool error.
//!
//! Messages and hints name a request's parameters and the next action in
//! the words of the edge that shows them: the engine writes `{--repo}` for
//! the parameter `repo` and `{ken:index}` for "index a repository", and
//! [`EngineError::message_for`] / [`EngineError::hint_for`] word them as a
//! flag and a command on the command line, a parameter and a route over
//! HTTP, an argument and a tool over MCP.

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

/// Who shows an error, and so how its parameters and actions are worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// `ken …`: flags and commands.
    Cli,
    /// `/api/v1`: parameters and routes.
    Http,
    /// MCP tools: arguments and tools.
    Mcp,
}

/// `text` with its `{--param}` and `{ken:action}` marks worded for `edge`.
fn word(text: &str, edge: Edge) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(end) = tail.find('}') else {
            out.push_str(tail);
            return out;
        };
        let mark = &tail[1..end];
        match worded(mark, edge) {
            Some(w) => out.push_str(&w),
            None => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

fn worded(mark: &str, edge: Edge) -> Option<String> {
    if let Some(param) = mark.strip_prefix("--") {
        if param.is_empty() || !param.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            return None;
        }
        return Some(match edge {
            Edge::Cli => format!("--{}", param.replace('_', "-")),
            Edge::Http => format!("the `{param}` parameter"),
            Edge::Mcp => format!("the `{param}` argument"),
        });
    }
    let action = mark.strip_prefix("ken:")?;
    let (cli, http, mcp) = match action {
        "index" => (
            "`ken index PATH`",
            "`POST /api/v1/repos/{name}/index` (an admin token) or `ken index PATH`",
            "the `index_repository` tool or `ken index PATH`",
        ),
        "status" => (
            "`ken status`",
            "`GET /api/v1/repos`",
            "the `repo_status` tool",
        ),
        "people" => ("`ken people`", "`GET /api/v1/people`", "`ken people`"),
        _ => return None,
    };
    Some(
        match edge {
            Edge::Cli => cli,
            Edge::Http => http,
            Edge::Mcp => mcp,
        }
        .to_string(),
    )
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", word(message, Edge::Cli))]
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

    /// The message as `edge` words it.
    pub fn message_for(&self, edge: Edge) -> String {
        word(&self.message, edge)
    }

    /// What to do next, as `edge` words it.
    pub fn hint_for(&self, edge: Edge) -> Option<String> {
        self.hint.as_deref().map(|h| word(h, edge))
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
            SourceError::Clone { .. } | SourceError::HostService { .. } => ErrorKind::Unavailable,
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
        let e = EngineError::not_found("no repository named `x`").with_hint("run {ken:status}");
        assert_eq!(e.to_string(), "no repository named `x`");
        assert_eq!(e.hint_for(Edge::Cli).as_deref(), Some("run `ken status`"));
        assert_eq!(e.kind().code(), "not_found");
    }

    #[test]
    fn each_edge_words_parameters_and_actions_its_own_way() {
        let e = EngineError::bad_input("{--since} must come before {--until}")
            .with_hint("pick one with {--repo} (a, b), or run {ken:index}");
        assert_eq!(e.to_string(), "--since must come before --until");
        assert_eq!(
            e.hint_for(Edge::Cli).unwrap(),
            "pick one with --repo (a, b), or run `ken index PATH`"
        );
        let http = e.hint_for(Edge::Http).unwrap();
        assert!(
            http.starts_with("pick one with the `repo` parameter (a, b)"),
            "{http}"
        );
        assert!(http.contains("POST /api/v1/repos/{name}/index"), "{http}");
        assert_eq!(
            e.message_for(Edge::Mcp),
            "the `since` argument must come before the `until` argument"
        );
        let max = EngineError::bad_input("x").with_hint("{--max_file_size}");
        assert_eq!(max.hint_for(Edge::Cli).unwrap(), "--max-file-size");
        // braces that are not marks stay as written
        for text in [
            "glob `{a,b}`",
            "{name}",
            "{ken:unknown}",
            "{--Bad}",
            "open {",
        ] {
            assert_eq!(word(text, Edge::Http), text);
            assert_eq!(word(text, Edge::Cli), text);
        }
    }
}
