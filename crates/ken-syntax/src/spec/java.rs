use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{CallRule, Found, ImportRule, InheritRule, Member, RefSpec, Rule, Spec, Types, text};
use crate::names::split_last;

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("class_declaration", ChunkKind::Class),
        Rule::new("interface_declaration", ChunkKind::Interface),
        Rule::new("annotation_type_declaration", ChunkKind::Interface),
        Rule::new("enum_declaration", ChunkKind::Enum),
        Rule::new("record_declaration", ChunkKind::Class),
        Rule::new("method_declaration", ChunkKind::Function),
        Rule::new("constructor_declaration", ChunkKind::Method),
    ],
    comments: &["line_comment", "block_comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
    refs: RefSpec {
        calls: &[
            CallRule::method("method_invocation", "object", "name"),
            CallRule::new("object_creation_expression", Some("type")),
        ],
        members: &[Member::new("field_access", "object", "field")],
        imports: &[ImportRule::new("import_declaration", import)],
        inherits: &[
            InheritRule::node("superclass"),
            InheritRule::node("super_interfaces"),
            InheritRule::node("extends_interfaces"),
        ],
        types: Types {
            names: &["type_identifier"],
            paths: &["scoped_type_identifier"],
            params: &["type_parameter"],
            ..Types::NONE
        },
        generics: true,
        ..RefSpec::NONE
    },
};

/// `import a.b.C;` is `C` from `a.b`; `import a.b.*;` is `*` from `a.b`;
/// `import static a.B.m;` is `m` from `a.B`.
fn import(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let mut cursor = node.walk();
    let mut path = None;
    let mut wildcard = false;
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "scoped_identifier" | "identifier" => path = Some(child),
            "asterisk" => wildcard = true,
            _ => {}
        }
    }
    let Some(path) = path else { return };
    let full: String = text(path, src).split_whitespace().collect();
    let row = path.start_position().row;
    if wildcard {
        out.push(Found::new(RefKind::Import, "*", Some(full), row));
    } else {
        let (q, name) = split_last(&full);
        out.push(Found::new(
            RefKind::Import,
            name,
            q.map(str::to_string),
            row,
        ));
    }
}
