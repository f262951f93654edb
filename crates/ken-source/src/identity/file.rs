//! The identities file: who is who, written by people.
//!
//! ```toml
//! [[person]]
//! id = "ahmed"                      # required, unique; what `ken who` prints
//! name = "Ahmed Karim"              # display name (default: the id)
//! emails = ["ahmed@example.com", "1234+ahmedk@users.noreply.github.com"]
//! names = ["Ahmed K.", "ahmedk"]    # other spellings seen in commits
//! handles = ["ahmedk"]              # GitHub/GitLab handles
//! external = { jira = "557058:f00", linear = "u_42" }   # other systems' user ids
//! bot = false                       # optional: force (or deny) bot status
//! ```
//!
//! A top-level `merge_same_names = false` keeps authors seen only in
//! commits apart when they share a name but not an email (by default they
//! are one person; the last file that sets it wins).
//!
//! Every field but `id` may be left out; unknown fields are errors (a typo
//! such as `email = …` would otherwise be silently ignored).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::IdentityError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRoot {
    #[serde(default)]
    person: Vec<PersonEntry>,
    #[serde(default)]
    merge_same_names: Option<bool>,
}

/// What one identities file says.
#[derive(Debug, Default)]
pub(crate) struct ParsedFile {
    pub people: Vec<PersonEntry>,
    pub merge_same_names: Option<bool>,
}

/// One `[[person]]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PersonEntry {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub emails: Vec<String>,
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub handles: Vec<String>,
    #[serde(default)]
    pub external: BTreeMap<String, String>,
    #[serde(default)]
    pub bot: Option<bool>,
}

/// Parse one identities file; `label` names it in error messages.
pub(crate) fn parse(text: &str, label: &str) -> Result<ParsedFile, IdentityError> {
    let root: FileRoot = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| line_column(text, s.start))
            .unwrap_or((0, 0));
        IdentityError::Toml {
            label: label.to_string(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })?;
    for (n, p) in root.person.iter().enumerate() {
        if p.id.trim().is_empty() {
            return Err(IdentityError::Invalid {
                label: label.to_string(),
                message: format!("person #{} has an empty `id`", n + 1),
            });
        }
    }
    Ok(ParsedFile {
        people: root.person,
        merge_same_names: root.merge_same_names,
    })
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_field() {
        let people = parse(
            r#"
[[person]]
id = "ahmed"
name = "Ahmed Karim"
emails = ["ahmed@example.com"]
names = ["Ahmed K."]
handles = ["ahmedk"]
external = { jira = "557058:f00", linear = "u_42" }

[[person]]
id = "ci"
bot = true
"#,
            "a.toml",
        )
        .unwrap()
        .people;
        assert_eq!(people.len(), 2);
        assert_eq!(people[0].external["jira"], "557058:f00");
        assert_eq!(people[1].bot, Some(true));
    }

    #[test]
    fn errors_say_where() {
        let err = parse("[[person]]\nid = \"a\"\nemails = [\"x\"\n", "b.toml").unwrap_err();
        match err {
            IdentityError::Toml {
                label,
                line,
                column,
                ..
            } => {
                assert_eq!(label, "b.toml");
                assert_eq!((line, column), (3, 14));
            }
            other => panic!("{other:?}"),
        }
        let err = parse("[[person]]\nid = \"a\"\nemail = \"x\"\n", "a.toml").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("a.toml:3:1: "), "{msg}");
        assert!(msg.contains("unknown field `email`"), "{msg}");
    }

    #[test]
    fn an_id_is_required() {
        assert!(parse("[[person]]\nname = \"x\"\n", "a").is_err());
        assert!(parse("[[person]]\nid = \" \"\n", "a").is_err());
    }
}
