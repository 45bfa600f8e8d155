//! The `ensemble` binary: parse the command line, load the configuration, initialise tracing
//! and metrics, run.

use std::{ffi::OsString, path::PathBuf};

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use ensemble::{
    Config, Mode,
    runtime::{init_tracing, limit_glibc_arenas, serve},
};

/// mimalloc instead of glibc's allocator: rows are built on the handler's thread and freed on
/// the writer's after each flush, and glibc's per-thread arenas keep such memory
/// fragmented and resident (peak RSS grew to gigabytes over a cache budget of 512 MB,
/// BENCHMARKS.md); mimalloc returns it. `ensemble-devkit` uses the same, so the benchmarks
/// measure this allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Multi-chain ENS indexer with an Omnigraph-style GraphQL API.
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
    /// Index the configured chains and serve GraphQL.
    Run {
        /// Namespace file, e.g. config/mainnet.toml.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Serve GraphQL only, from a database that indexers write (read-only; scale out freely).
    Serve {
        /// Namespace file (its database, and the chains /ready waits for).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Index only (no GraphQL), optionally a subset of the configured chains.
    Index {
        /// Namespace file.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Comma-separated chain ids to index, e.g. 1,8453 (default: every configured chain).
        #[arg(long, value_delimiter = ',')]
        chains: Vec<ensemble::ChainId>,
    },
    /// Start a local ENS chain (anvil + the real ENS contracts from npm), play a scenario of
    /// a few hundred names on it, then index it and serve GraphQL (`ensemble devnet --help`).
    /// Runs the `ensemble-devkit` binary, which the workspace builds beside this one.
    #[command(disable_help_flag = true)]
    Devnet {
        /// Its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Print a deterministic dump of the indexed state (compare two databases with diff).
    Dump {
        /// Config whose database to dump (env DATABASE_URL wins).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Benchmarks (`ensemble bench --help`): numbers for BENCHMARKS.md, nothing here is a
    /// test. Runs the `ensemble-devkit` binary, which the workspace builds beside this one.
    #[command(disable_help_flag = true)]
    Bench {
        /// Its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Label sets: heal `[hash]` labels from a file.
    Labels {
        #[command(subcommand)]
        labels: LabelsCommand,
    },
    /// Apply pending database migrations and exit.
    Migrate {
        /// Config whose database to migrate (env DATABASE_URL wins).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum LabelsCommand {
    /// Import labels from a text file (one label per line), a CSV (`labelhash,label`) or an
    /// ENSRainbow `.ensrainbow` file. Bad entries are reported with their line (record)
    /// number and skipped; every indexed name containing a healed label is renamed by its
    /// chain before its next batch.
    Import {
        /// The label file.
        file: PathBuf,
        /// Its format (default: from the extension: `.csv`, `.ensrainbow`, else text).
        #[arg(long, value_enum)]
        format: Option<ensemble::label_import::Format>,
        /// Config whose database to import into (env DATABASE_URL wins).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

/// `ensemble labels import`: a progress bar by bytes read on a terminal, bad entries on
/// stderr as they come, a summary at the end.
async fn import_labels(
    database_url: &str,
    file: &std::path::Path,
    format: Option<ensemble::label_import::Format>,
) -> anyhow::Result<()> {
    use ensemble::label_import::{self, Format};
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let db = ensemble::store::database::connect_current(database_url).await?;
    let size = std::fs::metadata(file).with_context(|| format!("reading {}", file.display()))?;
    let bar = ProgressBar::with_draw_target(Some(size.len()), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
        )?
        .progress_chars("=> "),
    );
    let format = format.unwrap_or_else(|| Format::of_path(file));
    let report = label_import::import(
        &db,
        file,
        format,
        |position, bad| bar.suspend(|| eprintln!("{}: {position}: {bad}", file.display())),
        |bytes| bar.set_position(bytes),
    )
    .await;
    bar.finish_and_clear();
    let report = report?;
    println!(
        "{}: {} labels read, {} learned ({} of them healed stored [hash] labels), {} already known, {} bad entries skipped",
        file.display(),
        report.entries,
        report.learned,
        report.healed,
        report.known,
        report.bad,
    );
    Ok(())
}

/// Runs `ensemble-devkit <command> <args>` in place of this process: the executable beside
/// this one (where cargo builds both), else the one on `PATH`.
fn devkit(command: &str, args: Vec<OsString>, json_logs: bool) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt as _;
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("ensemble-devkit")))
        .filter(|path| path.is_file());
    let program = beside.unwrap_or_else(|| PathBuf::from("ensemble-devkit"));
    let mut child = std::process::Command::new(&program);
    child.arg(command).args(&args);
    if json_logs {
        child.arg("--json-logs");
    }
    let err = child.exec();
    anyhow::bail!(
        "`ensemble {command}` runs {}: {err}. Build it with `cargo build --workspace` (or `cargo install --path tests/devkit`).",
        program.display()
    )
}

fn main() -> anyhow::Result<()> {
    limit_glibc_arenas();
    let cli = Cli::parse();
    // The tooling runs in its own process, before this one starts anything.
    match &cli.command {
        Command::Devnet { args } => return devkit("devnet", args.clone(), cli.json_logs),
        Command::Bench { args } => return devkit("bench", args.clone(), cli.json_logs),
        _ => {}
    }
    init_tracing(cli.json_logs);
    ensemble::rpc::client::install_tls_provider();
    let env = || std::env::vars();
    ensemble::actor_system::run(async move {
        match cli.command {
            Command::Run { config } => {
                Ok(serve(Config::load(config.as_deref(), env())?, Mode::Run).await?)
            }
            Command::Serve { config } => {
                Ok(serve(Config::load(config.as_deref(), env())?, Mode::Serve).await?)
            }
            Command::Index { config, chains } => {
                let mut config = Config::load(config.as_deref(), env())?;
                if !chains.is_empty() {
                    config.retain_chains(&chains)?;
                }
                Ok(serve(config, Mode::Index).await?)
            }
            Command::Devnet { .. } | Command::Bench { .. } => Ok(()),
            Command::Dump { config } => {
                let config = Config::load(config.as_deref(), env())?;
                let db = ensemble::store::database::connect_current(&config.database.url).await?;
                let mut out = std::io::BufWriter::new(std::io::stdout());
                ensemble::dump::dump_to(&db, &mut out, ensemble::dump::PAGE_ROWS).await?;
                Ok(())
            }

            Command::Labels { labels: LabelsCommand::Import { file, format, config } } => {
                let config = Config::load(config.as_deref(), env())?;
                import_labels(&config.database.url, &file, format).await
            }
            Command::Migrate { config } => {
                let config = Config::load(config.as_deref(), env())?;
                ensemble::store::database::connect(&config.database.url).await?;
                tracing::info!(target: "ensemble", "Migrations applied");
                Ok(())
            }
        }
    })?
}
