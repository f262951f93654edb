//! Push webhooks into index jobs: signatures, redeliveries, branches, and
//! a job that survives a server stopped in the middle of it.

mod common;

use std::time::{Duration, Instant};

use common::server::{Server, reply, token};
use common::*;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

const SECRET: &str = "webhook-s3cret";

fn sign(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(body);
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

fn push_body(full_name: &str, branch: &str, after: &str) -> Vec<u8> {
    json!({
        "ref": format!("refs/heads/{branch}"),
        "before": "0000000000000000000000000000000000000000",
        "after": after,
        "repository": {
            "full_name": full_name,
            "name": full_name.rsplit('/').next().unwrap(),
            "default_branch": "main",
            // never used: commits come from where the repository was indexed from
            "clone_url": "https://127.0.0.1/evil.git"
        }
    })
    .to_string()
    .into_bytes()
}

fn deliver(
    s: &Server,
    body: &[u8],
    signature: Option<&str>,
    delivery: &str,
    event: &str,
) -> (u16, Value) {
    let mut r = s
        .http
        .post(format!("{}/hooks/github", s.base))
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .body(body.to_vec());
    if let Some(sig) = signature {
        r = r.header("x-hub-signature-256", sig);
    }
    reply(r.send().unwrap())
}

#[test]
fn pushes_queue_one_job_per_commit_and_update_the_index() {
    let r = Repo::new();
    python_project(&r);
    let initial = r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "acme/shop"]);
    let t = token(&ken, &["*"], "read");
    let s = Server::start(&ken, &[("KEN_WEBHOOK_SECRET", SECRET)]);

    // a new commit, pushed
    r.write(
        "src/shop/discount.py",
        "def apply_discount(price, pct):\n    \"\"\"Take pct percent off.\"\"\"\n    return price * (1 - pct / 100)\n",
    );
    let sha = r.commit("discounts");
    let body = push_body("acme/shop", "main", &sha);

    // forged and missing signatures are refused before anything is read
    let forged = sign(b"something else");
    let (st, v) = deliver(&s, &body, Some(&forged), "d-0", "push");
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (401, Some("unauthorized")),
        "{v}"
    );
    let (st, _) = deliver(&s, &body, None, "d-0", "push");
    assert_eq!(st, 401);
    let (st, _) = deliver(&s, &body, Some("sha256=zz"), "d-0", "push");
    assert_eq!(st, 401);
    // a signature over a different secret
    let mut mac = Hmac::<Sha256>::new_from_slice(b"wrong").unwrap();
    mac.update(&body);
    let other: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let (st, _) = deliver(&s, &body, Some(&format!("sha256={other}")), "d-0", "push");
    assert_eq!(st, 401);

    // the real one: 202 with a job, quickly
    let t0 = Instant::now();
    let (st, v) = deliver(&s, &body, Some(&sign(&body)), "d-1", "push");
    let took = t0.elapsed();
    assert_eq!(st, 202, "{v}");
    assert_eq!(v["new"], true);
    let job = v["job"].as_str().unwrap().to_string();
    assert!(took < Duration::from_secs(2), "{took:?}");

    // redelivery of the same delivery, or the same commit again: same job
    let (st, v) = deliver(&s, &body, Some(&sign(&body)), "d-1", "push");
    assert_eq!(
        (st, v["job"].as_str(), &v["new"]),
        (202, Some(job.as_str()), &json!(false))
    );
    let (st, v) = deliver(&s, &body, Some(&sign(&body)), "d-2", "push");
    assert_eq!(
        (st, v["job"].as_str(), &v["new"]),
        (202, Some(job.as_str()), &json!(false))
    );

    // the job runs and the new code is searchable
    let done = s.wait_job(&job, &t, Duration::from_secs(120));
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["origin"], "webhook");
    assert_eq!(done["rev"], sha.as_str());
    let (_, v) = s.get("/api/v1/search?q=apply_discount", Some(&t));
    assert_eq!(paths(&v)[0], "src/shop/discount.py", "{v}");
    let (_, v) = s.get("/api/v1/repos/acme%2Fshop", Some(&t));
    assert_eq!(v["commit"], sha.as_str(), "{v}");

    // a push to a branch that is not indexed, a deleted branch, an unknown repository
    let b = push_body("acme/shop", "feature/x", &sha);
    let (st, v) = deliver(&s, &b, Some(&sign(&b)), "d-3", "push");
    assert_eq!(st, 200, "{v}");
    assert!(v["ignored"].as_str().unwrap().contains("feature/x"), "{v}");
    let b = push_body(
        "acme/shop",
        "main",
        "0000000000000000000000000000000000000000",
    );
    let (st, v) = deliver(&s, &b, Some(&sign(&b)), "d-4", "push");
    assert_eq!(st, 200);
    assert!(v["ignored"].as_str().unwrap().contains("deleted"), "{v}");
    let b = push_body("someone/else", "main", &sha);
    let (st, v) = deliver(&s, &b, Some(&sign(&b)), "d-5", "push");
    assert_eq!(st, 200);
    assert!(
        v["ignored"].as_str().unwrap().contains("someone/else"),
        "{v}"
    );
    // other events are acknowledged
    let b = br#"{"zen": "Keep it logically awesome."}"#;
    let (st, v) = deliver(&s, b, Some(&sign(b)), "d-6", "ping");
    assert_eq!(st, 200, "{v}");
    // a signed body that is not a push payload
    let b = br#"{"ref": 5}"#;
    let (st, v) = deliver(&s, b, Some(&sign(b)), "d-7", "push");
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("bad_request"))
    );
    // the commit indexed already, pushed again: the job that indexed it
    let (st, v) = deliver(&s, &body, Some(&sign(&body)), "d-8", "push");
    assert_eq!(
        (st, v["job"].as_str(), &v["new"]),
        (202, Some(job.as_str()), &json!(false))
    );

    // once the index has moved away (a force-push, another indexer), the
    // same commit pushed again is indexed again
    ken.index(&[
        r.path().to_str().unwrap(),
        "--name",
        "acme/shop",
        "--rev",
        &initial,
    ]);
    // a replay of the earlier push (its signed body again, under any
    // delivery id or none) moves nothing back
    let (st, v) = deliver(&s, &body, Some(&sign(&body)), "d-forged", "push");
    assert_eq!((st, &v["new"]), (202, &json!(false)), "{v}");
    let (st, v) = reply(
        s.http
            .post(format!("{}/hooks/github", s.base))
            .header("content-type", "application/json")
            .header("x-hub-signature-256", sign(&body))
            .body(body.clone())
            .send()
            .unwrap(),
    );
    assert_eq!((st, &v["new"]), (202, &json!(false)), "{v}");
    // a new push of that commit (GitHub's says where the branch was before)
    let mut repush: Value = serde_json::from_slice(&body).unwrap();
    repush["before"] = json!(initial);
    let repush = repush.to_string().into_bytes();
    let (st, v) = deliver(&s, &repush, Some(&sign(&repush)), "d-9", "push");
    assert_eq!((st, &v["new"]), (202, &json!(true)), "{v}");
    assert_ne!(v["job"].as_str(), Some(job.as_str()));
    let again = s.wait_job(v["job"].as_str().unwrap(), &t, Duration::from_secs(120));
    assert_eq!(again["state"], "done", "{again}");
    let (_, v) = s.get("/api/v1/repos/acme%2Fshop", Some(&t));
    assert_eq!(v["commit"], sha.as_str(), "{v}");
}

#[test]
fn configured_branches_and_a_server_without_a_secret() {
    let r = Repo::new();
    python_project(&r);
    let sha = r.commit("initial");
    r.git(&["checkout", "-q", "-b", "release"]);
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop", "--rev", &sha]);
    std::fs::write(
        ken.home.path().join("config.toml"),
        "[repos.shop]\nbranches = [\"release\"]\n",
    )
    .unwrap();
    // no secret: webhooks are off, never open
    let s = Server::start(&ken, &[]);
    let b = push_body("acme/shop", "release", &sha);
    let (st, v) = deliver(&s, &b, Some(&sign(&b)), "x-1", "push");
    assert_eq!((st, v["error"]["code"].as_str()), (404, Some("not_found")));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("KEN_WEBHOOK_SECRET")
    );
    drop(s);

    let s = Server::start(&ken, &[("KEN_WEBHOOK_SECRET", SECRET)]);
    let b = push_body("acme/shop", "main", &sha);
    let (st, v) = deliver(&s, &b, Some(&sign(&b)), "x-2", "push");
    assert_eq!(st, 200, "main is not configured for shop: {v}");
    // the commit already indexed: nothing to do
    let b = push_body("acme/shop", "release", &sha);
    let (st, v) = deliver(&s, &b, Some(&sign(&b)), "x-3", "push");
    assert_eq!(st, 200, "{v}");
    assert!(
        v["ignored"].as_str().unwrap().contains("already indexed"),
        "{v}"
    );
    // a new commit on the configured branch
    r.write("src/shop/release.py", "VERSION = '1.0'\n");
    let next = r.commit("release 1.0");
    let b = push_body("acme/shop", "release", &next);
    let (st, v) = deliver(&s, &b, Some(&sign(&b)), "x-4", "push");
    assert_eq!(st, 202, "{v}");
}

#[test]
fn gitlab_push_hooks_check_the_token() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "group/shop"]);
    r.write("src/shop/tax.py", "RATE = 0.2\n");
    let sha = r.commit("tax");
    let s = Server::start(&ken, &[("KEN_WEBHOOK_SECRET", SECRET)]);
    let body = json!({
        "object_kind": "push",
        "ref": "refs/heads/main",
        "after": sha,
        "project": {"path_with_namespace": "group/shop", "name": "shop", "default_branch": "main"}
    })
    .to_string();
    let send = |token: &str| {
        reply(
            s.http
                .post(format!("{}/hooks/gitlab", s.base))
                .header("content-type", "application/json")
                .header("x-gitlab-event", "Push Hook")
                .header("x-gitlab-token", token)
                .body(body.clone())
                .send()
                .unwrap(),
        )
    };
    assert_eq!(send("wrong").0, 401);
    let (st, v) = send(SECRET);
    assert_eq!(st, 202, "{v}");
}

/// Enough code that embedding it takes several seconds.
fn big_project(r: &Repo) {
    for f in 0..12 {
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&format!(
                "def handler_{f}_{i}(request, retries={i}):\n    \"\"\"Handle request {i} of module {f}: validate, retry, log.\"\"\"\n    for attempt in range(retries):\n        if request.valid(attempt):\n            return request.process({i} * attempt + {f})\n    raise ValueError('module {f} request {i} failed')\n\n\n"
            ));
        }
        r.write(&format!("pkg/mod_{f}.py"), text);
    }
}

#[test]
fn a_job_stopped_by_sigterm_resumes_after_a_restart() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let t = token(&ken, &["*"], "index");
    let mut serve = ken.cmd_embedding();
    serve.args(["--json", "serve", "--addr", "127.0.0.1:0"]);
    let mut s = Server::spawn(serve, &[]);

    big_project(&r);
    r.commit("many handlers");
    let (st, v) = s.post("/api/v1/repos/shop/index", Some(&t), &json!({}));
    assert_eq!(st, 202, "{v}");
    let job = v["job"].as_str().unwrap().to_string();
    // wait until it is embedding, then stop the server
    let t0 = Instant::now();
    loop {
        let (_, j) = s.get(&format!("/api/v1/jobs/{job}"), Some(&t));
        if j["state"] == "running" && j["progress"]["phase"] == "embedding" {
            break;
        }
        assert!(
            j["state"] != "done",
            "the job finished before it could be stopped: {j}"
        );
        assert!(t0.elapsed() < Duration::from_secs(60), "{j}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = s
        .terminate(Duration::from_secs(30))
        .expect("stops on SIGTERM");
    assert!(status.success(), "{status:?}");
    let jobs = ken.json(&["--json", "jobs", "list"]);
    let j = &jobs["jobs"][0];
    assert_eq!(
        (j["id"].as_str(), j["state"].as_str()),
        (Some(job.as_str()), Some("queued")),
        "{jobs}"
    );

    // restart: the job resumes and finishes; the new code is searchable
    let mut serve = ken.cmd_embedding();
    serve.args(["--json", "serve", "--addr", "127.0.0.1:0"]);
    let s = Server::spawn(serve, &[]);
    let done = s.wait_job(&job, &t, Duration::from_secs(300));
    assert_eq!(done["state"], "done", "{done}");
    assert!(done["attempts"].as_u64().unwrap() >= 2, "{done}");
    let (_, v) = s.get("/api/v1/search?q=handler_7_13&mode=lexical", Some(&t));
    assert_eq!(paths(&v)[0], "pkg/mod_7.py", "{v}");
    let (_, st) = s.get("/api/v1/repos/shop", Some(&t));
    let e = &st["embeddings"][0];
    assert_eq!(
        e["embedded"], e["chunks"],
        "every chunk embedded after the resume: {st}"
    );
}

#[test]
fn a_push_to_another_configured_branch_is_indexed_apart() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[
        r.path().to_str().unwrap(),
        "--name",
        "acme/shop",
        "--rev",
        "main",
    ]);
    std::fs::write(
        ken.home.path().join("config.toml"),
        "[repos.\"acme/shop\"]\nbranches = [\"main\", \"release\"]\n",
    )
    .unwrap();
    r.git(&["checkout", "-q", "-b", "release"]);
    r.write(
        "src/shop/hotfix.py",
        "def rollback_hotfix_window():\n    return 3\n",
    );
    let sha = r.commit("hotfix window");
    r.git(&["checkout", "-q", "main"]);
    let t = token(&ken, &["*"], "read");
    let s = Server::start(&ken, &[("KEN_WEBHOOK_SECRET", SECRET)]);
    let body = push_body("acme/shop", "release", &sha);
    let (st, v) = deliver(&s, &body, Some(&sign(&body)), "b-1", "push");
    assert_eq!(st, 202, "{v}");
    let done = s.wait_job(v["job"].as_str().unwrap(), &t, Duration::from_secs(120));
    assert_eq!(
        (done["state"].as_str(), done["repo"].as_str()),
        (Some("done"), Some("acme/shop@release")),
        "{done}"
    );
    let (st, repo) = s.get("/api/v1/repos/acme%2Fshop@release", Some(&t));
    assert_eq!(
        (st, repo["branch"].as_str()),
        (200, Some("release")),
        "{repo}"
    );
    assert_eq!(repo["commit"], sha.as_str());
    // the default branch's index did not move
    let (_, main) = s.get("/api/v1/repos/acme%2Fshop", Some(&t));
    assert_ne!(main["commit"], sha.as_str(), "{main}");
    let (_, found) = s.get(
        "/api/v1/search?q=rollback_hotfix_window&branch=release",
        Some(&t),
    );
    assert_eq!(found["results"][0]["repo"], "acme/shop@release", "{found}");
    let (_, plain) = s.get("/api/v1/search?q=rollback_hotfix_window", Some(&t));
    assert!(
        plain["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["repo"] != "acme/shop@release"),
        "{plain}"
    );
}
