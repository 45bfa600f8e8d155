//! The reads that fields computed in Rust need beyond their entity's row: a registration's
//! cost (the latest renewal's, else its own), a resolver's text keys and coin types, and the
//! time of the block the index stands at.

use alloy::primitives::U256;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};

use super::rows::{Cell, Row};

/// `base + premium`, in wei, as decimal text; `None` when neither is known.
fn sum(base: Option<String>, premium: Option<String>) -> Option<String> {
    if base.is_none() && premium.is_none() {
        return None;
    }
    let parse =
        |v: Option<String>| v.and_then(|v| U256::from_str_radix(&v, 10).ok()).unwrap_or_default();
    Some(parse(base).saturating_add(parse(premium)).to_string())
}

/// What the latest registration or renewal of a `Registration` row cost, as the subgraph
/// keeps it: each controller event sets it.
pub async fn latest_cost(db: &DatabaseConnection, row: &Row) -> Result<Option<String>, DbErr> {
    let text = |name: &str| match row.cell(name) {
        Cell::Text(t) => Some(t.clone()),
        _ => None,
    };
    let renewals = match row.cell("renewals") {
        Cell::Int(n) => *n,
        _ => 0,
    };
    let Cell::Blob(key) = row.cell("registration_key") else { return Ok(None) };
    if renewals <= 0 {
        return Ok(sum(text("base_cost"), text("premium")));
    }
    let mut renewal = key.clone();
    renewal.extend_from_slice(&u32::try_from(renewals - 1).unwrap_or(u32::MAX).to_be_bytes());
    let backend = db.get_database_backend();
    let placeholder = if backend == sea_orm::DbBackend::Postgres { "$1" } else { "?" };
    let statement = Statement::from_sql_and_values(
        backend,
        format!("SELECT base_cost, premium FROM renewals WHERE id = {placeholder}"),
        [renewal.into()],
    );
    let Some(found) = db.query_one_raw(statement).await? else { return Ok(None) };
    Ok(sum(found.try_get_by_index(0)?, found.try_get_by_index(1)?))
}

/// The text keys (`texts`) or the coin types of a resolver's records, in order.
pub async fn record_keys(
    db: &DatabaseConnection,
    record: &[u8],
    texts: bool,
) -> Result<Vec<String>, DbErr> {
    let backend = db.get_database_backend();
    let placeholder = if backend == sea_orm::DbBackend::Postgres { "$1" } else { "?" };
    let sql = if texts {
        format!("SELECT key FROM resolver_texts WHERE record_id = {placeholder} ORDER BY key")
    } else {
        format!(
            "SELECT CAST(coin_type AS BIGINT) FROM resolver_addresses WHERE record_id = {placeholder} \
             ORDER BY coin_type"
        )
    };
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(backend, sql, [record.to_vec().into()]))
        .await?;
    rows.iter()
        .map(|r| {
            if texts {
                r.try_get_by_index::<String>(0)
            } else {
                r.try_get_by_index::<i64>(0).map(|n| n.to_string())
            }
        })
        .collect()
}

/// The timestamp of `block`, when the history holds an event of it.
pub async fn block_timestamp(
    db: &DatabaseConnection,
    chain_id: i64,
    block: i64,
) -> Result<Option<i64>, DbErr> {
    let backend = db.get_database_backend();
    let sql = if backend == sea_orm::DbBackend::Postgres {
        "SELECT timestamp FROM events WHERE chain_id = $1 AND block_number = $2 LIMIT 1"
    } else {
        "SELECT timestamp FROM events WHERE chain_id = ? AND block_number = ? LIMIT 1"
    };
    let found = db
        .query_one_raw(Statement::from_sql_and_values(
            backend,
            sql,
            [chain_id.into(), block.into()],
        ))
        .await?;
    found.map(|r| r.try_get_by_index::<i64>(0)).transpose()
}
