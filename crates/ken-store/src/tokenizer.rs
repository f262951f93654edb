//! The identifier-aware analyzer, shared by both stores: tantivy's index
//! and queries in the embedded store, the query terms the PostgreSQL
//! store's lexical search counts.
//!
//! Every identifier yields its lowercase sub-words and, when it has more than
//! one, the whole identifier with separators removed (`parse_config`,
//! `parseConfig` and `ParseConfig` all index `parseconfig`), so a query that
//! names an identifier exactly scores above one that only shares its parts.
//! Sub-words are stemmed (English Snowball), identically at index and query time.

use std::cell::RefCell;
use std::collections::HashMap;

use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};

/// Name under which the analyzer is registered.
pub const CODE: &str = "ken_code";

/// Build the analyzer.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer).build()
}

/// Analyze `text` into the terms a query would look up.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut a = analyzer();
    let mut stream = a.token_stream(text);
    let mut out = Vec::new();
    while let Some(t) = stream.next() {
        out.push(t.text.clone());
    }
    out
}

thread_local! {
    /// Stems of recently seen words: code repeats its vocabulary endlessly.
    static STEMS: RefCell<Stems> = RefCell::new(Stems {
        stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
        cache: HashMap::default(),
    });
}

struct Stems {
    stemmer: frostem::Stemmer,
    cache: HashMap<String, String, foldhash::fast::RandomState>,
}

impl Stems {
    /// Append the English Snowball stem of a lowercase sub-word to `out`.
    fn push(&mut self, word: &str, out: &mut String) {
        if let Some(s) = self.cache.get(word) {
            out.push_str(s);
            return;
        }
        let s = self.stemmer.stem(word).into_owned();
        out.push_str(&s);
        if self.cache.len() > 200_000 {
            self.cache.clear();
        }
        self.cache.insert(word.to_string(), s);
    }
}

#[derive(Clone, Default)]
pub struct CodeTokenizer;

/// The tokens of one text: their stems one after another in `stems`, so
/// that a text costs two allocations, not one per token; each is copied
/// into `token` as the stream advances.
pub struct CodeTokenStream {
    stems: String,
    spans: Vec<Span>,
    next: usize,
    token: Token,
}

/// A token: where its stem ends in `stems`, its position and its bytes in the text.
struct Span {
    end: usize,
    position: usize,
    from: usize,
    to: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut stems = String::with_capacity(text.len() / 2);
        let mut spans = Vec::with_capacity(text.len() / 6);
        STEMS.with(|cell| {
            let cache = &mut *cell.borrow_mut();
            ken_core::ident::index_tokens(text, |t, position, from, to| {
                cache.push(t, &mut stems);
                spans.push(Span {
                    end: stems.len(),
                    position,
                    from,
                    to,
                });
            });
        });
        CodeTokenStream {
            stems,
            spans,
            next: 0,
            token: Token::default(),
        }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        let Some(span) = self.spans.get(self.next) else {
            return false;
        };
        let start = match self.next {
            0 => 0,
            n => self.spans[n - 1].end,
        };
        self.token.text.clear();
        self.token.text.push_str(&self.stems[start..span.end]);
        self.token.position = span.position;
        self.token.offset_from = span.from;
        self.token.offset_to = span.to;
        self.token.position_length = 1;
        self.next += 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_fold_to_one_whole_token() {
        assert_eq!(
            query_terms("parseConfig"),
            ["parseconfig", "pars", "config"]
        );
        assert_eq!(
            query_terms("parse_config"),
            ["parseconfig", "pars", "config"]
        );
        assert_eq!(query_terms("teardown callbacks"), ["teardown", "callback"]);
    }

    #[test]
    fn tokens_carry_positions_and_offsets() {
        let text = "def parseConfig(paths):  # naïve";
        let mut a = analyzer();
        let mut stream = a.token_stream(text);
        let mut got = Vec::new();
        while let Some(t) = stream.next() {
            got.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
        }
        let want = [
            ("def", 0, 0, 3),
            ("parseconfig", 1, 4, 15),
            ("pars", 1, 4, 15),
            ("config", 2, 4, 15),
            ("path", 3, 16, 21),
            ("naïv", 4, 27, 33),
        ];
        let want: Vec<(String, usize, usize, usize)> = want
            .iter()
            .map(|&(t, p, f, e)| (t.to_string(), p, f, e))
            .collect();
        assert_eq!(got, want);
    }
}
