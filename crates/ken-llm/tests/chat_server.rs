//! The chat client against a real OpenAI-compatible server on 127.0.0.1:
//! real HTTP/1.1, real SSE (chunked and not), scripted replies, recorded
//! requests.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ken_core::Language;
use ken_llm::{
    ChatClient, ChatConfig, ClaimStatus, Context, ContextChunk, ContextOptions, LlmError, Message,
    NotFoundCause, TimeoutPhase, answer_messages, ask, retry_message, validate,
};
use serde_json::{Value, json};

const KEY: &str = "sk-test-0123456789abcdefWXYZ";

/// What the server does with the next request.
enum Reply {
    /// A whole response with a `Content-Length` (connection kept alive).
    Json {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// An SSE body: `pieces` written one by one (chunked transfer encoding
    /// when `chunked`, else until the connection closes).
    Sse { pieces: Vec<String>, chunked: bool },
    /// SSE that sends `first` and then stalls for `stall`.
    SseStall { first: String, stall: Duration },
    /// Read the request, answer nothing for `stall`, close.
    Stall(Duration),
    /// Read the request and hang up without a word.
    HangUp,
}

#[derive(Debug, Clone)]
struct Recorded {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct MockServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl MockServer {
    fn start(script: Vec<Reply>) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let (reqs, scr) = (requests.clone(), script.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (reqs, scr) = (reqs.clone(), scr.clone());
                thread::spawn(move || serve(stream, &reqs, &scr));
            }
        });
        MockServer { addr, requests }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, reqs: &Mutex<Vec<Recorded>>, script: &Mutex<VecDeque<Reply>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        // Request line and headers.
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((n, v)) = h.split_once(':') {
                headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; len];
        reader.read_exact(&mut body).unwrap();
        reqs.lock().unwrap().push(Recorded {
            path,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
        let reply = script.lock().unwrap().pop_front();
        let reply = reply.unwrap_or(Reply::Json {
            status: 500,
            headers: vec![],
            body: r#"{"error":{"message":"script exhausted"}}"#.into(),
        });
        match reply {
            Reply::Json {
                status,
                headers,
                body,
            } => {
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                    body.len()
                );
                for (n, v) in headers {
                    head.push_str(&format!("{n}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if out.write_all(head.as_bytes()).is_err()
                    || out.write_all(body.as_bytes()).is_err()
                {
                    return;
                }
                continue;
            }
            Reply::Sse { pieces, chunked } => {
                let te = if chunked {
                    "Transfer-Encoding: chunked\r\nConnection: close\r\n"
                } else {
                    "Connection: close\r\n"
                };
                let _ = out.write_all(
                    format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n{te}\r\n").as_bytes(),
                );
                for p in pieces {
                    let data = if chunked {
                        let mut c = format!("{:x}\r\n", p.len()).into_bytes();
                        c.extend_from_slice(p.as_bytes());
                        c.extend_from_slice(b"\r\n");
                        c
                    } else {
                        p.into_bytes()
                    };
                    let _ = out.write_all(&data);
                    let _ = out.flush();
                    thread::sleep(Duration::from_millis(2));
                }
                if chunked {
                    let _ = out.write_all(b"0\r\n\r\n");
                }
                return;
            }
            Reply::SseStall { first, stall } => {
                let _ = out.write_all(
                    format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{first}").as_bytes(),
                );
                let _ = out.flush();
                thread::sleep(stall);
                return;
            }
            Reply::Stall(d) => {
                thread::sleep(d);
                return;
            }
            Reply::HangUp => return,
        }
    }
}

fn json_reply(body: Value) -> Reply {
    Reply::Json {
        status: 200,
        headers: vec![],
        body: body.to_string(),
    }
}

fn error_reply(status: u16, body: &str, headers: Vec<(&'static str, String)>) -> Reply {
    Reply::Json {
        status,
        headers,
        body: body.to_string(),
    }
}

fn completion(text: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model-0613",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    })
}

/// SSE text for content deltas, with a role chunk first, a usage chunk and
/// `[DONE]` last.
fn sse_events(deltas: &[&str]) -> String {
    let mut s = String::from(": keep-alive\n\n");
    s.push_str(&format!(
        "data: {}\n\n",
        json!({"model": "test-model-0613", "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": null}]})
    ));
    for d in deltas {
        s.push_str(&format!(
            "data: {}\r\n\r\n",
            json!({"model": "test-model-0613", "choices": [{"index": 0, "delta": {"content": d}, "finish_reason": null}]})
        ));
    }
    s.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    s.push_str(&format!(
        "data: {}\n\n",
        json!({"choices": [], "usage": {"prompt_tokens": 200, "completion_tokens": 12, "total_tokens": 212}})
    ));
    s.push_str("data: [DONE]\n\n");
    s
}

/// Cut a text into pieces of `n` bytes (splitting lines and UTF-8 characters).
fn pieces(s: &str, n: usize) -> Vec<String> {
    // Pieces must be valid strings for the helper; cut on char boundaries
    // nearest to every n bytes, so multi-byte characters land at edges too.
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        cur.push(c);
        if cur.len() >= n {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn config(server: &MockServer) -> ChatConfig {
    let mut c = ChatConfig::new(server.base_url(), "test-model").with_api_key(KEY);
    c.timeout = Duration::from_secs(5);
    c.connect_timeout = Duration::from_secs(2);
    c.max_retries = 2;
    c
}

fn context() -> Context {
    let text: String = (10..=40).map(|n| format!("    line {n}\n")).collect();
    let cli: String = (1..=20).map(|n| format!("cli {n}\n")).collect();
    Context::build(
        &[
            ContextChunk {
                repo: "demo".into(),
                path: "src/app.py".into(),
                start_line: 10,
                end_line: 40,
                symbol: Some("App.run".into()),
                language: Language::Python,
                authors: vec![("Ana".into(), 0.8), ("Bo".into(), 0.2)],
                text,
            },
            ContextChunk {
                repo: "demo".into(),
                path: "src/cli.py".into(),
                start_line: 1,
                end_line: 20,
                symbol: None,
                language: Language::Python,
                authors: vec![],
                text: cli,
            },
        ],
        &ContextOptions::default(),
    )
}

fn assert_no_key(e: &LlmError) {
    let shown = format!("{e} / {e:?}");
    assert!(!shown.contains(KEY), "key leaked: {shown}");
    assert!(!shown.contains("WXYZ"), "key suffix leaked: {shown}");
}

#[test]
fn a_streamed_answer_with_valid_citations_is_verified() {
    let answer = "`App.run` starts the server [src/app.py:12-20]. Flags are read by the CLI — café [src/cli.py:3-5].";
    let events = sse_events(&[
        "`App.run` starts ",
        "the server [src/app.py:",
        "12-20]. Flags are read by the CLI — café",
        " [src/cli.py:3-5].",
    ]);
    let server = MockServer::start(vec![Reply::Sse {
        pieces: pieces(&events, 7),
        chunked: true,
    }]);
    let client = ChatClient::new(config(&server)).unwrap();
    let ctx = context();
    let messages = answer_messages("how does the app start?", &ctx);
    let mut deltas = Vec::new();
    let c = client
        .stream(&messages, &mut |d| deltas.push(d.to_string()))
        .unwrap();
    assert_eq!(c.text, answer);
    assert_eq!(deltas.len(), 4, "{deltas:?}");
    assert_eq!(deltas.concat(), answer);
    assert_eq!(c.model.as_deref(), Some("test-model-0613"));
    assert_eq!(c.finish_reason.as_deref(), Some("stop"));
    assert_eq!(c.usage.unwrap().total_tokens, 212);
    assert_eq!(c.attempts, 1);

    let checked = validate(&c.text, &ctx.sources());
    assert_eq!(checked.claims.len(), 2);
    assert!(
        checked
            .claims
            .iter()
            .all(|c| c.status == ClaimStatus::Verified)
    );

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("accept"), Some("text/event-stream"));
    assert_eq!(r.body["model"], "test-model");
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["temperature"], 0.0);
    let msgs = r.body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["role"], "system");
    assert!(
        msgs[0]["content"]
            .as_str()
            .unwrap()
            .contains("[path:start-end]")
    );
    assert_eq!(msgs[1]["role"], "user");
    let user = msgs[1]["content"].as_str().unwrap();
    assert!(
        user.contains("[1] src/app.py:10-40 · symbol: App.run · authors: Ana 80%, Bo 20%"),
        "{user}"
    );
    assert!(user.contains("Question: how does the app start?"));
}

#[test]
fn an_unchunked_stream_and_a_server_that_ignores_stream_both_work() {
    let server = MockServer::start(vec![
        Reply::Sse {
            pieces: vec![sse_events(&["Hello", " world"])],
            chunked: false,
        },
        json_reply(completion("Whole answer")),
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let msgs = [Message::user("hi")];
    let mut got = String::new();
    assert_eq!(
        client.stream(&msgs, &mut |d| got.push_str(d)).unwrap().text,
        "Hello world"
    );
    assert_eq!(got, "Hello world");
    got.clear();
    let c = client.stream(&msgs, &mut |d| got.push_str(d)).unwrap();
    assert_eq!(
        (c.text.as_str(), got.as_str()),
        ("Whole answer", "Whole answer")
    );
}

#[test]
fn invalid_and_missing_citations_are_marked_and_one_retry_fixes_them() {
    let first = "The server starts in `App.run` [src/app.py:12-20]. It reads the port from settings [src/settings.py:5-9]. It also logs every request.";
    let second = "The server starts in `App.run` [src/app.py:12-20]. Flags are parsed by the CLI [src/cli.py:2-6].";
    // The first answer is streamed (as `ken ask` does), the retry is not.
    let events = sse_events(&[first]);
    let server = MockServer::start(vec![
        Reply::Sse {
            pieces: pieces(&events, 64),
            chunked: true,
        },
        json_reply(completion(second)),
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let ctx = context();

    // The validator on the first answer, by hand.
    let checked = validate(first, &ctx.sources());
    let st: Vec<ClaimStatus> = checked.claims.iter().map(|c| c.status).collect();
    assert_eq!(
        st,
        [
            ClaimStatus::Verified,
            ClaimStatus::Invalid,
            ClaimStatus::Unverified
        ]
    );
    let retry = retry_message(&checked, &ctx.sources()).unwrap();
    assert!(retry.contains("[src/settings.py:5-9]"), "{retry}");
    assert!(!retry.contains("[src/app.py:12-20]"), "{retry}");

    // The whole loop.
    let mut shown = String::new();
    let a = ask(
        &client,
        "how does the server start?",
        &ctx,
        Some(&mut |d: &str| shown.push_str(d)),
    )
    .unwrap();
    assert_eq!(shown, first, "the first attempt was streamed");
    assert!(a.retried && a.used_retry);
    assert_eq!(a.text, second);
    assert!(a.claims.iter().all(|c| c.status == ClaimStatus::Verified));
    assert_eq!(a.model, "test-model-0613");
    assert_eq!(a.usage.unwrap().total_tokens, 212 + 150);
    let json = serde_json::to_value(&a.claims[1]).unwrap();
    assert_eq!(json["status"], "verified");
    assert_eq!(json["citations"][0]["path"], "src/cli.py");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["stream"], true);
    assert_eq!(reqs[1].body["stream"], false);
    let m = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(m[2]["role"], "assistant");
    assert_eq!(m[2]["content"], first);
    assert_eq!(m[3]["role"], "user");
    assert!(
        m[3]["content"]
            .as_str()
            .unwrap()
            .contains("[src/settings.py:5-9]: `src/settings.py` is not among the source blocks")
    );
}

#[test]
fn a_malformed_stream_is_an_error_that_shows_what_was_wrong() {
    let good = format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "partial "}}]})
    );
    let server = MockServer::start(vec![
        Reply::Sse {
            pieces: vec![
                good.clone(),
                "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"tru".into(),
            ],
            chunked: true,
        },
        Reply::Sse {
            pieces: vec![good],
            chunked: false,
        },
        Reply::Sse {
            pieces: vec!["<html>hello</html>\n".into()],
            chunked: false,
        },
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let msgs = [Message::user("q")];
    let mut got = String::new();
    let e = client.stream(&msgs, &mut |d| got.push_str(d)).unwrap_err();
    assert_eq!(got, "partial ", "what arrived was delivered");
    match &e {
        LlmError::MalformedStream { what, head } => {
            assert!(what.contains("not valid JSON"), "{what}");
            assert!(head.contains("\\\"content\\\": \\\"tru"), "{head}");
        }
        e => panic!("{e:?}"),
    }
    let e = client.stream(&msgs, &mut |_| {}).unwrap_err();
    assert!(
        matches!(&e, LlmError::MalformedStream { what, .. } if what.contains("[DONE]")),
        "{e}"
    );
    let e = client.stream(&msgs, &mut |_| {}).unwrap_err();
    assert!(
        matches!(&e, LlmError::MalformedStream { what, head } if what.contains("no `data:` events") && head.contains("<html>")),
        "{e}"
    );
}

#[test]
fn a_malformed_whole_response_shows_its_first_bytes() {
    let server = MockServer::start(vec![
        Reply::Json {
            status: 200,
            headers: vec![],
            body: "<!doctype html><p>proxy login</p>".into(),
        },
        json_reply(json!({"object": "list", "data": []})),
        json_reply(completion("   ")),
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let msgs = [Message::user("q")];
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(&e, LlmError::MalformedResponse { what, head } if what.contains("not JSON") && head.contains("<!doctype html>")),
        "{e}"
    );
    assert!(e.to_string().contains("OpenAI-compatible"));
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(&e, LlmError::MalformedResponse { what, .. } if what.contains("choices")),
        "{e}"
    );
    let e = client.complete(&msgs).unwrap_err();
    assert!(matches!(e, LlmError::EmptyAnswer { .. }), "{e}");
}

#[test]
fn rate_limits_and_server_errors_are_retried_with_backoff() {
    let server = MockServer::start(vec![
        error_reply(
            429,
            r#"{"error":{"message":"Rate limit reached"}}"#,
            vec![("Retry-After", "0".into())],
        ),
        json_reply(completion("after a 429")),
        // No Retry-After: exponential backoff with jitter (250-500 ms).
        error_reply(503, "overloaded", vec![]),
        json_reply(completion("after a 503")),
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let msgs = [Message::user("q")];
    let c = client.complete(&msgs).unwrap();
    assert_eq!((c.text.as_str(), c.attempts), ("after a 429", 2));
    let t = Instant::now();
    let c = client.complete(&msgs).unwrap();
    assert_eq!((c.text.as_str(), c.attempts), ("after a 503", 2));
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(240), "{waited:?}");
    assert_eq!(server.requests().len(), 4);

    // Retries also apply before a stream starts.
    let server = MockServer::start(vec![
        error_reply(429, "{}", vec![("Retry-After", "0".into())]),
        Reply::Sse {
            pieces: vec![sse_events(&["ok"])],
            chunked: true,
        },
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let c = client.stream(&msgs, &mut |_| {}).unwrap();
    assert_eq!((c.text.as_str(), c.attempts), ("ok", 2));
}

#[test]
fn a_server_that_hangs_up_without_answering_is_tried_again() {
    let server = MockServer::start(vec![Reply::HangUp, json_reply(completion("second time"))]);
    let client = ChatClient::new(config(&server)).unwrap();
    let c = client.complete(&[Message::user("q")]).unwrap();
    assert_eq!((c.text.as_str(), c.attempts), ("second time", 2));
    let server = MockServer::start(vec![Reply::HangUp]);
    let mut cfg = config(&server);
    cfg.max_retries = 0;
    let e = ChatClient::new(cfg)
        .unwrap()
        .complete(&[Message::user("q")])
        .unwrap_err();
    assert!(matches!(e, LlmError::Transport { .. }), "{e:?}");
    assert_no_key(&e);
}

#[test]
fn retries_run_out_and_4xx_is_never_retried() {
    let server = MockServer::start(vec![
        error_reply(
            429,
            r#"{"error":{"message":"slow down"}}"#,
            vec![("Retry-After", "0".into())],
        ),
        error_reply(
            429,
            r#"{"error":{"message":"slow down"}}"#,
            vec![("Retry-After", "0".into())],
        ),
        error_reply(
            429,
            r#"{"error":{"message":"slow down"}}"#,
            vec![("Retry-After", "0".into())],
        ),
        error_reply(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens"}}"#,
            vec![],
        ),
        error_reply(500, "boom", vec![("Retry-After", "0".into())]),
        error_reply(502, "boom", vec![("Retry-After", "0".into())]),
        error_reply(500, "boom", vec![("Retry-After", "0".into())]),
        error_reply(429, "{}", vec![("Retry-After", "3600".into())]),
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let msgs = [Message::user("q")];
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(e, LlmError::RateLimited { attempts: 3, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("slow down"));
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(e, LlmError::BadRequest { status: 400, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("lower the context budget"), "{e}");
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Server {
                status: 500,
                attempts: 3,
                ..
            }
        ),
        "{e:?}"
    );
    let t = Instant::now();
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "an hour-long Retry-After is not waited for"
    );
    assert!(
        matches!(e, LlmError::RateLimited { attempts: 1, retry_after: Some(d), .. } if d == Duration::from_secs(3600)),
        "{e:?}"
    );
    assert_eq!(
        server.requests().len(),
        8,
        "3 + 1 (400 not retried) + 3 + 1"
    );
}

#[test]
fn a_stalled_server_times_out_and_says_which_timeout() {
    let server = MockServer::start(vec![
        Reply::Stall(Duration::from_secs(3)),
        Reply::SseStall {
            first: format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": "start"}}]})
            ),
            stall: Duration::from_secs(3),
        },
    ]);
    let mut cfg = config(&server);
    cfg.timeout = Duration::from_millis(300);
    cfg.max_retries = 0;
    let client = ChatClient::new(cfg).unwrap();
    let msgs = [Message::user("q")];
    let t = Instant::now();
    let e = client.complete(&msgs).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(
        matches!(e, LlmError::Timeout { phase: TimeoutPhase::Response, after, .. } if after == Duration::from_millis(300)),
        "{e:?}"
    );
    assert!(e.to_string().contains("(300 ms)"), "{e}");
    let t = Instant::now();
    let mut got = String::new();
    let e = client.stream(&msgs, &mut |d| got.push_str(d)).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(got, "start");
    assert!(
        matches!(
            e,
            LlmError::Timeout {
                phase: TimeoutPhase::Stream,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("stalled"), "{e}");
}

#[test]
fn unauthorized_says_to_check_the_key_and_never_shows_it() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. Also sk-test-01**********WXYZ","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let server = MockServer::start(vec![
        error_reply(401, &echo, vec![]),
        error_reply(403, r#"{"error":{"message":"no access to model"}}"#, vec![]),
        error_reply(401, r#"{"error":"missing key"}"#, vec![]),
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let msgs = [Message::user("q")];
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::Auth {
                status: 401,
                key_sent: true,
                ..
            }
        ),
        "{e:?}"
    );
    let shown = e.to_string();
    assert!(shown.contains("check KEN_LLM_API_KEY"), "{shown}");
    assert!(
        shown.contains("Incorrect API key provided: <redacted>"),
        "{shown}"
    );
    assert_no_key(&e);
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        e.to_string()
            .contains("may lack access to model `test-model`"),
        "{e}"
    );
    assert_no_key(&e);
    let dbg = format!("{client:?}");
    assert!(!dbg.contains(KEY) && dbg.contains("<redacted>"), "{dbg}");
    assert_eq!(server.requests().len(), 2, "401/403 are not retried");

    // No key configured: nothing sent, and the message says so.
    let mut cfg = config(&server);
    cfg.api_key = None;
    let client = ChatClient::new(cfg).unwrap();
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        e.to_string()
            .contains("no API key was sent: set KEN_LLM_API_KEY"),
        "{e}"
    );
    assert_eq!(server.requests()[2].header("authorization"), None);
}

#[test]
fn not_found_says_whether_the_url_or_the_model_is_wrong() {
    let server = MockServer::start(vec![
        error_reply(
            404,
            r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","code":"model_not_found"}}"#,
            vec![],
        ),
        Reply::Json {
            status: 404,
            headers: vec![],
            body: "404 page not found".into(),
        },
    ]);
    let client = ChatClient::new(config(&server)).unwrap();
    let msgs = [Message::user("q")];
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::NotFound {
                cause: NotFoundCause::Model,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("does not know the model `test-model`"),
        "{e}"
    );
    assert!(e.to_string().contains("KEN_LLM_MODEL"), "{e}");
    let e = client.complete(&msgs).unwrap_err();
    assert!(
        matches!(
            e,
            LlmError::NotFound {
                cause: NotFoundCause::Url,
                ..
            }
        ),
        "{e:?}"
    );
    let shown = e.to_string();
    assert!(
        shown.contains(&format!("{}/chat/completions", server.base_url())),
        "{shown}"
    );
    assert!(shown.contains("KEN_LLM_BASE_URL"), "{shown}");
    assert_no_key(&e);
}

#[test]
fn connection_refused_asks_whether_the_server_runs() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base = format!("http://127.0.0.1:{port}/v1");
    let mut cfg = ChatConfig::new(base.clone(), "m").with_api_key(KEY);
    cfg.max_retries = 3;
    let client = ChatClient::new(cfg).unwrap();
    let t = Instant::now();
    let e = client.complete(&[Message::user("q")]).unwrap_err();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "refused connections are not retried"
    );
    assert!(matches!(e, LlmError::ConnectionRefused { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains(&format!("Is the server running at {base}?")),
        "{e}"
    );
    assert_no_key(&e);
}

#[test]
fn a_base_url_without_v1_or_with_a_slash_reaches_the_same_endpoint() {
    let server = MockServer::start(vec![
        json_reply(completion("a")),
        json_reply(completion("b")),
    ]);
    for base in [
        format!("http://{}", server.addr),
        format!("http://{}/v1/", server.addr),
    ] {
        let client = ChatClient::new(ChatConfig::new(base, "m")).unwrap();
        client.complete(&[Message::user("q")]).unwrap();
    }
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/chat/completions", "/v1/chat/completions"]);
}
