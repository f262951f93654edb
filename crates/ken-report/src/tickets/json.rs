//! GitHub's JSON: `gh issue list --json …`, `gh pr list --json …`, the REST
//! API's issues, or serialised tickets.

use super::*;

pub(super) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) fn parse_json(text: &str) -> Res<Vec<Ticket>> {
    let value: Value = serde_json::from_str(text).map_err(TicketError::Json)?;
    match &value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| json_ticket(i, v))
            .collect(),
        Value::Object(_) => Ok(vec![json_ticket(0, &value)?]),
        other => Err(TicketError::JsonShape {
            found: json_kind(other),
        }),
    }
}

pub(super) fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The strings, or the `key` of objects, of a JSON array (or single value).
pub(super) fn names(v: Option<&Value>, key: &str) -> Vec<String> {
    let one = |x: &Value| match x {
        Value::Object(m) => m.get(key).and_then(scalar),
        x => scalar(x),
    };
    let all: Vec<String> = match v {
        Some(Value::Array(a)) => a.iter().filter_map(one).collect(),
        Some(x) => one(x).into_iter().collect(),
        None => Vec::new(),
    };
    all.into_iter().filter(|s| !s.is_empty()).collect()
}

/// The first of `keys` holding a date; null and empty strings count as absent.
pub(super) fn json_date(o: &Map<String, Value>, index: usize, keys: &[&str]) -> Res<Option<i64>> {
    for &k in keys {
        let bad = |v: &str| TicketError::Record {
            index,
            message: bad_date(&format!("`{k}`"), v),
        };
        let date = match o.get(k) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if s.trim().is_empty() => continue,
            Some(Value::String(s)) => parse_date(s).ok_or_else(|| bad(s)),
            Some(Value::Number(n)) => n.as_i64().ok_or_else(|| bad(&n.to_string())),
            Some(v) => Err(bad(json_kind(v))),
        };
        return date.map(Some);
    }
    Ok(None)
}

pub(super) fn json_ticket(index: usize, v: &Value) -> Res<Ticket> {
    let err = |message| TicketError::Record { index, message };
    let Value::Object(o) = v else {
        return Err(err(format!(
            "is {}, expected an object with a `number`",
            json_kind(v)
        )));
    };
    // The REST API's `id` is an internal one: `number` comes first.
    let id = ["number", "key", "id"]
        .iter()
        .find_map(|k| o.get(*k).and_then(scalar));
    let id = id.map(|s| clean_id(&s)).filter(|s| !s.is_empty());
    let id =
        id.ok_or_else(|| err("has no `number` (or `id`, `key`); every ticket needs one".into()))?;
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let opened = json_date(o, index, &["createdAt", "created_at", "opened"])?;
    let closed = match json_date(o, index, &["closedAt", "closed_at", "closed"])? {
        None => json_date(o, index, &["mergedAt", "merged_at"])?,
        closed => closed,
    };
    let state = match text(&["state", "status"]) {
        Some(s) => map_state(&s),
        None if closed.is_some() => "closed",
        None => "open",
    };
    let url = text(&["html_url", "url"]);
    let pull = text(&["kind"]).is_some_and(|k| k == "pull")
        || [
            "mergedAt",
            "merged_at",
            "commits",
            "headRefName",
            "pull_request",
        ]
        .iter()
        .any(|k| o.contains_key(*k))
        || url.as_deref().is_some_and(|u| u.contains("/pull/"));
    let mut assignees = names(o.get("assignees"), "login");
    if assignees.is_empty() {
        assignees = names(o.get("assignee"), "login");
    }
    let mut links = names(o.get("closedByPullRequestsReferences"), "number");
    links.extend(names(o.get("commits"), "oid"));
    links.extend(names(o.get("links"), "id"));
    Ok(Ticket {
        id,
        title: text(&["title", "summary"]).unwrap_or_default(),
        body: text(&["body", "description"]).unwrap_or_default(),
        state: state.to_string(),
        kind: if pull { "pull" } else { "issue" }.to_string(),
        labels: names(o.get("labels"), "name"),
        assignees,
        author: names(o.get("author").or(o.get("user")), "login")
            .into_iter()
            .next(),
        opened,
        closed,
        url,
        links,
    })
}
