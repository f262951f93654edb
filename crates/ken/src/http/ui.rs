//! The web pages: one HTML shell, a stylesheet and a script, embedded in
//! the binary (nothing from elsewhere: no CDN, no web fonts). The pages are
//! a client of the public API only; they hold no data themselves, so they
//! need no token — the API calls they make do.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("ui/index.html");
const SCRIPT: &str = include_str!("ui/app.js");
const STYLE: &str = include_str!("ui/app.css");

/// The pages' paths (the script routes among them).
pub const PAGES: &[&str] = &[
    "/", "/search", "/file", "/ask", "/people", "/person", "/impact", "/repos", "/report",
    "/signin",
];

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // only our own script and style; no frames
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        ),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let mut r = Router::new()
        .route(
            "/assets/app.js",
            get(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/assets/app.css",
            get(|| async { asset(STYLE, "text/css; charset=utf-8") }),
        );
    for page in PAGES {
        r = r.route(
            page,
            get(|| async { asset(INDEX, "text/html; charset=utf-8") }),
        );
    }
    r
}
