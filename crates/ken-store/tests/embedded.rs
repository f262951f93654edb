//! The conformance suite on the embedded store (tantivy + SQLite under a
//! temporary directory).

mod conformance;

use ken_store::EmbeddedProvider;

fn provider() -> (tempfile::TempDir, EmbeddedProvider) {
    let dir = tempfile::tempdir().unwrap();
    let p = EmbeddedProvider::new(dir.path().join("repos"));
    (dir, p)
}

macro_rules! on_provider {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let (_dir, p) = provider();
            conformance::$name(&p);
        }
    )*};
}
conformance::provider_checks!(on_provider);

macro_rules! on_home {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let dir = tempfile::tempdir().unwrap();
            let h = ken_store::HomeStore::open(dir.path()).unwrap();
            conformance::$name(&h);
        }
    )*};
}
conformance::home_checks!(on_home);

#[test]
fn every_check_is_listed() {
    conformance::every_check_is_listed();
}

#[test]
fn the_symbol_index_is_saved_compressed_and_the_files_of_an_older_index_go() {
    use ken_store::StoreProvider;
    let (dir, p) = provider();
    let mut w = p.open_for_writing("shop").unwrap();
    let index = r#"{"files":[],"defs":{"a":1}}"#;
    let repo = dir.path().join("repos").join("shop");
    // an index written before: graph.json(.zst), `{"seq", "index"}`; the
    // graph layer rebuilds it, so it is not read
    let old = serde_json::json!({"seq": 5, "index": {"files": []}});
    std::fs::write(repo.join("graph.json"), old.to_string()).unwrap();
    std::fs::write(repo.join("graph.json.zst"), b"stale").unwrap();
    assert!(w.graph_index().unwrap().is_none());
    // saving writes graph.index.zst and drops the stale files
    w.save_graph_index(7, index).unwrap();
    assert!(repo.join("graph.index.zst").is_file());
    assert!(!repo.join("graph.json").exists());
    assert!(!repo.join("graph.json.zst").exists());
    assert_eq!(w.graph_index().unwrap(), Some((7, index.to_string())));
    // an unreadable file is as good as none
    std::fs::write(repo.join("graph.index.zst"), b"not zstd").unwrap();
    assert!(w.graph_index().unwrap().is_none());
}

#[test]
fn vectors_are_kept_once_in_int8_and_the_database_gives_their_pages_back() {
    use ken_store::StoreProvider;
    let (dir, p) = provider();
    let mut w = p.open_for_writing("shop").unwrap();
    let db = dir.path().join("repos").join("shop").join("index.sqlite");
    let dim = 384;
    let items: Vec<(String, Vec<f32>)> = (0..3000)
        .map(|i| {
            let v: Vec<f32> = (0..dim)
                .map(|d| ((i * 31 + d * 7) % 97) as f32 - 48.0)
                .collect();
            (format!("k{i}"), v)
        })
        .collect();
    w.put_vectors("mini", &items).unwrap();
    let rows: Vec<(u64, String)> = (0..3000).map(|i| (i as u64, format!("k{i}"))).collect();
    let sql = |q: &str| -> i64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row(q, [], |r| r.get(0)).unwrap()
    };
    let page = sql("PRAGMA page_size");
    let full = sql("PRAGMA page_count") * page;
    assert!(
        full > 3000 * 4 * 384,
        "f32 rows while pending: {full} bytes"
    );
    w.index_vectors("mini", &rows, 3000, 1).unwrap();
    assert_eq!(
        sql("SELECT count(*) FROM vectors"),
        0,
        "the index file holds them"
    );
    let after = sql("PRAGMA page_count") * page;
    assert!(
        after * 4 < full,
        "pages given back: {after} of {full} bytes"
    );
    let vec_file = dir.path().join("repos/shop/vectors/mini.vec");
    let size = std::fs::metadata(vec_file).unwrap().len();
    assert!(
        size < 3000 * (dim as u64 + 16) + 4096,
        "int8 rows only: {size} bytes"
    );
    // a store opened again reads the cache from the file
    drop(w);
    let r = p.open("shop").unwrap();
    assert_eq!(r.get_vectors("mini", &["k7".into()]).unwrap().len(), 1);
}
