//! [`DevnetError`]: failures of the devnet harness.

/// A devnet failure.
#[derive(Debug, thiserror::Error)]
pub enum DevnetError {
    /// `npm pack` or unpacking failed.
    #[error(
        "cannot install devnet tools ({what}): {detail}; is npm installed and the registry reachable?"
    )]
    Install {
        /// What was being installed.
        what: String,
        /// What went wrong.
        detail: String,
    },
    /// anvil did not start or answer.
    #[error("anvil: {0}")]
    Anvil(String),
    /// A JSON-RPC call failed.
    #[error("rpc {method}: {detail}")]
    Rpc {
        /// Method.
        method: String,
        /// Error text.
        detail: String,
    },
    /// A transaction reverted.
    #[error("transaction {what} reverted (hash {hash})")]
    Reverted {
        /// What it was for.
        what: String,
        /// Its hash.
        hash: String,
    },
    /// An artifact is missing or malformed.
    #[error("artifact {0}: {1}")]
    Artifact(String, String),
}

impl DevnetError {
    pub(crate) fn rpc(method: &str) -> impl FnOnce(alloy::transports::TransportError) -> Self + '_ {
        move |e| Self::Rpc { method: method.to_owned(), detail: e.to_string() }
    }
}
