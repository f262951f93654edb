//! The engine: the only place that combines sources, syntax and stores.
//!
//! [`Engine`] is the long-lived handle every edge (command line, HTTP, MCP,
//! webhook jobs) holds, with one method per capability: indexing, search,
//! answers, people, structure, reports and tickets, evaluation, status,
//! tokens and jobs. Synchronous, plain structs in and out; no terminal, no
//! wire format (the binary owns those). Everything the edges may name is
//! re-exported here; the modules themselves are private, so the engine's
//! inside can change without an edge noticing.

mod access;
mod adapt;
mod ask;
mod branch;
mod churn;
mod context;
pub(crate) mod doc_questions;
mod engine;
mod error;
mod eval;
mod expand;
mod fleet;
mod follow;
mod fusion;
mod graph;
mod home;
mod index;
mod issue;
mod issue_template;
mod jobs;
pub mod models;
mod params;
mod people;
mod query_cache;
mod query_map;
mod question;
mod question_kind;
mod repo;
mod report;
mod request;
mod route;
mod search;
mod semantic;
mod settings;
mod status;
#[cfg(test)]
mod testing;
mod tickets;
mod time;
mod tokens;
mod tune;
mod tune_docs;
mod who;

pub use access::{Access, Principal, Scope};
pub use ask::{AskObserver, AskRequest, AskResponse, Quiet, StepOutcome};
pub use context::ASK_LIMIT;
pub use engine::{
    Area, BlameRange, Engine, FileBlame, FileRange, PersonView, StructureAnswer, SymbolHit,
    highlight,
};
pub use error::{Edge, EngineError, ErrorKind, Result};
pub use eval::{EvalMode, EvalOptions, EvalReport};
pub use fleet::FleetReport;
pub use follow::{PollReport, Polled, SyncReport, SyncRequest, SyncedRepo};
pub use graph::{DefRef, Related, ScipReport, Step, StructureResult, Walk};
pub use index::{IndexLimits, IndexReport, IndexRequest, NoProgress, Progress, SCIP_FILE};
pub use jobs::{IndexJob, Job, Push, PushOutcome};
pub use params::LEARNED_SHAPE_MIN;
pub use people::{Evidence, PersonSummary, WhoPerson};
pub use report::ReportRequest;
pub use request::{FilterSpec, parse_mode};
pub use search::{Mode, RepoFacet, RerankCost, SearchRequest, SearchResponse};
pub use semantic::{EmbedOrder, EmbedProgress, EmbedText, EmbedderSpec};
pub use settings::{RerankerSpec, Settings};
pub use status::RepoStatus;
pub use tickets::TicketEvidence;
pub use time::{format_date, now};
pub use who::{LogHit, LogSearchRequest, WhoResponse};

/// Types of the crates below the engine that its API speaks: claim marks
/// of answers, job states, the learned ranking, the embedder's, reranker's
/// and chat model's configuration, reports and their rendering.
pub use ken_embed::{HttpConfig, RerankApi, RerankConfig};
pub use ken_llm::{ChatConfig, Citation, Claim, ClaimStatus};
pub use ken_report::Report;
pub use ken_report::render;
pub use ken_report::tickets::TicketFormat;
pub use ken_source::HostKind;
pub use ken_store::{DenseAdapter, DocsRanking, JobState, RemoteHead, TunedRanking};

/// For the offline tools in `examples/` (signal dumps for fusion
/// research); not an API, and it may change at any time.
#[doc(hidden)]
pub mod research {
    pub use crate::doc_questions::{DocQuestion, doc_questions};
    pub use crate::question::identifiers;
    pub use crate::repo::indexed_paths;
    pub use crate::search::SearchEnv;
    pub use crate::search::file_prior;
    pub use crate::semantic::load_vectors;
    pub use crate::semantic::{EmbedderSpec, dense_search, open_embedder};
    pub use crate::tune::dump_examples;
}
