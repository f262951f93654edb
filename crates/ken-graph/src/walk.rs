//! Callers, callees and impact: breadth-first walks over the graph that
//! remember, for every node reached, the chain of edges leading back.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::graph::{CodeGraph, EdgeId, Kinds, NodeId};
use ken_core::RefKind;

/// A node reached by a walk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reached {
    pub node: NodeId,
    /// Edges walked from the start (1: a direct caller or callee).
    pub depth: u32,
    /// The edges linking `node` back to the start, in walking order
    /// reversed: for callers and impact, `node → … → start` (each edge as
    /// written, from the dependent to what it uses); for callees,
    /// `start → … → node`. Shortest chains; ties go to the smallest ids.
    pub via: Vec<EdgeId>,
}

/// Walk direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// Against the edges: who uses the start.
    Up,
    /// Along the edges: what the start uses.
    Down,
}

impl CodeGraph {
    /// Definitions that call `node`, up to `depth` calls away; a
    /// recursive `node` is among its own callers, at depth 1.
    pub fn callers(&self, node: NodeId, depth: u32) -> Vec<Reached> {
        let mut out = self.walk(&[node], Direction::Up, Kinds::USES, depth);
        self.add_recursion(node, depth, &mut out);
        out
    }

    /// Definitions `node` calls directly; a recursive `node` among them.
    pub fn callees(&self, node: NodeId) -> Vec<Reached> {
        let mut out = self.walk(&[node], Direction::Down, Kinds::USES, 1);
        self.add_recursion(node, 1, &mut out);
        out
    }

    /// A walk never reaches its start again; a call of `node` from its own
    /// body is still a caller (and a callee) of it, one call away.
    fn add_recursion(&self, node: NodeId, depth: u32, out: &mut Vec<Reached>) {
        if depth == 0 || node as usize >= self.node_count() {
            return;
        }
        let recursive = self.out_edges(node).find(|&e| {
            let edge = self.edge(e);
            edge.to == node && Kinds::CALLS.contains(edge.kind)
        });
        if let Some(e) = recursive {
            out.push(Reached {
                node,
                depth: 1,
                via: vec![e],
            });
            out.sort_by_key(|r| (r.depth, r.node));
        }
    }

    /// What depends on `node`, transitively, through every kind of
    /// reference (calls, imports, inheritance, type uses), up to
    /// `max_depth` edges away. A module's top level is reached but not
    /// gone through: the files importing the whole module depend on its
    /// members through their own edges.
    pub fn impact(&self, node: NodeId, max_depth: u32) -> Vec<Reached> {
        self.impact_of(&[node], Kinds::ALL, max_depth)
    }

    /// [`CodeGraph::impact`] of several nodes at once (a class and its
    /// members), through the given kinds; a recursive one among them
    /// depends on itself, one call away, as it is among its own callers.
    pub fn impact_of(&self, nodes: &[NodeId], kinds: Kinds, max_depth: u32) -> Vec<Reached> {
        let mut out = self.walk(nodes, Direction::Up, kinds, max_depth);
        if kinds.contains(RefKind::Call) {
            for &node in nodes {
                if !out.iter().any(|r| r.node == node) {
                    self.add_recursion(node, max_depth, &mut out);
                }
            }
        }
        out
    }

    /// Breadth-first from `starts`; results sorted by (depth, node).
    fn walk(
        &self,
        starts: &[NodeId],
        dir: Direction,
        kinds: Kinds,
        max_depth: u32,
    ) -> Vec<Reached> {
        let n = self.node_count();
        const UNSEEN: u32 = u32::MAX;
        let mut depth = vec![UNSEEN; n];
        let mut parent: Vec<Option<EdgeId>> = vec![None; n];
        let mut queue = VecDeque::new();
        let mut starts: Vec<NodeId> = starts
            .iter()
            .copied()
            .filter(|&s| (s as usize) < n)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        for &s in &starts {
            depth[s as usize] = 0;
            queue.push_back(s);
        }
        let mut reached = Vec::new();
        while let Some(u) = queue.pop_front() {
            let d = depth[u as usize];
            if d >= max_depth {
                continue;
            }
            // a module's top level depends on what it imports, but the
            // files importing the whole module depend on its members
            // through their own edges: it is reached, not gone through
            if dir == Direction::Up && d > 0 && self.key(u).is_module() {
                continue;
            }
            let mut step = |e: EdgeId, v: NodeId| {
                if depth[v as usize] == UNSEEN {
                    depth[v as usize] = d + 1;
                    parent[v as usize] = Some(e);
                    queue.push_back(v);
                    reached.push(v);
                }
            };
            match dir {
                Direction::Up => {
                    for &e in self.in_edges(u) {
                        let edge = self.edge(e);
                        if kinds.contains(edge.kind) {
                            step(e, edge.from);
                        }
                    }
                }
                Direction::Down => {
                    for e in self.out_edges(u) {
                        let edge = self.edge(e);
                        if kinds.contains(edge.kind) {
                            step(e, edge.to);
                        }
                    }
                }
            }
        }
        let mut out: Vec<Reached> = reached
            .into_iter()
            .map(|v| {
                let mut via = Vec::new();
                let mut cur = v;
                while let Some(e) = parent[cur as usize] {
                    via.push(e);
                    let edge = self.edge(e);
                    cur = match dir {
                        Direction::Up => edge.to,
                        Direction::Down => edge.from,
                    };
                }
                if dir == Direction::Down {
                    via.reverse();
                }
                Reached {
                    node: v,
                    depth: depth[v as usize],
                    via,
                }
            })
            .collect();
        out.sort_by_key(|r| (r.depth, r.node));
        out
    }
}

#[cfg(test)]
mod tests {
    use ken_core::RefKind;

    use crate::{CodeGraph, DefKey, Edge, Rule};

    fn call(from: &str, to: &str, line: u32) -> Edge {
        Edge {
            from: DefKey::new("a.py", from, 0),
            to: DefKey::new("a.py", to, 0),
            kind: RefKind::Call,
            path: "a.py".into(),
            line,
            rule: Rule::Scope,
            confidence: 1.0,
        }
    }

    #[test]
    fn a_recursive_function_is_its_own_caller_callee_and_dependent() {
        let g = CodeGraph::build([], &[call("walk", "walk", 3), call("main", "walk", 9)]);
        let walk = g.id(&DefKey::new("a.py", "walk", 0)).unwrap();
        let main = g.id(&DefKey::new("a.py", "main", 0)).unwrap();
        let callers: Vec<_> = g
            .callers(walk, 1)
            .iter()
            .map(|r| (r.node, r.depth))
            .collect();
        assert_eq!(callers.len(), 2);
        assert!(callers.contains(&(walk, 1)) && callers.contains(&(main, 1)));
        let callees: Vec<_> = g.callees(walk).iter().map(|r| r.node).collect();
        assert_eq!(callees, [walk]);
        // it depends on itself, one call away, as callers say
        let impact: Vec<_> = g
            .impact(walk, 3)
            .iter()
            .map(|r| (r.node, r.depth))
            .collect();
        assert_eq!(impact.len(), 2);
        assert!(impact.contains(&(walk, 1)) && impact.contains(&(main, 1)));
        // and a function that does not call itself is not its own caller
        assert!(g.callers(main, 2).is_empty());
    }
}
