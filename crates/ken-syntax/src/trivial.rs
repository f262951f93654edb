//! Bodies that do nothing, read from the syntax tree.

use tree_sitter::Node;

use crate::spec::text;

/// Does this body do nothing? Only `pass`, `...`, a docstring or string
/// statement, `;`, comments, an empty block, `todo!()` / `unimplemented!()`,
/// Scala's `???`, or the shell's `:`.
pub(crate) fn is_trivial_body(body: Node<'_>, src: &[u8], comments: &[&str]) -> bool {
    if body.child_count() == 0 {
        return matches!(text(body, src), "???" | "...");
    }
    let mut cursor = body.walk();
    let mut named = 0;
    for child in body.named_children(&mut cursor) {
        if comments.contains(&child.kind()) {
            continue;
        }
        named += 1;
        if !is_trivial_statement(child, src) {
            return false;
        }
    }
    // An empty block, or a body of only do-nothing statements. An
    // expression body with no named children (`() => []`) is not a block.
    named > 0 || text(body, src).starts_with('{') || body.kind() == "block"
}

fn is_trivial_statement(node: Node<'_>, src: &[u8]) -> bool {
    match node.kind() {
        "pass_statement" | "empty_statement" | "ellipsis" => true,
        // the shell's null command
        "command" => text(node, src).trim() == ":",
        "expression_statement" => match node.named_child_count() {
            0 => true,
            1 => node.named_child(0).is_some_and(|c| {
                matches!(c.kind(), "string" | "concatenated_string" | "ellipsis")
                    || is_todo_macro(c, src)
            }),
            _ => false,
        },
        _ => is_todo_macro(node, src),
    }
}

fn is_todo_macro(node: Node<'_>, src: &[u8]) -> bool {
    node.kind() == "macro_invocation"
        && node
            .child_by_field_name("macro")
            .is_some_and(|m| matches!(text(m, src), "todo" | "unimplemented"))
}
