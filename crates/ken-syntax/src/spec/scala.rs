use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{CallRule, Found, ImportRule, InheritRule, Member, RefSpec, Rule, Spec, Types, text};
use crate::names::split_last;

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("class_definition", ChunkKind::Class),
        Rule::new("object_definition", ChunkKind::Namespace).with_methods(),
        Rule::new("trait_definition", ChunkKind::Trait),
        Rule::new("enum_definition", ChunkKind::Enum),
        Rule::new("function_definition", ChunkKind::Function),
        Rule::new("function_declaration", ChunkKind::Function).no_body(),
        Rule::new("type_definition", ChunkKind::Type).no_body(),
    ],
    comments: &["comment", "block_comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
    refs: RefSpec {
        calls: &[
            CallRule::field("call_expression", "function"),
            CallRule::new("instance_expression", None),
        ],
        members: &[Member::new("field_expression", "value", "field")],
        imports: &[ImportRule::new("import_declaration", import)],
        inherits: &[
            InheritRule::field("class_definition", "extend"),
            InheritRule::field("object_definition", "extend"),
            InheritRule::field("trait_definition", "extend"),
            InheritRule::field("enum_definition", "extend"),
        ],
        types: Types {
            names: &["type_identifier"],
            paths: &["stable_type_identifier"],
            def_fields: &["name"],
            ..Types::NONE
        },
        ..RefSpec::NONE
    },
};

/// `import a.b.C` is `C` from `a.b`; `import a.b.{C, D => E}` is `C` and
/// `D` from `a.b`; `import a.b._` is `*` from `a.b`.
fn import(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let mut path = String::new();
    let mut cursor = node.walk();
    for p in node.children_by_field_name("path", &mut cursor) {
        if p.is_named() {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(text(p, src));
        }
    }
    let before = out.len();
    let row = node.start_position().row;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "namespace_wildcard" | "wildcard" => {
                out.push(Found::new(RefKind::Import, "*", Some(path.clone()), row));
            }
            "namespace_selectors" => {
                let mut c2 = child.walk();
                for sel in child.named_children(&mut c2) {
                    let name = match sel.kind() {
                        "arrow_renamed_identifier" | "as_renamed_identifier" => {
                            sel.child_by_field_name("name")
                        }
                        "namespace_wildcard" | "wildcard" => {
                            let q = Some(path.clone());
                            out.push(Found::new(RefKind::Import, "*", q, row));
                            None
                        }
                        _ => Some(sel),
                    };
                    if let Some(n) = name {
                        let r = n.start_position().row;
                        let q = Some(path.clone());
                        out.push(Found::new(RefKind::Import, text(n, src), q, r));
                    }
                }
            }
            "as_renamed_identifier" => {
                if let Some(n) = child.child_by_field_name("name") {
                    let q = Some(path.clone());
                    out.push(Found::new(RefKind::Import, text(n, src), q, row));
                }
            }
            _ => {}
        }
    }
    if out.len() == before && !path.is_empty() {
        let (q, name) = split_last(&path);
        out.push(Found::new(
            RefKind::Import,
            name,
            q.map(str::to_string),
            row,
        ));
    }
}
