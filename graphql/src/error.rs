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
    /// The process serves no resolution (a schema without the service's resolver).
    pub const RESOLUTION_UNAVAILABLE: &str = "RESOLUTION_UNAVAILABLE";
    /// A failure on our side.
    pub const INTERNAL: &str = "INTERNAL";
    /// The query ran longer than the server allows (set by the HTTP layer).
    pub const TIMEOUT: &str = "TIMEOUT";
    /// A `block` argument past the block the index stands at (subgraph API).
    pub const BLOCK_NOT_INDEXED: &str = "BLOCK_NOT_INDEXED";
    /// A `block` argument for a past block: the index holds its latest state only (subgraph
    /// API).
    pub const TIME_TRAVEL_UNSUPPORTED: &str = "TIME_TRAVEL_UNSUPPORTED";
    /// A query that would list more entities than the server allows (subgraph API).
    pub const TOO_MANY_ENTITIES: &str = "TOO_MANY_ENTITIES";
    /// Nested too deeply: brackets in the text, selections, fragments spreading fragments, or
    /// variable values.
    pub const TOO_DEEP: &str = "TOO_DEEP";
    /// Too much work: the complexity, or the fields of the document with its fragments spread.
    pub const TOO_COMPLEX: &str = "TOO_COMPLEX";
    /// More directives on one field than the server allows.
    pub const TOO_MANY_DIRECTIVES: &str = "TOO_MANY_DIRECTIVES";
    /// The text is not a GraphQL document.
    pub const GRAPHQL_PARSE_FAILED: &str = "GRAPHQL_PARSE_FAILED";
    /// The document does not fit the schema (unknown field, wrong argument or variable type,
    /// fragment cycle, ...).
    pub const GRAPHQL_VALIDATION_FAILED: &str = "GRAPHQL_VALIDATION_FAILED";
    /// The request around the document is wrong: not JSON, no `query`, an unknown operation
    /// name, several operations and none named.
    pub const BAD_REQUEST: &str = "BAD_REQUEST";
    /// The request body is larger than the server accepts (HTTP 413).
    pub const PAYLOAD_TOO_LARGE: &str = "PAYLOAD_TOO_LARGE";
    /// The request body did not arrive in time (HTTP 408).
    pub const REQUEST_TIMEOUT: &str = "REQUEST_TIMEOUT";
    /// The client has as many connections or requests open as it may (HTTP 429).
    pub const TOO_MANY_REQUESTS: &str = "TOO_MANY_REQUESTS";
    /// A body type the endpoint does not take (HTTP 415).
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "UNSUPPORTED_MEDIA_TYPE";
}

/// The `extensions.code` of `error`, if it has one.
pub fn code_of(error: &async_graphql::ServerError) -> Option<&str> {
    match error.extensions.as_ref()?.get("code")? {
        async_graphql::Value::String(code) => Some(code.as_str()),
        _ => None,
    }
}

/// `error` with `code` unless it has a code already.
pub fn with_code(mut error: async_graphql::ServerError, code: &str) -> async_graphql::ServerError {
    if code_of(&error).is_none() {
        error.extensions.get_or_insert_with(Default::default).set("code", code);
    }
    error
}

/// A request-level error with `code`.
pub fn server_error(code: &str, message: impl Into<String>) -> async_graphql::ServerError {
    with_code(async_graphql::ServerError::new(message, None), code)
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
