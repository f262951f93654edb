//! `ken ask`: offline extractive answers, and answers from an
//! OpenAI-compatible server started by the test (real HTTP and SSE), whose
//! citations are checked.

mod common;

use std::time::Duration;

use common::chat::{ChatServer, Reply};
use common::*;
use serde_json::Value;

fn indexed() -> (Repo, Ken) {
    let r = Repo::new();
    python_project(&r);
    r.commit("shop");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    (r, ken)
}

fn ask(ken: &Ken, server: Option<&ChatServer>, args: &[&str]) -> std::process::Output {
    let mut c = ken.cmd();
    if let Some(s) = server {
        c.env("KEN_LLM_BASE_URL", &s.url)
            .env("KEN_LLM_MODEL", "scripted-model")
            .env("KEN_LLM_API_KEY", "sk-test-SECRET-1234");
    }
    c.arg("ask").args(args).output().unwrap()
}

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}\n{}", stdout(o), stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn statuses(v: &Value) -> Vec<String> {
    v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn offline_answer_lists_code_with_checked_citations() {
    let (_r, ken) = indexed();
    let v = json(&ask(
        &ken,
        None,
        &["--json", "how is the session token refreshed?"],
    ));
    assert!(v["model"].is_null());
    assert_eq!(v["route"], "code");
    assert!(!v["steps"].as_array().unwrap().is_empty());
    assert_eq!(v["sources"][0]["path"], "src/shop/session.py", "{v}");
    let answer = v["answer"].as_str().unwrap();
    assert!(answer.contains("[src/shop/session.py:"), "{answer}");
    assert!(answer.contains("No language model is configured"));
    // every listed item cites a source, and every citation is valid
    let claims = v["claims"].as_array().unwrap();
    let cited: Vec<&Value> = claims
        .iter()
        .filter(|c| !c["citations"].as_array().unwrap().is_empty())
        .collect();
    assert!(!cited.is_empty());
    for c in cited {
        assert_eq!(c["status"], "verified", "{c}");
        assert!(
            c["citations"]
                .as_array()
                .unwrap()
                .iter()
                .all(|x| x["valid"] == true)
        );
    }
    // human output
    let o = ask(&ken, None, &["how is the session token refreshed?"]);
    assert!(stdout(&o).contains("sources:"), "{}", stdout(&o));
}

#[test]
fn llm_answer_with_valid_citations_streams_and_verifies() {
    let (_r, ken) = indexed();
    let server = ChatServer::start(
        vec![Reply::Answer("`refresh_token` issues a new random token for the user and replaces the old one [src/shop/session.py:12-16].".into())],
        "code",
    );
    let v = json(&ask(
        &ken,
        Some(&server),
        &[
            "--json",
            "--no-expand",
            "how is the session token refreshed?",
        ],
    ));
    assert_eq!(v["model"], "scripted");
    assert_eq!(statuses(&v), ["verified"]);
    assert_eq!(
        v["claims"][0]["citations"][0]["path"],
        "src/shop/session.py"
    );
    assert_eq!(v["claims"][0]["citations"][0]["valid"], true);
    // the request carried the model, the context and the key
    let reqs = server.answer_requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].contains("scripted-model") && reqs[0].contains("refresh_token"));
    assert!(
        server
            .auth
            .lock()
            .unwrap()
            .iter()
            .all(|a| a == "Bearer sk-test-SECRET-1234")
    );
    // streamed to the terminal when not --json
    let server = ChatServer::start(
        vec![Reply::Answer(
            "It replaces the token [src/shop/session.py:12-16].".into(),
        )],
        "code",
    );
    let o = ask(
        &ken,
        Some(&server),
        &["--no-expand", "how is the session token refreshed?"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("It replaces the token"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("✓"), "{}", stdout(&o));
    assert!(
        server
            .requests
            .lock()
            .unwrap()
            .iter()
            .any(|b| b.contains("\"stream\":true"))
    );
}

#[test]
fn invalid_citation_is_retried_once_and_missing_ones_are_marked() {
    let (_r, ken) = indexed();
    let server = ChatServer::start(
        vec![
            Reply::Answer("Tokens are refreshed in the auth module [src/auth/tokens.py:1-9].".into()),
            Reply::Answer("Tokens are refreshed by `SessionStore.refresh_token` [src/shop/session.py:12-16]. It uses the secrets module.".into()),
        ],
        "code",
    );
    let v = json(&ask(
        &ken,
        Some(&server),
        &[
            "--json",
            "--no-expand",
            "how is the session token refreshed?",
        ],
    ));
    assert_eq!(v["retried"], true);
    // the retry request listed the invalid citation
    let reqs = server.answer_requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].contains("src/auth/tokens.py"), "{}", reqs[1]);
    assert_eq!(statuses(&v), ["verified", "unverified"], "{v}");

    // when the retry does not fix it, the invalid claim is kept and marked
    let server = ChatServer::start(
        vec![
            Reply::Answer("Refreshing happens in [src/auth/tokens.py:1-9].".into()),
            Reply::Answer("Refreshing happens in [src/auth/tokens.py:1-9].".into()),
        ],
        "code",
    );
    let v = json(&ask(
        &ken,
        Some(&server),
        &[
            "--json",
            "--no-expand",
            "how is the session token refreshed?",
        ],
    ));
    assert_eq!(statuses(&v), ["invalid"]);
    assert_eq!(v["claims"][0]["citations"][0]["valid"], false);
}

#[test]
fn rate_limits_are_retried_and_errors_are_clear() {
    let (_r, ken) = indexed();
    let server = ChatServer::start(
        vec![
            Reply::Status(429, "{\"error\":{\"message\":\"slow down\"}}".into()),
            Reply::Answer("It is in [src/shop/session.py:12-16].".into()),
        ],
        "code",
    );
    let v = json(&ask(
        &ken,
        Some(&server),
        &[
            "--json",
            "--no-expand",
            "how is the session token refreshed?",
        ],
    ));
    assert_eq!(statuses(&v), ["verified"]);

    let server = ChatServer::start(
        vec![Reply::Status(
            401,
            "{\"error\":{\"message\":\"bad key sk-test-SECRET-1234\"}}".into(),
        )],
        "code",
    );
    let o = ask(
        &ken,
        Some(&server),
        &["--no-expand", "how is the session token refreshed?"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("KEN_LLM_API_KEY"), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("SECRET") && !stdout(&o).contains("SECRET"),
        "the key never shows: {}",
        stderr(&o)
    );

    // a stalled server times out with a message, not a hang
    let server = ChatServer::start(vec![Reply::Stall(Duration::from_secs(30))], "code");
    std::fs::write(ken.home.path().join("config.toml"), "llm_timeout = 2\n").unwrap();
    let t0 = std::time::Instant::now();
    let o = ask(
        &ken,
        Some(&server),
        &["--no-expand", "how is the session token refreshed?"],
    );
    assert!(t0.elapsed() < Duration::from_secs(25));
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).to_lowercase().contains("timed out")
            || stderr(&o).to_lowercase().contains("timeout"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn people_and_impact_questions_run_their_steps() {
    let (_r, ken) = indexed();
    let v = json(&ask(
        &ken,
        None,
        &["--json", "who knows the payment retry code?"],
    ));
    assert_eq!(v["route"], "people", "{v}");
    assert!(
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kind"] == "people"),
        "{v}"
    );
    assert!(
        v["answer"].as_str().unwrap().contains("Ada Lovelace"),
        "{v}"
    );
    let v = json(&ask(
        &ken,
        None,
        &["--json", "what breaks if I delete retry_payment?"],
    ));
    assert_eq!(v["route"], "impact", "{v}");
    assert!(
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kind"] == "impact")
    );
}

#[test]
fn the_chat_model_reranks_the_code_when_asked_and_its_cost_is_reported() {
    let (_r, ken) = indexed();
    let question = "how do payments retry and session tokens refresh in the shop?";
    let source_paths = |v: &Value| -> Vec<String> {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{}:{}",
                    s["path"].as_str().unwrap(),
                    s["start_line"].as_u64().unwrap()
                )
            })
            .collect()
    };
    // The candidates in retrieval order: -n 2 with a reranker reads 6.
    let plain = json(&ask(
        &ken,
        None,
        &["--json", "--no-expand", "-n", "6", question],
    ));
    let candidates = source_paths(&plain);
    assert!(candidates.len() >= 3, "{plain}");
    assert!(plain.get("rerank").is_none(), "off unless asked: {plain}");

    // The model ranks, then answers; `--rerank` or `llm_rerank = true` asks for it.
    let reranked = |ranking: &str, rerank_flag: bool| -> (Value, Vec<String>) {
        let server = ChatServer::start(
            vec![
                Reply::Answer(ranking.into()),
                Reply::Answer("It is replaced [src/shop/session.py:12-16].".into()),
            ],
            "code",
        );
        let mut args = vec!["--json", "--no-expand", "-n", "2", question];
        if rerank_flag {
            args.push("--rerank");
        }
        (
            json(&ask(&ken, Some(&server), &args)),
            server.answer_requests(),
        )
    };
    let (v, reqs) = reranked("Sure. [3] > [1] > [2]", true);
    // the model's third candidate first, then its first
    assert_eq!(
        source_paths(&v),
        [candidates[2].clone(), candidates[0].clone()],
        "{v}"
    );
    assert_eq!(v["rerank"]["model"], "scripted-model", "{v}");
    assert_eq!(v["rerank"]["documents"], candidates.len(), "{v}");
    assert_eq!(v["rerank"]["tokens"], 111, "{v}");
    assert!(v["rerank"]["ms"].is_u64());
    assert_eq!(reqs.len(), 2, "one ranking, one answer");
    assert!(
        reqs[0].contains("Ranking:") && reqs[0].contains("[3] "),
        "{}",
        reqs[0]
    );

    // an answer naming no candidate leaves the retrieval order
    let (v, _) = reranked("I cannot tell.", true);
    assert_eq!(source_paths(&v), candidates[..2], "{v}");
    assert_eq!(v["rerank"]["documents"], candidates.len(), "{v}");

    // a failed ranking call keeps the retrieval order and reports no reranking
    let server = ChatServer::start(
        vec![
            Reply::Status(400, "{\"error\":{\"message\":\"bad request\"}}".into()),
            Reply::Answer("It is replaced [src/shop/session.py:12-16].".into()),
        ],
        "code",
    );
    let v = json(&ask(
        &ken,
        Some(&server),
        &["--json", "--no-expand", "--rerank", "-n", "2", question],
    ));
    assert_eq!(source_paths(&v), candidates[..2], "{v}");
    assert!(v.get("rerank").is_none(), "{v}");

    // llm_rerank in config.toml makes it the default
    std::fs::write(ken.home.path().join("config.toml"), "llm_rerank = true\n").unwrap();
    let (v, _) = reranked("[2] > [1]", false);
    assert_eq!(
        source_paths(&v),
        [candidates[1].clone(), candidates[0].clone()],
        "{v}"
    );
}

#[test]
fn one_file_gives_no_more_than_its_share_of_the_context_unless_named() {
    let r = Repo::new();
    let mut big = String::new();
    for i in 0..12 {
        big.push_str(&format!(
            "def skip_large_file_{i}(path, limit):\n    \"\"\"Skip a large file over the limit ({i}).\"\"\"\n    size = path.stat().st_size\n    if size > limit * {i}:\n        log.info(\"skipped %s: %d bytes\", path, size)\n        return True\n    if path.suffix in BINARY_SUFFIXES:\n        return True\n    return False\n\n\n"
        ));
    }
    r.write("ingest/sizes.py", big);
    for name in [
        "walker", "reader", "filters", "scanner", "loader", "fetcher",
    ] {
        r.write(
            &format!("ingest/{name}.py"),
            format!("def {name}_skips(path, limit):\n    \"\"\"A large file is skipped by the {name}.\"\"\"\n    return path.size > limit\n"),
        );
    }
    r.commit("ingest");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "ingest"]);
    let from = |v: &Value, path: &str| {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["path"] == path)
            .count()
    };
    let v = json(&ask(
        &ken,
        None,
        &["--json", "how is a large file skipped?"],
    ));
    assert_eq!(v["sources"].as_array().unwrap().len(), 8, "{v}");
    assert_eq!(from(&v, "ingest/sizes.py"), 3, "3 of 8 by default: {v}");
    // named, the file is not capped (and a file named without its folder is found)
    for q in [
        "how does ingest/sizes.py skip a large file?",
        "how does sizes.py skip a large file?",
    ] {
        let v = json(&ask(&ken, None, &["--json", q]));
        assert!(from(&v, "ingest/sizes.py") > 3, "{q}: {v}");
    }
    // and the cap is a setting
    std::fs::write(
        ken.home.path().join("config.toml"),
        "context_file_share = 1.0\n",
    )
    .unwrap();
    let v = json(&ask(
        &ken,
        None,
        &["--json", "how is a large file skipped?"],
    ));
    assert!(from(&v, "ingest/sizes.py") > 3, "{v}");
}
