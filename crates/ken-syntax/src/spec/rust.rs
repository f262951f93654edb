use ken_core::ChunkKind;
use tree_sitter::Node;

use super::{Ctx, Named, Rule, Spec, text};

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
