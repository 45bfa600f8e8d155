//! [`run`]: what a bridge going up or down costs on a large namegraph. The generated
//! namegraph's `eth` becomes a bridge's origin and every name below it is relinked as the
//! indexer would have linked it at creation (the origin chain's names below a bridged name);
//! that one-time relink is timed too, as the cost a materialized canonical flag would pay on
//! every flip. Then `eth`'s resolver is set to the bridge's resolver and back, each through
//! the real registry handler and a flush, and the API's queries are timed in each state.

use std::time::{Duration, Instant};

use alloy::{ens::namehash, primitives::Address};
use entities::{domain, namegraph_bridge};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, IntoActiveModel, PaginatorTrait,
    QueryFilter, Statement,
};

use super::{
    BenchError,
    namegraph::{CHAIN_ID, REGISTRY},
};
use ensemble::ChainId;
use ensemble::{
    ens::{IndexContext, event::RegistrySource, name::domain_id, registry},
    store::{Checkpoint, EntityStore, StoreError},
};

/// The bridged chain the bench pretends to link to.
pub const TARGET_CHAIN: ChainId = ChainId(4_242);
/// The bridge's resolver.
pub const BRIDGE_RESOLVER: Address = Address::repeat_byte(0xb1);
/// Runs of each query per state.
const RUNS: usize = 20;

/// One flip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Flip {
    /// Seconds to apply the `NewResolver` and flush it.
    pub secs: f64,
    /// Rows the flush wrote (the domain row and the checkpoint).
    pub rows: u64,
}

/// Median latency and result size of one query in one state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Probe {
    /// Which state.
    pub state: &'static str,
    /// Median of [`RUNS`] runs.
    pub p50: Duration,
    /// Edges of the sample listing.
    pub listed: usize,
    /// Whether the sample name resolved to a canonical domain.
    pub found: bool,
}

/// The whole bench.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BridgeReport {
    /// Domains in the database.
    pub domains: u64,
    /// Domains below the origin.
    pub below: u64,
    /// Seconds the one-time relink of everything below the origin took.
    pub relink_secs: f64,
    /// The bridge going up.
    pub up: Flip,
    /// And down again.
    pub down: Flip,
    /// Queries before, while up, and after.
    pub probes: Vec<Probe>,
}

fn db_err(op: &'static str) -> impl FnOnce(sea_orm::DbErr) -> BenchError {
    move |e| BenchError::Store(StoreError::db(op)(e))
}

/// Runs the bench on `db`, which holds a generated namegraph (`bench query --domains`).
pub async fn run(db: &DatabaseConnection) -> Result<BridgeReport, BenchError> {
    let domains = domain::Entity::find().count(db).await.map_err(db_err("count"))?;
    let origin_id = domain_id(CHAIN_ID, REGISTRY, namehash("eth"));
    let origin = domain::Entity::find_by_id(origin_id.clone())
        .one(db)
        .await
        .map_err(db_err("origin"))?
        .ok_or(BenchError::Empty)?;
    let sample = domain::Entity::find()
        .filter(domain::Column::ParentSeq.eq(origin.seq))
        .filter(domain::Column::Name.like("vitalik%"))
        .one(db)
        .await
        .map_err(db_err("sample"))?
        .map_or_else(|| "vitalik.eth".to_owned(), |d| d.name);

    // What the indexer writes at creation for names below an origin: done once, here.
    let started = Instant::now();
    let link = -(TARGET_CHAIN.column());
    let relink = format!(
        "WITH RECURSIVE below(seq) AS (SELECT seq FROM domains WHERE parent_seq = {origin} \
         UNION ALL SELECT d.seq FROM domains d JOIN below b ON d.parent_seq = b.seq) \
         UPDATE domains SET link = {link} WHERE seq IN (SELECT seq FROM below)",
        origin = origin.seq
    );
    let below = db
        .execute_raw(Statement::from_string(db.get_database_backend(), relink))
        .await
        .map_err(db_err("relink"))?
        .rows_affected();
    let relink_secs = started.elapsed().as_secs_f64();
    let bridge = namegraph_bridge::Model {
        target_chain: TARGET_CHAIN.column(),
        origin_domain: origin_id,
        resolver: domain::RawAddress::new(BRIDGE_RESOLVER.0.0),
        target_domain: domain_id(TARGET_CHAIN, REGISTRY, namehash("eth")),
    };
    namegraph_bridge::Entity::delete_many().exec(db).await.map_err(db_err("bridge"))?;
    namegraph_bridge::Entity::insert(bridge.into_active_model())
        .exec_without_returning(db)
        .await
        .map_err(db_err("bridge"))?;

    let schema = graphql::build_schema(db.clone());
    let mut probes = vec![probe(&schema, "down (before)", &sample).await?];
    let up = flip(db, BRIDGE_RESOLVER).await?;
    probes.push(probe(&schema, "up", &sample).await?);
    let down = flip(db, Address::ZERO).await?;
    probes.push(probe(&schema, "down (after)", &sample).await?);
    Ok(BridgeReport { domains, below, relink_secs, up, down, probes })
}

/// Sets `eth`'s resolver through the registry handler and flushes it, as the indexer does.
async fn flip(db: &DatabaseConnection, resolver: Address) -> Result<Flip, BenchError> {
    let ctx = IndexContext::new(CHAIN_ID, REGISTRY);
    let mut store = EntityStore::new(db.clone(), CHAIN_ID, 64 << 20);
    let checkpoint = Checkpoint {
        chain_id: CHAIN_ID,
        block_number: 1,
        block_hash: format!("{:#x}", alloy::primitives::B256::ZERO),
    };
    let started = Instant::now();
    registry::new_resolver(&ctx, &mut store, RegistrySource::Current, namehash("eth"), resolver)
        .await
        .map_err(|e| BenchError::Run(e.to_string()))?;
    let rows = store.flush(&checkpoint, None).await?;
    Ok(Flip { secs: started.elapsed().as_secs_f64(), rows: rows as u64 })
}

/// Times the listing of names below the origin and the lookup of one of them.
async fn probe(
    schema: &graphql::EnsSchema,
    state: &'static str,
    sample: &str,
) -> Result<Probe, BenchError> {
    let query = format!(
        r#"{{ domains(where: {{name: {{starts_with: "vitalik"}}}}, first: 20) {{ edges {{ node {{ id }} }} }} domain(by: {{name: "{sample}"}}) {{ id canonical {{ name {{ interpreted }} }} }} }}"#
    );
    let mut times = Vec::with_capacity(RUNS);
    let mut last = serde_json::Value::Null;
    for _ in 0..RUNS {
        let at = Instant::now();
        let response = schema.execute(query.as_str()).await;
        times.push(at.elapsed());
        if !response.errors.is_empty() {
            return Err(BenchError::Query {
                name: state.into(),
                errors: format!("{:?}", response.errors),
            });
        }
        last = response.data.into_json().unwrap_or_default();
    }
    times.sort_unstable();
    Ok(Probe {
        state,
        p50: times[RUNS / 2],
        listed: last["domains"]["edges"].as_array().map_or(0, Vec::len),
        found: !last["domain"].is_null(),
    })
}
