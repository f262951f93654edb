//! Test helpers: real git repositories built by the test, and the real `ken` binary.

#![allow(dead_code)]

pub mod browser;
pub mod chat;
#[path = "../../../ken-store/tests/pg_db/mod.rs"]
pub mod pg;
pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A git repository in a temporary directory.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    pub fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let r = Repo { dir };
        r.git(&["init", "-q", "-b", "main"]);
        r.git(&["config", "user.name", "Ada Lovelace"]);
        r.git(&["config", "user.email", "ada@example.com"]);
        r.git(&["config", "commit.gpgsign", "false"]);
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Repo {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    pub fn remove(&self, rel: &str) -> &Repo {
        std::fs::remove_file(self.path().join(rel)).unwrap();
        self
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Stage everything and commit as someone, at a date (`2024-01-02T10:00:00`).
    pub fn commit_as(&self, name: &str, email: &str, date: &str, message: &str) -> String {
        self.git(&["add", "-A"]);
        let out = Command::new("git")
            .args(["commit", "-q", "--allow-empty", "-m", message])
            .env("GIT_AUTHOR_NAME", name)
            .env("GIT_AUTHOR_EMAIL", email)
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_NAME", name)
            .env("GIT_COMMITTER_EMAIL", email)
            .env("GIT_COMMITTER_DATE", date)
            .current_dir(self.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.git(&["rev-parse", "HEAD"])
    }

    /// Stage everything and commit; returns the new commit's sha.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }
}

/// The `ken` binary with its own home directory.
pub struct Ken {
    pub home: tempfile::TempDir,
}

impl Ken {
    pub fn new() -> Ken {
        Ken {
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ken"));
        c.arg("--home").arg(self.home.path());
        // Embeddings are off unless a test asks for them (`cmd_embedding`).
        c.env_remove("KEN_HOME")
            .env("NO_COLOR", "1")
            .env("KEN_EMBEDDER", "off");
        c
    }

    /// A command with the local embedding model on (see `model_dir`).
    pub fn cmd_embedding(&self) -> Command {
        let mut c = self.cmd();
        c.env("KEN_EMBEDDER", "local")
            .env("KEN_EMBED_MODEL_DIR", model_dir());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// Run, expect success, parse stdout as JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "ken {args:?} failed ({:?}):\n{}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }

    pub fn index(&self, args: &[&str]) -> Value {
        let mut all = vec!["index", "--json"];
        all.extend_from_slice(args);
        self.json(&all)
    }

    pub fn search(&self, args: &[&str]) -> Value {
        let mut all = vec!["search", "--json"];
        all.extend_from_slice(args);
        self.json(&all)
    }

    pub fn index_dir(&self, name: &str) -> PathBuf {
        self.home.path().join("repos").join(name)
    }
}

/// The paths of a search's results, in order.
pub fn paths(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A repository of one commit of [`handler_files`].
pub fn big_repo(files: usize, defs: usize) -> Repo {
    let r = Repo::new();
    handler_files(&r, files, defs);
    r.commit("many files");
    r
}

/// Write `files` Python files of `defs` small handlers each, spread over 50
/// packages (a repository big enough that indexing it takes a while).
pub fn handler_files(r: &Repo, files: usize, defs: usize) {
    for i in 0..files {
        let mut body = String::new();
        for j in 0..defs {
            body.push_str(&format!(
                "def handler_{i}_{j}(request, retries={j}):\n    \"\"\"Handle request {i}/{j}.\"\"\"\n    total = 0\n    for k in range(retries):\n        total += k * {i}\n    return total\n\n\n"
            ));
        }
        r.write(&format!("pkg/mod_{}/file_{i}.py", i % 50), body);
    }
}

/// A small realistic Python project.
pub fn python_project(r: &Repo) {
    r.write(
        "src/shop/payments.py",
        r#""""Payment processing with retries."""

import time

MAX_RETRIES = 3


class PaymentError(Exception):
    """Raised when a payment cannot be completed."""


def retry_payment(charge, attempts=MAX_RETRIES):
    """Call `charge` until it succeeds, waiting longer after each failure."""
    delay = 0.5
    for attempt in range(attempts):
        try:
            return charge()
        except PaymentError:
            time.sleep(delay)
            delay *= 2
    raise PaymentError("gave up after %d attempts" % attempts)
"#,
    );
    r.write(
        "src/shop/session.py",
        r#""""Session tokens."""

import secrets


class SessionStore:
    """Keeps session tokens and refreshes them before they expire."""

    def __init__(self):
        self.tokens = {}

    def refresh_token(self, user_id):
        """Issue a new token for `user_id`, replacing the old one."""
        token = secrets.token_hex(16)
        self.tokens[user_id] = token
        return token

    def revoke(self, user_id):
        self.tokens.pop(user_id, None)
"#,
    );
    r.write(
        "README.md",
        "# Shop\n\nA tiny shop with payments and sessions.\n",
    );
}

/// The embedding model for tests: `$KEN_TEST_MODEL_DIR`, else where
/// `scripts/install-model.sh` puts it. Missing, the test fails and says so.
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("KEN_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/ken-models/all-MiniLM-L6-v2")
        });
    assert!(
        dir.join("model.safetensors").is_file(),
        "no embedding model at {}: run scripts/install-model.sh (or set KEN_TEST_MODEL_DIR)",
        dir.display()
    );
    dir
}

/// Run a prepared command, expect success, parse stdout as JSON.
pub fn json_of(mut c: Command) -> Value {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed:\n{}\n{}",
        c,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// The Python of the test tools (`$KEN_TEST_PYTHON`, else the virtualenv
/// `scripts/install-test-tools.sh` makes), checked to import `module`.
/// Fails (never skips) when absent.
pub fn test_python(module: &str) -> PathBuf {
    let p = std::env::var_os("KEN_TEST_PYTHON")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/ken-py/bin/python")
        });
    let ok = Command::new(&p)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "no Python with {module} at {}: run scripts/install-test-tools.sh (or set KEN_TEST_PYTHON)",
        p.display()
    );
    p
}

/// scip-python (`$KEN_TEST_SCIP_PYTHON`, else where
/// `scripts/install-scip.sh` puts it). Fails (never skips) when absent.
pub fn scip_python() -> PathBuf {
    let p = std::env::var_os("KEN_TEST_SCIP_PYTHON")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/ken-scip/node_modules/.bin/scip-python")
        });
    assert!(
        p.is_file(),
        "no scip-python at {}: run scripts/install-scip.sh (or set KEN_TEST_SCIP_PYTHON)",
        p.display()
    );
    p
}

/// Writes a tiny random cross-encoder (a BERT sequence classifier) to `out`
/// with `scripts/tiny_cross_encoder.py`.
pub fn tiny_cross_encoder(out: &Path) {
    let script = manifest_dir().join("../../scripts/tiny_cross_encoder.py");
    let o = Command::new(test_python("numpy"))
        .arg(script)
        .arg(out)
        .output()
        .expect("run tiny_cross_encoder.py");
    assert!(
        o.status.success(),
        "tiny_cross_encoder.py failed: {}",
        stderr(&o)
    );
}

/// This crate's folder, read when the test runs (a test binary built from
/// another checkout sharing the target folder would carry that one's path).
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
}

/// `actual` against the recorded `tests/data/NAME` (pretty JSON, compared
/// byte for byte); `UPDATE_EXPECT=1` records it instead. For shapes that
/// are contracts: a change must be meant, and shows in the diff.
#[allow(dead_code)]
pub fn expect_recorded(name: &str, actual: &Value) {
    let path = manifest_dir().join("tests/data").join(name);
    let text = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_EXPECT=1 records it)", path.display()));
    if recorded != text {
        let first = recorded
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(recorded.lines().count().min(text.lines().count()));
        panic!(
            "{} differs from what is served, first at line {} (UPDATE_EXPECT=1 records the new one if the change is meant):\n  recorded: {}\n  served:   {}",
            path.display(),
            first + 1,
            recorded.lines().nth(first).unwrap_or("<end>"),
            text.lines().nth(first).unwrap_or("<end>")
        );
    }
}
