use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{
    AssignRule, CallRule, Ctx, Found, ImportRule, InheritRule, Member, Named, RefSpec, Rule, Spec,
    Types, ValueSlot, Values, Wrapper, text,
};
use crate::names::last_segment;

pub(crate) static SPEC: Spec = Spec {
    rules: &[
        Rule::new("function_definition", ChunkKind::Function),
        Rule::new("class_definition", ChunkKind::Class),
        Rule::new("type_alias_statement", ChunkKind::Type)
            .no_body()
            .hook(type_alias),
    ],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[Wrapper::new("decorated_definition", false).ignoring(&["decorator"])],
    docstrings: true,
    refs: RefSpec {
        calls: &[
            CallRule::field("call", "function"),
            CallRule::decorator("decorator"),
        ],
        members: &[Member::new("attribute", "object", "attribute")],
        imports: &[
            ImportRule::new("import_statement", import),
            ImportRule::new("import_from_statement", import_from),
        ],
        inherits: &[InheritRule::field("class_definition", "superclasses")],
        assigns: &[
            AssignRule::new("assignment", "left", "right", true).typed_by("type"),
            AssignRule::parameter("typed_parameter", None, "type"),
            AssignRule::parameter("typed_default_parameter", Some("name"), "type"),
        ],
        reads: true,
        values: Values {
            nodes: &["identifier"],
            slots: &[
                ValueSlot::any("argument_list"),
                ValueSlot::field("keyword_argument", "value"),
                ValueSlot::field("assignment", "right"),
                ValueSlot::field("default_parameter", "value"),
                ValueSlot::field("typed_default_parameter", "value"),
                ValueSlot::field("pair", "value"),
                ValueSlot::any("return_statement"),
                ValueSlot::any("expression_list"),
                ValueSlot::any("list"),
                ValueSlot::any("tuple"),
                ValueSlot::any("set"),
                ValueSlot::any("boolean_operator"),
                ValueSlot::any("conditional_expression"),
            ],
        },
        types: Types {
            context_names: &["identifier"],
            context_paths: &["attribute", "member_type"],
            contexts: &["type"],
            ..Types::NONE
        },
        ..RefSpec::NONE
    },
};

/// `type Vector = list[float]` (Python 3.12): named by its left side,
/// without type parameters.
fn type_alias<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let left = node.child_by_field_name("left")?;
    let name = text(left, ctx.src).split(['[', ' ']).next()?.trim();
    (!name.is_empty()).then(|| Named::new(name))
}

fn dotted(node: Node<'_>, src: &[u8]) -> String {
    text(node, src).split_whitespace().collect()
}

/// `import a.b`: the module `a.b`, named `b`; `import a.b as c`: named `c`
/// (whole-module imports are named by the name they bind, when they bind one).
fn import(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let mut cursor = node.walk();
    for child in node.children_by_field_name("name", &mut cursor) {
        let (path, alias) = match child.kind() {
            "aliased_import" => (
                child.child_by_field_name("name"),
                child.child_by_field_name("alias"),
            ),
            _ => (Some(child), None),
        };
        let Some(path) = path else { continue };
        let module = dotted(path, src);
        let name = match alias {
            Some(a) => text(a, src).to_string(),
            None => last_segment(&module).to_string(),
        };
        out.push(Found::new(
            RefKind::Import,
            name,
            Some(module),
            child.start_position().row,
        ));
    }
}

/// `from a.b import c as d`: `c` from `a.b`, bound as `d` (relative
/// modules as written: `..a`).
fn import_from(node: Node<'_>, src: &[u8], out: &mut Vec<Found>) {
    let Some(module) = node.child_by_field_name("module_name") else {
        return;
    };
    let module = dotted(module, src);
    let mut cursor = node.walk();
    for child in node.children_by_field_name("name", &mut cursor) {
        let (name, alias) = match child.kind() {
            "aliased_import" => (
                child.child_by_field_name("name"),
                child.child_by_field_name("alias"),
            ),
            _ => (Some(child), None),
        };
        if let Some(name) = name {
            let alias = alias.map(|a| text(a, src));
            out.push(
                Found::new(
                    RefKind::Import,
                    dotted(name, src),
                    Some(module.clone()),
                    name.start_position().row,
                )
                .aliased(alias),
            );
        }
    }
    let mut cursor = node.walk();
    if let Some(w) = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "wildcard_import")
    {
        out.push(Found::new(
            RefKind::Import,
            "*",
            Some(module),
            w.start_position().row,
        ));
    }
}
