//! Static vs full model on a small retrieval task: 20 questions about flask's
//! source, each with the definition that answers it; every chunk of
//! `src/flask/**.py` is a candidate. Prints the rank of the relevant chunk for
//! each embedder, and MRR / recall@1 / recall@10.
//!
//! ```text
//! target/release/examples/quality [--model DIR] [--flask GIT_DIR] [--static FILE]
//! ```

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod support;

use std::path::PathBuf;

use ken_embed::{Embedder, LocalEmbedder, LocalOptions, StaticEmbedder, dot};

/// (question, file under src/flask/, definition name).
const CASES: &[(&str, &str, &str)] = &[
    (
        "load configuration values from a python file",
        "config.py",
        "from_pyfile",
    ),
    (
        "read settings from environment variables that start with a prefix",
        "config.py",
        "from_prefixed_env",
    ),
    (
        "sign the session cookie with the secret key",
        "sessions.py",
        "get_signing_serializer",
    ),
    (
        "send a file from a directory without allowing path traversal",
        "helpers.py",
        "send_from_directory",
    ),
    (
        "build the URL for an endpoint with arguments",
        "helpers.py",
        "url_for",
    ),
    (
        "stop the request with an HTTP error status code",
        "helpers.py",
        "abort",
    ),
    (
        "store a message to show to the user on the next page",
        "helpers.py",
        "flash",
    ),
    (
        "register a blueprint on the application",
        "sansio/app.py",
        "register_blueprint",
    ),
    (
        "handle an exception raised while handling a request and pick an error handler",
        "app.py",
        "handle_user_exception",
    ),
    ("start the local development server", "app.py", "run"),
    (
        "find the application object in an imported module for the command line",
        "cli.py",
        "find_best_app",
    ),
    (
        "load environment variables from .env files",
        "cli.py",
        "load_dotenv",
    ),
    (
        "convert dates, UUIDs and dataclasses to JSON",
        "json/provider.py",
        "_default",
    ),
    (
        "render a template with the given context",
        "templating.py",
        "render_template",
    ),
    (
        "stream a rendered template as a response in pieces",
        "templating.py",
        "stream_template",
    ),
    (
        "client for sending requests to the app in tests",
        "testing.py",
        "FlaskClient",
    ),
    (
        "push the application context so current_app works",
        "ctx.py",
        "push",
    ),
    (
        "match the request URL and call the view function",
        "app.py",
        "dispatch_request",
    ),
    (
        "class based view that dispatches on the HTTP method",
        "views.py",
        "MethodView",
    ),
    (
        "serialize tuples, bytes and markup in the session so their types survive",
        "json/tag.py",
        "TaggedJSONSerializer",
    ),
];

fn ranks(e: &dyn Embedder, chunks: &[support::Chunk]) -> Vec<usize> {
    let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
    let docs = e.embed_documents(&texts).unwrap();
    CASES
        .iter()
        .map(|(q, file, name)| {
            let qv = e.embed_query(q).unwrap();
            let mut scored: Vec<(f32, usize)> = docs.iter().map(|d| dot(&qv, d)).zip(0..).collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            let path = format!("src/flask/{file}");
            scored
                .iter()
                .position(|&(_, i)| chunks[i].path == path && chunks[i].name == *name)
                .map(|p| p + 1)
                .unwrap_or_else(|| panic!("no chunk {path}:{name}"))
        })
        .collect()
}

fn summary(r: &[usize]) -> String {
    let n = r.len() as f64;
    let mrr = r
        .iter()
        .map(|&k| if k <= 10 { 1.0 / k as f64 } else { 0.0 })
        .sum::<f64>()
        / n;
    let at = |k| r.iter().filter(|&&x| x <= k).count() as f64 / n;
    format!(
        "MRR@10 {mrr:.3}, recall@1 {:.2}, recall@10 {:.2}, median rank {}",
        at(1),
        at(10),
        {
            let mut s = r.to_vec();
            s.sort();
            s[s.len() / 2]
        }
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = support::model_dir(&args);
    let flask = support::flask_git_dir(&args);
    let chunks = support::python_chunks(&flask);
    let full = LocalEmbedder::load(&dir, LocalOptions::default()).unwrap();
    let table = support::arg(&args, "--static")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::temp_dir()
                .join("ken-bench-static")
                .join("minilm-256.safetensors")
        });
    if !table.is_file() {
        ken_embed::distill(&full, &table, 256).unwrap();
    }
    let st = StaticEmbedder::load(&table, &dir.join("tokenizer.json")).unwrap();
    let rf = ranks(&full, &chunks);
    let rs = ranks(&st, &chunks);
    println!(
        "{} candidate chunks from {}\n",
        chunks.len(),
        flask.display()
    );
    println!("| question | relevant | full | static |");
    println!("|---|---|---|---|");
    for ((q, file, name), (a, b)) in CASES.iter().zip(rf.iter().zip(&rs)) {
        println!("| {q} | {file}:{name} | {a} | {b} |");
    }
    println!("\nfull ({}): {}", full.id(), summary(&rf));
    println!("static ({}): {}", st.id(), summary(&rs));
}
