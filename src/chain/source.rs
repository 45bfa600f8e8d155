//! [`ChainSource`]: where a chain's pipeline reads the chain from — the boundary between the
//! pipeline's actors and the node. The service reads through JSON-RPC ([`RpcClient`]); the
//! benchmark and tests plug in a source of their own (a recorded corpus, say) and drive the
//! same fetcher, decoder and handler.

use std::sync::Arc;

use alloy::{
    primitives::{Address, B256, Bytes},
    rpc::types::{Filter, Log},
};
use futures::future::BoxFuture;

use crate::rpc::{BlockInfo, RpcClient, RpcError, TxParties};

/// What the pipeline asks of a chain. Every method answers as a JSON-RPC node would, with
/// the same error classification ([`RpcError`]), so the pipeline's retries, window narrowing
/// and reorg handling apply to any source.
pub trait ChainSource: std::fmt::Debug + Send + Sync + 'static {
    /// The chain id the source serves (`eth_chainId`).
    fn chain_id(&self) -> BoxFuture<'_, Result<u64, RpcError>>;

    /// The latest block number (`eth_blockNumber`).
    fn block_number(&self) -> BoxFuture<'_, Result<u64, RpcError>>;

    /// The finalized block, when the source has that notion.
    fn finalized_block(&self) -> BoxFuture<'_, Result<Option<u64>, RpcError>>;

    /// Logs matching `filter` (`eth_getLogs`), in chain order.
    fn logs<'a>(&'a self, filter: &'a Filter) -> BoxFuture<'a, Result<Vec<Log>, RpcError>>;

    /// Hash, parent and timestamp of block `number`.
    fn block(&self, number: u64) -> BoxFuture<'_, Result<BlockInfo, RpcError>>;

    /// Headers of `numbers`, with the parties of their transactions where the flag is set.
    fn blocks<'a>(
        &'a self,
        numbers: &'a [(u64, bool)],
    ) -> BoxFuture<'a, Result<Vec<BlockParts>, RpcError>>;

    /// `eth_call` of `data` on `to` in the state after block `hash`.
    fn call_at(
        &self,
        to: Address,
        data: Bytes,
        hash: B256,
    ) -> BoxFuture<'_, Result<Bytes, RpcError>>;
}

/// A block's header facts and the parties of its transactions.
pub type BlockParts = (BlockInfo, Vec<TxParties>);

/// A shared source, as the pipeline's actors hold it.
pub type SharedSource = Arc<dyn ChainSource>;

impl ChainSource for RpcClient {
    fn chain_id(&self) -> BoxFuture<'_, Result<u64, RpcError>> {
        Box::pin(RpcClient::chain_id(self))
    }

    fn block_number(&self) -> BoxFuture<'_, Result<u64, RpcError>> {
        Box::pin(RpcClient::block_number(self))
    }

    fn finalized_block(&self) -> BoxFuture<'_, Result<Option<u64>, RpcError>> {
        Box::pin(RpcClient::finalized_block(self))
    }

    fn logs<'a>(&'a self, filter: &'a Filter) -> BoxFuture<'a, Result<Vec<Log>, RpcError>> {
        Box::pin(RpcClient::logs(self, filter))
    }

    fn block(&self, number: u64) -> BoxFuture<'_, Result<BlockInfo, RpcError>> {
        Box::pin(RpcClient::block(self, number))
    }

    fn blocks<'a>(
        &'a self,
        numbers: &'a [(u64, bool)],
    ) -> BoxFuture<'a, Result<Vec<BlockParts>, RpcError>> {
        Box::pin(RpcClient::blocks_batch(self, numbers))
    }

    fn call_at(
        &self,
        to: Address,
        data: Bytes,
        hash: B256,
    ) -> BoxFuture<'_, Result<Bytes, RpcError>> {
        Box::pin(RpcClient::call_at(self, to, data, hash))
    }
}
