//! Drops three indexes of the first schema that the ordering indexes of the fourth made
//! redundant: `(parent_id, name)`, `(owner, name)` and `(name)` are each a prefix of
//! `(parent_id, name, id)`, `(owner, name, id)` and `(name, id)`, which serve every query the
//! shorter ones did (the heal cascade's `parent_id` lookups included). Every index costs a
//! B-tree insert per domain written; these bought nothing.

use sea_orm_migration::prelude::*;

/// Drops the redundant domain indexes.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

/// (index name, columns) of the dropped indexes, to recreate them on `down`.
const DROPPED: [(&str, &[&str]); 3] = [
    ("domains_parent", &["parent_id", "name"]),
    ("domains_owner", &["owner", "name"]),
    ("domains_name", &["name"]),
];

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, _) in DROPPED {
            manager
                .drop_index(Index::drop().name(name).table(Alias::new("domains")).to_owned())
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, cols) in DROPPED {
            let mut index = Index::create();
            index.name(name).table(Alias::new("domains"));
            for col in cols {
                index.col(Alias::new(*col));
            }
            manager.create_index(index.to_owned()).await?;
        }
        Ok(())
    }
}
