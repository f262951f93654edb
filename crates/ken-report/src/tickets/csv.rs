//! CSV exports with a header row (Jira, spreadsheets): an RFC 4180 reader
//! and the column aliases.

use super::*;

/// The records of an RFC 4180 text, each with the (1-based) line it starts
/// on. Blank lines are skipped; text after a closing quote is kept.
pub(super) fn csv_records(text: &str, sep: char) -> Res<Vec<(usize, Vec<String>)>> {
    let (mut records, mut fields, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut line, mut start_line, mut quote_line) = (1, 1, 1);
    let (mut in_quotes, mut at_start) = (false, true);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.next_if_eq(&'"').is_some() => field.push('"'),
                '"' => in_quotes = false,
                '\r' if chars.peek() == Some(&'\n') => {}
                _ => {
                    line += usize::from(c == '\n');
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if at_start => (in_quotes, quote_line) = (true, line),
            '\r' | '\n' => {
                if c == '\r' {
                    chars.next_if_eq(&'\n');
                }
                fields.push(std::mem::take(&mut field));
                end_record(&mut records, &mut fields, start_line);
                line += 1;
                (start_line, at_start) = (line, true);
                continue;
            }
            c if c == sep => {
                fields.push(std::mem::take(&mut field));
                at_start = true;
                continue;
            }
            c => field.push(c),
        }
        at_start = false;
    }
    if in_quotes {
        let message = "a quoted field is never closed (a quote inside one is written `\"\"`)";
        return Err(TicketError::Csv {
            line: quote_line,
            message: message.into(),
        });
    }
    fields.push(field);
    end_record(&mut records, &mut fields, start_line);
    Ok(records)
}

/// Keeps a record unless it is a blank line.
pub(super) fn end_record(
    records: &mut Vec<(usize, Vec<String>)>,
    fields: &mut Vec<String>,
    line: usize,
) {
    if fields.len() == 1 && fields[0].trim().is_empty() {
        fields.clear();
    } else {
        records.push((line, std::mem::take(fields)));
    }
}

/// Trimmed, de-duplicated, non-empty parts of `s` split on `seps` (where
/// `' '` stands for any white space).
pub(super) fn split_list(s: &str, seps: &[char]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let split = |c: char| seps.contains(&c) || (seps.contains(&' ') && c.is_whitespace());
    for part in s.split(split).map(str::trim).filter(|p| !p.is_empty()) {
        if !out.iter().any(|p| p == part) {
            out.push(part.to_string());
        }
    }
    out
}

pub(super) fn parse_csv(text: &str) -> Res<Vec<Ticket>> {
    let first = text.lines().next().unwrap_or("");
    let sep = [',', '\t', ';']
        .into_iter()
        .find(|&c| first.contains(c))
        .unwrap_or(',');
    let records = csv_records(text, sep)?;
    let Some(((_, header), rows)) = records.split_first() else {
        return Err(TicketError::EmptyCsv);
    };
    // Header names compare in lower case with only letters and digits kept.
    let norm_header = |h: &String| -> String {
        h.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let names: Vec<String> = header.iter().map(norm_header).collect();
    let col = |aliases: &str| {
        aliases
            .split(' ')
            .find_map(|a| names.iter().position(|n| n == a))
    };
    let cols = |aliases: &str| -> Vec<usize> {
        (0..names.len())
            .filter(|&i| aliases.split(' ').any(|a| a == names[i]))
            .collect()
    };
    let (id_col, title_col) = (col("id key issuekey number"), col("title summary subject"));
    let (Some(id_col), Some(title_col)) = (id_col, title_col) else {
        let missing = [(id_col, "`id`"), (title_col, "`title`")].into_iter();
        let missing: Vec<&str> = missing
            .filter_map(|(c, n)| c.is_none().then_some(n))
            .collect();
        let found: Vec<String> = header.iter().map(|h| format!("`{}`", h.trim())).collect();
        let found = if found.is_empty() {
            "none".into()
        } else {
            found.join(", ")
        };
        return Err(TicketError::MissingColumns {
            missing: missing.join(" and "),
            found,
        });
    };
    let state_col = col("state status");
    let opened_col = col("opened created createdat openedat");
    let closed_col = col("closed closedat resolved resolvedat resolutiondate");
    let (body_col, url_col) = (col("body description"), col("url htmlurl"));
    let (type_col, author_col) = (col("type issuetype kind"), col("author reporter creator"));
    let (label_cols, assignee_cols) = (cols("labels label tags"), cols("assignee assignees"));
    let link_cols = cols("links commits");
    let mut tickets = Vec::with_capacity(rows.len());
    for &(line, ref row) in rows {
        let get = |c: Option<usize>| c.and_then(|c| row.get(c)).map_or("", |s| s.trim());
        let id = clean_id(get(Some(id_col)));
        if id.is_empty() {
            let message = format!(
                "the `{}` cell is empty; every row needs an id",
                header[id_col]
            );
            return Err(TicketError::Csv { line, message });
        }
        let date = |c: Option<usize>| -> Res<Option<i64>> {
            let (Some(c), v) = (c, get(c)) else {
                return Ok(None);
            };
            if v.is_empty() {
                return Ok(None);
            }
            let message = || bad_date(&format!("column `{}`", header[c].trim()), v);
            parse_date(v).map(Some).ok_or_else(|| TicketError::Csv {
                line,
                message: message(),
            })
        };
        let (opened, closed) = (date(opened_col)?, date(closed_col)?);
        let multi = |cs: &[usize], seps: &[char]| {
            let joined: Vec<&str> = cs.iter().map(|&c| get(Some(c))).collect();
            split_list(&joined.join(&seps[0].to_string()), seps)
        };
        let mut labels = multi(&label_cols, &[';', ',', '|']);
        let kind = get(type_col).to_lowercase();
        let has_bug = labels.iter().any(|l| l.eq_ignore_ascii_case("bug"));
        if (kind.contains("bug") || kind.contains("defect")) && !has_bug {
            labels.push("bug".into());
        }
        let state = match get(state_col) {
            "" if closed.is_some() => "closed",
            s => map_state(s),
        };
        let url = Some(get(url_col).to_string()).filter(|u| !u.is_empty());
        let pull = kind.contains("pull")
            || kind.contains("merge request")
            || kind == "pr"
            || url.as_deref().is_some_and(|u| u.contains("/pull/"));
        tickets.push(Ticket {
            id,
            title: get(Some(title_col)).to_string(),
            body: get(body_col).to_string(),
            state: state.into(),
            kind: if pull { "pull" } else { "issue" }.into(),
            labels,
            assignees: multi(&assignee_cols, &[';', ',', '|']),
            author: Some(get(author_col).to_string()).filter(|a| !a.is_empty()),
            opened,
            closed,
            url,
            links: multi(&link_cols, &[' ', ';', ','])
                .iter()
                .map(|l| clean_id(l))
                .collect(),
        });
    }
    Ok(tickets)
}
