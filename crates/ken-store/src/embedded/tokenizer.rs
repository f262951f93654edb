//! The identifier-aware tantivy analyzer.
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
    static STEMS: RefCell<(frostem::Stemmer, HashMap<String, String>)> =
        RefCell::new((frostem::Stemmer::new(frostem::Algorithm::English), HashMap::new()));
}

/// English Snowball stem of a lowercase sub-word, cached per thread.
fn stem(word: &str) -> String {
    STEMS.with(|cell| {
        let (stemmer, cache) = &mut *cell.borrow_mut();
        if let Some(s) = cache.get(word) {
            return s.clone();
        }
        let s = stemmer.stem(word).into_owned();
        if cache.len() > 200_000 {
            cache.clear();
        }
        cache.insert(word.to_string(), s.clone());
        s
    })
}

#[derive(Clone, Default)]
pub struct CodeTokenizer;

pub struct CodeTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream {
        let mut tokens = Vec::new();
        ken_core::ident::index_tokens(text, |t, pos, from, to| {
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position: pos,
                text: stem(t),
                position_length: 1,
            });
        });
        CodeTokenStream { tokens, next: 0 }
    }
}

impl TokenStream for CodeTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
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
}
