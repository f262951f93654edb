//! The local model against an independent NumPy implementation, and its
//! configuration, truncation and batching.

mod common;

use std::path::Path;

use ken_embed::{Backend, EmbedError, Embedder, LocalEmbedder, LocalOptions, Pooling, cosine};

#[test]
fn matches_the_numpy_reference() {
    let model = common::load(LocalOptions::default());
    let refs = common::reference();
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let got = model.embed_documents(&texts).unwrap();
    let ids = model.tokenize(&texts).unwrap();
    for ((r, v), ids) in refs.iter().zip(&got).zip(&ids) {
        assert_eq!(ids.len(), r.n_tokens, "token count of {:?}", r.text);
        let c = cosine(v, &r.vector);
        assert!(c >= 0.999, "cosine {c} for {:?}", r.text);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }
    // The well-known first values of all-MiniLM-L6-v2.
    let first = &got[0][..5];
    for (a, b) in first.iter().zip([0.0677, 0.0635, 0.0487, 0.0793, 0.0374]) {
        assert!((a - b).abs() < 5e-4, "{first:?}");
    }
    assert_eq!(model.dim(), 384);
    assert_eq!(model.max_tokens(), 256);
    assert!(
        model
            .id()
            .starts_with("local:all-MiniLM-L6-v2:53aa51172d14"),
        "{}",
        model.id()
    );
}

#[test]
fn candle_backend_agrees() {
    let fused = common::load(LocalOptions::default());
    let candle = common::load(LocalOptions {
        backend: Backend::Candle,
        ..LocalOptions::default()
    });
    let refs = common::reference();
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let a = fused.embed_documents(&texts).unwrap();
    let b = candle.embed_documents(&texts).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!(cosine(x, y) > 0.9999);
    }
    assert_eq!(fused.id(), candle.id());
}

#[test]
fn int8_dense_layers_stay_close_to_the_reference() {
    let opts = LocalOptions {
        int8: true,
        ..LocalOptions::default()
    };
    if !ken_embed::int8_available() {
        // a clear refusal, not a slow or wrong model
        let err = LocalEmbedder::load(&common::model_dir(), opts).unwrap_err();
        assert!(err.to_string().contains("AVX-512 VNNI"), "{err}");
        return;
    }
    let int8 = common::load(opts);
    let full = common::load(LocalOptions::default());
    assert_eq!(
        int8.id(),
        format!("{}:int8", full.id()),
        "int8 vectors are cached apart"
    );
    let refs = common::reference();
    let texts: Vec<&str> = refs.iter().map(|r| r.text.as_str()).collect();
    let got = int8.embed_documents(&texts).unwrap();
    let f32s = full.embed_documents(&texts).unwrap();
    for ((r, v), f) in refs.iter().zip(&got).zip(&f32s) {
        let c = cosine(v, &r.vector);
        assert!(c >= 0.99, "cosine {c} for {:?}", r.text);
        if r.n_tokens >= ken_embed::INT8_MIN_TOKENS {
            // long inputs really went through the int8 layers
            assert!(cosine(v, f) < 0.99999, "{:?} was not quantized", r.text);
        } else {
            // short ones (queries) run in f32
            assert!(cosine(v, f) > 0.99999, "{:?}", r.text);
        }
    }
    // and it still ranks by meaning
    let q = int8
        .embed_query("retry a failed request with backoff")
        .unwrap();
    let d = int8
        .embed_documents(&[
            "def retry(request, attempts):\n    for i in range(attempts):\n        sleep(2 ** i)",
            "def mix_colors(a, b):\n    return (a + b) / 2",
        ])
        .unwrap();
    assert!(cosine(&q, &d[0]) > cosine(&q, &d[1]));
}

#[test]
fn long_inputs_are_truncated_to_max_tokens() {
    let model = common::load(LocalOptions::default());
    let long = "retry the request with exponential backoff ".repeat(200);
    let ids = model.tokenize(&[&long]).unwrap();
    assert_eq!(ids[0].len(), 256);
    // Truncation keeps the start: appending more text changes nothing.
    let longer = format!("{long} and then something entirely different about databases");
    let v = model.embed_documents(&[&long, &longer]).unwrap();
    assert!(cosine(&v[0], &v[1]) > 0.99999);

    let short = common::load(LocalOptions {
        max_tokens: Some(16),
        ..LocalOptions::default()
    });
    assert_eq!(short.max_tokens(), 16);
    assert_eq!(short.tokenize(&[&long]).unwrap()[0].len(), 16);
    assert!(short.id().ends_with(":t16"), "{}", short.id());
    // Never beyond the position table.
    let huge = common::load(LocalOptions {
        max_tokens: Some(100_000),
        ..LocalOptions::default()
    });
    assert_eq!(huge.max_tokens(), 512);
}

#[test]
fn empty_input_list_and_empty_text() {
    let model = common::load(LocalOptions::default());
    assert!(model.embed_documents(&[]).unwrap().is_empty());
    let v = model.embed_query("").unwrap();
    assert_eq!(v.len(), 384);
    assert!(v.iter().all(|x| x.is_finite()));
}

#[test]
fn batches_restore_input_order() {
    let texts: Vec<String> = (0..23)
        .map(|i| format!("fn handler_{i}() {{ {} }}", "call(); ".repeat((i * 7) % 19)))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batched = common::load(LocalOptions {
        batch_size: 4,
        ..LocalOptions::default()
    });
    let all = batched.embed_documents(&refs).unwrap();
    for (i, t) in refs.iter().enumerate() {
        let one = batched.embed_query(t).unwrap();
        assert!(cosine(&one, &all[i]) > 0.99999, "text {i} out of place");
    }
}

#[test]
fn query_and_document_prefixes() {
    let plain = common::load(LocalOptions::default());
    let prefixed = common::load(LocalOptions {
        query_prefix: Some("query: ".into()),
        document_prefix: Some("passage: ".into()),
        ..LocalOptions::default()
    });
    let q = prefixed.embed_query("retry logic").unwrap();
    assert!(cosine(&q, &plain.embed_query("query: retry logic").unwrap()) > 0.99999);
    let d = prefixed.embed_documents(&["retry logic"]).unwrap();
    assert!(cosine(&d[0], &plain.embed_query("passage: retry logic").unwrap()) > 0.99999);
    assert_ne!(plain.id(), prefixed.id());
}

#[test]
fn meaning_is_captured() {
    let model = common::load(LocalOptions::default());
    let q = model
        .embed_query("how do I retry a failed HTTP request?")
        .unwrap();
    let d = model
        .embed_documents(&[
            "def fetch_with_retries(url, attempts=3):\n    for i in range(attempts):\n        try:\n            return requests.get(url)\n        except ConnectionError:\n            time.sleep(2 ** i)",
            "def render_template(name, **context):\n    return jinja_env.get_template(name).render(context)",
        ])
        .unwrap();
    assert!(ken_embed::dot(&q, &d[0]) > ken_embed::dot(&q, &d[1]));
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn pooling_config_is_parsed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    assert_eq!(
        ken_embed::read_pooling(d).unwrap(),
        Pooling::Mean,
        "absent: mean"
    );
    write(
        d,
        "1_Pooling/config.json",
        r#"{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
    );
    assert_eq!(ken_embed::read_pooling(d).unwrap(), Pooling::Cls);
    write(
        d,
        "1_Pooling/config.json",
        r#"{"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true}"#,
    );
    assert_eq!(ken_embed::read_pooling(d).unwrap(), Pooling::Mean);
    write(
        d,
        "1_Pooling/config.json",
        r#"{"pooling_mode_max_tokens": true}"#,
    );
    let e = ken_embed::read_pooling(d).unwrap_err();
    assert!(e.is_user_error() && e.to_string().contains("max"), "{e}");
    write(d, "1_Pooling/config.json", "{not json");
    assert!(matches!(
        ken_embed::read_pooling(d),
        Err(EmbedError::BadConfig(_))
    ));
}

#[test]
fn cls_pooling_uses_the_first_token() {
    // A copy of the model directory whose sentence-transformers config says CLS.
    let src = common::model_dir();
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(src.join(f), tmp.path().join(f)).unwrap();
    }
    write(
        tmp.path(),
        "1_Pooling/config.json",
        r#"{"pooling_mode_cls_token": true}"#,
    );
    write(
        tmp.path(),
        "sentence_bert_config.json",
        r#"{"max_seq_length": 128}"#,
    );
    let cls = LocalEmbedder::load(tmp.path(), LocalOptions::default()).unwrap();
    assert_eq!(cls.pooling(), Pooling::Cls);
    assert_eq!(cls.max_tokens(), 128);
    let mean = common::load(LocalOptions {
        pooling: Some(Pooling::Cls),
        max_tokens: Some(128),
        ..LocalOptions::default()
    });
    let t = "class Config: pass";
    assert!(cosine(&cls.embed_query(t).unwrap(), &mean.embed_query(t).unwrap()) > 0.99999);
    let m = common::load(LocalOptions::default())
        .embed_query(t)
        .unwrap();
    assert!(cosine(&cls.embed_query(t).unwrap(), &m) < 0.999);
}

#[test]
fn bad_model_directories_are_user_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let e = LocalEmbedder::load(tmp.path(), LocalOptions::default()).unwrap_err();
    assert!(e.is_user_error());
    assert!(e.to_string().contains("model.safetensors"), "{e}");
    let e = LocalEmbedder::load(
        &common::model_dir(),
        LocalOptions {
            batch_size: 0,
            ..LocalOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.is_user_error());
}
