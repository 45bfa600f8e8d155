//! The GraphiQL playground in a real browser (Debian's `chromium`, headless, driven over the
//! DevTools protocol): it loads with no network access beyond Ensemble (every other host is
//! unresolvable), runs a `domains` query and a `subscription` whose results the test reads
//! from the rendered result pane, and logs no console error. A screenshot is saved to
//! `target/tmp/playground.png`.

use std::{
    collections::HashMap,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::support::{self, Backend, TestDb};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A headless Chromium and one page of it, over the DevTools protocol.
struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    page: Socket,
    next_id: u64,
    /// Events received while waiting for answers.
    events: Vec<Value>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    async fn launch() -> Self {
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-default-apps",
                "--disable-sync",
                "--window-size=1400,900",
                // No network beyond this machine's loopback: any other host is unresolvable.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium is installed (Debian package chromium; .ci/run installs it)");
        // Chromium writes the port it chose into the profile.
        let port_file = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|text| text.lines().next().and_then(|l| l.parse::<u16>().ok()))
            {
                break port;
            }
            assert!(Instant::now() < deadline, "chromium did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let targets: Vec<Value> = reqwest::get(format!("http://127.0.0.1:{port}/json/list"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let url = targets
            .iter()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .expect("a page target")
            .to_owned();
        let (page, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let mut browser = Self { child, _profile: profile, page, next_id: 0, events: Vec::new() };
        for domain in ["Runtime", "Log", "Network", "Page"] {
            browser.call(&format!("{domain}.enable"), json!({})).await;
        }
        browser
    }

    /// Sends a command and waits for its answer, keeping the events that come meanwhile.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({ "id": id, "method": method, "params": params });
        self.page.send(Message::Text(message.to_string().into())).await.unwrap();
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(30), self.page.next())
                .await
                .unwrap_or_else(|_| panic!("{method}: no answer"))
                .unwrap()
                .unwrap();
            let Message::Text(text) = frame else { continue };
            let value: Value = serde_json::from_str(text.as_str()).unwrap();
            if value["id"] == json!(id) {
                assert!(value["error"].is_null(), "{method}: {value}");
                return value["result"].clone();
            }
            self.events.push(value);
        }
    }

    /// Evaluates `expression` in the page; its value.
    async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await;
        assert!(result["exceptionDetails"].is_null(), "{expression}: {result}");
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    async fn until(&mut self, what: &str, expression: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while self.eval(expression).await != json!(true) {
            if Instant::now() >= deadline {
                let shown = self.eval(RESULT).await;
                panic!("{what}: not within {within:?}; the result pane shows {shown}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Console errors, uncaught exceptions and error log entries seen so far.
    fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| {
                (e["method"] == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                    || e["method"] == "Runtime.exceptionThrown"
                    || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
            })
            .map(Value::to_string)
            .collect()
    }

    /// Every URL the page requested.
    fn requested(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_owned))
            .collect()
    }
}

/// Puts `query` into GraphiQL's editor and presses its run button, once GraphiQL has parsed
/// the new text (it tells a subscription from a query by the parsed document).
async fn run(browser: &mut Browser, query: &str) {
    let set = format!(
        "(() => {{ document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue({}); return true; }})()",
        serde_json::to_string(query).unwrap()
    );
    assert_eq!(browser.eval(&set).await, json!(true));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let click =
        "(() => { document.querySelector('.graphiql-execute-button').click(); return true; })()";
    assert_eq!(browser.eval(click).await, json!(true));
}

const RESULT: &str = "(() => { const r = document.querySelector('.graphiql-response .CodeMirror'); \
     return r ? r.CodeMirror.getValue() : ''; })()";

#[actix_rt::test]
async fn the_playground_runs_queries_and_subscriptions_offline() {
    let chain_id = 31_590;
    let (anvil, mut driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let d = scenario.deployment;
    let db = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&support::config(&db.url, d.chain_config(chain_id, &anvil.url)))
        .await
        .unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let origin = format!("http://{}", service.http_addr);

    let mut browser = Browser::launch().await;
    browser.call("Page.navigate", json!({ "url": format!("{origin}/graphql") })).await;
    browser
        .until(
            "GraphiQL renders",
            "!!document.querySelector('.graphiql-query-editor .CodeMirror') && !!document.querySelector('.graphiql-execute-button')",
            Duration::from_secs(30),
        )
        .await;

    run(
        &mut browser,
        r#"{ domains(where: {name: {starts_with: "name00"}}, order: {by: NAME}, first: 3) { edges { node { canonical { name { interpreted } } } } } }"#,
    )
    .await;
    browser
        .until(
            "the query's result",
            &format!("{RESULT}.includes('name006.eth')"),
            Duration::from_secs(30),
        )
        .await;
    let result: Value = serde_json::from_str(browser.eval(RESULT).await.as_str().unwrap()).unwrap();
    let names: Vec<&str> = result["data"]["domains"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["canonical"]["name"]["interpreted"].as_str().unwrap())
        .collect();
    // The scenario's names 0 to 4 have other labels.
    assert_eq!(names, ["name005.eth", "name006.eth", "name007.eth"], "{result}");

    run(
        &mut browser,
        r#"subscription { domainEvents(where: {name: "name010.eth"}) { event { id } domain { canonical { name { interpreted } } } } }"#,
    )
    .await;
    // Events about the subscribed name, until one shows in the result pane.
    let owner = driver.accounts[1];
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut round = 0;
    loop {
        support::activity(&mut driver, &d, owner, "name010", 2, &format!("pg{round}")).await;
        round += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let shown = browser.eval(RESULT).await;
        if shown.as_str().is_some_and(|s| s.contains("domainEvents") && s.contains("name010.eth")) {
            break;
        }
        assert!(Instant::now() < deadline, "no subscription result shown: {shown}");
    }

    // The same page on /subgraph queries the subgraph API.
    browser.call("Page.navigate", json!({ "url": format!("{origin}/subgraph") })).await;
    browser
        .until(
            "GraphiQL renders on /subgraph",
            "!!document.querySelector('.graphiql-query-editor .CodeMirror') && !!document.querySelector('.graphiql-execute-button')",
            Duration::from_secs(30),
        )
        .await;
    run(
        &mut browser,
        r#"{ domains(where: {name_starts_with: "name00"}, orderBy: name, first: 3) { name } }"#,
    )
    .await;
    browser
        .until(
            "the subgraph query's result",
            &format!("{RESULT}.includes('name007.eth')"),
            Duration::from_secs(30),
        )
        .await;
    let result: Value = serde_json::from_str(browser.eval(RESULT).await.as_str().unwrap()).unwrap();
    let names: Vec<&str> = result["data"]["domains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["name005.eth", "name006.eth", "name007.eth"], "{result}");

    let shot = browser.call("Page.captureScreenshot", json!({ "format": "png" })).await;
    let png = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        shot["data"].as_str().unwrap(),
    )
    .unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("playground.png");
    std::fs::write(&path, png).unwrap();
    eprintln!("screenshot: {}", path.display());

    let errors = browser.errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    let mut hosts: HashMap<String, usize> = HashMap::new();
    for url in browser.requested() {
        let host = url.split('/').take(3).collect::<Vec<_>>().join("/");
        *hosts.entry(host).or_default() += 1;
    }
    let ws_origin = origin.replacen("http", "ws", 1);
    assert!(
        hosts.keys().all(|h| *h == origin || *h == ws_origin || h.starts_with("data:")),
        "the page reached beyond Ensemble: {hosts:?}"
    );
    drop(browser);
    service.stop().await;
}
