//! Operational endpoints: liveness, readiness (database, and Redis when configured), Prometheus metrics.

use std::time::Duration;

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

pub async fn redis_ok(client: &redis::Client) -> bool {
    let ping = async {
        let mut con = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut con).await
    };
    matches!(
        tokio::time::timeout(Duration::from_millis(500), ping).await,
        Ok(Ok(_))
    )
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let database = state.db.ping().await;
    let redis = match &state.redis {
        Some(client) => Some(redis_ok(client).await),
        None => None,
    };
    let ready = database && redis.unwrap_or(true);
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let redis_label = match redis {
        None => "not_configured",
        Some(true) => "ok",
        Some(false) => "unreachable",
    };
    (
        status,
        Json(json!({
            "status": if ready { "ready" } else { "not_ready" },
            "database": if database { "ok" } else { "unreachable" },
            "redis": redis_label,
        })),
    )
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
