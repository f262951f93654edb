//! The layout of `$KEN_HOME`: `repos/<name>/` holds one repository's index
//! (the embedded store provider's root), `clones/<name>/` the clones of
//! repositories given by URL.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use ken_store::dir_name;
use ken_store::{EmbeddedProvider, Home, PgProvider, StoreProvider};

pub fn clone_dir(home: &Path, name: &str) -> PathBuf {
    home.join("clones").join(dir_name(name))
}

/// The store provider of a home: its `repos/` directory.
pub fn provider(home: &Path) -> Arc<dyn StoreProvider> {
    Arc::new(EmbeddedProvider::new(home.join("repos")))
}

/// The provider of a PostgreSQL database, connected once per process and URL.
pub fn database(url: &str) -> crate::Result<Arc<dyn StoreProvider>> {
    Ok(connect(url)?)
}

/// Tokens, jobs and deliveries of a PostgreSQL database.
pub fn database_home(url: &str) -> crate::Result<Arc<dyn Home>> {
    Ok(Arc::new(connect(url)?.home()))
}

fn connect(url: &str) -> crate::Result<Arc<PgProvider>> {
    static OPEN: Mutex<Vec<(String, Arc<PgProvider>)>> = Mutex::new(Vec::new());
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = open.iter().find(|(u, _)| u == url) {
        return Ok(p.clone());
    }
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(crate::EngineError::bad_input(
            "--store takes a PostgreSQL URL (postgres://user:password@host:port/db)",
        ));
    }
    let p = Arc::new(PgProvider::connect(url).map_err(|e| {
        crate::EngineError::unavailable(e.to_string())
            .with_hint("check the URL and that the server runs with the pgvector extension")
    })?);
    open.push((url.to_string(), p.clone()));
    Ok(p)
}
