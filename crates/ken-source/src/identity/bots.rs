//! Recognising automation among commit authors, and GitHub's noreply
//! addresses.

/// Names (lower-cased) of well-known automation.
const BOT_NAMES: &[&str] = &[
    "dependabot",
    "dependabot-preview",
    "renovate",
    "renovate-bot",
    "renovatebot",
    "github-actions",
    "github action",
    "github actions",
    "actions-user",
    "github",
    "web-flow",
    "greenkeeper",
    "greenkeeperio-bot",
    "pre-commit-ci",
    "pre-commit.ci",
    "allcontributors",
    "all-contributors",
    "imgbot",
    "imgbotapp",
    "mergify",
    "snyk-bot",
    "semantic-release-bot",
    "travis ci",
    "travis-ci",
    "bors",
    "bors-ng",
    "homu",
    "k8s-ci-robot",
    "codecov",
    "pyup-bot",
    "pyup.io bot",
    "weblate",
    "transifex",
    "copilot",
    "deepsource-autofix",
    "restyled-io",
];

/// Whole addresses (lower-cased) used by automation.
const BOT_EMAILS: &[&str] = &[
    "noreply@github.com",
    "action@github.com",
    "actions@github.com",
    "github-actions@github.com",
    "bot@renovateapp.com",
    "support@dependabot.com",
    "support@greenkeeper.io",
    "bot@stickler-ci.com",
    "noreply@weblate.org",
];

/// Local parts that only automation uses (any domain but GitHub's
/// per-user noreply one, which people use).
const BOT_LOCAL_PARTS: &[&str] = &["noreply", "no-reply", "bot", "ci", "build", "autobuild"];

/// Is `name <email>` automation? `[bot]` accounts (GitHub apps), the
/// well-known bots by name or address, and addresses like `noreply@…`.
pub fn is_bot(name: &str, email: &str) -> bool {
    let name = name.trim().to_lowercase();
    let email = email.trim().trim_matches(['<', '>']).to_lowercase();
    if name.ends_with("[bot]") || name.ends_with("-bot") || name.ends_with(" bot") {
        return true;
    }
    if BOT_NAMES.contains(&name.as_str()) || BOT_EMAILS.contains(&email.as_str()) {
        return true;
    }
    let (local, domain) = email.rsplit_once('@').unwrap_or((email.as_str(), ""));
    if local.ends_with("[bot]") {
        return true;
    }
    if let Some(handle) = github_handle(&email) {
        return handle.ends_with("[bot]") || BOT_NAMES.contains(&handle.as_str());
    }
    !domain.is_empty() && BOT_LOCAL_PARTS.contains(&local)
}

/// The GitHub handle of a noreply address: `123+handle@users.noreply.github.com`
/// or the older `handle@users.noreply.github.com`, lower-cased.
pub fn github_handle(email: &str) -> Option<String> {
    let email = email.trim().to_lowercase();
    let local = email.strip_suffix("@users.noreply.github.com")?;
    let handle = match local.split_once('+') {
        Some((id, h)) if id.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => local,
    };
    (!handle.is_empty()).then(|| handle.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_bots() {
        for (name, email) in [
            (
                "dependabot[bot]",
                "49699333+dependabot[bot]@users.noreply.github.com",
            ),
            (
                "renovate[bot]",
                "29139614+renovate[bot]@users.noreply.github.com",
            ),
            (
                "github-actions",
                "41898282+github-actions[bot]@users.noreply.github.com",
            ),
            ("GitHub", "noreply@github.com"),
            ("Renovate Bot", "bot@renovateapp.com"),
            (
                "pre-commit-ci[bot]",
                "66853113+pre-commit-ci[bot]@users.noreply.github.com",
            ),
            ("Someone", "123+copilot@users.noreply.github.com"),
            ("Weblate", "noreply@weblate.org"),
        ] {
            assert!(is_bot(name, email), "{name} <{email}>");
        }
    }

    #[test]
    fn people_are_not_bots() {
        for (name, email) in [
            ("David Lord", "davidism@gmail.com"),
            ("Ahmed K.", "1234+ahmedk@users.noreply.github.com"),
            ("Abbot Costello", "abbot@example.com"),
            ("Robert", "bob@example.com"),
        ] {
            assert!(!is_bot(name, email), "{name} <{email}>");
        }
    }

    #[test]
    fn github_handles() {
        assert_eq!(
            github_handle("1234+AhmedK@users.noreply.github.com").as_deref(),
            Some("ahmedk")
        );
        assert_eq!(
            github_handle("ahmedk@users.noreply.github.com").as_deref(),
            Some("ahmedk")
        );
        assert_eq!(github_handle("ahmed@example.com"), None);
    }
}
