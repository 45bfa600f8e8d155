//! Canonicality across chains: `domains.link` and `namegraph_bridges`; where primary names
//! live: `reverse_registrars`.
//!
//! Each domain records, once at creation, what decides whether it is canonical (its *link*:
//! always, never, or one bridge's state, see `ens::canonical`). A bridge's state is not
//! stored: it is whether the origin domain's resolver is the bridge's resolver, read from
//! that one row when a query asks. A bridge that goes up or down therefore rewrites no
//! domain at all, however many names hang below it.
//!
//! Existing rows were all indexed as one chain's namegraph, whose root is canonical: they
//! take the root link 0 (a constant default, so neither engine rewrites the table).
//!
//! `reverse_registrars` maps an ENSIP-11 coin type to the chain and contract whose
//! `NameForAddrChanged` names set primary names for it, so the API finds an account's primary
//! name by primary key.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Adds the link column and the bridges table.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE: [&str; 3] = [
    "ALTER TABLE domains ADD COLUMN link bigint DEFAULT 0",
    "CREATE TABLE namegraph_bridges (target_chain bigint PRIMARY KEY, \
     origin_domain blob NOT NULL, resolver blob NOT NULL, target_domain blob NOT NULL)",
    "CREATE TABLE reverse_registrars (coin_type bigint PRIMARY KEY, chain_id bigint NOT NULL, \
     address blob NOT NULL)",
];

const POSTGRES: [&str; 3] = [
    "ALTER TABLE domains ADD COLUMN link bigint DEFAULT 0",
    "CREATE TABLE namegraph_bridges (target_chain bigint PRIMARY KEY, \
     origin_domain bytea NOT NULL, resolver bytea NOT NULL, target_domain bytea NOT NULL)",
    "CREATE TABLE reverse_registrars (coin_type bigint PRIMARY KEY, chain_id bigint NOT NULL, \
     address bytea NOT NULL)",
];

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let statements = match manager.get_database_backend() {
            DatabaseBackend::Postgres => POSTGRES,
            _ => SQLITE,
        };
        for sql in statements {
            db.execute_unprepared(sql).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP TABLE reverse_registrars").await?;
        db.execute_unprepared("DROP TABLE namegraph_bridges").await?;
        db.execute_unprepared("ALTER TABLE domains DROP COLUMN link").await?;
        Ok(())
    }
}
