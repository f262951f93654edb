use ken_core::ChunkKind;
use tree_sitter::Node;

use super::{Ctx, Named, Rule, Spec, split_path, text};

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("method", ChunkKind::Function),
        Rule::new("singleton_method", ChunkKind::Method),
        Rule::new("class", ChunkKind::Class).hook(constant_name),
        Rule::new("module", ChunkKind::Namespace)
            .hook(constant_name)
            .with_methods(),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
};

/// `class Foo::Bar` → `Bar` qualified by `Foo`.
fn constant_name<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let (prefix, name) = split_path(text(node.child_by_field_name("name")?, ctx.src));
    let mut named = Named::new(name);
    named.prefix = prefix;
    Some(named)
}
