//! What became of each reference, and the counts per kind.

use std::collections::BTreeMap;

use ken_core::RefKind;
use serde::{Deserialize, Serialize};

use ken_core::graph::Rule;

/// Names defined in more places than this are not resolved by name alone.
pub const MAX_CANDIDATES: usize = 3;

/// Why a reference was not resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// No definition of that name (a library, a builtin, a local variable).
    NoDefinition,
    /// Reached through an import of a module outside the repository.
    External,
    /// A very common name (`new`, `get`, `__init__`) not settled by scope,
    /// imports or qualifier.
    CommonName,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::NoDefinition => "no_definition",
            Reason::External => "external",
            Reason::CommonName => "common_name",
        }
    }
}

/// What became of one reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Resolved(Rule),
    /// Several definitions fit and nothing decides between them (the count).
    Ambiguous(usize),
    Unresolved(Reason),
}

/// Counts for one kind of reference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindStats {
    pub total: u64,
    pub resolved: u64,
    pub ambiguous: u64,
    /// Ambiguous with more than [`MAX_CANDIDATES`] candidates.
    pub ambiguous_many: u64,
    pub unresolved: u64,
    pub by_rule: BTreeMap<Rule, u64>,
    pub by_reason: BTreeMap<Reason, u64>,
}

/// Counts per kind of reference.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub call: KindStats,
    pub import: KindStats,
    pub inherit: KindStats,
    pub r#type: KindStats,
    #[serde(default)]
    pub read: KindStats,
}

impl Stats {
    pub fn get(&self, kind: RefKind) -> &KindStats {
        match kind {
            RefKind::Call => &self.call,
            RefKind::Import => &self.import,
            RefKind::Inherit => &self.inherit,
            RefKind::Type => &self.r#type,
            RefKind::Read => &self.read,
        }
    }

    fn get_mut(&mut self, kind: RefKind) -> &mut KindStats {
        match kind {
            RefKind::Call => &mut self.call,
            RefKind::Import => &mut self.import,
            RefKind::Inherit => &mut self.inherit,
            RefKind::Type => &mut self.r#type,
            RefKind::Read => &mut self.read,
        }
    }

    pub fn add(&mut self, kind: RefKind, outcome: Outcome) {
        let s = self.get_mut(kind);
        s.total += 1;
        match outcome {
            Outcome::Resolved(rule) => {
                s.resolved += 1;
                *s.by_rule.entry(rule).or_default() += 1;
            }
            Outcome::Ambiguous(n) => {
                s.ambiguous += 1;
                if n > MAX_CANDIDATES {
                    s.ambiguous_many += 1;
                }
            }
            Outcome::Unresolved(reason) => {
                s.unresolved += 1;
                *s.by_reason.entry(reason).or_default() += 1;
            }
        }
    }

    pub fn merge(&mut self, other: &Stats) {
        for kind in KINDS {
            let (a, b) = (self.get_mut(kind), other.get(kind));
            a.total += b.total;
            a.resolved += b.resolved;
            a.ambiguous += b.ambiguous;
            a.ambiguous_many += b.ambiguous_many;
            a.unresolved += b.unresolved;
            for (r, n) in &b.by_rule {
                *a.by_rule.entry(*r).or_default() += n;
            }
            for (r, n) in &b.by_reason {
                *a.by_reason.entry(*r).or_default() += n;
            }
        }
    }

    /// All kinds together.
    pub fn total(&self) -> KindStats {
        let mut all = Stats::default();
        for kind in KINDS {
            let mut one = Stats::default();
            *one.get_mut(RefKind::Call) = self.get(kind).clone();
            all.merge(&one);
        }
        all.call
    }
}

/// Every reference kind, in a fixed order.
pub const KINDS: [RefKind; 5] = [
    RefKind::Call,
    RefKind::Import,
    RefKind::Inherit,
    RefKind::Type,
    RefKind::Read,
];
