//! Symbol look-ups in the `symbols` table, planned by [`crate::symbols`].

use ken_core::ChunkKind;
use rusqlite::{Connection, params};

use crate::{Result, SymbolMatch, SymbolTier};

pub(crate) fn lookup_symbols(
    conn: &Connection,
    ident: &str,
    limit: usize,
    partial: bool,
) -> Result<Vec<SymbolMatch>> {
    let Some(mut look) = crate::symbols::SymbolLookup::new(ident, limit, partial) else {
        return Ok(Vec::new());
    };
    let row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<SymbolMatch> {
        let kind: String = r.get(2)?;
        Ok(SymbolMatch {
            tier: SymbolTier::Substring,
            name: r.get(0)?,
            qualname: r.get(1)?,
            kind: ChunkKind::parse(&kind).unwrap_or(ChunkKind::Function),
            path: r.get(3)?,
            start_line: r.get(4)?,
            end_line: r.get(5)?,
            chunk_id: r.get::<_, i64>(6)? as u64,
        })
    };
    const COLS: &str = "name, qualname, kind, path, start_line, end_line, chunk_id";
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLS} FROM symbols WHERE {} = ?1 ORDER BY ({} = ?3) DESC LIMIT ?2",
        look.exact_column(),
        look.case_column()
    ))?;
    let rows: Vec<SymbolMatch> = stmt
        .query_map(
            params![look.exact_key(), limit as i64, look.exact_text()],
            row,
        )?
        .collect::<rusqlite::Result<_>>()?;
    look.exact(rows);
    for (tier, pattern) in look.partial_tiers() {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLS} FROM symbols WHERE folded LIKE ?1 ESCAPE '\\' ORDER BY length(folded) LIMIT ?2"
        ))?;
        let rows: Vec<SymbolMatch> = stmt
            .query_map(params![pattern, look.limit() as i64], row)?
            .collect::<rusqlite::Result<_>>()?;
        if !look.partial(tier, rows) {
            break;
        }
    }
    Ok(look.finish())
}
