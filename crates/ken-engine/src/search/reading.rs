//! How one repository's search reads the question: a bug report without
//! that repository's issue-template lines and without environment dumps.

use crate::issue::{self, IssueQuery};
use crate::issue_template::IssueTemplate;
use crate::params::RankParams;
use crate::question::Question;

/// The question as one repository's lexical search reads it.
pub(super) struct Reading {
    /// The report, parsed after what was left out (None: not read as a
    /// report, or the lexical signals do not run).
    pub issue: Option<IssueQuery>,
    /// The text BM25 searches: the report's title `p.issue_title` times
    /// before its text.
    pub text: String,
}

/// A bug report ([`Question::report`], and only when the lexical signals
/// run) loses this repository's issue-template lines and its environment
/// dump when `p` says so, and is parsed for its title, frames, paths and
/// modules (again only when something was left out); its title weighs
/// more (`p.issue_title` copies of it before the text).
pub(super) fn read(
    q: &Question,
    lexical: bool,
    template: Option<&IssueTemplate>,
    p: &RankParams,
) -> Reading {
    use std::borrow::Cow;
    let is_issue = lexical && q.report;
    let text = match template {
        Some(t) if is_issue && p.issue_template_out => t.strip(&q.text),
        _ => Cow::Borrowed(q.text.as_str()),
    };
    let text = if is_issue && p.issue_env_out {
        let stripped = match issue::strip_environment(&text) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
        stripped.map_or(text, Cow::Owned)
    } else {
        text
    };
    let issue = match (&text, &q.parsed) {
        _ if !is_issue => None,
        (Cow::Borrowed(_), Some(parsed)) => Some(parsed.clone()),
        _ => Some(issue::parse(&text)),
    };
    let text = match &issue {
        Some(r) if p.issue_title > 0 => format!(
            "{}\n{}",
            vec![r.title.as_str(); p.issue_title].join("\n"),
            text
        ),
        _ => text.into_owned(),
    };
    Reading { issue, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_parsed_again_only_when_something_was_left_out() {
        let p = RankParams {
            issue_title: 2,
            ..RankParams::default()
        };
        let report = "Save fails\n\nsaving a file:\n```\nsave('x')\n```\n";
        let q = Question::read(report, p.issue_words);
        let r = read(&q, true, None, &p);
        assert_eq!(r.issue.as_ref(), q.parsed.as_ref());
        assert_eq!(r.text, format!("Save fails\nSave fails\n{report}"));
        // the dense-only search reads it as it is
        let r = read(&q, false, None, &p);
        assert!(r.issue.is_none());
        assert_eq!(r.text, report);
        // an environment dump is left out, and the rest parsed anew
        let dump =
            "Save fails\n\nsaving a file breaks\n\nnumpy: 1.2.3\npandas: 2.0.1\nscipy: 1.11.0\n";
        let q = Question::read(dump, p.issue_words);
        let r = read(&q, true, None, &p);
        assert!(r.text.contains("breaks") && !r.text.contains("pandas"));
        assert_eq!(r.issue.unwrap().title, "Save fails");
    }
}
