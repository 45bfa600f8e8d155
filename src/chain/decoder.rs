//! [`Decoder`]: turns a fetched block range into typed events and forwards them to the
//! handler. Messages: [`FetchedRange`] from the fetcher.
//!
//! Decoding runs ahead of the handler: decoded batches wait in the handler's mailbox while it
//! applies the one before, as many as the mailbox holds, and the decoder learns each batch's
//! outcome when it needs the room, or at once for a batch at the chain's head or journaled
//! (so a failure there is reported before the fetcher idles).
//!
//! A log that does not decode is counted (`ensemble_logs_undecodable_total`) and logged with
//! its coordinates; the chain goes on. The value-less legacy `TextChanged` is completed here
//! with `eth_call text(node, key)` at the log's block, answered from the `rpc_cache` table when
//! it was asked before; when the node cannot serve that historical state the value stays
//! unknown, counted (`ensemble_text_values_unknown_total`) and logged. A range's values are
//! looked up together: one read of the cache, the calls it misses several at a time, one
//! write of their answers.

use std::{
    collections::{HashMap, VecDeque},
    sync::Arc,
};

use actix::prelude::*;
use alloy::{
    primitives::{Address, B256, keccak256},
    rpc::types::Log,
    sol_types::SolCall,
};
use futures::{StreamExt, TryStreamExt, future::LocalBoxFuture};
use sea_orm::DatabaseConnection;

use super::{
    PipelineError,
    handler::{DecodedBatch, Handler},
    mailbox::MailboxGauge,
    source::SharedSource,
};
use crate::{
    ChainId,
    ens::{
        DecodedEvent, EnsEvent, EventMeta,
        abi::Resolver,
        decode::{decode_log, is_legacy_text},
        role::ContractRole,
    },
    rpc::{BlockInfo, TxParties},
};

/// A fetched block range.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), PipelineError>")]
pub struct FetchedRange {
    /// First block.
    pub from: u64,
    /// Last block (inclusive).
    pub to: u64,
    /// Hash of `to`.
    pub to_hash: B256,
    /// Logs in chain order.
    pub logs: Vec<Log>,
    /// Headers of every block that has a log.
    pub blocks: HashMap<u64, BlockInfo>,
    /// Sender and recipient of every transaction that has a log.
    pub transactions: HashMap<B256, TxParties>,
    /// Whether `to` is the target head.
    pub at_head: bool,
    /// When it was sent (mailbox wait time).
    pub sent_at: std::time::Instant,
    /// The journal window, when the range is above finality.
    pub journal: Option<crate::store::journal::JournalWindow>,
}

/// The decoder actor of one chain.
#[derive(Debug)]
pub struct Decoder {
    job: Arc<DecodeJob>,
    gauge: MailboxGauge,
    mailbox_capacity: usize,
    poisoned: bool,
    applying: Applying,
}

/// Batches handed to the handler whose outcome is not known yet, oldest first.
#[derive(Default)]
struct Applying(VecDeque<LocalBoxFuture<'static, Result<(), PipelineError>>>);

impl std::fmt::Debug for Applying {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Applying({} batches)", self.0.len())
    }
}

impl Applying {
    /// Waits for the outcomes of all but the newest `keep` batches, oldest first; the first
    /// failure ends the wait.
    async fn settle(&mut self, keep: usize) -> Result<(), PipelineError> {
        while self.0.len() > keep {
            if let Some(outcome) = self.0.pop_front() {
                outcome.await?;
            }
        }
        Ok(())
    }
}

/// What decoding a range needs; shared with the in-flight future, which must be `'static`.
#[derive(Debug)]
pub struct DecodeJob {
    /// Chain id.
    pub chain_id: ChainId,
    /// Roles of the configured contracts; any other address is read as a resolver.
    pub roles: HashMap<Address, ContractRole>,
    /// Where the chain is read from, for legacy text values.
    pub source: SharedSource,
    /// The database, for the RPC cache.
    pub db: DatabaseConnection,
    /// Next actor.
    pub handler: Addr<Handler>,
    /// Depth gauge of the handler's mailbox.
    pub handler_gauge: MailboxGauge,
    /// Legacy text values asked of the chain at once.
    pub max_concurrent_calls: usize,
}

impl Decoder {
    /// A decoder running `job`, with its own mailbox gauge and capacity.
    pub fn new(job: DecodeJob, gauge: MailboxGauge, mailbox_capacity: usize) -> Self {
        Self {
            job: Arc::new(job),
            gauge,
            mailbox_capacity,
            poisoned: false,
            applying: Applying::default(),
        }
    }
}

impl Actor for Decoder {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox_capacity);
    }
}

impl DecodeJob {
    /// Decodes `range`, hands it to the handler and waits for the outcomes `applying` must
    /// not run ahead of: every one for a batch at the head or journaled, otherwise all but
    /// the newest `ahead`.
    async fn run(
        self: Arc<Self>,
        range: FetchedRange,
        applying: &mut Applying,
        ahead: usize,
    ) -> Result<(), PipelineError> {
        let batch = self.decode(range).await?;
        let keep = if batch.at_head || batch.journal.is_some() { 0 } else { ahead };
        applying.0.push_back(self.hand_over(batch));
        applying.settle(keep).await
    }

    /// Sends `batch` to the handler; the future is its outcome. The message is in the
    /// handler's mailbox once this returns, so batches arrive in the order they are handed.
    fn hand_over(&self, batch: DecodedBatch) -> LocalBoxFuture<'static, Result<(), PipelineError>> {
        let sent = self.handler.send(batch);
        let gauge = self.handler_gauge.clone();
        Box::pin(async move {
            match sent.await {
                Ok(outcome) => outcome,
                Err(_) => {
                    gauge.undo();
                    Err(PipelineError::MailboxClosed { actor: "handler" })
                }
            }
        })
    }

    /// The typed events of `range`, as the batch the handler applies.
    async fn decode(&self, range: FetchedRange) -> Result<DecodedBatch, PipelineError> {
        let chain = self.chain_id.to_string();
        let mut events = Vec::with_capacity(range.logs.len());
        let mut texts = Vec::new();
        for log in &range.logs {
            let (Some(number), Some(log_index)) = (log.block_number, log.log_index) else {
                // Pending logs carry no coordinates; eth_getLogs over mined blocks never
                // returns them, so one here is a misbehaving node.
                metrics::counter!("ensemble_logs_undecodable_total", "chain" => chain.clone(), "contract" => "unknown")
                    .increment(1);
                tracing::warn!(target: "indexer::decoder", chain = self.chain_id.get(), "Log without block coordinates");
                continue;
            };
            let Some(block) = range.blocks.get(&number) else {
                return Err(crate::rpc::RpcError::MissingBlock(number).into());
            };
            let role = self.roles.get(&log.address()).copied();
            let contract = role.map_or("resolver", ContractRole::as_str);
            let decoded = match decode_log(role, log.data()) {
                Ok(decoded) => decoded,
                Err(err) => {
                    metrics::counter!("ensemble_logs_undecodable_total", "chain" => chain.clone(), "contract" => contract)
                        .increment(1);
                    tracing::warn!(
                        target: "indexer::decoder",
                        chain = self.chain_id.get(),
                        block = number,
                        log_index,
                        address = %log.address(),
                        error = %err,
                        "Undecodable log"
                    );
                    continue;
                }
            };
            let tx_hash = log.transaction_hash.unwrap_or_default();
            let Some(parties) = range.transactions.get(&tx_hash) else {
                return Err(crate::rpc::RpcError::Permanent(format!(
                    "transaction {tx_hash:#x} of a log is not in block {number}"
                ))
                .into());
            };
            let meta = EventMeta {
                chain_id: self.chain_id,
                block_number: number,
                block_hash: block.hash,
                timestamp: block.timestamp,
                tx_hash,
                tx_index: log.transaction_index.unwrap_or_default(),
                log_index,
                address: log.address(),
                tx_from: parties.from,
                tx_to: parties.to,
                log: Arc::new(log.data().clone()),
            };
            for event in decoded {
                if is_legacy_text(log.data())
                    && let EnsEvent::TextChanged { node, key, .. } = &event
                {
                    texts.push(LegacyText {
                        at: events.len(),
                        resolver: meta.address,
                        call: Resolver::textCall { node: *node, key: key.clone() }.abi_encode(),
                        key: key.clone(),
                        block: *block,
                        log_index,
                    });
                }
                events.push(DecodedEvent { meta: meta.clone(), event });
            }
        }
        for (at, value) in self.legacy_texts(texts).await? {
            if let EnsEvent::TextChanged { value: slot, .. } = &mut events[at].event {
                *slot = value;
            }
        }
        Ok(DecodedBatch {
            from: range.from,
            to: range.to,
            to_hash: format!("{:#x}", range.to_hash),
            events,
            at_head: range.at_head,
            sent_at: self.handler_gauge.enqueued(),
            journal: range.journal,
        })
    }

    /// The values of a range's legacy `TextChanged` events, by their place in the range: from
    /// the RPC cache in one read, the rest from the chain, several calls at a time, and what
    /// the chain answered written to the cache in one statement.
    async fn legacy_texts(
        &self,
        texts: Vec<LegacyText>,
    ) -> Result<Vec<(usize, Option<String>)>, PipelineError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = texts.iter().map(|t| t.cache_key(self.chain_id)).collect();
        let cached = crate::store::rpc_cache::read_many(&self.db, &keys).await?;
        let mut values = Vec::with_capacity(texts.len());
        let mut missing = Vec::new();
        for (text, key) in texts.into_iter().zip(keys) {
            match cached.get(&key) {
                Some(hit) => values.push((text.at, serde_json::from_str(hit).ok().flatten())),
                None => missing.push((text, key)),
            }
        }
        let asked: Vec<(usize, String, (Option<String>, bool))> = futures::stream::iter(missing)
            .map(|(text, key)| async move {
                self.legacy_text(&text).await.map(|value| (text.at, key, value))
            })
            .buffer_unordered(self.max_concurrent_calls.max(1))
            .try_collect()
            .await?;
        let mut answered = Vec::new();
        for (at, key, (value, from_chain)) in asked {
            if from_chain {
                let json = serde_json::to_string(&value).unwrap_or_else(|_| "null".into());
                answered.push((key, json));
            }
            values.push((at, value));
        }
        crate::store::rpc_cache::write_many(&self.db, self.chain_id, answered).await?;
        Ok(values)
    }

    /// The value of one legacy `TextChanged` from the chain, and whether the chain answered
    /// (an answer is kept, even one that does not decode); no value when the node cannot
    /// serve it (counted and logged).
    async fn legacy_text(
        &self,
        text: &LegacyText,
    ) -> Result<(Option<String>, bool), PipelineError> {
        match self.source.call_at(text.resolver, text.call.clone().into(), text.block.hash).await {
            Ok(bytes) => Ok((Resolver::textCall::abi_decode_returns(&bytes).ok(), true)),
            Err(err) if !err.is_retryable() => {
                metrics::counter!("ensemble_text_values_unknown_total", "chain" => self.chain_id.to_string())
                    .increment(1);
                tracing::warn!(
                    target: "indexer::decoder",
                    chain = self.chain_id.get(),
                    block = text.block.number,
                    log_index = text.log_index,
                    key = text.key,
                    error = %err,
                    "Legacy text value unavailable; stored as unknown"
                );
                Ok((None, false))
            }
            Err(err) => Err(err.into()),
        }
    }
}

/// A legacy `TextChanged` of a range, whose value is asked of the resolver.
#[derive(Debug)]
struct LegacyText {
    /// Its place among the range's events.
    at: usize,
    resolver: Address,
    /// `text(node, key)`, encoded.
    call: Vec<u8>,
    /// The key, for the log when the node cannot answer.
    key: String,
    block: BlockInfo,
    log_index: u64,
}

impl LegacyText {
    /// Its key in the RPC cache: keyed by block hash, and asked by block hash, since after a
    /// reorg the same number is another block with possibly another answer.
    fn cache_key(&self, chain_id: ChainId) -> String {
        format!(
            "{:#x}",
            keccak256(
                [
                    &chain_id.get().to_be_bytes()[..],
                    self.resolver.as_slice(),
                    self.block.hash.as_slice(),
                    &self.call
                ]
                .concat()
            )
        )
    }
}

/// Finish the queued ranges, then accept nothing more.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct DrainDecoder;

impl actix::Handler<DrainDecoder> for Decoder {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, _: DrainDecoder, _: &mut Self::Context) -> Self::Result {
        // Atomic: runs only after every range queued before it has been handled; then waits
        // until the handler has applied every batch handed to it. A batch that failed closed
        // the handler, and the handler's own drain reports that.
        self.poisoned = true;
        let mut applying = std::mem::take(&mut self.applying);
        AtomicResponse::new(Box::pin(
            async move {
                while let Some(outcome) = applying.0.pop_front() {
                    let _ = outcome.await;
                }
            }
            .into_actor(self),
        ))
    }
}

impl actix::Handler<FetchedRange> for Decoder {
    type Result = AtomicResponse<Self, Result<(), PipelineError>>;

    fn handle(&mut self, range: FetchedRange, _: &mut Self::Context) -> Self::Result {
        self.gauge.dequeued(range.sent_at);
        if self.poisoned {
            return AtomicResponse::new(Box::pin(fut::ready(Err(PipelineError::Poisoned {
                actor: "decoder",
            }))));
        }
        // The outcomes move into the future and back: the handler is atomic, so no other
        // message of this actor runs in between.
        let mut applying = std::mem::take(&mut self.applying);
        let job = Arc::clone(&self.job);
        // The handler's mailbox has the decoder's capacity (`indexer.mailbox_capacity`). With
        // at most that many batches unanswered, none is ever sent to a full mailbox: actix
        // would hold such a message in its request until polled, and a later batch could
        // overtake it.
        let ahead = self.mailbox_capacity.saturating_sub(1);
        let work = async move {
            let result = job.run(range, &mut applying, ahead).await;
            (result, applying)
        };
        AtomicResponse::new(Box::pin(work.into_actor(self).map(|(result, applying), act, _| {
            act.applying = applying;
            if result.is_err() {
                act.poisoned = true;
            }
            result
        })))
    }
}
