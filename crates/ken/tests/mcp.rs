//! MCP with a real client: the official MCP Python SDK (`tests/mcp_client.py`)
//! over stdio (`ken mcp`) and streamable HTTP (`/mcp` under `ken serve`).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::server::{Server, token};
use common::*;
use serde_json::{Value, json};

/// The Python with the MCP SDK: `$KEN_TEST_PYTHON`, else the virtualenv
/// `scripts/install-test-tools.sh` makes. Missing, the test fails and says so.
fn python() -> PathBuf {
    test_python("mcp")
}

fn client(args: &[&str]) -> Value {
    let script = common::manifest_dir().join("tests/mcp_client.py");
    let out = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
}

/// A repository where `load_config` is called through a chain.
fn project(r: &Repo) {
    r.write(
        "app/config.py",
        "def load_config(path):\n    \"\"\"Read the settings file at path.\"\"\"\n    with open(path) as f:\n        return f.read()\n",
    );
    r.write(
        "app/server.py",
        "from app.config import load_config\n\n\ndef start(path):\n    settings = load_config(path)\n    return settings\n",
    );
    r.write(
        "app/main.py",
        "from app.server import start\n\n\ndef main():\n    start('settings.toml')\n",
    );
}

/// What both transports must show.
fn check(t: &Value, commit: &str) {
    assert_eq!(
        t["tools"],
        json!([
            "ask",
            "callers",
            "find_references",
            "find_symbol",
            "impact",
            "index_repository",
            "read_range",
            "repo_status",
            "search_code",
            "who_knows"
        ])
    );
    for (name, required) in [
        ("search_code", vec!["query"]),
        ("read_range", vec!["repo", "path"]),
        ("impact", vec!["symbol"]),
        ("who_knows", vec!["query"]),
        ("ask", vec!["question"]),
        ("index_repository", vec!["repo"]),
    ] {
        assert_eq!(t["schemas"][name]["required"], json!(required), "{name}");
        assert!(
            t["descriptions"][name].as_str().unwrap().len() > 40,
            "{name} has a description an agent can act on"
        );
    }
    let search = &t["search_code"];
    assert_eq!(search["error"], false, "{search}");
    let first = &search["value"]["results"][0];
    assert_eq!(first["path"], "app/config.py", "{search}");
    assert_eq!(first["symbol"], "load_config");
    assert_eq!(first["commit"], commit);
    assert_eq!(first["authors"][0]["name"], "Ada Lovelace");
    assert_eq!(
        t["find_symbol"]["value"]["results"][0]["path"],
        "app/config.py"
    );
    assert_eq!(
        t["read_range"]["value"]["text"]
            .as_str()
            .unwrap()
            .lines()
            .next(),
        Some("def load_config(path):")
    );
    let impact = &t["impact"]["value"]["results"];
    let found: Vec<(&str, u64)> = impact
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["symbol"].as_str().unwrap(), r["depth"].as_u64().unwrap()))
        .collect();
    assert!(found.contains(&("start", 1)), "{found:?}");
    assert_eq!(t["impact"]["value"]["commit"], commit);
    assert!(found.contains(&("main", 2)), "{found:?}");
    let main = impact
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["symbol"] == "main")
        .unwrap();
    assert_eq!(
        main["via"].as_array().unwrap().len(),
        2,
        "the chain: {main}"
    );
    assert_eq!(t["callers"]["value"]["results"][0]["symbol"], "start");
    // every place load_config is written: its import, then its call
    let refs: Vec<String> = t["find_references"]["value"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", t["find_references"]))
        .iter()
        .map(|r| {
            let step = &r["via"][0];
            format!(
                "{}:{} {} {}",
                step["path"].as_str().unwrap(),
                step["line"],
                step["kind"].as_str().unwrap(),
                r["symbol"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        refs,
        [
            "app/server.py:1 import <module>",
            "app/server.py:5 call start"
        ]
    );
    assert_eq!(t["who_knows"]["value"]["people"][0]["name"], "Ada Lovelace");
    assert_eq!(t["repo_status"]["value"]["repos"][0]["name"], "app");
    assert!(
        t["ask"]["value"]["answer"]
            .as_str()
            .unwrap()
            .contains("load_config")
    );
    // engine errors are tool errors with the wire's error body
    assert_eq!(t["missing_repo"]["error"], true);
    assert_eq!(t["missing_repo"]["value"]["error"]["code"], "not_found");
    assert_eq!(t["bad_path"]["value"]["error"]["code"], "not_found");
}

#[test]
fn mcp_over_stdio() {
    let r = Repo::new();
    project(&r);
    let sha = r.commit("config loading");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "app"]);
    let t = client(&[
        "stdio",
        env!("CARGO_BIN_EXE_ken"),
        ken.home.path().to_str().unwrap(),
        "app",
        "load_config",
        "load_config",
    ]);
    check(&t, &sha);
    // the tools' names, descriptions and argument schemas are a contract
    let tools = json!({"descriptions": t["descriptions"], "schemas": t["schemas"]});
    expect_recorded("wire/mcp-tools.json", &tools);
    // the local user may index; the job runs in `ken mcp` itself
    assert_eq!(
        t["index_repository"]["error"], false,
        "{}",
        t["index_repository"]
    );
    let id = t["index_repository"]["value"]["job"].as_str().unwrap();
    let job = ken.json(&["--json", "jobs", "show", id]);
    assert!(job["state"] == "done" || job["state"] == "queued" || job["state"] == "running");
}

#[test]
fn mcp_over_http_with_tokens() {
    let r = Repo::new();
    project(&r);
    let sha = r.commit("config loading");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "app"]);
    let read = token(&ken, &["app"], "read");
    let s = Server::start(&ken, &[]);
    let url = format!("{}/mcp", s.base);
    let t = client(&["http", &url, &read, "app", "load_config", "load_config"]);
    check(&t, &sha);
    // a read token cannot queue an index job
    let idx = &t["index_repository"];
    assert_eq!(idx["error"], true, "{idx}");
    assert_eq!(idx["value"]["error"]["code"], "unauthorized");

    // with an index token it can
    let index = token(&ken, &["app"], "index");
    let t = client(&["http", &url, &index, "app", "load_config", "load_config"]);
    assert_eq!(
        t["index_repository"]["error"], false,
        "{}",
        t["index_repository"]
    );
    let id = t["index_repository"]["value"]["job"].as_str().unwrap();
    let job = s.wait_job(id, &index, std::time::Duration::from_secs(60));
    assert_eq!(job["state"], "done", "{job}");

    // no token: refused before MCP sees the request
    let r = s
        .http
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}})
            .to_string(),
        )
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
}
