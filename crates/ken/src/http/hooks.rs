//! Push webhooks. The signature is checked, in constant time, before the
//! payload is parsed; a push names a repository and a commit, never where
//! to fetch from (the engine fetches from the source the repository was
//! indexed from).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use ken_engine::{Push, PushOutcome};
use serde::Deserialize;
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::App;
use super::error::{ApiError, ApiResult, RawBody, waiting};
use crate::wire;

/// Is `header` (`sha256=<hex>`) the HMAC-SHA256 of `body` under `secret`?
pub fn github_signature_ok(secret: &[u8], body: &[u8], header: &str) -> bool {
    let Some(hex) = header.trim().strip_prefix("sha256=") else {
        return false;
    };
    let Some(sig) = decode_hex(hex) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&sig).is_ok()
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() > 256 {
        return None;
    }
    ken_core::decode_hex(s)
}

fn secret(app: &App) -> ApiResult<&[u8]> {
    match app.cfg.webhook_secret.as_deref() {
        Some(s) if !s.is_empty() => Ok(s.as_bytes()),
        // without a secret nothing could be checked: the route is off
        _ => Err(ApiError::not_found(
            "webhooks are off: the server has no webhook secret (set KEN_WEBHOOK_SECRET)",
        )),
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// What a delivery is known by: its body. A redelivery repeats the body,
/// and so does a replay, whatever delivery id (a header no signature
/// covers) it comes with; two pushes never have the same body (each says
/// where the branch was before).
fn delivery_key(host: &str, body: &[u8]) -> String {
    use sha2::Digest;
    format!("{host}:{}", ken_core::encode_hex(&Sha256::digest(body)))
}

#[derive(Debug, Deserialize)]
struct GithubPush {
    #[serde(rename = "ref")]
    git_ref: String,
    after: String,
    repository: GithubRepo,
}

#[derive(Debug, Deserialize)]
struct GithubRepo {
    full_name: Option<String>,
    name: Option<String>,
    default_branch: Option<String>,
}

/// Push webhook (GitHub): `X-Hub-Signature-256` checked before anything else.
#[utoipa::path(
    post,
    path = "/hooks/github",
    tag = "webhooks",
    request_body(content = Object, description = "GitHub's push event payload", content_type = "application/json"),
    params(
        ("X-Hub-Signature-256" = String, Header, description = "sha256=HMAC of the body with the webhook secret"),
        ("X-GitHub-Event" = Option<String>, Header, description = "push (others are acknowledged and ignored)"),
        ("X-GitHub-Delivery" = Option<String>, Header, description = "delivery id (not used: a delivery is known by its signed body, so a redelivery or a replay queues nothing new)"),
    ),
    responses(
        (status = 202, description = "an index job is queued (or was, for this commit)", body = wire::Queued),
        (status = 200, description = "nothing to do, and why", body = wire::Ignored),
    )
)]
pub async fn github(
    State(app): State<App>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> ApiResult<Response> {
    let secret = secret(&app)?;
    let Some(sig) = header(&headers, "x-hub-signature-256") else {
        return Err(ApiError::unauthorized("missing X-Hub-Signature-256"));
    };
    if !github_signature_ok(secret, &body, sig) {
        return Err(ApiError::unauthorized(
            "X-Hub-Signature-256 does not match the body",
        ));
    }
    match header(&headers, "x-github-event").unwrap_or("push") {
        "push" => {}
        other => return Ok(ignored(format!("{other} events are not used"))),
    }
    let p: GithubPush = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("not a push payload: {e}")))?;
    let push = Push {
        full_name: p.repository.full_name,
        name: p.repository.name,
        git_ref: p.git_ref,
        after: p.after,
        default_branch: p.repository.default_branch,
        delivery: Some(delivery_key("github", &body)),
    };
    handle(&app, push).await
}

#[derive(Debug, Deserialize)]
struct GitlabPush {
    #[serde(rename = "ref")]
    git_ref: String,
    after: String,
    project: GitlabProject,
}

#[derive(Debug, Deserialize)]
struct GitlabProject {
    path_with_namespace: Option<String>,
    name: Option<String>,
    default_branch: Option<String>,
}

/// Push webhook (GitLab): `X-Gitlab-Token` must equal the webhook secret.
#[utoipa::path(
    post,
    path = "/hooks/gitlab",
    tag = "webhooks",
    request_body(content = Object, description = "GitLab's push hook payload", content_type = "application/json"),
    params(
        ("X-Gitlab-Token" = String, Header, description = "the webhook secret"),
        ("X-Gitlab-Event" = Option<String>, Header, description = "Push Hook (others are acknowledged and ignored)"),
    ),
    responses(
        (status = 202, description = "an index job is queued (or was, for this commit)", body = wire::Queued),
        (status = 200, description = "nothing to do, and why", body = wire::Ignored),
    )
)]
pub async fn gitlab(
    State(app): State<App>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> ApiResult<Response> {
    let secret = secret(&app)?;
    let Some(token) = header(&headers, "x-gitlab-token") else {
        return Err(ApiError::unauthorized("missing X-Gitlab-Token"));
    };
    if !bool::from(token.as_bytes().ct_eq(secret)) {
        return Err(ApiError::unauthorized(
            "X-Gitlab-Token is not the webhook secret",
        ));
    }
    match header(&headers, "x-gitlab-event").unwrap_or("Push Hook") {
        "Push Hook" => {}
        other => return Ok(ignored(format!("{other} events are not used"))),
    }
    let p: GitlabPush = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("not a push payload: {e}")))?;
    let push = Push {
        full_name: p.project.path_with_namespace,
        name: p.project.name,
        git_ref: p.git_ref,
        after: p.after,
        default_branch: p.project.default_branch,
        delivery: Some(delivery_key("gitlab", &body)),
    };
    handle(&app, push).await
}

async fn handle(app: &App, push: Push) -> ApiResult<Response> {
    let engine = app.engine.clone();
    // a few SQLite writes: not queued behind searches (GitHub waits 10 s at most)
    match waiting(move || engine.push(&push)).await? {
        PushOutcome::Queued { job, new } => Ok((
            StatusCode::ACCEPTED,
            Json(wire::Queued {
                job: job.id.clone(),
                new,
                status: wire::Job::from(job.as_ref()),
            }),
        )
            .into_response()),
        PushOutcome::Ignored(why) => Ok(ignored(why)),
    }
}

fn ignored(why: String) -> Response {
    (StatusCode::OK, Json(wire::Ignored { ignored: why })).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        // the example of GitHub's documentation
        let secret = b"It's a Secret to Everybody";
        let body = b"Hello, World!";
        let good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert!(github_signature_ok(secret, body, good));
        assert!(!github_signature_ok(secret, b"Hello, World?", good));
        assert!(!github_signature_ok(b"other", body, good));
        assert!(!github_signature_ok(
            secret,
            body,
            &good.replace("sha256=", "sha1=")
        ));
        assert!(!github_signature_ok(secret, body, "sha256=zz"));
        assert!(!github_signature_ok(secret, body, "sha256="));
    }
}
