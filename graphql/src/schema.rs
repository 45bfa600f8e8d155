//! [`build_schema`]: the schema and its limits.

use async_graphql::{EmptyMutation, EmptySubscription, Schema};
use sea_orm::DatabaseConnection;

use crate::query::Query;

/// The schema type.
pub type EnsSchema = Schema<Query, EmptyMutation, EmptySubscription>;

/// Deepest query accepted: a domain → parent → ... chain of 16 levels plus connection wrappers.
pub const MAX_DEPTH: usize = 24;
/// Largest query complexity (fields, with connections weighted by page size).
pub const MAX_COMPLEXITY: usize = 20_000;

/// Builds the schema over `db`.
pub fn build_schema(db: DatabaseConnection) -> EnsSchema {
    Schema::build(Query, EmptyMutation, EmptySubscription)
        .data(db)
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
        .limit_recursive_depth(64)
        .finish()
}
