//! Operational endpoints: liveness, readiness (database, and Redis when configured), Prometheus metrics.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::web::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_public))
}

/// The routes of the metrics listener (`SELLABLE_METRICS_BIND`): `/metrics` alone.
pub fn metrics_routes() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics_own))
}

/// `/metrics` on the public listener: per-route traffic, sales volumes and open findings are the
/// operator's, not everyone's. Served there only with a token (`SELLABLE_METRICS_TOKEN`) and no
/// listener of its own; otherwise it does not exist (404), so nothing tells a stranger it is there.
async fn metrics_public(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let c = &state.config;
    match (&c.serve.metrics_bind, &c.serve.metrics_token) {
        (None, Some(token)) if bearer_is(&headers, token) => metrics(State(state)).await,
        (None, Some(_)) => unauthorized(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `/metrics` on its own listener: the token too when one is set.
async fn metrics_own(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match &state.config.serve.metrics_token {
        Some(token) if !bearer_is(&headers, token) => unauthorized(),
        _ => metrics(State(state)).await,
    }
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer realm=\"metrics\"")],
    )
        .into_response()
}

/// The request carries `Authorization: Bearer <token>`. Compared as digests, so the time taken
/// says nothing about how much of a guess was right.
fn bearer_is(headers: &HeaderMap, token: &str) -> bool {
    use sha2::{Digest, Sha256};
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    Sha256::digest(given.trim().as_bytes()) == Sha256::digest(token.as_bytes())
}

async fn healthz() -> impl IntoResponse {
    Json(json!({ "status": "ok" }))
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let database = state.db.ping().await;
    // Redis is a gate in front of SQL, not a dependency: without it the instance still serves
    // (from SQL alone, "degraded"), so it stays ready.
    let redis = match &state.db.gate {
        None => "not_configured",
        Some(g) if g.is_degraded() => "degraded",
        Some(g) if g.ping().await => "ok",
        Some(_) => "unreachable",
    };
    let gate = match &state.db.gate {
        None => "off",
        Some(g) if g.is_degraded() => "degraded",
        Some(_) => "on",
    };
    // A replica only takes reads that may lag; without it they go to the primary, so it never
    // makes the instance unready.
    let replica = state
        .db
        .replica
        .as_ref()
        .map_or("not_configured", |r| r.state().as_str());
    let status = if database {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(json!({
            "status": if database { if gate == "degraded" { "degraded" } else { "ready" } } else { "not_ready" },
            "database": if database { "ok" } else { "unreachable" },
            "redis": redis,
            "gate": gate,
            "replica": replica,
            // How far behind the replica was at the last probe (absent: none, or unreachable).
            "replica_lag_seconds": state.db.replica.as_ref().and_then(|r| r.lag_seconds()),
        })),
    )
}

async fn metrics(State(state): State<AppState>) -> Response {
    // What waits for a person or a receiver, read at each scrape (cheap counts on indexed rows).
    use crate::domain::{integration::webhooks, orders::exceptions, reconcile, Scope};
    let db = &state.db;
    if let Ok(n) = reconcile::open_count(db, Scope::All).await {
        metrics::gauge!("sellable_open_findings").set(n as f64);
    }
    if let Ok(n) = exceptions::count_open(db, Scope::All).await {
        metrics::gauge!("sellable_open_exceptions").set(n as f64);
    }
    if let Ok((n, oldest)) = webhooks::backlog(db).await {
        metrics::gauge!("sellable_undelivered_events").set(n as f64);
        let age = oldest.map_or(0, |t| (db.now_ms() - t).max(0));
        metrics::gauge!("sellable_oldest_undelivered_event_age_seconds").set(age as f64 / 1000.0);
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}
