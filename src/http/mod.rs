//! The HTTP surface on actix-web. API processes serve `POST /graphql` (GraphiQL on
//! `GET /graphql`) and the ENS subgraph's API on `POST /subgraph` (GraphiQL on
//! `GET /subgraph`); every process serves `GET /metrics` (Prometheus text), `GET /health`
//! (process up), `GET /ready` (database reachable and, if configured, every chain of this
//! process past backfill), `GET /status` (per-chain status from the database) and the admin
//! API ([`crate::admin`]). It reads the database and talks to supervisors only through the
//! admin API.
//!
//! Every route runs behind [`request_limits`] (body size and time, per-client shares), and
//! the server holds at most the connections its descriptor budget allows ([`descriptors`]).

pub mod client_slots;
pub mod descriptors;
pub mod graphql_endpoint;
pub mod playground;
pub mod request_limits;
pub mod resolve_api;
pub mod subscriptions;

use std::{net::SocketAddr, time::Duration};

use actix_web::{App, HttpResponse, HttpServer, dev::Server, guard, middleware, web};
use entities::chain_status;
use metrics_exporter_prometheus::PrometheusHandle;
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, QueryOrder};

use self::{
    client_slots::ClientSlots,
    descriptors::{connection_budget, raise_fd_limit},
};
pub use self::{
    graphql_endpoint::QUERY_TIMEOUT,
    request_limits::{BODY_TIMEOUT, MAX_BODY_BYTES},
};
use crate::admin::Admin;

/// Phases in which a chain counts as synced for `/ready`.
pub const SYNCED_PHASES: [&str; 2] = ["following", "finished"];

/// A status row not refreshed for this long while its chain should be running means its
/// indexer is gone (killed, or its database writes fail): `/status` says so and `/ready`
/// does not count the chain as synced. Indexers refresh their rows every second.
pub const STATUS_STALE_AFTER: Duration = Duration::from_secs(15);

/// Phases whose rows an indexer refreshes every second.
const LIVE_PHASES: [&str; 5] = ["starting", "backfill", "following", "restarting", "paused"];

/// How long a client may take to send a request's head, and how long an idle keep-alive
/// connection is kept.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a subscription connection may stay silent (no ping) before it is closed.
pub const WS_KEEPALIVE: Duration = Duration::from_secs(60);

/// Workers of the HTTP server.
const WORKERS: usize = 2;

/// What the routes share.
#[derive(Clone, Debug)]
pub struct HttpState {
    /// The database.
    pub db: DatabaseConnection,
    /// Chains `/ready` waits for (this process's chains, or the namespace's for `serve`).
    pub ready_chains: Vec<crate::ChainId>,
    /// Whether `/ready` waits for them.
    pub ready_requires_sync: bool,
}

async fn metrics(handle: web::Data<PrometheusHandle>) -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain; version=0.0.4").body(handle.render())
}

async fn health() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

async fn statuses(db: &DatabaseConnection) -> Result<Vec<chain_status::Model>, sea_orm::DbErr> {
    chain_status::Entity::find().order_by_asc(chain_status::Column::ChainId).all(db).await
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Whether `row` should have been refreshed by now and was not.
fn stale(row: &chain_status::Model, now: i64) -> bool {
    LIVE_PHASES.contains(&row.phase.as_str())
        && now.saturating_sub(row.updated_at) > STATUS_STALE_AFTER.as_secs() as i64
}

async fn status(state: web::Data<HttpState>) -> HttpResponse {
    let now = now_secs();
    match statuses(&state.db).await {
        Ok(rows) => HttpResponse::Ok().json(
            rows.into_iter()
                .map(|r| {
                    serde_json::json!({
                        "chainId": r.chain_id, "name": r.name, "phase": r.phase,
                        "headBlock": r.head_block, "indexedBlock": r.indexed_block,
                        "appliedBlock": r.applied_block,
                        "eventsPerSecond": r.events_per_second, "etaSeconds": r.eta_seconds,
                        "restarts": r.restarts, "error": r.error, "updatedAt": r.updated_at,
                        "stale": stale(&r, now),
                    })
                })
                .collect::<Vec<_>>(),
        ),
        Err(err) => {
            tracing::warn!(target: "api::http", error = %err, "Status unavailable");
            HttpResponse::ServiceUnavailable()
                .json(serde_json::json!({ "error": "database unavailable" }))
        }
    }
}

async fn ready(state: web::Data<HttpState>) -> HttpResponse {
    let unavailable = |reason: String| {
        HttpResponse::ServiceUnavailable()
            .json(serde_json::json!({ "ready": false, "reason": reason }))
    };
    if state.db.execute_unprepared("SELECT 1").await.is_err() {
        return unavailable("database unreachable".into());
    }
    if state.ready_requires_sync {
        // The chains first: while one is behind, that is the reason, not the indexes that
        // wait for it.
        let rows = match statuses(&state.db).await {
            Ok(rows) => rows,
            Err(_) => return unavailable("status unavailable".into()),
        };
        let now = now_secs();
        for chain in &state.ready_chains {
            let Some(row) = rows.iter().find(|r| r.chain_id == chain.column()) else {
                return unavailable(format!("chain {chain} has not started"));
            };
            if stale(row, now) {
                return unavailable(format!(
                    "chain {chain}: no status for {}s; is its indexer running?",
                    now.saturating_sub(row.updated_at)
                ));
            }
            if !SYNCED_PHASES.contains(&row.phase.as_str()) {
                let why = row.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
                return unavailable(format!("chain {chain} is {}{why}", row.phase));
            }
        }
        match crate::store::query_indexes::pending(&state.db).await {
            Ok(pending) if pending.is_empty() => {}
            Ok(pending) => {
                return unavailable(format!(
                    "query indexes are being built: {} left",
                    pending.len()
                ));
            }
            Err(_) => return unavailable("index status unavailable".into()),
        }
    }
    HttpResponse::Ok().json(serde_json::json!({ "ready": true }))
}

/// Binds `listen` (before anything else starts, so a port in use is reported at once and
/// nothing has to be undone).
pub fn bind(listen: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(listen)?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Limits of the HTTP server.
#[derive(Clone, Copy, Debug)]
pub struct ServerLimits {
    /// Connections held at most, all clients together.
    pub max_connections: usize,
    /// Connections, and requests in flight, per client (0: no cap).
    pub max_connections_per_client: usize,
}

impl ServerLimits {
    /// Limits for this process: the descriptor limit raised, and a reserve kept for the
    /// indexer ([`connection_budget`]).
    pub fn for_process(max_connections_per_client: usize) -> Self {
        Self { max_connections: connection_budget(raise_fd_limit()), max_connections_per_client }
    }
}

/// The APIs an API process serves; an indexer-only process serves none of them.
#[derive(Default)]
pub struct Apis {
    /// `/graphql`.
    pub graphql: Option<graphql::EnsSchema>,
    /// `/subgraph`.
    pub subgraph: Option<graphql::subgraph::SubgraphSchema>,
    /// `/api/resolve`.
    pub resolution: Option<std::sync::Arc<crate::resolution::ResolutionService>>,
}

impl std::fmt::Debug for Apis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apis")
            .field("graphql", &self.graphql.is_some())
            .field("subgraph", &self.subgraph.is_some())
            .field("resolution", &self.resolution.is_some())
            .finish()
    }
}

/// Serves on `listener`; the caller drives the server and stops it through its handle.
pub fn server(
    listener: std::net::TcpListener,
    limits: ServerLimits,
    apis: Apis,
    prometheus: PrometheusHandle,
    state: HttpState,
    admin: Admin,
) -> std::io::Result<(Server, SocketAddr)> {
    let addr = listener.local_addr()?;
    let schema = apis.graphql.map(web::Data::new);
    let subgraph = apis.subgraph.map(web::Data::new);
    let resolution = apis.resolution.map(web::Data::new);
    let prometheus = web::Data::new(prometheus);
    let state = web::Data::new(state);
    let admin = web::Data::new(admin);
    let slots = ClientSlots::new(limits.max_connections_per_client);
    let on_connect_slots = slots.clone();
    let slots = web::Data::new(slots);
    let server = HttpServer::new(move || {
        let mut app = App::new()
            .wrap(middleware::from_fn(request_limits::limit_requests))
            .app_data(slots.clone())
            .app_data(prometheus.clone())
            .app_data(state.clone())
            .app_data(admin.clone())
            .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
            .app_data(web::JsonConfig::default().limit(MAX_BODY_BYTES))
            .route("/metrics", web::get().to(metrics))
            .route("/health", web::get().to(health))
            .route("/ready", web::get().to(ready))
            .route("/status", web::get().to(status))
            .configure(crate::admin::configure);
        if let Some(schema) = &schema {
            app = app
                .app_data(schema.clone())
                .route(
                    "/graphql",
                    web::post().to(graphql_endpoint::graphql_post::<graphql::EnsSchema>),
                )
                .route(
                    "/graphql",
                    web::get()
                        .guard(guard::Header("upgrade", "websocket"))
                        .to(subscriptions::graphql_ws),
                )
                .route("/graphql", web::get().to(playground::page))
                .route("/graphql/playground/{file}", web::get().to(playground::asset));
        }
        if let Some(subgraph) = &subgraph {
            app = app
                .app_data(subgraph.clone())
                .route(
                    "/subgraph",
                    web::post()
                        .to(graphql_endpoint::graphql_post::<graphql::subgraph::SubgraphSchema>),
                )
                .route("/subgraph", web::get().to(playground::page));
        }
        if let Some(resolution) = &resolution {
            app = app.app_data(resolution.clone()).configure(resolve_api::configure);
        }
        app
    })
    .on_connect(move |conn, data| {
        let peer = conn
            .downcast_ref::<actix_web::rt::net::TcpStream>()
            .and_then(|stream| stream.peer_addr().ok());
        if let Some(peer) = peer {
            data.insert(on_connect_slots.connect(peer.ip()));
        }
    })
    .workers(WORKERS)
    .max_connections(limits.max_connections.div_ceil(WORKERS))
    .backlog(1_024)
    .client_request_timeout(HEAD_TIMEOUT)
    .client_disconnect_timeout(Duration::from_secs(1))
    .keep_alive(HEAD_TIMEOUT)
    .disable_signals()
    .listen(listener)?;
    Ok((server.run(), addr))
}
