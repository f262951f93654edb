//! The conformance suite on the embedded store (tantivy + SQLite under a
//! temporary directory).

mod conformance;

use ken_store::EmbeddedProvider;

fn provider() -> (tempfile::TempDir, EmbeddedProvider) {
    let dir = tempfile::tempdir().unwrap();
    let p = EmbeddedProvider::new(dir.path().join("repos"));
    (dir, p)
}

macro_rules! conformance {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let (_dir, p) = provider();
            conformance::$name(&p);
        }
    )*};
}

conformance!(
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
);

#[test]
fn home_queue_tokens_deliveries() {
    let dir = tempfile::tempdir().unwrap();
    let h = ken_store::HomeStore::open(dir.path()).unwrap();
    conformance::home_queue_tokens_deliveries(&h);
}

#[test]
fn home_tickets() {
    let dir = tempfile::tempdir().unwrap();
    let h = ken_store::HomeStore::open(dir.path()).unwrap();
    conformance::home_tickets(&h);
}
