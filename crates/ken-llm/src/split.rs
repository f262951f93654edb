//! Cutting an answer into claims.
//!
//! Rules (Markdown-aware, byte ranges into the answer):
//! - a paragraph is cut into sentences: after `.`, `!` or `?` (and any closing
//!   quote or parenthesis) followed by white space and a sentence start
//!   (upper-case letter, digit, backtick, `[`, `(`, `*`, `_`, quote); never
//!   inside backticks or brackets; never after `e.g.`, `i.e.`, `cf.`, `vs.`,
//!   `etc.` + lower case, other common abbreviations or an initial (`J.`).
//!   Decimals, `foo.bar()` and paths have no white space after the dot, so
//!   they never cut;
//! - citations written after the period (`… done. [a.py:3]`) stay with the
//!   sentence before them; a line that ends with a citation ends a sentence
//!   even with no period;
//! - each list item (`-`, `*`, `+`, `1.`, `1)`) and each table row is one
//!   claim, with its continuation lines;
//! - a fenced code block joins the claim before it (the sentence that
//!   introduces it), or the next one when it comes first;
//! - a heading joins the claim after it;
//! - a claim made only of citations joins the claim before it.
//!
//! Every non-blank byte of the answer is in exactly one claim.

use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Paragraph,
    Item,
    Row,
    Heading,
    Code,
}

/// The claims of `text`, as byte ranges (trimmed of surrounding white space).
/// `citations` are the byte ranges of parsed citations (see
/// [`crate::cite::parse_citations`]): they steer sentence ends.
pub(crate) fn split(text: &str, citations: &[Range<usize>]) -> Vec<Range<usize>> {
    let segments = segments(text);
    let mut claims: Vec<Range<usize>> = Vec::new();
    let mut pending: Option<usize> = None; // start of a heading / leading code to prepend
    for (kind, r) in segments {
        match kind {
            Kind::Heading => {
                pending.get_or_insert(r.start);
            }
            Kind::Code => match claims.last_mut() {
                Some(last) if pending.is_none() => last.end = r.end,
                _ => {
                    pending.get_or_insert(r.start);
                }
            },
            Kind::Item | Kind::Row => {
                let start = pending.take().unwrap_or(r.start);
                claims.push(start..r.end);
            }
            Kind::Paragraph => {
                for (i, s) in sentences(text, r, citations).into_iter().enumerate() {
                    let start = if i == 0 {
                        pending.take().unwrap_or(s.start)
                    } else {
                        s.start
                    };
                    claims.push(start..s.end);
                }
            }
        }
    }
    if let Some(start) = pending {
        // Trailing heading or code with nothing after it.
        match claims.last_mut() {
            Some(last) if last.end <= start => last.end = text.trim_end().len(),
            _ => claims.push(start..text.trim_end().len()),
        }
    }
    // A claim that is only citations belongs to the claim before it.
    let mut out: Vec<Range<usize>> = Vec::with_capacity(claims.len());
    for c in claims {
        if let Some(prev) = out.last_mut()
            && only_citations(text, &c, citations)
        {
            prev.end = c.end;
            continue;
        }
        out.push(c);
    }
    out.into_iter()
        .map(|r| trim(text, r))
        .filter(|r| !r.is_empty())
        .collect()
}

/// Byte ranges of fenced code blocks (an unclosed fence runs to the end).
pub(crate) fn fenced_ranges(text: &str) -> Vec<Range<usize>> {
    segments(text)
        .into_iter()
        .filter(|(k, _)| *k == Kind::Code)
        .map(|(_, r)| r)
        .collect()
}

fn trim(text: &str, r: Range<usize>) -> Range<usize> {
    let s = &text[r.clone()];
    let start = r.start + (s.len() - s.trim_start().len());
    let end = r.start + s.trim_end().len();
    start..end.max(start)
}

fn only_citations(text: &str, r: &Range<usize>, cites: &[Range<usize>]) -> bool {
    let mut rest = String::new();
    let mut any = false;
    let mut i = r.start;
    for c in cites
        .iter()
        .filter(|c| c.start >= r.start && c.end <= r.end)
    {
        if c.start < i {
            continue; // several citations of one bracket share its span
        }
        rest.push_str(&text[i..c.start]);
        i = c.end;
        any = true;
    }
    rest.push_str(&text[i..r.end]);
    any && rest
        .chars()
        .all(|c| c.is_whitespace() || ",.;:()-–—`*_".contains(c) || c == '>')
}

fn fence_of(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start();
    let c = t.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = t.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

fn is_heading(line: &str) -> bool {
    let t = line.trim_start();
    let hashes = t.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes) && t[hashes..].starts_with(' ')
        || line.len() - t.len() < 4
            && t.starts_with("**")
            && t.ends_with("**")
            && t.len() > 4
            && !t[2..t.len() - 2].contains("**")
}

/// Width of a list marker at the start of `line` (after indentation), if any.
fn item_marker(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let b = t.as_bytes();
    if b.len() >= 2 && matches!(b[0], b'-' | b'*' | b'+') && b[1] == b' ' {
        // `**bold**` is not a marker; `- ` is.
        return Some(2);
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=3).contains(&digits)
        && b.len() > digits + 1
        && matches!(b[digits], b'.' | b')')
        && b[digits + 1] == b' '
    {
        return Some(digits + 2);
    }
    None
}

fn is_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

fn is_row_separator(line: &str) -> bool {
    let t = line.trim();
    is_row(t) && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// Lines with their byte ranges (without the line break).
fn lines(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == '\n' {
            out.push(start..i);
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

fn segments(text: &str) -> Vec<(Kind, Range<usize>)> {
    let lines = lines(text);
    let mut out: Vec<(Kind, Range<usize>)> = Vec::new();
    let mut open: Option<(Kind, Range<usize>)> = None;
    let mut i = 0;
    let close = |open: &mut Option<(Kind, Range<usize>)>, out: &mut Vec<(Kind, Range<usize>)>| {
        if let Some(seg) = open.take() {
            out.push(seg);
        }
    };
    while i < lines.len() {
        let r = lines[i].clone();
        let line = text[r.clone()].trim_end_matches('\r');
        if let Some((fc, n)) = fence_of(line) {
            // A fence: everything up to the closing fence (or the end).
            let mut j = i + 1;
            while j < lines.len() {
                let l = text[lines[j].clone()].trim();
                if l.starts_with(&fc.to_string().repeat(n)) && l.chars().all(|c| c == fc) {
                    break;
                }
                j += 1;
            }
            let end = lines[j.min(lines.len() - 1)].end;
            close(&mut open, &mut out);
            out.push((Kind::Code, r.start..end));
            i = j + 1;
            continue;
        }
        if line.trim().is_empty() {
            close(&mut open, &mut out);
        } else if is_heading(line) {
            close(&mut open, &mut out);
            out.push((Kind::Heading, r));
        } else if item_marker(line).is_some() {
            close(&mut open, &mut out);
            open = Some((Kind::Item, r));
        } else if is_row(line) {
            match open.as_mut() {
                Some((Kind::Row, o)) if is_row_separator(line) => o.end = r.end,
                _ => {
                    close(&mut open, &mut out);
                    open = Some((Kind::Row, r));
                }
            }
        } else {
            match open.as_mut() {
                // Continuation of an item or a paragraph.
                Some((Kind::Item | Kind::Paragraph, o)) => o.end = r.end,
                _ => {
                    close(&mut open, &mut out);
                    open = Some((Kind::Paragraph, r));
                }
            }
        }
        i += 1;
    }
    close(&mut open, &mut out);
    out
}

const ABBREVIATIONS: &[&str] = &[
    "al", "approx", "cf", "dr", "e.g", "eg", "esp", "etc", "fig", "i.e", "ie", "incl", "jr", "mr",
    "mrs", "ms", "no", "nos", "resp", "sr", "st", "viz", "vs",
];

/// Sentences of a paragraph.
fn sentences(text: &str, r: Range<usize>, cites: &[Range<usize>]) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = r.start;
    let mut i = r.start;
    let mut in_code = false;
    let mut bracket = 0i32;
    let cite_at = |p: usize| cites.iter().find(|c| c.start == p).map(|c| c.end);
    while i < r.end {
        if !in_code && let Some(end) = cite_at(i) {
            i = end;
            // A line that ends with a citation ends the sentence.
            let mut j = i;
            while j < r.end && matches!(bytes[j], b' ' | b'\t' | b'\r') {
                j += 1;
            }
            if j < r.end
                && bytes[j] == b'\n'
                && text[j..r.end].trim_start().starts_with(starts_sentence)
            {
                out.push(start..i);
                start = j;
            }
            continue;
        }
        let c = bytes[i];
        match c {
            b'`' => in_code = !in_code,
            b'\n' => bracket = 0,
            b'[' | b'(' if !in_code => bracket += 1,
            b']' | b')' if !in_code => bracket = (bracket - 1).max(0),
            b'.' | b'!' | b'?' if !in_code && bracket == 0 => {
                // Take the whole run of terminal punctuation and closers.
                let mut end = i + 1;
                while end < r.end && matches!(bytes[end], b'.' | b'!' | b'?' | b'"' | b'\'' | b')')
                {
                    end += 1;
                }
                if end < r.end && !bytes[end].is_ascii_whitespace() && !text[end..].starts_with('”')
                {
                    i = end;
                    continue;
                }
                let end = if text[end..].starts_with('”') {
                    end + '”'.len_utf8()
                } else {
                    end
                };
                if c == b'.' && is_abbreviation(text, start, i, end, r.end) {
                    i = end;
                    continue;
                }
                // Citations after the period stay with this sentence.
                let mut k = end;
                loop {
                    let mut j = k;
                    while j < r.end && bytes[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    match cite_at(j) {
                        Some(e) => {
                            k = e;
                            while k < r.end && matches!(bytes[k], b'.' | b',' | b';') {
                                k += 1;
                            }
                        }
                        None => break,
                    }
                }
                let next = text[k..r.end].trim_start();
                if next.is_empty() {
                    i = k;
                    continue;
                }
                if next.starts_with(starts_sentence) {
                    out.push(start..k);
                    start = r.end - next.len();
                    i = start;
                    continue;
                }
                i = k;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if start < r.end {
        out.push(start..r.end);
    }
    out.retain(|s| !text[s.clone()].trim().is_empty());
    out
}

fn starts_sentence(c: char) -> bool {
    c.is_uppercase()
        || c.is_ascii_digit()
        || matches!(c, '`' | '[' | '(' | '*' | '_' | '"' | '\'' | '“' | '>')
}

/// Is the period at `dot` the end of an abbreviation or an initial?
fn is_abbreviation(text: &str, start: usize, dot: usize, after: usize, end: usize) -> bool {
    let before = &text[start..dot];
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '"')
        .next()
        .unwrap_or("");
    let lower = word.to_ascii_lowercase();
    if word.len() == 1 && word.chars().all(|c| c.is_ascii_uppercase()) {
        return true; // an initial: `J. Smith`
    }
    if !ABBREVIATIONS.contains(&lower.as_str()) {
        return false;
    }
    if lower == "etc" || lower == "al" {
        // Often ends a sentence: only an abbreviation when lower case follows.
        let next = text[after..end].trim_start();
        return next.starts_with(|c: char| c.is_lowercase());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(text: &str) -> Vec<&str> {
        let cites = crate::cite::parse_citations(text)
            .into_iter()
            .map(|c| c.span)
            .collect::<Vec<_>>();
        split(text, &cites).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn sentences_with_citations() {
        assert_eq!(
            claims("It parses the file [a.py:1-9]. Then it validates keys [a.py:10-20]. Done."),
            [
                "It parses the file [a.py:1-9].",
                "Then it validates keys [a.py:10-20].",
                "Done."
            ]
        );
    }

    #[test]
    fn no_cut_on_abbreviations_decimals_calls_and_paths() {
        let t = "Use a helper, e.g. `load()`, i.e. the loader [a.py:1-2]. It waits 1.5 s via foo.bar() in src/app.py [a.py:3]. Retries, timeouts, etc. are configured in config.toml. See Dr. Smith's note.";
        assert_eq!(
            claims(t),
            [
                "Use a helper, e.g. `load()`, i.e. the loader [a.py:1-2].",
                "It waits 1.5 s via foo.bar() in src/app.py [a.py:3].",
                "Retries, timeouts, etc. are configured in config.toml.",
                "See Dr. Smith's note."
            ]
        );
    }

    #[test]
    fn etc_at_the_end_of_a_sentence_cuts() {
        assert_eq!(
            claims("It handles GET, POST, etc. The rest is rejected."),
            ["It handles GET, POST, etc.", "The rest is rejected."]
        );
    }

    #[test]
    fn citations_after_the_period_stay_with_their_sentence() {
        assert_eq!(
            claims("It retries. [a.py:5-9] [b.py:1] It logs. [c.py:2]"),
            ["It retries. [a.py:5-9] [b.py:1]", "It logs. [c.py:2]"]
        );
        assert_eq!(
            claims("It retries [a.py:5-9]\nIt logs [c.py:2]"),
            ["It retries [a.py:5-9]", "It logs [c.py:2]"]
        );
    }

    #[test]
    fn bullets_are_claims_and_code_joins_its_claim() {
        let t = "## How it works\nThe client is built like this [a.py:1-3]:\n\n```python\nx = Client(). y = 2.\nZ = 3\n```\n\n- First item [a.py:4]\n  continues here.\n- Second item. Two sentences [a.py:5].\n1) numbered [b.py:1]\n\nI don't know about the rest.";
        let c = claims(t);
        assert_eq!(c.len(), 5, "{c:#?}");
        assert!(c[0].starts_with("## How it works\nThe client is built"));
        assert!(c[0].ends_with("Z = 3\n```"));
        assert_eq!(c[1], "- First item [a.py:4]\n  continues here.");
        assert_eq!(c[2], "- Second item. Two sentences [a.py:5].");
        assert_eq!(c[3], "1) numbered [b.py:1]");
        assert_eq!(c[4], "I don't know about the rest.");
    }

    #[test]
    fn leading_code_joins_the_next_claim_and_citation_lines_join_the_previous() {
        let t = "```rust\nfn a() {}\n```\nThis defines `a` [x.rs:1].\n\n[x.rs:2-3]";
        assert_eq!(
            claims(t),
            ["```rust\nfn a() {}\n```\nThis defines `a` [x.rs:1].\n\n[x.rs:2-3]"]
        );
    }

    #[test]
    fn tables_split_by_row() {
        let t = "| fn | does |\n|---|---|\n| a | x [a.py:1] |\n| b | y [a.py:2] |";
        assert_eq!(
            claims(t),
            [
                "| fn | does |\n|---|---|",
                "| a | x [a.py:1] |",
                "| b | y [a.py:2] |"
            ]
        );
    }

    #[test]
    fn every_non_blank_byte_is_kept() {
        let t = "# T\n\nA. B? C! \"D.\" E (see F.) G.\n\n* x\n* y\n\n```\ncode\n```\n";
        let c = claims(t);
        let joined: String = c.concat().split_whitespace().collect();
        let orig: String = t.split_whitespace().collect();
        assert_eq!(joined, orig);
    }
}
