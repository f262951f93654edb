//! A scripted OpenAI-compatible chat server on 127.0.0.1 (real HTTP/1.1,
//! real SSE), standing in for a paid LLM API in tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted reply.
#[derive(Clone)]
pub enum Reply {
    /// A chat completion: streamed as SSE when the request asks to stream.
    Answer(String),
    /// An HTTP error status with a JSON body.
    Status(u16, String),
    /// Accept the request and say nothing for this long.
    Stall(Duration),
}

pub struct ChatServer {
    pub url: String,
    /// Bodies of the requests received (route classifications included).
    pub requests: Arc<Mutex<Vec<String>>>,
    /// `Authorization` headers received.
    pub auth: Arc<Mutex<Vec<String>>>,
}

impl ChatServer {
    /// Serve `script` in order; route-classification requests are answered
    /// `code_or(...)` without using the script.
    pub fn start(script: Vec<Reply>, route: &str) -> ChatServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let auth = Arc::new(Mutex::new(Vec::new()));
        let (req2, auth2) = (requests.clone(), auth.clone());
        let route = route.to_string();
        let script = Arc::new(Mutex::new(script));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (req2, auth2, script, route) =
                    (req2.clone(), auth2.clone(), script.clone(), route.clone());
                std::thread::spawn(move || serve(stream, &req2, &auth2, &script, &route));
            }
        });
        ChatServer {
            url,
            requests,
            auth,
        }
    }

    /// Requests that were not route classifications.
    pub fn answer_requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|b| !b.contains("Classify"))
            .cloned()
            .collect()
    }
}

fn serve(
    mut stream: TcpStream,
    requests: &Mutex<Vec<String>>,
    auth: &Mutex<Vec<String>>,
    script: &Mutex<Vec<Reply>>,
    route: &str,
) {
    loop {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut len = 0usize;
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let lower = l.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                len = v.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("authorization:") {
                auth.lock()
                    .unwrap()
                    .push(l["authorization:".len()..].trim().to_string());
            }
        }
        let mut body = vec![0u8; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let body = String::from_utf8_lossy(&body).into_owned();
        requests.lock().unwrap().push(body.clone());
        let streaming = body.contains("\"stream\":true");
        let reply = if body.contains("Classify") {
            Reply::Answer(route.to_string())
        } else {
            let mut s = script.lock().unwrap();
            if s.is_empty() {
                Reply::Status(500, "{\"error\":{\"message\":\"script exhausted\"}}".into())
            } else {
                s.remove(0)
            }
        };
        let ok = match reply {
            Reply::Answer(text) if streaming => {
                let mut out = String::from("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
                let mut events = Vec::new();
                for piece in text.split_inclusive(' ') {
                    events.push(format!("data: {}\n\n", serde_json::json!({"model": "scripted", "choices": [{"index": 0, "delta": {"content": piece}}]})));
                }
                events.push(format!("data: {}\n\n", serde_json::json!({"model": "scripted", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})));
                events.push("data: [DONE]\n\n".into());
                for e in events {
                    out.push_str(&format!("{:x}\r\n{e}\r\n", e.len()));
                }
                out.push_str("0\r\n\r\n");
                stream.write_all(out.as_bytes()).is_ok()
            }
            Reply::Answer(text) => {
                let b = serde_json::json!({"model": "scripted", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 100, "completion_tokens": 11, "total_tokens": 111}}).to_string();
                stream.write_all(format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}", b.len()).as_bytes()).is_ok()
            }
            Reply::Status(code, b) => stream
                .write_all(format!("HTTP/1.1 {code} Error\r\ncontent-type: application/json\r\nretry-after: 0\r\ncontent-length: {}\r\n\r\n{b}", b.len()).as_bytes())
                .is_ok(),
            Reply::Stall(d) => {
                std::thread::sleep(d);
                false
            }
        };
        if !ok {
            return;
        }
    }
}
