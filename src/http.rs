//! The HTTP surface on actix-web. API processes serve `POST /graphql` (GraphiQL on
//! `GET /graphql`); every process serves `GET /metrics` (Prometheus text), `GET /health`
//! (process up), `GET /ready` (database reachable and, if configured, every chain of this
//! process past backfill), `GET /status` (per-chain status from the database) and the admin
//! API ([`crate::admin`]). It reads the database and talks to supervisors only through the
//! admin API.

use std::net::SocketAddr;

use actix_web::{App, HttpResponse, HttpServer, dev::Server, guard, web};
use async_graphql::http::GraphiQLSource;
use async_graphql_actix_web::{GraphQLRequest, GraphQLResponse, GraphQLSubscription};
use entities::chain_status;
use metrics_exporter_prometheus::PrometheusHandle;
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, QueryOrder};

use crate::admin::Admin;

/// Largest accepted request body: a GraphQL query is text, and anything bigger is abuse.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Phases in which a chain counts as synced for `/ready`.
pub const SYNCED_PHASES: [&str; 2] = ["following", "finished"];

/// What the routes share.
#[derive(Clone, Debug)]
pub struct HttpState {
    /// The database.
    pub db: DatabaseConnection,
    /// Chains `/ready` waits for (this process's chains, or the namespace's for `serve`).
    pub ready_chains: Vec<u64>,
    /// Whether `/ready` waits for them.
    pub ready_requires_sync: bool,
}

/// How long a subscription connection may stay silent (no ping) before it is closed.
pub const WS_KEEPALIVE: std::time::Duration = std::time::Duration::from_secs(60);

/// Longest a GraphQL request may run; its database work is dropped with it.
pub const QUERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

async fn graphql(schema: web::Data<graphql::EnsSchema>, req: GraphQLRequest) -> GraphQLResponse {
    match tokio::time::timeout(QUERY_TIMEOUT, schema.execute(req.into_inner())).await {
        Ok(response) => response.into(),
        Err(_) => {
            use async_graphql::ErrorExtensions;
            let error = async_graphql::Error::new(format!("query exceeded {QUERY_TIMEOUT:?}"))
                .extend_with(|_, e| e.set("code", "TIMEOUT"))
                .into_server_error(async_graphql::Pos::default());
            async_graphql::Response::from_errors(vec![error]).into()
        }
    }
}

async fn graphiql() -> HttpResponse {
    HttpResponse::Ok().content_type("text/html; charset=utf-8").body(
        GraphiQLSource::build().endpoint("/graphql").subscription_endpoint("/graphql").finish(),
    )
}

/// Subscriptions: `GET /graphql` with a websocket upgrade (`graphql-transport-ws` or the
/// older `graphql-ws` protocol). A silent client is dropped after [`WS_KEEPALIVE`].
async fn graphql_ws(
    schema: web::Data<graphql::EnsSchema>,
    req: actix_web::HttpRequest,
    payload: web::Payload,
) -> actix_web::Result<HttpResponse> {
    GraphQLSubscription::new(graphql::EnsSchema::clone(&schema))
        .keepalive_timeout(WS_KEEPALIVE)
        .start(&req, payload)
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

async fn status(state: web::Data<HttpState>) -> HttpResponse {
    match statuses(&state.db).await {
        Ok(rows) => HttpResponse::Ok().json(
            rows.into_iter()
                .map(|r| {
                    serde_json::json!({
                        "chainId": r.chain_id, "name": r.name, "phase": r.phase,
                        "headBlock": r.head_block, "indexedBlock": r.indexed_block,
                        "eventsPerSecond": r.events_per_second, "etaSeconds": r.eta_seconds,
                        "restarts": r.restarts, "error": r.error, "updatedAt": r.updated_at,
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
        let rows = match statuses(&state.db).await {
            Ok(rows) => rows,
            Err(_) => return unavailable("status unavailable".into()),
        };
        for chain in &state.ready_chains {
            let phase = rows.iter().find(|r| r.chain_id == *chain as i64).map(|r| r.phase.as_str());
            if !phase.is_some_and(|p| SYNCED_PHASES.contains(&p)) {
                return unavailable(format!("chain {chain} is {}", phase.unwrap_or("not started")));
            }
        }
    }
    HttpResponse::Ok().json(serde_json::json!({ "ready": true }))
}

/// Binds the server; the caller drives it and stops it through its handle. Without a
/// `schema` (an indexer-only process) there is no `/graphql`.
pub fn server(
    listen: SocketAddr,
    schema: Option<graphql::EnsSchema>,
    prometheus: PrometheusHandle,
    state: HttpState,
    admin: Admin,
) -> std::io::Result<(Server, SocketAddr)> {
    let schema = schema.map(web::Data::new);
    let prometheus = web::Data::new(prometheus);
    let state = web::Data::new(state);
    let admin = web::Data::new(admin);
    let server = HttpServer::new(move || {
        let mut app = App::new()
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
                .route("/graphql", web::post().to(graphql))
                .route(
                    "/graphql",
                    web::get().guard(guard::Header("upgrade", "websocket")).to(graphql_ws),
                )
                .route("/graphql", web::get().to(graphiql));
        }
        app
    })
    .workers(2)
    .disable_signals()
    .bind(listen)?;
    let addr = server.addrs().first().copied().unwrap_or(listen);
    Ok((server.run(), addr))
}
