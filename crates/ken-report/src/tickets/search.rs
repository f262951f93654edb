//! BM25 over tickets for a free-text question.

use super::*;

static STOP_WORDS: LazyLock<HashSet<&str>> = LazyLock::new(|| {
    "a about after all also am an and any are as at be been before being but by can could did do \
     does for from get got had has have he her his how i if in into is it its just me my no not of \
     on or our she should so some than that the their them then there these they this those to too \
     us very was we were what when where which who why will with would yet you your"
        .split_whitespace()
        .collect()
});

/// A light English stemmer (plurals, -ed, -ing), for queries and tickets alike.
pub(super) fn stem(mut t: String) -> String {
    let n = t.len();
    if !t.is_ascii() || n < 4 {
        return t;
    }
    if n > 4 && t.ends_with("ies") {
        t.replace_range(n - 3.., "y");
    } else if n > 4
        && ["sses", "xes", "ches", "shes", "zes"]
            .iter()
            .any(|s| t.ends_with(s))
    {
        t.truncate(n - 2);
    } else if t.ends_with('s') && !["ss", "us", "is"].iter().any(|s| t.ends_with(s)) {
        t.truncate(n - 1);
    } else if n > 5 && t.ends_with("ing") {
        t.truncate(n - 3);
    } else if n > 4 && t.ends_with("ed") {
        t.truncate(n - 2);
    }
    t
}

/// Lower-case tokens split on non-alphanumerics and camelCase, stop words
/// and one-letter tokens dropped, stemmed.
pub(super) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let chars: Vec<char> = word.chars().collect();
        let mut start = 0;
        for i in 1..=chars.len() {
            // `parseHTTPRequest` → parse, HTTP, Request; `v2Api` → v2, Api.
            let hump = |i: usize| {
                let (prev, next) = (chars[i - 1], chars.get(i + 1));
                prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next.is_some_and(|c| c.is_lowercase()))
            };
            if i == chars.len() || (chars[i].is_uppercase() && hump(i)) {
                let t = chars[start..i].iter().collect::<String>().to_lowercase();
                if t.chars().count() > 1 && !STOP_WORDS.contains(t.as_str()) {
                    out.push(stem(t));
                }
                start = i;
            }
        }
    }
    out
}

/// Tickets matching a free-text question, best first: BM25 (k1 1.2, b 0.75)
/// over title (weighted ×2), body and labels; a ticket whose id the question
/// mentions (`#12`, `PROJ-101`, any case) ranks above all others, in order of
/// mention. Returns (index into `tickets`, score), at most `limit`, only
/// scores > 0.
pub fn search_tickets(tickets: &[Ticket], question: &str, limit: usize) -> Vec<(usize, f32)> {
    const K1: f32 = 1.2;
    const B: f32 = 0.75;
    let mut docs: Vec<(HashMap<String, f32>, f32)> = Vec::with_capacity(tickets.len());
    for t in tickets {
        let (mut tf, mut len) = (HashMap::<String, f32>::new(), 0.0);
        let fields = [
            (&t.title[..], 2.0),
            (&t.body[..], 1.0),
            (&t.labels.join(" "), 1.0),
        ];
        for (text, weight) in fields {
            for tok in tokens(text) {
                *tf.entry(tok).or_default() += weight;
                len += weight;
            }
        }
        docs.push((tf, len));
    }
    let avg = (docs.iter().map(|d| d.1).sum::<f32>() / docs.len().max(1) as f32).max(1e-6);
    let mut query = tokens(question);
    query.sort();
    query.dedup();
    let n = docs.len() as f32;
    let mut scores = vec![0.0f32; docs.len()];
    for term in &query {
        let df = docs.iter().filter(|d| d.0.contains_key(term)).count() as f32;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        for (score, (tf, len)) in scores.iter_mut().zip(&docs) {
            if let Some(&f) = tf.get(term) {
                *score += idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg));
            }
        }
    }
    let top = scores.iter().copied().fold(0.0f32, f32::max);
    let mentions = scan(question, true);
    for (rank, r) in mentions.iter().enumerate() {
        let id = norm(&r.id);
        for (i, t) in tickets.iter().enumerate() {
            if norm(&t.id) == id && scores[i] <= top {
                scores[i] = top + 1.0 + (mentions.len() - rank) as f32;
            }
        }
    }
    let mut ranked: Vec<(usize, f32)> = scores.into_iter().enumerate().collect();
    ranked.retain(|s| s.1 > 0.0);
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(limit);
    ranked
}
