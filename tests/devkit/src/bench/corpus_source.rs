//! [`CorpusSource`]: a corpus as the pipeline's [`ChainSource`], read from the file without a
//! server in between, so `bench run --source local` drives the service's own fetcher, decoder
//! and handler and measures them without the cost of JSON-RPC.

use std::{path::Path, sync::Mutex};

use alloy::{
    primitives::{Address, B256, Bytes},
    rpc::types::{Filter, Log},
};
use futures::future::BoxFuture;

use super::{
    BenchError,
    corpus::{CorpusBlock, IndexedCorpus},
};
use ensemble::{
    chain::source::{BlockParts, ChainSource},
    rpc::{BlockInfo, RpcError, TxParties},
};

/// The blocks of the window read last: the fetcher asks for the logs of a window with two
/// filters and then for its blocks, so each window is read from the file once.
type Window = (u64, u64, std::sync::Arc<Vec<CorpusBlock>>);

/// A corpus served to the pipeline in process. Its head is the corpus's last block, and every
/// block is final.
#[derive(Debug)]
pub struct CorpusSource {
    corpus: IndexedCorpus,
    last: Mutex<Option<Window>>,
}

impl CorpusSource {
    /// Indexes the corpus at `path` (one pass; only block offsets are held).
    pub fn open(path: &Path) -> Result<Self, BenchError> {
        Ok(Self { corpus: IndexedCorpus::open(path)?, last: Mutex::new(None) })
    }

    /// Blocks with logs in `[from, to]`.
    fn range(&self, from: u64, to: u64) -> Result<std::sync::Arc<Vec<CorpusBlock>>, RpcError> {
        let mut last = self.last.lock().map_err(|_| RpcError::Permanent("corpus lock".into()))?;
        if let Some((f, t, blocks)) = last.as_ref()
            && *f == from
            && *t == to
        {
            return Ok(blocks.clone());
        }
        let blocks = std::sync::Arc::new(
            self.corpus.range(from, to).map_err(|e| RpcError::Permanent(e.to_string()))?,
        );
        *last = Some((from, to, blocks.clone()));
        Ok(blocks)
    }

    /// The block with logs numbered `number`, from the last window when it is there.
    fn block_with_logs(&self, number: u64) -> Result<Option<CorpusBlock>, RpcError> {
        if let Ok(last) = self.last.lock()
            && let Some((from, to, blocks)) = last.as_ref()
            && (*from..=*to).contains(&number)
        {
            let at = blocks.binary_search_by_key(&number, |b| b.number).ok();
            return Ok(at.map(|i| blocks[i].clone()));
        }
        self.corpus.block(number).map_err(|e| RpcError::Permanent(e.to_string()))
    }

    fn exists(&self, number: u64) -> Result<(), RpcError> {
        if number > self.corpus.header.last_block {
            return Err(RpcError::MissingBlock(number));
        }
        Ok(())
    }
}

impl ChainSource for CorpusSource {
    fn chain_id(&self) -> BoxFuture<'_, Result<u64, RpcError>> {
        Box::pin(async move { Ok(self.corpus.header.chain_id) })
    }

    fn block_number(&self) -> BoxFuture<'_, Result<u64, RpcError>> {
        Box::pin(async move { Ok(self.corpus.header.last_block) })
    }

    fn finalized_block(&self) -> BoxFuture<'_, Result<Option<u64>, RpcError>> {
        Box::pin(async move { Ok(Some(self.corpus.header.last_block)) })
    }

    fn logs<'a>(&'a self, filter: &'a Filter) -> BoxFuture<'a, Result<Vec<Log>, RpcError>> {
        Box::pin(async move {
            let header = &self.corpus.header;
            let from = filter.get_from_block().unwrap_or(header.first_block);
            let to = filter.get_to_block().unwrap_or(header.last_block).min(header.last_block);
            let blocks = self.range(from, to)?;
            Ok(blocks
                .iter()
                .flat_map(|b| b.rpc_logs(header))
                .filter(|log| filter.matches(&log.inner))
                .collect())
        })
    }

    fn block(&self, number: u64) -> BoxFuture<'_, Result<BlockInfo, RpcError>> {
        Box::pin(async move {
            self.exists(number)?;
            Ok(self.corpus.header.block_info(number))
        })
    }

    fn blocks<'a>(
        &'a self,
        numbers: &'a [(u64, bool)],
    ) -> BoxFuture<'a, Result<Vec<BlockParts>, RpcError>> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(numbers.len());
            for &(number, full) in numbers {
                self.exists(number)?;
                let parties = match full.then(|| self.block_with_logs(number)).transpose()? {
                    Some(Some(block)) => block
                        .txs
                        .iter()
                        .map(|tx| TxParties { hash: tx.hash, from: tx.from, to: Some(tx.to) })
                        .collect(),
                    _ => Vec::new(),
                };
                out.push((self.corpus.header.block_info(number), parties));
            }
            Ok(out)
        })
    }

    fn call_at(&self, to: Address, _: Bytes, _: B256) -> BoxFuture<'_, Result<Bytes, RpcError>> {
        // A corpus holds logs, not state: its resolvers emit no value-less `TextChanged`, so
        // the decoder never asks.
        Box::pin(
            async move { Err(RpcError::Permanent(format!("a corpus has no state to call {to}"))) },
        )
    }
}
