//! [`limit_requests`]: the middleware every route runs behind. It bounds what one request can
//! make the server hold, before any handler buffers anything:
//! - a declared body over [`MAX_BODY_BYTES`] is answered 413 at once; an undeclared (chunked)
//!   one is cut off as it passes the limit;
//! - a body must arrive within [`BODY_TIMEOUT`] of the request's head (408), so a client that
//!   declares 100 bytes and sends 3 cannot keep its connection and descriptor forever;
//! - a client over its share of connections or requests in flight ([`ClientSlots`]) is
//!   answered 429 and its connection closed. The probes (`/health`, `/ready`, `/metrics`,
//!   `/status`) read no body and cost little, so they are always answered.
//!
//! Websocket upgrades keep their stream: after the handshake the body *is* the connection,
//! bounded by the subscription's own keep-alive and frame size.

use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use actix_web::{
    Error, HttpMessage, HttpResponse,
    body::{EitherBody, MessageBody},
    dev::{Payload, ServiceRequest, ServiceResponse},
    error::PayloadError,
    http::{StatusCode, header},
    middleware::Next,
    web,
};
use futures::Stream;
use graphql::error::code;

use super::client_slots::{ClientSlots, Slot};

/// Largest accepted request body: a GraphQL query is text, and anything bigger is abuse.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Longest a request body may take to arrive after the request's head.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Routes answered whatever the client's share: cheap, and what operators and orchestrators
/// must always reach.
const PROBES: [&str; 4] = ["/health", "/ready", "/metrics", "/status"];

/// A JSON error in GraphQL's response shape, with a stable code.
pub fn error_response(status: StatusCode, code: &str, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(serde_json::json!({
        "errors": [{ "message": message, "extensions": { "code": code } }]
    }))
}

/// What a body stream can fail with, as the response the client gets.
pub fn payload_error_response(err: &PayloadError) -> HttpResponse {
    match err {
        PayloadError::Overflow => error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            code::PAYLOAD_TOO_LARGE,
            &format!("request bodies are limited to {MAX_BODY_BYTES} bytes"),
        ),
        PayloadError::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => error_response(
            StatusCode::REQUEST_TIMEOUT,
            code::REQUEST_TIMEOUT,
            &format!("the request body did not arrive within {BODY_TIMEOUT:?}"),
        ),
        other => error_response(
            StatusCode::BAD_REQUEST,
            code::BAD_REQUEST,
            &format!("the request body could not be read: {other}"),
        ),
    }
}

/// A body stream held to a size and a deadline.
struct Bounded {
    inner: Payload,
    seen: usize,
    deadline: Pin<Box<tokio::time::Sleep>>,
    done: bool,
}

impl Stream for Bounded {
    type Item = Result<web::Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            self.done = true;
            let timeout = std::io::Error::new(std::io::ErrorKind::TimedOut, "body timeout");
            return Poll::Ready(Some(Err(PayloadError::Io(timeout))));
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                self.seen += chunk.len();
                if self.seen > MAX_BODY_BYTES {
                    self.done = true;
                    return Poll::Ready(Some(Err(PayloadError::Overflow)));
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            other => other,
        }
    }
}

fn declared_length(req: &ServiceRequest) -> Option<u64> {
    req.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

fn refuse(req: ServiceRequest, status: StatusCode, code: &str, message: &str) -> ServiceResponse {
    let mut response = error_response(status, code, message);
    // The rest of the body is not read: the connection cannot carry another request.
    response.head_mut().set_connection_type(actix_web::http::ConnectionType::Close);
    req.into_response(response)
}

/// The middleware (see the module documentation).
pub async fn limit_requests(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, Error> {
    let probe = PROBES.contains(&req.path());
    let over_connections = req.conn_data::<Slot>().is_some_and(|slot| slot.over);
    if over_connections && !probe {
        return Ok(refuse(
            req,
            StatusCode::TOO_MANY_REQUESTS,
            code::TOO_MANY_REQUESTS,
            "too many connections from this client",
        )
        .map_into_right_body());
    }
    if declared_length(&req).is_some_and(|len| len > MAX_BODY_BYTES as u64) {
        return Ok(refuse(
            req,
            StatusCode::PAYLOAD_TOO_LARGE,
            code::PAYLOAD_TOO_LARGE,
            &format!("request bodies are limited to {MAX_BODY_BYTES} bytes"),
        )
        .map_into_right_body());
    }
    let _request_slot = match (probe, req.app_data::<web::Data<ClientSlots>>(), req.peer_addr()) {
        (false, Some(slots), Some(peer)) => {
            let slot = slots.request(peer.ip());
            if slot.over {
                return Ok(refuse(
                    req,
                    StatusCode::TOO_MANY_REQUESTS,
                    code::TOO_MANY_REQUESTS,
                    "too many requests in flight from this client",
                )
                .map_into_right_body());
            }
            Some(slot)
        }
        _ => None,
    };
    if !req.headers().contains_key(header::UPGRADE) {
        let inner = req.take_payload();
        let bounded = Bounded {
            inner,
            seen: 0,
            deadline: Box::pin(tokio::time::sleep(BODY_TIMEOUT)),
            done: false,
        };
        let stream: Pin<Box<dyn Stream<Item = Result<web::Bytes, PayloadError>>>> =
            Box::pin(bounded);
        req.set_payload(Payload::from(stream));
    }
    Ok(next.call(req).await?.map_into_left_body())
}
