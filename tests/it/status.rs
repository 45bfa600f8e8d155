//! What `/status` and `/ready` say of a chain, against `ensemble run` and `ensemble serve` as
//! processes: right after a restart (from the checkpoint, before any new block), while paused
//! (the head keeps moving), across a restart while paused (it stays paused), with an RPC
//! endpoint nobody answers (the error is shown), and from an API process that indexes nothing
//! (it waits for every chain, and tells a gone indexer from a live one).

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use ensemble::config::ChainConfig;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use serde_json::Value;

use crate::support::{self, Backend, TestDb};

const TOKEN: &str = "status-admin-token-0123456789";

/// A config file for `chain` into `db_url`; without `rpc` the chain has no endpoint.
fn write_config(
    dir: &Path,
    name: &str,
    db_url: &str,
    chain: &ChainConfig,
    rpc: Option<&str>,
) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let contracts: Vec<String> = chain
        .contracts
        .iter()
        .map(|c| format!("{{ role = \"{}\", address = \"{:#x}\" }}", c.role.as_str(), c.address))
        .collect();
    let rpc = rpc.map(|url| format!("rpc_url = \"{url}\"\n")).unwrap_or_default();
    std::fs::write(
        &path,
        format!(
            "[database]\nurl = \"{db_url}\"\n[[chains]]\nid = {}\nname = \"watched\"\n{rpc}\
             poll_interval_ms = 50\nrequest_timeout_ms = 500\ncontracts = [{}]\n",
            chain.id,
            contracts.join(", ")
        ),
    )
    .unwrap();
    path
}

struct Process {
    child: Child,
    base: String,
    log: PathBuf,
}

impl Process {
    async fn start(command: &str, config: &Path) -> Self {
        let listen = format!("127.0.0.1:{}", support::free_port());
        let log = config.with_extension("log");
        let file =
            std::fs::OpenOptions::new().create(true).append(true).open(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_ensemble"))
            .args([command, "--config"])
            .arg(config)
            .env("RUST_LOG", "info")
            .env("ENSEMBLE_HTTP_LISTEN", &listen)
            .env("ENSEMBLE_ADMIN_TOKEN", TOKEN)
            .stdout(std::process::Stdio::null())
            .stderr(file)
            .spawn()
            .expect("ensemble starts");
        let addr: SocketAddr = listen.parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "{command} never listened");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Self { child, base: format!("http://{listen}"), log }
    }

    async fn status(&self) -> Value {
        let all: Value =
            reqwest::get(format!("{}/status", self.base)).await.unwrap().json().await.unwrap();
        all[0].clone()
    }

    async fn ready(&self) -> (u16, Value) {
        let response = reqwest::get(format!("{}/ready", self.base)).await.unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    async fn admin(&self, chain: u64, command: &str) -> Value {
        let response = crate::support::http_client()
            .post(format!("{}/admin/chains/{chain}/{command}", self.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{command}");
        response.json().await.unwrap()
    }

    /// Waits until `check` holds for the status, or fails with the last one seen.
    async fn status_until(
        &self,
        what: &str,
        within: Duration,
        check: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let status = self.status().await;
            if check(&status) {
                return status;
            }
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            assert!(Instant::now() < deadline, "{what}: status {status}; log:\n{log}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    fn terminate(mut self) {
        let term = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        assert!(term.unwrap().success());
        assert!(self.child.wait().unwrap().success(), "graceful exit");
    }
}

async fn status_tells_the_truth(backend: Backend, chain_id: u64) {
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let last = scenario.last_block;
    let db = TestDb::new(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "run", &db.url, &chain, Some(&anvil.url));
    let conn = ensemble::store::database::connect(&db.url).await.unwrap();

    // Synced, then killed: the next process knows where the chain stands at once. The node
    // mines nothing meanwhile, so no new block could tell it.
    let run = Process::start("run", &config).await;
    support::wait_for_block(&conn, chain_id, last).await;
    run.status_until("synced", Duration::from_secs(30), |s| s["phase"] == "following").await;
    // Ready: the query indexes a fresh database builds after its first sync are there too.
    let deadline = Instant::now() + Duration::from_secs(60);
    while run.ready().await.0 != 200 {
        assert!(Instant::now() < deadline, "never ready: {:?}", run.ready().await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run.kill();
    // Rows the new process writes: later than any the killed one wrote.
    let killed_at =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
            as i64;
    let run = Process::start("run", &config).await;
    let first = run
        .status_until("restarted", Duration::from_secs(5), |s| {
            s["updatedAt"].as_i64() > Some(killed_at)
        })
        .await;
    assert_eq!(first["indexedBlock"].as_u64(), Some(last), "from the first status: {first}");
    let synced = run
        .status_until("following without a new block", Duration::from_secs(10), |s| {
            s["updatedAt"].as_i64() > Some(killed_at) && s["phase"] == "following"
        })
        .await;
    assert_eq!(synced["indexedBlock"].as_u64(), Some(last), "{synced}");
    let (code, ready) = run.ready().await;
    assert_eq!(code, 200, "ready after a restart without a new block: {ready}");

    // Paused: nothing is indexed, but the head it reports moves with the chain.
    let paused = run.admin(chain_id, "pause").await;
    assert_eq!(paused["phase"], "paused");
    for _ in 0..5 {
        driver.mine().await.unwrap();
    }
    let head = last + 5;
    let seen = run
        .status_until("paused head", Duration::from_secs(15), |s| {
            s["headBlock"].as_u64() == Some(head)
        })
        .await;
    assert_eq!(seen["phase"], "paused", "{seen}");
    assert_eq!(seen["indexedBlock"].as_u64(), Some(last), "a paused chain indexes nothing");

    // Restarted while paused (gracefully and by a kill): it stays paused until resumed.
    run.terminate();
    let run = Process::start("run", &config).await;
    let again = run
        .status_until("paused after restart", Duration::from_secs(5), |s| s["phase"] == "paused")
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let checkpoint =
        ensemble::store::writer::read_checkpoint(&conn, chain_id.into()).await.unwrap().unwrap();
    assert_eq!(checkpoint.block_number, last, "still paused: {again}");
    run.kill();
    let run = Process::start("run", &config).await;
    run.status_until("paused after a kill", Duration::from_secs(5), |s| s["phase"] == "paused")
        .await;
    let (code, ready) = run.ready().await;
    assert_eq!(code, 503, "a paused chain behind its head is not ready: {ready}");
    run.admin(chain_id, "resume").await;
    support::wait_for_block(&conn, chain_id, head).await;
    run.status_until("resumed", Duration::from_secs(10), |s| s["phase"] == "following").await;
    let actual = ensemble::dump::dump(&conn).await.unwrap();
    let expected = support::fresh_dump(&chain, &driver).await;
    assert!(
        actual == expected,
        "after kills, pauses and restarts the index differs from a fresh one"
    );

    // An API process (no RPC endpoint needed) waits for the chain and sees it live.
    let serve_config = write_config(dir.path(), "serve", &db.url, &chain, None);
    let serve = Process::start("serve", &serve_config).await;
    let (code, ready) = serve.ready().await;
    assert_eq!(code, 200, "serve sees the indexer's live chain: {ready}");
    // The indexer stops: `serve` says so instead of answering ready.
    run.terminate();
    let stopped = serve.status().await;
    assert_eq!(stopped["phase"], "stopped", "{stopped}");
    let (code, ready) = serve.ready().await;
    assert_eq!(code, 503, "no indexer: {ready}");
    assert!(ready["reason"].as_str().unwrap().contains("stopped"), "{ready}");
    serve.kill();

    // An endpoint nobody answers: the status says why, and so does /ready.
    let dead = format!("http://127.0.0.1:{}/", support::free_port());
    let unreachable = write_config(dir.path(), "unreachable", &db.url, &chain, Some(&dead));
    let run = Process::start("run", &unreachable).await;
    let failing = run
        .status_until("unreachable rpc", Duration::from_secs(15), |s| s["error"].is_string())
        .await;
    assert!(matches!(failing["phase"].as_str(), Some("starting" | "restarting")), "{failing}");
    let (code, ready) = run.ready().await;
    assert_eq!(code, 503);
    let reason = ready["reason"].as_str().unwrap();
    assert!(reason.contains(&format!("chain {chain_id}")) && !reason.contains("index"), "{ready}");
    run.kill();
    drop(anvil);
}

crate::support::on_both_engines!(status_tells_the_truth, 31540);

/// A backfill shows its progress as blocks are applied, not only when they are committed
/// (flushes are rare in a backfill: the rows wait in memory).
#[actix_rt::test]
async fn a_backfill_reports_the_blocks_it_applies_before_it_commits_them() {
    use ensemble::chain::status::GetStatus;
    let chain_id = 31_545;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 60, per_block: 1 }).await;
    let mut chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    chain.max_block_range = 1;
    let last = scenario.last_block;
    let db = TestDb::new(Backend::Sqlite).await;
    let service = ensemble::Service::start(&support::config(&db.url, chain)).await.unwrap();
    let supervisor = service.chains()[&chain_id].clone();
    let mut ahead = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = supervisor.send(GetStatus).await.unwrap();
        if status.applied_block > status.indexed_block {
            ahead.push((status.applied_block, status.indexed_block));
        }
        if status.indexed_block >= last {
            break;
        }
        assert!(Instant::now() < deadline, "backfill stuck: {status:?}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    service.stop().await;
    let distinct: std::collections::BTreeSet<u64> = ahead.iter().map(|(a, _)| *a).collect();
    assert!(
        distinct.len() >= 3,
        "the applied block moved ahead of the committed one only {} times: {ahead:?}",
        distinct.len()
    );
}
