//! [`record`]: writes what the API needs to know of the namespace's configuration (its
//! bridges, `namegraph_bridges`, and its reverse registrars, `reverse_registrars`), so a
//! serve-only process answers without the indexers' configuration. The rows come from
//! `ens::namespace`.

use entities::{namegraph_bridge, reverse_registrar};
use sea_orm::{
    ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, IntoActiveModel,
    QueryFilter, TransactionTrait, sea_query::OnConflict,
};

use super::StoreError;

/// Records the namespace's `bridges` (exactly these) and `reverse_registrars` (added or
/// updated: a process indexing some chains leaves the others' rows), in one transaction.
pub async fn record(
    db: &DatabaseConnection,
    bridges: &[namegraph_bridge::Model],
    reverse_registrars: &[reverse_registrar::Model],
) -> Result<(), StoreError> {
    let err = StoreError::db;
    let txn = db.begin().await.map_err(err("namespace"))?;
    record_bridges(&txn, bridges).await.map_err(err("namespace"))?;
    for row in reverse_registrars {
        reverse_registrar::Entity::insert(row.clone().into_active_model())
            .on_conflict(
                OnConflict::column(reverse_registrar::Column::CoinType)
                    .update_columns([
                        reverse_registrar::Column::ChainId,
                        reverse_registrar::Column::Address,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await
            .map_err(err("namespace"))?;
    }
    txn.commit().await.map_err(err("namespace"))
}

async fn record_bridges(
    txn: &DatabaseTransaction,
    bridges: &[namegraph_bridge::Model],
) -> Result<(), sea_orm::DbErr> {
    let targets: Vec<i64> = bridges.iter().map(|b| b.target_chain).collect();
    namegraph_bridge::Entity::delete_many()
        .filter(namegraph_bridge::Column::TargetChain.is_not_in(targets))
        .exec(txn)
        .await?;
    for bridge in bridges {
        namegraph_bridge::Entity::insert(bridge.clone().into_active_model())
            .on_conflict(
                OnConflict::column(namegraph_bridge::Column::TargetChain)
                    .update_columns([
                        namegraph_bridge::Column::OriginDomain,
                        namegraph_bridge::Column::Resolver,
                        namegraph_bridge::Column::TargetDomain,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}
