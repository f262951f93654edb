//! What the code graph is built from and what it is made of: a file's
//! facts, the identity of a definition, a resolved edge and the rule that
//! resolved it. Plain data, here so that the store, which keeps them,
//! needs no more than `ken-core`; `ken-graph` resolves and walks them.

use crate::{Definition, FileSyntax, Language, RefKind, Reference, TypedValue};
use serde::{Deserialize, Serialize};

/// The qualified name of a file's module-level pseudo-definition: the
/// `from` of references outside any definition, and the target of
/// whole-module imports.
pub const MODULE: &str = "<module>";

/// Everything the graph needs to know about one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileFacts {
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub language: Language,
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    /// Module-level variables of a known class (absent in facts stored
    /// before they were recorded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<TypedValue>,
}

impl FileFacts {
    pub fn new(
        path: impl Into<String>,
        language: Language,
        definitions: Vec<Definition>,
        references: Vec<Reference>,
    ) -> FileFacts {
        FileFacts {
            path: path.into(),
            language,
            definitions,
            references,
            values: Vec::new(),
        }
    }

    /// With the file's module-level variables of a known class.
    pub fn with_values(mut self, values: Vec<TypedValue>) -> FileFacts {
        self.values = values;
        self
    }

    /// The facts of a file as the syntax layer saw it (language from the path).
    pub fn from_syntax(path: impl Into<String>, syntax: FileSyntax) -> FileFacts {
        let path = path.into();
        let language = Language::from_path(&path);
        FileFacts::new(path, language, syntax.definitions, syntax.references)
            .with_values(syntax.values)
    }
}

/// Identifies a definition: its file, its qualified name, and its rank
/// among the definitions of that file with the same qualified name (`nth`:
/// 0 for the first; a C++ declaration and its definition, a property
/// getter and setter). Line numbers are deliberately not part of it, so a
/// key survives edits that only move code around.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DefKey {
    pub path: String,
    pub qualname: String,
    pub nth: u32,
}

impl DefKey {
    pub fn new(path: impl Into<String>, qualname: impl Into<String>, nth: u32) -> DefKey {
        DefKey {
            path: path.into(),
            qualname: qualname.into(),
            nth,
        }
    }

    /// The module pseudo-definition of `path`.
    pub fn module(path: impl Into<String>) -> DefKey {
        DefKey::new(path, MODULE, 0)
    }

    pub fn is_module(&self) -> bool {
        self.qualname == MODULE
    }
}

impl std::fmt::Display for DefKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path, self.qualname)?;
        if self.nth > 0 {
            write!(f, "#{}", self.nth)?;
        }
        Ok(())
    }
}

/// How a reference was resolved; each rule has its confidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The enclosing scopes of the same file (`f()` → the innermost `f`;
    /// `self.m()` → a member of the enclosing class).
    Scope,
    /// A name or module bound by the file's imports.
    Import,
    /// The same package: another file of the directory (Go).
    Package,
    /// `self.m()` found in a base class of the enclosing class.
    Base,
    /// The qualifier names a known type or module (`Command.AddCommand`, `Type::new`).
    Qualified,
    /// The qualifier is a variable made from a known class where it was
    /// assigned (`db = Database(...)`; `db.query()` → `Database.query`,
    /// or a base class's `query`).
    Receiver,
    /// The only definition of that name in the same file.
    SameFile,
    /// The only definition of that name in the repository.
    UniqueGlobal,
    /// Read from a SCIP index: what a compiler-grade indexer says the
    /// reference is.
    Scip,
}

impl Rule {
    pub const ALL: [Rule; 9] = [
        Rule::Scope,
        Rule::Import,
        Rule::Package,
        Rule::Base,
        Rule::Qualified,
        Rule::Receiver,
        Rule::SameFile,
        Rule::UniqueGlobal,
        Rule::Scip,
    ];

    /// How sure an edge made by this rule is, in (0, 1].
    pub fn confidence(self) -> f32 {
        match self {
            Rule::Scope | Rule::Import | Rule::Scip => 1.0,
            Rule::Package | Rule::Base | Rule::Receiver => 0.9,
            Rule::Qualified => 0.8,
            Rule::SameFile => 0.7,
            Rule::UniqueGlobal => 0.5,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Rule::Scope => "scope",
            Rule::Import => "import",
            Rule::Package => "package",
            Rule::Base => "base",
            Rule::Qualified => "qualified",
            Rule::Receiver => "receiver",
            Rule::SameFile => "same_file",
            Rule::UniqueGlobal => "unique_global",
            Rule::Scip => "scip",
        }
    }

    /// The rule of a [`Rule::name`].
    pub fn parse(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// A reference resolved to a definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub from: DefKey,
    pub to: DefKey,
    pub kind: RefKind,
    /// Where the reference is written (the path of `from`) and its line.
    pub path: String,
    pub line: u32,
    pub rule: Rule,
    /// [`Rule::confidence`] of `rule`.
    pub confidence: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_back_their_names() {
        for r in Rule::ALL {
            assert_eq!(Rule::parse(r.name()), Some(r));
        }
        assert_eq!(Rule::parse("nonsense"), None);
    }
}
