//! [`Config`]: everything the service is told, loaded once at startup.
//!
//! Load order: the built-in defaults (`config/default.toml`, compiled in), then an optional
//! `--config <file>`, then the environment for secrets and deployment values
//! (`DATABASE_URL`, `RPC_URL_<CHAIN_ID>`, `ENSEMBLE_HTTP_LISTEN`). Nothing below `main` reads
//! the environment: `main` hands the variables to [`Config::load`].

use std::{collections::HashMap, net::SocketAddr, path::Path, time::Duration};

use serde::Deserialize;

mod bridge;
mod chain;
mod error;
#[cfg(test)]
mod tests;

pub use bridge::{Bridge, BridgeConfig};
pub use chain::{
    ChainConfig, ContractConfig, DEFAULT_FINALITY_DEPTH, DEFAULT_MAX_BLOCK_RANGE,
    DEFAULT_MAX_CONCURRENT_REQUESTS, DEFAULT_POLL_INTERVAL_MS, DEFAULT_REQUEST_TIMEOUT_MS,
    NamegraphRole,
};
pub use error::ConfigError;

use crate::{ChainId, ens::role::ContractRole};

/// The built-in defaults, also the documentation of every key.
pub const DEFAULT_TOML: &str = include_str!("../../config/default.toml");

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
    /// Resolution (forward and reverse) from the index or by live calls.
    pub resolution: ResolutionConfig,
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
    /// Directory of the fetch cache (`chain::fetch_cache`): each chain keeps the windows it
    /// read below finality there, so indexing again from scratch reads them from disk, not
    /// from the node. Empty: no cache.
    pub fetch_cache_dir: String,
    /// Most MiB each chain's fetch cache may hold.
    pub fetch_cache_mb: u64,
}

impl IndexerConfig {
    /// The fetch cache's place and bound, when one is configured.
    pub fn fetch_cache(&self) -> Option<crate::chain::fetch_cache::FetchCacheConfig> {
        (!self.fetch_cache_dir.is_empty()).then(|| crate::chain::fetch_cache::FetchCacheConfig {
            dir: self.fetch_cache_dir.clone().into(),
            max_bytes: self.fetch_cache_mb << 20,
        })
    }
}

/// `[resolution]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolutionConfig {
    /// The index answers only while its checkpoint is at most this many blocks behind the
    /// chain's head; further behind, resolution calls the chain live (and says so).
    pub max_index_lag_blocks: u64,
    /// Time one resolution may take in all, milliseconds.
    pub timeout_ms: u64,
    /// Gas one live `eth_call` of resolution may use.
    pub call_gas: u64,
    /// Time one CCIP-Read gateway request may take, milliseconds.
    pub gateway_timeout_ms: u64,
    /// Largest gateway response accepted, bytes.
    pub gateway_max_bytes: usize,
    /// Whether gateways may be on loopback, private, link-local or shared addresses. A
    /// resolver names its gateways, so off (the default) keeps anyone who deploys one from
    /// making this server call its own network; on for local gateways (tests, a devnet).
    pub gateway_private_addresses: bool,
}

impl ResolutionConfig {
    /// Time one resolution may take.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// Time one gateway request may take.
    pub fn gateway_timeout(&self) -> Duration {
        Duration::from_millis(self.gateway_timeout_ms)
    }
}

/// Shortest admin token accepted: long enough that guessing is hopeless.
pub const MIN_ADMIN_TOKEN_BYTES: usize = 16;

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
    pub fn chains_without_rpc(&self) -> Vec<(ChainId, String)> {
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
    pub fn retain_chains(&mut self, ids: &[ChainId]) -> Result<(), ConfigError> {
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
            if !entities::domain_key::DomainKey::holds_chain(id.get()) {
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
