//! `GET /graphql` with a websocket upgrade: GraphQL subscriptions over `graphql-transport-ws`
//! or the older `graphql-ws` protocol, with the limits of every other request.
//!
//! One task per connection moves messages between the socket and async-graphql's protocol
//! state machine. What a client can make it hold is bounded: a frame, and a message made of
//! continuation frames, to [`MAX_BODY_BYTES`]; messages queued for the protocol to
//! [`MAX_QUEUED_MESSAGES`] (a client that floods faster than they are handled is closed with
//! "policy violation"); silence to [`WS_KEEPALIVE`]. A client's close frame is answered with
//! a close frame, as the websocket protocol asks.

use actix_web::{HttpRequest, HttpResponse, http::header, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use async_graphql::http::{ALL_WEBSOCKET_PROTOCOLS, WebSocket, WebSocketProtocols, WsMessage};
use futures::StreamExt;
use graphql::error::code;

use super::{MAX_BODY_BYTES, WS_KEEPALIVE, request_limits::error_response};

/// Client messages waiting for the protocol at most.
pub const MAX_QUEUED_MESSAGES: usize = 16;

/// The first protocol the client offers that is served here.
fn negotiate(req: &HttpRequest) -> Option<WebSocketProtocols> {
    req.headers()
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|list| list.split(','))
        .find_map(|p| p.trim().parse::<WebSocketProtocols>().ok())
}

async fn close(session: Session, code: CloseCode, why: &str) {
    let _ = session.close(Some(CloseReason { code, description: Some(why.to_owned()) })).await;
}

/// The route.
pub async fn graphql_ws(
    schema: web::Data<graphql::EnsSchema>,
    req: HttpRequest,
    body: web::Payload,
) -> actix_web::Result<HttpResponse> {
    let Some(protocol) = negotiate(&req) else {
        return Ok(error_response(
            actix_web::http::StatusCode::BAD_REQUEST,
            code::BAD_REQUEST,
            "offer the graphql-transport-ws or graphql-ws subprotocol (Sec-WebSocket-Protocol)",
        ));
    };
    let (response, mut session, stream) =
        actix_ws::handle_with_protocols(&req, body, &ALL_WEBSOCKET_PROTOCOLS)?;
    let mut incoming = stream
        .max_frame_size(MAX_BODY_BYTES)
        .aggregate_continuations()
        .max_continuation_size(MAX_BODY_BYTES);
    let (mut to_protocol, from_client) =
        futures::channel::mpsc::channel::<Vec<u8>>(MAX_QUEUED_MESSAGES);
    let schema = graphql::EnsSchema::clone(&schema);
    actix_web::rt::spawn(async move {
        let mut outgoing =
            WebSocket::new(schema, from_client, protocol).keepalive_timeout(WS_KEEPALIVE);
        let silence = tokio::time::sleep(WS_KEEPALIVE);
        tokio::pin!(silence);
        loop {
            tokio::select! {
                message = incoming.recv() => {
                    silence.as_mut().reset(tokio::time::Instant::now() + WS_KEEPALIVE);
                    let text = match message {
                        Some(Ok(AggregatedMessage::Text(text))) => text.as_bytes().to_vec(),
                        Some(Ok(AggregatedMessage::Binary(bytes))) => bytes.to_vec(),
                        Some(Ok(AggregatedMessage::Ping(bytes))) => {
                            if session.pong(&bytes).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        Some(Ok(AggregatedMessage::Pong(_))) => continue,
                        Some(Ok(AggregatedMessage::Close(reason))) => {
                            let _ = session.close(reason).await;
                            return;
                        }
                        Some(Err(err)) => {
                            let reason = format!("{err}");
                            return close(session, CloseCode::Size, &reason).await;
                        }
                        None => return,
                    };
                    if to_protocol.try_send(text).is_err() {
                        return close(session, CloseCode::Policy, "too many messages in flight").await;
                    }
                }
                message = outgoing.next() => match message {
                    Some(WsMessage::Text(text)) => {
                        if session.text(text).await.is_err() {
                            return;
                        }
                    }
                    Some(WsMessage::Close(code, reason)) => {
                        return close(session, CloseCode::from(code), &reason).await;
                    }
                    None => return close(session, CloseCode::Normal, "done").await,
                },
                () = &mut silence => {
                    return close(session, CloseCode::Normal, "idle").await;
                }
            }
        }
    });
    Ok(response)
}
