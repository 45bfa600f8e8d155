//! Ordering support for domain listings: materialized registration start and expiry, indexes
//! for every order within each filter (keyset pagination on `(order column, id)`), and
//! byte-order collation of names on PostgreSQL so both engines sort names identically and
//! prefix `LIKE` can use the index.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Adds the ordering columns and indexes.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

#[derive(DeriveIden)]
enum Domains {
    Table,
    RegistrationStart,
    RegistrationExpiry,
}

/// `i64::MAX`: "no registration" / "never expires" sorts after every real time.
const NONE: i64 = i64::MAX;

/// (index name, columns).
const INDEXES: [(&str, &[&str]); 12] = [
    ("domains_name_id", &["name", "id"]),
    ("domains_depth_id", &["depth", "id"]),
    ("domains_start_id", &["registration_start", "id"]),
    ("domains_expiry_id", &["registration_expiry", "id"]),
    ("domains_parent_name_id", &["parent_id", "name", "id"]),
    ("domains_parent_depth_id", &["parent_id", "depth", "id"]),
    ("domains_parent_start_id", &["parent_id", "registration_start", "id"]),
    ("domains_parent_expiry_id", &["parent_id", "registration_expiry", "id"]),
    ("domains_owner_name_id", &["owner", "name", "id"]),
    ("domains_owner_depth_id", &["owner", "depth", "id"]),
    ("domains_owner_start_id", &["owner", "registration_start", "id"]),
    ("domains_owner_expiry_id", &["owner", "registration_expiry", "id"]),
];

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // One column per statement: SQLite adds one column per ALTER TABLE.
        for column in [Domains::RegistrationStart, Domains::RegistrationExpiry] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Domains::Table)
                        .add_column(ColumnDef::new(column).big_integer().not_null().default(NONE))
                        .to_owned(),
                )
                .await?;
        }
        let db = manager.get_connection();
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared(r#"ALTER TABLE domains ALTER COLUMN name TYPE text COLLATE "C""#)
                .await?;
        }
        // Existing rows: copy start and expiry from their latest registration.
        db.execute_unprepared(
            "UPDATE domains SET \
               registration_start = COALESCE((SELECT r.start FROM registrations r WHERE r.id = domains.registration_id), 9223372036854775807), \
               registration_expiry = COALESCE((SELECT r.expiry FROM registrations r WHERE r.id = domains.registration_id), 9223372036854775807) \
             WHERE registration_id IS NOT NULL",
        )
        .await?;
        for (name, cols) in INDEXES {
            let mut index = Index::create();
            index.name(name).table(Domains::Table);
            for col in cols {
                index.col(Alias::new(*col));
            }
            manager.create_index(index.to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, _) in INDEXES {
            manager.drop_index(Index::drop().name(name).table(Domains::Table).to_owned()).await?;
        }
        for column in [Domains::RegistrationStart, Domains::RegistrationExpiry] {
            manager
                .alter_table(Table::alter().table(Domains::Table).drop_column(column).to_owned())
                .await?;
        }
        Ok(())
    }
}
