//! Schema migrations of the Ensemble database, for SQLite and PostgreSQL alike.
//!
//! Migrations are frozen once released: they never import the `entities` crate, so a later
//! change to an entity cannot silently change what an old migration creates. Every index is
//! created here. On a fresh database the indexer may set the API's query indexes aside for its
//! first backfill and build them once when it catches up (`deferred_indexes`, migration 9);
//! a restart never drops or rebuilds an index that exists.

pub use sea_orm_migration::prelude::*;

mod m20261130_000001_create_tables;
mod m20261130_000002_create_chain_status;
mod m20261130_000003_create_journal;
mod m20261130_000004_domain_ordering;
mod m20261130_000005_address_lookup;
mod m20261130_000006_create_events;
mod m20261130_000007_name_search;
mod m20261130_000008_drop_redundant_indexes;
mod m20261130_000009_deferred_indexes;
mod m20261130_000010_compact_events;
mod m20261130_000011_domain_keys;
mod m20261130_000012_derive_registration_id;
mod m20261130_000013_bytewise_keys;
mod m20261130_000014_raw_domain_columns;
mod m20261130_000015_domain_seq;
mod m20261130_000016_event_domains;
mod m20261201_000017_packed_event_words;
mod m20261201_000018_transaction_senders;
mod m20261201_000019_parent_seq;
mod m20261201_000020_contract_codes;
mod m20261201_000021_raw_label_hashes;
mod m20261201_000022_clustered_resolver_rows;
mod m20261201_000023_name_search_without_positions;
mod m20261201_000024_registration_keys;
mod m20261201_000025_renewal_keys;
mod m20261201_000026_resolver_record_keys;
mod m20261201_000027_label_normalized;
mod m20261201_000028_label_heal_log;
mod m20261202_000029_namegraph_links;
mod m20261202_000030_token_owners;
mod m20261202_000031_applied_block;
mod m20261202_000032_name_keys;
mod one_batch;

/// Applies the migrations in order.
#[derive(Debug)]
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261130_000001_create_tables::Migration),
            Box::new(m20261130_000002_create_chain_status::Migration),
            Box::new(m20261130_000003_create_journal::Migration),
            Box::new(m20261130_000004_domain_ordering::Migration),
            Box::new(m20261130_000005_address_lookup::Migration),
            Box::new(m20261130_000006_create_events::Migration),
            Box::new(m20261130_000007_name_search::Migration),
            Box::new(m20261130_000008_drop_redundant_indexes::Migration),
            Box::new(m20261130_000009_deferred_indexes::Migration),
            Box::new(m20261130_000010_compact_events::Migration),
            Box::new(m20261130_000011_domain_keys::Migration),
            Box::new(m20261130_000012_derive_registration_id::Migration),
            Box::new(m20261130_000013_bytewise_keys::Migration),
            Box::new(m20261130_000014_raw_domain_columns::Migration),
            Box::new(m20261130_000015_domain_seq::Migration),
            Box::new(m20261130_000016_event_domains::Migration),
            Box::new(m20261201_000017_packed_event_words::Migration),
            Box::new(m20261201_000018_transaction_senders::Migration),
            Box::new(m20261201_000019_parent_seq::Migration),
            Box::new(m20261201_000020_contract_codes::Migration),
            Box::new(m20261201_000021_raw_label_hashes::Migration),
            Box::new(m20261201_000022_clustered_resolver_rows::Migration),
            Box::new(m20261201_000023_name_search_without_positions::Migration),
            Box::new(m20261201_000024_registration_keys::Migration),
            Box::new(m20261201_000025_renewal_keys::Migration),
            Box::new(m20261201_000026_resolver_record_keys::Migration),
            Box::new(m20261201_000027_label_normalized::Migration),
            Box::new(m20261201_000028_label_heal_log::Migration),
            Box::new(m20261202_000029_namegraph_links::Migration),
            Box::new(m20261202_000030_token_owners::Migration),
            Box::new(m20261202_000031_applied_block::Migration),
            Box::new(m20261202_000032_name_keys::Migration),
        ]
    }
}
