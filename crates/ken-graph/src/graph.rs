//! The compact graph: definitions as `u32` node ids (in sorted key order,
//! so ids never depend on input order) and edges in CSR form, both ways.

use std::collections::{BTreeMap, HashMap};

use ken_core::{ChunkKind, RefKind};
use serde::{Deserialize, Serialize};

use crate::index::SymbolIndex;
use ken_core::graph::{DefKey, Edge, Rule};

pub type NodeId = u32;
pub type EdgeId = u32;

/// A set of reference kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kinds(u8);

impl Kinds {
    pub const ALL: Kinds = Kinds(0b1_1111);
    pub const CALLS: Kinds = Kinds(0b0001);
    /// Calls and reads: what `callers` and `callees` follow.
    pub const USES: Kinds = Kinds(0b1_0001);

    pub fn of(kinds: &[RefKind]) -> Kinds {
        Kinds(kinds.iter().fold(0, |acc, &k| acc | Kinds::bit(k)))
    }

    fn bit(kind: RefKind) -> u8 {
        match kind {
            RefKind::Call => 1,
            RefKind::Import => 2,
            RefKind::Inherit => 4,
            RefKind::Type => 8,
            RefKind::Read => 16,
        }
    }

    pub fn contains(self, kind: RefKind) -> bool {
        self.0 & Kinds::bit(kind) != 0
    }
}

/// An edge between node ids.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphEdge {
    pub from: NodeId,
    pub to: NodeId,
    pub kind: RefKind,
    pub line: u32,
    pub rule: Rule,
    pub confidence: f32,
}

/// Definitions and the edges between them.
#[derive(Debug, Clone, Default)]
pub struct CodeGraph {
    keys: Vec<DefKey>,
    ids: HashMap<DefKey, NodeId>,
    /// Sorted by (from, to, line, kind): the out-edges of a node are a slice.
    edges: Vec<GraphEdge>,
    out_start: Vec<u32>,
    /// Edge ids sorted by (to, from, line, kind).
    in_edges: Vec<EdgeId>,
    in_start: Vec<u32>,
    /// The definition each node is written in (`A.m` → `A`), if any.
    parent: Vec<Option<NodeId>>,
}

fn kind_rank(k: RefKind) -> u8 {
    Kinds::bit(k)
}

impl CodeGraph {
    /// A graph over `nodes` and the endpoints of `edges`. Every definition
    /// is contained in the one its qualified name extends (`A.m` in `A`).
    pub fn build(nodes: impl IntoIterator<Item = DefKey>, edges: &[Edge]) -> CodeGraph {
        CodeGraph::build_with(nodes, edges, |_| true)
    }

    /// [`CodeGraph::build`], containment limited to parents for which
    /// `container` holds.
    fn build_with(
        nodes: impl IntoIterator<Item = DefKey>,
        edges: &[Edge],
        container: impl Fn(&DefKey) -> bool,
    ) -> CodeGraph {
        let nodes: Vec<DefKey> = nodes.into_iter().collect();
        // unique keys first (by reference), then sorted: node ids follow key order
        let unique: std::collections::HashSet<&DefKey> = nodes
            .iter()
            .chain(edges.iter().flat_map(|e| [&e.from, &e.to]))
            .collect();
        let mut keys: Vec<DefKey> = unique.into_iter().cloned().collect();
        keys.sort_unstable();
        let ids: HashMap<DefKey, NodeId> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), i as NodeId))
            .collect();
        let mut list: Vec<GraphEdge> = edges
            .iter()
            .map(|e| GraphEdge {
                from: ids[&e.from],
                to: ids[&e.to],
                kind: e.kind,
                line: e.line,
                rule: e.rule,
                confidence: e.confidence,
            })
            .collect();
        list.sort_by(|a, b| {
            (a.from, a.to, a.line, kind_rank(a.kind)).cmp(&(
                b.from,
                b.to,
                b.line,
                kind_rank(b.kind),
            ))
        });
        list.dedup_by(|a, b| {
            a.from == b.from && a.to == b.to && a.line == b.line && a.kind == b.kind
        });
        let n = keys.len();
        let out_start = starts(n, list.iter().map(|e| e.from));
        let mut in_edges: Vec<EdgeId> = (0..list.len() as EdgeId).collect();
        in_edges.sort_by_key(|&i| {
            let e = &list[i as usize];
            (e.to, e.from, e.line, kind_rank(e.kind))
        });
        let in_start = starts(n, in_edges.iter().map(|&i| list[i as usize].to));
        let parent = keys
            .iter()
            .map(|k| {
                let (prefix, _) = k.qualname.rsplit_once('.')?;
                let parent = DefKey::new(k.path.clone(), prefix, 0);
                ids.get(&parent).copied().filter(|_| container(&parent))
            })
            .collect();
        CodeGraph {
            keys,
            ids,
            edges: list,
            out_start,
            in_edges,
            in_start,
            parent,
        }
    }

    /// A graph over every definition of the index (and every file's module
    /// pseudo-definition), isolated ones included. Members are contained in
    /// their class-like definition (not in namespaces or functions).
    pub fn from_index(index: &SymbolIndex, edges: &[Edge]) -> CodeGraph {
        let mut nodes: Vec<DefKey> = (0..index.def_count() as u32)
            .map(|id| index.key(id))
            .collect();
        nodes.extend(index.files().iter().map(|f| DefKey::module(f.path.clone())));
        let containers: std::collections::HashSet<DefKey> = (0..index.def_count() as u32)
            .filter(|&id| {
                let kind = index.def(id).kind;
                kind.is_container() && kind != ChunkKind::Namespace
            })
            .map(|id| index.key(id))
            .collect();
        CodeGraph::build_with(nodes, edges, |parent| containers.contains(parent))
    }

    pub fn node_count(&self) -> usize {
        self.keys.len()
    }

    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    pub fn id(&self, key: &DefKey) -> Option<NodeId> {
        self.ids.get(key).copied()
    }

    pub fn key(&self, node: NodeId) -> &DefKey {
        &self.keys[node as usize]
    }

    pub fn keys(&self) -> &[DefKey] {
        &self.keys
    }

    pub fn edge(&self, id: EdgeId) -> &GraphEdge {
        &self.edges[id as usize]
    }

    /// Ids of the edges leaving `node`, by (to, line).
    pub fn out_edges(&self, node: NodeId) -> std::ops::Range<EdgeId> {
        self.out_start[node as usize]..self.out_start[node as usize + 1]
    }

    /// Ids of the edges entering `node`, by (from, line).
    pub fn in_edges(&self, node: NodeId) -> &[EdgeId] {
        let (a, b) = (
            self.in_start[node as usize],
            self.in_start[node as usize + 1],
        );
        &self.in_edges[a as usize..b as usize]
    }

    /// The definition `node` is written in (a method's class), if any.
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        self.parent[node as usize]
    }

    /// Weighted adjacency of `kinds` (weights: summed confidences, no self
    /// loops), plus an edge of weight `containment` from each definition to
    /// the one it is written in.
    pub(crate) fn weighted(&self, kinds: Kinds, containment: f64) -> Weighted {
        let mut w = Weighted {
            start: Vec::with_capacity(self.keys.len() + 1),
            to: Vec::new(),
            weight: Vec::new(),
        };
        for node in 0..self.keys.len() as NodeId {
            w.start.push(w.to.len() as u32);
            for e in
                &self.edges[self.out_edges(node).start as usize..self.out_edges(node).end as usize]
            {
                if e.to == node || !kinds.contains(e.kind) {
                    continue;
                }
                w.add(e.to, e.confidence as f64);
            }
            if containment > 0.0
                && let Some(p) = self.parent[node as usize]
            {
                w.add(p, containment);
            }
        }
        w.start.push(w.to.len() as u32);
        w
    }
}

/// CSR offsets from a sorted sequence of sources.
fn starts(n: usize, sources: impl Iterator<Item = NodeId>) -> Vec<u32> {
    let mut count = vec![0u32; n + 1];
    for s in sources {
        count[s as usize + 1] += 1;
    }
    for i in 0..n {
        count[i + 1] += count[i];
    }
    count
}

/// A weighted CSR adjacency (what PageRank walks).
#[derive(Debug, Clone, Default)]
pub(crate) struct Weighted {
    pub start: Vec<u32>,
    pub to: Vec<NodeId>,
    pub weight: Vec<f64>,
}

impl Weighted {
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// Add weight to the current node's edge to `to` (merged with its
    /// last edge when that goes to `to` too).
    fn add(&mut self, to: NodeId, weight: f64) {
        let row = *self.start.last().unwrap_or(&0) as usize;
        if self.to.len() > row && self.to.last() == Some(&to) {
            *self.weight.last_mut().expect("an edge") += weight;
        } else {
            self.to.push(to);
            self.weight.push(weight);
        }
    }
}

/// Files that depend on other files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEdge {
    pub from: String,
    pub to: String,
    /// References from `from` to `to`.
    pub count: u32,
    /// Their summed confidence.
    pub weight: f32,
}

/// The file-level graph: one node per file, edges weighted by how much one
/// file refers to another (references inside a file are left out).
#[derive(Debug, Clone, Default)]
pub struct FileGraph {
    pub files: Vec<String>,
    /// Sorted by (from, to).
    pub edges: Vec<FileEdge>,
}

impl FileGraph {
    /// From definition-level edges, over `files` and the edges' files.
    pub fn build<'a>(files: impl IntoIterator<Item = &'a str>, edges: &[Edge]) -> FileGraph {
        let mut agg: BTreeMap<(&str, &str), (u32, f32)> = BTreeMap::new();
        for e in edges {
            if e.from.path != e.to.path {
                let slot = agg.entry((&e.from.path, &e.to.path)).or_default();
                slot.0 += 1;
                slot.1 += e.confidence;
            }
        }
        let mut names: Vec<String> = files.into_iter().map(str::to_string).collect();
        for (a, b) in agg.keys() {
            names.push(a.to_string());
            names.push(b.to_string());
        }
        names.sort();
        names.dedup();
        FileGraph {
            files: names,
            edges: agg
                .into_iter()
                .map(|((a, b), (count, weight))| FileEdge {
                    from: a.to_string(),
                    to: b.to_string(),
                    count,
                    weight,
                })
                .collect(),
        }
    }

    /// The node id of a file (files are sorted).
    pub fn node(&self, path: &str) -> Option<NodeId> {
        self.files
            .binary_search_by(|f| f.as_str().cmp(path))
            .ok()
            .map(|i| i as NodeId)
    }

    /// The same files with every edge also followed backwards (a file is
    /// near both what it uses and what uses it), weights summed.
    pub fn undirected(&self) -> FileGraph {
        let mut agg: BTreeMap<(&str, &str), (u32, f32)> = BTreeMap::new();
        for e in &self.edges {
            for (a, b) in [(&e.from, &e.to), (&e.to, &e.from)] {
                let slot = agg.entry((a.as_str(), b.as_str())).or_default();
                slot.0 += e.count;
                slot.1 += e.weight;
            }
        }
        FileGraph {
            files: self.files.clone(),
            edges: agg
                .into_iter()
                .map(|((a, b), (count, weight))| FileEdge {
                    from: a.to_string(),
                    to: b.to_string(),
                    count,
                    weight,
                })
                .collect(),
        }
    }

    pub(crate) fn weighted(&self) -> Weighted {
        let pos: HashMap<&str, NodeId> = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.as_str(), i as NodeId))
            .collect();
        let mut w = Weighted::default();
        let mut it = self.edges.iter().peekable();
        for (i, f) in self.files.iter().enumerate() {
            w.start.push(w.to.len() as u32);
            while let Some(e) = it.peek() {
                if e.from != *f {
                    break;
                }
                w.to.push(pos[e.to.as_str()]);
                w.weight.push(e.weight as f64);
                it.next();
            }
            let _ = i;
        }
        w.start.push(w.to.len() as u32);
        w
    }
}
