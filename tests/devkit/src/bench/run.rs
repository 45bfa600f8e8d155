//! [`run`]: feeds a corpus through the indexer and measures it.
//!
//! Both sources run the service's own chain supervisor, fetcher, decoder and handler; they
//! differ only in where the fetcher reads the chain:
//!
//! - [`Source::Local`] reads the corpus file in process ([`CorpusSource`]), so nothing but
//!   indexing is measured;
//! - [`Source::Rpc`] reads it from a JSON-RPC endpoint serving the corpus
//!   ([`super::rpc_server`]), counting the requests it makes.
//!
//! What is reported: events per second, time per handler, flush time and count, cache hit
//! rate, peak RSS, database bytes per event, and RPC requests per 10k blocks.

use std::{
    collections::{BTreeMap, HashMap},
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use actix::prelude::*;
use alloy::primitives::Address;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};

use super::{
    BenchError,
    corpus::{CorpusHeader, CorpusReader},
    corpus_source::CorpusSource,
};
use ensemble::{
    chain::{ChainSupervisor, source::SharedSource, status::GetStatus},
    config::{ChainConfig, IndexerConfig},
    ens::role::ContractRole,
    rpc::RpcClient,
};

/// The mainnet namespace the corpus is generated for and indexed with.
const MAINNET_TOML: &str = include_str!("../../../../config/mainnet.toml");

#[derive(serde::Deserialize)]
struct Namespace {
    chains: Vec<ChainConfig>,
}

/// Chain 1 of `config/mainnet.toml`.
pub fn mainnet_chain() -> Result<ChainConfig, BenchError> {
    let ns: Namespace = toml::from_str(MAINNET_TOML)
        .map_err(|e| BenchError::Run(format!("config/mainnet.toml: {e}")))?;
    ns.chains
        .into_iter()
        .find(|c| c.id.get() == 1)
        .ok_or_else(|| BenchError::Run("config/mainnet.toml has no chain 1".into()))
}

/// Roles of mainnet's configured contracts.
pub fn mainnet_roles() -> Result<HashMap<Address, ContractRole>, BenchError> {
    Ok(mainnet_chain()?.contracts.iter().map(|c| (c.address, c.role)).collect())
}

/// Where the pipeline reads the corpus from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Source {
    /// The corpus file, read in process by the real fetcher (no JSON-RPC in between).
    Local,
    /// A local JSON-RPC endpoint serving the corpus, read by the real fetcher.
    Rpc,
}

impl Source {
    /// Name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Rpc => "rpc",
        }
    }
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The corpus file.
    pub corpus: PathBuf,
    /// Where to index (must be empty of chain 1).
    pub database_url: String,
    /// The source.
    pub source: Source,
    /// Indexer tuning (cache, flush size, mailbox capacity).
    pub indexer: IndexerConfig,
    /// Blocks per window.
    pub window: u64,
    /// With [`Source::Rpc`]: an endpoint already serving this corpus (`ensemble bench
    /// serve`, another process), so the server's memory and CPU are not counted as the
    /// run's; `None` serves it from this process.
    pub rpc_url: Option<String>,
}

/// Time spent in one event's handler.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandlerTime {
    /// Events handled.
    pub count: u64,
    /// Seconds in total.
    pub seconds: f64,
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Logs in the corpus.
    pub events: u64,
    /// Blocks in the corpus range.
    pub blocks: u64,
    /// Wall time from the first window to the last commit.
    pub seconds: f64,
    /// Time per event handler.
    pub handlers: BTreeMap<String, HandlerTime>,
    /// Flushes and the seconds they took.
    pub flushes: HandlerTime,
    /// Seconds spent building the deferred query indexes after the last commit (part of
    /// `seconds`).
    pub index_build_seconds: f64,
    /// Seconds of the flushes per table.
    pub flush_tables: BTreeMap<String, f64>,
    /// Seconds of the handler per phase (`ensemble_handler_phase_seconds`): what it computed
    /// and what it waited for.
    pub handler_phases: BTreeMap<String, f64>,
    /// Memory the rows of a flush held when it began, bytes: the mean and the largest.
    pub flush_bytes: (f64, f64),
    /// Cache hits / lookups.
    pub cache_hit_rate: f64,
    /// Keys the prefetch looked up in the database (the read cache held neither them nor
    /// their absence); the hit rate counts only the lookups after the prefetch.
    pub prefetch_reads: u64,
    /// Keys the filters of stored keys knew absent, without a query.
    pub known_absent: u64,
    /// Peak resident set of the process, bytes.
    pub peak_rss: u64,
    /// Database size after the run, bytes.
    pub database_bytes: u64,
    /// RPC requests per method.
    pub rpc_requests: BTreeMap<String, u64>,
    /// The handler's mailbox: decoded batches waiting while it applies, as the mean of its
    /// depth sampled during the run, and the mean time a batch waited there, seconds. Both
    /// near zero mean the handler waited for the decoder.
    pub handler_queue: (f64, f64),
}

impl RunReport {
    /// Events per second.
    pub fn events_per_second(&self) -> f64 {
        self.events as f64 / self.seconds.max(1e-9)
    }

    /// Database bytes per event.
    pub fn bytes_per_event(&self) -> f64 {
        self.database_bytes as f64 / self.events.max(1) as f64
    }

    /// RPC requests per 10k blocks of the range.
    pub fn requests_per_10k_blocks(&self) -> f64 {
        self.rpc_requests.values().sum::<u64>() as f64 * 10_000.0 / self.blocks.max(1) as f64
    }
}

/// Peak resident set size of this process (`VmHWM`), bytes.
pub fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()))
        })
        .map_or(0, |kb| kb * 1024)
}

/// Bytes the database occupies: the SQLite file with its WAL, or PostgreSQL's database size.
pub async fn database_bytes(db: &DatabaseConnection, url: &str) -> Result<u64, BenchError> {
    let query_err = |e: sea_orm::DbErr| BenchError::Run(format!("database size: {e}"));
    if url.starts_with("postgres") {
        let row = db
            .query_one_raw(Statement::from_string(
                db.get_database_backend(),
                "SELECT pg_database_size(current_database())::bigint AS bytes",
            ))
            .await
            .map_err(query_err)?;
        let bytes: i64 = row.map_or(Ok(0), |r| r.try_get("", "bytes")).map_err(query_err)?;
        return Ok(bytes as u64);
    }
    // Fold the WAL into the main file first so the size is the database's, not a log's.
    db.execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)").await.map_err(query_err)?;
    let path = url
        .trim_start_matches("sqlite://")
        .trim_start_matches("sqlite:")
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    let size = |p: String| std::fs::metadata(p).map_or(0, |m| m.len());
    Ok(size(path.clone()) + size(format!("{path}-wal")))
}

/// The metric samples of `name` (summary `_sum`/`_count` or counters), keyed by label set.
pub(crate) fn samples(text: &str, name: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?;
            let (labels, value) = match rest.strip_prefix('{') {
                Some(r) => {
                    let (labels, value) = r.split_once('}')?;
                    (labels.to_owned(), value)
                }
                None if rest.starts_with(' ') => (String::new(), rest),
                None => return None,
            };
            Some((labels, value.trim().parse().ok()?))
        })
        .collect()
}

/// The value of label `key` in a sample's label set.
pub(crate) fn label(labels: &str, key: &str) -> Option<String> {
    labels.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.trim_matches('"').to_owned())
    })
}

/// The largest flush of the page's summary window (`quantile="1"` of `ensemble_flush_bytes`).
/// A summary's quantiles cover only its recent samples, so [`run`] also reads this during the
/// run and keeps the largest.
fn largest_flush(text: &str) -> f64 {
    samples(text, "ensemble_flush_bytes")
        .into_iter()
        .filter(|(labels, _)| label(labels, "quantile").as_deref() == Some("1"))
        .map(|(_, v)| v)
        .fold(0.0, f64::max)
}

/// How often a run reads the largest flush off the metrics: well within the summaries' window
/// (three buckets of 20 s by default).
/// The depth of the handler's mailbox on the page.
fn handler_depth(text: &str) -> f64 {
    samples(text, "ensemble_mailbox_depth")
        .into_iter()
        .filter(|(labels, _)| label(labels, "actor").as_deref() == Some("handler"))
        .map(|(_, v)| v)
        .sum()
}

const FLUSH_SAMPLING: Duration = Duration::from_secs(10);

/// Reads the run's measurements off the rendered Prometheus page.
fn from_metrics(text: &str, report: &mut RunReport) {
    let mut handlers: BTreeMap<String, HandlerTime> = BTreeMap::new();
    for (labels, v) in samples(text, "ensemble_handler_seconds_sum") {
        handlers.entry(label(&labels, "event").unwrap_or_default()).or_default().seconds += v;
    }
    for (labels, v) in samples(text, "ensemble_handler_seconds_count") {
        handlers.entry(label(&labels, "event").unwrap_or_default()).or_default().count += v as u64;
    }
    report.handlers = handlers;
    let sum = |name: &str| samples(text, name).iter().map(|(_, v)| v).sum::<f64>();
    report.flushes = HandlerTime {
        count: sum("ensemble_flush_seconds_count") as u64,
        seconds: sum("ensemble_flush_seconds_sum"),
    };
    report.flush_tables = samples(text, "ensemble_flush_table_seconds_sum")
        .into_iter()
        .filter_map(|(labels, v)| Some((label(&labels, "entity")?, v)))
        .collect();
    for (labels, v) in samples(text, "ensemble_handler_phase_seconds_sum") {
        if let Some(phase) = label(&labels, "phase") {
            *report.handler_phases.entry(phase).or_default() += v;
        }
    }
    let flushes = sum("ensemble_flush_bytes_count").max(1.0);
    report.flush_bytes = (sum("ensemble_flush_bytes_sum") / flushes, largest_flush(text));
    let (hits, misses) = (sum("ensemble_cache_hits_total"), sum("ensemble_cache_misses_total"));
    report.cache_hit_rate = hits / (hits + misses).max(1.0);
    report.prefetch_reads = sum("ensemble_prefetch_reads_total") as u64;
    report.known_absent = sum("ensemble_key_filter_absent_total") as u64;
    let handler = |name: &str| {
        samples(text, name)
            .into_iter()
            .filter(|(labels, _)| label(labels, "actor").as_deref() == Some("handler"))
            .map(|(_, v)| v)
            .sum::<f64>()
    };
    report.handler_queue.1 = handler("ensemble_mailbox_wait_seconds_sum")
        / handler("ensemble_mailbox_wait_seconds_count").max(1.0);
    report.rpc_requests = samples(text, "ensemble_rpc_requests_total")
        .into_iter()
        .filter_map(|(labels, v)| Some((label(&labels, "event")?, v as u64)))
        .collect();
}

/// The chain config a run indexes with: mainnet's contracts over the corpus range.
fn bench_chain(
    header: &CorpusHeader,
    window: u64,
    rpc_url: Option<String>,
) -> Result<ChainConfig, BenchError> {
    let mut chain = mainnet_chain()?;
    chain.id = header.chain_id.into();
    chain.rpc_url = rpc_url;
    chain.start_block = header.first_block;
    chain.end_block = Some(header.last_block);
    chain.confirmations = 0;
    chain.max_block_range = window;
    // The whole corpus is final: no journal.
    chain.finality_depth = 0;
    chain.poll_interval_ms = 50;
    // The corpus spreads every contract's events over its whole range: the real deployment
    // blocks do not hold for it.
    for contract in &mut chain.contracts {
        contract.start_block = None;
        contract.end_block = None;
    }
    Ok(chain)
}

/// Runs the corpus through the indexer into `options.database_url`, which must hold no
/// checkpoint for the corpus chain (a fresh database).
pub async fn run(
    options: &RunOptions,
    progress: impl Fn(u64) + 'static,
) -> Result<RunReport, BenchError> {
    let handle = ensemble::metrics::install();
    ensemble::rpc::client::install_tls_provider();
    let reader = CorpusReader::open(&options.corpus)?;
    let header = *reader.header();
    let db = ensemble::store::database::connect(&options.database_url).await?;
    if ensemble::store::writer::read_checkpoint(&db, header.chain_id.into()).await?.is_some() {
        return Err(BenchError::Run(format!(
            "{} already holds chain {}: bench runs need a fresh database",
            options.database_url, header.chain_id
        )));
    }
    let started = Instant::now();
    // The service's policy on a fresh database: query indexes wait for the end of the
    // backfill, and their build is part of the time measured.
    if options.indexer.defer_query_indexes {
        ensemble::store::query_indexes::defer(&db).await?;
    }
    let largest = std::rc::Rc::new(std::cell::Cell::new(0.0_f64));
    let depths = std::rc::Rc::new(std::cell::Cell::new((0.0_f64, 0_u32)));
    let sampler = actix_rt::spawn({
        let (handle, largest, depths) = (handle.clone(), largest.clone(), depths.clone());
        async move {
            loop {
                tokio::time::sleep(FLUSH_SAMPLING).await;
                let page = handle.render();
                largest.set(largest.get().max(largest_flush(&page)));
                let (sum, count) = depths.get();
                depths.set((sum + handler_depth(&page), count + 1));
            }
        }
    });
    let indexed = match options.source {
        Source::Local => run_local(options, &header, db.clone(), progress).await,
        Source::Rpc => run_rpc(options, &header, db.clone(), progress).await,
    };
    sampler.abort();
    indexed?;
    let build_started = Instant::now();
    ensemble::store::query_indexes::build(&db).await?;
    let index_build_seconds = build_started.elapsed().as_secs_f64();
    let seconds = started.elapsed().as_secs_f64();
    let mut report = RunReport {
        events: header.logs,
        blocks: header.last_block - header.first_block + 1,
        seconds,
        index_build_seconds,
        ..RunReport::default()
    };
    from_metrics(&handle.render(), &mut report);
    report.flush_bytes.1 = report.flush_bytes.1.max(largest.get());
    let (depth_sum, depth_samples) = depths.get();
    report.handler_queue.0 = depth_sum / f64::from(depth_samples.max(1));
    report.peak_rss = peak_rss();
    report.database_bytes = database_bytes(&db, &options.database_url).await?;
    Ok(report)
}

/// Indexes the corpus in process: the chain's supervisor with its fetcher, decoder and
/// handler, reading the corpus file through a [`CorpusSource`] instead of a node.
async fn run_local(
    options: &RunOptions,
    header: &CorpusHeader,
    db: DatabaseConnection,
    progress: impl Fn(u64),
) -> Result<(), BenchError> {
    let source: SharedSource = Arc::new(CorpusSource::open(&options.corpus)?);
    let chain = bench_chain(header, options.window, None)?;
    let supervisor =
        ChainSupervisor::new(chain, options.indexer.clone(), db).with_source(source).start();
    until_indexed(&supervisor, header, progress).await
}

/// Indexes the corpus through JSON-RPC: served by `options.rpc_url`, or by a server started
/// here for the run.
async fn run_rpc(
    options: &RunOptions,
    header: &CorpusHeader,
    db: DatabaseConnection,
    progress: impl Fn(u64),
) -> Result<(), BenchError> {
    let (server, url) = match &options.rpc_url {
        Some(url) => {
            // Another process serves it: make sure it is this corpus's chain.
            let client = RpcClient::new(url, header.chain_id.into())
                .map_err(|e| BenchError::Run(format!("rpc url: {e}")))?;
            let head = client.block_number().await.map_err(|e| BenchError::Run(e.to_string()))?;
            if head != header.last_block {
                return Err(BenchError::Run(format!(
                    "{url} serves a chain whose head is {head}, not this corpus's last block {}",
                    header.last_block
                )));
            }
            (None, url.clone())
        }
        None => {
            let server = super::rpc_server::serve(&options.corpus).await?;
            let url = server.url();
            (Some(server), url)
        }
    };
    let chain = bench_chain(header, options.window, Some(url))?;
    let supervisor = ChainSupervisor::new(chain, options.indexer.clone(), db).start();
    let indexed = until_indexed(&supervisor, header, progress).await;
    if let Some(server) = server {
        server.stop().await;
    }
    indexed
}

/// Waits until `supervisor` has committed the corpus's last block, reporting the blocks done.
async fn until_indexed(
    supervisor: &Addr<ChainSupervisor>,
    header: &CorpusHeader,
    progress: impl Fn(u64),
) -> Result<(), BenchError> {
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let status = supervisor
            .send(GetStatus)
            .await
            .map_err(|_| BenchError::Run("chain supervisor stopped".into()))?;
        if let Some(error) = status.error {
            return Err(BenchError::Run(format!("indexing failed: {error}")));
        }
        progress(status.indexed_block.saturating_sub(header.first_block));
        if status.indexed_block >= header.last_block {
            return Ok(());
        }
    }
}

/// The report's markdown table header.
pub const RUN_HEADER: &str = "| date | engine | source | events | events/s | handler s | flushes (s) | index build s | cache hits | peak RSS MB | DB bytes/event | RPC req/10k blocks | command |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";

/// One `BENCHMARKS.md` row for `report`.
pub fn report_row(
    date: &str,
    engine: &str,
    source: Source,
    command: &str,
    report: &RunReport,
) -> String {
    let handler_secs: f64 = report.handlers.values().map(|h| h.seconds).sum();
    format!(
        "| {date} | {engine} | {} | {} | {:.0} | {:.1} | {} ({:.1}) | {:.1} | {:.1}% | {:.0} | {:.0} | {:.1} | `{command}` |\n",
        source.as_str(),
        report.events,
        report.events_per_second(),
        handler_secs,
        report.flushes.count,
        report.flushes.seconds,
        report.index_build_seconds,
        report.cache_hit_rate * 100.0,
        report.peak_rss as f64 / 1e6,
        report.bytes_per_event(),
        report.requests_per_10k_blocks(),
    )
}

/// Whether `path` looks like a corpus (for CLI errors before a long run).
pub fn check_corpus(path: &Path) -> Result<CorpusHeader, BenchError> {
    Ok(*CorpusReader::open(path)?.header())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_page_is_read_into_the_report() {
        let page = "# TYPE x summary\n\
            ensemble_handler_seconds_sum{chain=\"1\",event=\"NewOwner\"} 1.5\n\
            ensemble_handler_seconds_count{chain=\"1\",event=\"NewOwner\"} 10\n\
            ensemble_flush_seconds_sum{chain=\"1\"} 2\n\
            ensemble_flush_seconds_count{chain=\"1\"} 4\n\
            ensemble_flush_bytes{chain=\"1\",quantile=\"0.5\"} 100\n\
            ensemble_flush_bytes{chain=\"1\",quantile=\"1\"} 300\n\
            ensemble_flush_bytes_sum{chain=\"1\"} 800\n\
            ensemble_flush_bytes_count{chain=\"1\"} 4\n\
            ensemble_cache_hits_total{entity=\"domain\"} 3\n\
            ensemble_cache_misses_total{entity=\"domain\"} 1\n\
            ensemble_mailbox_depth{chain=\"1\",actor=\"handler\"} 3\n\
            ensemble_mailbox_depth{chain=\"1\",actor=\"decoder\"} 5\n\
            ensemble_mailbox_wait_seconds_sum{chain=\"1\",actor=\"handler\"} 0.5\n\
            ensemble_mailbox_wait_seconds_count{chain=\"1\",actor=\"handler\"} 20\n\
            ensemble_mailbox_wait_seconds_sum{chain=\"1\",actor=\"decoder\"} 9\n\
            ensemble_mailbox_wait_seconds_count{chain=\"1\",actor=\"decoder\"} 20\n\
            ensemble_rpc_requests_total{chain=\"1\",event=\"eth_getLogs\"} 7\n";
        let mut report = RunReport { blocks: 10_000, ..RunReport::default() };
        from_metrics(page, &mut report);
        assert_eq!(report.handlers["NewOwner"], HandlerTime { count: 10, seconds: 1.5 });
        assert_eq!(report.flushes, HandlerTime { count: 4, seconds: 2.0 });
        assert_eq!(report.flush_bytes, (200.0, 300.0), "mean and largest flush");
        assert!((report.cache_hit_rate - 0.75).abs() < 1e-9);
        assert_eq!(report.rpc_requests["eth_getLogs"], 7);
        assert!((report.handler_queue.1 - 0.025).abs() < 1e-9, "the handler's mean wait");
        assert_eq!(handler_depth(page), 3.0);
        assert!((report.requests_per_10k_blocks() - 7.0).abs() < 1e-9);
    }
}
