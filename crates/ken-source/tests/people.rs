//! The people layer on a repository built here with real git commits:
//! several authors, a `.mailmap` merging two emails of one person, a bot,
//! a renamed file, a deleted function, a merged branch.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use ken_source::identity::Identities;
use ken_source::{BlameMethod, BlameOptions, ChangeStatus, GitRepo, LogOptions, SourceError};

const T0: i64 = 1_700_000_000;

/// A change to the work tree before a commit.
enum Op<'a> {
    Write(&'a str, &'a str),
    Delete(&'a str),
    Rename(&'a str, &'a str),
}

fn git(dir: &Path, args: &[&str], env: &[(&str, String)]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Commit `ops` as `name <email>` at `T0 + dt`; returns the sha.
fn commit(dir: &Path, (name, email): (&str, &str), dt: i64, msg: &str, ops: &[Op]) -> String {
    for op in ops {
        match op {
            Op::Write(path, text) => {
                let p = dir.join(path);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
                git(dir, &["add", path], &[]);
            }
            Op::Delete(path) => {
                git(dir, &["rm", "-q", path], &[]);
            }
            Op::Rename(from, to) => {
                git(dir, &["mv", from, to], &[]);
            }
        }
    }
    let date = format!("{} +0000", T0 + dt);
    let env = [
        ("GIT_AUTHOR_NAME", name.to_string()),
        ("GIT_AUTHOR_EMAIL", email.to_string()),
        ("GIT_AUTHOR_DATE", date.clone()),
        ("GIT_COMMITTER_NAME", name.to_string()),
        ("GIT_COMMITTER_EMAIL", email.to_string()),
        ("GIT_COMMITTER_DATE", date),
    ];
    git(dir, &["commit", "-q", "--allow-empty", "-m", msg], &env);
    git(dir, &["rev-parse", "HEAD"], &[])
}

const ALICE: (&str, &str) = ("Alice", "alice@example.com");
const ALICE_HOME: (&str, &str) = ("alice", "alice@home.example");
const BOB: (&str, &str) = ("Bob Stone", "bob@example.com");
const CAROL: (&str, &str) = ("Carol", "carol@example.com");
const DAVE: (&str, &str) = ("Dave", "1234+dave@users.noreply.github.com");
const BOT: (&str, &str) = (
    "dependabot[bot]",
    "49699333+dependabot[bot]@users.noreply.github.com",
);

const MAILMAP: &str = "Alice Liddell <alice@example.com> <alice@home.example>\n";

const IDENTITIES: &str = r#"
[[person]]
id = "alice"
name = "Alice Liddell"
emails = ["alice@example.com"]
handles = ["aliddell"]
external = { jira = "557058:a11ce" }
"#;

struct Story {
    _dir: tempfile::TempDir,
    repo: GitRepo,
    c: BTreeMap<&'static str, String>,
}

/// The history every test reads:
///
/// ```text
/// c1 Alice       add src/calc.py (add, sub), README.md, .mailmap
/// c2 Bob         calc.py: add mul
/// c3 alice@home  rename calc.py -> arith.py, edit add's return
/// c4 dependabot  VERSION bump in arith.py, add requirements.txt
/// c5 Carol       delete sub
/// c6 Dave        (branch feature) add src/extra.py
/// c7 Bob         (main) edit README.md, delete requirements.txt
/// c8 Alice       merge feature (clean)
/// ```
fn story() -> Story {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q"], &[]);
    let mut c = BTreeMap::new();
    let v1 = "VERSION = \"1.0\"\n# add\ndef add(a, b):\n    return a + b\n# sub\ndef sub(a, b):\n    return a - b\n";
    c.insert(
        "c1",
        commit(
            d,
            ALICE,
            0,
            "Start the calculator\n\nWith add and sub.",
            &[
                Op::Write("src/calc.py", v1),
                Op::Write("README.md", "Calc\n"),
                Op::Write(".mailmap", MAILMAP),
            ],
        ),
    );
    let v2 = format!("{v1}# mul\ndef mul(a, b):\n    return a * b\n");
    c.insert(
        "c2",
        commit(d, BOB, 100, "Add mul", &[Op::Write("src/calc.py", &v2)]),
    );
    let v3 = v2.replace("return a + b\n", "return a + b  # sum\n");
    c.insert(
        "c3",
        commit(
            d,
            ALICE_HOME,
            200,
            "Rename calc to arith",
            &[
                Op::Rename("src/calc.py", "src/arith.py"),
                Op::Write("src/arith.py", &v3),
            ],
        ),
    );
    let v4 = v3.replace("1.0", "1.1");
    c.insert(
        "c4",
        commit(
            d,
            BOT,
            300,
            "Bump version",
            &[
                Op::Write("src/arith.py", &v4),
                Op::Write("requirements.txt", "numpy==2.0\n"),
            ],
        ),
    );
    let v5 = v4.replace("# sub\ndef sub(a, b):\n    return a - b\n", "");
    c.insert(
        "c5",
        commit(
            d,
            CAROL,
            400,
            "Remove sub",
            &[Op::Write("src/arith.py", &v5)],
        ),
    );
    git(d, &["checkout", "-q", "-b", "feature"], &[]);
    c.insert(
        "c6",
        commit(
            d,
            DAVE,
            500,
            "Add extra",
            &[Op::Write("src/extra.py", "X = 1\n")],
        ),
    );
    git(d, &["checkout", "-q", "main"], &[]);
    c.insert(
        "c7",
        commit(
            d,
            BOB,
            600,
            "Document, drop requirements",
            &[
                Op::Write("README.md", "Calc\n\nA calculator.\n"),
                Op::Delete("requirements.txt"),
            ],
        ),
    );
    let date = format!("{} +0000", T0 + 700);
    let env = [
        ("GIT_AUTHOR_NAME", ALICE.0.to_string()),
        ("GIT_AUTHOR_EMAIL", ALICE.1.to_string()),
        ("GIT_AUTHOR_DATE", date.clone()),
        ("GIT_COMMITTER_NAME", "GitHub".to_string()),
        ("GIT_COMMITTER_EMAIL", "noreply@github.com".to_string()),
        ("GIT_COMMITTER_DATE", date),
    ];
    git(
        d,
        &["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"],
        &env,
    );
    c.insert("c8", git(d, &["rev-parse", "HEAD"], &[]));
    let repo = GitRepo::open(d).unwrap();
    Story { _dir: dir, repo, c }
}

/// Blamed lines per commit label.
fn lines_by_commit(s: &Story, ranges: &[ken_source::BlameRange]) -> BTreeMap<String, u32> {
    let label: BTreeMap<&str, &str> = s.c.iter().map(|(k, v)| (v.as_str(), *k)).collect();
    let mut out = BTreeMap::new();
    for r in ranges {
        *out.entry(label[r.commit.as_str()].to_string()).or_default() += r.lines();
    }
    out
}

#[test]
fn blame_follows_the_rename_and_forgets_the_deleted_function() {
    let s = story();
    let ranges = s.repo.blame_file("HEAD", "src/arith.py").unwrap();
    let by_line: Vec<(u32, u32, &str)> = {
        let label: BTreeMap<&str, &str> = s.c.iter().map(|(k, v)| (v.as_str(), *k)).collect();
        ranges
            .iter()
            .map(|r| (r.start_line, r.end_line, label[r.commit.as_str()]))
            .collect()
    };
    // VERSION (bot), "# add" + def add (Alice, when the file was calc.py),
    // add's return (Alice at home, in the rename), mul (Bob). Carol deleted
    // sub: no line of hers is left.
    assert_eq!(
        by_line,
        vec![(1, 1, "c4"), (2, 3, "c1"), (4, 4, "c3"), (5, 7, "c2")]
    );
    let counts = lines_by_commit(&s, &ranges);
    assert!(!counts.contains_key("c5"));
    // git agrees.
    let porcelain = git(
        s.repo.workdir().unwrap(),
        &["blame", "--porcelain", "HEAD", "--", "src/arith.py"],
        &[],
    );
    let git_lines = porcelain_lines(&porcelain);
    let ours: Vec<String> = ranges
        .iter()
        .flat_map(|r| (r.start_line..=r.end_line).map(|_| r.commit.clone()))
        .collect();
    assert_eq!(ours, git_lines);
}

#[test]
fn blame_at_an_older_commit_and_in_batches() {
    let s = story();
    let at_c2 = s.repo.blame_file(&s.c["c2"], "src/calc.py").unwrap();
    assert_eq!(
        lines_by_commit(&s, &at_c2),
        BTreeMap::from([("c1".to_string(), 7), ("c2".to_string(), 3)])
    );
    let paths: Vec<String> = ["src/arith.py", "README.md", "missing.py", "src/extra.py"]
        .map(String::from)
        .to_vec();
    let batch = s.repo.blame_files("HEAD", &paths);
    assert_eq!(batch.len(), 4);
    assert_eq!(
        batch[0].1.as_ref().unwrap(),
        &s.repo.blame_file("HEAD", "src/arith.py").unwrap()
    );
    assert_eq!(
        lines_by_commit(&s, batch[1].1.as_ref().unwrap()),
        BTreeMap::from([("c1".to_string(), 1), ("c7".to_string(), 2)])
    );
    assert!(matches!(batch[2].1, Err(SourceError::NoSuchFile { .. })));
    assert_eq!(
        lines_by_commit(&s, batch[3].1.as_ref().unwrap()),
        BTreeMap::from([("c6".to_string(), 1)])
    );
}

#[test]
fn huge_files_fall_back_to_their_last_change() {
    let s = story();
    let opts = BlameOptions {
        max_lines: 5,
        ..BlameOptions::default()
    };
    let paths = vec!["src/arith.py".to_string(), "README.md".to_string()];
    let out = s.repo.blame_files_with("HEAD", &paths, &opts);
    assert!(matches!(out[0].method, BlameMethod::LastChange(_)));
    let ranges = out[0].ranges.as_ref().unwrap();
    assert_eq!(ranges.len(), 1);
    assert_eq!((ranges[0].start_line, ranges[0].end_line), (1, 7));
    assert_eq!(ranges[0].commit, s.c["c5"]);
    assert_eq!(out[1].method, BlameMethod::Exact);
}

#[test]
fn over_budget_files_stop_where_the_walk_got() {
    let s = story();
    let paths = vec!["src/arith.py".to_string()];
    // No time for any diff: arith.py stops at its first change (c5, which
    // only deleted lines), so everything goes to the commit reached, c4.
    let opts = BlameOptions {
        time_budget: Some(std::time::Duration::ZERO),
        ..BlameOptions::default()
    };
    let out = s.repo.blame_files_with("HEAD", &paths, &opts);
    assert!(matches!(out[0].method, BlameMethod::Partial(_)));
    assert_eq!(
        lines_by_commit(&s, out[0].ranges.as_ref().unwrap()),
        BTreeMap::from([("c4".to_string(), 7)])
    );
    // No time at all for the batch: everything stays with HEAD.
    let opts = BlameOptions {
        batch_budget: Some(std::time::Duration::ZERO),
        ..BlameOptions::default()
    };
    let out = s.repo.blame_files_with("HEAD", &paths, &opts);
    assert!(matches!(out[0].method, BlameMethod::Partial(_)));
    assert_eq!(
        lines_by_commit(&s, out[0].ranges.as_ref().unwrap()),
        BTreeMap::from([("c8".to_string(), 7)])
    );
}

#[test]
fn shares_per_person_with_mailmap_identities_and_bots() {
    let s = story();
    let ranges = s.repo.blame_file("HEAD", "src/arith.py").unwrap();
    let shas: Vec<String> = ranges.iter().map(|r| r.commit.clone()).collect();
    let meta = s.repo.commit_meta(&shas);
    let ids = Identities::from_sources(Some(MAILMAP), &[IDENTITIES]).unwrap();
    let mut shares: BTreeMap<String, u32> = BTreeMap::new();
    let mut bots = 0;
    for r in &ranges {
        let m = &meta[&r.commit];
        let who = ids.resolve(&m.author_name, &m.author_email);
        if who.is_bot {
            bots += r.lines();
            continue;
        }
        *shares.entry(who.id).or_default() += r.lines();
    }
    // Alice's two emails are one person (mailmap), named by the identities
    // file; the bot's line is left out.
    assert_eq!(bots, 1);
    assert_eq!(
        shares,
        BTreeMap::from([("alice".to_string(), 3), ("bob@example.com".to_string(), 3)])
    );
    assert_eq!(
        ids.resolve(ALICE_HOME.0, ALICE_HOME.1).display_name,
        "Alice Liddell"
    );
    assert_eq!(ids.resolve(DAVE.0, DAVE.1).id, "dave");
}

#[test]
fn people_seen_in_the_log() {
    let s = story();
    let log = s.repo.log(LogOptions::default()).unwrap();
    let mut ids = Identities::from_sources(Some(MAILMAP), &[IDENTITIES]).unwrap();
    for c in &log {
        ids.observe(&c.meta.author_name, &c.meta.author_email);
    }
    let mut humans: Vec<(&str, u64)> = ids
        .people()
        .iter()
        .filter(|p| !p.is_bot && p.seen > 0)
        .map(|p| (p.id.as_str(), p.seen))
        .collect();
    humans.sort();
    assert_eq!(
        humans,
        vec![
            ("alice", 3),
            ("bob@example.com", 2),
            ("carol@example.com", 1),
            ("dave", 1)
        ]
    );
    let alice = ids.person("alice").unwrap();
    assert!(alice.emails.contains(&"alice@home.example".to_string()));
    assert_eq!(ids.find("557058:a11ce")[0].id, "alice");
    assert_eq!(ids.find("liddell")[0].id, "alice");
    let bots: Vec<&str> = ids
        .people()
        .iter()
        .filter(|p| p.is_bot)
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(bots, vec!["dependabot[bot]"]);
}

#[test]
fn log_lists_changed_files_with_statuses() {
    let s = story();
    let opts = LogOptions {
        with_files: true,
        with_stats: true,
        ..LogOptions::default()
    };
    let log = s.repo.log(opts).unwrap();
    let order: Vec<&str> = log
        .iter()
        .map(|c| {
            s.c.iter()
                .find(|(_, v)| **v == c.meta.sha)
                .map(|(k, _)| *k)
                .unwrap()
        })
        .collect();
    assert_eq!(order, vec!["c8", "c7", "c6", "c5", "c4", "c3", "c2", "c1"]);
    let files = |label: &str| -> Vec<(String, Option<String>, ChangeStatus)> {
        let c = log.iter().find(|c| c.meta.sha == s.c[label]).unwrap();
        let mut f: Vec<_> = c
            .files
            .iter()
            .map(|f| (f.path.clone(), f.old_path.clone(), f.status))
            .collect();
        f.sort();
        f
    };
    use ChangeStatus::*;
    assert_eq!(
        files("c1"),
        vec![
            (".mailmap".into(), None, Added),
            ("README.md".into(), None, Added),
            ("src/calc.py".into(), None, Added)
        ]
    );
    assert_eq!(
        files("c3"),
        vec![("src/arith.py".into(), Some("src/calc.py".into()), Renamed)]
    );
    assert_eq!(
        files("c4"),
        vec![
            ("requirements.txt".into(), None, Added),
            ("src/arith.py".into(), None, Modified)
        ]
    );
    assert_eq!(
        files("c7"),
        vec![
            ("README.md".into(), None, Modified),
            ("requirements.txt".into(), None, Deleted)
        ]
    );
    // A clean merge changed nothing relative to both parents.
    assert_eq!(files("c8"), vec![]);
    let c5 = log.iter().find(|c| c.meta.sha == s.c["c5"]).unwrap();
    assert_eq!((c5.insertions, c5.deletions), (Some(0), Some(3)));
    let c3 = log.iter().find(|c| c.meta.sha == s.c["c3"]).unwrap();
    assert_eq!((c3.insertions, c3.deletions), (Some(1), Some(1)));
    let c1 = log.iter().find(|c| c.meta.sha == s.c["c1"]).unwrap();
    assert_eq!(c1.meta.summary, "Start the calculator");
    assert_eq!(c1.meta.message, "Start the calculator\n\nWith add and sub.");
    assert_eq!(c1.meta.author_time, T0);
    let c8 = log.iter().find(|c| c.meta.sha == s.c["c8"]).unwrap();
    assert!(c8.meta.is_merge());
    assert_eq!(c8.meta.parents, vec![s.c["c7"].clone(), s.c["c6"].clone()]);
}

#[test]
fn first_parent_log_shows_what_merges_brought() {
    let s = story();
    let opts = LogOptions {
        with_files: true,
        first_parent: true,
        ..LogOptions::default()
    };
    let log = s.repo.log(opts).unwrap();
    assert_eq!(log.len(), 7, "c6 is on the branch");
    let merge = &log[0];
    assert_eq!(merge.meta.sha, s.c["c8"]);
    let files: Vec<(&str, ChangeStatus)> = merge
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert_eq!(files, vec![("src/extra.py", ChangeStatus::Added)]);
}

#[test]
fn log_limits() {
    let s = story();
    let since = LogOptions {
        since: Some(T0 + 300),
        ..LogOptions::default()
    };
    let shas: Vec<String> = s
        .repo
        .log(since)
        .unwrap()
        .into_iter()
        .map(|c| c.meta.sha)
        .collect();
    assert_eq!(shas, ["c8", "c7", "c6", "c5", "c4"].map(|k| s.c[k].clone()));
    let window = LogOptions {
        since: Some(T0 + 100),
        until: Some(T0 + 200),
        ..LogOptions::default()
    };
    let shas: Vec<String> = s
        .repo
        .log(window)
        .unwrap()
        .into_iter()
        .map(|c| c.meta.sha)
        .collect();
    assert_eq!(shas, ["c3", "c2"].map(|k| s.c[k].clone()));
    let max = LogOptions {
        max: Some(2),
        from: s.c["c5"].clone(),
        ..LogOptions::default()
    };
    let shas: Vec<String> = s
        .repo
        .log(max)
        .unwrap()
        .into_iter()
        .map(|c| c.meta.sha)
        .collect();
    assert_eq!(shas, ["c5", "c4"].map(|k| s.c[k].clone()));
    assert!(matches!(
        s.repo.log(LogOptions {
            from: "no-such-branch".into(),
            ..LogOptions::default()
        }),
        Err(SourceError::UnknownRev { .. })
    ));
}

#[test]
fn changed_since_for_incremental_updates() {
    let s = story();
    let changed = s.repo.changed_since(&s.c["c2"], &s.c["c3"]).unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].status, ChangeStatus::Renamed);
    assert_eq!(changed[0].old_path.as_deref(), Some("src/calc.py"));
    let changed = s.repo.changed_since(&s.c["c4"], "HEAD").unwrap();
    let got: Vec<(&str, ChangeStatus)> = changed
        .iter()
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert_eq!(
        got,
        vec![
            ("README.md", ChangeStatus::Modified),
            ("requirements.txt", ChangeStatus::Deleted),
            ("src/arith.py", ChangeStatus::Modified),
            ("src/extra.py", ChangeStatus::Added)
        ]
    );
    assert!(s.repo.changed_since("HEAD", "HEAD").unwrap().is_empty());
}

#[test]
fn shallow_clones_blame_their_boundary() {
    let s = story();
    let shallow = tempfile::tempdir().unwrap();
    let url = format!("file://{}", s.repo.workdir().unwrap().display());
    git(
        shallow.path(),
        &["clone", "-q", "--depth", "2", &url, "clone"],
        &[],
    );
    let repo = GitRepo::open(&shallow.path().join("clone")).unwrap();
    // Depth 2 from the merge: c8, c7 and c6; c7's parent c5 is missing.
    let ranges = repo.blame_file("HEAD", "src/arith.py").unwrap();
    assert_eq!(ranges.len(), 1);
    assert_eq!((ranges[0].start_line, ranges[0].end_line), (1, 7));
    assert_eq!(ranges[0].commit, s.c["c7"]);
    let log = repo.log(LogOptions::default()).unwrap();
    assert_eq!(log.len(), 3);
}

#[test]
fn commit_meta_of_blamed_shas() {
    let s = story();
    let meta = s.repo.commit_meta(&[
        s.c["c4"].clone(),
        s.c["c4"][..10].to_string(),
        "nope".to_string(),
    ]);
    assert_eq!(meta.len(), 2);
    let m = &meta[&s.c["c4"]];
    assert_eq!(m.author_name, BOT.0);
    assert_eq!(m.author_email, BOT.1);
    assert_eq!(m.author_time, T0 + 300);
    assert_eq!(m.committer_time, T0 + 300);
    assert_eq!(m.parents, vec![s.c["c3"].clone()]);
    assert_eq!(meta[&s.c["c4"][..10]].sha, s.c["c4"]);
}

/// The commit of each line of `git blame --porcelain` output.
fn porcelain_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut parts = line.split(' ');
        let (Some(sha), Some(_), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            out.push(sha.to_string());
        }
    }
    out
}
