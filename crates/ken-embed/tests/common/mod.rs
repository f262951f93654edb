//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The model the tests run: `$KEN_TEST_MODEL_DIR`, default
/// `~/.cache/ken-models/all-MiniLM-L6-v2`. Fails (never skips) when absent.
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("KEN_TEST_MODEL_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/ken-models/all-MiniLM-L6-v2")
        });
    if ken_embed::check_model_dir(&dir).is_err() {
        panic!(
            "the test embedding model is missing at {}: run `scripts/install-model.sh` \
             (or set KEN_TEST_MODEL_DIR to a model directory)",
            dir.display()
        );
    }
    dir
}

pub fn load(opts: ken_embed::LocalOptions) -> ken_embed::LocalEmbedder {
    ken_embed::LocalEmbedder::load(&model_dir(), opts).expect("load the test model")
}

pub struct Reference {
    pub text: String,
    pub n_tokens: usize,
    pub vector: Vec<f32>,
}

/// The vectors `scripts/ref_vectors.py` computed with NumPy.
pub fn reference() -> Vec<Reference> {
    // read when the test runs, so a binary built from another checkout that
    // shares the target directory finds this checkout's data
    let dir = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
    let path = format!("{dir}/tests/data/reference_vectors.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| Reference {
            text: v["text"].as_str().unwrap().to_string(),
            n_tokens: v["n_tokens"].as_u64().unwrap() as usize,
            vector: v["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect(),
        })
        .collect()
}

/// The Python with NumPy: `$KEN_TEST_PYTHON`, else the virtualenv
/// `scripts/install-test-tools.sh` makes. Fails (never skips) when absent.
pub fn python() -> PathBuf {
    let p = std::env::var_os("KEN_TEST_PYTHON")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/ken-py/bin/python")
        });
    let ok = std::process::Command::new(&p)
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "no Python with NumPy at {}: run scripts/install-test-tools.sh (or set KEN_TEST_PYTHON)",
        p.display()
    );
    p
}

/// Writes a tiny random cross-encoder to `out` with
/// `scripts/tiny_cross_encoder.py` (its NumPy scores in `out/cases.json`).
pub fn tiny_cross_encoder(out: &std::path::Path, layout: &str, labels: u32) {
    let script = PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../../scripts/tiny_cross_encoder.py");
    let o = std::process::Command::new(python())
        .arg(script)
        .arg(out)
        .args(["--layout", layout, "--labels", &labels.to_string()])
        .output()
        .expect("run tiny_cross_encoder.py");
    assert!(
        o.status.success(),
        "tiny_cross_encoder.py failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
