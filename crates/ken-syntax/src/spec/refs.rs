//! The reference half of a [`Spec`](super::Spec): which nodes are calls,
//! member accesses, imports, base-class lists and type names. Read by the
//! generic extractor in `refs/`.

use ken_core::RefKind;
use tree_sitter::Node;

/// How a language's references are found.
pub(crate) struct RefSpec {
    /// Call-like nodes: calls, method calls, `new`, macro invocations,
    /// decorators, shell commands.
    pub calls: &'static [CallRule],
    /// Member accesses (`a.b`, `a->b`), followed when a qualifier is spelled
    /// through calls (`a.b().c()` is `c` reached through `a.b()`).
    pub members: &'static [Member],
    /// Import-like nodes, each read by a hook.
    pub imports: &'static [ImportRule],
    /// Nodes, or a field of a node, listing base classes and implemented
    /// interfaces.
    pub inherits: &'static [InheritRule],
    pub types: Types,
    /// `<...>` in names are generic arguments (not comparisons): dropped.
    pub generics: bool,
    /// Calls that are really imports or mixins (`require 'x'`,
    /// `include Comparable`, `source lib.sh`).
    pub call_hook: Option<CallHook>,
    /// Rust macro arguments: calls written in a token tree.
    pub token_tree: Option<&'static str>,
    /// Postfix operators spelled through in qualifiers (`a()?.b()`,
    /// `x!.y()`): their first named child is the operand.
    pub postfix: &'static [&'static str],
    /// Subtrees never read (`#[cfg(all(...))]` is not a call).
    pub skip: &'static [&'static str],
    /// Assignments that may give a variable the type of what is assigned
    /// (`x = Class(...)`, `const x = new Class()`).
    pub assigns: &'static [AssignRule],
    /// Member accesses that are neither called nor assigned to are
    /// references of their own (`RefKind::Read`).
    pub reads: bool,
    /// Bare names read as values (`f(handler)`, `x = sha256`,
    /// `<Suspense>`): where they are references of their own
    /// (`RefKind::Read`), kept only when the name is a function the file
    /// defines or a name it imports.
    pub values: Values,
}

/// Where a bare name is a value: a node of `nodes` under one of `slots`.
pub(crate) struct Values {
    pub nodes: &'static [&'static str],
    pub slots: &'static [ValueSlot],
}

impl Values {
    pub const NONE: Values = Values {
        nodes: &[],
        slots: &[],
    };
}

/// A parent node and, when given, the field of it that holds a value.
pub(crate) struct ValueSlot {
    pub parent: &'static str,
    pub field: Option<&'static str>,
}

impl ValueSlot {
    /// Any named child of `parent` (an argument list, an array).
    pub const fn any(parent: &'static str) -> ValueSlot {
        ValueSlot {
            parent,
            field: None,
        }
    }

    /// The `field` of `parent` (an assignment's right side).
    pub const fn field(parent: &'static str, field: &'static str) -> ValueSlot {
        ValueSlot {
            parent,
            field: Some(field),
        }
    }
}

impl RefSpec {
    /// No references at all; the base of every language's table.
    pub const NONE: RefSpec = RefSpec {
        calls: &[],
        members: &[],
        imports: &[],
        inherits: &[],
        types: Types::NONE,
        generics: false,
        call_hook: None,
        token_tree: None,
        postfix: &[],
        skip: &[],
        assigns: &[],
        reads: false,
        values: Values::NONE,
    };
}

/// An assignment node: its target in `target`, the value in `value`. The
/// target takes the value's class when the value is a `new` (a
/// [`Callee::New`] call) or, when `capitalized` says so, a call of a
/// capitalized name (Python, where classes are called to make instances:
/// `Flask(__name__)`, `models.User()`). A parameter with a type annotation
/// is one too: `annotation` says `value` holds a type, whose class the
/// parameter takes (`app: Flask`, `c: Context<Env>`, `Optional[Flask]`).
pub(crate) struct AssignRule {
    pub node: &'static str,
    /// The field of the target; None: the node's first named child
    /// (Python's typed parameters name no field).
    pub target: Option<&'static str>,
    pub value: &'static str,
    pub capitalized: bool,
    pub annotation: bool,
    /// A field holding a type annotation that, when present, says the
    /// class instead of the value (`current_app: Flask = LocalProxy(...)`).
    pub typed_by: Option<&'static str>,
}

impl AssignRule {
    pub const fn new(
        node: &'static str,
        target: &'static str,
        value: &'static str,
        capitalized: bool,
    ) -> AssignRule {
        AssignRule {
            node,
            target: Some(target),
            value,
            capitalized,
            annotation: false,
            typed_by: None,
        }
    }

    /// The same, with an annotation in `field` taking precedence.
    pub const fn typed_by(self, field: &'static str) -> AssignRule {
        AssignRule {
            typed_by: Some(field),
            ..self
        }
    }

    /// A parameter whose annotation, in `annotation`, types it.
    pub const fn parameter(
        node: &'static str,
        target: Option<&'static str>,
        annotation: &'static str,
    ) -> AssignRule {
        AssignRule {
            node,
            target,
            value: annotation,
            capitalized: false,
            annotation: true,
            typed_by: None,
        }
    }
}

/// A call-like node.
pub(crate) struct CallRule {
    pub node: &'static str,
    pub callee: Callee,
}

impl CallRule {
    /// The callee expression is in `field` (`f(x)`, `obj.m(x)`, `Type::f(x)`).
    pub const fn field(node: &'static str, field: &'static str) -> CallRule {
        CallRule {
            node,
            callee: Callee::Field(field),
        }
    }
    /// The call node holds the receiver and the method name (`obj.m(x)` in Java, Ruby, PHP).
    pub const fn method(node: &'static str, object: &'static str, name: &'static str) -> CallRule {
        CallRule {
            node,
            callee: Callee::Method { object, name },
        }
    }
    /// Object creation: the type in `field` (or the first named child).
    pub const fn new(node: &'static str, field: Option<&'static str>) -> CallRule {
        CallRule {
            node,
            callee: Callee::New(field),
        }
    }
    /// A decorator: the callee is the first named child unless that is a
    /// call itself (then the call is the reference).
    pub const fn decorator(node: &'static str) -> CallRule {
        CallRule {
            node,
            callee: Callee::Decorator,
        }
    }
}

/// Where a call's callee is.
pub(crate) enum Callee {
    Field(&'static str),
    Method {
        object: &'static str,
        name: &'static str,
    },
    New(Option<&'static str>),
    Decorator,
}

/// A member access: `object` field, then the member's `name` field.
pub(crate) struct Member {
    pub node: &'static str,
    pub object: &'static str,
    pub name: &'static str,
}

impl Member {
    pub const fn new(node: &'static str, object: &'static str, name: &'static str) -> Member {
        Member { node, object, name }
    }
}

/// What an import hook (and a call hook) reports: a reference before its
/// enclosing definition is known.
pub(crate) struct Found {
    pub kind: RefKind,
    pub name: String,
    pub qualifier: Option<String>,
    /// 0-based row.
    pub row: usize,
    /// An import's local name, when not `name` (`a as b`: `b`).
    pub alias: Option<String>,
}

impl Found {
    pub fn new(
        kind: RefKind,
        name: impl Into<String>,
        qualifier: Option<String>,
        row: usize,
    ) -> Found {
        Found {
            kind,
            name: name.into(),
            qualifier,
            row,
            alias: None,
        }
    }

    /// The same, bound under another local name (`a as b`); an alias
    /// equal to the name is none.
    pub fn aliased(mut self, alias: Option<&str>) -> Found {
        self.alias = alias.filter(|a| *a != self.name).map(str::to_string);
        self
    }
}

/// Reads one import-like node.
pub(crate) type ImportHook = fn(Node<'_>, &[u8], &mut Vec<Found>);

/// Looks at a call (its callee already split into qualifier and name) and
/// reports what it really is, or `false` to keep it a call.
pub(crate) type CallHook = fn(&CallSite<'_, '_>, &mut Vec<Found>) -> bool;

/// A call as a [`CallHook`] sees it.
pub(crate) struct CallSite<'t, 's> {
    pub node: Node<'t>,
    pub src: &'s [u8],
    pub name: &'s str,
    pub qualifier: Option<&'s str>,
}

pub(crate) struct ImportRule {
    pub node: &'static str,
    pub hook: ImportHook,
}

impl ImportRule {
    pub const fn new(node: &'static str, hook: ImportHook) -> ImportRule {
        ImportRule { node, hook }
    }
}

/// A list of base classes: the node itself, or its `field` (only when the
/// node has no `unless` field: a Go struct field without a name is embedded).
pub(crate) struct InheritRule {
    pub node: &'static str,
    pub field: Option<&'static str>,
    pub unless: Option<&'static str>,
}

impl InheritRule {
    pub const fn node(node: &'static str) -> InheritRule {
        InheritRule {
            node,
            field: None,
            unless: None,
        }
    }
    pub const fn field(node: &'static str, field: &'static str) -> InheritRule {
        InheritRule {
            node,
            field: Some(field),
            unless: None,
        }
    }
    pub const fn unless(mut self, field: &'static str) -> InheritRule {
        self.unless = Some(field);
        self
    }
}

/// Where type names are.
pub(crate) struct Types {
    /// Node kinds that are a type name wherever they appear.
    pub names: &'static [&'static str],
    /// Node kinds that are a qualified type name, read whole (`a::b::C`).
    pub paths: &'static [&'static str],
    /// Type names only inside a type context (`identifier` in C# or Python).
    pub context_names: &'static [&'static str],
    pub context_paths: &'static [&'static str],
    /// Node kinds that start a type context.
    pub contexts: &'static [&'static str],
    /// Fields that start a type context (`type`, `returns`).
    pub fields: &'static [&'static str],
    /// Fields of a definition whose type name is the name being defined
    /// (`struct Foo`; not `Foo { .. }` or `Map<K, V>`).
    pub def_fields: &'static [&'static str],
    /// Node kinds whose type-name children declare type parameters.
    pub params: &'static [&'static str],
    /// Built-in types spelled as type names (Go's `string`, `error`): not references.
    pub builtins: &'static [&'static str],
}

impl Types {
    pub const NONE: Types = Types {
        names: &[],
        paths: &[],
        context_names: &[],
        context_paths: &[],
        contexts: &[],
        fields: &[],
        def_fields: &[],
        params: &[],
        builtins: &[],
    };
}
