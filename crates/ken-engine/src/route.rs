//! A question over every repository: route it, search the repositories it
//! was routed to, merge their hits on one scale.
//!
//! Routing reads the collection index (`ken_store::Fleet`): one BM25 over
//! every repository's files, so scores share collection-wide statistics.
//! A repository's weight is the mass of its files among the best
//! `route_files`, `Σ exp((s − s_max) / (route_temp · s_max))` (each term
//! shared among the repositories whose best hold the same path), mixed
//! with the same over commit messages and normalised
//! to a probability that it holds the answer; the `route_repos` heaviest
//! are searched in full, with every repository that defines a symbol the
//! question names exactly (a symbol defined in several repositories lists
//! every definition). A repository the collection does not hold yet is
//! searched directly, as before routing; a question routing cannot read
//! (asked by meaning only, `Mode::Semantic`, or with no word found in any
//! repository) searches every repository alike. Within each repository the hits
//! keep their order; across repositories a hit's score is its repository's
//! weight times its score relative to that repository's best, and exact
//! symbol hits stay pinned above the rest.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use ken_core::Hit;
use ken_embed::Embedder;
use ken_store::{Fleet, FleetHit, LexicalQuery, StoreProvider};

use crate::params::RankParams;
use crate::question::Question;
use crate::repo::OpenRepo;
use crate::search::{Mode, RepoFacet, SearchRequest, SearchResponse, search_one};
use crate::{EngineError, Result};

/// Candidates per list in a repository searched only for its definitions.
const DEFINITION_CANDIDATES: usize = 20;

/// Repositories, as an edge knows them: listed, opened, allowed.
pub(crate) struct Repos<'a> {
    pub stores: &'a dyn StoreProvider,
    pub fleet: &'a dyn Fleet,
    /// Open a repository's index by its key (cached by the caller).
    pub open: &'a dyn Fn(&str) -> Result<Arc<OpenRepo>>,
    /// May the caller see this repository (by name)?
    pub allows: &'a dyn Fn(&str) -> bool,
}

/// A repository a question was routed to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Routed {
    pub name: String,
    pub key: String,
    /// How likely it holds the answer (the weights of all routed sum to at most 1).
    pub weight: f32,
    /// Routed only because it defines a symbol the question names: its
    /// exact definitions are what it is searched for, with fewer candidates.
    pub by_definition: bool,
}

/// The repositories to search for `req`, heaviest first.
pub(crate) fn route(
    repos: &Repos<'_>,
    req: &SearchRequest,
    question: &Question,
    p: &RankParams,
) -> Result<Vec<Routed>> {
    let reflected = repos.fleet.reflected()?;
    // a branch's index (`NAME@BRANCH`) is searched only when asked for
    let branches: HashSet<String> = {
        let names: HashSet<String> = reflected.keys().cloned().collect();
        let keep = crate::branch::without_branches(names.iter().cloned());
        names
            .difference(&keep)
            .map(|n| repos.stores.key_of(n))
            .collect()
    };
    let keys: HashSet<String> = repos
        .stores
        .list()?
        .into_iter()
        .filter(|k| !branches.contains(k))
        .collect();
    // names the collection holds whose index is still there, by key
    let held: HashMap<String, String> = reflected
        .keys()
        .map(|name| (repos.stores.key_of(name), name.clone()))
        .filter(|(key, name)| keys.contains(key) && (repos.allows)(name))
        .collect();
    let by_name: HashMap<&str, &str> = held.iter().map(|(k, n)| (n.as_str(), k.as_str())).collect();

    let query = LexicalQuery {
        text: req.query.clone(),
        limit: p.route_files.max(1),
        languages: req.filters.languages.clone(),
        paths: None,
        weights: p.fields,
    };
    let lexical = req.mode != Mode::Semantic;
    let files = if lexical {
        repos.fleet.search(&query)?
    } else {
        Vec::new()
    };
    let commits = if lexical && p.route_history > 0.0 && req.filters.languages.is_empty() {
        repos.fleet.search_commits(&query)?
    } else {
        Vec::new()
    };
    let known = |repo: &str| by_name.contains_key(repo);
    let mut mass: BTreeMap<&str, f32> = BTreeMap::new();
    for (hits, share) in [(&files, 1.0 - p.route_history), (&commits, p.route_history)] {
        for (repo, w) in weights(hits, p.route_temp, &known, p.route_shared > 0.0) {
            *mass.entry(repo).or_default() += share * w;
        }
    }
    let total: f32 = mass.values().sum();
    let mut ranked: Vec<(&str, f32)> = mass
        .iter()
        .map(|(n, m)| (*n, if total > 0.0 { m / total } else { 0.0 }))
        .collect();
    let share: HashMap<&str, f32> = ranked.iter().copied().collect();
    let mass_of = |name: &str| share.get(name).copied().unwrap_or(0.0);
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    // the heaviest, until they hold `route_mass` of the weight (at most
    // `route_repos`): a decided question searches one repository
    let mut held_mass = 0.0;
    let keep = ranked
        .iter()
        .take_while(|(_, w)| {
            let before = held_mass;
            held_mass += w;
            before < p.route_mass
        })
        .count();
    ranked.truncate(keep.clamp(1, p.route_repos.max(1)));
    if ranked.is_empty() {
        // no word of the question is anywhere (or it is asked by meaning
        // only): nothing to route by, every repository is searched alike
        let n = by_name.len().max(1) as f32;
        ranked = by_name.keys().map(|name| (*name, 1.0 / n)).collect();
        ranked.sort_by(|a, b| a.0.cmp(b.0));
    }
    let mut out: Vec<Routed> = ranked
        .into_iter()
        .map(|(name, weight)| Routed {
            name: name.to_string(),
            key: by_name[name].to_string(),
            weight,
            by_definition: false,
        })
        .collect();

    // repositories defining a symbol the question names exactly, the
    // heaviest first (at most `route_defining`: forks and copies of one
    // repository all define its symbols)
    let mut defining: Vec<(f32, &str)> = Vec::new();
    for ident in question.idents.iter().filter(|i| i.strong) {
        for h in repos.fleet.defining(&ident.text, 200)? {
            let name = by_name.get_key_value(h.repo.as_str()).map(|(n, _)| *n);
            if let Some(name) = name
                && !out.iter().any(|r| r.name == name)
                && !defining.iter().any(|(_, n)| *n == name)
            {
                defining.push((mass_of(name), name));
            }
        }
    }
    defining.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let floor = out.iter().map(|r| r.weight).reduce(f32::min).unwrap_or(1.0);
    for (weight, name) in defining.into_iter().take(p.route_defining) {
        out.push(Routed {
            name: name.to_string(),
            key: by_name[name].to_string(),
            weight: weight.min(floor),
            by_definition: true,
        });
    }

    // repositories the collection does not hold yet: searched directly
    let reflected_keys: HashSet<String> =
        reflected.keys().map(|n| repos.stores.key_of(n)).collect();
    let unheld: Vec<&String> = keys
        .iter()
        .filter(|k| !reflected_keys.contains(*k))
        .collect();
    if !unheld.is_empty() {
        let weight = if out.is_empty() {
            1.0
        } else {
            out.iter().map(|r| r.weight).sum::<f32>() / out.len() as f32
        };
        let mut unheld: Vec<&String> = unheld;
        unheld.sort();
        for key in unheld {
            let repo = (repos.open)(key)?;
            if (repos.allows)(&repo.name) && !crate::branch::is_branch_index(&repo) {
                out.push(Routed {
                    name: repo.name.clone(),
                    key: key.clone(),
                    weight,
                    by_definition: false,
                });
            }
        }
    }
    Ok(out)
}

/// Each repository's share of the softmax of `hits`' scores (temperature
/// `temp` times the best), over the repositories `known` accepts: what the
/// caller may not see does not move the weights of what it may. With
/// `shared`, a path among the hits of k repositories gives each 1/k of its
/// term: copies and forks of one project all hold its files, and thirty
/// copies of one file should not outweigh the one repository whose own
/// file it is.
fn weights<'h>(
    hits: &'h [FleetHit],
    temp: f32,
    known: &dyn Fn(&str) -> bool,
    shared: bool,
) -> BTreeMap<&'h str, f32> {
    let seen: Vec<&FleetHit> = hits.iter().filter(|h| known(&h.repo)).collect();
    // how many repositories' best hold each path (counted only when shared)
    let mut holders: HashMap<&str, f32> = HashMap::new();
    if shared {
        for h in &seen {
            *holders.entry(h.path.as_str()).or_default() += 1.0;
        }
    }
    let scored: Vec<(&str, f32, f32)> = seen
        .iter()
        .map(|h| {
            let share = holders.get(h.path.as_str()).map_or(1.0, |k| 1.0 / k);
            (h.repo.as_str(), h.score, share)
        })
        .collect();
    let best = scored
        .iter()
        .map(|(_, s, _)| *s)
        .fold(0.0f32, f32::max)
        .max(f32::MIN_POSITIVE);
    let temp = (temp * best).max(f32::MIN_POSITIVE);
    let mut mass: BTreeMap<&str, f32> = BTreeMap::new();
    for (repo, score, share) in scored {
        *mass.entry(repo).or_default() += share * ((score - best) / temp).exp();
    }
    let total: f32 = mass.values().sum();
    if total > 0.0 {
        mass.values_mut().for_each(|m| *m /= total);
    }
    mass
}

/// Search every repository the caller may see, through routing.
pub(crate) fn search_all(
    repos: &Repos<'_>,
    req: &SearchRequest,
    rank: &RankParams,
    embedder: Option<&dyn Embedder>,
) -> Result<SearchResponse> {
    let started = Instant::now();
    let embedder = embedder.filter(|_| req.mode != Mode::Lexical);
    if embedder.is_none() && req.mode == Mode::Semantic {
        return Err(
            EngineError::unavailable("semantic search needs an embedding model").with_hint(
                "run `ken model install`, or set KEN_EMBED_MODEL_DIR or KEN_EMBED_BASE_URL",
            ),
        );
    }
    if !rank.route {
        let mut every = Vec::new();
        for key in repos.stores.list()? {
            let repo = (repos.open)(&key)?;
            if (repos.allows)(&repo.name) {
                every.push(repo);
            }
        }
        return crate::search::search_repos(&every, req, rank, embedder);
    }
    let question = Question::read(&req.query, rank.issue_words);
    let routed = route(repos, req, &question, rank)?;
    let mut lists = Vec::with_capacity(routed.len());
    let mut notes = Vec::new();
    // a repository searched for its definitions: the exact hits are found
    // whatever the candidates, and its other hits weigh little
    let narrow = RankParams {
        candidates: DEFINITION_CANDIDATES.min(rank.candidates),
        ..rank.clone()
    };
    for r in &routed {
        let repo = (repos.open)(&r.key)?;
        let rank = if r.by_definition { &narrow } else { rank };
        let out = search_one(&repo, req, &question, rank, embedder)?;
        notes.extend(out.notes);
        lists.push((r.weight, out.hits));
    }
    let mut hits = merge(lists);
    hits.truncate(req.limit);
    let mut resp = SearchResponse {
        query: req.query.clone(),
        took_ms: started.elapsed().as_millis() as u64,
        hits,
        notes,
        rerank: None,
        repos: routed
            .iter()
            .map(|r| RepoFacet {
                repo: r.name.clone(),
                hits: 0,
                weight: Some(r.weight),
            })
            .collect(),
    };
    resp.recount();
    Ok(resp)
}

/// Hits of several repositories on one scale: each list keeps its order,
/// a hit scores its repository's weight times its score over the list's
/// best; pinned hits first, in the order of their own scores.
pub(crate) fn merge(lists: Vec<(f32, Vec<Hit>)>) -> Vec<Hit> {
    let mut all = Vec::new();
    for (weight, hits) in lists {
        let best = hits
            .iter()
            .map(|h| h.score)
            .fold(0.0f32, f32::max)
            .max(f32::MIN_POSITIVE);
        all.extend(hits.into_iter().map(|mut h| {
            // pinned hits keep their own scores: an exact definition is
            // found by name, not routed
            if !h.pinned {
                h.score = weight * h.score / best;
            }
            h
        }));
    }
    all.sort_by(|a, b| b.pinned.cmp(&a.pinned).then(b.score.total_cmp(&a.score)));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(repo: &str, path: &str, score: f32, pinned: bool) -> Hit {
        Hit {
            chunk_id: 0,
            repo: repo.into(),
            path: path.into(),
            start_line: 1,
            end_line: 1,
            language: ken_core::Language::Python,
            kind: ken_core::ChunkKind::Function,
            symbol: None,
            signature: None,
            doc: None,
            score,
            pinned,
            signals: Default::default(),
            commit: None,
            authors: Vec::new(),
            snippet: String::new(),
            cell: None,
        }
    }

    #[test]
    fn lists_keep_their_order_and_the_likelier_repository_leads() {
        // raw scores favour `b`; its repository is far less likely
        let a = vec![hit("a", "x.py", 0.02, false), hit("a", "y.py", 0.01, false)];
        let b = vec![hit("b", "z.py", 0.5, false), hit("b", "w.py", 0.4, false)];
        let merged = merge(vec![(0.9, a), (0.1, b)]);
        let order: Vec<&str> = merged.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(order, ["x.py", "y.py", "z.py", "w.py"]);
    }

    #[test]
    fn weights_ignore_what_the_caller_may_not_see() {
        let fh = |repo: &str, score: f32| FleetHit {
            repo: repo.into(),
            path: "x.py".into(),
            score,
        };
        let seen = [fh("a", 1.0), fh("b", 0.9)];
        let all = [fh("hidden", 10.0), fh("a", 1.0), fh("b", 0.9)];
        let known = |r: &str| r != "hidden";
        let w_seen = weights(&seen, 0.1, &known, false);
        let w_all = weights(&all, 0.1, &known, false);
        assert_eq!(w_seen, w_all);
        assert!(!w_all.contains_key("hidden"));
        assert!(w_all["a"] > w_all["b"]);
    }

    #[test]
    fn a_path_many_repositories_hold_shares_its_weight() {
        let fh = |repo: &str, path: &str, score: f32| FleetHit {
            repo: repo.into(),
            path: path.into(),
            score,
        };
        // three copies hold the same file, one repository its own
        let hits = [
            fh("copy-1", "src/app.py", 1.0),
            fh("copy-2", "src/app.py", 1.0),
            fh("copy-3", "src/app.py", 1.0),
            fh("own", "lib/only.py", 1.0),
        ];
        let all = |_: &str| true;
        let plain = weights(&hits, 0.1, &all, false);
        let shared = weights(&hits, 0.1, &all, true);
        assert!((plain["own"] - 0.25).abs() < 1e-6);
        assert!((shared["own"] - 0.5).abs() < 1e-6, "{shared:?}");
        assert!((shared["copy-1"] - 1.0 / 6.0).abs() < 1e-6, "{shared:?}");
    }

    #[test]
    fn pinned_hits_of_any_repository_come_first() {
        let a = vec![hit("a", "x.py", 1.0, false)];
        let b = vec![hit("b", "def.py", 0.1, true)];
        let merged = merge(vec![(0.99, a), (0.01, b)]);
        assert_eq!(merged[0].path, "def.py");
    }
}
