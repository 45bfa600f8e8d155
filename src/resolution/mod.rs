//! Resolution: the ENS protocol's answers. Forward: ENSIP-10's resolver walk from the
//! namespace's root chain (through bridges), then the records asked for. Reverse: ENSIP-19's
//! primary names, verified forward ([`reverse`]).
//!
//! Each answer comes from the index when the index knows it exactly and is fresh
//! ([`index`]), else from live calls at the indexed block (or the head, when the index lags),
//! with EIP-3668 CCIP-Read ([`live`], [`ccip_read`]); it says which, at which block, and why
//! it went live. [`ResolutionService`] is what the API holds (`graphql::resolution`).

pub mod abi;
pub mod answer_cache;
pub mod ccip_read;
pub mod chains;
pub mod gateway_guard;
pub mod index;
pub mod live;
pub mod name;
pub mod records;
pub mod reverse;
pub mod trace;

use futures::future::BoxFuture;
use graphql::resolution::{
    Answered, ForwardResolution, PrimaryName, RecordsSelection, Resolution, ResolutionError,
    ResolveOptions, Source, error_code,
};
use sea_orm::DatabaseConnection;

use self::{
    answer_cache::{AnswerCache, Entry},
    ccip_read::Gateways,
    chains::{ResolutionChains, block_hash},
    index::IndexAnswer,
    name::ResolvableName,
    records::{Outcome, Record, assemble},
    trace::Trace,
};
use crate::config::{Config, ResolutionConfig};

/// The service's resolver.
#[derive(Debug)]
pub struct ResolutionService {
    db: DatabaseConnection,
    config: ResolutionConfig,
    chains: ResolutionChains,
    gateways: Gateways,
    /// The namespace's bridges (a handful of rows, written when an indexer starts).
    bridges: moka::sync::Cache<(), std::sync::Arc<Vec<entities::namegraph_bridge::Model>>>,
    /// Index answers, for the blocks they were read at.
    answers: AnswerCache,
}

/// Times the index is read for one answer while chains keep committing under it.
const INDEX_READS: usize = 3;

/// Bytes of index answers kept.
const ANSWER_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// How long the bridges, once read, are taken as current.
const BRIDGES_TTL: std::time::Duration = std::time::Duration::from_secs(5);

/// A forward answer before it is rendered.
struct Forward {
    resolution: ForwardResolution,
    outcomes: Vec<Outcome>,
    /// Served from the answer cache.
    cached: bool,
}

/// Counts one resolution of `kind` (and its time) in the metrics.
fn observe(
    kind: &'static str,
    source: Result<&'static str, &'static str>,
    started: std::time::Instant,
) {
    match source {
        Ok(source) => {
            metrics::counter!("ensemble_resolutions_total", "kind" => kind, "source" => source)
                .increment(1);
            metrics::histogram!("ensemble_resolution_seconds", "kind" => kind, "source" => source)
                .record(started.elapsed().as_secs_f64());
        }
        Err(code) => {
            metrics::counter!("ensemble_resolution_errors_total", "kind" => kind, "code" => code)
                .increment(1);
        }
    }
}

/// The metrics label of how an answer was reached.
fn source_label(source: Source, cached: bool) -> &'static str {
    match (source, cached) {
        (Source::Index, true) => "index_cached",
        (Source::Index, false) => "index",
        (Source::Live, _) => "live",
    }
}

impl ResolutionService {
    /// The resolver of `config`'s chains over `db`.
    pub fn new(db: DatabaseConnection, config: &Config) -> Result<Self, String> {
        let settings = &config.resolution;
        Ok(Self {
            db,
            config: settings.clone(),
            chains: ResolutionChains::from_config(config),
            gateways: Gateways::new(
                settings.gateway_timeout(),
                settings.gateway_max_bytes,
                settings.gateway_private_addresses,
            )?,
            bridges: moka::sync::Cache::builder().max_capacity(1).time_to_live(BRIDGES_TTL).build(),
            answers: AnswerCache::new(ANSWER_CACHE_BYTES),
        })
    }

    /// Resolves `selection` for `name` within the configured time.
    pub async fn resolve(
        &self,
        name: &str,
        selection: &RecordsSelection,
        options: ResolveOptions,
    ) -> Result<ForwardResolution, ResolutionError> {
        let started = std::time::Instant::now();
        let result = async {
            selection.check()?;
            let name = ResolvableName::parse(name)?;
            let records = Record::all(selection);
            let trace = Trace::new(options.trace);
            self.within_time(self.forward(&name, &records, options, &trace)).await
        }
        .await;
        match result {
            Ok(forward) => {
                let source = source_label(forward.resolution.answered.source, forward.cached);
                observe("forward", Ok(source), started);
                Ok(forward.resolution)
            }
            Err(err) => {
                observe("forward", Err(err.code), started);
                Err(err)
            }
        }
    }

    async fn within_time<T>(
        &self,
        work: impl Future<Output = Result<T, ResolutionError>>,
    ) -> Result<T, ResolutionError> {
        let limit = self.config.timeout();
        tokio::time::timeout(limit, work).await.unwrap_or_else(|_| {
            Err(ResolutionError::new(
                error_code::TIMEOUT,
                format!("resolution took longer than {} ms", limit.as_millis()),
            ))
        })
    }

    /// Forward resolution of `records` of `name`: the index when it can, else live.
    async fn forward(
        &self,
        name: &ResolvableName,
        records: &[Record],
        options: ResolveOptions,
        trace: &Trace,
    ) -> Result<Forward, ResolutionError> {
        let root = self.chains.root()?;
        let root_id = root.indexed.chain_id;
        let mut point = self.chains.point(&self.db, root_id).await?;
        let mut live_because = None;
        if options.accelerate {
            // A traced request shows its steps, so it is answered afresh.
            if point.fresh
                && !options.trace
                && let Some(entry) = self.answers.get(name.as_str(), records)
                && self.still_current(&entry).await?
            {
                let answered = Answered {
                    source: Source::Index,
                    acceleration_requested: true,
                    block: entry.block.clone(),
                    live_because: None,
                };
                let (resolver, outcomes) = (entry.resolver.clone(), entry.outcomes.clone());
                let mut forward = self.render(name, resolver, records, outcomes, answered, trace);
                forward.cached = true;
                return Ok(forward);
            }
            match self.index_answer(&mut point, name, records, trace).await? {
                Ok(forward) => return Ok(forward),
                Err(why) => live_because = Some(why),
            }
            trace.step("index.declined", || live_because.clone().unwrap_or_default());
        }
        let Some(live) = &root.live else {
            return Err(ResolutionError::new(
                error_code::CHAIN_UNAVAILABLE,
                format!(
                    "chain {root_id} has no RPC endpoint for a live call{}",
                    live_because
                        .map(|w| format!(" (the index cannot answer: {w})"))
                        .unwrap_or_default()
                ),
            ));
        };
        let block = self.chains.live_block(live, &point).await?;
        let hash = block_hash(&block)?;
        trace.step("live.block", || {
            format!("chain {} block {} {}", block.chain_id, block.number, block.hash)
        });
        let (resolver, outcomes) =
            live::forward(live, &self.gateways, name, records, hash, trace).await?;
        let answered = Answered {
            source: Source::Live,
            acceleration_requested: options.accelerate,
            block,
            live_because,
        };
        Ok(self.render(name, resolver, records, outcomes, answered, trace))
    }

    /// The index's answer at `point`'s block, or why the index cannot give one. The rows are
    /// read after the block was (at most [`chains::POINT_TTL`] before), so every chain the
    /// answer read is read again afterwards: if one has committed since, the answer is read
    /// again at the new block (a few times at most), so an answer always holds for the block
    /// it names.
    async fn index_answer(
        &self,
        point: &mut chains::BlockPoint,
        name: &ResolvableName,
        records: &[Record],
        trace: &Trace,
    ) -> Result<Result<Forward, String>, ResolutionError> {
        let root = self.chains.root()?;
        let root_id = root.indexed.chain_id;
        for _ in 0..INDEX_READS {
            let (true, Some(block)) = (point.fresh, point.indexed.clone()) else {
                return Ok(Err(point.stale_reason(root_id)));
            };
            let bridges = self.bridges().await?;
            let answer = index::forward(
                &self.db,
                &root.indexed,
                &self.chains,
                &bridges,
                name,
                records,
                trace,
            )
            .await?;
            let (resolver, outcomes, bridged_to) = match answer {
                IndexAnswer::Known { resolver, outcomes, bridged_to } => {
                    (resolver, outcomes, bridged_to)
                }
                IndexAnswer::Live(why) => return Ok(Err(why)),
            };
            let mut read_at = vec![(root_id, block.hash.clone())];
            if let Some(chain) = bridged_to {
                let bridged = self.chains.point(&self.db, chain).await?;
                match (&bridged.indexed, bridged.fresh) {
                    (Some(at), true) => read_at.push((chain, at.hash.clone())),
                    _ => return Ok(Err(bridged.stale_reason(chain))),
                }
            }
            if let Some(moved) = self.moved(&read_at).await? {
                trace.step("index.moved", || "a chain committed while it was read; again".into());
                *point = moved;
                continue;
            }
            let entry = Entry {
                resolver: resolver.clone(),
                outcomes: outcomes.clone(),
                block: block.clone(),
                read_at,
            };
            self.answers.insert(name.as_str(), records, entry);
            let answered = Answered {
                source: Source::Index,
                acceleration_requested: true,
                block,
                live_because: None,
            };
            return Ok(Ok(self.render(name, resolver, records, outcomes, answered, trace)));
        }
        Ok(Err(format!("the index committed during each of {INDEX_READS} reads")))
    }

    /// Reads again where each chain of `read_at` stands: the root chain's new point if any
    /// of them is no longer at the block read.
    async fn moved(
        &self,
        read_at: &[(u64, String)],
    ) -> Result<Option<chains::BlockPoint>, ResolutionError> {
        let mut moved = false;
        let mut root_point = None;
        for (i, (chain, hash)) in read_at.iter().enumerate() {
            let now = self.chains.refresh(&self.db, *chain).await?;
            moved |= now.indexed.as_ref().is_none_or(|b| &b.hash != hash);
            if i == 0 {
                root_point = Some(now);
            }
        }
        Ok(if moved { root_point } else { None })
    }

    fn render(
        &self,
        name: &ResolvableName,
        resolver: Option<graphql::resolution::ResolverUsed>,
        records: &[Record],
        outcomes: Vec<Outcome>,
        answered: Answered,
        trace: &Trace,
    ) -> Forward {
        let resolution = ForwardResolution {
            name: name.as_str().to_owned(),
            resolver,
            records: assemble(records, outcomes.clone()),
            answered,
            trace: trace.steps(),
        };
        Forward { resolution, outcomes, cached: false }
    }

    /// Whether every chain `entry` read is still indexed, fresh, at the block it read.
    async fn still_current(&self, entry: &Entry) -> Result<bool, ResolutionError> {
        for (chain, hash) in &entry.read_at {
            let point = self.chains.point(&self.db, *chain).await?;
            if !point.fresh || point.indexed.as_ref().is_none_or(|b| &b.hash != hash) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The namespace's bridges.
    async fn bridges(
        &self,
    ) -> Result<std::sync::Arc<Vec<entities::namegraph_bridge::Model>>, ResolutionError> {
        use sea_orm::EntityTrait;
        if let Some(bridges) = self.bridges.get(&()) {
            return Ok(bridges);
        }
        let rows = entities::namegraph_bridge::Entity::find().all(&self.db).await.map_err(|err| {
            tracing::warn!(target: "ensemble::resolution", error = %err, "Reading the bridges failed");
            ResolutionError::new(error_code::INTERNAL, "the index could not be read")
        })?;
        let rows = std::sync::Arc::new(rows);
        self.bridges.insert((), rows.clone());
        Ok(rows)
    }

    /// The chains.
    pub(crate) fn chains(&self) -> &ResolutionChains {
        &self.chains
    }
}

impl Resolution for ResolutionService {
    fn forward<'a>(
        &'a self,
        name: &'a str,
        selection: &'a RecordsSelection,
        options: ResolveOptions,
    ) -> BoxFuture<'a, Result<ForwardResolution, ResolutionError>> {
        Box::pin(self.resolve(name, selection, options))
    }

    fn primary_names<'a>(
        &'a self,
        address: [u8; 20],
        coin_types: &'a [u64],
        options: ResolveOptions,
    ) -> BoxFuture<'a, Result<Vec<PrimaryName>, ResolutionError>> {
        Box::pin(reverse::primary_names(self, address.into(), coin_types, options))
    }
}
