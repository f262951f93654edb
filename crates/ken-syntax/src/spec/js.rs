//! JavaScript, TypeScript and TSX.

use ken_core::ChunkKind;
use tree_sitter::Node;

use super::{Ctx, Named, Rule, Spec, Wrapper, text};

const WRAPPERS: &[Wrapper] = &[
    Wrapper::new("export_statement", true).ignoring(&["decorator"]),
    Wrapper::new("lexical_declaration", true),
    Wrapper::new("variable_declaration", true),
    Wrapper::new("expression_statement", true),
    Wrapper::new("ambient_declaration", true),
];

pub(crate) static JS: Spec = Spec {
    rules: &[
        Rule::new("function_declaration", ChunkKind::Function),
        Rule::new("generator_function_declaration", ChunkKind::Function),
        Rule::new("class_declaration", ChunkKind::Class),
        Rule::new("method_definition", ChunkKind::Function),
        Rule::new("variable_declarator", ChunkKind::Function)
            .hook(declarator)
            .no_body(),
        Rule::new("assignment_expression", ChunkKind::Function)
            .hook(assignment)
            .no_body(),
        Rule::new("field_definition", ChunkKind::Function)
            .hook(field)
            .no_body(),
        Rule::new("pair", ChunkKind::Function).hook(pair).no_body(),
    ],
    comments: &["comment"],
    attributes: &["decorator"],
    wrappers: WRAPPERS.split_at(4).0,
    docstrings: false,
};

pub(crate) static TS: Spec = Spec {
    rules: &[
        Rule::new("function_declaration", ChunkKind::Function),
        Rule::new("generator_function_declaration", ChunkKind::Function),
        Rule::new("function_signature", ChunkKind::Function).no_body(),
        Rule::new("class_declaration", ChunkKind::Class),
        Rule::new("abstract_class_declaration", ChunkKind::Class),
        Rule::new("method_definition", ChunkKind::Function),
        Rule::new("method_signature", ChunkKind::Function).no_body(),
        Rule::new("abstract_method_signature", ChunkKind::Function).no_body(),
        Rule::new("interface_declaration", ChunkKind::Interface),
        Rule::new("enum_declaration", ChunkKind::Enum),
        Rule::new("type_alias_declaration", ChunkKind::Type).no_body(),
        Rule::new("internal_module", ChunkKind::Namespace),
        Rule::new("module", ChunkKind::Namespace).hook(module_name),
        Rule::new("variable_declarator", ChunkKind::Function)
            .hook(declarator)
            .no_body(),
        Rule::new("assignment_expression", ChunkKind::Function)
            .hook(assignment)
            .no_body(),
        Rule::new("public_field_definition", ChunkKind::Function)
            .hook(field)
            .no_body(),
        Rule::new("pair", ChunkKind::Function).hook(pair).no_body(),
    ],
    comments: &["comment"],
    attributes: &["decorator"],
    wrappers: WRAPPERS,
    docstrings: false,
};

/// The kind of a value that makes a binding a definition, and its body.
fn value_def(value: Node<'_>) -> Option<(ChunkKind, Option<Node<'_>>)> {
    match value.kind() {
        "function_expression" | "function" | "arrow_function" | "generator_function" => {
            Some((ChunkKind::Function, value.child_by_field_name("body")))
        }
        "class" => Some((ChunkKind::Class, value.child_by_field_name("body"))),
        _ => None,
    }
}

/// `const foo = () => {}`, `let Foo = class {}`.
fn declarator<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let name = node.child_by_field_name("name")?;
    if name.kind() != "identifier" {
        return None; // destructuring
    }
    let (kind, body) = value_def(node.child_by_field_name("value")?)?;
    let mut named = Named::new(text(name, ctx.src));
    named.kind = Some(kind);
    named.body = body;
    Some(named)
}

/// `res.send = function send(body) {}`, `exports.foo = () => {}`: named
/// after the property, qualified by the whole left side.
fn assignment<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let (kind, body) = value_def(node.child_by_field_name("right")?)?;
    let left = node.child_by_field_name("left")?;
    let mut named = match left.kind() {
        "identifier" => Named::new(text(left, ctx.src)),
        "member_expression" => {
            let prop = left.child_by_field_name("property")?;
            let object = left.child_by_field_name("object")?;
            let mut named = Named::new(text(prop, ctx.src));
            named.prefix = Some(text(object, ctx.src).split_whitespace().collect());
            named.absolute = true;
            named
        }
        _ => return None,
    };
    named.kind = Some(kind);
    named.body = body;
    Some(named)
}

/// Class fields holding functions: `handle = (e) => {...}`.
fn field<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let name = node
        .child_by_field_name("property")
        .or_else(|| node.child_by_field_name("name"))?;
    let (kind, body) = value_def(node.child_by_field_name("value")?)?;
    let mut named = Named::new(text(name, ctx.src));
    named.kind = Some(kind);
    named.body = body;
    Some(named)
}

/// Object literal entries holding functions: `{ html: function () {...} }`.
/// In an object passed to a call they stay in the enclosing chunk.
fn pair<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let key = node.child_by_field_name("key")?;
    let name = match key.kind() {
        "property_identifier" | "identifier" => text(key, ctx.src),
        "string" => text(key, ctx.src).trim_matches(|c| c == '"' || c == '\''),
        _ => return None,
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    {
        return None; // `'text/plain': function () {}` names no symbol
    }
    let (kind, body) = value_def(node.child_by_field_name("value")?)?;
    let mut named = Named::new(name);
    named.kind = Some(kind);
    named.body = body;
    named.inline = node
        .parent()
        .and_then(|o| o.parent())
        .is_some_and(|p| p.kind() == "arguments");
    Some(named)
}

/// `declare module "fs" {}` is named without its quotes.
fn module_name<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let name = text(node.child_by_field_name("name")?, ctx.src);
    Some(Named::new(name.trim_matches(|c| c == '"' || c == '\'')))
}
