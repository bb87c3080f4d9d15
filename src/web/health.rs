//! Operational endpoints: liveness, readiness (database, and Redis when configured), Prometheus metrics.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use super::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
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

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    // What waits for a person or a receiver, read at each scrape (cheap counts on indexed rows).
    use crate::domain::{exceptions, reconcile, webhooks, Scope};
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
}
