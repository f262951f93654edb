//! Multi-file fixtures: a string holding several files (`//- path` lines
//! start each), chunked with ken-syntax, indexed and resolved; and helpers
//! that check callers, callees and impact against hand-written names.

#![allow(dead_code)]

use ken_graph::{
    CodeGraph, DefKey, Edge, FileFacts, NodeId, Reached, Resolution, SymbolIndex, resolve_all,
};
use ken_syntax::{ChunkOptions, parse_file};

/// The files of a fixture: `(path, text)`.
pub fn files(fixture: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in fixture.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            out.push((path.trim().to_string(), String::new()));
        } else if let Some((_, text)) = out.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    out
}

pub fn facts(fixture: &str) -> Vec<FileFacts> {
    files(fixture)
        .into_iter()
        .map(|(path, text)| {
            let syntax = parse_file(&path, &text, &ChunkOptions::default());
            FileFacts::from_syntax(path, syntax)
        })
        .collect()
}

/// A fixture, resolved.
pub struct World {
    pub facts: Vec<FileFacts>,
    pub index: SymbolIndex,
    pub resolution: Resolution,
    pub graph: CodeGraph,
}

pub fn world(fixture: &str) -> World {
    let facts = facts(fixture);
    let index = SymbolIndex::build(&facts);
    let resolution = resolve_all(&facts, &index);
    let graph = CodeGraph::from_index(&index, &resolution.edges);
    World {
        facts,
        index,
        resolution,
        graph,
    }
}

/// `path:qualname` (`#n` for the n-th of that name) → key.
pub fn key(s: &str) -> DefKey {
    let (path, rest) = s.split_once(':').expect("path:qualname");
    let (qualname, nth) = match rest.split_once('#') {
        Some((q, n)) => (q, n.parse().expect("nth")),
        None => (rest, 0),
    };
    DefKey::new(path, qualname, nth)
}

pub fn show(k: &DefKey) -> String {
    k.to_string()
}

impl World {
    pub fn node(&self, s: &str) -> NodeId {
        self.graph.id(&key(s)).unwrap_or_else(|| {
            panic!(
                "no node {s}; nodes: {:#?}",
                self.graph.keys().iter().map(show).collect::<Vec<_>>()
            )
        })
    }

    /// `kind from -> to` of every edge.
    pub fn edges(&self) -> Vec<String> {
        self.resolution.edges.iter().map(edge_line).collect()
    }

    pub fn has_edge(&self, kind: &str, from: &str, to: &str) -> bool {
        self.resolution
            .edges
            .iter()
            .any(|e| e.kind.name() == kind && e.from == key(from) && e.to == key(to))
    }

    /// `depth name` for each reached node, in result order.
    pub fn reached(&self, r: &[Reached]) -> Vec<String> {
        r.iter()
            .map(|x| format!("{} {}", x.depth, show(self.graph.key(x.node))))
            .collect()
    }

    /// The `via` chain of a reached node as `from -> to` keys.
    pub fn via(&self, r: &Reached) -> Vec<String> {
        r.via
            .iter()
            .map(|&e| {
                let e = self.graph.edge(e);
                format!(
                    "{} -> {}",
                    show(self.graph.key(e.from)),
                    show(self.graph.key(e.to))
                )
            })
            .collect()
    }
}

pub fn edge_line(e: &Edge) -> String {
    format!(
        "{} {} -> {} ({})",
        e.kind.name(),
        e.from,
        e.to,
        e.rule.name()
    )
}

/// Assert that `got` equals `want` (both as sorted sets), showing all edges on failure.
pub fn assert_set(what: &str, mut got: Vec<String>, want: &[&str], w: &World) {
    got.sort();
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want, "{what}\nall edges:\n{}", w.edges().join("\n"));
}
