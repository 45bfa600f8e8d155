//! Stores each event's topics and data as packed ABI words: every 32-byte word without its
//! zero padding, behind a one-byte header.
//!
//! Why: ABI encoding pads every address, amount, offset and string to 32 bytes. On a
//! mainnet-shaped corpus an event's topics and data average 114 bytes, 67 once packed, and
//! the history is the largest table.
//!
//! The format (the entities crate reads it, `entities::packed_words`), word by word:
//! - `n` in `0..=32`: the word's last `n` bytes follow, the others being leading zeros;
//! - `0x40 | n`, `n` in `1..=31`: its first `n` bytes follow, the others trailing zeros;
//! - `0x80 | n`, `n` in `0..=31`: a final partial word of `n` bytes follows as it is.
//!
//! The conversion reads the rows in primary-key order, a batch at a time, and writes each
//! batch back in one statement. Migrations are frozen, so this file packs with its own copy
//! of the format rather than the entities crate's code; the migration test reads the result
//! back through the entities crate.

use sea_orm_migration::{
    prelude::*,
    sea_orm::{DatabaseBackend, Statement, Value},
};

/// Packs `events.topics` and `events.data`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// Rows converted per statement: 6 bound values each, well under either engine's limit.
const BATCH: usize = 2_000;

/// `bytes` packed word by word (the format in the module docs).
fn pack(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() / 2 + 4);
    let mut words = bytes.chunks_exact(32);
    for word in words.by_ref() {
        let leading = word.iter().take_while(|b| **b == 0).count();
        let trailing = word.iter().rev().take_while(|b| **b == 0).count();
        if leading >= trailing {
            out.push((32 - leading) as u8);
            out.extend_from_slice(&word[leading..]);
        } else {
            out.push(0x40 | (32 - trailing) as u8);
            out.extend_from_slice(&word[..32 - trailing]);
        }
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        out.push(0x80 | rest.len() as u8);
        out.extend_from_slice(rest);
    }
    out
}

/// `sql` with `?` placeholders, in the placeholder style of `backend`.
fn statement(backend: DatabaseBackend, sql: &str, values: Vec<Value>) -> Statement {
    let sql = match backend {
        DatabaseBackend::Postgres => {
            let mut n = 0;
            sql.split('?')
                .enumerate()
                .map(|(i, part)| {
                    if i == 0 {
                        part.to_owned()
                    } else {
                        n += 1;
                        format!("${n}{part}")
                    }
                })
                .collect()
        }
        _ => sql.to_owned(),
    };
    Statement::from_sql_and_values(backend, sql, values)
}

/// The primary key of an event row.
type Key = (i64, i64, i32, i32);

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = db.get_database_backend();
        let mut after: Key = (i64::MIN, i64::MIN, i32::MIN, i32::MIN);
        loop {
            let (c, b, l, s) = after;
            let rows = db
                .query_all_raw(statement(
                    backend,
                    &format!(
                        "SELECT chain_id, block_number, log_index, seq, topics, data FROM events \
                         WHERE (chain_id, block_number, log_index, seq) > (?, ?, ?, ?) \
                         ORDER BY chain_id, block_number, log_index, seq LIMIT {BATCH}"
                    ),
                    vec![c.into(), b.into(), l.into(), s.into()],
                ))
                .await?;
            let Some(last) = rows.last() else { break };
            after = (
                last.try_get("", "chain_id")?,
                last.try_get("", "block_number")?,
                last.try_get("", "log_index")?,
                last.try_get("", "seq")?,
            );
            let mut values = Vec::with_capacity(rows.len() * 6);
            for row in &rows {
                let topics: Vec<u8> = row.try_get("", "topics")?;
                let data: Vec<u8> = row.try_get("", "data")?;
                values.push(row.try_get::<i64>("", "chain_id")?.into());
                values.push(row.try_get::<i64>("", "block_number")?.into());
                values.push(row.try_get::<i32>("", "log_index")?.into());
                values.push(row.try_get::<i32>("", "seq")?.into());
                values.push(pack(&topics).into());
                values.push(pack(&data).into());
            }
            let tuples = vec!["(?, ?, ?, ?, ?, ?)"; rows.len()].join(", ");
            db.execute_raw(statement(
                backend,
                &format!(
                    "WITH packed (c, b, l, s, t, d) AS (VALUES {tuples}) \
                     UPDATE events SET topics = packed.t, data = packed.d FROM packed \
                     WHERE events.chain_id = packed.c AND events.block_number = packed.b \
                     AND events.log_index = packed.l AND events.seq = packed.s"
                ),
                values,
            ))
            .await?;
        }
        Ok(())
    }

    /// One transaction on every engine: a crash leaves every row in one format.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "packed event words are not unpacked in place; restore a backup taken before \
             this migration instead"
                .to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_each_word_by_its_smaller_trim() {
        let mut address = vec![0; 12];
        address.extend([0xaa; 20]);
        let mut string = b"eth".to_vec();
        string.resize(32, 0);
        let bytes = [address, string, vec![0; 32], vec![0xde, 0xad]].concat();
        let mut expected = vec![20];
        expected.extend([0xaa; 20]);
        expected.extend([0x43, b'e', b't', b'h', 0, 0x82, 0xde, 0xad]);
        assert_eq!(pack(&bytes), expected);
    }

    #[test]
    fn numbers_postgres_placeholders() {
        let sql = statement(DatabaseBackend::Postgres, "(?, ?) > (?, ?)", vec![1.into(); 4]).sql;
        assert_eq!(sql, "($1, $2) > ($3, $4)");
    }
}
