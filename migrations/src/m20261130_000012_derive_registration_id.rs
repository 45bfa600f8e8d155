//! Drops `domains.registration_id`. A domain's latest registration is always its last one,
//! `${domainId}-${registration_count - 1}` (registrations are only ever appended), so the
//! column repeated what `registration_count` already says, in 115 characters on every domain
//! row: about a fifth of the row. `entities::domain::Model::registration_id` derives it.
//!
//! Both engines drop a column in place (SQLite rewrites the table; no index holds it).

use sea_orm_migration::prelude::*;

/// Drops `domains.registration_id`.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE domains DROP COLUMN registration_id")
            .await?;
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        // Migration 11 cannot be undone either: below it, ids are text again.
        Err(DbErr::Migration(
            "domains.registration_id is derived now and is not restored; restore a backup \
             taken before this migration instead"
                .to_owned(),
        ))
    }
}
