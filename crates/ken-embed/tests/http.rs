//! The HTTP embedder against a real, scripted HTTP/1.1 server on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ken_embed::{EmbedError, Embedder, HttpConfig, HttpEmbedder};
use serde_json::{Value, json};

const KEY: &str = "sk-test-0123456789abcdef";

/// One scripted answer: status, extra headers, body built from the request
/// body, and a delay before answering.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Box<dyn Fn(&Value) -> String + Send>,
    delay: Duration,
}

fn reply(status: u16, body: impl Fn(&Value) -> String + Send + 'static) -> Reply {
    Reply {
        status,
        headers: Vec::new(),
        body: Box::new(body),
        delay: Duration::ZERO,
    }
}

/// A good answer: one vector per input, `[len(text), 1, 2]` (unnormalised),
/// listed in reverse order of `index`.
fn good() -> Reply {
    reply(200, |req| {
        let inputs = req["input"].as_array().unwrap();
        let mut data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                json!({"object": "embedding", "index": i,
                       "embedding": [t.as_str().unwrap().len() as f32, 1.0, 2.0]})
            })
            .collect();
        data.reverse();
        json!({"object": "list", "data": data, "model": req["model"],
               "usage": {"prompt_tokens": 1, "total_tokens": 1}})
        .to_string()
    })
}

struct Seen {
    head: String,
    body: Value,
}

struct Server {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `replies` in order, one connection each, then stops.
    fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let thread = std::thread::spawn(move || {
            for r in replies {
                let (stream, _) = listener.accept().unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                    head.push_str(&line);
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0u8; len];
                reader.read_exact(&mut body).unwrap();
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let text = (r.body)(&body);
                log.lock().unwrap().push(Seen { head, body });
                std::thread::sleep(r.delay);
                let mut out = format!(
                    "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                    r.status,
                    text.len()
                );
                for (k, v) in &r.headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                out.push_str(&text);
                let mut s = stream;
                let _ = s.write_all(out.as_bytes());
            }
        });
        Server {
            base_url,
            seen,
            thread: Some(thread),
        }
    }

    fn requests(&mut self) -> usize {
        self.seen.lock().unwrap().len()
    }

    fn join(&mut self) {
        self.thread.take().unwrap().join().unwrap();
    }
}

fn config(base_url: &str) -> HttpConfig {
    let mut cfg = HttpConfig::new(base_url, "text-embedding-test");
    cfg.api_key = Some(KEY.to_string());
    cfg.timeout = Duration::from_secs(5);
    cfg.backoff = Duration::from_millis(10);
    cfg
}

#[test]
fn good_response_out_of_order_is_reordered_and_normalised() {
    let mut server = Server::start(vec![good()]);
    let emb = HttpEmbedder::new(config(&server.base_url)).unwrap();
    assert_eq!(emb.dim(), 0, "unknown before the first response");
    let texts = ["a", "bbbb", "cc"];
    let v = emb.embed_documents(&texts).unwrap();
    server.join();
    assert_eq!(emb.dim(), 3);
    for (t, v) in texts.iter().zip(&v) {
        let n = ((t.len() * t.len()) as f32 + 5.0).sqrt();
        assert!((v[0] - t.len() as f32 / n).abs() < 1e-6, "{t}: {v:?}");
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    }
    let seen = server.seen.lock().unwrap();
    assert!(
        seen[0].head.starts_with("POST /v1/embeddings HTTP/1.1"),
        "{}",
        seen[0].head
    );
    assert!(
        seen[0].head.contains(&format!("Bearer {KEY}"))
            || seen[0].head.contains(&format!("bearer {KEY}"))
    );
    assert_eq!(seen[0].body["model"], "text-embedding-test");
    assert_eq!(seen[0].body["input"], json!(["a", "bbbb", "cc"]));
    assert_eq!(
        emb.id(),
        format!("http:{}:text-embedding-test", server.base_url)
    );
}

#[test]
fn batches_keep_order() {
    let mut server = Server::start(vec![good(), good(), good()]);
    let mut cfg = config(&server.base_url);
    cfg.batch_size = 2;
    let emb = HttpEmbedder::new(cfg).unwrap();
    let texts = ["a", "bb", "ccc", "dddd", "eeeee"];
    let v = emb.embed_documents(&texts).unwrap();
    server.join();
    assert_eq!(server.requests(), 3);
    let lens: Vec<f32> = v.iter().map(|v| v[0] / v[1]).collect();
    assert_eq!(lens, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
}

#[test]
fn empty_input_sends_nothing() {
    let emb = HttpEmbedder::new(config("http://127.0.0.1:9/v1")).unwrap();
    assert!(emb.embed_documents(&[]).unwrap().is_empty());
}

#[test]
fn unauthorised_is_a_user_error_naming_the_variable_and_hiding_the_key() {
    let mut server = Server::start(vec![reply(401, |_| {
        json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}).to_string()
    })]);
    let emb = HttpEmbedder::new(config(&server.base_url)).unwrap();
    let e = emb.embed_query("x").unwrap_err();
    server.join();
    assert!(matches!(e, EmbedError::Auth { status: 401, .. }), "{e:?}");
    assert!(e.is_user_error());
    let msg = e.to_string();
    assert!(msg.contains("KEN_EMBED_API_KEY"), "{msg}");
    assert!(!msg.contains(KEY), "{msg}");
    assert!(!format!("{e:?}").contains(KEY));
    assert_eq!(server.requests(), 1, "no retry on 401");
}

#[test]
fn the_key_never_shows_in_debug_output() {
    let cfg = config("http://127.0.0.1:9/v1");
    assert!(!format!("{cfg:?}").contains(KEY));
    let emb = HttpEmbedder::new(cfg).unwrap();
    let dbg = format!("{emb:?}");
    assert!(!dbg.contains(KEY) && dbg.contains("redacted"), "{dbg}");
}

#[test]
fn rate_limit_then_success_honours_retry_after() {
    let mut limited = reply(429, |_| r#"{"error": "slow down"}"#.to_string());
    limited.headers.push(("Retry-After", "0".to_string()));
    let mut server = Server::start(vec![limited, good()]);
    let mut cfg = config(&server.base_url);
    cfg.backoff = Duration::from_secs(30); // would hang the test if Retry-After were ignored
    let emb = HttpEmbedder::new(cfg).unwrap();
    let t = Instant::now();
    let v = emb.embed_query("hello").unwrap();
    server.join();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(v.len(), 3);
    assert_eq!(server.requests(), 2);
}

#[test]
fn persistent_rate_limit_gives_up() {
    let limited = || {
        let mut r = reply(429, |_| "busy".to_string());
        r.headers.push(("Retry-After", "0".to_string()));
        r
    };
    let mut server = Server::start(vec![limited(), limited(), limited()]);
    let mut cfg = config(&server.base_url);
    cfg.max_retries = 2;
    let e = HttpEmbedder::new(cfg)
        .unwrap()
        .embed_query("x")
        .unwrap_err();
    server.join();
    assert!(
        matches!(e, EmbedError::RateLimited { attempts: 3, .. }),
        "{e:?}"
    );
    assert!(!e.is_user_error());
}

#[test]
fn server_errors_are_retried() {
    let mut server = Server::start(vec![reply(503, |_| "overloaded".into()), good()]);
    let v = HttpEmbedder::new(config(&server.base_url))
        .unwrap()
        .embed_query("x")
        .unwrap();
    server.join();
    assert_eq!(v.len(), 3);
    assert_eq!(server.requests(), 2);
}

#[test]
fn a_slow_server_times_out() {
    let mut slow = good();
    slow.delay = Duration::from_millis(1500);
    let mut server = Server::start(vec![slow]);
    let mut cfg = config(&server.base_url);
    cfg.timeout = Duration::from_millis(300);
    cfg.max_retries = 0;
    let t = Instant::now();
    let e = HttpEmbedder::new(cfg)
        .unwrap()
        .embed_query("x")
        .unwrap_err();
    assert!(
        t.elapsed() < Duration::from_millis(1400),
        "{:?}",
        t.elapsed()
    );
    server.join();
    assert!(matches!(e, EmbedError::Timeout { .. }), "{e:?}");
    assert!(!e.is_user_error());
}

#[test]
fn malformed_json_is_reported() {
    let mut server = Server::start(vec![reply(200, |_| {
        r#"{"data": [{"index": 0, "embedding": [1.0, "#.into()
    })]);
    let e = HttpEmbedder::new(config(&server.base_url))
        .unwrap()
        .embed_query("x")
        .unwrap_err();
    server.join();
    assert!(matches!(e, EmbedError::Malformed(_)), "{e:?}");
}

#[test]
fn a_wrong_number_of_vectors_is_reported() {
    let mut server = Server::start(vec![reply(200, |_| {
        json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}).to_string()
    })]);
    let e = HttpEmbedder::new(config(&server.base_url))
        .unwrap()
        .embed_documents(&["a", "b"])
        .unwrap_err();
    server.join();
    assert!(
        matches!(&e, EmbedError::Malformed(m) if m.contains("2 texts")),
        "{e:?}"
    );
}

#[test]
fn a_wrong_dimension_is_reported() {
    let mut server = Server::start(vec![good()]);
    let mut cfg = config(&server.base_url);
    cfg.dim = Some(4);
    let emb = HttpEmbedder::new(cfg).unwrap();
    assert_eq!(emb.dim(), 4);
    let e = emb.embed_query("x").unwrap_err();
    server.join();
    assert!(
        matches!(&e, EmbedError::Malformed(m) if m.contains("dimension 3")),
        "{e:?}"
    );
}

#[test]
fn not_found_points_at_the_base_url() {
    let mut server = Server::start(vec![reply(404, |_| "404 page not found".into())]);
    let e = HttpEmbedder::new(config(&server.base_url))
        .unwrap()
        .embed_query("x")
        .unwrap_err();
    server.join();
    assert!(e.is_user_error());
    assert!(e.to_string().contains("KEN_EMBED_BASE_URL"), "{e}");
}

#[test]
fn base_urls() {
    let u = |b: &str| HttpEmbedder::new(config(b)).map(|e| e.url().to_string());
    assert_eq!(u("http://h:1/v1").unwrap(), "http://h:1/v1/embeddings");
    assert_eq!(u("http://h:1/v1/").unwrap(), "http://h:1/v1/embeddings");
    assert_eq!(
        u("https://h/v1/embeddings").unwrap(),
        "https://h/v1/embeddings"
    );
    assert_eq!(u("http://h:1").unwrap(), "http://h:1/embeddings");
    let e = u("localhost:11434/v1").unwrap_err();
    assert!(matches!(e, EmbedError::BadConfig(_)) && e.is_user_error());
    let mut cfg = config("http://h/v1");
    cfg.model = String::new();
    assert!(HttpEmbedder::new(cfg).unwrap_err().is_user_error());
}

#[test]
fn connection_refused_is_a_failure() {
    // Bind then drop a listener to get a port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cfg = config(&format!("http://127.0.0.1:{port}/v1"));
    cfg.max_retries = 1;
    let e = HttpEmbedder::new(cfg)
        .unwrap()
        .embed_query("x")
        .unwrap_err();
    assert!(
        matches!(e, EmbedError::Server { status: None, .. }),
        "{e:?}"
    );
    assert!(!e.is_user_error());
}
