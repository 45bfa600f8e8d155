//! [`ConfigError`]: why a configuration cannot be used.

/// Why a configuration cannot be used. Every message says how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// TOML syntax or an unknown/mistyped key.
    #[error("invalid config {origin}: {message} (see config/default.toml for every key)")]
    Parse {
        /// Which layer.
        origin: String,
        /// What the parser said.
        message: String,
    },
    /// A semantic problem.
    #[error("invalid config: {0}")]
    Invalid(String),
}
