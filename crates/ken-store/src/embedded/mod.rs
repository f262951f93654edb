//! The embedded store: one directory per repository holding `index.sqlite`
//! (the source of truth) and two tantivy indexes derived from it
//! (`lexical/chunks`, `lexical/files`).
//!
//! # Crash safety
//! A batch is written in three steps:
//! 1. SQLite: the batch's paths go into `journal`, chunk ids are reserved;
//! 2. tantivy: the paths' documents are replaced in both indexes, committed;
//! 3. SQLite: files, content, chunks and symbols are replaced and the journal
//!    rows removed, in one transaction.
//!
//! A crash before 3 leaves SQLite as it was; the next writer finds the
//! journal, rewrites those paths' tantivy documents from SQLite, and the
//! index is consistent again (searches meanwhile drop hits SQLite does not
//! know). Chunk ids are reserved before use and never reused.

mod blame;
mod chunks;
pub(crate) mod codec;
mod fleet;
mod graph;
mod history;
pub(crate) mod lexical;
pub(crate) mod pool;
mod provider;
pub(crate) mod schema;
mod symbol_rows;
mod texts;
mod vector_rows;
mod vectors;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ken_core::{Chunk, ChunkKind, Definition};
use rusqlite::params;

pub use self::fleet::{EmbeddedFleet, FLEET_DIR};
use self::lexical::{LexDoc, LexicalIndex};
pub use self::provider::{EmbeddedProvider, dir_name};
pub use crate::symbols::fold;
use crate::{
    Batch, ChunkFilter, ChunkStore, FileContent, FileHit, FileRecord, GraphStore, HistoryStore,
    IndexState, IndexStore, LexicalHit, LexicalQuery, Result, Stats, StoreError, StoredChunk,
    SymbolMatch, VectorMeta, VectorStore,
};

const CHUNK_WRITER_MEMORY: usize = 64 << 20;
const FILE_WRITER_MEMORY: usize = 32 << 20;

pub struct EmbeddedStore {
    dir: PathBuf,
    conns: pool::Pool,
    chunk_index: LexicalIndex,
    file_index: LexicalIndex,
    /// Held while this store may write: an exclusive lock on `dir/lock`.
    lock: Option<File>,
    /// Symbol look-ups of a read-only store, remembered: a server's store
    /// is replaced when a writer commits, so they cannot go stale for long.
    symbol_cache: Mutex<HashMap<(String, usize, bool), Vec<SymbolMatch>>>,
    /// Vector indexes mapped by searches.
    vectors: vectors::Loaded,
}

/// Most look-ups a read-only store remembers before it starts over.
const SYMBOL_CACHE: usize = 4096;

impl EmbeddedStore {
    /// Does `dir` hold an index?
    pub fn exists(dir: &Path) -> bool {
        dir.join("index.sqlite").is_file()
    }

    /// Open for reading (creating an empty index if there is none).
    pub fn open(dir: &Path) -> Result<EmbeddedStore> {
        crate::private::create_dir(dir)?;
        let conns = pool::Pool::open(&dir.join("index.sqlite"))?;
        let chunk_index = LexicalIndex::open(&dir.join("lexical/chunks"))?;
        let file_index = LexicalIndex::open(&dir.join("lexical/files"))?;
        Ok(EmbeddedStore {
            dir: dir.to_path_buf(),
            conns,
            chunk_index,
            file_index,
            lock: None,
            symbol_cache: Mutex::new(HashMap::new()),
            vectors: vectors::Loaded::default(),
        })
    }

    /// Open for writing: takes the index's lock (refusing if another writer
    /// holds it) and repairs what an interrupted writer left behind.
    pub fn open_for_writing(dir: &Path) -> Result<EmbeddedStore> {
        crate::private::create_dir(dir)?;
        let lock_path = dir.join("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .read(true)
            .open(&lock_path)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
                let who = if holder.trim().is_empty() {
                    dir.display().to_string()
                } else {
                    format!("pid {}", holder.trim())
                };
                return Err(StoreError::Locked(who));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
        }
        lock.set_len(0)?;
        std::io::Write::write_all(&mut &lock, std::process::id().to_string().as_bytes())?;
        let mut store = EmbeddedStore::open(dir)?;
        store.lock = Some(lock);
        store.chunk_index.start_writing(CHUNK_WRITER_MEMORY)?;
        store.file_index.start_writing(FILE_WRITER_MEMORY)?;
        store.recover()?;
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of documents in the chunk index (for consistency checks).
    pub fn lexical_docs(&self) -> u64 {
        self.chunk_index.num_docs()
    }

    fn writing(&self) -> Result<()> {
        if self.lock.is_none() {
            return Err(StoreError::Other("this store was opened read-only".into()));
        }
        Ok(())
    }

    /// Rewrite the tantivy documents of journaled paths from SQLite.
    fn recover(&mut self) -> Result<()> {
        let journaled: Vec<String> = {
            let conn = self.conns.get()?;
            let mut stmt = conn.prepare("SELECT path FROM journal")?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<std::result::Result<_, _>>()?
        };
        let lexical_lost =
            self.chunk_index.num_docs() == 0 && chunks::stats(&*self.conns.get()?)?.chunks > 0;
        let paths: Vec<String> = if lexical_lost {
            chunks::files(&*self.conns.get()?)?
                .into_iter()
                .map(|f| f.path)
                .collect()
        } else {
            journaled
        };
        if paths.is_empty() {
            return Ok(());
        }
        for path in &paths {
            self.chunk_index.delete_path(path);
            self.file_index.delete_path(path);
            let chunks = chunks::chunks_of_file(&*self.conns.get()?, path)?;
            let names = self.symbol_names(path)?;
            for c in &chunks {
                self.chunk_index.add(&LexDoc {
                    chunk_id: c.id,
                    path,
                    lang: c.language.name(),
                    body: &c.text,
                    symbol: c.qualname.as_deref().unwrap_or(""),
                    doc: c.doc.as_deref().unwrap_or(""),
                })?;
            }
            if let (Some(text), Some(first)) =
                (texts::file_text(&*self.conns.get()?, path)?, chunks.first())
            {
                self.file_index.add(&LexDoc {
                    chunk_id: 0,
                    path,
                    lang: first.language.name(),
                    body: &text,
                    symbol: &names,
                    doc: "",
                })?;
            }
        }
        let seq = schema::get_meta(&*self.conns.get()?, "batch_seq")?.unwrap_or_else(|| "0".into());
        self.chunk_index.commit(&seq)?;
        self.file_index.commit(&seq)?;
        self.conns.get()?.execute("DELETE FROM journal", [])?;
        Ok(())
    }

    fn symbol_names(&self, path: &str) -> Result<String> {
        let conn = self.conns.get()?;
        // by the chunks of the file: symbols have no index of their own by path
        let mut stmt = conn.prepare_cached(
            "SELECT s.qualname FROM chunks c JOIN symbols s ON s.chunk_id = c.id
             WHERE c.path = ?1 ORDER BY s.rowid",
        )?;
        let names: Vec<String> = stmt
            .query_map([path], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        Ok(names.join(" "))
    }

    /// Journals `paths` (a batch under way: a run that stops before it
    /// commits redoes them) and reserves `needed` chunk ids: the batch's
    /// sequence number and its first chunk id.
    fn journal(&self, paths: &[&str], needed: u64) -> Result<(u64, u64)> {
        let mut conn = self.conns.get()?;
        let tx = conn.transaction()?;
        let first_id = schema::get_meta(&tx, "next_chunk_id")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let seq = schema::get_meta(&tx, "batch_seq")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
            + 1;
        schema::set_meta(&tx, "next_chunk_id", Some(&(first_id + needed).to_string()))?;
        {
            let mut stmt = tx.prepare_cached("INSERT OR IGNORE INTO journal(path) VALUES (?1)")?;
            for p in paths {
                stmt.execute([p])?;
            }
        }
        tx.commit()?;
        Ok((seq, first_id))
    }

    /// The batch in the chunk and file indexes, committed under `seq`; the
    /// chunk ids given to each upsert's chunks, from `first_id` on.
    fn write_lexical(
        &mut self,
        batch: &Batch,
        paths: &[&str],
        first_id: u64,
        seq: u64,
    ) -> Result<Vec<Vec<u64>>> {
        for p in paths {
            self.chunk_index.delete_path(p);
            self.file_index.delete_path(p);
        }
        let mut next_id = first_id;
        let mut ids: Vec<Vec<u64>> = Vec::with_capacity(batch.upserts.len());
        for u in &batch.upserts {
            let FileContent::Indexed { text, syntax } = &u.content else {
                ids.push(Vec::new());
                continue;
            };
            let lang = u.language.name();
            let mut file_ids = Vec::with_capacity(syntax.chunks.len());
            for c in &syntax.chunks {
                let id = next_id;
                next_id += 1;
                file_ids.push(id);
                self.chunk_index.add(&LexDoc {
                    chunk_id: id,
                    path: &u.path,
                    lang: c.language.name(),
                    body: &c.text,
                    symbol: c.qualname.as_deref().unwrap_or(""),
                    doc: c.doc.as_deref().unwrap_or(""),
                })?;
            }
            let names: Vec<&str> = syntax
                .definitions
                .iter()
                .map(|d| d.qualname.as_str())
                .collect();
            self.file_index.add(&LexDoc {
                chunk_id: 0,
                path: &u.path,
                lang,
                body: text,
                symbol: &names.join(" "),
                doc: "",
            })?;
            ids.push(file_ids);
        }
        let payload = seq.to_string();
        self.chunk_index.commit(&payload)?;
        self.file_index.commit(&payload)?;
        Ok(ids)
    }
}

/// The smallest chunk holding the whole definition (a real definition chunk
/// before the module chunk), else the one overlapping it most.
pub(crate) fn home_chunk(def: &Definition, chunks: &[Chunk]) -> Option<usize> {
    let covering = chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| c.start_line <= def.start_line && c.end_line >= def.end_line)
        .min_by_key(|(_, c)| (c.kind == ChunkKind::Module, c.end_line - c.start_line));
    if let Some((i, _)) = covering {
        return Some(i);
    }
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let lo = c.start_line.max(def.start_line);
            let hi = c.end_line.min(def.end_line);
            (i, hi.saturating_sub(lo) + u32::from(hi >= lo))
        })
        .filter(|(_, overlap)| *overlap > 0)
        .max_by_key(|(_, overlap)| *overlap)
        .map(|(i, _)| i)
}

impl IndexStore for EmbeddedStore {
    fn data_version(&self) -> Result<u64> {
        self.conns.data_version()
    }

    fn batch_seq(&self) -> Result<u64> {
        Ok(schema::get_meta(&*self.conns.get()?, "batch_seq")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }

    fn stats(&self) -> Result<Stats> {
        chunks::stats(&*self.conns.get()?)
    }

    fn location(&self) -> String {
        self.dir.display().to_string()
    }

    fn size_bytes(&self) -> Result<u64> {
        Ok(provider::dir_size(&self.dir))
    }

    fn state(&self) -> Result<IndexState> {
        schema::read_state(&*self.conns.get()?)
    }

    fn set_state(&mut self, state: &IndexState) -> Result<()> {
        self.writing()?;
        schema::write_state(&*self.conns.get()?, state)
    }

    fn files(&self) -> Result<Vec<FileRecord>> {
        chunks::files(&*self.conns.get()?)
    }

    fn write_batch(&mut self, batch: Batch) -> Result<()> {
        self.writing()?;
        if batch.is_empty() {
            return Ok(());
        }
        let paths: Vec<&str> = batch.paths().collect();
        // Step 1: journal the paths, reserve chunk ids.
        let (seq, first_id) = self.journal(&paths, batch.chunk_count())?;
        // Step 2: the lexical indexes.
        let ids = self.write_lexical(&batch, &paths, first_id, seq)?;
        // Step 3: SQLite, in one transaction.
        let mut conn = self.conns.get()?;
        let tx = conn.transaction()?;
        write_rows(&tx, &batch, &paths, &ids)?;
        schema::set_meta(&tx, "batch_seq", Some(&seq.to_string()))?;
        tx.commit()?;
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.writing()?;
        self.chunk_index.merge_segments()?;
        self.file_index.merge_segments()?;
        let conn = self.conns.get()?;
        conn.execute(
            "DELETE FROM blobs WHERE id NOT IN (SELECT blob_id FROM files)",
            [],
        )?;
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")?;
        Ok(())
    }
}

impl ChunkStore for EmbeddedStore {
    fn search_chunks(&self, query: &LexicalQuery) -> Result<Vec<LexicalHit>> {
        Ok(self
            .chunk_index
            .search(query)?
            .into_iter()
            .map(|(chunk_id, score)| LexicalHit { chunk_id, score })
            .collect())
    }

    fn search_files(&self, query: &LexicalQuery) -> Result<Vec<FileHit>> {
        let hits = self.file_index.search_paths(query)?;
        Ok(hits
            .into_iter()
            .map(|(path, score)| FileHit { path, score })
            .collect())
    }

    fn lookup_symbols(&self, ident: &str, limit: usize, partial: bool) -> Result<Vec<SymbolMatch>> {
        if self.lock.is_some() {
            return symbol_rows::lookup_symbols(&*self.conns.get()?, ident, limit, partial);
        }
        let key = (ident.to_string(), limit, partial);
        if let Some(hit) = self
            .symbol_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(hit.clone());
        }
        let found = symbol_rows::lookup_symbols(&*self.conns.get()?, ident, limit, partial)?;
        let mut cache = self.symbol_cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= SYMBOL_CACHE {
            cache.clear();
        }
        cache.insert(key, found.clone());
        Ok(found)
    }

    fn chunks(&self, ids: &[u64]) -> Result<Vec<StoredChunk>> {
        chunks::chunks_by_id(&*self.conns.get()?, ids)
    }

    fn chunk_heads(&self, ids: &[u64]) -> Result<Vec<StoredChunk>> {
        chunks::chunk_heads_by_id(&*self.conns.get()?, ids)
    }

    fn first_chunk_heads(&self, paths: &[String]) -> Result<Vec<StoredChunk>> {
        chunks::first_chunk_heads(&*self.conns.get()?, paths)
    }

    fn chunks_of_file(&self, path: &str) -> Result<Vec<StoredChunk>> {
        chunks::chunks_of_file(&*self.conns.get()?, path)
    }

    fn file_text(&self, path: &str) -> Result<Option<String>> {
        texts::file_text(&*self.conns.get()?, path)
    }

    fn chunk_ids(&self) -> Result<Vec<u64>> {
        let conn = self.conns.get()?;
        let mut stmt = conn.prepare_cached("SELECT id FROM chunks")?;
        let rows = stmt.query_map([], |r| r.get::<_, i64>(0).map(|i| i as u64))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn all_chunks(&self) -> Result<Vec<StoredChunk>> {
        chunks::all_chunks(&*self.conns.get()?)
    }
}

/// The saved symbol index: zstd-compressed JSON of its batch sequence and the index.
/// The symbol index: its batch sequence on the first line, then the JSON
/// the graph layer wrote, compressed.
const GRAPH_FILE: &str = "graph.index.zst";
/// Where an index written before kept it (not read: the graph is rebuilt,
/// then these go).
const OLD_GRAPH_FILES: [&str; 2] = ["graph.json.zst", "graph.json"];

/// `seq` and the JSON of a [`GRAPH_FILE`]'s text.
fn unframe_graph_index(text: &str) -> Option<(u64, String)> {
    let (seq, json) = text.split_once('\n')?;
    Some((seq.parse().ok()?, json.to_string()))
}

impl GraphStore for EmbeddedStore {
    fn graph_facts(&self, paths: Option<&[String]>) -> Result<Vec<ken_core::FileFacts>> {
        graph::graph_facts(&*self.conns.get()?, paths)
    }

    fn replace_edges(&mut self, paths: Option<&[String]>, edges: &[ken_core::Edge]) -> Result<()> {
        self.writing()?;
        graph::replace_edges(&mut *self.conns.get()?, paths, edges)
    }

    fn edges(&self) -> Result<Vec<ken_core::Edge>> {
        graph::edges(&*self.conns.get()?)
    }

    fn set_ranks(
        &mut self,
        defs: &[(ken_core::DefKey, f32)],
        files: &[(String, f32)],
    ) -> Result<()> {
        self.writing()?;
        graph::set_ranks(&mut *self.conns.get()?, defs, files)
    }

    fn file_ranks(&self) -> Result<HashMap<String, f32>> {
        graph::file_ranks(&*self.conns.get()?)
    }

    fn def_ranks(&self, path: &str) -> Result<Vec<(String, u32, f32)>> {
        graph::def_ranks(&*self.conns.get()?, path)
    }

    fn graph_index(&self) -> Result<Option<(u64, String)>> {
        // An unreadable file is as good as none: the graph is rebuilt (as
        // it is from the files an index written before kept it in).
        let Ok(packed) = std::fs::read(self.dir.join(GRAPH_FILE)) else {
            return Ok(None);
        };
        Ok(texts::decompress(packed.as_slice())
            .ok()
            .and_then(|text| String::from_utf8(text).ok())
            .and_then(|text| unframe_graph_index(&text)))
    }

    fn save_graph_index(&mut self, seq: u64, index_json: &str) -> Result<()> {
        self.writing()?;
        let packed = texts::compress(format!("{seq}\n{index_json}").as_bytes())
            .map_err(|e| StoreError::Other(format!("compressing the symbol index: {e}")))?;
        let path = self.dir.join(GRAPH_FILE);
        let tmp = path.with_extension("zst.tmp");
        std::fs::write(&tmp, packed)?;
        std::fs::rename(tmp, path)?;
        // the files of an index written before are stale now
        for old in OLD_GRAPH_FILES {
            let _ = std::fs::remove_file(self.dir.join(old));
        }
        Ok(())
    }
}

impl HistoryStore for EmbeddedStore {
    fn commit_stats(&self) -> Result<(u64, Option<i64>)> {
        history::commit_stats(&*self.conns.get()?)
    }

    fn add_commits(&mut self, commits: &[crate::CommitRecord]) -> Result<usize> {
        self.writing()?;
        history::add_commits(&mut *self.conns.get()?, commits)
    }

    fn commits(
        &self,
        shas: &[String],
        with_files: bool,
    ) -> Result<HashMap<String, crate::CommitRecord>> {
        history::commits(&*self.conns.get()?, shas, with_files)
    }

    fn commit_heads(&self, shas: &[String]) -> Result<HashMap<String, crate::CommitRecord>> {
        history::commit_heads(&*self.conns.get()?, shas)
    }

    fn all_commits(&self) -> Result<Vec<crate::CommitRecord>> {
        history::all_commits(&*self.conns.get()?)
    }

    fn commit_authors(&self) -> Result<Vec<(String, String)>> {
        history::commit_authors(&*self.conns.get()?)
    }

    fn commit_times(&self) -> Result<Vec<crate::CommitTime>> {
        history::commit_times(&*self.conns.get()?)
    }

    fn search_commits(&self, query: &str, limit: usize) -> Result<Vec<(String, f32)>> {
        history::search_commits(&*self.conns.get()?, query, limit)
    }

    fn commits_touching(&self, paths: &[String]) -> Result<Vec<(String, String)>> {
        history::commits_touching(&*self.conns.get()?, paths)
    }

    fn blame_needed(&self, files: &[(String, String)]) -> Result<Vec<String>> {
        blame::blame_needed(&*self.conns.get()?, files)
    }

    fn put_blame(&mut self, items: &[crate::FileBlameRecord]) -> Result<()> {
        self.writing()?;
        blame::put_blame(&mut *self.conns.get()?, items)
    }

    fn blame_of(&self, path: &str) -> Result<Vec<crate::BlameLines>> {
        blame::blame_of(&*self.conns.get()?, path)
    }

    fn blame_done_of(&self, paths: &[String]) -> Result<HashMap<String, (String, String)>> {
        blame::blame_done_of(&*self.conns.get()?, paths)
    }

    fn paths_blamed_on(&self, shas: &[String]) -> Result<HashSet<String>> {
        blame::paths_blamed_on(&*self.conns.get()?, shas)
    }
}

impl EmbeddedStore {
    /// The vectors of `keys` from the table, then from the index file.
    fn cached_vectors(
        &self,
        model: &str,
        keys: &[String],
        file: Option<&vectors::FileVectors>,
    ) -> Result<HashMap<String, Vec<f32>>> {
        let mut found = vector_rows::get_vectors(&*self.conns.get()?, model, keys)?;
        if let Some(file) = file {
            let rest: Vec<String> = keys
                .iter()
                .filter(|k| !found.contains_key(*k))
                .cloned()
                .collect();
            found.extend(file.get(&rest));
        }
        Ok(found)
    }
}

impl VectorStore for EmbeddedStore {
    fn vector_keys_present(&self, model: &str, keys: &[String]) -> Result<HashSet<String>> {
        let mut present = vector_rows::vector_keys_present(&*self.conns.get()?, model, keys)?;
        if let Some(file) = vectors::FileVectors::open(&self.dir, &self.vectors, model)? {
            present.extend(keys.iter().filter(|k| file.contains(k)).cloned());
        }
        Ok(present)
    }

    fn vector_models(&self) -> Result<Vec<String>> {
        let conn = self.conns.get()?;
        let mut stmt = conn.prepare("SELECT DISTINCT model FROM vectors ORDER BY model")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        let mut models: Vec<String> = rows.collect::<std::result::Result<_, _>>()?;
        models.extend(vectors::models(&self.dir)?);
        models.sort();
        models.dedup();
        Ok(models)
    }

    fn put_vectors(&mut self, model: &str, items: &[(String, Vec<f32>)]) -> Result<()> {
        self.writing()?;
        vector_rows::put_vectors(&mut *self.conns.get()?, model, items)
    }

    fn get_vectors(&self, model: &str, keys: &[String]) -> Result<HashMap<String, Vec<f32>>> {
        let file = vectors::FileVectors::open(&self.dir, &self.vectors, model)?;
        self.cached_vectors(model, keys, file.as_ref())
    }

    fn index_vectors(
        &mut self,
        model: &str,
        rows: &[(u64, String)],
        chunks: usize,
        batch_seq: u64,
    ) -> Result<VectorMeta> {
        self.writing()?;
        let mut keys: Vec<String> = rows.iter().map(|r| r.1.clone()).collect();
        keys.sort_unstable();
        keys.dedup();
        let file = vectors::FileVectors::open(&self.dir, &self.vectors, model)?;
        let cached = self.cached_vectors(model, &keys, file.as_ref())?;
        let keep: HashSet<&str> = keys.iter().map(String::as_str).collect();
        let dropped = file.map(|f| f.dropped(&keep)).unwrap_or_default();
        if !dropped.is_empty() {
            vector_rows::put_vectors(&mut *self.conns.get()?, model, &dropped)?;
        }
        let (meta, in_file) = vectors::write(
            &self.dir,
            &self.vectors,
            model,
            rows,
            &cached,
            chunks,
            batch_seq,
        )?;
        // the file now holds them: the table keeps only what it does not
        vector_rows::forget_vectors(&mut *self.conns.get()?, model, &in_file)?;
        // a commit, so that readers watching `data_version` see the new index
        schema::set_meta(
            &*self.conns.get()?,
            &format!("vectors:{model}"),
            Some(&meta.built_at.to_string()),
        )?;
        Ok(meta)
    }

    fn vector_meta(&self, model: &str) -> Result<Option<VectorMeta>> {
        vectors::meta(&self.dir, model)
    }

    fn vector_chunk_ids(&self, model: &str) -> Result<Vec<u64>> {
        vectors::chunk_ids(&self.dir, &self.vectors, model)
    }

    fn search_vectors(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
        filter: &ChunkFilter,
    ) -> Result<Vec<(u64, f32)>> {
        let allowed = if filter.is_all() {
            None
        } else {
            Some(chunks::chunk_ids_where(&*self.conns.get()?, filter)?)
        };
        vectors::search(&self.dir, &self.vectors, model, query, k, allowed.as_ref())
    }
}

/// The batch's rows: what its paths held goes (their chunks, symbols and
/// facts; a deleted file's blame too), then its files, blobs, chunks (under
/// `ids`), facts and symbols come, and the journal lets the paths go.
fn write_rows(
    tx: &rusqlite::Transaction<'_>,
    batch: &Batch,
    paths: &[&str],
    ids: &[Vec<u64>],
) -> Result<()> {
    let mut del_chunks = tx.prepare_cached("DELETE FROM chunks WHERE path = ?1")?;
    // a file's symbols through its chunks (before those go)
    let mut del_symbols = tx.prepare_cached(
        "DELETE FROM symbols WHERE chunk_id IN (SELECT id FROM chunks WHERE path = ?1)",
    )?;
    let mut del_facts = tx.prepare_cached("DELETE FROM facts WHERE path = ?1")?;
    let mut del_blame_done = tx.prepare_cached("DELETE FROM blame_done WHERE path = ?1")?;
    let mut del_file = tx.prepare_cached("DELETE FROM files WHERE path = ?1")?;
    for p in paths {
        del_symbols.execute([p])?;
        del_chunks.execute([p])?;
        del_facts.execute([p])?;
        if batch.deletes.iter().any(|d| d == p) {
            blame::delete_blame(tx, p)?;
            del_blame_done.execute([p])?;
        }
        del_file.execute([p])?;
    }
    let mut ins_file = tx.prepare_cached(
        "INSERT INTO files(path, blob_id, language, size, skip) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut ins_blob =
        tx.prepare_cached("INSERT OR IGNORE INTO blobs(id, text) VALUES (?1, ?2)")?;
    let mut ins_chunk = tx.prepare_cached(
        "INSERT INTO chunks(id, path, kind, language, symbol, qualname, signature, doc,
             start_line, end_line, start_byte, end_byte, trivial, cell, content_hash, text)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?;
    let mut ins_facts = tx.prepare_cached("INSERT INTO facts(path, json) VALUES (?1, ?2)")?;
    let mut ins_symbol = tx.prepare_cached(
            "INSERT INTO symbols(name, folded, qualname, qual_folded, kind, path, start_line, end_line, chunk_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
    for (u, file_ids) in batch.upserts.iter().zip(ids) {
        let skip = match &u.content {
            FileContent::Skipped { reason } => Some(reason.as_str()),
            FileContent::Indexed { .. } => None,
        };
        ins_file.execute(params![
            u.path,
            u.id,
            u.language.name(),
            u.size as i64,
            skip
        ])?;
        let FileContent::Indexed { text, syntax } = &u.content else {
            continue;
        };
        ins_blob.execute(params![u.id, texts::pack(text)?])?;
        for (c, id) in syntax.chunks.iter().zip(file_ids) {
            let slice = text.get(c.start_byte as usize..c.end_byte as usize);
            let stored_text = if !c.synthetic && slice == Some(c.text.as_str()) {
                None
            } else {
                Some(c.text.as_str())
            };
            ins_chunk.execute(params![
                *id as i64,
                u.path,
                c.kind.name(),
                c.language.name(),
                c.symbol,
                c.qualname,
                c.signature,
                texts::pack_field(c.doc.as_deref()),
                c.start_line,
                c.end_line,
                c.start_byte,
                c.end_byte,
                c.trivial as i64,
                c.cell,
                codec::hex_value(&ken_core::content_hash(c.text.as_bytes())),
                texts::pack_field(stored_text),
            ])?;
        }
        if !syntax.definitions.is_empty() || !syntax.references.is_empty() {
            let facts = ken_core::FileFacts::new(
                u.path.clone(),
                u.language,
                syntax.definitions.clone(),
                syntax.references.clone(),
            )
            .with_values(syntax.values.clone());
            ins_facts.execute(params![u.path, graph::pack_facts(&facts)?])?;
        }
        let mut seen = HashSet::new();
        for d in &syntax.definitions {
            let Some(home) = home_chunk(d, &syntax.chunks) else {
                continue;
            };
            if !seen.insert((d.qualname.as_str(), d.start_line)) {
                continue;
            }
            ins_symbol.execute(params![
                d.name,
                fold(&d.name),
                d.qualname,
                fold(&d.qualname),
                d.kind.name(),
                u.path,
                d.start_line,
                d.end_line,
                file_ids[home] as i64,
            ])?;
        }
    }
    let mut del_journal = tx.prepare_cached("DELETE FROM journal WHERE path = ?1")?;
    for p in paths {
        del_journal.execute([p])?;
    }
    Ok(())
}
