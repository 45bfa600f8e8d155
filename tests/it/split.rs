//! Split for scale: an indexer-only service and two API-only services share one PostgreSQL.
//! The API processes answer GraphQL from what the indexer writes, report its progress in
//! `/status`, `/ready` and `indexingStatus`, and have no say over its chains.

use std::time::{Duration, Instant};

use ensemble::{Mode, Service};
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

#[actix_rt::test]
async fn indexer_and_api_processes_share_one_postgres() {
    let chain_id = 31_412;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 20, per_block: 5 }).await;
    let db = TestDb::new(Backend::Postgres).await;
    let mut config =
        support::config(&db.url, scenario.deployment.chain_config(chain_id, &anvil.url));
    config.http.admin_token = Some("split-test-token-0123456789".into());

    let indexer = Service::start_mode(&config, Mode::Index).await.unwrap();
    let apis = [
        Service::start_mode(&config, Mode::Serve).await.unwrap(),
        Service::start_mode(&config, Mode::Serve).await.unwrap(),
    ];
    support::wait_for_block(&indexer.db, chain_id, scenario.last_block).await;
    let client = crate::support::http_client();

    let indexer_base = format!("http://{}", indexer.http_addr);
    assert_eq!(
        client
            .post(format!("{indexer_base}/graphql"))
            .json(&json!({"query": "{ __typename }"}))
            .send()
            .await
            .unwrap()
            .status(),
        404,
        "an indexer serves no GraphQL"
    );
    assert_eq!(client.get(format!("{indexer_base}/metrics")).send().await.unwrap().status(), 200);

    for api in &apis {
        let base = format!("http://{}", api.http_addr);
        // Ready once the indexer reports the chain caught up (its status row, every second).
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = client.get(format!("{base}/ready")).send().await.unwrap();
            if ready.status() == 200 {
                break;
            }
            assert!(Instant::now() < deadline, "never ready: {}", ready.text().await.unwrap());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let answer: Value = client
            .post(format!("{base}/graphql"))
            .json(&json!({ "query": "{ domain(by: {name: \"name010.eth\"}) { canonical { depth } } indexingStatus { chainId phase indexedBlock } }" }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["data"]["domain"]["canonical"]["depth"], 2, "{answer}");
        let status = &answer["data"]["indexingStatus"][0];
        assert_eq!(
            (status["chainId"].clone(), status["phase"].clone()),
            (json!(chain_id), json!("following")),
            "{answer}"
        );
        assert_eq!(status["indexedBlock"], json!(scenario.last_block.to_string()));
        let rest: Value =
            client.get(format!("{base}/status")).send().await.unwrap().json().await.unwrap();
        assert_eq!(rest[0]["phase"], "following", "{rest}");
        let admin = client
            .post(format!("{base}/admin/chains/{chain_id}/restart"))
            .bearer_auth("split-test-token-0123456789")
            .send()
            .await
            .unwrap();
        assert_eq!(admin.status(), 404, "an API process does not run chains");
    }
    for api in apis {
        api.shutdown(Duration::from_secs(5)).await;
    }
    indexer.shutdown(Duration::from_secs(5)).await;
}
