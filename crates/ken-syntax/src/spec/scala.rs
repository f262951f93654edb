use ken_core::ChunkKind;

use super::{Rule, Spec};

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
};
