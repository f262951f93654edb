//! PageRank against hand-computed values, walks on a small graph,
//! determinism, counting of unresolved and ambiguous references,
//! incremental updates, serialisation and look-ups.

mod common;

use common::*;
use ken_core::{ChunkKind, Language, RefKind};
use ken_graph::{
    CodeGraph, DefKey, Edge, FileFacts, FileGraph, Kinds, Outcome, RankOptions, Reason, Rule,
    SymbolIndex, resolve_all, resolve_file, resolve_file_with_outcomes,
};

fn edge(from: &str, to: &str, line: u32) -> Edge {
    Edge {
        from: key(from),
        to: key(to),
        kind: RefKind::Call,
        path: key(from).path,
        line,
        rule: Rule::Scope,
        confidence: 1.0,
    }
}

/// a → b, a → c, b → c, c → a; d has no edges (dangling).
fn small() -> CodeGraph {
    let edges = [
        edge("f:a", "f:b", 1),
        edge("f:a", "f:c", 2),
        edge("f:b", "f:c", 3),
        edge("f:c", "f:a", 4),
    ];
    CodeGraph::build([key("f:d")], &edges)
}

#[test]
fn pagerank_matches_hand_computed_values() {
    // Solved exactly: r_d = (1-d)/4 / (1 - d/4) = 1/21, then the 3x3 system.
    let g = small();
    let opts = RankOptions {
        tolerance: 1e-12,
        max_iterations: 500,
        ..RankOptions::default()
    };
    let r = g.pagerank(&opts);
    assert!(r.converged);
    let want = [
        ("f:a", 0.369_323_534_953_834_6),
        ("f:b", 0.204_581_549_974_427_3),
        ("f:c", 0.378_475_867_452_690_5),
        ("f:d", 1.0 / 21.0),
    ];
    for (k, v) in want {
        let got = r.scores[g.id(&key(k)).unwrap() as usize];
        assert!((got - v).abs() < 1e-9, "{k}: {got} vs {v}");
    }
    assert!((r.scores.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert_eq!(r.top(1)[0].0, g.id(&key("f:c")).unwrap());
}

#[test]
fn personalized_pagerank_stays_near_its_seeds() {
    let g = small();
    let a = g.id(&key("f:a")).unwrap();
    let opts = RankOptions {
        tolerance: 1e-12,
        max_iterations: 500,
        ..RankOptions::default()
    };
    let r = g.personalized_pagerank(&[(a, 2.0)], &opts);
    let want = [
        ("f:a", 0.452_232_899_943_470_9),
        ("f:b", 0.192_198_982_475_975_1),
        ("f:c", 0.355_568_117_580_554),
        ("f:d", 0.0),
    ];
    for (k, v) in want {
        let got = r.scores[g.id(&key(k)).unwrap() as usize];
        assert!((got - v).abs() < 1e-9, "{k}: {got} vs {v}");
    }
    // no usable seed: the global PageRank
    assert_eq!(
        g.personalized_pagerank(&[(a, 0.0)], &opts).scores,
        g.pagerank(&opts).scores
    );
}

#[test]
fn file_ppr_follows_edges_both_ways_when_undirected() {
    // x.py uses y.py; z.py is alone. Seeded at y, only the undirected graph
    // reaches x: r_y = 1/(1+d), r_x = d/(1+d).
    let fg = FileGraph::build(["z.py"], &[edge("x.py:f", "y.py:g", 1)]);
    let y = fg.node("y.py").unwrap();
    let opts = RankOptions {
        tolerance: 1e-12,
        max_iterations: 500,
        ..RankOptions::default()
    };
    let directed = fg.personalized_pagerank(&[(y, 1.0)], &opts);
    assert_eq!(directed.scores[fg.node("x.py").unwrap() as usize], 0.0);
    let r = fg.undirected().personalized_pagerank(&[(y, 1.0)], &opts);
    let d = 0.85;
    assert!((r.scores[y as usize] - 1.0 / (1.0 + d)).abs() < 1e-9);
    assert!((r.scores[fg.node("x.py").unwrap() as usize] - d / (1.0 + d)).abs() < 1e-9);
    assert_eq!(r.scores[fg.node("z.py").unwrap() as usize], 0.0);
    assert_eq!(fg.node("nope.py"), None);
}

#[test]
fn walks_record_shortest_deterministic_chains() {
    // x → y → t, x → z → t, w → x: impact(t) reaches x at depth 2 through
    // y (the smaller id), and w at depth 3.
    let edges = [
        edge("f:x", "f:y", 1),
        edge("f:x", "f:z", 2),
        edge("f:y", "f:t", 3),
        edge("f:z", "f:t", 4),
        edge("f:w", "f:x", 5),
    ];
    let g = CodeGraph::build([], &edges);
    let t = g.id(&key("f:t")).unwrap();
    let r = g.impact(t, 10);
    let names: Vec<String> = r
        .iter()
        .map(|x| format!("{} {}", x.depth, g.key(x.node).qualname))
        .collect();
    assert_eq!(names, ["1 y", "1 z", "2 x", "3 w"]);
    let via: Vec<String> = r[3]
        .via
        .iter()
        .map(|&e| {
            let e = g.edge(e);
            format!("{}>{}", g.key(e.from).qualname, g.key(e.to).qualname)
        })
        .collect();
    assert_eq!(via, ["w>x", "x>y", "y>t"]);
    assert_eq!(g.impact(t, 1).len(), 2);
    // callees walk the other way, chains from the start
    let w = g.id(&key("f:w")).unwrap();
    assert_eq!(g.callees(w).len(), 1);
    let down = g.impact_of(&[t], Kinds::of(&[RefKind::Import]), 5);
    assert!(down.is_empty());

    // the same edges in another order give the same graph and answers
    let mut shuffled = edges.to_vec();
    shuffled.reverse();
    let g2 = CodeGraph::build([], &shuffled);
    assert_eq!(g2.keys(), g.keys());
    assert_eq!(g2.impact(t, 10), r);
}

const COUNTING: &str = r#"
//- a.py
import json


def process_item(x):
    return x


def helper():
    pass


def run(items):
    for x in items:
        process_item(x)
    helper()
    frobnicate()
    json.dumps(items)
    items.get("k")

//- b.py
def process_item(x):
    return x


def helper():
    pass

//- c.py
from b import process_item


def go():
    process_item(1)
    helper()
    shared()
    lonely()

//- d.py
def helper():
    pass


def shared():
    pass


def lonely():
    pass


class Store:
    def get(self, key):
        return key

//- e.py
def helper():
    pass


def shared():
    pass
"#;

#[test]
fn unresolved_and_ambiguous_references_are_counted() {
    let w = world(COUNTING);
    let facts = w.facts.iter().find(|f| f.path == "a.py").unwrap();
    let r = resolve_file_with_outcomes(facts, &w.index);
    let outcome = |name: &str| {
        let i = facts
            .references
            .iter()
            .position(|r| r.name == name)
            .unwrap();
        r.outcomes[i]
    };
    // the same file wins over other files
    assert_eq!(outcome("process_item"), Outcome::Resolved(Rule::Scope));
    assert_eq!(
        outcome("frobnicate"),
        Outcome::Unresolved(Reason::NoDefinition)
    );
    assert_eq!(outcome("dumps"), Outcome::Unresolved(Reason::External));
    // `get` is defined (`Store.get`) but too common to pick by name alone
    assert_eq!(outcome("get"), Outcome::Unresolved(Reason::CommonName));
    assert_eq!(outcome("json"), Outcome::Unresolved(Reason::External));

    let facts = w.facts.iter().find(|f| f.path == "c.py").unwrap();
    let r = resolve_file_with_outcomes(facts, &w.index);
    let outcome = |name: &str| {
        let i = facts
            .references
            .iter()
            .position(|r| r.name == name && r.kind == RefKind::Call)
            .unwrap();
        r.outcomes[i]
    };
    // imported: no ambiguity although two files define it
    assert_eq!(outcome("process_item"), Outcome::Resolved(Rule::Import));
    // four files define `helper`: more than MAX_CANDIDATES
    assert_eq!(outcome("helper"), Outcome::Ambiguous(4));
    assert_eq!(outcome("shared"), Outcome::Ambiguous(2));
    assert_eq!(outcome("lonely"), Outcome::Resolved(Rule::UniqueGlobal));
    let s = &r.stats.call;
    assert_eq!(
        (s.total, s.resolved, s.ambiguous, s.ambiguous_many),
        (4, 2, 2, 1)
    );
    assert_eq!(s.by_rule.get(&Rule::UniqueGlobal), Some(&1));
    let e = resolve_file(facts, &w.index);
    let lonely = e.iter().find(|e| e.to.qualname == "lonely").unwrap();
    assert_eq!((lonely.confidence, lonely.to.path.as_str()), (0.5, "d.py"));
}

/// Every file's edges, recomputed from scratch.
fn all_edges(files: &[FileFacts], index: &SymbolIndex) -> Vec<String> {
    let mut v: Vec<String> = resolve_all(files, index)
        .edges
        .iter()
        .map(edge_line)
        .collect();
    v.sort();
    v
}

#[test]
fn incremental_updates_match_a_full_rebuild() {
    const BEFORE: &str = include_str!("projects_python.txt");
    let mut files = facts(BEFORE);
    let mut index = SymbolIndex::build(&files);
    let mut edges: std::collections::BTreeMap<String, Vec<String>> = files
        .iter()
        .map(|f| {
            (
                f.path.clone(),
                resolve_file(f, &index).iter().map(edge_line).collect(),
            )
        })
        .collect();

    // Each step changes the set of definitions; only the files `update`
    // names are re-resolved, and the result must equal a full rebuild.
    let steps: Vec<(&str, Option<&str>)> = vec![
        // rename `parse` → `parse_text` (callers now unresolved)
        (
            "pkg/config.py",
            Some(
                "import os\n\n\ndef load_config(path):\n    return parse(read(path))\n\n\ndef read(path):\n    return open(path).read()\n\n\ndef parse_text(text):\n    return text\n",
            ),
        ),
        // define `parse` elsewhere: the caller in config.py resolves to it
        (
            "pkg/extra.py",
            Some("def parse(text):\n    return text.strip()\n"),
        ),
        // `Base` loses `prepare`
        (
            "pkg/base.py",
            Some(
                "class Base:\n    def serve(self):\n        self.prepare()\n        return self.execute()\n\n    def execute(self):\n        raise NotImplementedError\n",
            ),
        ),
        // a base class method comes back through a subclass file
        (
            "pkg/app.py",
            Some(
                "from .base import Base\nfrom .config import load_config\n\n\nclass App(Base):\n    def prepare(self):\n        pass\n\n    def execute(self):\n        return helper(self.prepare())\n\n\ndef helper(config):\n    return sorted(config)\n",
            ),
        ),
        // a file disappears
        ("pkg/extra.py", None),
    ];
    let mut sizes = Vec::new();
    for (path, text) in steps {
        let (changed, removed): (Vec<FileFacts>, Vec<&str>) = match text {
            Some(t) => (facts(&format!("//- {path}\n{t}")), vec![]),
            None => (vec![], vec![path]),
        };
        let update = index.update(&changed, &removed);
        files.retain(|f| f.path != path);
        files.extend(changed);
        files.sort_by(|a, b| a.path.cmp(&b.path));
        edges.remove(path);
        for p in &update.reresolve {
            let f = files.iter().find(|f| &f.path == p).unwrap();
            edges.insert(
                p.clone(),
                resolve_file(f, &index).iter().map(edge_line).collect(),
            );
        }
        let mut incremental: Vec<String> = edges.values().flatten().cloned().collect();
        incremental.sort();
        let fresh = SymbolIndex::build(&files);
        assert_eq!(
            incremental,
            all_edges(&files, &fresh),
            "after changing {path}: {update:?}"
        );
        sizes.push(update.reresolve.len());
    }
    // not everything each time: the update is worth having
    let n = files.len();
    eprintln!("re-resolved per step: {sizes:?} of about {n} files");
    assert!(sizes.iter().any(|&s| s < n), "{sizes:?}");
}

#[test]
fn the_index_round_trips_through_serde() {
    let w = world(include_str!("projects_python.txt"));
    let json = serde_json::to_string(&w.index).unwrap();
    let back: SymbolIndex = serde_json::from_str(&json).unwrap();
    assert_eq!(back.files(), w.index.files());
    assert_eq!(all_edges(&w.facts, &back), all_edges(&w.facts, &w.index));
}

#[test]
fn lookups_return_every_candidate() {
    let w = world(include_str!("projects_python.txt"));
    let c = w.index.lookup("execute");
    let got: Vec<String> = c
        .iter()
        .map(|c| format!("{} {} {}", c.key, c.kind, c.start_line))
        .collect();
    assert_eq!(
        got,
        [
            "pkg/app.py:App.execute method 9",
            "pkg/base.py:Base.execute method 9"
        ]
    );
    assert_eq!(w.index.lookup("App.execute").len(), 1);
    assert_eq!(w.index.lookup("pkg.App.execute").len(), 1);
    assert!(w.index.lookup("nothing").is_empty());
    let members = w.index.members(&DefKey::new("pkg/base.py", "Base", 0));
    assert_eq!(members.len(), 3);
    assert_eq!(w.index.lookup("Base")[0].kind, ChunkKind::Class);
}

#[test]
fn a_file_missing_from_the_index_still_resolves_outward() {
    let w = world(include_str!("projects_python.txt"));
    let stray = FileFacts::from_syntax(
        "tools/stray.py",
        ken_syntax::parse_file(
            "tools/stray.py",
            "from pkg.config import load_config\n\ndef go():\n    load_config('x')\n",
            &ken_syntax::ChunkOptions::default(),
        ),
    );
    assert_eq!(stray.language, Language::Python);
    let e = resolve_file(&stray, &w.index);
    assert!(
        e.iter()
            .any(|e| e.to.qualname == "load_config" && e.from.qualname == "go")
    );
}

const RECEIVERS: &str = r#"
//- db.py
class Base:
    def query(self, sql):
        return []


class Database(Base):
    def execute(self, sql):
        return self.query(sql)

//- cache.py
class Cache:
    def query(self, key):
        return key

//- users.py
from db import Database as Db


def find_user(name):
    db = Db("sqlite://")
    db.execute("x")
    rows = db.query(name)
    conn = connect()
    conn.query(name)
    return rows
"#;

#[test]
fn a_variable_made_from_a_class_calls_that_class_or_its_bases() {
    let w = world(RECEIVERS);
    let facts = w.facts.iter().find(|f| f.path == "users.py").unwrap();
    let r = resolve_file_with_outcomes(facts, &w.index);
    let outcome = |q: &str, name: &str| {
        let i = facts
            .references
            .iter()
            .position(|r| r.name == name && r.qualifier.as_deref() == Some(q))
            .unwrap();
        r.outcomes[i]
    };
    // `db = Db(...)` with `Db` imported as `Database`: its own method, and
    // its base's `query` (a name two classes define)
    assert_eq!(outcome("db", "execute"), Outcome::Resolved(Rule::Receiver));
    assert_eq!(outcome("db", "query"), Outcome::Resolved(Rule::Receiver));
    assert!(w.has_edge("call", "users.py:find_user", "db.py:Database.execute"));
    assert!(w.has_edge("call", "users.py:find_user", "db.py:Base.query"));
    assert!(!w.has_edge("call", "users.py:find_user", "cache.py:Cache.query"));
    // a value of unknown class: the name alone stays ambiguous
    assert_eq!(outcome("conn", "query"), Outcome::Ambiguous(2));
    assert_eq!(Rule::Receiver.confidence(), 0.9);
}
