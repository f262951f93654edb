//! git's `.mailmap`, parsed and applied the way git does (mailmap.c).
//!
//! The four forms, each line mapping the identity a commit carries to the
//! proper one:
//!
//! ```text
//! Proper Name <commit@email>                          # 1: fix the name
//! <proper@email> <commit@email>                       # 2: fix the email
//! Proper Name <proper@email> <commit@email>           # 3: fix both
//! Proper Name <proper@email> Commit Name <commit@email>  # 4: both, for that name only
//! ```
//!
//! Emails and names match case-insensitively. A line starting with `#` is a
//! comment, and so is anything after the last `>` used. Lines that are not
//! understood are skipped, as git skips them. Later lines override earlier
//! ones field by field.

use std::collections::HashMap;

/// One line of a mailmap: the proper identity for a commit identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailmapEntry {
    pub proper_name: Option<String>,
    pub proper_email: Option<String>,
    /// Set in form 4 only: the mapping applies to this name only.
    pub commit_name: Option<String>,
    pub commit_email: String,
}

#[derive(Debug, Default, Clone)]
struct Target {
    name: Option<String>,
    email: Option<String>,
}

#[derive(Debug, Default, Clone)]
struct ByEmail {
    simple: Target,
    /// Lower-cased commit name → target (form 4).
    by_name: HashMap<String, Target>,
}

/// A parsed mailmap.
#[derive(Debug, Default, Clone)]
pub struct Mailmap {
    entries: Vec<MailmapEntry>,
    /// Lower-cased commit email → mappings.
    map: HashMap<String, ByEmail>,
}

impl Mailmap {
    pub fn parse(text: &str) -> Mailmap {
        let mut m = Mailmap::default();
        for line in text.lines() {
            if let Some(entry) = parse_line(line) {
                m.add(entry);
            }
        }
        m
    }

    fn add(&mut self, e: MailmapEntry) {
        let slot = self.map.entry(e.commit_email.to_lowercase()).or_default();
        match &e.commit_name {
            None => {
                if e.proper_name.is_some() {
                    slot.simple.name = e.proper_name.clone();
                }
                if e.proper_email.is_some() {
                    slot.simple.email = e.proper_email.clone();
                }
            }
            Some(name) => {
                slot.by_name.insert(
                    name.to_lowercase(),
                    Target {
                        name: e.proper_name.clone(),
                        email: e.proper_email.clone(),
                    },
                );
            }
        }
        self.entries.push(e);
    }

    /// The lines understood, in file order.
    pub fn entries(&self) -> &[MailmapEntry] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The proper `(name, email)` for a commit's, or `None` when no line
    /// applies (then the commit's identity is already the proper one).
    pub fn lookup(&self, name: &str, email: &str) -> Option<(Option<&str>, Option<&str>)> {
        let slot = self.map.get(&email.to_lowercase())?;
        let target = slot
            .by_name
            .get(&name.to_lowercase())
            .unwrap_or(&slot.simple);
        if target.name.is_none() && target.email.is_none() {
            return None;
        }
        Some((target.name.as_deref(), target.email.as_deref()))
    }

    /// What a line without a commit name (forms 1–3) makes of `email`:
    /// the proper name and email, either possibly unset.
    pub(crate) fn simple(&self, email: &str) -> (Option<&str>, Option<&str>) {
        match self.map.get(&email.to_lowercase()) {
            Some(slot) => (slot.simple.name.as_deref(), slot.simple.email.as_deref()),
            None => (None, None),
        }
    }

    /// `(name, email)` mapped: the proper values where a line applies, the
    /// given ones otherwise.
    pub fn map<'a>(&'a self, name: &'a str, email: &'a str) -> (&'a str, &'a str) {
        match self.lookup(name, email) {
            Some((n, e)) => (n.unwrap_or(name), e.unwrap_or(email)),
            None => (name, email),
        }
    }
}

/// `name <email>` at the start of `s`: the trimmed name (`None` when
/// empty), the email, and the rest after `>`. `None` without `<…>`, or
/// with an empty email unless `allow_empty_email`.
fn name_and_email(s: &str, allow_empty_email: bool) -> Option<(Option<&str>, &str, &str)> {
    let left = s.find('<')?;
    let right = left + 1 + s[left + 1..].find('>')?;
    let email = s[left + 1..right].trim();
    if email.is_empty() && !allow_empty_email {
        return None;
    }
    let name = s[..left].trim();
    Some(((!name.is_empty()).then_some(name), email, &s[right + 1..]))
}

fn parse_line(line: &str) -> Option<MailmapEntry> {
    let line = line.trim_start();
    if line.starts_with('#') {
        return None;
    }
    let (name1, email1, rest) = name_and_email(line, false)?;
    let second = name_and_email(rest, true);
    let entry = match second {
        // Forms 1 (`Name <commit>`): the only email is the commit's.
        None => MailmapEntry {
            proper_name: name1.map(str::to_string),
            proper_email: None,
            commit_name: None,
            commit_email: email1.to_string(),
        },
        // Forms 2, 3 and 4.
        Some((name2, email2, _)) => MailmapEntry {
            proper_name: name1.map(str::to_string),
            proper_email: Some(email1.to_string()),
            commit_name: name2.map(str::to_string),
            commit_email: email2.to_string(),
        },
    };
    if entry.proper_name.is_none() && entry.proper_email.is_none() {
        return None;
    }
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = "\
# a comment line
Jane Doe <jane@example.com>
<joe@example.com> <joe@old.example>
Ann Proper <ann@example.com> <ann@laptop.local>
Bob Proper <bob@example.com> bobby <shared@example.com>
Carl Proper <carl@example.com> carl <shared@example.com>   # trailing comment
not a mapping at all
";

    #[test]
    fn parses_all_four_forms() {
        let m = Mailmap::parse(MAP);
        assert_eq!(m.entries().len(), 5);
        let e = &m.entries()[0];
        assert_eq!(e.proper_name.as_deref(), Some("Jane Doe"));
        assert_eq!(e.proper_email, None);
        assert_eq!(e.commit_email, "jane@example.com");
        let e = &m.entries()[1];
        assert_eq!(
            (e.proper_name.as_deref(), e.proper_email.as_deref()),
            (None, Some("joe@example.com"))
        );
        assert_eq!(e.commit_email, "joe@old.example");
        let e = &m.entries()[3];
        assert_eq!(e.commit_name.as_deref(), Some("bobby"));
    }

    #[test]
    fn form_1_fixes_the_name_only() {
        let m = Mailmap::parse(MAP);
        assert_eq!(
            m.map("jdoe", "JANE@example.com"),
            ("Jane Doe", "JANE@example.com")
        );
    }

    #[test]
    fn form_2_fixes_the_email_only() {
        let m = Mailmap::parse(MAP);
        assert_eq!(m.map("Joe", "joe@old.example"), ("Joe", "joe@example.com"));
    }

    #[test]
    fn form_3_fixes_both() {
        let m = Mailmap::parse(MAP);
        assert_eq!(
            m.map("ann", "Ann@Laptop.local"),
            ("Ann Proper", "ann@example.com")
        );
    }

    #[test]
    fn form_4_needs_the_name_too() {
        let m = Mailmap::parse(MAP);
        assert_eq!(
            m.map("Bobby", "shared@example.com"),
            ("Bob Proper", "bob@example.com")
        );
        assert_eq!(
            m.map("carl", "shared@example.com"),
            ("Carl Proper", "carl@example.com")
        );
        assert_eq!(
            m.map("Someone", "shared@example.com"),
            ("Someone", "shared@example.com")
        );
        assert_eq!(m.lookup("Someone", "shared@example.com"), None);
    }

    #[test]
    fn unknown_identities_pass_through() {
        let m = Mailmap::parse(MAP);
        assert_eq!(m.map("X", "x@y"), ("X", "x@y"));
    }

    #[test]
    fn later_lines_override_field_by_field() {
        let m = Mailmap::parse("A <a@x> <old@x>\nB <old@x>\n");
        assert_eq!(m.map("?", "old@x"), ("B", "a@x"));
    }
}
