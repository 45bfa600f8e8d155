//! EIP-3668 CCIP-Read, as a client: a call that reverts with `OffchainLookup` is answered
//! by fetching from the gateway URLs it names and calling its callback with the response.
//!
//! Bounded everywhere: at most [`MAX_LOOKUPS`] lookups per call (a callback may ask again,
//! and a hostile one forever), at most [`MAX_URLS`] URLs tried per lookup, one timeout and
//! one size limit per gateway response, at most [`MAX_REDIRECTS`] HTTP redirects. Only
//! `http` and `https` URLs are fetched. A lookup whose `sender` is not the contract called
//! is refused, as the EIP requires.

use std::time::Duration;

use alloy::{
    primitives::{Address, B256, Bytes},
    sol_types::{SolError, SolValue},
};
use graphql::resolution::error_code;

use super::{abi::OffchainLookup, gateway_guard, live::LiveChain, trace::Trace};
use crate::rpc::CallOutcome;

/// Lookups one call may make (the first and those its callbacks ask for).
pub const MAX_LOOKUPS: usize = 4;
/// Gateway URLs tried per lookup.
pub const MAX_URLS: usize = 8;
/// HTTP redirects followed per gateway request.
pub const MAX_REDIRECTS: usize = 3;

/// Why a call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallFailure {
    /// Stable code.
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

impl CallFailure {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

/// The HTTP client gateways are fetched with.
#[derive(Clone, Debug)]
pub struct Gateways {
    http: reqwest::Client,
    max_bytes: usize,
    private_addresses: bool,
}

impl Gateways {
    /// A client whose requests take at most `timeout` and whose responses hold at most
    /// `max_bytes`; gateways on private addresses only with `private_addresses`
    /// ([`super::gateway_guard`]).
    pub fn new(
        timeout: Duration,
        max_bytes: usize,
        private_addresses: bool,
    ) -> Result<Self, String> {
        crate::rpc::client::install_tls_provider();
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if !private_addresses && gateway_guard::is_private_literal(attempt.url()) {
                // Answered as the redirect itself, which is no gateway response.
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(redirects);
        if !private_addresses {
            builder = builder.dns_resolver(std::sync::Arc::new(gateway_guard::PublicOnly));
        }
        let http = builder.build().map_err(|e| format!("gateway http client: {e}"))?;
        Ok(Self { http, max_bytes, private_addresses })
    }

    /// Fetches the response to `data` from `urls` for `sender`, trying the next URL after a
    /// server error and stopping at a client error, as the EIP says.
    async fn fetch(
        &self,
        sender: Address,
        urls: &[String],
        data: &[u8],
        trace: &Trace,
    ) -> Result<Vec<u8>, CallFailure> {
        if urls.is_empty() {
            return Err(CallFailure::new(error_code::GATEWAY_FAILED, "the lookup names no URL"));
        }
        let sender_hex = format!("{sender:#x}");
        let data_hex = format!("0x{}", hex::encode(data));
        let mut last = String::new();
        for template in urls.iter().take(MAX_URLS) {
            let shown: String = template.chars().take(200).collect();
            let url = template.replace("{sender}", &sender_hex).replace("{data}", &data_hex);
            let Ok(parsed) = reqwest::Url::parse(&url) else {
                last = format!("{shown}: not a URL");
                continue;
            };
            if !matches!(parsed.scheme(), "http" | "https") {
                last = format!("{shown}: only http and https gateways are fetched");
                continue;
            }
            if !self.private_addresses && gateway_guard::is_private_literal(&parsed) {
                last = format!("{shown}: a private address (gateways must be public)");
                continue;
            }
            let request = if template.contains("{data}") {
                self.http.get(parsed)
            } else {
                self.http
                    .post(parsed)
                    .json(&serde_json::json!({ "data": data_hex, "sender": sender_hex }))
            };
            trace.step("ccip.gateway", || shown.clone());
            let response = match request.send().await {
                Ok(response) => response,
                Err(err) => {
                    last = format!("{shown}: {}", describe(&err));
                    continue;
                }
            };
            let status = response.status();
            let body = match self.read_body(response).await {
                Ok(body) => body,
                Err(err) => {
                    last = format!("{shown}: {err}");
                    continue;
                }
            };
            if status.is_client_error() {
                return Err(CallFailure::new(
                    error_code::GATEWAY_FAILED,
                    format!("{shown}: HTTP {status}{}", gateway_message(&body)),
                ));
            }
            if !status.is_success() {
                last = format!("{shown}: HTTP {status}");
                continue;
            }
            return parse_response(&body).map_err(|why| {
                CallFailure::new(error_code::GATEWAY_FAILED, format!("{shown}: {why}"))
            });
        }
        Err(CallFailure::new(error_code::GATEWAY_FAILED, last))
    }

    /// The body, refused once it passes the size limit (before reading it all when the
    /// length is announced).
    async fn read_body(&self, mut response: reqwest::Response) -> Result<Vec<u8>, String> {
        let too_large = || format!("response larger than {} bytes", self.max_bytes);
        if response.content_length().is_some_and(|n| n > self.max_bytes as u64) {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| describe(&e))? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

fn describe(err: &reqwest::Error) -> String {
    if err.is_timeout() {
        "timed out".into()
    } else if err.is_redirect() {
        format!("more than {MAX_REDIRECTS} redirects")
    } else if err.is_connect() {
        // A refused private address shows as a failed connection: say which.
        let chain = std::iter::successors(std::error::Error::source(err), |e| e.source());
        match chain.map(ToString::to_string).find(|t| t.contains("no public address")) {
            Some(why) => why,
            None => "connection failed".into(),
        }
    } else {
        "request failed".into()
    }
}

/// A gateway's error message (`{"message": …}`), shortened, for the error shown.
fn gateway_message(body: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .map(|m| format!(" ({})", m.chars().take(200).collect::<String>()))
        .unwrap_or_default()
}

/// `{"data": "0x…"}`.
fn parse_response(body: &[u8]) -> Result<Vec<u8>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| "the response is not JSON".to_owned())?;
    let data = value
        .get("data")
        .and_then(|d| d.as_str())
        .ok_or_else(|| "the response has no \"data\" string".to_owned())?;
    let hex = data.strip_prefix("0x").ok_or_else(|| "\"data\" is not 0x hex".to_owned())?;
    hex::decode(hex).map_err(|_| "\"data\" is not 0x hex".to_owned())
}

/// Calls `to` with `data` after block `block`, following CCIP-Read lookups.
pub async fn call(
    chain: &LiveChain,
    gateways: &Gateways,
    to: Address,
    data: Vec<u8>,
    block: B256,
    trace: &Trace,
) -> Result<Bytes, CallFailure> {
    let mut calldata = data;
    for lookup in 0..=MAX_LOOKUPS {
        let outcome = chain.call(to, calldata, block).await.map_err(|err| {
            CallFailure::new(
                error_code::RPC_FAILED,
                format!("eth_call on chain {}: {err}", chain.chain_id),
            )
        })?;
        let revert = match outcome {
            CallOutcome::Returned(bytes) => return Ok(bytes),
            CallOutcome::Reverted(revert) => revert,
        };
        if !revert.starts_with(&OffchainLookup::SELECTOR) {
            return Err(CallFailure::new(
                error_code::RESOLVER_REVERTED,
                format!("{to:#x} reverted{}", revert_reason(&revert)),
            ));
        }
        if lookup == MAX_LOOKUPS {
            return Err(CallFailure::new(
                error_code::CCIP_READ_REFUSED,
                format!("{to:#x} asked for more than {MAX_LOOKUPS} offchain lookups"),
            ));
        }
        let request = OffchainLookup::abi_decode(&revert).map_err(|_| {
            CallFailure::new(error_code::RESOLVER_BAD_RESPONSE, "malformed OffchainLookup revert")
        })?;
        if request.sender != to {
            return Err(CallFailure::new(
                error_code::CCIP_READ_REFUSED,
                format!("OffchainLookup names sender {:#x}, not {to:#x}", request.sender),
            ));
        }
        trace.step("ccip.lookup", || format!("{to:#x}: {} URL(s)", request.urls.len()));
        let response =
            gateways.fetch(request.sender, &request.urls, &request.callData, trace).await?;
        let mut next = request.callbackFunction.to_vec();
        next.extend((Bytes::from(response), request.extraData).abi_encode_params());
        calldata = next;
    }
    // The loop returns on every path at `MAX_LOOKUPS`.
    Err(CallFailure::new(error_code::CCIP_READ_REFUSED, "too many offchain lookups"))
}

/// `: <reason>` for a standard `Error(string)` revert, else nothing.
fn revert_reason(revert: &[u8]) -> String {
    alloy::sol_types::Revert::abi_decode(revert)
        .map(|r| format!(": {}", r.reason.chars().take(200).collect::<String>()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refuses_private_gateways_unless_allowed() {
        let gateways = Gateways::new(Duration::from_secs(2), 1024, false).unwrap();
        let trace = Trace::new(false);
        for url in [
            "http://127.0.0.1:9/x",
            "http://[::1]:9/x",
            "http://localhost:9/x",
            "http://169.254.169.254/x",
        ] {
            let err =
                gateways.fetch(Address::ZERO, &[url.to_owned()], &[], &trace).await.unwrap_err();
            assert_eq!(err.code, error_code::GATEWAY_FAILED);
            assert!(
                err.message.contains("private") || err.message.contains("no public address"),
                "{url}: {}",
                err.message
            );
        }
        // Allowed, the request is made (and fails to connect: nothing listens on port 9).
        let open = Gateways::new(Duration::from_secs(2), 1024, true).unwrap();
        let err = open
            .fetch(Address::ZERO, &["http://127.0.0.1:9/x".into()], &[], &trace)
            .await
            .unwrap_err();
        assert!(err.message.contains("connection failed"), "{}", err.message);
    }

    #[test]
    fn parses_gateway_answers() {
        assert_eq!(parse_response(br#"{"data":"0x0102"}"#), Ok(vec![1, 2]));
        assert!(parse_response(b"<html>").is_err());
        assert!(parse_response(br#"{"data":"0102"}"#).is_err());
        assert!(parse_response(br#"{"data":1}"#).is_err());
        assert_eq!(gateway_message(br#"{"message":"no"}"#), " (no)");
    }
}
