//! Listing the repositories of an organisation from its code host's REST
//! API: a GitHub organisation (or user) or a GitLab group (subgroups
//! included), so that a whole organisation can be indexed without naming
//! each repository.
//!
//! The API URL is a URL the caller chose, so it goes through the same SSRF
//! policy as a clone ([`crate::check_remote`]): the client connects only to
//! the addresses checked, follows no redirect, and follows a pagination
//! link only on the API's own scheme, host and port (the token is sent with
//! every request). Rate limits are waited out up to the caller's
//! `max_wait`; past it the error says when the limit resets and how a token
//! raises it. The token never appears in a message, and each page's body
//! is read up to a bound, then judged entry by entry: an entry without the
//! fields a repository needs is skipped, not fatal.

use std::collections::HashSet;
use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::Url;
use reqwest::blocking::Client;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use serde_json::Value;

use crate::remote::{CheckedRemote, RemotePolicy, check_remote};
use crate::{SourceError, redact};

/// Pages fetched at most: a listing that goes on longer is taken as a loop.
const MAX_PAGES: usize = 10_000;
/// Bytes read of one page at most (100 repositories are ~600 KB on GitHub).
const MAX_BODY_BYTES: u64 = 32 << 20;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// Retries of a page the server failed (5xx), a second apart.
const SERVER_RETRIES: u32 = 2;
/// The wait for a rate limit that says neither `retry-after` nor its reset.
const DEFAULT_LIMIT_WAIT_SECS: u64 = 60;
const USER_AGENT: &str = concat!("ken/", env!("CARGO_PKG_VERSION"));

/// Which code host's API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    GitHub,
    GitLab,
}

impl HostKind {
    fn default_api(self) -> &'static str {
        match self {
            HostKind::GitHub => "https://api.github.com",
            HostKind::GitLab => "https://gitlab.com/api/v4",
        }
    }

    /// The environment variable a user sets the token in.
    fn token_var(self) -> &'static str {
        match self {
            HostKind::GitHub => "GITHUB_TOKEN",
            HostKind::GitLab => "GITLAB_TOKEN",
        }
    }
}

/// Whose repositories to list, where, and how.
#[derive(Debug, Clone)]
pub struct HostQuery {
    pub kind: HostKind,
    /// GitHub: organisation or user login. GitLab: group full path (e.g.
    /// "gitlab-org/security"), URL-encoded by the client.
    pub owner: String,
    /// API base, e.g. "https://api.github.com" (default for GitHub) or
    /// "https://gitlab.com/api/v4" (default for GitLab); GitHub Enterprise
    /// and self-hosted GitLab give their own.
    pub api_url: Option<String>,
    /// Bearer token (GitHub: `Authorization: Bearer T`; GitLab:
    /// `PRIVATE-TOKEN: T`). Never appears in an error message or log.
    pub token: Option<String>,
    /// Longest the client waits in total for rate limits to reset before
    /// giving up with an error that says when the limit resets.
    pub max_wait: Duration,
}

/// One repository of the listing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HostRepo {
    /// "owner/name" (GitHub full_name; GitLab path_with_namespace).
    pub full_name: String,
    /// https clone URL (GitHub clone_url; GitLab http_url_to_repo).
    pub clone_url: String,
    pub default_branch: Option<String>,
    pub archived: bool,
    pub fork: bool,
    /// GitLab `empty_repo` (true: no commits); always false for GitHub,
    /// whose `size == 0` is not reliable.
    pub empty: bool,
}

/// Every repository of an owner, and what it took to list them.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HostListing {
    pub repos: Vec<HostRepo>,
    /// Pages fetched.
    pub pages: usize,
    /// Seconds spent waiting for rate limits.
    pub waited_secs: u64,
}

/// Every repository of `q.owner` on its host, following pagination and
/// waiting out rate limits (see the module docs).
pub fn list_repositories(q: &HostQuery, policy: RemotePolicy) -> Result<HostListing, SourceError> {
    let api = q
        .api_url
        .as_deref()
        .unwrap_or(q.kind.default_api())
        .trim_end_matches('/')
        .to_string();
    let checked = check_remote(&api, policy)?;
    Lister::new(q, &api, &checked)?.run()
}

/// One answer of the API: its status, headers and (bounded) body.
struct Page {
    url: Url,
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// A listing in progress.
struct Lister<'a> {
    q: &'a HostQuery,
    api: String,
    base: Url,
    client: Client,
    /// The header carrying the token, marked sensitive.
    auth: Option<(HeaderName, HeaderValue)>,
    listing: HostListing,
}

impl<'a> Lister<'a> {
    fn new(q: &'a HostQuery, api: &str, checked: &CheckedRemote) -> Result<Self, SourceError> {
        let shown = redact(api);
        let user = |message: String| SourceError::Host {
            url: shown.clone(),
            message,
        };
        let base = Url::parse(api).map_err(|e| user(format!("not a valid API URL ({e})")))?;
        if !matches!(base.scheme(), "https" | "http") {
            return Err(user("the API URL must be https:// (or http://)".into()));
        }
        validate_owner(q.kind, &q.owner).map_err(user)?;
        let auth = auth_header(q).map_err(user)?;
        let client = build_client(checked).map_err(|message| SourceError::HostService {
            url: shown.clone(),
            message,
        })?;
        Ok(Lister {
            q,
            api: api.to_string(),
            base,
            client,
            auth,
            listing: HostListing::default(),
        })
    }

    fn run(mut self) -> Result<HostListing, SourceError> {
        let mut url = self.first_url()?;
        let mut seen = HashSet::from([url.to_string()]);
        let mut tried_user = false;
        loop {
            let page = self.fetch(&url)?;
            if page.status == 404
                && self.q.kind == HostKind::GitHub
                && !tried_user
                && self.listing.pages == 0
            {
                // not an organisation: perhaps a user
                tried_user = true;
                url = self.parse_url(format!(
                    "{}/users/{}/repos?per_page=100&type=owner",
                    self.api, self.q.owner
                ))?;
                seen.insert(url.to_string());
                continue;
            }
            self.take(&page)?;
            let Some(next) = self.next_url(&page)? else {
                break;
            };
            if !seen.insert(next.to_string()) {
                break;
            }
            if self.listing.pages >= MAX_PAGES {
                let message = format!("more than {MAX_PAGES} pages: stopped, taken as a loop");
                return Err(self.service_error(&next, message));
            }
            if header_u64(&page.headers, REMAINING) == Some(0) {
                self.wait_for_limit(&page.headers, &next)?;
            }
            url = next;
        }
        Ok(self.listing)
    }

    fn first_url(&self) -> Result<Url, SourceError> {
        let (api, owner) = (&self.api, &self.q.owner);
        self.parse_url(match self.q.kind {
            HostKind::GitHub => format!("{api}/orgs/{owner}/repos?per_page=100&type=all"),
            HostKind::GitLab => format!(
                "{api}/groups/{}/projects?include_subgroups=true&per_page=100&order_by=id&sort=asc",
                percent_encode(owner)
            ),
        })
    }

    fn parse_url(&self, url: String) -> Result<Url, SourceError> {
        Url::parse(&url).map_err(|e| SourceError::Host {
            url: self.shown(&url),
            message: format!("not a valid URL ({e})"),
        })
    }

    /// One page, once any rate limit is waited out and server failures retried.
    fn fetch(&mut self, url: &Url) -> Result<Page, SourceError> {
        let mut failures = 0;
        loop {
            let page = self.request(url)?;
            if is_rate_limited(&page) {
                self.wait_for_limit(&page.headers, url)?;
            } else if page.status >= 500 && failures < SERVER_RETRIES {
                failures += 1;
                pause(Duration::from_secs(1));
            } else {
                return Ok(page);
            }
        }
    }

    fn request(&self, url: &Url) -> Result<Page, SourceError> {
        let mut request = self.client.get(url.clone());
        if self.q.kind == HostKind::GitHub {
            request = request
                .header(ACCEPT, "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28");
        }
        if let Some((name, value)) = &self.auth {
            request = request.header(name.clone(), value.clone());
        }
        let mut response = request.send().map_err(|e| {
            let message = if e.is_timeout() {
                format!("no answer within {} s", REQUEST_TIMEOUT.as_secs())
            } else {
                format!("cannot reach the API: {}", error_chain(&e.without_url()))
            };
            self.service_error(url, message)
        })?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        (&mut response)
            .take(MAX_BODY_BYTES + 1)
            .read_to_end(&mut body)
            .map_err(|e| self.service_error(url, format!("reading the answer failed: {e}")))?;
        if body.len() as u64 > MAX_BODY_BYTES {
            let message = format!("a page larger than {} MiB: refused", MAX_BODY_BYTES >> 20);
            return Err(self.service_error(url, message));
        }
        Ok(Page {
            url: url.clone(),
            status,
            headers,
            body,
        })
    }

    /// Add a page's repositories to the listing, or fail with what its status means.
    fn take(&mut self, page: &Page) -> Result<(), SourceError> {
        if !(200..300).contains(&page.status) {
            return Err(self.status_error(page));
        }
        let repos = parse_repos(self.q.kind, &page.body).map_err(|what| {
            let message = format!(
                "the API answered {} with {what}, not the JSON array of repositories expected: is {} the API URL (e.g. {})?",
                page.status,
                self.shown(&self.api),
                self.q.kind.default_api()
            );
            if self.q.api_url.is_some() {
                self.user_error(&page.url, message)
            } else {
                self.service_error(&page.url, message)
            }
        })?;
        self.listing.repos.extend(repos);
        self.listing.pages += 1;
        Ok(())
    }

    /// The error a page's unsuccessful status means.
    fn status_error(&self, page: &Page) -> SourceError {
        let (owner, var) = (&self.q.owner, self.q.kind.token_var());
        let said = server_message(&page.body)
            .map(|m| format!(" (the server said: {m})"))
            .unwrap_or_default();
        let url = &page.url;
        match page.status {
            401 if self.q.token.is_some() => self.user_error(url, format!(
                "the token was refused: set {var} to a token that can read {owner}{said}"
            )),
            401 => self.user_error(url, format!(
                "the API asks for a token: set {var} to a token that can read {owner}{said}"
            )),
            403 => self.user_error(url, format!(
                "access forbidden: set {var} to a token that can read {owner}{said}"
            )),
            404 => self.user_error(url, format!(
                "no organisation, user or group named {owner} (or the token cannot see it){said}"
            )),
            s @ 300..=399 => {
                let to = page.headers.get("location").and_then(|v| v.to_str().ok());
                let to = to.map(|l| self.shown(l)).unwrap_or_else(|| "?".into());
                self.user_error(url, format!(
                    "the API answered {s}, a redirect to {to}, which is not followed: give the API URL it points at"
                ))
            }
            s @ 500.. => self.service_error(url, format!(
                "the server failed ({s}) {} times: try again later{said}",
                SERVER_RETRIES + 1
            )),
            s => self.user_error(url, format!("the API answered {s}{said}")),
        }
    }

    /// The next page to fetch: the `Link` header's `rel="next"`, or for
    /// GitLab `X-Next-Page`. Only on the API's own origin.
    fn next_url(&self, page: &Page) -> Result<Option<Url>, SourceError> {
        let link = header_values(&page.headers, "link").join(",");
        let next = match next_link(&link) {
            Some(target) => page.url.join(&target).map_err(|e| {
                self.service_error(&page.url, format!("a next link that is no URL ({e})"))
            })?,
            None if self.q.kind == HostKind::GitLab => {
                let n = header_values(&page.headers, "x-next-page").join("");
                let n = n.trim();
                if n.is_empty() {
                    return Ok(None);
                }
                if !n.bytes().all(|b| b.is_ascii_digit()) {
                    let message = format!("a bad X-Next-Page header `{}`", self.scrub(n));
                    return Err(self.service_error(&page.url, message));
                }
                with_page(&page.url, n)
            }
            None => return Ok(None),
        };
        if !same_origin(&next, &self.base) {
            let message = format!(
                "the next page is at {}, not on the API's scheme, host and port: not followed (give the API URL of that host if it is the right one)",
                self.shown(next.as_str())
            );
            return Err(self.user_error(&page.url, message));
        }
        Ok(Some(next))
    }

    /// Sleep until the rate limit `headers` tell of resets, unless the total
    /// wait would pass `max_wait`.
    fn wait_for_limit(&mut self, headers: &HeaderMap, url: &Url) -> Result<(), SourceError> {
        let now = now_epoch();
        let secs = limit_wait_secs(headers, now);
        let total = self.listing.waited_secs.saturating_add(secs);
        if Duration::from_secs(total) > self.q.max_wait {
            let hint = if self.q.token.is_some() {
                format!("wait, or set {} to another token", self.q.kind.token_var())
            } else {
                format!(
                    "set {} to a token (authenticated requests get a far higher limit), or wait",
                    self.q.kind.token_var()
                )
            };
            let message = format!(
                "the API's rate limit is spent; it resets at {} (in {secs} s), past the {} s allowed to wait: {hint}",
                utc(now.saturating_add(secs)),
                self.q.max_wait.as_secs()
            );
            return Err(self.user_error(url, message));
        }
        pause(Duration::from_secs(secs));
        self.listing.waited_secs = total;
        Ok(())
    }

    fn scrub(&self, message: &str) -> String {
        match self.q.token.as_deref() {
            Some(t) if !t.is_empty() => message.replace(t, "***"),
            _ => message.to_string(),
        }
    }

    fn shown(&self, url: &str) -> String {
        self.scrub(&redact(url))
    }

    fn user_error(&self, url: &Url, message: String) -> SourceError {
        SourceError::Host {
            url: self.shown(url.as_str()),
            message: self.scrub(&message),
        }
    }

    fn service_error(&self, url: &Url, message: String) -> SourceError {
        SourceError::HostService {
            url: self.shown(url.as_str()),
            message: self.scrub(&message),
        }
    }
}

fn build_client(checked: &CheckedRemote) -> Result<Client, String> {
    let mut builder = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(USER_AGENT);
    if checked.pinned() {
        builder = crate::pin::pin_client(builder, &checked.host, &checked.addrs);
    }
    builder
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {}", error_chain(&e)))
}

/// The header that carries the token, if one is given.
fn auth_header(q: &HostQuery) -> Result<Option<(HeaderName, HeaderValue)>, String> {
    let Some(token) = q.token.as_deref().filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let (name, value) = match q.kind {
        HostKind::GitHub => (AUTHORIZATION, format!("Bearer {token}")),
        HostKind::GitLab => (HeaderName::from_static("private-token"), token.to_string()),
    };
    let mut value = HeaderValue::from_str(&value).map_err(|_| {
        format!(
            "the token has characters a header cannot carry (a stray newline?): check {}",
            q.kind.token_var()
        )
    })?;
    value.set_sensitive(true);
    Ok(Some((name, value)))
}

/// An owner that names one path on the API: path segments of letters,
/// digits, `-`, `_` and `.` (not all dots); `/` only between GitLab groups.
fn validate_owner(kind: HostKind, owner: &str) -> Result<(), String> {
    let segment_ok = |s: &str| {
        !s.is_empty()
            && !s.bytes().all(|b| b == b'.')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let ok = match kind {
        HostKind::GitHub => segment_ok(owner),
        HostKind::GitLab => owner.split('/').all(segment_ok),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{owner}` is not a valid {} name",
            match kind {
                HostKind::GitHub => "organisation or user",
                HostKind::GitLab => "group path (e.g. gitlab-org/security)",
            }
        ))
    }
}

/// `s` with every byte but the unreserved ones percent-encoded (`/` as `%2F`).
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The repositories of a page's body; Err says what the body is instead
/// of a JSON array. Entries without a name or a clone URL are skipped.
fn parse_repos(kind: HostKind, body: &[u8]) -> Result<Vec<HostRepo>, String> {
    let value: Value = serde_json::from_slice(body).map_err(|_| {
        if body.is_empty() {
            "an empty body".to_string()
        } else {
            "a body that is not JSON".to_string()
        }
    })?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(_) => return Err("a JSON object".into()),
        _ => return Err("a JSON value".into()),
    };
    Ok(items
        .iter()
        .filter_map(|item| repo_of(kind, item))
        .collect())
}

fn repo_of(kind: HostKind, item: &Value) -> Option<HostRepo> {
    let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
    let flag = |key: &str| item.get(key).and_then(Value::as_bool).unwrap_or(false);
    let (name_key, url_key) = match kind {
        HostKind::GitHub => ("full_name", "clone_url"),
        HostKind::GitLab => ("path_with_namespace", "http_url_to_repo"),
    };
    let full_name = text(name_key).filter(|n| !n.trim().is_empty())?;
    // whether the URL may be cloned is the clone policy's to say (the
    // caller checks each one), not the listing's
    let clone_url = text(url_key).filter(|u| crate::is_url(u))?;
    let (fork, empty) = match kind {
        HostKind::GitHub => (flag("fork"), false),
        HostKind::GitLab => (
            item.get("forked_from_project")
                .is_some_and(|f| !f.is_null()),
            flag("empty_repo"),
        ),
    };
    Some(HostRepo {
        full_name,
        clone_url,
        default_branch: text("default_branch").filter(|b| !b.is_empty()),
        archived: flag("archived"),
        fork,
        empty,
    })
}

/// The target of the `rel="next"` part of a `Link` header value: parts
/// `<url>; param; …` separated by commas, in any order, `rel` a
/// space-separated list, quoted or not.
fn next_link(header: &str) -> Option<String> {
    let mut rest = header;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let close = after.find('>')?;
        let target = &after[..close];
        let params_end = after[close..].find(',').map_or(after.len(), |c| close + c);
        let params = &after[close + 1..params_end];
        let is_next = params.split(';').any(|p| {
            let Some((key, value)) = p.split_once('=') else {
                return false;
            };
            key.trim().eq_ignore_ascii_case("rel")
                && value
                    .trim()
                    .trim_matches('"')
                    .split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("next"))
        });
        if is_next {
            return Some(target.trim().to_string());
        }
        rest = &after[params_end..];
    }
    None
}

/// `url` with its `page` query parameter set to `n`.
fn with_page(url: &Url, n: &str) -> Url {
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "page")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let mut next = url.clone();
    next.query_pairs_mut()
        .clear()
        .extend_pairs(pairs)
        .append_pair("page", n);
    next
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
        && a.username() == b.username()
        && a.password() == b.password()
}

/// The rate-limit headers of GitHub (`x-ratelimit-*`) and GitLab (`ratelimit-*`).
const REMAINING: [&str; 2] = ["x-ratelimit-remaining", "ratelimit-remaining"];
const RESET: [&str; 2] = ["x-ratelimit-reset", "ratelimit-reset"];

fn is_rate_limited(page: &Page) -> bool {
    matches!(page.status, 403 | 429)
        && (header_u64(&page.headers, REMAINING) == Some(0)
            || page.headers.contains_key(RETRY_AFTER))
}

/// Seconds to wait for a rate limit: `retry-after`, else until the reset
/// (1 s when it is past), else a minute.
fn limit_wait_secs(headers: &HeaderMap, now: u64) -> u64 {
    if let Some(secs) = header_u64(headers, ["retry-after"; 2]) {
        return secs.max(1);
    }
    match header_u64(headers, RESET) {
        Some(reset) => reset.saturating_sub(now).max(1),
        None => DEFAULT_LIMIT_WAIT_SECS,
    }
}

/// The first of `names` present with a whole number.
fn header_u64(headers: &HeaderMap, names: [&str; 2]) -> Option<u64> {
    names.iter().find_map(|name| {
        let value = headers.get(*name)?.to_str().ok()?;
        value.trim().parse().ok()
    })
}

fn header_values(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_string))
        .collect()
}

/// The `message` (or `error`) a JSON error body carries, shortened.
fn server_message(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let message = ["message", "error"]
        .iter()
        .find_map(|k| value.get(*k).and_then(Value::as_str))?;
    let short: String = message
        .chars()
        .filter(|c| !c.is_control())
        .take(300)
        .collect();
    (!short.trim().is_empty()).then_some(short)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message
}

fn now_epoch() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Epoch seconds as `YYYY-MM-DD HH:MM:SS UTC`.
fn utc(epoch: u64) -> String {
    let (days, secs) = ((epoch / 86_400) as i64, epoch % 86_400);
    // days to civil date (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The one place the listing sleeps (rate limits, server retries).
fn pause(d: Duration) {
    std::thread::sleep(d);
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    use super::*;

    const ALLOW: RemotePolicy = RemotePolicy {
        allow_private: true,
    };
    const TOKEN: &str = "tok-s3cret-4242";

    /// One scripted answer; `{base}` in a header value becomes the server's URL.
    struct Reply {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    }

    fn reply(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
        Reply {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.to_string(),
        }
    }

    /// A request as the server got it: its target and headers (names in lower case).
    #[derive(Debug, Clone)]
    struct Seen {
        path: String,
        headers: Vec<(String, String)>,
    }

    impl Seen {
        fn header(&self, name: &str) -> Option<&str> {
            let found = self.headers.iter().find(|(k, _)| k == name);
            found.map(|(_, v)| v.as_str())
        }
    }

    struct Server {
        base: String,
        seen: Arc<Mutex<Vec<Seen>>>,
    }

    impl Server {
        fn seen(&self) -> Vec<Seen> {
            self.seen.lock().unwrap().clone()
        }
    }

    /// An HTTP/1.1 server on loopback that answers one connection per
    /// reply of `script`, in order, then stops listening.
    fn serve(script: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (own_base, log) = (base.clone(), seen.clone());
        std::thread::spawn(move || {
            for reply in script {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                let request = read_request(&stream);
                log.lock().unwrap().push(request);
                let mut out = format!(
                    "HTTP/1.1 {} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                    reply.status,
                    reply.body.len()
                );
                for (k, v) in &reply.headers {
                    out.push_str(&format!("{k}: {}\r\n", v.replace("{base}", &own_base)));
                }
                out.push_str("\r\n");
                out.push_str(&reply.body);
                let _ = stream.write_all(out.as_bytes());
                let _ = stream.flush();
            }
        });
        Server { base, seen }
    }

    fn read_request(stream: &std::net::TcpStream) -> Seen {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        Seen { path, headers }
    }

    fn query(kind: HostKind, owner: &str, api: &str, token: Option<&str>) -> HostQuery {
        HostQuery {
            kind,
            owner: owner.into(),
            api_url: Some(api.into()),
            token: token.map(str::to_string),
            max_wait: Duration::from_secs(30),
        }
    }

    fn github(name: &str, archived: bool, fork: bool) -> String {
        format!(
            r#"{{"full_name":"{name}","clone_url":"https://github.com/{name}.git","default_branch":"main","archived":{archived},"fork":{fork},"size":0}}"#
        )
    }

    fn page_of(repos: &[String]) -> String {
        format!("[{}]", repos.join(","))
    }

    fn in_secs(secs: u64) -> String {
        (now_epoch() + secs).to_string()
    }

    #[test]
    fn github_org_pages_are_followed_with_token_and_user_agent() {
        let at = |n: u32| format!("{{base}}/orgs/acme/repos?per_page=100&type=all&page={n}");
        let link1 = format!(r#"<{}>; rel="next", <{}>; rel="last""#, at(2), at(3));
        let link2 = format!(
            r#"<{}>; rel="first", <{}>; rel="last",<{}>; title="x"; rel="next", <{}>; rel="prev""#,
            at(1),
            at(3),
            at(3),
            at(1)
        );
        let link3 = format!(r#"<{}>; rel="prev", <{}>; rel="first""#, at(2), at(1));
        let server = serve(vec![
            reply(
                200,
                &[("Link", &link1)],
                &page_of(&[github("acme/a", false, false)]),
            ),
            reply(
                200,
                &[("link", &link2)],
                &page_of(&[github("acme/old", true, false)]),
            ),
            reply(
                200,
                &[("Link", &link3)],
                &page_of(&[github("acme/copy", false, true)]),
            ),
        ]);
        let q = query(HostKind::GitHub, "acme", &server.base, Some(TOKEN));
        let listing = list_repositories(&q, ALLOW).unwrap();
        assert_eq!(listing.pages, 3);
        let names: Vec<_> = listing.repos.iter().map(|r| r.full_name.as_str()).collect();
        assert_eq!(names, ["acme/a", "acme/old", "acme/copy"]);
        let (a, old, copy) = (&listing.repos[0], &listing.repos[1], &listing.repos[2]);
        assert!(!a.archived && !a.fork && !a.empty);
        assert_eq!(a.clone_url, "https://github.com/acme/a.git");
        assert_eq!(a.default_branch.as_deref(), Some("main"));
        assert!(old.archived && !old.fork);
        assert!(copy.fork && !copy.archived);
        let seen = server.seen();
        assert_eq!(seen[0].path, "/orgs/acme/repos?per_page=100&type=all");
        assert!(seen[1].path.ends_with("page=2") && seen[2].path.ends_with("page=3"));
        for s in &seen {
            assert_eq!(
                s.header("authorization"),
                Some(format!("Bearer {TOKEN}").as_str())
            );
            assert!(s.header("user-agent").unwrap().starts_with("ken/"), "{s:?}");
            assert_eq!(s.header("accept"), Some("application/vnd.github+json"));
            assert_eq!(s.header("x-github-api-version"), Some("2022-11-28"));
        }
    }

    #[test]
    fn github_user_is_tried_when_no_org_has_the_name() {
        let server = serve(vec![
            reply(404, &[], r#"{"message":"Not Found"}"#),
            reply(200, &[], &page_of(&[github("solo/tool", false, false)])),
        ]);
        let q = query(HostKind::GitHub, "solo", &server.base, None);
        let listing = list_repositories(&q, ALLOW).unwrap();
        assert_eq!(listing.repos.len(), 1);
        assert_eq!(listing.pages, 1);
        let seen = server.seen();
        assert_eq!(seen[1].path, "/users/solo/repos?per_page=100&type=owner");
        assert_eq!(seen[1].header("authorization"), None);
    }

    #[test]
    fn github_rate_limit_is_waited_out() {
        let reset = in_secs(1);
        let server = serve(vec![
            reply(
                403,
                &[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", &reset),
                ],
                r#"{"message":"API rate limit exceeded"}"#,
            ),
            reply(200, &[], &page_of(&[github("acme/a", false, false)])),
        ]);
        let q = query(HostKind::GitHub, "acme", &server.base, None);
        let listing = list_repositories(&q, ALLOW).unwrap();
        assert_eq!(listing.repos.len(), 1);
        assert!(listing.waited_secs >= 1, "{listing:?}");
        assert_eq!(server.seen().len(), 2);
    }

    #[test]
    fn a_spent_limit_is_waited_out_before_the_next_page() {
        let reset = in_secs(1);
        let link = r#"<{base}/orgs/acme/repos?page=2>; rel="next""#;
        let server = serve(vec![
            reply(
                200,
                &[
                    ("Link", link),
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", &reset),
                ],
                &page_of(&[github("acme/a", false, false)]),
            ),
            reply(200, &[], &page_of(&[github("acme/b", false, false)])),
        ]);
        let q = query(HostKind::GitHub, "acme", &server.base, None);
        let listing = list_repositories(&q, ALLOW).unwrap();
        assert_eq!((listing.pages, listing.repos.len()), (2, 2));
        assert!(listing.waited_secs >= 1, "{listing:?}");
    }

    #[test]
    fn a_rate_limit_past_max_wait_fails_with_when_and_how() {
        let reset = in_secs(3600);
        let server = serve(vec![reply(
            403,
            &[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", &reset),
            ],
            r#"{"message":"API rate limit exceeded"}"#,
        )]);
        let mut q = query(HostKind::GitHub, "acme", &server.base, Some(TOKEN));
        q.max_wait = Duration::from_secs(5);
        let started = std::time::Instant::now();
        let err = list_repositories(&q, ALLOW).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "it did not wait"
        );
        assert!(err.is_user_error());
        let message = err.to_string();
        assert!(message.contains("rate limit"), "{message}");
        assert!(message.contains("GITHUB_TOKEN"), "{message}");
        assert!(message.contains("UTC"), "{message}");
        assert!(!message.contains(TOKEN), "{message}");
    }

    #[test]
    fn gitlab_subgroup_pages_by_next_page_header() {
        let first = r#"[{"path_with_namespace":"a/b/fork","http_url_to_repo":"https://gl.example/a/b/fork.git","default_branch":"main","archived":false,"forked_from_project":{"id":1},"empty_repo":false},
            {"path_with_namespace":"a/b/new","http_url_to_repo":"https://gl.example/a/b/new.git","default_branch":null,"archived":false,"forked_from_project":null,"empty_repo":true}]"#;
        let second = r#"[{"path_with_namespace":"a/b/c/deep","http_url_to_repo":"https://gl.example/a/b/c/deep.git","default_branch":"dev","archived":true,"empty_repo":false}]"#;
        let server = serve(vec![
            reply(429, &[("Retry-After", "1")], r#"{"message":"Retry later"}"#),
            reply(200, &[("X-Next-Page", "2"), ("X-Page", "1")], first),
            reply(200, &[("X-Next-Page", ""), ("X-Page", "2")], second),
        ]);
        let api = format!("{}/api/v4", server.base);
        let q = query(HostKind::GitLab, "a/b", &api, Some(TOKEN));
        let listing = list_repositories(&q, ALLOW).unwrap();
        assert_eq!(listing.pages, 2);
        assert!(listing.waited_secs >= 1);
        let [fork, new, deep] = &listing.repos[..] else {
            panic!("{listing:?}")
        };
        assert!(fork.fork && !fork.empty && !fork.archived);
        assert!(new.empty && !new.fork && new.default_branch.is_none());
        assert!(deep.archived && !deep.fork);
        assert_eq!(deep.full_name, "a/b/c/deep");
        let seen = server.seen();
        assert_eq!(
            seen[0].path,
            "/api/v4/groups/a%2Fb/projects?include_subgroups=true&per_page=100&order_by=id&sort=asc"
        );
        assert!(seen[2].path.starts_with("/api/v4/groups/a%2Fb/projects?"));
        assert!(seen[2].path.ends_with("&page=2"), "{}", seen[2].path);
        for s in &seen {
            assert_eq!(s.header("private-token"), Some(TOKEN));
            assert_eq!(s.header("authorization"), None);
        }
    }

    #[test]
    fn a_refused_token_is_a_user_error_naming_the_variable() {
        let body = format!(r#"{{"message":"Bad credentials: {TOKEN}"}}"#);
        let server = serve(vec![reply(401, &[], &body)]);
        let q = query(HostKind::GitHub, "acme", &server.base, Some(TOKEN));
        let err = list_repositories(&q, ALLOW).unwrap_err();
        assert!(matches!(err, SourceError::Host { .. }) && err.is_user_error());
        let message = err.to_string();
        assert!(message.contains("token was refused"), "{message}");
        assert!(
            message.contains("GITHUB_TOKEN") && message.contains("acme"),
            "{message}"
        );
        assert!(!message.contains(TOKEN), "{message}");
    }

    #[test]
    fn a_missing_owner_is_a_user_error() {
        let server = serve(vec![
            reply(404, &[], r#"{"message":"404 Group Not Found"}"#),
            reply(404, &[], r#"{"message":"404 Group Not Found"}"#),
        ]);
        let api = format!("{}/api/v4", server.base);
        let q = query(HostKind::GitLab, "nobody", &api, None);
        let err = list_repositories(&q, ALLOW).unwrap_err();
        assert!(err.is_user_error());
        assert!(err.to_string().contains("named nobody"), "{err}");
        assert_eq!(server.seen().len(), 1, "GitLab has no user fallback");
    }

    #[test]
    fn a_next_link_to_another_host_is_not_followed() {
        let link = r#"<https://elsewhere.example/orgs/acme/repos?page=2>; rel="next""#;
        let server = serve(vec![reply(
            200,
            &[("Link", link)],
            &page_of(&[github("acme/a", false, false)]),
        )]);
        let q = query(HostKind::GitHub, "acme", &server.base, Some(TOKEN));
        let err = list_repositories(&q, ALLOW).unwrap_err().to_string();
        assert!(
            err.contains("elsewhere.example") && err.contains("not followed"),
            "{err}"
        );
        assert_eq!(server.seen().len(), 1);
    }

    #[test]
    fn a_body_that_is_not_an_array_is_an_error() {
        let server = serve(vec![reply(200, &[], r#"{"message":"hello"}"#)]);
        let q = query(HostKind::GitHub, "acme", &server.base, None);
        let err = list_repositories(&q, ALLOW).unwrap_err().to_string();
        assert!(err.contains("200") && err.contains("JSON object"), "{err}");
        assert!(err.contains("JSON array"), "{err}");
    }

    #[test]
    fn hostile_and_incomplete_entries_are_skipped() {
        let body = r#"[null, 1, "x", [], {},
            {"full_name": 5, "clone_url": "https://h/x.git"},
            {"full_name": "a/local", "clone_url": "/etc/passwd"},
            {"full_name": "", "clone_url": "https://h/empty.git"},
            {"full_name": "a/ok", "clone_url": "https://h/a/ok.git", "archived": "yes", "fork": null, "default_branch": 7}]"#;
        let server = serve(vec![reply(200, &[], body)]);
        let q = query(HostKind::GitHub, "a", &server.base, None);
        let listing = list_repositories(&q, ALLOW).unwrap();
        assert_eq!(
            listing.repos,
            [HostRepo {
                full_name: "a/ok".into(),
                clone_url: "https://h/a/ok.git".into(),
                default_branch: None,
                archived: false,
                fork: false,
                empty: false,
            }]
        );
    }

    #[test]
    fn server_failures_are_retried_then_reported() {
        let ok = page_of(&[github("acme/a", false, false)]);
        let server = serve(vec![
            reply(502, &[], ""),
            reply(503, &[], ""),
            reply(200, &[], &ok),
        ]);
        let q = query(HostKind::GitHub, "acme", &server.base, None);
        assert_eq!(list_repositories(&q, ALLOW).unwrap().repos.len(), 1);

        let server = serve(vec![
            reply(500, &[], ""),
            reply(500, &[], ""),
            reply(500, &[], ""),
        ]);
        let q = query(HostKind::GitHub, "acme", &server.base, None);
        let err = list_repositories(&q, ALLOW).unwrap_err();
        assert!(matches!(err, SourceError::HostService { .. }) && !err.is_user_error());
        assert!(err.to_string().contains("500"), "{err}");
        assert_eq!(server.seen().len(), 3);
    }

    #[test]
    fn a_next_link_seen_before_ends_the_listing() {
        let link = r#"<{base}/orgs/acme/repos?per_page=100&type=all>; rel="next""#;
        let server = serve(vec![
            reply(
                200,
                &[("Link", link)],
                &page_of(&[github("acme/a", false, false)]),
            ),
            reply(200, &[], "[]"),
        ]);
        let q = query(HostKind::GitHub, "acme", &server.base, None);
        let listing = list_repositories(&q, ALLOW).unwrap();
        assert_eq!((listing.pages, listing.repos.len()), (1, 1));
        assert_eq!(server.seen().len(), 1);
    }

    #[test]
    fn a_private_api_url_is_refused_before_any_request() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        for api in [
            format!("http://127.0.0.1:{port}"),
            format!("https://127.0.0.1:{port}"),
        ] {
            let q = query(HostKind::GitHub, "acme", &api, Some(TOKEN));
            let err = list_repositories(&q, RemotePolicy::default()).unwrap_err();
            assert!(matches!(err, SourceError::RefusedUrl { .. }), "{err}");
        }
        listener.set_nonblocking(true).unwrap();
        let pending = listener.accept();
        assert!(
            matches!(&pending, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a request reached the server"
        );
    }

    #[test]
    fn owners_that_would_escape_their_path_are_refused() {
        for (kind, owner) in [
            (HostKind::GitHub, "a/b"),
            (HostKind::GitHub, ".."),
            (HostKind::GitHub, ""),
            (HostKind::GitLab, "a/../b"),
            (HostKind::GitLab, "a//b"),
            (HostKind::GitLab, "a b"),
            (HostKind::GitLab, "a?x=1"),
        ] {
            let q = query(kind, owner, "http://127.0.0.1:9", None);
            let err = list_repositories(&q, ALLOW).unwrap_err();
            assert!(
                err.is_user_error() && err.to_string().contains("not a valid"),
                "{err}"
            );
        }
        assert_eq!(
            percent_encode("gitlab-org/security"),
            "gitlab-org%2Fsecurity"
        );
    }

    #[test]
    fn link_headers_are_read_in_any_order() {
        assert_eq!(
            next_link(r#"<u1>; rel="prev", <u2>; rel="next""#).as_deref(),
            Some("u2")
        );
        assert_eq!(
            next_link(r#"<u1>;rel=next;type="x",<u2>;rel="last""#).as_deref(),
            Some("u1")
        );
        assert_eq!(next_link(r#"<u1>; REL="last next""#).as_deref(), Some("u1"));
        assert_eq!(
            next_link(r#"<https://h/x?a=1&b=2>; rel="next""#).as_deref(),
            Some("https://h/x?a=1&b=2")
        );
        assert_eq!(next_link(r#"<u1>; rel="last", <u2>; rel="first""#), None);
        assert_eq!(next_link(r#"<u1; rel="next""#), None);
        assert_eq!(next_link(""), None);
    }

    #[test]
    fn reset_times_are_shown_in_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
    }
}
