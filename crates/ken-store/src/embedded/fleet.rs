//! The embedded collection index: one tantivy index under
//! `$KEN_HOME/fleet-2/`, one document per (repository, file) and one per
//! (repository, commit). The commit payload records which batch of each
//! repository's index it reflects, so documents and record change together.
//!
//! Files and commit messages are written to fields of their own (`body`,
//! `symbol`, `path` against `message`), so that either search is a plain
//! disjunction of term queries, which tantivy answers with block-max WAND
//! (skipping blocks that cannot reach the top), where a filter on the
//! document's kind would make it read every posting.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tantivy::collector::TopDocs;
use tantivy::query::{Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::lexical::{filtered, open_index, query_terms, weighted_terms};
use crate::fleet::{Fleet, FleetCommit, FleetDoc, FleetHit, FleetUpdate, Reflected};
use crate::{LexicalQuery, Result, StoreError, tokenizer};

/// The collection's directory under `$KEN_HOME`. It is named by the
/// schema's version: a binary with another schema starts an empty
/// collection beside the old one, rebuilt by `Engine::reflect_missing`.
pub const FLEET_DIR: &str = "fleet-2";

/// Directories of earlier schemas, removed when the current one is opened.
pub const OLD_FLEET_DIRS: &[&str] = &["fleet"];

/// How long an update waits for another process's writer.
const WRITER_WAIT: Duration = Duration::from_secs(120);

#[derive(Clone, Copy)]
struct Fields {
    /// `repo\0path` (a file) or `repo\0\0sha` (a commit): the document's identity.
    key: Field,
    /// `repo\0kind`: every document of one kind of a repository.
    repo_kind: Field,
    repo: Field,
    path_key: Field,
    lang: Field,
    body: Field,
    symbol: Field,
    path: Field,
    /// Definition names as written (exact look-ups).
    def: Field,
    /// A commit's message (commit documents have no other text).
    message: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer::CODE)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        key: b.add_text_field("key", STRING),
        repo_kind: b.add_text_field("repo_kind", STRING),
        repo: b.add_text_field("repo", STRING | STORED),
        path_key: b.add_text_field("path_key", STRING | STORED),
        lang: b.add_text_field("lang", STRING),
        body: b.add_text_field("body", text.clone()),
        symbol: b.add_text_field("symbol", text.clone()),
        path: b.add_text_field("path", text.clone()),
        def: b.add_text_field("def", STRING),
        message: b.add_text_field("message", text),
    };
    (b.build(), fields)
}

/// The collection index of an embedded provider.
pub struct EmbeddedFleet {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// Writes of this process, one at a time (other processes wait on
    /// tantivy's lock).
    writing: Mutex<()>,
}

impl EmbeddedFleet {
    pub fn open(dir: &Path) -> Result<EmbeddedFleet> {
        crate::private::create_dir(dir)?;
        let (schema, fields) = schema();
        // other processes (`ken index`) write it: follow their commits
        let (index, reader) = open_index(dir, schema, ReloadPolicy::OnCommitWithDelay)?;
        Ok(EmbeddedFleet {
            index,
            reader,
            fields,
            writing: Mutex::new(()),
        })
    }

    fn writer(&self) -> Result<IndexWriter> {
        let started = Instant::now();
        loop {
            match self.index.writer_with_num_threads(1, 50_000_000) {
                Ok(w) => return Ok(w),
                Err(tantivy::TantivyError::LockFailure(..)) if started.elapsed() < WRITER_WAIT => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn payload(&self) -> Result<BTreeMap<String, Reflected>> {
        let metas = self.index.load_metas()?;
        match metas.payload {
            None => Ok(BTreeMap::new()),
            Some(p) => serde_json::from_str(&p)
                .map_err(|e| StoreError::Other(format!("the collection index's record: {e}"))),
        }
    }

    /// Commit `writer`'s changes with `record` as what the collection reflects.
    fn commit(&self, mut writer: IndexWriter, record: &BTreeMap<String, Reflected>) -> Result<()> {
        let payload = serde_json::to_string(record)
            .map_err(|e| StoreError::Other(format!("the collection index's record: {e}")))?;
        let mut prepared = writer.prepare_commit()?;
        prepared.set_payload(&payload);
        prepared.commit()?;
        writer.wait_merging_threads()?;
        self.reader.reload()?;
        Ok(())
    }

    fn hits(&self, query: &dyn Query, limit: usize) -> Result<Vec<FleetHit>> {
        let searcher = self.reader.searcher();
        let top = searcher.search(query, &TopDocs::with_limit(limit.max(1)).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr)?;
            let get = |f: Field| {
                doc.get_first(f)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            if let (Some(repo), Some(path)) = (get(self.fields.repo), get(self.fields.path_key)) {
                out.push(FleetHit { repo, path, score });
            }
        }
        Ok(out)
    }
}

fn key(repo: &str, path: &str) -> String {
    format!("{repo}\0{path}")
}

const FILE: &str = "file";
const COMMIT: &str = "commit";

fn repo_kind(repo: &str, kind: &str) -> String {
    format!("{repo}\0{kind}")
}

impl Fleet for EmbeddedFleet {
    /// An unreadable record (another version's) reads as an empty
    /// collection: every repository is searched directly until it is
    /// written again.
    fn reflected(&self) -> Result<BTreeMap<String, Reflected>> {
        Ok(self.payload().unwrap_or_default())
    }

    fn update(
        &self,
        u: FleetUpdate<'_>,
        docs: &[FleetDoc<'_>],
        commits: &[FleetCommit<'_>],
    ) -> Result<()> {
        let _one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let writer = self.writer()?;
        // read under the lock: another process may have written meanwhile;
        // an unreadable record (another version's) starts the collection again
        let mut record = match self.payload() {
            Ok(r) => r,
            Err(_) => {
                writer.delete_all_documents()?;
                BTreeMap::new()
            }
        };
        let f = self.fields;
        if u.replace_all {
            writer.delete_term(Term::from_field_text(f.repo_kind, &repo_kind(u.repo, FILE)));
        }
        if u.replace_commits {
            writer.delete_term(Term::from_field_text(
                f.repo_kind,
                &repo_kind(u.repo, COMMIT),
            ));
        }
        for path in u
            .deletes
            .iter()
            .map(String::as_str)
            .chain(docs.iter().map(|d| d.path))
        {
            writer.delete_term(Term::from_field_text(f.key, &key(u.repo, path)));
        }
        for d in docs {
            let mut doc = TantivyDocument::default();
            doc.add_text(f.key, key(u.repo, d.path));
            doc.add_text(f.repo_kind, repo_kind(u.repo, FILE));
            doc.add_text(f.repo, u.repo);
            doc.add_text(f.path_key, d.path);
            doc.add_text(f.lang, d.lang);
            doc.add_text(f.body, d.body);
            doc.add_text(f.symbol, d.symbols);
            doc.add_text(f.path, d.path);
            for name in d.symbols.split_whitespace() {
                doc.add_text(f.def, name);
                if let Some(last) = name.rsplit(['.', ':']).next().filter(|l| *l != name) {
                    doc.add_text(f.def, last);
                }
            }
            writer.add_document(doc)?;
        }
        for c in commits {
            // a commit given again replaces its document
            let id = key(u.repo, &format!("\0{}", c.sha));
            writer.delete_term(Term::from_field_text(f.key, &id));
            let mut doc = TantivyDocument::default();
            doc.add_text(f.key, id);
            doc.add_text(f.repo_kind, repo_kind(u.repo, COMMIT));
            doc.add_text(f.repo, u.repo);
            doc.add_text(f.path_key, c.sha);
            doc.add_text(f.message, c.message);
            writer.add_document(doc)?;
        }
        record.insert(u.repo.to_string(), u.reflects);
        self.commit(writer, &record)
    }

    fn refresh(&self) -> Result<()> {
        Ok(self.reader.reload()?)
    }

    fn remove(&self, repo: &str) -> Result<()> {
        let _one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let writer = self.writer()?;
        let mut record = self.payload()?;
        writer.delete_term(Term::from_field_text(self.fields.repo, repo));
        record.remove(repo);
        self.commit(writer, &record)
    }

    fn search(&self, q: &LexicalQuery) -> Result<Vec<FleetHit>> {
        let f = self.fields;
        let w = q.weights;
        let terms = query_terms(&q.text);
        let fields = [(f.body, w.body), (f.symbol, w.symbol), (f.path, w.path)];
        let Some(text) = weighted_terms(&terms, &fields, w) else {
            return Ok(Vec::new());
        };
        // commit documents have none of these fields: no filter on the kind
        self.hits(&*filtered(text, q, f.lang, f.path_key), q.limit)
    }

    fn search_commits(&self, q: &LexicalQuery) -> Result<Vec<FleetHit>> {
        let f = self.fields;
        let terms = query_terms(&q.text);
        let Some(text) = weighted_terms(&terms, &[(f.message, 1.0)], q.weights) else {
            return Ok(Vec::new());
        };
        self.hits(&*text, q.limit)
    }

    fn defining(&self, name: &str, limit: usize) -> Result<Vec<FleetHit>> {
        let q = TermQuery::new(
            Term::from_field_text(self.fields.def, name),
            IndexRecordOption::Basic,
        );
        self.hits(&q, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(path: &'a str, body: &'a str, symbols: &'a str) -> FleetDoc<'a> {
        FleetDoc {
            path,
            lang: "python",
            body,
            symbols,
        }
    }

    fn update<'a>(repo: &'a str, all: bool, deletes: &'a [String], seq: u64) -> FleetUpdate<'a> {
        FleetUpdate {
            repo,
            replace_all: all,
            deletes,
            replace_commits: all,
            reflects: Reflected {
                seq,
                commits_until: None,
                commits: 0,
            },
        }
    }

    fn seqs(f: &EmbeddedFleet) -> BTreeMap<String, u64> {
        f.reflected()
            .unwrap()
            .into_iter()
            .map(|(k, r)| (k, r.seq))
            .collect()
    }

    fn ask(f: &EmbeddedFleet, text: &str) -> Vec<(String, String)> {
        f.search(&LexicalQuery {
            text: text.into(),
            limit: 10,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| (h.repo, h.path))
        .collect()
    }

    #[test]
    fn repositories_share_one_scale_and_update_by_difference() {
        let dir = tempfile::tempdir().unwrap();
        let f = EmbeddedFleet::open(dir.path()).unwrap();
        f.update(
            update("a/web", true, &[], 3),
            &[
                doc(
                    "app.py",
                    "def teardown_request(): run teardown callbacks",
                    "teardown_request",
                ),
                doc("cli.py", "def main(): parse arguments", "main"),
            ],
            &[FleetCommit {
                sha: "c1",
                message: "Call every teardown callback despite errors",
            }],
        )
        .unwrap();
        f.update(
            update("b/math", true, &[], 7),
            &[doc(
                "matrix.py",
                "class Matrix: determinant of a matrix",
                "Matrix Matrix.det",
            )],
            &[],
        )
        .unwrap();
        assert_eq!(
            seqs(&f),
            BTreeMap::from([("a/web".into(), 3), ("b/math".into(), 7)])
        );
        // commits are found apart from files
        let commits = f
            .search_commits(&LexicalQuery {
                text: "teardown errors".into(),
                limit: 5,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(
            (commits[0].repo.as_str(), commits[0].path.as_str()),
            ("a/web", "c1")
        );
        assert!(ask(&f, "despite").is_empty());
        assert_eq!(
            ask(&f, "teardown callbacks")[0],
            ("a/web".into(), "app.py".into())
        );
        assert_eq!(
            ask(&f, "matrix determinant")[0],
            ("b/math".into(), "matrix.py".into())
        );
        let defs = f.defining("det", 10).unwrap();
        assert_eq!(defs.len(), 1);
        assert_eq!(defs[0].repo, "b/math");

        // a difference: one file goes, one changes
        f.update(
            update("a/web", false, &["cli.py".to_string()], 4),
            &[doc("app.py", "def close(): nothing here", "close")],
            &[],
        )
        .unwrap();
        assert!(ask(&f, "teardown").is_empty());
        assert!(ask(&f, "parse arguments").is_empty());
        assert_eq!(ask(&f, "close")[0].1, "app.py");
        assert_eq!(seqs(&f)["a/web"], 4);

        // a reopened collection reads the same; a removed repository is gone
        drop(f);
        let f = EmbeddedFleet::open(dir.path()).unwrap();
        assert_eq!(ask(&f, "matrix")[0].0, "b/math");
        f.remove("b/math").unwrap();
        assert!(ask(&f, "matrix").is_empty());
        assert!(!f.reflected().unwrap().contains_key("b/math"));
    }
}
