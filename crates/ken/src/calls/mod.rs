//! Each capability declared once: what it is asked (one request type), the
//! engine call that answers it, and the wire shape of the answer.
//!
//! The command line, the HTTP API and the MCP tools each spell a request
//! their own way (`ken search WORDS -n 5 --repo a --repo b`, `GET
//! /api/v1/search?q=…&repo=a,b`, `search_code {"query": …}`), with names,
//! limits and descriptions their contracts fix (docs/cli.md, docs/http.md,
//! docs/mcp.md). So each edge keeps its argument struct and converts it into
//! the capability's request here, in one `From`; everything after that (the
//! defaults, the engine call, the wire shape) is written once, in this
//! module, and every edge runs it through [`Call`].

mod ask;
mod code;
mod people;
mod repos;

use ken_engine::{Engine, Principal, Result};
use serde::Serialize;

pub use ask::Ask;
pub use code::{FindSymbols, ReadRange, Search, Structure};
pub use people::{Blame, LogSearch, People, Person, Who};
pub use repos::{Enqueue, Job, Jobs, Report, Status};

/// One capability's request: run it on the engine for a caller, then
/// shape the answer for the wire. The two steps are apart because the
/// command line prints the engine's answer for people and the wire shape
/// for `--json`.
pub trait Call: Send + 'static {
    /// What the engine answers.
    type Answer: Send + 'static;
    /// What `--json`, the API and the MCP tool return.
    type Wire: Serialize + Send + 'static;

    fn run(&self, engine: &Engine, who: &Principal) -> Result<Self::Answer>;

    fn wire(&self, answer: &Self::Answer, who: &Principal) -> Self::Wire;

    /// Whether the call mostly waits (on a chat model) rather than
    /// computes: it then runs without one of the few CPU permits.
    fn waits(&self) -> bool {
        false
    }

    /// Run it and shape the answer (what the HTTP and MCP edges send).
    fn answer(&self, engine: &Engine, who: &Principal) -> Result<Self::Wire> {
        self.run(engine, who).map(|a| self.wire(&a, who))
    }
}

/// `a,b` → `[a, b]`: a list as a query parameter or an MCP argument spells it.
pub fn comma_list(v: &Option<String>) -> Vec<String> {
    v.iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comma_list_drops_blanks() {
        assert_eq!(
            comma_list(&Some(" a, ,b,".into())),
            vec!["a".to_string(), "b".to_string()]
        );
        assert!(comma_list(&None).is_empty());
    }
}
