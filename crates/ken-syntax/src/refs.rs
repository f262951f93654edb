//! References: one iterative pass over a syntax tree that lists the calls,
//! imports, base classes and type names a language's
//! [`RefSpec`](crate::spec::RefSpec) describes, each with the qualified
//! name of the innermost definition it is written in.
//!
//! Like the definition walker, the pass never recurses (a `TreeCursor` and
//! a stack of small frames), does not look below [`MAX_DEPTH`] levels, and
//! stops at [`MAX_REFERENCES`] references per file.

use std::collections::HashSet;

use ken_core::{ChunkKind, RefKind, Reference};
use tree_sitter::{Node, Tree, TreeCursor};

use crate::names::{capped, clean, is_module, is_name, is_path, may_be_path, split_last};
use crate::receivers::{self, Assigned};
use crate::spec::{CallSite, Callee, Class, Found, RefClass, Spec, Table, text};
use crate::walk::{Def, MAX_DEPTH};

/// References kept per file; a generated file stops here, with a diagnostic.
pub(crate) const MAX_REFERENCES: usize = 20_000;
/// Longest qualifier kept, in bytes.
const MAX_QUALIFIER: usize = 160;
/// Longest piece of syntax spelled out in a qualifier (`new Foo()` in
/// `new Foo().bar()`); anything longer is `…`.
const MAX_LEAF: usize = 100;
/// Longest text read as a path (`a.b.c::D`).
const MAX_PATH: usize = 200;
/// Member accesses and calls followed when spelling one qualifier.
const MAX_CHAIN: usize = 16;
/// Nodes looked at in one list of base classes.
const MAX_BASES: usize = 64;

/// The class a type annotation names: `Flask`, `flask.Flask`,
/// `Context<Env>` (its arguments dropped), `Optional[Flask]`,
/// `Flask | None`, `"AppContext"`; None for anything else (a builtin
/// such as `int`, a container such as `list[Flask]`, a union of classes).
fn annotated_class(text: &str) -> Option<String> {
    let mut t = text.trim().trim_start_matches(':').trim();
    t = t.trim_matches(|c| c == '"' || c == '\'');
    if let Some(inner) = t
        .strip_prefix("Optional[")
        .and_then(|r| r.strip_suffix(']'))
    {
        t = inner.trim();
    }
    let parts: Vec<&str> = t
        .split('|')
        .map(str::trim)
        .filter(|p| !matches!(*p, "None" | "null" | "undefined"))
        .collect();
    let [t] = parts[..] else {
        return None;
    };
    let t = t.split('<').next()?.trim();
    let last = t.rsplit(['.', ':']).next()?;
    (is_path(t) && !t.contains("::") && last.starts_with(|c: char| c.is_ascii_uppercase()))
        .then(|| t.to_string())
}

/// What one pass found.
pub(crate) struct Refs {
    pub references: Vec<Reference>,
    /// Module-level variables of a known class.
    pub values: Vec<ken_core::TypedValue>,
    /// [`MAX_REFERENCES`] was reached; the rest of the file was not read.
    pub truncated: bool,
}

/// The references of `tree`, attributed to `defs` (the walker's output).
pub(crate) fn extract(tree: &Tree, src: &str, spec: &Spec, table: &Table, defs: &[Def]) -> Refs {
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.sort_by_key(|&i| (defs[i].def_start, std::cmp::Reverse(defs[i].range.end)));
    let mut x = Extractor {
        src: src.as_bytes(),
        spec,
        table,
        defs,
        order,
        next: 0,
        open: Vec::new(),
        refs: Vec::new(),
        found: Vec::new(),
        skip: Vec::new(),
        tokens: Vec::new(),
        assigned: Vec::new(),
        values: if spec.refs.values.slots.is_empty() {
            HashSet::new()
        } else {
            defs.iter()
                .filter(|d| matches!(d.kind, ChunkKind::Function | ChunkKind::Method))
                .map(|d| d.name.clone())
                .collect()
        },
        truncated: false,
    };
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut stack = vec![Frame::default()];
    if cursor.goto_first_child() {
        'walk: loop {
            let frame = *stack.last().expect("a frame per level");
            let child = x.visit(&cursor, frame);
            if x.truncated {
                break;
            }
            if let Some(child) = child
                && stack.len() < MAX_DEPTH
                && cursor.goto_first_child()
            {
                stack.push(child);
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
                stack.pop();
                if stack.is_empty() {
                    break 'walk;
                }
            }
        }
    }
    let mut references = x.refs;
    let mut values = Vec::new();
    if !x.assigned.is_empty() {
        receivers::annotate(&mut references, &mut x.assigned, defs);
        values = receivers::module_values(&x.assigned);
    }
    Refs {
        references,
        values,
        truncated: x.truncated,
    }
}

/// What the children of a node inherit.
#[derive(Debug, Clone, Copy, Default)]
struct Frame<'t> {
    /// The node whose children these are.
    parent: Option<Node<'t>>,
    /// Inside a type (an annotation, a `type` field): names are types.
    in_type: bool,
    /// Directly inside a type-parameter list: names are declared, not used.
    params: bool,
    /// Directly inside a definition (`struct Foo`): its `name` is declared.
    def: bool,
}

/// A step while spelling a qualifier.
enum Link<'t> {
    /// `object . name`
    Member(Node<'t>, Node<'t>),
    /// `function ()`
    Call(Node<'t>),
    /// `object . name ()`, the object optional.
    Method(Option<Node<'t>>, Node<'t>),
    /// `operand ?`
    Postfix(Node<'t>),
}

struct Extractor<'a> {
    src: &'a [u8],
    spec: &'a Spec,
    table: &'a Table,
    defs: &'a [Def],
    /// Definition indices by start.
    order: Vec<usize>,
    /// Next entry of `order` not yet opened.
    next: usize,
    /// Definitions around the current position, innermost last.
    open: Vec<usize>,
    refs: Vec<Reference>,
    /// Scratch for hooks.
    found: Vec<Found>,
    /// Descendants already read (`(start, end, kind)`): not visited again.
    skip: Vec<(usize, usize, u16)>,
    /// Scratch for token trees.
    tokens: Vec<(Token, usize, usize, usize)>,
    /// Assignments that may type a variable, in the order written.
    assigned: Vec<Assigned>,
    /// Names a bare value may refer to (`spec.refs.values`): the file's
    /// functions and methods, and the names its imports bound so far.
    values: HashSet<String>,
    truncated: bool,
}

impl<'a> Extractor<'a> {
    fn text(&self, node: Node<'_>) -> &'a str {
        text(node, self.src)
    }

    /// Look at the cursor's node; return the frame for its children when
    /// they should be visited.
    fn visit<'t>(&mut self, cursor: &TreeCursor<'t>, frame: Frame<'t>) -> Option<Frame<'t>> {
        let node = cursor.node();
        if !node.is_named() || self.skipped(node) {
            return None;
        }
        let class = self.table.ref_class(node.kind_id());
        let field = || cursor.field_id().map(|f| f.get());
        let in_type = frame.in_type
            || (!self.table.type_fields.is_empty()
                && field().is_some_and(|f| self.table.type_fields.contains(&f)));
        let child = Frame {
            parent: Some(node),
            in_type,
            params: false,
            def: matches!(self.table.class(node.kind_id()), Class::Rule(_)),
        };
        if !in_type && !self.values.is_empty() {
            self.value(node, frame.parent, cursor.field_name());
        }
        match class {
            RefClass::Member(i) => {
                if self.spec.refs.reads && !in_type {
                    self.read(node, i as usize, frame.parent);
                }
                Some(child)
            }
            RefClass::Other | RefClass::Postfix => Some(child),
            RefClass::Skip => None,
            RefClass::Call(i) => {
                self.call(node, i as usize);
                Some(child)
            }
            RefClass::Import(i) => {
                let hook = self.spec.refs.imports[i as usize].hook;
                self.found.clear();
                let mut found = std::mem::take(&mut self.found);
                hook(node, self.src, &mut found);
                self.flush(node, &mut found);
                self.found = found;
                // `export function f() {}` is an export statement too.
                Some(child)
            }
            RefClass::Inherit(i) => {
                let rule = &self.spec.refs.inherits[i as usize];
                let Some(f) = rule.field else {
                    self.bases(node, false);
                    return None;
                };
                if rule
                    .unless
                    .is_some_and(|u| self.table.field(node, u).is_some())
                {
                    return Some(child);
                }
                if let Some(clause) = self.table.field(node, f) {
                    self.bases(clause, true);
                    self.skip
                        .push((clause.start_byte(), clause.end_byte(), clause.kind_id()));
                }
                Some(child)
            }
            RefClass::TypeName => {
                self.type_name(node, frame, field());
                None
            }
            RefClass::ContextName if in_type => {
                self.type_name(node, frame, field());
                None
            }
            RefClass::TypePath => {
                self.type_path(node);
                None
            }
            RefClass::ContextPath if in_type => {
                self.type_path(node);
                None
            }
            RefClass::ContextPath if self.spec.refs.reads => {
                // a member access outside types (Python's `attribute`)
                let kind = node.kind();
                if let Some(i) = self.spec.refs.members.iter().position(|m| m.node == kind) {
                    self.read(node, i, frame.parent);
                }
                Some(child)
            }
            RefClass::ContextName | RefClass::ContextPath => Some(child),
            RefClass::Context => Some(Frame {
                in_type: true,
                ..child
            }),
            RefClass::TypeParams => Some(Frame {
                params: true,
                ..child
            }),
            RefClass::TokenTree => {
                self.token_tree(node);
                Some(child)
            }
            RefClass::Assign(i) => {
                self.assign(node, i as usize);
                Some(child)
            }
        }
    }

    /// A bare name read as a value (`f(handler)`, `x = sha256`,
    /// `<Suspense>`), when it names one of the file's functions or an
    /// imported name: a [`RefKind::Read`] without a qualifier.
    fn value(&mut self, node: Node<'_>, parent: Option<Node<'_>>, field: Option<&str>) {
        let values = &self.spec.refs.values;
        let Some(parent) = parent else {
            return;
        };
        if !values.nodes.contains(&node.kind()) {
            return;
        }
        let kind = parent.kind();
        let slot = values
            .slots
            .iter()
            .any(|s| s.parent == kind && (s.field.is_none() || s.field == field));
        if !slot {
            return;
        }
        let name = self.text(node);
        if !self.values.contains(name) {
            return;
        }
        self.at(node.start_byte());
        self.emit(RefKind::Read, name, None, node.start_position().row);
    }

    /// A member access read for its value or written (a property's
    /// setter): not the callee of the call around it.
    fn read(&mut self, node: Node<'_>, rule: usize, parent: Option<Node<'_>>) {
        // (an assignment's target is a use too: where it names a property,
        // the assignment calls its setter, `app.debug = x`)
        if let Some(p) = parent
            && let RefClass::Call(c) = self.table.ref_class(p.kind_id())
        {
            let is = |n: Option<Node<'_>>| n.is_some_and(|n| n.id() == node.id());
            let callee = match self.spec.refs.calls[c as usize].callee {
                Callee::Field(f) | Callee::New(Some(f)) => is(self.table.field(p, f)),
                Callee::New(None) | Callee::Decorator => is(p.named_child(0)),
                Callee::Method { .. } => false,
            };
            if callee {
                return;
            }
        }
        let m = &self.spec.refs.members[rule];
        let (Some(object), Some(name)) = (
            self.table.field(node, m.object),
            self.table.field(node, m.name),
        ) else {
            return;
        };
        let q = self.spell(object);
        let name = self.name_text(name);
        self.at(node.start_byte());
        self.emit(RefKind::Read, &name, Some(&q), node.end_position().row);
    }

    /// Note an assignment: its target (`x`, `self.x`), where it is written,
    /// and the class its value makes, if it makes one.
    fn assign(&mut self, node: Node<'_>, rule: usize) {
        let a = &self.spec.refs.assigns[rule];
        let target = match a.target {
            Some(f) => self.table.field(node, f),
            None => node.named_child(0),
        };
        let (Some(target), Some(value)) = (target, self.table.field(node, a.value)) else {
            return;
        };
        if target.end_byte() - target.start_byte() > MAX_QUALIFIER {
            return;
        }
        let written: String = self.text(target).split_whitespace().collect();
        if !is_path(&written) || self.assigned.len() >= MAX_REFERENCES {
            return; // a tuple, a subscript, a destructuring pattern
        }
        let annotated = a.typed_by.and_then(|f| self.table.field(node, f));
        let class = match annotated {
            Some(t) => annotated_class(self.text(t)),
            None if a.annotation => annotated_class(self.text(value)),
            None => self.class_made_by(value, a.capitalized),
        };
        let copy_of = match (&class, annotated.is_some() || a.annotation) {
            (None, false) => Some(self.text(value))
                .filter(|v| is_name(v))
                .map(str::to_string),
            _ => None,
        };
        self.at(node.start_byte());
        self.assigned.push(Assigned {
            from: self.open.last().copied(),
            target: written,
            class,
            copy_of,
            line: node.start_position().row as u32 + 1,
        });
    }

    /// The class `value` makes: a `new` expression's type, or (when
    /// `capitalized`) the callee of a call of a capitalized name.
    fn class_made_by(&self, value: Node<'_>, capitalized: bool) -> Option<String> {
        let RefClass::Call(i) = self.table.ref_class(value.kind_id()) else {
            return None;
        };
        let (q, name, _) = match self.spec.refs.calls[i as usize].callee {
            Callee::New(field) => {
                let ty = match field {
                    Some(f) => self.table.field(value, f),
                    None => value.named_child(0),
                }?;
                self.target(ty, true)?
            }
            Callee::Field(f) if capitalized => {
                let t = self.target(self.table.field(value, f)?, false)?;
                if !t.1.starts_with(|c: char| c.is_ascii_uppercase()) {
                    return None;
                }
                t
            }
            _ => return None,
        };
        Some(match q {
            Some(q) => format!("{q}.{name}"),
            None => name,
        })
    }

    /// Was `node` already read as part of its parent?
    fn skipped(&mut self, node: Node<'_>) -> bool {
        if self.skip.is_empty() {
            return false;
        }
        let key = (node.start_byte(), node.end_byte(), node.kind_id());
        if let Some(i) = self.skip.iter().position(|s| *s == key) {
            self.skip.swap_remove(i);
            return true;
        }
        self.skip.retain(|s| s.1 > key.0);
        false
    }

    /// Move the enclosing-definition stack to byte `pos` (positions only grow).
    fn at(&mut self, pos: usize) {
        while let Some(&d) = self.open.last() {
            if self.defs[d].range.end <= pos {
                self.open.pop();
            } else {
                break;
            }
        }
        while let Some(&d) = self.order.get(self.next) {
            let def = &self.defs[d];
            if def.def_start > pos {
                break;
            }
            self.next += 1;
            while let Some(&o) = self.open.last() {
                if self.defs[o].range.end <= def.def_start {
                    self.open.pop();
                } else {
                    break;
                }
            }
            if def.range.end > pos {
                self.open.push(d);
            }
        }
    }

    /// Record a reference at the current position.
    fn emit(&mut self, kind: RefKind, name: &str, qualifier: Option<&str>, row: usize) {
        self.emit_aliased(kind, name, qualifier, row, None);
    }

    /// [`Self::emit`] of an import bound under `alias`.
    fn emit_aliased(
        &mut self,
        kind: RefKind,
        name: &str,
        qualifier: Option<&str>,
        row: usize,
        alias: Option<&str>,
    ) {
        let plausible = match kind {
            // Imported names may be file names (`stdio.h`, `json`).
            RefKind::Import => is_module(name),
            RefKind::Type => is_name(name) && !self.spec.refs.types.builtins.contains(&name),
            _ => is_name(name),
        };
        if !plausible {
            return;
        }
        if self.refs.len() >= MAX_REFERENCES {
            self.truncated = true;
            return;
        }
        let line = row as u32 + 1;
        let from = self.open.last().map(|&d| self.defs[d].qualname.as_str());
        let qualifier = qualifier.filter(|q| !q.is_empty());
        let dup = self.refs.iter().rev().take(8).any(|r| {
            r.line == line
                && r.kind == kind
                && r.name == name
                && r.qualifier.as_deref() == qualifier
                && r.from.as_deref() == from
        });
        if dup {
            return;
        }
        if kind == RefKind::Import && !self.spec.refs.values.slots.is_empty() {
            let bound = alias.filter(|a| is_name(a)).unwrap_or(name);
            if bound != "*" {
                self.values.insert(bound.to_string());
            }
        }
        self.refs.push(Reference {
            kind,
            name: name.to_string(),
            qualifier: qualifier.map(|q| capped(q.to_string(), MAX_QUALIFIER)),
            line,
            from: from.map(str::to_string),
            alias: alias.filter(|a| is_name(a)).map(str::to_string),
            receiver: None,
        });
    }

    /// Record what a hook found, written at `node`.
    fn flush(&mut self, node: Node<'_>, found: &mut Vec<Found>) {
        self.at(node.start_byte());
        for f in found.drain(..) {
            self.emit_aliased(
                f.kind,
                &f.name,
                f.qualifier.as_deref(),
                f.row,
                f.alias.as_deref(),
            );
        }
    }

    fn call(&mut self, node: Node<'_>, rule: usize) {
        let refs = &self.spec.refs;
        let target = match refs.calls[rule].callee {
            Callee::Field(f) => self
                .table
                .field(node, f)
                .and_then(|c| self.target(c, false)),
            Callee::Method { object, name } => self.table.field(node, name).map(|n| {
                let q = self.table.field(node, object).map(|o| self.spell(o));
                (q, self.name_text(n), n.start_position().row)
            }),
            Callee::New(field) => {
                let ty = match field {
                    Some(f) => self.table.field(node, f),
                    None => node.named_child(0),
                };
                ty.and_then(|t| {
                    self.skip.push((t.start_byte(), t.end_byte(), t.kind_id()));
                    self.target(t, true)
                })
            }
            Callee::Decorator => node
                .named_child(0)
                .filter(|c| !matches!(self.table.ref_class(c.kind_id()), RefClass::Call(_)))
                .and_then(|c| self.target(c, false)),
        };
        let Some((qualifier, name, row)) = target else {
            return;
        };
        if let Some(hook) = refs.call_hook {
            let mut found = std::mem::take(&mut self.found);
            found.clear();
            let site = CallSite {
                node,
                src: self.src,
                name: &name,
                qualifier: qualifier.as_deref(),
            };
            let handled = hook(&site, &mut found);
            if handled {
                self.flush(node, &mut found);
            }
            self.found = found;
            if handled {
                return;
            }
        }
        self.at(node.start_byte());
        self.emit(RefKind::Call, &name, qualifier.as_deref(), row);
    }

    /// The text of a name node, cleaned (`foo<int>` → `foo`).
    fn name_text(&self, node: Node<'_>) -> String {
        clean(self.text(node), self.spec.refs.generics, false)
    }

    /// A callee or type split into (qualifier, name, row of the name).
    fn target(&self, node: Node<'_>, brackets: bool) -> Option<(Option<String>, String, usize)> {
        if node.child_count() == 0 {
            // a plain identifier: the common case
            let t = self.text(node);
            return is_name(t).then(|| (None, t.to_string(), node.start_position().row));
        }
        if node.end_byte() - node.start_byte() <= MAX_PATH && may_be_path(self.text(node)) {
            let t = clean(self.text(node), self.spec.refs.generics, brackets);
            if is_path(&t) {
                let (q, name) = split_last(&t);
                return Some((
                    q.map(str::to_string),
                    name.to_string(),
                    node.end_position().row,
                ));
            }
        }
        match self.link(node)? {
            Link::Member(object, name) => Some((
                Some(self.spell(object)),
                self.name_text(name),
                name.start_position().row,
            )),
            Link::Call(_) | Link::Method(..) | Link::Postfix(_) => None,
        }
    }

    /// How `node` continues a qualifier, if it is a member access or a call.
    fn link<'t>(&self, node: Node<'t>) -> Option<Link<'t>> {
        let refs = &self.spec.refs;
        match self.table.ref_class(node.kind_id()) {
            RefClass::Member(i) => {
                let m = &refs.members[i as usize];
                Some(Link::Member(
                    self.table.field(node, m.object)?,
                    self.table.field(node, m.name)?,
                ))
            }
            RefClass::Call(i) => match refs.calls[i as usize].callee {
                Callee::Field(f) => Some(Link::Call(self.table.field(node, f)?)),
                Callee::Method { object, name } => Some(Link::Method(
                    self.table.field(node, object),
                    self.table.field(node, name)?,
                )),
                Callee::New(_) | Callee::Decorator => None,
            },
            RefClass::Postfix => Some(Link::Postfix(node.named_child(0)?)),
            // Python's `attribute` is a type path in annotations and a
            // member access elsewhere.
            RefClass::ContextPath => {
                let m = refs.members.iter().find(|m| m.node == node.kind())?;
                Some(Link::Member(
                    self.table.field(node, m.object)?,
                    self.table.field(node, m.name)?,
                ))
            }
            _ => None,
        }
    }

    /// The qualifier a name was reached through, as written, with call
    /// arguments dropped: `self.foo`, `os.path`, `a.b()`, `Vec`.
    fn spell(&self, node: Node<'_>) -> String {
        let generics = self.spec.refs.generics;
        let mut pieces: Vec<String> = Vec::new();
        let mut cur = node;
        for step in 0..=MAX_CHAIN {
            if step == MAX_CHAIN {
                pieces.push("…".to_string());
                break;
            }
            let len = cur.end_byte() - cur.start_byte();
            if len <= MAX_PATH && may_be_path(self.text(cur)) {
                let t = clean(self.text(cur), generics, false);
                if is_path(&t) {
                    pieces.push(t);
                    break;
                }
            }
            match self.link(cur) {
                Some(Link::Member(object, name)) => {
                    pieces.push(self.name_text(name));
                    pieces.push(self.separator(object, name));
                    cur = object;
                }
                Some(Link::Call(function)) => {
                    pieces.push("()".to_string());
                    cur = function;
                }
                Some(Link::Postfix(operand)) => {
                    let op = self
                        .src
                        .get(operand.end_byte()..cur.end_byte())
                        .unwrap_or(b"");
                    let op: String = String::from_utf8_lossy(op).split_whitespace().collect();
                    pieces.push(op);
                    cur = operand;
                }
                Some(Link::Method(object, name)) => {
                    pieces.push("()".to_string());
                    pieces.push(self.name_text(name));
                    match object {
                        Some(o) => {
                            pieces.push(self.separator(o, name));
                            cur = o;
                        }
                        None => break,
                    }
                }
                None => {
                    let t = self.text(cur);
                    if len <= MAX_LEAF && !t.contains('\n') {
                        pieces.push(t.split_whitespace().collect::<Vec<_>>().join(" "));
                    } else {
                        pieces.push("…".to_string());
                    }
                    break;
                }
            }
        }
        let mut out = String::new();
        for p in pieces.iter().rev() {
            out.push_str(p);
        }
        out
    }

    /// The separator written between an object and its member (`.`, `->`, `::`, `?.`).
    fn separator(&self, object: Node<'_>, name: Node<'_>) -> String {
        let between = self
            .src
            .get(object.end_byte()..name.start_byte())
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("");
        let sep: String = between.split_whitespace().collect();
        if sep.is_empty() || sep.len() > 3 {
            ".".to_string()
        } else {
            sep
        }
    }

    /// Base classes listed in `clause`, or `clause` itself when
    /// `may_be_one` (a field holding a type, `impl Trait for`).
    fn bases(&mut self, clause: Node<'_>, may_be_one: bool) {
        self.at(clause.start_byte());
        let mut stack = vec![clause];
        let mut budget = MAX_BASES;
        while let Some(n) = stack.pop() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let root = n == clause;
            if !root && (!n.is_named() || SKIP_IN_BASES.contains(&n.kind())) {
                continue;
            }
            if !root && matches!(self.table.ref_class(n.kind_id()), RefClass::Call(_)) {
                continue; // `class A(namedtuple(...))`
            }
            if (!root || may_be_one)
                && let Some((q, name, row)) = self.target(n, true)
            {
                self.emit(RefKind::Inherit, &name, q.as_deref(), row);
                continue;
            }
            let mut cursor = n.walk();
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }

    fn type_name(&mut self, node: Node<'_>, frame: Frame<'_>, field: Option<u16>) {
        let declared = frame.def && field.is_some_and(|f| self.table.def_fields.contains(&f));
        if frame.params || declared {
            return;
        }
        let name = self.text(node);
        // `std::string` outside a type position: the qualifier is the
        // path around the name (C++ `qualified_identifier`)
        let qualifier = frame
            .parent
            .filter(|p| p.end_byte() == node.end_byte() && p.start_byte() < node.start_byte())
            .filter(|p| p.end_byte() - p.start_byte() <= MAX_PATH)
            .and_then(|p| {
                let t = clean(self.text(p), self.spec.refs.generics, true);
                let (q, n) = split_last(&t);
                (is_path(&t) && n == name)
                    .then(|| q.map(str::to_string))
                    .flatten()
            });
        self.at(node.start_byte());
        self.emit(
            RefKind::Type,
            name,
            qualifier.as_deref(),
            node.start_position().row,
        );
    }

    fn type_path(&mut self, node: Node<'_>) {
        if let Some((q, name, row)) = self.target(node, true) {
            self.at(node.start_byte());
            self.emit(RefKind::Type, &name, q.as_deref(), row);
        }
    }

    /// Calls written in a macro's token tree: a name (after a path) followed
    /// by a parenthesised token tree, `assert_eq!(a.b(c), D::e())`.
    fn token_tree(&mut self, node: Node<'_>) {
        // (kind, start, end, row) of each child, in a buffer kept between calls
        let mut kids = std::mem::take(&mut self.tokens);
        kids.clear();
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let n = cursor.node();
                kids.push((
                    token(n.kind()),
                    n.start_byte(),
                    n.end_byte(),
                    n.start_position().row,
                ));
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        for j in 1..kids.len() {
            let (args, name) = (kids[j], kids[j - 1]);
            if args.0 != Token::Tree
                || self.src.get(args.1) != Some(&b'(')
                || name.0 != Token::Ident
            {
                continue;
            }
            let mut first = j - 1;
            while first >= 2
                && kids[first - 1].0 == Token::Separator
                && matches!(kids[first - 2].0, Token::Ident | Token::PathRoot)
            {
                first -= 2;
            }
            let qualifier = (first < j - 1).then(|| {
                let q = &self.src[kids[first].1..kids[j - 2].1];
                clean(std::str::from_utf8(q).unwrap_or(""), false, false)
            });
            self.at(kids[first].1);
            let name_text = std::str::from_utf8(&self.src[name.1..name.2]).unwrap_or("");
            self.emit(RefKind::Call, name_text, qualifier.as_deref(), name.3);
        }
        self.tokens = kids;
    }
}

/// What a token of a macro's token tree is, for [`Extractor::token_tree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Ident,
    /// `self`, `super`, `crate`
    PathRoot,
    /// `.` or `::`
    Separator,
    Tree,
    Other,
}

fn token(kind: &str) -> Token {
    match kind {
        "identifier" => Token::Ident,
        "self" | "super" | "crate" => Token::PathRoot,
        "." | "::" => Token::Separator,
        "token_tree" => Token::Tree,
        _ => Token::Other,
    }
}

/// Children of a base-class list that never name a base.
const SKIP_IN_BASES: &[&str] = &[
    "keyword_argument",
    "access_specifier",
    "comment",
    "line_comment",
    "block_comment",
    "type_arguments",
    "type_argument_list",
    "template_argument_list",
    "arguments",
    "argument_list",
    "attribute_declaration",
    "lifetime",
    "string",
];

#[cfg(test)]
mod tests {
    use ken_core::RefKind;

    /// The bare names read as values: `name line`.
    fn values(path: &str, src: &str) -> Vec<String> {
        crate::parse_file(path, src, &Default::default())
            .references
            .iter()
            .filter(|r| r.kind == RefKind::Read && r.qualifier.is_none())
            .map(|r| format!("{} {}", r.name, r.line))
            .collect()
    }

    #[test]
    fn python_names_read_as_values_are_reads_when_they_name_a_function_or_an_import() {
        let src = "\
from .crypto import sha256 as digest
def helper():
    pass
def run(handler, cb=helper):
    register(helper, handler)
    x = digest
    y = local_value
    wrap(key=helper)
    return helper
";
        // `register` is called, `handler` and `local_value` name nothing
        // the file defines or imports, `cb` and `x` are written
        assert_eq!(
            values("a.py", src),
            ["helper 4", "helper 5", "digest 6", "helper 8", "helper 9"]
        );
    }

    #[test]
    fn typescript_names_read_as_values_include_jsx_elements() {
        let src = "\
import { sha256 } from './crypto'
import { Suspense } from './jsx'
const fallback = () => null
function f(hashFunction = sha256, other = unknown) {
  return other ?? fallback
}
const el = <Suspense fallback={fallback}>x</Suspense>
const o = { fallback, sha256: other }
";
        assert_eq!(
            values("a.tsx", src),
            [
                "sha256 4",
                "fallback 5",
                "Suspense 7",
                "fallback 7",
                "fallback 8"
            ]
        );
    }
}
