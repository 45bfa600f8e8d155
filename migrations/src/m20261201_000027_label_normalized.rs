//! Replaces `labels.interpreted` with `labels.normalized`: whether the label is known and
//! ENSIP-15 normalized. The rendering is the label itself then and `[labelhash]` otherwise,
//! so the flag says everything the text did (`entities::label::Model::interpreted`).
//!
//! Why: every row repeated its label, or for an unknown label spelled its own hash out in 66
//! characters: 5.8 bytes per event at 5M events on SQLite, for text the row already holds.
//!
//! Conversion: both engines copy the rows into a new table that takes the old name (see
//! migration 24); a label was normalized exactly when it rendered as itself.

use sea_orm_migration::prelude::*;

/// Stores whether each label is normalized instead of its rendering.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE_UP: &[&str] = &[
    "CREATE TABLE labels_flagged (label_hash blob NOT NULL PRIMARY KEY, label text NULL, \
     normalized boolean NOT NULL) WITHOUT ROWID",
    "INSERT INTO labels_flagged (label_hash, label, normalized) \
     SELECT label_hash, label, label IS NOT NULL AND interpreted = label FROM labels",
    "DROP TABLE labels",
    "ALTER TABLE labels_flagged RENAME TO labels",
];

const POSTGRES_UP: &[&str] = &[
    "CREATE TABLE labels_flagged (label_hash bytea NOT NULL, label text NULL, \
     normalized boolean NOT NULL)",
    "INSERT INTO labels_flagged (label_hash, label, normalized) \
     SELECT label_hash, label, label IS NOT NULL AND interpreted = label FROM labels",
    "DROP TABLE labels",
    "ALTER TABLE labels_flagged RENAME TO labels",
    "ALTER TABLE labels ADD CONSTRAINT labels_pkey PRIMARY KEY (label_hash)",
];

crate::one_batch::per_backend_migration!(SQLITE_UP, POSTGRES_UP, irreversible: "label renderings are not stored back");
