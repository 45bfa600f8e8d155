//! Shared test support: fresh databases (SQLite file or a new PostgreSQL database), devnets,
//! configs, and waiting for the indexer without sleeping blindly.

use std::{
    sync::atomic::{AtomicU32, Ordering},
    time::{Duration, Instant},
};

use alloy::primitives::{Address, U256, keccak256};
use ensemble::{
    Config,
    config::ChainConfig,
    ens::name::{child_node, labelhash},
    store::writer::read_checkpoint,
};
use ensemble_devkit::devnet::{
    Anvil, Deployment, Driver, Scenario,
    contracts::{IBaseRegistrar, IRegistry, IResolver},
    scenario::ScenarioOptions,
};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection};

/// Two tests of `async fn $body(backend, chain_id)` (or of `$body(backend)`), one per engine,
/// as `$body::on_sqlite` (chain `$id`) and `$body::on_postgres` (chain `$id + 1`).
macro_rules! on_both_engines {
    ($body:ident) => {
        mod $body {
            #[actix_rt::test]
            async fn on_sqlite() {
                super::$body(crate::support::Backend::Sqlite).await;
            }

            #[actix_rt::test]
            async fn on_postgres() {
                super::$body(crate::support::Backend::Postgres).await;
            }
        }
    };
    ($body:ident, $id:expr) => {
        mod $body {
            #[actix_rt::test]
            async fn on_sqlite() {
                super::$body(crate::support::Backend::Sqlite, $id).await;
            }

            #[actix_rt::test]
            async fn on_postgres() {
                super::$body(crate::support::Backend::Postgres, $id + 1).await;
            }
        }
    };
}
pub(crate) use on_both_engines;

/// Database engines the suites run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Admin connection for creating per-test databases (see [`crate::postgres`]).
pub fn pg_admin_url() -> String {
    crate::postgres::admin_url()
}

/// A fresh, empty database that is removed afterwards.
pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg_name: Option<String>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl TestDb {
    pub async fn new(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("tempdir");
                let url = format!("sqlite://{}?mode=rwc", dir.path().join("test.sqlite").display());
                Self { url, _dir: Some(dir), pg_name: None }
            }
            Backend::Postgres => {
                let name = format!(
                    "ensemble_test_{}_{}_{}",
                    std::process::id(),
                    COUNTER.fetch_add(1, Ordering::SeqCst),
                    Instant::now().elapsed().subsec_nanos()
                );
                let admin = Database::connect(pg_admin_url())
                    .await
                    .expect("postgres reachable (see tests/it/postgres.rs)");
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await
                    .expect("create database");
                let base = pg_admin_url();
                let url =
                    format!("{}/{name}", base.rsplit_once('/').map_or(base.as_str(), |(b, _)| b));
                Self { url, _dir: None, pg_name: Some(name) }
            }
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(name) = self.pg_name.take() {
            // Drop runs outside any runtime guarantee: use a short-lived one on its own thread.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
                rt.block_on(async {
                    let admin = Database::connect(pg_admin_url()).await.ok()?;
                    admin
                        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await
                        .ok()
                })
            })
            .join();
        }
    }
}

/// A devnet with the scenario played on it.
pub async fn devnet(chain_id: u64, options: ScenarioOptions) -> (Anvil, Driver, Scenario) {
    let anvil = Anvil::spawn(chain_id).await.expect("anvil starts");
    let mut driver = Driver::new(anvil.provider()).await.expect("driver");
    let scenario = Scenario::run(&mut driver, options).await.expect("scenario plays");
    (anvil, driver, scenario)
}

/// A config with `chain`, the database at `url` and an ephemeral HTTP port.
pub fn config(url: &str, chain: ChainConfig) -> Config {
    config_of(url, vec![chain])
}

/// A config with `chains` (and their bridges), the database at `url` and an ephemeral port.
pub fn config_of(url: &str, chains: Vec<ChainConfig>) -> Config {
    let mut config =
        Config::load(None, [("DATABASE_URL".to_owned(), url.to_owned())]).expect("defaults load");
    config.http.listen = "127.0.0.1:0".parse().expect("socket address");
    config.with_chains(chains).expect("valid chains")
}

/// Runtime of a contract that emits `LOG2(topic0, topic1, data)` from its calldata
/// `topic0 ‖ topic1 ‖ data`, so a test can put arbitrary logs on chain at a configured
/// address: CALLDATACOPY(0, 0, size); LOG2(64, size − 64, mload(0), mload(32)); STOP.
const LOG2_EMITTER_RUNTIME: &str = "366000600037602051600051604036036040a200";

/// Creation code of the LOG2 emitter.
pub fn emitter_code() -> Vec<u8> {
    let runtime = hex::decode(LOG2_EMITTER_RUNTIME).expect("hex");
    // PUSH1 len, DUP1, PUSH1 11, PUSH1 0, CODECOPY, PUSH1 0, RETURN, then the runtime.
    let mut init =
        vec![0x60, runtime.len() as u8, 0x80, 0x60, 0x0b, 0x60, 0x00, 0x39, 0x60, 0x00, 0xf3];
    init.extend(runtime);
    init
}

/// The integer value of SQLite's `PRAGMA name` on a connection of `db`'s pool.
pub async fn sqlite_pragma(db: &DatabaseConnection, name: &str) -> i64 {
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DatabaseBackend::Sqlite,
            format!("PRAGMA {name}"),
        ))
        .await
        .expect("pragma")
        .expect("pragma row");
    row.try_get_by_index::<i64>(0).expect("integer pragma")
}

/// Whether SQLite's name search holds exactly the names `domains` holds, by FTS5's own
/// check of its index against the table: a name missing from the search, or one a renamed or
/// deleted domain left behind, fails it. Always true on PostgreSQL, whose trigram search is
/// an index the database keeps.
pub async fn name_search_matches(db: &DatabaseConnection) -> bool {
    if db.get_database_backend() != sea_orm::DatabaseBackend::Sqlite {
        return true;
    }
    // In a transaction of its own, rolled back, so that nothing a failed check (FTS5 reports
    // a mismatch as a corrupt table) leaves on its pooled connection outlasts it: run bare,
    // a later `UPDATE` through the pool once went unseen by the next reads (cause not found).
    // The transaction takes the write lock at its start (as the indexer's writes do): in a
    // deferred one, the check failed now and then with "database is locked" (code 5) while
    // the indexer ran: in 2 of 288 runs of the reorg test on a loaded machine.
    let txn = ensemble::store::database::begin_write(db).await.expect("begin");
    let checked = txn
        .execute_unprepared(
            "INSERT INTO domains_name_fts(domains_name_fts, rank) VALUES ('integrity-check', 1)",
        )
        .await;
    txn.rollback().await.expect("rollback");
    // A failure says why: a mismatch reads as a corrupt table, anything else is not one.
    checked.inspect_err(|err| eprintln!("name search check: {err}")).is_ok()
}

/// Waits until `chain`'s checkpoint reaches `block`.
pub async fn wait_for_block(db: &DatabaseConnection, chain: u64, block: u64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let at = read_checkpoint(db, chain.into()).await.ok().flatten().map(|c| c.block_number);
        if at.is_some_and(|b| b >= block) {
            return;
        }
        assert!(Instant::now() < deadline, "indexer stuck at {at:?}, waiting for block {block}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A config file for an indexer subprocess: `chain` into `db_url`, flushing at `flush_rows`.
pub fn write_config(
    dir: &std::path::Path,
    db_url: &str,
    chain: &ensemble::config::ChainConfig,
    flush_rows: usize,
) -> std::path::PathBuf {
    let path = dir.join("indexer.toml");
    let contracts: Vec<String> = chain
        .contracts
        .iter()
        .map(|c| format!("{{ role = \"{}\", address = \"{:#x}\" }}", c.role.as_str(), c.address))
        .collect();
    std::fs::write(
        &path,
        format!(
            "[database]\nurl = \"{db_url}\"\n[http]\nlisten = \"127.0.0.1:0\"\n[indexer]\nflush_rows = {flush_rows}\n\
             [[chains]]\nid = {}\nname = \"victim\"\nrpc_url = \"{}\"\nmax_block_range = 1\n\
             poll_interval_ms = 50\ncontracts = [{}]\n",
            chain.id,
            chain.rpc_url.as_deref().unwrap_or_default(),
            contracts.join(", ")
        ),
    )
    .unwrap();
    path
}

/// Starts `ensemble run --config <config>` with `env`, logging at info to `<config>.log`
/// (a file, not a pipe: an undrained pipe would block a chatty server).
pub fn spawn_ensemble(config: &std::path::Path, env: &[(&str, &str)]) -> std::process::Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(config.with_extension("log"))
        .expect("log file");
    std::process::Command::new(env!("CARGO_BIN_EXE_ensemble"))
        .args(["run", "--config"])
        .arg(config)
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("ensemble binary starts")
}

/// An HTTP client for the servers under test. It lets a pooled connection go after it has
/// been idle for half the time the service keeps one open (`http::HEAD_TIMEOUT`): a request
/// sent on a connection the server is closing fails with an incomplete message.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_idle_timeout(ensemble::http::HEAD_TIMEOUT / 2)
        .build()
        .expect("an HTTP client")
}

/// A free loopback port (bound and released: another process may take it, which would fail
/// the test loudly, not silently).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The dump of an uninterrupted in-process run of `chain` up to `last`, on SQLite: what every
/// interrupted run must end up equal to.
pub async fn reference_dump(chain: &ChainConfig, last: u64) -> String {
    let db = TestDb::new(Backend::Sqlite).await;
    let service =
        ensemble::Service::start(&config(&db.url, chain.clone())).await.expect("service starts");
    wait_for_block(&service.db, chain.id.get(), last).await;
    let dump = ensemble::dump::dump(&service.db).await.expect("dump");
    service.stop().await;
    dump
}

/// Mines `blocks` blocks, each with a new subname and a registrar transfer, the first also with
/// a text change;
/// `tag` makes the orphaned and the canonical branch differ.
pub async fn activity(
    driver: &mut Driver,
    d: &Deployment,
    owner: Address,
    name: &str,
    blocks: u64,
    tag: &str,
) {
    let accounts = driver.accounts.clone();
    let node = child_node(alloy::ens::namehash("eth"), labelhash(name));
    let token = U256::from_be_bytes(labelhash(name).0);
    let mut holder = driver
        .read(d.base_registrar, IBaseRegistrar::ownerOfCall { tokenId: token })
        .await
        .unwrap();
    for i in 0..blocks {
        let label = keccak256(format!("{tag}-{i}"));
        driver
            .call_tx(
                owner,
                d.registry,
                IRegistry::setSubnodeRecordCall {
                    node,
                    label,
                    owner: accounts[7],
                    resolver: d.resolver,
                    ttl: 0,
                },
                "sub",
            )
            .await
            .unwrap();
        let to = accounts[8 + (i as usize % 2)];
        if to != holder {
            driver
                .call_tx(
                    holder,
                    d.base_registrar,
                    IBaseRegistrar::transferFromCall { from: holder, to, tokenId: token },
                    "transfer",
                )
                .await
                .unwrap();
            holder = to;
        }
        // Only in the first block: both branches then set the text at the same block number,
        // which catches any cache keyed by number instead of by block.
        if i == 0 {
            driver
                .call_tx(
                    owner,
                    d.resolver,
                    IResolver::setTextCall {
                        node,
                        key: "url".into(),
                        value: format!("https://{tag}/{i}"),
                    },
                    "text",
                )
                .await
                .unwrap();
        }
        driver.mine().await.unwrap();
    }
}

/// A long chain for interruption tests: one name per block (≈200 blocks), indexed with
/// one-block windows so that kills, restarts and outages land part-way, and the dump of an
/// uninterrupted run to compare against.
pub struct LongRun {
    /// Keeps the chain's node running for as long as the run is used.
    _anvil: Anvil,
    pub chain: ChainConfig,
    pub last: u64,
    pub expected: String,
}

impl LongRun {
    pub async fn new(chain_id: u64) -> Self {
        let (anvil, _driver, scenario) =
            devnet(chain_id, ScenarioOptions { eth_names: 60, per_block: 1 }).await;
        let mut chain = scenario.deployment.chain_config(chain_id, &anvil.url);
        chain.max_block_range = 1;
        let last = scenario.last_block;
        let expected = reference_dump(&chain, last).await;
        Self { _anvil: anvil, chain, last, expected }
    }
}

/// The dump of a fresh index (SQLite) of `chain` as it is now, up to the head's hash.
pub async fn fresh_dump(chain: &ChainConfig, driver: &Driver) -> String {
    let db = TestDb::new(Backend::Sqlite).await;
    let service = ensemble::Service::start(&config(&db.url, chain.clone())).await.unwrap();
    crate::reorg::wait_for_hash(&service.db, chain.id.get(), driver).await;
    let dump = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    dump
}
