//! The JSON shapes of docs/cli.md and docs/http.md, defined once and shared by `--json`,
//! the HTTP API and the MCP tools. Converted from engine types here, so the
//! engine's structs can change without changing what scripts and clients
//! read. Fields may be added, never renamed.

use std::collections::BTreeMap;

use ken_core::Hit;
use ken_engine::Claim as EngineClaim;
use ken_engine::IndexReport;
use ken_engine::Job as EngineJob;
use ken_engine::PersonSummary;
use ken_engine::RepoStatus as EngineRepoStatus;
use ken_engine::SearchResponse;
use ken_engine::{AskResponse, StepOutcome};
use ken_engine::{Edge, EngineError, FileRange as EngineRange, StructureAnswer, SymbolHit};
use ken_engine::{LogHit, WhoResponse as EngineWho};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

fn round(x: f32) -> f64 {
    (x as f64 * 10000.0).round() / 10000.0
}

/// `{"error": {"code", "message", "hint"?}}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// `bad_request`, `unauthorized`, `not_found`, `busy`, `unavailable` or `internal`.
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl ErrorBody {
    pub fn new(code: &str, message: impl Into<String>, hint: Option<String>) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: code.to_string(),
                message: message.into(),
                hint,
            },
        }
    }

    /// An engine error as `edge` words it (flags for the command line,
    /// parameters for HTTP, arguments for MCP).
    pub fn from_engine(e: &EngineError, edge: Edge) -> ErrorBody {
        ErrorBody::new(e.kind().code(), e.message_for(edge), e.hint_for(edge))
    }
}

/// One signal's opinion of a result.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct SignalScore {
    pub rank: u32,
    pub score: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct AuthorShare {
    pub name: String,
    /// Share of the result's lines they last changed, 0..1.
    pub share: f64,
}

/// A ranked chunk (or, with `files`, a file's best chunk).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct SearchResult {
    pub rank: usize,
    pub repo: String,
    pub path: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub language: String,
    pub kind: String,
    /// Qualified name (`Class.method`, `module::fn`).
    pub symbol: Option<String>,
    pub score: f64,
    /// An exact symbol match, pinned above the fused rest.
    pub pinned: bool,
    /// Every signal's rank and score (`exact`, `bm25`, `file`, `dense`...).
    pub signals: BTreeMap<String, SignalScore>,
    /// The indexed commit.
    pub commit: Option<String>,
    pub authors: Vec<AuthorShare>,
    pub snippet: String,
    /// The snippet's lines as highlighted HTML (`highlight=true`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub snippet_html: Option<Vec<String>>,
    /// For a notebook: the cell the lines are in (0-based, among all its
    /// cells). Lines count the notebook's code cells joined by a blank line.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cell: Option<u32>,
}

impl SearchResult {
    pub fn from_hit(rank: usize, h: &Hit) -> SearchResult {
        SearchResult {
            rank,
            repo: h.repo.clone(),
            path: h.path.clone(),
            start_line: h.start_line,
            end_line: h.end_line,
            language: h.language.name().to_string(),
            kind: h.kind.name().to_string(),
            symbol: h.symbol.clone(),
            score: round(h.score),
            pinned: h.pinned,
            signals: h
                .signals
                .0
                .iter()
                .map(|(k, s)| {
                    (
                        k.clone(),
                        SignalScore {
                            rank: s.rank,
                            score: round(s.score),
                        },
                    )
                })
                .collect(),
            commit: h.commit.clone(),
            authors: h
                .authors
                .iter()
                .map(|a| AuthorShare {
                    name: a.name.clone(),
                    share: round(a.share),
                })
                .collect(),
            snippet: h.snippet.clone(),
            snippet_html: None,
            cell: h.cell,
        }
    }

    /// Add the highlighted snippet.
    pub fn highlighted(mut self) -> SearchResult {
        self.snippet_html = Some(ken_engine::highlight(&self.path, &self.snippet));
        self
    }

    pub fn list(hits: &[Hit]) -> Vec<SearchResult> {
        hits.iter()
            .enumerate()
            .map(|(i, h)| SearchResult::from_hit(i + 1, h))
            .collect()
    }
}

/// `ken search --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Search {
    pub query: String,
    pub took_ms: u64,
    pub results: Vec<SearchResult>,
    /// What the user should know (partial embedding coverage...).
    pub notes: Vec<String>,
    /// The reranking stage and what it cost (absent when no reranker is configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<Rerank>,
    /// With several repositories searched: each, with its hits among the
    /// results and its routing weight (absent for one repository).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repos: Vec<RepoCount>,
}

/// One repository of a search over several.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct RepoCount {
    pub repo: String,
    /// Its results among those returned.
    pub hits: usize,
    /// How likely routing judged it to hold the answer (absent: it was
    /// named, not routed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f32>,
}

/// The reranking stage of a search.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Rerank {
    pub model: String,
    /// Best hits the model read and reordered.
    pub documents: usize,
    pub ms: u64,
    /// Tokens the model's server counted (a chat model's reranking; absent
    /// when not reported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

impl From<&ken_engine::RerankCost> for Rerank {
    fn from(c: &ken_engine::RerankCost) -> Rerank {
        Rerank {
            model: c.model.clone(),
            documents: c.documents,
            ms: c.ms,
            tokens: c.tokens,
        }
    }
}

impl From<&SearchResponse> for Search {
    fn from(r: &SearchResponse) -> Search {
        Search {
            query: r.query.clone(),
            took_ms: r.took_ms,
            results: SearchResult::list(&r.hits),
            notes: r.notes.clone(),
            rerank: r.rerank.as_ref().map(Rerank::from),
            repos: r
                .repos
                .iter()
                .map(|f| RepoCount {
                    repo: f.repo.clone(),
                    hits: f.hits,
                    weight: f.weight.map(|w| (w * 1000.0).round() / 1000.0),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Citation {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Inside the code the answer was given.
    pub valid: bool,
    /// For a notebook: the cell the cited lines are in.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cell: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Claim {
    pub text: String,
    /// `verified`, `unverified` or `invalid`.
    pub status: String,
    pub citations: Vec<Citation>,
}

impl From<&EngineClaim> for Claim {
    fn from(c: &EngineClaim) -> Claim {
        Claim {
            text: c.text.clone(),
            status: serde_json::to_value(c.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            citations: c
                .citations
                .iter()
                .map(|x| Citation {
                    path: x.path.clone(),
                    start_line: x.start_line,
                    end_line: x.end_line,
                    valid: x.valid,
                    cell: x.cell,
                })
                .collect(),
        }
    }
}

/// One step an answer took (a search, a `who`, a history search...).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct AskStep {
    pub id: usize,
    /// `code`, `people`, `history`, `impact`, `status`...
    pub kind: String,
    pub query: String,
    pub note: String,
    /// How many results it produced.
    pub results: usize,
    /// Queries actually searched (expansions included).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub queries: Vec<String>,
}

impl From<&StepOutcome> for AskStep {
    fn from(s: &StepOutcome) -> AskStep {
        AskStep {
            id: s.step.id,
            kind: serde_json::to_value(s.step.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            query: s.step.query.clone(),
            note: s.step.note.clone(),
            results: s.results,
            queries: s.queries.clone(),
        }
    }
}

/// `ken ask --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Ask {
    pub question: String,
    /// `code`, `people`, `history`, `impact` or `status`.
    pub route: String,
    pub steps: Vec<AskStep>,
    pub answer: String,
    /// The model that wrote the answer (null: extractive, no model used).
    pub model: Option<String>,
    pub claims: Vec<Claim>,
    pub sources: Vec<SearchResult>,
    /// The model was asked again because it cited code outside its context.
    pub retried: bool,
    /// The chat model's reranking of the retrieved code and what it cost
    /// (absent when not used: `--rerank` or `llm_rerank = true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<Rerank>,
}

impl From<&AskResponse> for Ask {
    fn from(r: &AskResponse) -> Ask {
        Ask {
            question: r.question.clone(),
            route: serde_json::to_value(r.route)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            steps: r.steps.iter().map(AskStep::from).collect(),
            answer: r.answer.clone(),
            model: r.model.clone(),
            claims: r.claims.iter().map(Claim::from).collect(),
            sources: SearchResult::list(&r.sources),
            retried: r.retried,
            rerank: r.rerank.as_ref().map(Rerank::from),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Evidence {
    pub path: String,
    pub symbol: Option<String>,
    /// Share of the code's lines they last changed, 0..1.
    pub share: f64,
    pub last_commit: Option<String>,
    /// Seconds since the epoch.
    pub when: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct WhoPerson {
    pub rank: usize,
    pub id: String,
    pub name: String,
    pub emails: Vec<String>,
    pub score: f64,
    pub evidence: Vec<Evidence>,
}

/// `ken who --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Who {
    pub query: String,
    /// How the query was read: `path`, `symbol` or `topic`.
    pub read_as: String,
    pub people: Vec<WhoPerson>,
    /// What the answer could not use (e.g. a repository with no history).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Imported tickets the query is about, with the commits that addressed
    /// them (present only when the query speaks of bugs, issues, tickets
    /// or fixes and tickets match).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tickets: Vec<WhoTicket>,
}

/// A ticket and its linked commits.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct WhoTicket {
    pub repo: String,
    pub id: String,
    pub title: String,
    /// `open` or `closed`.
    pub state: String,
    pub bug: bool,
    pub opened: Option<i64>,
    pub closed: Option<i64>,
    pub url: Option<String>,
    pub commits: Vec<WhoTicketCommit>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct WhoTicketCommit {
    pub sha: String,
    pub summary: String,
    pub author: String,
    /// Author time, seconds since the epoch.
    pub when: i64,
    pub files: Vec<String>,
}

impl From<&ken_engine::TicketEvidence> for WhoTicket {
    fn from(t: &ken_engine::TicketEvidence) -> WhoTicket {
        WhoTicket {
            repo: t.repo.clone(),
            id: t.id.clone(),
            title: t.title.clone(),
            state: t.state.clone(),
            bug: t.bug,
            opened: t.opened,
            closed: t.closed,
            url: t.url.clone(),
            commits: t
                .commits
                .iter()
                .map(|c| WhoTicketCommit {
                    sha: c.sha.clone(),
                    summary: c.summary.clone(),
                    author: c.author.clone(),
                    when: c.when,
                    files: c.files.clone(),
                })
                .collect(),
        }
    }
}

impl From<&EngineWho> for Who {
    fn from(w: &EngineWho) -> Who {
        Who {
            query: w.query.clone(),
            read_as: w.read_as.clone(),
            people: w
                .people
                .iter()
                .map(|p| WhoPerson {
                    rank: p.rank,
                    id: p.id.clone(),
                    name: p.name.clone(),
                    emails: p.emails.clone(),
                    score: round(p.score),
                    evidence: p
                        .evidence
                        .iter()
                        .map(|e| Evidence {
                            path: e.path.clone(),
                            symbol: e.symbol.clone(),
                            share: round(e.share),
                            last_commit: e.last_commit.clone(),
                            when: e.when,
                        })
                        .collect(),
                })
                .collect(),
            notes: w.notes.clone(),
            tickets: w.tickets.iter().map(WhoTicket::from).collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Person {
    pub id: String,
    pub name: String,
    pub emails: Vec<String>,
    pub names: Vec<String>,
    pub handles: Vec<String>,
    /// External ids (`jira: 5b10...`).
    pub external: BTreeMap<String, String>,
    pub bot: bool,
    pub commits: u64,
    pub last_commit_time: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct RepoPerson {
    pub repo: String,
    pub person: Person,
}

/// `ken people --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct People {
    pub people: Vec<RepoPerson>,
}

impl People {
    pub fn from_engine(all: &[(String, PersonSummary)]) -> People {
        People {
            people: all
                .iter()
                .map(|(repo, p)| RepoPerson {
                    repo: repo.clone(),
                    person: Person {
                        id: p.id.clone(),
                        name: p.name.clone(),
                        emails: p.emails.clone(),
                        names: p.names.clone(),
                        handles: p.handles.clone(),
                        external: p.external.clone(),
                        bot: p.bot,
                        commits: p.commits,
                        last_commit_time: p.last_commit_time,
                    },
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Commit {
    pub rank: usize,
    pub repo: String,
    pub sha: String,
    pub summary: String,
    pub author: String,
    /// The author's person id.
    pub person: String,
    /// Seconds since the epoch.
    pub when: i64,
    pub score: f64,
    pub files: Vec<String>,
}

/// `ken log-search --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct LogSearch {
    pub query: String,
    pub results: Vec<Commit>,
}

impl LogSearch {
    pub fn from_engine(query: &str, hits: &[LogHit]) -> LogSearch {
        LogSearch {
            query: query.to_string(),
            results: hits
                .iter()
                .map(|h| Commit {
                    rank: h.rank,
                    repo: h.repo.clone(),
                    sha: h.sha.clone(),
                    summary: h.summary.clone(),
                    author: h.author.clone(),
                    person: h.person.clone(),
                    when: h.when,
                    score: round(h.score),
                    files: h.files.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Definition {
    pub path: String,
    pub symbol: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// `from` uses `to` at `path:line`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ViaStep {
    pub from: String,
    pub to: String,
    /// `call`, `import`, `inherit`, `type`...
    pub kind: String,
    pub path: String,
    pub line: u32,
    /// Resolved by name, by this rule: `scope`, `import`, `package`,
    /// `base`, `qualified`, `receiver`, `same_file` or `unique_global` (the
    /// last two are guesses); or `scip`: resolved by a SCIP index read into
    /// the graph.
    #[serde(default)]
    pub rule: String,
    /// The rule's confidence, in (0, 1].
    #[serde(default)]
    pub confidence: f32,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Dependent {
    pub path: String,
    pub symbol: String,
    pub start_line: u32,
    pub end_line: u32,
    /// References away from the symbol (1: direct).
    pub depth: u32,
    /// The chain of references that links it.
    pub via: Vec<ViaStep>,
}

/// `ken callers|callees|impact --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Structure {
    pub symbol: String,
    /// The repository searched ("" when no repository defines the symbol).
    pub repo: String,
    /// Its indexed commit.
    pub commit: Option<String>,
    /// The definitions the name matched.
    pub candidates: Vec<Definition>,
    pub results: Vec<Dependent>,
}

impl Structure {
    pub fn from_engine(a: &StructureAnswer) -> Structure {
        let r = &a.result;
        Structure {
            symbol: r.symbol.clone(),
            repo: a.repo.clone(),
            commit: a.commit.clone(),
            candidates: r
                .candidates
                .iter()
                .map(|c| Definition {
                    path: c.path.clone(),
                    symbol: c.symbol.clone(),
                    kind: c.kind.clone(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                })
                .collect(),
            results: r
                .results
                .iter()
                .map(|x| Dependent {
                    path: x.path.clone(),
                    symbol: x.symbol.clone(),
                    start_line: x.start_line,
                    end_line: x.end_line,
                    depth: x.depth,
                    via: x
                        .via
                        .iter()
                        .map(|s| ViaStep {
                            from: s.from.clone(),
                            to: s.to.clone(),
                            kind: s.kind.clone(),
                            path: s.path.clone(),
                            line: s.line,
                            rule: s.rule.clone(),
                            confidence: s.confidence,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct SymbolDef {
    pub repo: String,
    pub path: String,
    /// Qualified name.
    pub symbol: String,
    pub name: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    /// `exact` or `folded` (ignoring case and separators).
    pub matched: String,
    pub commit: Option<String>,
}

/// Definitions found by name (MCP `find_symbol`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Symbols {
    pub query: String,
    pub results: Vec<SymbolDef>,
}

impl Symbols {
    pub fn from_engine(query: &str, hits: &[SymbolHit]) -> Symbols {
        Symbols {
            query: query.to_string(),
            results: hits
                .iter()
                .map(|h| SymbolDef {
                    repo: h.repo.clone(),
                    path: h.path.clone(),
                    symbol: h.symbol.clone(),
                    name: h.name.clone(),
                    kind: h.kind.clone(),
                    start_line: h.start_line,
                    end_line: h.end_line,
                    matched: h.matched.clone(),
                    commit: h.commit.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct RepoStats {
    pub files: u64,
    /// Files of the snapshot not indexed: the sum of `skipped`.
    pub skipped_files: u64,
    /// Those files by reason (`binary`, `generated`, `too-large`...), the
    /// same counts `ken index` reports.
    pub skipped: BTreeMap<String, u64>,
    pub chunks: u64,
    pub symbols: u64,
    /// Bytes of indexed source.
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Embeddings {
    pub model: String,
    /// Current chunks with a vector.
    pub embedded: usize,
    pub chunks: usize,
    /// Rows of the vector index searches use.
    pub indexed: usize,
}

/// A repository and what is indexed of it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Repo {
    pub name: String,
    /// The indexed commit (HEAD for a working tree).
    pub commit: Option<String>,
    pub commit_time: Option<i64>,
    /// The working tree was indexed, uncommitted edits included.
    pub worktree: bool,
    /// Where it is indexed from: a path, or a URL without credentials.
    pub source: Option<String>,
    /// The branch this index follows, when not the source's default
    /// (`NAME@BRANCH`); absent for the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// When the last run finished (seconds since the epoch).
    pub indexed_at: Option<i64>,
    /// A run towards this commit has not finished.
    pub pending: Option<String>,
    /// An embedding run was cut short (a time budget, Ctrl-C, a kill): the
    /// next `ken index`, or a job `ken serve`/`ken worker` queues, goes on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub embedding_unfinished: bool,
    /// What the last poll saw at the source (`ken repos poll`,
    /// `poll_interval`); absent when never polled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteState>,
    pub stats: RepoStats,
    /// Size of the index on disk.
    pub index_bytes: u64,
    pub embeddings: Vec<Embeddings>,
    /// History and blame: they follow the lexical index, so searches work
    /// before they finish.
    #[serde(default)]
    pub people: PeopleProgress,
    /// The ranking learned from the repository's history (`ranking` of
    /// `ken index --json`); absent when none was learned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub ranking: Option<serde_json::Value>,
    /// The query map dense retrieval learned from the repository's
    /// history (`adapter` of `ken index --json`, without its factors);
    /// absent when none was learned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub adapter: Option<serde_json::Value>,
    /// The repository's issue templates: a bug report's lines that repeat
    /// them are left out of its search. Absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issue_templates: Vec<String>,
    /// The SCIP index the code graph follows; absent when it resolves by
    /// name only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scip: Option<ScipInUse>,
}

/// A SCIP index read into the code graph (`ken index --scip`, or the
/// snapshot's own `index.scip`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ScipInUse {
    /// The tool that wrote it, with its version (`scip-python 0.6.6`).
    pub tool: String,
    /// Files it described when read; a file changed since resolves by name.
    pub files: usize,
    /// When it was read (seconds since the epoch).
    pub read_at: i64,
}

/// How far history and blame have come.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct PeopleProgress {
    /// Commits in the index's history.
    pub commits: u64,
    /// Indexed files whose blame is stored for their current content.
    pub files_blamed: usize,
    /// Indexed files (not skipped).
    pub files: usize,
}

/// The head of the branch a repository follows at its source, as last polled.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct RemoteState {
    /// The commit the branch pointed at (absent when it could not be read).
    pub head: Option<String>,
    /// `head` is the indexed commit.
    pub fresh: bool,
    /// When it was polled (seconds since the epoch).
    pub polled_at: i64,
    /// Why the head could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl From<&EngineRepoStatus> for Repo {
    fn from(r: &EngineRepoStatus) -> Repo {
        Repo {
            name: r.name.clone(),
            commit: r.state.commit.clone(),
            commit_time: r.state.commit_time,
            worktree: r.state.worktree,
            source: r.state.source.clone(),
            branch: r.state.branch.clone(),
            indexed_at: r.state.indexed_at,
            pending: r.state.pending.clone(),
            embedding_unfinished: r.state.embedding_unfinished,
            remote: r.remote.as_ref().map(|h| RemoteState {
                head: h.head.clone(),
                fresh: h.head.is_some() && h.head == r.state.commit,
                polled_at: h.polled_at,
                error: h.error.clone(),
            }),
            stats: RepoStats {
                files: r.stats.files,
                skipped_files: r.stats.skipped_files,
                skipped: r.stats.skipped.clone(),
                chunks: r.stats.chunks,
                symbols: r.stats.symbols,
                bytes: r.stats.bytes,
            },
            index_bytes: r.index_bytes,
            embeddings: r
                .embeddings
                .iter()
                .map(|e| Embeddings {
                    model: e.model.clone(),
                    embedded: e.embedded,
                    chunks: e.chunks,
                    indexed: e.indexed,
                })
                .collect(),
            people: PeopleProgress {
                commits: r.people.commits,
                files_blamed: r.people.files_blamed,
                files: r.people.files,
            },
            ranking: r.state.ranking.as_ref().and_then(ranking_value),
            adapter: r.state.adapter.as_ref().and_then(|a| {
                let mut a = a.clone();
                a.weights.clear();
                serde_json::to_value(a).ok()
            }),
            issue_templates: r.issue_templates.clone(),
            scip: r.state.scip.as_ref().map(|s| ScipInUse {
                tool: s.tool.clone(),
                files: s.files,
                read_at: s.read_at,
            }),
        }
    }
}

impl Repo {
    /// A repository as a remote caller sees it: no path of the server's
    /// unless the caller is an admin.
    pub fn for_caller(r: &EngineRepoStatus, who: &ken_engine::Principal) -> Repo {
        Repo {
            source: r.source_for(who).map(str::to_string),
            ..Repo::from(r)
        }
    }
}

/// `ken status --json` and `GET /api/v1/repos`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Repos {
    pub repos: Vec<Repo>,
}

/// Lines of a file at the indexed commit.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct FileRange {
    pub repo: String,
    pub path: String,
    pub commit: Option<String>,
    pub language: String,
    pub start_line: u32,
    pub end_line: u32,
    pub total_lines: u32,
    pub text: String,
    /// Each line as highlighted HTML (`highlight=true`): `<span class="hl-keyword">`…
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lines_html: Option<Vec<String>>,
}

impl From<&EngineRange> for FileRange {
    fn from(r: &EngineRange) -> FileRange {
        FileRange {
            repo: r.repo.clone(),
            path: r.path.clone(),
            commit: r.commit.clone(),
            language: r.language.clone(),
            start_line: r.start_line,
            end_line: r.end_line,
            total_lines: r.total_lines,
            text: r.text.clone(),
            lines_html: r.lines_html.clone(),
        }
    }
}

/// Who last changed a range of lines.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct BlameRange {
    pub start_line: u32,
    pub end_line: u32,
    pub sha: String,
    pub author: String,
    /// The author's person id.
    pub person: String,
    /// Author time, seconds since the epoch.
    pub when: i64,
    pub summary: String,
}

/// `GET /api/v1/repos/{name}/blame`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Blame {
    pub repo: String,
    pub path: String,
    pub commit: Option<String>,
    pub ranges: Vec<BlameRange>,
}

impl From<&ken_engine::FileBlame> for Blame {
    fn from(b: &ken_engine::FileBlame) -> Blame {
        Blame {
            repo: b.repo.clone(),
            path: b.path.clone(),
            commit: b.commit.clone(),
            ranges: b
                .ranges
                .iter()
                .map(|r| BlameRange {
                    start_line: r.start_line,
                    end_line: r.end_line,
                    sha: r.sha.clone(),
                    author: r.author.clone(),
                    person: r.person.clone(),
                    when: r.when,
                    summary: r.summary.clone(),
                })
                .collect(),
        }
    }
}

/// A directory and the lines a person last changed in it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Area {
    pub path: String,
    pub lines: u64,
    /// Their share of the directory's lines, 0..1.
    pub share: f64,
}

/// `GET /api/v1/people/{id}`: aliases, areas owned, recent commits.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct PersonPage {
    pub repo: String,
    pub person: Person,
    pub areas: Vec<Area>,
    pub commits: Vec<Commit>,
}

impl From<&ken_engine::PersonView> for PersonPage {
    fn from(v: &ken_engine::PersonView) -> PersonPage {
        let people = People::from_engine(&[(v.repo.clone(), v.person.clone())]);
        PersonPage {
            repo: v.repo.clone(),
            person: people.people[0].person.clone(),
            areas: v
                .areas
                .iter()
                .map(|a| Area {
                    path: a.path.clone(),
                    lines: a.lines,
                    share: round(a.share),
                })
                .collect(),
            commits: LogSearch::from_engine("", &v.commits).results,
        }
    }
}

/// An index job.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Job {
    pub id: String,
    pub kind: String,
    pub repo: String,
    pub rev: Option<String>,
    /// `cli`, `api`, `mcp` or `webhook`.
    pub origin: String,
    /// `queued`, `running`, `done` or `failed`.
    pub state: String,
    /// `{"phase": "files"|"embedding", "done", "total"}` while running.
    #[schema(value_type = Option<Object>)]
    pub progress: Option<serde_json::Value>,
    /// The index report once done.
    #[schema(value_type = Option<Object>)]
    pub result: Option<serde_json::Value>,
    pub error: Option<String>,
    pub attempts: u32,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
}

impl From<&EngineJob> for Job {
    fn from(j: &EngineJob) -> Job {
        Job {
            id: j.id.clone(),
            kind: j.kind.clone(),
            repo: j.repo.clone(),
            rev: j.rev.clone(),
            origin: j.origin.clone(),
            state: j.state.name().to_string(),
            progress: j.progress.clone(),
            // the engine's report, in the shape `ken index --json` prints
            result: j
                .result
                .clone()
                .and_then(|v| serde_json::from_value::<IndexReport>(v).ok())
                .and_then(|r| serde_json::to_value(IndexRun::from(&r)).ok()),
            error: j.error.clone(),
            attempts: j.attempts,
            created_at: j.created_at,
            started_at: j.started_at,
            finished_at: j.finished_at,
        }
    }
}

/// `GET /api/v1/jobs`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Jobs {
    pub jobs: Vec<Job>,
}

/// The answer to queuing a job: `{"job"}` (the id), and the job.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Queued {
    /// The job's id.
    pub job: String,
    /// False when an earlier request already queued this work.
    pub new: bool,
    pub status: Job,
}

/// A webhook delivery that queued nothing.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Ignored {
    pub ignored: String,
}

/// `ken index --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct IndexRun {
    pub name: String,
    pub commit: Option<String>,
    pub worktree: bool,
    pub up_to_date: bool,
    pub files: u64,
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
    pub renamed: u64,
    pub processed: u64,
    pub chunks: u64,
    pub bytes: u64,
    pub skipped: BTreeMap<String, u64>,
    pub skipped_examples: BTreeMap<String, Vec<String>>,
    pub warnings: Vec<String>,
    #[schema(value_type = Option<Object>)]
    pub embed: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub graph: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub people: Option<serde_json::Value>,
    /// The ranking learned from history this run (absent: not learned again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub ranking: Option<serde_json::Value>,
    /// The query map dense retrieval learned from history this run,
    /// without its factors (absent: not learned again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub adapter: Option<serde_json::Value>,
    /// What the collection index (searches over every repository) took
    /// from this run: files, deleted, whole, commits (absent: it held it already).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub fleet: Option<serde_json::Value>,
    /// Milliseconds until the snapshot answered searches (lexical, symbols,
    /// graph); history, blame and embedding came after (absent: up to date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub searchable_ms: Option<u64>,
    /// What reading a SCIP index into the code graph did: path, tool,
    /// documents, files (read), stale, not_indexed, symbols,
    /// symbols_matched, sites, edges, edges_from_scip (absent: none read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub scip: Option<serde_json::Value>,
    pub elapsed_ms: u64,
}

impl From<&IndexReport> for IndexRun {
    fn from(r: &IndexReport) -> IndexRun {
        let v = |x: Option<serde_json::Value>| x.filter(|v| !v.is_null());
        IndexRun {
            name: r.name.clone(),
            commit: r.commit.clone(),
            worktree: r.worktree,
            up_to_date: r.up_to_date,
            files: r.files,
            added: r.added,
            modified: r.modified,
            deleted: r.deleted,
            renamed: r.renamed,
            processed: r.processed,
            chunks: r.chunks,
            bytes: r.bytes,
            skipped: r.skipped.clone(),
            skipped_examples: r.skipped_examples.clone(),
            warnings: r.warnings.clone(),
            embed: v(serde_json::to_value(&r.embed).ok()),
            graph: v(serde_json::to_value(&r.graph).ok()),
            people: v(serde_json::to_value(&r.people).ok()),
            ranking: r.ranking.as_ref().and_then(ranking_value),
            adapter: v(serde_json::to_value(&r.adapter).ok()),
            fleet: v(serde_json::to_value(&r.fleet).ok()),
            searchable_ms: r.searchable_ms,
            scip: v(serde_json::to_value(&r.scip).ok()),
            elapsed_ms: r.elapsed_ms,
        }
    }
}

/// `ken token create --json`: the token, shown once.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct NewToken {
    pub token: String,
    pub id: String,
}

/// `ken embed --json`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Embedded {
    pub model: String,
    pub dim: usize,
    pub vectors: Vec<Vec<f32>>,
}

/// `GET /healthz`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Health {
    pub ok: bool,
    pub version: String,
}

#[cfg(test)]
mod tests {
    //! Snapshots of every shape: the JSON a client reads, written out in full.

    use super::*;
    use ken_core::{ChunkKind, Language, Signals};
    use ken_engine::StructureResult;
    use serde_json::json;

    fn hit() -> Hit {
        let mut signals = Signals::default();
        signals.set("bm25", 2, 7.123456);
        signals.set("exact", 1, 1.0);
        Hit {
            chunk_id: 9,
            repo: "flask".into(),
            path: "src/flask/config.py".into(),
            start_line: 77,
            end_line: 99,
            language: Language::Python,
            kind: ChunkKind::Method,
            symbol: Some("Config.from_envvar".into()),
            signature: Some("def from_envvar(self, variable_name)".into()),
            doc: None,
            score: 0.0333333,
            pinned: true,
            signals,
            commit: Some("abc123".into()),
            authors: vec![ken_core::AuthorShare {
                name: "Ada".into(),
                share: 0.75,
            }],
            snippet: "def from_envvar(...):".into(),
            cell: None,
        }
    }

    #[test]
    fn search_result_shape() {
        let r = SearchResult::from_hit(1, &hit());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "rank": 1, "repo": "flask", "path": "src/flask/config.py",
                "start_line": 77, "end_line": 99, "language": "python", "kind": "method",
                "symbol": "Config.from_envvar", "score": 0.0333, "pinned": true,
                "signals": {"bm25": {"rank": 2, "score": 7.1235}, "exact": {"rank": 1, "score": 1.0}},
                "commit": "abc123", "authors": [{"name": "Ada", "share": 0.75}],
                "snippet": "def from_envvar(...):"
            })
        );
    }

    #[test]
    fn search_shape() {
        let resp = SearchResponse {
            query: "from_envvar".into(),
            took_ms: 3,
            hits: vec![hit()],
            notes: vec![],
            rerank: None,
            repos: vec![],
        };
        let v = serde_json::to_value(Search::from(&resp)).unwrap();
        assert_eq!(v["query"], "from_envvar");
        assert_eq!(v["took_ms"], 3);
        assert_eq!(v["results"][0]["rank"], 1);
        assert_eq!(v["notes"], json!([]));
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["notes", "query", "results", "took_ms"]);
    }

    #[test]
    fn error_shape() {
        let e =
            EngineError::not_found("no repository named `x` is indexed").with_hint("indexed: a");
        assert_eq!(
            serde_json::to_value(ErrorBody::from_engine(&e, Edge::Http)).unwrap(),
            json!({"error": {"code": "not_found", "message": "no repository named `x` is indexed", "hint": "indexed: a"}})
        );
        let plain = ErrorBody::new("internal", "boom", None);
        assert_eq!(
            serde_json::to_value(plain).unwrap(),
            json!({"error": {"code": "internal", "message": "boom"}})
        );
    }

    #[test]
    fn structure_shape() {
        let r = StructureResult {
            symbol: "load".into(),
            candidates: vec![ken_engine::DefRef {
                path: "a.py".into(),
                symbol: "load".into(),
                kind: "function".into(),
                start_line: 1,
                end_line: 3,
            }],
            results: vec![ken_engine::Related {
                path: "b.py".into(),
                symbol: "main".into(),
                start_line: 5,
                end_line: 9,
                depth: 2,
                via: vec![ken_engine::Step {
                    from: "b.py:main".into(),
                    to: "a.py:run".into(),
                    kind: "call".into(),
                    path: "b.py".into(),
                    line: 6,
                    rule: "import".into(),
                    confidence: 1.0,
                }],
            }],
        };
        assert_eq!(
            serde_json::to_value(Structure::from_engine(&StructureAnswer {
                repo: "r".into(),
                commit: Some("abc".into()),
                result: r
            }))
            .unwrap(),
            json!({
                "symbol": "load", "repo": "r", "commit": "abc",
                "candidates": [{"path": "a.py", "symbol": "load", "kind": "function", "start_line": 1, "end_line": 3}],
                "results": [{"path": "b.py", "symbol": "main", "start_line": 5, "end_line": 9, "depth": 2,
                    "via": [{"from": "b.py:main", "to": "a.py:run", "kind": "call", "path": "b.py", "line": 6,
                        "rule": "import", "confidence": 1.0}]}]
            })
        );
    }

    #[test]
    fn who_shape() {
        let w = EngineWho {
            query: "config".into(),
            read_as: "topic".into(),
            people: vec![ken_engine::WhoPerson {
                rank: 1,
                id: "ada".into(),
                name: "Ada".into(),
                emails: vec!["ada@example.com".into()],
                score: 0.5,
                evidence: vec![ken_engine::Evidence {
                    path: "a.py".into(),
                    symbol: Some("load".into()),
                    share: 1.0,
                    last_commit: Some("abc".into()),
                    when: Some(1_700_000_000),
                }],
            }],
            notes: Vec::new(),
            tickets: Vec::new(),
        };
        assert_eq!(
            serde_json::to_value(Who::from(&w)).unwrap(),
            json!({"query": "config", "read_as": "topic", "people": [{
                "rank": 1, "id": "ada", "name": "Ada", "emails": ["ada@example.com"], "score": 0.5,
                "evidence": [{"path": "a.py", "symbol": "load", "share": 1.0, "last_commit": "abc", "when": 1700000000}]
            }]})
        );
    }

    #[test]
    fn claim_shape() {
        let c = EngineClaim {
            text: "It loads [a.py:1-3].".into(),
            status: ken_engine::ClaimStatus::Verified,
            citations: vec![
                ken_engine::Citation {
                    path: "a.py".into(),
                    start_line: 1,
                    end_line: 3,
                    valid: true,
                    raw: "a.py:1-3".into(),
                    cell: None,
                },
                ken_engine::Citation {
                    path: "b.ipynb".into(),
                    start_line: 4,
                    end_line: 5,
                    valid: true,
                    raw: "b.ipynb:4-5".into(),
                    cell: Some(2),
                },
            ],
            span: 0..10,
        };
        assert_eq!(
            serde_json::to_value(Claim::from(&c)).unwrap(),
            json!({"text": "It loads [a.py:1-3].", "status": "verified",
                   "citations": [{"path": "a.py", "start_line": 1, "end_line": 3, "valid": true},
                                 {"path": "b.ipynb", "start_line": 4, "end_line": 5, "valid": true, "cell": 2}]})
        );
    }

    #[test]
    fn job_shape() {
        let j = EngineJob {
            id: "job_1".into(),
            kind: "index".into(),
            repo: "flask".into(),
            rev: Some("abc".into()),
            origin: "webhook".into(),
            state: ken_engine::JobState::Running,
            progress: Some(json!({"phase": "files", "done": 1, "total": 2})),
            result: None,
            error: None,
            attempts: 1,
            created_at: 10,
            started_at: Some(11),
            finished_at: None,
        };
        assert_eq!(
            serde_json::to_value(Job::from(&j)).unwrap(),
            json!({"id": "job_1", "kind": "index", "repo": "flask", "rev": "abc", "origin": "webhook",
                   "state": "running", "progress": {"phase": "files", "done": 1, "total": 2},
                   "result": null, "error": null, "attempts": 1, "created_at": 10,
                   "started_at": 11, "finished_at": null})
        );
    }
}

/// `ken report --json` and `GET /api/v1/repos/{name}/report`: the report
/// as `ken_report` writes it; its schema is documented in docs/report.md.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(value_type = Object)]
pub struct ReportDoc(pub serde_json::Value);

/// What was learned, as the wire shows it: the documentation's router as
/// the number of its words, not the words.
fn ranking_value(t: &ken_engine::TunedRanking) -> Option<serde_json::Value> {
    let mut v = serde_json::to_value(t).ok()?;
    if let Some(d) = v.get_mut("docs").and_then(|d| d.as_object_mut())
        && let Some(router) = d.remove("router")
    {
        let words = router.as_object().map_or(0, |m| m.len());
        d.insert("router_words".into(), words.into());
    }
    Some(v)
}
