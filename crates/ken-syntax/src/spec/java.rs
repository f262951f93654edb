use ken_core::ChunkKind;

use super::{Rule, Spec};

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
};
