//! `ken serve`: the HTTP API, push webhooks and MCP over streamable HTTP,
//! all over one shared [`Engine`].
//!
//! Connections are served by hyper directly (not `axum::serve`) so that a
//! client that sends its headers too slowly is cut off. Every response,
//! failures included, is JSON (or SSE for streamed answers). A stop
//! (Ctrl-C, SIGTERM) refuses new connections, lets requests in flight
//! finish (up to 30 s), and asks a running index job to stop at its next
//! batch; the job stays queued and resumes on the next start.

mod api;
mod auth;
mod conn;
mod error;
mod hooks;
pub mod openapi;
mod ui;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, StatusCode};
use axum::response::IntoResponse;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use ken_engine::{Engine, EngineError};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};

use self::error::ApiError;
use crate::args::ServeArgs;
use crate::config::ServerConfig;
use crate::output::Output;

/// What every handler shares.
#[derive(Clone)]
pub struct App {
    pub engine: Arc<Engine>,
    pub cfg: Arc<ServerConfig>,
    pub work: crate::work::Workers,
}

/// How long a stop waits for requests in flight.
const DRAIN: Duration = Duration::from_secs(30);

/// Build the whole router: API, webhooks, MCP, the OpenAPI document.
pub fn router(app: App, mcp_hosts: Option<Vec<String>>) -> Router {
    let (api, doc) = openapi::routes();
    let doc = Arc::new(doc);
    let mcp = crate::mcp::http_service(app.engine.clone(), app.work.clone(), mcp_hosts);
    let guarded = Router::new().merge(api).nest_service("/mcp", mcp).layer(
        axum::middleware::from_fn_with_state(app.clone(), auth::require_token),
    );
    let open = Router::new()
        .merge(ui::routes())
        .route("/healthz", axum::routing::get(api::healthz))
        .route(
            "/openapi.json",
            axum::routing::get(move || {
                let doc = doc.clone();
                async move { axum::Json(doc.as_ref().clone()) }
            }),
        )
        .route("/hooks/github", axum::routing::post(hooks::github))
        .route("/hooks/gitlab", axum::routing::post(hooks::gitlab));
    let timeout = app.cfg.request_timeout;
    let mut router = Router::new()
        .merge(open)
        .merge(guarded)
        .fallback(|| async { ApiError::not_found("no such route (see /openapi.json)") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "bad_request",
                "this route does not take that method (see /openapi.json)",
            )
        })
        .layer(DefaultBodyLimit::max(app.cfg.max_body_bytes))
        .layer(axum::middleware::map_response(close_unread_bodies))
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(|_: tower::BoxError| async {
                    ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "unavailable",
                        "the request took too long",
                    )
                }))
                .timeout(timeout),
        )
        .layer(CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                ApiError::internal("the request failed").into_response()
            },
        ))
        .with_state(app.clone());
    if !app.cfg.cors_origins.is_empty() {
        let origins: Vec<HeaderValue> = app
            .cfg
            .cors_origins
            .iter()
            .filter_map(|o| o.parse().ok())
            .collect();
        router = router.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods(tower_http::cors::Any)
                .allow_headers(tower_http::cors::Any),
        );
    }
    router
}

/// A request refused for its size was not read to its end, so hyper
/// closes the connection after the answer: say so, or the client's next
/// request on it fails.
async fn close_unread_bodies(mut r: axum::response::Response) -> axum::response::Response {
    if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
        r.headers_mut().insert(
            axum::http::header::CONNECTION,
            HeaderValue::from_static("close"),
        );
    }
    r
}

fn parse_addr(addr: &str) -> Result<SocketAddr> {
    let mut all = addr.to_socket_addrs().map_err(|e| {
        EngineError::bad_input(format!("cannot listen on `{addr}`: {e}"))
            .with_hint("give HOST:PORT, e.g. 127.0.0.1:7878")
    })?;
    all.next()
        .ok_or_else(|| EngineError::bad_input(format!("`{addr}` has no address")).into())
}

/// Run the server until a stop signal.
pub fn serve(engine: Engine, cfg: ServerConfig, args: ServeArgs, out: &Output) -> Result<i32> {
    let addr = parse_addr(&args.addr)?;
    let loopback = addr.ip().is_loopback();
    let tokens = engine.active_tokens()?;
    if !loopback && tokens == 0 {
        return Err(EngineError::bad_input(format!(
            "refusing to listen on {addr} (not loopback) with no API token"
        ))
        .with_hint("create one first: `ken token create --repo NAME --scope read`")
        .into());
    }
    let engine = Arc::new(engine);
    eprintln!("loading indexes and models …");
    engine.warm()?;
    let stop = Arc::new(AtomicBool::new(false));
    let runner = (!args.no_jobs).then(|| {
        let (engine, stop) = (engine.clone(), stop.clone());
        std::thread::Builder::new()
            .name("ken-jobs".into())
            .spawn(move || {
                if let Err(e) = engine.run_jobs(&stop) {
                    eprintln!("error: the job runner stopped: {e}");
                }
            })
    });
    let runner = runner.transpose().context("cannot start the job runner")?;
    // sources without webhooks: their heads are polled, and what moved is queued
    let poller = match engine.settings().poll_interval.filter(|_| !args.no_jobs) {
        Some(every) => {
            let (engine, stop) = (engine.clone(), stop.clone());
            Some(
                std::thread::Builder::new()
                    .name("ken-poll".into())
                    .spawn(move || {
                        engine.poll_every(every, &stop, &|e| eprintln!("warning: poll: {e}"))
                    })
                    .context("cannot start the poller")?,
            )
        }
        None => None,
    };
    let app = App {
        engine: engine.clone(),
        cfg: Arc::new(cfg),
        work: crate::work::Workers::for_machine(),
    };
    // Loopback: MCP's own Host check stays on (DNS rebinding); elsewhere the
    // bearer token is the guard and the operator's host names vary.
    let mcp_hosts = if loopback { None } else { Some(Vec::new()) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("ken-http")
        .build()
        .context("cannot start the async runtime")?;
    let result = rt.block_on(run(app, addr, mcp_hosts, tokens, out));
    // stop the job runner at its next batch, then wait for it
    stop.store(true, Ordering::Relaxed);
    if let Some(r) = runner {
        let _ = r.join();
    }
    if let Some(p) = poller {
        let _ = p.join();
    }
    drop(rt);
    result.map(|_| 0)
}

async fn run(
    app: App,
    addr: SocketAddr,
    mcp_hosts: Option<Vec<String>>,
    tokens: u64,
    out: &Output,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| EngineError::unavailable(format!("cannot listen on {addr}: {e}")))?;
    let local = listener.local_addr()?;
    let header_timeout = app.cfg.header_timeout;
    let write_stall = app.cfg.request_timeout;
    let max_connections = conn::connection_limit(app.cfg.max_connections, conn::open_file_limit());
    let router = router(app, mcp_hosts);
    if out.json {
        out.print_value(&serde_json::json!({"listening": local.to_string()}));
    } else {
        outln!("listening on http://{local}");
        if tokens == 0 {
            eprintln!(
                "note: no API tokens yet; requests need one: `ken token create --repo NAME --scope read`"
            );
        }
    }
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown_signal());
    // every connection holds a permit: past the limit, new ones wait in
    // the listen backlog until one ends (each is bounded in time)
    let permits = Arc::new(tokio::sync::Semaphore::new(max_connections));
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        tokio::select! {
            conn = listener.accept() => {
                let (stream, _peer) = match conn {
                    Ok(c) => c,
                    Err(_) => {
                        // out of files or a reset before accept: do not spin
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(router.clone());
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let _permit = permit;
                    // a socket that never sends a byte is closed like a slow header
                    if !conn::first_byte(&stream, header_timeout).await {
                        return;
                    }
                    let mut builder = Builder::new(TokioExecutor::new());
                    builder
                        .http1()
                        .timer(TokioTimer::new())
                        .header_read_timeout(header_timeout)
                        .keep_alive(true);
                    let io = TokioIo::new(conn::WriteDeadline::new(stream, write_stall));
                    let conn = builder
                        .serve_connection_with_upgrades(io, service)
                        .into_owned();
                    let _ = watcher.watch(conn).await;
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    eprintln!("stopping: finishing requests in flight …");
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
