//! The `ensemble-devkit` binary: the project's tooling, run as `ensemble devnet …` and
//! `ensemble bench …` (the `ensemble` binary hands those commands to this one) or directly.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use ensemble::{
    Config, Mode,
    runtime::{init_tracing, limit_glibc_arenas, serve},
};
use ensemble_devkit::devnet::{Anvil, Driver, Scenario, scenario::ScenarioOptions};

/// The service's allocator, so the benchmarks measure what the service runs with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Ensemble's tooling: a local ENS chain, and the benchmarks.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// Log as JSON lines instead of text.
    #[arg(long, global = true)]
    json_logs: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start a local ENS chain (anvil + the real ENS contracts from npm), play a scenario of
    /// a few hundred names on it, then index it and serve GraphQL. Needs no network beyond npm.
    Devnet {
        /// Extra config (database, http) layered over the defaults.
        #[arg(long)]
        config: Option<PathBuf>,
        /// `.eth` names the scenario registers.
        #[arg(long, default_value_t = 130)]
        names: usize,
        /// Database to index into. Default: a fresh SQLite file in a temporary directory,
        /// because the devnet chain lives only as long as this process.
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Benchmarks (numbers for BENCHMARKS.md; nothing here is a test).
    Bench {
        #[command(subcommand)]
        bench: BenchCommand,
    },
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Time the common GraphQL queries (p50/p99) on a database of at least `--domains`
    /// domains; a database holding fewer is first filled with a generated mainnet-shaped
    /// namegraph.
    Query {
        /// Database to query (and fill), e.g. sqlite://bench.sqlite?mode=rwc.
        #[arg(long)]
        database_url: String,
        /// Domains the database must hold.
        #[arg(long, default_value_t = 1_000_000)]
        domains: usize,
        /// Seed of the generated namegraph and of the query variables.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Runs per query (each query also stops after 20 s, after at least 20 runs).
        #[arg(long, default_value_t = 200)]
        runs: usize,
        /// Append the results as rows to this file (e.g. BENCHMARKS.md).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Time label heals on an indexed database (e.g. after `bench run`): the first label of
    /// `--labels` imported and applied alone, then the rest in bulk.
    Heal {
        /// The indexed database.
        #[arg(long)]
        database_url: String,
        /// Label file, one per line (`bench generate --labels-out`).
        #[arg(long)]
        labels: PathBuf,
        /// Chain whose domains are renamed.
        #[arg(long, default_value_t = 1)]
        chain: u64,
    },
    /// Time a bridge going up and down on a generated namegraph (`bench query --domains`
    /// fills one): `eth` becomes the origin of a bridge, every name below it is relinked once
    /// (timed: what a materialized flag pays per flip), then the flips and the queries in
    /// each state are timed. Changes the database: use a copy.
    Bridge {
        /// The database with a generated namegraph.
        #[arg(long)]
        database_url: String,
    },
    /// Write a mainnet-shaped corpus of ENS logs (real ABI encodings at the mainnet
    /// addresses), deterministic for a seed.
    Generate {
        /// Logs to generate (at least; a transaction is never split).
        #[arg(long, default_value_t = 5_000_000)]
        events: u64,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file.
        #[arg(long, default_value = "corpus.bin")]
        out: PathBuf,
        /// Also write the plaintext of the labels the corpus carries only as hashes (its
        /// subnames'), one per line: a label set for `ensemble labels import` and `bench heal`.
        #[arg(long)]
        labels_out: Option<PathBuf>,
    },
    /// Index a corpus into a fresh database through the real decode -> handle -> write path
    /// and report events/s, handler and flush time, cache hit rate, peak RSS, bytes per event
    /// and RPC requests.
    Run {
        /// The corpus (from `ensemble bench generate`).
        #[arg(long, default_value = "corpus.bin")]
        corpus: PathBuf,
        /// A fresh database, e.g. sqlite://run.sqlite?mode=rwc or postgres://…/bench.
        #[arg(long)]
        database_url: String,
        /// `local`: the corpus file feeds the decoder; `rpc`: a local JSON-RPC endpoint serves
        /// the corpus to the real fetcher.
        #[arg(long, value_enum, default_value = "local")]
        source: ensemble_devkit::bench::run::Source,
        /// Memory budget of the chain (rows written behind, read cache, SQLite page cache), MiB.
        #[arg(long, default_value_t = 512)]
        cache_mb: u64,
        /// Dirty rows that trigger a flush (the service's default `indexer.flush_rows`).
        #[arg(long, default_value_t = 1_000_000)]
        flush_rows: usize,
        /// Blocks per window.
        #[arg(long, default_value_t = 2_000)]
        window: u64,
        /// Capacity of every mailbox on the data path (windows and batches queued per actor).
        #[arg(long)]
        mailbox_capacity: Option<usize>,
        /// Keep every query index during the run instead of building the deferred ones at
        /// the end (`indexer.defer_query_indexes = false`).
        #[arg(long)]
        keep_indexes: bool,
        /// With `--source rpc`: an endpoint already serving this corpus (`ensemble bench
        /// serve` in another process), so the server's memory and CPU are not the run's.
        #[arg(long)]
        rpc_url: Option<String>,
        /// With `--source rpc`: keep what the fetcher reads from the endpoint in this fetch
        /// cache directory (`indexer.fetch_cache_dir`), and read from it what it holds. A
        /// second run with the same directory re-indexes from the warm cache.
        #[arg(long)]
        fetch_cache: Option<PathBuf>,
        /// Append the result as a row to this file (e.g. BENCHMARKS.md).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Time resolution (p50/p99): with `--devnet`, index the devnet scenario into the (fresh)
    /// database and time records and primary names from the index and by live calls;
    /// without, time them from the index of a `bench query` database.
    Resolve {
        /// The database: fresh with `--devnet`, else one `bench query` filled.
        #[arg(long)]
        database_url: String,
        /// Index the devnet scenario and compare with live calls.
        #[arg(long)]
        devnet: bool,
        /// `.eth` names of the devnet scenario.
        #[arg(long, default_value_t = 130)]
        names: usize,
        /// Runs per case (each case also stops after 20 s, after at least 20 runs).
        #[arg(long, default_value_t = 1_000)]
        runs: usize,
        /// Seed of the names and accounts picked.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Append the results as rows to this file (e.g. BENCHMARKS.md).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Play the devnet scenario with `--names` names on anvil, then index it through JSON-RPC
    /// from the service's start to `/ready`, once per `--database-url` (fresh databases),
    /// sharing the `--fetch-cache` directory: the first run fills it, later ones read it.
    Chain {
        /// `.eth` names of the scenario (about ten events each).
        #[arg(long, default_value_t = 37_000)]
        names: usize,
        /// Names per block in the registration phases.
        #[arg(long, default_value_t = 200)]
        per_block: usize,
        /// A fresh database per run, in order (give the option once per run).
        #[arg(long, required = true)]
        database_url: Vec<String>,
        /// The fetch cache directory (should be empty, so the first run is cold).
        #[arg(long)]
        fetch_cache: PathBuf,
        /// Append the results as rows to this file (e.g. BENCHMARKS.md).
        #[arg(long)]
        record: Option<PathBuf>,
    },
    /// Serve a corpus as a JSON-RPC endpoint (the methods the indexer calls), until
    /// interrupted: a chain for `bench run --source rpc --rpc-url`, or any indexer.
    Serve {
        /// The corpus (from `ensemble bench generate`).
        #[arg(long, default_value = "corpus.bin")]
        corpus: PathBuf,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8545")]
        listen: std::net::SocketAddr,
    },
}

/// Runs a benchmark.
async fn bench(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Query { database_url, domains, seed, runs, record } => {
            bench_query(&database_url, domains, seed, runs, record).await
        }
        BenchCommand::Heal { database_url, labels, chain } => {
            let db = ensemble::store::database::connect(&database_url).await?;
            let r = ensemble_devkit::bench::heal::run(&db, &labels, chain).await?;
            let engine = if database_url.starts_with("postgres") { "postgres" } else { "sqlite" };
            println!("{engine}: {} domains", r.domains);
            for (what, s) in [("one heal", &r.one), ("bulk", &r.bulk)] {
                println!(
                    "{what}: {} labels ({} learned) imported in {:.3} s; {} healed names of chain {chain}, {} domains renamed, applied and flushed in {:.3} s",
                    s.labels, s.learned, s.import_secs, s.applied, s.renamed, s.apply_secs
                );
            }
            Ok(())
        }
        BenchCommand::Resolve { database_url, devnet, names, runs, seed, record } => {
            bench_resolve(&database_url, devnet, names, runs, seed, record).await
        }
        BenchCommand::Bridge { database_url } => {
            let db = ensemble::store::database::connect(&database_url).await?;
            let r = ensemble_devkit::bench::bridge::run(&db).await?;
            let engine = if database_url.starts_with("postgres") { "postgres" } else { "sqlite" };
            println!(
                "{engine}: {} domains, {} below the origin; one-time relink of them {:.3} s",
                r.domains, r.below, r.relink_secs
            );
            for (what, f) in [("up", &r.up), ("down", &r.down)] {
                println!("bridge {what}: {:.4} s, {} rows written", f.secs, f.rows);
            }
            for p in &r.probes {
                println!(
                    "{}: listing + lookup p50 {:.2} ms, {} listed, sample name canonical: {}",
                    p.state,
                    p.p50.as_secs_f64() * 1e3,
                    p.listed,
                    p.found
                );
            }
            Ok(())
        }
        BenchCommand::Generate { events, seed, out, labels_out } => {
            bench_generate(events, seed, &out, labels_out.as_deref())
        }
        BenchCommand::Run {
            corpus,
            database_url,
            source,
            cache_mb,
            flush_rows,
            window,
            mailbox_capacity,
            keep_indexes,
            rpc_url,
            fetch_cache,
            record,
        } => {
            if rpc_url.is_some() && matches!(source, ensemble_devkit::bench::run::Source::Local) {
                anyhow::bail!(
                    "--rpc-url names the endpoint of --source rpc; this run reads the file"
                );
            }
            // The built-in indexer settings, with what the command line sets.
            let mut indexer = Config::load(None, std::iter::empty())?.indexer;
            indexer.cache_mb = cache_mb;
            indexer.flush_rows = flush_rows;
            if let Some(capacity) = mailbox_capacity {
                indexer.mailbox_capacity = capacity.max(1);
            }
            indexer.defer_query_indexes = !keep_indexes;
            if let Some(dir) = fetch_cache {
                indexer.fetch_cache_dir = dir.display().to_string();
            }
            let options = ensemble_devkit::bench::run::RunOptions {
                corpus,
                database_url,
                source,
                indexer,
                window,
                rpc_url,
            };
            bench_run(options, record).await
        }
        BenchCommand::Chain { names, per_block, database_url, fetch_cache, record } => {
            use ensemble_devkit::bench::{chain, report};
            let options =
                chain::ChainOptions { names, per_block, databases: database_url, fetch_cache };
            let made = chain::run(&options, |step| {
                tracing::info!(target: "bench", step, "bench chain");
            })
            .await?;
            println!(
                "chain: {} blocks, scenario of {names} names played in {:.0} s",
                made.blocks, made.scenario_seconds
            );
            for (i, run) in made.runs.iter().enumerate() {
                for (method, count) in &run.requests {
                    println!("  run {} rpc {method:<24} {count:>10}", i + 1);
                }
            }
            let rows = chain::report_rows(&report::today(), &options, &made);
            let header = chain::CHAIN_HEADER;
            print!("{header}{rows}");
            if let Some(path) = record {
                report::append(&path, header, &rows)?;
            }
            Ok(())
        }
        BenchCommand::Serve { corpus, listen } => {
            let server = ensemble_devkit::bench::rpc_server::serve_on(&corpus, listen).await?;
            tracing::info!(target: "bench", url = %server.url(), corpus = %corpus.display(), "Serving the corpus");
            tokio::signal::ctrl_c().await?;
            server.stop().await;
            Ok(())
        }
    }
}

/// `ensemble bench query`.
async fn bench_query(
    database_url: &str,
    domains: usize,
    seed: u64,
    runs: usize,
    record: Option<PathBuf>,
) -> anyhow::Result<()> {
    use ensemble_devkit::bench::{namegraph, query, report};
    use sea_orm::{EntityTrait, PaginatorTrait};
    // The bench fills the database it is given, so it brings the schema up to date first
    // (a fresh database included).
    let db = ensemble::store::database::connect(database_url).await?;
    let held = entities::domain::Entity::find().count(&db).await?;
    if (held as usize) < domains {
        tracing::info!(target: "bench", held, domains, seed, "Generating a namegraph");
        let bar = indicatif::ProgressBar::new(domains as u64);
        let started = std::time::Instant::now();
        let made = namegraph::generate(&db, domains, seed, |n| bar.set_position(n as u64)).await?;
        bar.finish_and_clear();
        let secs = started.elapsed().as_secs_f64();
        tracing::info!(target: "bench", domains = made.domains, rows = made.rows, secs, rows_per_sec = made.rows as f64 / secs, "Namegraph written");
    }
    // Planner statistics, as autovacuum (PostgreSQL) or `PRAGMA optimize` gather them on a
    // live database; a freshly loaded one has none.
    namegraph::analyze(&db).await?;
    let held = entities::domain::Entity::find().count(&db).await?;
    let timings = query::run(&db, runs, seed).await?;
    let engine = if database_url.starts_with("postgres") { "postgres" } else { "sqlite" };
    let command = format!(
        "ensemble bench query --database-url <{engine}> --domains {domains} --seed {seed} --runs {runs}"
    );
    let date = report::today();
    let rows = report::query_rows(&date, engine, held, &command, &timings);
    print!("{}{rows}", report::QUERY_HEADER);
    if let Some(path) = record {
        report::append(&path, report::QUERY_HEADER, &rows)?;
    }
    Ok(())
}

/// `ensemble bench resolve`.
async fn bench_resolve(
    database_url: &str,
    devnet: bool,
    names: usize,
    runs: usize,
    seed: u64,
    record: Option<PathBuf>,
) -> anyhow::Result<()> {
    use ensemble_devkit::bench::{report, resolve};
    use sea_orm::{EntityTrait, PaginatorTrait};
    let engine = if database_url.starts_with("postgres") { "postgres" } else { "sqlite" };
    let (held, timings, command) = if devnet {
        let (held, timings) = resolve::devnet(database_url, names, runs, seed).await?;
        let command = format!(
            "ensemble bench resolve --devnet --names {names} --database-url <{engine}> --runs {runs} --seed {seed}"
        );
        (held as u64, timings, command)
    } else {
        let db = ensemble::store::database::connect_current(database_url).await?;
        let held = entities::domain::Entity::find().count(&db).await?;
        let timings = resolve::database(&db, database_url, runs, seed).await?;
        let command = format!(
            "ensemble bench resolve --database-url <{engine} filled by bench query> --runs {runs} --seed {seed}"
        );
        (held, timings, command)
    };
    let rows = report::resolve_rows(&report::today(), engine, held, &command, &timings);
    print!("{}{rows}", report::RESOLVE_HEADER);
    if let Some(path) = record {
        report::append(&path, report::RESOLVE_HEADER, &rows)?;
    }
    Ok(())
}

/// `ensemble bench generate`.
fn bench_generate(
    events: u64,
    seed: u64,
    out: &std::path::Path,
    labels_out: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let made = ensemble_devkit::bench::generate::generate(out, events, seed)?;
    if let Some(path) = labels_out {
        let mut text = made.unknown_labels.join("\n");
        text.push('\n');
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        println!("{}: {} labels", path.display(), made.unknown_labels.len());
    }
    let h = made.header;
    println!(
        "{}: {} logs in {} transactions, {} blocks with logs of {}..={} ({:.1} s)",
        out.display(),
        h.logs,
        h.transactions,
        h.blocks,
        h.first_block,
        h.last_block,
        started.elapsed().as_secs_f64()
    );
    for (event, count) in &made.mix {
        println!("  {event:<28} {count:>10}  {:>5.1}%", *count as f64 * 100.0 / h.logs as f64);
    }
    Ok(())
}

/// `ensemble bench run`.
async fn bench_run(
    options: ensemble_devkit::bench::run::RunOptions,
    record: Option<PathBuf>,
) -> anyhow::Result<()> {
    use ensemble_devkit::bench::{report, run};
    let header = run::check_corpus(&options.corpus)?;
    // Blocks committed, whatever the source.
    let bar = indicatif::ProgressBar::new(header.last_block - header.first_block + 1);
    let shown = bar.clone();
    let made = run::run(&options, move |n| shown.set_position(n)).await?;
    bar.finish_and_clear();
    let engine = if options.database_url.starts_with("postgres") { "postgres" } else { "sqlite" };
    let command = format!(
        "ensemble bench run --corpus <{} logs, seed {}> --database-url <{engine}> --source {} --cache-mb {} --flush-rows {} --window {} --mailbox-capacity {}{}{}{}",
        header.logs,
        header.seed,
        options.source.as_str(),
        options.indexer.cache_mb,
        options.indexer.flush_rows,
        options.window,
        options.indexer.mailbox_capacity,
        if options.indexer.defer_query_indexes { "" } else { " --keep-indexes" },
        if options.rpc_url.is_some() { " --rpc-url <bench serve, another process>" } else { "" },
        if options.indexer.fetch_cache_dir.is_empty() { "" } else { " --fetch-cache <dir>" }
    );
    for (event, time) in &made.handlers {
        println!(
            "  {event:<22} {:>10} events {:>8.2} s {:>7.2} µs/event",
            time.count,
            time.seconds,
            time.seconds * 1e6 / time.count.max(1) as f64
        );
    }
    println!("  flushes {} ({:.2} s)", made.flushes.count, made.flushes.seconds);
    println!(
        "  flush memory: mean {:.1} MiB, largest {:.1} MiB",
        made.flush_bytes.0 / 1048576.0,
        made.flush_bytes.1 / 1048576.0
    );
    println!(
        "  handler mailbox: mean depth {:.1} of {} (sampled every 10 s), mean wait {:.1} ms",
        made.handler_queue.0,
        options.indexer.mailbox_capacity,
        made.handler_queue.1 * 1e3
    );
    for (table, secs) in &made.flush_tables {
        println!("    {table:<20} {secs:>8.2} s");
    }
    println!("  handler phases (its thread computing, or waiting for the database):");
    for (phase, secs) in &made.handler_phases {
        println!("    {phase:<20} {secs:>8.2} s");
    }
    println!("  prefetch reads {} (keys the read cache did not hold)", made.prefetch_reads);
    println!("  known absent {} (new keys, not looked up)", made.known_absent);
    for (method, count) in &made.rpc_requests {
        println!("  rpc {method:<24} {count:>10}");
    }
    let row = run::report_row(&report::today(), engine, options.source, &command, &made);
    print!("{}{row}", run::RUN_HEADER);
    if let Some(path) = record {
        report::append(&path, run::RUN_HEADER, &row)?;
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    limit_glibc_arenas();
    let cli = Cli::parse();
    init_tracing(cli.json_logs);
    ensemble::rpc::client::install_tls_provider();
    let env = || std::env::vars();
    ensemble::actor_system::run(async move {
        match cli.command {
            Command::Devnet { config, names, database_url } => {
                let mut config = Config::load(config.as_deref(), env())?;
                let scratch = tempfile::tempdir()?;
                config.database.url = database_url.unwrap_or_else(|| {
                    format!("sqlite://{}?mode=rwc", scratch.path().join("devnet.sqlite").display())
                });
                tracing::info!(target: "ensemble", database = %config.database.url, "Devnet database");
                tracing::info!(target: "ensemble", "Starting anvil and deploying the ENS contracts (first run installs them with npm)");
                let anvil = Anvil::spawn(31337).await?;
                let mut driver = Driver::new(anvil.provider()).await?;
                let scenario = Scenario::run(
                    &mut driver,
                    ScenarioOptions { eth_names: names, ..Default::default() },
                )
                .await
                .context("devnet scenario")?;
                tracing::info!(target: "ensemble", names = scenario.names.len(), blocks = scenario.last_block, rpc = %anvil.url, "Scenario played");
                config.chains = vec![scenario.deployment.chain_config(anvil.chain_id, &anvil.url)];
                let result = serve(config, Mode::Run).await.map_err(anyhow::Error::from);
                drop(anvil);
                result
            }
            Command::Bench { bench: command } => bench(command).await,
        }
    })?
}
