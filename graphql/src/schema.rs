//! [`build_schema`]: the schema and its limits.

use std::sync::Arc;

use async_graphql::{EmptyMutation, Schema};
use sea_orm::DatabaseConnection;

use crate::{
    connection::Tuning,
    query::Query,
    subscription::{EventFeed, Subscription},
};

/// The schema type.
pub type EnsSchema = Schema<Query, EmptyMutation, Subscription>;

/// Deepest query accepted: a domain → parent → ... chain of 16 levels plus connection wrappers.
pub const MAX_DEPTH: usize = 24;
/// Largest query complexity (fields, with connections weighted by page size).
pub const MAX_COMPLEXITY: usize = 20_000;

/// Builds the schema over `db`.
pub fn build_schema(db: DatabaseConnection) -> EnsSchema {
    build_schema_with(db, Tuning::default())
}

/// Builds the schema over `db` that resolves names through `resolution` (the service's).
pub fn build_schema_with_resolution(
    db: DatabaseConnection,
    resolution: crate::types::resolve::SharedResolution,
) -> EnsSchema {
    let feed = Arc::new(EventFeed::new(db.clone()));
    crate::loaders::add_loaders(builder(), &db)
        .data(db)
        .data(feed)
        .data(Tuning::default())
        .data(resolution)
        .finish()
}

/// Builds the schema over `db` with query planning knobs (tests force each plan with them).
pub fn build_schema_with(db: DatabaseConnection, tuning: Tuning) -> EnsSchema {
    let feed = Arc::new(EventFeed::new(db.clone()));
    crate::loaders::add_loaders(builder(), &db).data(db).data(feed).data(tuning).finish()
}

/// The schema's SDL, as checked in at `graphql/schema.graphql`.
pub fn sdl() -> String {
    builder().finish().sdl()
}

fn builder() -> async_graphql::SchemaBuilder<Query, EmptyMutation, Subscription> {
    Schema::build(Query, EmptyMutation, Subscription)
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
        .limit_recursive_depth(64)
        .limit_directives(16)
        .extension(crate::limits::DocumentLimits)
}

#[cfg(test)]
mod tests {
    /// The checked-in SDL is the contract with clients: a change to the schema must show up
    /// in review as a change to `schema.graphql`. Regenerate with
    /// `ENSEMBLE_UPDATE_SDL=1 cargo test -p graphql`.
    #[test]
    fn checked_in_sdl_matches_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema.graphql");
        let sdl = super::sdl();
        if std::env::var_os("ENSEMBLE_UPDATE_SDL").is_some() {
            std::fs::write(path, &sdl).expect("write schema.graphql");
        }
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == sdl,
            "graphql/schema.graphql differs from the schema in code; run ENSEMBLE_UPDATE_SDL=1 cargo test -p graphql and commit the result"
        );
    }
}
