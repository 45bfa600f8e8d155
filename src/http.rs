//! The HTTP surface on actix-web: `POST /graphql` (and GraphiQL on `GET /graphql`),
//! `GET /metrics` (Prometheus text), `GET /health`. It only reads the database; it never
//! messages the indexer.

use std::net::SocketAddr;

use actix_web::{App, HttpResponse, HttpServer, dev::Server, web};
use async_graphql::http::GraphiQLSource;
use async_graphql_actix_web::{GraphQLRequest, GraphQLResponse};
use metrics_exporter_prometheus::PrometheusHandle;

/// Largest accepted request body: a GraphQL query is text, and anything bigger is abuse.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

async fn graphql(schema: web::Data<graphql::EnsSchema>, req: GraphQLRequest) -> GraphQLResponse {
    schema.execute(req.into_inner()).await.into()
}

async fn graphiql() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(GraphiQLSource::build().endpoint("/graphql").finish())
}

async fn metrics(handle: web::Data<PrometheusHandle>) -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain; version=0.0.4").body(handle.render())
}

async fn health() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({ "status": "ok" }))
}

/// Binds the server; the caller drives it and stops it through its handle.
pub fn server(
    listen: SocketAddr,
    schema: graphql::EnsSchema,
    prometheus: PrometheusHandle,
) -> std::io::Result<(Server, SocketAddr)> {
    let schema = web::Data::new(schema);
    let prometheus = web::Data::new(prometheus);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(schema.clone())
            .app_data(prometheus.clone())
            .app_data(web::PayloadConfig::new(MAX_BODY_BYTES))
            .app_data(web::JsonConfig::default().limit(MAX_BODY_BYTES))
            .route("/graphql", web::post().to(graphql))
            .route("/graphql", web::get().to(graphiql))
            .route("/metrics", web::get().to(metrics))
            .route("/health", web::get().to(health))
    })
    .workers(2)
    .disable_signals()
    .bind(listen)?;
    let addr = server.addrs().first().copied().unwrap_or(listen);
    Ok((server.run(), addr))
}
