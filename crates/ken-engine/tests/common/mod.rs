//! What the engine's integration tests share.

use std::path::Path;
use std::process::Command;

/// Run git in `dir` as `who` (name, email) at a fixed date, with no user
/// or system configuration.
pub fn git(dir: &Path, args: &[&str], who: (&str, &str)) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", who.0)
        .env("GIT_AUTHOR_EMAIL", who.1)
        .env("GIT_COMMITTER_NAME", who.0)
        .env("GIT_COMMITTER_EMAIL", who.1)
        .env("GIT_AUTHOR_DATE", "2024-03-01T10:00:00")
        .env("GIT_COMMITTER_DATE", "2024-03-01T10:00:00")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
