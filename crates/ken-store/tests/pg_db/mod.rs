//! A fresh PostgreSQL database per test, on the server `scripts/test.sh`
//! starts (`KEN_TEST_PG_URL`); dropped after the test. Without the
//! variable a test fails and says how to get a server. Shared by the store
//! conformance tests and the binary's tests (crates/ken/tests/common).
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::Connection;

/// A database made for one test, dropped after it.
pub struct Db {
    admin: String,
    name: String,
}

/// Run a future on a runtime of its own.
pub fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

impl Db {
    pub fn new() -> Db {
        static N: AtomicU32 = AtomicU32::new(0);
        let admin = std::env::var("KEN_TEST_PG_URL").unwrap_or_else(|_| {
            panic!(
                "KEN_TEST_PG_URL is not set: this test needs PostgreSQL 16 with pgvector. \
                 Run the suite with scripts/test.sh, or start a server with \
                 `scripts/postgres.sh start DIR` and export the URL it prints"
            )
        });
        let name = format!(
            "ken_test_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        block(async {
            let mut c = sqlx::PgConnection::connect(&admin).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut c)
                .await
                .unwrap();
        });
        Db { admin, name }
    }

    pub fn url(&self) -> String {
        match self.admin.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{}", self.name),
            None => format!("{}/{}", self.admin, self.name),
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        block(async move {
            if let Ok(mut c) = sqlx::PgConnection::connect(&admin).await {
                let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .execute(&mut c)
                .await;
            }
        });
    }
}
