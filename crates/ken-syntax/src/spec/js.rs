//! JavaScript, TypeScript and TSX.

use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{
    AssignRule, CallRule, CallSite, Ctx, Found, ImportRule, InheritRule, Member, Named, RefSpec,
    Rule, Spec, Types, ValueSlot, Values, Wrapper, text,
};
use crate::names::{last_segment, unquote};

const CALLS: &[CallRule] = &[
    CallRule::field("call_expression", "function"),
    CallRule::new("new_expression", Some("constructor")),
    CallRule::decorator("decorator"),
];
const MEMBERS: &[Member] = &[Member::new("member_expression", "object", "property")];
const IMPORTS: &[ImportRule] = &[
    ImportRule::new("import_statement", import),
    ImportRule::new("export_statement", export_from),
];

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
    refs: RefSpec {
        calls: CALLS,
        members: MEMBERS,
        imports: IMPORTS,
        inherits: &[InheritRule::node("class_heritage")],
        call_hook: Some(require),
        assigns: ASSIGNS,
        reads: true,
        values: VALUES,
        ..RefSpec::NONE
    },
};

/// `const x = new C()`, `this.x = new C()`.
const ASSIGNS: &[AssignRule] = &[
    AssignRule::new("variable_declarator", "name", "value", false),
    AssignRule::new("assignment_expression", "left", "right", false),
];

/// [`ASSIGNS`], and parameters typed by their annotation (`c: Context`).
const TS_ASSIGNS: &[AssignRule] = &[
    AssignRule::new("variable_declarator", "name", "value", false).typed_by("type"),
    AssignRule::new("assignment_expression", "left", "right", false),
    AssignRule::parameter("required_parameter", Some("pattern"), "type"),
    AssignRule::parameter("optional_parameter", Some("pattern"), "type"),
];

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
    refs: RefSpec {
        calls: CALLS,
        members: MEMBERS,
        imports: IMPORTS,
        inherits: &[
            InheritRule::node("class_heritage"),
            InheritRule::node("extends_type_clause"),
        ],
        types: Types {
            names: &["type_identifier"],
            paths: &["nested_type_identifier"],
            def_fields: &["name"],
            params: &["type_parameter"],
            ..Types::NONE
        },
        generics: true,
        call_hook: Some(require),
        postfix: &["non_null_expression"],
        assigns: TS_ASSIGNS,
        reads: true,
        values: VALUES,
        ..RefSpec::NONE
    },
};

/// The kind of a value that makes a binding a definition, and its body.
fn value_def(value: Node<'_>) -> Option<(ChunkKind, Option<Node<'_>>)> {
    match value.kind() {
        "function_expression" | "function" | "arrow_function" | "generator_function" => {
            Some((ChunkKind::Function, value.child_by_field_name("body")))
        }
        "class" => Some((ChunkKind::Class, value.child_by_field_name("body"))),
        // a generic arrow function, `<T>(x: T): T => ...`, which the
        // TypeScript grammar may read as a type assertion around one
        "type_assertion" => {
            let mut cursor = value.walk();
            let inner = value
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "arrow_function")
                .last()?;
            value_def(inner)
        }
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

fn import_ref(name: &str, module: &str, row: usize) -> Found {
    Found::new(RefKind::Import, name, Some(module.to_string()), row)
}

/// `import x, { a as b } from 'm'`, `import * as ns from 'm'`,
/// `import x = require('m')`, `import 'm'`. Default and namespace imports
/// are named by the name they bind; named imports by the imported name,
/// bound under their alias (`b`).
fn import(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let Some(source) = node.child_by_field_name("source") else {
        return;
    };
    let module = unquote(text(source, src));
    let before = out.len();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "import_clause" => {
                let mut c2 = child.walk();
                for part in child.named_children(&mut c2) {
                    match part.kind() {
                        "identifier" => out.push(import_ref(
                            text(part, src),
                            module,
                            part.start_position().row,
                        )),
                        "namespace_import" => {
                            if let Some(id) = part.named_child(0) {
                                out.push(import_ref(
                                    text(id, src),
                                    module,
                                    id.start_position().row,
                                ));
                            }
                        }
                        "named_imports" => specifiers(part, module, false, src, out),
                        _ => {}
                    }
                }
            }
            "import_require_clause" => {
                if let Some(id) = child.named_child(0) {
                    out.push(import_ref(text(id, src), module, id.start_position().row));
                }
            }
            _ => {}
        }
    }
    if out.len() == before {
        let row = node.start_position().row;
        out.push(import_ref(last_segment(module), module, row));
    }
}

/// `{ a, b as c }` in an import or export: the original names, under
/// their alias (`c`: the name an import binds, or an export exports);
/// `only_aliased` keeps the aliased ones alone.
fn specifiers(list: Node<'_>, module: &str, only_aliased: bool, src: &[u8], out: &mut Vec<Found>) {
    let mut cursor = list.walk();
    for spec in list.named_children(&mut cursor) {
        if let Some(name) = spec.child_by_field_name("name") {
            let n = unquote(text(name, src));
            let alias = spec
                .child_by_field_name("alias")
                .map(|a| unquote(text(a, src)))
                .filter(|a| *a != n);
            if only_aliased && alias.is_none() {
                continue;
            }
            out.push(import_ref(n, module, name.start_position().row).aliased(alias));
        }
    }
}

/// `export { a } from 'm'`, `export * from 'm'`: re-exports import too;
/// `export { a as b }` exports a name of the file under another, an
/// import from the file itself (module `""`) bound under `b`.
fn export_from(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let mut cursor = node.walk();
    let clause = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "export_clause");
    let Some(source) = node.child_by_field_name("source") else {
        if let Some(clause) = clause {
            specifiers(clause, "", true, src, out);
        }
        return;
    };
    let module = unquote(text(source, src));
    match clause {
        Some(clause) => specifiers(clause, module, false, src, out),
        None => out.push(import_ref("*", module, node.start_position().row)),
    }
}

/// `require('m')` and `import('m')` with a literal module are imports,
/// named by the variable they are bound to (`const x = require('m')`) or
/// else by the module's last segment.
fn require(site: &CallSite<'_, '_>, out: &mut Vec<Found>) -> bool {
    if site.qualifier.is_some() || !matches!(site.name, "require" | "import") {
        return false;
    }
    let Some(arg) = site
        .node
        .child_by_field_name("arguments")
        .and_then(|a| a.named_child(0))
        .filter(|a| a.kind() == "string")
    else {
        return false;
    };
    let module = unquote(text(arg, site.src));
    let bound = site
        .node
        .parent()
        .filter(|p| p.kind() == "variable_declarator")
        .and_then(|p| p.child_by_field_name("name"))
        .filter(|n| n.kind() == "identifier")
        .map(|n| text(n, site.src));
    let name = bound.unwrap_or_else(|| last_segment(module));
    out.push(import_ref(name, module, site.node.start_position().row));
    true
}

/// Bare names read as values in JavaScript and TypeScript: arguments,
/// initialisers and right sides, defaults, returns, array and object
/// members (`{ handler }` too), operands of `??`/`||`/`?:`, JSX elements
/// and `{expressions}`.
const VALUES: Values = Values {
    nodes: &["identifier", "shorthand_property_identifier"],
    slots: &[
        ValueSlot::any("arguments"),
        ValueSlot::field("variable_declarator", "value"),
        ValueSlot::field("assignment_expression", "right"),
        ValueSlot::field("assignment_pattern", "right"),
        ValueSlot::field("required_parameter", "value"),
        ValueSlot::field("optional_parameter", "value"),
        ValueSlot::field("pair", "value"),
        ValueSlot::any("object"),
        ValueSlot::any("array"),
        ValueSlot::any("return_statement"),
        ValueSlot::any("binary_expression"),
        ValueSlot::any("ternary_expression"),
        ValueSlot::field("jsx_opening_element", "name"),
        ValueSlot::field("jsx_self_closing_element", "name"),
        ValueSlot::any("jsx_expression"),
    ],
};
