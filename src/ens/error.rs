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
    /// Reading or writing entities failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl HandlerError {
    /// Whether the pipeline must stop (and be restarted from its checkpoint) rather than
    /// skip the event.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Store(_))
    }

    pub(crate) fn unknown(what: &'static str, id: impl Into<String>) -> Self {
        Self::UnknownNode { what, id: id.into() }
    }
}
