//! A real `ken serve` process on a free loopback port, and a client for it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Ken;

pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub http: reqwest::blocking::Client,
}

impl Server {
    /// Start `ken serve` on the home of `ken`, with `env` set.
    pub fn start(ken: &Ken, env: &[(&str, &str)]) -> Server {
        Server::start_with(ken, &[], env)
    }

    /// `ken serve` with more arguments (`--store URL`).
    pub fn start_with(ken: &Ken, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut c: Command = ken.cmd();
        c.args(["--json", "serve", "--addr", "127.0.0.1:0"])
            .args(args);
        Server::spawn(c, env)
    }

    pub fn spawn(c: Command, env: &[(&str, &str)]) -> Server {
        Server::spawn_logging(c, env, Stdio::inherit())
    }

    /// `spawn` with the server's standard error (its log) sent to `log`.
    pub fn spawn_logging(mut c: Command, env: &[(&str, &str)], log: Stdio) -> Server {
        for (k, v) in env {
            c.env(k, v);
        }
        c.stdout(Stdio::piped()).stderr(log);
        let mut child = c.spawn().expect("start ken serve");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the address");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("ken serve printed {line:?} ({e})"));
        let addr = v["listening"]
            .as_str()
            .expect("listening address")
            .to_string();
        Server {
            child,
            base: format!("http://{addr}"),
            http: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .unwrap(),
        }
    }

    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let mut r = self.http.get(format!("{}{path}", self.base));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        reply(r.send().unwrap())
    }

    pub fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let mut r = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        reply(r.send().unwrap())
    }

    /// Each of `sources` asked as a new repository's source is refused
    /// (400, "refused").
    pub fn assert_sources_refused(&self, token: &str, sources: &[&str]) {
        for url in sources {
            let (st, v) = self.post(
                "/api/v1/repos/newrepo/index",
                Some(token),
                &serde_json::json!({ "source": url }),
            );
            assert_eq!(st, 400, "{url}: {v}");
            assert!(
                v["error"]["message"].as_str().unwrap().contains("refused"),
                "{url}: {v}"
            );
        }
    }

    /// Send SIGTERM and wait for the process to end (at most `within`).
    pub fn terminate(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let t0 = Instant::now();
        while t0.elapsed() < within {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Poll a job until it is done or failed.
    pub fn wait_job(&self, id: &str, token: &str, within: Duration) -> Value {
        let t0 = Instant::now();
        loop {
            let (status, job) = self.get(&format!("/api/v1/jobs/{id}"), Some(token));
            assert_eq!(status, 200, "{job}");
            if job["state"] == "done" || job["state"] == "failed" {
                return job;
            }
            assert!(t0.elapsed() < within, "job still {}: {job}", job["state"]);
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn reply(r: reqwest::blocking::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().unwrap_or_default();
    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, v)
}

/// Create a token with `ken token create`.
pub fn token(ken: &Ken, repos: &[&str], scope: &str) -> String {
    let mut args = vec!["--json", "token", "create", "--scope", scope];
    for r in repos {
        args.push("--repo");
        args.push(r);
    }
    ken.json(&args)["token"].as_str().unwrap().to_string()
}
