//! [`Error`]: the top-level error, joining each layer's error.

use std::net::SocketAddr;

/// Anything that stops the service from starting or running.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Configuration.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Storage.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// RPC.
    #[error(transparent)]
    Rpc(#[from] crate::rpc::RpcError),
    /// Resolution could not be set up (its HTTP client for gateways).
    #[error("resolution: {0}")]
    Resolution(String),
    /// The HTTP listener.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
