//! API tokens: created with a scope and the repositories they may see,
//! shown once, kept only as a SHA-256 hash (a token is 256 random bits, so
//! a fast hash is enough: there is nothing to guess).

use serde::Serialize;

use crate::access::{Access, Principal, Scope, hash_token, random_hex};
use crate::{Engine, EngineError, Result};

/// A token as listed: never the token itself.
#[derive(Debug, Clone, Serialize)]
pub struct TokenInfo {
    pub id: String,
    pub scope: String,
    pub repos: Vec<String>,
    pub label: Option<String>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub last_used_at: Option<i64>,
}

/// A new token: shown once.
#[derive(Debug, Clone, Serialize)]
pub struct NewToken {
    pub token: String,
    pub id: String,
}

impl Engine {
    /// Create a token for `repos` (`*`: all) with `scope`.
    pub fn create_token(
        &self,
        repos: &[String],
        scope: Scope,
        label: Option<String>,
    ) -> Result<NewToken> {
        let repos: Vec<String> = repos
            .iter()
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect();
        if repos.is_empty() {
            return Err(EngineError::bad_input("a token needs repositories")
                .with_hint("give --repo NAME (repeatable) or --repo '*' for all"));
        }
        for r in repos.iter().filter(|r| *r != "*") {
            ken_core::repo_name::check(r)
                .map_err(|why| EngineError::bad_input(format!("--repo {why}")))?;
        }
        let token = format!("ken_{}", random_hex(32)?);
        let id = format!("tok_{}", random_hex(6)?);
        self.home_store()?.add_token(&ken_store::TokenRecord {
            id: id.clone(),
            hash: hash_token(&token),
            scope: scope.name().to_string(),
            repos,
            label,
            created_at: crate::time::now(),
            revoked_at: None,
            last_used_at: None,
        })?;
        Ok(NewToken { token, id })
    }

    pub fn list_tokens(&self) -> Result<Vec<TokenInfo>> {
        Ok(self
            .home_store()?
            .tokens()?
            .into_iter()
            .map(|t| TokenInfo {
                id: t.id,
                scope: t.scope,
                repos: t.repos,
                label: t.label,
                created_at: t.created_at,
                revoked_at: t.revoked_at,
                last_used_at: t.last_used_at,
            })
            .collect())
    }

    pub fn revoke_token(&self, id: &str) -> Result<()> {
        if self.home_store()?.revoke_token(id, crate::time::now())? {
            Ok(())
        } else {
            Err(
                EngineError::not_found(format!("no active token with id `{id}`"))
                    .with_hint("see `ken token list`"),
            )
        }
    }

    /// Tokens that are not revoked.
    pub fn active_tokens(&self) -> Result<u64> {
        Ok(self.home_store()?.active_tokens()?)
    }

    /// The principal a bearer token stands for (None: unknown or revoked).
    pub fn authenticate(&self, token: &str) -> Result<Option<Principal>> {
        let token = token.trim();
        if token.is_empty() || token.len() > 200 {
            return Ok(None);
        }
        let home = self.home_store()?;
        let Some(t) = home.token_by_hash(&hash_token(token))? else {
            return Ok(None);
        };
        if t.revoked_at.is_some() {
            return Ok(None);
        }
        let _ = home.touch_token(&t.id, crate::time::now());
        let access = if t.repos.iter().any(|r| r == "*") {
            Access::All
        } else {
            Access::Only(t.repos.clone())
        };
        Ok(Some(Principal {
            token: Some(t.id),
            scope: Scope::parse(&t.scope)?,
            access,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Settings;

    #[test]
    fn tokens_are_kept_as_hashes_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let e = Engine::new(Settings::new(dir.path().to_path_buf()));
        let t = e
            .create_token(&["flask".into()], Scope::Read, None)
            .unwrap();
        assert!(t.token.starts_with("ken_") && t.token.len() == 68);
        let db = std::fs::read(dir.path().join("server.sqlite")).unwrap();
        let needle = t.token.as_bytes();
        assert!(
            !db.windows(needle.len()).any(|w| w == needle),
            "the token itself is not stored"
        );
        let p = e.authenticate(&t.token).unwrap().unwrap();
        assert_eq!(p.scope, Scope::Read);
        assert_eq!(p.access, Access::Only(vec!["flask".into()]));
        assert!(p.require(Scope::Read).is_ok());
        assert_eq!(
            p.require(Scope::Index).unwrap_err().kind(),
            crate::ErrorKind::Forbidden
        );
        assert!(e.authenticate("ken_wrong").unwrap().is_none());
        e.revoke_token(&t.id).unwrap();
        assert!(e.authenticate(&t.token).unwrap().is_none());
        assert_eq!(
            e.revoke_token(&t.id).unwrap_err().kind(),
            crate::ErrorKind::NotFound
        );
        let all = e.create_token(&["*".into()], Scope::Admin, None).unwrap();
        assert_eq!(
            e.authenticate(&all.token).unwrap().unwrap().access,
            Access::All
        );
        assert!(e.create_token(&[], Scope::Read, None).is_err());
    }

    #[test]
    fn a_token_names_repositories_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let e = Engine::new(Settings::new(dir.path().to_path_buf()));
        // its storage key is not another name for a repository
        let t = e.create_token(&["a__b".into()], Scope::Read, None).unwrap();
        let p = e.authenticate(&t.token).unwrap().unwrap();
        assert!(p.access.allows("a__b"));
        assert!(!p.access.allows("a/b"));
        let t = e.create_token(&["x-y".into()], Scope::Read, None).unwrap();
        let p = e.authenticate(&t.token).unwrap().unwrap();
        assert!(!p.access.allows("x y"));
        assert!(!p.access.allows("x\0y"));
        for bad in ["x\0y", "..", ".hidden", "a//b", "x\ny"] {
            assert_eq!(
                e.create_token(&[bad.to_string()], Scope::Read, None)
                    .unwrap_err()
                    .kind(),
                crate::ErrorKind::BadInput,
                "{bad:?}"
            );
        }
    }
}
