//! Secrets in the indexed commit and in the period's diffs, redacted.

use std::collections::HashSet;

use super::Ctx;
use crate::model::{PersonName, SecretFinding};

pub(super) fn findings(ctx: &Ctx<'_>) -> Vec<SecretFinding> {
    let person_of = |sha: &str| {
        ctx.by_sha
            .get(sha)
            .map(|&i| ctx.name(&ctx.commit(i).person))
    };
    let finding = |hit: &crate::secrets::SecretHit,
                   source: &str,
                   commit: Option<String>,
                   author: Option<PersonName>| SecretFinding {
        id: String::new(),
        rule: hit.rule.clone(),
        redacted: hit.redacted(),
        fingerprint: hit.fingerprint(),
        path: hit.path.clone(),
        line: hit.line,
        source: source.to_string(),
        commit,
        author,
        confidence: hit.confidence.clone(),
    };
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (hit, origin) in &ctx.input.head_secrets {
        if seen.insert(("head", hit.fingerprint(), hit.path.clone(), hit.line)) {
            let commit = origin.as_ref().map(|o| o.sha.clone());
            let author = origin.as_ref().map(|o| ctx.name(&o.person));
            out.push(finding(hit, "head", commit, author));
        }
    }
    for (sha, hit) in &ctx.input.diff_secrets {
        if seen.insert(("diff", hit.fingerprint(), hit.path.clone(), hit.line)) {
            out.push(finding(hit, "diff", Some(sha.clone()), person_of(sha)));
        }
    }
    out.sort_by(|a, b| {
        (b.confidence == "high")
            .cmp(&(a.confidence == "high"))
            .then_with(|| a.source.cmp(&b.source))
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.rule.cmp(&b.rule))
    });
    for (n, s) in out.iter_mut().enumerate() {
        s.id = format!("X{}", n + 1);
    }
    out
}
