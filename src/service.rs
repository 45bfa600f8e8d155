//! [`Service`]: the running indexer and API. Opens the database, starts one
//! [`ChainSupervisor`] per chain and the HTTP server, and stops them on request.

use std::net::SocketAddr;

use actix::prelude::*;
use sea_orm::DatabaseConnection;

use crate::{chain::ChainSupervisor, config::Config, error::Error, http, metrics, store};

/// A started service. Must be created inside an actix `System`.
#[derive(Debug)]
pub struct Service {
    /// Address the HTTP server listens on.
    pub http_addr: SocketAddr,
    /// The database.
    pub db: DatabaseConnection,
    supervisors: Vec<Addr<ChainSupervisor>>,
    server: actix_web::dev::ServerHandle,
}

impl Service {
    /// Starts everything `config` asks for.
    pub async fn start(config: &Config) -> Result<Self, Error> {
        let prometheus = metrics::install();
        let db = store::database::connect(&config.database.url).await?;
        let supervisors = config
            .chains
            .iter()
            .map(|chain| {
                ChainSupervisor::new(chain.clone(), config.indexer.clone(), db.clone()).start()
            })
            .collect();
        let schema = graphql::build_schema(db.clone());
        let (server, http_addr) = http::server(config.http.listen, schema, prometheus)
            .map_err(|source| Error::Bind { addr: config.http.listen, source })?;
        let handle = server.handle();
        actix_rt::spawn(server);
        tracing::info!(target: "ensemble", %http_addr, "GraphQL at http://{http_addr}/graphql");
        Ok(Self { http_addr, db, supervisors, server: handle })
    }

    /// Stops the HTTP server gracefully and the chains. Uncommitted work is not lost: it
    /// is re-applied from the checkpoint on the next start.
    pub async fn stop(self) {
        self.server.stop(true).await;
        drop(self.supervisors);
    }
}
