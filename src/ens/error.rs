//! [`HandlerError`]: why an event could not be applied.

use crate::store::StoreError;

/// A handler failure. Data problems (an event about a node nobody created) are skipped and
/// counted; storage failures stop the batch and are retried from the checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    /// The event names a node (or registration) that was never created.
    #[error("event for unknown {what} {id}")]
    UnknownNode {
        /// `domain`, `parent domain` or `registration`.
        what: &'static str,
        /// Its id or node.
        id: String,
    },
    /// The event's selector has no history code (`entities::event_selector`): the decoder
    /// accepts a signature the history cannot store. A build defect, so the batch stops rather
    /// than apply an event it cannot record.
    #[error("selector {selector} has no event history code")]
    UnrecordedSelector {
        /// topic0, hex.
        selector: String,
    },
    /// Reading or writing entities failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl HandlerError {
    /// Whether the pipeline must stop (and be restarted from its checkpoint) rather than
    /// skip the event.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Store(_) | Self::UnrecordedSelector { .. })
    }

    pub(crate) fn unknown(what: &'static str, id: impl Into<String>) -> Self {
        Self::UnknownNode { what, id: id.into() }
    }
}
