//! Cross-cutting request handling: trace spans with request ids, and request metrics by route.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{ConnectInfo, FromRequestParts, MatchedPath, Request};
use axum::http::header::{HeaderValue, VARY};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Span;

pub fn make_span(req: &Request) -> Span {
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %request_id)
}

/// Counts requests by route template (not raw path, so ids don't explode the label set) and status,
/// and marks every response as varying on HX-Request: the same URL answers a page or a fragment.
pub async fn record_metrics(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().to_string();
    let is_static = req.uri().path().starts_with("/static/");
    let mut response = next.run(req).await;
    let route = response
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| {
            if is_static {
                "/static".into()
            } else {
                "unmatched".into()
            }
        });
    let status = response.status().as_u16().to_string();
    metrics::counter!("http_requests_total", "method" => method.clone(), "route" => route.clone(), "status" => status)
        .increment(1);
    metrics::histogram!("http_request_duration_seconds", "method" => method, "route" => route)
        .record(start.elapsed().as_secs_f64());
    response
        .headers_mut()
        .append(VARY, HeaderValue::from_static("HX-Request"));
    response
}

/// Runs inside the router, where the matched route is known, and hands it to [`record_metrics`]
/// (which runs outside, so it also sees CSRF rejections, timeouts and panics).
pub async fn tag_route(req: Request, next: Next) -> Response {
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let mut response = next.run(req).await;
    if let Some(m) = matched {
        response.extensions_mut().insert(m);
    }
    response
}

/// The address the request came from, for the audit trail's "from where": the peer of the TCP
/// connection (behind a reverse proxy, the proxy's address). Empty when the server was not started
/// with connection info (a router driven directly in a test).
#[derive(Debug, Clone, Default)]
pub struct ClientIp(pub String);

impl ClientIp {
    pub fn of(parts: &Parts) -> ClientIp {
        ClientIp(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip().to_string())
                .unwrap_or_default(),
        )
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(ClientIp::of(parts))
    }
}
