//! The REST resolution API, for clients that do not speak GraphQL:
//!
//! - `GET /api/resolve/records/{name}?addresses=60,0&texts=avatar,url&contenthash=true&name=true&pubkey=true&abi=1&interfaces=0x01ffc9a7`
//! - `GET /api/resolve/primary-name/{address}/{chainId}` (chain 0: the default coin type)
//! - `GET /api/resolve/primary-names/{address}?chainIds=1,10,8453` (default: every
//!   configured chain)
//!
//! Each takes `accelerate=false` (answer by live calls only) and `trace=true` (return every
//! step). Errors are `{"error": {"code", "message"}}` with a status that says whose fault it
//! is: 400 for the request, 502 for a chain's endpoint, 503 for a chain not available, 504
//! for time.

use std::{collections::BTreeMap, sync::Arc};

use actix_web::{HttpResponse, web};
use graphql::resolution::{
    PrimaryName, RecordsSelection, Resolution, ResolutionError, ResolveOptions, error_code,
};
use serde::Deserialize;

use crate::resolution::{
    ResolutionService,
    records::{ETH_COIN_TYPE, EVM_BIT},
};

/// Chain ids one `primary-names` request may ask for.
const MAX_CHAIN_IDS: usize = graphql::resolution::MAX_COIN_TYPES;

/// Routes, when the process serves the API.
pub fn configure(config: &mut web::ServiceConfig) {
    config
        .route("/api/resolve/records/{name}", web::get().to(records))
        .route("/api/resolve/primary-name/{address}/{chain}", web::get().to(primary_name))
        .route("/api/resolve/primary-names/{address}", web::get().to(primary_names));
}

/// Query parameters of `records`.
#[derive(Debug, Deserialize)]
struct RecordsQuery {
    addresses: Option<String>,
    texts: Option<String>,
    contenthash: Option<bool>,
    name: Option<bool>,
    pubkey: Option<bool>,
    abi: Option<u64>,
    interfaces: Option<String>,
    accelerate: Option<bool>,
    trace: Option<bool>,
}

/// Query parameters of the primary-name routes.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PrimaryQuery {
    chain_ids: Option<String>,
    accelerate: Option<bool>,
    trace: Option<bool>,
}

fn options(accelerate: Option<bool>, trace: Option<bool>) -> ResolveOptions {
    ResolveOptions { accelerate: accelerate.unwrap_or(true), trace: trace.unwrap_or(false) }
}

fn bad(message: impl Into<String>) -> ResolutionError {
    ResolutionError::new(error_code::INVALID_ARGUMENT, message)
}

/// A comma-separated list, without empty items.
fn list(text: Option<&str>) -> Vec<&str> {
    text.map(|t| t.split(',').map(str::trim).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default()
}

fn numbers(text: Option<&str>, what: &str) -> Result<Vec<u64>, ResolutionError> {
    list(text)
        .into_iter()
        .map(|n| {
            let parsed = match n.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => n.parse(),
            };
            parsed.map_err(|_| bad(format!("{what} {:?} is not a number", short(n))))
        })
        .collect()
}

fn short(text: &str) -> String {
    text.chars().take(64).collect()
}

fn selection(query: &RecordsQuery) -> Result<RecordsSelection, ResolutionError> {
    let interfaces = list(query.interfaces.as_deref())
        .into_iter()
        .map(|id| {
            let bytes = id.strip_prefix("0x").and_then(|h| hex::decode(h).ok());
            bytes
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .ok_or_else(|| bad(format!("interface id {:?} is not 0x and 4 bytes", short(id))))
        })
        .collect::<Result<_, _>>()?;
    Ok(RecordsSelection {
        addresses: numbers(query.addresses.as_deref(), "coin type")?,
        texts: list(query.texts.as_deref()).into_iter().map(str::to_owned).collect(),
        contenthash: query.contenthash.unwrap_or(false),
        name: query.name.unwrap_or(false),
        pubkey: query.pubkey.unwrap_or(false),
        abi: query.abi,
        interfaces,
    })
}

/// The status an error is answered with.
fn error_response(err: &ResolutionError) -> HttpResponse {
    use actix_web::http::StatusCode;
    let status = match err.code {
        error_code::INVALID_NAME | error_code::INVALID_ARGUMENT | error_code::TOO_MANY_RECORDS => {
            StatusCode::BAD_REQUEST
        }
        error_code::CHAIN_UNAVAILABLE | error_code::NOT_INDEXED => StatusCode::SERVICE_UNAVAILABLE,
        error_code::RPC_FAILED => StatusCode::BAD_GATEWAY,
        error_code::TIMEOUT => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    HttpResponse::build(status)
        .json(serde_json::json!({ "error": { "code": err.code, "message": err.message } }))
}

fn respond<T: serde::Serialize>(result: Result<T, ResolutionError>) -> HttpResponse {
    match result {
        Ok(value) => HttpResponse::Ok().json(value),
        Err(err) => error_response(&err),
    }
}

async fn records(
    service: web::Data<Arc<ResolutionService>>,
    name: web::Path<String>,
    query: web::Query<RecordsQuery>,
) -> HttpResponse {
    let selection = match selection(&query) {
        Ok(selection) => selection,
        Err(err) => return error_response(&err),
    };
    let options = options(query.accelerate, query.trace);
    respond(service.forward(&name, &selection, options).await)
}

fn address(text: &str) -> Result<[u8; 20], ResolutionError> {
    text.parse::<alloy::primitives::Address>()
        .map(|a| a.0.0)
        .map_err(|_| bad(format!("{:?} is not a 20-byte hex address", short(text))))
}

/// ENSIP-11's coin type of an EVM chain id (0: the default coin type).
fn coin_of_chain(chain: u64) -> Result<u64, ResolutionError> {
    match chain {
        0 => Ok(EVM_BIT),
        1 => Ok(ETH_COIN_TYPE),
        c if c < EVM_BIT => Ok(EVM_BIT | c),
        c => Err(bad(format!("chain id {c} has no ENSIP-11 coin type"))),
    }
}

async fn primary_name(
    service: web::Data<Arc<ResolutionService>>,
    path: web::Path<(String, String)>,
    query: web::Query<PrimaryQuery>,
) -> HttpResponse {
    let (account, chain) = path.into_inner();
    let request = async {
        let account = address(&account)?;
        let chain: u64 = chain
            .parse()
            .map_err(|_| bad(format!("chain id {:?} is not a number", short(&chain))))?;
        let coin = coin_of_chain(chain)?;
        let options = options(query.accelerate, query.trace);
        let mut names = service.primary_names(account, &[coin], options).await?;
        names.pop().ok_or_else(|| ResolutionError::new(error_code::INTERNAL, "no answer"))
    };
    respond(request.await)
}

/// `primary-names`: the names by chain id, and each answer in full.
#[derive(Debug, serde::Serialize)]
struct PrimaryNames {
    names: BTreeMap<u64, Option<String>>,
    results: Vec<PrimaryName>,
}

async fn primary_names(
    service: web::Data<Arc<ResolutionService>>,
    account: web::Path<String>,
    query: web::Query<PrimaryQuery>,
) -> HttpResponse {
    let request = async {
        let account = address(&account)?;
        let mut chains = numbers(query.chain_ids.as_deref(), "chain id")?;
        if chains.is_empty() {
            chains = service.chains().ids();
        }
        if chains.len() > MAX_CHAIN_IDS {
            return Err(ResolutionError::new(
                error_code::TOO_MANY_RECORDS,
                format!("ask for at most {MAX_CHAIN_IDS} chains at once"),
            ));
        }
        let coins = chains.iter().map(|c| coin_of_chain(*c)).collect::<Result<Vec<_>, _>>()?;
        let options = options(query.accelerate, query.trace);
        let results = service.primary_names(account, &coins, options).await?;
        let names = chains.iter().zip(&results).map(|(c, r)| (*c, r.name.clone())).collect();
        Ok(PrimaryNames { names, results })
    };
    respond(request.await)
}
