//! Omnigraph-style GraphQL schema over the Ensemble database, with no web framework inside:
//! [`build_schema`] returns an async-graphql schema that any server can execute.
//!
//! Layout: [`schema`] builds it and sets the limits, [`query`] is the root, `types/` wraps
//! the sea-orm models (never exposed directly), [`connection`] is the Relay keyset pagination
//! over the domains a [`domain_filter`] selects, [`name`] validates user-supplied names,
//! [`name_key`] reaches them through each engine's name indexes, [`error`] maps failures to
//! stable error codes.

pub mod connection;
pub mod domain_filter;
pub mod error;
pub mod expansion;
pub mod keyset;
pub mod limits;
pub mod loaders;
pub mod name;
pub mod name_key;
pub mod namegraph;
pub mod nesting;
pub mod query;
pub mod resolution;
pub mod scalars;
pub mod schema;
pub mod schema_retry;
pub mod subgraph;
pub mod subscription;
pub mod types;

pub use schema::{EnsSchema, build_schema, build_schema_with, build_schema_with_resolution, sdl};
