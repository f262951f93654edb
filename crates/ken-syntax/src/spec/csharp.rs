use ken_core::ChunkKind;

use super::{Rule, Spec};

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
};
