//! Stores `labels.label_hash` as its 32 raw bytes instead of `0x` hex text, and on SQLite
//! makes `labels` a `WITHOUT ROWID` table clustered on that hash.
//!
//! Why: every domain has a `labels` row (known or not), so at mainnet scale the table is as
//! long as `domains`. Its key was 66 characters, stored twice on SQLite: in the rowid table and
//! again in the primary key's index (`sqlite_autoindex_labels_1`). At 5M events the two took 35
//! bytes per event. Clustered on the raw hash, the table is one B-tree holding the key once,
//! and an insert touches one random page instead of a page of each tree.
//!
//! Conversion: PostgreSQL changes the column's type with `decode`; SQLite copies the rows into
//! a new table (a table cannot gain or lose its rowid in place) and renames it.

use sea_orm_migration::prelude::*;

/// Converts the label hashes to bytes.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE_UP: &[&str] = &[
    "CREATE TABLE labels_raw (label_hash blob NOT NULL PRIMARY KEY, label text NULL, \
     interpreted text NOT NULL) WITHOUT ROWID",
    "INSERT INTO labels_raw (label_hash, label, interpreted) \
     SELECT unhex(substr(label_hash, 3)), label, interpreted FROM labels",
    "DROP TABLE labels",
    "ALTER TABLE labels_raw RENAME TO labels",
];

const POSTGRES_UP: &[&str] = &["ALTER TABLE labels ALTER COLUMN label_hash TYPE bytea \
                                USING decode(substr(label_hash, 3), 'hex')"];

crate::one_batch::per_backend_migration!(SQLITE_UP, POSTGRES_UP, irreversible: "label hashes are not converted back to hex text");
