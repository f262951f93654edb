//! The tantivy half of the embedded store: BM25 over chunks and over whole files.
//!
//! Both indexes are derived data: SQLite is the source of truth and either
//! index can be rebuilt from it. Documents are keyed by `path` so a file's
//! documents are replaced with one delete-by-term.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery, TermSetQuery};
use tantivy::schema::Value;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::tokenizer;
use crate::{FieldWeights, LexicalQuery, Result};

#[derive(Clone, Copy)]
pub(crate) struct Fields {
    pub chunk_id: Field,
    pub path_key: Field,
    pub lang: Field,
    pub body: Field,
    pub symbol: Field,
    pub path: Field,
    pub doc: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer::CODE)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        chunk_id: b.add_u64_field("chunk_id", INDEXED | FAST | STORED),
        path_key: b.add_text_field("path_key", STRING | STORED),
        lang: b.add_text_field("lang", STRING),
        body: b.add_text_field("body", text.clone()),
        symbol: b.add_text_field("symbol", text.clone()),
        path: b.add_text_field("path", text.clone()),
        doc: b.add_text_field("doc", text),
    };
    (b.build(), fields)
}

/// One tantivy index (chunks or files) with its reader and, when writing, its writer.
pub(crate) struct LexicalIndex {
    index: Index,
    reader: IndexReader,
    writer: Option<IndexWriter>,
    pub fields: Fields,
}

/// What one document holds.
pub(crate) struct LexDoc<'a> {
    pub chunk_id: u64,
    pub path: &'a str,
    pub lang: &'a str,
    pub body: &'a str,
    pub symbol: &'a str,
    pub doc: &'a str,
}

impl LexicalIndex {
    pub fn open(dir: &Path) -> Result<LexicalIndex> {
        std::fs::create_dir_all(dir)?;
        let (schema, fields) = schema();
        let (index, reader) = open_index(dir, schema, ReloadPolicy::Manual)?;
        Ok(LexicalIndex {
            index,
            reader,
            writer: None,
            fields,
        })
    }

    pub fn start_writing(&mut self, memory: usize) -> Result<()> {
        if self.writer.is_none() {
            self.writer = Some(self.index.writer_with_num_threads(1, memory)?);
        }
        Ok(())
    }

    fn writer(&mut self) -> &mut IndexWriter {
        self.writer
            .as_mut()
            .expect("start_writing is called before any write")
    }

    pub fn delete_path(&mut self, path: &str) {
        let term = Term::from_field_text(self.fields.path_key, path);
        self.writer().delete_term(term);
    }

    pub fn add(&mut self, d: &LexDoc<'_>) -> Result<()> {
        let f = self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_u64(f.chunk_id, d.chunk_id);
        doc.add_text(f.path_key, d.path);
        doc.add_text(f.lang, d.lang);
        doc.add_text(f.body, d.body);
        doc.add_text(f.symbol, d.symbol);
        doc.add_text(f.path, d.path);
        doc.add_text(f.doc, d.doc);
        self.writer().add_document(doc)?;
        Ok(())
    }

    pub fn commit(&mut self, payload: &str) -> Result<()> {
        let writer = self.writer();
        let mut prepared = writer.prepare_commit()?;
        prepared.set_payload(payload);
        prepared.commit()?;
        self.reader.reload()?;
        Ok(())
    }

    /// Merge every segment into one when the segments besides the largest
    /// hold at least an eighth as many documents as it does (a full index
    /// written in several segments: one term dictionary instead of one per
    /// segment, and deleted documents dropped; a small update leaves its
    /// segment to tantivy's own merge policy). Best effort: a merge tantivy
    /// already runs on the same segments is left to finish on its own.
    /// Returns whether segments were merged.
    pub fn merge_segments(&mut self) -> Result<bool> {
        let metas = self.index.searchable_segment_metas()?;
        let largest = metas.iter().map(|m| m.max_doc()).max().unwrap_or(0);
        let rest: u32 = metas.iter().map(|m| m.max_doc()).sum::<u32>() - largest;
        if metas.len() < 2 || rest.saturating_mul(8) < largest {
            return Ok(false);
        }
        let ids: Vec<_> = metas.iter().map(|m| m.id()).collect();
        // a segment's files live as long as anything holds its meta
        drop(metas);
        let merged = self.writer().merge(&ids).wait().is_ok();
        self.reader.reload()?;
        // the merged segments' files go once no searcher holds them
        self.writer().garbage_collect_files().wait()?;
        Ok(merged)
    }

    /// Segments readers search (for tests and reports).
    #[cfg(test)]
    pub fn segments(&self) -> usize {
        self.reader.searcher().segment_readers().len()
    }

    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Top documents for `q`, as (chunk id, score).
    pub fn search(&self, q: &LexicalQuery) -> Result<Vec<(u64, f32)>> {
        let Some(query) = self.build_query(q, q.weights) else {
            return Ok(Vec::new());
        };
        let searcher = self.reader.searcher();
        let top = searcher.search(
            &query,
            &TopDocs::with_limit(q.limit.max(1)).order_by_score(),
        )?;
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let col = searcher
                .segment_reader(addr.segment_ord)
                .fast_fields()
                .u64("chunk_id")?
                .first_or_default_col(0);
            out.push((col.get_val(addr.doc_id), score));
        }
        Ok(out)
    }

    /// Top documents for `q`, as (path, score).
    pub fn search_paths(&self, q: &LexicalQuery) -> Result<Vec<(String, f32)>> {
        let Some(query) = self.build_query(q, q.weights) else {
            return Ok(Vec::new());
        };
        let searcher = self.reader.searcher();
        let top = searcher.search(
            &query,
            &TopDocs::with_limit(q.limit.max(1)).order_by_score(),
        )?;
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr)?;
            if let Some(path) = doc.get_first(self.fields.path_key).and_then(|v| v.as_str()) {
                out.push((path.to_string(), score));
            }
        }
        Ok(out)
    }

    fn build_query(&self, q: &LexicalQuery, w: FieldWeights) -> Option<Box<dyn Query>> {
        let f = self.fields;
        let terms = query_terms(&q.text);
        if terms.is_empty() {
            return None;
        }
        let fields = [
            (f.body, w.body),
            (f.symbol, w.symbol),
            (f.path, w.path),
            (f.doc, w.doc),
        ];
        let text_query = weighted_terms(&terms, &fields, w)?;
        Some(filtered(text_query, q, f.lang, f.path_key))
    }
}

/// The tantivy index in `dir` (made with `schema` when there is none),
/// with the identifier-aware analyzer registered, and a reader.
pub(crate) fn open_index(
    dir: &Path,
    schema: Schema,
    reload: ReloadPolicy,
) -> Result<(Index, IndexReader)> {
    let directory = tantivy::directory::MmapDirectory::open(dir)?;
    let index = Index::open_or_create(directory, schema)?;
    index
        .tokenizers()
        .register(tokenizer::CODE, tokenizer::analyzer());
    let reader = index.reader_builder().reload_policy(reload).try_into()?;
    Ok((index, reader))
}

/// `text` among the documents of `q`'s languages and paths.
pub(crate) fn filtered(
    text: Box<dyn Query>,
    q: &LexicalQuery,
    lang: Field,
    path_key: Field,
) -> Box<dyn Query> {
    if q.languages.is_empty() && q.paths.is_none() {
        return text;
    }
    let mut must: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, text)];
    if !q.languages.is_empty() {
        let terms = q
            .languages
            .iter()
            .map(|l| Term::from_field_text(lang, l.name()));
        must.push((Occur::Must, Box::new(TermSetQuery::new(terms))));
    }
    if let Some(paths) = &q.paths {
        let terms = paths.iter().map(|p| Term::from_field_text(path_key, p));
        must.push((Occur::Must, Box::new(TermSetQuery::new(terms))));
    }
    Box::new(BooleanQuery::new(must))
}

/// Any of `terms` in any of `fields`, each field's match weighted by the
/// field's weight times the term's (None: no terms).
pub(crate) fn weighted_terms(
    terms: &[(String, u32)],
    fields: &[(Field, f32)],
    w: FieldWeights,
) -> Option<Box<dyn Query>> {
    if terms.is_empty() {
        return None;
    }
    let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for (t, n) in terms {
        let tw = w.term_weight(*n);
        for &(field, weight) in fields {
            if weight <= 0.0 {
                continue;
            }
            let tq = TermQuery::new(
                Term::from_field_text(field, t),
                IndexRecordOption::WithFreqs,
            );
            should.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(tq), weight * tw)),
            ));
        }
    }
    Some(Box::new(BooleanQuery::new(should)))
}

/// The analyzed terms of a query, stop words removed (unless nothing else
/// is left), each once in the order first written, with how many times.
pub(crate) fn query_terms(text: &str) -> Vec<(String, u32)> {
    let kept: Vec<&str> = ken_core::ident::words(text)
        .map(|(_, w)| w)
        .filter(|w| !ken_core::ident::is_stop_word(&w.to_lowercase()))
        .collect();
    let source = if kept.is_empty() {
        text.to_string()
    } else {
        kept.join(" ")
    };
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut terms: Vec<(String, u32)> = Vec::new();
    for t in tokenizer::query_terms(&source) {
        match at.get(&t) {
            Some(&i) => terms[i].1 += 1,
            None => {
                at.insert(t.clone(), terms.len());
                terms.push((t, 1));
            }
        }
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files_in(dir: &Path) -> usize {
        std::fs::read_dir(dir).unwrap().count()
    }

    #[test]
    fn segments_are_merged_into_one_and_their_files_go() {
        let dir = tempfile::tempdir().unwrap();
        let mut ix = LexicalIndex::open(dir.path()).unwrap();
        ix.start_writing(15_000_000).unwrap();
        // three commits, three segments: 40 documents, then 10 and 10
        let mut id = 0u64;
        for (word, n) in [("alpha", 40), ("beta", 10), ("gamma", 10)] {
            for _ in 0..n {
                let path = format!("src/{word}_{id}.py");
                let body = format!("def {word}_handler(): return {id}");
                ix.add(&LexDoc {
                    chunk_id: id,
                    path: &path,
                    lang: "python",
                    body: &body,
                    symbol: word,
                    doc: "",
                })
                .unwrap();
                id += 1;
            }
            ix.commit(&id.to_string()).unwrap();
        }
        assert_eq!(ix.segments(), 3);
        let before = files_in(dir.path());
        assert!(ix.merge_segments().unwrap());
        assert_eq!(ix.segments(), 1);
        assert!(
            files_in(dir.path()) < before,
            "the merged segments' files are deleted"
        );
        assert_eq!(ix.num_docs(), 60);
        // the payload of the last commit (the batch journal's) survives it
        let meta = ix.index.load_metas().unwrap();
        assert_eq!(meta.payload.as_deref(), Some("60"));
        let q = LexicalQuery {
            text: "beta handler".into(),
            limit: 10,
            ..LexicalQuery::default()
        };
        let top = ix.search(&q).unwrap()[0].0;
        assert!((40..50).contains(&top), "{top}");
        // one segment: nothing to merge; a small new one is left to tantivy
        assert!(!ix.merge_segments().unwrap());
        ix.add(&LexDoc {
            chunk_id: 99,
            path: "src/delta.py",
            lang: "python",
            body: "def delta(): pass",
            symbol: "delta",
            doc: "",
        })
        .unwrap();
        ix.commit("99").unwrap();
        assert!(
            !ix.merge_segments().unwrap(),
            "1 document beside 60 stays apart"
        );
        assert_eq!(ix.segments(), 2);
    }
}
