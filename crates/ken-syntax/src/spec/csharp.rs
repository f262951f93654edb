use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{CallRule, Found, ImportRule, InheritRule, Member, RefSpec, Rule, Spec, Types, text};
use crate::names::{clean, last_segment};

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("class_declaration", ChunkKind::Class),
        Rule::new("struct_declaration", ChunkKind::Struct),
        Rule::new("interface_declaration", ChunkKind::Interface),
        Rule::new("enum_declaration", ChunkKind::Enum),
        Rule::new("record_declaration", ChunkKind::Class),
        Rule::new("method_declaration", ChunkKind::Function),
        Rule::new("constructor_declaration", ChunkKind::Method),
        Rule::new("local_function_statement", ChunkKind::Function),
        Rule::new("delegate_declaration", ChunkKind::Type).no_body(),
        Rule::new("namespace_declaration", ChunkKind::Namespace).no_scope(),
        Rule::new("file_scoped_namespace_declaration", ChunkKind::Namespace)
            .no_scope()
            .no_body(),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
    refs: RefSpec {
        calls: &[
            CallRule::field("invocation_expression", "function"),
            CallRule::new("object_creation_expression", Some("type")),
        ],
        members: &[Member::new(
            "member_access_expression",
            "expression",
            "name",
        )],
        imports: &[ImportRule::new("using_directive", using)],
        inherits: &[InheritRule::node("base_list")],
        // C# types are plain identifiers: only those in a type position count.
        types: Types {
            context_names: &["identifier"],
            context_paths: &["qualified_name", "alias_qualified_name"],
            fields: &["type", "returns"],
            builtins: &["var", "dynamic", "nint", "nuint"],
            ..Types::NONE
        },
        generics: true,
        ..RefSpec::NONE
    },
};

/// `using System.Text;` is the namespace `System.Text` (named `Text`);
/// `using X = A.B;` is `A.B` named `X`.
fn using(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let alias = node.child_by_field_name("name");
    let mut cursor = node.walk();
    let target = node
        .named_children(&mut cursor)
        .filter(|c| Some(*c) != alias)
        .find(|c| matches!(c.kind(), "qualified_name" | "identifier" | "generic_name"));
    let Some(target) = target else { return };
    let path = clean(text(target, src), true, false);
    let name = match alias {
        Some(a) => text(a, src).to_string(),
        None => last_segment(&path).to_string(),
    };
    out.push(Found::new(
        RefKind::Import,
        name,
        Some(path),
        node.start_position().row,
    ));
}
