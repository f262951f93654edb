use ken_core::{ChunkKind, RefKind};

use super::{CallRule, CallSite, Found, RefSpec, Rule, Spec, text};
use crate::names::{last_segment, unquote};

pub(crate) static SPEC: Spec = Spec {
    rules: &[Rule::new("function_definition", ChunkKind::Function)],
    comments: &["comment"],
    attributes: &[],
    wrappers: &[],
    docstrings: false,
    refs: RefSpec {
        // Every command is a call (most name programs, not functions: they
        // stay unresolved).
        calls: &[CallRule::field("command", "name")],
        call_hook: Some(source),
        ..RefSpec::NONE
    },
};

/// `source lib.sh` / `. lib.sh` import a file; `$cmd args` calls nothing
/// nameable.
fn source(site: &CallSite<'_, '_>, out: &mut Vec<Found>) -> bool {
    if site.name.starts_with('$') {
        return true;
    }
    let command = site
        .node
        .child_by_field_name("name")
        .map_or("", |n| text(n, site.src));
    if !matches!(command, "source" | ".") {
        return false;
    }
    let mut cursor = site.node.walk();
    let Some(arg) = site
        .node
        .children_by_field_name("argument", &mut cursor)
        .next()
    else {
        return false;
    };
    let path = unquote(text(arg, site.src));
    out.push(Found::new(
        RefKind::Import,
        last_segment(path),
        Some(path.to_string()),
        site.node.start_position().row,
    ));
    true
}
