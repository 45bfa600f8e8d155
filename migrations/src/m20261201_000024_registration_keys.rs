//! Keys `registrations` by 60 raw bytes, the domain's key and the index, instead of the
//! 113-character `${domainId}-${index}` text, and drops the `domain_id` and `index` columns
//! and the `registrations_domain` index, which repeated the key's two parts. On SQLite the
//! table is `WITHOUT ROWID`, clustered on that key.
//!
//! Why: each registration stored its domain's identity three times (in the text id, in
//! `domain_id`, and in the index on `(domain_id, index)`), and on SQLite the text id a fourth
//! time, in the primary key's own index. At 5M events the table and its two indexes took 49
//! bytes per event on SQLite and 68 on PostgreSQL. Keyed by (domain, index) bytes, one
//! domain's registrations are one key range in index order, so the primary key serves the
//! listing by domain by itself.
//!
//! Conversion: both engines copy the rows into a new table (SQLite cannot change a table's
//! key or rowid in place; on PostgreSQL a copy leaves no dead rows or dropped columns behind)
//! and rename it. The key is `domain_id` followed by the index as 4 big-endian bytes.

use sea_orm_migration::prelude::*;

/// Converts the registration ids to keys.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE_UP: &[&str] = &[
    "CREATE TABLE registrations_keyed (id blob NOT NULL PRIMARY KEY, kind text NOT NULL, \
     registrar_chain_id integer NOT NULL, registrar text NOT NULL, registrant text NULL, \
     start integer NOT NULL, expiry integer NULL, grace_period integer NOT NULL, \
     base_cost text NULL, premium text NULL, referrer text NULL, fuses integer NULL, \
     wrapped boolean NOT NULL DEFAULT FALSE, renewal_count integer NOT NULL, \
     block_number integer NOT NULL) WITHOUT ROWID",
    // `||` would make text of two blobs; hex and back keeps the key a blob.
    "INSERT INTO registrations_keyed (id, kind, registrar_chain_id, registrar, registrant, \
     start, expiry, grace_period, base_cost, premium, referrer, fuses, wrapped, renewal_count, \
     block_number) \
     SELECT unhex(hex(domain_id) || printf('%08x', \"index\")), kind, registrar_chain_id, \
     registrar, registrant, start, expiry, grace_period, base_cost, premium, referrer, fuses, \
     wrapped, renewal_count, block_number FROM registrations",
    "DROP TABLE registrations",
    "ALTER TABLE registrations_keyed RENAME TO registrations",
];

const POSTGRES_UP: &[&str] = &[
    "CREATE TABLE registrations_keyed (id bytea NOT NULL, kind text NOT NULL, \
     registrar_chain_id bigint NOT NULL, registrar text COLLATE \"C\" NOT NULL, \
     registrant text COLLATE \"C\" NULL, start bigint NOT NULL, expiry bigint NULL, \
     grace_period bigint NOT NULL, base_cost text NULL, premium text NULL, referrer text NULL, \
     fuses bigint NULL, wrapped boolean NOT NULL DEFAULT FALSE, renewal_count integer NOT NULL, \
     block_number bigint NOT NULL)",
    "INSERT INTO registrations_keyed (id, kind, registrar_chain_id, registrar, registrant, \
     start, expiry, grace_period, base_cost, premium, referrer, fuses, wrapped, renewal_count, \
     block_number) \
     SELECT domain_id || int4send(\"index\"), kind, registrar_chain_id, registrar, registrant, \
     start, expiry, grace_period, base_cost, premium, referrer, fuses, wrapped, renewal_count, \
     block_number FROM registrations",
    "DROP TABLE registrations",
    "ALTER TABLE registrations_keyed RENAME TO registrations",
    // Built after the copy: one sorted build instead of a B-tree insert per row.
    "ALTER TABLE registrations ADD CONSTRAINT registrations_pkey PRIMARY KEY (id)",
];

crate::one_batch::per_backend_migration!(SQLITE_UP, POSTGRES_UP, irreversible: "registration keys are not converted back to text ids");
