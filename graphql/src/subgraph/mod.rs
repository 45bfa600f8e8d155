//! The ENS subgraph's API over the Ensemble database: the schema that clients of the ENS
//! subgraph on The Graph (the ENS manager app, `@ensdomains/ensjs`, wallets) query, with The
//! Graph's query language (`where` with every operator suffix, nested filters, `and`/`or`,
//! `orderBy` with nested `parent__name` keys, `first` ≤ 1000, `skip` ≤ 5000, lookups by id,
//! `_meta`), answered from the same tables as the Omnigraph.
//!
//! Layout: [`model`] defines each entity as a view over the tables, [`filter`] compiles
//! `where`, [`rows`] runs listings and lookups, [`references`] loads what references point
//! at, [`events`] decodes the event entities' fields from the stored logs, [`lookups`] reads
//! what computed fields need, [`schema`] generates the GraphQL types, [`requests`] adapts and
//! bounds incoming documents, [`sql`] holds the engine-specific SQL.
//!
//! The subgraph indexes one registry (Ethereum mainnet's); here it is the registry of the
//! namegraph's root chain.

pub mod events;
pub mod filter;
pub mod lookups;
pub mod model;
pub mod references;
pub mod requests;
pub mod rows;
pub mod schema;
pub mod sql;

use std::time::Duration;

use async_graphql::{
    dataloader::DataLoader,
    dynamic::{Schema, SchemaError},
};
use sea_orm::DatabaseConnection;

use self::{references::RefLoader, requests::SubgraphRequests, schema::SubgraphData, sql::Env};

/// The subgraph schema type.
pub type SubgraphSchema = Schema;

/// Deepest query accepted: `domain { registration { events { ... on NameRegistered {
/// registrant { registrations { domain { parent { name } } } } } } } }` is 9.
pub const MAX_DEPTH: usize = 16;
/// Largest query complexity (fields counted once each; [`requests`] bounds what they list).
pub const MAX_COMPLEXITY: usize = 20_000;

/// The registry the subgraph API shows.
#[derive(Clone, Debug)]
pub struct SubgraphScope {
    /// Chain of the registry.
    pub chain_id: u64,
    /// The registry's address.
    pub registry: [u8; 20],
    /// The registry it replaced, if the chain has one.
    pub old_registry: Option<[u8; 20]>,
    /// The name whose subnames the base registrar registers (`eth`).
    pub registrar_name: String,
    /// Rows of an `or`'s index sets above which a listing walks its order's index instead
    /// ([`schema::COMMON_SET_ROWS`]; tests set 0 to walk always).
    pub common_set_rows: u64,
}

/// Builds the schema over `db`, showing the names of `scope`.
pub fn build_subgraph_schema(
    db: DatabaseConnection,
    scope: SubgraphScope,
) -> Result<SubgraphSchema, SchemaError> {
    let env = Env {
        backend: db.get_database_backend(),
        chain_id: i64::try_from(scope.chain_id).unwrap_or(i64::MAX),
        registry: scope.registry,
        old_registry: scope.old_registry,
        registrar_node: crate::name::interpreted_namehash(&scope.registrar_name).0,
        common_set_rows: scope.common_set_rows,
    };
    let loader = DataLoader::new(RefLoader { db: db.clone(), env: env.clone() }, tokio::spawn)
        .delay(Duration::ZERO);
    builder().data(SubgraphData { db, env }).data(loader).finish()
}

/// The schema's SDL, as checked in at `graphql/subgraph.graphql`.
pub fn subgraph_sdl() -> String {
    builder().finish().map(|s| s.sdl()).unwrap_or_default()
}

fn builder() -> async_graphql::dynamic::SchemaBuilder {
    schema::register(Schema::build("Query", None, None))
        .limit_depth(MAX_DEPTH)
        .limit_complexity(MAX_COMPLEXITY)
        .limit_recursive_depth(64)
        .limit_directives(16)
        .extension(crate::limits::DocumentLimits)
        .extension(SubgraphRequests)
}

#[cfg(test)]
mod tests {
    /// The checked-in SDL is the contract with clients. Regenerate with
    /// `ENSEMBLE_UPDATE_SDL=1 cargo test -p graphql`.
    #[test]
    fn checked_in_sdl_matches_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/subgraph.graphql");
        let sdl = super::subgraph_sdl();
        assert!(sdl.contains("type Domain"), "the schema builds");
        if std::env::var_os("ENSEMBLE_UPDATE_SDL").is_some() {
            std::fs::write(path, &sdl).expect("write subgraph.graphql");
        }
        let checked_in = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            checked_in == sdl,
            "graphql/subgraph.graphql differs from the schema in code; run ENSEMBLE_UPDATE_SDL=1 cargo test -p graphql and commit the result"
        );
    }
}
