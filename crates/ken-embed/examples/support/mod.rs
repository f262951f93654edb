//! Inputs shared by the examples: realistic code chunks from a git repository.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the benchmarks read flask's code: `--flask DIR`, else
/// `$KEN_FLASK_GIT_DIR`; there is no default location. A missing or absent
/// repository is an error that says how to give one.
pub fn flask_git_dir(args: &[String]) -> PathBuf {
    flask_git_dir_from(
        arg(args, "--flask"),
        std::env::var("KEN_FLASK_GIT_DIR").ok(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// [`flask_git_dir`] from the flag's and the variable's values.
pub fn flask_git_dir_from(flag: Option<String>, env: Option<String>) -> Result<PathBuf, String> {
    let Some(dir) = flag.or(env).filter(|d| !d.is_empty()) else {
        return Err(
            "no flask repository given: clone https://github.com/pallets/flask \
             (bare is fine) and pass --flask DIR or set KEN_FLASK_GIT_DIR"
                .into(),
        );
    };
    let dir = PathBuf::from(dir);
    if !dir.exists() {
        return Err(format!(
            "no flask repository at {}: clone https://github.com/pallets/flask (bare is fine) \
             and pass --flask DIR or set KEN_FLASK_GIT_DIR",
            dir.display()
        ));
    }
    Ok(dir)
}

/// One chunk: file, name of the definition it starts with, text.
#[derive(Clone, Debug)]
pub struct Chunk {
    pub path: String,
    pub name: String,
    pub text: String,
}

fn git(git_dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg(format!("--git-dir={}", git_dir.display()))
        .args(args)
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Cuts every `src/**/*.py` file of the repository's HEAD into definition-sized
/// chunks: a new chunk starts at each `def`/`class` at indentation 0 or 4
/// (decorators and comments above it included), chunks are capped at 3000
/// characters, whitespace-only pieces are dropped. A rough stand-in for the
/// syntax-aware chunker, with the same spread of lengths.
pub fn python_chunks(git_dir: &Path) -> Vec<Chunk> {
    let files = git(git_dir, &["ls-tree", "-r", "--name-only", "HEAD"]);
    let mut chunks = Vec::new();
    for path in files
        .lines()
        .filter(|p| p.starts_with("src/") && p.ends_with(".py"))
    {
        let text = git(git_dir, &["show", &format!("HEAD:{path}")]);
        let lines: Vec<&str> = text.lines().collect();
        let mut starts = vec![0usize];
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start();
            let indent = l.len() - t.len();
            if indent <= 4
                && (t.starts_with("def ") || t.starts_with("class ") || t.starts_with("async def "))
            {
                // Pull decorators and comments directly above into the chunk.
                let mut s = i;
                while s > 0 {
                    let p = lines[s - 1].trim_start();
                    if p.starts_with('@') || p.starts_with('#') {
                        s -= 1;
                    } else {
                        break;
                    }
                }
                if s > *starts.last().unwrap() {
                    starts.push(s);
                }
            }
        }
        starts.push(lines.len());
        for w in starts.windows(2) {
            let body = lines[w[0]..w[1]].join("\n");
            if body.trim().is_empty() {
                continue;
            }
            let name = lines[w[0]..w[1]]
                .iter()
                .map(|l| l.trim_start())
                .find_map(|l| {
                    let rest = l
                        .strip_prefix("async def ")
                        .or_else(|| l.strip_prefix("def "))
                        .or_else(|| l.strip_prefix("class "))?;
                    Some(
                        rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .next()?
                            .to_string(),
                    )
                })
                .unwrap_or_else(|| "<module>".into());
            let mut text: String = body.chars().take(3000).collect();
            text.insert_str(0, &format!("# {path}\n"));
            chunks.push(Chunk {
                path: path.to_string(),
                name,
                text,
            });
        }
    }
    chunks
}

/// `n` inputs of exactly `len` tokens cut from the concatenated `texts`,
/// each framed by the model's special tokens (`[CLS] … [SEP]`).
pub fn token_windows(
    e: &ken_embed::LocalEmbedder,
    texts: &[&str],
    len: usize,
    n: usize,
) -> Vec<Vec<u32>> {
    let mut tok = e.tokenizer().clone();
    tok.with_truncation(None).unwrap();
    let raw = tok
        .encode(texts.concat().as_str(), false)
        .unwrap()
        .get_ids()
        .to_vec();
    let frame = e.tokenize(&[""]).unwrap().pop().unwrap();
    raw.chunks_exact(len - frame.len())
        .take(n)
        .map(|w| {
            let mut s = vec![frame[0]];
            s.extend_from_slice(w);
            s.extend_from_slice(&frame[1..]);
            s
        })
        .collect()
}

/// The model directory: first argument `--model DIR`, else the usual places.
pub fn model_dir(args: &[String]) -> PathBuf {
    if let Some(i) = args.iter().position(|a| a == "--model") {
        return PathBuf::from(&args[i + 1]);
    }
    ken_embed::find_model(&ken_embed::default_model_dirs()).unwrap_or_else(|e| panic!("{e}"))
}

pub fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args[i + 1].clone())
}

/// Best (shortest) and median of `reps` timings of `f`, in seconds.
pub fn time<F: FnMut()>(reps: usize, mut f: F) -> (f64, f64) {
    let mut ts: Vec<f64> = (0..reps)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    ts.sort_by(f64::total_cmp);
    (ts[0], ts[ts.len() / 2])
}

/// GFLOP/s of an `m×k · k×n` f32 product with candle (best of `reps`).
pub fn candle_gflops(m: usize, k: usize, n: usize, reps: usize) -> f64 {
    let a = candle_core::Tensor::randn(0f32, 1.0, (m, k), &candle_core::Device::Cpu).unwrap();
    let b = candle_core::Tensor::randn(0f32, 1.0, (k, n), &candle_core::Device::Cpu).unwrap();
    let _ = a.matmul(&b).unwrap(); // warm-up
    let (best, _) = time(reps, || {
        let _ = a.matmul(&b).unwrap();
    });
    2.0 * (m * k * n) as f64 / best / 1e9
}

/// FLOPs of one forward pass over a sequence of `n` tokens (multiply-adds count 2).
pub fn flops(n: usize, layers: usize, h: usize, inter: usize) -> f64 {
    let dense = 2.0 * (4 * h * h + 2 * h * inter) as f64 * n as f64;
    let attn = 4.0 * (n * n * h) as f64;
    layers as f64 * (dense + attn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flask_repository_has_no_default_location() {
        let err = flask_git_dir_from(None, None).unwrap_err();
        assert!(
            err.contains("--flask") && err.contains("KEN_FLASK_GIT_DIR"),
            "{err}"
        );
        // the flag wins over the variable; a missing directory is named
        let err = flask_git_dir_from(
            Some("/nonexistent/flag".into()),
            Some("/nonexistent/env".into()),
        )
        .unwrap_err();
        assert!(err.contains("/nonexistent/flag"), "{err}");
        // (read at run time: a binary built in another checkout carries its path)
        let here = std::env::var("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
        assert_eq!(
            flask_git_dir_from(None, Some(here.clone())),
            Ok(PathBuf::from(here))
        );
    }
}
