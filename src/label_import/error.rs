//! [`ImportError`]: what stops a label import, and [`BadEntry`]: what skips one entry.

use crate::store::StoreError;

/// Why an entry of a label file was skipped. The import goes on with the next one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadEntry {
    /// The label is not UTF-8.
    #[error("the label is not UTF-8")]
    NotUtf8,
    /// The label is longer than [`super::format::MAX_LABEL_BYTES`].
    #[error("the label is {0} bytes long, over the limit of {limit}", limit = super::format::MAX_LABEL_BYTES)]
    Overlong(usize),
    /// The hash given is not 32 bytes of hex (`0x` and 64 hex digits).
    #[error("`{0}` is not a label hash (0x and 64 hex digits)")]
    MalformedHash(String),
    /// The hash given is not the label's keccak256.
    #[error("the label hashes to {actual}, not {given}")]
    WrongHash {
        /// Hash in the file.
        given: String,
        /// keccak256 of the label.
        actual: String,
    },
    /// A CSV line without the `labelhash,label` shape.
    #[error("expected `labelhash,label`")]
    NotCsv,
    /// An ENSRainbow record without its hash or its label field.
    #[error("the record lacks its {0}")]
    IncompleteRecord(&'static str),
}

/// Where a bad entry sits: a line of a text or CSV file, a record of an ENSRainbow file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// 1-based line number.
    Line(u64),
    /// 1-based record number (the header is not counted).
    Record(u64),
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Line(n) => write!(f, "line {n}"),
            Self::Record(n) => write!(f, "record {n}"),
        }
    }
}

/// A failure that ends the import. Batches committed before it stay imported, and running
/// it again skips what is already known.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be opened or read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// An ENSRainbow stream that cannot be read on: a record cut short or a length that
    /// cannot be one (no later record can be found past it).
    #[error("{path}: {position}: {reason}; the stream cannot be read past it")]
    Corrupt {
        /// The file.
        path: String,
        /// Where.
        position: Position,
        /// What was wrong.
        reason: String,
    },
    /// The database refused a read or a write.
    #[error(transparent)]
    Store(#[from] StoreError),
}
