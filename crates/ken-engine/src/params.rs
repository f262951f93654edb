//! Every knob of ranking in one place: [`RankParams`], with the defaults
//! chosen on the dev evaluation sets, `--param KEY=VALUE` for experiments,
//! and what was learned for a repository laid over it (tune.rs).

use ken_store::FieldWeights;
use serde::Serialize;

use crate::{EngineError, Result};

/// Questions with code that the learner must have read before what it
/// learned is used for questions with code ([`RankParams::for_question`]).
pub const LEARNED_SHAPE_MIN: usize = 20;

/// Ranking constants. Chosen on the dev evaluation sets (see BENCHMARKS.md).
#[derive(Debug, Clone, Serialize)]
pub struct RankParams {
    /// RRF constant.
    pub k: f32,
    pub w_bm25: f32,
    pub w_file: f32,
    pub w_symbol: f32,
    pub w_partial: f32,
    /// Dense (embedding) retrieval.
    pub w_dense: f32,
    /// Files mode: rank files by file-level fusion.
    pub file_fusion: bool,
    /// Files mode: the whole-file BM25 list's weight when a dense list
    /// joins the fusion (`w_file` without one).
    pub w_file_dense: f32,
    /// Files mode: chunk BM25 as a file list.
    pub w_bm25_file: f32,
    /// Files mode: dense retrieval as a file list.
    pub w_dense_file: f32,
    /// Exponent of the file PageRank prior (0: off).
    pub w_pagerank: f32,
    /// Personalized PageRank over the file graph, seeded by the best files
    /// of the other signals, as one more RRF list (0: off).
    pub w_ppr: f32,
    /// Files seeding the personalized PageRank.
    pub ppr_seeds: usize,
    /// Exact symbol matches of plain words in longer queries.
    pub w_weak: f32,
    /// Candidates taken from each list.
    pub candidates: usize,
    /// Most exact hits pinned per query.
    pub max_pinned: usize,
    pub trivial_prior: f32,
    pub prose_prior: f32,
    pub test_prior: f32,
    /// Files an issue-style question points at (traceback frames, paths,
    /// module names), as one more RRF list.
    pub w_mention: f32,
    /// RRF constant of the traceback frames in the mention list: how fast
    /// a frame loses weight the further it is from the error (frames come
    /// innermost first). The first weighs `w_mention / (k + 1)` whatever
    /// this is; equal to `k`, frames decay like every other list. Paths and
    /// modules named keep `k`: the order they are written in says nothing.
    pub k_mention: f32,
    /// A question over every repository is routed (false: every repository
    /// is searched and the hits sorted by their own scores, as before
    /// routing; for measuring it).
    pub route: bool,
    /// A question over every repository: the repositories searched in full
    /// (besides those defining a symbol it names), `route.rs`.
    pub route_repos: usize,
    /// Routing stops adding repositories once those added hold this share
    /// of the weight (1: always `route_repos`).
    pub route_mass: f32,
    /// Repositories searched besides those because they define a symbol
    /// the question names exactly (the heaviest first).
    pub route_defining: usize,
    /// Files of the collection index whose repositories' weights route it.
    pub route_files: usize,
    /// The share of a repository's weight that its past commit messages
    /// decide (the rest: its files).
    pub route_history: f32,
    /// How sharply a file's score decides its repository's weight: the
    /// softmax temperature, relative to the best file's score.
    pub route_temp: f32,
    /// A routing file whose path is among the best of k repositories gives
    /// each 1/k of its weight (forks and copies of one project all hold it,
    /// so it says little about which of them is meant; 0: off).
    pub route_shared: f32,
    /// A question of more words than this (or of several lines, or with a
    /// code block) is read as an issue (`issue.rs`).
    pub issue_words: usize,
    /// Pin exact symbol hits in issue-style questions too (in a bug report
    /// most identifiers are context, not the answer).
    pub pin_issues: bool,
    /// Times an issue's title is repeated in its lexical query.
    pub issue_title: usize,
    /// Leave a bug report's environment dumps (package versions) out of its search.
    pub issue_env_out: bool,
    /// Leave out the lines of a bug report that repeat the repository's
    /// issue templates (`issue_template.rs`).
    pub issue_template_out: bool,
    /// Exponent of the file prior (1 + ln(1 + commits that changed it)) (0: off).
    pub w_churn: f32,
    /// Exponent of the file prior (1 + ln(1 + fix commits that changed it)) (0: off).
    pub w_fixes: f32,
    /// Exponent of the file prior (1 + ln(1 + commits that changed it in the
    /// year before)) (0: off).
    pub w_recent: f32,
    /// `ken who` for a question: how much one past commit that matches it
    /// (at full match, made today) counts against a whole target's lines
    /// (0: off).
    pub w_who_similar: f32,
    /// `ken who`: how much being among the repository's most active authors
    /// lately (commits before the indexed one, each by its recency, the
    /// most active person 1) counts against a whole target's lines (0: off).
    pub w_who_active: f32,
    /// Learn the fusion from each repository's history at index time and
    /// search with what was learned (tune.rs); off: these constants only.
    pub learned: bool,
    /// Questions that read like the repository's documentation (its
    /// section headings) get the constants learned from it, when it taught
    /// any (tune_docs.rs); off (the default): every question gets what the
    /// commits taught. Off because, measured with each question's page
    /// left out of what it is answered with, it moved docs_dev by nothing
    /// (BENCHMARKS.md §46). Also whether `ken index` reads the
    /// documentation for it: the first index run after it is switched on
    /// learns the ranking again, with the documentation.
    pub learned_docs: bool,
    /// Learn a query map for dense retrieval from each repository's
    /// history at index time and search with it (adapt.rs); off (the
    /// default): plain queries. Off because the map, learned from commit
    /// messages, costs questions about concepts more than it gives
    /// questions like commit messages (BENCHMARKS.md §45).
    pub adapter: bool,
    #[serde(skip)]
    pub fields: FieldWeights,
}

impl Default for RankParams {
    fn default() -> Self {
        RankParams {
            k: 60.0,
            w_bm25: 0.25,
            w_file: 2.0,
            w_symbol: 0.5,
            w_partial: 0.1,
            w_dense: 1.0,
            file_fusion: true,
            w_file_dense: 1.5,
            w_bm25_file: 1.0,
            w_dense_file: 0.5,
            w_pagerank: 0.0,
            w_ppr: 0.0,
            ppr_seeds: 10,
            w_weak: 0.0,
            candidates: 200,
            max_pinned: 5,
            trivial_prior: 0.7,
            prose_prior: 0.8,
            test_prior: 0.7,
            w_mention: 1.0,
            k_mention: 5.0,
            route: true,
            route_repos: 4,
            route_files: 100,
            route_mass: 0.99,
            route_defining: 8,
            route_temp: 0.1,
            route_history: 0.6,
            route_shared: 1.0,
            issue_words: 40,
            pin_issues: false,
            issue_title: 1,
            issue_env_out: true,
            issue_template_out: true,
            w_churn: 0.0,
            w_fixes: 0.0,
            w_recent: 0.0,
            w_who_similar: 2.0,
            w_who_active: 0.0,
            learned: true,
            learned_docs: false,
            adapter: false,
            fields: FieldWeights::default(),
        }
    }
}

impl RankParams {
    /// The reciprocal-rank-fusion score of `rank` (from 1) in a list of weight `w`.
    pub fn rrf(&self, w: f32, rank: usize) -> f32 {
        w / (self.k + rank as f32)
    }

    /// The score of rank `rank` (from 1) in the mention list, a traceback
    /// frame's (`framed`) or not ([`RankParams::k_mention`]).
    pub fn mention_rrf(&self, rank: usize, framed: bool) -> f32 {
        mention_score(self.w_mention, self.k, self.k_mention, rank as f32, framed)
    }

    /// Set one constant by name (`--param KEY=VALUE`, for experiments).
    pub fn set(&mut self, key: &str, v: f32) -> Result<()> {
        match key {
            "k" => self.k = v,
            "w_bm25" => self.w_bm25 = v,
            "w_file" => self.w_file = v,
            "w_file_dense" => self.w_file_dense = v,
            "w_symbol" => self.w_symbol = v,
            "w_partial" => self.w_partial = v,
            "w_dense" => self.w_dense = v,
            "file_fusion" => self.file_fusion = v != 0.0,
            "w_bm25_file" => self.w_bm25_file = v,
            "w_dense_file" => self.w_dense_file = v,
            "w_pagerank" => self.w_pagerank = v,
            "w_ppr" => self.w_ppr = v,
            "ppr_seeds" => self.ppr_seeds = v as usize,
            "w_weak" => self.w_weak = v,
            "candidates" => self.candidates = v as usize,
            "max_pinned" => self.max_pinned = v as usize,
            "trivial_prior" => self.trivial_prior = v,
            "prose_prior" => self.prose_prior = v,
            "test_prior" => self.test_prior = v,
            "w_mention" => self.w_mention = v,
            "k_mention" => self.k_mention = v,
            "route" => self.route = v != 0.0,
            "route_repos" => self.route_repos = v as usize,
            "route_files" => self.route_files = v as usize,
            "route_mass" => self.route_mass = v,
            "route_defining" => self.route_defining = v as usize,
            "route_temp" => self.route_temp = v,
            "route_history" => self.route_history = v,
            "route_shared" => self.route_shared = v,
            "issue_words" => self.issue_words = v as usize,
            "pin_issues" => self.pin_issues = v != 0.0,
            "issue_title" => self.issue_title = v as usize,
            "issue_env_out" => self.issue_env_out = v != 0.0,
            "issue_template_out" => self.issue_template_out = v != 0.0,
            "learned" => self.learned = v != 0.0,
            "learned_docs" => self.learned_docs = v != 0.0,
            "adapter" => self.adapter = v != 0.0,
            "w_churn" => self.w_churn = v,
            "w_fixes" => self.w_fixes = v,
            "w_recent" => self.w_recent = v,
            "w_who_similar" => self.w_who_similar = v,
            "w_who_active" => self.w_who_active = v,
            "f_body" => self.fields.body = v,
            "f_symbol" => self.fields.symbol = v,
            "f_path" => self.fields.path = v,
            "f_doc" => self.fields.doc = v,
            "qtf" => self.fields.qtf = v,
            _ => {
                return Err(EngineError::bad_input(format!(
                    "unknown ranking parameter `{key}`"
                )));
            }
        }
        Ok(())
    }

    /// These constants with what was learned for one repository applied
    /// (when `learned` is on and something was adopted).
    pub fn for_repo(&self, state: &ken_store::IndexState) -> RankParams {
        let mut p = self.clone();
        if self.learned
            && let Some(t) = &state.ranking
        {
            for (k, v) in &t.params {
                let _ = p.set(k, *v);
            }
        }
        p
    }

    /// [`RankParams::for_repo`] for one question. What was learned applies
    /// to questions like the ones it was learned from:
    /// - a question with code or a traceback in it (a bug report) gets what
    ///   the commits taught only when at least [`LEARNED_SHAPE_MIN`] of
    ///   their messages had code too, and the constants otherwise
    ///   (BENCHMARKS.md §27: SWE-bench Lite's reports lose with the learned
    ///   fusion, and commits_dev does not move);
    /// - a question the router reads as like the documentation's section
    ///   headings gets what was chosen for those (tune_docs.rs), when
    ///   `learned_docs` is on (off by default);
    /// - any other gets what the commits taught.
    pub fn for_question(
        &self,
        state: &ken_store::IndexState,
        question: &crate::question::Question,
    ) -> RankParams {
        // the question is read only when something learned is in use
        let Some(t) = state.ranking.as_ref().filter(|_| self.learned) else {
            return self.clone();
        };
        if question.has_code {
            if t.code_questions < LEARNED_SHAPE_MIN {
                return self.clone();
            }
            return self.for_repo(state);
        }
        if self.learned_docs
            && let Some(d) = &t.docs
            && crate::question_kind::reads_like_docs(&d.router, &question.text)
        {
            let mut p = self.clone();
            for (k, v) in &d.params {
                let _ = p.set(k, *v);
            }
            return p;
        }
        self.for_repo(state)
    }

    /// Some file prior needs the file history ([`crate::churn::FileChurn`]).
    pub fn uses_history(&self) -> bool {
        self.w_churn != 0.0 || self.w_fixes != 0.0 || self.w_recent != 0.0
    }

    /// Set one constant from `KEY=VALUE`.
    pub fn set_pair(&mut self, kv: &str) -> Result<()> {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(EngineError::bad_input(format!(
                "--param takes KEY=VALUE, got `{kv}`"
            )));
        };
        let v: f32 = v
            .trim()
            .parse()
            .map_err(|_| EngineError::bad_input(format!("--param {k}: `{v}` is not a number")))?;
        self.set(k.trim(), v)
    }
}

/// [`RankParams::mention_rrf`] from its constants (shared with file fusion).
pub fn mention_score(w: f32, k: f32, k_mention: f32, rank: f32, framed: bool) -> f32 {
    if framed {
        w / (k + 1.0) * (k_mention + 1.0) / (k_mention + rank)
    } else {
        w / (k + rank)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(code_questions: usize) -> ken_store::IndexState {
        ken_store::IndexState {
            ranking: Some(ken_store::TunedRanking {
                adopted: true,
                params: [("w_file".to_string(), 9.0f32)].into_iter().collect(),
                code_questions,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    use crate::question::Question;

    const REPORT: &str = "Wrong kind\n\n```\nd = Derivative(A, x)\nd.kind\n```\n";
    const MESSAGE: &str = "Speed up the pool\n\nThe pool was too small.\nNow it grows.\n";

    #[test]
    fn what_was_learned_from_commit_messages_is_not_used_for_reports_with_code() {
        let p = RankParams::default();
        // learned from messages without code: messages get it, reports do not
        let few = state(LEARNED_SHAPE_MIN - 1);
        assert_eq!(
            p.for_question(&few, &Question::read(MESSAGE, p.issue_words))
                .w_file,
            9.0
        );
        assert_eq!(
            p.for_question(&few, &Question::read("pool size", p.issue_words))
                .w_file,
            9.0
        );
        assert_eq!(
            p.for_question(&few, &Question::read(REPORT, p.issue_words))
                .w_file,
            p.w_file
        );
        // learned from enough messages with code: reports get it too
        let many = state(LEARNED_SHAPE_MIN);
        assert_eq!(
            p.for_question(&many, &Question::read(REPORT, p.issue_words))
                .w_file,
            9.0
        );
        // learning switched off: nobody gets it
        let off = RankParams {
            learned: false,
            ..RankParams::default()
        };
        assert_eq!(
            off.for_question(&many, &Question::read(MESSAGE, p.issue_words))
                .w_file,
            p.w_file
        );
    }

    #[test]
    fn questions_like_the_documentation_get_what_it_taught() {
        let p = RankParams {
            learned_docs: true,
            ..RankParams::default()
        };
        let mut s = state(0);
        let router = crate::question_kind::learn(
            &[
                "Fix crash in the pool",
                "Add retry to the client",
                "Fix typo",
            ],
            &[
                "Lifecycle of the Context",
                "Using the Context",
                "The Request Context",
            ],
        );
        s.ranking.as_mut().unwrap().docs = Some(ken_store::DocsRanking {
            chosen: "docs".into(),
            params: [("w_dense_file".to_string(), 4.0f32)].into_iter().collect(),
            router,
            ..Default::default()
        });
        let like_docs = Question::read("Context of the Request", p.issue_words);
        let like_commit = Question::read("Fix crash in the client", p.issue_words);
        // the documentation's constants over the defaults, not the commits'
        let got = p.for_question(&s, &like_docs);
        assert_eq!((got.w_dense_file, got.w_file), (4.0, p.w_file));
        let got = p.for_question(&s, &like_commit);
        assert_eq!((got.w_dense_file, got.w_file), (p.w_dense_file, 9.0));
        // switched off (the default): the commits' for every question
        let off = RankParams::default();
        assert_eq!(off.for_question(&s, &like_docs).w_file, 9.0);
    }
}
