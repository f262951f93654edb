//! Finding and following the fleet.
//!
//! - **Sync** (`ken repos sync --github ORG`, `--gitlab GROUP`): list a code
//!   host's repositories through its REST API (`ken_source::list_repositories`)
//!   and queue an index job for each one not indexed yet; archived
//!   repositories, forks and empty ones are skipped unless asked for.
//! - **Poll** (`ken repos poll`, and every `poll_interval` seconds in
//!   `ken serve` / `ken worker`): for each repository, read the head of the
//!   branch it follows at its source (a fetch of the clone for a URL, the
//!   repository itself for a path), record it (`ken status` shows it beside
//!   the indexed commit), and queue an index job only when it moved. The
//!   job's key is the one a push webhook uses (`NAME@COMMIT`), so a push
//!   and a poll of the same commit index it once.
//! - **Branches**: a repository configured with `branches = [...]` is
//!   followed on each: its default branch by its own index, every other
//!   branch by an index named `NAME@BRANCH` (queued by the first poll or
//!   push that names it), which a search reaches with a `branch:` filter.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ken_source::{GitRepo, HostKind, HostQuery};
use ken_store::RemoteHead;
use serde::Serialize;

use crate::access::Access;
use crate::access::{Principal, Scope};
use crate::jobs::IndexJob;
use crate::repo::OpenRepo;
use crate::{Engine, EngineError, Result, home};

/// Which host's repositories to list.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    pub host: HostKind,
    /// The organisation or user (GitHub), or the group's full path (GitLab).
    pub owner: String,
    /// The API's base URL (default: the public host's).
    pub api_url: Option<String>,
    /// A token for the API (the binary reads it from the environment).
    pub token: Option<String>,
    /// Index archived repositories too.
    pub archived: bool,
    /// Index forks too.
    pub forks: bool,
    /// List what would be queued, queue nothing.
    pub dry_run: bool,
    /// Longest total wait for the host's rate limit.
    pub max_wait: Duration,
}

/// What a sync found and did.
#[derive(Debug, Clone, Serialize)]
pub struct SyncReport {
    /// `github` or `gitlab`.
    pub host: &'static str,
    pub owner: String,
    /// Pages of the listing read.
    pub pages: usize,
    /// Seconds spent waiting for the host's rate limit.
    pub waited_secs: u64,
    /// Index jobs queued by this sync.
    pub queued: usize,
    pub repos: Vec<SyncedRepo>,
}

/// One repository of a host's listing.
#[derive(Debug, Clone, Serialize)]
pub struct SyncedRepo {
    pub name: String,
    /// The clone URL (without credentials).
    pub url: String,
    pub default_branch: Option<String>,
    /// `queued`, `indexed` (already; polling keeps it fresh), `skipped`,
    /// or `listed` (a dry run).
    pub action: &'static str,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The index job, when one was queued (now or by an earlier sync).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// What one poll found and did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PollReport {
    /// Index jobs queued by this poll.
    pub queued: usize,
    pub repos: Vec<Polled>,
}

/// One repository (or branch) of a poll.
#[derive(Debug, Clone, Serialize)]
pub struct Polled {
    pub repo: String,
    /// The branch followed (None: the source's default).
    pub branch: Option<String>,
    /// The indexed commit.
    pub indexed: Option<String>,
    /// The head of the branch at the source.
    pub head: Option<String>,
    /// `fresh` (the head is indexed), `queued`, `skipped` or `failed`.
    pub action: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// The head of the branch a repository follows, read at its source.
struct SourceHead {
    head: String,
    /// The name of the source's default branch, when it says.
    default_branch: Option<String>,
}

impl Engine {
    /// List a host's repositories and queue the indexing of each new one
    /// (scope `admin`: it adds repositories).
    pub fn sync(&self, req: &SyncRequest, who: &Principal) -> Result<SyncReport> {
        who.require(Scope::Admin)?;
        if req.owner.trim().is_empty() {
            return Err(EngineError::bad_input(
                "name the organisation, user or group to list",
            ));
        }
        let policy = ken_source::RemotePolicy {
            allow_private: self.settings().allow_private_urls,
        };
        let listing = ken_source::list_repositories(
            &HostQuery {
                kind: req.host,
                owner: req.owner.trim().to_string(),
                api_url: req.api_url.clone(),
                token: req.token.clone(),
                max_wait: req.max_wait,
            },
            policy,
        )?;
        let mut report = SyncReport {
            host: match req.host {
                HostKind::GitHub => "github",
                HostKind::GitLab => "gitlab",
            },
            owner: req.owner.trim().to_string(),
            pages: listing.pages,
            waited_secs: listing.waited_secs,
            queued: 0,
            repos: Vec::with_capacity(listing.repos.len()),
        };
        for r in listing.repos {
            let mut out = SyncedRepo {
                name: r.full_name.clone(),
                url: ken_source::redact(&r.clone_url),
                default_branch: r.default_branch.clone(),
                action: "skipped",
                why: None,
                job: None,
            };
            out.why = if let Err(why) = ken_core::repo_name::check(&r.full_name) {
                Some(format!("not a repository name ken accepts: {why}"))
            } else if r.archived && !req.archived {
                Some("archived (--archived indexes it)".into())
            } else if r.fork && !req.forks {
                Some("a fork (--forks indexes it)".into())
            } else if r.empty {
                Some("empty: no commits yet".into())
            } else if let Err(e) = ken_source::check_remote(&r.clone_url, policy) {
                Some(e.to_string())
            } else {
                None
            };
            if out.why.is_none() {
                if self.is_indexed(&r.full_name)? {
                    out.action = "indexed";
                } else if req.dry_run {
                    out.action = "listed";
                } else {
                    let (job, new) = self.enqueue_index(
                        IndexJob {
                            repo: r.full_name.clone(),
                            source: Some(r.clone_url.clone()),
                            rev: None,
                            origin: "sync".into(),
                            dedupe: Some(format!("sync:{}", r.full_name)),
                        },
                        who,
                    )?;
                    report.queued += usize::from(new);
                    out.action = "queued";
                    out.job = Some(job.id);
                }
            }
            report.repos.push(out);
        }
        Ok(report)
    }

    /// Read the head each repository follows at its source, record it, and
    /// queue an index job where it moved; queue the first index of each
    /// configured branch not indexed yet (scope `index`).
    pub fn poll(&self, who: &Principal) -> Result<PollReport> {
        who.require(Scope::Index)?;
        // one listing: every name (for the branches' indexes), and the
        // repositories the caller may poll
        let mut repos = self.repos(&Access::All)?;
        let names: HashSet<String> = repos.iter().map(|r| r.name.clone()).collect();
        repos.retain(|r| who.access.allows(&r.name));
        let home = self.home_store()?;
        let mut report = PollReport::default();
        for r in &repos {
            let (polled, default_branch) = self.poll_one(r, who)?;
            if polled.action != "skipped" {
                home.put_remote_head(&RemoteHead {
                    repo: r.name.clone(),
                    branch: polled.branch.clone(),
                    head: polled.head.clone(),
                    polled_at: crate::time::now(),
                    error: polled.why.clone().filter(|_| polled.action == "failed"),
                })?;
            }
            report.queued += usize::from(polled.action == "queued");
            report.repos.push(polled);
            if r.state.branch.is_none() {
                let added = self.add_branches(r, default_branch.as_deref(), &names, who)?;
                report.queued += added.len();
                report.repos.extend(added);
            }
        }
        Ok(report)
    }

    /// Poll every `interval` until `stop` is set (`ken serve`, `ken
    /// worker`); a failed round is reported through `on_error` and the next
    /// one comes as usual.
    pub fn poll_every(
        &self,
        interval: Duration,
        stop: &AtomicBool,
        on_error: &dyn Fn(&EngineError),
    ) {
        let who = Principal::local();
        while !stop.load(Ordering::Relaxed) {
            let started = Instant::now();
            if let Err(e) = self.poll(&who) {
                on_error(&e);
            }
            while started.elapsed() < interval && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200).min(interval));
            }
        }
    }

    /// The indexes a `branch:` filter selects: those following one of its
    /// branches, of the named repositories when some are named (by their
    /// own name or their repository's).
    pub(crate) fn on_branches(
        &self,
        filters: &ken_core::Filters,
        access: &Access,
    ) -> Result<Vec<Arc<OpenRepo>>> {
        let all = self.repos(access)?;
        let on: Vec<Arc<OpenRepo>> = all
            .iter()
            .filter(|r| {
                let Some(b) = r.state.branch.as_deref() else {
                    return false;
                };
                filters.branches.iter().any(|f| f == b)
                    && (filters.repos.is_empty()
                        || filters.repos.iter().any(|n| {
                            *n == r.name || n == crate::branch::branch_base(&r.name, Some(b))
                        }))
            })
            .cloned()
            .collect();
        if on.is_empty() {
            let mut followed: Vec<String> = all
                .iter()
                .filter_map(|r| r.state.branch.as_ref().map(|b| format!("{} ({b})", r.name)))
                .collect();
            followed.sort();
            return Err(EngineError::not_found(format!(
                "no index follows branch {}",
                filters.branches.join(" or ")
            ))
            .with_hint(if followed.is_empty() {
                "list a repository's branches in the config (`branches = [\"main\", \"2.3.x\"]`) and poll, or index one with `ken index URL --branch NAME`".to_string()
            } else {
                format!("branches indexed: {}", followed.join(", "))
            }));
        }
        Ok(on)
    }

    /// Is there an index under this name's storage key (without opening it)?
    pub(crate) fn is_indexed(&self, name: &str) -> Result<bool> {
        let stores = self.stores()?;
        Ok(stores.exists(&stores.key_of(name))?)
    }

    /// Every repository's last poll, by name.
    pub(crate) fn remote_heads(&self) -> Result<Vec<RemoteHead>> {
        Ok(self.home_store()?.remote_heads()?)
    }

    fn poll_one(&self, r: &OpenRepo, who: &Principal) -> Result<(Polled, Option<String>)> {
        let mut polled = Polled {
            repo: r.name.clone(),
            branch: r.state.branch.clone(),
            indexed: r.state.commit.clone(),
            head: None,
            action: "skipped",
            why: None,
            job: None,
        };
        if r.state.worktree || r.state.source.is_none() {
            polled.why = Some("a working tree or folder: `ken index` reads it again".into());
            return Ok((polled, None));
        }
        let head = match self.source_head(r, &mut polled) {
            Ok(h) => h,
            Err(e) => {
                polled.action = "failed";
                polled.why = Some(e.message_for(crate::Edge::Http));
                return Ok((polled, None));
            }
        };
        polled.head = Some(head.head.clone());
        if r.state.commit.as_deref() == Some(head.head.as_str()) {
            polled.action = "fresh";
        } else {
            let (job, _) = self.enqueue_index(
                IndexJob {
                    repo: r.name.clone(),
                    source: None,
                    rev: Some(head.head.clone()),
                    origin: "poll".into(),
                    dedupe: Some(format!("{}@{}", r.name, head.head)),
                },
                who,
            )?;
            polled.action = "queued";
            polled.job = Some(job.id);
        }
        Ok((polled, head.default_branch))
    }

    /// The head of the branch `r` follows, read at its source: a clone URL
    /// is fetched into the clone its index reads; a path is read in place.
    /// A repository whose configured branches leave out the default
    /// follows the first of them (`own_branch`); `polled.branch` says so.
    fn source_head(&self, r: &OpenRepo, polled: &mut Polled) -> Result<SourceHead> {
        let source = r.state.source.as_deref().unwrap_or_default();
        let mut branch = r.state.branch.clone();
        if branch.is_none() {
            let default = self.source_default_branch(r, source);
            branch = self
                .own_branch(&r.name, default.as_deref())
                .filter(|b| Some(b) != default.as_ref());
            polled.branch = branch.clone();
        }
        let branch = branch.as_deref();
        if ken_source::is_url(source) {
            let settings = self.settings();
            let remote = ken_source::check_remote(
                source,
                ken_source::RemotePolicy {
                    allow_private: settings.allow_private_urls,
                },
            )?;
            let dest = home::clone_dir(&settings.home, crate::branch::branch_base(&r.name, branch));
            let default_rev =
                ken_source::clone_or_fetch(&remote, &dest, settings.git_token.as_deref())?;
            let repo = GitRepo::open(&dest)?;
            let rev = branch.map_or(default_rev, |b| format!("refs/remotes/origin/{b}"));
            return Ok(SourceHead {
                head: repo.resolve(&rev)?.sha,
                default_branch: repo.branch_of("refs/remotes/origin/HEAD"),
            });
        }
        let repo = GitRepo::open(std::path::Path::new(source))?;
        Ok(SourceHead {
            head: repo.resolve(branch.unwrap_or("HEAD"))?.sha,
            default_branch: repo.branch_of("HEAD"),
        })
    }

    /// The source's default branch as its clone (or itself) last said.
    fn source_default_branch(&self, r: &OpenRepo, source: &str) -> Option<String> {
        if ken_source::is_url(source) {
            let dest = home::clone_dir(&self.settings().home, &r.name);
            GitRepo::open(&dest)
                .ok()?
                .branch_of("refs/remotes/origin/HEAD")
        } else {
            GitRepo::open(std::path::Path::new(source))
                .ok()?
                .branch_of("HEAD")
        }
    }

    /// Queue the first index of each branch configured for `r` that has no
    /// index yet (`NAME@BRANCH`, from `r`'s source).
    fn add_branches(
        &self,
        r: &Arc<OpenRepo>,
        default_branch: Option<&str>,
        names: &HashSet<String>,
        who: &Principal,
    ) -> Result<Vec<Polled>> {
        let Some(branches) = self.settings().repo_branches.get(&r.name) else {
            return Ok(Vec::new());
        };
        let Some(source) = r.state.source.clone() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let own = self.own_branch(&r.name, default_branch);
        for b in branches {
            let entry = format!("{}@{b}", r.name);
            if Some(b) == own.as_ref() || names.contains(&entry) {
                continue;
            }
            let (job, _) = self.enqueue_index(
                IndexJob {
                    repo: entry.clone(),
                    source: Some(source.clone()),
                    rev: None,
                    origin: "poll".into(),
                    dedupe: Some(format!("branch:{entry}")),
                },
                who,
            )?;
            out.push(Polled {
                repo: entry,
                branch: Some(b.clone()),
                indexed: None,
                head: None,
                action: "queued",
                why: Some(format!("branch {b} is configured for {}", r.name)),
                job: Some(job.id),
            });
        }
        Ok(out)
    }
}
