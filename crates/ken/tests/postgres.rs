//! Indexes in PostgreSQL (`--store postgres://…`, `KEN_STORE`): the same
//! repository indexed into the embedded store and into a database answers
//! the same; two servers on one database see what the other indexed.

mod common;

use common::pg::Db;
use common::server::{Server, token};
use common::*;
use serde_json::Value;

/// A token in the database's home.
fn pg_token(ken: &Ken, url: &str, scope: &str) -> String {
    ken.json(&[
        "--json", "token", "create", "--scope", scope, "--repo", "*", "--store", url,
    ])["token"]
        .as_str()
        .unwrap()
        .to_string()
}

fn top_paths(v: &Value, n: usize) -> Vec<String> {
    paths(v).into_iter().take(n).collect()
}

#[test]
fn a_repository_in_postgres_answers_as_in_the_embedded_store() {
    let db = Db::new();
    let url = db.url();
    let r = Repo::new();
    python_project(&r);
    r.commit_as(
        "Ada Lovelace",
        "ada@example.com",
        "2024-01-02T10:00:00",
        "initial",
    );
    let src = r.path().to_str().unwrap();

    let embedded = Ken::new();
    let in_pg = Ken::new();
    let rep_e = embedded.index(&[src, "--name", "shop"]);
    let rep_p = in_pg.index(&[src, "--name", "shop", "--store", &url]);
    for k in ["files", "chunks", "skipped"] {
        assert_eq!(rep_e[k], rep_p[k], "{k}: {rep_e} vs {rep_p}");
    }
    // nothing was written under the home's repos/
    assert!(!in_pg.home.path().join("repos").join("shop").exists());

    for q in [
        "refresh_token",
        "retry a payment after a failure",
        "SessionStore",
        "session tokens expire",
    ] {
        let e = embedded.search(&[q]);
        let p = in_pg.search(&[q, "--store", &url]);
        assert_eq!(top_paths(&e, 3), top_paths(&p, 3), "{q}");
        assert_eq!(e["results"][0]["symbol"], p["results"][0]["symbol"], "{q}");
        assert_eq!(
            e["results"][0]["start_line"], p["results"][0]["start_line"],
            "{q}"
        );
        assert_eq!(
            e["results"][0]["authors"], p["results"][0]["authors"],
            "{q}"
        );
    }
    // the environment variable selects it too; status says where it is
    let mut c = in_pg.cmd();
    c.env("KEN_STORE", &url).args(["status", "--json"]);
    let v = json_of(c);
    let repo = &v["repos"][0];
    assert_eq!(repo["name"], "shop", "{v}");
    assert_eq!(repo["stats"]["files"], rep_p["files"]);
    let mut c = in_pg.cmd();
    c.env("KEN_STORE", &url).arg("status");
    let text = stdout(&c.output().unwrap());
    assert!(text.contains("index at postgres://"), "{text}");
    // a second run is no work
    let again = in_pg.index(&[src, "--name", "shop", "--store", &url]);
    assert_eq!(again["processed"], 0, "{again}");
    assert_eq!(again["files"], rep_p["files"], "{again}");

    // a server on the database answers, and sees a commit another process
    // indexes; tokens live in the database too
    let t = pg_token(&in_pg, &url, "read");
    let home_token = token(&in_pg, &["*"], "read");
    let s = Server::start_with(&in_pg, &["--store", &url], &[]);
    let (st, v) = s.get("/api/v1/search?q=refresh_token", Some(&t));
    assert_eq!(st, 200, "{v}");
    assert_eq!(paths(&v)[0], "src/shop/session.py");
    let (st, _) = s.get("/api/v1/search?q=refresh_token", Some(&home_token));
    assert_eq!(st, 401, "a token of the home is not one of the database");
    // a NUL in a request (PostgreSQL text cannot hold one) finds nothing,
    // it does not fail
    for route in [
        "/api/v1/search?q=a%00b",
        "/api/v1/symbols?q=a%00b",
        "/api/v1/who?q=src/shop/a%00b.py",
        "/api/v1/who?q=a%00b",
        "/api/v1/log?q=a%00b",
        "/api/v1/impact?symbol=a%00b",
        "/api/v1/callers?symbol=a%00b",
    ] {
        let (st, v) = s.get(route, Some(&t));
        assert_eq!(st, 200, "{route}: {v}");
    }
    r.write(
        "src/shop/refunds.py",
        "def refund_payment(payment):\n    \"\"\"Give the money back.\"\"\"\n    return -payment.amount\n",
    );
    r.commit("refunds");
    in_pg.index(&[src, "--name", "shop", "--store", &url]);
    let (_, v) = s.get("/api/v1/search?q=refund_payment", Some(&t));
    assert_eq!(paths(&v)[0], "src/shop/refunds.py", "{v}");

    // a second repository: a question without one is routed through the
    // database's own tables, as the embedded store routes it through its
    // collection index
    let other = Repo::new();
    other.write(
        "geometry/shapes.py",
        "class Polygon:\n    \"\"\"A closed polygon in the plane.\"\"\"\n\n    def area(self):\n        \"\"\"The polygon's area, by the shoelace formula.\"\"\"\n        return shoelace(self.vertices)\n",
    );
    other.commit("Polygons and their area");
    let osrc = other.path().to_str().unwrap();
    embedded.index(&[osrc, "--name", "geometry"]);
    embedded.index(&[src, "--name", "shop"]);
    in_pg.index(&[osrc, "--name", "geometry", "--store", &url]);
    for (q, repo) in [
        ("polygon area shoelace formula", "geometry"),
        ("retry a payment after a failure", "shop"),
    ] {
        let e = embedded.search(&[q]);
        let p = in_pg.search(&[q, "--store", &url]);
        assert_eq!(e["results"][0]["repo"], repo, "{q}: {e}");
        assert_eq!(p["results"][0]["repo"], repo, "{q}: {p}");
        assert_eq!(top_paths(&e, 1), top_paths(&p, 1), "{q}");
    }
}

#[test]
fn a_database_that_cannot_be_reached_is_a_clear_error() {
    let ken = Ken::new();
    let out = ken.run(&[
        "search",
        "x",
        "--store",
        "postgres://ken:hunter2@127.0.0.1:1/ken",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("cannot connect"), "{err}");
    assert!(
        !err.contains("hunter2"),
        "the password is never printed: {err}"
    );
    let out = ken.run(&["search", "x", "--store", "mysql://x"]);
    assert!(stderr(&out).contains("PostgreSQL URL"), "{}", stderr(&out));
}

/// Run `ken ARGS --json` with the model on, in one store or the other.
fn json_embedding(ken: &Ken, args: &[&str], store: Option<&str>) -> Value {
    let mut c = ken.cmd_embedding();
    c.args(args).arg("--json");
    if let Some(url) = store {
        c.args(["--store", url]);
    }
    json_of(c)
}

#[test]
fn vectors_graph_and_people_answer_the_same_in_postgres() {
    let db = Db::new();
    let url = db.url();
    let r = Repo::new();
    python_project(&r);
    r.write(
        "src/shop/checkout.py",
        "from shop.payments import retry_payment\nfrom shop.session import SessionStore\n\n\ndef checkout(cart, charge):\n    \"\"\"Pay for the cart, refreshing the session first.\"\"\"\n    SessionStore().refresh_token(cart.user)\n    return retry_payment(charge)\n",
    );
    r.commit_as(
        "Ada Lovelace",
        "ada@example.com",
        "2024-01-02T10:00:00",
        "initial",
    );
    r.write(
        "src/shop/session.py",
        std::fs::read_to_string(r.path().join("src/shop/session.py"))
            .unwrap()
            .replace("secrets.token_hex(16)", "secrets.token_hex(32)"),
    );
    r.commit_as(
        "Grace Hopper",
        "grace@example.com",
        "2024-02-02T10:00:00",
        "longer tokens",
    );
    let src = r.path().to_str().unwrap();
    let embedded = Ken::new();
    let in_pg = Ken::new();
    json_embedding(&embedded, &["index", src, "--name", "shop"], None);
    let rep = json_embedding(&in_pg, &["index", src, "--name", "shop"], Some(&url));
    assert!(rep["embed"].is_object(), "{rep}");

    for args in [
        vec![
            "search",
            "how do we pay again after a failure",
            "--mode",
            "semantic",
        ],
        vec!["search", "keep a user's session alive", "--mode", "hybrid"],
        vec!["callers", "retry_payment"],
        vec!["impact", "SessionStore"],
        vec!["who", "src/shop/session.py"],
        vec!["log-search", "longer tokens"],
    ] {
        let e = json_embedding(&embedded, &args, None);
        let p = json_embedding(&in_pg, &args, Some(&url));
        let key = if e.get("results").is_some() {
            "results"
        } else {
            "people"
        };
        let strip = |v: &Value| -> Vec<Value> {
            v[key]
                .as_array()
                .unwrap_or(&Vec::new())
                .iter()
                .take(3)
                .map(|x| {
                    let mut x = x.clone();
                    // scores differ in the last digits (BM25 in SQL vs tantivy)
                    if let Some(o) = x.as_object_mut() {
                        o.remove("score");
                        o.remove("signals");
                    }
                    x
                })
                .collect()
        };
        assert!(!strip(&e).is_empty(), "{args:?}: {e}");
        assert_eq!(strip(&e), strip(&p), "{args:?}");
    }
}

#[test]
fn a_killed_writer_leaves_the_lease_and_a_consistent_index() {
    let db = Db::new();
    let url = db.url();
    let r = big_repo(800, 30);
    let p = r.path().to_str().unwrap().to_string();
    let reference = Ken::new();
    let full = reference.index(&[&p, "--rev", "HEAD", "--name", "big"]);

    let ken = Ken::new();
    let index_cmd = |ken: &Ken| {
        let mut c = ken.cmd();
        c.args([
            "index",
            "--quiet",
            &p,
            "--rev",
            "HEAD",
            "--name",
            "big",
            "--threads",
            "1",
        ])
        .args(["--store", &url]);
        c
    };
    let started = std::time::Instant::now();
    let mut child = index_cmd(&ken).spawn().unwrap();
    // wait until the first batch is in, then try a second writer
    let mut refused = false;
    while started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        if child.try_wait().unwrap().is_some() {
            break;
        }
        // only once a batch of the first writer is in does it surely hold
        // the lease (a second writer started earlier could take it first)
        let status = ken.run(&["status", "--json", "--store", &url]);
        let files = serde_json::from_slice::<Value>(&status.stdout)
            .ok()
            .and_then(|v| v["repos"][0]["stats"]["files"].as_u64())
            .unwrap_or(0);
        if files == 0 {
            continue;
        }
        let out = index_cmd(&ken).output().unwrap();
        if !out.status.success() {
            assert_eq!(out.status.code(), Some(3), "busy: {}", stderr(&out));
            assert!(stderr(&out).contains("another"), "{}", stderr(&out));
            refused = true;
            break;
        }
    }
    assert!(
        refused,
        "a second writer was never refused while the first ran"
    );
    child.kill().unwrap(); // SIGKILL: its session, and with it the lease, goes
    child.wait().unwrap();
    // whatever was committed is searchable
    let out = ken.run(&["search", "--json", "handler_3_7", "--store", &url]);
    assert!(out.status.success(), "search after kill: {}", stderr(&out));
    // the next writer gets the lease (once the server has seen the killed
    // session go: at most moments) and completes the work, with no stale rows
    let t0 = std::time::Instant::now();
    let rep = loop {
        let out = ken.run(&[
            "index", "--json", &p, "--rev", "HEAD", "--name", "big", "--store", &url,
        ]);
        if out.status.code() == Some(3) && t0.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(200));
            continue;
        }
        assert!(out.status.success(), "{}", stderr(&out));
        break serde_json::from_slice::<Value>(&out.stdout).unwrap();
    };
    assert_eq!(rep["files"], full["files"], "{rep}");
    let done = ken.json(&["status", "--json", "--store", &url]);
    let reference_status = reference.json(&["status", "--json"]);
    assert_eq!(
        done["repos"][0]["stats"],
        reference_status["repos"][0]["stats"]
    );
}

/// A worker killed with SIGKILL mid-job leaves the job to another worker,
/// which finishes it: one done job, the index complete, nothing twice.
#[test]
fn a_job_of_a_killed_worker_is_finished_by_another() {
    let db = Db::new();
    let url = db.url();
    // a small first commit indexed from the command line (the source is
    // recorded), then a big commit for a job
    let r = Repo::new();
    r.write("README.md", "# big\n");
    let first = r.commit("start");
    handler_files(&r, 700, 30);
    r.commit("many files");
    let p = r.path().to_str().unwrap().to_string();
    let ken = Ken::new();
    ken.index(&[&p, "--rev", &first, "--name", "big", "--store", &url]);
    let reference = Ken::new();
    reference.index(&[&p, "--rev", "HEAD", "--name", "big"]);

    let t = pg_token(&ken, &url, "index");
    // a server that only queues (and shares the database's tokens and jobs)
    let s = Server::start_with(&ken, &["--store", &url, "--no-jobs"], &[]);
    let (st, v) = s.post(
        "/api/v1/repos/big/index",
        Some(&t),
        &serde_json::json!({"rev": "HEAD"}),
    );
    assert_eq!(st, 202, "{v}");
    let job = v["job"].as_str().unwrap().to_string();

    let worker = |ken: &Ken| {
        let mut c = ken.cmd();
        c.args(["worker", "--quiet", "--store", &url])
            .env("KEN_JOB_STALE_SECS", "2");
        c.spawn().unwrap()
    };
    let state = |s: &Server| -> Value { s.get(&format!("/api/v1/jobs/{job}"), Some(&t)).1 };
    let mut a = worker(&ken);
    let started = std::time::Instant::now();
    loop {
        let v = state(&s);
        // killed once it has written something
        if v["state"] == "running" && v["progress"].is_object() {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 120,
            "worker A never ran the job: {v}"
        );
        assert_ne!(
            v["state"], "done",
            "the job finished before the kill: make the fixture bigger"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    a.kill().unwrap(); // SIGKILL
    a.wait().unwrap();
    assert_eq!(state(&s)["state"], "running", "nobody knows A is dead yet");

    let mut b = worker(&ken);
    let v = s.wait_job(&job, &t, std::time::Duration::from_secs(180));
    b.kill().unwrap();
    b.wait().unwrap();
    assert_eq!(v["state"], "done", "{v}");
    assert_eq!(
        v["attempts"], 2,
        "taken again after A's heartbeat stopped: {v}"
    );

    // the index is complete and holds nothing twice
    let done = ken.json(&["status", "--json", "--store", &url]);
    let want = reference.json(&["status", "--json"]);
    assert_eq!(done["repos"][0]["stats"], want["repos"][0]["stats"]);
    assert_eq!(done["repos"][0]["commit"], want["repos"][0]["commit"]);
}

/// Two servers on one database (each with a home of its own, as on two
/// machines) and a worker: a job queued on one server is run by the
/// worker, and a search on the other server sees the commit as soon as
/// the job is done; concurrent searches on both answer alike.
#[test]
fn two_servers_and_a_worker_share_one_database() {
    let db = Db::new();
    let url = db.url();
    let r = Repo::new();
    python_project(&r);
    let first = r.commit("initial");
    let src = r.path().to_str().unwrap().to_string();
    let (a_home, b_home, w_home) = (Ken::new(), Ken::new(), Ken::new());
    a_home.index(&[&src, "--rev", &first, "--name", "shop", "--store", &url]);
    let t = pg_token(&a_home, &url, "index");
    let a = Server::start_with(&a_home, &["--store", &url, "--no-jobs"], &[]);
    let b = Server::start_with(&b_home, &["--store", &url, "--no-jobs"], &[]);
    let mut worker = w_home.cmd();
    worker.args(["worker", "--quiet", "--store", &url]);
    let mut worker = worker.spawn().unwrap();

    let (st, v) = b.get("/api/v1/search?q=refund_payment", Some(&t));
    assert_eq!(st, 200, "{v}");
    assert!(
        !paths(&v).contains(&"src/shop/refunds.py".to_string()),
        "{v}"
    );
    // a commit, queued on A, run by the worker, seen on B
    r.write(
        "src/shop/refunds.py",
        "def refund_payment(payment):\n    \"\"\"Give the money back.\"\"\"\n    return -payment.amount\n",
    );
    r.commit("refunds");
    let (st, v) = a.post(
        "/api/v1/repos/shop/index",
        Some(&t),
        &serde_json::json!({"rev": "HEAD"}),
    );
    assert_eq!(st, 202, "{v}");
    let job = v["job"].as_str().unwrap().to_string();
    let done = b.wait_job(&job, &t, std::time::Duration::from_secs(120));
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["progress"]["phase"], "done", "{done}");
    assert_eq!(
        done["progress"]["done"], done["progress"]["total"],
        "{done}"
    );
    // readers check the data version at most every 200 ms
    let seen_after = std::time::Instant::now();
    let v = loop {
        let (_, v) = b.get("/api/v1/search?q=refund_payment", Some(&t));
        if paths(&v).first().map(String::as_str) == Some("src/shop/refunds.py") {
            break v;
        }
        assert!(
            seen_after.elapsed().as_millis() < 2000,
            "B does not see the worker's commit: {v}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(v["results"][0]["path"], "src/shop/refunds.py");

    // many searches at once on both servers: every one answers, alike
    let answers: Vec<(u16, Vec<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|i| {
                let (server, t) = (if i % 2 == 0 { &a } else { &b }, &t);
                s.spawn(move || {
                    let (st, v) =
                        server.get("/api/v1/search?q=refresh%20the%20session%20token", Some(t));
                    (st, top_paths(&v, 3))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(answers.iter().all(|(st, _)| *st == 200), "{answers:?}");
    assert!(
        answers
            .iter()
            .all(|(_, p)| *p == answers[0].1 && !p.is_empty()),
        "{answers:?}"
    );
    worker.kill().unwrap();
    worker.wait().unwrap();
}
