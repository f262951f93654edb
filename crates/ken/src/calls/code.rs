//! The code capabilities: search, definitions by name, lines of a file,
//! and the structure around a symbol (callers, callees, impact).

use ken_engine::{Engine, FileRange, FilterSpec, Mode, Principal, Result};
use ken_engine::{SearchRequest, SearchResponse, StructureAnswer, SymbolHit, Walk};

use super::Call;
use crate::wire;

/// Ranked code for a query.
pub struct Search {
    pub query: String,
    pub n: usize,
    pub filters: FilterSpec,
    /// One result per file.
    pub files: bool,
    pub mode: Mode,
    /// Add each snippet highlighted as HTML.
    pub highlight: bool,
}

impl Call for Search {
    type Answer = SearchResponse;
    type Wire = wire::Search;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<SearchResponse> {
        let req = SearchRequest::parse(
            &self.query,
            self.n,
            &self.filters,
            self.files,
            self.mode,
            ken_engine::now(),
        )?;
        engine.search(&req, &who.access)
    }

    fn wire(&self, r: &SearchResponse, _: &Principal) -> wire::Search {
        let mut out = wire::Search::from(r);
        if self.highlight {
            out.results = out
                .results
                .into_iter()
                .map(wire::SearchResult::highlighted)
                .collect();
        }
        out
    }
}

/// Definitions by name or qualified name, case-exact first.
pub struct FindSymbols {
    pub name: String,
    pub repos: Vec<String>,
    pub n: usize,
}

impl Call for FindSymbols {
    type Answer = Vec<SymbolHit>;
    type Wire = wire::Symbols;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Vec<SymbolHit>> {
        engine.find_symbol(&self.name, &self.repos, self.n, &who.access)
    }

    fn wire(&self, hits: &Vec<SymbolHit>, _: &Principal) -> wire::Symbols {
        wire::Symbols::from_engine(&self.name, hits)
    }
}

/// Lines of a file at the indexed commit.
pub struct ReadRange {
    pub repo: String,
    pub path: String,
    /// 1-based; None: from the first line.
    pub start: Option<u32>,
    /// Inclusive; None: to the last line.
    pub end: Option<u32>,
    /// Add the lines highlighted as HTML.
    pub highlight: bool,
}

impl Call for ReadRange {
    type Answer = FileRange;
    type Wire = wire::FileRange;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<FileRange> {
        engine.read_range(
            &self.repo,
            &self.path,
            self.start,
            self.end,
            self.highlight,
            &who.access,
        )
    }

    fn wire(&self, r: &FileRange, _: &Principal) -> wire::FileRange {
        wire::FileRange::from(r)
    }
}

/// Callers, callees or impact of a symbol.
pub struct Structure {
    /// `name`, `Class.method` or `path:name`.
    pub symbol: String,
    /// Needed when several repositories define the symbol.
    pub repo: Option<String>,
    pub walk: Walk,
}

impl Call for Structure {
    type Answer = StructureAnswer;
    type Wire = wire::Structure;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<StructureAnswer> {
        engine.structure(&self.symbol, self.repo.as_deref(), self.walk, &who.access)
    }

    fn wire(&self, a: &StructureAnswer, _: &Principal) -> wire::Structure {
        wire::Structure::from_engine(a)
    }
}
