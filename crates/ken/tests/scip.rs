//! `ken index --scip`: a SCIP index built in the test by scip-python
//! (installed from npm by scripts/install-scip.sh) read into the code
//! graph; callers and references follow it, files edited since fall back
//! to resolution by name, and a bad index is a clear error.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

/// Two classes with a `run` method: `make().run()` names neither by
/// itself, and `handler = make` uses `make` without calling it.
fn project() -> Repo {
    let r = Repo::new();
    r.write("app/__init__.py", "");
    r.write(
        "app/workers.py",
        "class Worker:\n    def run(self, job: str) -> str:\n        return job.upper()\n\n\nclass Printer:\n    def run(self, job: str) -> str:\n        return job\n\n\ndef make() -> Worker:\n    return Worker()\n",
    );
    r.write(
        "app/main.py",
        "from app.workers import make\n\n\ndef main() -> str:\n    return make().run(\"job\")\n\n\ndef later():\n    handler = make\n    return handler()\n",
    );
    r.write(
        "app/jobs.py",
        "from app.workers import make\n\n\ndef nightly() -> str:\n    return make().run(\"nightly\")\n",
    );
    r.commit("workers");
    r
}

/// Run scip-python over `repo`, writing `out`.
fn build_scip(repo: &Path, out: &Path) {
    let o = Command::new(scip_python())
        .args(["index", "--project-name", "fx", "--quiet", "--cwd"])
        .arg(repo)
        .arg("--output")
        .arg(out)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(
        o.status.success() && out.is_file(),
        "scip-python failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// (caller, rule) of each result.
fn callers(ken: &Ken, symbol: &str) -> Vec<(String, String)> {
    let v = ken.json(&["callers", "--json", symbol]);
    let mut out: Vec<(String, String)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["symbol"].as_str().unwrap().to_string(),
                r["via"][0]["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_scip_index_resolves_what_names_cannot() {
    let r = project();
    let dir = tempfile::tempdir().unwrap();
    let scip = dir.path().join("fx.scip");
    build_scip(r.path(), &scip);
    let ken = Ken::new();
    let repo = r.path().to_str().unwrap();
    ken.index(&[repo, "--name", "fx"]);
    // by name, `make().run()` is either class's `run`: not guessed
    assert_eq!(callers(&ken, "Worker.run"), []);

    let v = ken.index(&[repo, "--name", "fx", "--scip", scip.to_str().unwrap()]);
    let s = &v["scip"];
    assert!(
        s["tool"].as_str().unwrap().starts_with("scip-python"),
        "{s}"
    );
    assert_eq!(s["stale"], 0, "{s}");
    assert!(s["files"].as_u64().unwrap() >= 3, "{s}");
    assert!(s["edges_from_scip"].as_u64().unwrap() >= 4, "{s}");
    let scip_rule = |c: &str| (c.to_string(), "scip".to_string());
    assert_eq!(
        callers(&ken, "Worker.run"),
        [scip_rule("main"), scip_rule("nightly")]
    );
    assert_eq!(callers(&ken, "Printer.run"), []);
    // `handler = make` is a use the file's own references do not record
    let refs = ken.json(&["references", "--json", "make"]);
    let lines: Vec<(u64, &str, &str)> = refs["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let s = &x["via"][0];
            (
                s["line"].as_u64().unwrap(),
                s["kind"].as_str().unwrap(),
                s["rule"].as_str().unwrap(),
            )
        })
        .filter(|(_, kind, _)| *kind != "import")
        .collect();
    assert!(lines.contains(&(9, "read", "scip")), "{refs}");
    let text = stdout(&ken.run(&["references", "make"]));
    assert!(text.contains("from the SCIP index"), "{text}");

    // the same index again is not read again
    let v = ken.index(&[repo, "--name", "fx", "--scip", scip.to_str().unwrap()]);
    assert_eq!(v["scip"]["unchanged"], true, "{}", v["scip"]);
    // status says which index the graph follows
    let st = ken.json(&["status", "--json"]);
    let used = &st["repos"][0]["scip"];
    assert!(
        used["tool"].as_str().unwrap().starts_with("scip-python"),
        "{st}"
    );
    assert!(used["files"].as_u64().unwrap() >= 3, "{st}");
    let text = stdout(&ken.run(&["status"]));
    assert!(text.contains("graph: SCIP index"), "{text}");

    // a file edited since the index was built is resolved by name again;
    // the others keep what the index said
    r.write(
        "app/main.py",
        "from app.workers import make\n\n# moved down a line\n\ndef main() -> str:\n    return make().run(\"job\")\n",
    );
    let v = ken.index(&[repo, "--name", "fx"]);
    assert_eq!(v["modified"], 1);
    assert_eq!(callers(&ken, "Worker.run"), [scip_rule("nightly")]);
}

#[test]
fn a_working_trees_own_index_is_read_and_a_bad_one_is_a_clear_error() {
    let r = project();
    build_scip(r.path(), &r.path().join("index.scip"));
    let ken = Ken::new();
    let repo = r.path().to_str().unwrap();
    let v = ken.index(&[repo, "--name", "fx"]);
    assert!(
        v["scip"]["path"].as_str().unwrap().ends_with("index.scip"),
        "{v}"
    );
    assert_eq!(v["scip"]["stale"], 0);
    assert_eq!(callers(&ken, "Worker.run").len(), 2);

    // asked for and missing, or not an index: an error that says so
    let out = ken.run(&[
        "index",
        repo,
        "--name",
        "fx",
        "--scip",
        "/nonexistent/x.scip",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("cannot read the SCIP index"),
        "{}",
        stderr(&out)
    );
    let junk = r.path().join("junk.scip");
    std::fs::write(&junk, b"\xff\xff\xff\xff\xff not protobuf").unwrap();
    let out = ken.run(&[
        "index",
        repo,
        "--name",
        "fx",
        "--scip",
        junk.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not a SCIP index"),
        "{}",
        stderr(&out)
    );

    // the working tree's own, broken: a warning, and the index is written
    std::fs::write(r.path().join("index.scip"), b"\xff\xff\xff\xff\xff").unwrap();
    let v: Value = ken.index(&[repo, "--name", "fx"]);
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("not a SCIP index"), "{v}");
}

#[test]
fn a_commits_own_index_is_read() {
    let r = project();
    build_scip(r.path(), &r.path().join("index.scip"));
    r.commit("the SCIP index");
    let ken = Ken::new();
    let repo = r.path().to_str().unwrap();
    let v = ken.index(&[repo, "--rev", "HEAD", "--name", "fx"]);
    let path = v["scip"]["path"].as_str().unwrap_or_default();
    assert!(path.starts_with("index.scip at "), "{v}");
    assert_eq!(v["scip"]["stale"], 0, "{v}");
    assert_eq!(callers(&ken, "Worker.run").len(), 2);
    // the same commit again: read before, not again
    let v = ken.index(&[repo, "--rev", "HEAD", "--name", "fx"]);
    assert_eq!(v["scip"]["unchanged"], true, "{v}");
}
