//! Bearer tokens: every route but `/healthz`, `/openapi.json` and
//! `/hooks/*` needs one. The principal a token stands for (its scope and
//! repositories) goes into the request's extensions for the handlers and
//! the MCP tools.

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::App;
use super::error::ApiError;

/// The token of `Authorization: Bearer TOKEN`.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

pub async fn require_token(State(app): State<App>, mut req: Request, next: Next) -> Response {
    let Some(token) = bearer(req.headers()) else {
        return ApiError::unauthorized(
            "this needs `Authorization: Bearer TOKEN` (create a token with `ken token create`)",
        )
        .into_response();
    };
    let token = token.to_string();
    let engine = app.engine.clone();
    match tokio::task::spawn_blocking(move || engine.authenticate(&token)).await {
        Ok(Ok(Some(principal))) => {
            req.extensions_mut().insert(principal);
            next.run(req).await
        }
        Ok(Ok(None)) => ApiError::unauthorized("unknown or revoked token").into_response(),
        Ok(Err(e)) => ApiError::from(e).into_response(),
        Err(_) => ApiError::internal("could not check the token").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_are_read_from_the_header() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert("authorization", "Bearer ken_abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("ken_abc"));
        h.insert("authorization", "bearer   ken_abc  ".parse().unwrap());
        assert_eq!(bearer(&h), Some("ken_abc"));
        h.insert("authorization", "Basic a2VuOmFiYw==".parse().unwrap());
        assert_eq!(bearer(&h), None);
        h.insert("authorization", "Bearer ".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }
}
