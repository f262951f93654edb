//! Query vectors remembered by a long-lived engine: a server sees the same
//! questions again (a team, an agent retrying, a UI refining filters), and
//! embedding a query is the largest single cost of a hybrid search.
//! Documents pass straight through.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use ken_embed::{EmbedError, Embedder};

/// An embedder whose `embed_query` answers from a bounded cache (least
/// recently inserted out first).
pub struct CachedQueries {
    inner: Box<dyn Embedder>,
    capacity: usize,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    vectors: HashMap<String, Vec<f32>>,
    order: VecDeque<String>,
    hits: u64,
    misses: u64,
}

impl CachedQueries {
    pub fn new(inner: Box<dyn Embedder>, capacity: usize) -> CachedQueries {
        CachedQueries {
            inner,
            capacity,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// (hits, misses) so far.
    #[cfg(test)]
    pub fn stats(&self) -> (u64, u64) {
        let c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        (c.hits, c.misses)
    }
}

impl Embedder for CachedQueries {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn max_tokens(&self) -> usize {
        self.inner.max_tokens()
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed_documents(texts)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        if self.capacity == 0 {
            return self.inner.embed_query(text);
        }
        {
            let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(v) = c.vectors.get(text).cloned() {
                c.hits += 1;
                return Ok(v);
            }
            c.misses += 1;
        }
        // embedded without the lock: other queries go on meanwhile
        let v = self.inner.embed_query(text)?;
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if !c.vectors.contains_key(text) {
            if c.order.len() >= self.capacity
                && let Some(old) = c.order.pop_front()
            {
                c.vectors.remove(&old);
            }
            c.order.push_back(text.to_string());
            c.vectors.insert(text.to_string(), v.clone());
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn id(&self) -> &str {
            "counting"
        }
        fn dim(&self) -> usize {
            1
        }
        fn max_tokens(&self) -> usize {
            8
        }
        fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
        fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(vec![text.len() as f32])
        }
    }

    #[test]
    fn repeated_queries_are_embedded_once_within_capacity() {
        let c = CachedQueries::new(Box::new(Counting(AtomicUsize::new(0))), 2);
        assert_eq!(c.embed_query("abc").unwrap(), vec![3.0]);
        assert_eq!(c.embed_query("abc").unwrap(), vec![3.0]);
        assert_eq!(c.stats(), (1, 1));
        c.embed_query("de").unwrap();
        c.embed_query("f").unwrap(); // evicts "abc"
        c.embed_query("abc").unwrap();
        assert_eq!(c.stats(), (1, 4));
        assert_eq!(c.embed_documents(&["xy"]).unwrap(), vec![vec![2.0]]);
        assert_eq!(c.id(), "counting");
    }
}
