//! [`RpcClient`]: the chain's provider with retries. Every call goes through
//! [`RpcClient::retry`]: exponential backoff with full jitter, bounded attempts, and a counter
//! per outcome so retries are visible in `/metrics`.

use std::{
    future::Future,
    sync::{Arc, Mutex},
    time::Duration,
};

use alloy::{
    eips::BlockNumberOrTag,
    primitives::{Address, B256, Bytes},
    providers::{Provider, RootProvider},
    rpc::types::{Filter, Log, TransactionRequest},
};
use rand::Rng;

use super::RpcError;
use crate::ChainId;

/// Attempts per call before the error is handed to the caller (≈1 minute of backoff).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;
/// First backoff; doubles per attempt up to [`MAX_BACKOFF`].
pub const BASE_BACKOFF: Duration = Duration::from_millis(100);
/// Longest single backoff.
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Longest `Retry-After` obeyed; a provider asking for more is retried after this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Blocks per JSON-RPC batch of [`RpcClient::blocks_batch`]: small enough for every common
/// provider's batch limit and response size, large enough to cut round trips twentyfold.
pub const BLOCKS_PER_BATCH: usize = 20;
/// Default time one request may take before it is abandoned and retried.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Installs ring as the process's rustls provider, once. reqwest is built without a default
/// provider (so the tree carries one TLS backend, not two); any `https://` RPC client needs
/// one installed before it is built.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Hash, parent and timestamp of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockInfo {
    /// Number.
    pub number: u64,
    /// Hash.
    pub hash: B256,
    /// Parent hash.
    pub parent_hash: B256,
    /// Timestamp, seconds.
    pub timestamp: u64,
}

/// Who sent a transaction and to whom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxParties {
    /// Transaction hash.
    pub hash: B256,
    /// Sender.
    pub from: Address,
    /// Recipient; none for a contract creation.
    pub to: Option<Address>,
}

/// How an `eth_call` ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallOutcome {
    /// It returned this data.
    Returned(Bytes),
    /// It reverted with this data (empty for a bare `revert()` or running out of gas).
    Reverted(Bytes),
}

/// The revert data of a failed call, when the node says the call reverted: JSON-RPC code 3
/// with data (geth, anvil, reth), or an `execution reverted` message without any.
fn reverted(
    err: &alloy::transports::RpcError<alloy::transports::TransportErrorKind>,
) -> Option<Bytes> {
    let payload = err.as_error_resp()?;
    if let Some(data) = payload.as_revert_data() {
        return Some(data);
    }
    // geth says "out of gas", anvil "EVM error OutOfGas".
    let message = payload.message.to_lowercase().replace(' ', "");
    (payload.code == 3 || message.contains("revert") || message.contains("outofgas"))
        .then(Bytes::new)
}

/// A chain's JSON-RPC endpoint.
#[derive(Clone)]
pub struct RpcClient {
    provider: RootProvider,
    chain: String,
    max_attempts: u32,
    /// The endpoint as given (may hold an API key in its path or query) and the form that
    /// may be shown: scheme, host and port only.
    url: String,
    shown_url: String,
    /// Where the error of a failing call is reported while it is retried (cleared by the
    /// next success), for status output.
    failing: Option<Arc<Mutex<Option<String>>>>,
}

impl std::fmt::Debug for RpcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcClient")
            .field("chain", &self.chain)
            .field("url", &self.shown_url)
            .finish()
    }
}

/// `scheme://host:port/…`: an RPC URL without the path and query where providers put keys.
pub fn redact_url(url: &reqwest::Url) -> String {
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    format!("{}://{}{port}/…", url.scheme(), url.host_str().unwrap_or("?"))
}

/// The header facts and transaction parties of an RPC block.
fn block_parts(number: u64, block: &alloy::rpc::types::Block) -> (BlockInfo, Vec<TxParties>) {
    use alloy::{consensus::Transaction, network::TransactionResponse};
    let parties = block
        .transactions
        .txns()
        .map(|tx| TxParties { hash: tx.tx_hash(), from: tx.from(), to: Transaction::to(tx) })
        .collect();
    let info = BlockInfo {
        number,
        hash: block.header.hash,
        parent_hash: block.header.parent_hash,
        timestamp: block.header.timestamp,
    };
    (info, parties)
}

impl RpcClient {
    /// A client for `url` with the default request timeout.
    pub fn new(url: &str, chain_id: ChainId) -> Result<Self, RpcError> {
        Self::with_timeout(url, chain_id, DEFAULT_REQUEST_TIMEOUT)
    }

    /// A client for `url` whose requests give up after `timeout` (and are then retried). The
    /// URL may carry a key; it is never logged.
    pub fn with_timeout(url: &str, chain_id: ChainId, timeout: Duration) -> Result<Self, RpcError> {
        let parsed: reqwest::Url = url.parse().map_err(|e| {
            RpcError::Permanent(format!("invalid rpc url for chain {chain_id}: {e}"))
        })?;
        crate::redaction::register_url(url);
        let shown_url = redact_url(&parsed);
        Ok(Self {
            provider: {
                let http = reqwest::Client::builder()
                    .timeout(timeout)
                    .build()
                    .map_err(|e| RpcError::Permanent(format!("http client: {e}")))?;
                RootProvider::new(
                    alloy::rpc::client::ClientBuilder::default().http_with_client(http, parsed),
                )
            },
            chain: chain_id.to_string(),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            url: url.to_owned(),
            shown_url,
            failing: None,
        })
    }

    /// The same client, giving up after `attempts` tries of a call (resolution answers a
    /// request: it cannot wait out a minute of backoff).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The same client, reporting the error of each failing call into `slot` (and clearing
    /// it on success).
    pub fn reporting_to(mut self, slot: Arc<Mutex<Option<String>>>) -> Self {
        self.failing = Some(slot);
        self
    }

    fn report(&self, error: Option<&RpcError>) {
        if let Some(slot) = &self.failing
            && let Ok(mut slot) = slot.lock()
        {
            *slot = error.map(|e| format!("{e} (retrying)"));
        }
    }

    /// Runs `call` until it succeeds, fails permanently, or runs out of attempts.
    pub async fn retry<T, F, Fut>(&self, method: &'static str, mut call: F) -> Result<T, RpcError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, RpcError>>,
    {
        let mut attempt = 0;
        loop {
            metrics::counter!("ensemble_rpc_requests_total", "chain" => self.chain.clone(), "event" => method)
                .increment(1);
            match call().await.map_err(|e| e.redacted(&self.url, &self.shown_url)) {
                Ok(value) => {
                    if attempt > 0 {
                        self.report(None);
                    }
                    return Ok(value);
                }
                Err(err) if err.is_retryable() && attempt + 1 < self.max_attempts => {
                    self.report(Some(&err));
                    attempt += 1;
                    metrics::counter!("ensemble_rpc_retries_total", "chain" => self.chain.clone(), "event" => method)
                        .increment(1);
                    let cap = BASE_BACKOFF.saturating_mul(1 << attempt.min(16)).min(MAX_BACKOFF);
                    let mut sleep = rand::rng().random_range(Duration::ZERO..=cap);
                    if let RpcError::RateLimited { retry_after: Some(wait), .. } = &err {
                        sleep = sleep.max((*wait).min(MAX_RETRY_AFTER));
                    }
                    tracing::debug!(target: "indexer::rpc", chain = %self.chain, method, attempt, error = %err, "Retrying");
                    tokio::time::sleep(sleep).await;
                }
                Err(err) => {
                    metrics::counter!("ensemble_rpc_errors_total", "chain" => self.chain.clone(), "event" => method)
                        .increment(1);
                    if err.is_retryable() {
                        self.report(Some(&err));
                    }
                    return Err(err);
                }
            }
        }
    }

    /// Latest block number.
    pub async fn block_number(&self) -> Result<u64, RpcError> {
        self.retry("eth_blockNumber", || async {
            self.provider.get_block_number().await.map_err(RpcError::classify)
        })
        .await
    }

    /// Number of the block the endpoint calls finalized; `None` when it has no such notion.
    pub async fn finalized_block(&self) -> Result<Option<u64>, RpcError> {
        self.retry("eth_getBlockByNumber", || async {
            match self.provider.get_block_by_number(BlockNumberOrTag::Finalized).await {
                Ok(block) => Ok(block.map(|b| b.header.number)),
                // Nodes without finality answer with an error: not a failure of ours.
                Err(alloy::transports::RpcError::ErrorResp(_)) => Ok(None),
                Err(err) => Err(RpcError::classify(err)),
            }
        })
        .await
    }

    /// Chain id the endpoint reports.
    pub async fn chain_id(&self) -> Result<u64, RpcError> {
        self.retry("eth_chainId", || async {
            self.provider.get_chain_id().await.map_err(RpcError::classify)
        })
        .await
    }

    /// Logs matching `filter`. A range refusal is returned at once for the caller to narrow.
    pub async fn logs(&self, filter: &Filter) -> Result<Vec<Log>, RpcError> {
        self.retry("eth_getLogs", || async {
            self.provider.get_logs(filter).await.map_err(RpcError::classify_logs)
        })
        .await
    }

    /// Hash, parent and timestamp of block `number`.
    pub async fn block(&self, number: u64) -> Result<BlockInfo, RpcError> {
        self.retry("eth_getBlockByNumber", || async {
            let block = self
                .provider
                .get_block_by_number(BlockNumberOrTag::Number(number))
                .await
                .map_err(RpcError::classify)?
                .ok_or(RpcError::MissingBlock(number))?;
            Ok(BlockInfo {
                number,
                hash: block.header.hash,
                parent_hash: block.header.parent_hash,
                timestamp: block.header.timestamp,
            })
        })
        .await
    }

    /// Headers of `numbers`, with the senders and recipients of their transactions where
    /// `full` is set (every indexed event records who sent it), in ONE HTTP request (a
    /// JSON-RPC batch of `eth_getBlockByNumber`): a window's blocks cost one round trip per
    /// [`BLOCKS_PER_BATCH`] blocks instead of one each. Retried as a whole.
    pub async fn blocks_batch(
        &self,
        numbers: &[(u64, bool)],
    ) -> Result<Vec<(BlockInfo, Vec<TxParties>)>, RpcError> {
        self.retry("eth_getBlockByNumber", || async {
            let mut batch = alloy::rpc::client::BatchRequest::new(self.provider.client());
            let mut waiters = Vec::with_capacity(numbers.len());
            for &(number, full) in numbers {
                let waiter = batch
                    .add_call::<_, Option<alloy::rpc::types::Block>>(
                        "eth_getBlockByNumber",
                        &(BlockNumberOrTag::Number(number), full),
                    )
                    .map_err(RpcError::classify)?;
                waiters.push((number, waiter));
            }
            batch.send().await.map_err(RpcError::classify)?;
            let mut out = Vec::with_capacity(waiters.len());
            for (number, waiter) in waiters {
                let block = waiter
                    .await
                    .map_err(RpcError::classify)?
                    .ok_or(RpcError::MissingBlock(number))?;
                out.push(block_parts(number, &block));
            }
            Ok(out)
        })
        .await
    }

    /// `eth_call` of `data` on `to` after block `hash` that tells a revert (with its data:
    /// a CCIP-Read request is a revert) from a failure of the call itself.
    pub async fn try_call_at(
        &self,
        to: Address,
        data: Bytes,
        hash: B256,
        gas: Option<u64>,
    ) -> Result<CallOutcome, RpcError> {
        self.retry("eth_call", || async {
            match self.eth_call(to, &data, hash, gas).await {
                Ok(bytes) => Ok(CallOutcome::Returned(bytes)),
                Err(err) => match reverted(&err) {
                    Some(data) => Ok(CallOutcome::Reverted(data)),
                    None => Err(RpcError::classify(err)),
                },
            }
        })
        .await
    }

    /// `eth_call` of `data` on `to` in the state after block `hash` (EIP-1898: by hash, so
    /// the answer belongs to that exact block even if its number was reorganized since).
    pub async fn call_at(&self, to: Address, data: Bytes, hash: B256) -> Result<Bytes, RpcError> {
        self.retry("eth_call", || async {
            self.eth_call(to, &data, hash, None).await.map_err(RpcError::classify)
        })
        .await
    }

    /// One `eth_call` after block `hash`, by hash (EIP-1898), with at most `gas` if given
    /// (else the node's own cap).
    async fn eth_call(
        &self,
        to: Address,
        data: &Bytes,
        hash: B256,
        gas: Option<u64>,
    ) -> Result<Bytes, alloy::transports::RpcError<alloy::transports::TransportErrorKind>> {
        let mut tx = TransactionRequest::default().to(to).input(data.clone().into());
        if let Some(gas) = gas {
            tx = tx.gas_limit(gas);
        }
        self.provider.call(tx).block(alloy::eips::BlockId::hash_canonical(hash)).await
    }
}
