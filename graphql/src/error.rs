//! GraphQL errors with stable `extensions.code`s. Internal detail (SQL, driver messages) goes
//! to the log, never to the client.

use async_graphql::{Error, ErrorExtensions};

/// `extensions.code` values.
pub mod code {
    /// A name that is not an interpreted name (unnormalized label, too long, too deep).
    pub const INVALID_NAME: &str = "INVALID_NAME";
    /// A cursor this server did not issue.
    pub const INVALID_CURSOR: &str = "INVALID_CURSOR";
    /// Any other bad argument (page size, malformed address or node).
    pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
    /// A document with more aliases than the server allows.
    pub const TOO_MANY_ALIASES: &str = "TOO_MANY_ALIASES";
    /// The process serves as many subscriptions as it allows.
    pub const TOO_MANY_SUBSCRIPTIONS: &str = "TOO_MANY_SUBSCRIPTIONS";
    /// A failure on our side.
    pub const INTERNAL: &str = "INTERNAL";
    /// The query ran longer than the server allows (set by the HTTP layer).
    pub const TIMEOUT: &str = "TIMEOUT";
}

/// An error with `code`.
pub fn coded(code: &'static str, message: impl Into<String>) -> Error {
    Error::new(message).extend_with(|_, e| e.set("code", code))
}

/// A database failure: logged with detail, reported as `INTERNAL`.
pub fn internal(err: sea_orm::DbErr) -> Error {
    tracing::error!(target: "api::graphql", error = %err, "Database error");
    coded(code::INTERNAL, "internal error")
}
