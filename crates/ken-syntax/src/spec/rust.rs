use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{
    CallRule, Ctx, Found, ImportRule, InheritRule, Member, Named, RefSpec, Rule, Spec, Types, text,
};
use crate::names::{clean, split_last};

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("function_item", ChunkKind::Function),
        Rule::new("function_signature_item", ChunkKind::Function).no_body(),
        Rule::new("struct_item", ChunkKind::Struct),
        Rule::new("union_item", ChunkKind::Struct),
        Rule::new("enum_item", ChunkKind::Enum),
        Rule::new("trait_item", ChunkKind::Trait),
        Rule::new("impl_item", ChunkKind::Impl).hook(impl_name),
        Rule::new("mod_item", ChunkKind::Namespace).needs_body(),
        Rule::new("macro_definition", ChunkKind::Macro).no_body(),
        Rule::new("type_item", ChunkKind::Type).no_body(),
    ],
    comments: &["line_comment", "block_comment"],
    attributes: &["attribute_item"],
    wrappers: &[],
    docstrings: false,
    refs: RefSpec {
        calls: &[
            CallRule::field("call_expression", "function"),
            CallRule::field("macro_invocation", "macro"),
        ],
        members: &[Member::new("field_expression", "value", "field")],
        imports: &[
            ImportRule::new("use_declaration", use_declaration),
            ImportRule::new("extern_crate_declaration", extern_crate),
        ],
        inherits: &[
            InheritRule::field("impl_item", "trait"),
            InheritRule::field("trait_item", "bounds"),
        ],
        types: Types {
            names: &["type_identifier"],
            paths: &["scoped_type_identifier"],
            def_fields: &["name"],
            params: &["type_parameters", "type_parameter"],
            ..Types::NONE
        },
        generics: true,
        token_tree: Some("token_tree"),
        postfix: &["try_expression", "await_expression"],
        skip: &["attribute_item", "inner_attribute_item"],
        ..RefSpec::NONE
    },
};

/// `impl<T> Trait for path::Type<T>` is named after `Type`.
fn impl_name<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let mut ty = node.child_by_field_name("type")?;
    for _ in 0..8 {
        ty = match ty.kind() {
            "generic_type" | "reference_type" | "pointer_type" => ty.child_by_field_name("type")?,
            "scoped_type_identifier" => ty.child_by_field_name("name")?,
            _ => break,
        };
    }
    let name: String = text(ty, ctx.src).split_whitespace().collect();
    Some(Named::new(name))
}

/// `use a::b::{c, d::e as f, self, *}`: `c` from `a::b`, `e` from
/// `a::b::d`, `b` from `a`, `*` from `a::b`. Aliases are not kept.
fn use_declaration(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let Some(arg) = node.child_by_field_name("argument") else {
        return;
    };
    let join = |prefix: &str, path: &str| {
        if prefix.is_empty() {
            path.to_string()
        } else {
            format!("{prefix}::{path}")
        }
    };
    let mut stack = vec![(String::new(), arg)];
    let mut budget = 512;
    while let Some((prefix, n)) = stack.pop() {
        if budget == 0 {
            break;
        }
        budget -= 1;
        let row = n.start_position().row;
        match n.kind() {
            "use_list" => {
                let mut cursor = n.walk();
                let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
                stack.extend(children.into_iter().rev().map(|c| (prefix.clone(), c)));
            }
            "scoped_use_list" => {
                let path = n
                    .child_by_field_name("path")
                    .map(|p| clean(text(p, src), true, false))
                    .unwrap_or_default();
                if let Some(list) = n.child_by_field_name("list") {
                    stack.push((join(&prefix, &path), list));
                }
            }
            "use_as_clause" => {
                if let Some(path) = n.child_by_field_name("path") {
                    stack.push((prefix, path));
                }
            }
            "use_wildcard" => {
                let path = n
                    .named_child(0)
                    .map(|p| clean(text(p, src), true, false))
                    .unwrap_or_default();
                let module = join(&prefix, &path);
                out.push(Found::new(RefKind::Import, "*", Some(module), row));
            }
            _ => {
                let full = join(&prefix, &clean(text(n, src), true, false));
                let (q, name) = split_last(&full);
                if name == "self" {
                    // `use std::io::{self}` is `io` from `std`.
                    if let Some(q) = q {
                        let (q, name) = split_last(q);
                        out.push(Found::new(
                            RefKind::Import,
                            name,
                            q.map(str::to_string),
                            row,
                        ));
                    }
                } else {
                    out.push(Found::new(
                        RefKind::Import,
                        name,
                        q.map(str::to_string),
                        row,
                    ));
                }
            }
        }
    }
}

/// `extern crate foo as bar;`: the crate `foo`, named `bar`.
fn extern_crate(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let Some(name) = node.child_by_field_name("name") else {
        return;
    };
    let krate = text(name, src).to_string();
    let bound = node
        .child_by_field_name("alias")
        .map_or(krate.clone(), |a| text(a, src).to_string());
    out.push(Found::new(
        RefKind::Import,
        bound,
        Some(krate),
        node.start_position().row,
    ));
}
