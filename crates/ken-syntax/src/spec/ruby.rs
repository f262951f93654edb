use ken_core::{ChunkKind, RefKind};
use tree_sitter::Node;

use super::{
    CallRule, CallSite, Ctx, Found, InheritRule, Named, RefSpec, Rule, Spec, split_path, text,
};
use crate::names::{last_segment, split_last, unquote};

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
    refs: RefSpec {
        // `foo.bar`, `bar 1`, `bar(1)` are calls; a bare `bar` is not
        // (the grammar cannot tell it from a local variable).
        calls: &[CallRule::method("call", "receiver", "method")],
        inherits: &[InheritRule::field("class", "superclass")],
        call_hook: Some(special_call),
        ..RefSpec::NONE
    },
};

/// `class Foo::Bar` → `Bar` qualified by `Foo`.
fn constant_name<'t>(node: Node<'t>, ctx: &Ctx<'_>) -> Option<Named<'t>> {
    let (prefix, name) = split_path(text(node.child_by_field_name("name")?, ctx.src));
    let mut named = Named::new(name);
    named.prefix = prefix;
    Some(named)
}

/// `require 'x'` / `require_relative '../x'` / `load 'x'` are imports;
/// `include M` / `extend M` / `prepend M` are mixins (inheritance).
fn special_call(site: &CallSite<'_, '_>, out: &mut Vec<Found>) -> bool {
    if site.qualifier.is_some() {
        return false;
    }
    let import = matches!(site.name, "require" | "require_relative" | "load");
    let mixin = matches!(site.name, "include" | "extend" | "prepend");
    if !import && !mixin {
        return false;
    }
    let Some(args) = site.node.child_by_field_name("arguments") else {
        return false;
    };
    let before = out.len();
    let mut cursor = args.walk();
    for arg in args.named_children(&mut cursor) {
        let row = arg.start_position().row;
        let t = text(arg, site.src);
        match arg.kind() {
            "string" if import => {
                let path = unquote(t);
                out.push(Found::new(
                    RefKind::Import,
                    last_segment(path),
                    Some(path.to_string()),
                    row,
                ));
                break;
            }
            "constant" | "scope_resolution" if mixin => {
                let (q, name) = split_last(t);
                out.push(Found::new(
                    RefKind::Inherit,
                    name,
                    q.map(str::to_string),
                    row,
                ));
            }
            _ => {}
        }
    }
    out.len() > before
}
