//! [`Service`]: the running process. Depending on its [`Mode`] it indexes chains (one
//! [`ChainSupervisor`] each), serves the GraphQL API, or both; it always serves metrics,
//! health, readiness, status and the admin API. [`Service::shutdown`] stops it gracefully.

use std::{net::SocketAddr, time::Duration};

use actix::prelude::*;
use sea_orm::DatabaseConnection;

use crate::{
    admin::{Admin, Chains},
    chain::{
        ChainSupervisor,
        control::{Command, Control, Halt},
    },
    config::Config,
    error::Error,
    http::{self, HttpState},
    metrics, store,
};

/// What a process does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Index the configured chains and serve GraphQL (`ensemble run`).
    Run,
    /// Serve GraphQL only, reading what indexers write (`ensemble serve`): never writes, never
    /// migrates.
    Serve,
    /// Index only, no GraphQL (`ensemble index`).
    Index,
}

/// On a fresh database (no chain has a checkpoint yet) with deferral on, sets the query
/// indexes aside for the first backfill.
async fn defer_query_indexes(db: &DatabaseConnection, enabled: bool) -> Result<(), Error> {
    use sea_orm::EntityTrait;
    let fresh = entities::checkpoint::Entity::find()
        .one(db)
        .await
        .map_err(store::StoreError::db("read checkpoints"))?
        .is_none();
    if enabled && fresh {
        let deferred = store::query_indexes::defer(db).await?;
        tracing::info!(target: "ensemble", deferred, "Fresh database: query indexes are built once the chains catch up");
    }
    Ok(())
}

/// How often the index builder asks the chains whether they have caught up: the build, and
/// with it `/ready`, starts at most this long after the last one has. A question is a message
/// to each chain's supervisor, answered from counters in memory.
const INDEX_BUILD_POLL: Duration = Duration::from_millis(100);
/// How long the index builder waits after a failed build before it tries again.
const INDEX_BUILD_RETRY: Duration = Duration::from_secs(30);

/// Builds the deferred query indexes once every chain of this process has caught up.
async fn build_query_indexes_when_synced(db: DatabaseConnection, chains: Chains) {
    use crate::{chain::status::GetStatus, http::SYNCED_PHASES};
    loop {
        tokio::time::sleep(INDEX_BUILD_POLL).await;
        let mut synced = true;
        for chain in chains.values() {
            match chain.send(GetStatus).await {
                Ok(status) if SYNCED_PHASES.contains(&status.phase) => {}
                Ok(_) => synced = false,
                // The supervisor is gone: the process is stopping.
                Err(_) => return,
            }
        }
        if !synced {
            continue;
        }
        let started = std::time::Instant::now();
        match store::query_indexes::build(&db).await {
            Ok(built) => {
                tracing::info!(target: "ensemble", built, secs = started.elapsed().as_secs_f64(), "Query indexes built");
                return;
            }
            Err(err) => {
                tracing::warn!(target: "ensemble", error = %err, "Building query indexes failed; retrying");
                tokio::time::sleep(INDEX_BUILD_RETRY).await;
            }
        }
    }
}

/// A started service. Must be created inside an actix `System`.
#[derive(Debug)]
pub struct Service {
    /// Address the HTTP server listens on.
    pub http_addr: SocketAddr,
    /// The database.
    pub db: DatabaseConnection,
    chains: Chains,
    server: actix_web::dev::ServerHandle,
}

impl Service {
    /// Starts everything `config` asks for, indexing and serving (`ensemble run`).
    pub async fn start(config: &Config) -> Result<Self, Error> {
        Self::start_mode(config, Mode::Run).await
    }

    /// Starts the parts of `mode`.
    pub async fn start_mode(config: &Config, mode: Mode) -> Result<Self, Error> {
        // The port first: if it is taken, nothing else has started that would need undoing.
        let listener = http::bind(config.http.listen)
            .map_err(|source| Error::Bind { addr: config.http.listen, source })?;
        let prometheus = metrics::install();
        let db = match mode {
            Mode::Serve => store::database::connect_without_migrating(&config.database.url).await?,
            Mode::Run | Mode::Index => store::database::connect(&config.database.url).await?,
        };
        if mode != Mode::Serve && !config.chains.is_empty() {
            defer_query_indexes(&db, config.indexer.defer_query_indexes).await?;
            let bridges: Vec<_> =
                config.bridges.iter().map(crate::ens::namespace::bridge_row).collect();
            let registrars = crate::ens::namespace::reverse_registrar_rows(&config.chains);
            store::namespace::record(&db, &bridges, &registrars).await?;
        }
        let without_rpc = config.chains_without_rpc();
        for (_, reason) in &without_rpc {
            tracing::error!(target: "ensemble", "Not indexed: {reason}");
        }
        let chains: Chains = if mode == Mode::Serve {
            Chains::new()
        } else {
            config
                .chains
                .iter()
                .map(|chain| {
                    let supervisor =
                        ChainSupervisor::new(chain.clone(), config.indexer.clone(), db.clone())
                            .with_bridges(config.bridges.clone());
                    (chain.id.get(), supervisor.start())
                })
                .collect()
        };
        if mode != Mode::Serve && !store::query_indexes::pending(&db).await?.is_empty() {
            actix_rt::spawn(build_query_indexes_when_synced(db.clone(), chains.clone()));
        }
        let resolution = match mode {
            Mode::Index => None,
            Mode::Run | Mode::Serve => Some(std::sync::Arc::new(
                crate::resolution::ResolutionService::new(db.clone(), config)
                    .map_err(Error::Resolution)?,
            )),
        };
        let schema = resolution.clone().map(|resolution| {
            let port: graphql::types::resolve::SharedResolution = resolution;
            graphql::build_schema_with_resolution(db.clone(), port)
        });
        let apis = http::Apis {
            subgraph: schema.as_ref().and_then(|_| subgraph_schema(&db, config)),
            graphql: schema,
            resolution,
        };
        let state = HttpState {
            db: db.clone(),
            // An indexing process does not wait for a chain it cannot index (its status says
            // why); an API process needs no RPC endpoint and waits for every chain.
            ready_chains: config
                .chains
                .iter()
                .map(|c| c.id)
                .filter(|id| {
                    mode == Mode::Serve || !without_rpc.iter().any(|(missing, _)| missing == id)
                })
                .collect(),
            ready_requires_sync: config.http.ready_requires_sync,
        };
        let admin = Admin::new(config.http.admin_token.clone(), chains.clone());
        let limits = http::ServerLimits::for_process(config.http.max_connections_per_client);
        let (server, http_addr) = http::server(listener, limits, apis, prometheus, state, admin)
            .map_err(|source| Error::Bind { addr: config.http.listen, source })?;
        let handle = server.handle();
        actix_rt::spawn(server);
        tracing::info!(target: "ensemble", %http_addr, ?mode, "Listening on http://{http_addr}");
        Ok(Self { http_addr, db, chains, server: handle })
    }

    /// The supervisors of this process, by chain id.
    pub fn chains(&self) -> &Chains {
        &self.chains
    }

    /// Graceful stop: every chain stops fetching, applies and commits what is in flight, then
    /// the HTTP server finishes its requests. Gives up waiting after `timeout`; whatever was
    /// not committed then is re-applied from the checkpoint on the next start.
    pub async fn shutdown(self, timeout: Duration) {
        let drains = futures::future::join_all(
            self.chains.values().map(|addr| addr.send(Control(Command::Shutdown))),
        );
        if tokio::time::timeout(timeout, drains).await.is_err() {
            tracing::warn!(target: "ensemble", ?timeout, "Shutdown deadline passed; exiting with work uncommitted (it resumes from the checkpoint)");
        }
        // Drained chains are idle; one still draining is ended here (within the same
        // deadline), so nothing of this service writes once it has returned.
        let _ = tokio::time::timeout(timeout, self.halt_chains()).await;
        let _ = tokio::time::timeout(timeout, self.server.stop(true)).await;
        store::database::truncate_wal(&self.db).await;
    }

    /// Stops at once without committing in-flight work (tests and fatal exits): once it
    /// returns, no chain of this service reads or writes any more.
    pub async fn stop(self) {
        self.halt_chains().await;
        self.server.stop(true).await;
    }

    async fn halt_chains(&self) {
        futures::future::join_all(self.chains.values().map(|addr| addr.send(Halt))).await;
    }
}

/// What the subgraph API shows: the registry of the namegraph's root chain, if any.
pub fn subgraph_scope(config: &Config) -> Option<graphql::subgraph::SubgraphScope> {
    let chain = config.chains.iter().find(|c| c.namegraph == crate::config::NamegraphRole::Root)?;
    let registry =
        chain.contracts.iter().find(|c| c.role == crate::ens::role::ContractRole::Registry)?;
    let old_registry = chain
        .contracts
        .iter()
        .find(|c| c.role == crate::ens::role::ContractRole::RegistryOld)
        .map(|c| c.address.0.0);
    Some(graphql::subgraph::SubgraphScope {
        chain_id: chain.id.get(),
        registry: registry.address.0.0,
        old_registry,
        registrar_name: chain.managed_name.clone(),
        common_set_rows: graphql::subgraph::schema::COMMON_SET_ROWS,
    })
}

/// The subgraph API over the registry of the namegraph's root chain, if one is configured.
fn subgraph_schema(
    db: &sea_orm::DatabaseConnection,
    config: &Config,
) -> Option<graphql::subgraph::SubgraphSchema> {
    let scope = subgraph_scope(config)?;
    match graphql::subgraph::build_subgraph_schema(db.clone(), scope) {
        Ok(schema) => Some(schema),
        Err(err) => {
            tracing::error!(target: "ensemble", error = %err, "The subgraph API could not be built");
            None
        }
    }
}
