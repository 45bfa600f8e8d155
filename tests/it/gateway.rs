//! A CCIP-Read gateway for tests, on a free local port, and the helpers its tests share.
//!
//! A request is `abi.encode(bytes dnsName, bytes call)` (what the project's
//! `OffchainResolver` sends); the response is `abi.encode(bytes result, bytes32 requestHash)`,
//! so the resolver's callback can tell a response for another request. The result follows one
//! of two rules ([`Rule`]), each computed with `eth_call`s. The path picks the behaviour:
//! `/ok` answers (POST), `/get/{sender}/{data}.json` answers (GET), `/wrong` answers for
//! another request, `/slow` answers after 30 s, `/huge` sends 1 MiB, `/loop` redirects to
//! itself, `/fail` is a 500, anything else a 404.

use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use alloy::{
    primitives::{Address, Bytes, U256, keccak256},
    providers::{Provider, RootProvider},
    rpc::types::TransactionRequest,
    sol_types::{SolCall, SolValue},
};
use ensemble_devkit::devnet::{Driver, contracts::IRegistry};
use serde_json::Value;

alloy::sol! {
    interface IWildcardAnswer {
        function answer(bytes name, bytes data) external pure returns (bytes);
    }
}

/// How the gateway computes a record.
#[derive(Clone, Debug)]
pub enum Rule {
    /// The project's `WildcardResolver.answer(name, call)` at this address.
    Wildcard(Address),
    /// The record as another chain's registry and resolver answer it (a bridge's L2): the
    /// resolver of the name's node in `registry`, then the call on it (empty when there is
    /// no resolver).
    Registry(Address),
}

/// What the gateway computes with.
#[derive(Clone, Debug)]
pub struct Gateway {
    /// The chain the rule reads.
    pub provider: RootProvider,
    /// The rule.
    pub rule: Rule,
}

/// `eth_call` of `data` on `to`; the returned bytes (empty on a revert).
async fn call(provider: &RootProvider, to: Address, data: Vec<u8>) -> Vec<u8> {
    let tx = TransactionRequest::default().to(to).input(Bytes::from(data).into());
    provider.call(tx).await.map(|b| b.to_vec()).unwrap_or_default()
}

/// The namehash of a DNS-encoded name.
pub fn dns_namehash(name: &[u8]) -> alloy::primitives::B256 {
    let mut labels = Vec::new();
    let mut pos = 0;
    while let Some(&len) = name.get(pos) {
        if len == 0 {
            break;
        }
        labels.push(&name[pos + 1..pos + 1 + len as usize]);
        pos += 1 + len as usize;
    }
    labels.iter().rev().fold(alloy::primitives::B256::ZERO, |node, label| {
        keccak256([node.as_slice(), keccak256(label).as_slice()].concat())
    })
}

impl Gateway {
    /// The record `data` asks for, of the DNS-encoded `name`.
    pub async fn answer(&self, name: &[u8], data: &[u8]) -> Vec<u8> {
        match &self.rule {
            Rule::Wildcard(wildcard) => {
                let call_data = IWildcardAnswer::answerCall {
                    name: name.to_vec().into(),
                    data: data.to_vec().into(),
                };
                let out = call(&self.provider, *wildcard, call_data.abi_encode()).await;
                IWildcardAnswer::answerCall::abi_decode_returns(&out).expect("decodes").to_vec()
            }
            Rule::Registry(registry) => {
                let node = dns_namehash(name);
                let lookup = IRegistry::resolverCall { node }.abi_encode();
                let out = call(&self.provider, *registry, lookup).await;
                let resolver =
                    IRegistry::resolverCall::abi_decode_returns(&out).unwrap_or_default();
                if resolver.is_zero() {
                    return Vec::new();
                }
                call(&self.provider, resolver, data.to_vec()).await
            }
        }
    }
}

/// The gateway's response to `request` (`abi.encode(name, data)`): the record, and the
/// request's hash (`wrong`: another request's).
async fn respond(gateway: &Gateway, request_hex: &str, wrong: bool) -> HttpResponse {
    let request = hex::decode(request_hex.trim_start_matches("0x")).expect("hex request");
    let (name, data) = <(Bytes, Bytes)>::abi_decode_params(&request).expect("request decodes");
    let result = gateway.answer(&name, &data).await;
    let hash = if wrong { keccak256(b"another request") } else { keccak256(&request) };
    let response = (Bytes::from(result), hash).abi_encode_params();
    HttpResponse::Ok().json(serde_json::json!({ "data": format!("0x{}", hex::encode(response)) }))
}

async fn post(
    gateway: web::Data<Gateway>,
    mode: web::Path<String>,
    body: web::Json<Value>,
) -> HttpResponse {
    let data = body["data"].as_str().unwrap_or_default().to_owned();
    match mode.as_str() {
        "ok" => respond(&gateway, &data, false).await,
        "wrong" => respond(&gateway, &data, true).await,
        "slow" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            respond(&gateway, &data, false).await
        }
        "huge" => HttpResponse::Ok()
            .json(serde_json::json!({ "data": format!("0x{}", "00".repeat(1 << 20)) })),
        "loop" => redirect_loop().await,
        "fail" => HttpResponse::InternalServerError().finish(),
        _ => HttpResponse::NotFound().json(serde_json::json!({ "message": "no such name" })),
    }
}

async fn get(gateway: web::Data<Gateway>, path: web::Path<(String, String)>) -> HttpResponse {
    let (_sender, data) = path.into_inner();
    respond(&gateway, data.trim_end_matches(".json"), false).await
}

async fn redirect_loop() -> HttpResponse {
    HttpResponse::Found().insert_header(("location", "/loop")).finish()
}

/// Starts the gateway on a free port; its base URL.
pub fn start(gateway: Gateway) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    let data = web::Data::new(gateway);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(web::JsonConfig::default().limit(1 << 20))
            .route("/get/{sender}/{data}", web::get().to(get))
            .route("/{mode}", web::post().to(post))
            .route("/{mode}", web::get().to(redirect_loop))
    })
    .workers(2)
    .listen(listener)
    .expect("listens")
    .run();
    actix_rt::spawn(server);
    base
}

/// Deploys `code` with constructor `args` from the first account; its address. Reads the
/// nonce from the chain: deploy before queueing other transactions of that account.
pub async fn deploy(driver: &mut Driver, mut code: Vec<u8>, args: Vec<u8>) -> Address {
    let deployer = driver.accounts[0];
    let nonce = driver.provider().get_transaction_count(deployer).await.expect("nonce");
    code.extend(args);
    driver.send(deployer, None, code, U256::ZERO, "deploy").await.expect("deploy sent");
    driver.mine().await.expect("deployed");
    deployer.create(nonce)
}

/// `name` in DNS wire format.
pub fn dns(name: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for label in name.split('.') {
        out.push(label.len() as u8);
        out.extend(label.as_bytes());
    }
    out.push(0);
    out
}

/// A REST resolution of `name`; status and JSON.
pub async fn resolve(
    client: &reqwest::Client,
    base: &str,
    name: &str,
    query: &str,
) -> (u16, Value) {
    crate::resolution::get(client, base, &["api", "resolve", "records", name], query).await
}
