//! Settings in layers: `$KEN_HOME/config.toml` < environment < flags,
//! resolved once into an immutable [`Settings`].

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use ken_engine::Settings;
use serde::Deserialize;

/// The config file. Every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Skip files larger than this many bytes.
    pub max_file_size: Option<u64>,
    /// Worker threads for indexing.
    pub threads: Option<usize>,
    /// Chunking: files up to this many characters are one chunk.
    pub whole_file_chars: Option<usize>,
}

/// The environment, read once here and nowhere else.
#[derive(Debug, Default, Clone)]
pub struct Env {
    pub ken_home: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub home: Option<PathBuf>,
    pub git_token: Option<String>,
}

impl Env {
    pub fn read() -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Env {
            ken_home: var("KEN_HOME").map(PathBuf::from),
            xdg_data_home: var("XDG_DATA_HOME").map(PathBuf::from),
            home: var("HOME").map(PathBuf::from),
            git_token: var("KEN_GIT_TOKEN").or_else(|| var("GITHUB_TOKEN")),
        }
    }
}

/// `--home` < `$KEN_HOME` < `$XDG_DATA_HOME/ken` < `~/.local/share/ken`.
pub fn home_dir(flag: Option<&Path>, env: &Env) -> PathBuf {
    if let Some(h) = flag {
        return h.to_path_buf();
    }
    if let Some(h) = &env.ken_home {
        return h.clone();
    }
    if let Some(x) = &env.xdg_data_home {
        return x.join("ken");
    }
    match &env.home {
        Some(h) => h.join(".local/share/ken"),
        None => PathBuf::from(".ken"),
    }
}

pub fn load_file(home: &Path) -> Result<FileConfig> {
    let path = home.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileConfig::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Resolve settings for a command.
pub fn settings(home_flag: Option<&Path>, env: &Env) -> Result<Settings> {
    let home = home_dir(home_flag, env);
    let file = load_file(&home)?;
    let mut s = Settings::new(home);
    if let Some(v) = file.max_file_size {
        s.max_file_bytes = v;
    }
    if let Some(v) = file.threads {
        s.threads = v.max(1);
    }
    if let Some(v) = file.whole_file_chars {
        s.chunk.whole_file_chars = v;
    }
    s.git_token = env.git_token.clone();
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_layers() {
        let env = Env {
            ken_home: Some("/k".into()),
            xdg_data_home: Some("/x".into()),
            home: Some("/h".into()),
            git_token: None,
        };
        assert_eq!(home_dir(Some(Path::new("/f")), &env), PathBuf::from("/f"));
        assert_eq!(home_dir(None, &env), PathBuf::from("/k"));
        let env = Env {
            ken_home: None,
            ..env
        };
        assert_eq!(home_dir(None, &env), PathBuf::from("/x/ken"));
        let env = Env {
            xdg_data_home: None,
            ..env
        };
        assert_eq!(home_dir(None, &env), PathBuf::from("/h/.local/share/ken"));
    }

    #[test]
    fn config_file_layer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "max_file_size = 10\nthreads = 3\n",
        )
        .unwrap();
        let s = settings(Some(dir.path()), &Env::default()).unwrap();
        assert_eq!(s.max_file_bytes, 10);
        assert_eq!(s.threads, 3);
        std::fs::write(dir.path().join("config.toml"), "bogus = 1\n").unwrap();
        let err = settings(Some(dir.path()), &Env::default()).unwrap_err();
        assert!(format!("{err:#}").contains("invalid config file"));
    }
}
