//! Database faults: the PostgreSQL server restarts in the middle of indexing. The chain pauses
//! (its pipeline fails and the supervisor retries with backoff), resumes when the server is
//! back, and ends in exactly the state of an undisturbed run; no batch is half-written.
//!
//! The test runs its own PostgreSQL cluster (initdb into a temporary directory, as the
//! `postgres` user) so that restarting it disturbs no other test.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use ensemble::{Service, devnet::scenario::ScenarioOptions, store::writer::read_checkpoint};

use crate::support;

struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

fn as_postgres(bin: &Path, tool: &str, args: &[&str]) {
    let status = Command::new("runuser")
        .args(["-u", "postgres", "--"])
        .arg(bin.join(tool))
        .args(args)
        .status()
        .expect("runuser runs");
    assert!(status.success(), "{tool} {args:?} failed");
}

impl Cluster {
    fn start() -> Self {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL server binaries in /usr/lib/postgresql")
            .filter_map(Result::ok)
            .map(|e| e.path().join("bin"))
            .find(|p| p.join("initdb").exists())
            .expect("initdb");
        let dir = tempfile::Builder::new().prefix("ensemble-pg").tempdir().unwrap();
        Command::new("chown").args(["-R", "postgres"]).arg(dir.path()).status().unwrap();
        let data = dir.path().join("data");
        as_postgres(
            &bin,
            "initdb",
            &["-D", data.to_str().unwrap(), "-A", "trust", "-U", "postgres", "--no-sync"],
        );
        let port = support::free_port();
        let cluster = Self { bin, dir, port };
        cluster.ctl("start");
        cluster
    }

    fn ctl(&self, action: &str) {
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("log");
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        as_postgres(
            &self.bin,
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-o",
                &opts,
                "-m",
                "fast",
                "-w",
                action,
            ],
        );
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", data.to_str().unwrap_or_default(), "-m", "immediate", "stop"])
            .status();
    }
}

#[actix_rt::test]
async fn postgres_restart_mid_run_pauses_and_resumes() {
    let chain_id = 31_440;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 60, per_block: 1 }).await;
    let mut chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    chain.max_block_range = 1;
    let last = scenario.last_block;
    let expected = support::reference_dump(&chain, last).await;

    let cluster = Cluster::start();
    let mut config = support::config(&cluster.url(), chain);
    config.indexer.flush_rows = 1;
    let service = Service::start(&config).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while read_checkpoint(&service.db, chain_id).await.ok().flatten().map_or(0, |c| c.block_number)
        < last / 3
    {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    cluster.ctl("restart");
    support::wait_for_block(&service.db, chain_id, last).await;
    let metrics = ensemble::metrics::install().render();
    assert!(
        metrics.contains(&format!(
            "ensemble_actor_restarts_total{{chain=\"{chain_id}\",actor=\"pipeline\"}}"
        )),
        "the database outage must have stopped and restarted the pipeline:\n{metrics}"
    );
    let actual = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    assert!(actual == expected, "a PostgreSQL restart changed the indexed state");
}
