//! Database faults: the PostgreSQL server crashes in the middle of indexing and comes back
//! later. The chain pauses (the pool waits for the server, or a failed transaction makes the
//! supervisor retry from the checkpoint with backoff), resumes when the server is back, and
//! ends in exactly the state of an undisturbed run; no batch is half-written.
//!
//! The test runs its own PostgreSQL cluster (initdb into a temporary directory; as the
//! `postgres` user when the suite runs as root) so that restarting it disturbs no other test.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use ensemble::{Service, store::writer::read_checkpoint};

use crate::{postgres, support};

struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

fn as_postgres(bin: &Path, tool: &str, args: &[&str]) {
    let status = postgres::server_command(&bin.join(tool)).args(args).status().expect("runs");
    assert!(status.success(), "{tool} {args:?} failed");
}

impl Cluster {
    fn start() -> Self {
        let bin = postgres::server_binaries().expect("PostgreSQL server binaries");
        let dir = tempfile::Builder::new().prefix("ensemble-pg").tempdir().unwrap();
        if postgres::is_root() {
            Command::new("chown").args(["-R", "postgres"]).arg(dir.path()).status().unwrap();
        }
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
        self.ctl_mode(action, "fast");
    }

    /// `pg_ctl <action>` with shutdown mode `mode` (`immediate` is a crash: no checkpoint,
    /// recovery on the next start).
    fn ctl_mode(&self, action: &str, mode: &str) {
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
                mode,
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
        let _ = postgres::server_command(&self.bin.join("pg_ctl"))
            .args(["-D", data.to_str().unwrap_or_default(), "-m", "immediate", "stop"])
            .status();
    }
}

#[actix_rt::test]
async fn postgres_outage_mid_run_pauses_and_resumes() {
    let chain_id = 31_440;
    let long = support::LongRun::new(chain_id).await;
    // `long` owns the anvil process: it lives to the end of the test.
    let (chain, last, expected) = (long.chain.clone(), long.last, long.expected.clone());

    let cluster = Cluster::start();
    let mut config = support::config(&cluster.url(), chain);
    config.indexer.flush_rows = 1;
    let service = Service::start(&config).await.unwrap();
    // At the first commit, so most of the chain is still ahead of the indexer.
    let deadline = Instant::now() + Duration::from_secs(60);
    let at = loop {
        let at = read_checkpoint(&service.db, chain_id.into())
            .await
            .ok()
            .flatten()
            .map_or(0, |c| c.block_number);
        if at > 0 {
            break at;
        }
        assert!(Instant::now() < deadline, "indexer made no progress");
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    assert!(at < last / 2, "the outage must come mid-run ({at} of {last})");
    // A crash, and an outage the pool cannot hide: the server stays down a while.
    cluster.ctl_mode("stop", "immediate");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    cluster.ctl("start");
    support::wait_for_block(&service.db, chain_id, last).await;
    // Either the pool waited the outage out (a pause) or an open transaction failed and the
    // supervisor restarted the pipeline from its checkpoint; both must end identically.
    let restarted = ensemble::metrics::install().render().contains(&format!(
        "ensemble_actor_restarts_total{{chain=\"{chain_id}\",actor=\"pipeline\"}}"
    ));
    eprintln!("outage at block {at} of {last}; pipeline restarted: {restarted}");
    let actual = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    assert!(actual == expected, "a PostgreSQL crash mid-run changed the indexed state");
}
