//! Ranking that adapts: issue-style questions (tracebacks, paths, module
//! names) and the fusion learned from the repository's own history.

mod common;

use common::*;

/// A small shop: pricing, invoices, a CLI, docs and tests.
fn shop(r: &Repo) {
    r.write(
        "shop/pricing.py",
        "\"\"\"Prices.\"\"\"\n\n\ndef apply_discount(price, percent):\n    return price - price * percent / 100\n\n\ndef round_price(price):\n    return round(price, 2)\n",
    );
    r.write(
        "shop/invoice.py",
        "\"\"\"Invoices: totals of discounted lines.\"\"\"\n\nfrom shop.pricing import apply_discount\n\n\nclass Invoice:\n    \"\"\"An invoice with a discount on every line.\"\"\"\n\n    def total(self, lines, discount):\n        \"\"\"The total after the discount (the discount is a percent).\"\"\"\n        return sum(apply_discount(p, discount) for p in lines)\n",
    );
    r.write(
        "shop/cli.py",
        "\"\"\"Command line.\"\"\"\n\nimport sys\n\n\ndef main(argv):\n    print(\"shop\", argv)\n    return 0\n",
    );
    r.write(
        "docs/discounts.md",
        "# Discounts\n\nA discount is a percent taken off each invoice line's price.\n",
    );
    r.write(
        "tests/test_invoice.py",
        "from shop.invoice import Invoice\n\n\ndef test_total_with_discount():\n    assert Invoice().total([100], 10) == 90\n",
    );
}

const ISSUE: &str = "Invoice total is wrong with a discount over 100\n\n\
When the discount is more than 100 percent the invoice total goes negative:\n\n\
```python\nfrom shop.invoice import Invoice\nInvoice().total([10], 150)\n```\n\n\
Traceback (most recent call last):\n\
  File \"/home/me/venv/lib/python3.11/site-packages/shop/invoice.py\", line 11, in total\n\
  File \"/home/me/venv/lib/python3.11/site-packages/shop/pricing.py\", line 5, in apply_discount\n\
ValueError: negative price\n";

#[test]
fn an_issue_points_at_the_files_of_its_traceback() {
    let r = Repo::new();
    shop(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let v = ken.search(&[ISSUE, "--files"]);
    let files = paths(&v);
    // the innermost frame first, then the frame that called it; the
    // virtualenv prefix does not matter
    assert_eq!(files[..2], ["shop/pricing.py", "shop/invoice.py"], "{v}");
    let top = &v["results"][0];
    assert_eq!(top["signals"]["mention"]["rank"], 1, "{top}");
    // `Invoice` is context in a bug report, not the answer: nothing pinned
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["pinned"] == false),
        "{v}"
    );
    // relayed by a tool (`INTERNALERROR>`), or in pytest's own format
    // (outermost first, the error last), the frames still read innermost first
    let relayed: String = ISSUE
        .lines()
        .map(|l| {
            if l.starts_with("Traceback") || l.trim_start().starts_with("File") {
                format!("INTERNALERROR> {l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let pytest = "Invoice total is wrong with a discount over 100\n\n\
        When the discount is more than 100 percent the invoice total goes negative:\n\n\
        /home/me/venv/lib/python3.11/site-packages/shop/invoice.py:11: in total\n\
        /home/me/venv/lib/python3.11/site-packages/shop/pricing.py:5: in apply_discount\n\
        E   ValueError: negative price\n";
    for q in [relayed.as_str(), pytest] {
        let v = ken.search(&[q, "--files"]);
        assert_eq!(
            paths(&v)[..2],
            ["shop/pricing.py", "shop/invoice.py"],
            "{v}"
        );
        assert_eq!(v["results"][0]["signals"]["mention"]["rank"], 1, "{v}");
    }
    // the same words without the traceback: no file is pointed at
    let plain = ken.search(&["invoice total is wrong with a discount", "--files"]);
    assert!(
        plain["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["signals"].get("mention").is_none()),
        "{plain}"
    );
}

/// A history of `n` commits, each a fix or a feature in one source file
/// with a message that describes it.
fn history(r: &Repo, n: usize) {
    let topics = [
        ("shop/pricing.py", "discount rounding for prices"),
        ("shop/invoice.py", "invoice totals with discounts"),
        ("shop/cli.py", "command line arguments parsing"),
    ];
    for i in 0..n {
        let (path, words) = topics[i % topics.len()];
        let old = std::fs::read_to_string(r.path().join(path)).unwrap();
        r.write(path, format!("{old}\n\n# change {i}: {words}\n"));
        let verb = if i % 2 == 0 { "fix" } else { "improve" };
        r.commit_as(
            "Dev",
            "dev@example.com",
            &format!("2024-02-{:02}T{:02}:00:00", 1 + i / 2, 10 + i % 2),
            &format!("{verb} {words} (step {i})"),
        );
    }
}

#[test]
fn the_ranking_is_learned_from_history_shown_and_can_be_switched_off() {
    let r = Repo::new();
    shop(&r);
    r.commit("initial");
    history(&r, 45);
    let ken = Ken::new();
    let report = ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let t = &report["ranking"];
    assert!(t["questions"].as_u64().unwrap() >= 20, "{report}");
    assert_eq!(t["mode"], "lexical");
    // commit messages in prose: what is learned is not for reports with code
    assert_eq!(t["code_questions"], 0, "{t}");
    for key in [
        "mrr_default",
        "mrr_learned",
        "heldout_default",
        "heldout_learned",
    ] {
        let x = t[key].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&x), "{key}: {t}");
    }
    // adopted exactly when it did no worse on the questions it did not see
    let adopted = t["adopted"].as_bool().unwrap();
    assert_eq!(
        adopted,
        t["heldout_learned"].as_f64() >= t["heldout_default"].as_f64(),
        "{t}"
    );
    assert_eq!(adopted, !t["params"].as_object().unwrap().is_empty(), "{t}");
    // kept with the index, shown by status
    let status = ken.json(&["status", "--json"]);
    assert_eq!(status["repos"][0]["ranking"], *t, "{status}");
    let text = stdout(&ken.run(&["status"]));
    assert!(text.contains("ranking: learned from"), "{text}");
    if adopted {
        assert!(
            text.contains("not for questions with code or a traceback (0 of its questions"),
            "{text}"
        );
    }
    // nothing new in history: not learned again
    let again = ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    assert!(again.get("ranking").is_none(), "{again}");

    // the same history learns the same thing
    let other = Ken::new();
    let report2 = other.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let mut a = t.clone();
    let mut b = report2["ranking"].clone();
    for v in [&mut a, &mut b] {
        v.as_object_mut().unwrap().remove("took_ms");
    }
    assert_eq!(a, b);

    // switched off in the configuration: nothing is learned
    let off = Ken::new();
    std::fs::write(
        off.home.path().join("config.toml"),
        "learned_ranking = false\n",
    )
    .unwrap();
    let report3 = off.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    assert!(report3.get("ranking").is_none(), "{report3}");
}

#[test]
fn a_short_history_learns_nothing() {
    let r = Repo::new();
    shop(&r);
    r.commit("initial");
    history(&r, 5);
    let ken = Ken::new();
    let report = ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    assert!(report.get("ranking").is_none(), "{report}");
    let status = ken.json(&["status", "--json"]);
    assert!(status["repos"][0].get("ranking").is_none(), "{status}");
}

/// A scripted `/rerank` server on 127.0.0.1 speaking the common shape over
/// real HTTP/1.1: it scores a document 1 when it contains `favour`, else 0
/// (or answers `status` with an error body when it is not 200). Returns its
/// base URL and the request bodies it received.
fn rerank_server(
    favour: &'static str,
    status: u16,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            let mut len = 0usize;
            let mut path = String::new();
            if reader.read_line(&mut line).unwrap_or(0) > 0 {
                path = line.split_whitespace().nth(1).unwrap_or("").to_string();
            }
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            seen2.lock().unwrap().push(req.clone());
            let (code, answer) = if path != "/v1/rerank" {
                (404, serde_json::json!({"error": "no such route"}))
            } else if status != 200 {
                (status, serde_json::json!({"error": "model overloaded"}))
            } else {
                let results: Vec<serde_json::Value> = req["documents"]
                    .as_array()
                    .map(|docs| {
                        docs.iter()
                            .enumerate()
                            .map(|(i, d)| {
                                let s = if d.as_str().unwrap_or("").contains(favour) {
                                    1.0
                                } else {
                                    0.0
                                };
                                serde_json::json!({"index": i, "relevance_score": s})
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (200, serde_json::json!({ "results": results }))
            };
            let text = answer.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    (url, seen)
}

#[test]
fn a_configured_reranker_reorders_the_best_hits_and_reports_its_cost() {
    let r = Repo::new();
    shop(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let plain = ken.search(&["invoice discount total", "--files"]);
    assert_ne!(paths(&plain)[0], "tests/test_invoice.py", "{plain}");
    assert!(
        plain.get("rerank").is_none(),
        "off unless configured: {plain}"
    );

    let (url, seen) = rerank_server("tests/test_invoice.py", 200);
    std::fs::write(
        ken.home.path().join("config.toml"),
        format!("rerank_base_url = \"{url}\"\nrerank_model = \"test-reranker\"\nrerank_api_key = \"sk-rerank-secret\"\nrerank_top = 4\n"),
    )
    .unwrap();
    let v = ken.search(&["invoice discount total", "--files"]);
    // the model's favourite comes first; the cost is reported
    assert_eq!(paths(&v)[0], "tests/test_invoice.py", "{v}");
    assert_eq!(v["rerank"]["documents"], 4, "{v}");
    assert!(
        v["rerank"]["model"]
            .as_str()
            .unwrap()
            .contains("test-reranker")
    );
    assert!(v["rerank"]["ms"].is_u64());
    // the request had the common shape
    let req = seen.lock().unwrap()[0].clone();
    assert_eq!(req["model"], "test-reranker");
    assert_eq!(req["query"], "invoice discount total");
    assert_eq!(req["documents"].as_array().unwrap().len(), 4);
    // the key is never shown
    assert!(!v.to_string().contains("sk-rerank-secret"));

    // a failing reranker: the search still answers, in its own order, and says so
    let (url, _) = rerank_server("tests/test_invoice.py", 503);
    std::fs::write(
        ken.home.path().join("config.toml"),
        format!("rerank_base_url = \"{url}\"\nrerank_model = \"test-reranker\"\n"),
    )
    .unwrap();
    let v = ken.search(&["invoice discount total", "--files"]);
    assert_eq!(paths(&v), paths(&plain), "{v}");
    assert!(v.get("rerank").is_none(), "{v}");
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("reranker failed")),
        "{v}"
    );
}

#[test]
fn a_local_cross_encoder_reranks_the_best_hits_and_reports_its_cost() {
    let r = Repo::new();
    shop(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let query = ["invoice discount total price", "--files"];
    let plain = ken.search(&query);
    let before = paths(&plain);
    assert!(before.len() >= 4, "{plain}");

    let model = tempfile::tempdir().unwrap();
    let dir = model.path().join("tiny-reranker");
    tiny_cross_encoder(&dir);
    std::fs::write(
        ken.home.path().join("config.toml"),
        format!(
            "rerank_model_dir = {:?}\nrerank_top = 3\n",
            dir.to_str().unwrap()
        ),
    )
    .unwrap();
    let v = ken.search(&query);
    assert!(
        v["rerank"]["model"]
            .as_str()
            .unwrap()
            .starts_with("local:tiny-reranker:"),
        "{v}"
    );
    assert_eq!(v["rerank"]["documents"], 3, "{v}");
    assert!(v["rerank"]["ms"].is_u64());
    // the best three were reordered among themselves, the rest kept their place
    let after = paths(&v);
    let mut head = after[..3].to_vec();
    head.sort();
    let mut want = before[..3].to_vec();
    want.sort();
    assert_eq!(head, want, "{v}");
    assert_eq!(after[3..], before[3..], "{v}");
    // fewer hits asked for than the reranker reads: it still reads its three
    let v = ken.search(&["invoice discount total price", "--files", "-n", "2"]);
    assert_eq!(v["rerank"]["documents"], 3, "{v}");
    assert_eq!(paths(&v), after[..2], "{v}");

    // a model that is not a cross-encoder is a clear error, not a silent no-op
    let embed = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(dir.join(f), embed.path().join(f)).unwrap();
    }
    std::fs::write(embed.path().join("model.safetensors"), b"not safetensors").unwrap();
    std::fs::write(
        ken.home.path().join("config.toml"),
        format!("rerank_model_dir = {:?}\n", embed.path().to_str().unwrap()),
    )
    .unwrap();
    let o = ken.cmd().args(["search", "invoice"]).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("the reranker"), "{}", stderr(&o));

    // one reranker at a time
    std::fs::write(
        ken.home.path().join("config.toml"),
        format!(
            "rerank_model_dir = {:?}\nrerank_base_url = \"http://127.0.0.1:9/v1\"\n",
            dir.to_str().unwrap()
        ),
    )
    .unwrap();
    let o = ken.cmd().args(["search", "invoice"]).output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("keep one reranker"), "{}", stderr(&o));
}

/// `ken eval` of one question about the shop, whose answer is
/// `shop/pricing.py`, lexical, with one ranking constant set.
fn eval_one(ken: &Ken, r: &Repo, sha: &str, query: &str, param: &str) -> serde_json::Value {
    let set = ken.home.path().join("q.jsonl");
    std::fs::write(
        &set,
        format!(
            "{}\n",
            serde_json::json!({"id": "q1", "repo": "shop", "base_sha": sha,
                "query": query, "gold_files": ["shop/pricing.py"]})
        ),
    )
    .unwrap();
    let repo = format!("shop={}", r.path().display());
    ken.json(&[
        "eval",
        set.to_str().unwrap(),
        "--repo",
        &repo,
        "--mode",
        "lexical",
        "--param",
        param,
        "--json",
    ])
}

#[test]
fn the_graph_neighbourhood_list_runs_when_switched_on() {
    // off by default (BENCHMARKS §1); `--param w_ppr=…` turns it on for a run
    let r = Repo::new();
    shop(&r);
    let sha = r.commit("initial");
    let ken = Ken::new();
    for ppr in ["0", "1"] {
        let v = eval_one(
            &ken,
            &r,
            &sha,
            "invoice total with a discount",
            &format!("w_ppr={ppr}"),
        );
        assert_eq!(v["overall"]["queries"], 1, "{v}");
        // pricing.py is where invoice.py's discount comes from: in the top 10 either way
        assert!(
            v["overall"]["recall@10"].as_f64().unwrap() > 0.99,
            "w_ppr={ppr}: {v}"
        );
    }
}

#[test]
fn a_report_is_read_without_the_lines_of_the_repository_issue_template() {
    let r = Repo::new();
    shop(&r);
    r.write(
        ".github/ISSUE_TEMPLATE/bug_report.md",
        "---\nname: Bug report\nabout: Report something that does not work\n---\n\n\
**Describe the bug**\nA clear and concise description of what the bug is.\n\n\
**Steps to reproduce**\n\n\
**Expected behavior**\nA clear and concise description of what you expected to happen.\n\n\
**Environment**\n",
    );
    // a file whose words are the template's: every report would match it
    r.write(
        "shop/bugs.py",
        "\"\"\"Bug reports: describe the bug, the steps to reproduce it and the expected behavior.\"\"\"\n\n\n\
def describe_bug(steps_to_reproduce, expected_behavior, environment):\n    \
\"\"\"A clear and concise description of what the bug is and what you expected to happen.\"\"\"\n    \
return {\"steps\": steps_to_reproduce, \"expected\": expected_behavior, \"environment\": environment}\n",
    );
    let sha = r.commit("initial");
    let report = "Prices lose their cents\n\n\
**Describe the bug**\nA clear and concise description of what the bug is.\n\
The total drops the cents of a price.\n\n\
**Steps to reproduce**\nround a price of 10.25\n\n\
**Expected behavior**\nA clear and concise description of what you expected to happen.\n\n\
**Environment**\n";
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let v = ken.search(&[report, "--files"]);
    assert_eq!(paths(&v)[0], "shop/pricing.py", "{v}");
    assert!(!paths(&v).contains(&"shop/bugs.py".to_string()), "{v}");
    // status names the templates it reads
    let status = ken.json(&["status", "--json"]);
    assert_eq!(
        status["repos"][0]["issue_templates"],
        serde_json::json!([".github/ISSUE_TEMPLATE/bug_report.md"]),
        "{status}"
    );
    let text = stdout(&ken.run(&["status"]));
    assert!(
        text.contains("issue templates: .github/ISSUE_TEMPLATE/bug_report.md"),
        "{text}"
    );

    // read whole (`issue_template_out=0`), the template's words win
    let mrr = |out: &str| {
        let v = eval_one(&ken, &r, &sha, report, &format!("issue_template_out={out}"));
        v["overall"]["mrr@10"].as_f64().unwrap()
    };
    assert_eq!(mrr("1"), 1.0);
    assert!(mrr("0") < 1.0);
}

/// The shop's modules, each defining two functions, and a manual of
/// Sphinx pages whose sections cross-reference them.
const MODULES: &[(&str, &str, &str, &str)] = &[
    (
        "pricing",
        "apply_discount",
        "round_price",
        "discount prices rounding",
    ),
    (
        "invoice",
        "invoice_total",
        "invoice_lines",
        "invoice totals lines",
    ),
    ("tax", "add_tax", "tax_rate", "tax rates countries"),
    (
        "shipping",
        "ship_cost",
        "pick_carrier",
        "shipping carriers parcels",
    ),
    (
        "stock",
        "reserve_stock",
        "release_stock",
        "stock reservations warehouse",
    ),
    (
        "refund",
        "issue_refund",
        "refund_window",
        "refunds returned orders",
    ),
    (
        "coupon",
        "redeem_coupon",
        "coupon_expiry",
        "coupons codes campaigns",
    ),
    (
        "loyalty",
        "award_points",
        "points_balance",
        "loyalty points members",
    ),
];

fn manual(r: &Repo) {
    for (module, f, g, words) in MODULES {
        r.write(
            &format!("shop/{module}.py"),
            format!(
                "\"\"\"{words}.\"\"\"\n\n\ndef {f}(order):\n    \"\"\"Work out {words} for an order.\"\"\"\n    return order\n\n\ndef {g}(order):\n    \"\"\"The {words} of one order.\"\"\"\n    return order\n"
            ),
        );
        let mut page = format!(
            "{0}\n{1}\n\n",
            module.to_uppercase(),
            "=".repeat(module.len())
        );
        for (i, title) in [
            "How the {w} are computed",
            "Changing the {w} of an order",
            "Where the {w} come from",
            "Checking the {w} in tests",
        ]
        .iter()
        .enumerate()
        {
            let title = title.replace("{w}", words.split(' ').next().unwrap());
            let target = if i % 2 == 0 { f } else { g };
            page.push_str(&format!(
                "{title}\n{}\n\nCall :func:`shop.{module}.{target}` with the order; it handles {words}.\n\n",
                "-".repeat(title.len())
            ));
        }
        r.write(&format!("docs/{module}.rst"), page);
    }
}

#[test]
fn the_documentation_teaches_questions_like_its_headings_and_an_evaluation_never_learns_its_own() {
    let r = Repo::new();
    shop(&r);
    manual(&r);
    r.commit("initial");
    history(&r, 45);
    let head = r.git(&["rev-parse", "HEAD"]).trim().to_string();
    let ken = Ken::new();
    // off (the default): the documentation is not read
    let off = ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    assert!(off["ranking"]["adopted"].is_boolean(), "{off}");
    assert!(off["ranking"].get("docs").is_none(), "{off}");
    assert!(off["ranking"].get("docs_read").is_none(), "{off}");
    // switched on: the next index run learns the ranking again, with it
    let config = ken.home.path().join("config.toml");
    std::fs::write(&config, "learned_docs = true\n").unwrap();
    let report = ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    assert_eq!(report["ranking"]["docs_read"], true, "{report}");
    let d = &report["ranking"]["docs"];
    // 8 pages × 4 sections, each pointing at one function of one module
    assert_eq!(d["questions"], 32, "{report}");
    assert_eq!(d["pages"], 8, "{d}");
    assert!(d["answerable"].as_u64().unwrap() >= 20, "{d}");
    let chosen = d["chosen"].as_str().unwrap();
    assert!(["default", "commits", "docs"].contains(&chosen), "{d}");
    for key in ["heldout_default", "heldout_commits", "heldout_learned"] {
        let x = d[key].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&x), "{key}: {d}");
    }
    // the best held out serves such questions; ties keep the defaults
    let (def, com, own) = (
        d["heldout_default"].as_f64().unwrap(),
        d["heldout_commits"].as_f64().unwrap(),
        d["heldout_learned"].as_f64().unwrap(),
    );
    let best = match chosen {
        "docs" => own > def.max(com),
        "commits" => com > def && com >= own,
        _ => def >= com && def >= own,
    };
    assert!(best, "{d}");
    // the router's words are counted on the wire, not listed
    assert!(d.get("router").is_none(), "{d}");
    assert!(d["router_words"].as_u64().is_some(), "{d}");
    let text = stdout(&ken.run(&["status"]));
    assert!(
        text.contains("documentation: 32 sections of 8 pages as questions"),
        "{text}"
    );
    assert!(text.contains("questions like them get "), "{text}");
    // nothing new: not learned again
    let again = ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    assert!(again.get("ranking").is_none(), "{again}");

    // an evaluation asking two of the headings: no section of their pages
    // is learned from while it runs (each question gets what was learned
    // without its page; what is stored, without either)
    let set = ken.home.path().join("docs.jsonl");
    let lines: Vec<String> = [
        ("How the discount are computed", "shop/pricing.py"),
        ("Where the tax come from", "shop/tax.py"),
    ]
    .iter()
    .enumerate()
    .map(|(i, (q, gold))| {
        serde_json::json!({"id": format!("d{i}"), "repo": "shop", "base_sha": head,
            "query": q, "gold_files": [gold]})
        .to_string()
    })
    .collect();
    std::fs::write(&set, lines.join("\n") + "\n").unwrap();
    let repo = format!("shop={}", r.path().display());
    let eval = |set: &std::path::Path, with_path: bool, param: &str| {
        let mut args = vec!["eval", set.to_str().unwrap()];
        if with_path {
            args.extend(["--repo", &repo]);
        }
        args.extend(["--mode", "lexical", "--param", param, "--json"]);
        ken.json(&args)
    };
    // switched off for the run: nothing is learned again
    let off = eval(&set, true, "learned_docs=0");
    assert_eq!(off["overall"]["queries"], 2, "{off}");
    let status = ken.json(&["status", "--json"]);
    assert_eq!(status["repos"][0]["ranking"]["docs"]["questions"], 32);
    let v = eval(&set, true, "learned_docs=1");
    assert_eq!(v["overall"]["queries"], 2, "{v}");
    let status = ken.json(&["status", "--json"]);
    let after = &status["repos"][0]["ranking"]["docs"];
    assert_eq!(after["questions"], 24, "{status}");
    assert_eq!(after["pages"], 6, "{status}");
    // the commits' part is as it was
    let mut a = report["ranking"].clone();
    let mut b = status["repos"][0]["ranking"].clone();
    for v in [&mut a, &mut b] {
        let o = v.as_object_mut().unwrap();
        o.remove("docs");
        o.remove("took_ms");
    }
    assert_eq!(a, b);

    // an evaluation of the index as it stands (no path given) reads it and
    // leaves it as it is
    let stock = ken.home.path().join("stock.jsonl");
    std::fs::write(
        &stock,
        serde_json::json!({"id": "s0", "repo": "shop", "base_sha": head,
            "query": "How the stock are computed", "gold_files": ["shop/stock.py"]})
        .to_string()
            + "\n",
    )
    .unwrap();
    let v = eval(&stock, false, "learned_docs=1");
    assert_eq!(v["overall"]["queries"], 1, "{v}");
    let status = ken.json(&["status", "--json"]);
    assert_eq!(status["repos"][0]["ranking"]["docs"]["questions"], 24);
    // switched off again: status says what switching it on would do
    std::fs::remove_file(&config).unwrap();
    let text = stdout(&ken.run(&["status"]));
    assert!(
        text.contains("questions like them would get (with `learned_docs = true`)"),
        "{text}"
    );
}
