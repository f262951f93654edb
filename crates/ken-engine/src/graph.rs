//! The code graph in the index: references resolved to definitions after
//! each run (only for the files the run touched and the files that mention
//! names they define), PageRank as a static prior, and the structure
//! queries (`callers`, `callees`, `impact`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use ken_graph::{
    CodeGraph, DefKey, FileGraph, NodeId, RankOptions, Reached, Rule, ScipIndex, ScipStats,
    SymbolIndex,
};
use ken_store::{ChunkStore, GraphStore};
use serde::Serialize;

use crate::{EngineError, Result};

/// What a graph update did.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct GraphReport {
    /// Everything was resolved again (no usable saved state).
    pub full: bool,
    /// Files whose references were resolved by this update.
    pub files_resolved: usize,
    pub edges: usize,
    pub nodes: usize,
    pub seconds: f64,
}

/// The saved symbol index's format. A saved index of another format (or
/// of none: those written before formats were counted) is rebuilt from the
/// stored facts, so that what a new format adds (2: the aliases of
/// imports, for base classes; 3: module-level variables of a known class,
/// for imported ones' members) reaches every file at once.
const INDEX_FORMAT: u32 = 3;

#[derive(serde::Deserialize)]
struct SavedIndex {
    format: u32,
    index: SymbolIndex,
    /// The SCIP index read into the graph, if any.
    #[serde(default)]
    scip: Option<ScipIndex>,
}

#[derive(Serialize)]
struct SavingIndex<'a> {
    format: u32,
    index: &'a SymbolIndex,
    #[serde(skip_serializing_if = "Option::is_none")]
    scip: Option<&'a ScipIndex>,
}

/// The symbol index (and SCIP index read) of a saved JSON, when it is of
/// the current format.
fn read_index(json: &str) -> Option<(SymbolIndex, Option<ScipIndex>)> {
    let saved: SavedIndex = serde_json::from_str(json).ok()?;
    (saved.format == INDEX_FORMAT).then_some((saved.index, saved.scip))
}

fn write_index(index: &SymbolIndex, scip: Option<&ScipIndex>) -> Result<String> {
    serde_json::to_string(&SavingIndex {
        format: INDEX_FORMAT,
        index,
        scip,
    })
    .map_err(|e| EngineError::internal(format!("saving the symbol index: {e}")))
}

/// Bring the graph up to date after a run that changed `changed` and
/// removed `removed` (paths). `seq_before` is the store's batch sequence
/// before the run: the saved symbol index is used only if it matches it.
///
/// A SCIP index read before keeps answering for the files that did not
/// change; a changed file is resolved by name until an index that
/// describes it is read. A graph rebuilt from scratch forgets it.
pub fn update_graph(
    store: &mut dyn GraphStore,
    changed: &[String],
    removed: &[String],
    seq_before: u64,
    seq_after: u64,
) -> Result<GraphReport> {
    let started = Instant::now();
    let mut report = GraphReport::default();
    // an unreadable index, or one of another format, is as good as none:
    // the graph is rebuilt
    let saved = store
        .graph_index()?
        .filter(|(seq, _)| *seq == seq_before)
        .and_then(|(_, json)| read_index(&json));
    let (index, scip) = match saved {
        Some((index, scip)) if seq_before == seq_after => {
            // nothing changed since the graph was saved
            report.nodes = index.def_count();
            (index, scip)
        }
        Some((mut index, mut scip)) => {
            let facts = store.graph_facts(Some(changed))?;
            // files that now have no facts (deleted, emptied, skipped) leave the index too
            let with_facts: BTreeSet<&str> = facts.iter().map(|f| f.path.as_str()).collect();
            let gone: Vec<&str> = removed
                .iter()
                .chain(changed)
                .map(String::as_str)
                .filter(|p| !with_facts.contains(p))
                .collect();
            if let Some(scip) = &mut scip {
                scip.forget(changed.iter().chain(removed).map(String::as_str));
            }
            let upd = index.update(&facts, &gone);
            let redo = store.graph_facts(Some(&upd.reresolve))?;
            let mut edges = Vec::new();
            for f in &redo {
                edges.extend(ken_graph::resolve_file_scip(f, &index, scip.as_ref()).edges);
            }
            let mut touched: Vec<String> = upd.reresolve.clone();
            touched.extend(gone.iter().map(|p| p.to_string()));
            store.replace_edges(Some(&touched), &edges)?;
            report.files_resolved = redo.len();
            (index, scip)
        }
        None => {
            let facts = store.graph_facts(None)?;
            let index = SymbolIndex::build(facts.iter());
            let res = ken_graph::resolve_all(&facts, &index);
            store.replace_edges(None, &res.edges)?;
            report.full = true;
            report.files_resolved = facts.len();
            (index, None)
        }
    };
    if seq_before != seq_after || report.full {
        save_graph(store, &index, scip.as_ref(), seq_after, &mut report)?;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// PageRank of definitions and files from the stored edges, and the
/// symbol index saved as of batch `seq`.
fn save_graph(
    store: &mut (impl GraphStore + ?Sized),
    index: &SymbolIndex,
    scip: Option<&ScipIndex>,
    seq: u64,
    report: &mut GraphReport,
) -> Result<()> {
    let edges = store.edges()?;
    let graph = CodeGraph::from_index(index, &edges);
    let ranks = graph.pagerank(&RankOptions::default());
    let n = graph.node_count().max(1) as f64;
    let defs: Vec<(DefKey, f32)> = (0..graph.node_count())
        .map(|i| (graph.key(i as NodeId).clone(), (ranks.scores[i] * n) as f32))
        .collect();
    let files_list: Vec<&str> = index.files().iter().map(|f| f.path.as_str()).collect();
    let fg = FileGraph::build(files_list.iter().copied(), &edges);
    let franks = fg.pagerank(&RankOptions::default());
    let fnum = fg.files.len().max(1) as f64;
    let files: Vec<(String, f32)> = fg
        .files
        .iter()
        .zip(&franks.scores)
        .map(|(p, r)| (p.clone(), (r * fnum) as f32))
        .collect();
    store.set_ranks(&defs, &files)?;
    report.edges = edges.len();
    report.nodes = graph.node_count();
    store.save_graph_index(seq, &write_index(index, scip)?)?;
    Ok(())
}

/// What reading a SCIP index into the graph did.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ScipReport {
    /// The file read.
    pub path: String,
    /// The same index was read before: nothing was done.
    pub unchanged: bool,
    #[serde(flatten)]
    pub stats: ScipStats,
    /// Edges of the graph after reading it, and how many of them it made.
    pub edges: usize,
    pub edges_from_scip: usize,
    pub seconds: f64,
}

/// The digest of the SCIP index the graph holds (None: none read). Only
/// that field is decoded: the symbol index beside it is skipped over.
pub fn scip_digest(store: &(impl GraphStore + ?Sized)) -> Result<Option<String>> {
    #[derive(serde::Deserialize)]
    struct Digest {
        digest: String,
    }
    #[derive(serde::Deserialize)]
    struct Saved {
        format: u32,
        #[serde(default)]
        scip: Option<Digest>,
    }
    Ok(store
        .graph_index()?
        .and_then(|(_, json)| serde_json::from_str::<Saved>(&json).ok())
        .filter(|saved| saved.format == INDEX_FORMAT)
        .and_then(|saved| saved.scip)
        .map(|s| s.digest))
}

/// Read a SCIP index (the bytes of a `.scip` file) into the graph saved
/// as of batch `seq`: the files it describes, as indexed, take their
/// edges from it (by name where it says nothing); the files of an index
/// read before that this one does not describe go back to resolution by
/// name.
pub fn read_scip(
    store: &mut (impl GraphStore + ChunkStore + ?Sized),
    bytes: &[u8],
    seq: u64,
) -> Result<ScipReport> {
    let started = Instant::now();
    let Some((index, old)) = store
        .graph_index()?
        .filter(|(s, _)| *s == seq)
        .and_then(|(_, json)| read_index(&json))
    else {
        return Err(EngineError::internal(
            "the code graph is not saved as of this index run",
        ));
    };
    let paths: Vec<String> = index.files().iter().map(|f| f.path.clone()).collect();
    let facts: HashMap<String, ken_core::FileFacts> = store
        .graph_facts(Some(&paths))?
        .into_iter()
        .map(|f| (f.path.clone(), f))
        .collect();
    let mut failed = None;
    let (scip, stats) = ken_graph::scip::read(bytes, &index, |p| {
        let text = store.file_text(p).unwrap_or_else(|e| {
            failed.get_or_insert(e);
            None
        })?;
        Some(ken_graph::scip::ScipSource {
            facts: facts.get(p),
            text,
        })
    })
    .map_err(EngineError::bad_input)?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let mut redo: BTreeSet<&str> = scip.files.keys().map(String::as_str).collect();
    if let Some(old) = &old {
        redo.extend(old.files.keys().map(String::as_str));
    }
    let mut edges = Vec::new();
    let mut touched = Vec::new();
    for p in redo {
        touched.push(p.to_string());
        if let Some(f) = facts.get(p) {
            edges.extend(ken_graph::resolve_file_scip(f, &index, Some(&scip)).edges);
        }
    }
    store.replace_edges(Some(&touched), &edges)?;
    let mut graph = GraphReport::default();
    save_graph(store, &index, Some(&scip), seq, &mut graph)?;
    Ok(ScipReport {
        path: String::new(),
        unchanged: false,
        edges_from_scip: edges.iter().filter(|e| e.rule == Rule::Scip).count(),
        edges: graph.edges,
        stats,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A definition as the structure commands show it.
#[derive(Debug, Clone, Serialize)]
pub struct DefRef {
    pub path: String,
    pub symbol: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// One step of a chain: `from` uses `to` at `path:line`.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub from: String,
    pub to: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    /// How the reference was tied to `to`: resolved by name, with the rule
    /// that settled it (`scope`, `import`, `base`, `qualified`,
    /// `same_file`, `unique_global`: the last two are guesses).
    pub rule: String,
    /// The rule's confidence, in (0, 1].
    pub confidence: f32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Related {
    pub path: String,
    pub symbol: String,
    pub start_line: u32,
    pub end_line: u32,
    pub depth: u32,
    pub via: Vec<Step>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StructureResult {
    pub symbol: String,
    /// Definitions the name matched (more than one: ambiguous, all are used
    /// unless a path narrows it down).
    pub candidates: Vec<DefRef>,
    pub results: Vec<Related>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    Callers,
    Callees,
    Impact {
        max_depth: u32,
    },
    /// Every reference to the symbol, of every kind (call, read, import,
    /// inherit, type), one result per place it is written: the definition
    /// it is written in, with the step giving its line, kind and rule.
    References,
}

/// A repository's symbol index and code graph, loaded once and queried
/// many times (a server keeps it with the open repository).
pub struct LoadedGraph {
    index: SymbolIndex,
    graph: CodeGraph,
}

/// Load the graph from the store's facts and resolved edges.
pub fn load_graph(store: &dyn GraphStore) -> Result<LoadedGraph> {
    let facts = store.graph_facts(None)?;
    let index = SymbolIndex::build(facts.iter());
    let edges = store.edges()?;
    let graph = CodeGraph::from_index(&index, &edges);
    Ok(LoadedGraph { index, graph })
}

impl LoadedGraph {
    /// Callers, callees or impact of the definitions named `symbol`
    /// (`name`, `Class.method`, or `path:name` to pick one).
    pub fn structure(&self, symbol: &str, walk: Walk) -> StructureResult {
        structure_in(&self.index, &self.graph, symbol, walk)
    }
}

fn structure_in(
    index: &SymbolIndex,
    graph: &CodeGraph,
    symbol: &str,
    walk: Walk,
) -> StructureResult {
    let (path_filter, name) = match symbol.rsplit_once(':') {
        Some((p, n)) if !p.is_empty() && !p.ends_with(':') && !n.is_empty() => (Some(p), n),
        _ => (None, symbol),
    };
    let name = name.replace("::", ".");
    let mut candidates = index.lookup(&name);
    if let Some(p) = path_filter {
        candidates.retain(|c| c.key.path == p || c.key.path.ends_with(&format!("/{p}")));
    }
    let lines: HashMap<DefKey, (u32, u32)> = candidates
        .iter()
        .map(|c| (c.key.clone(), (c.start_line, c.end_line)))
        .collect();
    let starts: Vec<NodeId> = candidates.iter().filter_map(|c| graph.id(&c.key)).collect();
    let reached: Vec<Reached> = match walk {
        Walk::Callers => starts.iter().flat_map(|&s| graph.callers(s, 1)).collect(),
        Walk::Callees => starts.iter().flat_map(|&s| graph.callees(s)).collect(),
        Walk::Impact { max_depth } => graph.impact_of(&starts, ken_graph::Kinds::ALL, max_depth),
        Walk::References => {
            // one result per place: a reference tied to every definition
            // of one symbol (a property's getter and setter, overloads)
            // is listed once
            let mut places = HashSet::new();
            starts
                .iter()
                .flat_map(|&s| graph.in_edges(s))
                .filter(|&&e| {
                    let edge = graph.edge(e);
                    places.insert((edge.from, edge.line, edge.kind))
                })
                .map(|&e| Reached {
                    node: graph.edge(e).from,
                    depth: 1,
                    via: vec![e],
                })
                .collect()
        }
    };
    let def_lines = |key: &DefKey| -> (u32, u32) {
        if let Some(l) = lines.get(key) {
            return *l;
        }
        index
            .find(key)
            .map(|id| {
                let d = index.def(id);
                (d.start_line, d.end_line)
            })
            .unwrap_or((1, 1))
    };
    let mut results: Vec<Related> = Vec::new();
    let mut seen = BTreeSet::new();
    for r in reached {
        let key = graph.key(r.node).clone();
        // a definition is reached once, but it may refer to the symbol in
        // several places
        if !seen.insert(key.clone()) && walk != Walk::References {
            continue;
        }
        let (start_line, end_line) = def_lines(&key);
        let via = r
            .via
            .iter()
            .map(|&e| {
                let ge = graph.edge(e);
                Step {
                    from: graph.key(ge.from).to_string(),
                    to: graph.key(ge.to).to_string(),
                    kind: ge.kind.name().to_string(),
                    path: graph.key(ge.from).path.clone(),
                    line: ge.line,
                    rule: ge.rule.name().to_string(),
                    confidence: ge.confidence,
                }
            })
            .collect();
        results.push(Related {
            path: key.path.clone(),
            symbol: key.qualname.clone(),
            start_line,
            end_line,
            depth: r.depth,
            via,
        });
    }
    StructureResult {
        symbol: symbol.to_string(),
        candidates: one_per_symbol(&candidates),
        results,
    }
}

/// The candidates as definitions to pick from: the definitions of one
/// qualified name in one file (`@overload` stubs and their implementation,
/// a property's getter and setter, a C++ declaration and its definition)
/// are one symbol, spanning all their lines; the walk starts from each.
fn one_per_symbol(candidates: &[ken_graph::Candidate]) -> Vec<DefRef> {
    let mut out: Vec<DefRef> = Vec::new();
    for c in candidates {
        let same = out
            .iter_mut()
            .find(|d| d.path == c.key.path && d.symbol == c.key.qualname);
        match same {
            Some(d) => {
                d.start_line = d.start_line.min(c.start_line);
                d.end_line = d.end_line.max(c.end_line);
            }
            None => out.push(DefRef {
                path: c.key.path.clone(),
                symbol: c.key.qualname.clone(),
                kind: c.kind.name().to_string(),
                start_line: c.start_line,
                end_line: c.end_line,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_index_is_read_back_only_in_its_own_format() {
        let index = SymbolIndex::build(&[]);
        let json = write_index(&index, None).unwrap();
        assert!(read_index(&json).is_some_and(|(_, scip)| scip.is_none()));
        // with the SCIP index read into it
        let scip = ScipIndex {
            digest: "d1".into(),
            ..Default::default()
        };
        let with = write_index(&index, Some(&scip)).unwrap();
        assert_eq!(read_index(&with).unwrap().1, Some(scip));
        // written before formats were counted: the bare index
        let bare = serde_json::to_string(&index).unwrap();
        assert!(read_index(&bare).is_none());
        let other = json.replace(&format!("\"format\":{INDEX_FORMAT}"), "\"format\":1");
        assert_ne!(other, json);
        assert!(read_index(&other).is_none());
        assert!(read_index("not json").is_none());
    }
}
