//! The store conformance suite: what every [`StoreProvider`] must do, the
//! same batches in and the same answers out. Each check takes a fresh,
//! empty provider; `tests/embedded.rs` runs them all on the embedded store
//! (and a database-backed provider runs the same functions).

use std::collections::HashSet;

use ken_core::Language;
use ken_store::{
    Batch, BlameLines, CommitRecord, FileBlameRecord, FileContent, FileUpdate, IndexState,
    LexicalQuery, StoreError, StoreProvider, SymbolTier,
};
use ken_syntax::{ChunkOptions, parse_file};

const SESSION_PY: &str = "\
\"\"\"Session tokens.\"\"\"


class SessionStore:
    \"\"\"Keeps session tokens and refreshes them before they expire.\"\"\"

    def refresh_token(self, token):
        return token + 1


def load_config(path):
    return open(path).read()
";

const SESSION_PY_V2: &str = "\
\"\"\"Session tokens.\"\"\"


class SessionStore:
    \"\"\"Keeps session tokens and rotates them before they expire.\"\"\"

    def rotate_token(self, token):
        return token + 2
";

const RETRY_RS: &str = "\
/// Retries an operation until it succeeds.
pub fn retry_forever<T>(mut op: impl FnMut() -> Option<T>) -> T {
    loop {
        if let Some(v) = op() {
            return v;
        }
    }
}
";

fn upsert(path: &str, text: &str) -> FileUpdate {
    let syntax = parse_file(path, text, &ChunkOptions::default());
    FileUpdate {
        path: path.to_string(),
        id: format!("blob-{:x}", fxhash(text)),
        language: Language::from_path(path),
        size: text.len() as u64,
        content: FileContent::Indexed {
            text: text.to_string(),
            syntax,
        },
    }
}

fn skipped(path: &str, reason: &str) -> FileUpdate {
    FileUpdate {
        path: path.to_string(),
        id: "blob-bin".into(),
        language: Language::from_path(path),
        size: 10,
        content: FileContent::Skipped {
            reason: reason.into(),
        },
    }
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

fn query(text: &str) -> LexicalQuery {
    LexicalQuery {
        text: text.to_string(),
        limit: 10,
        languages: Vec::new(),
        paths: None,
        weights: Default::default(),
    }
}

/// A provider starts empty, lists what is written, maps names to keys,
/// and removes an index.
pub fn lists_opens_and_removes(p: &dyn StoreProvider) {
    assert!(p.list().unwrap().is_empty());
    let key = p.key_of("pallets/flask");
    assert_eq!(p.key_of(&key), key, "a key is its own key");
    assert!(!p.exists("pallets/flask").unwrap());
    {
        let mut w = p.open_for_writing("pallets/flask").unwrap();
        w.write_batch(Batch {
            upserts: vec![upsert("src/session.py", SESSION_PY)],
            deletes: Vec::new(),
        })
        .unwrap();
        w.set_state(&IndexState {
            name: Some("pallets/flask".into()),
            commit: Some("c1".into()),
            ..IndexState::default()
        })
        .unwrap();
        w.finish().unwrap();
    }
    assert_eq!(p.list().unwrap(), vec![key.clone()]);
    assert!(p.exists(&key).unwrap());
    let r = p.open(&key).unwrap();
    assert_eq!(r.state().unwrap().name.as_deref(), Some("pallets/flask"));
    assert!(r.size_bytes().unwrap() > 0);
    assert!(!r.location().is_empty());
    drop(r);
    p.remove("pallets/flask").unwrap();
    assert!(p.list().unwrap().is_empty());
    assert!(!p.exists("pallets/flask").unwrap());
}

/// One writer per repository; readers are never refused; the lease is
/// given back when the writer is dropped.
pub fn one_writer_at_a_time(p: &dyn StoreProvider) {
    let w = p.open_for_writing("shop").unwrap();
    match p.open_for_writing("shop") {
        Err(StoreError::Locked(_)) => {}
        other => panic!("a second writer must be refused, got {:?}", other.err()),
    }
    // another repository has its own lease
    let other = p.open_for_writing("tools").unwrap();
    drop(other);
    // readers are not refused, and removing is
    assert!(p.open("shop").is_ok());
    assert!(matches!(p.remove("shop"), Err(StoreError::Locked(_))));
    drop(w);
    let again = p.open_for_writing("shop").unwrap();
    drop(again);
}

/// Batches in, the same answers out: files, chunks, text, symbols,
/// lexical hits, counts; a later batch replaces and deletes whole files
/// and leaves no stale chunk, and readers see that it changed.
pub fn batches_round_trip(p: &dyn StoreProvider) {
    let mut w = p.open_for_writing("shop").unwrap();
    let seq0 = w.batch_seq().unwrap();
    w.write_batch(Batch {
        upserts: vec![
            upsert("src/session.py", SESSION_PY),
            upsert("src/retry.rs", RETRY_RS),
            skipped("logo.png", "binary"),
        ],
        deletes: Vec::new(),
    })
    .unwrap();
    assert!(w.batch_seq().unwrap() > seq0);

    let reader = p.open("shop").unwrap();
    let version = reader.data_version().unwrap();

    let files = w.files().unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    let logo = files.iter().find(|f| f.path == "logo.png").unwrap();
    assert_eq!(logo.skip.as_deref(), Some("binary"));
    assert_eq!(
        w.file_text("src/session.py").unwrap().as_deref(),
        Some(SESSION_PY)
    );
    assert_eq!(w.file_text("logo.png").unwrap(), None);

    let chunks = w.chunks_of_file("src/session.py").unwrap();
    assert!(!chunks.is_empty());
    assert!(
        chunks
            .windows(2)
            .all(|c| c[0].start_line <= c[1].start_line),
        "file order"
    );
    let method = chunks
        .iter()
        .find(|c| c.text.contains("def refresh_token"))
        .expect("a chunk for the method");
    assert!(method.start_line <= 7 && method.end_line >= 8, "{method:?}");
    assert!(method.text.contains("return token + 1"));
    // by id, in the order asked, unknown ids left out; heads carry no text
    let ids: Vec<u64> = chunks.iter().map(|c| c.id).rev().collect();
    let mut asked = ids.clone();
    asked.push(u64::MAX);
    let got: Vec<u64> = w.chunks(&asked).unwrap().iter().map(|c| c.id).collect();
    assert_eq!(got, ids);
    assert!(
        w.chunk_heads(&ids)
            .unwrap()
            .iter()
            .all(|c| c.text.is_empty())
    );

    // symbols: exact first, folded, and partial only when asked
    let m = w.lookup_symbols("SessionStore", 10, false).unwrap();
    assert_eq!(m[0].tier, SymbolTier::Exact);
    assert_eq!((m[0].path.as_str(), m[0].start_line), ("src/session.py", 4));
    let m = w.lookup_symbols("sessionstore", 10, false).unwrap();
    assert_eq!(m[0].tier, SymbolTier::ExactFolded);
    assert!(w.lookup_symbols("retry_for", 10, false).unwrap().is_empty());
    let m = w.lookup_symbols("retry_for", 10, true).unwrap();
    assert_eq!(m[0].name, "retry_forever");

    // lexical: identifiers are split, hits are chunks of the right file
    let hits = w.search_chunks(&query("refresh token")).unwrap();
    let top = w.chunks(&[hits[0].chunk_id]).unwrap();
    assert_eq!(top[0].path, "src/session.py", "{hits:?}");
    let hits = w.search_chunks(&query("retryForever")).unwrap();
    let top = w.chunks(&[hits[0].chunk_id]).unwrap();
    assert_eq!(top[0].path, "src/retry.rs");
    let mut rust_only = query("token retry");
    rust_only.languages = vec![Language::Rust];
    for h in w.search_chunks(&rust_only).unwrap() {
        assert_eq!(w.chunks(&[h.chunk_id]).unwrap()[0].language, Language::Rust);
    }
    let fh = w.search_files(&query("session tokens")).unwrap();
    assert_eq!(fh[0].path, "src/session.py");

    let stats = w.stats().unwrap();
    assert_eq!((stats.files, stats.skipped_files), (2, 1), "{stats:?}");
    assert_eq!(stats.skipped.get("binary"), Some(&1));
    assert_eq!(stats.chunks as usize, w.chunk_ids().unwrap().len());

    // replace one file, delete another: nothing of the old versions stays
    let old_ids: HashSet<u64> = w.chunk_ids().unwrap().into_iter().collect();
    w.write_batch(Batch {
        upserts: vec![upsert("src/session.py", SESSION_PY_V2)],
        deletes: vec!["src/retry.rs".into()],
    })
    .unwrap();
    w.finish().unwrap();
    assert!(w.search_chunks(&query("retry_forever")).unwrap().is_empty());
    assert!(
        w.lookup_symbols("refresh_token", 10, false)
            .unwrap()
            .is_empty()
    );
    assert!(
        w.lookup_symbols("retry_forever", 10, true)
            .unwrap()
            .is_empty()
    );
    assert_eq!(w.file_text("src/retry.rs").unwrap(), None);
    for h in w.search_chunks(&query("refresh")).unwrap() {
        let c = w.chunks(&[h.chunk_id]).unwrap();
        assert!(
            c.iter().all(|c| !c.text.contains("refresh_token")),
            "stale: {c:?}"
        );
    }
    let new_ids: HashSet<u64> = w.chunk_ids().unwrap().into_iter().collect();
    let changed: Vec<u64> = w
        .chunks_of_file("src/session.py")
        .unwrap()
        .iter()
        .filter(|c| c.text.contains("rotate"))
        .map(|c| c.id)
        .collect();
    assert!(!changed.is_empty());
    assert!(
        changed.iter().all(|id| !old_ids.contains(id)),
        "ids are never reused"
    );
    assert!(
        new_ids
            .iter()
            .all(|id| w.chunks(&[*id]).unwrap().len() == 1)
    );
    assert_eq!(
        w.all_chunks().unwrap().len(),
        new_ids.len(),
        "every chunk, once"
    );
    assert_ne!(
        reader.data_version().unwrap(),
        version,
        "a reader sees the change"
    );
    // a reader opened now sees what the writer committed
    let fresh = p.open("shop").unwrap();
    assert_eq!(fresh.files().unwrap().len(), 2);
    assert!(
        fresh
            .lookup_symbols("rotate_token", 10, false)
            .unwrap()
            .len()
            == 1
    );
}

fn commit(
    sha: &str,
    name: &str,
    email: &str,
    time: i64,
    msg: &str,
    files: &[&str],
) -> CommitRecord {
    CommitRecord {
        sha: sha.into(),
        author_name: name.into(),
        author_email: email.into(),
        author_time: time,
        committer_time: time,
        summary: msg.into(),
        message: msg.into(),
        parents: Vec::new(),
        files: files
            .iter()
            .map(|f| (f.to_string(), "M".to_string(), None))
            .collect(),
    }
}

/// History and blame: commits are added once, found by sha, by text and
/// by the files they touched; authors are listed; blame is stored per blob.
pub fn history_and_blame(p: &dyn StoreProvider) {
    let mut w = p.open_for_writing("shop").unwrap();
    let commits = vec![
        commit(
            "a1",
            "Ada",
            "ada@example.com",
            100,
            "Add session store",
            &["src/session.py"],
        ),
        commit(
            "b2",
            "Bob",
            "bob@example.com",
            200,
            "Fix token refresh race",
            &["src/session.py", "src/retry.rs"],
        ),
        commit(
            "c3",
            "Ada",
            "ada@example.com",
            300,
            "Retry forever",
            &["src/retry.rs"],
        ),
    ];
    assert_eq!(w.add_commits(&commits).unwrap(), 3);
    assert_eq!(
        w.add_commits(&commits[..1]).unwrap(),
        0,
        "known commits are not added twice"
    );
    assert_eq!(w.commit_stats().unwrap(), (3, Some(300)));

    let all: Vec<String> = w
        .all_commits()
        .unwrap()
        .into_iter()
        .map(|c| c.sha)
        .collect();
    assert_eq!(all, ["c3", "b2", "a1"], "newest first");
    let got = w.commits(&["b2".into(), "zz".into()], true).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got["b2"].files.len(), 2);
    assert!(
        w.commits(&["b2".into()], false).unwrap()["b2"]
            .files
            .is_empty()
    );
    assert_eq!(
        w.commit_authors().unwrap(),
        [
            ("Ada".to_string(), "ada@example.com".to_string()),
            ("Bob".to_string(), "bob@example.com".to_string())
        ]
    );
    let found = w.search_commits("token race", 5).unwrap();
    assert_eq!(found[0].0, "b2");
    let mut touching = w.commits_touching(&["src/retry.rs".into()]).unwrap();
    touching.sort();
    assert_eq!(
        touching,
        [
            ("b2".to_string(), "src/retry.rs".to_string()),
            ("c3".to_string(), "src/retry.rs".to_string())
        ]
    );

    let needed = w
        .blame_needed(&[("src/session.py".into(), "blob1".into())])
        .unwrap();
    assert_eq!(needed, ["src/session.py"]);
    let ranges = vec![
        BlameLines {
            start_line: 1,
            end_line: 4,
            sha: "a1".into(),
        },
        BlameLines {
            start_line: 5,
            end_line: 8,
            sha: "b2".into(),
        },
    ];
    w.put_blame(&[FileBlameRecord {
        path: "src/session.py".into(),
        blob_id: "blob1".into(),
        method: "exact".into(),
        ranges: ranges.clone(),
    }])
    .unwrap();
    assert_eq!(w.blame_of("src/session.py").unwrap(), ranges);
    assert!(
        w.blame_needed(&[("src/session.py".into(), "blob1".into())])
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        w.blame_needed(&[("src/session.py".into(), "blob2".into())])
            .unwrap(),
        ["src/session.py"],
        "another blob needs blame again"
    );
    let blamed = w.paths_blamed_on(&["b2".into()]).unwrap();
    assert!(blamed.contains("src/session.py"));
    assert!(w.paths_blamed_on(&["c3".into()]).unwrap().is_empty());
}

/// The vector cache: keyed by text hash and model, added atomically.
pub fn vector_cache(p: &dyn StoreProvider) {
    let mut w = p.open_for_writing("shop").unwrap();
    assert!(w.vector_models().unwrap().is_empty());
    let items = vec![
        ("h1".to_string(), vec![0.6f32, 0.8, 0.0]),
        ("h2".to_string(), vec![0.0f32, 0.0, 1.0]),
    ];
    w.put_vectors("mini", &items).unwrap();
    assert_eq!(w.vector_models().unwrap(), ["mini"]);
    let present = w
        .vector_keys_present("mini", &["h1".into(), "h3".into()])
        .unwrap();
    assert_eq!(present, HashSet::from(["h1".to_string()]));
    assert!(
        w.vector_keys_present("other", &["h1".into()])
            .unwrap()
            .is_empty(),
        "vectors are per model"
    );
    let got = w.get_vectors("mini", &["h2".into(), "h9".into()]).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got["h2"], vec![0.0f32, 0.0, 1.0]);
}

fn new_job(id: &str, repo: &str, dedupe: Option<&str>) -> ken_store::NewJob {
    ken_store::NewJob {
        id: id.into(),
        kind: "index".into(),
        repo: repo.into(),
        dedupe: dedupe.map(String::from),
        origin: "api".into(),
        ..Default::default()
    }
}

/// The job queue, tokens and deliveries: dedupe, one running job per
/// repository, heartbeats and stale runners, claims that never collide.
pub fn home_queue_tokens_deliveries(h: &(dyn ken_store::Home + Sync)) {
    use ken_store::JobState;
    let v0 = h.data_version().unwrap();
    let (a, new) = h
        .enqueue(&new_job("a", "flask", Some("flask@1")), 10)
        .unwrap();
    assert!(new);
    assert_eq!(a.state, JobState::Queued);
    assert_ne!(h.data_version().unwrap(), v0, "a write changes the version");
    let (again, new) = h
        .enqueue(&new_job("b", "flask", Some("flask@1")), 11)
        .unwrap();
    assert!(!new, "same key, no second job");
    assert_eq!(again.id, "a");
    h.enqueue(&new_job("c", "flask", None), 12).unwrap();
    h.enqueue(&new_job("d", "cobra", None), 13).unwrap();

    let first = h.claim(20).unwrap().unwrap();
    assert_eq!((first.id.as_str(), first.attempts), ("a", 1));
    // flask is busy: the next claim skips its queued job
    assert_eq!(h.claim(21).unwrap().unwrap().id, "d");
    assert!(h.claim(22).unwrap().is_none());

    h.set_progress("a", "{\"files\":3}", 30).unwrap();
    assert_eq!(h.requeue_stale(25).unwrap(), 1, "d's heartbeat is older");
    assert_eq!(h.job("d").unwrap().unwrap().state, JobState::Queued);
    h.finish("a", JobState::Failed, None, Some("boom"), 31)
        .unwrap();
    let a = h.job("a").unwrap().unwrap();
    assert_eq!(
        (a.state, a.error.as_deref()),
        (JobState::Failed, Some("boom"))
    );
    let (e, new) = h
        .enqueue(&new_job("e", "flask", Some("flask@1")), 40)
        .unwrap();
    assert!(new, "a finished job with the key does not block a new one");
    assert_eq!(h.last_job_with_key("flask@1").unwrap().unwrap().id, e.id);
    assert_eq!(h.jobs(10).unwrap().first().unwrap().id, "e");
    let next = h.claim(50).unwrap().unwrap();
    h.requeue(&next.id).unwrap();
    let again = h.claim(51).unwrap().unwrap();
    assert_eq!(again.id, next.id, "a requeued job is first in line again");
    assert_eq!(again.attempts, next.attempts + 1);
    h.requeue(&again.id).unwrap();

    // many claimers at once: every job is taken once
    for i in 0..20 {
        h.enqueue(&new_job(&format!("p{i}"), &format!("repo{i}"), None), 60)
            .unwrap();
    }
    let taken: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some(j) = h.claim(70).unwrap() {
                        mine.push(j.id);
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let unique: HashSet<&String> = taken.iter().collect();
    assert_eq!(unique.len(), taken.len(), "a job claimed twice: {taken:?}");
    assert!(taken.len() >= 20, "{taken:?}");

    // tokens (hashes only) and webhook deliveries
    let t = ken_store::TokenRecord {
        id: "t1".into(),
        hash: "abc".into(),
        scope: "read".into(),
        repos: vec!["flask".into()],
        label: None,
        created_at: 1,
        revoked_at: None,
        last_used_at: None,
    };
    h.add_token(&t).unwrap();
    assert_eq!(h.token_by_hash("abc").unwrap(), Some(t.clone()));
    assert_eq!(h.tokens().unwrap(), vec![t]);
    assert_eq!(h.active_tokens().unwrap(), 1);
    h.touch_token("t1", 100).unwrap();
    assert_eq!(
        h.token_by_hash("abc").unwrap().unwrap().last_used_at,
        Some(100)
    );
    assert!(h.revoke_token("t1", 5).unwrap());
    assert!(!h.revoke_token("t1", 6).unwrap());
    assert_eq!(h.active_tokens().unwrap(), 0);
    assert_eq!(h.seen_delivery("d1", 1).unwrap(), None);
    assert_eq!(h.seen_delivery("d1", 2).unwrap(), Some(None));
    h.set_delivery_job("d1", "j1").unwrap();
    assert_eq!(h.seen_delivery("d1", 3).unwrap(), Some(Some("j1".into())));
}

const CHECKOUT_PY: &str = "\
from session import SessionStore


def checkout(cart):
    return SessionStore().refresh_token(cart.user)
";

/// Graph facts, edges, ranks and the saved symbol index; the vector
/// search index of a model. What is written is read back the same.
pub fn graph_and_vector_index(p: &dyn StoreProvider) {
    let mut w = p.open_for_writing("shop").unwrap();
    w.write_batch(Batch {
        upserts: vec![
            upsert("src/session.py", SESSION_PY),
            upsert("src/checkout.py", CHECKOUT_PY),
        ],
        deletes: Vec::new(),
    })
    .unwrap();
    let facts = w.graph_facts(None).unwrap();
    let paths: Vec<&str> = facts.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/checkout.py", "src/session.py"]);
    let one = w
        .graph_facts(Some(&["src/session.py".to_string()]))
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0], facts[1], "facts round-trip whole");

    let edge = ken_graph::Edge {
        from: ken_graph::DefKey::new("src/checkout.py", "checkout", 0),
        to: ken_graph::DefKey::new("src/session.py", "SessionStore.refresh_token", 0),
        kind: ken_core::RefKind::Call,
        path: "src/checkout.py".into(),
        line: 5,
        rule: ken_graph::Rule::ALL[1],
        confidence: 0.9,
    };
    w.replace_edges(None, std::slice::from_ref(&edge)).unwrap();
    assert_eq!(w.edges().unwrap(), vec![edge.clone()]);
    // replacing the edges written in one file leaves the others
    w.replace_edges(Some(&["src/session.py".to_string()]), &[])
        .unwrap();
    assert_eq!(w.edges().unwrap().len(), 1);
    w.replace_edges(Some(&["src/checkout.py".to_string()]), &[])
        .unwrap();
    assert!(w.edges().unwrap().is_empty());

    w.set_ranks(
        &[(edge.to.clone(), 2.5), (edge.from.clone(), 0.5)],
        &[
            ("src/session.py".into(), 1.5),
            ("src/checkout.py".into(), 0.5),
        ],
    )
    .unwrap();
    assert_eq!(w.file_ranks().unwrap()["src/session.py"], 1.5);
    assert_eq!(
        w.def_ranks("src/session.py").unwrap(),
        [("SessionStore.refresh_token".to_string(), 0, 2.5)]
    );

    let index = ken_graph::SymbolIndex::build(&facts);
    w.save_graph_index(7, &index).unwrap();
    let (seq, back) = w.graph_index().unwrap().expect("a saved index");
    assert_eq!(seq, 7);
    assert_eq!(back.def_count(), index.def_count());

    // a model's vector search index, and readers see that it changed
    let reader = p.open("shop").unwrap();
    let before = reader.data_version().unwrap();
    let mut set = ken_vectors::VectorSet::new(3);
    set.push(11, &[1.0, 0.0, 0.0]);
    set.push(12, &[0.0, 1.0, 0.0]);
    set.push(13, &[0.6, 0.8, 0.0]);
    let flat = ken_vectors::AnyIndex::Flat(ken_vectors::FlatIndex::build(&set));
    let meta = ken_store::VectorMeta {
        model: "mini".into(),
        dim: 3,
        rows: 3,
        chunks: 3,
        batch_seq: w.batch_seq().unwrap(),
        built_at: 1_700_000_000,
    };
    assert!(w.vector_index("mini").unwrap().is_none());
    w.write_vector_index("mini", &flat, &meta).unwrap();
    assert_ne!(reader.data_version().unwrap(), before);
    let (back, back_meta) = reader.vector_index("mini").unwrap().expect("the index");
    assert_eq!(back_meta, meta);
    assert_eq!(back.len(), 3);
    let want: Vec<u64> = flat
        .search(&[0.7, 0.7, 0.0], 3)
        .unwrap()
        .iter()
        .map(|n| n.id)
        .collect();
    let got: Vec<u64> = back
        .search(&[0.7, 0.7, 0.0], 3)
        .unwrap()
        .iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[0], 13);
}
