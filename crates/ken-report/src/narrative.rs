//! A short written summary by a chat model, checked like `ken ask` claims:
//! every statement must cite findings of the report by id (`[H1]`), and
//! every number it states must be a figure of a finding it cites.
//!
//! The model call itself is the engine's; this module writes the prompt
//! and checks the answer.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::model::{Narrative, Report, Statement};

/// Every finding of the report by id, as JSON.
pub fn findings(report: &Report) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mut put = |id: &str, v: Value| {
        out.insert(id.to_string(), v);
    };
    let mut s = serde_json::to_value(&report.summary).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut s {
        // The summary's lists are long; its figures are what is cited.
        m.remove("new_files");
        m.remove("deleted_files");
    }
    put(&report.summary.id, s);
    macro_rules! each {
        ($list:expr) => {
            for item in $list {
                put(&item.id, serde_json::to_value(item).unwrap_or(Value::Null));
            }
        };
    }
    each!(&report.hot_files);
    each!(&report.god_objects);
    each!(&report.ownership);
    each!(&report.secrets);
    each!(&report.people);
    if let Some(t) = &report.tickets {
        each!(&t.in_period);
        each!(&t.closed_without_code);
    }
    out
}

/// The messages to send: a system prompt and the findings.
pub fn prompt(report: &Report) -> (String, String) {
    let system = "You write the summary of a software team's activity report. \
        Write 3 to 6 short sentences, one per line, in plain English, on what matters most: \
        risky files, ownership risks, secrets, who did what. Every sentence must end with the ids \
        of the findings it is based on in square brackets, like [H1] or [S1, P2]. Use only figures \
        that appear in the findings you cite; do not compute new numbers. Never repeat secret values."
        .to_string();
    let mut user = format!(
        "Repository {}, period {} to {}.\nFindings (id: JSON):\n",
        report.repo, report.period.since, report.period.until
    );
    for (id, v) in findings(report) {
        user.push_str(&format!("{id}: {v}\n"));
    }
    (system, user)
}

/// `[H1]`, `[S1, P2]`: the findings a statement cites.
static CITES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[((?:[SHGOXPT]\d+)(?:\s*,\s*[SHGOXPT]\d+)*)\]").expect("valid regex")
});

/// A number as a sentence writes it (`12`, `0.42`, `1,234`).
static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d+(?:[.,]\d+)*").expect("valid regex"));

/// The numbers a finding holds, in the forms a sentence may write them.
fn figures(v: &Value, out: &mut HashSet<String>) {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.insert(i.to_string());
            } else if let Some(f) = n.as_f64() {
                out.insert(format!("{f}"));
                out.insert(format!("{f:.1}"));
                out.insert(format!("{:.0}", f));
                if (0.0..=1.0).contains(&f) {
                    out.insert(format!("{:.0}", f * 100.0));
                }
            }
        }
        Value::String(s) => {
            for m in NUMBER.find_iter(s) {
                out.insert(m.as_str().to_string());
            }
        }
        Value::Array(a) => a.iter().for_each(|x| figures(x, out)),
        Value::Object(m) => m.values().for_each(|x| figures(x, out)),
        _ => {}
    }
}

/// Check a model's text against the report.
pub fn check(report: &Report, model: &str, text: &str) -> Narrative {
    let known = findings(report);
    let (cites, numbers) = (&*CITES, &*NUMBER);
    let mut statements = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let line = line.trim_start_matches(['-', '*', '•', ' ']);
        let ids: Vec<String> = cites
            .captures_iter(line)
            .flat_map(|c| {
                c[1].split(',')
                    .map(|s| s.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        let prose = cites.replace_all(line, "");
        let text = prose.trim().to_string();
        let problem = if ids.is_empty() {
            Some("cites no finding".to_string())
        } else if let Some(bad) = ids.iter().find(|id| !known.contains_key(*id)) {
            Some(format!("cites {bad}, which the report does not have"))
        } else {
            let mut have = HashSet::new();
            for id in &ids {
                figures(&known[id], &mut have);
            }
            numbers
                .find_iter(&text)
                .map(|m| m.as_str().trim_end_matches(['.', ',']))
                .find(|n| !have.contains(*n) && !have.contains(&n.replace(',', "")))
                .map(|n| format!("{n} is not a figure of the findings it cites"))
        };
        statements.push(Statement {
            text,
            cites: ids,
            valid: problem.is_none(),
            problem,
        });
    }
    Narrative {
        model: model.to_string(),
        statements,
    }
}
