use ken_core::ChunkKind;
use tree_sitter::Node;

use super::{Ctx, Named, Rule, Spec, Wrapper, text};

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("function_declaration", ChunkKind::Function),
        Rule::new("method_declaration", ChunkKind::Method).hook(method_name),
        // Struct so that interface methods are qualified; plain types say `Type`.
        Rule::new("type_spec", ChunkKind::Struct).hook(type_spec),
        Rule::new("type_alias", ChunkKind::Type).no_body(),
        Rule::new("method_elem", ChunkKind::Method).no_body(),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[Wrapper::new("type_declaration", true)],
    docstrings: false,
};

/// `func (c *Command) AddCommand(...)` → `Command.AddCommand`.
fn method_name<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let name = text(node.child_by_field_name("name")?, ctx.src);
    let mut named = Named::new(name);
    named.kind = Some(ChunkKind::Method);
    let receiver = node.child_by_field_name("receiver")?;
    let param = receiver
        .named_children(&mut receiver.walk())
        .find(|n| n.kind() == "parameter_declaration");
    if let Some(mut ty) = param.and_then(|p| p.child_by_field_name("type")) {
        for _ in 0..4 {
            ty = match ty.kind() {
                "pointer_type" => match ty.named_child(0) {
                    Some(t) => t,
                    None => break,
                },
                "generic_type" => match ty.child_by_field_name("type") {
                    Some(t) => t,
                    None => break,
                },
                _ => break,
            };
        }
        named.prefix = Some(text(ty, ctx.src).to_string());
    }
    Some(named)
}

/// `type X struct {...}` is a struct, `type I interface {...}` an
/// interface, anything else a type.
fn type_spec<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let name = text(node.child_by_field_name("name")?, ctx.src);
    let mut named = Named::new(name);
    let ty = node.child_by_field_name("type")?;
    match ty.kind() {
        "struct_type" => {
            named.kind = Some(ChunkKind::Struct);
            named.body = ty
                .named_children(&mut ty.walk())
                .find(|n| n.kind() == "field_declaration_list");
        }
        "interface_type" => {
            named.kind = Some(ChunkKind::Interface);
            named.body = Some(ty);
        }
        _ => named.kind = Some(ChunkKind::Type),
    }
    Some(named)
}
