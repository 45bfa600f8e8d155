//! RPC faults: a proxy in front of anvil fails a fifth of all requests (429 with Retry-After,
//! 500, timeouts, truncated bodies, log-range refusals) and sometimes reports a head from the
//! past, as a lagging node behind a load balancer does. Indexing through it ends in exactly
//! the state of indexing anvil directly, the retries show in the metrics, and the lagging head
//! is never mistaken for a reorg.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use actix_web::{App, HttpResponse, HttpServer, web};
use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::support::{self, Backend, TestDb};

/// Share of requests that fail.
const FAULT_RATE: f64 = 0.2;
/// The indexer's request timeout in this test; timeout faults sleep longer.
const TIMEOUT_MS: u64 = 400;

struct Proxy {
    upstream: String,
    client: reqwest::Client,
    rng: std::sync::Mutex<StdRng>,
    faults: AtomicU64,
    requests: AtomicU64,
    stale_heads: AtomicU64,
}

async fn forward(proxy: &Proxy, body: &web::Bytes) -> Result<(u16, Vec<u8>), reqwest::Error> {
    let response = proxy
        .client
        .post(&proxy.upstream)
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await?;
    Ok((response.status().as_u16(), response.bytes().await?.to_vec()))
}

async fn handle(proxy: web::Data<Proxy>, body: web::Bytes) -> HttpResponse {
    proxy.requests.fetch_add(1, Ordering::Relaxed);
    let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let is_get_logs = request["method"] == "eth_getLogs";
    if request["method"] == "eth_blockNumber" && proxy.rng.lock().unwrap().random_bool(FAULT_RATE) {
        // A node that is behind: the head it reports went backwards.
        if let Ok((_, bytes)) = forward(&proxy, &body).await {
            let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let head = u64::from_str_radix(
                answer["result"].as_str().unwrap_or("0x0").trim_start_matches("0x"),
                16,
            )
            .unwrap_or(0);
            proxy.stale_heads.fetch_add(1, Ordering::Relaxed);
            return HttpResponse::Ok().json(serde_json::json!({
                "jsonrpc": "2.0", "id": request["id"], "result": format!("{:#x}", head.saturating_sub(6))
            }));
        }
    }
    let fault = {
        let mut rng = proxy.rng.lock().unwrap();
        rng.random_bool(FAULT_RATE).then(|| rng.random_range(0..5u8))
    };
    if fault.is_some() {
        proxy.faults.fetch_add(1, Ordering::Relaxed);
    }
    match fault {
        Some(0) => {
            HttpResponse::TooManyRequests().insert_header(("Retry-After", "1")).body("slow down")
        }
        Some(1) => HttpResponse::InternalServerError().body("upstream exploded"),
        Some(2) => {
            tokio::time::sleep(Duration::from_millis(TIMEOUT_MS * 3)).await;
            HttpResponse::GatewayTimeout().finish()
        }
        Some(3) => match forward(&proxy, &body).await {
            // A body cut in half: must be retried, never parsed as data.
            Ok((_, bytes)) => HttpResponse::Ok()
                .content_type("application/json")
                .body(bytes[..bytes.len() / 2].to_vec()),
            Err(_) => HttpResponse::BadGateway().finish(),
        },
        Some(_) if is_get_logs => HttpResponse::Ok().json(serde_json::json!({
            "jsonrpc": "2.0", "id": request["id"],
            "error": { "code": -32005, "message": "query returned more than 10000 results" }
        })),
        Some(_) => HttpResponse::ServiceUnavailable().finish(),
        None => match forward(&proxy, &body).await {
            Ok((status, bytes)) => {
                HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap())
                    .content_type("application/json")
                    .body(bytes)
            }
            Err(_) => HttpResponse::BadGateway().finish(),
        },
    }
}

crate::support::on_both_engines!(rpc_faults_at_twenty_percent_change_nothing, 31_430);

async fn rpc_faults_at_twenty_percent_change_nothing(backend: Backend, chain_id: u64) {
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 30, per_block: 5 }).await;
    let mut chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    chain.max_block_range = 4;
    chain.request_timeout_ms = TIMEOUT_MS;
    let last = scenario.last_block;
    let expected = support::reference_dump(&chain, last).await;

    let proxy = web::Data::new(Proxy {
        upstream: anvil.url.clone(),
        client: crate::support::http_client(),
        rng: std::sync::Mutex::new(StdRng::seed_from_u64(20)),
        faults: AtomicU64::new(0),
        requests: AtomicU64::new(0),
        stale_heads: AtomicU64::new(0),
    });
    let shared = proxy.clone();
    let server = HttpServer::new(move || {
        App::new().app_data(shared.clone()).default_service(web::post().to(handle))
    })
    .workers(2)
    .disable_signals()
    .bind("127.0.0.1:0")
    .unwrap();
    let addr = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);

    chain.rpc_url = Some(format!("http://{addr}"));
    let db = TestDb::new(backend).await;
    let service = Service::start(&support::config(&db.url, chain)).await.unwrap();
    support::wait_for_block(&service.db, chain_id, last).await;
    let actual = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    handle.stop(false).await;

    let (faults, requests) =
        (proxy.faults.load(Ordering::Relaxed), proxy.requests.load(Ordering::Relaxed));
    eprintln!("{faults} faults in {requests} requests");
    assert!(faults >= 10, "too few faults injected: {faults} of {requests}");
    assert!(actual == expected, "indexing through faults changed the result");
    let metrics = ensemble::metrics::install().render();
    let retries: f64 = metrics
        .lines()
        .filter(|l| {
            l.starts_with("ensemble_rpc_retries_total")
                && l.contains(&format!("chain=\"{chain_id}\""))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(retries > 0.0, "retries must be visible in metrics:\n{metrics}");
    assert!(proxy.stale_heads.load(Ordering::Relaxed) > 0, "no stale head was served");
    assert!(
        metrics.contains(&format!("ensemble_reorgs_total{{chain=\"{chain_id}\"}} 0\n")),
        "a lagging head must not be taken for a reorg:\n{metrics}"
    );
}
