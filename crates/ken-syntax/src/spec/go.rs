use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{
    CallRule, Ctx, Found, ImportRule, InheritRule, Member, Named, RefSpec, Rule, Spec, Types,
    Wrapper, text,
};
use crate::names::{last_segment, unquote};

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
    refs: RefSpec {
        calls: &[CallRule::field("call_expression", "function")],
        members: &[Member::new("selector_expression", "operand", "field")],
        imports: &[ImportRule::new("import_declaration", import)],
        // Embedded struct fields and embedded interfaces.
        inherits: &[
            InheritRule::field("field_declaration", "type").unless("name"),
            InheritRule::node("type_elem"),
        ],
        types: Types {
            names: &["type_identifier"],
            paths: &["qualified_type"],
            def_fields: &["name"],
            builtins: &[
                "any",
                "bool",
                "byte",
                "comparable",
                "complex64",
                "complex128",
                "error",
                "float32",
                "float64",
                "int",
                "int8",
                "int16",
                "int32",
                "int64",
                "rune",
                "string",
                "uint",
                "uint8",
                "uint16",
                "uint32",
                "uint64",
                "uintptr",
            ],
            ..Types::NONE
        },
        ..RefSpec::NONE
    },
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

/// `import ( "fmt"; c "github.com/spf13/cobra"; . "x"; _ "y" )`: each
/// package, named by the name it binds (its alias, else its last path
/// segment; `*` for a dot import).
fn import(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        for child in n.named_children(&mut cursor) {
            match child.kind() {
                "import_spec_list" => stack.push(child),
                "import_spec" => {
                    let Some(path) = child.child_by_field_name("path") else {
                        continue;
                    };
                    let path = unquote(text(path, src));
                    let name = match child.child_by_field_name("name") {
                        Some(a) if a.kind() == "dot" => "*",
                        Some(a) if a.kind() == "package_identifier" => text(a, src),
                        _ => last_segment(path),
                    };
                    let row = child.start_position().row;
                    out.push(Found::new(
                        RefKind::Import,
                        name,
                        Some(path.to_string()),
                        row,
                    ));
                }
                _ => {}
            }
        }
    }
}
