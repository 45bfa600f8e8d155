//! [`Config`]: everything the service is told, loaded once at startup.
//!
//! Load order: the built-in defaults (`config/default.toml`, compiled in), then an optional
//! `--config <file>`, then the environment for secrets and deployment values
//! (`DATABASE_URL`, `RPC_URL_<CHAIN_ID>`, `ENSEMBLE_HTTP_LISTEN`). Nothing below `main` reads
//! the environment: `main` hands the variables to [`Config::load`].

use std::{collections::HashMap, net::SocketAddr, path::Path, time::Duration};

use alloy::primitives::Address;
use serde::Deserialize;

use crate::ens::role::ContractRole;

/// The built-in defaults, also the documentation of every key.
pub const DEFAULT_TOML: &str = include_str!("../config/default.toml");

/// Root of the configuration.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Database.
    pub database: DatabaseConfig,
    /// HTTP server (GraphQL, metrics, health).
    pub http: HttpConfig,
    /// Indexer tuning.
    pub indexer: IndexerConfig,
    /// Chains to index.
    #[serde(default)]
    pub chains: Vec<ChainConfig>,
    /// Every bridge of the namespace, taken from all configured chains before
    /// [`Config::retain_chains`] narrows them: a process indexing only the origin chain must
    /// still know which of its names lead to another chain.
    #[serde(skip)]
    pub bridges: Vec<Bridge>,
}

/// `[database]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    /// `sqlite://<file>?mode=rwc` or `postgres://...`; env `DATABASE_URL` wins.
    pub url: String,
}

/// `[http]`.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// Listen address; env `ENSEMBLE_HTTP_LISTEN` wins.
    pub listen: SocketAddr,
    /// Bearer token of the admin API, from env `ENSEMBLE_ADMIN_TOKEN` only (never a file);
    /// without one the admin API is disabled.
    #[serde(skip)]
    pub admin_token: Option<String>,
    /// Whether `/ready` also waits for every chain of this process to finish backfill.
    pub ready_requires_sync: bool,
    /// Seconds a graceful shutdown may take before the process exits anyway.
    pub shutdown_timeout_secs: u64,
    /// Connections one client (IP address) may hold, and requests it may have in flight;
    /// 0 for no cap (behind a proxy that connects on everyone's behalf).
    pub max_connections_per_client: usize,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("listen", &self.listen)
            .field("admin_token", &self.admin_token.as_ref().map(|_| "<redacted>"))
            .field("ready_requires_sync", &self.ready_requires_sync)
            .field("shutdown_timeout_secs", &self.shutdown_timeout_secs)
            .field("max_connections_per_client", &self.max_connections_per_client)
            .finish()
    }
}

/// `[indexer]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexerConfig {
    /// Memory budget of each chain, MiB: the rows written behind, the entity read cache
    /// and, on SQLite, the flush writer's page cache share it (`store::memory_budget`).
    pub cache_mb: u64,
    /// Flush when this many rows are dirty, or when they hold half the budget's share of rows
    /// (and always when caught up with the head).
    pub flush_rows: usize,
    /// Capacity of every actor mailbox on the data path.
    pub mailbox_capacity: usize,
    /// On a fresh database, set the API's query indexes aside until every chain has caught
    /// up, then build them once (`store::query_indexes`).
    pub defer_query_indexes: bool,
}

/// `[[chains]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
    /// EIP-155 chain id.
    pub id: u64,
    /// Human name, for logs.
    pub name: String,
    /// JSON-RPC endpoint; env `RPC_URL_<id>` wins. May carry an API key: it is never logged.
    #[serde(default)]
    pub rpc_url: Option<String>,
    /// First block to index.
    #[serde(default)]
    pub start_block: u64,
    /// Stop after this block (useful for replays and tests); `None` follows the head.
    #[serde(default)]
    pub end_block: Option<u64>,
    /// Blocks behind the head that are indexed (the head itself when 0).
    #[serde(default)]
    pub confirmations: u64,
    /// Blocks below the head after which a block is final. Changes made by newer blocks are
    /// journaled so a reorg can undo them; a reorg deeper than this stops the chain.
    #[serde(default = "default_finality_depth")]
    pub finality_depth: u64,
    /// Largest `eth_getLogs` window, blocks; narrowed automatically when a provider refuses.
    #[serde(default = "default_max_block_range")]
    pub max_block_range: u64,
    /// Head polling interval, milliseconds.
    #[serde(default = "default_poll_interval_ms")]
    pub poll_interval_ms: u64,
    /// Time one RPC request may take before it is abandoned and retried, milliseconds.
    #[serde(default = "default_request_timeout_ms")]
    pub request_timeout_ms: u64,
    /// Concurrent requests to the endpoint (header fetches).
    #[serde(default = "default_max_concurrent_requests")]
    pub max_concurrent_requests: usize,
    /// The name this chain's registrar and controllers manage: `eth` on mainnet, `base.eth`
    /// on Base, `linea.eth` on Linea. A registrar token id is a label under it.
    #[serde(default = "default_managed_name")]
    pub managed_name: String,
    /// How this chain's names join the one canonical namegraph of the namespace.
    #[serde(default)]
    pub namegraph: NamegraphRole,
    /// For `namegraph = "bridged"`: the origin name on another chain whose resolver links
    /// this chain's names under `managed_name` into the namegraph.
    #[serde(default)]
    pub bridge: Option<BridgeConfig>,
    /// Whether resolver events are read from every address on the chain (off on chains where
    /// ENS keeps only a reverse registrar).
    #[serde(default = "default_true")]
    pub index_resolvers: bool,
    /// Contracts with roles.
    pub contracts: Vec<ContractConfig>,
}

fn default_managed_name() -> String {
    "eth".to_owned()
}
fn default_true() -> bool {
    true
}

/// How a chain's names join the canonical namegraph (see `ens::canonical`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NamegraphRole {
    /// Its registry's root is the namegraph's root (Ethereum mainnet; every devnet).
    #[default]
    Root,
    /// Its names under `managed_name` are canonical while the origin name on the origin chain
    /// has the bridge's resolver ([`BridgeConfig`]); nothing else of it is.
    Bridged,
    /// Indexed, never canonical (3DNS's own tree, reverse-registrar-only chains).
    Detached,
}

/// `[chains.bridge]`: where a bridged chain's names hang in the namegraph.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// Chain of the origin name (1 for `base.eth` and `linea.eth`).
    pub origin_chain: u64,
    /// Registry of the origin chain that holds the origin name.
    pub origin_registry: Address,
    /// The L1 resolver that, set on the origin name, links the names: mainnet's
    /// `BasenamesL1Resolver` for `base.eth`.
    pub resolver: Address,
}

/// A bridge of the namespace: the bridged chain's side and the origin's, resolved from config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bridge {
    /// The bridged chain.
    pub target_chain: u64,
    /// Its registry.
    pub target_registry: Address,
    /// The bridged name, managed on the target chain and owned on the origin chain.
    pub name: String,
    /// The origin chain.
    pub origin_chain: u64,
    /// The origin chain's registry.
    pub origin_registry: Address,
    /// The linking resolver.
    pub resolver: Address,
}

/// Shortest admin token accepted: long enough that guessing is hopeless.
pub const MIN_ADMIN_TOKEN_BYTES: usize = 16;

/// Default `eth_getLogs` window: most hosted providers accept 2 000 to 10 000 blocks.
pub const DEFAULT_MAX_BLOCK_RANGE: u64 = 2_000;
fn default_max_block_range() -> u64 {
    DEFAULT_MAX_BLOCK_RANGE
}
/// Default finality depth: Ethereum finalizes after two epochs (64 blocks).
pub const DEFAULT_FINALITY_DEPTH: u64 = 64;
fn default_finality_depth() -> u64 {
    DEFAULT_FINALITY_DEPTH
}
/// Default head polling interval: a fraction of mainnet's 12 s block time.
pub const DEFAULT_POLL_INTERVAL_MS: u64 = 1_000;
fn default_poll_interval_ms() -> u64 {
    DEFAULT_POLL_INTERVAL_MS
}
/// Default request timeout: generous for a large `eth_getLogs`, short of forever.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 30_000;
fn default_request_timeout_ms() -> u64 {
    DEFAULT_REQUEST_TIMEOUT_MS
}
/// Default concurrent requests per endpoint.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 8;
fn default_max_concurrent_requests() -> usize {
    DEFAULT_MAX_CONCURRENT_REQUESTS
}

/// One contract of a chain.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractConfig {
    /// What it is.
    pub role: ContractRole,
    /// Where it is.
    pub address: Address,
    /// Block it was deployed at: its logs are not asked for before it.
    #[serde(default)]
    pub start_block: Option<u64>,
    /// Last block it emitted events we read (a retired controller): not asked for after it.
    #[serde(default)]
    pub end_block: Option<u64>,
}

impl ContractConfig {
    /// A contract with `role` at `address`, live on every block.
    pub fn new(role: ContractRole, address: Address) -> Self {
        Self { role, address, start_block: None, end_block: None }
    }

    /// Whether it may emit logs in `[from, to]`.
    pub fn live_within(&self, from: u64, to: u64) -> bool {
        self.start_block.is_none_or(|start| start <= to)
            && self.end_block.is_none_or(|end| end >= from)
    }
}

impl ChainConfig {
    /// A chain on a local node (a devnet's anvil): every block at once, short polls, the
    /// root of its namegraph until told otherwise.
    pub fn local(id: u64, name: &str, rpc_url: &str, contracts: Vec<ContractConfig>) -> Self {
        Self {
            id,
            name: name.to_owned(),
            rpc_url: Some(rpc_url.to_owned()),
            start_block: 0,
            end_block: None,
            confirmations: 0,
            finality_depth: DEFAULT_FINALITY_DEPTH,
            max_block_range: 50,
            poll_interval_ms: 100,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            managed_name: default_managed_name(),
            namegraph: NamegraphRole::Root,
            bridge: None,
            index_resolvers: true,
            contracts,
        }
    }

    /// Head polling interval.
    pub fn poll_interval(&self) -> Duration {
        Duration::from_millis(self.poll_interval_ms)
    }

    /// RPC request timeout.
    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }

    /// The address of the (single) contract with `role`, if any.
    pub fn contract(&self, role: ContractRole) -> Option<Address> {
        self.contracts.iter().find(|c| c.role == role).map(|c| c.address)
    }
}

/// Why a configuration cannot be used. Every message says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// TOML syntax or an unknown/mistyped key.
    #[error("invalid config {origin}: {message} (see config/default.toml for every key)")]
    Parse {
        /// Which layer.
        origin: String,
        /// What the parser said.
        message: String,
    },
    /// A semantic problem.
    #[error("invalid config: {0}")]
    Invalid(String),
}

fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(key, v);
            }
        }
    }
}

fn parse_table(text: &str, origin: &str) -> Result<toml::Table, ConfigError> {
    text.parse::<toml::Table>()
        .map_err(|e| ConfigError::Parse { origin: origin.to_owned(), message: e.to_string() })
}

impl Config {
    /// Loads the defaults, then `file`, then `env` overrides, and validates the result.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        let mut table = parse_table(DEFAULT_TOML, "defaults")?;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .map_err(|source| ConfigError::Read { path: path.display().to_string(), source })?;
            merge(&mut table, parse_table(&text, &path.display().to_string())?);
        }
        let mut config: Self =
            toml::Value::Table(table).try_into().map_err(|e: toml::de::Error| {
                ConfigError::Parse {
                    origin: file.map_or("defaults".into(), |p| p.display().to_string()),
                    message: e.to_string(),
                }
            })?;
        config.apply_env(env.into_iter().collect())?;
        config.register_secrets();
        config.validate()?;
        config.bridges = Self::bridges_of(&config.chains);
        Ok(config)
    }

    /// Makes the secrets of this configuration unprintable ([`crate::redaction`]): every
    /// RPC URL's credentials, the database password and the admin token.
    fn register_secrets(&self) {
        for url in self.chains.iter().filter_map(|c| c.rpc_url.as_deref()) {
            crate::redaction::register_url(url);
        }
        crate::redaction::register_password(&self.database.url);
        if let Some(token) = &self.http.admin_token {
            crate::redaction::register_secret(token);
        }
    }

    /// This configuration with `chains` instead of its own (and their bridges), checked.
    pub fn with_chains(mut self, chains: Vec<ChainConfig>) -> Result<Self, ConfigError> {
        self.chains = chains;
        self.register_secrets();
        self.validate()?;
        self.bridges = Self::bridges_of(&self.chains);
        Ok(self)
    }

    fn bridges_of(chains: &[ChainConfig]) -> Vec<Bridge> {
        chains
            .iter()
            .filter_map(|chain| {
                let bridge = chain.bridge.as_ref()?;
                Some(Bridge {
                    target_chain: chain.id,
                    target_registry: chain.contract(ContractRole::Registry)?,
                    name: chain.managed_name.clone(),
                    origin_chain: bridge.origin_chain,
                    origin_registry: bridge.origin_registry,
                    resolver: bridge.resolver,
                })
            })
            .collect()
    }

    /// The configured chains without an RPC endpoint, each with the sentence that says how to
    /// give it one. They are reported at startup and not indexed; the others run.
    pub fn chains_without_rpc(&self) -> Vec<(u64, String)> {
        self.chains
            .iter()
            .filter(|chain| chain.rpc_url.as_deref().is_none_or(str::is_empty))
            .map(|chain| {
                let id = chain.id;
                (
                    id,
                    format!(
                        "chain {id} ({}) has no RPC endpoint; set RPC_URL_{id}=<url> or rpc_url in its [[chains]] entry",
                        chain.name
                    ),
                )
            })
            .collect()
    }

    fn apply_env(&mut self, env: HashMap<String, String>) -> Result<(), ConfigError> {
        if let Some(url) = env.get("DATABASE_URL") {
            self.database.url.clone_from(url);
        }
        if let Some(listen) = env.get("ENSEMBLE_HTTP_LISTEN") {
            self.http.listen = listen.parse().map_err(|_| {
                ConfigError::Invalid(format!(
                    "ENSEMBLE_HTTP_LISTEN={listen:?} is not a socket address; use e.g. 127.0.0.1:8080"
                ))
            })?;
        }
        if let Some(token) = env.get("ENSEMBLE_ADMIN_TOKEN").filter(|t| !t.is_empty()) {
            if token.len() < MIN_ADMIN_TOKEN_BYTES {
                return Err(ConfigError::Invalid(format!(
                    "ENSEMBLE_ADMIN_TOKEN is shorter than {MIN_ADMIN_TOKEN_BYTES} bytes; use a long random value, e.g. `openssl rand -hex 32`"
                )));
            }
            self.http.admin_token = Some(token.clone());
        }
        for chain in &mut self.chains {
            if let Some(url) = env.get(&format!("RPC_URL_{}", chain.id)) {
                chain.rpc_url = Some(url.clone());
            }
        }
        Ok(())
    }

    /// Keeps only the chains in `ids` (an indexer process split by chain); unknown ids are an
    /// error so a typo does not silently index nothing.
    pub fn retain_chains(&mut self, ids: &[u64]) -> Result<(), ConfigError> {
        if let Some(missing) = ids.iter().find(|id| !self.chains.iter().any(|c| c.id == **id)) {
            return Err(ConfigError::Invalid(format!(
                "--chains names chain {missing}, which the config does not list; configured: {:?}",
                self.chains.iter().map(|c| c.id).collect::<Vec<_>>()
            )));
        }
        self.chains.retain(|c| ids.contains(&c.id));
        Ok(())
    }

    /// Checks what the types cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let mut seen = std::collections::HashSet::new();
        for chain in &self.chains {
            let id = chain.id;
            if !seen.insert(id) {
                return Err(ConfigError::Invalid(format!(
                    "chain {id} is listed twice; keep one [[chains]] entry per chain id"
                )));
            }
            // Domain keys hold the chain id in 32 bits (every ENS chain's id fits).
            if !entities::domain_key::DomainKey::holds_chain(id) {
                return Err(ConfigError::Invalid(format!(
                    "chain {id}: chain ids above {} are not supported",
                    u32::MAX
                )));
            }
            let count = |role| chain.contracts.iter().filter(|c| c.role == role).count();
            let registries = count(ContractRole::Registry);
            // A chain may hold only a reverse registrar (Arbitrum, Scroll); anything that
            // names domains needs the registry their ids are built from.
            let names_domains = chain.contracts.iter().any(|c| c.role.names_domains());
            if registries > 1 || (registries == 0 && names_domains) {
                return Err(ConfigError::Invalid(format!(
                    "chain {id} needs exactly one contract with role = \"registry\" (found {registries})"
                )));
            }
            if chain.managed_name.is_empty()
                || chain.managed_name.split('.').any(|label| label.is_empty())
            {
                return Err(ConfigError::Invalid(format!(
                    "chain {id}: managed_name {:?} is not a name like \"eth\" or \"base.eth\"",
                    chain.managed_name
                )));
            }
            match (chain.namegraph, &chain.bridge) {
                (NamegraphRole::Bridged, None) => {
                    return Err(ConfigError::Invalid(format!(
                        "chain {id}: namegraph = \"bridged\" needs a [chains.bridge] table (origin_chain, origin_registry, resolver)"
                    )));
                }
                (NamegraphRole::Bridged, Some(bridge)) if bridge.origin_chain == id => {
                    return Err(ConfigError::Invalid(format!(
                        "chain {id}: a bridge's origin_chain must be another chain"
                    )));
                }
                (NamegraphRole::Bridged, Some(_)) if registries == 0 => {
                    return Err(ConfigError::Invalid(format!(
                        "chain {id}: a bridged chain needs its registry (role = \"registry\")"
                    )));
                }
                (NamegraphRole::Root | NamegraphRole::Detached, Some(_)) => {
                    return Err(ConfigError::Invalid(format!(
                        "chain {id}: [chains.bridge] is only for namegraph = \"bridged\""
                    )));
                }
                _ => {}
            }
            if chain.max_block_range == 0 {
                return Err(ConfigError::Invalid(format!(
                    "chain {id}: max_block_range must be at least 1"
                )));
            }
            if chain.max_concurrent_requests == 0 {
                return Err(ConfigError::Invalid(format!(
                    "chain {id}: max_concurrent_requests must be at least 1"
                )));
            }
            if let Some(c) = chain
                .contracts
                .iter()
                .find(|c| matches!((c.start_block, c.end_block), (Some(s), Some(e)) if e < s))
            {
                return Err(ConfigError::Invalid(format!(
                    "chain {id}: contract {} has end_block before start_block",
                    c.address
                )));
            }
            if chain.end_block.is_some_and(|end| end < chain.start_block) {
                return Err(ConfigError::Invalid(format!(
                    "chain {id}: end_block is before start_block"
                )));
            }
        }
        if self.indexer.mailbox_capacity == 0 {
            return Err(ConfigError::Invalid("indexer.mailbox_capacity must be at least 1".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    const CHAIN: &str = r#"
        [[chains]]
        id = 31337
        name = "devnet"
        contracts = [{ role = "registry", address = "0x5FbDB2315678afecb367f032d93F642f64180aa3" }]
    "#;

    #[test]
    fn defaults_load_without_a_file() {
        let config = Config::load(None, []).unwrap();
        assert!(config.database.url.starts_with("sqlite:"));
        assert!(config.chains.is_empty());
    }

    #[test]
    fn env_supplies_rpc_and_database() {
        let file = write(CHAIN);
        let env = [
            ("RPC_URL_31337".to_owned(), "http://127.0.0.1:1".to_owned()),
            ("DATABASE_URL".to_owned(), "postgres://x/y".to_owned()),
        ];
        let config = Config::load(Some(file.path()), env).unwrap();
        assert_eq!(config.chains[0].rpc_url.as_deref(), Some("http://127.0.0.1:1"));
        assert_eq!(config.database.url, "postgres://x/y");
    }

    #[test]
    fn missing_rpc_is_reported_not_fatal() {
        let file = write(CHAIN);
        let config = Config::load(Some(file.path()), []).unwrap();
        let missing = config.chains_without_rpc();
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].0, 31337);
        assert!(missing[0].1.contains("RPC_URL_31337"), "{}", missing[0].1);
    }

    #[test]
    fn bridged_chains_need_a_bridge_and_bridges_survive_retain() {
        let bridged = r#"
            [[chains]]
            id = 1
            name = "mainnet"
            contracts = [{ role = "registry", address = "0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e" }]
            [[chains]]
            id = 8453
            name = "base"
            managed_name = "base.eth"
            namegraph = "bridged"
            contracts = [{ role = "registry", address = "0xb94704422c2a1e396835a571837aa5ae53285a95" }]
        "#;
        let err = Config::load(Some(write(bridged).path()), []).unwrap_err().to_string();
        assert!(err.contains("[chains.bridge]"), "{err}");
        let with_bridge = format!(
            "{bridged}\n[chains.bridge]\norigin_chain = 1\norigin_registry = \"0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e\"\nresolver = \"0xde9049636f4a1dfe0a64d1bfe3155c0a14c54f31\"\n"
        );
        let mut config = Config::load(Some(write(&with_bridge).path()), []).unwrap();
        assert_eq!(config.bridges.len(), 1);
        assert_eq!(config.bridges[0].name, "base.eth");
        config.retain_chains(&[1]).unwrap();
        assert_eq!(config.bridges.len(), 1, "the origin chain's process still knows the bridge");
    }

    #[test]
    fn chain_ids_must_fit_a_domain_key() {
        let file = write(&CHAIN.replace("31337", "4294967296"));
        let env = [("RPC_URL_4294967296".to_owned(), "http://127.0.0.1:1".to_owned())];
        let err = Config::load(Some(file.path()), env).unwrap_err().to_string();
        assert!(err.contains("chain 4294967296") && err.contains("not supported"), "{err}");
    }

    #[test]
    fn chain_subsets_must_exist() {
        let file = write(CHAIN);
        let env = [("RPC_URL_31337".to_owned(), "http://127.0.0.1:1".to_owned())];
        let mut config = Config::load(Some(file.path()), env).unwrap();
        let err = config.retain_chains(&[1]).unwrap_err().to_string();
        assert!(err.contains("chain 1") && err.contains("31337"), "{err}");
        config.retain_chains(&[31337]).unwrap();
        assert_eq!(config.chains.len(), 1);
    }

    #[test]
    fn admin_token_comes_from_env_and_must_be_long() {
        let short = [("ENSEMBLE_ADMIN_TOKEN".to_owned(), "short".to_owned())];
        assert!(
            Config::load(None, short).unwrap_err().to_string().contains("ENSEMBLE_ADMIN_TOKEN")
        );
        let long = [("ENSEMBLE_ADMIN_TOKEN".to_owned(), "x".repeat(32))];
        let config = Config::load(None, long).unwrap();
        assert!(config.http.admin_token.is_some());
        assert!(!format!("{config:?}").contains(&"x".repeat(32)), "the token never shows in Debug");
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let file = write("[http]\nlisten = \"127.0.0.1:1\"\nlisten_typo = 1\n");
        let err = Config::load(Some(file.path()), []).unwrap_err().to_string();
        assert!(err.contains("listen_typo"), "{err}");
    }

    #[test]
    fn shipped_configs_parse() {
        for (file, chains) in
            [("config/devnet.toml", 1), ("config/mainnet.toml", 6), ("config/sepolia.toml", 6)]
        {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let env = [("RPC_URL_1".to_owned(), "http://127.0.0.1:1".to_owned())];
            let config = Config::load(Some(&path), env).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(config.chains.len(), chains, "{file}");
        }
    }
}
