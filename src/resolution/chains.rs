//! [`ResolutionChains`]: what resolution knows of each configured chain (its registry, its
//! static resolvers, a client for live calls) and where each chain stands: the indexed block,
//! the head, and whether the index is fresh enough to answer ([`BlockPoint`]).

use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use alloy::primitives::B256;
use graphql::resolution::{BlockRef, ResolutionError, error_code};
use sea_orm::DatabaseConnection;

use super::{index::IndexedChain, live::LiveChain};
use crate::{
    config::{Config, NamegraphRole},
    ens::role::ContractRole,
    rpc::RpcClient,
};

/// Tries per live call: resolution answers a request and cannot wait out a long backoff.
const LIVE_CALL_ATTEMPTS: u32 = 2;
/// How long a chain's head, once read, is taken as current.
const HEAD_TTL: Duration = Duration::from_secs(1);
/// How long a chain's indexed block and head, once read, are taken as current: an index
/// answer is for a block committed at most this long before it is given (and says which).
pub const POINT_TTL: Duration = Duration::from_millis(250);

/// One chain.
#[derive(Clone, Debug)]
pub struct ResolutionChain {
    /// Its registry and static resolvers.
    pub indexed: IndexedChain,
    /// Its client for live calls, when it has an endpoint.
    pub live: Option<LiveChain>,
}

/// Where a chain stands.
#[derive(Clone, Debug)]
pub struct BlockPoint {
    /// The indexed block (the checkpoint), if any.
    pub indexed: Option<BlockRef>,
    /// The head, when known.
    pub head: Option<u64>,
    /// Whether the index may answer: indexed, and within the allowed lag of the head.
    pub fresh: bool,
}

impl BlockPoint {
    /// Why the index may not answer.
    pub fn stale_reason(&self, chain_id: u64) -> String {
        match (&self.indexed, self.head) {
            (None, _) => format!("chain {chain_id} is not indexed yet"),
            (Some(b), Some(head)) => format!(
                "the index of chain {chain_id} is at block {}, {} behind the head",
                b.number,
                head.saturating_sub(b.number)
            ),
            (Some(_), None) => format!("chain {chain_id}'s head is unknown"),
        }
    }
}

/// Every configured chain, and the namespace's root.
#[derive(Debug)]
pub struct ResolutionChains {
    chains: HashMap<u64, ResolutionChain>,
    /// Every configured chain, with a registry or not (a chain may hold only a reverse
    /// registrar).
    configured: Vec<u64>,
    root: Option<u64>,
    max_lag: u64,
    heads: moka::sync::Cache<u64, u64>,
    points: moka::sync::Cache<u64, BlockPoint>,
}

impl ResolutionChains {
    /// The chains of `config`: each with a registry is resolvable; the first root chain is
    /// where the walk of a name begins.
    pub fn from_config(config: &Config) -> Self {
        let mut chains = HashMap::new();
        let mut root = None;
        for chain in &config.chains {
            let Some(registry) = chain
                .contracts
                .iter()
                .find(|c| c.role == ContractRole::Registry)
                .map(|c| c.address)
            else {
                continue;
            };
            let id = chain.id.get();
            let live = chain.rpc_url.as_deref().filter(|u| !u.is_empty()).and_then(|url| {
                let timeout = chain.request_timeout().min(config.resolution.timeout());
                match RpcClient::with_timeout(url, chain.id, timeout) {
                    Ok(rpc) => Some(LiveChain {
                        chain_id: id,
                        rpc: rpc.with_max_attempts(LIVE_CALL_ATTEMPTS),
                        registry,
                        call_gas: config.resolution.call_gas,
                    }),
                    Err(err) => {
                        tracing::warn!(target: "ensemble::resolution", chain = id, error = %err, "No live resolution on this chain");
                        None
                    }
                }
            });
            let indexed = IndexedChain {
                chain_id: id,
                registry,
                static_resolvers: chain.static_resolvers.iter().copied().collect::<HashSet<_>>(),
            };
            if root.is_none() && chain.namegraph == NamegraphRole::Root {
                root = Some(id);
            }
            chains.insert(id, ResolutionChain { indexed, live });
        }
        let mut configured: Vec<u64> = config.chains.iter().map(|c| c.id.get()).collect();
        configured.sort_unstable();
        configured.dedup();
        Self {
            chains,
            configured,
            root,
            max_lag: config.resolution.max_index_lag_blocks,
            heads: moka::sync::Cache::builder().max_capacity(64).time_to_live(HEAD_TTL).build(),
            points: moka::sync::Cache::builder().max_capacity(64).time_to_live(POINT_TTL).build(),
        }
    }

    /// The root chain.
    pub fn root(&self) -> Result<&ResolutionChain, ResolutionError> {
        self.root.and_then(|id| self.chains.get(&id)).ok_or_else(|| {
            ResolutionError::new(
                error_code::CHAIN_UNAVAILABLE,
                "no root chain with a registry is configured",
            )
        })
    }

    /// The configured chain ids, ascending.
    pub fn ids(&self) -> Vec<u64> {
        self.configured.clone()
    }

    /// A chain's registry and static resolvers, for the index path.
    pub fn indexed(&self, chain_id: u64) -> Option<&IndexedChain> {
        self.chains.get(&chain_id).map(|c| &c.indexed)
    }

    /// Where `chain_id` stands, as read at most [`POINT_TTL`] ago: its checkpoint and its
    /// head as its indexer last reported it (the status row, written every second), in one
    /// query; the endpoint's head (read at most once a second) only when no indexer reports
    /// one.
    pub async fn point(
        &self,
        db: &DatabaseConnection,
        chain_id: u64,
    ) -> Result<BlockPoint, ResolutionError> {
        if let Some(point) = self.points.get(&chain_id) {
            return Ok(point);
        }
        let point = self.read_point(db, chain_id).await?;
        self.points.insert(chain_id, point.clone());
        Ok(point)
    }

    /// Where `chain_id` stands now, read from the database (and kept as the current point).
    pub async fn refresh(
        &self,
        db: &DatabaseConnection,
        chain_id: u64,
    ) -> Result<BlockPoint, ResolutionError> {
        let point = self.read_point(db, chain_id).await?;
        self.points.insert(chain_id, point.clone());
        Ok(point)
    }

    async fn read_point(
        &self,
        db: &DatabaseConnection,
        chain_id: u64,
    ) -> Result<BlockPoint, ResolutionError> {
        use sea_orm::{ConnectionTrait, Statement};
        let internal = |err: sea_orm::DbErr| {
            tracing::warn!(target: "ensemble::resolution", error = %err, "Reading a checkpoint failed");
            ResolutionError::new(error_code::INTERNAL, "the index could not be read")
        };
        let id = i64::try_from(chain_id).map_err(|_| {
            ResolutionError::new(
                error_code::CHAIN_UNAVAILABLE,
                format!("chain {chain_id} is out of range"),
            )
        })?;
        let sql = match db.get_database_backend() {
            sea_orm::DbBackend::Postgres => {
                "SELECT c.block_number, c.block_hash, s.head_block FROM checkpoints c \
                 LEFT JOIN chain_status s ON s.chain_id = c.chain_id WHERE c.chain_id = $1"
            }
            _ => {
                "SELECT c.block_number, c.block_hash, s.head_block FROM checkpoints c \
                 LEFT JOIN chain_status s ON s.chain_id = c.chain_id WHERE c.chain_id = ?"
            }
        };
        let row = db
            .query_one_raw(Statement::from_sql_and_values(
                db.get_database_backend(),
                sql,
                [id.into()],
            ))
            .await
            .map_err(internal)?;
        let (indexed, reported) = match row {
            Some(row) => {
                let number: i64 = row.try_get_by_index(0).map_err(internal)?;
                let hash: String = row.try_get_by_index(1).map_err(internal)?;
                let head: Option<i64> = row.try_get_by_index(2).map_err(internal)?;
                let block = BlockRef { chain_id, number: u64::try_from(number).unwrap_or(0), hash };
                (Some(block), head.and_then(|h| u64::try_from(h).ok()).filter(|h| *h > 0))
            }
            None => (None, None),
        };
        let head = match reported {
            Some(head) => Some(head),
            None => self.endpoint_head(chain_id).await,
        };
        let fresh = indexed
            .as_ref()
            .is_some_and(|b| head.is_none_or(|h| h.saturating_sub(b.number) <= self.max_lag));
        Ok(BlockPoint { indexed, head, fresh })
    }

    /// The chain's head from its endpoint, read at most once a second.
    async fn endpoint_head(&self, chain_id: u64) -> Option<u64> {
        if let Some(head) = self.heads.get(&chain_id) {
            return Some(head);
        }
        let live = self.chains.get(&chain_id).and_then(|c| c.live.as_ref())?;
        let head = live.rpc.block_number().await.ok()?;
        self.heads.insert(chain_id, head);
        Some(head)
    }

    /// The block a live answer on `chain` is given at: the indexed block while the index is
    /// fresh (so live and index answers are for one block), else the head.
    pub async fn live_block(
        &self,
        chain: &LiveChain,
        point: &BlockPoint,
    ) -> Result<BlockRef, ResolutionError> {
        if point.fresh
            && let Some(indexed) = &point.indexed
        {
            return Ok(indexed.clone());
        }
        let failed = |err: crate::rpc::RpcError| {
            ResolutionError::new(error_code::RPC_FAILED, format!("chain {}: {err}", chain.chain_id))
        };
        let number = chain.rpc.block_number().await.map_err(failed)?;
        let block = chain.rpc.block(number).await.map_err(failed)?;
        Ok(BlockRef { chain_id: chain.chain_id, number, hash: format!("{:#x}", block.hash) })
    }
}

/// The hash of `block`.
pub fn block_hash(block: &BlockRef) -> Result<B256, ResolutionError> {
    block.hash.parse().map_err(|_| {
        ResolutionError::new(
            error_code::INTERNAL,
            format!("block hash {:?} is not 32 bytes", block.hash),
        )
    })
}
