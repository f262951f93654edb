//! The engine: the only place that combines sources, syntax and stores.
//!
//! Indexing ([`index`]), retrieval and fusion ([`search`]), evaluation
//! ([`eval`]) and status ([`status`]). Synchronous, plain structs in and out;
//! no terminal, no wire format (the binary owns those).

pub mod ask;
pub mod error;
pub mod eval;
pub mod expand;
pub mod graph;
pub mod home;
pub mod index;
pub mod people;
pub mod query;
pub mod search;
pub mod semantic;
pub mod settings;
pub mod status;
pub mod time;
pub mod who;

pub use error::{EngineError, Result};
pub use settings::Settings;
