//! The PostgreSQL store: every repository's index in one database, rows
//! scoped by repository id, vectors in pgvector, BM25 computed in SQL over
//! the terms our analyzer produced (stored at write time).
//!
//! # Leases and consistency
//! The writer lease is a session-level advisory lock on the repository id,
//! held by one dedicated connection for the writer's lifetime: a writer
//! killed with SIGKILL loses its connection and with it the lease. Every
//! write is one transaction that also bumps the repository's `version`
//! (what [`crate::Store::data_version`] reads), so readers on any server see a
//! batch all at once or not at all, and know when to reopen.
//!
//! # Sync over async
//! The [`crate::Store`] seam is synchronous (the engine runs on blocking
//! threads). A provider owns a small tokio runtime; each call is spawned on
//! it and waited for on a channel, which works from any thread, including
//! a blocking thread of another runtime.

mod fleet;
mod home;
mod lexical;
mod maxscore;
mod schema;
mod store;
/// A database per test on `KEN_TEST_PG_URL`'s server, as the integration
/// tests have it.
#[cfg(test)]
#[path = "../../tests/pg_db/mod.rs"]
mod test_db;
mod vectors;

use std::future::Future;
use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, PgPool, Postgres, Row, Transaction};

use crate::{DynStore, Result, StoreError, StoreProvider};
pub use home::PgHome;
pub use store::PgStore;

/// Count a write to repository `repo`: readers that cached anything of
/// it see the version move and read again.
pub(crate) async fn bump(tx: &mut Transaction<'_, Postgres>, repo: i64) -> Result<()> {
    sqlx::query("UPDATE repos SET version = version + 1 WHERE id = $1")
        .bind(repo)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// What every store of one database shares: the runtime and the pool.
pub(crate) struct Pg {
    rt: Option<tokio::runtime::Runtime>,
    pub pool: PgPool,
    /// The URL without its password, for people.
    pub shown: String,
}

impl Pg {
    /// Run `fut` on the provider's runtime and wait for it.
    pub fn run<T, F>(&self, fut: F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let rt = self.rt.as_ref().expect("the runtime lives as long as Pg");
        rt.spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv()
            .map_err(|_| StoreError::Postgres("the database task stopped".into()))?
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        // never block (a drop may happen on an async thread)
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Repositories' indexes in one PostgreSQL database (with pgvector).
#[derive(Clone)]
pub struct PgProvider {
    pg: Arc<Pg>,
}

impl std::fmt::Debug for PgProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgProvider")
            .field("url", &self.pg.shown)
            .finish()
    }
}

impl PgProvider {
    /// Connect to `url` (`postgres://user[:password]@host[:port]/db`), apply
    /// the schema migrations not yet applied, and keep a pool.
    pub fn connect(url: &str) -> Result<PgProvider> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ken-pg")
            .enable_all()
            .build()?;
        let opts: PgConnectOptions = url
            .parse()
            .map_err(|e: sqlx::Error| StoreError::Postgres(format!("bad URL: {e}")))?;
        // HNSW keeps this many candidates per search (pgvector's default of 40
        // would cap a search at 40 rows)
        let ef = vectors::EF_SEARCH.to_string();
        let opts = opts
            .disable_statement_logging()
            .options([("hnsw.ef_search", ef.as_str())]);
        let shown = shown_url(url);
        let pool = rt
            .block_on(async {
                // one connection first: a refused or unknown server fails
                // now, not after the pool's acquire timeout
                let first = opts.connect().await?;
                sqlx::Connection::close(first).await?;
                Ok::<_, sqlx::Error>(
                    PgPoolOptions::new()
                        .max_connections(16)
                        .acquire_timeout(std::time::Duration::from_secs(30))
                        .connect_lazy_with(opts),
                )
            })
            .map_err(|e| StoreError::Postgres(format!("cannot connect to {shown}: {e}")))?;
        let pg = Pg {
            rt: Some(rt),
            pool,
            shown,
        };
        let pool = pg.pool.clone();
        pg.run(async move { schema::migrate(&pool).await })?;
        Ok(PgProvider { pg: Arc::new(pg) })
    }

    /// The collection index: the database's own tables, read across
    /// repositories.
    pub(crate) fn fleet_view(&self) -> fleet::PgFleet {
        fleet::PgFleet {
            pg: self.pg.clone(),
        }
    }

    /// Tokens, jobs and webhook deliveries in the same database.
    pub fn home(&self) -> PgHome {
        PgHome::new(self.pg.clone())
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i32> {
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            Ok(sqlx::query("SELECT max(version) FROM ken_schema")
                .fetch_one(&pool)
                .await?
                .get::<Option<i32>, _>(0)
                .unwrap_or(0))
        })
    }

    async fn repo_id(pool: &PgPool, key: &str) -> Result<Option<i64>> {
        Ok(sqlx::query("SELECT id FROM repos WHERE key = $1")
            .bind(key)
            .fetch_optional(pool)
            .await?
            .map(|r| r.get(0)))
    }
}

impl StoreProvider for PgProvider {
    fn key_of(&self, name: &str) -> String {
        crate::dir_name(name)
    }

    fn list(&self) -> Result<Vec<String>> {
        let pool = self.pg.pool.clone();
        self.pg.run(async move {
            let rows = sqlx::query("SELECT key FROM repos ORDER BY key")
                .fetch_all(&pool)
                .await?;
            Ok(rows.into_iter().map(|r| r.get(0)).collect())
        })
    }

    fn exists(&self, key: &str) -> Result<bool> {
        let pool = self.pg.pool.clone();
        let key = self.key_of(key);
        self.pg
            .run(async move { Ok(PgProvider::repo_id(&pool, &key).await?.is_some()) })
    }

    fn open(&self, key: &str) -> Result<DynStore> {
        let pool = self.pg.pool.clone();
        let key = self.key_of(key);
        let k = key.clone();
        let id = self
            .pg
            .run(async move { PgProvider::repo_id(&pool, &k).await })?;
        Ok(Box::new(PgStore::reader(self.pg.clone(), key, id)))
    }

    fn open_for_writing(&self, key: &str) -> Result<DynStore> {
        let key = self.key_of(key);
        Ok(Box::new(PgStore::writer(self.pg.clone(), key)?))
    }

    fn remove(&self, key: &str) -> Result<()> {
        let key = self.key_of(key);
        // the lease first: never delete under a running writer
        let writer = PgStore::writer(self.pg.clone(), key)?;
        writer.delete_repo()
    }

    fn describe(&self) -> String {
        self.pg.shown.clone()
    }

    /// The database's own tables, read across repositories.
    fn fleet(&self) -> Result<Option<Arc<dyn crate::Fleet>>> {
        Ok(Some(Arc::new(self.fleet_view())))
    }
}

/// `url` with its password replaced by `***`.
fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.rsplit_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_never_shown() {
        assert_eq!(
            shown_url("postgres://ken:s3cret@db.example:5432/ken"),
            "postgres://ken:***@db.example:5432/ken"
        );
        assert_eq!(
            shown_url("postgres://ken@127.0.0.1/ken"),
            "postgres://ken@127.0.0.1/ken"
        );
    }
}
