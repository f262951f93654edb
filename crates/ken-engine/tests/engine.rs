//! The engine through its public API only, as every edge uses it: a real
//! repository with real commits by two authors, indexed into a fresh home,
//! then searched, asked about people and structure, and refused to a
//! caller who may not see it.

mod common;

use std::path::Path;

use common::git;

use ken_engine::{
    Access, Engine, ErrorKind, IndexLimits, IndexRequest, Mode, NoProgress, SearchRequest,
    Settings, Walk,
};

const ADA: (&str, &str) = ("Ada Lovelace", "ada@example.com");
const LIN: (&str, &str) = ("Lin Chen", "lin@example.com");

/// A small service: session tokens by Ada, the HTTP layer that calls them
/// by Lin.
fn service(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"], ADA);
    std::fs::create_dir_all(dir.join("shop")).unwrap();
    std::fs::write(
        dir.join("shop/session.py"),
        "\"\"\"Session tokens: issue, check and refresh them.\"\"\"\n\n\
         import time\n\n\
         def issue_token(user_id):\n    \"\"\"A new session token for a user.\"\"\"\n    return f\"{user_id}:{int(time.time())}\"\n\n\
         def refresh_token(token, ttl=3600):\n    \"\"\"Refresh an expiring session token before it runs out.\"\"\"\n    user_id, issued = token.split(\":\")\n    if time.time() - int(issued) > ttl:\n        return issue_token(user_id)\n    return token\n",
    )
    .unwrap();
    git(dir, &["add", "-A"], ADA);
    git(dir, &["commit", "-q", "-m", "Add session tokens"], ADA);
    std::fs::write(
        dir.join("shop/http.py"),
        "\"\"\"The HTTP layer.\"\"\"\n\n\
         from shop.session import refresh_token\n\n\
         def handle_request(request):\n    \"\"\"Serve a request, keeping its session alive.\"\"\"\n    request.token = refresh_token(request.token)\n    return render_page(request)\n\n\
         def render_page(request):\n    return \"<html>\" + request.path + \"</html>\"\n",
    )
    .unwrap();
    git(dir, &["add", "-A"], LIN);
    git(
        dir,
        &["commit", "-q", "-m", "Serve requests over HTTP"],
        LIN,
    );
}

/// The service as a repository, a fresh home and an engine over it.
fn setup() -> (tempfile::TempDir, tempfile::TempDir, Engine) {
    let repo = tempfile::tempdir().unwrap();
    service(repo.path());
    let home = tempfile::tempdir().unwrap();
    let engine = Engine::new(Settings::new(home.path().to_path_buf()));
    (repo, home, engine)
}

/// Indexing the service as `name`, lexical only.
fn request(repo: &Path, name: &str) -> IndexRequest {
    IndexRequest {
        source: repo.display().to_string(),
        name: Some(name.into()),
        no_embed: true,
        ..Default::default()
    }
}

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        limit: 10,
        filters: Default::default(),
        files: true,
        mode: Mode::Lexical,
    }
}

#[test]
fn one_engine_indexes_searches_and_answers_through_its_api() {
    let (repo, _home, engine) = setup();
    let req = request(repo.path(), "shop");
    let report = engine.index(&req, &NoProgress).unwrap();
    assert_eq!(report.name, "shop");
    assert_eq!(report.files, 2, "{report:?}");
    assert!(!report.up_to_date);
    // the same files again: nothing is read twice
    let again = engine.index(&req, &NoProgress).unwrap();
    assert_eq!((again.files, again.processed), (2, 0), "{again:?}");

    // words of the question find the file that does it
    let all = Access::All;
    let hits = engine
        .search(&search("refresh an expiring session token"), &all)
        .unwrap()
        .hits;
    assert_eq!(hits[0].path, "shop/session.py", "{hits:?}");

    // people: who wrote the session code, by blame
    let who = engine.who("session token refresh", &[], 5, &all).unwrap();
    assert_eq!(who.people[0].name, "Ada Lovelace", "{who:?}");

    // structure: who calls refresh_token
    let callers = engine
        .structure("refresh_token", None, Walk::Callers, &all)
        .unwrap();
    assert_eq!(callers.repo, "shop");
    let names: Vec<&str> = callers
        .result
        .results
        .iter()
        .map(|r| r.symbol.as_str())
        .collect();
    assert!(names.contains(&"handle_request"), "{names:?}");

    // status names what is indexed
    let status = engine.status(&[], &all).unwrap();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].name, "shop");
}

#[test]
fn a_repository_the_caller_may_not_see_answers_as_a_missing_one() {
    let (repo, _home, engine) = setup();
    engine
        .index(&request(repo.path(), "shop"), &NoProgress)
        .unwrap();

    let others = Access::Only(vec!["billing".into()]);
    let hidden = engine
        .who("session", &["shop".into()], 5, &others)
        .unwrap_err();
    let missing = engine
        .who("session", &["nowhere".into()], 5, &Access::All)
        .unwrap_err();
    assert_eq!(hidden.kind(), ErrorKind::NotFound);
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    // a name is compared as written, never through its storage key
    let key = Access::Only(vec!["shop".into()]);
    assert!(key.allows("shop") && !key.allows("Shop") && !key.allows("sho"));
}

#[test]
fn a_runs_own_limits_travel_in_its_request() {
    let (repo, home, engine) = setup();
    // files over 350 bytes (session.py, 411) are left out of this run only
    let report = engine
        .index(
            &IndexRequest {
                limits: IndexLimits {
                    max_file_bytes: Some(350),
                    threads: Some(1),
                    embed_budget: None,
                },
                ..request(repo.path(), "small")
            },
            &NoProgress,
        )
        .unwrap();
    assert_eq!(report.files, 1, "{report:?}");
    assert_eq!(report.skipped.values().sum::<u64>(), 1, "{report:?}");
    assert_eq!(
        engine.settings().max_file_bytes,
        Settings::new(home.path().into()).max_file_bytes
    );
}

/// A second service, for a home of several: invoices by Lin.
fn billing(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"], LIN);
    std::fs::create_dir_all(dir.join("billing")).unwrap();
    std::fs::write(
        dir.join("billing/invoice.py"),
        "\"\"\"Invoices: totals, tax and payment reminders.\"\"\"\n\n\
         def invoice_total(lines, tax_rate):\n    \"\"\"The invoice total with tax, rounded to cents.\"\"\"\n    net = sum(l.amount for l in lines)\n    return round(net * (1 + tax_rate), 2)\n\n\
         def remind_unpaid(invoice):\n    \"\"\"Send a payment reminder for an unpaid invoice.\"\"\"\n    return f\"reminder: {invoice.number}\"\n",
    )
    .unwrap();
    git(dir, &["add", "-A"], LIN);
    git(dir, &["commit", "-q", "-m", "Add invoices"], LIN);
    // the same symbol name as the shop's, for another purpose
    std::fs::write(
        dir.join("billing/auth.py"),
        "def refresh_token(client):\n    \"\"\"A new API token for the payment provider.\"\"\"\n    return client.renew()\n",
    )
    .unwrap();
    git(dir, &["add", "-A"], LIN);
    git(dir, &["commit", "-q", "-m", "Renew provider tokens"], LIN);
}

fn repos_of(hits: &[ken_core::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.repo.as_str()).collect()
}

#[test]
fn a_question_over_every_repository_is_routed_and_ranked_on_one_scale() {
    let (shop, home, engine) = setup();
    let bill = tempfile::tempdir().unwrap();
    billing(bill.path());
    let first = engine
        .index(&request(shop.path(), "shop"), &NoProgress)
        .unwrap();
    let fleet = first.fleet.expect("the first run fills the collection");
    assert!(
        fleet.whole && fleet.files == 2 && fleet.commits == 2,
        "{fleet:?}"
    );
    engine
        .index(&request(bill.path(), "billing"), &NoProgress)
        .unwrap();

    let session = engine
        .search(&search("refresh an expiring session token"), &Access::All)
        .unwrap();
    assert_eq!(
        session.hits[0].repo,
        "shop",
        "{:?}",
        repos_of(&session.hits)
    );
    let invoice = engine
        .search(&search("invoice total with tax"), &Access::All)
        .unwrap();
    assert_eq!(
        invoice.hits[0].repo,
        "billing",
        "{:?}",
        repos_of(&invoice.hits)
    );
    // a symbol defined in both lists both definitions, pinned
    let both = engine
        .search(&search("refresh_token"), &Access::All)
        .unwrap();
    let pinned: Vec<&str> = both
        .hits
        .iter()
        .filter(|h| h.pinned)
        .map(|h| h.repo.as_str())
        .collect();
    assert!(
        pinned.contains(&"shop") && pinned.contains(&"billing"),
        "{pinned:?}"
    );
    // what the caller may not see is neither routed nor searched
    let only = Access::Only(vec!["billing".into()]);
    let hidden = engine
        .search(&search("refresh an expiring session token"), &only)
        .unwrap();
    assert!(!hidden.hits.is_empty());
    assert!(hidden.hits.iter().all(|h| h.repo == "billing"));

    // an update writes only what changed
    std::fs::write(
        shop.path().join("shop/cart.py"),
        "def cart_total(items):\n    return sum(i.price for i in items)\n",
    )
    .unwrap();
    git(shop.path(), &["add", "-A"], ADA);
    git(shop.path(), &["commit", "-q", "-m", "Add a cart"], ADA);
    let update = engine
        .index(&request(shop.path(), "shop"), &NoProgress)
        .unwrap();
    let fleet = update.fleet.expect("the update reaches the collection");
    // the new commit, with those of its second again (the fixture's
    // commits share one)
    assert!(
        !fleet.whole && fleet.files == 1 && fleet.commits >= 1,
        "{fleet:?}"
    );
    let cart = engine
        .search(&search("cart total price"), &Access::All)
        .unwrap();
    assert_eq!(cart.hits[0].path, "shop/cart.py");

    // without the collection index every repository is searched directly
    std::fs::remove_dir_all(home.path().join(ken_store::FLEET_DIR)).unwrap();
    let fresh = Engine::new(Settings::new(home.path().to_path_buf()));
    let direct = fresh
        .search(&search("invoice total with tax"), &Access::All)
        .unwrap();
    assert_eq!(direct.hits[0].repo, "billing");
}
