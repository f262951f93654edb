//! Definitions in real repositories, read from bare git mirrors
//! (`$KEN_MIRROR_DIR/OWNER+NAME/repo`, default `/work/.mirror`; fetch them
//! with the tool library's `fetch`) and checked against the symbol set of
//! the evaluation (`$KEN_EVAL_DIR/symbols_dev.jsonl`, default the `shared/eval`
//! beside this checkout). Ignored by default — they need that data, and
//! fail, not pass, without it: run with
//! `cargo test -p ken-syntax --test real_repos -- --ignored`.

mod common;

use std::process::Command;

use common::*;

/// A mirror's git directory; the test fails when it is not there.
fn mirror(repo: &str) -> String {
    let base = std::env::var("KEN_MIRROR_DIR").unwrap_or_else(|_| "/work/.mirror".into());
    let dir = format!("{base}/{}/repo", repo.replace('/', "+"));
    assert!(
        std::path::Path::new(&dir).exists(),
        "no mirror of {repo} at {dir}: fetch it and set KEN_MIRROR_DIR"
    );
    dir
}

fn show(git_dir: &str, rev: &str, path: &str) -> Option<String> {
    let out = Command::new("git")
        .args(["--git-dir", git_dir, "show", &format!("{rev}:{path}")])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
#[ignore = "needs the bare mirrors of the four dev repositories under $KEN_MIRROR_DIR"]
fn spot_checks_at_head() {
    let cases = [
        (
            "pallets/flask",
            "src/flask/app.py",
            "Flask.do_teardown_request",
        ),
        ("pallets/flask", "src/flask/ctx.py", "AppContext.pop"),
        (
            "BurntSushi/ripgrep",
            "crates/searcher/src/searcher/core.rs",
            "Core.before_context_by_line",
        ),
        (
            "BurntSushi/ripgrep",
            "crates/searcher/src/line_buffer.rs",
            "tests.buffer_basics2",
        ),
        (
            "BurntSushi/ripgrep",
            "crates/ignore/src/pathutil.rs",
            "is_hidden_entry.imp",
        ),
        (
            "BurntSushi/ripgrep",
            "crates/ignore/src/gitignore.rs",
            "Gitignore",
        ),
        ("spf13/cobra", "command.go", "Command.AddCommand"),
        ("expressjs/express", "lib/response.js", "res.send"),
    ];
    for (repo, path, qualname) in cases {
        let git = mirror(repo);
        let text = show(&git, "HEAD", path).unwrap_or_else(|| panic!("{repo}: no {path}"));
        let fs = parse(path, &text);
        let d = def(&fs, qualname);
        assert!(
            fs.chunks
                .iter()
                .any(|c| c.start_line <= d.start_line && d.end_line <= c.end_line),
            "{path}: {qualname} is in no chunk"
        );
    }
    let git = mirror("BurntSushi/ripgrep");
    let text = show(&git, "HEAD", "crates/ignore/src/gitignore.rs").unwrap();
    let fs = parse("gitignore.rs", &text);
    assert!(
        fs.definitions
            .iter()
            .any(|d| d.qualname == "Gitignore" && d.kind == ken_core::ChunkKind::Impl)
    );
    let text = show(&git, "HEAD", "crates/searcher/src/line_buffer.rs").unwrap();
    let fs = parse("line_buffer.rs", &text);
    assert_eq!(
        def(&fs, "tests.buffer_basics2").kind,
        ken_core::ChunkKind::Function
    );
    let git = mirror("expressjs/express");
    let text = show(&git, "HEAD", "lib/response.js").unwrap();
    let fs = parse("lib/response.js", &text);
    assert_eq!(def(&fs, "res.send").name, "send");
}

/// Every gold symbol of the evaluation's symbol set is found at its base
/// commit with the same kind and lines. JavaScript functions assigned to a
/// property (`res.send = function send`) are named `send` and qualified by
/// the whole left side (`res.send`); the set qualifies them by name alone.
#[test]
#[ignore = "needs the dev mirrors and ../shared/eval/symbols_dev.jsonl"]
fn eval_symbols_are_found_with_their_lines() {
    let dir = std::env::var("KEN_EVAL_DIR")
        .unwrap_or_else(|_| format!("{}/../../../shared/eval", manifest_dir()));
    let set = std::fs::read_to_string(format!("{dir}/symbols_dev.jsonl"))
        .unwrap_or_else(|e| panic!("no symbol set in {dir} ({e}): set KEN_EVAL_DIR"));
    let mut checked = 0;
    let mut missing = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for line in set.lines() {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        let repo = q["repo"].as_str().unwrap();
        let sha = q["base_sha"].as_str().unwrap();
        let git = mirror(repo);
        for g in q["gold_symbols"].as_array().into_iter().flatten() {
            let path = g["path"].as_str().unwrap();
            let qualname = g["qualname"].as_str().unwrap();
            let (start, end) = (
                g["start"].as_u64().unwrap() as u32,
                g["end"].as_u64().unwrap() as u32,
            );
            if !seen.insert((
                repo.to_string(),
                path.to_string(),
                qualname.to_string(),
                start,
            )) {
                continue;
            }
            let Some(text) = show(&git, sha, path) else {
                continue;
            };
            let fs = parse(path, &text);
            checked += 1;
            let found = fs.definitions.iter().any(|d| {
                (d.qualname == qualname
                    || (d.name == qualname && d.qualname.ends_with(&format!(".{qualname}"))))
                    && d.kind.name() == g["kind"].as_str().unwrap()
                    && (d.start_line, d.end_line) == (start, end)
            });
            if !found {
                missing.push(format!("{repo} {path} {qualname} {start}-{end}"));
            }
        }
    }
    eprintln!("{checked} gold symbols checked");
    assert!(missing.is_empty(), "not found:\n{}", missing.join("\n"));
}

/// The invariants, and no line lost, on every file under `$KEN_CHECK_DIR`
/// (for instance repositories unpacked with `git archive`).
#[test]
#[ignore = "checks the directory named by KEN_CHECK_DIR"]
fn invariants_hold_on_a_directory() {
    let root = std::env::var("KEN_CHECK_DIR").expect("set KEN_CHECK_DIR to the directory to check");
    let mut stack = vec![std::path::PathBuf::from(root)];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let name = path.to_string_lossy();
            let fs = parse(&name, &text);
            let lang = ken_core::Language::from_path(&name);
            if lang != ken_core::Language::Notebook {
                check_no_line_lost(&name, &text, &fs);
            }
            files += 1;
        }
    }
    eprintln!("{files} files checked");
}
