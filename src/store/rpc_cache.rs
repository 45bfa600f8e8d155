//! [`read_many`] and [`write_many`]: answers of `eth_call`s the decoder had to make (a legacy
//! `TextChanged` carries no value), cached by a key that names the chain, the contract, the
//! block *hash* and the call, so a re-index or a restart does not ask the node again and a
//! reorganized block is never answered from another block's call.

use std::collections::HashMap;

use entities::rpc_cache;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, sea_query::OnConflict};

use super::StoreError;
use crate::ChainId;

/// Keys `keys` may hold per statement: far below both engines' limits on bound values.
const KEYS_PER_STATEMENT: usize = 1000;

/// The cached answers under any of `keys`, as they were stored (JSON), by key.
pub async fn read_many(
    db: &DatabaseConnection,
    keys: &[String],
) -> Result<HashMap<String, String>, StoreError> {
    let mut found = HashMap::new();
    for chunk in keys.chunks(KEYS_PER_STATEMENT) {
        let rows = rpc_cache::Entity::find()
            .filter(rpc_cache::Column::Key.is_in(chunk.iter().cloned()))
            .all(db)
            .await
            .map_err(StoreError::db("read rpc cache"))?;
        found.extend(rows.into_iter().map(|row| (row.key, row.value)));
    }
    Ok(found)
}

/// Stores each `(key, value)` (JSON) for `chain_id`; a key already stored keeps its value
/// (the same call at the same block has one answer).
pub async fn write_many(
    db: &DatabaseConnection,
    chain_id: ChainId,
    rows: Vec<(String, String)>,
) -> Result<(), StoreError> {
    for chunk in rows.chunks(KEYS_PER_STATEMENT) {
        let models = chunk.iter().map(|(key, value)| rpc_cache::ActiveModel {
            key: sea_orm::Set(key.clone()),
            chain_id: sea_orm::Set(chain_id.column()),
            value: sea_orm::Set(value.clone()),
        });
        rpc_cache::Entity::insert_many(models)
            .on_conflict(OnConflict::column(rpc_cache::Column::Key).do_nothing().to_owned())
            .exec_without_returning(db)
            .await
            .map_err(StoreError::db("write rpc cache"))?;
    }
    Ok(())
}
