//! The holders of a name's tokens: `domains.token_owner` (the registrar's ERC-721) and
//! `domains.wrapped_owner` (the NameWrapper's ERC-1155, while wrapped). With the registry
//! owner they determine a name's owner whatever order their events came in.
//!
//! Existing rows take NULL: they were indexed before the holders were kept, and keep the owner
//! they had until their tokens move (a re-index from the start fills every holder).

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Adds the two holder columns.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let bytes = match manager.get_database_backend() {
            DatabaseBackend::Postgres => "bytea",
            _ => "blob",
        };
        for column in ["token_owner", "wrapped_owner"] {
            db.execute_unprepared(&format!("ALTER TABLE domains ADD COLUMN {column} {bytes}"))
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for column in ["wrapped_owner", "token_owner"] {
            db.execute_unprepared(&format!("ALTER TABLE domains DROP COLUMN {column}")).await?;
        }
        Ok(())
    }
}
