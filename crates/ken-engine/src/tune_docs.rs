//! Learning the fusion for questions like the repository's documentation
//! asks, beside the one learned from its commits ([`crate::tune`]).
//!
//! Each documentation section is a question ([`crate::doc_questions`]):
//! its heading asks, the code its cross-references name answers. They are
//! asked as search asks them, and three sets of constants are measured on
//! sections of pages the fit did not see (two folds by page, so that a
//! page's sections, which point at the same code, never sit on both
//! sides): the defaults, what the commits taught, and a fit to the sections
//! themselves (shrunk toward the defaults as the commit fit is). The best
//! serves questions like the sections; ties keep the earlier of that
//! order. A router learned from both sets of questions
//! ([`crate::question_kind`]) tells at search time which a question is
//! like. Read from the indexed commit only; questions asked elsewhere (an
//! evaluation's) can be left out.

use std::collections::BTreeMap;
use std::time::Instant;

use ken_store::{DocsRanking, Store};

use crate::Result;
use crate::churn::FileChurn;
use crate::doc_questions::{DocQuestion, doc_questions};
use crate::params::RankParams;
use crate::question_kind;
use crate::search::{Mode, SearchEnv};
use crate::tune::{
    Example, History, PRIORS, TuneOptions, best_prior, example, fit, get, knobs, mrr, round,
    shrink, weights,
};

/// Most sections read as questions.
const MAX_DOC_QUESTIONS: usize = 300;

/// What the commit learner read and taught, for the documentation's.
pub(crate) struct Learned<'a> {
    pub(crate) paths: &'a [String],
    pub(crate) churn: &'a FileChurn,
    pub(crate) mode: Mode,
    /// The constants the commits taught (empty: the defaults).
    pub(crate) params: &'a BTreeMap<String, f32>,
    /// The commit questions, as asked.
    pub(crate) texts: &'a [&'a str],
}

/// What the documentation teaches, after the commit learner: `history` is
/// what it read, `params` what it taught. `None` when it has too few
/// sections with an answer.
pub(crate) fn learn_all(
    store: &dyn Store,
    base: &RankParams,
    env: SearchEnv<'_>,
    until: Option<i64>,
    history: &History,
    params: &BTreeMap<String, f32>,
    opts: &TuneOptions,
) -> Result<Option<DocsRanking>> {
    let texts = commit_texts(history);
    let learned = Learned::from(history, params, &texts);
    let sections = doc_questions(store, learned.paths, MAX_DOC_QUESTIONS)?;
    if sections.len() < opts.min_queries {
        return Ok(None);
    }
    let asked = ask(store, env, until, &learned, sections)?;
    Ok(choose(&asked, &|_| true, base, &learned, opts))
}

fn commit_texts(history: &History) -> Vec<&str> {
    history
        .questions
        .iter()
        .map(|q| q.message.as_str())
        .collect()
}

impl<'a> Learned<'a> {
    fn from(
        history: &'a History,
        params: &'a BTreeMap<String, f32>,
        texts: &'a [&'a str],
    ) -> Learned<'a> {
        Learned {
            paths: &history.paths,
            churn: &history.churn,
            mode: history.mode,
            params,
            texts,
        }
    }
}

/// The sections, each asked once as search asks it.
struct Asked {
    sections: Vec<DocQuestion>,
    examples: Vec<Example>,
    with_dense: bool,
    took_ms: u64,
}

fn ask(
    store: &dyn Store,
    env: SearchEnv<'_>,
    until: Option<i64>,
    learned: &Learned<'_>,
    sections: Vec<DocQuestion>,
) -> Result<Asked> {
    let started = Instant::now();
    let mut examples: Vec<Example> = Vec::with_capacity(sections.len());
    for q in &sections {
        examples.push(example(
            store,
            env,
            learned.mode,
            learned.churn,
            &q.query,
            &q.gold,
            until,
        )?);
    }
    let with_dense = examples
        .iter()
        .any(|e| e.rows.iter().any(|r| r.ranks[2].is_some()));
    Ok(Asked {
        sections,
        examples,
        with_dense,
        took_ms: started.elapsed().as_millis() as u64,
    })
}

/// Which constants serve questions like the sections `keep` keeps, and
/// the router. `None` when too few of them have an answer.
fn choose(
    asked: &Asked,
    keep: &dyn Fn(&DocQuestion) -> bool,
    base: &RankParams,
    learned: &Learned<'_>,
    opts: &TuneOptions,
) -> Option<DocsRanking> {
    let started = Instant::now();
    let (sections, examples): (Vec<&DocQuestion>, Vec<&Example>) = asked
        .sections
        .iter()
        .zip(&asked.examples)
        .filter(|(q, _)| keep(q))
        .unzip();
    let answerable = examples.iter().filter(|e| !e.gold.is_empty()).count();
    if sections.len() < opts.min_queries || answerable < opts.min_queries {
        return None;
    }
    let with_dense = asked.with_dense;
    // two folds by page: the pages in order, every other one
    let mut pages: Vec<&str> = sections.iter().map(|q| q.page.as_str()).collect();
    pages.dedup();
    let fold_of = |q: &DocQuestion| pages.iter().position(|p| *p == q.page).unwrap_or(0) % 2;
    let knobs = knobs(with_dense);
    let defaults: BTreeMap<String, f32> = knobs
        .iter()
        .map(|(name, _)| (name.to_string(), get(base, name)))
        .collect();
    let commits = weights(base, learned.params, with_dense);
    let (mut held_default, mut held_commits) = (0.0, 0.0);
    let mut held = vec![0.0; PRIORS.len()];
    for fold in 0..2 {
        let (test, train): (Vec<&Example>, Vec<&Example>) = {
            let (a, b): (Vec<_>, Vec<_>) = examples
                .iter()
                .zip(&sections)
                .partition(|(_, q)| fold_of(q) == fold);
            (
                a.into_iter().map(|(e, _)| *e).collect(),
                b.into_iter().map(|(e, _)| *e).collect(),
            )
        };
        if test.is_empty() || train.is_empty() {
            continue;
        }
        let size = test.len() as f64;
        held_default += mrr(&test, &weights(base, &defaults, with_dense)) * size;
        held_commits += mrr(&test, &commits) * size;
        let fitted = fit(&train, base, &knobs, with_dense);
        for (j, prior) in PRIORS.iter().enumerate() {
            let shrunk = shrink(&fitted, &defaults, &train, *prior);
            held[j] += mrr(&test, &weights(base, &shrunk, with_dense)) * size;
        }
    }
    let n = examples.len() as f64;
    let j = best_prior(&held);
    let (held_default, held_commits, held_learned) =
        (held_default / n, held_commits / n, held[j] / n);
    // the best held out; ties keep the earlier: defaults, commits, docs
    let (chosen, params) = if held_learned > held_default.max(held_commits) + 1e-9 {
        let fitted = fit(&examples, base, &knobs, with_dense);
        ("docs", shrink(&fitted, &defaults, &examples, PRIORS[j]))
    } else if held_commits > held_default + 1e-9 {
        ("commits", learned.params.clone())
    } else {
        ("default", BTreeMap::new())
    };
    let texts: Vec<&str> = sections.iter().map(|q| q.query.as_str()).collect();
    // questions like the sections get what the commits taught anyway: no
    // router is needed
    let same = params == *learned.params;
    let (router, router_heldout) = if same {
        (BTreeMap::new(), 0.0)
    } else {
        (
            question_kind::learn(learned.texts, &texts),
            round(question_kind::heldout_accuracy(learned.texts, &texts)),
        )
    };
    Some(DocsRanking {
        questions: sections.len(),
        answerable,
        pages: pages.len(),
        heldout_default: round(held_default),
        heldout_commits: round(held_commits),
        heldout_learned: round(held_learned),
        chosen: chosen.into(),
        params,
        router,
        router_heldout,
        took_ms: asked.took_ms + started.elapsed().as_millis() as u64,
    })
}

/// What the documentation teaches when an evaluation asks `questions`,
/// some of which may be the repository's own section headings: it must not
/// learn from them. The pages holding such sections are split in two
/// folds (every other page, in order); each fold's questions get what was
/// learned without any section of its pages. Returns, per question, the
/// index of its fold's result in the second list, or `None` for a
/// question no section asks (it gets what was learned without every page
/// any question names). Empty lists when no question is a section.
pub(crate) fn cross_fit(
    store: &dyn Store,
    base: &RankParams,
    env: SearchEnv<'_>,
    until: Option<i64>,
    params: &BTreeMap<String, f32>,
    questions: &[String],
) -> Result<CrossFit> {
    let paths = crate::repo::indexed_paths(store)?;
    let sections = doc_questions(store, &paths, MAX_DOC_QUESTIONS)?;
    let page_of: Vec<Option<&str>> = questions
        .iter()
        .map(|q| {
            let left = [normalize(q)];
            sections
                .iter()
                .find(|s| is_left_out(s, &left))
                .map(|s| s.page.as_str())
        })
        .collect();
    let mut pages: Vec<&str> = page_of.iter().flatten().copied().collect();
    pages.sort();
    pages.dedup();
    if pages.is_empty() {
        return Ok(CrossFit::default());
    }
    let opts = TuneOptions::default();
    let h = History::read(store, env, until, &opts)?;
    let texts = commit_texts(&h);
    let learned = Learned::from(&h, params, &texts);
    // every section asked once; each fit keeps its own
    let fold = |page: &str| pages.iter().position(|p| *p == page).unwrap_or(0) % 2;
    let asked = ask(store, env, until, &learned, sections.clone())?;
    let fits = (0..2)
        .map(|f| {
            let keep = |s: &DocQuestion| !pages.contains(&s.page.as_str()) || fold(&s.page) != f;
            choose(&asked, &keep, base, &learned, &opts)
        })
        .collect();
    let keep = |s: &DocQuestion| !pages.contains(&s.page.as_str());
    let without_all = choose(&asked, &keep, base, &learned, &opts);
    Ok(CrossFit {
        fold_of: page_of.iter().map(|p| p.map(fold)).collect(),
        fits,
        without_all,
    })
}

/// [`cross_fit`]'s answer.
#[derive(Debug, Default)]
pub(crate) struct CrossFit {
    /// Per question: its fold, or `None` when no section asks it.
    pub(crate) fold_of: Vec<Option<usize>>,
    /// What each fold's questions get.
    pub(crate) fits: Vec<Option<DocsRanking>>,
    /// What a question no section asks gets.
    pub(crate) without_all: Option<DocsRanking>,
}

impl CrossFit {
    /// Some question is a section: what was learned must be replaced.
    pub(crate) fn applies(&self) -> bool {
        self.fold_of.iter().any(Option::is_some)
    }

    /// What question `i` gets.
    pub(crate) fn for_question(&self, i: usize) -> Option<&DocsRanking> {
        match self.fold_of.get(i).copied().flatten() {
            Some(f) => self.fits.get(f).and_then(Option::as_ref),
            None => self.without_all.as_ref(),
        }
    }
}

/// Lower-cased words, one space apart.
fn normalize(s: &str) -> String {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A section is left out when a question left out is its heading or its
/// question, or begins with its heading.
fn is_left_out(q: &DocQuestion, left: &[String]) -> bool {
    let heading = normalize(&q.heading);
    let query = normalize(&q.query);
    left.iter().any(|l| {
        *l == query
            || (!heading.is_empty() && (*l == heading || l.starts_with(&format!("{heading} "))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(heading: &str, query: &str) -> DocQuestion {
        DocQuestion {
            page: "docs/a.rst".into(),
            heading: heading.into(),
            query: query.into(),
            gold: vec!["src/a.py".into()],
        }
    }

    #[test]
    fn a_question_asked_elsewhere_leaves_its_section_out() {
        let left: Vec<String> = [
            "Storing Data: The g object is for storing data.",
            "lifecycle of the  Context",
        ]
        .iter()
        .map(|s| normalize(s))
        .collect();
        assert!(is_left_out(
            &q("Storing Data", "Storing Data: The g object"),
            &left
        ));
        assert!(is_left_out(
            &q("Lifecycle of the Context", "Lifecycle of the Context"),
            &left
        ));
        assert!(!is_left_out(&q("Storing Files", "Storing Files"), &left));
        assert!(!is_left_out(&q("Context", "Context: something"), &left));
    }
}
