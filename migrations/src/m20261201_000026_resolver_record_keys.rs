//! Keys resolver records by 56 raw bytes, the chain id, the resolver and the node, instead of
//! the 110-character `${chainId}-${resolver}-${node}` text: `resolver_records.id` and the
//! `record_id` of `resolver_addresses` and `resolver_texts`. Drops the `chain_id`, `resolver`
//! and `node` columns of `resolver_records`, which repeated the key's three parts, and the
//! `resolver_records_node` index, which no query reads. A text record's `key_hash` becomes its
//! 32 raw bytes. On SQLite `resolver_records` is `WITHOUT ROWID`, clustered on its key.
//!
//! Why: a record set stored its identity four times (the text id, the three columns, on SQLite
//! the id again in the primary key's own index, and the node in its index), and each address
//! and text record repeated the text id in its key (and the address lookup index repeats that
//! key again). At 5M events these tables and indexes took 70 bytes per event on SQLite, the
//! most after the event history and the domains.
//!
//! Conversion: all three tables are copied into new tables that take the old names (see
//! migration 24). `resolver_records` builds its key from its three columns; the others parse
//! the text id, `${chainId}-0x${resolver}-0x${node}`. The address lookup index is rebuilt when
//! it existed; when a first backfill had set it aside, its recorded definition still applies
//! and it is built with the other query indexes. The node index is forgotten either way.

use sea_orm_migration::{prelude::*, sea_orm::DatabaseBackend};

/// Converts the resolver record ids to keys.
#[derive(DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE_UP: &[&str] = &[
    "CREATE TABLE resolver_records_keyed (id blob NOT NULL PRIMARY KEY, name text NULL, \
     contenthash text NULL, pubkey_x text NULL, pubkey_y text NULL, \
     version integer NOT NULL) WITHOUT ROWID",
    // `||` of blobs would make text: the key is assembled in hex and converted once.
    "INSERT INTO resolver_records_keyed (id, name, contenthash, pubkey_x, pubkey_y, version) \
     SELECT unhex(printf('%08x', chain_id) || substr(resolver, 3) || substr(node, 3)), name, \
     contenthash, pubkey_x, pubkey_y, version FROM resolver_records",
    "DROP TABLE resolver_records",
    "ALTER TABLE resolver_records_keyed RENAME TO resolver_records",
    "CREATE TABLE resolver_addresses_keyed (record_id blob NOT NULL, coin_type integer NOT NULL, \
     address text NOT NULL, PRIMARY KEY (record_id, coin_type)) WITHOUT ROWID",
    // `c` is where the chain id ends; the resolver's hex starts 3 characters later (`-0x`),
    // the node's 46 (40 hex digits, `-0x`).
    "INSERT INTO resolver_addresses_keyed (record_id, coin_type, address) \
     SELECT unhex(printf('%08x', CAST(substr(r, 1, c - 1) AS INTEGER)) || substr(r, c + 3, 40) \
     || substr(r, c + 46, 64)), coin_type, address \
     FROM (SELECT *, record_id AS r, instr(record_id, '-') AS c FROM resolver_addresses)",
    "DROP TABLE resolver_addresses",
    "ALTER TABLE resolver_addresses_keyed RENAME TO resolver_addresses",
    "CREATE TABLE resolver_texts_keyed (record_id blob NOT NULL, key_hash blob NOT NULL, \
     key text NOT NULL, value text NULL, PRIMARY KEY (record_id, key_hash)) WITHOUT ROWID",
    "INSERT INTO resolver_texts_keyed (record_id, key_hash, key, value) \
     SELECT unhex(printf('%08x', CAST(substr(r, 1, c - 1) AS INTEGER)) || substr(r, c + 3, 40) \
     || substr(r, c + 46, 64)), unhex(substr(key_hash, 3)), key, value \
     FROM (SELECT *, record_id AS r, instr(record_id, '-') AS c FROM resolver_texts)",
    "DROP TABLE resolver_texts",
    "ALTER TABLE resolver_texts_keyed RENAME TO resolver_texts",
    "DELETE FROM deferred_indexes WHERE name = 'resolver_records_node'",
];

const POSTGRES_UP: &[&str] = &[
    "CREATE TABLE resolver_records_keyed (id bytea NOT NULL, name text NULL, \
     contenthash text NULL, pubkey_x text NULL, pubkey_y text NULL, version bigint NOT NULL)",
    // The chain id's low 4 bytes, big-endian: chain ids fit 32 bits (checked at startup).
    "INSERT INTO resolver_records_keyed (id, name, contenthash, pubkey_x, pubkey_y, version) \
     SELECT substring(int8send(chain_id) from 5 for 4) || decode(substr(resolver, 3), 'hex') \
     || decode(substr(node, 3), 'hex'), name, contenthash, pubkey_x, pubkey_y, version \
     FROM resolver_records",
    "DROP TABLE resolver_records",
    "ALTER TABLE resolver_records_keyed RENAME TO resolver_records",
    "ALTER TABLE resolver_records ADD CONSTRAINT resolver_records_pkey PRIMARY KEY (id)",
    "CREATE TABLE resolver_addresses_keyed (record_id bytea NOT NULL, coin_type bigint NOT NULL, \
     address text COLLATE \"C\" NOT NULL)",
    "INSERT INTO resolver_addresses_keyed (record_id, coin_type, address) \
     SELECT substring(int8send(split_part(record_id, '-', 1)::bigint) from 5 for 4) \
     || decode(substr(split_part(record_id, '-', 2), 3), 'hex') \
     || decode(substr(split_part(record_id, '-', 3), 3), 'hex'), coin_type, address \
     FROM resolver_addresses",
    "DROP TABLE resolver_addresses",
    "ALTER TABLE resolver_addresses_keyed RENAME TO resolver_addresses",
    "ALTER TABLE resolver_addresses ADD CONSTRAINT resolver_addresses_pkey \
     PRIMARY KEY (record_id, coin_type)",
    "CREATE TABLE resolver_texts_keyed (record_id bytea NOT NULL, key_hash bytea NOT NULL, \
     key text NOT NULL, value text NULL)",
    "INSERT INTO resolver_texts_keyed (record_id, key_hash, key, value) \
     SELECT substring(int8send(split_part(record_id, '-', 1)::bigint) from 5 for 4) \
     || decode(substr(split_part(record_id, '-', 2), 3), 'hex') \
     || decode(substr(split_part(record_id, '-', 3), 3), 'hex'), \
     decode(substr(key_hash, 3), 'hex'), key, value FROM resolver_texts",
    "DROP TABLE resolver_texts",
    "ALTER TABLE resolver_texts_keyed RENAME TO resolver_texts",
    "ALTER TABLE resolver_texts ADD CONSTRAINT resolver_texts_pkey \
     PRIMARY KEY (record_id, key_hash)",
    "DELETE FROM deferred_indexes WHERE name = 'resolver_records_node'",
];

/// The address lookup index, as migration 5 (and 22 on SQLite) defined it.
const ADDRESS_INDEX: &str = "CREATE INDEX resolver_addresses_address ON resolver_addresses \
                             (address, record_id, coin_type)";

// The trait is declared with an elided `SchemaManager` lifetime; see the first migration.
#[allow(elided_lifetimes_in_paths)]
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements = match manager.get_database_backend() {
            DatabaseBackend::Postgres => POSTGRES_UP,
            _ => SQLITE_UP,
        };
        let indexed = manager.has_index("resolver_addresses", "resolver_addresses_address").await?;
        let mut batch: Vec<&str> = statements.to_vec();
        if indexed {
            batch.push(ADDRESS_INDEX);
        }
        crate::one_batch::run(manager, &batch).await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(crate::one_batch::irreversible(
            "resolver record keys are not converted back to text ids",
        ))
    }
}
