//! Operating a running service: the admin API's authentication, and restarting, pausing and
//! resuming one chain while a separate client keeps querying GraphQL.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use ensemble::{Service, store::writer::read_checkpoint};
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

const TOKEN: &str = "test-admin-token-0123456789";

fn with_token(mut config: ensemble::Config, token: Option<&str>) -> ensemble::Config {
    config.http.admin_token = token.map(str::to_owned);
    config
}

#[actix_rt::test]
async fn admin_api_refuses_missing_or_wrong_tokens_and_is_off_without_one() {
    let chain_id = 31_410;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 6, per_block: 6 }).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let client = crate::support::http_client();

    let db = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&with_token(support::config(&db.url, chain.clone()), Some(TOKEN)))
        .await
        .unwrap();
    let base = format!("http://{}", service.http_addr);
    let list = format!("{base}/admin/chains");
    let restart = format!("{base}/admin/chains/{chain_id}/restart");
    assert_eq!(client.get(&list).send().await.unwrap().status(), 401);
    assert_eq!(client.post(&restart).send().await.unwrap().status(), 401);
    assert_eq!(
        client.get(&list).bearer_auth("wrong-token-0123456789").send().await.unwrap().status(),
        403
    );
    assert_eq!(
        client.post(&restart).bearer_auth("wrong-token-0123456789").send().await.unwrap().status(),
        403
    );
    assert_eq!(
        client.get(&list).header("Authorization", TOKEN).send().await.unwrap().status(),
        401,
        "scheme is required"
    );
    let ok = client.get(&list).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let chains: Value = ok.json().await.unwrap();
    assert_eq!(chains[0]["chain_id"], json!(chain_id), "{chains}");
    let unknown = client
        .post(format!("{base}/admin/chains/999/restart"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    service.stop().await;

    let db = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&with_token(support::config(&db.url, chain), None)).await.unwrap();
    let base = format!("http://{}", service.http_addr);
    let off = client.get(format!("{base}/admin/chains")).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(off.status(), 404, "without ENSEMBLE_ADMIN_TOKEN the admin API does not exist");
    service.stop().await;
}

/// Sends GraphQL queries over HTTP from its own thread and runtime until told to stop;
/// returns (answered, failed).
fn query_load(url: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<(u64, u64)> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let client = crate::support::http_client();
            let (ok, failed) = (AtomicU64::new(0), AtomicU64::new(0));
            let query = json!({ "query": "{ domains(where: {name: {starts_with: \"name\"}}, first: 5) { totalCount edges { node { id owner { address } } } } indexingStatus { phase indexedBlock } }" });
            while !stop.load(Ordering::Relaxed) {
                let answer = client.post(&url).json(&query).send().await;
                let good = match answer {
                    Ok(r) if r.status() == 200 => r.json::<Value>().await.is_ok_and(|v| v.get("errors").is_none() && v["data"]["domains"].is_object()),
                    _ => false,
                };
                if good { ok.fetch_add(1, Ordering::Relaxed) } else { failed.fetch_add(1, Ordering::Relaxed) };
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            (ok.into_inner(), failed.into_inner())
        })
    })
}

async fn admin(client: &reqwest::Client, base: &str, chain: u64, command: &str) -> Value {
    let response = client
        .post(format!("{base}/admin/chains/{chain}/{command}"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{command}");
    response.json().await.unwrap()
}

/// The service runs as its own process (`ensemble run`); this test process keeps querying it
/// over HTTP while it restarts, pauses and resumes the chain through the admin API.
#[actix_rt::test]
async fn restart_pause_resume_under_query_load_change_nothing() {
    let chain_id = 31_411;
    let long = support::LongRun::new(chain_id).await;
    // `long` owns the anvil process: it lives to the end of the test.
    let (chain, last, expected) = (long.chain.clone(), long.last, long.expected.clone());

    let db = TestDb::new(Backend::Sqlite).await;
    let dir = tempfile::tempdir().unwrap();
    let config_path = support::write_config(dir.path(), &db.url, &chain, 1);
    let port = support::free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut server = support::spawn_ensemble(
        &config_path,
        &[("ENSEMBLE_ADMIN_TOKEN", TOKEN), ("ENSEMBLE_HTTP_LISTEN", &listen)],
    );
    let base = format!("http://{listen}");
    let client = crate::support::http_client();
    let deadline = Instant::now() + Duration::from_secs(60);
    while client.get(format!("{base}/health")).send().await.is_err() {
        assert!(Instant::now() < deadline, "server never came up");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let conn = ensemble::store::database::connect(&db.url).await.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let load = query_load(format!("{base}/graphql"), stop.clone());

    // Restart part-way through backfill.
    while read_checkpoint(&conn, chain_id.into()).await.unwrap().map_or(0, |c| c.block_number)
        < last / 3
    {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let restarted = admin(&client, &base, chain_id, "restart").await;
    assert!(
        restarted["indexed_block"].as_u64().unwrap() < last,
        "restart should land part-way: {restarted}"
    );

    // Pause: nothing moves; resume: it finishes.
    let paused = admin(&client, &base, chain_id, "pause").await;
    assert_eq!(paused["phase"], "paused");
    let at = read_checkpoint(&conn, chain_id.into()).await.unwrap().map_or(0, |c| c.block_number);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        read_checkpoint(&conn, chain_id.into()).await.unwrap().map_or(0, |c| c.block_number),
        at,
        "a paused chain does not advance"
    );
    assert!(at < last, "pause should land part-way");
    let resumed = admin(&client, &base, chain_id, "resume").await;
    assert_ne!(resumed["phase"], "paused");
    support::wait_for_block(&conn, chain_id, last).await;

    stop.store(true, Ordering::Relaxed);
    let (answered, failed) = load.join().unwrap();
    assert_eq!(
        failed,
        0,
        "{failed} of {} queries failed during restart/pause/resume",
        answered + failed
    );
    assert!(answered > 20, "the load sent only {answered} queries");

    let metrics = client.get(format!("{base}/metrics")).send().await.unwrap().text().await.unwrap();
    let log = std::fs::read_to_string(config_path.with_extension("log")).unwrap_or_default();
    assert!(
        metrics.contains(&format!(
            "ensemble_actor_restarts_total{{chain=\"{chain_id}\",actor=\"pipeline\"}} 1"
        )),
        "exactly the one admin restart; server log:\n{log}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    let actual = ensemble::dump::dump(&conn).await.unwrap();
    assert!(
        actual == expected,
        "state after restart/pause/resume differs from an uninterrupted run"
    );
}
