//! Distilling the default model into a static table, and using it.

mod common;

use ken_embed::{Embedder, LocalOptions, StaticEmbedder, distill, dot};

#[test]
fn distilled_table_embeds_sensibly() {
    let local = common::load(LocalOptions::default());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("static").join("minilm-256.safetensors");
    let report = distill(&local, &out, 256).unwrap();
    assert!(out.is_file() && report.metadata.is_file());
    assert_eq!(report.meta.dims, 256);
    assert_eq!(report.meta.vocab_size, 30522);
    let ev = report.meta.pca_explained_variance;
    assert!(ev > 0.5 && ev <= 1.0 + 1e-9, "explained variance {ev}");

    let st = StaticEmbedder::load(&out, &common::model_dir().join("tokenizer.json")).unwrap();
    assert_eq!(st.dim(), 256);
    assert_eq!(st.id(), format!("static:{}:pca256", local.id()));

    let q = st
        .embed_query("how to retry a failed network request")
        .unwrap();
    let docs = st
        .embed_documents(&[
            "retrying failed network requests after an error",
            "the recipe needs two cups of flour and an egg",
            "",
        ])
        .unwrap();
    assert!(
        dot(&q, &docs[0]) > dot(&q, &docs[1]) + 0.1,
        "paraphrase {} vs unrelated {}",
        dot(&q, &docs[0]),
        dot(&q, &docs[1])
    );
    assert!((dot(&docs[0], &docs[0]) - 1.0).abs() < 1e-5);
    assert!(docs[2].iter().all(|&x| x == 0.0), "no tokens: zero vector");

    let e = distill(&local, &tmp.path().join("x.safetensors"), 1000).unwrap_err();
    assert!(e.is_user_error());
}
