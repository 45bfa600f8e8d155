//! `bench chain`: the devnet scenario played at scale on anvil, then indexed through JSON-RPC
//! by the service in this process, from its start to `/ready` (backfill done, query indexes
//! built), as a user meets Ensemble first. Runs go into fresh databases one after the other:
//! the first fills the fetch cache, the second re-indexes from it. Each reports events/s, the
//! requests the node served, the node's CPU seconds and the process's peak RSS.

use std::{
    collections::BTreeMap,
    path::PathBuf,
    time::{Duration, Instant},
};

use ensemble::config::Config;

use super::BenchError;
use crate::devnet::{Anvil, Driver, Scenario, scenario::ScenarioOptions};

/// What `bench chain` is told.
#[derive(Clone, Debug)]
pub struct ChainOptions {
    /// `.eth` names the scenario registers (about ten events each).
    pub names: usize,
    /// Names per block in the scenario's registration phases.
    pub per_block: usize,
    /// The databases of the runs, one fresh database each.
    pub databases: Vec<String>,
    /// The fetch cache directory the runs share.
    pub fetch_cache: PathBuf,
}

/// One run: indexing the chain from the service's start to `/ready`.
#[derive(Clone, Debug, Default)]
pub struct ChainRun {
    /// Logs indexed (events applied or skipped).
    pub events: u64,
    /// Wall time from the start to `/ready`, seconds.
    pub seconds: f64,
    /// Requests the node served, by method.
    pub requests: BTreeMap<String, u64>,
    /// CPU seconds the node (anvil) spent during the run.
    pub node_cpu_seconds: f64,
    /// Peak resident set of this process during the run, bytes.
    pub peak_rss: u64,
    /// Windows read from the fetch cache.
    pub cache_hits: u64,
}

/// The chain and its runs.
#[derive(Clone, Debug, Default)]
pub struct ChainReport {
    /// Blocks of the chain.
    pub blocks: u64,
    /// Seconds the scenario took to play.
    pub scenario_seconds: f64,
    /// The runs, in order.
    pub runs: Vec<ChainRun>,
}

impl ChainRun {
    /// Events per second.
    pub fn events_per_second(&self) -> f64 {
        self.events as f64 / self.seconds.max(1e-9)
    }

    /// Requests per 10,000 blocks of a chain of `blocks`.
    pub fn requests_per_10k_blocks(&self, blocks: u64) -> f64 {
        self.requests.values().sum::<u64>() as f64 * 10_000.0 / blocks.max(1) as f64
    }
}

/// CPU seconds (user and system) process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    // The command name may hold spaces; the fields after it are space-separated.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields of the line, the 12th and 13th after the
    // name; the kernel counts them in ticks of 1/100 s on Linux.
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Sum of the samples of counter `name` on the rendered metrics page, by the value of label
/// `by` (all under "" when `by` is empty).
fn counters(page: &str, name: &str, by: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (labels, value) in super::run::samples(page, name) {
        let key = if by.is_empty() { None } else { super::run::label(&labels, by) };
        *out.entry(key.unwrap_or_default()).or_default() += value as u64;
    }
    out
}

fn grew(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

fn total(map: &BTreeMap<String, u64>) -> u64 {
    map.values().sum()
}

/// Plays the scenario with `options.names` names on a fresh anvil, then indexes it once per
/// database.
pub async fn run(
    options: &ChainOptions,
    progress: impl Fn(&str),
) -> Result<ChainReport, BenchError> {
    let failed = |what: &str| {
        let what = what.to_owned();
        move |e: crate::devnet::DevnetError| BenchError::Run(format!("{what}: {e}"))
    };
    let anvil = Anvil::spawn(31337).await.map_err(failed("anvil"))?;
    let mut driver = Driver::new(anvil.provider()).await.map_err(failed("driver"))?;
    let started = Instant::now();
    progress("playing the scenario");
    let scenario_options =
        ScenarioOptions { eth_names: options.names, per_block: options.per_block };
    let scenario =
        Scenario::run(&mut driver, scenario_options).await.map_err(failed("scenario"))?;
    let mut report = ChainReport {
        blocks: scenario.last_block + 1,
        scenario_seconds: started.elapsed().as_secs_f64(),
        runs: Vec::new(),
    };
    let handle = ensemble::metrics::install();
    let client = reqwest::Client::new();
    for (i, database_url) in options.databases.iter().enumerate() {
        progress(&format!("run {} of {}", i + 1, options.databases.len()));
        let mut config = Config::load(None, std::iter::empty())
            .map_err(|e| BenchError::Run(format!("config: {e}")))?;
        config.database.url.clone_from(database_url);
        config.http.listen = "127.0.0.1:0".parse().expect("a socket address");
        config.indexer.fetch_cache_dir = options.fetch_cache.display().to_string();
        config.chains = vec![scenario.deployment.chain_config(anvil.chain_id, &anvil.url)];
        let page = handle.render();
        let requests = counters(&page, "ensemble_rpc_requests_total", "event");
        let events = total(&counters(&page, "ensemble_events_processed_total", ""))
            + total(&counters(&page, "ensemble_events_skipped_total", ""));
        let hits = counters(&page, "ensemble_fetch_cache_windows_total", "outcome");
        // The peak resident set is this run's from here on (Linux: 5 resets VmHWM).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let node_cpu = cpu_seconds(anvil.pid());
        let at = Instant::now();
        let service = ensemble::Service::start(&config)
            .await
            .map_err(|e| BenchError::Run(format!("service: {e}")))?;
        let ready = format!("http://{}/ready", service.http_addr);
        loop {
            let answered = client.get(&ready).send().await.map(|r| r.status().is_success());
            if matches!(answered, Ok(true)) {
                break;
            }
            if at.elapsed() > Duration::from_secs(3600) {
                return Err(BenchError::Run("not ready within an hour".into()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let seconds = at.elapsed().as_secs_f64();
        let node_cpu_seconds = cpu_seconds(anvil.pid()) - node_cpu;
        let peak_rss = super::run::peak_rss();
        let page = handle.render();
        let after_events = total(&counters(&page, "ensemble_events_processed_total", ""))
            + total(&counters(&page, "ensemble_events_skipped_total", ""));
        report.runs.push(ChainRun {
            events: after_events - events,
            seconds,
            requests: grew(&requests, &counters(&page, "ensemble_rpc_requests_total", "event")),
            node_cpu_seconds,
            peak_rss,
            cache_hits: grew(
                &hits,
                &counters(&page, "ensemble_fetch_cache_windows_total", "outcome"),
            )
            .get("hit")
            .copied()
            .unwrap_or(0),
        });
        service.shutdown(Duration::from_secs(30)).await;
    }
    drop(anvil);
    Ok(report)
}

/// The report's markdown table header.
pub const CHAIN_HEADER: &str = "| date | engine | run | events | events/s | seconds to /ready | node CPU s | RPC requests | RPC req/10k blocks | cache windows read | peak RSS MB | command |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";

/// `BENCHMARKS.md` rows for `report`, one per run; the first run is the cold one.
pub fn report_rows(date: &str, options: &ChainOptions, report: &ChainReport) -> String {
    let mut rows = String::new();
    for (i, (run, url)) in report.runs.iter().zip(&options.databases).enumerate() {
        let engine = if url.starts_with("postgres") { "postgres" } else { "sqlite" };
        rows.push_str(&format!(
            "| {date} | {engine} | {} | {} | {:.0} | {:.1} | {:.1} | {} | {:.1} | {} | {:.0} | `ensemble bench chain --names {} --per-block {} --fetch-cache <dir> --database-url <…>` |\n",
            if i == 0 { "cold" } else { "warm cache" },
            run.events,
            run.events_per_second(),
            run.seconds,
            run.node_cpu_seconds,
            run.requests.values().sum::<u64>(),
            run.requests_per_10k_blocks(report.blocks),
            run.cache_hits,
            run.peak_rss as f64 / 1e6,
            options.names,
            options.per_block,
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_sum_by_label() {
        let page = "# HELP x\n\
            ensemble_rpc_requests_total{chain=\"1\",event=\"eth_getLogs\"} 7\n\
            ensemble_rpc_requests_total{chain=\"2\",event=\"eth_getLogs\"} 3\n\
            ensemble_rpc_requests_total{chain=\"1\",event=\"eth_call\"} 1\n\
            ensemble_rpc_requests_total_other 9\n";
        let by = counters(page, "ensemble_rpc_requests_total", "event");
        assert_eq!(by.get("eth_getLogs"), Some(&10));
        assert_eq!(by.get("eth_call"), Some(&1));
        assert_eq!(by.len(), 2, "a longer name with the same start is another metric");
        assert!(cpu_seconds(std::process::id()) >= 0.0);
    }
}
