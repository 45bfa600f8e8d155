//! Prometheus metrics: the recorder and the metric catalogue.
//!
//! Metric names are in base units (seconds, rows, blocks) with labels `chain`, `actor`,
//! `contract`, `event` (and `entity` for cache lookups):
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `ensemble_mailbox_depth` / `ensemble_mailbox_capacity` | gauge | chain, actor |
//! | `ensemble_actor_messages_total` | counter | chain, actor |
//! | `ensemble_actor_restarts_total` | counter | chain, actor |
//! | `ensemble_events_processed_total` / `ensemble_events_skipped_total` | counter | chain, event |
//! | `ensemble_logs_undecodable_total` | counter | chain, contract |
//! | `ensemble_text_values_unknown_total` | counter | chain |
//! | `ensemble_handler_seconds`, `ensemble_flush_seconds`, `ensemble_flush_rows` | summary | chain (, event) |
//! | `ensemble_chain_head_block` / `ensemble_chain_indexed_block` | gauge | chain |
//! | `ensemble_rpc_requests_total` / `_retries_total` / `_errors_total` | counter | chain, event (= method) |
//! | `ensemble_cache_hits_total` / `ensemble_cache_misses_total` | counter | entity |
//!
//! The `metrics` facade has one process-wide recorder by design; it is installed once and
//! the handle is passed to the HTTP layer explicitly.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the Prometheus recorder (once per process) and returns its handle.
pub fn install() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            // Another recorder may exist in a test binary; metrics then go there and the
            // handle still renders (an empty page) rather than failing startup.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}
