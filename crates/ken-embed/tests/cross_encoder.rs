//! The in-process cross-encoder against an independent NumPy forward pass
//! of the same tiny random model (`scripts/tiny_cross_encoder.py`): the
//! tokenizer's pairs (ids and segments, a long document cut), and every
//! score, for BERT's head (one label and two) and RoBERTa's.

mod common;

use ken_embed::{CrossOptions, LocalCrossEncoder, Reranker};
use serde_json::Value;

fn check(layout: &str, labels: u32) {
    let dir = tempfile::tempdir().unwrap();
    common::tiny_cross_encoder(dir.path(), layout, labels);
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cases.json")).unwrap())
            .unwrap();
    let max_tokens = cases["max_tokens"].as_u64().unwrap() as usize;
    let model = LocalCrossEncoder::load(
        dir.path(),
        CrossOptions {
            max_tokens: Some(max_tokens),
            batch_size: 3, // more than one batch, sorted by length
        },
    )
    .unwrap();
    assert_eq!(model.max_tokens(), max_tokens);
    assert!(model.id().starts_with("local:"), "{}", model.id());
    let mut cut = false;
    for case in cases["cases"].as_array().unwrap() {
        let query = case["query"].as_str().unwrap();
        let docs: Vec<String> = case["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().to_string())
            .collect();
        let pairs = model.tokenize_pairs(query, &docs).unwrap();
        for (i, (ids, types)) in pairs.iter().enumerate() {
            let want_ids: Vec<u32> = serde_json::from_value(case["ids"][i].clone()).unwrap();
            let want_types: Vec<u32> = serde_json::from_value(case["types"][i].clone()).unwrap();
            assert_eq!(ids, &want_ids, "{layout}: ids of {:?}", docs[i]);
            assert_eq!(types, &want_types, "{layout}: segments of {:?}", docs[i]);
            assert!(types.contains(&1), "the document is the second segment");
            cut |= ids.len() == max_tokens;
        }
        let scores = model.score(query, &docs).unwrap();
        let want: Vec<f64> = serde_json::from_value(case["scores"].clone()).unwrap();
        assert_eq!(scores.len(), want.len());
        for (i, (&got, &want)) in scores.iter().zip(&want).enumerate() {
            assert!(
                (got as f64 - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{layout} with {labels} label(s), {:?}: {got} against NumPy's {want}",
                docs[i]
            );
        }
        // the scores are not all alike: the comparison above means something
        let spread = want.iter().cloned().fold(f64::MIN, f64::max)
            - want.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread > 0.1, "{want:?}");
    }
    assert!(cut, "one pair was longer than max_tokens and was cut");
    assert!(model.score("anything", &[]).unwrap().is_empty());
}

#[test]
fn bert_with_one_label_matches_numpy() {
    check("bert", 1);
}

#[test]
fn bert_with_two_labels_scores_the_log_odds_like_numpy() {
    check("bert", 2);
}

#[test]
fn roberta_head_matches_numpy() {
    check("roberta", 1);
}

#[test]
fn reranking_in_place_orders_by_the_models_scores() {
    let dir = tempfile::tempdir().unwrap();
    common::tiny_cross_encoder(dir.path(), "bert", 1);
    let cases: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cases.json")).unwrap())
            .unwrap();
    let model = LocalCrossEncoder::load(dir.path(), CrossOptions::default()).unwrap();
    let case = &cases["cases"][0];
    let docs: Vec<String> = serde_json::from_value(case["documents"].clone()).unwrap();
    // the default length (512, capped by the model's 64 positions) cuts nothing here
    let mut items = docs.clone();
    let query = case["query"].as_str().unwrap();
    ken_embed::rerank_in_place(&model, query, &mut items, |d| d.clone()).unwrap();
    let scores = model.score(query, &docs).unwrap();
    let mut want = docs.clone();
    want.sort_by(|a, b| {
        let s = |d: &String| scores[docs.iter().position(|x| x == d).unwrap()];
        s(b).total_cmp(&s(a))
    });
    assert_eq!(items, want);
    assert_ne!(items, docs, "the model's order differs from the input's");
}

#[test]
fn an_embedding_model_is_not_taken_for_a_reranker() {
    let err = LocalCrossEncoder::load(&common::model_dir(), CrossOptions::default()).unwrap_err();
    assert!(err.to_string().contains("not a cross-encoder"), "{err}");
    assert!(err.is_user_error(), "{err:?}");
}
