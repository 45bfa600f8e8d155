//! An attacker on the public endpoint, against `ensemble run` as its own process while it
//! indexes a chain that keeps growing: argument literals, variable defaults, directive
//! arguments and selections nested thousands deep (over HTTP and over the subscription
//! websocket); fragments that fan out exponentially, chain, or cycle, alone and concurrently;
//! bodies over the limit (declared, undeclared, huge); bodies that never finish and heads that
//! never come, by the hundred.
//!
//! Throughout: the process stays up, every answer is a 4xx or carries a stable
//! `extensions.code`, no request costs more CPU than the query timeout, the peak RSS stays
//! under [`PEAK_RSS_MB`], `/health` answers within a second, another client is served, and
//! the indexer keeps committing blocks.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use ensemble::{
    http::{BODY_TIMEOUT, HEAD_TIMEOUT, QUERY_TIMEOUT},
    store::writer::read_checkpoint,
};
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

/// The peak resident memory the attacked process may reach (a debug build; idle it holds
/// about 60 MB, and 84 MB after these attacks).
const PEAK_RSS_MB: u64 = 256;
/// Longest `/health` may take during the attacks, at the 99th percentile of its polls. Alone
/// on the machine the slowest answer is 6–24 ms; the suite shares two cores with other tests
/// and their processes, which can hold the poller itself off the CPU for a second (seen with
/// two busy loops beside it), so every answer is held to [`HEALTH_AT_WORST`] instead.
const HEALTH_WITHIN: Duration = Duration::from_secs(1);
/// Longest any `/health` poll may take.
const HEALTH_AT_WORST: Duration = Duration::from_secs(3);
/// Connections that send half a body, and connections that send nothing.
const SLOW_BODIES: usize = 600;
const SILENT_CONNECTIONS: usize = 200;

/// CPU seconds (user + system) the process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("process alive");
    // Fields after the command name (which may hold spaces) start at ") ".
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// The peak resident set of `pid`, MB.
fn peak_rss_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("process alive");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
}

/// Polls `/health` every 50 ms from its own thread; reports each answer's time and failures.
struct HealthWatch {
    stop: Arc<AtomicBool>,
    failures: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<Vec<Duration>>>,
}

fn http_get(addr: SocketAddr, path: &str, timeout: Duration) -> std::io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

impl HealthWatch {
    fn start(addr: SocketAddr) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let failures = Arc::new(AtomicU64::new(0));
        let (s, f) = (stop.clone(), failures.clone());
        let thread = std::thread::spawn(move || {
            let mut times = Vec::new();
            while !s.load(Ordering::Relaxed) {
                let at = Instant::now();
                let ok = http_get(addr, "/health", Duration::from_secs(5))
                    .is_ok_and(|a| a.starts_with("HTTP/1.1 200"));
                times.push(at.elapsed());
                if !ok {
                    f.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            times
        });
        Self { stop, failures, thread: Some(thread) }
    }

    /// Stops it; returns (polls, 99th percentile, slowest, failures).
    fn finish(mut self) -> (usize, Duration, Duration, u64) {
        self.stop.store(true, Ordering::Relaxed);
        let mut times = self.thread.take().unwrap().join().unwrap();
        times.sort_unstable();
        let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
        let slowest = times.last().copied().unwrap_or_default();
        (times.len(), p99, slowest, self.failures.load(Ordering::Relaxed))
    }
}

/// Mines a block every 100 ms on `rpc` from its own thread until stopped.
fn keep_mining(rpc: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let client = crate::support::http_client();
            let mine = json!({ "jsonrpc": "2.0", "id": 1, "method": "evm_mine", "params": [] });
            while !stop.load(Ordering::Relaxed) {
                let _ = client.post(&rpc).json(&mine).send().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    })
}

/// Checks one answer: no 5xx, and every error it carries has a stable code.
fn assert_coded(what: &str, status: u16, body: &Value) {
    assert!(status < 500, "{what}: status {status}: {body}");
    let errors = body.get("errors").and_then(Value::as_array);
    if status >= 400 {
        assert!(errors.is_some_and(|e| !e.is_empty()), "{what}: {status} without errors: {body}");
    }
    for error in errors.into_iter().flatten() {
        let code = error["extensions"]["code"].as_str();
        assert!(
            code.is_some_and(|c| crate::fuzz::CODES.contains(&c)),
            "{what}: error without a stable code: {error}"
        );
    }
}

/// The hostile documents, each with what it is called.
fn hostile_documents() -> Vec<(String, Value)> {
    let nest = |n: usize, open: &str, close: &str, inner: &str| {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    };
    let mut docs = Vec::new();
    for depth in [65, 2_000, 20_000] {
        let list = nest(depth, "[", "]", "\"x\"");
        let object = nest(depth, "{a: ", "}", "1");
        docs.push((
            format!("list literal {depth} deep"),
            json!({ "query": format!("{{ domain(by: {{name: {list}}}) {{ id }} }}") }),
        ));
        docs.push((
            format!("object literal {depth} deep"),
            json!({ "query": format!("{{ domain(by: {object}) {{ id }} }}") }),
        ));
        docs.push((
            format!("variable default {depth} deep"),
            json!({ "query": format!("query($v: String = {list}) {{ root {{ id }} }}") }),
        ));
        docs.push((
            format!("directive argument {depth} deep"),
            json!({ "query": format!("{{ root {{ id @skip(if: {object}) }} }}") }),
        ));
        docs.push((
            format!("selection {depth} deep"),
            json!({ "query": nest(depth, "{ root ", "}", "") }),
        ));
        docs.push((
            format!("list type {depth} deep"),
            json!({ "query": format!("query($v: {}) {{ root {{ id }} }}", nest(depth, "[", "]", "String")) }),
        ));
    }
    let mut value = json!("x");
    for _ in 0..100 {
        value = json!([value]);
    }
    docs.push((
        "variable value 100 deep".into(),
        json!({ "query": "query($v: String) { root { id } }", "variables": { "v": value } }),
    ));
    for (levels, leaf) in [(25, "__typename"), (14, "root { __typename }"), (40, "a: root { id }")]
    {
        let mut query = String::from("query { ...F0 }");
        for i in 0..levels {
            query.push_str(&format!(" fragment F{i} on Query {{ ...F{n} ...F{n} }}", n = i + 1));
        }
        query.push_str(&format!(" fragment F{levels} on Query {{ {leaf} }}"));
        docs.push((format!("fragment fan-out 2^{levels} of {leaf}"), json!({ "query": query })));
    }
    let mut chain = String::from("query { ...F0 }");
    for i in 0..1_000 {
        chain.push_str(&format!(" fragment F{i} on Query {{ ...F{} }}", i + 1));
    }
    chain.push_str(" fragment F1000 on Query { __typename }");
    docs.push(("fragment chain 1000 long".into(), json!({ "query": chain })));
    docs.push((
        "fragment cycle".into(),
        json!({ "query": "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }" }),
    ));
    let wide: String = (0..200).map(|i| format!("a{i}: root {{ id }} ")).collect();
    docs.push(("200 aliases".into(), json!({ "query": format!("{{ {wide} }}") })));
    docs
}

async fn post(client: &reqwest::Client, url: &str, body: reqwest::Body) -> (u16, Value, Duration) {
    let at = Instant::now();
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let body = response.json::<Value>().await.unwrap_or(Value::Null);
    (status, body, at.elapsed())
}

/// Every hostile document, one after the other and then eight of each at once.
async fn documents_over_http(url: &str, pid: u32) {
    let client = crate::support::http_client();
    for (what, doc) in hostile_documents() {
        let cpu = cpu_seconds(pid);
        let (status, body, took) = post(&client, url, doc.to_string().into()).await;
        assert_coded(&what, status, &body);
        assert!(body["errors"].is_array(), "{what} was executed: {body}");
        assert!(took < QUERY_TIMEOUT, "{what} took {took:?}");
        let spent = cpu_seconds(pid) - cpu;
        assert!(spent < 2.0, "{what} cost {spent:.2} s of CPU");
        let concurrent =
            futures::future::join_all((0..8).map(|_| post(&client, url, doc.to_string().into())))
                .await;
        for (status, body, took) in concurrent {
            assert_coded(&what, status, &body);
            assert!(took < QUERY_TIMEOUT + Duration::from_secs(1), "{what} ×8 took {took:?}");
        }
    }
}

/// Bodies over the limit: declared, streamed without a length, huge.
async fn large_bodies(url: &str) {
    let client = crate::support::http_client();
    let limit = ensemble::http::MAX_BODY_BYTES;
    for len in [limit + 1, 10 << 20, 50 << 20] {
        let body = format!("{{\"query\":\"{}\"}}", "a".repeat(len));
        let (status, answer, _) = post(&client, url, body.into()).await;
        assert_eq!(status, 413, "{len} bytes: {answer}");
        assert_coded("large body", status, &answer);
    }
    for len in [limit + 1, 10 << 20] {
        let chunks = (0..len.div_ceil(8192)).map(|_| Ok::<_, std::io::Error>(vec![b' '; 8192]));
        let stream = futures::stream::iter(chunks);
        let (status, answer, _) = post(&client, url, reqwest::Body::wrap_stream(stream)).await;
        assert_eq!(status, 413, "{len} bytes without a length: {answer}");
        assert_coded("chunked body", status, &answer);
    }
}

/// The same documents as a subscription over the websocket, and the websocket's own limits.
async fn documents_over_websocket(addr: SocketAddr) {
    use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest};
    let connect = || async {
        let mut request = format!("ws://{addr}/graphql").into_client_request().unwrap();
        request
            .headers_mut()
            .insert("Sec-WebSocket-Protocol", "graphql-transport-ws".parse().unwrap());
        let (mut ws, _) = tokio_tungstenite::connect_async(request).await.expect("upgrade");
        ws.send(Message::Text(json!({ "type": "connection_init" }).to_string().into()))
            .await
            .unwrap();
        let ack = ws.next().await.unwrap().unwrap();
        assert!(ack.to_text().unwrap().contains("connection_ack"), "{ack:?}");
        ws
    };
    let mut ws = connect().await;
    for (i, (what, doc)) in hostile_documents().into_iter().enumerate() {
        if doc.to_string().len() >= ensemble::http::MAX_BODY_BYTES {
            continue;
        }
        let message = json!({ "id": i.to_string(), "type": "subscribe", "payload": doc });
        ws.send(Message::Text(message.to_string().into())).await.unwrap();
        let answer = loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
                .await
                .unwrap_or_else(|_| panic!("{what}: no answer over the websocket"))
                .unwrap()
                .unwrap();
            if let Message::Text(text) = frame {
                let value: Value = serde_json::from_str(text.as_str()).unwrap();
                if value["id"] == json!(i.to_string()) {
                    break value;
                }
            }
        };
        let errors = match answer["type"].as_str() {
            Some("error") => answer["payload"].clone(),
            Some("next") => answer["payload"]["errors"].clone(),
            other => panic!("{what}: {other:?}: {answer}"),
        };
        assert_coded(&what, 200, &json!({ "errors": errors }));
    }
    // A client's close frame is answered with one.
    ws.send(Message::Close(None)).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(frame) = ws.next().await {
            if matches!(frame, Ok(Message::Close(_))) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(closed, Ok(true), "the server answers a close frame");
    // A message over the frame limit closes the socket; the process does not care.
    let mut ws = connect().await;
    let huge = "x".repeat(ensemble::http::MAX_BODY_BYTES + 1);
    let _ = ws.send(Message::Text(huge.into())).await;
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return true,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert_eq!(ended, Ok(true), "an oversized frame ends the socket");
}

/// Hundreds of connections that send half a body, and hundreds that send nothing: each is
/// answered (408 once the body is late, or 429 past the client's share) or closed within its
/// timeout, while a client at another address is served as usual.
async fn slow_clients(addr: SocketAddr, url: &str) {
    let slow: Vec<TcpStream> = (0..SLOW_BODIES)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(
                b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"q",
            )
            .unwrap();
            s
        })
        .collect();
    let silent: Vec<TcpStream> =
        (0..SILENT_CONNECTIONS).map(|_| TcpStream::connect(addr).unwrap()).collect();
    // Another client (another loopback address) is served while they hang.
    let other = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    let (status, body, took) =
        post(&other, url, json!({ "query": "{ root { id } }" }).to_string().into()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["errors"].is_null(), "{body}");
    assert!(took < HEALTH_WITHIN, "another client waited {took:?}");

    let answers = tokio::task::spawn_blocking(move || {
        let read_all = |mut s: TcpStream, wait: Duration| {
            s.set_read_timeout(Some(wait)).unwrap();
            let mut answer = Vec::new();
            let ended = s.read_to_end(&mut answer).is_ok();
            (String::from_utf8_lossy(&answer).into_owned(), ended)
        };
        let slow: Vec<_> =
            slow.into_iter().map(|s| read_all(s, BODY_TIMEOUT + Duration::from_secs(5))).collect();
        let silent: Vec<_> = silent
            .into_iter()
            .map(|s| read_all(s, HEAD_TIMEOUT + Duration::from_secs(5)))
            .collect();
        (slow, silent)
    })
    .await
    .unwrap();
    let (slow, silent) = answers;
    let mut by_status = std::collections::BTreeMap::new();
    for (answer, ended) in &slow {
        assert!(ended, "a slow body's connection was left open: {answer:?}");
        let status = answer.get(9..12).unwrap_or("none").to_owned();
        assert!(status == "408" || status == "429", "a slow body got {answer:?}");
        *by_status.entry(status).or_insert(0) += 1;
    }
    eprintln!("slow bodies answered: {by_status:?}");
    assert!(by_status.contains_key("408"), "slow bodies time out");
    for (answer, ended) in &silent {
        assert!(ended, "a silent connection was left open");
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    }
}

async fn hostile_requests_leave_the_service_up(backend: Backend, chain_id: u64) {
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let chain = scenario.deployment.chain_config(chain_id, &anvil.url);
    let db = TestDb::new(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let config_path = support::write_config(dir.path(), &db.url, &chain, 200_000);
    let listen = format!("127.0.0.1:{}", support::free_port());
    let addr: SocketAddr = listen.parse().unwrap();
    let mut server = support::spawn_ensemble(&config_path, &[("ENSEMBLE_HTTP_LISTEN", &listen)]);
    let pid = server.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while http_get(addr, "/health", Duration::from_secs(1)).is_err() {
        assert!(Instant::now() < deadline, "the server never came up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let conn = ensemble::store::database::connect_without_migrating(&db.url).await.unwrap();
    support::wait_for_block(&conn, chain_id, scenario.last_block).await;

    let stop = Arc::new(AtomicBool::new(false));
    let miner = keep_mining(anvil.url.clone(), stop.clone());
    let health = HealthWatch::start(addr);
    let before = read_checkpoint(&conn, chain_id.into()).await.unwrap().unwrap().block_number;
    let url = format!("http://{listen}/graphql");

    documents_over_http(&url, pid).await;
    large_bodies(&url).await;
    documents_over_websocket(addr).await;
    slow_clients(addr, &url).await;

    let (polls, p99, slowest, failures) = health.finish();
    stop.store(true, Ordering::Relaxed);
    miner.join().unwrap();
    let log = std::fs::read_to_string(config_path.with_extension("log")).unwrap_or_default();
    assert!(server.try_wait().unwrap().is_none(), "the process died; its log:\n{log}");
    assert_eq!(failures, 0, "{failures} of {polls} health checks failed");
    assert!(p99 < HEALTH_WITHIN, "/health took {p99:?} at the 99th percentile ({polls} polls)");
    assert!(slowest < HEALTH_AT_WORST, "/health took {slowest:?} at worst ({polls} polls)");
    let peak = peak_rss_mb(pid);
    eprintln!("peak RSS {peak} MB, /health p99 {p99:?} and slowest {slowest:?} over {polls} polls");
    assert!(peak < PEAK_RSS_MB, "peak RSS {peak} MB");
    // The indexer kept indexing the blocks mined during the attacks.
    let after = read_checkpoint(&conn, chain_id.into()).await.unwrap().unwrap().block_number;
    assert!(after > before + 20, "the indexer stalled: {before} -> {after}");
    let client = crate::support::http_client();
    let (status, answer, _) = post(
        &client,
        &url,
        json!({ "query": "{ domain(by: {name: \"name005.eth\"}) { canonical { depth } } }" })
            .to_string()
            .into(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(answer["data"]["domain"]["canonical"]["depth"], 2, "still answering: {answer}");
    assert!(!log.contains("panicked"), "a panic in the log:\n{log}");
    server.kill().unwrap();
    server.wait().unwrap();
}

crate::support::on_both_engines!(hostile_requests_leave_the_service_up, 31530);
