//! [`Fetcher`]: walks the chain in `eth_getLogs` windows from the checkpoint to the head (and
//! then follows the head), fetches the headers of the blocks that have logs, and sends each
//! window to the decoder. Messages: none on the data path; it reports to the supervisor.
//!
//! Two filters per window: every configured contract by address, and the resolver topics from
//! any address. A window the provider refuses is halved until it passes (down to one block);
//! after a run of successes the window grows back towards `max_block_range`.
//!
//! With a fetch cache ([`super::fetch_cache`]), a final window stored there is read from it
//! instead of the node, and a final window read from the node is stored there.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::Arc,
};

use actix::prelude::*;
use alloy::{
    primitives::{Address, B256},
    rpc::types::Filter,
};
use futures::{StreamExt, TryStreamExt};
use sea_orm::DatabaseConnection;

use super::{
    PipelineError,
    decoder::{Decoder, FetchedRange},
    fetch_cache::{FetchCache, Window},
    mailbox::MailboxGauge,
    progress::ChainProgress,
    source::SharedSource,
    supervisor::{PipelineFailed, PipelineFinished},
};
use crate::{
    config::ChainConfig,
    ens::decode::resolver_topics,
    rpc::{BlockInfo, RpcError, TxParties},
    store::{journal::JournalWindow, writer::read_checkpoint},
};

/// Capacity of the fetcher's mailbox: it receives one [`StopFetching`] per pipeline.
pub const MAILBOX_CAPACITY: usize = 1;

/// Successful windows in a row after which a narrowed window doubles again.
pub const WINDOW_GROWTH_STREAK: u32 = 4;

/// Blocks a journaled window spans at most. A window is the unit a reorg undoes: the fork
/// search compares window ends with the chain and undoes every window from the first that
/// changed, so a window of several blocks may undo and apply again a few blocks that did not
/// change. A window is also a flush of its own, written in place, and a flush of one block's
/// few rows still rewrites a whole page of each hash-keyed B-tree per row. An indexer
/// catching up through the unfinal blocks journals them several at a time; one following the
/// head gets the few blocks that appeared since its last poll, usually one.
pub const JOURNAL_WINDOW_BLOCKS: u64 = 16;

/// The fetcher actor of one chain.
#[derive(Debug)]
pub struct Fetcher {
    job: Option<FetchJob>,
    generation: u64,
    failed: Recipient<PipelineFailed>,
    finished: Recipient<PipelineFinished>,
}

/// What the fetch loop owns.
#[derive(Debug)]
pub struct FetchJob {
    /// The chain.
    pub chain: ChainConfig,
    /// Where the chain is read from (its endpoint, in the service).
    pub source: SharedSource,
    /// Where the checkpoint is.
    pub db: DatabaseConnection,
    /// Next actor.
    pub decoder: Addr<Decoder>,
    /// Depth gauge of the decoder's mailbox.
    pub decoder_gauge: MailboxGauge,
    /// The decoder's mailbox capacity: windows in flight at most.
    pub mailbox_capacity: usize,
    /// Where the head and catching up are reported.
    pub progress: Arc<ChainProgress>,
    /// The chain's fetch cache, if it has one: final windows are read from it when stored
    /// there, and stored there when read from the node.
    pub fetch_cache: Option<super::supervisor::FetchCacheHandle>,
}

impl Fetcher {
    /// A fetcher of pipeline `generation` that reports to its supervisor.
    pub fn new(
        job: FetchJob,
        generation: u64,
        failed: Recipient<PipelineFailed>,
        finished: Recipient<PipelineFinished>,
    ) -> Self {
        Self { job: Some(job), generation, failed, finished }
    }
}

/// Stop fetching now; windows already sent stay queued downstream. The fetcher's mailbox
/// carries only these (its data goes out, nothing comes in), counted as `actor="fetcher"`
/// in the mailbox metrics.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct StopFetching {
    /// When it was sent, and the gauge it was counted in.
    pub sent: (std::time::Instant, MailboxGauge),
}

impl actix::Handler<StopFetching> for Fetcher {
    type Result = ();

    fn handle(&mut self, msg: StopFetching, ctx: &mut Self::Context) {
        let (at, gauge) = msg.sent;
        gauge.dequeued(at);
        // Stopping the context drops the fetch loop at its next await point.
        ctx.stop();
    }
}

impl Actor for Fetcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(MAILBOX_CAPACITY);
        let Some(job) = self.job.take() else { return };
        let generation = self.generation;
        ctx.spawn(job.run().into_actor(self).map(move |result, act, ctx| {
            match result {
                Ok(block) => act.finished.do_send(PipelineFinished { generation, block }),
                Err(error) => act.failed.do_send(PipelineFailed { generation, error }),
            }
            ctx.stop();
        }));
    }
}

impl FetchJob {
    /// The contracts that may emit logs in `[from, to]` (a retired controller is not asked
    /// for after its end block).
    fn addresses(&self, from: u64, to: u64) -> Vec<Address> {
        self.chain.contracts.iter().filter(|c| c.live_within(from, to)).map(|c| c.address).collect()
    }

    /// Logs of `[from, to]`, both filters merged, in chain order.
    async fn window_logs(
        &self,
        from: u64,
        to: u64,
    ) -> Result<Vec<alloy::rpc::types::Log>, RpcError> {
        let addresses = self.addresses(from, to);
        let by_address = (!addresses.is_empty())
            .then(|| Filter::new().from_block(from).to_block(to).address(addresses));
        // Resolver events come from any address, on the chains where ENS has resolvers.
        let by_topic = self.chain.index_resolvers.then(|| {
            Filter::new().from_block(from).to_block(to).event_signature(resolver_topics())
        });
        let logs = |filter: Option<Filter>| async move {
            match filter {
                Some(filter) => self.source.logs(&filter).await,
                None => Ok(Vec::new()),
            }
        };
        let (a, b) = futures::try_join!(logs(by_address), logs(by_topic))?;
        // A configured contract could also emit resolver topics: key by coordinates to dedupe.
        let mut merged = BTreeMap::new();
        for log in a.into_iter().chain(b) {
            if log.removed {
                continue;
            }
            let key = (log.block_number.unwrap_or_default(), log.log_index.unwrap_or_default());
            merged.insert(key, log);
        }
        Ok(merged.into_values().collect())
    }

    /// The window `[from, to]` with `logs`: the headers of its blocks with logs (with their
    /// transactions: every event records its sender) and of its two ends, fetched in JSON-RPC
    /// batches, several batches at a time.
    async fn window_parts(
        &self,
        from: u64,
        to: u64,
        logs: Vec<alloy::rpc::types::Log>,
    ) -> Result<Window, RpcError> {
        let mut numbers: Vec<(u64, bool)> =
            logs.iter().filter_map(|l| l.block_number).map(|n| (n, true)).collect();
        numbers.push((from, false));
        numbers.push((to, false));
        numbers.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        numbers.dedup_by_key(|(n, _)| *n);
        let source = &self.source;
        let fetched: Vec<Vec<(BlockInfo, Vec<TxParties>)>> =
            futures::stream::iter(numbers.chunks(crate::rpc::client::BLOCKS_PER_BATCH))
                .map(|chunk| source.blocks(chunk))
                .buffer_unordered(self.chain.max_concurrent_requests)
                .try_collect()
                .await?;
        let wanted: HashSet<B256> = logs.iter().filter_map(|l| l.transaction_hash).collect();
        let mut blocks = HashMap::with_capacity(numbers.len());
        let mut transactions = HashMap::with_capacity(wanted.len());
        for (block, parties) in fetched.into_iter().flatten() {
            blocks.insert(block.number, block);
            transactions.extend(
                parties.into_iter().filter(|p| wanted.contains(&p.hash)).map(|p| (p.hash, p)),
            );
        }
        Ok(Window { logs, blocks, transactions })
    }

    /// Runs until `end_block` (returning it) or forever when following the head.
    async fn run(self) -> Result<u64, PipelineError> {
        let chain_id = self.chain.id;
        let actual = self.source.chain_id().await?;
        if actual != chain_id.get() {
            return Err(PipelineError::WrongChain { expected: chain_id.get(), actual });
        }
        let checkpoint = read_checkpoint(&self.db, chain_id).await?;
        let mut next = checkpoint.as_ref().map_or(self.chain.start_block, |cp| cp.block_number + 1);
        // Hash of block `next - 1` as indexed: the next block's parent must be it.
        let mut prev_hash: Option<B256> = checkpoint.and_then(|cp| cp.block_hash.parse().ok());
        tracing::info!(target: "indexer::fetcher", chain = chain_id.get(), from = next, "Fetcher started");
        let label = chain_id.to_string();
        let mut window = self.chain.max_block_range;
        let mut streak = 0;
        let mut inflight = futures::stream::FuturesOrdered::new();
        let mut finalized_checked: Option<std::time::Instant> = None;
        let mut cache = match &self.fetch_cache {
            Some((config, pool)) => {
                match FetchCache::open(pool.clone(), config, &self.chain, self.source.as_ref())
                    .await
                {
                    Ok(cache) => Some(cache),
                    Err(err) => {
                        tracing::warn!(target: "indexer::fetcher", chain = chain_id.get(), error = %err, "Fetch cache not used by this run");
                        None
                    }
                }
            }
            None => None,
        };
        loop {
            let head = self.source.block_number().await?;
            metrics::gauge!("ensemble_chain_head_block", "chain" => label.clone()).set(head as f64);
            // Finality is informational (metrics) for now: ask at most once per poll interval.
            if finalized_checked.is_none_or(|at| at.elapsed() >= self.chain.poll_interval()) {
                finalized_checked = Some(std::time::Instant::now());
                if let Some(finalized) = self.source.finalized_block().await? {
                    metrics::gauge!("ensemble_chain_finalized_block", "chain" => label.clone())
                        .set(finalized as f64);
                }
            }
            let mut target = head.saturating_sub(self.chain.confirmations);
            if head + 1 < next {
                // The node is behind what is already indexed (a lagging replica, or a reorg
                // that has not yet grown past our height). Wait; a fork shows up as a parent
                // mismatch once the chain passes our height again.
                tracing::debug!(target: "indexer::fetcher", chain = chain_id.get(), head, indexed = next - 1, "Node is behind the indexed block; waiting");
            }
            self.progress.set_head(target);
            if let Some(end) = self.chain.end_block {
                if next > end {
                    while let Some(sent) = inflight.next().await {
                        Self::settle(Some(sent))?;
                    }
                    return Ok(end);
                }
                target = target.min(end);
            }
            self.progress.set_caught_up(next > target);
            if next > target {
                // Caught up: learn the fate of every window in flight before idling, so a
                // failure downstream is reported now rather than when the next block comes.
                while let Some(sent) = inflight.next().await {
                    Self::settle(Some(sent))?;
                }
                tokio::time::sleep(self.chain.poll_interval()).await;
                continue;
            }
            // Blocks within `finality_depth` of the head may still be reorganized: they are
            // fetched, applied and journaled in windows of at most `JOURNAL_WINDOW_BLOCKS`,
            // so the fork search names the first window that changed and a rollback undoes
            // no more than that window and those after it. A window never straddles the
            // boundary: the final part goes first, unjournaled.
            let final_head = head.saturating_sub(self.chain.finality_depth);
            let stored = match &cache {
                Some(cache) if next <= final_head => cache.stored_at(next, target.min(final_head)),
                _ => None,
            };
            let read = match (&cache, stored) {
                (Some(cache), Some(to)) => match cache.read(next).await {
                    Ok(window) => Some((to, window)),
                    Err(err) => {
                        tracing::warn!(target: "indexer::fetcher", chain = chain_id.get(), error = %err, "Fetch cache dropped for this run");
                        None
                    }
                },
                _ => None,
            };
            if stored.is_some() && read.is_none() {
                cache = None;
            }
            let from_cache = read.is_some();
            let (to, window) = match read {
                Some(read) => read,
                None => {
                    let to = if next > final_head {
                        target.min(next.saturating_add(window.min(JOURNAL_WINDOW_BLOCKS) - 1))
                    } else {
                        target.min(next.saturating_add(window - 1)).min(final_head)
                    };
                    // A window from the node ends before the next stored one begins.
                    let to = cache.as_ref().map_or(to, |cache| cache.fit(next, to));
                    let logs = match self.window_logs(next, to).await {
                        Ok(logs) => logs,
                        Err(RpcError::RangeTooLarge(reason)) if window > 1 => {
                            window = (window / 2).max(1);
                            streak = 0;
                            tracing::debug!(target: "indexer::fetcher", chain = chain_id.get(), window, %reason, "Narrowed log window");
                            continue;
                        }
                        Err(err) => return Err(err.into()),
                    };
                    streak += 1;
                    if streak >= WINDOW_GROWTH_STREAK && window < self.chain.max_block_range {
                        window = (window * 2).min(self.chain.max_block_range);
                        streak = 0;
                    }
                    (to, self.window_parts(next, to, logs).await?)
                }
            };
            let Window { logs, blocks, .. } = &window;
            if let Some(prev) = prev_hash
                && blocks[&next].parent_hash != prev
            {
                let fork_block = self.find_fork(next - 1).await?;
                return Err(PipelineError::Reorg { fork_block });
            }
            // Logs and headers come from separate calls: if the chain moved between them, the
            // window is read again rather than indexed half from each fork.
            let raced = logs.iter().any(|l| {
                matches!((l.block_number, l.block_hash), (Some(n), Some(h)) if blocks.get(&n).is_some_and(|b| b.hash != h))
            });
            if raced {
                tracing::debug!(target: "indexer::fetcher", chain = chain_id.get(), from = next, to, "Chain moved during the window; reading it again");
                continue;
            }
            let to_hash = blocks[&to].hash;
            let journal = (to + self.chain.finality_depth > head).then(|| JournalWindow {
                start: next,
                end: to,
                end_hash: format!("{to_hash:#x}"),
                start_parent_hash: format!("{:#x}", blocks[&next].parent_hash),
                prune_below: head.saturating_sub(self.chain.finality_depth),
            });
            tracing::debug!(target: "indexer::fetcher", chain = chain_id.get(), from = next, to, logs = logs.len(), "Fetched logs");
            // Only final windows are kept: a reorganization is never answered from the cache.
            if let Some(store) = cache.as_mut().filter(|_| !from_cache && journal.is_none())
                && let Err(err) = store.store(next, to, to_hash, &window).await
            {
                tracing::warn!(target: "indexer::fetcher", chain = chain_id.get(), error = %err, "Fetch cache dropped for this run");
                cache = None;
            }
            let Window { logs, blocks, transactions } = window;
            // At most `mailbox_capacity` windows are in flight, so the decoder's mailbox is
            // never over capacity and every send is enqueued in order the moment it is made.
            let at_head = to == target;
            let sent_at = self.decoder_gauge.enqueued();
            let range = FetchedRange {
                from: next,
                to,
                to_hash,
                logs,
                blocks,
                transactions,
                at_head,
                sent_at,
                journal,
            };
            inflight.push_back(self.decoder.send(range));
            while inflight.len() >= self.mailbox_capacity {
                Self::settle(inflight.next().await)?;
            }
            next = to + 1;
            prev_hash = Some(to_hash);
        }
    }

    /// The first block of the first journaled window that differs from what was indexed,
    /// given that block `last + 1` no longer links to the indexed block `last`: the window
    /// ends are compared with the chain, newest first. The fork itself may lie later inside
    /// that window; undoing the whole window and applying it again is exact either way.
    async fn find_fork(&self, last: u64) -> Result<u64, PipelineError> {
        let windows = crate::store::journal::windows(&self.db, self.chain.id).await?;
        for window in &windows {
            let end = window.window_end as u64;
            if end > last {
                continue;
            }
            match self.source.block(end).await {
                Ok(block) if format!("{:#x}", block.hash) == window.end_hash => return Ok(end + 1),
                Ok(_) | Err(RpcError::MissingBlock(_)) => {}
                Err(err) => return Err(err.into()),
            }
        }
        // No journaled window survived. If the block before the oldest window is still
        // canonical the fork is that window's start; otherwise the fork lies beyond the
        // journal, and naming a block before it makes the rollback refuse (nothing undone).
        let Some(oldest) = windows.last() else { return Ok(last) };
        let start = oldest.window_start as u64;
        if start == 0 {
            // Genesis is never reorganized: everything from the first window on is undone.
            return Ok(0);
        }
        let before = self.source.block(start.saturating_sub(1)).await?;
        if format!("{:#x}", before.hash) == oldest.start_parent_hash {
            Ok(start)
        } else {
            Ok(start.saturating_sub(1))
        }
    }

    fn settle(
        sent: Option<Result<Result<(), PipelineError>, MailboxError>>,
    ) -> Result<(), PipelineError> {
        match sent {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(PipelineError::MailboxClosed { actor: "decoder" }),
            None => Ok(()),
        }
    }
}
