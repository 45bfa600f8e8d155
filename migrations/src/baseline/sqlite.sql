-- The Ensemble schema on SQLite. Hashes, addresses and keys are stored as raw bytes (BLOB
-- values, whatever a column's declared type) and compare bytewise.

-- The namegraph: one row per domain of every indexed chain. `id` is the domain key (chain,
-- registry, node); `seq` numbers domains by chain and creation and names them everywhere else.
CREATE TABLE domains (
    id text NOT NULL PRIMARY KEY,
    chain_id integer NOT NULL,
    label_hash text NOT NULL,
    owner text NULL,
    registry_owner text NULL,
    resolver text NULL,
    ttl integer NULL,
    name text NOT NULL,
    depth integer NOT NULL,
    migrated boolean NOT NULL DEFAULT FALSE,
    registration_count integer NOT NULL,
    created_block integer NOT NULL,
    created_at integer NOT NULL,
    registration_start integer NOT NULL DEFAULT 9223372036854775807,
    registration_expiry integer NOT NULL DEFAULT 9223372036854775807,
    seq bigint NOT NULL,
    parent_seq bigint,
    link bigint DEFAULT 0,
    token_owner blob,
    wrapped_owner blob
);
CREATE INDEX domains_label_hash ON domains (label_hash);
CREATE UNIQUE INDEX domains_seq ON domains (seq);
CREATE INDEX domains_node ON domains (substr(id, 25));
-- The listing indexes: every order, globally, by owner and by parent, each ending in `seq`.
CREATE INDEX domains_name_seq ON domains (name, seq);
CREATE INDEX domains_depth_seq ON domains (depth, seq);
CREATE INDEX domains_start_seq ON domains (registration_start, seq);
CREATE INDEX domains_expiry_seq ON domains (registration_expiry, seq);
CREATE INDEX domains_owner_name_seq ON domains (owner, name, seq);
CREATE INDEX domains_owner_depth_seq ON domains (owner, depth, seq);
CREATE INDEX domains_owner_start_seq ON domains (owner, registration_start, seq);
CREATE INDEX domains_owner_expiry_seq ON domains (owner, registration_expiry, seq);
CREATE INDEX domains_parent_name_seq ON domains (parent_seq, name, seq);
CREATE INDEX domains_parent_depth_seq ON domains (parent_seq, depth, seq);
CREATE INDEX domains_parent_start_seq ON domains (parent_seq, registration_start, seq);
CREATE INDEX domains_parent_expiry_seq ON domains (parent_seq, registration_expiry, seq);

-- Name search: which names hold each trigram (not where), kept in step by triggers.
CREATE VIRTUAL TABLE domains_name_fts USING fts5(name, content='domains', content_rowid='rowid', tokenize='trigram', detail='none', columnsize=0);
CREATE TRIGGER domains_name_fts_insert AFTER INSERT ON domains BEGIN INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END;
CREATE TRIGGER domains_name_fts_delete AFTER DELETE ON domains BEGIN INSERT INTO domains_name_fts(domains_name_fts, rowid, name) VALUES ('delete', old.rowid, old.name); END;
CREATE TRIGGER domains_name_fts_update AFTER UPDATE OF name ON domains WHEN old.name IS NOT new.name BEGIN INSERT INTO domains_name_fts(domains_name_fts, rowid, name) VALUES ('delete', old.rowid, old.name); INSERT INTO domains_name_fts(rowid, name) VALUES (new.rowid, new.name); END;

CREATE TABLE labels (
    label_hash blob NOT NULL PRIMARY KEY,
    label text NULL,
    normalized boolean NOT NULL
) WITHOUT ROWID;

-- Labels learned, in order, until every chain has renamed its names with them.
CREATE TABLE label_heals (
    seq integer PRIMARY KEY AUTOINCREMENT,
    label_hash blob NOT NULL,
    origin_chain bigint NOT NULL
);
CREATE TABLE label_heal_marks (
    chain_id bigint PRIMARY KEY,
    applied bigint NOT NULL
);

CREATE TABLE registrations (
    id blob NOT NULL PRIMARY KEY,
    kind text NOT NULL,
    registrar_chain_id integer NOT NULL,
    registrar text NOT NULL,
    registrant text NULL,
    start integer NOT NULL,
    expiry integer NULL,
    grace_period integer NOT NULL,
    base_cost text NULL,
    premium text NULL,
    referrer text NULL,
    fuses integer NULL,
    wrapped boolean NOT NULL DEFAULT FALSE,
    renewal_count integer NOT NULL,
    block_number integer NOT NULL
) WITHOUT ROWID;
CREATE TABLE renewals (
    id blob NOT NULL PRIMARY KEY,
    duration integer NOT NULL,
    expiry integer NOT NULL,
    base_cost text NULL,
    premium text NULL,
    referrer text NULL,
    block_number integer NOT NULL,
    timestamp integer NOT NULL
) WITHOUT ROWID;

-- Resolver records: one row per (resolver, node), its addresses and texts beside it.
CREATE TABLE resolver_records (
    id blob NOT NULL PRIMARY KEY,
    name text NULL,
    contenthash text NULL,
    pubkey_x text NULL,
    pubkey_y text NULL,
    version integer NOT NULL
) WITHOUT ROWID;
CREATE TABLE resolver_addresses (
    record_id blob NOT NULL,
    coin_type integer NOT NULL,
    address text NOT NULL,
    PRIMARY KEY (record_id, coin_type)
) WITHOUT ROWID;
CREATE INDEX resolver_addresses_address ON resolver_addresses (address, record_id, coin_type);
CREATE TABLE resolver_texts (
    record_id blob NOT NULL,
    key_hash blob NOT NULL,
    key text NOT NULL,
    value text NULL,
    PRIMARY KEY (record_id, key_hash)
) WITHOUT ROWID;

-- The event history: logs packed by contract code and selector, their blocks and transactions.
CREATE TABLE events (
    chain_id integer NOT NULL,
    block_number integer NOT NULL,
    log_index integer NOT NULL,
    seq integer NOT NULL,
    timestamp integer NOT NULL,
    tx_index integer NOT NULL,
    selector smallint NOT NULL,
    topics blob NOT NULL,
    data blob NOT NULL,
    domain_seq bigint,
    contract integer NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index, seq)
) WITHOUT ROWID;
CREATE INDEX events_domain ON events (domain_seq, timestamp, chain_id, block_number, log_index, seq) WHERE domain_seq IS NOT NULL;
CREATE INDEX events_address ON events (chain_id, contract, timestamp, block_number, log_index, seq) WHERE domain_seq IS NULL;
CREATE TABLE event_blocks (
    chain_id integer NOT NULL,
    block_number integer NOT NULL,
    hash blob NOT NULL,
    PRIMARY KEY (chain_id, block_number)
) WITHOUT ROWID;
CREATE TABLE event_transactions (
    chain_id integer NOT NULL,
    block_number integer NOT NULL,
    tx_index integer NOT NULL,
    hash blob NOT NULL,
    to_address blob,
    tx_from blob NOT NULL,
    timestamp bigint NOT NULL,
    PRIMARY KEY (chain_id, block_number, tx_index)
) WITHOUT ROWID;
CREATE INDEX event_transactions_from ON event_transactions (tx_from, timestamp, chain_id, block_number, tx_index);
CREATE TABLE contracts (
    chain_id integer NOT NULL,
    code integer NOT NULL,
    address blob NOT NULL,
    PRIMARY KEY (chain_id, code)
);
CREATE UNIQUE INDEX contracts_address ON contracts (chain_id, address);

-- The namespace: bridges between chains and reverse registrars per coin type.
CREATE TABLE namegraph_bridges (
    target_chain bigint PRIMARY KEY,
    origin_domain blob NOT NULL,
    resolver blob NOT NULL,
    target_domain blob NOT NULL
);
CREATE TABLE reverse_registrars (
    coin_type bigint PRIMARY KEY,
    chain_id bigint NOT NULL,
    address blob NOT NULL
);

-- Indexing state: checkpoints (written with the rows), status, the reorg journal, the RPC cache
-- and the query indexes set aside during a first backfill.
CREATE TABLE checkpoints (
    chain_id integer NOT NULL PRIMARY KEY,
    block_number integer NOT NULL,
    block_hash text NOT NULL,
    updated_at integer NOT NULL
);
CREATE TABLE chain_status (
    chain_id integer NOT NULL PRIMARY KEY,
    name text NOT NULL,
    phase text NOT NULL,
    head_block integer NOT NULL,
    indexed_block integer NOT NULL,
    events_per_second double NOT NULL,
    eta_seconds integer NULL,
    restarts integer NOT NULL,
    error text NULL,
    updated_at integer NOT NULL,
    applied_block bigint NOT NULL
);
CREATE TABLE journal_windows (
    chain_id integer NOT NULL,
    window_start integer NOT NULL,
    window_end integer NOT NULL,
    end_hash text NOT NULL,
    start_parent_hash text NOT NULL,
    PRIMARY KEY (chain_id, window_start)
);
CREATE TABLE journal_entries (
    chain_id integer NOT NULL,
    window_start integer NOT NULL,
    table_name text NOT NULL,
    row_key text NOT NULL,
    prior text NULL,
    PRIMARY KEY (chain_id, window_start, table_name, row_key)
);
CREATE TABLE rpc_cache (
    key text NOT NULL PRIMARY KEY,
    chain_id integer NOT NULL,
    value text NOT NULL
);
CREATE TABLE deferred_indexes (
    name text NOT NULL PRIMARY KEY,
    definition text NOT NULL
);
