//! sea-orm entities of the Ensemble database, one table per file.
//!
//! Conventions shared by every table:
//! - addresses, nodes and hashes are lowercase `0x`-prefixed hex text, so both SQLite and
//!   PostgreSQL compare and index them the same way and GraphQL can hand them out unchanged;
//!   the event history (`events`, `event_blocks`, `event_transactions`), one row per event,
//!   stores them as raw bytes instead, which halves the largest table; ids are raw keys
//!   wherever they are stored (a domain's 56-byte [`domain_key::DomainKey`], a resolver
//!   record set's [`resolver_record_key::ResolverRecordKey`], registrations and renewals by
//!   [`indexed_key!`]), and the domain row's label hash and addresses and a text record's key
//!   hash are raw too ([`raw_hex`]);
//! - `uint256` amounts (costs, premiums) are decimal text, because neither engine has a
//!   portable 256-bit integer;
//! - timestamps and expiries are seconds since the epoch in `i64`; contract values beyond
//!   `i64::MAX` (a NameWrapper "never expires") are clamped to `i64::MAX`.
//!
//! The entities carry no I/O and no GraphQL derives: `graphql/` wraps them in its own types.

pub mod chain_status;
pub mod checkpoint;
pub mod contract;
pub mod contract_node_key;
pub mod deferred_index;
pub mod domain;
pub mod domain_key;
pub mod event;
pub mod event_block;
pub mod event_selector;
pub mod event_transaction;
pub mod indexed_key;
pub mod inline_bytes;
pub mod journal_entry;
pub mod journal_window;
pub mod label;
pub mod label_heal;
pub mod label_heal_mark;
pub mod namegraph_bridge;
pub mod packed_words;
pub mod raw_hex;
pub mod registration;
pub mod registration_key;
pub mod renewal;
pub mod renewal_key;
pub mod resolver_address;
pub mod resolver_record;
pub mod resolver_record_key;
pub mod resolver_text;
pub mod reverse_registrar;
pub mod rpc_cache;
pub mod search_text;
pub mod text_form;
