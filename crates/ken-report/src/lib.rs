//! Reports over a period of a repository's history, and tickets linked to
//! commits.
//!
//! Pure: the engine gathers a [`ReportInput`] (commits with the period's
//! diffs, blame, the code graph's fan-in, people, tickets, secrets found by
//! [`secrets::Scanner`]) and [`build`] turns it into a [`Report`], which
//! [`render`] writes as Markdown or self-contained HTML (JSON is the
//! report's serde form, documented in docs/report.md).

pub mod build;
pub mod input;
pub mod model;
pub mod narrative;
pub mod render;
pub mod secrets;
pub mod tickets;

pub use build::{ReportParams, build, is_fix_message};
pub use input::*;
pub use model::*;
