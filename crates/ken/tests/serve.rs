//! `ken serve`: the HTTP API over real repositories, tokens and scopes,
//! limits, streamed answers, the OpenAPI document, shutdown.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::server::{Server, token};
use common::*;
use serde_json::{Value, json};

/// Two indexed repositories: `shop` (Python) and `tools` (one Go file).
fn two_repos(ken: &Ken) -> (Repo, Repo) {
    let shop = Repo::new();
    python_project(&shop);
    shop.commit("initial");
    let tools = Repo::new();
    tools.write(
        "cmd/main.go",
        "package main\n\n// RefreshCache reloads the cache from disk.\nfunc RefreshCache() {}\n\nfunc main() { RefreshCache() }\n",
    );
    tools.commit("initial");
    ken.index(&[shop.path().to_str().unwrap(), "--name", "shop"]);
    ken.index(&[tools.path().to_str().unwrap(), "--name", "tools"]);
    (shop, tools)
}

#[test]
fn the_api_answers_with_the_cli_shapes() {
    let ken = Ken::new();
    let _repos = two_repos(&ken);
    let t = token(&ken, &["*"], "read");
    let s = Server::start(&ken, &[]);

    let (st, v) = s.get("/healthz", None);
    assert_eq!((st, &v["ok"]), (200, &json!(true)));
    // CORS is off unless origins are configured
    let r = s
        .http
        .get(format!("{}/api/v1/repos", s.base))
        .bearer_auth(&t)
        .header("origin", "https://evil.example")
        .send()
        .unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());

    // the same search through the CLI and the API gives the same results
    let cli = ken.search(&["refresh_token", "--repo", "shop"]);
    let (st, api) = s.get("/api/v1/search?q=refresh_token&repo=shop", Some(&t));
    assert_eq!(st, 200, "{api}");
    assert_eq!(api["results"], cli["results"]);
    assert_eq!(paths(&api)[0], "src/shop/session.py");
    let r0 = &api["results"][0];
    for field in [
        "rank",
        "repo",
        "path",
        "start_line",
        "end_line",
        "language",
        "kind",
        "symbol",
        "score",
        "signals",
        "commit",
        "authors",
        "snippet",
    ] {
        assert!(r0.get(field).is_some(), "{field} missing: {r0}");
    }
    // filters and files mode
    let (_, v) = s.get("/api/v1/search?q=refresh&lang=go&files=true", Some(&t));
    assert_eq!(paths(&v), vec!["cmd/main.go"]);

    // repositories, one repository, a file range
    let (_, v) = s.get("/api/v1/repos", Some(&t));
    let names: Vec<&str> = v["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shop", "tools"]);
    let (st, v) = s.get("/api/v1/repos/shop", Some(&t));
    assert_eq!((st, v["stats"]["files"].as_u64()), (200, Some(3)));
    let (st, v) = s.get(
        "/api/v1/repos/shop/file?path=src/shop/session.py&start=6&end=7",
        Some(&t),
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        v["text"],
        "class SessionStore:\n    \"\"\"Keeps session tokens and refreshes them before they expire.\"\"\""
    );
    assert_eq!(
        (v["start_line"].as_u64(), v["end_line"].as_u64()),
        (Some(6), Some(7))
    );
    assert!(v["commit"].is_string());

    // structure, people, symbols, history
    let (st, v) = s.get("/api/v1/callers?symbol=RefreshCache&repo=tools", Some(&t));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["results"][0]["symbol"], "main");
    let (_, v) = s.get(
        "/api/v1/impact?symbol=RefreshCache&repo=tools&depth=3",
        Some(&t),
    );
    assert_eq!(v["results"][0]["depth"], 1);
    let (_, v) = s.get("/api/v1/who?q=src/shop/session.py&repo=shop", Some(&t));
    assert_eq!(v["people"][0]["name"], "Ada Lovelace", "{v}");
    let (_, v) = s.get("/api/v1/symbols?q=SessionStore", Some(&t));
    assert_eq!(v["results"][0]["path"], "src/shop/session.py");
    let (_, v) = s.get("/api/v1/log?q=initial&repo=shop", Some(&t));
    assert_eq!(v["results"][0]["summary"], "initial");
    let (_, v) = s.get("/api/v1/people?repo=shop", Some(&t));
    assert_eq!(v["people"][0]["person"]["name"], "Ada Lovelace");

    // errors: JSON with a stable code
    let (st, v) = s.get("/api/v1/search", Some(&t));
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );
    let (st, v) = s.get("/api/v1/search?q=x&lang=cobol", Some(&t));
    assert_eq!(st, 400);
    assert!(v["error"]["message"].as_str().unwrap().contains("cobol"));
    let (st, v) = s.get("/api/v1/search?q=x&n=-3", Some(&t));
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );
    let (st, v) = s.get("/api/v1/repos/shop/file?path=nope.py", Some(&t));
    assert_eq!((st, v["error"]["code"].as_str()), (404, Some("not_found")));
    let (st, v) = s.get("/api/v1/no/such/route", Some(&t));
    assert_eq!((st, v["error"]["code"].as_str()), (404, Some("not_found")));
    let r = s
        .http
        .delete(format!("{}/api/v1/search", s.base))
        .bearer_auth(&t)
        .send()
        .unwrap();
    let (st, v) = common::server::reply(r);
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (405, Some("bad_request"))
    );
}

#[test]
fn tokens_scopes_and_repositories() {
    let ken = Ken::new();
    let _repos = two_repos(&ken);
    let shop_read = token(&ken, &["shop"], "read");
    let all_index = token(&ken, &["*"], "index");
    let s = Server::start(&ken, &[]);

    // no token, a wrong token, a malformed header
    let (st, v) = s.get("/api/v1/repos", None);
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let (st, _) = s.get("/api/v1/repos", Some("ken_0000"));
    assert_eq!(st, 401);
    let r = s
        .http
        .get(format!("{}/api/v1/repos", s.base))
        .header("authorization", format!("Basic {shop_read}"))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);

    // a token sees only its repositories; another one is "not found",
    // exactly as a missing one
    let (_, v) = s.get("/api/v1/repos", Some(&shop_read));
    assert_eq!(v["repos"].as_array().unwrap().len(), 1);
    let (st_other, other) = s.get("/api/v1/repos/tools", Some(&shop_read));
    let (st_missing, missing) = s.get("/api/v1/repos/nothing", Some(&shop_read));
    assert_eq!((st_other, st_missing), (404, 404));
    let norm = |v: &Value, name: &str| v.to_string().replace(&format!("`{name}`"), "`X`");
    assert_eq!(norm(&other, "tools"), norm(&missing, "nothing"));
    let (st, _) = s.get("/api/v1/search?q=RefreshCache&repo=tools", Some(&shop_read));
    assert_eq!(st, 404);
    // searching everything searches only what the token sees
    let (_, v) = s.get("/api/v1/search?q=RefreshCache", Some(&shop_read));
    assert!(!paths(&v).iter().any(|p| p == "cmd/main.go"), "{v}");
    let (st, _) = s.get(
        "/api/v1/callers?symbol=RefreshCache&repo=tools",
        Some(&shop_read),
    );
    assert_eq!(st, 404);

    // read cannot queue index jobs; index can
    let (st, v) = s.post("/api/v1/repos/shop/index", Some(&shop_read), &json!({}));
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (403, Some("unauthorized")),
        "{v}"
    );
    let (st, v) = s.post("/api/v1/repos/shop/index", Some(&all_index), &json!({}));
    assert_eq!(st, 202, "{v}");
    let job = s.wait_job(
        v["job"].as_str().unwrap(),
        &all_index,
        Duration::from_secs(60),
    );
    assert_eq!(job["state"], "done", "{job}");
    // a job of a repository the token cannot see is not found
    let (st, _) = s.get(
        &format!("/api/v1/jobs/{}", v["job"].as_str().unwrap()),
        Some(&shop_read),
    );
    assert_eq!(st, 200, "shop's job is visible to a shop token");

    // a revoked token stops working at once
    let list = ken.json(&["--json", "token", "list"]);
    let id = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["repos"] == json!(["shop"]))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        !list.to_string().contains(&shop_read),
        "tokens are never listed"
    );
    ken.json(&["--json", "token", "revoke", &id]);
    let (st, _) = s.get("/api/v1/repos", Some(&shop_read));
    assert_eq!(st, 401);
}

#[test]
fn remote_sources_are_checked_against_ssrf() {
    let ken = Ken::new();
    let _repos = two_repos(&ken);
    let admin = token(&ken, &["*"], "admin");
    let s = Server::start(&ken, &[]);
    s.assert_sources_refused(
        &admin,
        &[
            "file:///etc",
            "https://127.0.0.1/x/y.git",
            "https://localhost/x/y.git",
            "https://169.254.169.254/latest/meta-data",
            "https://10.1.2.3/team/repo.git",
            "https://192.168.0.10/team/repo.git",
            "http://github.com/pallets/flask",
            "git@127.0.0.1:team/repo.git",
        ],
    );
    // a local path is not a source a remote caller may give
    let (st, v) = s.post(
        "/api/v1/repos/newrepo/index",
        Some(&admin),
        &json!({ "source": "/etc" }),
    );
    assert_eq!(st, 400, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clone URL")
    );
}

#[test]
fn limits_on_bodies_and_slow_clients() {
    let ken = Ken::new();
    let _repos = two_repos(&ken);
    std::fs::write(
        ken.home.path().join("config.toml"),
        "max_body_bytes = 4096\nheader_timeout = 1\n",
    )
    .unwrap();
    let t = token(&ken, &["*"], "read");
    let s = Server::start(&ken, &[]);

    // a body over the limit: 413 with a JSON error
    let big = json!({ "question": "x".repeat(10_000) });
    let (st, v) = s.post("/api/v1/ask", Some(&t), &big);
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (413, Some("bad_request")),
        "{v}"
    );
    // malformed JSON: 400
    let r = s
        .http
        .post(format!("{}/api/v1/ask", s.base))
        .bearer_auth(&t)
        .header("content-type", "application/json")
        .body("{\"question\": ")
        .send()
        .unwrap();
    let (st, v) = common::server::reply(r);
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );

    // a client that sends its headers too slowly is cut off
    let mut c = TcpStream::connect(s.addr()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let t0 = Instant::now();
    let mut buf = Vec::new();
    let _ = c.read_to_end(&mut buf); // returns when the server closes
    let waited = t0.elapsed();
    assert!(
        waited < Duration::from_secs(5),
        "the server held a half-sent request for {waited:?}"
    );
    // and it still serves others, on a new connection: the idle ones of
    // the shared client's pool were closed by the same timeout meanwhile,
    // and reusing one of them can meet a reset
    let fresh = reqwest::blocking::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let r = fresh.get(format!("{}/healthz", s.base)).send().unwrap();
    assert_eq!(r.status().as_u16(), 200);
}

#[test]
fn answers_stream_as_server_sent_events() {
    let ken = Ken::new();
    let _repos = two_repos(&ken);
    let t = token(&ken, &["shop"], "read");
    let s = Server::start(&ken, &[]);
    let r = s
        .http
        .post(format!("{}/api/v1/ask", s.base))
        .bearer_auth(&t)
        .header("content-type", "application/json")
        .body(json!({"question": "how is the session token refreshed?"}).to_string())
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = r.text().unwrap();
    let events: Vec<(&str, Value)> = text
        .split("\n\n")
        .filter_map(|block| {
            let name = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data: String = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            Some((name, serde_json::from_str(&data).unwrap()))
        })
        .collect();
    let names: Vec<&str> = events.iter().map(|(n, _)| *n).collect();
    assert_eq!(names.first(), Some(&"step"), "{names:?}");
    assert_eq!(names.last(), Some(&"done"), "{names:?}");
    assert!(names.contains(&"claim"), "{names:?}");
    let done = &events.last().unwrap().1;
    assert_eq!(done["question"], "how is the session token refreshed?");
    assert!(done["model"].is_null(), "no model configured: extractive");
    assert!(
        done["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["path"] == "src/shop/session.py"),
        "{done}"
    );
    // the same answer as one JSON object
    let r = s
        .http
        .post(format!("{}/api/v1/ask", s.base))
        .bearer_auth(&t)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(json!({"question": "how is the session token refreshed?"}).to_string())
        .send()
        .unwrap();
    let (st, v) = common::server::reply(r);
    assert_eq!(st, 200);
    assert_eq!(v["sources"], done["sources"]);
    // a repository outside the token: the stream carries the error
    let (st, v) = {
        let r = s
            .http
            .post(format!("{}/api/v1/ask", s.base))
            .bearer_auth(&t)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(json!({"question": "what is RefreshCache?", "repo": "tools"}).to_string())
            .send()
            .unwrap();
        common::server::reply(r)
    };
    assert_eq!((st, v["error"]["code"].as_str()), (404, Some("not_found")));
}

#[test]
fn the_openapi_document_is_the_recorded_one() {
    let ken = Ken::new();
    let s = Server::start(&ken, &[]);
    let (st, doc) = s.get("/openapi.json", None);
    assert_eq!(st, 200);
    expect_recorded("wire/openapi.json", &doc);
}

#[test]
fn every_documented_route_is_served() {
    let ken = Ken::new();
    let _repos = two_repos(&ken);
    let t = token(&ken, &["*"], "read");
    let s = Server::start(&ken, &[]);
    let (st, doc) = s.get("/openapi.json", None);
    assert_eq!(st, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in ["get", "post"] {
            if item.get(method).is_none() {
                continue;
            }
            let url = format!(
                "{}{}",
                s.base,
                path.replace("{name}", "shop").replace("{id}", "job_x")
            );
            let req = match method {
                "get" => s.http.get(url),
                _ => s
                    .http
                    .post(url)
                    .header("content-type", "application/json")
                    .body("{}"),
            };
            let (st, v) = common::server::reply(req.bearer_auth(&t).send().unwrap());
            // whatever the answer, it is not the router's "no such route"
            let msg = v["error"]["message"].as_str().unwrap_or("");
            assert!(
                !(st == 404 && msg.starts_with("no such route")) && st != 405,
                "{method} {path}: {st} {v}"
            );
            assert!(v.is_object() || st == 200, "{method} {path}: not JSON: {v}");
            checked += 1;
        }
    }
    assert!(checked >= 18, "{checked} operations");
}

#[test]
fn refuses_a_public_address_without_tokens() {
    let ken = Ken::new();
    let out = ken.run(&["serve", "--addr", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no API token"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ken token create"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn new_commits_are_seen_without_a_restart() {
    let ken = Ken::new();
    let (shop, _tools) = two_repos(&ken);
    let t = token(&ken, &["*"], "read");
    let s = Server::start(&ken, &[]);
    let (_, v) = s.get("/api/v1/search?q=apply_discount&repo=shop", Some(&t));
    assert!(!paths(&v).iter().any(|p| p.contains("discount")));
    shop.write(
        "src/shop/discount.py",
        "def apply_discount(price, pct):\n    return price * (1 - pct / 100)\n",
    );
    shop.commit("discounts");
    // another process (the CLI) updates the index while the server runs
    ken.index(&[shop.path().to_str().unwrap(), "--name", "shop"]);
    let t0 = Instant::now();
    loop {
        let (_, v) = s.get("/api/v1/search?q=apply_discount&repo=shop", Some(&t));
        if paths(&v).first().map(String::as_str) == Some("src/shop/discount.py") {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(5), "not seen: {v}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
