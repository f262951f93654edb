//! The semantic layer through the binary: `ken embed`, embedding during
//! `ken index` with a content-hash cache, resume after SIGKILL, Ctrl-C
//! while embedding, a worker finishing what a run left, partial coverage,
//! and `--mode`.

mod common;

use std::time::Duration;

use common::*;

#[test]
fn embed_prints_normalised_vectors() {
    let ken = Ken::new();
    // the f32 model, whose published values are checked below
    std::fs::write(ken.home.path().join("config.toml"), "embed_int8 = false\n").unwrap();
    let mut c = ken.cmd_embedding();
    c.args([
        "embed",
        "--json",
        "This is an example sentence",
        "fn main() {}",
    ]);
    let v = json_of(c);
    assert!(
        v["model"]
            .as_str()
            .unwrap()
            .starts_with("local:all-MiniLM-L6-v2")
    );
    assert_eq!(v["dim"], 384);
    let vectors = v["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 2);
    let first: Vec<f64> = vectors[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(first.len(), 384);
    let norm: f64 = first.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
    // the well-known first values of all-MiniLM-L6-v2
    for (got, want) in first.iter().zip([0.0677, 0.0635, 0.0487, 0.0793, 0.0374]) {
        assert!((got - want).abs() < 1e-3, "{got} vs {want}");
    }
}

#[test]
fn int8_is_the_default_where_the_cpu_has_it() {
    let ken = Ken::new();
    let mut c = ken.cmd_embedding();
    c.args(["embed", "--json", "This is an example sentence"]);
    let int8 = json_of(c);
    std::fs::write(ken.home.path().join("config.toml"), "embed_int8 = false\n").unwrap();
    let mut c = ken.cmd_embedding();
    c.args(["embed", "--json", "This is an example sentence"]);
    let full = json_of(c);
    let model = int8["model"].as_str().unwrap();
    assert_eq!(
        model.ends_with(":int8"),
        ken_engine::models::int8_available(),
        "{model}"
    );
    assert!(!full["model"].as_str().unwrap().ends_with(":int8"));
    let (a, b) = (&int8["vectors"][0], &full["vectors"][0]);
    let dot: f64 = (0..384)
        .map(|i| a[i].as_f64().unwrap() * b[i].as_f64().unwrap())
        .sum();
    assert!(dot > 0.99, "cosine {dot}");
}

#[test]
fn embed_without_a_model_says_what_to_do() {
    let ken = Ken::new();
    let out = ken
        .cmd()
        .env("KEN_EMBEDDER", "local")
        .env("KEN_EMBED_MODEL_DIR", "/nonexistent")
        .env("HOME", ken.home.path())
        .args(["embed", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ken model install"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn vectors_are_cached_by_content_across_commits() {
    let r = Repo::new();
    python_project(&r);
    let ken = Ken::new();
    let p = r.path().to_str().unwrap();
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--rev", "HEAD", "--name", "shop"]);
    r.commit("one");
    let first = json_of(c);
    let total = first["embed"]["chunks"].as_u64().unwrap();
    assert_eq!(first["embed"]["embedded"], total);
    assert_eq!(first["embed"]["indexed"], total);

    // one file changes: only its chunk is embedded again
    r.write(
        "src/shop/payments.py",
        "def charge_card(card):\n    \"\"\"Charge a card once.\"\"\"\n    return card.charge()\n",
    );
    r.commit("two");
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--rev", "HEAD", "--name", "shop"]);
    let second = json_of(c);
    assert_eq!(second["embed"]["embedded"], 1, "{second}");
    // back to the first commit: everything is in the cache
    let mut c = ken.cmd_embedding();
    let sha = r.git(&["rev-parse", "HEAD~1"]);
    c.args(["index", "--json", p, "--rev", &sha, "--name", "shop"]);
    let third = json_of(c);
    assert_eq!(third["embed"]["embedded"], 0, "{third}");

    // semantic search finds code by meaning, and says which signals found it
    let mut c = ken.cmd_embedding();
    c.args([
        "search",
        "--json",
        "--mode",
        "semantic",
        "wait longer after every failed attempt",
    ]);
    let v = json_of(c);
    assert_eq!(v["results"][0]["path"], "src/shop/payments.py", "{v}");
    assert!(v["results"][0]["signals"]["dense"].is_object());
    for r in v["results"].as_array().unwrap() {
        // dense only: no lexical list of chunks or of whole files
        assert!(r["signals"].get("bm25").is_none(), "{r}");
        assert!(r["signals"].get("file").is_none(), "{r}");
    }
    let mut c = ken.cmd_embedding();
    c.args(["search", "--json", "wait longer after every failed attempt"]);
    let v = json_of(c);
    assert!(
        v["results"][0]["signals"]["dense"].is_object(),
        "hybrid uses vectors when they exist: {v}"
    );
    // lexical mode does not
    let mut c = ken.cmd_embedding();
    c.args(["search", "--json", "--mode", "lexical", "payment"]);
    let v = json_of(c);
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["signals"].get("dense").is_none())
    );
}

#[test]
fn an_up_to_date_index_leaves_the_vector_index_as_it_is() {
    let r = Repo::new();
    python_project(&r);
    r.commit("one");
    let ken = Ken::new();
    let p = r.path().to_str().unwrap();
    let vectors = |ken: &Ken| -> Vec<(String, Vec<u8>)> {
        let dir = ken.index_dir("shop").join("vectors");
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--rev", "HEAD", "--name", "shop"]);
    let first = json_of(c);
    assert!(first["embed"]["indexed"].as_u64().unwrap() > 0, "{first}");
    let before = vectors(&ken);
    assert!(
        before.iter().any(|(n, _)| n.ends_with(".vec")),
        "{before:?}"
    );
    // nothing changed: nothing embedded, and the index is not built again
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--rev", "HEAD", "--name", "shop"]);
    let again = json_of(c);
    assert_eq!(again["up_to_date"], true, "{again}");
    assert_eq!(again["embed"]["embedded"], 0, "{again}");
    assert_eq!(again["embed"]["indexed"], first["embed"]["indexed"]);
    assert!(
        vectors(&ken) == before,
        "an up-to-date run rewrote the vector index"
    );
    // a change builds it again
    r.write(
        "src/shop/extra.py",
        "def refund_card(card):\n    return card.refund()\n",
    );
    r.commit("two");
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--rev", "HEAD", "--name", "shop"]);
    let changed = json_of(c);
    assert_eq!(changed["embed"]["embedded"], 1, "{changed}");
    assert!(vectors(&ken) != before);
}

/// A repository with a few hundred chunks: embedding takes tens of seconds.
fn many_chunks() -> Repo {
    let r = Repo::new();
    for f in 0..40 {
        let mut body = String::new();
        for i in 0..20 {
            body.push_str(&format!(
                "def step_{f}_{i}(items, limit={i}):\n    \"\"\"Process batch {f}.{i}: filter, sort and keep the first items.\"\"\"\n    kept = [x for x in items if x % {m} == 0]\n    kept.sort(reverse={rev})\n    total = sum(kept[:limit])\n    return total * {f} + {i}\n\n\n",
                m = i + 2,
                rev = if i % 2 == 0 { "True" } else { "False" }
            ));
        }
        r.write(&format!("pipeline/stage_{f}.py"), body);
    }
    r.commit("pipeline");
    r
}

#[test]
fn killed_embedding_resumes_and_search_reports_coverage() {
    let r = many_chunks();
    let p = r.path().to_str().unwrap().to_string();
    let ken = Ken::new();
    // lexical first, then embedding in a run that gets killed
    ken.index(&[&p, "--name", "pipe", "--no-embed"]);
    let mut child = ken
        .cmd_embedding()
        .args(["index", "--quiet", &p, "--name", "pipe"])
        .spawn()
        .unwrap();
    // wait until some batches are committed (status shows the progress), then SIGKILL
    let t0 = std::time::Instant::now();
    let mut progress = (0, 0);
    while t0.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(300));
        let v = ken.json(&["status", "--json"]);
        if let Some(e) = v["repos"][0]["embeddings"]
            .as_array()
            .and_then(|a| a.first())
        {
            progress = (
                e["embedded"].as_u64().unwrap(),
                e["chunks"].as_u64().unwrap(),
            );
            if progress.0 > 0 {
                break;
            }
        }
    }
    let finished = child.try_wait().unwrap().is_some();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !finished && progress.0 > 0 && progress.0 < progress.1,
        "kill mid-embedding: {progress:?}, finished {finished}"
    );

    // search still works; the vector index may not exist yet (it is built at the end)
    let mut c = ken.cmd_embedding();
    c.args(["search", "--json", "filter and sort the items"]);
    let v = json_of(c);
    assert!(!v["results"].as_array().unwrap().is_empty());

    // the next run embeds only what was not committed before the kill
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", &p, "--name", "pipe"]);
    let rep = json_of(c);
    let e = &rep["embed"];
    assert!(
        e["cached"].as_u64().unwrap() > 0,
        "batches committed before the kill are kept: {e}"
    );
    assert_eq!(
        e["cached"].as_u64().unwrap() + e["embedded"].as_u64().unwrap(),
        e["chunks"].as_u64().unwrap()
    );
    assert_eq!(e["indexed"], e["chunks"]);

    // coverage: a new commit adds chunks the vector index does not have yet
    r.write(
        "pipeline/extra.py",
        "def brand_new_stage(x):\n    return x\n",
    );
    r.commit("extra");
    let rep = ken.index(&[&p, "--name", "pipe", "--no-embed"]);
    assert_eq!(rep["added"], 1, "{rep}");
    let mut c = ken.cmd_embedding();
    c.args(["search", "--json", "brand new stage"]);
    let v = json_of(c);
    let notes = v["notes"].to_string();
    assert!(notes.contains("semantic coverage"), "{v}");
}

/// The only repository's embedding as `ken status --json` shows it:
/// (embedded, chunks, indexed) when it has vectors, and whether a run left
/// it unfinished.
fn embedding_state(ken: &Ken) -> (Option<(u64, u64, u64)>, bool) {
    let v = ken.json(&["status", "--json"]);
    let repo = &v["repos"][0];
    let progress = repo["embeddings"]
        .as_array()
        .and_then(|a| a.first())
        .and_then(|e| {
            Some((
                e["embedded"].as_u64()?,
                e["chunks"].as_u64()?,
                e["indexed"].as_u64()?,
            ))
        });
    (progress, repo["embedding_unfinished"] == true)
}

/// `look` every `every` until `done` holds of what it saw or `within`
/// passes; the last look.
fn poll<T>(
    within: Duration,
    every: Duration,
    look: impl Fn() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let t0 = std::time::Instant::now();
    loop {
        std::thread::sleep(every);
        let seen = look();
        if done(&seen) || t0.elapsed() >= within {
            return seen;
        }
    }
}

#[test]
fn ctrl_c_while_embedding_keeps_the_index_and_what_is_embedded() {
    let r = many_chunks();
    let p = r.path().to_str().unwrap().to_string();
    let ken = Ken::new();
    let child = ken
        .cmd_embedding()
        .args(["index", "--json", &p, "--name", "pipe"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (seen, _) = poll(
        Duration::from_secs(120),
        Duration::from_millis(300),
        || embedding_state(&ken),
        |(seen, _)| seen.is_some_and(|(embedded, _, _)| embedded > 0),
    );
    assert!(
        seen.is_some_and(|(e, c, _)| e > 0 && e < c),
        "caught mid-embedding: {seen:?}"
    );
    // SAFETY: a signal to our own child process
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &rep["embed"];
    assert_eq!(e["stopped"], true, "{rep}");
    assert!(e["left"].as_u64().unwrap() > 0, "{e}");
    assert!(
        e["indexed"].as_u64().unwrap() > 0,
        "what was embedded is searchable: {e}"
    );
    let searchable = rep["searchable_ms"].as_u64().unwrap();
    assert!(searchable <= rep["elapsed_ms"].as_u64().unwrap(), "{rep}");
    let status = ken.json(&["status", "--json"]);
    assert_eq!(status["repos"][0]["embedding_unfinished"], true, "{status}");
    assert_eq!(status["repos"][0]["pending"], serde_json::Value::Null);
    // the lexical index is whole: the last file is found
    let v = ken.search(&["step_39_19"]);
    assert_eq!(paths(&v)[0], "pipeline/stage_39.py", "{v}");
}

#[test]
fn a_worker_finishes_the_embedding_a_run_left() {
    let r = many_chunks();
    let p = r.path().to_str().unwrap().to_string();
    let ken = Ken::new();
    // a budget of 0 s: one batch, the rest left
    let mut c = ken.cmd_embedding();
    c.args([
        "index",
        "--json",
        &p,
        "--name",
        "pipe",
        "--embed-budget",
        "0",
    ]);
    let e = json_of(c)["embed"].clone();
    assert!(e["left"].as_u64().unwrap() > 0, "{e}");
    let mut worker = ken
        .cmd_embedding()
        .args(["worker", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let complete = |(seen, unfinished): &(Option<(u64, u64, u64)>, bool)| {
        seen.is_some_and(|(e, c, i)| e == c && i >= c) && !unfinished
    };
    let last = poll(
        Duration::from_secs(300),
        Duration::from_millis(500),
        || embedding_state(&ken),
        complete,
    );
    let _ = worker.kill();
    let _ = worker.wait();
    assert!(
        complete(&last),
        "the worker embedded the rest without being asked: {last:?}"
    );
    let jobs = ken.json(&["jobs", "list", "--json"]);
    let origins: Vec<&str> = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|j| j["origin"].as_str())
        .collect();
    assert!(origins.contains(&"resume"), "{jobs}");
}

/// `ken search --json --mode semantic -n LIMIT QUERY`.
fn semantic_search(ken: &Ken, query: &str, limit: usize) -> serde_json::Value {
    let mut c = ken.cmd_embedding();
    let limit = limit.to_string();
    c.args([
        "search", "--json", "--mode", "semantic", "-n", &limit, query,
    ]);
    json_of(c)
}

#[test]
fn a_time_budget_embeds_source_before_tests() {
    let r = Repo::new();
    let mut src = String::from("import os\nLIMIT = 3\n\n");
    for i in 0..20 {
        src.push_str(&format!(
            "def retry_request_{i}(session, attempts={i}):\n    \"\"\"Retry a failed HTTP request with backoff.\"\"\"\n    for n in range(attempts):\n        if session.send():\n            return n\n    return -1\n\n\n"
        ));
    }
    r.write("client/retry.py", src);
    let mut tests = String::from("import pytest\n\n");
    for i in 0..60 {
        tests.push_str(&format!(
            "def test_retry_{i}():\n    session = FakeSession(fail_times={i})\n    assert retry_request_{}(session) == -1\n    assert session.calls == {i}\n\n\n",
            i % 20
        ));
    }
    r.write("tests/test_retry.py", tests);
    r.write("README.md", "# client\n\nRetries requests.\n");
    r.commit("client");
    let p = r.path().to_str().unwrap().to_string();
    let ken = Ken::new();

    // a budget of 0 s: one batch (32 texts), the source's among them
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", &p, "--name", "cl", "--embed-budget", "0"]);
    let e = json_of(c)["embed"].clone();
    assert_eq!(e["embedded"], 32, "{e}");
    let left = e["left"].as_u64().unwrap();
    assert!(left > 0, "{e}");
    assert_eq!(e["indexed"], 32, "what was embedded is searchable: {e}");
    let v = semantic_search(&ken, "retry with backoff", 60);
    let hits = v["results"].as_array().unwrap();
    let held = |dir: &str| {
        hits.iter()
            .filter(|h| h["path"].as_str().unwrap().starts_with(dir))
            .count()
    };
    // the 20 definitions, the module chunk and the README, then tests
    assert_eq!(
        held("client/"),
        21,
        "every chunk of the source is held: {v}"
    );
    assert!(held("tests/") <= 10, "tests wait: {v}");
    assert!(
        v["notes"].to_string().contains("semantic coverage"),
        "partial coverage is said: {v}"
    );

    // the next run goes on from there
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", &p, "--name", "cl"]);
    let e = json_of(c)["embed"].clone();
    assert_eq!(e["embedded"].as_u64().unwrap(), left, "{e}");
    assert_eq!(e["left"], 0);
    assert_eq!(e["indexed"], e["chunks"]);
}

/// A long function whose last lines are what the question is about.
fn long_function_repo() -> Repo {
    let r = Repo::new();
    let mut body = String::from("def run_client(settings):\n    \"\"\"Run the client.\"\"\"\n");
    for i in 0..80 {
        body.push_str(&format!(
            "    value_{i} = settings.get(\"option_{i}\", {i})\n"
        ));
    }
    body.push_str(
        "    # the server is overloaded: wait twice as long after every failed attempt\n\
         \x20   delay = 1\n\
         \x20   while not send_request(settings):\n\
         \x20       sleep(delay)\n\
         \x20       delay = delay * 2\n",
    );
    r.write("client.py", &body);
    r.write(
        "colors.py",
        "def mix_colors(a, b):\n    \"\"\"Blend two paint colours.\"\"\"\n    return (a + b) / 2\n",
    );
    r.write(
        "names.py",
        "def greet(name):\n    \"\"\"Say hello to a person.\"\"\"\n    return 'hello ' + name\n",
    );
    r.commit("client");
    r
}

#[test]
fn long_chunks_are_embedded_in_windows() {
    let r = long_function_repo();
    let p = r.path().to_str().unwrap();
    let ken = Ken::new();
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p]);
    let v = json_of(c);
    let chunks = v["embed"]["chunks"].as_u64().unwrap();
    let rows = v["embed"]["indexed"].as_u64().unwrap();
    assert!(rows > chunks, "the long function has several vectors: {v}");
    let v = semantic_search(
        &ken,
        "retry with a doubling delay when the server is overloaded",
        5,
    );
    let results = v["results"].as_array().unwrap();
    assert_eq!(results[0]["symbol"], "run_client", "{v}");
    // one result per chunk, however many of its windows matched
    let firsts = results
        .iter()
        .filter(|r| r["symbol"] == "run_client")
        .count();
    assert_eq!(firsts, 1, "{v}");

    // embed_windows = 1: one vector per chunk
    let ken = Ken::new();
    std::fs::write(ken.home.path().join("config.toml"), "embed_windows = 1\n").unwrap();
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p]);
    let v = json_of(c);
    assert_eq!(v["embed"]["indexed"], v["embed"]["chunks"], "{v}");
}

/// Five modules, each called by a team code name that only commit
/// messages use (the code never says it), and 230 commits that each add
/// a function to one module under its code name.
fn code_named_history() -> Repo {
    const TEAMS: [(&str, &str, &str); 5] = [
        ("falcon", "billing/ledger.py", "balance"),
        ("otter", "stock/shelves.py", "crate"),
        ("heron", "mail/outbox.py", "letter"),
        ("badger", "auth/keys.py", "secret"),
        ("marmot", "maps/tiles.py", "tile"),
    ];
    const VERBS: [&str; 6] = ["fix", "add", "speed up", "clean up", "handle", "log"];
    const THINGS: [&str; 7] = [
        "the edge case",
        "a retry",
        "empty input",
        "the cache",
        "large batches",
        "a timeout",
        "the report",
    ];
    let r = Repo::new();
    let mut bodies: Vec<String> = TEAMS
        .iter()
        .map(|(_, _, noun)| format!("def new_{noun}():\n    return {{}}\n"))
        .collect();
    for (i, (_, path, _)) in TEAMS.iter().enumerate() {
        r.write(path, &bodies[i]);
    }
    r.commit_as(
        "Ada",
        "ada@example.com",
        "2024-01-01T09:00:00",
        "start the five modules",
    );
    for n in 0..230 {
        let t = (n * 7 + n / 5) % TEAMS.len();
        let (team, path, noun) = TEAMS[t];
        bodies[t].push_str(&format!(
            "\n\ndef {noun}_step_{n}(value, count={n}):\n    \"\"\"Step {n} for each {noun}.\"\"\"\n    return [value] * (count % 7)\n"
        ));
        r.write(path, &bodies[t]);
        let day = 2 + n / 10;
        let date = format!(
            "2024-{:02}-{:02}T{:02}:00:00",
            1 + day / 28,
            1 + day % 28,
            8 + n % 10
        );
        let message = format!(
            "{team}: {} {} (#{})",
            VERBS[n % VERBS.len()],
            THINGS[(n / 2) % THINGS.len()],
            100 + n
        );
        r.commit_as("Ada", "ada@example.com", &date, &message);
    }
    r
}

#[test]
fn dense_queries_learn_the_repository_from_its_history() {
    let r = code_named_history();
    let ken = Ken::new();
    let p = r.path().to_str().unwrap();
    // off by default: nothing is learned
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--name", "teams", "--rev", "HEAD~1"]);
    assert!(json_of(c).get("adapter").is_none());
    let config = ken.home.path().join("config.toml");
    std::fs::write(&config, "dense_adapter = true\n").unwrap();
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--name", "teams"]);
    let report = json_of(c);
    let a = &report["adapter"];
    // the fusion learner keeps its 150 questions; the map learns from the rest
    assert!(a["questions"].as_u64().unwrap() >= 40, "{a}");
    assert!(a["heldout"].as_u64().unwrap() >= 10, "{a}");
    assert_eq!(a["adopted"], true, "{a}");
    assert!(
        a["heldout_adapted"].as_f64().unwrap() > a["heldout_plain"].as_f64().unwrap(),
        "{a}"
    );
    assert!(
        a.get("weights").is_none(),
        "the factors are not reported: {a}"
    );
    // learned again by the index run that needs it, not by every run
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--name", "teams"]);
    assert!(json_of(c).get("adapter").is_none());

    // status shows it, without its factors
    let mut c = ken.cmd_embedding();
    c.args(["status", "--json"]);
    let s = json_of(c);
    let shown = &s["repos"][0]["adapter"];
    assert_eq!(shown["adopted"], true, "{s}");
    assert!(shown.get("weights").is_none(), "{s}");
    let mut c = ken.cmd_embedding();
    c.args(["status"]);
    let text = stdout(&c.output().unwrap());
    assert!(text.contains("dense queries: a map learned from"), "{text}");

    // a new question in a team's words finds the team's module, and the
    // plain query is still one switch away
    let ask = |query: &str, plain: bool| -> Vec<String> {
        std::fs::write(&config, format!("dense_adapter = {}\n", !plain)).unwrap();
        let mut c = ken.cmd_embedding();
        c.args(["search", "--json", "--mode", "semantic", "--files", query]);
        paths(&json_of(c))
    };
    let mut first = 0;
    let mut differ = 0;
    for (query, path) in [
        ("falcon: rename a variable", "billing/ledger.py"),
        ("otter: rename a variable", "stock/shelves.py"),
        ("heron: rename a variable", "mail/outbox.py"),
        ("badger: rename a variable", "auth/keys.py"),
        ("marmot: rename a variable", "maps/tiles.py"),
    ] {
        let mapped = ask(query, false);
        let plain = ask(query, true);
        first += usize::from(mapped.first().map(String::as_str) == Some(path));
        differ += usize::from(mapped != plain);
    }
    assert!(
        first >= 4,
        "{first} of 5 team questions found their module first"
    );
    assert!(
        differ >= 1,
        "`dense_adapter = false` searches with the plain query"
    );

    // switched off, the next index run forgets the map
    std::fs::write(&config, "dense_adapter = false\n").unwrap();
    let mut c = ken.cmd_embedding();
    c.args(["index", "--json", p, "--name", "teams"]);
    json_of(c);
    let mut c = ken.cmd_embedding();
    c.args(["status", "--json"]);
    let s = json_of(c);
    assert!(s["repos"][0].get("adapter").is_none(), "{s}");
}
