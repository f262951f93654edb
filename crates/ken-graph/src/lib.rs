//! The code graph: references resolved to definitions, and the algorithms
//! the engine runs over them — PageRank as a ranking prior, personalized
//! PageRank from a query's best hits, callers, callees and impact.
//!
//! Pure data and algorithms: no I/O, no threads, deterministic (ties are
//! broken by sorted keys and node ids, never by hash order).
//!
//! ```
//! use ken_core::{ChunkKind, Definition, Language, RefKind, Reference};
//! use ken_graph::{CodeGraph, DefKey, FileFacts, SymbolIndex, resolve_all};
//!
//! let def = |name: &str, line| Definition {
//!     name: name.into(), qualname: name.into(), kind: ChunkKind::Function,
//!     start_line: line, end_line: line + 1, signature: None,
//! };
//! let call = Reference {
//!     kind: RefKind::Call, name: "helper".into(), qualifier: None,
//!     line: 2, from: Some("main".into()), alias: None, receiver: None,
//! };
//! let file = FileFacts::new("app.py", Language::Python, vec![def("main", 1), def("helper", 4)], vec![call]);
//! let index = SymbolIndex::build([&file]);
//! let resolution = resolve_all(std::slice::from_ref(&file), &index);
//! assert_eq!(resolution.edges[0].to, DefKey::new("app.py", "helper", 0));
//!
//! let graph = CodeGraph::from_index(&index, &resolution.edges);
//! let helper = graph.id(&DefKey::new("app.py", "helper", 0)).unwrap();
//! let callers = graph.callers(helper, 1);
//! assert_eq!(graph.key(callers[0].node).qualname, "main");
//! ```
//!
//! # Resolution
//!
//! [`SymbolIndex::build`] indexes every file's definitions (by short name,
//! qualified name, `Parent.member` and file), its module keys (`src/flask/app.py`
//! is `flask.app`; a Rust file is a module of the crate under its `src`; a
//! JS path is imported by relative path; a Go directory is a package; Java
//! files by package path), its imports and its base classes.
//! [`resolve_file`] then takes each reference of a file and tries, in order:
//!
//! 1. **scope** — the same file: a bare `f()` is the innermost `f` visible
//!    from where it is written (a class body is a scope only for itself,
//!    or for its methods in languages with an implicit `this`; of several
//!    `f` in one scope, in Python and JavaScript, the one around the
//!    reference, else the nearest before it); `self.m()` /
//!    `this.m()` is a member of the enclosing class, else of its bases
//!    (followed up to three levels, across files);
//! 2. **imports** — names and module aliases bound by the file's imports
//!    (under their alias: `from m import a as b`, `import { a as b }`),
//!    following re-exports (`from .app import Flask` in `__init__.py`,
//!    `export { a as b } from './m'`, and a file's own `export { Hono as
//!    HonoBase }`); a module is the target of an import only, never of a
//!    call, read or type use;
//!    a name reached through a module outside the repository (Python, Rust,
//!    JS, where that can be told) is *external* and goes no further;
//!    Go: a top-level name of another file of the same directory;
//! 3. **qualified** — a qualifier that spells a module path
//!    (`crate::walk::f`) or names a type whose member it is
//!    (`Command.AddCommand`, `Type::new`);
//! 4. **same file** — the only definition of that name in the file;
//! 5. **unique global** — the only definition of that name in the
//!    repository (same language family, fitting kind), unless the name is
//!    very common (`new`, `get`, `__init__`...).
//!
//! Each edge records the [`Rule`] that made it and its confidence (1.0
//! scope and imports; 0.9 package and base class; 0.8 qualified; 0.7 same
//! file; 0.5 unique global). A reference no rule settles is counted
//! [`Outcome::Ambiguous`] (several candidates; more than
//! [`MAX_CANDIDATES`] are counted apart) or [`Outcome::Unresolved`] with a
//! [`Reason`] — never guessed.
//!
//! A recursive definition is among its own callers, callees and dependents
//! ([`CodeGraph::callers`]): a walk never reaches its start again, but a
//! compiler counts the call.
//!
//! Edges go from the definition the reference is written in (a file's
//! `<module>` pseudo-definition at top level) to the definition(s) named;
//! a whole-module import points at the imported file's `<module>`.
//!
//! # Incremental updates
//!
//! [`SymbolIndex::update`] applies a batch (changed and removed files) and
//! returns the files whose edges must be recomputed with [`resolve_file`]:
//! the changed files, and every file that mentions a name whose
//! definitions, imports or base classes changed. [`DefKey`]s hold no line
//! numbers, so edges into a file that only moved code stay valid.
//!
//! # Code map
//!
//! - `ken_core::graph`: [`FileFacts`], [`DefKey`], [`Edge`], [`Rule`] (plain data, re-exported).
//! - `modpath.rs`: files as modules, import specs to module keys.
//! - `index.rs`: [`SymbolIndex`] (build, update, look-ups, serde).
//! - `resolve.rs`: the heuristics; `outcome.rs`: [`Outcome`], [`Stats`].
//! - `graph.rs`: [`CodeGraph`] (CSR both ways), [`FileGraph`].
//! - `rank.rs`: PageRank and personalized PageRank.
//! - `walk.rs`: callers, callees, impact with `via` chains.

mod graph;
mod index;
mod modpath;
mod outcome;
mod rank;
mod resolve;
pub mod scip;
mod walk;

pub use graph::{CodeGraph, EdgeId, FileEdge, FileGraph, GraphEdge, Kinds, NodeId};
pub use index::{
    BaseEntry, Candidate, DefEntry, DefId, FileEntry, FileId, ImportEntry, SymbolIndex, Update,
};
pub use ken_core::graph::{DefKey, Edge, FileFacts, MODULE, Rule};
pub use outcome::{KINDS, KindStats, MAX_CANDIDATES, Outcome, Reason, Stats};
pub use rank::{RankOptions, Ranks};
pub use resolve::{
    FileResolution, Resolution, resolve_all, resolve_file, resolve_file_scip,
    resolve_file_with_outcomes,
};
pub use scip::{ScipIndex, ScipStats};
pub use walk::Reached;
