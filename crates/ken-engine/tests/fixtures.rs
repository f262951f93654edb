//! Data-driven tests of the engine's ranking and structure, in the style
//! of rust-analyzer's fixtures: each file under `tests/fixtures/` writes a
//! small repository, commits it with real git, indexes it into a fresh
//! home through `Engine` (no process, no HTTP), asks its questions and
//! compares what comes back, line by line, with what the file expects.
//!
//! A fixture:
//!
//! ```text
//! # what the fixture shows (comment lines start with `#`)
//! //- shop/session.py
//! def refresh_token(token): ...
//! //- shop/http.py
//! ...
//! === search how is the session token refreshed
//! 1. shop/session.py:5-9 refresh_token [bm25 file]
//! === search --files --path shop/** token
//! ...
//! === callers refresh_token
//! handle_request shop/http.py:5 (call, import 0.90)
//! ```
//!
//! A search line is a hit: its rank, lines, symbol, the signals that found
//! it, and `pinned` for an exact definition pinned above the rest. Options
//! of `search`: `--files` (one hit per file), `--path GLOB`, `--lang L`,
//! `--limit N` (default 5). `callers`, `callees` and `impact` list what
//! the graph walk returns, with the step that tied each.
//!
//! `UPDATE_EXPECT=1 cargo test -p ken-engine --test fixtures` rewrites the
//! expectations from what the engine returns; review the diff before
//! committing it.

mod common;

use std::path::PathBuf;

use common::git;

use ken_engine::{
    Access, Engine, FilterSpec, IndexRequest, Mode, NoProgress, SearchRequest, Settings, Walk,
};

/// One `===` case: the command line and the lines it expects.
struct Case {
    command: String,
    expected: Vec<String>,
}

struct Fixture {
    /// Comment lines before the first file.
    header: Vec<String>,
    files: Vec<(String, String)>,
    cases: Vec<Case>,
}

fn parse(text: &str) -> Fixture {
    let mut fx = Fixture {
        header: Vec::new(),
        files: Vec::new(),
        cases: Vec::new(),
    };
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            fx.files.push((path.trim().to_string(), String::new()));
        } else if let Some(cmd) = line.strip_prefix("=== ") {
            fx.cases.push(Case {
                command: cmd.trim().to_string(),
                expected: Vec::new(),
            });
        } else if let Some(case) = fx.cases.last_mut() {
            if !line.trim().is_empty() {
                case.expected.push(line.to_string());
            }
        } else if let Some((_, body)) = fx.files.last_mut() {
            body.push_str(line);
            body.push('\n');
        } else {
            fx.header.push(line.to_string());
        }
    }
    fx
}

fn render(fx: &Fixture, actual: &[Vec<String>]) -> String {
    let mut out = String::new();
    for h in &fx.header {
        out.push_str(h);
        out.push('\n');
    }
    for (path, body) in &fx.files {
        out.push_str(&format!("//- {path}\n{body}"));
    }
    for (case, lines) in fx.cases.iter().zip(actual) {
        out.push_str(&format!("=== {}\n", case.command));
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// Files up to this many characters are one chunk (3,000 by default): a
/// fixture's small files are cut into their definitions as a real
/// repository's larger ones are.
const WHOLE_FILE_CHARS: usize = 200;

/// The fixture's files as a repository of one commit, indexed lexically
/// into a fresh home.
fn index(fx: &Fixture) -> (tempfile::TempDir, tempfile::TempDir, Engine) {
    let repo = tempfile::tempdir().unwrap();
    for (path, body) in &fx.files {
        let p = repo.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    let ada = ("Ada Lovelace", "ada@example.com");
    git(repo.path(), &["init", "-q", "-b", "main"], ada);
    git(repo.path(), &["add", "-A"], ada);
    git(repo.path(), &["commit", "-q", "-m", "The fixture"], ada);
    let home = tempfile::tempdir().unwrap();
    let mut settings = Settings::new(home.path().to_path_buf());
    settings.chunk.whole_file_chars = WHOLE_FILE_CHARS;
    let engine = Engine::new(settings);
    let req = IndexRequest {
        source: repo.path().display().to_string(),
        name: Some("fx".into()),
        no_embed: true,
        ..Default::default()
    };
    engine.index(&req, &NoProgress).unwrap();
    (repo, home, engine)
}

fn run(engine: &Engine, command: &str) -> Vec<String> {
    let (verb, rest) = command.split_once(' ').unwrap_or((command, ""));
    match verb {
        "search" => search(engine, rest),
        "callers" => structure(engine, rest, Walk::Callers),
        "callees" => structure(engine, rest, Walk::Callees),
        "impact" => structure(engine, rest, Walk::Impact { max_depth: 3 }),
        "references" => structure(engine, rest, Walk::References),
        other => panic!("unknown fixture command `{other}`"),
    }
}

fn search(engine: &Engine, args: &str) -> Vec<String> {
    let mut words = args.split(' ').peekable();
    let (mut files, mut limit) = (false, 5);
    let mut filters = FilterSpec::default();
    while let Some(w) = words.next_if(|w| w.starts_with("--")) {
        match w {
            "--files" => files = true,
            "--path" => filters.paths.push(words.next().unwrap().into()),
            "--lang" => filters.langs.push(words.next().unwrap().into()),
            "--limit" => limit = words.next().unwrap().parse().unwrap(),
            other => panic!("unknown search option `{other}`"),
        }
    }
    let query: Vec<&str> = words.collect();
    let req = SearchRequest {
        query: query.join(" ").replace("\\n", "\n"),
        limit,
        filters: filters.parse(0).unwrap(),
        files,
        mode: Mode::Lexical,
    };
    let resp = engine.search(&req, &Access::All).unwrap();
    let mut out: Vec<String> = resp
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut signals: Vec<&str> = h.signals.0.keys().map(String::as_str).collect();
            if h.pinned {
                signals.push("pinned");
            }
            format!(
                "{}. {}:{}-{} {} [{}]",
                i + 1,
                h.path,
                h.start_line,
                h.end_line,
                h.symbol.as_deref().unwrap_or("-"),
                signals.join(" ")
            )
        })
        .collect();
    out.extend(resp.notes.iter().map(|n| format!("note: {n}")));
    if out.is_empty() {
        out.push("(nothing)".into());
    }
    out
}

fn structure(engine: &Engine, symbol: &str, walk: Walk) -> Vec<String> {
    let answer = match engine.structure(symbol.trim(), None, walk, &Access::All) {
        Ok(a) => a,
        Err(e) => return vec![format!("error: {:?}", e.kind())],
    };
    let mut out: Vec<String> = answer
        .result
        .results
        .iter()
        .map(|r| {
            let step = r.via.first().map_or(String::new(), |s| {
                format!(" ({}, {} {:.2})", s.kind, s.rule, s.confidence)
            });
            // a reference is where it is written; the others, their definition
            let line = match (walk, r.via.first()) {
                (Walk::References, Some(s)) => s.line,
                _ => r.start_line,
            };
            format!(
                "{}{} {}:{}{}",
                "  ".repeat(r.depth.saturating_sub(1) as usize),
                r.symbol,
                r.path,
                line,
                step
            )
        })
        .collect();
    if out.is_empty() {
        out.push("(nothing)".into());
    }
    out
}

/// This crate's folder, read when the test runs (a test binary built from
/// another checkout sharing the target folder would carry that one's path).
fn manifest_dir() -> PathBuf {
    PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
}

fn fixtures() -> Vec<PathBuf> {
    let dir = manifest_dir().join("tests/fixtures");
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    all.sort();
    all
}

#[test]
fn every_fixture_answers_as_it_expects() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let all = fixtures();
    assert!(!all.is_empty(), "no fixtures under tests/fixtures");
    let mut failures = Vec::new();
    for path in all {
        let text = std::fs::read_to_string(&path).unwrap();
        let fx = parse(&text);
        assert!(
            !fx.files.is_empty() && !fx.cases.is_empty(),
            "{}: a fixture needs files and cases",
            path.display()
        );
        let (_repo, _home, engine) = index(&fx);
        let actual: Vec<Vec<String>> = fx.cases.iter().map(|c| run(&engine, &c.command)).collect();
        if update {
            std::fs::write(&path, render(&fx, &actual)).unwrap();
            continue;
        }
        for (case, got) in fx.cases.iter().zip(&actual) {
            if &case.expected != got {
                failures.push(format!(
                    "{} — `{}`\nexpected:\n  {}\ngot:\n  {}",
                    path.file_name().unwrap().to_string_lossy(),
                    case.command,
                    case.expected.join("\n  "),
                    got.join("\n  ")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ (UPDATE_EXPECT=1 rewrites them):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn a_fixture_reads_back_as_it_was_written() {
    let text = "# header\n//- a.py\ndef f():\n    pass\n=== search f\n1. a.py:1-2 f [exact]\n";
    let fx = parse(text);
    assert_eq!(
        fx.files,
        [("a.py".to_string(), "def f():\n    pass\n".to_string())]
    );
    assert_eq!(fx.cases[0].command, "search f");
    assert_eq!(render(&fx, &[fx.cases[0].expected.clone()]), text);
}
