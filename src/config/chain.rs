//! `[[chains]]`: one chain to index, its contracts, and where its names hang in the
//! namegraph.

use std::time::Duration;

use alloy::primitives::Address;
use serde::Deserialize;

use super::BridgeConfig;
use crate::{ChainId, ens::role::ContractRole};

/// `[[chains]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainConfig {
    /// EIP-155 chain id.
    pub id: ChainId,
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
    /// Resolvers whose records are exactly what their events say (the public resolvers):
    /// resolution answers from the index for names that use them, and calls any other
    /// resolver live. None of them is an ENSIP-10 extended resolver.
    #[serde(default)]
    pub static_resolvers: Vec<Address>,
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
    pub fn local(id: ChainId, name: &str, rpc_url: &str, contracts: Vec<ContractConfig>) -> Self {
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
            static_resolvers: Vec::new(),
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
