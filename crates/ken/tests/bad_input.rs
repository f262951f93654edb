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
}

#[test]
fn not_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let ken = Ken::new();
    let out = ken.run(&["index", dir.path().to_str().unwrap()]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not a git repository"),
        "{}",
        stderr(&out)
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
