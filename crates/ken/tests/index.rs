//! `ken index`: sources, incremental updates, skips and reports.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn working_tree_then_search() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    let rep = ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    assert_eq!(rep["worktree"], true);
    assert_eq!(rep["files"], 3);
    assert_eq!(rep["added"], 3);
    let v = ken.search(&["refresh_token"]);
    assert_eq!(paths(&v)[0], "src/shop/session.py");
    assert_eq!(v["results"][0]["pinned"], true);
}

#[test]
fn uncommitted_edits_are_indexed() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    r.write(
        "src/shop/refunds.py",
        "def issue_refund(order):\n    return order.total\n",
    );
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let v = ken.search(&["issue_refund"]);
    assert_eq!(paths(&v)[0], "src/shop/refunds.py");
}

#[test]
fn bare_repository_at_a_revision() {
    let r = Repo::new();
    python_project(&r);
    let first = r.commit("initial");
    r.write("src/shop/later.py", "def added_later():\n    pass\n");
    r.commit("later");
    let bare = tempfile::tempdir().unwrap();
    let bare_path = bare.path().join("shop.git");
    let out = std::process::Command::new("git")
        .args([
            "clone",
            "-q",
            "--bare",
            r.path().to_str().unwrap(),
            bare_path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let ken = Ken::new();
    let rep = ken.index(&[bare_path.to_str().unwrap(), "--rev", &first]);
    assert_eq!(rep["name"], "shop");
    assert_eq!(rep["commit"], first.as_str());
    assert_eq!(rep["worktree"], false);
    let v = ken.search(&["added_later"]);
    assert!(
        !paths(&v).contains(&"src/shop/later.py".to_string()),
        "file of a later commit: {v}"
    );
    // HEAD of a bare repository by default
    let rep = ken.index(&[bare_path.to_str().unwrap()]);
    assert_eq!(rep["added"], 1);
    let v = ken.search(&["added_later"]);
    assert_eq!(paths(&v)[0], "src/shop/later.py");
}

#[test]
fn incremental_between_commits() {
    let r = Repo::new();
    python_project(&r);
    r.write(
        "src/shop/old_name.py",
        "def legacy_discount(price):\n    return price * 0.9\n",
    );
    r.write(
        "src/shop/doomed.py",
        "def doomed_function():\n    return 42\n",
    );
    let c1 = r.commit("one");
    r.write(
        "src/shop/payments.py",
        "def charge_card(card):\n    return card.charge()\n",
    );
    r.git(&["mv", "src/shop/old_name.py", "src/shop/new_name.py"]);
    r.remove("src/shop/doomed.py");
    r.write(
        "src/shop/cart.py",
        "def add_to_cart(cart, item):\n    cart.append(item)\n",
    );
    let c2 = r.commit("two");

    let ken = Ken::new();
    let p = r.path().to_str().unwrap();
    let rep = ken.index(&[p, "--rev", &c1, "--name", "shop"]);
    assert_eq!(rep["processed"], 5);
    // searchable before history and blame, so never after the run's end
    let searchable = rep["searchable_ms"].as_u64().unwrap();
    assert!(searchable <= rep["elapsed_ms"].as_u64().unwrap(), "{rep}");
    let rep = ken.index(&[p, "--rev", &c1, "--name", "shop"]);
    assert_eq!(rep["up_to_date"], true);
    assert_eq!(rep["processed"], 0);
    assert!(rep.get("searchable_ms").is_none(), "{rep}");

    let rep = ken.index(&[p, "--rev", &c2, "--name", "shop"]);
    assert_eq!(rep["up_to_date"], false);
    assert_eq!(rep["modified"], 1, "{rep}");
    assert_eq!(rep["added"], 1, "{rep}");
    assert_eq!(rep["renamed"], 1, "{rep}");
    assert_eq!(rep["deleted"], 1, "{rep}");
    assert_eq!(rep["processed"], 3, "only the files the diff names: {rep}");
    assert_eq!(rep["files"], 5);

    // deleted files leave nothing behind; renamed files answer at their new path
    let v = ken.search(&["doomed_function"]);
    assert!(!paths(&v).iter().any(|p| p.contains("doomed")), "{v}");
    let v = ken.search(&["legacy_discount"]);
    assert_eq!(paths(&v)[0], "src/shop/new_name.py");
    let v = ken.search(&["retry_payment"]);
    assert!(
        !paths(&v).contains(&"src/shop/payments.py".to_string())
            || v["results"][0]["pinned"] == false
    );
    let v = ken.search(&["charge_card"]);
    assert_eq!(paths(&v)[0], "src/shop/payments.py");

    // and back again
    let rep = ken.index(&[p, "--rev", &c1, "--name", "shop"]);
    assert_eq!(rep["processed"], 3, "{rep}");
    let v = ken.search(&["doomed_function"]);
    assert_eq!(paths(&v)[0], "src/shop/doomed.py");
}

#[test]
fn working_tree_reparses_only_changed_files() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    let p = r.path().to_str().unwrap();
    let rep = ken.index(&[p]);
    assert_eq!(rep["processed"], 3);
    let rep = ken.index(&[p]);
    assert_eq!(rep["processed"], 0);
    r.write(
        "src/shop/session.py",
        "def only_this_changed():\n    pass\n",
    );
    let rep = ken.index(&[p]);
    assert_eq!(rep["processed"], 1);
    assert_eq!(rep["modified"], 1);
}

#[test]
fn committed_then_worktree_shares_ids() {
    // a commit indexed first, then the working tree: only the dirty file is redone
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    let p = r.path().to_str().unwrap();
    ken.index(&[p, "--rev", "HEAD"]);
    r.write("src/shop/session.py", "def dirty():\n    pass\n");
    let rep = ken.index(&[p]);
    assert_eq!(rep["processed"], 1, "{rep}");
}

#[test]
fn skips_are_reported_by_reason() {
    let r = Repo::new();
    python_project(&r);
    r.write("assets/logo.png", [0x89u8, b'P', b'N', b'G', 0, 0, 1, 2]);
    r.write("data/blob.dat2", [1u8, 2, 0, 4, 5]);
    r.write("vendor/lib/dep.py", "def vendored():\n    pass\n");
    r.write("package-lock.json", "{}\n");
    r.write("gen/model_pb2.py", "x = 1\n");
    r.write("src/big.txt", "word ".repeat(300_000));
    r.write(".kenignore", "secret/\n");
    r.write("secret/keys.py", "API_KEY = 'x'\n");
    r.write(
        "src/gen.go",
        "// Code generated by stringer. DO NOT EDIT.\npackage x\n",
    );
    r.commit("with junk");
    let ken = Ken::new();
    let rep = ken.index(&[r.path().to_str().unwrap(), "--max-file-size", "1000000"]);
    let skipped = &rep["skipped"];
    assert_eq!(skipped["binary"], 2, "{rep}");
    assert_eq!(skipped["vendored"], 1, "{rep}");
    assert_eq!(skipped["generated"], 3, "{rep}");
    assert_eq!(skipped["too-large"], 1, "{rep}");
    assert_eq!(skipped["ignored"], 1, "{rep}");
    // human summary names each reason
    let out = ken.run(&["index", r.path().to_str().unwrap()]);
    let text = stdout(&out);
    assert!(
        text.contains("up to date") || text.contains("skipped"),
        "{text}"
    );
}

#[test]
fn url_clone_keeps_the_token_secret() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    let url = format!("file://{}", r.path().display());
    // local remotes are refused unless the operator allows them (SSRF)
    let out = ken.run(&["index", &url, "--name", "remote-shop"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refused to fetch"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("allow_private_urls"),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        ken.home.path().join("config.toml"),
        "allow_private_urls = true\n",
    )
    .unwrap();
    let out = ken
        .cmd()
        .args(["index", "--json", &url, "--name", "remote-shop"])
        .env("KEN_GIT_TOKEN", "s3cr3t-t0ken")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("s3cr3t-t0ken"));
    assert!(!stderr(&out).contains("s3cr3t-t0ken"));
    let v = ken.search(&["refresh_token", "--repo", "remote-shop"]);
    assert_eq!(paths(&v)[0], "src/shop/session.py");
    // a second run fetches and finds nothing new
    let rep = ken.index(&[&url, "--name", "remote-shop"]);
    assert_eq!(rep["up_to_date"], true);
    // nothing stored under the home mentions the token
    let grep = std::process::Command::new("grep")
        .args(["-r", "-l", "s3cr3t-t0ken"])
        .arg(ken.home.path())
        .output()
        .unwrap();
    assert!(stdout(&grep).is_empty());
}

#[test]
fn status_reports_the_commit() {
    let r = Repo::new();
    python_project(&r);
    let sha = r.commit("initial");
    let ken = Ken::new();
    ken.index(&[
        r.path().to_str().unwrap(),
        "--rev",
        "HEAD",
        "--name",
        "shop",
    ]);
    let v = ken.json(&["status", "--json"]);
    let repo = &v["repos"][0];
    assert_eq!(repo["name"], "shop");
    assert_eq!(repo["commit"], sha.as_str());
    assert_eq!(repo["stats"]["files"], 3);
    assert!(repo["stats"]["chunks"].as_u64().unwrap() >= 3);
    let out = ken.run(&["status"]);
    assert!(stdout(&out).contains(&sha[..12]));
}

#[test]
fn an_empty_variable_means_unset() {
    let r = Repo::new();
    python_project(&r);
    r.commit("initial");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    for var in [
        "KEN_STORE",
        "KEN_EMBEDDER",
        "KEN_EMBED_BASE_URL",
        "KEN_LLM_BASE_URL",
    ] {
        let out = ken
            .cmd()
            .env(var, "")
            .args(["status", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{var}= ken status failed: {}",
            stderr(&out)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["repos"][0]["name"], "shop", "{var}");
    }
}
