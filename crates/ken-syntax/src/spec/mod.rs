//! Per-language tables for the generic walker: which syntax nodes are
//! definitions, how each is named, where its body is, which nodes are
//! comments, attributes and wrappers.
//!
//! Adding a language is adding one file here with a [`Spec`] and, for the
//! few shapes a table cannot say (Go receivers, C declarators, JS
//! assignments), a naming hook.

use std::sync::OnceLock;

use ken_core::{ChunkKind, Language};
use tree_sitter::Node;

mod bash;
mod c;
mod csharp;
mod go;
mod java;
mod js;
mod php;
mod python;
mod ruby;
mod rust;
mod scala;

/// How a language's syntax tree is read.
pub(crate) struct Spec {
    pub rules: &'static [Rule],
    /// Comment node kinds.
    pub comments: &'static [&'static str],
    /// Nodes that belong to the definition that follows them (`#[derive]`,
    /// class-body decorators): the chunk starts at the first of them.
    pub attributes: &'static [&'static str],
    /// Nodes that wrap a single definition (`export`, `const x = ...`,
    /// Python decorators): the chunk covers the wrapper.
    pub wrappers: &'static [Wrapper],
    /// Docstrings (the first statement of a body is a string) instead of
    /// comments above the definition.
    pub docstrings: bool,
}

/// A node kind that wraps one definition.
pub(crate) struct Wrapper {
    pub kind: &'static str,
    /// The signature starts at the wrapper (`export const f = () =>`) rather
    /// than at the definition (Python decorators are not signature).
    pub in_signature: bool,
    /// Named children that do not count as a second thing wrapped.
    pub ignore: &'static [&'static str],
}

/// A node kind that is a definition.
pub(crate) struct Rule {
    pub node: &'static str,
    pub kind: ChunkKind,
    pub name: Name,
    /// Field holding the body; `None`: the definition has no body.
    pub body: Option<&'static str>,
    /// The definition's name is part of the qualified names of what it holds.
    pub scope: bool,
    /// Functions directly inside are methods (classes always; some namespaces).
    pub methods: bool,
    /// Not a definition without a body (`struct S;` uses in C, `mod m;`).
    pub needs_body: bool,
}

/// How a definition's name is found.
pub(crate) enum Name {
    /// The text of this field.
    Field(&'static str),
    /// A function for shapes a field cannot express.
    Hook(Hook),
}

/// A naming hook: `None` when the node is not a definition after all.
pub(crate) type Hook = for<'t> fn(Node<'t>, &Ctx<'_>) -> Option<Named<'t>>;

/// What a hook may look at besides the node.
pub(crate) struct Ctx<'a> {
    pub src: &'a [u8],
    /// The node sits directly in a class-like body.
    pub in_container: bool,
}

/// A hook's answer.
pub(crate) struct Named<'t> {
    pub name: String,
    /// Qualifier written in the definition itself (`Foo` in `Foo::bar`,
    /// `res` in `res.send = function`), with `.` separators.
    pub prefix: Option<String>,
    /// The prefix is a full path: do not prepend the enclosing scopes.
    pub absolute: bool,
    pub kind: Option<ChunkKind>,
    /// The body, when it is not the rule's body field.
    pub body: Option<Node<'t>>,
    /// A definition that stays in the chunk around it (callbacks passed in
    /// an object literal argument: `res.format({ html: function () {} })`).
    pub inline: bool,
}

impl<'t> Named<'t> {
    pub fn new(name: impl Into<String>) -> Self {
        Named {
            name: name.into(),
            prefix: None,
            absolute: false,
            kind: None,
            body: None,
            inline: false,
        }
    }
}

impl Rule {
    /// A definition named by its `name` field with its body in `body`.
    pub const fn new(node: &'static str, kind: ChunkKind) -> Rule {
        let container = matches!(
            kind,
            ChunkKind::Class
                | ChunkKind::Struct
                | ChunkKind::Enum
                | ChunkKind::Trait
                | ChunkKind::Interface
                | ChunkKind::Impl
        );
        Rule {
            node,
            kind,
            name: Name::Field("name"),
            body: Some("body"),
            scope: !matches!(kind, ChunkKind::Type | ChunkKind::Macro),
            methods: container,
            needs_body: false,
        }
    }
    pub const fn hook(mut self, hook: Hook) -> Rule {
        self.name = Name::Hook(hook);
        self
    }
    pub const fn no_body(mut self) -> Rule {
        self.body = None;
        self
    }
    pub const fn needs_body(mut self) -> Rule {
        self.needs_body = true;
        self
    }
    /// Not part of qualified names (C# and PHP namespaces, like Java packages).
    pub const fn no_scope(mut self) -> Rule {
        self.scope = false;
        self
    }
    /// Functions inside are methods (Ruby modules, Scala objects).
    pub const fn with_methods(mut self) -> Rule {
        self.methods = true;
        self
    }
}

impl Wrapper {
    pub const fn new(kind: &'static str, in_signature: bool) -> Wrapper {
        Wrapper {
            kind,
            in_signature,
            ignore: &[],
        }
    }
    pub const fn ignoring(mut self, ignore: &'static [&'static str]) -> Wrapper {
        self.ignore = ignore;
        self
    }
}

/// The tree-sitter grammar used for a language, if it has one.
pub fn tree_sitter_language(lang: Language) -> Option<tree_sitter::Language> {
    let f = match lang {
        Language::Python => tree_sitter_python::LANGUAGE,
        Language::Rust => tree_sitter_rust::LANGUAGE,
        Language::JavaScript => tree_sitter_javascript::LANGUAGE,
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX,
        Language::Go => tree_sitter_go::LANGUAGE,
        Language::Java => tree_sitter_java::LANGUAGE,
        Language::C => tree_sitter_c::LANGUAGE,
        Language::Cpp => tree_sitter_cpp::LANGUAGE,
        Language::CSharp => tree_sitter_c_sharp::LANGUAGE,
        Language::Ruby => tree_sitter_ruby::LANGUAGE,
        Language::Php => tree_sitter_php::LANGUAGE_PHP,
        Language::Bash => tree_sitter_bash::LANGUAGE,
        Language::Scala => tree_sitter_scala::LANGUAGE,
        _ => return None,
    };
    Some(f.into())
}

/// The spec of a language chunked with tree-sitter.
pub(crate) fn spec(lang: Language) -> Option<&'static Spec> {
    Some(match lang {
        Language::Python => &python::SPEC,
        Language::Rust => &rust::SPEC,
        Language::JavaScript => &js::JS,
        Language::TypeScript | Language::Tsx => &js::TS,
        Language::Go => &go::SPEC,
        Language::Java => &java::SPEC,
        Language::C => &c::C,
        Language::Cpp => &c::CPP,
        Language::CSharp => &csharp::SPEC,
        Language::Ruby => &ruby::SPEC,
        Language::Php => &php::SPEC,
        Language::Bash => &bash::SPEC,
        Language::Scala => &scala::SPEC,
        _ => return None,
    })
}

/// What a node kind means to the walker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Other,
    Comment,
    Attribute,
    Wrapper(u8),
    Rule(u8),
}

/// A spec compiled against its grammar: node kind id → [`Class`].
pub(crate) struct Table {
    classes: Vec<Class>,
}

impl Table {
    pub fn class(&self, kind_id: u16) -> Class {
        self.classes
            .get(kind_id as usize)
            .copied()
            .unwrap_or(Class::Other)
    }
}

/// The compiled table of a language (built once per process).
pub(crate) fn table(lang: Language) -> Option<&'static Table> {
    const N: usize = Language::ALL.len();
    static TABLES: [OnceLock<Table>; N] = [const { OnceLock::new() }; N];
    let i = Language::ALL.iter().position(|&l| l == lang)?;
    let spec = spec(lang)?;
    let ts = tree_sitter_language(lang)?;
    Some(TABLES[i].get_or_init(|| compile(spec, &ts)))
}

fn compile(spec: &Spec, ts: &tree_sitter::Language) -> Table {
    let n = ts.node_kind_count();
    let mut classes = vec![Class::Other; n];
    for (id, class) in classes.iter_mut().enumerate() {
        let id = id as u16;
        if !ts.node_kind_is_named(id) {
            continue;
        }
        let Some(kind) = ts.node_kind_for_id(id) else {
            continue;
        };
        *class = if spec.comments.contains(&kind) {
            Class::Comment
        } else if spec.attributes.contains(&kind) {
            Class::Attribute
        } else if let Some(i) = spec.rules.iter().position(|r| r.node == kind) {
            Class::Rule(i as u8)
        } else if let Some(i) = spec.wrappers.iter().position(|w| w.kind == kind) {
            Class::Wrapper(i as u8)
        } else {
            Class::Other
        };
    }
    Table { classes }
}

/// Text of a node (lossy on invalid UTF-8, which tree-sitter never splits
/// from valid input).
pub(crate) fn text<'a>(node: Node<'_>, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.start_byte()..node.end_byte()]).unwrap_or("")
}

/// `a::b::C` / `a.b.C` / `a\b\C` → (`Some("a.b")`, `"C"`), generic
/// arguments dropped, whitespace removed.
pub(crate) fn split_path(path: &str) -> (Option<String>, String) {
    let cleaned = strip_generics(path);
    let parts: Vec<&str> = cleaned
        .split([':', '.', '\\'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    match parts.split_last() {
        None => (None, String::new()),
        Some((last, [])) => (None, last.to_string()),
        Some((last, rest)) => (Some(rest.join(".")), last.to_string()),
    }
}

/// Remove `<...>` / `[...]` generic arguments (`Foo<T>::bar` → `Foo::bar`).
/// `operator<` style names are left alone.
pub(crate) fn strip_generics(s: &str) -> String {
    if s.contains("operator") {
        return s.split_whitespace().collect();
    }
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '<' | '[' => depth += 1,
            '>' | ']' => depth = depth.saturating_sub(1),
            c if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_language_has_a_spec_and_a_table() {
        for lang in Language::ALL {
            assert_eq!(
                spec(lang).is_some(),
                tree_sitter_language(lang).is_some(),
                "{lang}"
            );
            if let Some(spec) = spec(lang) {
                let table = table(lang).unwrap();
                let ts = tree_sitter_language(lang).unwrap();
                // every rule and wrapper names a real node kind of the grammar
                for r in spec.rules {
                    let id = ts.id_for_node_kind(r.node, true);
                    assert_ne!(id, 0, "{lang}: no node kind {}", r.node);
                    assert!(
                        matches!(table.class(id), Class::Rule(_)),
                        "{lang}: {}",
                        r.node
                    );
                }
                for w in spec.wrappers {
                    assert_ne!(ts.id_for_node_kind(w.kind, true), 0, "{lang}: {}", w.kind);
                }
                for c in spec.comments.iter().chain(spec.attributes) {
                    assert_ne!(ts.id_for_node_kind(c, true), 0, "{lang}: {c}");
                }
            }
        }
    }

    #[test]
    fn paths_split_into_prefix_and_name() {
        assert_eq!(split_path("Foo::bar"), (Some("Foo".into()), "bar".into()));
        assert_eq!(split_path("a::B<T>::c"), (Some("a.B".into()), "c".into()));
        assert_eq!(
            split_path("module.exports.foo"),
            (Some("module.exports".into()), "foo".into())
        );
        assert_eq!(split_path("App\\Http"), (Some("App".into()), "Http".into()));
        assert_eq!(split_path("x"), (None, "x".into()));
        assert_eq!(
            split_path("Foo::operator<"),
            (Some("Foo".into()), "operator<".into())
        );
    }
}
