//! [`read`] and [`write()`]: answers of `eth_call`s the decoder had to make (a legacy
//! `TextChanged` carries no value), cached by a key that names the chain, the contract, the
//! block *hash* and the call, so a re-index or a restart does not ask the node again and a
//! reorganized block is never answered from another block's call.

use entities::rpc_cache;
use sea_orm::{DatabaseConnection, EntityTrait, sea_query::OnConflict};

use super::StoreError;
use crate::ChainId;

/// The cached answer under `key`, as it was stored (JSON).
pub async fn read(db: &DatabaseConnection, key: &str) -> Result<Option<String>, StoreError> {
    Ok(rpc_cache::Entity::find_by_id(key.to_owned())
        .one(db)
        .await
        .map_err(StoreError::db("read rpc cache"))?
        .map(|row| row.value))
}

/// Stores `value` (JSON) under `key` for `chain_id`; a key already stored keeps its value
/// (the same call at the same block has one answer).
pub async fn write(
    db: &DatabaseConnection,
    chain_id: ChainId,
    key: String,
    value: String,
) -> Result<(), StoreError> {
    let row = rpc_cache::ActiveModel {
        key: sea_orm::Set(key),
        chain_id: sea_orm::Set(chain_id.column()),
        value: sea_orm::Set(value),
    };
    rpc_cache::Entity::insert(row)
        .on_conflict(OnConflict::column(rpc_cache::Column::Key).do_nothing().to_owned())
        .exec_without_returning(db)
        .await
        .map_err(StoreError::db("write rpc cache"))?;
    Ok(())
}
