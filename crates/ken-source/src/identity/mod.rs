//! Who is who: git names and emails resolved to people.
//!
//! Sources, most explicit first:
//! 1. identities files (TOML, see [`file`](self) docs below and
//!    `identities.toml` under `$KEN_HOME` or `.ken/` in a repository): a
//!    person id with emails, names, GitHub/GitLab handles and the user ids
//!    other systems (Jira, Linear…) give them;
//! 2. the repository's `.mailmap` (git's four forms);
//! 3. the commits themselves: an author nobody described becomes a person
//!    of their own, keyed by their (mailmap-canonical) email, or by their
//!    handle for GitHub noreply addresses.
//!
//! [`Identities::resolve`] tries, in order: the commit's email against the
//! identities files (case-insensitively); the mailmap-canonical email; the
//! GitHub handle of a noreply address; a name that only one known person
//! uses (generic names such as `root` never match). An author none of these
//! describe is a commit author of their own: commit authors are merged into
//! people by a union-find over every observed identity (authors.rs), two
//! being one person when they share an id (the canonical email, or a
//! noreply address's handle), the same normalised name (case, spacing and
//! punctuation aside), or when one's name is the handle of the other's
//! noreply address; so who is one person does not depend on the order
//! commits are observed in, and neither do their ids and display names. The
//! same-name merge of commit authors can be turned off with
//! `merge_same_names = false` in an identities file. An identities-file person and a mailmap identity that share
//! an email are one person. Mailmap identities given the same proper name
//! are one person, as `git shortlog` counts them.
//!
//! Bots (`dependabot[bot]`, `renovate[bot]`, `github-actions`, the GitHub
//! web-flow `noreply@github.com`, …) are recognised by name and address and
//! flagged with `is_bot`, so that callers leave them out by default; an
//! identities file can force `bot = true` or `false` for a person.
//!
//! Identities file format:
//!
//! ```toml
//! [[person]]
//! id = "ahmed"                      # required, unique
//! name = "Ahmed Karim"              # display name (default: the id)
//! emails = ["ahmed@example.com", "1234+ahmedk@users.noreply.github.com"]
//! names = ["Ahmed K.", "ahmedk"]    # other spellings seen in commits
//! handles = ["ahmedk"]              # GitHub/GitLab handles
//! external = { jira = "557058:f00", linear = "u_42" }
//! bot = false                       # optional override
//! ```
//!
//! Several files may be given (say `$KEN_HOME`'s and the repository's): a
//! person with the same id in two files is one person, with the aliases of
//! both and the later file's name. One email or handle claimed by two
//! different ids is an error.

mod authors;
mod bots;
mod build;
mod file;
mod mailmap;

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use authors::{Author, Authors};
pub use bots::{github_handle, is_bot};
pub use mailmap::{Mailmap, MailmapEntry};

/// Where a person was first described.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    IdentitiesFile,
    Mailmap,
    /// Seen in commits only.
    Commits,
}

/// A person and every alias known for them. Emails are lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub id: String,
    pub name: String,
    pub emails: Vec<String>,
    pub names: Vec<String>,
    pub handles: Vec<String>,
    /// System → user id (`jira` → `557058:f00`).
    pub external: BTreeMap<String, String>,
    pub is_bot: bool,
    pub origin: Origin,
    /// How many identities were recorded for them with [`Identities::observe`].
    pub seen: u64,
}

/// The person a commit identity resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PersonRef {
    pub id: String,
    pub display_name: String,
    pub is_bot: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("{label}:{line}:{column}: {message}")]
    Toml {
        label: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{label}: {message}")]
    Invalid { label: String, message: String },
    #[error(
        "`{alias}` is claimed by two people, `{first}` and `{second}`: keep it in one [[person]]"
    )]
    Conflict {
        alias: String,
        first: String,
        second: String,
    },
}

/// Names too common to identify anyone.
const GENERIC_NAMES: &[&str] = &[
    "root",
    "unknown",
    "ubuntu",
    "admin",
    "administrator",
    "user",
    "your name",
    "you",
    "git",
    "nobody",
    "none",
    "(no author)",
    "localhost",
    "anonymous",
    "test",
    "ec2-user",
    "vagrant",
    "pi",
];

/// The resolver, and the people it knows.
#[derive(Debug, Clone, Default)]
pub struct Identities {
    mailmap: Mailmap,
    /// Identities-file and mailmap people.
    people: Vec<Person>,
    bot_override: HashMap<usize, bool>,
    by_id: HashMap<String, usize>,
    by_email: HashMap<String, usize>,
    by_handle: HashMap<String, usize>,
    by_name: HashMap<String, Vec<usize>>,
    /// Commit authors no identities file or mailmap describes.
    authors: Authors,
    /// `people`, then the people `authors` make (built when first asked
    /// for after an observation).
    all: OnceLock<Built>,
    /// `merge_same_names = false`: commit authors sharing only a name stay apart.
    keep_names_apart: bool,
}

/// Everyone, and where each group of authors is in the list.
#[derive(Debug, Clone, Default)]
struct Built {
    people: Vec<Person>,
    /// A group's root node → its index in `people`.
    at: HashMap<usize, usize>,
}

enum Resolved {
    Known(usize),
    /// An author nobody described: the identity, and the keys it merges by.
    New(Author, Vec<String>),
}

impl Identities {
    /// Build from a `.mailmap` text and identities-file texts (in order of
    /// increasing precedence). Errors name the file by its position
    /// ("identities file 1"); see [`Identities::from_labelled`].
    pub fn from_sources(
        mailmap: Option<&str>,
        identities_toml: &[&str],
    ) -> Result<Identities, IdentityError> {
        let labels: Vec<String> = (1..=identities_toml.len())
            .map(|i| format!("identities file {i}"))
            .collect();
        let labelled: Vec<(&str, &str)> = labels
            .iter()
            .map(String::as_str)
            .zip(identities_toml.iter().copied())
            .collect();
        Identities::from_labelled(mailmap, &labelled)
    }

    /// Like [`Identities::from_sources`], with each file's text labelled
    /// (typically by its path) for error messages.
    pub fn from_labelled(
        mailmap: Option<&str>,
        identities_toml: &[(&str, &str)],
    ) -> Result<Identities, IdentityError> {
        let mut ids = Identities {
            mailmap: mailmap.map(Mailmap::parse).unwrap_or_default(),
            ..Identities::default()
        };
        for (label, text) in identities_toml {
            let parsed = file::parse(text, label)?;
            if let Some(merge) = parsed.merge_same_names {
                ids.keep_names_apart = !merge;
            }
            for entry in parsed.people {
                ids.add_configured(entry)?;
            }
        }
        ids.add_mailmap_people();
        ids.index()?;
        Ok(ids)
    }

    /// The person behind a commit's `name <email>`. Pure: nothing is
    /// recorded (see [`Identities::observe`]).
    pub fn resolve(&self, name: &str, email: &str) -> PersonRef {
        match self.resolve_inner(name, email) {
            Resolved::Known(i) => self.person_ref(i),
            Resolved::New(author, keys) => {
                let keys = if self.keep_names_apart {
                    &[][..]
                } else {
                    &keys
                };
                match self.authors.lookup(&author.id, keys) {
                    Some(n) => self.authors.person_ref(n),
                    None => PersonRef {
                        id: author.id,
                        display_name: author.display,
                        is_bot: author.is_bot,
                    },
                }
            }
        }
    }

    /// Resolve, and record the identity as an alias of the person (making
    /// a new person for someone unknown), so [`Identities::people`] lists
    /// everyone seen with every alias.
    ///
    /// The answer is the person as known so far: a later identity can join
    /// two authors into one person (say a noreply address whose handle is
    /// one's name and whose name is the other's), and then both resolve to
    /// that person. Once every identity is observed, the people, their ids
    /// and their names do not depend on the order they were observed in.
    pub fn observe(&mut self, name: &str, email: &str) -> PersonRef {
        let name_t = name.trim();
        let email_l = clean_email(email);
        self.all = OnceLock::new();
        match self.resolve_inner(name, email) {
            Resolved::Known(i) => {
                let p = &mut self.people[i];
                p.seen += 1;
                if !email_l.is_empty() && !p.emails.contains(&email_l) {
                    p.emails.push(email_l);
                }
                if !name_t.is_empty()
                    && !p.name.eq_ignore_ascii_case(name_t)
                    && !p.names.iter().any(|n| n.eq_ignore_ascii_case(name_t))
                {
                    p.names.push(name_t.to_string());
                }
                self.person_ref(i)
            }
            Resolved::New(author, keys) => {
                let keys = if self.keep_names_apart {
                    &[][..]
                } else {
                    &keys
                };
                let n = self.authors.observe(author, keys);
                self.authors.person_ref(n)
            }
        }
    }

    /// Everyone known: identities-file and mailmap people, then the people
    /// seen by [`Identities::observe`] only (ordered by id), each with all
    /// their aliases.
    pub fn people(&self) -> &[Person] {
        &self.built().people
    }

    /// The person with this id (case-insensitive): a person's own id, or
    /// the id one of their commit identities would have on its own.
    pub fn person(&self, id: &str) -> Option<&Person> {
        let id = id.to_lowercase();
        if let Some(&i) = self.by_id.get(&id) {
            return Some(&self.people[i]);
        }
        let root = self.authors.root(self.authors.by_id(&id)?);
        let built = self.built();
        built.at.get(&root).map(|&i| &built.people[i])
    }

    fn built(&self) -> &Built {
        self.all.get_or_init(|| {
            let mut people = self.people.clone();
            let mut at = HashMap::new();
            for (root, person) in self.authors.people() {
                at.insert(root, people.len());
                people.push(person);
            }
            Built { people, at }
        })
    }

    /// People matching `query` by any alias, case-insensitively: id, name,
    /// names, emails, handles (`@handle` too), external ids (`value` or
    /// `system:value`). Exact matches come first, then partial ones: a
    /// whole word of a name (first or last name), or an email's local part.
    pub fn find(&self, query: &str) -> Vec<Person> {
        let q = query.trim().trim_start_matches('@').to_lowercase();
        if q.is_empty() {
            return Vec::new();
        }
        let exact = |p: &Person| {
            p.id.to_lowercase() == q
                || p.name.to_lowercase() == q
                || p.names.iter().any(|n| n.to_lowercase() == q)
                || p.emails.contains(&q)
                || p.handles.iter().any(|h| h.to_lowercase() == q)
                || p.external
                    .iter()
                    .any(|(k, v)| v.to_lowercase() == q || format!("{k}:{v}").to_lowercase() == q)
        };
        let partial = |p: &Person| {
            let padded = format!(" {q} ");
            std::iter::once(&p.name)
                .chain(&p.names)
                .any(|n| format!(" {} ", words(n).join(" ")).contains(&padded))
                || p.emails
                    .iter()
                    .any(|e| e.split('@').next().is_some_and(|l| l == q))
        };
        let mut out: Vec<Person> = self.people().iter().filter(|p| exact(p)).cloned().collect();
        let more: Vec<Person> = self
            .people()
            .iter()
            .filter(|p| !exact(p) && partial(p))
            .cloned()
            .collect();
        out.extend(more);
        out
    }

    /// The mailmap in use.
    pub fn mailmap(&self) -> &Mailmap {
        &self.mailmap
    }

    fn person_ref(&self, i: usize) -> PersonRef {
        let p = &self.people[i];
        PersonRef {
            id: p.id.clone(),
            display_name: p.name.clone(),
            is_bot: p.is_bot,
        }
    }

    fn resolve_inner(&self, name: &str, email: &str) -> Resolved {
        let name_t = name.trim();
        let email_l = clean_email(email);
        if let Some(&i) = self.by_email.get(&email_l) {
            return Resolved::Known(i);
        }
        let (mname, memail) = self.mailmap.map(name_t, &email_l);
        let memail = memail.to_lowercase();
        if let Some(&i) = self.by_email.get(&memail) {
            return Resolved::Known(i);
        }
        let handle = github_handle(&memail).or_else(|| github_handle(&email_l));
        if let Some(i) = handle.as_ref().and_then(|h| self.by_handle.get(h)) {
            return Resolved::Known(*i);
        }
        for n in [mname, name_t] {
            let key = n.to_lowercase();
            if GENERIC_NAMES.contains(&key.as_str()) || key.chars().count() < 2 || is_bot(n, "") {
                continue;
            }
            if let Some([i]) = self.by_name.get(&key).map(Vec::as_slice) {
                return Resolved::Known(*i);
            }
        }
        // Commit authors with the same normalised name, or whose name is
        // the other's noreply handle, are one person.
        let mut keys: Vec<String> = name_key(mname)
            .into_iter()
            .chain(name_key(name_t))
            .chain(handle.clone())
            .collect();
        keys.sort();
        keys.dedup();
        let id = match &handle {
            Some(h) if !self.by_id.contains_key(h) => h.clone(),
            Some(h) => format!("github:{h}"),
            None if !memail.is_empty() => memail.clone(),
            None if !mname.is_empty() => format!("name:{}", mname.to_lowercase()),
            None => "unknown".to_string(),
        };
        let author = Author {
            name: name_t.to_string(),
            email: email_l.clone(),
            display: if mname.is_empty() {
                memail.clone()
            } else {
                mname.to_string()
            },
            is_bot: is_bot(mname, &memail) || is_bot(name_t, &email_l),
            canonical: memail,
            id,
            handle,
            seen: 0,
        };
        Resolved::New(author, keys)
    }
}

fn clean_email(email: &str) -> String {
    email.trim().trim_matches(['<', '>']).trim().to_lowercase()
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !s.is_empty() && !v.iter().any(|x| x.eq_ignore_ascii_case(&s)) {
        v.push(s);
    }
}

/// The key two commit authors are merged by: the name's words, lower-cased,
/// joined by one space; None for names that identify no one (`root`, one
/// letter, bots).
fn name_key(name: &str) -> Option<String> {
    let key = words(name).join(" ");
    let generic = GENERIC_NAMES.contains(&key.as_str()) || key.chars().count() < 2;
    (!generic && !is_bot(name, "")).then_some(key)
}

/// A name's words, lower-cased: `"Karim, Ahmed K."` → `karim ahmed k`.
fn words(name: &str) -> Vec<String> {
    name.split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '(' | ')' | '"'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests;
