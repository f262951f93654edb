//! Requests as people write them (strings from flags, query parameters or
//! tool arguments), parsed and checked once here for every edge: times,
//! languages, path globs, modes.

use globset::Glob;
use ken_core::{Filters, Language};

use crate::search::{Mode, SearchRequest};
use crate::who::LogSearchRequest;
use crate::{EngineError, Result};

/// Filters as written: `--repo`, `--branch`, `--lang`, `--path`, `--author`, `--since`, `--until`.
#[derive(Debug, Clone, Default)]
pub struct FilterSpec {
    pub repos: Vec<String>,
    pub branches: Vec<String>,
    pub langs: Vec<String>,
    pub paths: Vec<String>,
    pub author: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
}

impl FilterSpec {
    /// Parse against `now` (seconds since the epoch) for ages like `2w`.
    pub fn parse(&self, now: i64) -> Result<Filters> {
        let mut languages = Vec::new();
        for l in self.langs.iter().filter(|l| !l.trim().is_empty()) {
            languages.push(parse_language(l)?);
        }
        let mut path_globs = Vec::new();
        for g in self.paths.iter().filter(|g| !g.trim().is_empty()) {
            Glob::new(g).map_err(|e| {
                EngineError::bad_input(format!("bad path glob `{g}`: {e}"))
                    .with_hint("globs look like `src/**/*.py` or `crates/core`")
            })?;
            path_globs.push(g.clone());
        }
        let time = |t: &Option<String>| -> Result<Option<i64>> {
            t.as_deref()
                .filter(|t| !t.trim().is_empty())
                .map(|t| crate::time::parse_time(t, now))
                .transpose()
        };
        Ok(Filters {
            repos: self
                .repos
                .iter()
                .filter(|r| !r.trim().is_empty())
                .cloned()
                .collect(),
            branches: self
                .branches
                .iter()
                .map(|b| b.trim().to_string())
                .filter(|b| !b.is_empty())
                .collect(),
            languages,
            path_globs,
            author: self.author.clone().filter(|a| !a.trim().is_empty()),
            since: time(&self.since)?,
            until: time(&self.until)?,
        })
    }
}

/// A language by any of its names (`python`, `py`, `ts`...).
pub fn parse_language(name: &str) -> Result<Language> {
    Language::parse(name).ok_or_else(|| {
        let known: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
        EngineError::bad_input(format!(
            "unknown language `{name}` (known: {})",
            known.join(", ")
        ))
    })
}

/// `hybrid`, `lexical` or `semantic`.
pub fn parse_mode(name: &str) -> Result<Mode> {
    match name.trim().to_ascii_lowercase().as_str() {
        "" | "hybrid" => Ok(Mode::Hybrid),
        "lexical" => Ok(Mode::Lexical),
        "semantic" => Ok(Mode::Semantic),
        other => Err(EngineError::bad_input(format!(
            "unknown search mode `{other}`: use hybrid, lexical or semantic"
        ))),
    }
}

/// A query's `branch:NAME` words taken out: the query left, and the branches.
fn branch_terms(query: &str) -> (String, Vec<String>) {
    let mut branches = Vec::new();
    let mut words = Vec::new();
    for w in query.split_whitespace() {
        match w.strip_prefix("branch:") {
            Some(b) if !b.is_empty() => branches.push(b.to_string()),
            _ => words.push(w),
        }
    }
    if branches.is_empty() {
        return (query.to_string(), branches);
    }
    (words.join(" "), branches)
}

/// Most results one search may ask for.
pub const MAX_RESULTS: usize = 1000;

impl SearchRequest {
    /// A search for `query` with filters as written; `limit` is clamped to
    /// 1..=[`MAX_RESULTS`].
    pub fn parse(
        query: &str,
        limit: usize,
        filters: &FilterSpec,
        files: bool,
        mode: Mode,
        now: i64,
    ) -> Result<SearchRequest> {
        if query.trim().is_empty() {
            return Err(EngineError::bad_input("nothing to search for")
                .with_hint("give words, an identifier or a question, e.g. `parse_config`"));
        }
        let (query, branches) = branch_terms(query);
        if query.trim().is_empty() {
            return Err(
                EngineError::bad_input("nothing to search for beside the branch")
                    .with_hint("give words, an identifier or a question after `branch:NAME`"),
            );
        }
        let mut filters = filters.parse(now)?;
        filters.branches.extend(branches);
        filters.branches.dedup();
        Ok(SearchRequest {
            query,
            limit: limit.clamp(1, MAX_RESULTS),
            filters,
            files,
            mode,
        })
    }
}

impl LogSearchRequest {
    /// A history search with times as written (`2w`, `2024-05-01`; blank: none).
    pub fn parse(
        query: &str,
        repos: Vec<String>,
        limit: usize,
        author: Option<String>,
        since: Option<&str>,
        until: Option<&str>,
        now: i64,
    ) -> Result<LogSearchRequest> {
        let time = |t: Option<&str>| {
            t.filter(|t| !t.trim().is_empty())
                .map(|t| crate::time::parse_time(t, now))
                .transpose()
        };
        Ok(LogSearchRequest {
            query: query.to_string(),
            repos,
            limit: limit.clamp(1, MAX_RESULTS),
            author: author.filter(|a| !a.trim().is_empty()),
            since: time(since)?,
            until: time(until)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn filters_are_parsed_and_checked() {
        let now = 1_700_000_000;
        let f = FilterSpec {
            repos: vec!["flask".into(), "".into()],
            branches: vec![" 2.3.x ".into(), " ".into()],
            langs: vec!["py".into()],
            paths: vec!["src/**".into()],
            author: Some("ada".into()),
            since: Some("2w".into()),
            until: None,
        }
        .parse(now)
        .unwrap();
        assert_eq!(f.repos, vec!["flask".to_string()]);
        assert_eq!(f.branches, vec!["2.3.x".to_string()]);
        assert_eq!(f.languages, vec![Language::Python]);
        assert_eq!(f.since, Some(now - 14 * 86_400));
        let bad_lang = FilterSpec {
            langs: vec!["klingon".into()],
            ..FilterSpec::default()
        };
        assert_eq!(bad_lang.parse(now).unwrap_err().kind(), ErrorKind::BadInput);
        let bad_glob = FilterSpec {
            paths: vec!["src/[".into()],
            ..FilterSpec::default()
        };
        assert!(
            bad_glob
                .parse(now)
                .unwrap_err()
                .to_string()
                .contains("glob")
        );
        let bad_time = FilterSpec {
            since: Some("last tuesday".into()),
            ..FilterSpec::default()
        };
        assert_eq!(bad_time.parse(now).unwrap_err().kind(), ErrorKind::BadInput);
    }

    #[test]
    fn searches_need_words_and_keep_limits_sane() {
        let f = FilterSpec::default();
        assert!(SearchRequest::parse("  ", 10, &f, false, Mode::Hybrid, 0).is_err());
        let r = SearchRequest::parse("x", 0, &f, false, Mode::Hybrid, 0).unwrap();
        assert_eq!(r.limit, 1);
        let r = SearchRequest::parse("x", usize::MAX, &f, false, Mode::Hybrid, 0).unwrap();
        assert_eq!(r.limit, MAX_RESULTS);
        let r =
            SearchRequest::parse("branch:2.3.x  send_file", 5, &f, false, Mode::Hybrid, 0).unwrap();
        assert_eq!(
            (r.query.as_str(), r.filters.branches),
            ("send_file", vec!["2.3.x".into()])
        );
        assert!(SearchRequest::parse("branch:main", 5, &f, false, Mode::Hybrid, 0).is_err());
        assert_eq!(parse_mode("Lexical").unwrap(), Mode::Lexical);
        assert!(parse_mode("fuzzy").is_err());
    }
}
