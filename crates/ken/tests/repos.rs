//! Finding and following the fleet: `ken repos sync` against a scripted
//! GitHub REST API on a real socket (pages, rate limit, token), `ken repos
//! poll` against real git remotes (file:// clones), configured branches
//! searched with `branch:`, and a worker polling on its own.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Ken, Repo, python_project};
use serde_json::{Value, json};

const TOKEN: &str = "ghp_sync_secret_0123456789";

/// A GitHub REST API serving one organisation's repositories in two pages,
/// the first request refused by a spent rate limit.
struct GitHub {
    base: String,
    /// Request lines and headers, one string per request.
    seen: Arc<Mutex<Vec<String>>>,
}

impl GitHub {
    fn start(org: &str, page1: Value, page2: Value) -> GitHub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (log, org, base2) = (seen.clone(), org.to_string(), base.clone());
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                log.lock().unwrap().push(head.clone());
                let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                let reset = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs()
                    + 1;
                let (status, headers, body) = if n == 0 {
                    (
                        "403 Forbidden",
                        format!("x-ratelimit-remaining: 0\r\nx-ratelimit-reset: {reset}\r\n"),
                        json!({"message": "API rate limit exceeded"}),
                    )
                } else if !path.starts_with(&format!("/orgs/{org}/repos")) {
                    (
                        "404 Not Found",
                        String::new(),
                        json!({"message": "Not Found"}),
                    )
                } else if path.contains("page=2") {
                    (
                        "200 OK",
                        format!(
                            "link: <{base2}/orgs/{org}/repos?per_page=100&page=1>; rel=\"first\", <{base2}/orgs/{org}/repos?per_page=100&page=1>; rel=\"prev\"\r\n"
                        ),
                        page2.clone(),
                    )
                } else {
                    (
                        "200 OK",
                        format!(
                            "link: <{base2}/orgs/{org}/repos?per_page=100&page=2>; rel=\"next\", <{base2}/orgs/{org}/repos?per_page=100&page=2>; rel=\"last\"\r\nx-ratelimit-remaining: 4999\r\n"
                        ),
                        page1.clone(),
                    )
                };
                let body = body.to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
                    body.len()
                );
            }
        });
        GitHub { base, seen }
    }
}

/// A bare copy of `r` to clone from, as `file://`.
fn bare(r: &Repo, into: &Path, name: &str) -> String {
    let dest = into.join(format!("{name}.git"));
    let out = std::process::Command::new("git")
        .args(["clone", "-q", "--bare"])
        .arg(r.path())
        .arg(&dest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!("file://{}", dest.display())
}

fn repo_json(name: &str, url: &str, archived: bool, fork: bool) -> Value {
    json!({"full_name": name, "name": name.rsplit('/').next().unwrap(), "clone_url": url,
           "default_branch": "main", "archived": archived, "fork": fork, "private": false})
}

/// `ken` allowed to clone file:// URLs and to call a loopback API.
fn ken_cmd(ken: &Ken, args: &[&str]) -> std::process::Output {
    ken.cmd()
        .env("KEN_ALLOW_PRIVATE_URLS", "1")
        .env("GITHUB_TOKEN", TOKEN)
        .args(args)
        .output()
        .unwrap()
}

fn ken_json(ken: &Ken, args: &[&str]) -> Value {
    let out = ken_cmd(ken, args);
    assert!(
        out.status.success(),
        "ken {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(!text.contains(TOKEN), "the token leaked: {text}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains(TOKEN));
    serde_json::from_str(&text).unwrap()
}

fn by_name<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == name)
        .unwrap_or_else(|| panic!("{name} not in {list}"))
}

/// One repository's object of `ken status --json`.
fn status_of(ken: &Ken, name: &str) -> Value {
    by_name(&ken_json(ken, &["status", "--json"])["repos"], "name", name).clone()
}

/// Organisation `acme` on a scripted GitHub: api and web (queued), an
/// archived repository, a fork and an entry without a clone URL.
fn acme_org(remotes: &Path) -> GitHub {
    let api = Repo::new();
    python_project(&api);
    api.commit("initial");
    let web = Repo::new();
    web.write(
        "src/render.js",
        "export function renderInvoiceTable(rows) {\n  return rows.map(r => r.total);\n}\n",
    );
    web.commit("render invoices");
    let empty = Repo::new();
    empty.write("README.md", "# old\n");
    empty.commit("old");
    let (api_url, web_url, old_url) = (
        bare(&api, remotes, "api"),
        bare(&web, remotes, "web"),
        bare(&empty, remotes, "old"),
    );
    GitHub::start(
        "acme",
        json!([
            repo_json("acme/api", &api_url, false, false),
            repo_json("acme/old", &old_url, true, false)
        ]),
        json!([
            repo_json("acme/web", &web_url, false, false),
            repo_json("acme/web-fork", &web_url, false, true),
            repo_json("acme/local", "/etc/passwd", false, false)
        ]),
    )
}

/// `ken repos sync --github acme --api-url BASE LAST`.
fn sync_args<'a>(base: &'a str, last: &'a str) -> [&'a str; 7] {
    ["repos", "sync", "--github", "acme", "--api-url", base, last]
}

#[test]
fn sync_lists_an_organisation_and_queues_what_is_new() {
    let remotes = tempfile::tempdir().unwrap();
    let gh = acme_org(remotes.path());
    let ken = Ken::new();
    let v = ken_json(&ken, &sync_args(&gh.base, "--json"));
    assert_eq!(
        (v["host"].as_str(), v["owner"].as_str()),
        (Some("github"), Some("acme"))
    );
    assert_eq!(v["pages"], 2, "{v}");
    assert!(
        v["waited_secs"].as_u64().unwrap() >= 1,
        "the rate limit was waited out: {v}"
    );
    assert_eq!(v["queued"], 2, "{v}");
    let repos = &v["repos"];
    assert_eq!(by_name(repos, "name", "acme/api")["action"], "queued");
    assert_eq!(by_name(repos, "name", "acme/web")["action"], "queued");
    let old = by_name(repos, "name", "acme/old");
    assert_eq!(old["action"], "skipped");
    assert!(old["why"].as_str().unwrap().contains("archived"), "{old}");
    let fork = by_name(repos, "name", "acme/web-fork");
    assert!(fork["why"].as_str().unwrap().contains("fork"), "{fork}");
    assert!(
        repos
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["name"] != "acme/local"),
        "an entry without a clone URL is not listed: {v}"
    );

    // what the API was sent: the token as a bearer, a user agent, pages in order
    let seen = gh.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "rate-limited, page 1, page 2: {seen:?}");
    for req in &seen {
        let lower = req.to_ascii_lowercase();
        assert!(
            lower.contains(&format!(
                "authorization: bearer {}",
                TOKEN.to_ascii_lowercase()
            )),
            "{req}"
        );
        assert!(lower.contains("user-agent: ken/"), "{req}");
        assert!(lower.contains("x-github-api-version: 2022-11-28"), "{req}");
    }
    assert!(seen[2].contains("page=2"), "{seen:?}");

    // the queued jobs index both; a second sync has nothing to queue
    let ran = ken_json(&ken, &["jobs", "run", "--json"]);
    assert_eq!(ran["ran"], 2, "{ran}");
    let status = ken_json(&ken, &["status", "--json"]);
    let mut names: Vec<&str> = status["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["acme/api", "acme/web"]);
    let hits = ken.search(&["renderInvoiceTable"]);
    assert_eq!(hits["results"][0]["repo"], "acme/web", "{hits}");

    let again = ken_json(&ken, &sync_args(&gh.base, "--json"));
    assert_eq!(again["queued"], 0, "{again}");
    assert_eq!(
        by_name(&again["repos"], "name", "acme/api")["action"],
        "indexed"
    );

    // the text output says what happened, and never the token
    let out = ken_cmd(&ken, &sync_args(&gh.base, "--dry-run"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("0 queued"), "{text}");
    assert!(!text.contains(TOKEN));
}

#[test]
fn a_loopback_api_is_refused_without_allow_private_urls() {
    let remotes = tempfile::tempdir().unwrap();
    let gh = acme_org(remotes.path());
    let ken = Ken::new();
    // without allow_private_urls a loopback API is refused before any request
    let out = ken
        .cmd()
        .env("GITHUB_TOKEN", TOKEN)
        .args(["repos", "sync", "--github", "acme", "--api-url", &gh.base])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("allow_private_urls"));
    assert!(
        gh.seen.lock().unwrap().is_empty(),
        "no request reached the API"
    );
}

#[test]
fn poll_follows_new_commits_and_configured_branches() {
    let remotes = tempfile::tempdir().unwrap();
    let src = Repo::new();
    python_project(&src);
    src.commit("initial");
    let url = bare(&src, remotes.path(), "shop");
    let bare_path = url.trim_start_matches("file://").to_string();
    let push = |refspec: &str| src.git(&["push", "-q", &bare_path, refspec]);
    let ken = Ken::new();
    let first = ken_json(&ken, &["index", &url, "--name", "shop", "--json"]);

    // nothing moved: fresh, and the status says when it was polled
    let v = ken_json(&ken, &["repos", "poll", "--json"]);
    let shop = by_name(&v["repos"], "repo", "shop");
    assert_eq!(
        (shop["action"].as_str(), v["queued"].as_u64()),
        (Some("fresh"), Some(0)),
        "{v}"
    );
    let shop = status_of(&ken, "shop");
    let remote = &shop["remote"];
    assert_eq!(remote["fresh"], true, "{shop}");
    assert_eq!(remote["head"], first["commit"]);

    // a new commit at the source: one job, whatever the number of polls
    src.write(
        "src/shop/refunds.py",
        "def issue_partial_refund(order):\n    return order.total / 2\n",
    );
    let next = src.commit("partial refunds");
    push("main");
    let v = ken_json(&ken, &["repos", "poll", "--json"]);
    assert_eq!(
        by_name(&v["repos"], "repo", "shop")["action"],
        "queued",
        "{v}"
    );
    assert_eq!(by_name(&v["repos"], "repo", "shop")["head"], next.as_str());
    let v2 = ken_json(&ken, &["repos", "poll", "--json"]);
    assert_eq!(
        v2["repos"][0]["job"], v["repos"][0]["job"],
        "the same job: {v2}"
    );
    assert_eq!(status_of(&ken, "shop")["remote"]["fresh"], false);
    assert_eq!(ken_json(&ken, &["jobs", "run", "--json"])["ran"], 1);
    let v = ken_json(&ken, &["repos", "poll", "--json"]);
    assert_eq!(
        by_name(&v["repos"], "repo", "shop")["action"],
        "fresh",
        "{v}"
    );
    let hits = ken.search(&["issue_partial_refund"]);
    assert_eq!(hits["results"][0]["path"], "src/shop/refunds.py", "{hits}");

    // a second branch, configured: indexed as shop@release, searched by branch only
    src.git(&["checkout", "-q", "-b", "release"]);
    src.write(
        "src/shop/release_notes.py",
        "def summarize_release_notes():\n    return 'notes'\n",
    );
    src.commit("release notes");
    push("release");
    src.git(&["checkout", "-q", "main"]);
    std::fs::write(
        ken.home.path().join("config.toml"),
        "[repos.shop]\nbranches = [\"main\", \"release\"]\n",
    )
    .unwrap();
    let v = ken_json(&ken, &["repos", "poll", "--json"]);
    let rel = by_name(&v["repos"], "repo", "shop@release");
    assert_eq!(
        (rel["action"].as_str(), rel["branch"].as_str()),
        (Some("queued"), Some("release")),
        "{v}"
    );
    assert_eq!(ken_json(&ken, &["jobs", "run", "--json"])["ran"], 1);
    let status = ken_json(&ken, &["status", "--json"]);
    assert_eq!(
        by_name(&status["repos"], "name", "shop@release")["branch"],
        "release"
    );
    assert!(
        by_name(&status["repos"], "name", "shop")
            .get("branch")
            .is_none()
    );

    let plain = ken.search(&["summarize_release_notes"]);
    assert!(
        plain["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["repo"] != "shop@release"),
        "a branch is searched only when asked for: {plain}"
    );
    let on_release = ken.search(&["summarize_release_notes", "--branch", "release"]);
    assert_eq!(
        on_release["results"][0]["repo"], "shop@release",
        "{on_release}"
    );
    assert_eq!(
        on_release["results"][0]["path"],
        "src/shop/release_notes.py"
    );
    let typed = ken.search(&["branch:release summarize_release_notes"]);
    assert_eq!(typed["results"][0]["repo"], "shop@release", "{typed}");
    let out = ken.run(&["search", "anything", "--branch", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no index follows branch nope") && err.contains("shop@release"),
        "{err}"
    );

    let v = ken_json(&ken, &["repos", "poll", "--json"]);
    assert_eq!(v["queued"], 0, "everything is fresh: {v}");
}

#[test]
fn a_worker_polls_on_its_own() {
    let remotes = tempfile::tempdir().unwrap();
    let src = Repo::new();
    python_project(&src);
    src.commit("initial");
    let url = bare(&src, remotes.path(), "shop");
    let bare_path = url.trim_start_matches("file://").to_string();
    let ken = Ken::new();
    ken_json(&ken, &["index", &url, "--name", "shop", "--json"]);
    std::fs::write(ken.home.path().join("config.toml"), "poll_interval = 1\n").unwrap();
    let mut worker = ken
        .cmd()
        .env("KEN_ALLOW_PRIVATE_URLS", "1")
        .args(["worker", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    src.write(
        "src/shop/loyalty.py",
        "def award_loyalty_points(order):\n    return 10\n",
    );
    let next = src.commit("loyalty points");
    src.git(&["push", "-q", &bare_path, "main"]);
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut commit = Value::Null;
    while Instant::now() < deadline {
        commit = status_of(&ken, "shop")["commit"].clone();
        if commit == next.as_str() {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let _ = worker.kill();
    let _ = worker.wait();
    assert_eq!(
        commit,
        next.as_str(),
        "the worker polled the source and indexed the new head"
    );
}
