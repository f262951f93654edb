//! The generic walker: one iterative pass over a syntax tree that finds
//! every definition a language's [`Spec`] describes.
//!
//! The walk never recurses (a `TreeCursor` and an explicit stack of frames),
//! and does not look below [`MAX_DEPTH`] levels of syntax, so pathological
//! nesting costs neither stack nor time.

use std::ops::Range;

use ken_core::ChunkKind;
use tree_sitter::{Node, Tree};

use crate::doc;
use crate::lines::{back_to_line_start, collapse_ws};
use crate::spec::{Class, Ctx, Name, Named, Spec, Table, text};
use crate::trivial::is_trivial_body;

/// Syntax depth below which definitions are not searched for.
pub(crate) const MAX_DEPTH: usize = 128;

/// Longest signature kept, in characters.
pub(crate) const MAX_SIGNATURE_CHARS: usize = 300;

/// A definition found in the tree.
#[derive(Debug, Clone)]
pub(crate) struct Def {
    pub kind: ChunkKind,
    pub name: String,
    pub qualname: String,
    /// The enclosing definition.
    pub parent: Option<usize>,
    /// Bytes the definition's chunk covers: from its first doc comment,
    /// decorator or attribute (at its line start) to its end.
    pub range: Range<usize>,
    /// Where the definition itself starts: its node, or the wrapper around
    /// it (Python decorators, `export`, `const x =`), without doc comments
    /// and attributes above it.
    pub def_start: usize,
    pub body: Option<Range<usize>>,
    pub signature: String,
    pub doc: Option<String>,
    pub trivial: bool,
    /// Nested inside a function or method: never a chunk of its own.
    pub in_function: bool,
    /// Stays in the chunk around it (see [`Named::inline`]).
    pub inline: bool,
    /// Other definitions inside it.
    pub has_children: bool,
}

/// What one walk found.
pub(crate) struct Walk {
    /// In file order; a parent always before its children.
    pub defs: Vec<Def>,
    /// Bytes the parser could not make sense of (see [`unreadable_bytes`]).
    pub error_bytes: usize,
    /// Some of the tree was deeper than [`MAX_DEPTH`] and was not searched.
    pub too_deep: bool,
}

/// Comments and attributes directly above the next node.
struct Run {
    start: usize,
    last_line: usize,
    comments: Vec<Range<usize>>,
}

impl Run {
    /// Is a node starting on `line` directly below this run? A `/** doc */`
    /// block may be followed by one blank line (as in Express).
    fn attaches_to(&self, line: usize, src: &str) -> bool {
        line <= self.last_line + 1
            || (line == self.last_line + 2
                && self
                    .comments
                    .last()
                    .is_some_and(|c| src[c.clone()].starts_with("/**")))
    }
}

/// The node above is a wrapper around a single definition.
struct Wrap {
    start: usize,
    node_start: usize,
    end: usize,
    sig_start: Option<usize>,
    comments: Vec<Range<usize>>,
}

/// State of one level of siblings.
#[derive(Default)]
struct Frame {
    parent: Option<usize>,
    scope: Option<usize>,
    methods: bool,
    in_function: bool,
    wrap: Option<Wrap>,
    run: Option<Run>,
    prev_end_line: Option<usize>,
}

impl Frame {
    /// A frame for the children of a node that is not a definition.
    fn inherit(&self) -> Frame {
        Frame {
            parent: self.parent,
            scope: self.scope,
            methods: self.methods,
            in_function: self.in_function,
            ..Frame::default()
        }
    }
}

fn last_line(node: Node<'_>) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// Bytes of an ERROR node not covered by well-formed named children: an
/// error around a whole `#ifndef` guard leaves most of the file readable.
fn unreadable_bytes(error: Node<'_>) -> usize {
    let mut cursor = error.walk();
    let readable: usize = error
        .named_children(&mut cursor)
        .filter(|c| !c.is_error())
        .map(|c| c.end_byte() - c.start_byte())
        .sum();
    (error.end_byte() - error.start_byte()).saturating_sub(readable)
}

/// Walk `tree` and return its definitions.
pub(crate) fn walk(tree: &Tree, src: &str, spec: &Spec, table: &Table) -> Walk {
    let root = tree.root_node();
    let mut w = Walker {
        src,
        spec,
        table,
        root,
        defs: Vec::new(),
        error_bytes: 0,
        too_deep: false,
    };
    if root.is_error() {
        w.error_bytes += unreadable_bytes(root);
    }
    let mut cursor = root.walk();
    let mut stack = vec![Frame::default()];
    if cursor.goto_first_child() {
        'walk: loop {
            let node = cursor.node();
            let frame = stack.last_mut().expect("a frame per level");
            if let Some(child) = w.visit(node, frame) {
                if stack.len() < MAX_DEPTH {
                    if cursor.goto_first_child() {
                        stack.push(child);
                        continue;
                    }
                } else if node.child_count() > 0 {
                    w.too_deep = true;
                }
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
    Walk {
        defs: w.defs,
        error_bytes: w.error_bytes,
        too_deep: w.too_deep,
    }
}

struct Walker<'a> {
    src: &'a str,
    root: Node<'a>,
    spec: &'a Spec,
    table: &'a Table,
    defs: Vec<Def>,
    error_bytes: usize,
    too_deep: bool,
}

impl Walker<'_> {
    /// Look at one node; return the frame for its children when they should
    /// be walked.
    fn visit(&mut self, node: Node<'_>, frame: &mut Frame) -> Option<Frame> {
        let first_line = node.start_position().row;
        let end_line = last_line(node);
        if !node.is_named() {
            frame.prev_end_line = Some(end_line);
            return None;
        }
        let class = self.table.class(node.kind_id());
        if matches!(class, Class::Comment | Class::Attribute) {
            let trailing = frame.prev_end_line == Some(first_line) && class == Class::Comment;
            frame.prev_end_line = Some(end_line);
            if trailing {
                frame.run = None;
                return None;
            }
            let range = node.start_byte()..node.end_byte();
            match &mut frame.run {
                Some(run) if first_line <= run.last_line + 1 => {
                    run.last_line = end_line;
                    if class == Class::Comment {
                        run.comments.push(range);
                    }
                }
                run => {
                    let comments = if class == Class::Comment {
                        vec![range]
                    } else {
                        Vec::new()
                    };
                    *run = Some(Run {
                        start: node.start_byte(),
                        last_line: end_line,
                        comments,
                    });
                }
            }
            return None;
        }
        let attached = frame
            .run
            .take()
            .filter(|r| r.attaches_to(first_line, self.src));
        frame.prev_end_line = Some(end_line);

        let mut child = frame.inherit();
        if node.is_error() {
            self.error_bytes += unreadable_bytes(node);
        }
        match class {
            Class::Rule(i) => {
                if let Some(def) = self.definition(node, i as usize, frame, attached.as_ref()) {
                    return Some(def);
                }
            }
            Class::Wrapper(i) if self.wraps_one(node, i as usize) => {
                let w = &self.spec.wrappers[i as usize];
                let outer = frame.wrap.as_ref();
                let start = outer
                    .map(|o| o.start)
                    .or(attached.as_ref().map(|r| r.start))
                    .unwrap_or(node.start_byte());
                let sig_start = if w.in_signature {
                    Some(outer.and_then(|o| o.sig_start).unwrap_or(node.start_byte()))
                } else {
                    None
                };
                let comments = match (outer, attached) {
                    (Some(o), _) => o.comments.clone(),
                    (None, Some(r)) => r.comments,
                    (None, None) => Vec::new(),
                };
                let end = outer.map_or(node.end_byte(), |o| o.end.max(node.end_byte()));
                let node_start = outer.map_or(node.start_byte(), |o| o.node_start);
                child.wrap = Some(Wrap {
                    start,
                    node_start,
                    end,
                    sig_start,
                    comments,
                });
                return Some(child);
            }
            _ => {}
        }
        // Comments above a node that is not a definition stay pending for
        // its first child (Ruby puts a method's comment outside the body).
        child.run = attached;
        Some(child)
    }

    /// Does wrapper `node` hold exactly one thing besides comments and
    /// decorators?
    fn wraps_one(&self, node: Node<'_>, i: usize) -> bool {
        let ignore = self.spec.wrappers[i].ignore;
        let mut cursor = node.walk();
        let n = node
            .named_children(&mut cursor)
            .filter(|c| {
                !ignore.contains(&c.kind())
                    && !matches!(
                        self.table.class(c.kind_id()),
                        Class::Comment | Class::Attribute
                    )
            })
            .count();
        n == 1
    }

    /// `end` moved over what follows it on its line when that is a `;`
    /// and/or a comment (`struct S { .. };`, `}  // namespace x`).
    fn extend_over_line_rest(&self, end: usize) -> usize {
        // (and over a `,` ending an object entry or argument: `},`)
        let bytes = self.src.as_bytes();
        let skip_spaces = |mut p: usize| {
            while p < bytes.len() && matches!(bytes[p], b' ' | b'\t') {
                p += 1;
            }
            p
        };
        let mut end = end;
        let mut p = skip_spaces(end);
        if matches!(bytes.get(p), Some(b';' | b',')) {
            end = p + 1;
            p = skip_spaces(end);
        }
        if p < bytes.len()
            && !matches!(bytes[p], b'\n' | b'\r')
            && let Some(n) = self.root.descendant_for_byte_range(p, p + 1)
            && n.start_byte() == p
            && self.table.class(n.kind_id()) == Class::Comment
            && !self.src[p..n.end_byte()].contains('\n')
        {
            end = n.end_byte();
        }
        end
    }

    /// Start of the first comment child of `node` inside `range` (a comment
    /// between a header and its body is not signature).
    fn first_comment_in(&self, node: Node<'_>, range: Range<usize>) -> Option<usize> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .take_while(|c| c.start_byte() < range.end)
            .find(|c| {
                c.start_byte() > range.start && self.table.class(c.kind_id()) == Class::Comment
            })
            .map(|c| c.start_byte())
    }

    /// Record `node` as a definition if it is one; return the frame for its children.
    fn definition(
        &mut self,
        node: Node<'_>,
        rule_index: usize,
        frame: &Frame,
        attached: Option<&Run>,
    ) -> Option<Frame> {
        let rule = &self.spec.rules[rule_index];
        let src = self.src.as_bytes();
        let named = match rule.name {
            Name::Field(f) => {
                let name = node.child_by_field_name(f)?;
                Named::new(text(name, src).split_whitespace().collect::<String>())
            }
            Name::Hook(hook) => hook(
                node,
                &Ctx {
                    src,
                    in_container: frame.methods,
                },
            )?,
        };
        if named.name.is_empty() {
            return None;
        }
        let body = named
            .body
            .or_else(|| rule.body.and_then(|f| node.child_by_field_name(f)));
        if rule.needs_body && body.is_none() {
            return None;
        }
        let mut kind = named.kind.unwrap_or(rule.kind);
        if kind == ChunkKind::Function && frame.methods {
            kind = ChunkKind::Method;
        }

        let qualname = {
            let mut q = String::new();
            if !named.absolute
                && let Some(s) = frame.scope
            {
                q.push_str(&self.defs[s].qualname);
                q.push('.');
            }
            if let Some(p) = &named.prefix {
                q.push_str(p);
                q.push('.');
            }
            q.push_str(&named.name);
            q
        };

        let wrap = frame.wrap.as_ref();
        let start = wrap
            .map(|w| w.start)
            .or(attached.map(|r| r.start))
            .unwrap_or(node.start_byte());
        let end = wrap.map_or(node.end_byte(), |w| w.end.max(node.end_byte()));
        // Some grammars (Scala's indented blocks) end a node after the
        // whitespace that follows it.
        let end = start + self.src[start..end].trim_end().len();
        let end = self.extend_over_line_rest(end);
        let sig_start = wrap.and_then(|w| w.sig_start).unwrap_or(node.start_byte());
        let sig_end = body
            .map_or(node.end_byte(), |b| b.start_byte())
            .max(sig_start);
        let sig_end = self
            .first_comment_in(node, sig_start..sig_end)
            .unwrap_or(sig_end);
        // Signatures are short: never collapse more than a few KB of header.
        let sig_end = crate::lines::floor_boundary(self.src, sig_end.min(sig_start + 4096));
        let signature = collapse_ws(&self.src[sig_start..sig_end], MAX_SIGNATURE_CHARS);

        let comments = match (wrap, attached) {
            (Some(w), _) => w.comments.as_slice(),
            (None, Some(r)) => r.comments.as_slice(),
            (None, None) => &[],
        };
        let doc = self
            .spec
            .docstrings
            .then(|| body.and_then(|b| doc::docstring(b, self.src)))
            .flatten()
            .or_else(|| doc::from_comments(self.src, comments));

        let trivial = match kind {
            ChunkKind::Function | ChunkKind::Method => {
                body.is_none_or(|b| is_trivial_body(b, src, self.spec.comments))
            }
            ChunkKind::Class => body.is_some_and(|b| is_trivial_body(b, src, self.spec.comments)),
            _ => false,
        };

        let index = self.defs.len();
        if let Some(p) = frame.parent {
            self.defs[p].has_children = true;
        }
        self.defs.push(Def {
            kind,
            name: named.name,
            qualname,
            parent: frame.parent,
            range: back_to_line_start(self.src, start)..end,
            def_start: wrap.map_or(node.start_byte(), |w| w.node_start),
            body: body.map(|b| {
                let t = &self.src[b.start_byte()..b.end_byte()];
                b.start_byte()..b.start_byte() + t.trim_end().len()
            }),
            signature,
            doc,
            trivial,
            in_function: frame.in_function,
            inline: named.inline,
            has_children: false,
        });

        let is_function = matches!(kind, ChunkKind::Function | ChunkKind::Method);
        Some(Frame {
            parent: Some(index),
            scope: if rule.scope { Some(index) } else { frame.scope },
            methods: kind.is_container() && (kind != ChunkKind::Namespace || rule.methods),
            in_function: frame.in_function || is_function,
            ..Frame::default()
        })
    }
}
