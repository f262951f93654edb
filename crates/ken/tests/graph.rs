//! `ken callers` / `ken callees` / `ken impact` / `ken references` on a
//! fixture whose call graph is written out by hand, and the graph kept up to date incrementally.

mod common;

use common::*;
use serde_json::Value;

fn project() -> Repo {
    let r = Repo::new();
    r.write(
        "shop/db.py",
        "class Database:\n    def connect(self):\n        return self\n\n    def query(self, sql):\n        conn = self.connect()\n        return conn\n",
    );
    r.write(
        "shop/orders.py",
        "from shop.db import Database\n\n\ndef load_orders():\n    db = Database()\n    return db.query('select * from orders')\n\n\ndef order_total(order):\n    return sum(order)\n",
    );
    r.write(
        "shop/report.py",
        "from shop.orders import load_orders, order_total\n\n\ndef monthly_report():\n    orders = load_orders()\n    return [order_total(o) for o in orders]\n\n\ndef print_report():\n    print(monthly_report())\n",
    );
    r.commit("shop");
    r
}

fn symbols(v: &Value) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["symbol"].as_str().unwrap().to_string(),
                r["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn callers_callees_impact_by_hand() {
    let r = project();
    r.write(
        "shop/cache.py",
        "def refresh(conn):\n    return conn.query('select 1')\n",
    );
    r.commit("a cache refreshed through a connection");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);

    let v = ken.json(&["callers", "--json", "load_orders"]);
    assert_eq!(v["symbol"], "load_orders");
    assert_eq!(v["candidates"].as_array().unwrap().len(), 1);
    assert_eq!(symbols(&v), [("monthly_report".to_string(), 1)]);
    // each step says how it was resolved
    let step = &v["results"][0]["via"][0];
    assert_eq!(
        (&step["kind"], &step["rule"]),
        (&"call".into(), &"import".into()),
        "{v}"
    );
    assert_eq!(step["confidence"], 1.0);
    // `db = Database()` then `db.query(...)`: tied through the class the
    // variable was made from; `conn.query(...)` on a parameter of unknown
    // type only by the method's unique name, and said so
    let v = ken.json(&["callers", "--json", "Database.query"]);
    let rule = |who: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["symbol"] == who)
            .map(|r| r["via"][0]["rule"].as_str().unwrap().to_string())
    };
    assert_eq!(rule("load_orders").as_deref(), Some("receiver"), "{v}");
    assert_eq!(rule("refresh").as_deref(), Some("unique_global"), "{v}");
    let text = stdout(&ken.run(&["callers", "Database.query"]));
    let guessed: Vec<&str> = text.lines().filter(|l| l.contains("guessed")).collect();
    assert!(
        guessed.len() == 1 && guessed[0].contains("refresh") && guessed[0].contains("call by name"),
        "{text}"
    );
    let text = stdout(&ken.run(&["callers", "load_orders"]));
    assert!(!text.contains("guessed"), "{text}");

    let v = ken.json(&["callees", "--json", "monthly_report"]);
    assert_eq!(
        symbols(&v),
        [
            ("load_orders".to_string(), 1),
            ("order_total".to_string(), 1)
        ]
    );

    // Database.query is called by load_orders ← monthly_report ← print_report
    let v = ken.json(&["impact", "--json", "Database.query"]);
    let s = symbols(&v);
    assert!(s.contains(&("load_orders".to_string(), 1)), "{s:?}");
    assert!(s.contains(&("monthly_report".to_string(), 2)), "{s:?}");
    assert!(s.contains(&("print_report".to_string(), 3)), "{s:?}");
    let deepest = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["symbol"] == "print_report")
        .unwrap();
    assert_eq!(deepest["path"], "shop/report.py");
    assert_eq!(deepest["start_line"], 9);
    assert_eq!(deepest["via"].as_array().unwrap().len(), 3, "{deepest}");

    // impact is bounded by --depth
    let v = ken.json(&["impact", "--json", "Database.query", "--depth", "1"]);
    assert!(symbols(&v).iter().all(|(_, d)| *d == 1));

    // unknown names: no candidates, no error
    let v = ken.json(&["callers", "--json", "no_such_function"]);
    assert!(v["candidates"].as_array().unwrap().is_empty());
}

#[test]
fn references_list_every_place_a_symbol_is_written() {
    let r = project();
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let v = ken.json(&["references", "--json", "load_orders"]);
    let places: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let step = &r["via"][0];
            format!(
                "{}:{} {} in {}",
                step["path"].as_str().unwrap(),
                step["line"],
                step["kind"].as_str().unwrap(),
                r["symbol"].as_str().unwrap()
            )
        })
        .collect();
    // the import and the call, each where it is written
    assert_eq!(
        places,
        [
            "shop/report.py:1 import in <module>",
            "shop/report.py:5 call in monthly_report"
        ],
        "{v}"
    );
    let text = stdout(&ken.run(&["references", "load_orders"]));
    assert!(
        text.contains("shop/report.py:5  in monthly_report  (call)"),
        "{text}"
    );
    assert!(text.contains("2 references"), "{text}");
    let text = stdout(&ken.run(&["references", "print_report"]));
    assert!(text.contains("no references found"), "{text}");
}

#[test]
fn ambiguous_names_list_candidates() {
    let r = project();
    r.write("shop/legacy.py", "def load_orders():\n    return []\n");
    r.commit("a second load_orders");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "shop"]);
    let v = ken.json(&["callers", "--json", "load_orders"]);
    let paths: Vec<&str> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{v}");
    assert!(paths.contains(&"shop/orders.py") && paths.contains(&"shop/legacy.py"));
    let v = ken.json(&["callers", "--json", "shop/legacy.py:load_orders"]);
    assert_eq!(v["candidates"].as_array().unwrap().len(), 1);
    assert!(
        v["results"].as_array().unwrap().is_empty(),
        "nobody calls the legacy one: {v}"
    );
}

#[test]
fn graph_follows_commits_incrementally() {
    let r = project();
    let ken = Ken::new();
    let p = r.path().to_str().unwrap();
    let first = ken.index(&[p, "--rev", "HEAD", "--name", "shop"]);
    assert_eq!(first["graph"]["full"], true);
    // a new caller in a new file; an old caller deleted
    r.write(
        "shop/audit.py",
        "from shop.orders import load_orders\n\n\ndef audit():\n    return load_orders()\n",
    );
    r.write(
        "shop/report.py",
        "from shop.orders import order_total\n\n\ndef monthly_report(orders):\n    return [order_total(o) for o in orders]\n",
    );
    r.commit("audit replaces the report's loading");
    let rep = ken.index(&[p, "--rev", "HEAD", "--name", "shop"]);
    assert_eq!(rep["graph"]["full"], false, "{rep}");
    let v = ken.json(&["callers", "--json", "load_orders"]);
    assert_eq!(symbols(&v), [("audit".to_string(), 1)]);
    // the same answer as a fresh index
    let fresh = Ken::new();
    fresh.index(&[p, "--rev", "HEAD", "--name", "shop"]);
    for sym in ["load_orders", "order_total", "Database.query"] {
        assert_eq!(
            symbols(&ken.json(&["impact", "--json", sym])),
            symbols(&fresh.json(&["impact", "--json", sym])),
            "{sym}"
        );
    }
}

#[test]
fn overloads_and_a_property_pair_are_one_symbol_and_recursion_is_a_call() {
    let r = Repo::new();
    r.write(
        "app/config.py",
        "from typing import overload\n\n\nclass Config:\n    @property\n    def debug(self):\n        return self._debug\n\n    @debug.setter\n    def debug(self, value):\n        self._debug = value\n\n    @overload\n    def get(self, key: str) -> str: ...\n    @overload\n    def get(self, key: int) -> int: ...\n    def get(self, key):\n        return self.data[key]\n\n    def name(self):\n        return self.get('name')\n\n\ndef walk(node):\n    for child in node.children:\n        walk(child)\n\n\ndef main(config):\n    walk(config)\n\n\ndef show(config: Config):\n    return config.debug\n",
    );
    r.commit("config");
    let ken = Ken::new();
    ken.index(&[r.path().to_str().unwrap(), "--name", "app"]);

    // the getter and the setter: one candidate spanning both (decorators included)
    let v = ken.json(&["callers", "--json", "Config.debug"]);
    let c = v["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{v}");
    assert_eq!(
        (c[0]["start_line"].as_u64(), c[0]["end_line"].as_u64()),
        (Some(5), Some(11)),
        "{v}"
    );
    // each place it is referred to, once (not once per getter and setter)
    let v = ken.json(&["references", "--json", "Config.debug"]);
    let places: Vec<u64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["via"][0]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(places, [34], "{v}");
    // two `@overload` stubs and the implementation: one candidate, its callers found
    let v = ken.json(&["callers", "--json", "Config.get"]);
    assert_eq!(v["candidates"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(symbols(&v), [("Config.name".to_string(), 1)], "{v}");
    // a recursive function calls itself, and so depends on itself
    let v = ken.json(&["callers", "--json", "walk"]);
    assert_eq!(
        symbols(&v),
        [("main".to_string(), 1), ("walk".to_string(), 1)],
        "{v}"
    );
    let v = ken.json(&["impact", "--json", "walk"]);
    assert_eq!(
        symbols(&v),
        [("main".to_string(), 1), ("walk".to_string(), 1)],
        "{v}"
    );
}
