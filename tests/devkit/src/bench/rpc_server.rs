//! A local JSON-RPC endpoint that serves a corpus as a chain would: the methods the indexer
//! calls (`eth_chainId`, `eth_blockNumber`, `eth_getBlockByNumber` with or without full
//! transactions and the `latest`/`finalized` tags, `eth_getLogs` with address and topic
//! filters), single or batched. Responses are built with alloy's own RPC types, so the
//! indexer parses exactly what a node would send. Its head is the corpus's last block.

use std::{net::SocketAddr, path::Path, sync::Arc};

use actix_web::{App, HttpResponse, HttpServer, web};
use alloy::{
    consensus::TxEnvelope,
    primitives::U256,
    rpc::types::{Block, BlockTransactions, Filter, Header, Transaction},
};
use serde_json::{Value, json};

use super::{
    BenchError,
    corpus::{CorpusHeader, IndexedCorpus},
    generate::transaction,
};

/// Largest `eth_getLogs` range served, like hosted providers' caps.
pub const MAX_LOG_RANGE: u64 = 10_000;

/// A running endpoint.
#[derive(Debug)]
pub struct CorpusServer {
    url: String,
    handle: actix_web::dev::ServerHandle,
}

impl CorpusServer {
    /// Its URL.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops it.
    pub async fn stop(self) {
        self.handle.stop(true).await;
    }
}

/// Serves `path` on an ephemeral local port.
pub async fn serve(path: &Path) -> Result<CorpusServer, BenchError> {
    serve_on(path, SocketAddr::from(([127, 0, 0, 1], 0))).await
}

/// Serves `path` on `addr` (port 0: any free port), for `ensemble bench serve`.
pub async fn serve_on(path: &Path, addr: SocketAddr) -> Result<CorpusServer, BenchError> {
    let corpus = Arc::new(IndexedCorpus::open(path)?);
    let data = web::Data::from(corpus);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(web::JsonConfig::default().limit(1 << 20))
            .route("/", web::post().to(endpoint))
    })
    .workers(1)
    .bind(addr)
    .map_err(|e| BenchError::Run(format!("rpc server on {addr}: {e}")))?;
    let bound = server.addrs().first().copied().unwrap_or(addr);
    let server = server.run();
    let handle = server.handle();
    actix_rt::spawn(server);
    Ok(CorpusServer { url: format!("http://{bound}"), handle })
}

async fn endpoint(corpus: web::Data<IndexedCorpus>, body: web::Json<Value>) -> HttpResponse {
    let corpus = corpus.into_inner();
    let answer = web::block(move || match body.into_inner() {
        Value::Array(calls) => Value::Array(calls.iter().map(|c| answer(&corpus, c)).collect()),
        call => answer(&corpus, &call),
    })
    .await;
    match answer {
        Ok(value) => HttpResponse::Ok().json(value),
        Err(_) => HttpResponse::InternalServerError().finish(),
    }
}

fn answer(corpus: &IndexedCorpus, call: &Value) -> Value {
    let id = call.get("id").cloned().unwrap_or(Value::Null);
    let method = call.get("method").and_then(Value::as_str).unwrap_or_default();
    let params = call.get("params").cloned().unwrap_or(Value::Null);
    match dispatch(corpus, method, &params) {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message)) => {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
        }
    }
}

type RpcResult = Result<Value, (i64, String)>;

fn invalid(message: impl ToString) -> (i64, String) {
    (-32602, message.to_string())
}

fn dispatch(corpus: &IndexedCorpus, method: &str, params: &Value) -> RpcResult {
    let header = &corpus.header;
    match method {
        "eth_chainId" => Ok(json!(format!("{:#x}", header.chain_id))),
        "eth_blockNumber" => Ok(json!(format!("{:#x}", header.last_block))),
        "eth_getBlockByNumber" => {
            let tag = params.get(0).and_then(Value::as_str).ok_or_else(|| invalid("block"))?;
            let full = params.get(1).and_then(Value::as_bool).unwrap_or(false);
            let number = match tag {
                "latest" | "finalized" | "safe" => header.last_block,
                "earliest" => 0,
                hex => u64::from_str_radix(hex.trim_start_matches("0x"), 16)
                    .map_err(|_| invalid("block number"))?,
            };
            if number > header.last_block {
                return Ok(Value::Null);
            }
            block(corpus, number, full)
        }
        "eth_getLogs" => {
            let filter: Filter = params
                .get(0)
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .map_err(invalid)?
                .ok_or_else(|| invalid("filter"))?;
            let from = filter.get_from_block().ok_or_else(|| invalid("fromBlock"))?;
            let to = filter.get_to_block().unwrap_or(header.last_block).min(header.last_block);
            if to >= from && to - from >= MAX_LOG_RANGE {
                return Err((-32005, format!("block range is too large: max {MAX_LOG_RANGE}")));
            }
            let blocks = corpus.range(from, to).map_err(|e| (-32000, e.to_string()))?;
            let logs: Vec<_> = blocks
                .iter()
                .flat_map(|b| b.rpc_logs(header))
                .filter(|log| filter.matches(&log.inner))
                .collect();
            serde_json::to_value(logs).map_err(|e| (-32603, e.to_string()))
        }
        other => Err((-32601, format!("method {other} is not served by the corpus endpoint"))),
    }
}

fn block(corpus: &IndexedCorpus, number: u64, full: bool) -> RpcResult {
    let header: &CorpusHeader = &corpus.header;
    let info = header.block_info(number);
    let txs = corpus
        .block(number)
        .map_err(|e| (-32000, e.to_string()))?
        .map(|b| b.txs)
        .unwrap_or_default();
    let transactions = if full {
        BlockTransactions::Full(
            txs.iter()
                .enumerate()
                .map(|(index, tx)| Transaction {
                    inner: alloy::consensus::transaction::Recovered::new_unchecked(
                        TxEnvelope::Legacy(transaction(tx.nonce, tx.to)),
                        tx.from,
                    ),
                    block_hash: Some(info.hash),
                    block_number: Some(number),
                    transaction_index: Some(index as u64),
                    effective_gas_price: Some(1_000_000_000),
                    block_timestamp: Some(info.timestamp),
                })
                .collect(),
        )
    } else {
        BlockTransactions::Hashes(txs.iter().map(|tx| tx.hash).collect())
    };
    let block = Block {
        header: Header {
            hash: info.hash,
            inner: alloy::consensus::Header {
                parent_hash: info.parent_hash,
                number,
                timestamp: info.timestamp,
                gas_limit: 30_000_000,
                difficulty: U256::ZERO,
                ..Default::default()
            },
            total_difficulty: None,
            size: None,
        },
        uncles: Vec::new(),
        transactions,
        withdrawals: None,
    };
    serde_json::to_value(block).map_err(|e| (-32603, e.to_string()))
}
