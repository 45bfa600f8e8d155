//! [`write_status`]: each chain's status row (`chain_status`), which its supervisor refreshes
//! every second and after every operator command, and which `/status`, `/ready` and GraphQL's
//! `indexingStatus` read in every process.

use entities::chain_status;
use sea_orm::{DatabaseConnection, EntityTrait, IntoActiveModel, sea_query::OnConflict};

use super::StoreError;
use crate::ChainId;

/// Inserts or replaces the status row of `row.chain_id`.
pub async fn write_status(
    db: &DatabaseConnection,
    row: chain_status::Model,
) -> Result<(), StoreError> {
    let columns = [
        chain_status::Column::Name,
        chain_status::Column::Phase,
        chain_status::Column::HeadBlock,
        chain_status::Column::IndexedBlock,
        chain_status::Column::AppliedBlock,
        chain_status::Column::EventsPerSecond,
        chain_status::Column::EtaSeconds,
        chain_status::Column::Restarts,
        chain_status::Column::Error,
        chain_status::Column::UpdatedAt,
    ];
    chain_status::Entity::insert(row.into_active_model())
        .on_conflict(
            OnConflict::column(chain_status::Column::ChainId).update_columns(columns).to_owned(),
        )
        .exec_without_returning(db)
        .await
        .map_err(StoreError::db("write status"))?;
    Ok(())
}

/// The status row of `chain_id`, if its indexer ever wrote one.
pub async fn read_status(
    db: &DatabaseConnection,
    chain_id: ChainId,
) -> Result<Option<chain_status::Model>, StoreError> {
    chain_status::Entity::find_by_id(chain_id.column())
        .one(db)
        .await
        .map_err(StoreError::db("read status"))
}
