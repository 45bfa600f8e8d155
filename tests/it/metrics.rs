//! The HTTP surface of a running service: `/metrics` shows mailbox depth per actor and chain,
//! the processed counts and the handler's phases; `/health` answers; GraphiQL is served at
//! `GET /graphql`.

use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;

use crate::support::{self, Backend, TestDb};

#[actix_rt::test]
async fn metrics_show_mailboxes_per_actor_and_chain() {
    let chain_id = 31_402;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 4 }).await;
    let db = TestDb::new(Backend::Sqlite).await;
    let config = support::config(&db.url, scenario.deployment.chain_config(chain_id, &anvil.url));
    let service = Service::start(&config).await.unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;

    let base = format!("http://{}", service.http_addr);
    let client = crate::support::http_client();
    let metrics = client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(metrics.status(), 200);
    let text = metrics.text().await.unwrap();
    for actor in ["decoder", "handler"] {
        for metric in ["ensemble_mailbox_depth", "ensemble_mailbox_capacity"] {
            let series = format!("{metric}{{chain=\"{chain_id}\",actor=\"{actor}\"}}");
            assert!(text.contains(&series), "missing {series} in\n{text}");
        }
    }
    assert!(
        text.contains(&format!(
            "ensemble_events_processed_total{{chain=\"{chain_id}\",event=\"NewOwner\"}}"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "ensemble_chain_indexed_block{{chain=\"{chain_id}\"}} {}",
            scenario.last_block
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("ensemble_chain_finalized_block{{chain=\"{chain_id}\"}}")),
        "{text}"
    );
    // Where the handler's time went: every batch prefetched, applied and ended, and at the
    // head every batch's flush was waited for.
    for phase in ["prefetch", "apply", "batch_end", "write_wait"] {
        let series = format!(
            "ensemble_handler_phase_seconds_count{{chain=\"{chain_id}\",phase=\"{phase}\"}} "
        );
        let count = text
            .lines()
            .find_map(|line| line.strip_prefix(&series))
            .and_then(|n| n.trim().parse::<u64>().ok());
        assert!(count.is_some_and(|n| n > 0), "no {series}in\n{text}");
    }

    promtool_accepts(&text);

    let health = client.get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let graphiql =
        client.get(format!("{base}/graphql")).send().await.unwrap().text().await.unwrap();
    assert!(graphiql.to_lowercase().contains("graphiql"));
    let answer: serde_json::Value = client
        .post(format!("{base}/graphql"))
        .json(&serde_json::json!({ "query": "{ domain(by: {name: \"name005.eth\"}) { canonical { depth } } }" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["data"]["domain"]["canonical"]["depth"], 2, "{answer}");
    service.stop().await;
}

/// `promtool check metrics` (Debian package `prometheus`, installed by `.ci/run`) must accept
/// the exposition: names, types, HELP texts, units.
pub(crate) fn promtool_accepts(exposition: &str) {
    use std::io::Write;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool is installed (apt-get install prometheus; .ci/run does it)");
    child.stdin.take().unwrap().write_all(exposition.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
