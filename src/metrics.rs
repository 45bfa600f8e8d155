//! Prometheus metrics: the recorder and the metric catalogue.
//!
//! Metric names are in base units (seconds, rows, blocks) with labels `chain`, `actor`,
//! `contract`, `event` (and `entity` for cache lookups, `phase` for the handler's phases):
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `ensemble_mailbox_depth` / `ensemble_mailbox_capacity` | gauge | chain, actor |
//! | `ensemble_mailbox_wait_seconds` | summary | chain, actor |
//! | `ensemble_actor_messages_received_total` / `_sent_total` | counter | chain, actor |
//! | `ensemble_actor_restarts_total` | counter | chain, actor |
//! | `ensemble_events_processed_total` / `ensemble_events_skipped_total` | counter | chain, event |
//! | `ensemble_logs_undecodable_total` | counter | chain, contract |
//! | `ensemble_text_values_unknown_total` | counter | chain |
//! | `ensemble_handler_seconds`, `ensemble_flush_seconds`, `ensemble_flush_rows`, `ensemble_flush_bytes` | summary | chain (, event) |
//! | `ensemble_handler_phase_seconds` | summary | chain, phase (`prefetch`, `apply`, `batch_end`, `write_wait`, `write_handover`) |
//! | `ensemble_flush_table_seconds` | summary | entity (a table, or `begin`, `journal`, `commit`) |
//! | `ensemble_query_indexes_deferred` | gauge | |
//! | `ensemble_chain_head_block` / `_finalized_block` / `_indexed_block` / `_lag_blocks` | gauge | chain |
//! | `ensemble_rpc_requests_total` / `_retries_total` / `_errors_total` | counter | chain, event (= method) |
//! | `ensemble_cache_hits_total` / `ensemble_cache_misses_total` | counter | entity |
//! | `ensemble_prefetch_reads_total` | counter | entity |
//! | `ensemble_key_filter_absent_total` | counter | entity |
//! | `ensemble_fetch_cache_windows_total` | counter | chain, outcome (`hit`, `stored`, `full`) |
//! | `ensemble_fetch_cache_bytes` | gauge | chain |
//!
//! The `metrics` facade has one process-wide recorder by design; it is installed once and
//! the handle is passed to the HTTP layer explicitly.

use std::{sync::OnceLock, time::Duration};

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use crate::ChainId;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// How often the recorder folds the samples recorded since into its summaries.
///
/// Why: the recorder keeps every histogram sample until then, and without upkeep only a
/// scrape of `/metrics` folds them, so a process nobody scrapes grows by every event's
/// samples (the handler's time per event, each message's mailbox wait). At 1.5M events that
/// was 21 MB of the heap's peak (heaptrack, BENCHMARKS.md, the record-key runs), and it grows
/// without bound.
pub const UPKEEP_INTERVAL: Duration = Duration::from_secs(1);

/// Installs the Prometheus recorder (once per process), starts its upkeep thread
/// ([`UPKEEP_INTERVAL`]) and returns its handle.
pub fn install() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            // Another recorder may exist in a test binary; metrics then go there and the
            // handle still renders (an empty page) rather than failing startup.
            let _ = metrics::set_global_recorder(recorder);
            describe();
            metrics::gauge!("ensemble_query_indexes_deferred").increment(0.0);
            let upkeep = handle.clone();
            let started =
                std::thread::Builder::new().name("metrics-upkeep".into()).spawn(move || {
                    loop {
                        std::thread::sleep(UPKEEP_INTERVAL);
                        upkeep.run_upkeep();
                    }
                });
            if let Err(err) = started {
                tracing::warn!(
                    target: "metrics",
                    error = %err,
                    "No metrics upkeep thread: histogram samples are folded only when scraped"
                );
            }
            handle
        })
        .clone()
}

/// RPC methods the indexer calls, each a value of the RPC counters' `event` label.
pub const RPC_METHODS: [&str; 5] =
    ["eth_blockNumber", "eth_call", "eth_chainId", "eth_getBlockByNumber", "eth_getLogs"];

/// Creates the counters of one chain at zero, so that a dashboard or an alert sees every
/// documented series from the start, not only after its first event (a rate over a series
/// that does not exist yet is no data, not zero). `contracts` are the roles of the chain's
/// contracts (`resolver` is added: resolver events come from any address).
pub fn register_chain(chain: ChainId, contracts: &[&'static str]) {
    let chain = chain.to_string();
    metrics::counter!("ensemble_actor_restarts_total", "chain" => chain.clone(), "actor" => "pipeline")
        .absolute(0);
    metrics::counter!("ensemble_reorgs_total", "chain" => chain.clone()).absolute(0);
    metrics::counter!("ensemble_text_values_unknown_total", "chain" => chain.clone()).absolute(0);
    for contract in contracts.iter().copied().chain(["resolver", "unknown"]) {
        metrics::counter!("ensemble_logs_undecodable_total", "chain" => chain.clone(), "contract" => contract)
            .absolute(0);
    }
    for method in RPC_METHODS {
        for name in [
            "ensemble_rpc_requests_total",
            "ensemble_rpc_retries_total",
            "ensemble_rpc_errors_total",
        ] {
            metrics::counter!(name, "chain" => chain.clone(), "event" => method).absolute(0);
        }
    }
    metrics::gauge!("ensemble_chain_lag_blocks", "chain" => chain.clone()).increment(0.0);
    metrics::gauge!("ensemble_chain_head_block", "chain" => chain.clone()).increment(0.0);
    metrics::gauge!("ensemble_chain_indexed_block", "chain" => chain).increment(0.0);
}

/// HELP text and units of every metric (Prometheus tooling expects them).
fn describe() {
    describe_counter!(
        "ensemble_resolutions_total",
        Unit::Count,
        "Resolutions answered, by kind (forward, reverse) and source (index, index_cached, live)."
    );
    describe_counter!(
        "ensemble_resolution_errors_total",
        Unit::Count,
        "Resolutions that failed as a whole, by kind and error code."
    );
    describe_histogram!(
        "ensemble_resolution_seconds",
        Unit::Seconds,
        "Time to answer one resolution, by kind and source."
    );
    describe_gauge!(
        "ensemble_mailbox_depth",
        Unit::Count,
        "Messages waiting in an actor's mailbox."
    );
    describe_gauge!("ensemble_mailbox_capacity", Unit::Count, "Capacity of an actor's mailbox.");
    describe_histogram!(
        "ensemble_mailbox_wait_seconds",
        Unit::Seconds,
        "Time a message waited in an actor's mailbox."
    );
    describe_counter!(
        "ensemble_actor_messages_received_total",
        Unit::Count,
        "Messages an actor took from its mailbox."
    );
    describe_counter!(
        "ensemble_actor_messages_sent_total",
        Unit::Count,
        "Data messages an actor sent downstream."
    );
    describe_counter!(
        "ensemble_actor_restarts_total",
        Unit::Count,
        "Pipeline restarts (failures and admin restarts)."
    );
    describe_counter!("ensemble_events_processed_total", Unit::Count, "ENS events applied.");
    describe_counter!(
        "ensemble_events_skipped_total",
        Unit::Count,
        "Events skipped because they name an unknown node or registration."
    );
    describe_counter!(
        "ensemble_logs_undecodable_total",
        Unit::Count,
        "Logs with a consumed topic whose body does not decode."
    );
    describe_counter!(
        "ensemble_text_values_unknown_total",
        Unit::Count,
        "Legacy text values the node could not serve."
    );
    describe_histogram!("ensemble_handler_seconds", Unit::Seconds, "Time to apply one event.");
    describe_histogram!("ensemble_flush_seconds", Unit::Seconds, "Time of one flush transaction.");
    describe_histogram!(
        "ensemble_handler_phase_seconds",
        Unit::Seconds,
        "Time the handler spent on one phase of a batch or flush: prefetch, apply, batch_end, write_wait, write_handover."
    );
    describe_gauge!(
        "ensemble_query_indexes_deferred",
        Unit::Count,
        "Query indexes set aside for the first backfill and not built yet."
    );
    describe_histogram!(
        "ensemble_flush_table_seconds",
        Unit::Seconds,
        "Time a flush spent writing one table, or on its begin, journal or commit."
    );
    describe_histogram!("ensemble_flush_rows", Unit::Count, "Rows written by one flush.");
    describe_histogram!(
        "ensemble_flush_bytes",
        Unit::Bytes,
        "Memory the rows of one flush held when it began (estimated from the rows)."
    );
    describe_gauge!("ensemble_chain_head_block", Unit::Count, "Latest block the endpoint reports.");
    describe_gauge!(
        "ensemble_chain_indexed_block",
        Unit::Count,
        "Last block committed to the database."
    );
    describe_gauge!(
        "ensemble_chain_finalized_block",
        Unit::Count,
        "Latest block the endpoint reports as finalized."
    );
    describe_gauge!(
        "ensemble_chain_lag_blocks",
        Unit::Count,
        "Blocks between the targeted head and the last committed block."
    );
    describe_counter!("ensemble_reorgs_total", Unit::Count, "Reorgs detected and rolled back.");
    describe_histogram!("ensemble_reorg_depth_blocks", Unit::Count, "Blocks undone per reorg.");
    describe_counter!(
        "ensemble_rpc_requests_total",
        Unit::Count,
        "RPC calls made, by method (label event)."
    );
    describe_counter!(
        "ensemble_rpc_retries_total",
        Unit::Count,
        "RPC calls retried after a transient failure."
    );
    describe_counter!(
        "ensemble_rpc_errors_total",
        Unit::Count,
        "RPC calls that failed after retries."
    );
    describe_counter!(
        "ensemble_fetch_cache_windows_total",
        Unit::Count,
        "Final windows read from the fetch cache (hit), stored in it (stored), or left out because it is full (full)."
    );
    describe_gauge!(
        "ensemble_fetch_cache_bytes",
        Unit::Bytes,
        "Bytes of windows a chain's fetch cache holds."
    );
    describe_counter!("ensemble_cache_hits_total", Unit::Count, "Entity cache hits.");
    describe_counter!("ensemble_cache_misses_total", Unit::Count, "Entity cache misses.");
    describe_counter!(
        "ensemble_prefetch_reads_total",
        Unit::Count,
        "Keys a batch's prefetch looked up in the database: neither dirty nor cached."
    );
    describe_counter!(
        "ensemble_key_filter_absent_total",
        Unit::Count,
        "Keys the handlers read that the filter of the chain's stored keys knew absent, without a query."
    );
}
