//! Property-based tests of the HTTP API from its own OpenAPI document
//! (Schemathesis, from PyPI): no 5xx, every response in the documented
//! status codes, content types and schemas, schema-valid requests
//! accepted and invalid ones refused, authentication enforced.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::server::{Server, token};
use common::*;

/// `st` of the virtualenv `scripts/install-test-tools.sh` makes (or of
/// `$KEN_TEST_PYTHON`'s). Missing, the test fails and says so.
fn schemathesis() -> PathBuf {
    let python = std::env::var_os("KEN_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/ken-py/bin/python")
        });
    let st = python.with_file_name("st");
    assert!(
        st.is_file(),
        "no schemathesis at {}: run scripts/install-test-tools.sh (or set KEN_TEST_PYTHON)",
        st.display()
    );
    st
}

#[test]
fn the_api_holds_to_its_openapi_document() {
    let st = schemathesis();
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let admin = token(&ken, &["*"], "admin");
    // with the model: every search mode is a documented success
    let model = model_dir();
    let s = Server::start(
        &ken,
        &[
            ("KEN_WEBHOOK_SECRET", "fuzz-secret"),
            ("KEN_EMBEDDER", "local"),
            ("KEN_EMBED_MODEL_DIR", model.to_str().unwrap()),
        ],
    );
    let config = common::manifest_dir().join("tests/data/schemathesis.toml");
    let report = tempfile::tempdir().unwrap();
    let out = Command::new(st)
        .arg("--config-file")
        .arg(&config)
        .args([
            "run",
            &format!("{}/openapi.json", s.base),
            "--header",
            &format!("Authorization: Bearer {admin}"),
            "--max-examples",
            "40",
            "--seed",
            "20261201",
            // one worker: CPython 3.11's ast.parse is not thread-safe
            // ("AST constructor recursion depth mismatch" under load)
            "--workers",
            "1",
            "--phases",
            "examples,coverage,fuzzing",
            "--report-dir",
        ])
        .arg(report.path())
        .env("SCHEMATHESIS_HOOKS", "")
        .output()
        .unwrap();
    let text = format!("{}\n{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "schemathesis found failures:\n{text}");
    // it did test every operation of the document
    let (_, doc) = s.get("/openapi.json", None);
    let operations: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert!(
        text.contains(&format!("Selected: {operations}/{operations}")),
        "{operations} operations: {text}"
    );
}
