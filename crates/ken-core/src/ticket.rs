//! Tickets from an issue tracker, as `ken tickets import` reads them.

use serde::{Deserialize, Serialize};

/// One issue or pull request of a tracker.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket {
    /// The tracker's id: `123` for GitHub, `PROJ-101` for Jira-style keys.
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub body: String,
    /// `open` or `closed` (lower case).
    pub state: String,
    /// `issue` or `pull`.
    #[serde(default = "issue_kind")]
    pub kind: String,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub assignees: Vec<String>,
    #[serde(default)]
    pub author: Option<String>,
    /// Seconds since the epoch.
    #[serde(default)]
    pub opened: Option<i64>,
    #[serde(default)]
    pub closed: Option<i64>,
    #[serde(default)]
    pub url: Option<String>,
    /// What the tracker itself links to this ticket: ids of other tickets
    /// (the pull requests that closed it) and commit shas.
    #[serde(default)]
    pub links: Vec<String>,
}

fn issue_kind() -> String {
    "issue".to_string()
}

impl Ticket {
    /// A bug report: labelled as one (bug, defect, regression, crash…).
    pub fn is_bug(&self) -> bool {
        self.labels.iter().any(|l| {
            let l = l.to_ascii_lowercase();
            ["bug", "defect", "regression", "crash", "incident", "error"]
                .iter()
                .any(|w| {
                    l.split(|c: char| !c.is_ascii_alphanumeric())
                        .any(|p| p == *w)
                })
        })
    }

    pub fn is_closed(&self) -> bool {
        self.state.eq_ignore_ascii_case("closed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bugs_are_told_by_their_labels() {
        let mut t = Ticket {
            labels: vec!["type: bug".into()],
            ..Default::default()
        };
        assert!(t.is_bug());
        t.labels = vec!["debugging-tools".into(), "enhancement".into()];
        assert!(!t.is_bug());
    }
}
