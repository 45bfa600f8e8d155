-- The Ensemble schema on PostgreSQL. Hashes, addresses and keys are bytea; the text columns
-- that listings order or compare compare bytewise (COLLATE "C").

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The namegraph: one row per domain of every indexed chain. `id` is the domain key (chain,
-- registry, node); `seq` numbers domains by chain and creation and names them everywhere else.
CREATE TABLE domains (
    id bytea NOT NULL PRIMARY KEY,
    chain_id bigint NOT NULL,
    label_hash bytea NOT NULL,
    owner bytea,
    registry_owner bytea,
    resolver bytea,
    ttl bigint,
    name text COLLATE "C" NOT NULL,
    depth integer NOT NULL,
    migrated boolean NOT NULL DEFAULT false,
    registration_count integer NOT NULL,
    created_block bigint NOT NULL,
    created_at bigint NOT NULL,
    registration_start bigint NOT NULL DEFAULT 9223372036854775807,
    registration_expiry bigint NOT NULL DEFAULT 9223372036854775807,
    seq bigint NOT NULL,
    parent_seq bigint,
    link bigint DEFAULT 0,
    token_owner bytea,
    wrapped_owner bytea
);
CREATE INDEX domains_label_hash ON domains (label_hash);
CREATE UNIQUE INDEX domains_seq ON domains (seq);
CREATE INDEX domains_node ON domains (substr(id, 25));
-- The listing indexes: every order, globally, by owner and by parent, each ending in `seq`.
-- A B-tree entry must fit in a third of a page and a name may be longer: the name indexes hold
-- the name's first 256 characters, a prefix, which orders as the name does.
CREATE INDEX domains_name_seq ON domains (substr(name, 1, 256), seq);
CREATE INDEX domains_depth_seq ON domains (depth, seq);
CREATE INDEX domains_start_seq ON domains (registration_start, seq);
CREATE INDEX domains_expiry_seq ON domains (registration_expiry, seq);
CREATE INDEX domains_owner_name_seq ON domains (owner, substr(name, 1, 256), seq);
CREATE INDEX domains_owner_depth_seq ON domains (owner, depth, seq);
CREATE INDEX domains_owner_start_seq ON domains (owner, registration_start, seq);
CREATE INDEX domains_owner_expiry_seq ON domains (owner, registration_expiry, seq);
CREATE INDEX domains_parent_name_seq ON domains (parent_seq, substr(name, 1, 256), seq);
CREATE INDEX domains_parent_depth_seq ON domains (parent_seq, depth, seq);
CREATE INDEX domains_parent_start_seq ON domains (parent_seq, registration_start, seq);
CREATE INDEX domains_parent_expiry_seq ON domains (parent_seq, registration_expiry, seq);
-- Name search.
CREATE INDEX domains_name_trgm ON domains USING gin (name gin_trgm_ops);

CREATE TABLE labels (
    label_hash bytea NOT NULL PRIMARY KEY,
    label text,
    normalized boolean NOT NULL
);

-- Labels learned, in order, until every chain has renamed its names with them.
CREATE TABLE label_heals (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    label_hash bytea NOT NULL,
    origin_chain bigint NOT NULL
);
CREATE TABLE label_heal_marks (
    chain_id bigint PRIMARY KEY,
    applied bigint NOT NULL
);

CREATE TABLE registrations (
    id bytea NOT NULL PRIMARY KEY,
    kind text NOT NULL,
    registrar_chain_id bigint NOT NULL,
    registrar text COLLATE "C" NOT NULL,
    registrant text COLLATE "C",
    start bigint NOT NULL,
    expiry bigint,
    grace_period bigint NOT NULL,
    base_cost text,
    premium text,
    referrer text,
    fuses bigint,
    wrapped boolean NOT NULL DEFAULT false,
    renewal_count integer NOT NULL,
    block_number bigint NOT NULL
);
CREATE TABLE renewals (
    id bytea NOT NULL PRIMARY KEY,
    duration bigint NOT NULL,
    expiry bigint NOT NULL,
    base_cost text,
    premium text,
    referrer text,
    block_number bigint NOT NULL,
    "timestamp" bigint NOT NULL
);

-- Resolver records: one row per (resolver, node), its addresses and texts beside it.
CREATE TABLE resolver_records (
    id bytea NOT NULL PRIMARY KEY,
    name text,
    contenthash text,
    pubkey_x text,
    pubkey_y text,
    version bigint NOT NULL
);
CREATE TABLE resolver_addresses (
    record_id bytea NOT NULL,
    coin_type bigint NOT NULL,
    address text COLLATE "C" NOT NULL,
    PRIMARY KEY (record_id, coin_type)
);
CREATE INDEX resolver_addresses_address ON resolver_addresses (address, record_id, coin_type);
CREATE TABLE resolver_texts (
    record_id bytea NOT NULL,
    key_hash bytea NOT NULL,
    key text NOT NULL,
    value text,
    PRIMARY KEY (record_id, key_hash)
);

-- The event history: logs packed by contract code and selector, their blocks and transactions.
CREATE TABLE events (
    chain_id bigint NOT NULL,
    block_number bigint NOT NULL,
    log_index integer NOT NULL,
    seq integer NOT NULL,
    "timestamp" bigint NOT NULL,
    tx_index integer NOT NULL,
    selector smallint NOT NULL,
    topics bytea NOT NULL,
    data bytea NOT NULL,
    domain_seq bigint,
    contract integer NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index, seq)
);
CREATE INDEX events_domain ON events (domain_seq, "timestamp", chain_id, block_number, log_index, seq) WHERE domain_seq IS NOT NULL;
CREATE INDEX events_address ON events (chain_id, contract, "timestamp", block_number, log_index, seq) WHERE domain_seq IS NULL;
CREATE TABLE event_blocks (
    chain_id bigint NOT NULL,
    block_number bigint NOT NULL,
    hash bytea NOT NULL,
    PRIMARY KEY (chain_id, block_number)
);
CREATE TABLE event_transactions (
    chain_id bigint NOT NULL,
    block_number bigint NOT NULL,
    tx_index integer NOT NULL,
    hash bytea NOT NULL,
    to_address bytea,
    tx_from bytea NOT NULL,
    "timestamp" bigint NOT NULL,
    PRIMARY KEY (chain_id, block_number, tx_index)
);
CREATE INDEX event_transactions_from ON event_transactions (tx_from, "timestamp", chain_id, block_number, tx_index);
CREATE TABLE contracts (
    chain_id bigint NOT NULL,
    code integer NOT NULL,
    address bytea NOT NULL,
    PRIMARY KEY (chain_id, code)
);
CREATE UNIQUE INDEX contracts_address ON contracts (chain_id, address);

-- The namespace: bridges between chains and reverse registrars per coin type.
CREATE TABLE namegraph_bridges (
    target_chain bigint PRIMARY KEY,
    origin_domain bytea NOT NULL,
    resolver bytea NOT NULL,
    target_domain bytea NOT NULL
);
CREATE TABLE reverse_registrars (
    coin_type bigint PRIMARY KEY,
    chain_id bigint NOT NULL,
    address bytea NOT NULL
);

-- Indexing state: checkpoints (written with the rows), status, the reorg journal, the RPC cache
-- and the query indexes set aside during a first backfill.
CREATE TABLE checkpoints (
    chain_id bigint NOT NULL PRIMARY KEY,
    block_number bigint NOT NULL,
    block_hash text NOT NULL,
    updated_at bigint NOT NULL
);
CREATE TABLE chain_status (
    chain_id bigint NOT NULL PRIMARY KEY,
    name text NOT NULL,
    phase text NOT NULL,
    head_block bigint NOT NULL,
    indexed_block bigint NOT NULL,
    events_per_second double precision NOT NULL,
    eta_seconds bigint,
    restarts bigint NOT NULL,
    error text,
    updated_at bigint NOT NULL,
    applied_block bigint NOT NULL
);
CREATE TABLE journal_windows (
    chain_id bigint NOT NULL,
    window_start bigint NOT NULL,
    window_end bigint NOT NULL,
    end_hash text NOT NULL,
    start_parent_hash text NOT NULL,
    PRIMARY KEY (chain_id, window_start)
);
CREATE TABLE journal_entries (
    chain_id bigint NOT NULL,
    window_start bigint NOT NULL,
    table_name text NOT NULL,
    row_key text NOT NULL,
    prior text,
    PRIMARY KEY (chain_id, window_start, table_name, row_key)
);
CREATE TABLE rpc_cache (
    key text NOT NULL PRIMARY KEY,
    chain_id bigint NOT NULL,
    value text NOT NULL
);
CREATE TABLE deferred_indexes (
    name text NOT NULL PRIMARY KEY,
    definition text NOT NULL
);
