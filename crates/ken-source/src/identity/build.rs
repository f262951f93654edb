//! Building the resolver: identities files, then mailmap people, then the
//! indices every lookup uses.

use std::collections::{BTreeMap, HashMap};

use super::{
    Identities, IdentityError, Origin, Person, clean_email, file, github_handle, is_bot,
    push_unique,
};

impl Identities {
    pub(super) fn add_configured(&mut self, e: file::PersonEntry) -> Result<(), IdentityError> {
        let id = e.id.trim().to_string();
        let i = match self
            .people
            .iter()
            .position(|p| p.id.eq_ignore_ascii_case(&id))
        {
            Some(i) => i,
            None => {
                self.people.push(Person {
                    id: id.clone(),
                    name: id.clone(),
                    emails: Vec::new(),
                    names: Vec::new(),
                    handles: Vec::new(),
                    external: BTreeMap::new(),
                    is_bot: false,
                    origin: Origin::IdentitiesFile,
                    seen: 0,
                });
                self.people.len() - 1
            }
        };
        let p = &mut self.people[i];
        if let Some(name) = e.name.filter(|n| !n.trim().is_empty()) {
            p.name = name.trim().to_string();
        }
        for email in e.emails {
            push_unique(&mut p.emails, clean_email(&email));
        }
        for name in e.names {
            push_unique(&mut p.names, name.trim().to_string());
        }
        for handle in e.handles {
            push_unique(
                &mut p.handles,
                handle.trim().trim_start_matches('@').to_string(),
            );
        }
        p.external.extend(e.external);
        if let Some(b) = e.bot {
            self.bot_override.insert(i, b);
        }
        Ok(())
    }

    /// Turn mailmap lines into people: one per canonical email, merged
    /// with identities-file people sharing an email, and with each other
    /// when they share a proper name.
    pub(super) fn add_mailmap_people(&mut self) {
        struct Group {
            email: String,
            name: Option<String>,
            emails: Vec<String>,
            names: Vec<String>,
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut by_email: HashMap<String, usize> = HashMap::new();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for e in self.mailmap.entries() {
            // Where the mailmap, all lines applied, sends this line's identity.
            let (proper_name, canonical) = match &e.commit_name {
                None => {
                    let (n, m) = self.mailmap.simple(&e.commit_email);
                    (
                        n.map(str::to_string),
                        clean_email(m.unwrap_or(&e.commit_email)),
                    )
                }
                Some(_) => (
                    e.proper_name.clone(),
                    clean_email(e.proper_email.as_deref().unwrap_or(&e.commit_email)),
                ),
            };
            let proper_name_key = proper_name.as_ref().map(|n| n.to_lowercase());
            let g = match by_email.get(&canonical).copied().or_else(|| {
                proper_name_key
                    .as_ref()
                    .and_then(|k| by_name.get(k).copied())
            }) {
                Some(g) => g,
                None => {
                    groups.push(Group {
                        email: canonical.clone(),
                        name: None,
                        emails: vec![canonical.clone()],
                        names: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            by_email.entry(canonical.clone()).or_insert(g);
            if let Some(k) = proper_name_key {
                by_name.entry(k).or_insert(g);
            }
            let group = &mut groups[g];
            push_unique(&mut group.emails, canonical);
            if e.commit_name.is_none() {
                // Form 4's commit email may be shared by several people:
                // it is no alias of anyone's on its own.
                push_unique(&mut group.emails, clean_email(&e.commit_email));
            }
            if let Some(n) = proper_name {
                group.name = Some(n);
            }
            if let Some(n) = &e.commit_name {
                push_unique(&mut group.names, n.clone());
            }
        }
        for g in groups {
            let existing = g.emails.iter().find_map(|e| {
                self.people
                    .iter()
                    .position(|p| p.origin == Origin::IdentitiesFile && p.emails.contains(e))
            });
            match existing {
                Some(i) => {
                    // The identities files win: an email they give someone
                    // else stays theirs.
                    let taken: Vec<String> = self
                        .people
                        .iter()
                        .enumerate()
                        .filter(|&(j, p)| j != i && p.origin == Origin::IdentitiesFile)
                        .flat_map(|(_, p)| p.emails.iter().cloned())
                        .collect();
                    let p = &mut self.people[i];
                    for e in g.emails {
                        if !taken.contains(&e) {
                            push_unique(&mut p.emails, e);
                        }
                    }
                    for n in g.names.into_iter().chain(g.name) {
                        if !p.name.eq_ignore_ascii_case(&n) {
                            push_unique(&mut p.names, n);
                        }
                    }
                }
                None => {
                    let name = g.name.clone().unwrap_or_else(|| g.email.clone());
                    let is_bot = is_bot(&name, &g.email);
                    self.people.push(Person {
                        id: g.email,
                        name,
                        emails: g.emails,
                        names: g.names,
                        handles: Vec::new(),
                        external: BTreeMap::new(),
                        is_bot,
                        origin: Origin::Mailmap,
                        seen: 0,
                    });
                }
            }
        }
    }

    pub(super) fn index(&mut self) -> Result<(), IdentityError> {
        for i in 0..self.people.len() {
            let p = &self.people[i];
            claim(&mut self.by_id, p.id.to_lowercase(), i, &self.people)?;
            for e in p.emails.clone() {
                if let Some(h) = github_handle(&e) {
                    claim(&mut self.by_handle, h, i, &self.people)?;
                }
                claim(&mut self.by_email, e, i, &self.people)?;
            }
            let p = &self.people[i];
            for h in p.handles.clone() {
                claim(&mut self.by_handle, h.to_lowercase(), i, &self.people)?;
            }
            let p = &self.people[i];
            let mut names: Vec<String> = std::iter::once(&p.name)
                .chain(&p.names)
                .chain(&p.handles)
                .map(|n| n.to_lowercase())
                .collect();
            names.sort();
            names.dedup();
            for n in names {
                self.by_name.entry(n).or_default().push(i);
            }
            let detected = {
                let p = &self.people[i];
                p.is_bot
                    || is_bot(&p.name, "")
                    || p.emails.iter().any(|e| is_bot("", e))
                    || p.handles.iter().any(|h| h.ends_with("[bot]"))
            };
            self.people[i].is_bot = self.bot_override.get(&i).copied().unwrap_or(detected);
        }
        Ok(())
    }
}

/// Record `key` → `i`, unless another person holds it already: an error
/// between two identities-file people; otherwise the first holder (the
/// identities files come first) keeps it.
fn claim(
    map: &mut HashMap<String, usize>,
    key: String,
    i: usize,
    people: &[Person],
) -> Result<(), IdentityError> {
    match map.get(&key) {
        Some(&j) if j != i => {
            let configured = |k: usize| people[k].origin == Origin::IdentitiesFile;
            if configured(i) && configured(j) {
                return Err(IdentityError::Conflict {
                    alias: key,
                    first: people[j].id.clone(),
                    second: people[i].id.clone(),
                });
            }
            Ok(())
        }
        _ => {
            map.insert(key, i);
            Ok(())
        }
    }
}
