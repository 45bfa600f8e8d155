//! Schema migrations of the Ensemble database, for SQLite and PostgreSQL alike.
//!
//! The first migration creates the whole schema; each later one changes it in one step.
//! Migrations are frozen once released: they never import the `entities` crate, so a later
//! change to an entity cannot silently change what an old migration creates. Every index is
//! created here. On a fresh database the indexer may set the API's query indexes aside for its
//! first backfill and build them once when it catches up (`deferred_indexes`); a restart never
//! drops or rebuilds an index that exists.

pub use sea_orm_migration::prelude::*;

mod m20261202_000001_baseline;
mod m20261203_000001_owner_indexes;
mod m20261204_000001_name_statistics;
mod m20261205_000001_name_search_by_flush;
mod m20261207_000001_name_search_text;

/// Applies the migrations in order.
#[derive(Debug)]
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261202_000001_baseline::Migration),
            Box::new(m20261203_000001_owner_indexes::Migration),
            Box::new(m20261204_000001_name_statistics::Migration),
            Box::new(m20261205_000001_name_search_by_flush::Migration),
            Box::new(m20261207_000001_name_search_text::Migration),
        ]
    }
}
