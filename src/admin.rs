//! The admin API: `GET /admin/chains`, `POST /admin/chains/{id}/{restart|pause|resume}`.
//!
//! Every request needs `Authorization: Bearer <ENSEMBLE_ADMIN_TOKEN>`; without a configured
//! token the routes answer 404 as if they did not exist. A missing token is 401, a wrong one
//! 403. Tokens are compared in constant time. Commands go to the chain's supervisor in this
//! process; the GraphQL side keeps serving throughout.

use std::collections::BTreeMap;

use actix::Addr;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::chain::{
    ChainSupervisor,
    control::{Command, Control},
    status::GetStatus,
};

/// The chains this process supervises, by id.
pub type Chains = BTreeMap<u64, Addr<ChainSupervisor>>;

/// Shared state of the admin routes.
#[derive(Clone)]
pub struct Admin {
    token: Option<String>,
    chains: Chains,
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin")
            .field("enabled", &self.token.is_some())
            .field("chains", &self.chains.keys())
            .finish()
    }
}

/// Compares without an early exit, so response time does not reveal how much matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn error(status: actix_web::http::StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(serde_json::json!({ "error": message }))
}

impl Admin {
    /// Admin routes over `chains`, enabled when `token` is set.
    pub fn new(token: Option<String>, chains: Chains) -> Self {
        Self { token, chains }
    }

    fn authorize(&self, req: &HttpRequest) -> Result<(), Denied> {
        let Some(token) = &self.token else { return Err(Denied::Disabled) };
        let given = req
            .headers()
            .get(actix_web::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            None => Err(Denied::Missing),
            Some(given) if constant_time_eq(given.as_bytes(), token.as_bytes()) => Ok(()),
            Some(_) => Err(Denied::Wrong),
        }
    }
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Denied {
    /// No token configured: the API does not exist.
    Disabled,
    /// No bearer token sent.
    Missing,
    /// A bearer token that is not the configured one.
    Wrong,
}

impl Denied {
    fn response(self) -> HttpResponse {
        use actix_web::http::StatusCode;
        match self {
            Self::Disabled => {
                error(StatusCode::NOT_FOUND, "admin API disabled: set ENSEMBLE_ADMIN_TOKEN")
            }
            Self::Missing => error(StatusCode::UNAUTHORIZED, "missing bearer token"),
            Self::Wrong => error(StatusCode::FORBIDDEN, "wrong bearer token"),
        }
    }
}

async fn list(admin: web::Data<Admin>, req: HttpRequest) -> HttpResponse {
    if let Err(denied) = admin.authorize(&req) {
        return denied.response();
    }
    let mut statuses = Vec::new();
    for addr in admin.chains.values() {
        if let Ok(status) = addr.send(GetStatus).await {
            statuses.push(status);
        }
    }
    HttpResponse::Ok().json(statuses)
}

async fn command(
    admin: web::Data<Admin>,
    req: HttpRequest,
    path: web::Path<(u64, String)>,
) -> HttpResponse {
    use actix_web::http::StatusCode;
    if let Err(denied) = admin.authorize(&req) {
        return denied.response();
    }
    let (chain, verb) = path.into_inner();
    let command = match verb.as_str() {
        "restart" => Command::Restart,
        "pause" => Command::Pause,
        "resume" => Command::Resume,
        _ => return error(StatusCode::NOT_FOUND, "unknown command: use restart, pause or resume"),
    };
    let Some(addr) = admin.chains.get(&chain) else {
        return error(StatusCode::NOT_FOUND, "this process does not index that chain");
    };
    match addr.send(Control(command)).await {
        Ok(status) => HttpResponse::Ok().json(status),
        Err(_) => error(StatusCode::SERVICE_UNAVAILABLE, "chain supervisor is not running"),
    }
}

/// Mounts the admin routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/admin/chains", web::get().to(list))
        .route("/admin/chains/{id}/{command}", web::post().to(command));
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn compares_tokens_exactly() {
        assert!(constant_time_eq(b"secret-token-123", b"secret-token-123"));
        assert!(!constant_time_eq(b"secret-token-123", b"secret-token-124"));
        assert!(!constant_time_eq(b"secret", b"secret-token-123"));
    }
}
