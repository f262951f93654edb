//! Per-language tables for the generic walker: which syntax nodes are
//! definitions, how each is named, where its body is, which nodes are
//! comments, attributes and wrappers; and for the reference extractor
//! (`refs/`), which nodes are calls, imports, base-class lists and type names.
//!
//! Adding a language is adding one file here with a [`Spec`] and, for the
//! few shapes a table cannot say (Go receivers, C declarators, JS
//! assignments, every language's import syntax), a hook.

use std::sync::OnceLock;

use ken_core::{ChunkKind, Language};
use tree_sitter::Node;

pub(crate) use refs::{
    AssignRule, CallRule, CallSite, Callee, Found, ImportRule, InheritRule, Member, RefSpec, Types,
    ValueSlot, Values,
};

mod bash;
mod c;
mod csharp;
mod go;
mod java;
mod js;
mod php;
mod python;
mod refs;
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
    /// Where references (calls, imports, inheritance, type uses) are.
    pub refs: RefSpec,
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

/// What a node kind means to the reference extractor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefClass {
    Other,
    /// `spec.refs.calls[i]`.
    Call(u8),
    /// `spec.refs.members[i]`: only read while spelling qualifiers.
    Member(u8),
    /// `spec.refs.imports[i]`.
    Import(u8),
    /// `spec.refs.inherits[i]`.
    Inherit(u8),
    /// A type name wherever it appears (`type_identifier`).
    TypeName,
    /// A qualified type name, read whole (`a::b::C`).
    TypePath,
    /// A type name inside a type context only (`identifier` in a Python annotation).
    ContextName,
    /// A qualified type name inside a type context only.
    ContextPath,
    /// Starts a type context (Python `type`).
    Context,
    /// Its type-name children declare type parameters (`<T>`), not uses.
    TypeParams,
    /// A macro token tree that may hold calls (Rust).
    TokenTree,
    /// A postfix operator (`?`): spelled through in qualifiers.
    Postfix,
    /// Never read.
    Skip,
    /// `spec.refs.assigns[i]`: an assignment that may type its target.
    Assign(u8),
}

/// A spec compiled against its grammar: node kind id → [`Class`] and
/// [`RefClass`], field names → field ids.
pub(crate) struct Table {
    classes: Vec<Class>,
    refs: Vec<RefClass>,
    /// Fields that start a type context (`type`, `returns`).
    pub type_fields: Vec<u16>,
    /// Fields holding the name a definition declares (`name`).
    pub def_fields: Vec<u16>,
    /// Ids of the fields the reference spec names (looking a field up by
    /// name in tree-sitter is a scan over all the grammar's field names).
    field_ids: Vec<(&'static str, u16)>,
}

impl Table {
    pub fn class(&self, kind_id: u16) -> Class {
        self.classes
            .get(kind_id as usize)
            .copied()
            .unwrap_or(Class::Other)
    }

    /// The child of `node` in the field `name` (one the reference spec names).
    pub fn field<'t>(&self, node: Node<'t>, name: &'static str) -> Option<Node<'t>> {
        let id = self
            .field_ids
            .iter()
            .find(|(n, _)| std::ptr::eq(*n, name) || *n == name)?
            .1;
        node.child_by_field_id(id)
    }

    pub fn ref_class(&self, kind_id: u16) -> RefClass {
        self.refs
            .get(kind_id as usize)
            .copied()
            .unwrap_or(RefClass::Other)
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
    let refs = compile_refs(&spec.refs, ts);
    let field_ids = |names: &[&str]| -> Vec<u16> {
        names
            .iter()
            .filter_map(|f| ts.field_id_for_name(f).map(|id| id.get()))
            .collect()
    };
    let r = &spec.refs;
    let mut names: Vec<&'static str> = Vec::new();
    for c in r.calls {
        match c.callee {
            Callee::Field(f) | Callee::New(Some(f)) => names.push(f),
            Callee::Method { object, name } => names.extend([object, name]),
            Callee::New(None) | Callee::Decorator => {}
        }
    }
    for m in r.members {
        names.extend([m.object, m.name]);
    }
    for i in r.inherits {
        names.extend(i.field);
        names.extend(i.unless);
    }
    for a in r.assigns {
        names.extend(a.target);
        names.extend(a.typed_by);
        names.push(a.value);
    }
    names.sort_unstable();
    names.dedup();
    let named_ids = names
        .into_iter()
        .filter_map(|n| ts.field_id_for_name(n).map(|id| (n, id.get())))
        .collect();
    Table {
        classes,
        refs,
        type_fields: field_ids(spec.refs.types.fields),
        def_fields: field_ids(spec.refs.types.def_fields),
        field_ids: named_ids,
    }
}

fn compile_refs(r: &RefSpec, ts: &tree_sitter::Language) -> Vec<RefClass> {
    let n = ts.node_kind_count();
    let mut refs = vec![RefClass::Other; n];
    let t = &r.types;
    let calls: Vec<&str> = r.calls.iter().map(|c| c.node).collect();
    let members: Vec<&str> = r.members.iter().map(|m| m.node).collect();
    let imports: Vec<&str> = r.imports.iter().map(|m| m.node).collect();
    let inherits: Vec<&str> = r.inherits.iter().map(|m| m.node).collect();
    let assigns: Vec<&str> = r.assigns.iter().map(|a| a.node).collect();
    for (id, class) in refs.iter_mut().enumerate() {
        let id = id as u16;
        if !ts.node_kind_is_named(id) {
            continue;
        }
        let Some(kind) = ts.node_kind_for_id(id) else {
            continue;
        };
        let pos = |list: &[&str]| list.iter().position(|k| *k == kind).map(|i| i as u8);
        *class = if let Some(i) = pos(&calls) {
            RefClass::Call(i)
        } else if let Some(i) = pos(&imports) {
            RefClass::Import(i)
        } else if let Some(i) = pos(&inherits) {
            RefClass::Inherit(i)
        } else if t.names.contains(&kind) {
            RefClass::TypeName
        } else if t.paths.contains(&kind) {
            RefClass::TypePath
        } else if t.context_names.contains(&kind) {
            RefClass::ContextName
        } else if t.context_paths.contains(&kind) {
            // (a member access outside types: see `refs::Extractor::link`)
            RefClass::ContextPath
        } else if let Some(i) = pos(&members) {
            RefClass::Member(i)
        } else if t.contexts.contains(&kind) {
            RefClass::Context
        } else if t.params.contains(&kind) {
            RefClass::TypeParams
        } else if r.token_tree == Some(kind) {
            RefClass::TokenTree
        } else if r.postfix.contains(&kind) {
            RefClass::Postfix
        } else if r.skip.contains(&kind) {
            RefClass::Skip
        } else if let Some(i) = pos(&assigns) {
            RefClass::Assign(i)
        } else {
            RefClass::Other
        };
    }
    refs
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
