//! Commit authors nobody described (no identities-file or mailmap person
//! holds their address, handle or name), merged into people with a
//! union-find: every observed (name, email) is a node, and two nodes are one
//! person when they share an id (the mailmap-canonical email, or the handle
//! of a GitHub noreply address), a normalised name, or when one's name is
//! the other's noreply handle. Unions commute, so the people, their ids and
//! their display names are the same whatever order the identities come in.

use std::collections::{BTreeMap, HashMap};

use super::{Origin, Person, PersonRef};

/// One observed identity of an undescribed author.
#[derive(Debug, Clone)]
pub(super) struct Author {
    /// As in the commit, trimmed.
    pub name: String,
    /// As in the commit, cleaned and lower-cased.
    pub email: String,
    /// The mailmap-canonical email.
    pub canonical: String,
    /// The mailmap-canonical name, or the canonical email when there is none.
    pub display: String,
    /// The person id this identity alone would have.
    pub id: String,
    pub handle: Option<String>,
    pub is_bot: bool,
    pub seen: u64,
}

/// The undescribed authors and the people they make.
#[derive(Debug, Clone, Default)]
pub(super) struct Authors {
    nodes: Vec<Author>,
    /// (name, email) as observed → node.
    index: HashMap<(String, String), usize>,
    parent: Vec<usize>,
    /// Each root's nodes (empty for the others).
    members: Vec<Vec<usize>>,
    /// A node holding each id.
    ids: HashMap<String, usize>,
    /// A node holding each merge key (normalised names and noreply handles).
    keys: HashMap<String, usize>,
}

impl Authors {
    /// Record an observation: a new node joined to every node it shares an
    /// id or a key with, or one more sighting of a known node. Returns the node.
    pub fn observe(&mut self, author: Author, keys: &[String]) -> usize {
        let at = (author.name.clone(), author.email.clone());
        if let Some(&n) = self.index.get(&at) {
            self.nodes[n].seen += 1;
            return n;
        }
        let n = self.nodes.len();
        let id = author.id.clone();
        self.nodes.push(Author { seen: 1, ..author });
        self.parent.push(n);
        self.members.push(vec![n]);
        self.index.insert(at, n);
        match self.ids.get(&id) {
            Some(&m) => self.union(n, m),
            None => {
                self.ids.insert(id, n);
            }
        }
        for key in keys {
            match self.keys.get(key) {
                Some(&m) => self.union(n, m),
                None => {
                    self.keys.insert(key.clone(), n);
                }
            }
        }
        n
    }

    /// The node already holding this id, or else one of these keys.
    pub fn lookup(&self, id: &str, keys: &[String]) -> Option<usize> {
        self.ids
            .get(id)
            .or_else(|| keys.iter().find_map(|k| self.keys.get(k)))
            .copied()
    }

    /// The node holding this id (any id of a person's identities).
    pub fn by_id(&self, id: &str) -> Option<usize> {
        self.ids.get(id).copied()
    }

    pub fn root(&self, mut n: usize) -> usize {
        while self.parent[n] != n {
            n = self.parent[n];
        }
        n
    }

    /// The person `n` belongs to, as a commit resolves to them.
    pub fn person_ref(&self, n: usize) -> PersonRef {
        let members = &self.members[self.root(n)];
        PersonRef {
            id: self.id_of(members),
            display_name: self.name_of(members),
            is_bot: members.iter().any(|&m| self.nodes[m].is_bot),
        }
    }

    /// Every person, ordered by id, and the root each came from.
    pub fn people(&self) -> Vec<(usize, Person)> {
        let mut out: Vec<(usize, Person)> = (0..self.nodes.len())
            .filter(|&n| self.parent[n] == n)
            .map(|root| (root, self.person(root)))
            .collect();
        out.sort_by(|a, b| a.1.id.cmp(&b.1.id));
        out
    }

    fn person(&self, root: usize) -> Person {
        let members = &self.members[root];
        let nodes = || members.iter().map(|&m| &self.nodes[m]);
        let name = self.name_of(members);
        let mut emails: Vec<String> = nodes()
            .flat_map(|a| [a.canonical.clone(), a.email.clone()])
            .filter(|e| !e.is_empty())
            .collect();
        emails.sort();
        emails.dedup();
        let mut names: Vec<String> = nodes()
            .flat_map(|a| [a.name.clone(), a.display.clone()])
            .filter(|n| !n.is_empty() && !n.eq_ignore_ascii_case(&name))
            .collect();
        names.sort();
        names.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
        let mut handles: Vec<String> = nodes().filter_map(|a| a.handle.clone()).collect();
        handles.sort();
        handles.dedup();
        Person {
            id: self.id_of(members),
            is_bot: nodes().any(|a| a.is_bot),
            seen: nodes().map(|a| a.seen).sum(),
            name,
            emails,
            names,
            handles,
            external: BTreeMap::new(),
            origin: Origin::Commits,
        }
    }

    /// A person's id: a handle's if any identity has one, else an email's,
    /// else a name's; the smallest of those.
    fn id_of(&self, members: &[usize]) -> String {
        let rank = |id: &str, handle: bool| {
            if handle {
                0
            } else if id.starts_with("name:") || id == "unknown" {
                2
            } else {
                1
            }
        };
        members
            .iter()
            .map(|&m| &self.nodes[m])
            .map(|a| (rank(&a.id, a.handle.is_some()), a.id.as_str()))
            .min()
            .map(|(_, id)| id.to_string())
            .unwrap_or_default()
    }

    /// A person's display name: a name rather than an address, the most
    /// words (a full name over a handle), the longest, then the first in
    /// byte order (capitalised before lower case).
    fn name_of(&self, members: &[usize]) -> String {
        members
            .iter()
            .map(|&m| self.nodes[m].display.as_str())
            .min_by_key(|d| {
                let words = super::words(d).len();
                (
                    d.contains('@'),
                    std::cmp::Reverse(words),
                    std::cmp::Reverse(d.chars().count()),
                    *d,
                )
            })
            .unwrap_or_default()
            .to_string()
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra == rb {
            return;
        }
        let (big, small) = if self.members[ra].len() >= self.members[rb].len() {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[small] = big;
        let moved = std::mem::take(&mut self.members[small]);
        self.members[big].extend(moved);
    }
}
