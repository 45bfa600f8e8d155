//! [`devnet`] and [`database`]: time resolution (p50/p99) from the index against the same
//! resolutions by live calls.
//!
//! Resolutions go through the service's resolver in process ([`ResolutionService`], what the
//! REST API and GraphQL call), so the figures are resolution's own, without HTTP.
//!
//! - On the devnet (anvil, the real contracts, the scenario's names indexed by the real
//!   pipeline): records of random scenario names and primary names of the accounts that set
//!   one, each from the index and by live calls at the same block.
//! - On a database filled by `bench query` (no chain behind it): records of random domains
//!   and primary names of random owners, from the index only; such a database gets a
//!   checkpoint for its chain if it has none, so the index counts as fresh.
//!
//! Index cases run twice: as clients send them (a name asked again is served from the
//! answer cache while its block holds), and uncached (traced requests skip the cache).

use std::time::{Duration, Instant};

use alloy::primitives::Address;
use ensemble::{Config, Service, config::ChainConfig, resolution::ResolutionService};
use graphql::resolution::{RecordsSelection, Resolution, ResolveOptions, Source};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::DatabaseConnection;

use super::{BenchError, query::percentile};
use crate::devnet::{Anvil, Driver, Scenario, scenario::ScenarioOptions};

/// Longest one case is repeated.
pub const TIME_BUDGET: Duration = Duration::from_secs(20);
/// Fewest runs per case, whatever the time.
pub const MIN_RUNS: usize = 20;

/// How a case is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// From the index, repeated answers from the answer cache (names repeat across runs).
    Index,
    /// From the index, every answer computed: traced requests skip the answer cache.
    IndexUncached,
    /// By live calls.
    Live,
}

impl Path {
    fn label(self) -> &'static str {
        match self {
            Self::Index => "index",
            Self::IndexUncached => "index, uncached",
            Self::Live => "live",
        }
    }
}

/// Timings of one case.
#[derive(Clone, Debug)]
pub struct ResolveTiming {
    /// What was resolved.
    pub case: String,
    /// `index` or `live`.
    pub source: &'static str,
    /// How often.
    pub runs: usize,
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
}

/// What one case resolves per run.
enum Subject {
    /// Records of a name.
    Records(String),
    /// The ETH primary name of an account.
    Primary(Address),
}

/// The records every forward case asks for: what a wallet shows for a name.
fn selection() -> RecordsSelection {
    RecordsSelection {
        addresses: vec![60],
        texts: vec!["url".into(), "avatar".into()],
        contenthash: true,
        ..RecordsSelection::default()
    }
}

fn failed(what: impl std::fmt::Display) -> BenchError {
    BenchError::Run(what.to_string())
}

/// Times `subjects` (picked at random per run) through `service`.
async fn time_case(
    service: &ResolutionService,
    case: &str,
    subjects: &[Subject],
    path: Path,
    runs: usize,
    rng: &mut StdRng,
) -> Result<ResolveTiming, BenchError> {
    let accelerate = path != Path::Live;
    let options = ResolveOptions { accelerate, trace: path == Path::IndexUncached };
    let selection = selection();
    let started = Instant::now();
    let mut times = Vec::with_capacity(runs);
    let mut from_index = 0;
    while times.len() < runs.max(1) && (times.len() < MIN_RUNS || started.elapsed() < TIME_BUDGET) {
        let subject = &subjects[rng.random_range(0..subjects.len())];
        let at = Instant::now();
        let source = match subject {
            Subject::Records(name) => {
                service.forward(name, &selection, options).await.map_err(failed)?.answered.source
            }
            Subject::Primary(account) => {
                let names =
                    service.primary_names(account.0.0, &[60], options).await.map_err(failed)?;
                names.first().map_or(Source::Live, |n| n.answered.source)
            }
        };
        times.push(at.elapsed());
        if source == Source::Index {
            from_index += 1;
        }
    }
    if accelerate && from_index * 10 < times.len() * 9 {
        tracing::warn!(target: "bench", case, from_index, runs = times.len(), "Most answers did not come from the index");
    }
    times.sort_unstable();
    let timing = ResolveTiming {
        case: case.to_owned(),
        source: path.label(),
        runs: times.len(),
        p50: percentile(&times, 0.50),
        p99: percentile(&times, 0.99),
    };
    tracing::info!(target: "bench", case, source = timing.source, runs = timing.runs, p50 = ?timing.p50, p99 = ?timing.p99, "Resolution timed");
    Ok(timing)
}

/// The devnet benchmark: a scenario of `eth_names` `.eth` names indexed into `database_url`
/// (a fresh database), then each case from the index and live.
pub async fn devnet(
    database_url: &str,
    eth_names: usize,
    runs: usize,
    seed: u64,
) -> Result<(usize, Vec<ResolveTiming>), BenchError> {
    let anvil = Anvil::spawn(31337).await.map_err(failed)?;
    let mut driver = Driver::new(anvil.provider()).await.map_err(failed)?;
    let scenario = Scenario::run(&mut driver, ScenarioOptions { eth_names, ..Default::default() })
        .await
        .map_err(failed)?;
    let chain = scenario.deployment.chain_config(anvil.chain_id, &anvil.url);
    let config = config(database_url, chain)?;
    let service = Service::start(&config).await.map_err(failed)?;
    wait_for_block(&service.db, anvil.chain_id, scenario.last_block).await?;
    let resolver = ResolutionService::new(service.db.clone(), &config).map_err(failed)?;
    let names: Vec<Subject> =
        scenario.names.iter().map(|n| Subject::Records(n.plaintext())).collect();
    let accounts: Vec<Subject> =
        scenario.primary_accounts.iter().map(|a| Subject::Primary(*a)).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for path in [Path::Index, Path::IndexUncached, Path::Live] {
        out.push(time_case(&resolver, "records", &names, path, runs, &mut rng).await?);
        out.push(time_case(&resolver, "primary name", &accounts, path, runs, &mut rng).await?);
    }
    service.stop().await;
    drop(anvil);
    Ok((scenario.names.len(), out))
}

/// The benchmark on a `bench query` database: from the index only.
pub async fn database(
    db: &DatabaseConnection,
    database_url: &str,
    runs: usize,
    seed: u64,
) -> Result<Vec<ResolveTiming>, BenchError> {
    use super::namegraph::{CHAIN_ID, PUBLIC_RESOLVER, REGISTRY};
    use entities::{checkpoint, domain};
    use sea_orm::{ActiveValue::Set, EntityTrait, QuerySelect};
    if checkpoint::Entity::find_by_id(CHAIN_ID.column()).one(db).await.map_err(failed)?.is_none() {
        checkpoint::Entity::insert(checkpoint::ActiveModel {
            chain_id: Set(CHAIN_ID.column()),
            block_number: Set(0),
            block_hash: Set(format!("{:#x}", alloy::primitives::B256::ZERO)),
            updated_at: Set(0),
        })
        .exec(db)
        .await
        .map_err(failed)?;
    }
    let mut chain = ChainConfig::local(
        CHAIN_ID,
        "bench",
        "",
        vec![ensemble::config::ContractConfig::new(
            ensemble::ens::role::ContractRole::Registry,
            REGISTRY,
        )],
    );
    chain.rpc_url = None;
    chain.static_resolvers = vec![PUBLIC_RESOLVER];
    let config = config(database_url, chain)?;
    let resolver = ResolutionService::new(db.clone(), &config).map_err(failed)?;
    let mut rng = StdRng::seed_from_u64(seed);
    // Random names and owners: rows at random points of the key space.
    let mut names = Vec::new();
    let mut accounts = Vec::new();
    while names.len() < 1_000 {
        let point = domain::Entity::find()
            .select_only()
            .column(domain::Column::Id)
            .limit(1)
            .into_tuple::<entities::domain_key::DomainKey>()
            .one(db)
            .await
            .map_err(failed)?
            .ok_or(BenchError::Empty)?
            .with_node(&rng.random::<[u8; 32]>());
        use sea_orm::{ColumnTrait, QueryFilter, QueryOrder};
        let Some(row) = domain::Entity::find()
            .filter(domain::Column::Id.gte(point))
            .order_by_asc(domain::Column::Id)
            .one(db)
            .await
            .map_err(failed)?
        else {
            continue;
        };
        if let Some(owner) = row.owner.as_ref().and_then(|o| Address::try_from(o.as_bytes()).ok()) {
            accounts.push(Subject::Primary(owner));
        }
        names.push(Subject::Records(row.name));
    }
    let mut out = Vec::new();
    for path in [Path::Index, Path::IndexUncached] {
        out.push(time_case(&resolver, "records", &names, path, runs, &mut rng).await?);
        out.push(time_case(&resolver, "primary name", &accounts, path, runs, &mut rng).await?);
    }
    Ok(out)
}

/// The defaults with `chain` and the database at `url`, on an ephemeral port.
fn config(url: &str, chain: ChainConfig) -> Result<Config, BenchError> {
    let mut config =
        Config::load(None, [("DATABASE_URL".to_owned(), url.to_owned())]).map_err(failed)?;
    config.http.listen = ([127, 0, 0, 1], 0).into();
    config.with_chains(vec![chain]).map_err(failed)
}

async fn wait_for_block(db: &DatabaseConnection, chain: u64, block: u64) -> Result<(), BenchError> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let at = ensemble::store::writer::read_checkpoint(db, chain.into())
            .await
            .map_err(failed)?
            .map_or(0, |c| c.block_number);
        if at >= block {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(failed(format!("the devnet was not indexed to block {block}")));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
