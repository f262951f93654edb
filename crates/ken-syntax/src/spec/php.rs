use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{CallRule, Found, ImportRule, InheritRule, Member, RefSpec, Rule, Spec, Types, text};
use crate::names::{last_segment, split_last, unquote};

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("function_definition", ChunkKind::Function),
        Rule::new("class_declaration", ChunkKind::Class),
        Rule::new("interface_declaration", ChunkKind::Interface),
        Rule::new("trait_declaration", ChunkKind::Trait),
        Rule::new("enum_declaration", ChunkKind::Enum),
        Rule::new("method_declaration", ChunkKind::Function),
        Rule::new("namespace_definition", ChunkKind::Namespace).no_scope(),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
    refs: RefSpec {
        calls: &[
            CallRule::field("function_call_expression", "function"),
            CallRule::method("member_call_expression", "object", "name"),
            CallRule::method("nullsafe_member_call_expression", "object", "name"),
            CallRule::method("scoped_call_expression", "scope", "name"),
            CallRule::new("object_creation_expression", None),
        ],
        members: &[
            Member::new("member_access_expression", "object", "name"),
            Member::new("nullsafe_member_access_expression", "object", "name"),
            Member::new("scoped_property_access_expression", "scope", "name"),
        ],
        imports: &[
            ImportRule::new("namespace_use_declaration", use_namespace),
            ImportRule::new("include_expression", include),
            ImportRule::new("include_once_expression", include),
            ImportRule::new("require_expression", include),
            ImportRule::new("require_once_expression", include),
        ],
        // `use SomeTrait;` in a class body is a use_declaration.
        inherits: &[
            InheritRule::node("base_clause"),
            InheritRule::node("class_interface_clause"),
            InheritRule::node("use_declaration"),
        ],
        types: Types {
            paths: &["named_type"],
            ..Types::NONE
        },
        ..RefSpec::NONE
    },
};

/// `use App\Models\User;` is `User` from `App\Models`; `use App\{A, B\C};`
/// is `A` from `App` and `C` from `App\B`.
fn use_namespace(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let mut cursor = node.walk();
    let prefix = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "namespace_name")
        .map(|p| text(p, src).trim().trim_end_matches('\\').to_string());
    let mut clauses = Vec::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "namespace_use_clause" => clauses.push(child),
            "namespace_use_group" => {
                let mut c2 = child.walk();
                clauses.extend(
                    child
                        .named_children(&mut c2)
                        .filter(|c| c.kind() == "namespace_use_clause"),
                );
            }
            _ => {}
        }
    }
    for clause in clauses {
        let mut c3 = clause.walk();
        let Some(path) = clause
            .named_children(&mut c3)
            .find(|c| matches!(c.kind(), "name" | "qualified_name"))
        else {
            continue;
        };
        let path: String = text(path, src).split_whitespace().collect();
        let full = match &prefix {
            Some(p) => format!("{p}\\{path}"),
            None => path,
        };
        let (q, name) = split_last(&full);
        let row = clause.start_position().row;
        out.push(Found::new(
            RefKind::Import,
            name,
            q.map(str::to_string),
            row,
        ));
    }
}

/// `require_once 'lib/x.php'` (also `__DIR__ . '/x.php'`): the file.
fn include(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let Some(mut arg) = node.named_child(0) else {
        return;
    };
    if arg.kind() == "parenthesized_expression"
        && let Some(inner) = arg.named_child(0)
    {
        arg = inner;
    }
    if arg.kind() == "binary_expression"
        && let Some(right) = arg.child_by_field_name("right")
    {
        arg = right;
    }
    if !matches!(arg.kind(), "string" | "encapsed_string") {
        return;
    }
    let path = unquote(text(arg, src));
    out.push(Found::new(
        RefKind::Import,
        last_segment(path),
        Some(path.to_string()),
        node.start_position().row,
    ));
}
