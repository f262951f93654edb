//! The conformance suite on PostgreSQL + pgvector: a real server, one fresh
//! database per test. `scripts/test.sh` starts the server
//! (`scripts/postgres.sh`) and sets `KEN_TEST_PG_URL`; without it these
//! tests fail and say how to get one.

mod conformance;
mod pg_db;

use ken_store::{PgProvider, StoreProvider};
use pg_db::{Db, block};
use sqlx::Connection;

macro_rules! on_provider {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let db = Db::new();
            let p = PgProvider::connect(&db.url()).unwrap();
            conformance::$name(&p);
            drop(p);
        }
    )*};
}
conformance::provider_checks!(on_provider);

macro_rules! on_home {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let db = Db::new();
            let p = PgProvider::connect(&db.url()).unwrap();
            conformance::$name(&p.home());
        }
    )*};
}
conformance::home_checks!(on_home);

#[test]
fn every_check_is_listed() {
    conformance::every_check_is_listed();
}

#[test]
fn migrations_are_applied_once_and_a_newer_schema_is_refused() {
    let db = Db::new();
    let p = PgProvider::connect(&db.url()).unwrap();
    let v = p.schema_version().unwrap();
    assert!(v >= 1);
    // connecting again applies nothing twice
    let again = PgProvider::connect(&db.url()).unwrap();
    assert_eq!(again.schema_version().unwrap(), v);
    drop((p, again));
    run_sql(
        &db.url(),
        &["INSERT INTO ken_schema(version) VALUES (9999)"],
    );
    let err = PgProvider::connect(&db.url()).unwrap_err().to_string();
    assert!(err.contains("9999"), "{err}");
}

/// A database written before commit messages had postings (schema 8)
/// gets them when it is migrated: its commits are found across
/// repositories without being indexed again.
#[test]
fn commits_stored_before_their_postings_are_found_after_the_migration() {
    use ken_store::{CommitRecord, LexicalQuery};
    let db = Db::new();
    let p = PgProvider::connect(&db.url()).unwrap();
    let mut w = p.open_for_writing("acme/web").unwrap();
    let commit = |sha: &str, msg: &str| CommitRecord {
        sha: sha.into(),
        author_name: "Ada".into(),
        author_email: "ada@example.com".into(),
        author_time: 1,
        committer_time: 1,
        summary: msg.into(),
        message: msg.into(),
        parents: Vec::new(),
        files: vec![("web/app.py".into(), "M".into(), None)],
    };
    w.add_commits(&[
        commit("c1", "Call every teardown callback despite errors"),
        commit("c2", "Fix typo"),
    ])
    .unwrap();
    w.finish().unwrap();
    drop((w, p));
    // back to schema 8: no postings, no document numbers
    run_sql(
        &db.url(),
        &[
            "DROP TABLE lex_df",
            "DROP TABLE commit_df",
            // migration 16's table
            "DROP TABLE authors",
            // migration 14's tables and index
            "DROP TABLE messages",
            "DROP TABLE message_terms",
            "DROP INDEX commits_by_sha",
            "DROP TABLE commit_terms",
            "DROP TABLE commit_stats",
            "ALTER TABLE commits DROP COLUMN doc",
            "ALTER TABLE commits ADD COLUMN search tsvector NOT NULL DEFAULT ''",
            "CREATE INDEX commits_search ON commits USING gin (search)",
            // migration 15's tables, column and index (it dropped
            // migration 13's indexes), back to schema 8's
            "DROP TABLE shared_files",
            "DROP TABLE file_terms",
            "DROP INDEX lex_files_by_blob",
            "ALTER TABLE lex_files DROP COLUMN blob",
            "CREATE INDEX lex_terms_files_by_term ON lex_terms (term) INCLUDE (repo, field, doc, tf, len) WHERE files",
            "DELETE FROM ken_schema WHERE version >= 9",
        ],
    );
    let p = PgProvider::connect(&db.url()).unwrap();
    let fleet = p.fleet().unwrap().unwrap();
    let q = |text: &str| LexicalQuery {
        text: text.into(),
        limit: 10,
        ..LexicalQuery::default()
    };
    let hits = fleet.search_commits(&q("teardown errors")).unwrap();
    assert_eq!(
        hits.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
        ["c1"],
        "{hits:?}"
    );
    // the repository's own commit search reads the changed paths' words too
    let r = p.open("acme/web").unwrap();
    let found = r.search_commits("typo in app", 5).unwrap();
    assert_eq!(found.first().map(|f| f.0.as_str()), Some("c2"), "{found:?}");
    assert_eq!(found.len(), 2, "both changed web/app.py: {found:?}");
    // the commit count, newest time and authors, counted by migration 16
    assert_eq!(r.commit_stats().unwrap(), (2, Some(1)));
    assert_eq!(r.commit_authors().unwrap().len(), 1);
    drop(r);
    // and a commit added after the migration is found beside them, and
    // counted: a newer author comes first
    let mut w = p.open_for_writing("acme/web").unwrap();
    w.add_commits(&[CommitRecord {
        author_name: "Bob".into(),
        author_email: "bob@example.com".into(),
        committer_time: 5,
        ..commit("c3", "Teardown runs once")
    }])
    .unwrap();
    w.finish().unwrap();
    let r = p.open("acme/web").unwrap();
    assert_eq!(r.commit_stats().unwrap(), (3, Some(5)));
    assert_eq!(
        r.commit_authors().unwrap(),
        [
            ("Bob".to_string(), "bob@example.com".to_string()),
            ("Ada".to_string(), "ada@example.com".to_string())
        ]
    );
    let hits = fleet.search_commits(&q("teardown")).unwrap();
    let mut shas: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    shas.sort();
    assert_eq!(shas, ["c1", "c3"], "{hits:?}");
    // the commit terms' document frequencies, counted by migration 11 and
    // kept by the writer since, equal a count of the postings
    let wrong = mismatched_frequencies(&db.url(), "commit_terms", "commit_df", "repo, term, field");
    let teardown = count(
        &db.url(),
        "SELECT count(*) FROM commit_df WHERE term = 'teardown'",
    );
    assert_eq!((wrong, teardown), (0, 1));
}

#[test]
fn a_bad_url_or_a_missing_server_is_a_clear_error() {
    let err = PgProvider::connect("postgres://nobody:pw@127.0.0.1:1/none")
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot connect"), "{err}");
    assert!(!err.contains("pw@"), "the password is never shown: {err}");
}

/// Vector search runs on pgvector's HNSW index (not a scan of every row),
/// each repository in its own table, dropped with the repository.
#[test]
fn vector_search_uses_an_hnsw_index_per_repository() {
    let db = Db::new();
    let p = PgProvider::connect(&db.url()).unwrap();
    let items: Vec<(String, Vec<f32>)> = (0..200)
        .map(|i| {
            let v: Vec<f32> = (0..8)
                .map(|d| ((i * 31 + d * 7) % 13) as f32 - 6.0)
                .collect();
            (format!("k{i}"), v)
        })
        .collect();
    let rows: Vec<(u64, String)> = (0..200).map(|i| (i, format!("k{i}"))).collect();
    for key in ["one", "two"] {
        let mut w = p.open_for_writing(key).unwrap();
        w.put_vectors("mini", &items).unwrap();
        w.index_vectors("mini", &rows, 200, 1).unwrap();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut c = rt.block_on(sqlx::PgConnection::connect(&db.url())).unwrap();
    let tables = |c: &mut sqlx::PgConnection| {
        rt.block_on(
            sqlx::query_scalar::<_, String>(
                "SELECT tablename::text FROM pg_tables WHERE tablename LIKE 'vectors\\_%' ORDER BY 1",
            )
            .fetch_all(c),
        )
        .unwrap()
    };
    let t = tables(&mut c);
    assert_eq!(t.len(), 2, "a table per repository: {t:?}");
    let (plan, index): (Vec<String>, String) = rt.block_on(async {
        // the planner prefers a scan of a table this small; forbid it to
        // see that the index can serve the query
        sqlx::query("SET enable_seqscan = off")
            .execute(&mut c)
            .await
            .unwrap();
        let plan = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "EXPLAIN SELECT chunk FROM {} ORDER BY v <=> '[1,0,0,0,0,0,0,1]' LIMIT 10",
            t[0]
        )))
        .fetch_all(&mut c)
        .await
        .unwrap();
        let index = sqlx::query_scalar(
            "SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%hnsw%'",
        )
        .bind(&t[0])
        .fetch_one(&mut c)
        .await
        .unwrap();
        (plan, index)
    });
    let plan = plan.join("\n");
    assert!(
        plan.contains("Index Scan using") && plan.contains("_v_idx"),
        "{plan}"
    );
    assert!(index.contains("vector_cosine_ops"), "{index}");
    p.remove("one").unwrap();
    assert_eq!(
        tables(&mut c).len(),
        1,
        "removing a repository drops its table"
    );
}

/// Run each statement on the database at `url`.
fn run_sql(url: &str, statements: &[&str]) {
    block(async {
        let mut c = sqlx::PgConnection::connect(url).await.unwrap();
        for sql in statements {
            sqlx::query(sqlx::AssertSqlSafe(*sql))
                .execute(&mut c)
                .await
                .unwrap();
        }
    })
}

/// The count a `SELECT count(*) …` gives.
fn count(url: &str, sql: &str) -> i64 {
    block(async {
        let mut c = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_one(&mut c)
            .await
            .unwrap()
    })
}

/// Rows where the stored document frequencies (`frequencies`) and a count
/// of the postings (`postings`, grouped by `keys`) disagree; a stored zero
/// disagrees with a term no posting has.
fn mismatched_frequencies(url: &str, postings: &str, frequencies: &str, keys: &str) -> i64 {
    count(
        url,
        &format!(
            "SELECT count(*) FROM
                 (SELECT {keys}, count(*)::int AS df FROM {postings} GROUP BY {keys}) a
             FULL JOIN {frequencies} d USING ({keys})
             WHERE a.df IS DISTINCT FROM d.df"
        ),
    )
}

/// `lex_df` against the postings: (rows that disagree, rows).
fn df_against_postings(url: &str) -> (i64, i64) {
    (
        mismatched_frequencies(url, "lex_terms", "lex_df", "repo, files, term, field"),
        count(url, "SELECT count(*) FROM lex_df"),
    )
}

/// BM25 statistics are kept exactly: after replaced and deleted files
/// every score equals a fresh index's, and each term's document frequency
/// equals a count of its postings (a term no document holds any more has
/// no row).
#[test]
fn bm25_statistics_follow_deletes_exactly() {
    let db = Db::new();
    let p = PgProvider::connect(&db.url()).unwrap();
    let same_scores = |runs: Vec<(String, [conformance::Scored; 2])>| {
        for (q, [churned, fresh]) in runs {
            assert_eq!(churned.len(), fresh.len(), "{q}");
            for (c, f) in churned.iter().zip(&fresh) {
                assert_eq!((&c.0, c.1), (&f.0, f.1), "{q}");
                assert!((c.2 - f.2).abs() < 1e-4, "{q}: {churned:?} vs {fresh:?}");
            }
        }
    };
    same_scores(conformance::churned(&p));
    let (wrong, rows) = df_against_postings(&db.url());
    assert_eq!(wrong, 0);
    assert!(rows > 0);
    // a database from before the frequencies were stored (schema 9) gets
    // them from its postings when it is migrated
    drop(p);
    run_sql(
        &db.url(),
        &[
            "DROP TABLE lex_df",
            "DROP TABLE commit_df",
            // migration 16's column and table
            "ALTER TABLE commit_stats DROP COLUMN newest",
            "DROP TABLE authors",
            // migration 14's tables and index (it dropped migration 12's
            // index), back to schema 9's index
            "DROP TABLE messages",
            "DROP TABLE message_terms",
            "DROP INDEX commits_by_sha",
            "CREATE INDEX commit_terms_messages ON commit_terms (term) INCLUDE (repo, doc, tf, len) WHERE field = 0",
            // and migration 15's (it dropped migration 13's indexes)
            "DROP TABLE shared_files",
            "DROP TABLE file_terms",
            "DROP INDEX lex_files_by_blob",
            "ALTER TABLE lex_files DROP COLUMN blob",
            "CREATE INDEX lex_terms_files_by_term ON lex_terms (term) INCLUDE (repo, field, doc, tf, len) WHERE files",
            "DELETE FROM ken_schema WHERE version >= 10",
        ],
    );
    let p = PgProvider::connect(&db.url()).unwrap();
    assert_eq!(df_against_postings(&db.url()), (0, rows));
    // every file has its one shared copy, with the postings of one of its
    // copies (migration 15)
    let unshared = count(
        &db.url(),
        "SELECT count(*) FROM lex_files f WHERE NOT EXISTS
             (SELECT 1 FROM shared_files s WHERE s.path = f.path AND s.blob = f.blob AND f.blob <> '')",
    );
    let shared_postings = count(&db.url(), "SELECT count(*) FROM file_terms");
    let held = count(
        &db.url(),
        "SELECT count(*) FROM lex_terms t JOIN shared_files s ON s.doc = t.doc WHERE t.files",
    );
    assert_eq!(unshared, 0);
    assert!(
        shared_postings > 0 && shared_postings == held,
        "{shared_postings} {held}"
    );
    // and searches it as before: the same rows as a fresh index's
    let again = Db::new();
    let q = PgProvider::connect(&again.url()).unwrap();
    let fresh_rows: Vec<_> = conformance::churned(&q);
    let migrated_rows: Vec<_> = conformance::search_again(&p);
    for ((q1, [_, fresh]), (q2, migrated)) in fresh_rows.into_iter().zip(migrated_rows) {
        assert_eq!(q1, q2);
        assert_eq!(migrated.len(), fresh.len(), "{q1}");
        for (m, f) in migrated.iter().zip(&fresh) {
            assert_eq!((&m.0, m.1), (&f.0, f.1), "{q1}");
            assert!((m.2 - f.2).abs() < 1e-4, "{q1}: {migrated:?} vs {fresh:?}");
        }
    }
}

/// Index `files` generated Python files of three functions each as `name`.
fn index_functions(p: &PgProvider, name: &str, files: usize) {
    let mut w = p.open_for_writing(name).unwrap();
    let upserts = (0..files)
        .map(|i| {
            let text = (0..3)
                .map(|j| format!("def handler_{i}_{j}(request):\n    return request.body[{j}]\n\n"))
                .collect::<String>();
            conformance::upsert(&format!("app/h{i}.py"), &text)
        })
        .collect();
    w.write_batch(ken_store::Batch {
        upserts,
        deletes: Vec::new(),
    })
    .unwrap();
    w.finish().unwrap();
}

#[test]
fn the_planner_statistics_are_refreshed_when_a_repository_is_a_large_share_of_the_tables() {
    let db = Db::new();
    let url = db.url();
    let p = PgProvider::connect(&url).unwrap();
    let counted = || {
        count(
            &url,
            "SELECT reltuples::int8 FROM pg_class WHERE oid = 'chunks'::regclass",
        )
    };
    let rows = || count(&url, "SELECT count(*) FROM chunks");
    // never counted: the first repository is analysed
    index_functions(&p, "acme/first", 20);
    let first = rows();
    assert!(first >= 20, "{first}");
    assert_eq!(counted(), first);
    // as large again: analysed
    index_functions(&p, "acme/second", 20);
    let both = rows();
    assert!(both > first);
    assert_eq!(counted(), both);
    // one small file among many: not analysed, the last count stands
    index_functions(&p, "acme/small", 1);
    let all = rows();
    assert!(all > both && (all - both) * 10 < both, "{both} {all}");
    assert_eq!(counted(), both);
}

#[test]
fn a_commit_with_a_nul_byte_is_stored_and_found() {
    let db = Db::new();
    let p = PgProvider::connect(&db.url()).unwrap();
    let mut w = p.open_for_writing("acme/web").unwrap();
    let commit = ken_store::CommitRecord {
        sha: "a".repeat(40),
        author_name: "Ada\0 Lovelace".into(),
        author_email: "ada@example.com".into(),
        author_time: 1,
        committer_time: 1,
        summary: "Fix the teardown\0 handler".into(),
        message: "Fix the teardown\0 handler\n\nbody".into(),
        parents: Vec::new(),
        files: vec![("src/app\0.py".into(), "M".into(), None)],
    };
    assert_eq!(w.add_commits(&[commit]).unwrap(), 1);
    let stored = w.commits(&["a".repeat(40)], true).unwrap();
    let c = &stored[&"a".repeat(40)];
    assert_eq!(c.author_name, "Ada\u{1a} Lovelace");
    assert_eq!(c.files[0].0, "src/app\u{1a}.py");
    let found = w.search_commits("teardown handler", 5).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
}
