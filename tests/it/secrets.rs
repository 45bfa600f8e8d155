//! Secrets never reach the logs: an RPC endpoint whose URL carries a user, a password, a key in
//! its path and one in its query, and a database URL with a password, through `ensemble run`
//! logging at `trace` (every span and event of every crate, text and JSON), while it indexes
//! through that endpoint, and while another endpoint with the same kind of URL refuses every
//! connection. No log line, and no status error, holds any of them.

use std::{
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use actix_web::{App, HttpResponse, HttpServer, web};
use ensemble_devkit::devnet::scenario::ScenarioOptions;

use crate::support::{self, Backend, TestDb};

const PASSWORD: &str = "Pa55w0rdSecret";
const PATH_KEY: &str = "PATHKEY1234567890";
const QUERY_KEY: &str = "QUERYKEY987654321";
const DB_PASSWORD: &str = "DbPa55w0rdSecret";

/// Forwards every POST, whatever its path, to `upstream` (a provider's URL shape in front of
/// anvil, which serves only `/`).
async fn forward(upstream: web::Data<String>, body: web::Bytes) -> HttpResponse {
    let answer = crate::support::http_client()
        .post(upstream.as_str())
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await;
    match answer {
        Ok(r) => HttpResponse::Ok()
            .content_type("application/json")
            .body(r.bytes().await.unwrap_or_default().to_vec()),
        Err(_) => HttpResponse::BadGateway().finish(),
    }
}

fn secret_url(addr: &str) -> String {
    format!("http://alice:{PASSWORD}@{addr}/v3/{PATH_KEY}?apikey={QUERY_KEY}")
}

fn write_config(
    path: &Path,
    db_url: &str,
    chains: &[(u64, &ensemble::config::ChainConfig, String)],
) {
    let mut text = format!("[database]\nurl = \"{db_url}\"\n");
    for (id, chain, rpc) in chains {
        let contracts: Vec<String> = chain
            .contracts
            .iter()
            .map(|c| {
                format!("{{ role = \"{}\", address = \"{:#x}\" }}", c.role.as_str(), c.address)
            })
            .collect();
        text.push_str(&format!(
            "[[chains]]\nid = {id}\nname = \"c{id}\"\nrpc_url = \"{rpc}\"\npoll_interval_ms = 50\n\
             request_timeout_ms = 300\ncontracts = [{}]\n",
            contracts.join(", ")
        ));
    }
    std::fs::write(path, text).unwrap();
}

async fn no_secret_in_any_log_line(backend: Backend, chain_id: u64, json: bool) {
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 6, per_block: 6 }).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let upstream = web::Data::new(anvil.url.clone());
    let server = HttpServer::new(move || {
        App::new().app_data(upstream.clone()).default_service(web::post().to(forward))
    })
    .workers(1)
    .disable_signals()
    .bind("127.0.0.1:0")
    .unwrap();
    let proxy = server.addrs()[0];
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);

    let db = TestDb::new(backend).await;
    let db_url = match backend {
        // Trust authentication ignores the password, so it can be any secret.
        Backend::Postgres => db.url.replacen("postgres@", &format!("postgres:{DB_PASSWORD}@"), 1),
        Backend::Sqlite => db.url.clone(),
    };
    let dead = format!("127.0.0.1:{}", support::free_port());
    // The dead endpoint's chain is another id: the node behind the live one is only one chain.
    let mut dead_chain = chain.clone();
    dead_chain.id = (chain_id + 1).into();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("secrets.toml");
    write_config(
        &config,
        &db_url,
        &[
            (chain_id, &chain, secret_url(&proxy.to_string())),
            (chain_id + 1, &dead_chain, secret_url(&dead)),
        ],
    );
    let log_path = dir.path().join("secrets.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let listen = format!("127.0.0.1:{}", support::free_port());
    let mut command = Command::new(env!("CARGO_BIN_EXE_ensemble"));
    if json {
        command.arg("--json-logs");
    }
    let mut child = command
        .args(["run", "--config"])
        .arg(&config)
        .env("RUST_LOG", "trace")
        .env("ENSEMBLE_HTTP_LISTEN", &listen)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let conn = ensemble::store::database::connect_without_migrating(&db.url).await.unwrap();
    support::wait_for_block(&conn, chain_id, scenario.last_block).await;
    // Let the dead endpoint fail and be retried a few times, and the status show it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        let status: serde_json::Value = match reqwest::get(format!("http://{listen}/status")).await
        {
            Ok(r) => r.json().await.unwrap_or_default(),
            Err(_) => serde_json::Value::Null,
        };
        let dead_error = status
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["chainId"] == serde_json::json!(chain_id + 1)))
            .and_then(|r| r["error"].as_str().map(str::to_owned));
        if let Some(error) = dead_error {
            break error;
        }
        assert!(Instant::now() < deadline, "the dead endpoint's error never showed: {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    child.kill().unwrap();
    child.wait().unwrap();
    handle.stop(true).await;
    // What was indexed through the credentialed endpoint is what a direct index finds.
    let mut direct = chain.clone();
    direct.rpc_url = Some(anvil.url.clone());
    let db_direct = TestDb::new(Backend::Sqlite).await;
    let service = ensemble::Service::start(&support::config(&db_direct.url, direct)).await.unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let expected = ensemble::dump::dump(&service.db).await.unwrap();
    service.stop().await;
    let actual = ensemble::dump::dump(&conn).await.unwrap();
    assert!(actual == expected, "the index through the credentialed endpoint differs");

    let text = std::fs::read_to_string(&log_path).unwrap();
    let lines = text.lines().count();
    // Trace level is on, so the check below reads what the most verbose logging writes. Trace
    // lines are counted, not all lines: how many a run writes depends on how many windows it
    // reads.
    let traces = text.lines().filter(|l| l.contains("TRACE")).count();
    assert!(traces > 100, "trace logging is on: {traces} trace lines of {lines}");
    assert!(text.contains("<redacted>"), "the URLs were logged, redacted");
    for secret in [PASSWORD, PATH_KEY, QUERY_KEY, DB_PASSWORD] {
        if let Some(line) = text.lines().find(|l| l.contains(secret)) {
            panic!("{secret} is in the log ({lines} lines), e.g.:\n{line}");
        }
        assert!(!status.contains(secret), "{secret} is in the status error: {status}");
    }
    eprintln!("{lines} log lines, none with a secret; status error: {status}");
}

#[actix_rt::test]
async fn no_secret_in_any_log_line_on_sqlite_text_logs() {
    no_secret_in_any_log_line(Backend::Sqlite, 31_550, false).await;
}

#[actix_rt::test]
async fn no_secret_in_any_log_line_on_postgres_json_logs() {
    no_secret_in_any_log_line(Backend::Postgres, 31_552, true).await;
}
