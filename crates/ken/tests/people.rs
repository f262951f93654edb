//! People and history through the binary, on a fixture with several
//! authors, a .mailmap alias, a bot, a rename and a deleted function. The
//! expected shares are counted by hand from the fixture.

mod common;

use common::*;
use serde_json::Value;

const INVOICE_V1: &str = "def total(invoice):\n    amount = 0\n    for line in invoice.lines:\n        amount += line.price\n    return amount\n\n\ndef apply_discount(amount, rate):\n    if rate <= 0:\n        return amount\n    return amount * (1 - rate)\n";
const INVOICE_V2: &str = "def total(invoice):\n    amount = 0\n    for line in invoice.lines:\n        amount += line.price\n    return amount\n\n\ndef apply_discount(amount, rate):\n    if rate <= 0 or rate >= 1:\n        raise ValueError(\"rate must be between 0 and 1\")\n    return round(amount * (1 - rate), 2)\n";
const INVOICE_V3: &str = "def total(invoice):\n    amount = 0\n    for line in invoice.lines:\n        amount += line.price\n    return round(amount, 2)\n\n\ndef apply_discount(amount, rate):\n    if rate <= 0 or rate >= 1:\n        raise ValueError(\"rate must be between 0 and 1\")\n    return round(amount * (1 - rate), 2)\n";

fn history() -> Repo {
    let r = Repo::new();
    r.write("billing/invoice.py", INVOICE_V1);
    r.write("billing/legacy.py", "def old_tax(amount):\n    return amount * 0.2\n\n\ndef new_tax(amount):\n    return amount * 0.21\n");
    r.write("requirements.txt", "requests==2.0\n");
    r.commit_as(
        "Ada Lovelace",
        "ada@example.com",
        "2024-01-02T10:00:00",
        "Add invoices and taxes",
    );
    r.write("billing/invoice.py", INVOICE_V2);
    r.commit_as(
        "Bob Stone",
        "bob@corp.com",
        "2024-02-01T10:00:00",
        "Validate the discount rate",
    );
    r.write("billing/invoice.py", INVOICE_V3);
    r.commit_as(
        "Bobby",
        "bob.smith@personal.com",
        "2024-03-01T10:00:00",
        "Round invoice totals to cents",
    );
    r.write("requirements.txt", "requests==2.31\n");
    r.commit_as(
        "dependabot[bot]",
        "49699333+dependabot[bot]@users.noreply.github.com",
        "2024-03-05T10:00:00",
        "Bump requests from 2.0 to 2.31",
    );
    r.git(&["mv", "billing/legacy.py", "billing/tax.py"]);
    r.commit_as(
        "Carol Jones",
        "carol@corp.com",
        "2024-04-01T10:00:00",
        "Rename legacy taxes",
    );
    r.write(
        "billing/tax.py",
        "def new_tax(amount):\n    return amount * 0.21\n",
    );
    r.commit_as(
        "Carol Jones",
        "carol@corp.com",
        "2024-04-02T10:00:00",
        "Remove the old tax function",
    );
    r.write(
        ".mailmap",
        "Bob Stone <bob@corp.com> Bobby <bob.smith@personal.com>\n",
    );
    r.commit_as(
        "Ada Lovelace",
        "ada@example.com",
        "2024-04-03T10:00:00",
        "Add a mailmap",
    );
    r
}

fn indexed() -> (Repo, Ken) {
    let r = history();
    let ken = Ken::new();
    std::fs::write(
        ken.home.path().join("identities.toml"),
        "[[person]]\nid = \"ada\"\nname = \"Ada Lovelace\"\nemails = [\"ada@example.com\"]\nhandles = [\"ada-l\"]\nexternal = { jira = \"557058:ada\" }\n",
    )
    .unwrap();
    let rep = ken.index(&[
        r.path().to_str().unwrap(),
        "--rev",
        "HEAD",
        "--name",
        "shop",
    ]);
    assert_eq!(rep["people"]["commits_added"], 7, "{rep}");
    (r, ken)
}

fn shares(hit: &Value) -> Vec<(String, f64)> {
    hit["authors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["share"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn blame_shares_follow_aliases_and_renames() {
    let (_r, ken) = indexed();
    // apply_discount: line 8 by Ada, lines 9-11 by Bob → 0.25 / 0.75
    let v = ken.search(&["apply_discount"]);
    let hit = &v["results"][0];
    assert_eq!(hit["symbol"], "apply_discount");
    assert_eq!(
        (hit["start_line"].as_u64(), hit["end_line"].as_u64()),
        (Some(8), Some(11))
    );
    assert_eq!(
        shares(hit),
        [
            ("Bob Stone".to_string(), 0.75),
            ("Ada Lovelace".to_string(), 0.25)
        ]
    );
    // total: lines 1-4 by Ada, line 5 by "Bobby" — the same person as Bob through .mailmap
    let v = ken.search(&["total"]);
    let hit = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["symbol"] == "total")
        .unwrap();
    assert_eq!(
        shares(hit),
        [
            ("Ada Lovelace".to_string(), 0.8),
            ("Bob Stone".to_string(), 0.2)
        ]
    );
    // the renamed file keeps its author; the deleted function is gone
    let v = ken.search(&["new_tax"]);
    assert_eq!(v["results"][0]["path"], "billing/tax.py");
    assert_eq!(
        shares(&v["results"][0]),
        [("Ada Lovelace".to_string(), 1.0)]
    );
    let v = ken.search(&["old_tax"]);
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["pinned"] == false),
        "{v}"
    );
}

#[test]
fn people_merges_aliases_and_hides_bots() {
    let (_r, ken) = indexed();
    let v = ken.json(&["people", "--json"]);
    let people: Vec<&Value> = v["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["person"])
        .collect();
    let bob = people.iter().find(|p| p["name"] == "Bob Stone").unwrap();
    let emails: Vec<&str> = bob["emails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        emails.contains(&"bob@corp.com") && emails.contains(&"bob.smith@personal.com"),
        "{bob}"
    );
    assert_eq!(bob["commits"], 2);
    let ada = people.iter().find(|p| p["id"] == "ada").unwrap();
    assert_eq!(ada["external"]["jira"], "557058:ada");
    assert!(
        people.iter().all(|p| p["bot"] == false),
        "bots are hidden by default"
    );
    let v = ken.json(&["people", "--json", "--bots"]);
    assert!(
        v["people"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["person"]["bot"] == true)
    );
}

#[test]
fn who_ranks_owners_with_evidence() {
    let (_r, ken) = indexed();
    let v = ken.json(&["who", "--json", "billing/invoice.py"]);
    assert_eq!(v["read_as"], "path");
    let first = &v["people"][0];
    // Ada owns 5 of 11 lines (Jan), Bob 4 (Feb/Mar, more recent): Ada's share is larger
    assert_eq!(first["rank"], 1);
    let names: Vec<&str> = v["people"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[..2], ["Ada Lovelace", "Bob Stone"]);
    assert!(first["evidence"][0]["path"] == "billing/invoice.py");
    assert!(first["evidence"][0]["last_commit"].is_string());
    // the bot owns requirements.txt's line but is not an answer
    let v = ken.json(&["who", "--json", "requirements.txt"]);
    assert!(
        v["people"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| !p["name"].as_str().unwrap().contains("bot")),
        "{v}"
    );
    // a symbol
    let v = ken.json(&["who", "--json", "apply_discount"]);
    assert_eq!(v["read_as"], "symbol");
    assert_eq!(v["people"][0]["name"], "Bob Stone");
    // a topic
    let v = ken.json(&["who", "--json", "who validates the discount rate"]);
    assert_eq!(v["read_as"], "topic");
    assert!(!v["people"].as_array().unwrap().is_empty());
}

#[test]
fn who_for_a_question_counts_who_addressed_it_before() {
    let (r, ken) = indexed();
    let sha = r.git(&["log", "--format=%H", "--grep", "Remove the old tax"]);
    let v = ken.json(&["who", "--json", "who removed the old tax function"]);
    assert_eq!(v["read_as"], "topic");
    // Carol owns no line of the tax code any more, but she made the change
    // the question describes: that commit is her evidence
    let carol = v["people"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Carol Jones")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        carol["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["last_commit"] == sha.as_str() && e["path"] == "billing/tax.py"),
        "{carol}"
    );
}

#[test]
fn author_and_time_filters() {
    let (_r, ken) = indexed();
    // any alias of Bob: his name, his other email, a first name
    for who in ["Bob Stone", "bob.smith@personal.com", "bob"] {
        let v = ken.search(&["discount rate", "--author", who]);
        assert_eq!(v["results"][0]["path"], "billing/invoice.py", "{who}: {v}");
    }
    // Ada through her external id
    let v = ken.search(&["tax", "--author", "557058:ada"]);
    assert_eq!(v["results"][0]["path"], "billing/tax.py", "{v}");
    // Carol only renamed and deleted: she last changed no line
    let v = ken.search(&["tax", "--author", "carol"]);
    assert!(v["results"].as_array().unwrap().is_empty(), "{v}");
    // time windows
    let v = ken.search(&["discount", "--since", "2024-01-15", "--until", "2024-02-15"]);
    assert_eq!(v["results"][0]["path"], "billing/invoice.py");
    let v = ken.search(&["discount", "--since", "2030-01-01"]);
    assert!(v["results"].as_array().unwrap().is_empty());
    let out = ken.run(&["search", "discount", "--since", "next tuesday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read the time"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn log_search_finds_commits() {
    let (_r, ken) = indexed();
    let v = ken.json(&["log-search", "--json", "discount rate"]);
    assert_eq!(v["results"][0]["summary"], "Validate the discount rate");
    assert_eq!(
        v["results"][0]["files"],
        serde_json::json!(["billing/invoice.py"])
    );
    let v = ken.json(&["log-search", "--json", "--author", "carol"]);
    let summaries: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["summary"].as_str().unwrap())
        .collect();
    assert_eq!(
        summaries,
        ["Remove the old tax function", "Rename legacy taxes"]
    );
    let v = ken.json(&["log-search", "--json", "tax", "--since", "2024-04-02"]);
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
}

/// One person committing from two addresses under one name, and from a
/// GitHub noreply address under their handle, with no .mailmap: one author.
#[test]
fn one_name_two_emails_is_one_author() {
    let r = Repo::new();
    r.write("ledger.py", "def balance(entries):\n    total = 0\n    for e in entries:\n        total += e.amount\n    return total\n");
    r.commit_as(
        "Grace Hopper",
        "grace@home.example",
        "2024-01-02T10:00:00",
        "Add the ledger",
    );
    r.write("ledger.py", "def balance(entries):\n    total = 0\n    for e in entries:\n        total += e.amount\n    return round(total, 2)\n");
    r.commit_as(
        "grace  hopper",
        "g.hopper@corp.example",
        "2024-02-02T10:00:00",
        "Round balances",
    );
    r.write("ledger.py", "def balance(entries):\n    # entries may be empty\n    total = 0\n    for e in entries:\n        total += e.amount\n    return round(total, 2)\n");
    r.commit_as(
        "ghopper",
        "8121+ghopper@users.noreply.github.com",
        "2024-03-02T10:00:00",
        "Note empty ledgers",
    );
    r.write("other.py", "def unrelated():\n    return 1\n");
    r.commit_as(
        "Grace Hopper",
        "grace@home.example",
        "2024-04-02T10:00:00",
        "Add other",
    );
    r.write("ledger.py", "def balance(entries):\n    # entries may be empty\n    total = 0\n    for e in entries:\n        total += e.amount\n    return round(total, 2)\n\n\ndef owner():\n    return \"ghopper\"\n");
    r.commit_as(
        "Grace Hopper",
        "8121+ghopper@users.noreply.github.com",
        "2024-05-02T10:00:00",
        "Name the owner",
    );
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "ledger"]);

    // 6 lines: 4 from the first email, 1 from the second, 1 from the handle
    let v = ken.search(&["balance"]);
    let hit = &v["results"][0];
    assert_eq!(hit["symbol"], "balance", "{v}");
    let authors = shares(hit);
    assert_eq!(authors.len(), 1, "{authors:?}");
    assert!((authors[0].1 - 1.0).abs() < 1e-9, "{authors:?}");

    let v = ken.json(&["people", "--json"]);
    let people = v["people"].as_array().unwrap();
    assert_eq!(people.len(), 1, "{v}");
    assert_eq!(people[0]["person"]["commits"], 5, "{v}");

    // with merging turned off, the two emails under one name are two people
    std::fs::write(
        ken.home.path().join("identities.toml"),
        "merge_same_names = false\n",
    )
    .unwrap();
    let v = ken.search(&["balance"]);
    assert!(shares(&v["results"][0]).len() > 1, "{v}");
}
