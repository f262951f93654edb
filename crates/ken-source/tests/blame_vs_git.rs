//! `blame_file` against `git blame --porcelain`: on a history the test
//! builds (edits, insertions, deletions, moves, a rename, two authors), and
//! on real repositories — the bare mirrors under `$KEN_MIRROR_DIR`
//! (`OWNER+NAME/repo`; fetch them with the tool library's `fetch`). The
//! mirror tests are ignored by default and fail, not pass, without them.
//!
//! Agreement is line for line except where a file repeats a line (a
//! decorator, a blank line, a docstring fence) and git's xdiff, with its
//! indent heuristic, aligns a changed hunk differently from imara-diff
//! with gix's slider heuristic: then the repeated line can be credited to
//! another commit that has the same text. That is at most a few lines in a
//! thousand; the tests allow 1%.

use std::path::Path;
use std::process::Command;

use ken_source::GitRepo;

/// A mirror's git directory; the test fails when it is not there.
fn mirror(name: &str) -> String {
    let base = std::env::var("KEN_MIRROR_DIR").unwrap_or_else(|_| "/work/.mirror".into());
    let dir = format!("{base}/{}/repo", name.replace('/', "+"));
    assert!(
        Path::new(&dir).exists(),
        "no mirror of {name} at {dir}: fetch it and set KEN_MIRROR_DIR"
    );
    dir
}

/// The commit of each line, as `git blame --porcelain <rev> -- <path>` says.
fn git_blame(git_dir: &str, rev: &str, path: &str) -> Vec<String> {
    let out = Command::new("git")
        .args([
            "--git-dir",
            git_dir,
            "blame",
            "--porcelain",
            rev,
            "--",
            path,
        ])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let sha = l.split(' ').next()?;
            (sha.len() == 40
                && l.split(' ').count() >= 3
                && sha.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| sha.to_string())
        })
        .collect()
}

/// Run git in `dir` as `who` at `date`; its output, trimmed.
fn git_as(dir: &Path, args: &[&str], who: (&str, &str), date: &str) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", who.0)
        .env("GIT_AUTHOR_EMAIL", who.1)
        .env("GIT_COMMITTER_NAME", who.0)
        .env("GIT_COMMITTER_EMAIL", who.1)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn ours(repo: &GitRepo, rev: &str, path: &str) -> Vec<String> {
    repo.blame_file(rev, path)
        .unwrap()
        .iter()
        .flat_map(|r| (r.start_line..=r.end_line).map(|_| r.commit.clone()))
        .collect()
}

fn compare(git_dir: &str, paths: &[&str]) {
    let repo = GitRepo::open(Path::new(git_dir)).unwrap();
    for path in paths {
        let theirs = git_blame(git_dir, "HEAD", path);
        let mine = ours(&repo, "HEAD", path);
        assert_eq!(mine.len(), theirs.len(), "{path}: line count");
        let differ: Vec<usize> = (0..mine.len())
            .filter(|&i| mine[i] != theirs[i])
            .map(|i| i + 1)
            .collect();
        assert!(
            differ.len() * 100 <= theirs.len(),
            "{path}: lines {differ:?} of {} differ from git blame",
            theirs.len()
        );
    }
}

#[test]
#[ignore = "needs the bare mirror of pallets/flask under $KEN_MIRROR_DIR"]
fn flask_files_match_git_blame() {
    compare(
        &mirror("pallets/flask"),
        &[
            "src/flask/app.py",
            "src/flask/sansio/app.py",
            "src/flask/cli.py",
            "src/flask/json/tag.py",
            "tests/test_basic.py",
            "examples/tutorial/flaskr/blog.py",
        ],
    );
}

/// Every source file of the mirrors that are here (slow: minutes).
#[test]
#[ignore = "needs the bare mirrors of the four dev repositories under $KEN_MIRROR_DIR; minutes"]
fn all_source_files_match_git_blame() {
    for (name, exts) in [
        ("pallets/flask", &["py"][..]),
        ("expressjs/express", &["js"][..]),
        ("spf13/cobra", &["go"][..]),
        ("BurntSushi/ripgrep", &["rs"][..]),
    ] {
        let git_dir = &mirror(name);
        let repo = GitRepo::open(Path::new(git_dir)).unwrap();
        let listing = repo.list_commit("HEAD", &Default::default()).unwrap();
        let paths: Vec<String> = listing
            .entries
            .into_iter()
            .map(|e| e.path)
            .filter(|p| exts.iter().any(|x| p.ends_with(&format!(".{x}"))))
            .collect();
        let batch = repo.blame_files_with(
            "HEAD",
            &paths,
            &ken_source::BlameOptions {
                time_budget: None,
                ..Default::default()
            },
        );
        let (mut lines, mut differ, mut files_differ) = (0, 0, 0);
        for b in batch {
            let mine: Vec<String> = b
                .ranges
                .unwrap()
                .iter()
                .flat_map(|r| (r.start_line..=r.end_line).map(|_| r.commit.clone()))
                .collect();
            let theirs = git_blame(git_dir, "HEAD", &b.path);
            assert_eq!(mine.len(), theirs.len(), "{}", b.path);
            let n = (0..mine.len()).filter(|&i| mine[i] != theirs[i]).count();
            lines += theirs.len();
            differ += n;
            if n > 0 {
                files_differ += 1;
                eprintln!("{git_dir} {}: {n} of {} lines differ", b.path, theirs.len());
            }
        }
        eprintln!(
            "{git_dir}: {} files, {lines} lines; {files_differ} files and {differ} lines differ",
            paths.len()
        );
        assert!(differ * 100 <= lines);
    }
}

/// A repository with a history built here: edits, insertions and
/// deletions by two people, a block moved, the file renamed and edited.
#[test]
fn blame_matches_git_on_a_built_history() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str], who: (&str, &str), date: &str| {
        git_as(dir.path(), args, who, date);
    };
    let ada = ("Ada", "ada@example.com");
    let grace = ("Grace", "grace@example.com");
    let write = |name: &str, lines: &[String]| {
        std::fs::write(dir.path().join(name), lines.join("\n") + "\n").unwrap();
    };
    git(&["init", "-q", "-b", "main"], ada, "2024-01-01T10:00:00");
    let mut lines: Vec<String> = (1..=40)
        .map(|i| format!("def f{i}(): return {i}"))
        .collect();
    write("calc.py", &lines);
    git(&["add", "-A"], ada, "2024-01-01T10:00:00");
    git(&["commit", "-q", "-m", "first"], ada, "2024-01-01T10:00:00");
    // Grace edits a few lines and inserts a block
    for (i, line) in lines.iter_mut().enumerate().take(9).skip(5) {
        *line = format!("def f{}(): return {} * 2", i + 1, i + 1);
    }
    for j in 0..5 {
        lines.insert(20, format!("def g{j}(): return -{j}"));
    }
    write("calc.py", &lines);
    git(
        &["commit", "-q", "-am", "edits"],
        grace,
        "2024-02-01T10:00:00",
    );
    // Ada deletes lines and moves a block to the end
    lines.drain(30..34);
    let moved: Vec<String> = lines.drain(0..4).collect();
    lines.extend(moved);
    write("calc.py", &lines);
    git(&["commit", "-q", "-am", "move"], ada, "2024-03-01T10:00:00");
    // the file is renamed and Grace edits it in the same commit
    git(&["mv", "calc.py", "arith.py"], grace, "2024-04-01T10:00:00");
    lines[10] = "def renamed_edit(): return 0".into();
    write("arith.py", &lines);
    git(
        &["commit", "-q", "-am", "rename"],
        grace,
        "2024-04-01T10:00:00",
    );

    let git_dir = dir.path().join(".git");
    let git_dir = git_dir.to_str().unwrap();
    let theirs = git_blame(git_dir, "HEAD", "arith.py");
    let repo = GitRepo::open(dir.path()).unwrap();
    let mine = ours(&repo, "HEAD", "arith.py");
    assert_eq!(mine.len(), lines.len());
    assert_eq!(mine, theirs, "line by line, renames followed");
    // and the history really has four authors' commits in it
    let distinct: std::collections::HashSet<&String> = theirs.iter().collect();
    assert!(distinct.len() >= 3, "{distinct:?}");
}

/// The blame known at an earlier commit ends the walk there and gives the
/// same lines as a full walk: across edits, a branch merged back, a rename
/// and a new file after that commit. A known blame is used only for the
/// blob it is of.
#[test]
fn known_blame_at_an_earlier_commit_gives_the_same_lines() {
    use ken_source::{BlameMethod, BlameOptions, FallbackReason, KnownBlame, KnownFile};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let git =
        |args: &[&str], date: &str| git_as(dir.path(), args, ("Ada", "ada@example.com"), date);
    let write = |name: &str, lines: &[String]| {
        std::fs::write(dir.path().join(name), lines.join("\n") + "\n").unwrap();
    };
    let mut calc: Vec<String> = (1..=30)
        .map(|i| format!("def f{i}(): return {i}"))
        .collect();
    let mut util: Vec<String> = (1..=20).map(|i| format!("U{i} = {i}")).collect();
    git(&["init", "-q", "-b", "main"], "2024-01-01T10:00:00");
    write("calc.py", &calc);
    write("util.py", &util);
    git(&["add", "-A"], "2024-01-01T10:00:00");
    git(&["commit", "-q", "-m", "first"], "2024-01-01T10:00:00");
    calc[3] = "def f4(): return 40".into();
    util.insert(5, "U_NEW = 0".into());
    write("calc.py", &calc);
    write("util.py", &util);
    git(&["commit", "-q", "-am", "second"], "2024-01-02T10:00:00");
    let earlier = git(&["rev-parse", "HEAD"], "2024-01-02T10:00:00");

    // after the known commit: a branch edits calc.py, main edits util.py, merged
    git(&["checkout", "-q", "-b", "side"], "2024-01-03T10:00:00");
    calc.drain(10..13);
    calc.insert(20, "def side(): return 0".into());
    write("calc.py", &calc);
    git(&["commit", "-q", "-am", "side"], "2024-01-03T10:00:00");
    git(&["checkout", "-q", "main"], "2024-01-04T10:00:00");
    util[12] = "U12 = 1200".into();
    write("util.py", &util);
    git(&["commit", "-q", "-am", "main edit"], "2024-01-04T10:00:00");
    git(
        &["merge", "-q", "--no-ff", "-m", "merge side", "side"],
        "2024-01-05T10:00:00",
    );
    // util.py is renamed and edited; a new file appears
    git(&["mv", "util.py", "consts.py"], "2024-01-06T10:00:00");
    util.push("U_LAST = -1".into());
    write("consts.py", &util);
    write("new.py", &["x = 1".to_string(), "y = 2".to_string()]);
    git(&["add", "-A"], "2024-01-06T10:00:00");
    git(&["commit", "-q", "-m", "rename"], "2024-01-06T10:00:00");

    let repo = GitRepo::open(dir.path()).unwrap();
    let exact = BlameOptions {
        time_budget: None,
        ..Default::default()
    };
    let blob = |rev: &str, path: &str| {
        git(
            &["rev-parse", &format!("{rev}:{path}")],
            "2024-01-07T10:00:00",
        )
    };
    let known_at = |files: Vec<(&str, KnownFile)>| KnownBlame {
        commit: earlier.clone(),
        files: files.into_iter().map(|(p, f)| (p.to_string(), f)).collect(),
    };
    let before = repo.blame_files_with(&earlier, &["calc.py", "util.py"], &exact);
    let known = known_at(
        before
            .iter()
            .map(|b| {
                let file = KnownFile {
                    blob: blob(&earlier, &b.path),
                    ranges: b.ranges.as_ref().unwrap().clone(),
                    approximate: b.path == "util.py",
                };
                (b.path.as_str(), file)
            })
            .collect(),
    );
    let paths = ["calc.py", "consts.py", "new.py"];
    let lines_of = |opts: &BlameOptions| -> Vec<(Vec<String>, BlameMethod)> {
        repo.blame_files_with("HEAD", &paths, opts)
            .into_iter()
            .map(|b| {
                let lines = b
                    .ranges
                    .unwrap()
                    .iter()
                    .flat_map(|r| (r.start_line..=r.end_line).map(|_| r.commit.clone()))
                    .collect();
                (lines, b.method)
            })
            .collect()
    };
    let full = lines_of(&exact);
    let with_known = lines_of(&BlameOptions {
        known: Some(Arc::new(known)),
        ..exact.clone()
    });
    let git_dir = dir.path().join(".git");
    for (i, path) in paths.iter().enumerate() {
        assert_eq!(with_known[i].0, full[i].0, "{path}: line by line");
        assert_eq!(
            full[i].0,
            git_blame(git_dir.to_str().unwrap(), "HEAD", path),
            "{path}"
        );
    }
    assert_eq!(full[0].1, BlameMethod::Exact);
    assert_eq!(with_known[0].1, BlameMethod::Exact);
    // the renamed file took the known blame of its old path, marked approximate
    assert_eq!(
        with_known[1].1,
        BlameMethod::Partial(FallbackReason::Inherited)
    );
    assert_eq!(with_known[2].1, BlameMethod::Exact);

    // The known blame is what decides: a made-up one is taken for the lines
    // that reach it, and left alone for another blob.
    let fake = "f".repeat(40);
    let made_up = |blob: String| {
        let lines = calc_lines_at(&repo, &earlier);
        Arc::new(known_at(vec![(
            "calc.py",
            KnownFile {
                blob,
                ranges: vec![ken_source::BlameRange {
                    start_line: 1,
                    end_line: lines,
                    commit: fake.clone(),
                }],
                approximate: false,
            },
        )]))
    };
    let taken = lines_of(&BlameOptions {
        known: Some(made_up(blob(&earlier, "calc.py"))),
        ..exact.clone()
    });
    let newer: std::collections::HashSet<&String> =
        full[0].0.iter().filter(|c| **c != earlier).collect();
    for (line, commit) in taken[0].0.iter().enumerate() {
        let was = &full[0].0[line];
        if newer.contains(was)
            && !before[0]
                .ranges
                .as_ref()
                .unwrap()
                .iter()
                .any(|r| &r.commit == was)
        {
            assert_eq!(
                commit,
                was,
                "line {} changed after the known commit",
                line + 1
            );
        } else {
            assert_eq!(commit, &fake, "line {} reaches the known commit", line + 1);
        }
    }
    let other_blob = lines_of(&BlameOptions {
        known: Some(made_up(blob(&earlier, "util.py"))),
        ..exact
    });
    assert_eq!(
        other_blob[0].0, full[0].0,
        "another blob's blame is not used"
    );
}

/// Lines of calc.py at `rev`, as blame counts them.
fn calc_lines_at(repo: &GitRepo, rev: &str) -> u32 {
    repo.blame_file(rev, "calc.py")
        .unwrap()
        .last()
        .map_or(0, |r| r.end_line)
}
