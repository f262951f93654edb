//! The engine: the only place that combines sources, syntax and stores.
//!
//! [`Engine`] is the long-lived handle every edge (command line, HTTP, MCP,
//! webhook jobs) holds: indexing ([`index`]), retrieval and fusion
//! ([`search`]), answers ([`ask`]), people ([`who`]), structure ([`graph`]),
//! evaluation ([`eval`]), status, tokens and jobs. Synchronous, plain
//! structs in and out; no terminal, no wire format (the binary owns those).

pub mod ask;
pub mod churn;
pub mod engine;
pub mod error;
pub mod eval;
pub mod expand;
pub mod fusion;
pub mod graph;
pub mod home;
pub mod index;
pub mod issue;
pub mod issue_template;
pub mod jobs;
pub mod params;
pub mod people;
pub mod query;
pub mod query_cache;
pub mod repo;
pub mod report;
pub mod request;
pub mod search;
pub mod semantic;
pub mod settings;
pub mod status;
pub mod time;
pub mod tokens;
pub mod tune;
pub mod who;

pub use engine::{
    Access, Area, BlameRange, Engine, FileBlame, FileRange, PersonView, StructureAnswer, SymbolHit,
    highlight,
};
pub use error::{EngineError, ErrorKind, Result};
pub use settings::{RerankerSpec, Settings};
