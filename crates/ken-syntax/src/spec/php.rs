use ken_core::ChunkKind;

use super::{Rule, Spec};

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
};
