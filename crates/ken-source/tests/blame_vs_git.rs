//! `blame_file` against `git blame --porcelain` on real repositories (the
//! bare mirrors under `/work/.mirror`; skipped where they are missing).
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

const FLASK: &str = "/work/.mirror/pallets+flask/repo";

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

fn ours(repo: &GitRepo, rev: &str, path: &str) -> Vec<String> {
    repo.blame_file(rev, path)
        .unwrap()
        .iter()
        .flat_map(|r| (r.start_line..=r.end_line).map(|_| r.commit.clone()))
        .collect()
}

fn compare(git_dir: &str, paths: &[&str]) {
    if !Path::new(git_dir).exists() {
        eprintln!("skipped: {git_dir} is not here");
        return;
    }
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
fn flask_files_match_git_blame() {
    compare(
        FLASK,
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
#[ignore]
fn all_source_files_match_git_blame() {
    for (git_dir, exts) in [
        (FLASK, &["py"][..]),
        ("/work/.mirror/expressjs+express/repo", &["js"][..]),
        ("/work/.mirror/spf13+cobra/repo", &["go"][..]),
        ("/work/.mirror/BurntSushi+ripgrep/repo", &["rs"][..]),
    ] {
        if !Path::new(git_dir).exists() {
            continue;
        }
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
