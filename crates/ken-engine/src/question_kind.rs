//! Which learned constants serve a question: a router, learned per
//! repository, that tells a question reading like one of its documentation's
//! section headings from one reading like one of its commit messages.
//!
//! A logistic regression over the question's lower-cased words (and its
//! first word apart, where a commit's verb stands), trained on the two sets
//! of questions the learner asked, each set weighed as much as the other, so
//! that a question whose words neither set used sits near even odds.
//! Deterministic; stored as word → weight with the bias under the empty word.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// L2 penalty per weight, against the loss averaged over questions.
const L2: f64 = 0.01;
const STEPS: usize = 300;
const RATE: f64 = 2.0;
/// Weights smaller than this are not kept.
const KEEP: f64 = 1e-3;

/// A question's features: its distinct lower-cased words of two or more
/// characters, and its first word marked `^`.
pub fn features(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut first = true;
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = w.to_lowercase();
        if first {
            out.insert(format!("^{w}"));
            first = false;
        }
        if w.chars().count() >= 2 {
            out.insert(w);
        }
    }
    out
}

/// The log-odds that `text` reads like the documentation's questions.
pub fn score(router: &BTreeMap<String, f32>, text: &str) -> f64 {
    let bias = router.get("").copied().unwrap_or(0.0) as f64;
    bias + features(text)
        .iter()
        .filter_map(|f| router.get(f))
        .map(|w| *w as f64)
        .sum::<f64>()
}

/// Reads like the documentation's questions rather than the commits'.
pub fn reads_like_docs(router: &BTreeMap<String, f32>, text: &str) -> bool {
    !router.is_empty() && score(router, text) > 0.0
}

/// Learn the router from questions like commit messages (`commits`) and
/// like section headings (`docs`).
pub fn learn(commits: &[&str], docs: &[&str]) -> BTreeMap<String, f32> {
    let mut vocab: HashMap<String, usize> = HashMap::new();
    let mut rows: Vec<(Vec<usize>, f64, f64)> = Vec::new(); // features, label, weight
    for (set, label) in [(commits, 0.0), (docs, 1.0)] {
        if set.is_empty() {
            continue;
        }
        let weight = 0.5 / set.len() as f64;
        for text in set.iter() {
            let f: Vec<usize> = features(text)
                .into_iter()
                .map(|w| {
                    let n = vocab.len();
                    *vocab.entry(w).or_insert(n)
                })
                .collect();
            rows.push((f, label, weight));
        }
    }
    let mut w = vec![0.0f64; vocab.len()];
    let mut bias = 0.0f64;
    for _ in 0..STEPS {
        let mut grad = vec![0.0f64; w.len()];
        let mut grad_bias = 0.0;
        for (f, label, weight) in &rows {
            let z = bias + f.iter().map(|&i| w[i]).sum::<f64>();
            let p = 1.0 / (1.0 + (-z).exp());
            let g = (p - label) * weight;
            grad_bias += g;
            for &i in f {
                grad[i] += g;
            }
        }
        bias -= RATE * grad_bias;
        for (wi, gi) in w.iter_mut().zip(grad) {
            *wi -= RATE * (gi + L2 * *wi);
        }
    }
    let mut out: BTreeMap<String, f32> = vocab
        .into_iter()
        .filter(|(_, i)| w[*i].abs() >= KEEP)
        .map(|(word, i)| (word, w[i] as f32))
        .collect();
    out.insert(String::new(), bias as f32);
    out
}

/// Share of questions put on the right side by a router learned without
/// them (two folds, each set split by position), each set counted as much
/// as the other.
pub fn heldout_accuracy(commits: &[&str], docs: &[&str]) -> f64 {
    let half = |set: &[&str], parity: usize| -> Vec<String> {
        set.iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == parity)
            .map(|(_, t)| t.to_string())
            .collect()
    };
    let mut right = [0.0f64; 2];
    for parity in 0..2 {
        let (tc, td) = (half(commits, parity), half(docs, parity));
        let (hc, hd) = (half(commits, 1 - parity), half(docs, 1 - parity));
        let tc: Vec<&str> = tc.iter().map(String::as_str).collect();
        let td: Vec<&str> = td.iter().map(String::as_str).collect();
        let router = learn(&tc, &td);
        right[0] += hc.iter().filter(|t| !reads_like_docs(&router, t)).count() as f64;
        right[1] += hd.iter().filter(|t| reads_like_docs(&router, t)).count() as f64;
    }
    let share = |n: f64, of: usize| if of == 0 { 1.0 } else { n / of as f64 };
    (share(right[0], commits.len()) + share(right[1], docs.len())) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMITS: &[&str] = &[
        "Fix crash when the pool is empty",
        "Add support for async views",
        "Fix typo in error message",
        "Bump version to 2.1",
        "Remove unused import from helpers",
        "Fix flaky test on windows",
        "Add a timeout option to the client",
        "Update dependencies",
    ];
    const DOCS: &[&str] = &[
        "Lifecycle of the Context",
        "Using Signals with the Application",
        "The Request Context",
        "Storing Data: The g object is for storing data",
        "Visibility of the Context",
        "Using the Test Client",
        "Registering Error Handlers",
        "The Application Factory",
    ];

    #[test]
    fn the_router_tells_headings_from_commit_messages() {
        let router = learn(COMMITS, DOCS);
        assert!(reads_like_docs(&router, "Using the Context"));
        assert!(!reads_like_docs(&router, "Fix crash in the client"));
        // learned twice, the same weights
        assert_eq!(router, learn(COMMITS, DOCS));
        // an empty router sends nothing to the documentation's constants
        assert!(!reads_like_docs(&BTreeMap::new(), "Using the Context"));
        let held = heldout_accuracy(COMMITS, DOCS);
        assert!(held > 0.6, "{held}");
    }

    #[test]
    fn words_unseen_by_both_sets_sit_near_even_odds() {
        let router = learn(COMMITS, DOCS);
        // within odds of 3 to 1 either way (the bias alone)
        let s = score(&router, "zebra quokka");
        assert!(s.abs() < 1.1, "{s}");
        assert_eq!(s, router[""] as f64);
        assert!(features("Fix the pool").contains("^fix"));
        assert!(features("Fix the pool").contains("pool"));
    }
}
