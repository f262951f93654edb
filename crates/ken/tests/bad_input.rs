//! Bad input gets a clear message, the right exit code, and never a panic.

mod common;

use common::*;

fn no_panic(o: &std::process::Output) {
    let e = stderr(o);
    assert!(!e.contains("panicked"), "panic: {e}");
    assert!(!e.contains("RUST_BACKTRACE"), "panic: {e}");
}

#[test]
fn odd_files_are_indexed_or_skipped_with_reasons() {
    let r = Repo::new();
    python_project(&r);
    // invalid UTF-8 (Latin-1)
    r.write(
        "src/latin1.py",
        b"# caf\xe9\ndef latin_function():\n    return 1\n",
    );
    // 10,000-deep nesting in three languages
    // (one bracket a line: a single 20,000-character line would be skipped as minified)
    r.write(
        "src/deep.py",
        format!("x = {}1{}\n", "[\n".repeat(10_000), "]\n".repeat(10_000)),
    );
    r.write(
        "src/deep.js",
        format!(
            "const x = {}1{};\n",
            "(\n".repeat(10_000),
            ")\n".repeat(10_000)
        ),
    );
    r.write(
        "src/deep.rs",
        format!(
            "fn f() {{ {} }}\n",
            "{\n".repeat(10_000) + &"}\n".repeat(10_000)
        ),
    );
    // a broken notebook
    r.write(
        "notebooks/broken.ipynb",
        "{\"cells\": [ {\"cell_type\": \"code\", \"source\": ",
    );
    // a symlink leaving the repository
    std::os::unix::fs::symlink("/etc/passwd", r.path().join("src/passwd")).unwrap();
    // a 5 MB one-line file, not minified-looking (spaces), under a raised limit
    r.write("src/oneline.txt", "token ".repeat(900_000));
    // a 5 MB minified bundle
    r.write(
        "web/bundle.js",
        format!("var a={};", "b+c;".repeat(1_300_000)),
    );
    r.commit("odd files");

    let ken = Ken::new();
    let out = ken.run(&[
        "index",
        "--json",
        r.path().to_str().unwrap(),
        "--max-file-size",
        "8000000",
    ]);
    no_panic(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rep["skipped"]["symlink"], 1, "{rep}");
    assert_eq!(rep["skipped"]["generated"], 1, "the minified bundle: {rep}");
    // everything else is indexed: the project, latin1.py, three deep files, the notebook, the long line
    assert_eq!(rep["files"], 9, "{rep}");
    let warnings = rep["warnings"].to_string();
    assert!(
        warnings.contains("latin1.py") && warnings.contains("UTF-8"),
        "{warnings}"
    );

    // the odd files are searchable and nothing of /etc/passwd is
    let v = ken.search(&["latin_function"]);
    assert_eq!(paths(&v)[0], "src/latin1.py");
    let v = ken.search(&["root"]);
    assert!(!paths(&v).iter().any(|p| p.contains("passwd")), "{v}");
    // the 5 MB line is cut into bounded chunks
    let v = ken.search(&["token", "-n", "3"]);
    for r in v["results"].as_array().unwrap() {
        assert!(r["snippet"].as_str().unwrap().len() < 10_000);
    }
    // the default limit skips it as too large, and says so
    let ken2 = Ken::new();
    let rep = ken2.index(&[r.path().to_str().unwrap()]);
    assert_eq!(rep["skipped"]["too-large"], 2, "{rep}");

    // one count, by reason, everywhere: `ken status` agrees with `ken index`,
    // and so does an index run that finds nothing to do
    let status = ken2.json(&["status", "--json"]);
    let stats = &status["repos"][0]["stats"];
    assert_eq!(stats["skipped"], rep["skipped"], "{status}");
    let total: u64 = rep["skipped"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(stats["skipped_files"], total, "{status}");
    ken2.index(&[r.path().to_str().unwrap(), "--rev", "HEAD"]);
    let again = ken2.index(&[r.path().to_str().unwrap(), "--rev", "HEAD"]);
    assert_eq!(again["up_to_date"], true, "{again}");
    assert_eq!(again["skipped"], rep["skipped"], "{again}");
    let text = stdout(&ken2.run(&["status"]));
    assert!(
        text.contains(&format!("{total} skipped: ")) && text.contains("2 too-large"),
        "{text}"
    );
}

#[test]
fn a_plain_folder_is_indexed_without_people() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(
        root.join("src/retry.py"),
        "def retry_with_backoff(call, attempts=3):\n    \"\"\"Call again after a pause.\"\"\"\n    return call()\n",
    )
    .unwrap();
    std::fs::write(
        root.join("build/out.py"),
        "def retry_with_backoff_copy(): pass\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    let ken = Ken::new();
    let out = ken.run(&["index", root.to_str().unwrap()]);
    no_panic(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("not a git repository: no history, so no authors and no people"),
        "{}",
        stdout(&out)
    );
    let rep = ken.index(&[root.to_str().unwrap()]);
    assert_eq!(rep["files"], 2, "{rep}"); // .gitignore still holds outside git
    let hits = ken.search(&["retry_with_backoff"]);
    assert_eq!(paths(&hits)[0], "src/retry.py", "{hits}");
    assert!(hits["results"][0]["authors"].as_array().unwrap().is_empty());
    // `ken who` says why it names nobody
    // the folder's name made a valid repository name (`.tmpX` → `tmpX`)
    let name = rep["name"].as_str().unwrap();
    assert!(!name.starts_with('.'), "{rep}");
    let who = ken.json(&["who", "--json", "retry", "--repo", name]);
    assert!(who["people"].as_array().unwrap().is_empty(), "{who}");
    assert!(
        who["notes"][0].as_str().unwrap().contains("no history"),
        "{who}"
    );
    // a plain folder has no revisions
    let out = ken.run(&["index", root.to_str().unwrap(), "--rev", "HEAD"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not a git repository, so it has no revisions"),
        "{}",
        stderr(&out)
    );
}

/// Two files of 200 lines (over the 1 KiB filter), small ones, a large
/// file later cut small (its old version is missing, its new one present)
/// and a rename with an edit (rename detection reads both blobs).
fn history_with_large_blobs(r: &Repo) {
    let big = |tag: &str, n: usize| -> String {
        (0..n)
            .map(|j| format!("def func_{tag}_{j}(x):\n    return x * {j}\n"))
            .collect()
    };
    r.write("lib/big1.py", big("one", 200));
    r.write("lib/big2.py", big("two", 200));
    r.write("lib/grow.py", big("grow", 100));
    r.write("lib/small.py", "def small_helper():\n    return 1\n");
    r.commit_as(
        "Ada Lovelace",
        "ada@example.com",
        "2024-01-02T10:00:00",
        "first",
    );
    r.write("lib/grow.py", "def grow_small():\n    return 2\n");
    r.commit_as(
        "Grace Hopper",
        "grace@example.com",
        "2024-02-02T10:00:00",
        "shrink",
    );
    r.write("lib/big1.py", big("one", 199));
    r.git(&["mv", "lib/big1.py", "lib/renamed.py"]);
    r.commit_as(
        "Grace Hopper",
        "grace@example.com",
        "2024-03-02T10:00:00",
        "rename",
    );
}

#[test]
fn missing_git_objects_are_skipped_not_fatal() {
    let r = Repo::new();
    history_with_large_blobs(&r);
    r.git(&["config", "uploadpack.allowFilter", "true"]);
    let clones = tempfile::tempdir().unwrap();
    let partial = clones.path().join("partial.git");
    let url = format!("file://{}", r.path().display());
    let out = std::process::Command::new("git")
        .args(["clone", "-q", "--bare", "--filter=blob:limit=1k", &url])
        .arg(&partial)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // the clone really lacks blobs (else this test checks nothing)
    let missing = std::process::Command::new("git")
        .args(["rev-list", "--objects", "--all", "--missing=print"])
        .current_dir(&partial)
        .output()
        .unwrap();
    let missing = String::from_utf8_lossy(&missing.stdout);
    assert!(
        missing.lines().filter(|l| l.starts_with('?')).count() >= 3,
        "{missing}"
    );

    let ken = Ken::new();
    let out = ken.run(&["index", partial.to_str().unwrap(), "--rev", "HEAD"]);
    no_panic(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let rep = ken.index(&[
        partial.to_str().unwrap(),
        "--rev",
        "HEAD",
        "--name",
        "again",
    ]);
    assert_eq!(rep["files"], 2, "{rep}"); // small.py, grow.py
    assert_eq!(rep["skipped"]["missing-object"], 2, "{rep}"); // big2.py, renamed.py
    assert!(
        rep["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("missing from the git object database")),
        "{rep}"
    );
    // history and blame of what is present
    let hits = ken.search(&["grow_small", "--repo", "again"]);
    assert_eq!(paths(&hits)[0], "lib/grow.py", "{hits}");
    assert_eq!(
        hits["results"][0]["authors"][0]["name"], "Grace Hopper",
        "{hits}"
    );
    let status = ken.json(&["status", "--json"]);
    let again = status["repos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "again")
        .unwrap();
    assert_eq!(again["stats"]["skipped"]["missing-object"], 2, "{status}");

    // a damaged mirror: a loose blob deleted by hand
    let damaged = Repo::new();
    history_with_large_blobs(&damaged);
    let id = damaged.git(&["rev-parse", "HEAD:lib/big2.py"]);
    let object = damaged
        .path()
        .join(".git/objects")
        .join(&id[..2])
        .join(&id[2..]);
    std::fs::remove_file(&object).unwrap();
    let out = ken.run(&[
        "index",
        damaged.path().to_str().unwrap(),
        "--rev",
        "HEAD",
        "--name",
        "damaged",
    ]);
    no_panic(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("1 missing-object (e.g. lib/big2.py)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn missing_path() {
    let ken = Ken::new();
    let out = ken.run(&["index", "/no/such/place"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
}

#[test]
fn unknown_revision() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    let out = ken.run(&[
        "index",
        r.path().to_str().unwrap(),
        "--rev",
        "no-such-branch",
    ]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown revision `no-such-branch`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn empty_repository() {
    let r = Repo::new();
    let ken = Ken::new();
    // the working tree of a repository with no commits and no files: nothing to do, said plainly
    let out = ken.run(&["index", r.path().to_str().unwrap()]);
    no_panic(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("nothing to index"),
        "{}",
        stdout(&out)
    );
    // asking for a commit of it is an error with a way out
    let out = ken.run(&["index", r.path().to_str().unwrap(), "--rev", "HEAD"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("has no commits yet"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn search_before_any_index() {
    let ken = Ken::new();
    let out = ken.run(&["search", "anything"]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("run `ken index PATH` first"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_flags() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap()]);
    for (args, needle) in [
        (
            vec!["search", "x", "--lang", "cobol"],
            "unknown language `cobol`",
        ),
        (
            vec!["search", "x", "--path", "src/[", "--json"],
            "bad path glob",
        ),
        (
            vec!["search", "x", "--repo", "nope"],
            "no repository named `nope`",
        ),
        (vec!["search", ""], "nothing to search for"),
    ] {
        let out = ken.run(&args);
        no_panic(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn bad_config_file() {
    let ken = Ken::new();
    std::fs::write(ken.home.path().join("config.toml"), "threads = \"many\"\n").unwrap();
    let out = ken.run(&["status"]);
    no_panic(&out);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("invalid config file"),
        "{}",
        stderr(&out)
    );
}
