//! The outside probe of `ken serve` (issue 36), run as a test: a release
//! of what a tester tried from outside — connections, auth, traversal,
//! scopes, SSRF, names, bad requests, load and the logs — against a real
//! server on loopback, with the findings of that probe as regressions.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::server::{Server, reply, token};
use common::*;
use serde_json::{Value, json};

fn shop(ken: &Ken) -> Repo {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    r
}

/// Wait until the server closes `c` (or `within` passes); how long it took.
fn closed_within(mut c: TcpStream, within: Duration) -> Duration {
    c.set_read_timeout(Some(within)).unwrap();
    let t0 = Instant::now();
    let mut buf = Vec::new();
    let _ = c.read_to_end(&mut buf);
    t0.elapsed()
}

#[test]
fn silent_connections_are_closed_and_their_number_is_bounded() {
    let ken = Ken::new();
    let _r = shop(&ken);
    std::fs::write(
        ken.home.path().join("config.toml"),
        "header_timeout = 1\nmax_connections = 8\n",
    )
    .unwrap();
    let s = Server::start(&ken, &[]);

    // a socket that never sends a byte is closed like a slow header
    let c = TcpStream::connect(s.addr()).unwrap();
    let waited = closed_within(c, Duration::from_secs(15));
    assert!(
        waited < Duration::from_secs(5),
        "a silent connection was held {waited:?}"
    );

    // more silent sockets than the server serves at once: the server
    // answers others once theirs time out, never runs out of anything
    let silent: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(s.addr()).unwrap())
        .collect();
    let t0 = Instant::now();
    let fresh = reqwest::blocking::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let r = fresh.get(format!("{}/healthz", s.base)).send().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "/healthz waited {:?} behind silent sockets",
        t0.elapsed()
    );
    for c in silent {
        let waited = closed_within(c, Duration::from_secs(30));
        assert!(waited < Duration::from_secs(20), "held {waited:?}");
    }
}

#[test]
fn what_the_probe_found_holds() {
    let ken = Ken::new();
    let _r = shop(&ken);
    let read = token(&ken, &["shop"], "read");
    let index = token(&ken, &["*"], "index");
    let admin = token(&ken, &["*"], "admin");
    std::fs::write(
        ken.home.path().join("config.toml"),
        "max_body_bytes = 4096\n",
    )
    .unwrap();
    let s = Server::start(&ken, &[]);

    // 2. counts in a query string are numbers
    for top in ["1", "5", "100"] {
        let (st, v) = s.get(&format!("/api/v1/repos/shop/report?top={top}"), Some(&read));
        assert_eq!(st, 200, "top={top}: {v}");
    }
    let (st, _) = s.get("/api/v1/repos/shop/report?top=0", Some(&read));
    assert_eq!(st, 400);

    // 3. IPv6 forms that carry a private IPv4 address are refused
    s.assert_sources_refused(
        &admin,
        &[
            "https://[2002:a9fe:a9fe::1]/latest/meta-data",
            "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x.git",
            "https://[64:ff9b::a9fe:a9fe]/x.git",
            "https://[::ffff:169.254.169.254]/x.git",
            "https://[::a9fe:a9fe]/x.git",
            "https://[::ffff:0:a9fe:a9fe]/x.git",
        ],
    );

    // 5. an index token refreshes a repository from its recorded source,
    // but cannot point it elsewhere (an admin's act)
    let (st, v) = s.post(
        "/api/v1/repos/shop/index",
        Some(&index),
        &json!({ "source": "https://140.82.112.3/elsewhere/shop.git" }),
    );
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (403, Some("unauthorized")),
        "{v}"
    );
    let (st, v) = s.post("/api/v1/repos/shop/index", Some(&index), &json!({}));
    assert_eq!(st, 202, "{v}");

    // 4. names are checked where they come in (`..` never reaches a
    // server as a path segment: clients resolve it; ken index refuses it)
    for name in ["%00", "x%00y", ".hidden", "a%0Ab", "a%5Cb"] {
        let (st, v) = s.post(
            &format!("/api/v1/repos/{name}/index"),
            Some(&admin),
            &json!({ "source": "https://140.82.112.3/o/r.git" }),
        );
        assert_eq!(st, 400, "{name}: {v}");
    }

    // 7. a read token sees no path of the server; an admin does
    let (_, v) = s.get("/api/v1/repos", Some(&read));
    assert!(
        v["repos"][0].get("source").is_none_or(Value::is_null),
        "{v}"
    );
    let home = ken.home.path().to_str().unwrap().to_string();
    assert!(!v.to_string().contains(&home), "{v}");
    let (_, v) = s.get("/api/v1/repos/shop", Some(&read));
    assert!(v.get("source").is_none_or(Value::is_null), "{v}");
    let (_, v) = s.get("/api/v1/repos/shop", Some(&admin));
    assert!(
        v["source"].as_str().is_some_and(|p| p.starts_with('/')),
        "{v}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ken.home.path().join("server.sqlite")), 0o600);
        assert_eq!(mode(&ken.home.path().join("repos")), 0o700);
    }

    // 8. a body over the limit: 413, and the connection is said to close
    let r = s
        .http
        .post(format!("{}/api/v1/ask", s.base))
        .bearer_auth(&read)
        .header("content-type", "application/json")
        .body(json!({ "question": "x".repeat(10_000) }).to_string())
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);
    assert_eq!(
        r.headers().get("connection").map(|v| v.to_str().unwrap()),
        Some("close")
    );
    // and the client's next request works
    let (st, _) = s.get("/api/v1/repos", Some(&read));
    assert_eq!(st, 200);
}

#[test]
fn names_never_alias_through_their_storage_key() {
    let ken = Ken::new();
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    ken.index(&[r.path().to_str().unwrap(), "--name", "a/b"]);
    // `a__b` is where `a/b` is stored, not another name for it
    let out = ken.run(&["index", r.path().to_str().unwrap(), "--name", "a__b"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("a/b"), "{}", stderr(&out));
    let out = ken.run(&["index", r.path().to_str().unwrap(), "--name", "../x"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = ken.run(&["search", "refresh", "--repo", "a__b"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a__b is not a/b: {}",
        stdout(&out)
    );

    let key_token = token(&ken, &["a__b"], "read");
    let name_token = token(&ken, &["a/b"], "read");
    let s = Server::start(&ken, &[]);
    let (st, _) = s.get("/api/v1/repos/a%2Fb", Some(&key_token));
    assert_eq!(st, 404, "a token for `a__b` reads `a/b`");
    let (_, v) = s.get("/api/v1/repos", Some(&key_token));
    assert_eq!(v["repos"].as_array().unwrap().len(), 0, "{v}");
    let (st, v) = s.get("/api/v1/repos/a%2Fb", Some(&name_token));
    assert_eq!(st, 200, "{v}");
}

#[test]
fn the_probe_list_again() {
    let ken = Ken::new();
    let _r = shop(&ken);
    let secret_token = token(&ken, &["shop"], "read");
    let created = ken.json(&[
        "--json", "token", "create", "--repo", "shop", "--scope", "read",
    ]);
    let revoked = created["token"].as_str().unwrap().to_string();
    ken.json(&["--json", "token", "revoke", created["id"].as_str().unwrap()]);
    let log_path = ken.home.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut c = ken.cmd();
    c.args(["--json", "serve", "--addr", "127.0.0.1:0"]);
    let s = Server::spawn_logging(
        c,
        &[
            ("KEN_WEBHOOK_SECRET", "hook-s3cret"),
            ("KEN_LLM_API_KEY", "sk-secret-key"),
        ],
        Stdio::from(log),
    );

    // auth: none, wrong, revoked, wrong scheme
    for t in [None, Some("ken_nope"), Some(revoked.as_str())] {
        let (st, _) = s.get("/api/v1/search?q=refresh", t);
        assert_eq!(st, 401, "{t:?}");
    }
    // traversal on every file route
    for path in [
        "../../../../etc/passwd",
        "%2e%2e/%2e%2e/etc/passwd",
        "/etc/passwd",
        "src/../../../etc/passwd",
        "src%00.py",
        "....//....//etc/passwd",
    ] {
        for route in ["file", "blame"] {
            let (st, v) = s.get(
                &format!("/api/v1/repos/shop/{route}?path={path}"),
                Some(&secret_token),
            );
            assert!(matches!(st, 400 | 404), "{route} {path}: {st} {v}");
            assert!(!v.to_string().contains("root:"), "{route} {path}: {v}");
        }
    }
    // malformed requests: 4xx, never 5xx
    for (method, path, body) in [
        ("POST", "/api/v1/ask", "{"),
        ("POST", "/api/v1/ask", "[]"),
        ("POST", "/api/v1/ask", "{\"question\": 5}"),
        ("GET", "/api/v1/search?n=-1&q=x", ""),
        ("GET", "/api/v1/search?q=x&mode=psychic", ""),
        ("GET", "/api/v1/impact?symbol=x&depth=99999", ""),
        ("POST", "/hooks/github", "{}"),
    ] {
        let req = match method {
            "GET" => s.http.get(format!("{}{path}", s.base)),
            _ => s
                .http
                .post(format!("{}{path}", s.base))
                .header("content-type", "application/json")
                .body(body.to_string()),
        };
        let (st, v) = reply(req.bearer_auth(&secret_token).send().unwrap());
        assert!((400..500).contains(&st), "{method} {path} {body}: {st} {v}");
    }
    // a raw request that is not HTTP at all
    let mut raw = TcpStream::connect(s.addr()).unwrap();
    raw.write_all(b"\x16\x03\x01 not http\r\n\r\n").unwrap();
    let waited = closed_within(raw, Duration::from_secs(15));
    assert!(waited < Duration::from_secs(12));

    // load: many clients at once, no error
    let base = s.base.clone();
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (base, t) = (base.clone(), secret_token.clone());
            std::thread::spawn(move || {
                let c = reqwest::blocking::Client::new();
                let mut failed = 0;
                for _ in 0..10 {
                    let ok = c
                        .get(format!("{base}/api/v1/search?q=refresh+token"))
                        .bearer_auth(&t)
                        .send()
                        .is_ok_and(|r| r.status().as_u16() == 200);
                    failed += usize::from(!ok);
                }
                failed
            })
        })
        .collect();
    let failed: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(failed, 0, "{failed} of 320 requests failed under load");

    // the logs hold no token and no secret
    drop(s);
    let log = std::fs::read_to_string(&log_path).unwrap();
    for secret in [
        secret_token.as_str(),
        revoked.as_str(),
        "hook-s3cret",
        "sk-secret-key",
    ] {
        assert!(!log.contains(secret), "the log shows a secret: {log}");
    }
}

/// An error's hint names what the caller can change in the caller's own
/// terms: a parameter over HTTP, a flag on the command line — never a flag
/// to an HTTP client.
#[test]
fn hints_name_parameters_over_http_and_flags_on_the_command_line() {
    let ken = Ken::new();
    let _shop = shop(&ken);
    let store = Repo::new();
    python_project(&store);
    store.commit("initial");
    ken.index(&[store.path().to_str().unwrap(), "--name", "store"]);

    // `retry_payment` is defined in both: pick one
    let out = ken.run(&["callers", "retry_payment"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("pick one with --repo (shop, store)"),
        "{}",
        stderr(&out)
    );

    let admin = token(&ken, &["*"], "admin");
    let s = Server::start(&ken, &[]);
    let (st, v) = s.get("/api/v1/callers?symbol=retry_payment", Some(&admin));
    assert_eq!(st, 400, "{v}");
    let hint = v["error"]["hint"].as_str().unwrap();
    assert_eq!(hint, "pick one with the `repo` parameter (shop, store)");
    // a repository that is not there: how to index one, over HTTP
    let (st, v) = s.get("/api/v1/repos/nowhere/report", Some(&admin));
    assert_eq!(st, 404, "{v}");
    assert!(
        !v.to_string().contains("--"),
        "a flag in an HTTP error: {v}"
    );
}
