//! Every filter holds for every signal: path, language, repository,
//! author and time, in each search mode (dense hits included).

mod common;

use common::*;
use serde_json::Value;

fn results(v: &Value) -> Vec<Value> {
    v["results"].as_array().unwrap().clone()
}

/// Two repositories; `web/` and `api/` by two authors at two dates, in Python and Go.
fn fixture(ken: &Ken) -> (Repo, Repo) {
    let a = Repo::new();
    a.write(
        "web/retry.py",
        "def retry_request(send, attempts=3):\n    \"\"\"Send an HTTP request again when it fails, waiting longer each time.\"\"\"\n    for i in range(attempts):\n        try:\n            return send()\n        except IOError:\n            pass\n",
    );
    a.commit_as(
        "Ada Lovelace",
        "ada@example.com",
        "2023-01-10T10:00:00",
        "web retries",
    );
    a.write(
        "api/backoff.go",
        "package api\n\n// RetryWithBackoff calls f again after a failure, doubling the wait.\nfunc RetryWithBackoff(f func() error) error {\n\tvar err error\n\tfor i := 0; i < 5; i++ {\n\t\tif err = f(); err == nil {\n\t\t\treturn nil\n\t\t}\n\t}\n\treturn err\n}\n",
    );
    a.write(
        "api/client.py",
        "def retry_upload(blob):\n    \"\"\"Upload a blob, retrying on network errors.\"\"\"\n    return blob\n",
    );
    a.commit_as(
        "Grace Hopper",
        "grace@example.com",
        "2024-06-01T10:00:00",
        "api retries",
    );
    let b = Repo::new();
    b.write(
        "lib/retry.rs",
        "/// Retries an operation until it succeeds.\npub fn retry<T>(mut op: impl FnMut() -> Option<T>) -> T {\n    loop {\n        if let Some(v) = op() {\n            return v;\n        }\n    }\n}\n",
    );
    b.commit("rust retries");
    let idx = |r: &Repo, name: &str| {
        json_of({
            let mut c = ken.cmd_embedding();
            c.args([
                "index",
                "--json",
                r.path().to_str().unwrap(),
                "--name",
                name,
            ]);
            c
        })
    };
    idx(&a, "app");
    idx(&b, "lib");
    (a, b)
}

fn search(ken: &Ken, args: &[&str]) -> Vec<Value> {
    let mut c = ken.cmd_embedding();
    c.args(["search", "--json", "-n", "20"]).args(args);
    results(&json_of(c))
}

#[test]
fn every_filter_holds_for_every_signal_in_every_mode() {
    let ken = Ken::new();
    let _r = fixture(&ken);
    for mode in ["hybrid", "lexical", "semantic"] {
        let q = |extra: &[&str]| {
            let mut args = vec!["retry after a failure", "--mode", mode];
            args.extend_from_slice(extra);
            search(&ken, &args)
        };
        // nothing filtered: both repositories answer
        let all = q(&[]);
        assert!(all.iter().any(|r| r["repo"] == "lib"), "{mode}: {all:?}");
        assert!(all.iter().any(|r| r["path"] == "web/retry.py"), "{mode}");

        let web = q(&["--path", "web/**"]);
        assert!(!web.is_empty(), "{mode}");
        for r in &web {
            assert!(
                r["path"].as_str().unwrap().starts_with("web/"),
                "{mode} path: {r}"
            );
        }
        assert!(
            q(&["--path", "nowhere/**"]).is_empty(),
            "{mode}: a glob that matches nothing"
        );

        let go = q(&["--lang", "go"]);
        assert!(!go.is_empty(), "{mode}");
        for r in &go {
            assert_eq!(r["language"], "go", "{mode} lang: {r}");
        }

        let lib = q(&["--repo", "lib"]);
        assert!(!lib.is_empty(), "{mode}");
        for r in &lib {
            assert_eq!(r["repo"], "lib", "{mode} repo: {r}");
        }

        let grace = q(&["--repo", "app", "--author", "Grace Hopper"]);
        assert!(!grace.is_empty(), "{mode}");
        for r in &grace {
            assert!(
                r["path"].as_str().unwrap().starts_with("api/"),
                "{mode} author: {r}"
            );
        }

        let recent = q(&["--repo", "app", "--since", "2024-01-01"]);
        assert!(!recent.is_empty(), "{mode}");
        for r in &recent {
            assert!(
                r["path"].as_str().unwrap().starts_with("api/"),
                "{mode} since: {r}"
            );
        }
        let old = q(&["--repo", "app", "--until", "2023-12-31"]);
        for r in &old {
            assert_eq!(r["path"], "web/retry.py", "{mode} until: {r}");
        }
    }
}
