//! `ken eval`: metrics over a JSONL set, computed by hand for a fixture.

mod common;

use common::*;

/// A JSONL evaluation set of these lines, in a temporary file.
fn eval_set(lines: &[serde_json::Value]) -> tempfile::NamedTempFile {
    let set = tempfile::NamedTempFile::new().unwrap();
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    std::fs::write(set.path(), text).unwrap();
    set
}

#[test]
fn metrics_match_a_hand_computation() {
    let r = Repo::new();
    python_project(&r);
    let base = r.commit("initial");
    let lines = [
        serde_json::json!({"id": "q1", "repo": "shop", "base_sha": base, "query": "refresh_token",
            "gold_files": ["src/shop/session.py"],
            "gold_symbols": [{"path": "src/shop/session.py", "name": "refresh_token", "qualname": "SessionStore.refresh_token", "kind": "method", "start": 12, "end": 16}]}),
        serde_json::json!({"id": "q2", "repo": "shop", "base_sha": base, "query": "retry a payment with backoff",
            "gold_files": ["src/shop/payments.py"]}),
        serde_json::json!({"id": "q3", "repo": "shop", "base_sha": base, "query": "zzzz qqqq",
            "gold_files": ["src/shop/payments.py"]}),
    ];
    let set = eval_set(&lines);
    let per_query = tempfile::NamedTempFile::new().unwrap();
    let ken = Ken::new();
    let repo_arg = format!("shop={}", r.path().display());
    let out = ken.run(&[
        "eval",
        set.path().to_str().unwrap(),
        "--repo",
        &repo_arg,
        "--per-query",
        per_query.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["repos"]["shop"];
    assert_eq!(m["queries"], 3);
    // q1 and q2 rank their gold file first, q3 finds nothing
    assert_eq!(m["mrr@10"], 0.667);
    assert_eq!(m["recall@1"], 0.667);
    assert_eq!(m["acc@5"], 0.667);
    assert_eq!(m["p@5"], 0.133);
    assert_eq!(m["symbol_hit@1"], 1.0);
    assert!(m["p50_ms"].is_number() && m["p95_ms"].is_number());
    assert_eq!(v["overall"]["queries"], 3);
    let per: Vec<serde_json::Value> = std::fs::read_to_string(per_query.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(per.len(), 3);
    assert_eq!(per[0]["files"][0], "src/shop/session.py");
    // what `ken ask` would give its model: q1's gold method and q2's gold
    // file are in it, q3 finds nothing
    assert_eq!(m["context_recall"], 0.667, "{m}");
    assert_eq!(
        per.iter()
            .map(|p| p["context_hit"].clone())
            .collect::<Vec<_>>(),
        [true, true, false]
    );
    assert_eq!(per[2]["context_files"], 0);
    assert!(per[0]["context_files"].as_u64().unwrap() >= 1);

    // the baseline mode runs on the same index
    let out = ken.run(&[
        "eval",
        set.path().to_str().unwrap(),
        "--repo",
        &repo_arg,
        "--mode",
        "baseline",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["mode"], "baseline");
    assert!(v["repos"]["shop"].get("symbol_hit@1").is_none());
}

#[test]
fn bad_eval_input() {
    let ken = Ken::new();
    let set = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(set.path(), "{not json}\n").unwrap();
    let out = ken.run(&["eval", set.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(":1: not an eval query"),
        "{}",
        stderr(&out)
    );
    let out = ken.run(&["eval", "/no/such.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_failed_index_step_is_recorded_and_the_run_goes_on() {
    let r = Repo::new();
    python_project(&r);
    let base = r.commit("initial");
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let lines = [
        // a commit the repository does not have: its index step fails
        serde_json::json!({"id": "gone", "repo": "shop", "base_sha": missing, "query": "refresh_token",
            "gold_files": ["src/shop/session.py"]}),
        serde_json::json!({"id": "q1", "repo": "shop", "base_sha": base, "query": "refresh_token",
            "gold_files": ["src/shop/session.py"]}),
        // a repository whose path does not exist
        serde_json::json!({"id": "lost", "repo": "lost", "base_sha": base, "query": "anything",
            "gold_files": ["a.py"]}),
    ];
    let set = eval_set(&lines);
    let per_query = tempfile::NamedTempFile::new().unwrap();
    let ken = Ken::new();
    let shop = format!("shop={}", r.path().display());
    let out = ken.run(&[
        "eval",
        set.path().to_str().unwrap(),
        "--repo",
        &shop,
        "--repo",
        "lost=/no/such/repository",
        "--per-query",
        per_query.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("index step failed"),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // every query is counted; the failed ones as misses
    assert_eq!(v["overall"]["queries"], 3, "{v}");
    assert_eq!(v["repos"]["shop"]["queries"], 2, "{v}");
    assert_eq!(v["repos"]["shop"]["mrr@10"], 0.5, "{v}");
    assert_eq!(v["repos"]["lost"]["mrr@10"], 0.0, "{v}");
    let failed = v["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 2, "{v}");
    assert!(failed.iter().any(
        |f| f["commit"] == missing && f["error"].as_str().unwrap().contains("unknown revision")
    ));
    assert!(failed.iter().any(|f| f["repo"] == "lost"
        && f["error"].as_str().unwrap().contains("does not exist")));
    let per = std::fs::read_to_string(per_query.path()).unwrap();
    let gone: serde_json::Value = per
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|q| q["id"] == "gone")
        .unwrap();
    assert!(gone["error"].is_string(), "{gone}");
}

#[test]
fn across_repos_moves_a_repository_through_its_commits_and_reports_the_named_figures() {
    // shop: its questions name two commits; the second adds refunds
    let shop = Repo::new();
    python_project(&shop);
    let first = shop.commit_as("Ann", "ann@example.com", "2024-01-02T10:00:00", "initial");
    shop.write(
        "src/shop/refunds.py",
        "\"\"\"Refunds.\"\"\"\n\n\ndef issue_refund(order, amount):\n    \"\"\"Give the customer back part of an order's amount.\"\"\"\n    order.refunded += amount\n    return order\n",
    );
    let second = shop.commit_as("Ann", "ann@example.com", "2024-02-02T10:00:00", "refunds");
    // blog: a repository about something else
    let blog = Repo::new();
    blog.write(
        "blog/render.py",
        "\"\"\"Markdown pages.\"\"\"\n\n\ndef render_markdown_page(source):\n    \"\"\"Turn a markdown page into html with headings and links.\"\"\"\n    return markdown_to_html(source)\n",
    );
    let blog_head = blog.commit("pages");
    // garden: a distractor without questions, indexed at its head
    let garden = Repo::new();
    garden.write(
        "garden/water.py",
        "def water_plants(bed):\n    \"\"\"Water every plant of a garden bed.\"\"\"\n    for plant in bed:\n        plant.water()\n",
    );
    garden.commit("watering");
    let lines = [
        serde_json::json!({"id": "s1", "repo": "shop", "base_sha": second, "query": "issue a refund for an order",
            "gold_files": ["src/shop/refunds.py"]}),
        serde_json::json!({"id": "s2", "repo": "shop", "base_sha": first, "query": "retry a payment with backoff",
            "gold_files": ["src/shop/payments.py"]}),
        serde_json::json!({"id": "b1", "repo": "blog", "base_sha": blog_head, "query": "render a markdown page into html",
            "gold_files": ["blog/render.py"]}),
    ];
    let set = eval_set(&lines);
    let per_query = tempfile::NamedTempFile::new().unwrap();
    let ken = Ken::new();
    let arg = |name: &str, r: &Repo| format!("{name}={}", r.path().display());
    let (a, b, c) = (
        arg("shop", &shop),
        arg("blog", &blog),
        arg("garden", &garden),
    );
    let out = ken.run(&[
        "eval",
        set.path().to_str().unwrap(),
        "--mode",
        "lexical",
        "--across-repos",
        "--repo",
        &a,
        "--repo",
        &b,
        "--repo",
        &c,
        "--per-query",
        per_query.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["overall"]["queries"], 3, "{v}");
    assert_eq!(v["overall"]["right_repo@1"], 1.0, "{v}");
    // refunds.py exists only at the second commit: shop was at the first
    // for s2 (the older), then moved to the second for s1
    assert_eq!(v["repos"]["shop"]["mrr@10"], 1.0, "{v}");
    assert_eq!(v["repos"]["blog"]["mrr@10"], 1.0, "{v}");
    // the same questions asked of their own repository, in the same run
    let named = &v["named"];
    assert_eq!(named["overall"]["queries"], 3, "{v}");
    assert_eq!(named["repos"]["shop"]["queries"], 2, "{v}");
    assert_eq!(named["repos"]["shop"]["mrr@10"], 1.0, "{v}");
    assert!(named["overall"].get("right_repo@1").is_none(), "{v}");
    assert_eq!(named["mrr@10_ratio"], 1.0, "{v}");
    // the ranked files name their repository
    let per: Vec<serde_json::Value> = std::fs::read_to_string(per_query.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let s1 = per.iter().find(|p| p["id"] == "s1").unwrap();
    assert_eq!(s1["files"][0], "shop:src/shop/refunds.py", "{s1}");
    assert_eq!(s1["right_repo"], true, "{s1}");
    // the distractor is in the home, at its head
    let status = ken.json(&["status", "--json"]);
    let names: Vec<&str> = status["repos"]
        .as_array()
        .unwrap_or_else(|| panic!("{status}"))
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(names.contains(&"garden"), "{status}");
}

#[test]
fn across_repos_refuses_what_it_cannot_measure() {
    let r = Repo::new();
    python_project(&r);
    let base = r.commit("initial");
    let line = serde_json::json!({"id": "q", "repo": "shop", "base_sha": base, "query": "refresh_token",
        "gold_files": ["src/shop/session.py"]});
    let set = eval_set(&[line]);
    let shop = format!("shop={}", r.path().display());
    let ken = Ken::new();
    for (extra, says) in [
        ("--at-parent", "--at-parent"),
        ("--mode=baseline", "no routing"),
    ] {
        let out = ken.run(&[
            "eval",
            set.path().to_str().unwrap(),
            "--across-repos",
            extra,
            "--repo",
            &shop,
        ]);
        assert!(!out.status.success(), "{extra}");
        assert!(stderr(&out).contains(says), "{extra}: {}", stderr(&out));
    }
}

/// `--who`: each question's author is looked for in `ken who`, among the
/// repository's most active authors and among the gold files'; the
/// per-query lines say where, and whether the author could be found.
#[test]
fn who_finds_each_questions_author_and_says_where() {
    let r = Repo::new();
    python_project(&r);
    r.remove("src/shop/payments.py");
    r.commit_as(
        "Ada",
        "ada@example.com",
        "2024-01-02T10:00:00",
        "Session tokens",
    );
    python_project(&r);
    let base = r.commit_as(
        "Bob",
        "bob@example.com",
        "2024-01-03T10:00:00",
        "Retry payments with backoff",
    );
    let q = |id: &str, query: &str, gold: &str, name: &str| {
        serde_json::json!({"id": id, "repo": "shop", "base_sha": base, "query": query,
            "gold_files": [gold], "author_name": name,
            "author_email": format!("{}@example.com", name.to_lowercase())})
    };
    let lines = [
        q(
            "q1",
            "refresh the session token",
            "src/shop/session.py",
            "Ada",
        ),
        q(
            "q2",
            "retry a failed payment",
            "src/shop/payments.py",
            "Bob",
        ),
        q(
            "q3",
            "retry a failed payment",
            "src/shop/payments.py",
            "Zed",
        ),
    ];
    let set = eval_set(&lines);
    let per_query = tempfile::NamedTempFile::new().unwrap();
    let ken = Ken::new();
    let repo_arg = format!("shop={}", r.path().display());
    let out = ken.run(&[
        "eval",
        set.path().to_str().unwrap(),
        "--repo",
        &repo_arg,
        "--who",
        "--per-query",
        per_query.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let who = &v["who"]["overall"];
    assert_eq!(who["queries"], 3, "{who}");
    assert_eq!(who["answerable"], 2, "Zed has no commit: {who}");
    assert_eq!(who["on_answerable"]["ken_who"]["hit@1"], 1.0, "{who}");
    assert_eq!(who["ken_who"]["hit@1"], 0.667, "{who}");
    let per: Vec<serde_json::Value> = std::fs::read_to_string(per_query.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |id: &str| per.iter().find(|p| p["id"] == id).unwrap()["who"].clone();
    assert_eq!(of("q1")["ranks"][0], 1, "{per:?}");
    assert_eq!(of("q1")["ranks"][2], 1, "Ada is session.py's only author");
    assert_eq!(of("q2")["ranks"][0], 1, "{per:?}");
    assert_eq!(of("q3")["answerable"], false);
    assert!(of("q3")["ranks"][0].is_null());
}
