//! Helpers for the unit tests: real git repositories and small indexes.

use std::path::Path;
use std::process::Command;

use crate::{Engine, IndexRequest};

/// Run git in `dir` as Ada at `date`, away from the machine's own
/// configuration; its output, trimmed.
pub(crate) fn git(dir: &Path, args: &[&str], date: &str) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
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

/// Index `dir` as `name` (no embedding).
pub(crate) fn index(e: &Engine, dir: &Path, name: &str) {
    let req = IndexRequest {
        source: dir.display().to_string(),
        name: Some(name.into()),
        no_embed: true,
        ..Default::default()
    };
    e.index(&req, &crate::index::NoProgress).unwrap();
}

/// Two one-file folders indexed as `web` (`serve_request`) and `math`
/// (`determinant`); the folders, kept while the test needs them.
pub(crate) fn web_and_math(e: &Engine) -> Vec<tempfile::TempDir> {
    let mut dirs = Vec::new();
    for (name, file, text) in [
        (
            "web",
            "app.py",
            "def serve_request(req):\n    return render(req)\n",
        ),
        (
            "math",
            "matrix.py",
            "def determinant(m):\n    return lu(m).product()\n",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
        index(e, dir.path(), name);
        dirs.push(dir);
    }
    dirs
}
