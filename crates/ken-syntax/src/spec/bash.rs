use ken_core::ChunkKind;

use super::{Rule, Spec};

pub(crate) static SPEC: Spec = Spec {
    rules: &[Rule::new("function_definition", ChunkKind::Function)],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
};
