//! C and C++.

use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{
    CallRule, Ctx, Found, ImportRule, InheritRule, Member, Named, RefSpec, Rule, Spec, Types,
    Wrapper, split_path, text,
};
use crate::names::{clean, split_last, unquote};

const C_CALLS: &[CallRule] = &[CallRule::field("call_expression", "function")];
const MEMBERS: &[Member] = &[Member::new("field_expression", "argument", "field")];

pub(crate) static C: Spec = Spec {
    rules: &[
        Rule::new("function_definition", ChunkKind::Function).hook(function_name),
        Rule::new("struct_specifier", ChunkKind::Struct).needs_body(),
        Rule::new("union_specifier", ChunkKind::Struct).needs_body(),
        Rule::new("enum_specifier", ChunkKind::Enum).needs_body(),
        Rule::new("type_definition", ChunkKind::Type)
            .hook(typedef_name)
            .no_body(),
        Rule::new("preproc_function_def", ChunkKind::Macro).no_body(),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
    refs: RefSpec {
        calls: C_CALLS,
        members: MEMBERS,
        imports: &[ImportRule::new("preproc_include", include)],
        types: Types {
            names: &["type_identifier"],
            def_fields: &["name", "declarator"],
            ..Types::NONE
        },
        ..RefSpec::NONE
    },
};

pub(crate) static CPP: Spec = Spec {
    rules: &[
        Rule::new("function_definition", ChunkKind::Function).hook(function_name),
        Rule::new("field_declaration", ChunkKind::Method)
            .hook(method_declaration)
            .no_body(),
        Rule::new("declaration", ChunkKind::Method)
            .hook(method_declaration)
            .no_body(),
        Rule::new("class_specifier", ChunkKind::Class).needs_body(),
        Rule::new("struct_specifier", ChunkKind::Struct).needs_body(),
        Rule::new("union_specifier", ChunkKind::Struct).needs_body(),
        Rule::new("enum_specifier", ChunkKind::Enum).needs_body(),
        Rule::new("namespace_definition", ChunkKind::Namespace),
        Rule::new("type_definition", ChunkKind::Type)
            .hook(typedef_name)
            .no_body(),
        Rule::new("alias_declaration", ChunkKind::Type).no_body(),
        Rule::new("preproc_function_def", ChunkKind::Macro).no_body(),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[Wrapper::new("template_declaration", true).ignoring(&["template_parameter_list"])],
    docstrings: false,
    refs: RefSpec {
        calls: &[
            CallRule::field("call_expression", "function"),
            CallRule::new("new_expression", Some("type")),
        ],
        members: MEMBERS,
        imports: &[
            ImportRule::new("preproc_include", include),
            ImportRule::new("using_declaration", using),
        ],
        inherits: &[InheritRule::node("base_class_clause")],
        types: Types {
            names: &["type_identifier"],
            context_paths: &["qualified_identifier"],
            fields: &["type"],
            def_fields: &["name", "declarator"],
            params: &[
                "type_parameter_declaration",
                "optional_type_parameter_declaration",
                "variadic_type_parameter_declaration",
            ],
            ..Types::NONE
        },
        generics: true,
        ..RefSpec::NONE
    },
};

/// Follow `declarator` fields down to the declared name; `function` is set
/// when a function declarator was passed on the way.
fn declared_name<'t>(node: Node<'t>) -> Option<(Node<'t>, bool)> {
    let mut d = node.child_by_field_name("declarator")?;
    let mut function = false;
    for _ in 0..16 {
        match d.kind() {
            "function_declarator" => {
                function = true;
                d = d.child_by_field_name("declarator")?;
            }
            "pointer_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator"
            | "array_declarator" => {
                d = match d.child_by_field_name("declarator") {
                    Some(n) => n,
                    None => d.named_children(&mut d.walk()).find(|n| {
                        n.kind().contains("declarator") || n.kind().ends_with("identifier")
                    })?,
                };
            }
            _ => return Some((d, function)),
        }
    }
    None
}

fn named_from<'t>(name: Node<'_>, src: &[u8]) -> Option<Named<'t>> {
    let (prefix, name) = match name.kind() {
        "qualified_identifier" => split_path(text(name, src)),
        "identifier" | "field_identifier" | "type_identifier" | "destructor_name"
        | "operator_name" | "template_function" | "primitive_type" => {
            (None, text(name, src).split_whitespace().collect())
        }
        _ => return None,
    };
    let mut named = Named::new(name);
    if prefix.is_some() {
        named.kind = Some(ChunkKind::Method);
    }
    named.prefix = prefix;
    Some(named)
}

/// `static int *foo(...)`, `void Foo::bar() const` (a method of `Foo`).
fn function_name<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let (name, _) = declared_name(node)?;
    named_from(name, ctx.src)
}

/// `typedef struct {...} Name;`
fn typedef_name<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let (name, _) = declared_name(node)?;
    named_from(name, ctx.src)
}

/// A method declared in a class body: `void bar(int) const;`, `Foo();`.
fn method_declaration<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    if !ctx.in_container {
        return None;
    }
    let (name, function) = declared_name(node)?;
    if !function {
        return None;
    }
    named_from(name, ctx.src)
}

/// `#include "a/b.h"` / `<a/b.h>`: the file `a/b.h`, named `b.h`.
fn include(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let Some(path) = node.child_by_field_name("path") else {
        return;
    };
    let path = unquote(text(path, src));
    if path.is_empty() {
        return;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    out.push(Found::new(
        RefKind::Import,
        name,
        Some(path.to_string()),
        node.start_position().row,
    ));
}

/// `using std::string;` is `string` from `std`; `using namespace std;` is
/// `*` from `std`.
fn using(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let Some(target) = node.named_child(0) else {
        return;
    };
    let path = clean(text(target, src), true, false);
    let row = node.start_position().row;
    let whole = text(node, src).split_whitespace().nth(1) == Some("namespace");
    if whole {
        out.push(Found::new(RefKind::Import, "*", Some(path), row));
    } else {
        let (q, name) = split_last(&path);
        out.push(Found::new(
            RefKind::Import,
            name,
            q.map(str::to_string),
            row,
        ));
    }
}
