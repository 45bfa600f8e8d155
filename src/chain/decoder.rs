//! [`Decoder`]: turns a fetched block range into typed events and forwards them to the
//! handler. Messages: [`FetchedRange`] from the fetcher.
//!
//! A log that does not decode is counted (`ensemble_logs_undecodable_total`) and logged with
//! its coordinates; the chain goes on. The value-less legacy `TextChanged` is completed here
//! with `eth_call text(node, key)` at the log's block, answered from the `rpc_cache` table when
//! it was asked before; when the node cannot serve that historical state the value stays
//! unknown, counted (`ensemble_text_values_unknown_total`) and logged.

use std::{collections::HashMap, sync::Arc};

use actix::prelude::*;
use alloy::{
    primitives::{Address, B256, keccak256},
    rpc::types::Log,
    sol_types::SolCall,
};
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
}

impl Decoder {
    /// A decoder running `job`, with its own mailbox gauge and capacity.
    pub fn new(job: DecodeJob, gauge: MailboxGauge, mailbox_capacity: usize) -> Self {
        Self { job: Arc::new(job), gauge, mailbox_capacity, poisoned: false }
    }
}

impl Actor for Decoder {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(self.mailbox_capacity);
    }
}

impl DecodeJob {
    async fn run(self: Arc<Self>, range: FetchedRange) -> Result<(), PipelineError> {
        let chain = self.chain_id.to_string();
        let mut events = Vec::with_capacity(range.logs.len());
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
            for mut event in decoded {
                if is_legacy_text(log.data())
                    && let EnsEvent::TextChanged { node, key, value } = &mut event
                {
                    *value = self.legacy_text(meta.address, *node, key, block, log_index).await?;
                }
                events.push(DecodedEvent { meta: meta.clone(), event });
            }
        }
        let batch = DecodedBatch {
            from: range.from,
            to: range.to,
            to_hash: format!("{:#x}", range.to_hash),
            events,
            at_head: range.at_head,
            sent_at: self.handler_gauge.enqueued(),
            journal: range.journal,
        };
        let sent = self.handler.send(batch).await;
        if sent.is_err() {
            self.handler_gauge.undo();
        }
        sent.map_err(|_| PipelineError::MailboxClosed { actor: "handler" })?
    }

    /// The value of a legacy `TextChanged`, from the RPC cache or the chain.
    async fn legacy_text(
        &self,
        resolver: Address,
        node: B256,
        key: &str,
        block: &BlockInfo,
        log_index: u64,
    ) -> Result<Option<String>, PipelineError> {
        let call = Resolver::textCall { node, key: key.to_owned() }.abi_encode();
        // Keyed by block hash, and asked by block hash: after a reorg the same number is
        // another block with possibly another answer.
        let cache_key = format!(
            "{:#x}",
            keccak256(
                [
                    &self.chain_id.get().to_be_bytes()[..],
                    resolver.as_slice(),
                    block.hash.as_slice(),
                    &call
                ]
                .concat()
            )
        );
        if let Some(hit) = crate::store::rpc_cache::read(&self.db, &cache_key).await? {
            return Ok(serde_json::from_str(&hit).ok());
        }
        match self.source.call_at(resolver, call.into(), block.hash).await {
            Ok(bytes) => {
                let value = Resolver::textCall::abi_decode_returns(&bytes).ok();
                let json = serde_json::to_string(&value).unwrap_or_else(|_| "null".into());
                crate::store::rpc_cache::write(&self.db, self.chain_id, cache_key, json).await?;
                Ok(value)
            }
            Err(err) if !err.is_retryable() => {
                metrics::counter!("ensemble_text_values_unknown_total", "chain" => self.chain_id.to_string())
                    .increment(1);
                tracing::warn!(
                    target: "indexer::decoder",
                    chain = self.chain_id.get(),
                    block = block.number,
                    log_index,
                    key,
                    error = %err,
                    "Legacy text value unavailable; stored as unknown"
                );
                Ok(None)
            }
            Err(err) => Err(err.into()),
        }
    }
}

/// Finish the queued ranges, then accept nothing more.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct DrainDecoder;

impl actix::Handler<DrainDecoder> for Decoder {
    type Result = AtomicResponse<Self, ()>;

    fn handle(&mut self, _: DrainDecoder, _: &mut Self::Context) -> Self::Result {
        // Atomic: runs only after every range queued before it has been handled.
        self.poisoned = true;
        AtomicResponse::new(Box::pin(fut::ready(())))
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
        AtomicResponse::new(Box::pin(Arc::clone(&self.job).run(range).into_actor(self).map(
            |result, act, _| {
                if result.is_err() {
                    act.poisoned = true;
                }
                result
            },
        )))
    }
}
