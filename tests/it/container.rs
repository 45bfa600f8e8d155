//! The service image, run for real: `docker run` of the image `docker/build-image.sh` built
//! (`ENSEMBLE_TEST_IMAGE`, default `ensemble:local`) on the host network, against PostgreSQL
//! and a devnet anvil on this machine. It migrates, indexes the devnet, answers GraphQL and
//! `/ready`, passes the compose file's healthcheck command, runs as a non-root user, and stops
//! on SIGTERM within the compose file's `stop_grace_period` with its checkpoint committed.
//!
//! Ignored by the plain test command (it needs Docker and the built image); `.ci/run` builds
//! the image and runs it with `--run-ignored only`.

use std::{
    process::Command,
    time::{Duration, Instant},
};

use ensemble::store::writer::read_checkpoint;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

fn docker(args: &[&str]) -> (bool, String) {
    let out = Command::new("docker").args(args).output().expect("docker is installed");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text.trim().to_owned())
}

/// The compose file's healthcheck command of the `ensemble` service, and its grace period.
fn compose_contract() -> (Vec<String>, Duration) {
    let compose = include_str!("../../docker/compose.yaml");
    let test = compose
        .lines()
        .filter_map(|l| l.trim().strip_prefix("test: "))
        .find(|t| t.contains("/health"))
        .expect("the ensemble service has a healthcheck");
    let command: Vec<String> = serde_json::from_str(test).expect("a flow sequence of strings");
    let grace = compose
        .lines()
        .find_map(|l| l.trim().strip_prefix("stop_grace_period: "))
        .and_then(|g| g.trim_end_matches('s').parse::<u64>().ok())
        .expect("a stop_grace_period in seconds");
    (command, Duration::from_secs(grace))
}

#[actix_rt::test]
#[ignore = "needs Docker and the image docker/build-image.sh builds; .ci/run runs it"]
async fn the_image_indexes_the_devnet_and_stops_gracefully() {
    let image = std::env::var("ENSEMBLE_TEST_IMAGE").unwrap_or_else(|_| "ensemble:local".into());
    let (ok, size) = docker(&["image", "inspect", &image, "--format", "{{.Size}}"]);
    assert!(ok, "image {image} not built (bash docker/build-image.sh): {size}");
    let size: u64 = size.parse().unwrap();
    eprintln!("image {image}: {:.1} MB", size as f64 / 1e6);
    assert!(size < 120_000_000, "the image is {size} bytes");

    let chain_id = 31_600;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let db = TestDb::new(Backend::Postgres).await;
    let dir = tempfile::tempdir().unwrap();
    let config = support::write_config(dir.path(), &db.url, &chain, 200_000);
    // The container's user must read it.
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap();
    std::fs::set_permissions(&config, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let (health, grace) = compose_contract();
    // The compose file's healthcheck asks port 8080: the container listens there.
    let listen = "127.0.0.1:8080";
    let name = format!("ensemble-test-{}", std::process::id());
    let mount = format!("{}:/etc/ensemble-test:ro", dir.path().display());
    let (ok, out) = docker(&[
        "run",
        "-d",
        "--name",
        &name,
        "--network",
        "host",
        "-v",
        &mount,
        "-e",
        &format!("ENSEMBLE_HTTP_LISTEN={listen}"),
        &image,
        "run",
        "--config",
        "/etc/ensemble-test/indexer.toml",
    ]);
    assert!(ok, "docker run: {out}");
    let logs = || docker(&["logs", &name]).1;

    let client = crate::support::http_client();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let ready = client.get(format!("http://{listen}/ready")).send().await;
        if ready.is_ok_and(|r| r.status() == 200) {
            break;
        }
        assert!(Instant::now() < deadline, "never ready; container log:\n{}", logs());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let conn = ensemble::store::database::connect_without_migrating(&db.url).await.unwrap();
    support::wait_for_block(&conn, chain_id, scenario.last_block).await;
    let answer: Value = client
        .post(format!("http://{listen}/graphql"))
        .json(
            &json!({ "query": "{ domain(by: {name: \"name005.eth\"}) { canonical { depth } } }" }),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["data"]["domain"]["canonical"]["depth"], 2, "{answer}");

    let mut exec = vec!["exec", name.as_str()];
    exec.extend(health.iter().skip(1).map(String::as_str));
    let (ok, out) = docker(&exec);
    assert!(ok, "the compose healthcheck failed: {out}");
    let (_, uid) = docker(&["exec", &name, "id", "-u"]);
    assert_eq!(uid, "10001", "runs as the ensemble user, not root");

    let stopping = Instant::now();
    let (ok, out) = docker(&["stop", "-t", &grace.as_secs().to_string(), &name]);
    let took = stopping.elapsed();
    assert!(ok, "docker stop: {out}");
    assert!(took < grace, "stopping took {took:?}, over the grace period {grace:?}");
    let (_, code) = docker(&["inspect", &name, "--format", "{{.State.ExitCode}}"]);
    let log = logs();
    assert_eq!(code, "0", "a graceful exit; log:\n{log}");
    assert!(log.contains("Stopped"), "{log}");
    let checkpoint = read_checkpoint(&conn, chain_id.into()).await.unwrap().unwrap();
    assert_eq!(checkpoint.block_number, scenario.last_block, "the checkpoint is committed");
    docker(&["rm", "-f", &name]);
    drop(anvil);
}
