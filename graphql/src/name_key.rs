//! How a query reaches domains by name on each engine.
//!
//! ENS bounds neither labels nor names, so a name may be many kilobytes long. SQLite indexes
//! `name` itself (an index entry of any size spills to overflow pages). A PostgreSQL B-tree
//! entry must fit in a third of a page (about 2.7 KB), so there the name indexes
//! (`domains_name_seq`, `domains_owner_name_seq`, `domains_parent_name_seq`) hold the
//! name's first [`KEY_CHARS`] characters, its *key*, at most 1 KiB of UTF-8, in place of the
//! name. A query on PostgreSQL narrows by the key through the index and then compares whole
//! names.
//!
//! The key is a prefix of the name, and names compare bytewise on both engines (`BINARY`,
//! `COLLATE "C"`), so the key never disagrees with the name: `a <= b` implies
//! `key(a) <= key(b)`, and ordering by `(key, name)` is ordering by `name`. Listings are
//! therefore the same rows in the same order on both engines; only the SQL differs.

use entities::domain;
use sea_orm::{
    ColumnTrait, Condition, DbBackend,
    sea_query::{Expr, ExprTrait, LikeExpr, SimpleExpr},
};

use crate::domain_filter::escape_like;

/// Characters of a name its PostgreSQL index key holds. At four bytes a character at most,
/// the key with an owner and a `seq` stays well inside a B-tree entry.
pub const KEY_CHARS: usize = 256;

/// The key as the PostgreSQL indexes compute it (characters, as `substr` counts them). The
/// indexes' definitions must be this expression (unqualified) for the planner to match them.
pub const KEY_SQL: &str = "substr(domains.name, 1, 256)";

/// Whether `backend` indexes names by their key.
fn keyed(backend: DbBackend) -> bool {
    backend == DbBackend::Postgres
}

/// The key of `name`.
pub fn key_of(name: &str) -> String {
    name.chars().take(KEY_CHARS).collect()
}

fn key() -> Expr {
    Expr::cust(KEY_SQL)
}

/// Domains named `name`.
pub fn eq(backend: DbBackend, name: &str) -> Condition {
    let condition = Condition::all().add(domain::Column::Name.eq(name));
    if keyed(backend) { condition.add(key().eq(key_of(name))) } else { condition }
}

/// Domains named any of `names`.
pub fn is_in(backend: DbBackend, names: &[String]) -> Condition {
    let condition = Condition::all().add(domain::Column::Name.is_in(names.iter().cloned()));
    if !keyed(backend) {
        return condition;
    }
    let mut keys: Vec<String> = names.iter().map(|n| key_of(n)).collect();
    keys.sort_unstable();
    keys.dedup();
    condition.add(key().is_in(keys))
}

/// Domains whose names start with `prefix`.
///
/// SQLite reads the byte range `[prefix, prefix + U+10FFFF)` of its name index, and `LIKE`
/// keeps the filter exact. PostgreSQL tests the key alone with `LIKE` when the prefix fits in
/// it: one condition, which the planner turns into the key index's range and estimates from
/// the key's statistics (several correlated conditions multiply into an estimate so small
/// that it sorts the whole slice instead of walking the index in order). A longer prefix
/// fixes the whole key and leaves the rest to `LIKE` on the name.
pub fn starts_with(backend: DbBackend, prefix: &str) -> Condition {
    let escaped = escape_like(prefix);
    let pattern = |column: Expr| column.like(LikeExpr::new(format!("{escaped}%")).escape('\\'));
    let name = || Expr::col((domain::Entity, domain::Column::Name));
    if !keyed(backend) {
        return Condition::all()
            .add(domain::Column::Name.gte(prefix))
            .add(domain::Column::Name.lt(format!("{prefix}\u{10FFFF}")))
            .add(pattern(name()));
    }
    if prefix.chars().count() <= KEY_CHARS {
        Condition::all().add(pattern(key()))
    } else {
        Condition::all().add(key().eq(key_of(prefix))).add(pattern(name()))
    }
}

/// The expressions that order by name, in order (the caller adds the `seq` tie-breaker).
pub fn order(backend: DbBackend) -> Vec<SimpleExpr> {
    let name = Expr::col((domain::Entity, domain::Column::Name));
    if keyed(backend) { vec![key(), name] } else { vec![name] }
}

/// Rows strictly after the row `(name, seq)` in ascending (`ascending`) or descending name
/// order, ties broken by `seq` in the same direction.
pub fn after(backend: DbBackend, ascending: bool, name: &str, seq: i64) -> Condition {
    let col = domain::Column::Name;
    let (beyond, seq_beyond) = if ascending {
        (col.gt(name), domain::Column::Seq.gt(seq))
    } else {
        (col.lt(name), domain::Column::Seq.lt(seq))
    };
    let strictly =
        Condition::any().add(beyond).add(Condition::all().add(col.eq(name)).add(seq_beyond));
    if !keyed(backend) {
        return strictly;
    }
    // Implied by `strictly`; stated so that the planner starts the index walk at the row.
    let bound = if ascending { key().gte(key_of(name)) } else { key().lte(key_of(name)) };
    Condition::all().add(bound).add(strictly)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixes_of_characters() {
        assert_eq!(key_of("vitalik.eth"), "vitalik.eth");
        let long = "é".repeat(KEY_CHARS + 10);
        assert_eq!(key_of(&long).chars().count(), KEY_CHARS);
        assert_eq!(key_of(&long).len(), 2 * KEY_CHARS);
        assert!(KEY_SQL.contains(&format!(", {KEY_CHARS})")));
    }

    #[test]
    fn keys_keep_byte_order() {
        let mut names = [
            "a".repeat(KEY_CHARS + 1),
            "a".repeat(KEY_CHARS),
            format!("{}b", "a".repeat(KEY_CHARS)),
            "b".to_owned(),
            "a".to_owned(),
            format!("{}🚀", "a".repeat(KEY_CHARS - 1)),
        ];
        names.sort();
        for pair in names.windows(2) {
            assert!(key_of(&pair[0]) <= key_of(&pair[1]), "{pair:?}");
        }
    }
}
