//! Who may do what: a caller's scope and the repositories it may see, and
//! the randomness and hashing tokens are made of.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::{EngineError, Result};

/// Which repositories a caller may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    All,
    /// Only these names.
    Only(Vec<String>),
}

impl Access {
    /// May the caller see the repository named `name`? Names compare as
    /// written: a store's key for a name (`a__b` for `a/b`) is not the name.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Access::All => true,
            Access::Only(names) => names.iter().any(|n| n == name),
        }
    }
}

/// What a token may do; each scope includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Search, ask, read files, status.
    Read,
    /// Also queue index jobs.
    Index,
    /// Everything, on every repository given.
    Admin,
}

impl Scope {
    pub fn parse(s: &str) -> Result<Scope> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" => Ok(Scope::Read),
            "index" => Ok(Scope::Index),
            "admin" => Ok(Scope::Admin),
            other => Err(EngineError::bad_input(format!(
                "unknown scope `{other}`: use read, index or admin"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Index => "index",
            Scope::Admin => "admin",
        }
    }
}

/// Who is calling: a token's scope and repositories. The command line and
/// `ken mcp` over stdio act as the local user, with every right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's id (None: the local user).
    pub token: Option<String>,
    pub scope: Scope,
    pub access: Access,
}

impl Principal {
    pub fn local() -> Principal {
        Principal {
            token: None,
            scope: Scope::Admin,
            access: Access::All,
        }
    }

    /// Refuse unless the principal has `scope`.
    pub fn require(&self, scope: Scope) -> Result<()> {
        if self.scope >= scope {
            Ok(())
        } else {
            Err(EngineError::new(
                crate::ErrorKind::Forbidden,
                format!(
                    "this token's scope is `{}`; this needs `{}`",
                    self.scope.name(),
                    scope.name()
                ),
            ))
        }
    }
}

/// Hex SHA-256 of a token.
pub fn hash_token(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// `n` random bytes in hex.
pub fn random_hex(n: usize) -> Result<String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)
        .map_err(|e| EngineError::internal(format!("no randomness: {e}")))?;
    Ok(hex(&bytes))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
