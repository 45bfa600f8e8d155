//! [`record`]: writes what the API needs to know of the namespace's configuration (its
//! bridges, `namegraph_bridges`, and its reverse registrars, `reverse_registrars`), so a
//! serve-only process answers without the indexers' configuration.

use alloy::ens::namehash;
use entities::{domain::RawAddress, namegraph_bridge, reverse_registrar};
use sea_orm::{
    ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, IntoActiveModel,
    QueryFilter, TransactionTrait, sea_query::OnConflict,
};

use super::StoreError;
use crate::{
    config::{Bridge, ChainConfig, NamegraphRole},
    ens::{name::domain_id, reverse_registrar::evm_coin_type, role::ContractRole},
};

/// The row of `bridge`.
pub fn bridge_row(bridge: &Bridge) -> namegraph_bridge::Model {
    let node = namehash(&bridge.name);
    namegraph_bridge::Model {
        target_chain: bridge.target_chain as i64,
        origin_domain: domain_id(bridge.origin_chain, bridge.origin_registry, node),
        resolver: RawAddress::new(bridge.resolver.0.0),
        target_domain: domain_id(bridge.target_chain, bridge.target_registry, node),
    }
}

/// The reverse registrars of `chains`: the root chain's serves the default coin type, every
/// other chain's its own EVM coin type. Coin type 60 (ETH, ENSIP-3's `addr.reverse`) gets a
/// row naming the root chain and its registry, whatever the root chain's id: mainnet's in the
/// mainnet namespace, the devnet's on a devnet.
pub fn reverse_registrar_rows(chains: &[ChainConfig]) -> Vec<reverse_registrar::Model> {
    let addr_reverse =
        chains.iter().filter(|c| c.namegraph == NamegraphRole::Root).filter_map(|chain| {
            chain.contract(ContractRole::Registry).map(|registry| reverse_registrar::Model {
                coin_type: reverse_registrar::ETH_COIN_TYPE,
                chain_id: chain.id as i64,
                address: RawAddress::new(registry.0.0),
            })
        });
    let registrars = chains.iter().flat_map(|chain| {
        let coin_type = match chain.namegraph {
            NamegraphRole::Root => reverse_registrar::DEFAULT_COIN_TYPE,
            _ => evm_coin_type(chain.id) as i64,
        };
        chain.contracts.iter().filter(|c| c.role == ContractRole::ReverseRegistrar).map(move |c| {
            reverse_registrar::Model {
                coin_type,
                chain_id: chain.id as i64,
                address: RawAddress::new(c.address.0.0),
            }
        })
    });
    addr_reverse.chain(registrars).collect()
}

/// Records `bridges` (exactly these) and the reverse registrars of `chains` (added or
/// updated: a process indexing some chains leaves the others' rows), in one transaction.
pub async fn record(
    db: &DatabaseConnection,
    bridges: &[Bridge],
    chains: &[ChainConfig],
) -> Result<(), StoreError> {
    let err = StoreError::db;
    let txn = db.begin().await.map_err(err("namespace"))?;
    record_bridges(&txn, bridges).await.map_err(err("namespace"))?;
    for row in reverse_registrar_rows(chains) {
        reverse_registrar::Entity::insert(row.into_active_model())
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
    bridges: &[Bridge],
) -> Result<(), sea_orm::DbErr> {
    let targets: Vec<i64> = bridges.iter().map(|b| b.target_chain as i64).collect();
    namegraph_bridge::Entity::delete_many()
        .filter(namegraph_bridge::Column::TargetChain.is_not_in(targets))
        .exec(txn)
        .await?;
    for bridge in bridges {
        namegraph_bridge::Entity::insert(bridge_row(bridge).into_active_model())
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
