//! JSON-RPC access to one chain: an alloy HTTP provider wrapped with retries, backoff with
//! jitter, and classification of provider refusals ([`RpcError`]).

pub mod client;
pub mod error;

pub use client::{BlockInfo, CallOutcome, RpcClient, TxParties};
pub use error::RpcError;
