use ken_core::ChunkKind;

use super::{Rule, Spec, Wrapper};

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("function_definition", ChunkKind::Function),
        Rule::new("class_definition", ChunkKind::Class),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[Wrapper::new("decorated_definition", false).ignoring(&["decorator"])],
    docstrings: true,
};
