//! Keys `renewals` by 64 raw bytes, the registration's key (migration 24) and the index,
//! instead of the 115-character `${registrationId}-${index}` text, and drops the
//! `registration_id` and `index` columns and the `renewals_registration` index, which repeated
//! the key's two parts. On SQLite the table is `WITHOUT ROWID`, clustered on that key.
//!
//! Why: as for registrations (migration 24), each renewal stored its registration's text id
//! twice beside its own; at 5M events the table and its two indexes took 13.5 bytes per event
//! on SQLite and 18 on PostgreSQL. One registration's renewals are one key range in index
//! order, so the primary key serves the listing by registration.
//!
//! Conversion: the key is built from the registration's text id,
//! `${chainId}-0x${registry}-0x${node}-${index}`, then the renewal's index: the chain id and
//! both indexes as 4 big-endian bytes, the registry and the node from their hex. Both engines
//! copy the rows into a new table and rename it (see migration 24).

use sea_orm_migration::prelude::*;

/// Converts the renewal ids to keys.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE_UP: &[&str] = &[
    "CREATE TABLE renewals_keyed (id blob NOT NULL PRIMARY KEY, duration integer NOT NULL, \
     expiry integer NOT NULL, base_cost text NULL, premium text NULL, referrer text NULL, \
     block_number integer NOT NULL, timestamp integer NOT NULL) WITHOUT ROWID",
    // `c` is where the chain id ends; the registry's hex starts 3 characters later (`-0x`),
    // the node's 46 (40 hex digits, `-0x`), the registration's index 111 (64 digits, `-`).
    "INSERT INTO renewals_keyed (id, duration, expiry, base_cost, premium, referrer, \
     block_number, timestamp) \
     SELECT unhex(printf('%08x', CAST(substr(r, 1, c - 1) AS INTEGER)) || substr(r, c + 3, 40) \
     || substr(r, c + 46, 64) || printf('%08x', CAST(substr(r, c + 111) AS INTEGER)) \
     || printf('%08x', i)), duration, expiry, base_cost, premium, referrer, block_number, \
     timestamp \
     FROM (SELECT *, registration_id AS r, instr(registration_id, '-') AS c, \"index\" AS i \
     FROM renewals)",
    "DROP TABLE renewals",
    "ALTER TABLE renewals_keyed RENAME TO renewals",
];

const POSTGRES_UP: &[&str] = &[
    "CREATE TABLE renewals_keyed (id bytea NOT NULL, duration bigint NOT NULL, \
     expiry bigint NOT NULL, base_cost text NULL, premium text NULL, referrer text NULL, \
     block_number bigint NOT NULL, timestamp bigint NOT NULL)",
    "INSERT INTO renewals_keyed (id, duration, expiry, base_cost, premium, referrer, \
     block_number, timestamp) \
     SELECT decode(lpad(to_hex(split_part(registration_id, '-', 1)::bigint), 8, '0') \
     || substr(split_part(registration_id, '-', 2), 3) \
     || substr(split_part(registration_id, '-', 3), 3) \
     || lpad(to_hex(split_part(registration_id, '-', 4)::bigint), 8, '0') \
     || lpad(to_hex(\"index\"), 8, '0'), 'hex'), duration, expiry, base_cost, premium, \
     referrer, block_number, timestamp FROM renewals",
    "DROP TABLE renewals",
    "ALTER TABLE renewals_keyed RENAME TO renewals",
    // Built after the copy: one sorted build instead of a B-tree insert per row.
    "ALTER TABLE renewals ADD CONSTRAINT renewals_pkey PRIMARY KEY (id)",
];

crate::one_batch::per_backend_migration!(SQLITE_UP, POSTGRES_UP, irreversible: "renewal keys are not converted back to text ids");
