//! How a symbol look-up is answered, whatever the store: the exact tier
//! (name, or qualified name when the identifier has `.` or `::`, folded;
//! case-exact first), then, when partial matches are asked for, prefix and
//! substring tiers over folded names. A store runs the queries this plans
//! and hands the rows back; the tiers, order and de-duplication are here.

use std::collections::HashSet;

use crate::{SymbolMatch, SymbolTier};

/// Fold an identifier for case- and separator-insensitive comparison.
pub fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// One look-up under way.
pub(crate) struct SymbolLookup {
    ident: String,
    folded: String,
    qualified: bool,
    qual_ident: String,
    limit: usize,
    partial: bool,
    out: Vec<SymbolMatch>,
    seen: HashSet<(String, u32, String)>,
}

impl SymbolLookup {
    /// None: the identifier folds to nothing (no symbol can match).
    pub fn new(ident: &str, limit: usize, partial: bool) -> Option<SymbolLookup> {
        let folded = fold(ident);
        if folded.is_empty() {
            return None;
        }
        Some(SymbolLookup {
            ident: ident.to_string(),
            folded,
            qualified: ident.contains('.') || ident.contains("::"),
            qual_ident: ident.replace("::", "."),
            limit,
            partial,
            out: Vec::new(),
            seen: HashSet::new(),
        })
    }

    /// Whether the identifier is qualified (`a.b`, `a::b`): its exact tier
    /// matches qualified names.
    pub fn qualified(&self) -> bool {
        self.qualified
    }

    /// The folded column the exact tier matches (`folded` or `qual_folded`).
    pub fn exact_column(&self) -> &'static str {
        if self.qualified {
            "qual_folded"
        } else {
            "folded"
        }
    }

    /// The column whose equality to [`SymbolLookup::exact_text`] is a
    /// case-exact match (the query orders those first, so that a crowd of
    /// folded matches cannot push the one exact match past the limit).
    pub fn case_column(&self) -> &'static str {
        if self.qualified { "qualname" } else { "name" }
    }

    /// The value of [`SymbolLookup::exact_column`] to match.
    pub fn exact_key(&self) -> String {
        if self.qualified {
            fold(&self.qual_ident)
        } else {
            self.folded.clone()
        }
    }

    /// The case-exact text.
    pub fn exact_text(&self) -> &str {
        if self.qualified {
            &self.qual_ident
        } else {
            &self.ident
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Take the exact tier's rows (any tier set); case-exact ones first.
    pub fn exact(&mut self, rows: Vec<SymbolMatch>) {
        let mut rows: Vec<SymbolMatch> = rows
            .into_iter()
            .map(|mut m| {
                let same = if self.qualified {
                    m.qualname == self.qual_ident
                } else {
                    m.name == self.ident
                };
                m.tier = if same {
                    SymbolTier::Exact
                } else {
                    SymbolTier::ExactFolded
                };
                m
            })
            .collect();
        rows.sort_by_key(|m| m.tier);
        for m in rows {
            self.push(m);
        }
    }

    /// The partial tiers still to run: (tier, LIKE pattern over `folded`,
    /// with `\` escaping). Empty when partial matches were not asked for,
    /// the limit is reached, the identifier is qualified or too short
    /// (prefix: 3+ characters; substring: 4+).
    pub fn partial_tiers(&self) -> Vec<(SymbolTier, String)> {
        if !self.partial || self.out.len() >= self.limit || self.qualified || self.folded.len() < 3
        {
            return Vec::new();
        }
        let escaped = self
            .folded
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let mut tiers = vec![(SymbolTier::Prefix, format!("{escaped}%"))];
        if self.folded.len() >= 4 {
            tiers.push((SymbolTier::Substring, format!("%{escaped}%")));
        }
        tiers
    }

    /// Take a partial tier's rows; false when the limit is reached (run no more tiers).
    pub fn partial(&mut self, tier: SymbolTier, rows: Vec<SymbolMatch>) -> bool {
        for mut m in rows {
            m.tier = tier;
            self.push(m);
        }
        self.out.len() < self.limit
    }

    fn push(&mut self, m: SymbolMatch) {
        if self
            .seen
            .insert((m.path.clone(), m.start_line, m.qualname.clone()))
        {
            self.out.push(m);
        }
    }

    pub fn finish(mut self) -> Vec<SymbolMatch> {
        self.out.truncate(self.limit);
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ken_core::ChunkKind;

    fn m(name: &str, qualname: &str, line: u32) -> SymbolMatch {
        SymbolMatch {
            tier: SymbolTier::Substring,
            name: name.into(),
            qualname: qualname.into(),
            kind: ChunkKind::Function,
            path: "a.py".into(),
            start_line: line,
            end_line: line,
            chunk_id: line as u64,
        }
    }

    #[test]
    fn tiers_order_and_dedupe() {
        let mut l = SymbolLookup::new("Handler", 3, true).unwrap();
        assert_eq!((l.exact_column(), l.case_column()), ("folded", "name"));
        assert_eq!(l.exact_key(), "handler");
        l.exact(vec![m("handler", "handler", 1), m("Handler", "Handler", 2)]);
        let tiers = l.partial_tiers();
        assert_eq!(tiers.len(), 2);
        assert_eq!(tiers[0].1, "handler%");
        // the same definition again is not counted twice; the limit stops the tiers
        assert!(!l.partial(
            SymbolTier::Prefix,
            vec![m("handler", "handler", 1), m("handlers", "handlers", 3)]
        ));
        let out = l.finish();
        let got: Vec<(&str, SymbolTier)> = out.iter().map(|m| (m.name.as_str(), m.tier)).collect();
        assert_eq!(
            got,
            [
                ("Handler", SymbolTier::Exact),
                ("handler", SymbolTier::ExactFolded),
                ("handlers", SymbolTier::Prefix)
            ]
        );
    }

    #[test]
    fn qualified_and_short_identifiers_have_no_partial_tiers() {
        let l = SymbolLookup::new("Flask::run", 5, true).unwrap();
        assert_eq!(
            (l.exact_column(), l.case_column()),
            ("qual_folded", "qualname")
        );
        assert_eq!(l.exact_text(), "Flask.run");
        assert!(l.partial_tiers().is_empty());
        assert!(
            SymbolLookup::new("ab", 5, true)
                .unwrap()
                .partial_tiers()
                .is_empty()
        );
        let l = SymbolLookup::new("abc", 5, true).unwrap();
        assert_eq!(l.partial_tiers().len(), 1, "prefix only under 4 characters");
        assert!(SymbolLookup::new("__", 5, true).is_none());
    }

    #[test]
    fn folding() {
        assert_eq!(fold("parse_config"), "parseconfig");
        assert_eq!(fold("ParseConfig"), "parseconfig");
        assert_eq!(fold("Flask.do_teardown"), "flask.doteardown");
    }
}
