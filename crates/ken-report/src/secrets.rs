//! Hardcoded secrets: a line scanner tuned for few false positives.
//!
//! Known key formats (AWS, GitHub, GitLab, Slack, Stripe, Google, OpenAI-style
//! keys, private key blocks, passwords in connection strings) are reported
//! with confidence `"high"` everywhere, test files and docs included. JWTs and
//! entropy-checked assignments of string literals to secret-looking names are
//! `"medium"` and are skipped in tests, fixtures, examples and docs. Values
//! that look like placeholders, variable references, hashes, UUIDs, regexes,
//! paths or words are never reported, nor are lines carrying an allow marker.
//!
//! A [`SecretHit`] holds the secret itself: show it only through
//! [`SecretHit::redacted`] and [`SecretHit::fingerprint`] (as its `Debug` does).

use regex::Regex;
use sha2::{Digest, Sha256};
use std::fmt;

/// Lines longer than this (in bytes) are minified code or data: only known
/// high-confidence formats are looked for, in their first `MAX_LINE` bytes.
const MAX_LINE: usize = 4_000;

/// Markers that silence a line.
const ALLOW_MARKERS: &[&str] = &[
    "kenning:allow-secret",
    "gitleaks:allow",
    "nosec",
    "pragma: allowlist secret",
];

/// Substrings (lower case) that make a value a placeholder or an example.
#[rustfmt::skip]
const PLACEHOLDERS: &[&str] = &[
    "example", "sample", "dummy", "placeholder", "changeme", "change_me", "change-me", "changeit",
    "insecure", "your_", "your-", "yourkey", "xxxx", "****", "...", "<", ">", "${", "{{", "%(",
    "redacted", "fake", "foobar", "1234", "abcd",
];

/// Words (lower case, leetspeak undone) that make up names and well-known
/// fake passwords, not secrets.
#[rustfmt::skip]
const TRIVIAL: &[&str] = &[
    "secret", "password", "passwd", "pass", "pwd", "pw", "token", "key", "admin", "root", "user",
    "guest", "none", "null", "undefined", "default", "hunter2", "letmein", "qwerty", "1234",
    "12345", "123456", "my", "db", "api", "foo", "bar", "baz", "qux",
];

/// Demo passwords and words no real secret contains (lower case, letters
/// and digits only, leetspeak undone too; for a password in a URL, spelled
/// out in plain letters only).
#[rustfmt::skip]
const FAMOUS: &[&str] = &[
    "password", "passwd", "secret", "correcthorse", "opensesame", "hunter2", "letmein", "swordfish",
];

/// Words a password in a URL may be made of, with digits, and still be a
/// stand-in (`mypassword`, `secret123`, `adminpass`): these and [`TRIVIAL`]'s.
#[rustfmt::skip]
const DEMO_WORDS: &[&str] = &[
    "test", "testing", "dev", "demo", "local", "app", "super", "very", "strong", "word", "some",
    "postgres", "mysql", "redis", "mongo", "rabbit", "rabbitmq", "sa", "changeit", "welcome",
];

/// Hosts that are no particular machine (`host:5432`).
const PLACEHOLDER_HOSTS: &[&str] = &["host", "hostname", "server", "domain", "domain.com"];

/// Last word parts of a key that name something about a secret, not the secret.
#[rustfmt::skip]
const NOT_A_VALUE: &[&str] = &[
    "type", "types", "kind", "field", "fields", "name", "names", "label", "pattern", "regex", "re",
    "header", "headers", "url", "uri", "endpoint", "path", "file", "filename", "dir", "env", "var",
    "prefix", "suffix", "format", "mode", "method", "length", "len", "size", "count", "hint",
    "help", "message", "msg", "text", "title", "description", "error", "prompt", "id", "hash",
    "version", "ttl", "timeout", "expiry", "expires", "scope", "email", "user", "username", "host",
    "func", "function", "handler", "callback", "event", "state", "status", "flag", "option",
    "options", "attr", "param", "column", "class", "module", "oid",
];

/// Lock files and generated assets, not worth scanning.
#[rustfmt::skip]
const SKIP_NAMES: &[&str] = &[
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "cargo.lock",
    "gemfile.lock", "poetry.lock", "pipfile.lock", "composer.lock", "go.sum", "flake.lock",
    "packages.lock.json", "podfile.lock", "mix.lock", "pubspec.lock", "uv.lock", "deno.lock",
];
#[rustfmt::skip]
const SKIP_EXTENSIONS: &[&str] = &[
    ".lock", ".min.js", ".min.css", ".svg", ".map", ".png", ".jpg", ".jpeg", ".gif", ".ico",
    ".webp", ".pdf", ".woff", ".woff2", ".ttf", ".zip",
];

/// Extra checks on a known-format match.
#[derive(Clone, Copy)]
enum Extra {
    None,
    /// Slack tokens carry numeric ids.
    Slack,
    /// `sk-` is also a common word prefix (`sk-learn`): ask for a long, mixed, random body.
    OpenAi,
}

/// (rule, literals one of which the line must contain, length of the fixed
/// prefix, extra check, pattern whose group 1 is the secret).
type KnownSpec = (
    &'static str,
    &'static [&'static str],
    usize,
    Extra,
    &'static str,
);
#[rustfmt::skip]
const KNOWN: &[KnownSpec] = &[
    ("aws-access-key-id", &["AKIA", "ASIA", "ABIA", "ACCA"], 4, Extra::None,
        r"(?-u:\b)((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?-u:\b)"),
    ("github-token", &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], 4, Extra::None,
        r"(?-u:\b)(gh[pousr]_[A-Za-z0-9]{36})(?-u:\b)"),
    ("github-token", &["github_pat_"], 11, Extra::None,
        r"(?-u:\b)(github_pat_[A-Za-z0-9_]{82})(?-u:\b)"),
    ("gitlab-token", &["glpat-"], 6, Extra::None, r"(?-u:\b)(glpat-[A-Za-z0-9_-]{20,})"),
    ("slack-token", &["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"], 5, Extra::Slack,
        r"(?-u:\b)(xox[baprs]-[A-Za-z0-9-]{20,})"),
    ("slack-webhook", &["hooks.slack.com"], 33, Extra::None,
        r"(https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)"),
    ("stripe-key", &["k_live_"], 8, Extra::None,
        r"(?-u:\b)((?:sk|rk)_live_[A-Za-z0-9]{24,})(?-u:\b)"),
    ("google-api-key", &["AIza"], 4, Extra::None,
        r"(?-u:\b)(AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|$)"),
    ("openai-api-key", &["sk-"], 3, Extra::OpenAi, r"(?-u:\b)(sk-[A-Za-z0-9_-]{32,})"),
];

const PEM: &str =
    r"-----BEGIN (?:(?:RSA|EC|DSA|OPENSSH|PGP|ENCRYPTED) )?PRIVATE KEY(?: BLOCK)?-----";
const AWS_SECRET_NAME: &str = r"(?i)aws_?secret|secret_?access_?key";
const AWS_SECRET: &str = r"(?:^|[^A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)";
const JWT: &str = r"(?-u:\b)(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})";
/// `scheme://user:password@host`.
const CONNECTION: &str = concat!(
    r"(?i)(?-u:\b)(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|ftps?|sftp",
    r"|smtps?|mssql|sqlserver|oracle|ldaps?|https?|mqtts?|nats|clickhouse|couchdb)://",
    r#"(?P<user>[^\s:/@'"`<>]*):(?P<pw>[^\s@/'"`<>]+)@(?P<host>[A-Za-z0-9\[_][^\s/'"`?#]*)"#,
);
/// Any word a secret-looking key contains (a cheap prefilter).
const SECRET_WORDS: &str = r"(?i)pass|pwd|secret|token|api_?key|access_?key|private_?key|auth";
/// `key = "literal"` with `=`, `:`, `=>`, `:=`, an optional type annotation
/// and a few wrappers (`Some(`, `String::from(`…); never a function call.
const ASSIGN: &str = concat!(
    r#"(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)["'`]?\]?\s*"#,
    r"(?::\s*&?(?:'[a-z]+\s+)?[A-Za-z_][A-Za-z0-9_:<>\[\]]*\s*=|=>|:=|=|:)\s*",
    r"(?:Some\(|String::from\(|SecretString::(?:new|from)\(|SecretStr\(|Secret(?:::new)?\()?",
    r#"\s*[rbuf@]?(?:"(?P<dq>[^"\r\n]*)"|'(?P<sq>[^'\r\n]*)'|`(?P<bq>[^`\r\n]*)`)"#,
);
/// `KEY=value` / `key: value` unquoted, in config files (.env, YAML, INI…).
const ASSIGN_BARE: &str = concat!(
    r"^\s*(?:-\s+)?(?:export\s+)?(?P<key>[A-Za-z_][A-Za-z0-9_.\-]*)\s*[:=]\s*",
    r#"(?P<v>[^\s"'`#;,]{8,})\s*(?:[#;].*)?$"#,
);

/// A possible secret. `value` is the secret itself: it must never be printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretHit {
    /// The rule that matched, e.g. `aws-access-key-id`, `private-key`, `generic-assignment`.
    pub rule: String,
    /// The file the secret is in.
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// The secret itself; show [`SecretHit::redacted`] instead.
    pub value: String,
    /// `"high"` for a known key format, `"medium"` for JWTs and entropy-based assignments.
    pub confidence: String,
}

impl fmt::Debug for SecretHit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretHit")
            .field("rule", &self.rule)
            .field("path", &self.path)
            .field("line", &self.line)
            .field("value", &format_args!("{}", self.redacted()))
            .field("fingerprint", &format_args!("{}", self.fingerprint()))
            .field("confidence", &self.confidence)
            .finish()
    }
}

impl SecretHit {
    /// At most the first 4 characters of the value, `…` and its length
    /// (`AKIA…(20 chars)`); no characters at all under 12 chars, or for a
    /// password or a free-form secret (`…(8 chars)`).
    pub fn redacted(&self) -> String {
        let n = self.value.chars().count();
        // A key format's first characters are its public prefix (`AKIA`,
        // `ghp_`); a password's or a free-form secret's are part of the
        // secret, so none of them is shown.
        let free_form = matches!(
            self.rule.as_str(),
            "connection-string-password" | "generic-assignment"
        );
        let shown: String = if n >= 12 && !free_form {
            self.value.chars().take(4).collect()
        } else {
            String::new()
        };
        format!("{shown}…({n} chars)")
    }

    /// First 12 hex digits of SHA-256 of the value: the same secret gets the
    /// same fingerprint wherever it is found.
    pub fn fingerprint(&self) -> String {
        Sha256::digest(self.value.as_bytes())[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// A known format's compiled rule.
struct Known {
    rule: &'static str,
    hints: &'static [&'static str],
    prefix: usize,
    re: Regex,
    extra: Extra,
}

/// A finding on one line, before it gets its path and line number.
struct Found {
    rule: &'static str,
    value: String,
    confidence: &'static str,
}

/// What a path allows.
struct PathKind {
    /// Medium-confidence findings (not in tests, fixtures, examples or docs).
    medium: bool,
    /// Unquoted `key = value` assignments count (config files).
    config: bool,
}

/// The secret scanner: compiled rules, reusable across files and threads.
pub struct Scanner {
    known: Vec<Known>,
    /// Any literal a known format or a private key, JWT or URL needs.
    prefilter: Regex,
    /// Any word a secret-looking key name contains.
    secret_words: Regex,
    pem: Regex,
    aws_secret_name: Regex,
    aws_secret: Regex,
    jwt: Regex,
    connection: Regex,
    assign: Regex,
    assign_bare: Regex,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    /// Compiles the rules.
    pub fn new() -> Scanner {
        let re = |pattern: &str| Regex::new(pattern).expect("secret scanner pattern");
        let known: Vec<Known> = KNOWN
            .iter()
            .map(|&(rule, hints, prefix, extra, pattern)| Known {
                rule,
                hints,
                prefix,
                re: re(pattern),
                extra,
            })
            .collect();
        let literals: Vec<String> = known
            .iter()
            .flat_map(|k| k.hints.iter().copied())
            .chain(["PRIVATE KEY", "eyJ", "://"])
            .map(regex::escape)
            .collect();
        Scanner {
            known,
            prefilter: re(&literals.join("|")),
            secret_words: re(SECRET_WORDS),
            pem: re(PEM),
            aws_secret_name: re(AWS_SECRET_NAME),
            aws_secret: re(AWS_SECRET),
            jwt: re(JWT),
            connection: re(CONNECTION),
            assign: re(ASSIGN),
            assign_bare: re(ASSIGN_BARE),
        }
    }

    /// Scan a whole file's text. Lines are numbered from 1.
    pub fn scan_text(&self, path: &str, text: &str) -> Vec<SecretHit> {
        self.scan_lines(
            path,
            text.lines()
                .enumerate()
                .map(|(i, l)| (u32::try_from(i + 1).unwrap_or(u32::MAX), l)),
        )
    }

    /// Scan some lines of a file (e.g. the lines a commit added): (line
    /// number, line text). A private key's body is looked for on the next
    /// given lines only when their numbers follow on.
    pub fn scan_lines<'a>(
        &self,
        path: &str,
        lines: impl IntoIterator<Item = (u32, &'a str)>,
    ) -> Vec<SecretHit> {
        let lines: Vec<(u32, &str)> = lines.into_iter().collect();
        let kind = path_kind(path);
        let mut hits = Vec::new();
        let mut next = 0;
        while next < lines.len() {
            let (number, line) = lines[next];
            next += 1;
            let long = line.len() > MAX_LINE;
            let text = if long { head(line, MAX_LINE) } else { line };
            let mut found = Vec::new();
            // The literals the known formats, key blocks, JWTs and URLs need.
            let seen: Vec<&str> = self.prefilter.find_iter(text).map(|m| m.as_str()).collect();
            if !seen.is_empty() {
                self.known_formats(text, &seen, &mut found);
                if seen.contains(&"PRIVATE KEY")
                    && let Some((value, resume)) = self.private_key(text, &lines, next)
                {
                    push(&mut found, "private-key", &value, "high");
                    next = resume;
                }
            }
            let named = self.secret_words.is_match(text);
            if named && self.aws_secret_name.is_match(text) {
                self.aws_secret_key(text, &mut found);
            }
            if !long {
                if kind.medium && seen.contains(&"eyJ") {
                    for m in self.jwt.captures_iter(text).filter_map(|c| c.get(1)) {
                        if !is_placeholder(m.as_str(), false) {
                            push(&mut found, "jwt", m.as_str(), "medium");
                        }
                    }
                }
                if seen.contains(&"://") {
                    self.connection_strings(text, &mut found);
                }
                if kind.medium && named && !after_example(&lines, next - 1) {
                    self.assignments(text, kind.config, &mut found);
                }
            }
            if !found.is_empty() && !ALLOW_MARKERS.iter().any(|m| line.contains(m)) {
                hits.extend(found.into_iter().map(|f| SecretHit {
                    rule: f.rule.to_string(),
                    path: path.to_string(),
                    line: number,
                    value: f.value,
                    confidence: f.confidence.to_string(),
                }));
            }
        }
        hits
    }

    /// Whether a path is worth scanning at all: not a lock file, a minified
    /// bundle, a source map or an image/font/archive.
    pub fn wants_path(&self, path: &str) -> bool {
        !is_machine_written(path)
    }

    fn known_formats(&self, text: &str, seen: &[&str], found: &mut Vec<Found>) {
        for k in &self.known {
            if !k.hints.iter().any(|h| seen.contains(h)) {
                continue;
            }
            for m in k.re.captures_iter(text).filter_map(|c| c.get(1)) {
                let value = m.as_str();
                let body = value.get(k.prefix..).unwrap_or("");
                let plausible = match k.extra {
                    Extra::None => true,
                    Extra::Slack => body.bytes().any(|b| b.is_ascii_digit()),
                    Extra::OpenAi => {
                        let body = ["proj-", "svcacct-", "admin-"]
                            .iter()
                            .find_map(|p| body.strip_prefix(p))
                            .unwrap_or(body);
                        let (lower, upper, digit, _) = classes(body);
                        body.len() >= 32
                            && lower
                            && upper
                            && digit
                            && entropy(body) >= 3.5
                            && word_runs(body).is_none()
                    }
                };
                if plausible && distinct(body) >= 6 && !is_placeholder(value, false) {
                    push(found, k.rule, value, "high");
                }
            }
        }
    }

    /// A private key header with a body: the header and the body's first
    /// line, and where to resume scanning (after the block).
    fn private_key(
        &self,
        text: &str,
        lines: &[(u32, &str)],
        next: usize,
    ) -> Option<(String, usize)> {
        let header = self.pem.find(text)?;
        // The body on the same line, as in a JSON string: "...KEY-----\nMIIE...".
        let mut rest = text[header.end()..].trim_start();
        while let Some(r) = rest
            .strip_prefix("\\n")
            .or_else(|| rest.strip_prefix("\\r"))
        {
            rest = r.trim_start();
        }
        let run = base64_run(rest);
        let ends_cleanly = rest[run.len()..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, '\\' | '"' | '\'' | ' '));
        if run.len() >= 16 && ends_cleanly {
            return (!is_placeholder(run, false))
                .then(|| (format!("{}\n{run}", header.as_str()), next));
        }
        // The body on the following lines, after PEM/PGP headers (`Proc-Type: …`) and blank lines.
        let mut previous = lines.get(next.checked_sub(1)?)?.0;
        for (j, &(number, line)) in lines.iter().enumerate().skip(next).take(6) {
            if number != previous.saturating_add(1) {
                return None;
            }
            previous = number;
            let t = unquote(line);
            if t.is_empty() || is_pem_header(t) {
                continue;
            }
            let run = base64_run(t);
            if run.len() < 16 || run.len() != t.len() || is_placeholder(run, false) {
                return None;
            }
            return Some((format!("{}\n{run}", header.as_str()), block_end(lines, j)));
        }
        None
    }

    fn aws_secret_key(&self, text: &str, found: &mut Vec<Found>) {
        for m in self.aws_secret.captures_iter(text).filter_map(|c| c.get(1)) {
            let value = m.as_str();
            let (lower, upper, digit, symbol) = classes(value);
            if lower
                && upper
                && (digit || symbol)
                && entropy(value) >= 4.0
                && !is_placeholder(value, false)
            {
                push(found, "aws-secret-access-key", value, "high");
            }
        }
    }

    /// `scheme://user:password@host`: a finding unless the host is this
    /// machine or an example, or the password a placeholder.
    fn connection_strings(&self, text: &str, found: &mut Vec<Found>) {
        for c in self.connection.captures_iter(text) {
            let (Some(user), Some(pw), Some(host)) = (c.name("user"), c.name("pw"), c.name("host"))
            else {
                continue;
            };
            let pw = pw.as_str();
            // `${VAR}`, `%s`, `{password}`; raw `[]\{}|^` never appear in a real URL.
            let variable = |v: &str| {
                v.starts_with('$')
                    || v.contains("%s")
                    || v.contains(['[', ']', '\\', '{', '}', '|', '^', '<', '>'])
            };
            // A templated user (`https://{token}:x-oauth-basic@…`): the
            // secret is the variable; the password is a fixed literal.
            let variable = variable(pw) || variable(user.as_str());
            if pw.chars().count() >= 3
                && pw != user.as_str()
                && !user.as_str().eq_ignore_ascii_case("anonymous")
                && !variable
                && !placeholder_password(pw)
                && !placeholder_in(user.as_str())
                && !local_or_example_host(host.as_str())
            {
                push(found, "connection-string-password", pw, "high");
            }
        }
    }

    fn assignments(&self, text: &str, config: bool, found: &mut Vec<Found>) {
        let quoted = self.assign.captures_iter(text).filter_map(|c| {
            let value = c
                .name("dq")
                .or_else(|| c.name("sq"))
                .or_else(|| c.name("bq"))?;
            Some((c.name("key")?.as_str(), value.as_str()))
        });
        let bare = config
            .then(|| self.assign_bare.captures(text))
            .flatten()
            .and_then(|c| Some((c.name("key")?.as_str(), c.name("v")?.as_str())));
        for (key, value) in quoted.chain(bare) {
            let Some(strong) = secret_key(key) else {
                continue;
            };
            let value = ["Bearer ", "bearer ", "Basic ", "Token ", "token "]
                .iter()
                .find_map(|p| value.strip_prefix(p))
                .unwrap_or(value);
            let squash = |s: &str| {
                s.to_ascii_lowercase()
                    .replace(|c: char| !c.is_ascii_alphanumeric(), "")
            };
            if plausible_generic(value, strong) && !squash(key).contains(&squash(value)) {
                push(found, "generic-assignment", value, "medium");
            }
        }
    }
}

/// Adds a finding unless the line already has it (or one overlapping it):
/// earlier, more specific rules win.
fn push(found: &mut Vec<Found>, rule: &'static str, value: &str, confidence: &'static str) {
    if !found
        .iter()
        .any(|f| f.value.contains(value) || value.contains(f.value.as_str()))
    {
        found.push(Found {
            rule,
            value: value.to_string(),
            confidence,
        });
    }
}

/// Lock files, minified bundles, source maps, images, fonts and archives:
/// written by tools, not people (no secret of theirs, and not a hot file).
pub fn is_machine_written(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit(['/', '\\']).next().unwrap_or(&lower);
    SKIP_NAMES.contains(&name) || SKIP_EXTENSIONS.iter().any(|e| name.ends_with(e))
}

/// Whether the line at `at` sits in a documentation example: one of the
/// ten lines above it says "example" (`For example::`, an `Example:`
/// heading in a docstring, then a sample HTTP exchange), as the RFC samples
/// vendored libraries quote do.
fn after_example(lines: &[(u32, &str)], at: usize) -> bool {
    const WINDOW: u32 = 10;
    let (number, _) = lines[at];
    lines[at.saturating_sub(WINDOW as usize)..=at]
        .iter()
        .filter(|(n, _)| number.saturating_sub(*n) <= WINDOW)
        .any(|(_, l)| l.to_ascii_lowercase().contains("example"))
}

/// What a path allows: medium findings outside tests, fixtures, examples
/// and docs; unquoted assignments in config files.
fn path_kind(path: &str) -> PathKind {
    const DOCS: &[&str] = &[".md", ".markdown", ".rst", ".txt", ".adoc"];
    const CONFIGS: &[&str] = &[
        ".env",
        ".ini",
        ".cfg",
        ".conf",
        ".properties",
        ".yaml",
        ".yml",
    ];
    const SAMPLES: &[&str] = &[
        "spec", "specs", "example", "examples", "sample", "samples", "doc", "docs",
    ];
    let lower = path.to_ascii_lowercase().replace('\\', "/");
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let stem = path
        .rsplit(['/', '\\'])
        .next()
        .and_then(|n| n.split('.').next())
        .unwrap_or("");
    let testish = ["Test", "Tests", "Spec"].iter().any(|s| stem.ends_with(s))
        || lower.split(['/', '_', '-', '.']).any(|seg| {
            ["test", "fixture", "mock"]
                .iter()
                .any(|p| seg.starts_with(p))
                || SAMPLES.contains(&seg)
        });
    let doc = DOCS.iter().any(|e| name.ends_with(e));
    let config = name.starts_with(".env.") || CONFIGS.iter().any(|e| name.ends_with(e));
    PathKind {
        medium: !doc && !testish,
        config,
    }
}

/// Whether an assignment's key names a secret: `None` if not, `Some(true)`
/// if it says password or secret, `Some(false)` for tokens, keys and auth.
fn secret_key(key: &str) -> Option<bool> {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut after_lower = false;
    for c in key.chars() {
        let boundary = !c.is_ascii_alphanumeric() || (c.is_ascii_uppercase() && after_lower);
        if boundary && !current.is_empty() {
            parts.push(std::mem::take(&mut current));
        }
        after_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        if c.is_ascii_alphanumeric() {
            current.push(c.to_ascii_lowercase());
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    // `token_type`, `password_field`; `NEXT_PUBLIC_API_KEY` is meant to be seen.
    let public = parts.iter().any(|p| p == "public" || p == "publishable");
    if public || NOT_A_VALUE.contains(&parts.last()?.as_str()) {
        return None;
    }
    let strong = parts.iter().any(|p| {
        ["password", "passwd", "passphrase", "secret"]
            .iter()
            .any(|w| p.contains(w))
            || p == "pass"
            || p == "pwd"
    });
    let plain = parts.iter().any(|p| {
        (p.contains("token") && !p.starts_with("tokeniz"))
            || ["apikey", "accesskey", "privatekey", "authkey"]
                .iter()
                .any(|w| p.contains(w))
            || p == "auth"
    }) || parts
        .windows(2)
        .any(|w| ["api", "access", "private", "auth"].contains(&w[0].as_str()) && w[1] == "key");
    (strong || plain).then_some(strong)
}

/// Whether an assigned literal looks like a real secret.
fn plausible_generic(value: &str, strong_key: bool) -> bool {
    let n = value.chars().count();
    if !(8..=200).contains(&n) || is_placeholder(value, true) {
        return false;
    }
    let code = value.contains('\\')
        || value.contains("://")
        || value.contains("%s")
        || value.starts_with(['^', '$', '/', '~'])
        || value.starts_with("./")
        || value.ends_with('$')
        || (value.contains('[') && value.contains(']'))
        || (value.contains('(') && value.contains(')'))
        || (value.contains('{') && value.contains('}'));
    if code || value.chars().any(char::is_whitespace) || is_uuid(value) {
        return false;
    }
    let hex = value.bytes().all(|b| b.is_ascii_hexdigit());
    if hex && (n == 40 || n == 64) && !strong_key {
        return false;
    }
    let (lower, upper, digit, symbol) = classes(value);
    let kinds = [lower, upper, digit, symbol].iter().filter(|&&c| c).count();
    // Words are names and messages, except a password made of a word or two
    // with digits and symbols (`Summer2024!`).
    if let Some(runs) = word_runs(value)
        && !(strong_key && kinds >= 3 && runs <= 2)
    {
        return false;
    }
    if n >= 16 {
        entropy(value) >= 3.5
    } else {
        kinds >= 3
    }
}

/// Placeholders, examples, trivial names and one repeated character; `test`
/// counts only for assignments (`generic`).
fn is_placeholder(value: &str, generic: bool) -> bool {
    let lower = value.to_ascii_lowercase();
    PLACEHOLDERS.iter().any(|p| lower.contains(p))
        || (generic && lower.contains("test"))
        || is_trivial(&lower)
        || distinct(value) <= 1
        || {
            let squashed: String = unescape(&lower)
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .collect();
            let unleeted = unleet(&squashed);
            FAMOUS
                .iter()
                .any(|f| squashed.contains(f) || unleeted.contains(f))
        }
}

/// A password in a URL that stands in for one: a placeholder marker
/// (`changeme`, `xxxx`, `****`, `<…>`, `${…}`), one repeated character, a
/// trivial word (`password`, `Passw0rd`, `root`), words of the demo lists
/// and digits (`mypassword`, `secret123`), or `password`/`secret` spelled
/// out in plain letters (`mysecretpassword`). A word with its letters swapped
/// for digits among other words (`S3cr3tPassw0rd`) is a real password.
fn placeholder_password(pw: &str) -> bool {
    let lower = pw.to_ascii_lowercase();
    if placeholder_in(pw) || distinct(pw) <= 1 || is_trivial(&lower) {
        return true;
    }
    let squashed: String = unescape(&lower)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    FAMOUS.iter().any(|f| squashed.contains(f)) || demo_words(&squashed)
}

/// Whether `value` holds a placeholder marker ([`PLACEHOLDERS`]).
fn placeholder_in(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    PLACEHOLDERS.iter().any(|p| lower.contains(p))
}

/// Letters and digits where every run of letters is made of demo words
/// ([`TRIVIAL`], [`FAMOUS`], [`DEMO_WORDS`]) of two letters or more.
fn demo_words(squashed: &str) -> bool {
    let word = |w: &str| {
        w.len() >= 2 && (TRIVIAL.contains(&w) || FAMOUS.contains(&w) || DEMO_WORDS.contains(&w))
    };
    // whether `run` splits into words: `ok[i]` says its first `i` letters do
    let words = |run: &str| {
        let mut ok = vec![false; run.len() + 1];
        ok[0] = true;
        for end in 1..=run.len() {
            ok[end] = (0..end).any(|start| ok[start] && word(&run[start..end]));
        }
        ok[run.len()]
    };
    !squashed.is_empty()
        && squashed
            .split(|c: char| c.is_ascii_digit())
            .filter(|run| !run.is_empty())
            .all(words)
}

/// A host of this machine (`localhost`, `127.0.0.1`, `[::1]`), of an
/// example (`example.com`, `*.test`, `*.invalid`, `*.example`), or a
/// placeholder (`host`, `your-db-host`): no real server's password.
fn local_or_example_host(host: &str) -> bool {
    let lower = host.to_ascii_lowercase();
    let name = match lower.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => lower
            .split([':', ',', ';', ')', '\\', '"', '\''])
            .next()
            .unwrap_or(""),
    };
    let name = name.trim_end_matches('.');
    let under = |domain: &str| name == domain || name.ends_with(&format!(".{domain}"));
    under("localhost")
        || name.starts_with("127.")
        || ["0.0.0.0", "::1", "0:0:0:0:0:0:0:1"].contains(&name)
        || ["example.com", "example.org", "example.net"]
            .iter()
            .any(|d| under(d))
        || [".example", ".test", ".invalid"]
            .iter()
            .any(|t| name.ends_with(t))
        || PLACEHOLDER_HOSTS.contains(&name)
        || placeholder_in(name)
}

/// Leetspeak undone: `p@ssw0rd` → `password`.
fn unleet(word: &str) -> String {
    word.chars()
        .map(|c| match c {
            '0' => 'o',
            '1' => 'i',
            '3' => 'e',
            '4' | '@' => 'a',
            '5' | '$' => 's',
            '7' => 't',
            c => c,
        })
        .collect()
}

/// Only trivial words and single characters (`pass%20pass`, `s3cret`,
/// `admin_password`, `foo(b]c`).
fn is_trivial(lower: &str) -> bool {
    unescape(lower)
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '@' && c != '$')
        .filter(|w| !w.is_empty())
        .all(|w| w.len() == 1 || TRIVIAL.contains(&w) || TRIVIAL.contains(&unleet(w).as_str()))
}

/// Percent escapes (`%20`) turned into spaces.
fn unescape(value: &str) -> String {
    let mut chunks = value.split('%');
    let first = chunks.next().unwrap_or("").to_string();
    chunks.fold(first, |out, chunk| out + " " + chunk.get(2..).unwrap_or(""))
}

/// Identifiers and words rather than random text (`access-1`,
/// `GITHUB_TOKEN`, `TokenExpiredError`, `source_file_token1`): the number of
/// letter runs when every run is lower case, upper case or CamelCase words,
/// runs average 4+ letters and letters are half the value.
fn word_runs(value: &str) -> Option<usize> {
    let runs: Vec<&str> = value
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|r| !r.is_empty())
        .collect();
    let letters: usize = runs.iter().map(|r| r.len()).sum();
    let wordy = |run: &&str| {
        if run.bytes().all(|b| b.is_ascii_lowercase())
            || run.bytes().all(|b| b.is_ascii_uppercase())
        {
            return true;
        }
        // CamelCase: one capitalised word, or several of 2+ letters, 3+ on average.
        let mut words = Vec::new();
        let mut start = 0;
        for (i, c) in run.char_indices().skip(1) {
            if c.is_ascii_uppercase() {
                words.push(&run[start..i]);
                start = i;
            }
        }
        words.push(&run[start..]);
        words
            .iter()
            .all(|w| w.len() >= 2 && w.bytes().skip(1).all(|b| b.is_ascii_lowercase()))
            && (words.len() == 1 || run.len() >= 3 * words.len())
    };
    (!runs.is_empty()
        && letters >= 4 * runs.len()
        && 2 * letters >= value.len()
        && runs.iter().all(wordy))
    .then_some(runs.len())
}

fn is_uuid(value: &str) -> bool {
    value.len() == 36
        && value.char_indices().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// Shannon entropy in bits per byte.
fn entropy(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in value.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = value.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| f64::from(c) / n)
        .map(|p| -p * p.log2())
        .sum()
}

/// (has lower case, upper case, digit, other non-space character).
fn classes(value: &str) -> (bool, bool, bool, bool) {
    let has = |f: fn(&char) -> bool| value.chars().any(|c| f(&c));
    (
        has(char::is_ascii_lowercase),
        has(char::is_ascii_uppercase),
        has(char::is_ascii_digit),
        has(|c| !c.is_ascii_alphanumeric() && !c.is_whitespace()),
    )
}

fn distinct(value: &str) -> usize {
    let mut seen = [false; 256];
    value
        .bytes()
        .filter(|&b| !std::mem::replace(&mut seen[usize::from(b)], true))
        .count()
}

/// The leading run of base64 characters.
fn base64_run(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')))
        .unwrap_or(s.len());
    &s[..end]
}

/// A line without the comment marker, quotes, commas, `+` and `\n` of a
/// string literal or comment around it.
fn unquote(line: &str) -> &str {
    let noise =
        |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ',' | '+' | ';' | '\\');
    let t = line.trim_start();
    let t = ["// ", "# ", "* ", "-- "]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(t)
        .trim_matches(noise);
    t.strip_suffix("\\n").unwrap_or(t).trim_matches(noise)
}

/// `Proc-Type: 4,ENCRYPTED`, `Version: GnuPG v2`, `Comment: …`.
fn is_pem_header(t: &str) -> bool {
    t.split_once(": ").is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_uppercase())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// The index after a key block's `-----END` line (or after its body line
/// when no end follows on).
fn block_end(lines: &[(u32, &str)], body: usize) -> usize {
    let mut previous = lines[body].0;
    for (j, &(number, line)) in lines.iter().enumerate().skip(body + 1).take(500) {
        if number != previous.saturating_add(1) {
            break;
        }
        previous = number;
        if line.contains("-----END") {
            return j + 1;
        }
    }
    body + 1
}

/// The first `max` bytes of a line, cut at a character boundary.
fn head(line: &str, max: usize) -> &str {
    let mut end = max.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Lines that look suspicious but hold no secret.
    const DECOYS: &str = include_str!("../tests/data/secrets/decoys.txt");
    /// Planted secrets and decoys as templates: path | rule | value | text.
    const CASES: &str = include_str!("../tests/data/secrets/cases.txt");
    const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const BASE64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL_SAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

    /// Deterministic pseudo-random characters: fake secrets are built at run
    /// time, so no complete token ever appears in the repository.
    fn mix(seed: u64, len: usize, alphabet: &str) -> String {
        let a = alphabet.as_bytes();
        let mut x = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                a[((x >> 33) % a.len() as u64) as usize] as char
            })
            .collect()
    }

    /// The fakes the cases' `{name}`s stand for, assembled from pieces.
    #[rustfmt::skip]
    fn fakes() -> Vec<(&'static str, String)> {
        let part = |seed, len| mix(seed, len, URL_SAFE);
        vec![
            ("aws", ["AK", "IA", &mix(1, 16, UPPER_DIGITS)].concat()),
            ("aws_secret", mix(2, 40, BASE64)),
            ("ghp", ["gh", "p_", &mix(3, 36, ALNUM)].concat()),
            ("pat", ["github", "_pat_", &mix(4, 22, ALNUM), "_", &mix(5, 59, ALNUM)].concat()),
            ("glpat", ["gl", "pat-", &mix(6, 20, ALNUM)].concat()),
            ("slack", ["xo", "xb-", &mix(7, 10, "0123456789"), "-", &mix(9, 24, ALNUM)].concat()),
            ("hook", ["https://hooks.", "slack.com/services/T", &mix(10, 8, UPPER_DIGITS), "/B",
                &mix(11, 10, UPPER_DIGITS), "/", &mix(12, 24, ALNUM)].concat()),
            ("stripe", ["sk", "_live_", &mix(13, 24, ALNUM)].concat()),
            ("sk_test", ["sk", "_test_", &mix(14, 24, ALNUM)].concat()),
            ("google", ["AI", "za", &mix(15, 35, URL_SAFE)].concat()),
            ("openai", ["sk", "-proj-", &mix(16, 48, ALNUM)].concat()),
            ("rsa", ["-----BEGIN RSA ", "PRIVATE KEY-----"].concat()),
            ("pk", ["-----BEGIN ", "PRIVATE KEY-----"].concat()),
            ("body1", ["MIIEow", &mix(17, 58, BASE64)].concat()),
            ("body2", mix(18, 64, BASE64)),
            ("body3", ["MIIEvQ", &mix(19, 58, BASE64)].concat()),
            ("body4", mix(20, 64, BASE64)),
            ("body5", ["MIICXg", &mix(21, 58, BASE64)].concat()),
            ("hex32", mix(22, 32, "0123456789ABCDEF")),
            ("jwt", ["ey", "J", &part(23, 30), ".eyJ", &part(24, 40), ".", &part(25, 43)].concat()),
            ("db_pw", mix(26, 16, ALNUM)),
            // A password made of words, leetspeak and capitals.
            ("word_pw", ["S3cr3t", "Passw0rd"].concat()),
            ("generic", [&mix(27, 10, ALNUM), "#!", &mix(28, 8, ALNUM)].concat()),
            ("short", ["Pw9!", "xK2q"].concat()),
            ("rand20", mix(29, 20, ALNUM)),
            ("rand24", mix(30, 24, ALNUM)),
            // Documentation examples (AWS's own, Slack's placeholder).
            ("aws_doc_id", ["AKIA", "IOSFODNN7", "EXAMPLE"].concat()),
            ("aws_doc_secret", ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCY", "EXAMPLEKEY"].concat()),
            ("hook_doc", ["https://hooks.", "slack.com/services/T", &"X".repeat(8), "/B",
                &"X".repeat(8), "/", &"X".repeat(24)].concat()),
        ]
    }

    /// (path, rule or "none", secret value, file text) for every case.
    fn cases() -> Vec<(String, String, String, String)> {
        let fakes = fakes();
        let fill = |t: &str| {
            let t = t.replace("{NL}", "\n");
            fakes
                .iter()
                .fold(t, |t, (name, fake)| t.replace(&format!("{{{name}}}"), fake))
        };
        CASES
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.splitn(4, " | ").collect();
                assert_eq!(f.len(), 4, "{l}");
                (f[0].to_string(), f[1].to_string(), fill(f[2]), fill(f[3]))
            })
            .collect()
    }

    fn planted() -> Vec<(String, String, String, String)> {
        cases().into_iter().filter(|c| c.1 != "none").collect()
    }

    fn hit(value: &str) -> SecretHit {
        let (rule, path, confidence) = ("r".into(), "p".into(), "high".into());
        SecretHit {
            rule,
            path,
            line: 1,
            value: value.into(),
            confidence,
        }
    }

    #[test]
    fn every_rule_finds_its_planted_secret() {
        let scanner = Scanner::new();
        let planted = planted();
        let rules: BTreeSet<&str> = planted.iter().map(|p| p.1.as_str()).collect();
        assert_eq!(
            rules.len(),
            13,
            "a planted secret for every rule: {rules:?}"
        );
        for (path, rule, value, text) in &planted {
            let hits = scanner.scan_text(path, text);
            assert_eq!(hits.len(), 1, "{rule} in {path}: {hits:?}");
            assert_eq!((&hits[0].rule, &hits[0].value), (rule, value), "{path}");
            let medium = ["jwt", "generic-assignment"].contains(&rule.as_str());
            assert_eq!(
                hits[0].confidence,
                if medium { "medium" } else { "high" },
                "{rule}"
            );
        }
    }

    #[test]
    fn decoys_never_fire() {
        let scanner = Scanner::new();
        assert!(DECOYS.lines().count() >= 25);
        for path in [
            "src/app/settings.py",
            "web/src/config.ts",
            "deploy/values.yaml",
            "config/.env",
        ] {
            assert_eq!(scanner.scan_text(path, DECOYS), Vec::new(), "{path}");
        }
        for (path, _, _, text) in cases().into_iter().filter(|c| c.1 == "none") {
            assert_eq!(
                scanner.scan_text(&path, &text),
                Vec::new(),
                "{path}: {text}"
            );
        }
    }

    #[test]
    fn precision_and_recall_on_a_mixed_corpus_are_perfect() {
        let scanner = Scanner::new();
        let mut corpus: Vec<(String, String)> = DECOYS
            .lines()
            .map(|l| ("src/app/settings.py".to_string(), l.to_string()))
            .collect();
        let mut expected = Vec::new();
        for (path, rule, value, text) in cases() {
            if rule != "none" {
                expected.push((path.clone(), rule, value));
            }
            corpus.push((path, text));
        }
        let found: Vec<(String, String, String)> = corpus
            .iter()
            .flat_map(|(path, text)| scanner.scan_text(path, text))
            .map(|h| (h.path, h.rule, h.value))
            .collect();
        let true_positives = found.iter().filter(|f| expected.contains(f)).count();
        let precision = true_positives as f64 / found.len() as f64;
        let recall =
            expected.iter().filter(|e| found.contains(e)).count() as f64 / expected.len() as f64;
        assert!(corpus.len() > 2 * expected.len());
        assert_eq!((precision, recall), (1.0, 1.0), "{found:?}");
    }

    #[test]
    fn redaction_never_shows_the_value() {
        let scanner = Scanner::new();
        for (path, rule, _, text) in planted() {
            for hit in scanner.scan_text(&path, &text) {
                let (debug, redacted) = (format!("{hit:?}"), hit.redacted());
                assert!(
                    !debug.contains(&hit.value) && !redacted.contains(&hit.value),
                    "{rule}"
                );
                assert!(debug.contains(&redacted) && debug.contains(&hit.fingerprint()));
            }
        }
        assert_eq!(
            hit(&["AKIA", "Q3W7R2T9Y4U6I8O1"].concat()).redacted(),
            "AKIA…(20 chars)"
        );
        assert_eq!(hit("Pw9!xK2q").redacted(), "…(8 chars)");
    }

    #[test]
    fn fingerprints_are_stable_and_distinct() {
        assert_eq!(hit("abc").fingerprint(), "ba7816bf8f01");
        let values: BTreeSet<String> = planted().into_iter().map(|p| p.2).collect();
        let prints: BTreeSet<String> = values.iter().map(|v| hit(v).fingerprint()).collect();
        assert_eq!(prints.len(), values.len());
        assert!(
            prints
                .iter()
                .all(|p| p.len() == 12 && p.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }

    #[test]
    fn allow_markers_silence_a_line_that_would_fire() {
        let scanner = Scanner::new();
        let marked: Vec<&str> = DECOYS
            .lines()
            .filter(|l| ALLOW_MARKERS.iter().any(|m| l.contains(m)))
            .collect();
        assert_eq!(marked.len(), 4);
        for line in marked {
            let bare = line.split("  ").next().unwrap_or(line);
            assert_eq!(scanner.scan_text("src/app.py", bare).len(), 1, "{bare}");
        }
    }

    #[test]
    fn scan_lines_keeps_numbers_and_wants_a_key_body_on_the_next_line() {
        let scanner = Scanner::new();
        let (path, _, value, text) = planted().swap_remove(10);
        let lines: Vec<&str> = text.lines().collect();
        let hits = scanner.scan_lines(&path, [(40, lines[0]), (41, lines[1]), (42, lines[2])]);
        assert_eq!((hits.len(), hits[0].line, &hits[0].value), (1, 40, &value));
        assert!(
            scanner
                .scan_lines(&path, [(40, lines[0]), (50, lines[1])])
                .is_empty()
        );
        let aws = fakes().swap_remove(0).1;
        let hits = scanner.scan_lines("a.py", [(7, "x = 1"), (9, &*format!("k = '{aws}'"))]);
        assert_eq!(hits.iter().map(|h| h.line).collect::<Vec<_>>(), [9]);
    }

    #[test]
    fn long_lines_get_only_known_formats_in_their_head() {
        let scanner = Scanner::new();
        let aws = fakes().swap_remove(0).1;
        let late = ["AKIA", &mix(41, 16, UPPER_DIGITS)].concat();
        let filler = "var a=1;".repeat(600);
        let line = format!(
            "k=\"{aws}\";password=\"{}\";{filler}l=\"{late}\";",
            mix(40, 20, ALNUM)
        );
        let hits = scanner.scan_text("dist/app.js", &line);
        assert_eq!(
            hits.iter().map(|h| h.value.as_str()).collect::<Vec<_>>(),
            [aws.as_str()]
        );
    }

    #[test]
    fn wants_path_skips_lock_files_and_bundles() {
        let scanner = Scanner::new();
        for path in [
            "package-lock.json",
            "a/Cargo.lock",
            "yarn.lock",
            "app.min.js",
            "logo.svg",
            "a.js.map",
        ] {
            assert!(!scanner.wants_path(path), "{path}");
        }
        for path in [
            "src/main.rs",
            "config/.env",
            "deploy/values.yaml",
            "README.md",
            "lockfile.py",
        ] {
            assert!(scanner.wants_path(path), "{path}");
        }
    }

    #[test]
    fn a_megabyte_of_suspicious_lines_scans_quickly() {
        let scanner = Scanner::new();
        let secret = format!("DB_PASSWORD = \"{}\"", mix(50, 20, ALNUM));
        let chunk =
            format!("{DECOYS}fn main() {{ let total = items.iter().sum::<u64>(); }}\n{secret}\n");
        let copies = 1_000_000 / chunk.len() + 1;
        let text = chunk.repeat(copies);
        let start = std::time::Instant::now();
        let hits = scanner.scan_text("src/big.py", &text);
        let elapsed = start.elapsed();
        eprintln!("scanned {} bytes in {elapsed:?}", text.len());
        assert_eq!(hits.len(), copies);
        // Generous for unoptimised builds; a release build takes a few milliseconds.
        assert!(
            elapsed < std::time::Duration::from_millis(500),
            "{elapsed:?}"
        );
    }

    #[test]
    fn documentation_examples_and_templated_users_are_not_secrets() {
        let scanner = Scanner::new();
        // An RFC sample quoted in a docstring under "For example::".
        let sample = format!("oauth_token=\"{}{}\",", "Qx7vL2pR9s", "T4wZ8bN3mK");
        let text = format!(
            "def sign():\n    \"\"\"\n    For example::\n\n        Authorization: OAuth realm=\"Example\",\n            {sample}\n    \"\"\"\n"
        );
        assert!(scanner.scan_text("lib/oauth.py", &text).is_empty());
        // The same assignment in code, with no example nearby, is reported.
        let code = format!(
            "def sign():\n    x = 1\n    y = 2\n    z = 3\n    w = 4\n    v = 5\n    u = 6\n    {sample}\n"
        );
        assert_eq!(scanner.scan_text("lib/oauth.py", &code).len(), 1);
        // A URL whose user is a template: the password is a fixed literal.
        let url = format!(
            "url = f\"https://{{token}}:{}@github.com/o/r.git\"\n",
            "x-oauth-basic"
        );
        assert!(scanner.scan_text("scripts/release.py", &url).is_empty());
    }

    #[test]
    fn a_word_like_password_in_a_url_to_a_real_host_is_found() {
        let scanner = Scanner::new();
        let fakes = fakes();
        let fake = |name: &str| fakes.iter().find(|f| f.0 == name).unwrap().1.clone();
        let password = fake("word_pw");
        // The settings file of the issue: every secret in it is reported,
        // the connection string's word-like password too.
        let settings = format!(
            "AWS_ACCESS_KEY_ID = \"{}\"\nAWS_SECRET_ACCESS_KEY = \"{}\"\nGITHUB_TOKEN = \"{}\"\n\
             DATABASE_URL = \"postgres://billing:{password}@db.internal:5432/billing\"\n\
             PRIVATE_KEY = \"\"\"\n{}\n{}\n{}\n-----END RSA PRIVATE KEY-----\n\"\"\"\n",
            fake("aws"),
            fake("aws_secret"),
            fake("ghp"),
            fake("rsa"),
            fake("body1"),
            fake("body2"),
        );
        let hits = scanner.scan_text("billing/settings.py", &settings);
        let rules: Vec<&str> = hits.iter().map(|h| h.rule.as_str()).collect();
        assert_eq!(
            rules,
            [
                "aws-access-key-id",
                "aws-secret-access-key",
                "github-token",
                "connection-string-password",
                "private-key"
            ],
            "{hits:?}"
        );
        let db = &hits[3];
        assert_eq!((db.line, db.value.as_str()), (4, password.as_str()));
        assert_eq!(db.redacted(), format!("…({} chars)", password.len()));
        // Any scheme with `user:password@host`.
        for url in [
            format!("mysql://app:{password}@mysql.prod.internal/app"),
            format!("amqp://worker:{password}@10.2.0.7:5672/"),
            format!("https://deploy:{password}@git.corp.net/repo.git"),
        ] {
            let hits = scanner.scan_text("src/config.py", &format!("URL = \"{url}\"\n"));
            assert_eq!(hits.len(), 1, "{url}: {hits:?}");
            assert_eq!(hits[0].value, password);
        }
        // Local and example hosts, and placeholder passwords, stay out.
        let quiet = [
            format!("postgres://billing:{password}@localhost:5432/billing"),
            format!("postgres://billing:{password}@127.0.0.1/billing"),
            format!("postgres://billing:{password}@[::1]:5432/billing"),
            format!("postgres://billing:{password}@db.example.com/billing"),
            format!("postgres://billing:{password}@example.org/billing"),
            format!("postgres://billing:{password}@api.localhost/billing"),
            "postgres://billing:password@db.internal/billing".to_string(),
            "postgres://billing:Passw0rd@db.internal/billing".to_string(),
            "postgres://billing:changeme@db.internal/billing".to_string(),
            "postgres://billing:mypassword@db.internal/billing".to_string(),
            "postgres://billing:secret123@db.internal/billing".to_string(),
            "postgres://billing:$DB_PASSWORD@db.internal/billing".to_string(),
            "postgres://billing:${DB_PASSWORD}@db.internal/billing".to_string(),
            "postgres://billing:xxx@db.internal/billing".to_string(),
            "postgres://billing:XXXXXXXX@db.internal/billing".to_string(),
            "postgres://billing:*****@db.internal/billing".to_string(),
            "postgres://billing:%s@db.internal/billing".to_string(),
            "postgres://billing:{}@db.internal/billing".to_string(),
            "postgres://billing:{password}@db.internal/billing".to_string(),
            "postgres://billing:<password>@db.internal/billing".to_string(),
            "postgres://your_user:your_password@db.internal/billing".to_string(),
        ];
        for url in quiet {
            let hits = scanner.scan_text("src/config.py", &format!("URL = \"{url}\"\n"));
            assert!(hits.is_empty(), "{url}: {hits:?}");
        }
    }
}
