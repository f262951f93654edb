//! The store conformance suite: what every [`StoreProvider`] must do, the
//! same batches in and the same answers out. Each check takes a fresh,
//! empty provider (or home store). The checks are named once, in
//! [`provider_checks!`] and [`home_checks!`]; each store's runner
//! (`tests/embedded.rs`, `tests/postgres.rs`) makes one test of every name,
//! and [`every_check_is_listed`] fails when a check is written here but
//! missing from the lists.

use std::collections::HashSet;

use ken_core::Language;
use ken_store::{
    Batch, BlameLines, CommitRecord, FileBlameRecord, FileContent, FileUpdate, IndexState,
    LexicalQuery, StoreError, StoreProvider, SymbolTier,
};
use ken_syntax::{ChunkOptions, parse_file};

/// Calls `$runner! { check, … }` with every provider check.
macro_rules! provider_checks {
    ($runner:ident) => {
        $runner! {
            lists_opens_and_removes,
            one_writer_at_a_time,
            batches_round_trip,
            history_and_blame,
            vector_cache,
            graph_facts_edges_and_ranks,
            vector_search,
            vector_search_with_filters,
            readers_see_whole_batches,
            lexical_ranking_follows_deletes,
            text_with_nul_bytes,
            query_terms_written_twice_weigh_more,
            one_question_over_every_repository
        }
    };
}
pub(crate) use provider_checks;

/// Calls `$runner! { check, … }` with every home-store check.
macro_rules! home_checks {
    ($runner:ident) => {
        $runner! { home_queue_tokens_deliveries, home_tickets, home_remote_heads }
    };
}
pub(crate) use home_checks;

macro_rules! names {
    ($($name:ident),* $(,)?) => {
        &[$(stringify!($name)),*]
    };
}

/// The checks the runners make tests of.
pub const PROVIDER_CHECKS: &[&str] = provider_checks!(names);
pub const HOME_CHECKS: &[&str] = home_checks!(names);

/// Every check defined in this file is in [`PROVIDER_CHECKS`] or
/// [`HOME_CHECKS`], and every listed name is defined.
pub fn every_check_is_listed() {
    let src = include_str!("mod.rs");
    let defined = |arg: &str| -> Vec<String> {
        let mut v: Vec<String> = src
            .lines()
            .filter_map(|l| l.strip_prefix("pub fn "))
            .filter_map(|l| l.strip_suffix(&format!("({arg}) {{")))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    let listed = |names: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(defined("p: &dyn StoreProvider"), listed(PROVIDER_CHECKS));
    assert_eq!(
        defined("h: &(dyn ken_store::Home + Sync)"),
        listed(HOME_CHECKS)
    );
}

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

pub(crate) fn upsert(path: &str, text: &str) -> FileUpdate {
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
            ranking: Some(learned_ranking()),
            adapter: Some(learned_map()),
            ..IndexState::default()
        })
        .unwrap();
        w.finish().unwrap();
    }
    assert_eq!(p.list().unwrap(), vec![key.clone()]);
    assert!(p.exists(&key).unwrap());
    let r = p.open(&key).unwrap();
    assert_eq!(r.state().unwrap().name.as_deref(), Some("pallets/flask"));
    // what was learned comes back exactly
    assert_eq!(r.state().unwrap().ranking, Some(learned_ranking()));
    assert_eq!(r.state().unwrap().adapter, Some(learned_map()));
    assert!(r.size_bytes().unwrap() > 0);
    assert!(!r.location().is_empty());
    drop(r);
    p.remove("pallets/flask").unwrap();
    assert!(p.list().unwrap().is_empty());
    assert!(!p.exists("pallets/flask").unwrap());
}

fn learned_ranking() -> ken_store::TunedRanking {
    ken_store::TunedRanking {
        commit: Some("c1".into()),
        commits: 1234,
        until: Some(1_700_000_000),
        questions: 150,
        answerable: 141,
        mode: "lexical".into(),
        mrr_default: 0.729,
        mrr_learned: 0.765,
        heldout_default: 0.729,
        heldout_learned: 0.757,
        adopted: true,
        prior: 25.0,
        code_questions: 3,
        params: [
            ("w_churn".to_string(), 0.0558f32),
            ("w_file".to_string(), 1.3031),
        ]
        .into_iter()
        .collect(),
        took_ms: 435,
        docs: Some(ken_store::DocsRanking {
            questions: 96,
            answerable: 80,
            pages: 31,
            heldout_default: 0.41,
            heldout_commits: 0.39,
            heldout_learned: 0.47,
            chosen: "docs".into(),
            params: [("w_dense_file".to_string(), 2.0f32)].into_iter().collect(),
            router: [(String::new(), -0.25f32), ("context".to_string(), 1.5)]
                .into_iter()
                .collect(),
            router_heldout: 0.93,
            took_ms: 120,
        }),
        docs_read: true,
    }
}

/// A query map as the engine stores one: its factors are 2·384·8 + 384
/// floats in base64, 34,816 characters.
fn learned_map() -> ken_store::DenseAdapter {
    let floats = 2 * 384 * 8 + 384;
    let bytes: Vec<u8> = (0..floats * 4).map(|i| (i * 7 % 251) as u8).collect();
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let weights: String = bytes
        .chunks(3)
        .flat_map(|c| {
            let n = (c[0] as u32) << 16
                | (*c.get(1).unwrap_or(&0) as u32) << 8
                | *c.get(2).unwrap_or(&0) as u32;
            (0..4).map(move |k| B64[(n >> (18 - 6 * k) & 63) as usize] as char)
        })
        .collect();
    ken_store::DenseAdapter {
        model: "local:all-MiniLM-L6-v2:53aa51172d14".into(),
        commit: Some("c1".into()),
        commits: 1887,
        until: Some(1_700_609_972),
        questions: 154,
        heldout: 38,
        heldout_plain: 0.515,
        heldout_adapted: 0.771,
        adopted: true,
        dim: 384,
        rank: 8,
        epochs: 4,
        took_ms: 8321,
        weights,
    }
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
    // several at once: the same answers, in the order asked
    let asked: Vec<(String, bool)> = [
        ("SessionStore", false),
        ("retry_for", true),
        ("nothing_like_it", true),
        ("sessionstore", false),
    ]
    .iter()
    .map(|(i, p)| (i.to_string(), *p))
    .collect();
    let many = w.lookup_symbols_many(&asked, 10).unwrap();
    assert_eq!(many.len(), asked.len());
    for ((ident, partial), got) in asked.iter().zip(&many) {
        let one = w.lookup_symbols(ident, 10, *partial).unwrap();
        let key = |v: &[ken_store::SymbolMatch]| -> Vec<(String, u32, SymbolTier)> {
            v.iter()
                .map(|m| (m.path.clone(), m.start_line, m.tier))
                .collect()
        };
        assert_eq!(key(got), key(&one), "{ident}");
    }
    assert!(many[2].is_empty());

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
    // who made a commit and when, without its message or parents
    let heads = w
        .commit_heads(&["b2".into(), "c3".into(), "zz".into()])
        .unwrap();
    assert_eq!(heads.len(), 2, "unknown commits are left out");
    let full = w.commits(&["b2".into(), "c3".into()], false).unwrap();
    for (sha, head) in &heads {
        let c = &full[sha];
        assert!(!c.message.is_empty());
        let expect = CommitRecord {
            message: String::new(),
            summary: String::new(),
            parents: Vec::new(),
            ..c.clone()
        };
        assert_eq!(head, &expect);
    }
    assert_eq!(
        w.commit_authors().unwrap(),
        [
            ("Ada".to_string(), "ada@example.com".to_string()),
            ("Bob".to_string(), "bob@example.com".to_string())
        ]
    );
    let mut times = w.commit_times().unwrap();
    times.sort_by_key(|t| t.2);
    let at = |n: &str, t: i64| {
        (
            n.to_string(),
            format!("{}@example.com", n.to_lowercase()),
            t,
            t,
        )
    };
    assert_eq!(times, [at("Ada", 100), at("Bob", 200), at("Ada", 300)]);
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
    // which blob each stored blame is of, and how it was made; none for a
    // path without one
    let done = w
        .blame_done_of(&["src/session.py".into(), "src/none.py".into()])
        .unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(
        done["src/session.py"],
        ("blob1".to_string(), "exact".to_string())
    );
    // a state names the commit the blame was completed at
    let mut state = w.state().unwrap();
    state.blamed_at = Some("b2".into());
    w.set_state(&state).unwrap();
    assert_eq!(w.state().unwrap().blamed_at.as_deref(), Some("b2"));
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

    // once the vector index is built the cache still answers for every key
    // (a store may then keep the vectors only in its index, in int8), and
    // a rebuild from what it answers is the same index
    let rows = vec![(1u64, "h1".to_string()), (2, "h2".to_string())];
    let first = w.index_vectors("mini", &rows, 2, 1).unwrap();
    let keys = ["h1".to_string(), "h2".to_string()];
    assert_eq!(
        w.vector_keys_present("mini", &keys).unwrap(),
        HashSet::from(keys.clone())
    );
    assert_eq!(w.vector_models().unwrap(), ["mini"]);
    let got = w.get_vectors("mini", &keys).unwrap();
    for (k, want) in &items {
        for (x, y) in got[k].iter().zip(want) {
            assert!((x - y).abs() <= 0.8 / 254.0 + 1e-6, "{k}: {:?}", got[k]);
        }
    }
    let again = w.index_vectors("mini", &rows, 2, 2).unwrap();
    assert_eq!((again.rows, again.dim), (first.rows, first.dim));
    let after = w.get_vectors("mini", &keys).unwrap();
    for k in &keys {
        for (x, y) in after[k].iter().zip(&got[k]) {
            assert!((x - y).abs() < 1e-6, "stable under rebuilds: {k}");
        }
    }
    let hits = w
        .search_vectors("mini", &[0.6, 0.8, 0.0], 1, &all())
        .unwrap();
    assert_eq!(hits[0].0, 1);
    // a rebuild without a key (its chunk changed) keeps its vector cached
    w.index_vectors("mini", &rows[..1], 1, 3).unwrap();
    assert_eq!(
        w.vector_keys_present("mini", &keys).unwrap(),
        HashSet::from(keys.clone()),
        "content seen before stays cached"
    );
    assert_eq!(w.get_vectors("mini", &keys).unwrap().len(), 2);
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

/// Graph facts, edges, ranks and the saved symbol index: what is written
/// is read back the same.
pub fn graph_facts_edges_and_ranks(p: &dyn StoreProvider) {
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

    let edge = ken_core::Edge {
        from: ken_core::DefKey::new("src/checkout.py", "checkout", 0),
        to: ken_core::DefKey::new("src/session.py", "SessionStore.refresh_token", 0),
        kind: ken_core::RefKind::Call,
        path: "src/checkout.py".into(),
        line: 5,
        rule: ken_core::Rule::ALL[1],
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

    // the symbol index is the graph layer's JSON, kept as written
    let index = r#"{"files":[{"path":"src/session.py","defs":["SessionStore.refresh_token"]}]}"#;
    w.save_graph_index(7, index).unwrap();
    let (seq, back) = w.graph_index().unwrap().expect("a saved index");
    assert_eq!(seq, 7);
    assert_eq!(back, index);
}

/// The filter that lets every chunk through.
fn all() -> ken_store::ChunkFilter {
    ken_store::ChunkFilter::default()
}

/// Deterministic unit-ish vectors around a few centres (real embeddings
/// cluster by topic, which is what makes approximate search miss).
fn clustered(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut s = seed.max(1);
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 / (1u64 << 53) as f64) as f32 * 2.0 - 1.0
    };
    let centres: Vec<Vec<f32>> = (0..12)
        .map(|_| (0..dim).map(|_| next()).collect())
        .collect();
    (0..n)
        .map(|i| {
            let c = &centres[(i * 7) % centres.len()];
            c.iter().map(|x| x + 0.35 * next()).collect()
        })
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

/// The exact answer: each chunk by its best row, best first.
fn exact(rows: &[(u64, String)], vecs: &[Vec<f32>], q: &[f32], k: usize) -> Vec<(u64, f32)> {
    let mut best: std::collections::HashMap<u64, f32> = Default::default();
    for (id, key) in rows {
        let Some(i) = key.strip_prefix('k').and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let s = cosine(&vecs[i], q);
        let e = best.entry(*id).or_insert(f32::MIN);
        *e = e.max(s);
    }
    let mut out: Vec<(u64, f32)> = best.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(k);
    out
}

/// Recall of `got` against the exact answer (what share of the true top k it found).
fn recall(got: &[(u64, f32)], want: &[(u64, f32)]) -> f64 {
    let want: HashSet<u64> = want.iter().map(|w| w.0).collect();
    got.iter().filter(|g| want.contains(&g.0)).count() as f64 / want.len().max(1) as f64
}

/// The recall every store keeps against exact search. The embedded store
/// scans every vector (1.0 but for int8 ties); PostgreSQL's HNSW graph
/// (pgvector, m = 16, ef_construction = 64, ef_search = 400) is
/// approximate.
pub const VECTOR_RECALL: f64 = 0.95;

/// Vector search inside the store: the rows asked for, searched by cosine,
/// each chunk once; a rebuild replaces the rows atomically and readers see
/// it; recall against exact search is at least [`VECTOR_RECALL`].
pub fn vector_search(p: &dyn StoreProvider) {
    const DIM: usize = 32;
    let mut w = p.open_for_writing("vecs").unwrap();
    let reader = p.open("vecs").unwrap();
    assert!(w.vector_meta("mini").unwrap().is_none());
    assert!(w.vector_chunk_ids("mini").unwrap().is_empty());
    assert!(
        w.search_vectors("mini", &[0.0; DIM], 5, &all())
            .unwrap()
            .is_empty()
    );

    let vecs = clustered(700, DIM, 7);
    let items: Vec<(String, Vec<f32>)> = vecs
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("k{i}"), v.clone()))
        .collect();
    w.put_vectors("mini", &items).unwrap();

    // chunks 0..500 by key i; the first 50 have a second row (a window)
    // keyed 500 + i; a row whose key has no vector is left out
    let mut rows: Vec<(u64, String)> = (0..500).map(|i| (i, format!("k{i}"))).collect();
    rows.extend((0..50).map(|i| (i, format!("k{}", 500 + i))));
    rows.push((999, "never-embedded".into()));
    let before = reader.data_version().unwrap();
    let meta = w.index_vectors("mini", &rows, 520, 3).unwrap();
    assert_eq!((meta.model.as_str(), meta.dim), ("mini", DIM));
    assert_eq!((meta.rows, meta.chunks, meta.batch_seq), (550, 520, 3));
    assert_ne!(
        reader.data_version().unwrap(),
        before,
        "readers see the rebuild"
    );
    let reader = p.open("vecs").unwrap();
    assert_eq!(reader.vector_meta("mini").unwrap(), Some(meta));
    assert_eq!(
        reader.vector_chunk_ids("mini").unwrap(),
        (0..500).collect::<Vec<u64>>()
    );

    let queries = clustered(40, DIM, 99);
    let mut total = 0.0;
    for q in &queries {
        let got = reader.search_vectors("mini", q, 10, &all()).unwrap();
        let want = exact(&rows, &vecs, q, 10);
        assert_eq!(got.len(), 10);
        let ids: HashSet<u64> = got.iter().map(|g| g.0).collect();
        assert_eq!(ids.len(), got.len(), "each chunk once: {got:?}");
        assert!(
            got.windows(2).all(|w| w[0].1 >= w[1].1 - 1e-6),
            "best first"
        );
        for (id, score) in &got {
            let truth = exact(&rows, &vecs, q, 1000)
                .into_iter()
                .find(|e| e.0 == *id)
                .expect("a chunk that has rows")
                .1;
            // a store may keep vectors in int8 with a scale each: each value
            // is then off by at most half a step (max / 254), so a unit
            // query's cosine by at most sqrt(DIM) / 254 × max (< 0.01 here)
            assert!(
                *score <= truth + 1e-2 && *score >= truth - 0.05,
                "chunk {id}: similarity {score}, exact {truth}"
            );
        }
        total += recall(&got, &want);
    }
    let mean = total / queries.len() as f64;
    assert!(mean >= VECTOR_RECALL, "recall@10 {mean:.3}");

    // many more than a default HNSW search keeps
    let big = reader
        .search_vectors("mini", &queries[0], 300, &all())
        .unwrap();
    assert_eq!(big.len(), 300);
    let r = recall(&big, &exact(&rows, &vecs, &queries[0], 300));
    assert!(r >= VECTOR_RECALL, "recall@300 {r:.3}");

    // a query of another dimension is an error, not a wrong answer
    assert!(reader.search_vectors("mini", &[1.0; 7], 5, &all()).is_err());

    // a rebuild: chunks 250..500 stay, 600..700 arrive (keys 500..600)
    let rows2: Vec<(u64, String)> = (250..500)
        .map(|i| (i, format!("k{i}")))
        .chain((600..700).map(|i| (i, format!("k{}", i - 100))))
        .collect();
    let meta2 = w.index_vectors("mini", &rows2, 350, 4).unwrap();
    assert_eq!(meta2.rows, 350);
    let reader = p.open("vecs").unwrap();
    let held = reader.vector_chunk_ids("mini").unwrap();
    assert_eq!(
        held,
        (250..500).chain(600..700).collect::<Vec<u64>>(),
        "exactly the rows asked for"
    );
    let mut total = 0.0;
    for q in &queries {
        let got = reader.search_vectors("mini", q, 10, &all()).unwrap();
        assert!(got.iter().all(|g| g.0 >= 250), "no removed chunk: {got:?}");
        total += recall(&got, &exact(&rows2, &vecs, q, 10));
    }
    assert!(total / queries.len() as f64 >= VECTOR_RECALL);
    // a window's own vector finds its chunk first
    let top = reader
        .search_vectors("mini", &vecs[550], 1, &all())
        .unwrap();
    assert_eq!(top[0].0, 650);
    assert!((top[0].1 - 1.0).abs() < 1e-3, "{top:?}");

    // models are separate; nothing left is nothing found
    assert!(reader.vector_meta("other").unwrap().is_none());
    let empty = w.index_vectors("mini", &[], 0, 5).unwrap();
    assert_eq!(empty.rows, 0);
    let reader = p.open("vecs").unwrap();
    assert!(
        reader
            .search_vectors("mini", &vecs[0], 5, &all())
            .unwrap()
            .is_empty()
    );
    assert!(reader.vector_chunk_ids("mini").unwrap().is_empty());

    drop(w);
    p.remove("vecs").unwrap();
    assert!(!p.exists("vecs").unwrap());
}

/// A writer and readers at once: a reader opened at any moment (as the
/// engine reopens when the data version moves) sees each batch whole or
/// not at all — both files of a pair with their chunks and symbols, and
/// no lexical hit of a file it does not have.
pub fn readers_see_whole_batches(p: &dyn StoreProvider) {
    const BATCHES: usize = 12;
    let pair = |n: usize| {
        vec![
            upsert(
                &format!("src/a_{n}.py"),
                &format!("def left_{n}(x):\n    \"\"\"paired twin {n}\"\"\"\n    return x\n"),
            ),
            upsert(
                &format!("src/b_{n}.py"),
                &format!("def right_{n}(x):\n    \"\"\"paired twin {n}\"\"\"\n    return x\n"),
            ),
        ]
    };
    let mut w = p.open_for_writing("race").unwrap();
    w.write_batch(Batch {
        upserts: pair(0),
        deletes: Vec::new(),
    })
    .unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            // looks at one unchanging state
            let mut looks = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) || looks < 3 {
                let r = p.open("race").unwrap();
                let version = r.data_version().unwrap();
                // one call is one state
                let files: HashSet<String> =
                    r.files().unwrap().into_iter().map(|f| f.path).collect();
                for n in 0..BATCHES {
                    let (a, b) = (format!("src/a_{n}.py"), format!("src/b_{n}.py"));
                    assert_eq!(
                        files.contains(&a),
                        files.contains(&b),
                        "half a batch: {files:?}"
                    );
                }
                let mut chunked = Vec::new();
                for f in &files {
                    chunked.push((f.clone(), r.chunks_of_file(f).unwrap().len()));
                }
                let hits = r.search_chunks(&query("paired twin")).unwrap();
                let ids: Vec<u64> = hits.iter().map(|h| h.chunk_id).collect();
                let hit_paths: Vec<String> = r
                    .chunks(&ids)
                    .unwrap()
                    .into_iter()
                    .map(|c| c.path)
                    .collect();
                // calls agree with each other when no batch came in between
                if r.data_version().unwrap() == version {
                    for (f, n) in &chunked {
                        assert!(*n > 0, "{f} has no chunks");
                    }
                    for path in &hit_paths {
                        assert!(files.contains(path), "a hit in {path}, not a file");
                    }
                    assert!(!hits.is_empty() || files.is_empty());
                    looks += 1;
                }
            }
            looks
        });
        for n in 1..BATCHES {
            w.write_batch(Batch {
                upserts: pair(n),
                deletes: if n % 3 == 0 {
                    vec![format!("src/a_{}.py", n - 2), format!("src/b_{}.py", n - 2)]
                } else {
                    Vec::new()
                },
            })
            .unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(reader.join().unwrap() >= 3);
    });
    let r = p.open("race").unwrap();
    assert_eq!(r.files().unwrap().len(), 2 * (BATCHES - 3));
    assert_eq!(r.lookup_symbols("right_11", 5, false).unwrap().len(), 1);
}

/// A search's rows: (path, first line (0 for a file hit), score).
pub type Scored = Vec<(String, u32, f32)>;

/// An index that saw files replaced and deleted, and a fresh index of
/// what is left; per query, each one's rows.
pub fn churned(p: &dyn StoreProvider) -> Vec<(String, [Scored; 2])> {
    let mut w = p.open_for_writing("churn").unwrap();
    w.write_batch(Batch {
        upserts: vec![
            upsert("src/session.py", SESSION_PY),
            upsert("src/retry.rs", RETRY_RS),
            upsert("src/checkout.py", CHECKOUT_PY),
        ],
        deletes: Vec::new(),
    })
    .unwrap();
    w.write_batch(Batch {
        upserts: vec![upsert("src/session.py", SESSION_PY_V2)],
        deletes: vec!["src/retry.rs".into()],
    })
    .unwrap();
    let mut fresh = p.open_for_writing("fresh").unwrap();
    fresh
        .write_batch(Batch {
            upserts: vec![
                upsert("src/checkout.py", CHECKOUT_PY),
                upsert("src/session.py", SESSION_PY_V2),
            ],
            deletes: Vec::new(),
        })
        .unwrap();
    CHURN_QUERIES
        .iter()
        .map(|q| (q.to_string(), [churn_rows(&w, q), churn_rows(&fresh, q)]))
        .collect()
}

const CHURN_QUERIES: [&str; 4] = [
    "session token",
    "rotate token expire",
    "retry operation",
    "checkout cart",
];

fn churn_rows(s: &ken_store::DynStore, q: &str) -> Scored {
    let hits = s.search_chunks(&query(q)).unwrap();
    let ids: Vec<u64> = hits.iter().map(|h| h.chunk_id).collect();
    let chunks = s.chunk_heads(&ids).unwrap();
    let mut chunk_rows: Vec<(String, u32, f32)> = hits
        .iter()
        .zip(chunks)
        .map(|(h, c)| (c.path, c.start_line, h.score))
        .collect();
    let file_rows = s.search_files(&query(q)).unwrap();
    chunk_rows.extend(file_rows.into_iter().map(|h| (h.path, 0, h.score)));
    chunk_rows
}

/// The rows of [`churned`]'s queries over its churned index, read again
/// (after whatever the caller did to the store in between).
pub fn search_again(p: &dyn StoreProvider) -> Vec<(String, Scored)> {
    let s = p.open("churn").unwrap();
    CHURN_QUERIES
        .iter()
        .map(|q| (q.to_string(), churn_rows(&s, q)))
        .collect()
}

/// Lexical ranking follows replaced and deleted files: an index that saw
/// them ranks like a fresh index of what is left. (Scores may differ: a
/// segment-based index such as tantivy keeps counting deleted documents
/// until its segments merge; PostgreSQL's scores are checked equal in
/// tests/postgres.rs.)
pub fn lexical_ranking_follows_deletes(p: &dyn StoreProvider) {
    let order = |rows: &[(String, u32, f32)]| -> Vec<(String, u32)> {
        rows.iter().map(|r| (r.0.clone(), r.1)).collect()
    };
    for (q, [churned, fresh]) in churned(p) {
        assert_eq!(order(&churned), order(&fresh), "{q}");
        assert!(!fresh.is_empty() || q == "retry operation", "{q}");
    }
    // opened again, the churned index ranks the same
    for (q, again) in search_again(p) {
        let fresh = churned_fresh_order(p, &q);
        assert_eq!(order(&again), fresh, "{q}");
    }
}

/// The order of the fresh index's rows for `q` (see [`churned`]).
fn churned_fresh_order(p: &dyn StoreProvider, q: &str) -> Vec<(String, u32)> {
    let s = p.open("fresh").unwrap();
    churn_rows(&s, q).into_iter().map(|r| (r.0, r.1)).collect()
}

/// A term written more often in the query weighs more, saturating as
/// `FieldWeights::qtf` says; with `qtf` 0 each counts once. Two files alike
/// but for one word each: the query repeating one word puts its file first,
/// by the factor the formula gives, in files and in chunks.
pub fn query_terms_written_twice_weigh_more(p: &dyn StoreProvider) {
    let mut w = p.open_for_writing("qtf").unwrap();
    w.write_batch(Batch {
        upserts: vec![
            upsert("notes/a.txt", "the parser reads the config file\n"),
            upsert("notes/b.txt", "the renderer reads the config file\n"),
        ],
        deletes: Vec::new(),
    })
    .unwrap();
    w.finish().unwrap();
    let files = |text: &str, qtf: f32| -> Vec<(String, f32)> {
        let mut q = query(text);
        q.weights.qtf = qtf;
        w.search_files(&q)
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.score))
            .collect()
    };
    for (text, first) in [
        ("renderer parser parser", "notes/a.txt"),
        ("parser renderer renderer", "notes/b.txt"),
    ] {
        let got = files(text, 1.0);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].0, first, "{text}: {got:?}");
        // twice at k3 = 1: (1 + 1) * 2 / (1 + 2) = 4/3 the weight
        let ratio = got[0].1 / got[1].1;
        assert!((ratio - 4.0 / 3.0).abs() < 0.01, "{text}: {got:?}");
        let flat = files(text, 0.0);
        assert!(
            (flat[0].1 / flat[1].1 - 1.0).abs() < 1e-3,
            "{text}: {flat:?}"
        );
        let chunk = w.search_chunks(&{
            let mut q = query(text);
            q.weights.qtf = 1.0;
            q
        });
        let top = w.chunks(&[chunk.unwrap()[0].chunk_id]).unwrap();
        assert_eq!(top[0].path, first);
    }
}

/// Text with NUL bytes (a C test fixture, a Go string literal) is stored:
/// the same length, so byte offsets and lines hold; a store whose text
/// type cannot hold NUL keeps it as U+001A.
pub fn text_with_nul_bytes(p: &dyn StoreProvider) {
    let text = "/// Splits on NUL.\npub fn split_nul(s: &str) -> Vec<&str> {\n    s.split('\0').collect() // \"a\0b\"\n}\n";
    let mut w = p.open_for_writing("nul").unwrap();
    w.write_batch(Batch {
        upserts: vec![upsert("src/nul.rs", text)],
        deletes: Vec::new(),
    })
    .unwrap();
    let back = w.file_text("src/nul.rs").unwrap().expect("the file's text");
    assert_eq!(back.len(), text.len());
    assert!(
        back == text || back == text.replace('\0', "\u{1a}"),
        "{back:?}"
    );
    let chunks = w.chunks_of_file("src/nul.rs").unwrap();
    assert!(!chunks.is_empty());
    for c in &chunks {
        assert_eq!(
            c.text,
            back[c.start_byte as usize..c.end_byte as usize],
            "offsets hold"
        );
    }
    assert_eq!(w.lookup_symbols("split_nul", 5, false).unwrap().len(), 1);
    assert!(!w.search_chunks(&query("splits nul")).unwrap().is_empty());
}

/// A filter applies inside vector search: a narrow one still gets its
/// nearest chunks (all of them when fewer than k), not what is left of the
/// unfiltered k; a filter that matches nothing finds nothing.
pub fn vector_search_with_filters(p: &dyn StoreProvider) {
    let mut w = p.open_for_writing("filtered").unwrap();
    let mut upserts = vec![
        upsert("src/session.py", SESSION_PY),
        upsert("src/retry.rs", RETRY_RS),
    ];
    for i in 0..40 {
        upserts.push(upsert(
            &format!("src/fill_{i}.py"),
            &format!("def fill_{i}(x):\n    return x + {i}\n"),
        ));
    }
    w.write_batch(Batch {
        upserts,
        deletes: Vec::new(),
    })
    .unwrap();
    let chunks = w.all_chunks().unwrap();
    let vecs = clustered(chunks.len(), 16, 5);
    let items: Vec<(String, Vec<f32>)> = chunks
        .iter()
        .zip(&vecs)
        .map(|(c, v)| (format!("c{}", c.id), v.clone()))
        .collect();
    w.put_vectors("mini", &items).unwrap();
    let rows: Vec<(u64, String)> = chunks
        .iter()
        .map(|c| (c.id, format!("c{}", c.id)))
        .collect();
    w.index_vectors("mini", &rows, chunks.len(), 1).unwrap();
    let r = p.open("filtered").unwrap();
    // the query is a filler chunk's own vector: unfiltered, fillers win
    let filler = chunks
        .iter()
        .position(|c| c.path == "src/fill_7.py")
        .unwrap();
    let q = &vecs[filler];
    let top = r.search_vectors("mini", q, 5, &all()).unwrap();
    assert_eq!(top[0].0, chunks[filler].id);
    let rust: Vec<u64> = chunks
        .iter()
        .filter(|c| c.path == "src/retry.rs")
        .map(|c| c.id)
        .collect();
    assert!(!rust.is_empty());
    let exact_among = |ids: &[u64], k: usize| -> Vec<u64> {
        let mut scored: Vec<(u64, f32)> = chunks
            .iter()
            .zip(&vecs)
            .filter(|(c, _)| ids.contains(&c.id))
            .map(|(c, v)| (c.id, cosine(v, q)))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.into_iter().take(k).map(|s| s.0).collect()
    };
    for filter in [
        ken_store::ChunkFilter {
            languages: Vec::new(),
            paths: Some(vec!["src/retry.rs".into()]),
        },
        ken_store::ChunkFilter {
            languages: vec![Language::Rust],
            paths: None,
        },
    ] {
        let got: Vec<u64> = r
            .search_vectors("mini", q, 5, &filter)
            .unwrap()
            .iter()
            .map(|h| h.0)
            .collect();
        assert_eq!(got, exact_among(&rust, 5), "{filter:?}");
    }
    // a filter wider than k: the k nearest among what it lets through
    let python: Vec<u64> = chunks
        .iter()
        .filter(|c| c.language == Language::Python && c.path != "src/fill_7.py")
        .map(|c| c.id)
        .collect();
    let mut paths: Vec<String> = (0..40)
        .filter(|i| *i != 7)
        .map(|i| format!("src/fill_{i}.py"))
        .collect();
    paths.push("src/session.py".into());
    let got = r
        .search_vectors(
            "mini",
            q,
            5,
            &ken_store::ChunkFilter {
                languages: vec![Language::Python],
                paths: Some(paths),
            },
        )
        .unwrap();
    let want: HashSet<u64> = exact_among(&python, 5).into_iter().collect();
    let found = got.iter().filter(|h| want.contains(&h.0)).count();
    assert!(found >= 4, "{got:?} vs {want:?}");
    assert!(got.iter().all(|h| h.0 != chunks[filler].id));
    let none = ken_store::ChunkFilter {
        languages: Vec::new(),
        paths: Some(vec!["src/nothing.py".into()]),
    };
    assert!(r.search_vectors("mini", q, 5, &none).unwrap().is_empty());
}

/// Tickets per repository key: added, replaced by id, read back whole,
/// kept apart per repository, removed.
/// What polling saw of each remote: one record per repository, replaced by
/// the next poll, errors kept as text (NUL bytes included).
pub fn home_remote_heads(h: &(dyn ken_store::Home + Sync)) {
    use ken_store::RemoteHead;
    assert!(h.remote_heads().unwrap().is_empty());
    let head = |repo: &str, head: Option<&str>, at: i64, error: Option<&str>| RemoteHead {
        repo: repo.to_string(),
        branch: None,
        head: head.map(str::to_string),
        polled_at: at,
        error: error.map(str::to_string),
    };
    h.put_remote_head(&head("shop", Some("a1"), 10, None))
        .unwrap();
    h.put_remote_head(&RemoteHead {
        branch: Some("release".into()),
        ..head("shop@release", None, 11, Some("could not\0 fetch"))
    })
    .unwrap();
    h.put_remote_head(&head("shop", Some("b2"), 12, None))
        .unwrap();
    let all = h.remote_heads().unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0], head("shop", Some("b2"), 12, None));
    assert_eq!(all[1].branch.as_deref(), Some("release"));
    assert_eq!(all[1].head, None);
    assert!(all[1].error.as_deref().unwrap().starts_with("could not"));
}

pub fn home_tickets(h: &(dyn ken_store::Home + Sync)) {
    use ken_core::Ticket;
    let t = |id: &str, title: &str| Ticket {
        id: id.to_string(),
        title: title.to_string(),
        body: "trace\0back".to_string(),
        state: "closed".to_string(),
        kind: "issue".to_string(),
        labels: vec!["bug".to_string()],
        assignees: vec!["ana".to_string()],
        author: Some("bo".to_string()),
        opened: Some(10),
        closed: Some(20),
        url: Some("https://example.org/1".to_string()),
        links: vec!["40".to_string(), "abc1234".to_string()],
    };
    assert!(h.tickets("flask").unwrap().is_empty());
    let v0 = h.data_version().unwrap();
    assert_eq!(
        h.put_tickets("flask", &[t("1", "a"), t("PROJ-2", "b")], 5)
            .unwrap(),
        (2, 0)
    );
    assert_ne!(h.data_version().unwrap(), v0);
    assert_eq!(
        h.put_tickets("flask", &[t("1", "a2"), t("3", "c")], 6)
            .unwrap(),
        (1, 1)
    );
    h.put_tickets("cobra", &[t("1", "other")], 6).unwrap();
    let got = h.tickets("flask").unwrap();
    let ids: Vec<&str> = got.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["1", "3", "PROJ-2"]);
    assert_eq!(
        got[0],
        t("1", "a2"),
        "a ticket comes back whole (NUL included)"
    );
    assert_eq!(h.tickets("cobra").unwrap().len(), 1);
    assert_eq!(h.remove_tickets("flask").unwrap(), 3);
    assert!(h.tickets("flask").unwrap().is_empty());
    assert_eq!(h.tickets("cobra").unwrap().len(), 1);
}

const TEARDOWN_PY: &str = "\"\"\"Request teardown.\"\"\"\n\n\
def do_teardown_request(app, exc=None):\n    \"\"\"Call every teardown callback, despite errors.\"\"\"\n    for func in app.teardown_funcs:\n        func(exc)\n";

const MATRIX_PY: &str = "class Matrix:\n    \"\"\"A dense matrix.\"\"\"\n\n    def determinant(self):\n        \"\"\"The determinant, by LU decomposition.\"\"\"\n        return lu(self).diagonal_product()\n";

/// The collection index spans every repository of a provider: one search
/// ranks the files (and the commit messages) of all of them on one scale,
/// and a symbol is found in the repository that defines it. A provider
/// that keeps its own copy is given each repository's files and commits
/// as an index run gives them.
pub fn one_question_over_every_repository(p: &dyn StoreProvider) {
    use ken_store::{FleetCommit, FleetDoc, FleetUpdate, Reflected};
    let repos: [(&str, &str, &str, Vec<CommitRecord>); 2] = [
        (
            "acme/web",
            "web/app.py",
            TEARDOWN_PY,
            vec![commit(
                "c1",
                "Ada",
                "ada@example.com",
                100,
                "Call every teardown callback despite errors",
                &["web/app.py"],
            )],
        ),
        (
            "acme/math",
            "math/matrix.py",
            MATRIX_PY,
            // a word most commits hold says little: these lose to one
            // rare word, however often they say it
            vec![
                commit(
                    "m1",
                    "Bo",
                    "bo@example.com",
                    90,
                    "Fix fix fix",
                    &["math/matrix.py"],
                ),
                commit(
                    "m2",
                    "Bo",
                    "bo@example.com",
                    80,
                    "Fix lint",
                    &["math/matrix.py"],
                ),
                commit(
                    "m3",
                    "Bo",
                    "bo@example.com",
                    70,
                    "Fix typo in fix",
                    &["math/matrix.py"],
                ),
                commit(
                    "m4",
                    "Bo",
                    "bo@example.com",
                    60,
                    "Fix build",
                    &["math/matrix.py"],
                ),
                commit(
                    "m5",
                    "Bo",
                    "bo@example.com",
                    50,
                    "Fix docs",
                    &["math/matrix.py"],
                ),
            ],
        ),
    ];
    let fleet = p
        .fleet()
        .unwrap()
        .expect("every provider answers questions over all its repositories");
    for (name, path, text, commits) in &repos {
        let mut w = p.open_for_writing(name).unwrap();
        w.write_batch(Batch {
            upserts: vec![upsert(path, text)],
            deletes: Vec::new(),
        })
        .unwrap();
        w.add_commits(commits).unwrap();
        w.set_state(&IndexState {
            name: Some(name.to_string()),
            commit: Some("c1".into()),
            ..IndexState::default()
        })
        .unwrap();
        w.finish().unwrap();
        let facts = w.graph_facts(Some(&[path.to_string()])).unwrap();
        let symbols: Vec<&str> = facts
            .iter()
            .flat_map(|f| &f.definitions)
            .flat_map(|d| [d.name.as_str(), d.qualname.as_str()])
            .collect();
        let symbols = symbols.join(" ");
        let docs = [FleetDoc {
            path,
            lang: "python",
            body: text,
            symbols: &symbols,
        }];
        let history: Vec<FleetCommit<'_>> = commits
            .iter()
            .map(|c| FleetCommit {
                sha: &c.sha,
                message: &c.message,
            })
            .collect();
        fleet
            .update(
                FleetUpdate {
                    repo: name,
                    replace_all: true,
                    deletes: &[],
                    replace_commits: true,
                    reflects: Reflected {
                        seq: w.batch_seq().unwrap(),
                        commits_until: commits.first().map(|c| c.committer_time),
                        commits: commits.len() as u64,
                    },
                },
                &docs,
                &history,
            )
            .unwrap();
    }
    fleet.refresh().unwrap();
    let held = fleet.reflected().unwrap();
    assert!(
        held.contains_key("acme/web") && held.contains_key("acme/math"),
        "{held:?}"
    );
    let first = |text: &str| {
        let hits = fleet.search(&query(text)).unwrap();
        hits.first().map(|h| (h.repo.clone(), h.path.clone()))
    };
    assert_eq!(
        first("teardown callback errors"),
        Some(("acme/web".into(), "web/app.py".into()))
    );
    assert_eq!(
        first("matrix determinant"),
        Some(("acme/math".into(), "math/matrix.py".into()))
    );
    // one scale: a word of both files ranks the file where it weighs more
    let both = fleet
        .search(&query("determinant teardown teardown"))
        .unwrap();
    assert_eq!(both.len(), 2, "{both:?}");
    let commits = fleet.search_commits(&query("teardown errors")).unwrap();
    assert_eq!(
        commits.first().map(|h| (h.repo.as_str(), h.path.as_str())),
        Some(("acme/web", "c1"))
    );
    // BM25 over all repositories' commits: the rare word decides
    let commits = fleet.search_commits(&query("fix the teardown")).unwrap();
    let found: Vec<(&str, &str)> = commits
        .iter()
        .map(|h| (h.repo.as_str(), h.path.as_str()))
        .collect();
    assert_eq!(found.first(), Some(&("acme/web", "c1")), "{commits:?}");
    assert_eq!(
        found.len(),
        6,
        "every commit with a word of the question: {commits:?}"
    );
    assert_eq!(found[1], ("acme/math", "m1"), "{commits:?}");
    assert!(
        commits[1].score > commits[5].score,
        "a word said three times weighs more than once: {commits:?}"
    );
    let defs = fleet.defining("determinant", 10).unwrap();
    let repos_defining: HashSet<&str> = defs.iter().map(|h| h.repo.as_str()).collect();
    assert_eq!(repos_defining, HashSet::from(["acme/math"]));
    assert!(
        fleet
            .search(&query("nothing matches zyzzyva"))
            .unwrap()
            .is_empty()
    );
}
