//! `POST /graphql`: the request body read within its limits, parsed into one GraphQL request
//! with errors a client can act on, and executed under [`QUERY_TIMEOUT`].
//!
//! The body is JSON (`{"query", "variables", "operationName", "extensions"}`) whatever the
//! declared content type, except multipart (file uploads, which this API has no use for).
//! Batches (a JSON array) are refused: each would multiply the work one request may cause.

use actix_web::{HttpRequest, HttpResponse, http::StatusCode, http::header, web};
use futures::StreamExt;
use graphql::error::code;
use serde_json::Value;

use super::request_limits::{error_response, payload_error_response};

/// Longest a GraphQL request may run; its database work is dropped with it.
pub const QUERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The GraphQL request in `body`, or what is wrong with it (answered 400 `BAD_REQUEST`).
pub fn parse_request(body: &[u8]) -> Result<async_graphql::Request, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let Value::Object(mut fields) = value else {
        return Err(if value.is_array() {
            "batched requests are not supported; send one request per POST".to_owned()
        } else {
            "the body must be a JSON object with a \"query\" string".to_owned()
        });
    };
    let query = match fields.remove("query") {
        Some(Value::String(query)) => query,
        Some(_) => return Err("\"query\" must be a string".to_owned()),
        None => return Err("the body has no \"query\"".to_owned()),
    };
    let mut request = async_graphql::Request::new(query);
    match fields.remove("variables") {
        None | Some(Value::Null) => {}
        Some(variables @ Value::Object(_)) => {
            request = request.variables(async_graphql::Variables::from_json(variables));
        }
        Some(_) => return Err("\"variables\" must be an object".to_owned()),
    }
    match fields.remove("operationName") {
        None | Some(Value::Null) => {}
        Some(Value::String(name)) => request = request.operation_name(name),
        Some(_) => return Err("\"operationName\" must be a string".to_owned()),
    }
    match fields.remove("extensions") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(_) => return Err("\"extensions\" must be an object".to_owned()),
    }
    Ok(request)
}

/// Reads the body; the request limits have bounded its size and time already.
async fn read_body(
    mut payload: web::Payload,
) -> Result<web::BytesMut, actix_web::error::PayloadError> {
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        body.extend_from_slice(&chunk?);
    }
    Ok(body)
}

/// Executes `request` under [`QUERY_TIMEOUT`].
pub async fn execute<S: async_graphql::Executor>(
    schema: &S,
    request: async_graphql::Request,
) -> async_graphql::Response {
    match tokio::time::timeout(QUERY_TIMEOUT, schema.execute(request)).await {
        Ok(response) => response,
        Err(_) => async_graphql::Response::from_errors(vec![graphql::error::server_error(
            code::TIMEOUT,
            format!("query exceeded {QUERY_TIMEOUT:?}"),
        )]),
    }
}

/// The route, for either schema (`/graphql`, `/subgraph`).
pub async fn graphql_post<S: async_graphql::Executor>(
    schema: web::Data<S>,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("multipart/"));
    if multipart {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::UNSUPPORTED_MEDIA_TYPE,
            "send the request as application/json",
        );
    }
    let body = match read_body(payload).await {
        Ok(body) => body,
        Err(err) => return payload_error_response(&err),
    };
    let request = match parse_request(&body) {
        Ok(request) => request,
        Err(reason) => {
            return error_response(StatusCode::BAD_REQUEST, code::BAD_REQUEST, &reason);
        }
    };
    let response = execute(schema.get_ref(), request).await;
    match serde_json::to_vec(&response) {
        Ok(json) => HttpResponse::Ok().content_type("application/json").body(json),
        Err(err) => {
            tracing::error!(target: "api::http", error = %err, "Response not serializable");
            error_response(StatusCode::INTERNAL_SERVER_ERROR, code::INTERNAL, "internal error")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_request;

    fn refused(body: &str) -> String {
        let reason = parse_request(body.as_bytes()).expect_err(body);
        assert!(!reason.is_empty(), "{body}");
        reason
    }

    #[test]
    fn malformed_bodies_are_refused_with_reasons() {
        for body in [
            "",
            "{",
            "1",
            "[]",
            r#"[{"query":"{root{id}}"}]"#,
            r#"{"query":1}"#,
            r#"{"variables":{}}"#,
            r#"{"query":"{root{id}}","variables":[1]}"#,
            r#"{"query":"{root{id}}","operationName":5}"#,
        ] {
            refused(body);
        }
    }

    #[test]
    fn a_request_carries_its_parts() {
        let r = parse_request(br#"{"query":"query Q($a: Int) { root { id } }","variables":{"a":1},"operationName":"Q"}"#)
            .unwrap();
        assert_eq!(r.operation_name.as_deref(), Some("Q"));
        assert_eq!(r.variables.len(), 1);
    }
}
