//! [`RpcError`]: what went wrong talking to a node, classified once so callers decide from
//! the variant, never from a message.
//!
//! Classification goes by status and error code where the protocol has one (HTTP 429,
//! `Retry-After`, JSON-RPC -32005, transport failures by kind). Refusals of a log range and
//! rate limits reported inside a JSON-RPC error have no standard code across providers, so
//! their messages are matched here, in one place.
//!
//! A variant keeps the error's text, not the alloy error itself: that text may carry the
//! endpoint's URL with its key, and it is redacted ([`RpcError::redacted`]) before it leaves
//! the client. A kept source error would print the key again wherever an error chain is shown
//! (`Caused by:` at exit, a status row, an admin answer).

use alloy::transports::{RpcError as AlloyRpcError, TransportErrorKind};

/// An RPC failure.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The provider refused the `eth_getLogs` window (range or result-size cap): narrow it.
    #[error("provider refused the log range: {0}")]
    RangeTooLarge(String),
    /// Timeouts, 5xx, connection resets, malformed or truncated bodies: try again later.
    #[error("transient rpc failure: {0}")]
    Transient(String),
    /// The provider throttles us (HTTP 429 or a rate-limit error), possibly saying how long
    /// to wait (`Retry-After`).
    #[error("rate limited: {text}")]
    RateLimited {
        /// What the provider said.
        text: String,
        /// The delay it asked for.
        retry_after: Option<std::time::Duration>,
    },
    /// The node answered with an error that retrying will not change.
    #[error("rpc error: {0}")]
    Permanent(String),
    /// A block the chain should have is missing (node behind or pruned).
    #[error("block {0} not available from the node")]
    MissingBlock(u64),
}

impl RpcError {
    /// The same error with every occurrence of `secret` (an endpoint URL) replaced by `shown`.
    pub fn redacted(self, secret: &str, shown: &str) -> Self {
        let clean = |text: String| {
            let text = text.replace(secret, shown).replace(secret.trim_end_matches('/'), shown);
            // The client may print the URL in another form (normalized, without its user
            // info): every registered part of it goes too.
            crate::redaction::redact(&text).into_owned()
        };
        match self {
            Self::RangeTooLarge(t) => Self::RangeTooLarge(clean(t)),
            Self::Transient(t) => Self::Transient(clean(t)),
            Self::RateLimited { text, retry_after } => {
                Self::RateLimited { text: clean(text), retry_after }
            }
            Self::Permanent(t) => Self::Permanent(clean(t)),
            Self::MissingBlock(n) => Self::MissingBlock(n),
        }
    }

    /// Worth retrying with backoff.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Transient(_) | Self::RateLimited { .. } | Self::MissingBlock(_))
    }

    /// Classifies an `eth_getLogs` failure: like [`RpcError::classify`], plus refusals of the
    /// block window. Those have no standard code, so the provider's message is matched here,
    /// once (Alchemy, Infura, QuickNode, geth, erigon wordings).
    pub fn classify_logs(err: AlloyRpcError<TransportErrorKind>) -> Self {
        if let AlloyRpcError::ErrorResp(payload) = &err {
            let msg = payload.message.to_lowercase();
            let range_words = ["range", "too many", "limit", "exceed", "too large", "max results"];
            if payload.code == -32005 || range_words.iter().any(|w| msg.contains(w)) {
                return Self::RangeTooLarge(err.to_string());
            }
        }
        Self::classify(err)
    }

    /// Classifies an alloy transport error.
    pub fn classify(err: AlloyRpcError<TransportErrorKind>) -> Self {
        let text = err.to_string();
        match &err {
            AlloyRpcError::ErrorResp(payload) => {
                let msg = payload.message.to_lowercase();
                if payload.code == 429
                    || msg.contains("rate limit")
                    || msg.contains("too many requests")
                {
                    Self::RateLimited { text, retry_after: None }
                } else {
                    Self::Permanent(text)
                }
            }
            AlloyRpcError::Transport(TransportErrorKind::HttpErrorWithRetryAfter {
                retry_after,
                ..
            }) => Self::RateLimited { text, retry_after: Some(*retry_after) },
            AlloyRpcError::Transport(TransportErrorKind::HttpError(http)) if http.status == 429 => {
                Self::RateLimited { text, retry_after: None }
            }
            // Other HTTP statuses, connection failures, timeouts, and bodies that are not valid
            // JSON-RPC (truncated, HTML error pages): all worth another try, never data.
            AlloyRpcError::Transport(_)
            | AlloyRpcError::DeserError { .. }
            | AlloyRpcError::NullResp => Self::Transient(text),
            _ => Self::Permanent(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_keys_in_every_variant() {
        let secret = "https://eth.example/v2/SECRETKEY";
        let shown = "https://eth.example/…";
        for err in [
            RpcError::Transient(format!("error sending request for url ({secret})")),
            RpcError::Permanent(format!("{secret}/ refused")),
            RpcError::RangeTooLarge(secret.into()),
        ] {
            let text = err.redacted(secret, shown).to_string();
            assert!(!text.contains("SECRETKEY") && text.contains(shown), "{text}");
        }
    }
}
