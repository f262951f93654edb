//! The schema, versioned: each migration is applied once, in order, in a
//! transaction, under an advisory lock so that servers and workers starting
//! together do not race.

use sqlx::{PgPool, Row};

use crate::Result;

/// Migrations by version; never edit one that has shipped, add the next.
const MIGRATIONS: &[(i32, &str)] = &[
    (1, V1),
    (2, V2),
    (3, V3),
    (4, V4),
    (5, V5),
    (6, V6),
    (7, V7),
    (8, V8),
    (9, V9),
    (10, V10),
    (11, V11),
    (12, V12),
    (13, V13),
    (14, V14),
    (15, V15),
    (16, V16),
];

/// Each repository's newest commit time beside its commit count
/// (`commit_stats.newest`; `n`, the messages' count, is the commits'), and
/// its authors with their newest commit time (`authors`), kept by the
/// writers: opening a repository reads them, and a server over a thousand
/// repositories opens several per question (2–3 ms each over every commit
/// of the repository before).
const V16: &str = r#"
ALTER TABLE commit_stats ADD COLUMN newest bigint;
UPDATE commit_stats s SET newest = c.newest
FROM (SELECT repo, max(committer_time) AS newest FROM commits GROUP BY repo) c
WHERE c.repo = s.repo;
CREATE TABLE authors (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    name text NOT NULL,
    email text NOT NULL,
    newest bigint NOT NULL,
    PRIMARY KEY (repo, name, email)
);
INSERT INTO authors (repo, name, email, newest)
SELECT repo, author_name, author_email, max(committer_time) FROM commits
GROUP BY repo, author_name, author_email;
ANALYZE authors;
"#;

/// Each whole file once per database, however many repositories hold the
/// same blob at the same path, as V14 did for commit messages:
/// `shared_files` names it by the document number of its first copy,
/// `file_terms` holds its postings under that number, and `lex_files`
/// records each copy's blob (`lex_files_by_blob`), so the collection's
/// file search scores each file once and then lists every copy of the best
/// (postgres/fleet.rs). The statistics (`lex_df`, `lex_stats`) still count
/// every copy. The files' postings by term and document (V13) and
/// `lex_files` by document served only that search.
const V15: &str = r#"
ALTER TABLE lex_files ADD COLUMN blob text NOT NULL DEFAULT '';
UPDATE lex_files l SET blob = f.blob_id FROM files f WHERE f.repo = l.repo AND f.path = l.path;
ALTER TABLE lex_files ALTER COLUMN blob DROP DEFAULT;
CREATE TABLE shared_files (
    doc bigint PRIMARY KEY,
    path text NOT NULL,
    blob text NOT NULL,
    language text NOT NULL,
    UNIQUE (path, blob)
);
INSERT INTO shared_files (doc, path, blob, language)
SELECT DISTINCT ON (path, blob) doc, path, blob, language FROM lex_files ORDER BY path, blob, doc;
CREATE TABLE file_terms (
    term text NOT NULL,
    doc bigint NOT NULL,
    field smallint NOT NULL,
    tf int NOT NULL,
    len int NOT NULL
);
INSERT INTO file_terms (term, doc, field, tf, len)
SELECT t.term, t.doc, t.field, t.tf, t.len FROM lex_terms t JOIN shared_files s ON s.doc = t.doc
WHERE t.files;
CREATE INDEX file_terms_docs ON file_terms (term, doc) INCLUDE (field, tf, len);
CREATE INDEX file_terms_by_doc ON file_terms (doc);
CREATE INDEX lex_files_by_blob ON lex_files (path, blob) INCLUDE (repo, doc);
DROP INDEX lex_terms_files_docs;
DROP INDEX lex_files_by_doc;
ANALYZE lex_files;
ANALYZE shared_files;
ANALYZE file_terms;
"#;

/// Each commit's message once per database, however many repositories
/// hold the commit (copies of one history, forks, followed branches):
/// `messages` names it by the commit's id and the document number of its
/// first copy, `message_terms` holds its postings under that number. The
/// collection's commit search scores these and then lists every copy of
/// the best (`commits_by_sha`), so a history held by 66 repositories is
/// scored once, not 66 times (postgres/fleet.rs). Its statistics
/// (`commit_df`, `commit_stats`) still count every copy, so the scores are
/// those of one pass over every repository's postings. The index by term
/// and document of `commit_terms`' messages (V12) served only that search.
const V14: &str = r#"
CREATE TABLE messages (
    doc bigint PRIMARY KEY,
    sha text NOT NULL UNIQUE
);
INSERT INTO messages (doc, sha) SELECT min(doc), sha FROM commits GROUP BY sha;
CREATE TABLE message_terms (
    term text NOT NULL,
    doc bigint NOT NULL,
    tf int NOT NULL,
    len int NOT NULL
);
INSERT INTO message_terms (term, doc, tf, len)
SELECT t.term, t.doc, t.tf, t.len FROM commit_terms t JOIN messages m ON m.doc = t.doc
WHERE t.field = 0;
CREATE INDEX message_terms_docs ON message_terms (term, doc) INCLUDE (tf, len);
CREATE INDEX message_terms_by_doc ON message_terms (doc);
CREATE INDEX commits_by_sha ON commits (sha) INCLUDE (repo, doc);
DROP INDEX commit_terms_message_docs;
ANALYZE messages;
ANALYZE message_terms;
"#;

/// The whole files' postings by term and document
/// (`lex_terms_files_docs`), replacing those by term alone, as V12 did for
/// commit messages: the collection's file search skips a common word's
/// postings and looks up only the documents it needs them for
/// (postgres/maxscore.rs). A file's document number is unique across
/// repositories (one sequence), so the best documents are named by it
/// (`lex_files_by_doc`).
const V13: &str = r#"
CREATE INDEX lex_terms_files_docs ON lex_terms (term, doc) INCLUDE (repo, field, tf, len) WHERE files;
DROP INDEX lex_terms_files_by_term;
CREATE INDEX lex_files_by_doc ON lex_files (doc);
"#;

/// The commit messages' postings by term and document
/// (`commit_terms_message_docs`), replacing those by term alone: the
/// collection's commit search skips a common word's postings and looks up
/// only the documents it needs them for (postgres/maxscore.rs). Read by
/// term alone, the new index serves as the old did.
const V12: &str = r#"
CREATE INDEX commit_terms_message_docs ON commit_terms (term, doc) INCLUDE (tf, len) WHERE field = 0;
DROP INDEX commit_terms_messages;
"#;

/// Each commit term's document frequency (`commit_df`), as `lex_df` is
/// for files and chunks: field 0 the messages' terms, field 1 the changed
/// paths' words. Commits are only ever added (or dropped with their
/// repository), so the writers only add to it.
const V11: &str = r#"
CREATE TABLE commit_df (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    term text NOT NULL,
    field smallint NOT NULL,
    df int NOT NULL,
    PRIMARY KEY (repo, term, field)
);
INSERT INTO commit_df (repo, term, field, df)
SELECT repo, term, field, count(*) FROM commit_terms GROUP BY repo, term, field;
CREATE INDEX commit_df_messages ON commit_df (term) INCLUDE (df) WHERE field = 0;
ANALYZE commit_df;
"#;

/// Each term's document frequency, field by field (`lex_df`), kept by
/// the writers beside the postings: a question's statistics are then a
/// lookup per term, not a second pass over every posting of its terms
/// (which cost as much as scoring them). Across repositories the files'
/// frequencies are read by term alone and summed.
const V10: &str = r#"
CREATE TABLE lex_df (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    files boolean NOT NULL,
    term text NOT NULL,
    field smallint NOT NULL,
    df int NOT NULL,
    PRIMARY KEY (repo, files, term, field)
);
INSERT INTO lex_df (repo, files, term, field, df)
SELECT repo, files, term, field, count(*) FROM lex_terms GROUP BY repo, files, term, field;
CREATE INDEX lex_df_files ON lex_df (term) INCLUDE (field, df) WHERE files;
ANALYZE lex_df;
"#;

/// Commits as BM25 postings, replacing their full text (`search`, ranked
/// by `ts_rank`, which knows no document frequencies and passes over every
/// commit a common word matches): each commit gets a document number;
/// field 0 holds its message's terms (`commit_stats` keeps each
/// repository's count and total length), field 1 the words of the paths
/// it changed, once each. A question over every repository reads the
/// messages by term alone (postgres/fleet.rs); one repository's commit
/// search reads both fields by repository and term. The rows of the
/// commits already stored are written by [`backfill_commit_terms`] in the
/// same transaction.
const V9: &str = r#"
ALTER TABLE commits ADD COLUMN doc bigserial;
CREATE UNIQUE INDEX commits_by_doc ON commits (doc);
DROP INDEX commits_search;
ALTER TABLE commits DROP COLUMN search;
CREATE TABLE commit_terms (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    doc bigint NOT NULL,
    field smallint NOT NULL,
    term text NOT NULL,
    tf int NOT NULL,
    len int NOT NULL
);
CREATE INDEX commit_terms_messages ON commit_terms (term) INCLUDE (repo, doc, tf, len) WHERE field = 0;
CREATE INDEX commit_terms_by_repo ON commit_terms (repo, term) INCLUDE (field, doc, tf, len);
CREATE TABLE commit_stats (
    repo bigint PRIMARY KEY REFERENCES repos ON DELETE CASCADE,
    n bigint NOT NULL,
    total bigint NOT NULL
);
"#;

/// What polling saw of each repository's remote (`ken repos poll`,
/// `poll_interval`): the head of the branch it follows, or why not.
const V8: &str = r#"
CREATE TABLE remote_heads (
    repo text PRIMARY KEY,
    branch text,
    head text,
    polled_at bigint NOT NULL,
    error text
);
"#;

/// A question over every repository reads the tables across repositories
/// (postgres/fleet.rs): the files' postings by term alone, and symbols by
/// name alone.
const V7: &str = r#"
CREATE INDEX lex_terms_files_by_term ON lex_terms (term) INCLUDE (repo, field, doc, tf, len) WHERE files;
CREATE INDEX symbols_by_name ON symbols (name);
CREATE INDEX symbols_by_qualname ON symbols (qualname);
"#;

/// Tickets of an issue tracker per repository key (`ken tickets import`),
/// each kept whole as JSON.
const V6: &str = r#"
CREATE TABLE tickets (
    repo text NOT NULL,
    id text NOT NULL,
    data text NOT NULL,
    imported_at bigint NOT NULL,
    PRIMARY KEY (repo, id)
);
"#;

/// Each posting carries its field's length, and the term index covers
/// what BM25 reads: a query reads its terms' postings once, from the index
/// (see BENCHMARKS.md §11).
const V5: &str = r#"
ALTER TABLE lex_terms ADD COLUMN len int;
UPDATE lex_terms t SET len = l.len FROM lex_lens l
    WHERE l.repo = t.repo AND l.files = t.files AND l.doc = t.doc AND l.field = t.field;
UPDATE lex_terms SET len = 0 WHERE len IS NULL;
ALTER TABLE lex_terms ALTER COLUMN len SET NOT NULL;
DROP INDEX lex_terms_by_term;
CREATE INDEX lex_terms_postings ON lex_terms (repo, files, term) INCLUDE (field, doc, tf, len);
"#;

/// Vector search in pgvector: a space per (repository, model), its rows in
/// a table of its own (`vectors_<id>`, made by the store) with an HNSW
/// index. The index kept as bytes goes (the next run rebuilds it).
const V4: &str = r#"
DROP TABLE vector_index;
CREATE TABLE vector_spaces (
    id bigserial PRIMARY KEY,
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    model text NOT NULL,
    dim int NOT NULL,
    meta text NOT NULL,
    UNIQUE (repo, model)
);
"#;

/// BM25's per-field document counts and total lengths, kept at write time
/// (a query no longer aggregates every document's lengths).
const V3: &str = r#"
CREATE TABLE lex_stats (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    files boolean NOT NULL,
    field smallint NOT NULL,
    n bigint NOT NULL,
    total bigint NOT NULL,
    PRIMARY KEY (repo, files, field)
);
INSERT INTO lex_stats
    SELECT repo, files, field, count(*), sum(len) FROM lex_lens GROUP BY repo, files, field;
"#;

/// What a home holds beside the indexes, shared by every server and worker.
const V2: &str = r#"
CREATE TABLE tokens (
    id text PRIMARY KEY,
    hash text NOT NULL UNIQUE,
    scope text NOT NULL,
    repos text NOT NULL,
    label text,
    created_at bigint NOT NULL,
    revoked_at bigint,
    last_used_at bigint
);
CREATE TABLE jobs (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    kind text NOT NULL,
    repo text NOT NULL,
    source text,
    rev text,
    dedupe text,
    origin text NOT NULL,
    state text NOT NULL,
    progress text,
    result text,
    error text,
    attempts int NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    started_at bigint,
    finished_at bigint,
    heartbeat_at bigint
);
CREATE INDEX jobs_state ON jobs (state, seq);
CREATE INDEX jobs_dedupe ON jobs (dedupe);
CREATE TABLE deliveries (
    id text PRIMARY KEY,
    job text,
    received_at bigint NOT NULL
);
CREATE TABLE home_version (one int PRIMARY KEY DEFAULT 1, version bigint NOT NULL DEFAULT 0);
INSERT INTO home_version DEFAULT VALUES;
"#;

const V1: &str = r#"
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE repos (
    id bigserial PRIMARY KEY,
    key text NOT NULL UNIQUE,
    state jsonb NOT NULL DEFAULT '{}',
    batch_seq bigint NOT NULL DEFAULT 0,
    next_chunk bigint NOT NULL DEFAULT 1,
    version bigint NOT NULL DEFAULT 0,
    graph_seq bigint,
    graph_index text
);

CREATE TABLE files (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    path text NOT NULL,
    blob_id text NOT NULL,
    language text NOT NULL,
    size bigint NOT NULL,
    skip text,
    PRIMARY KEY (repo, path)
);

CREATE TABLE blobs (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    id text NOT NULL,
    text text NOT NULL,
    PRIMARY KEY (repo, id)
);

CREATE TABLE chunks (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    id bigint NOT NULL,
    path text NOT NULL,
    kind text NOT NULL,
    language text NOT NULL,
    symbol text,
    qualname text,
    signature text,
    doc text,
    start_line int NOT NULL,
    end_line int NOT NULL,
    start_byte int NOT NULL,
    end_byte int NOT NULL,
    trivial boolean NOT NULL,
    cell int,
    content_hash text NOT NULL,
    synthetic boolean NOT NULL,
    text text NOT NULL,
    PRIMARY KEY (repo, id)
);
CREATE INDEX chunks_by_path ON chunks (repo, path);

CREATE TABLE symbols (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    name text NOT NULL,
    folded text NOT NULL,
    qualname text NOT NULL,
    qual_folded text NOT NULL,
    kind text NOT NULL,
    path text NOT NULL,
    start_line int NOT NULL,
    end_line int NOT NULL,
    chunk_id bigint NOT NULL
);
CREATE INDEX symbols_by_folded ON symbols (repo, folded text_pattern_ops);
CREATE INDEX symbols_by_qual ON symbols (repo, qual_folded);
CREATE INDEX symbols_by_path ON symbols (repo, path);

-- BM25 postings: a document is a chunk (doc = chunk id) or a file (doc =
-- its row in lex_files); field 0 body, 1 symbol, 2 path, 3 doc.
CREATE TABLE lex_terms (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    files boolean NOT NULL,
    doc bigint NOT NULL,
    field smallint NOT NULL,
    term text NOT NULL,
    tf int NOT NULL
);
CREATE INDEX lex_terms_by_term ON lex_terms (repo, files, term);
CREATE INDEX lex_terms_by_doc ON lex_terms (repo, files, doc);
CREATE TABLE lex_lens (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    files boolean NOT NULL,
    doc bigint NOT NULL,
    field smallint NOT NULL,
    len int NOT NULL,
    PRIMARY KEY (repo, files, doc, field)
);
CREATE TABLE lex_files (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    doc bigserial,
    path text NOT NULL,
    language text NOT NULL,
    PRIMARY KEY (repo, doc)
);
CREATE INDEX lex_files_by_path ON lex_files (repo, path);

CREATE TABLE facts (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    path text NOT NULL,
    json text NOT NULL,
    PRIMARY KEY (repo, path)
);

CREATE TABLE edges (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    src_path text NOT NULL,
    src_q text NOT NULL,
    src_nth int NOT NULL,
    dst_path text NOT NULL,
    dst_q text NOT NULL,
    dst_nth int NOT NULL,
    kind text NOT NULL,
    line int NOT NULL,
    rule text NOT NULL,
    confidence real NOT NULL
);
CREATE INDEX edges_by_src ON edges (repo, src_path);

CREATE TABLE def_rank (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    path text NOT NULL,
    qualname text NOT NULL,
    nth int NOT NULL,
    rank real NOT NULL,
    PRIMARY KEY (repo, path, qualname, nth)
);
CREATE TABLE file_rank (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    path text NOT NULL,
    rank real NOT NULL,
    PRIMARY KEY (repo, path)
);

CREATE TABLE commits (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    sha text NOT NULL,
    author_name text NOT NULL,
    author_email text NOT NULL,
    author_time bigint NOT NULL,
    committer_time bigint NOT NULL,
    summary text NOT NULL,
    message text NOT NULL,
    parents text NOT NULL,
    search tsvector NOT NULL,
    PRIMARY KEY (repo, sha)
);
CREATE INDEX commits_search ON commits USING gin (search);
CREATE TABLE commit_files (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    sha text NOT NULL,
    path text NOT NULL,
    status text NOT NULL,
    old_path text
);
CREATE INDEX commit_files_by_path ON commit_files (repo, path);
CREATE INDEX commit_files_by_sha ON commit_files (repo, sha);

CREATE TABLE blame (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    path text NOT NULL,
    start_line int NOT NULL,
    end_line int NOT NULL,
    sha text NOT NULL
);
CREATE INDEX blame_by_path ON blame (repo, path);
CREATE INDEX blame_by_sha ON blame (repo, sha);
CREATE TABLE blame_done (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    path text NOT NULL,
    blob_id text NOT NULL,
    method text NOT NULL,
    PRIMARY KEY (repo, path)
);

CREATE TABLE vector_cache (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    model text NOT NULL,
    key text NOT NULL,
    v vector NOT NULL,
    PRIMARY KEY (repo, model, key)
);
CREATE TABLE vector_index (
    repo bigint NOT NULL REFERENCES repos ON DELETE CASCADE,
    model text NOT NULL,
    meta text NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (repo, model)
);
"#;

/// An arbitrary constant: the advisory lock migrations run under.
const MIGRATION_LOCK: i64 = 0x6b65_6e5f_7363_6865;

/// Apply every migration the database has not seen.
pub(crate) async fn migrate(pool: &PgPool) -> Result<()> {
    let mut conn = pool.acquire().await?;
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *conn)
        .await?;
    let result = apply(&mut conn).await;
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *conn)
        .await?;
    result
}

async fn apply(conn: &mut sqlx::PgConnection) -> Result<()> {
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS ken_schema (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    )
    .execute(&mut *conn)
    .await?;
    let current: i32 = sqlx::query("SELECT coalesce(max(version), 0) FROM ken_schema")
        .fetch_one(&mut *conn)
        .await?
        .get(0);
    let newest = MIGRATIONS.last().map_or(0, |m| m.0);
    if current > newest {
        return Err(crate::StoreError::Incompatible(format!(
            "a database at schema version {current} (this ken knows up to {newest})"
        )));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        let mut tx = sqlx::Connection::begin(&mut *conn).await?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(*sql))
            .execute(&mut *tx)
            .await?;
        if *version == 9 {
            backfill_commit_terms(&mut tx).await?;
        }
        sqlx::query("INSERT INTO ken_schema(version) VALUES ($1)")
            .bind(version)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    }
    Ok(())
}

/// The postings of every stored commit (migration 9), a page of commits
/// at a time.
async fn backfill_commit_terms(conn: &mut sqlx::PgConnection) -> Result<()> {
    let mut after = 0i64;
    loop {
        let rows = sqlx::query(
            "SELECT c.repo, c.doc, c.summary, c.message,
                    coalesce((SELECT array_agg(f.path) FROM commit_files f
                              WHERE f.repo = c.repo AND f.sha = c.sha), '{}'),
                    c.sha
             FROM commits c WHERE c.doc > $1 ORDER BY c.doc LIMIT 5000",
        )
        .bind(after)
        .fetch_all(&mut *conn)
        .await?;
        let Some(last) = rows.last() else {
            return Ok(());
        };
        after = last.get(1);
        let mut postings = super::lexical::CommitPostings::default();
        postings.backfill = true;
        for r in &rows {
            let (summary, message): (String, String) = (r.get(2), r.get(3));
            let paths: Vec<String> = r.get(4);
            let sha: String = r.get(5);
            postings.add(
                r.get(0),
                (r.get(1), &sha),
                super::lexical::commit_text(&summary, &message),
                paths.iter().map(String::as_str),
            );
        }
        postings.insert(conn).await?;
    }
}
