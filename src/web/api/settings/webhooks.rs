//! Webhooks by API: register (the secret in the answer, once), list, pause, resume, delete,
//! rotate the secret, read the delivery log and redeliver.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::domain::integration::webhooks::{
    self, DeliveryStatus, PauseReason, Webhook, WebhookStatus,
};
use crate::domain::kernel::validate::{self, ms_to_rfc3339};
use crate::domain::{DomainError, FieldError};
use crate::web::api::{ApiCaller, ApiJson, ApiQuery};
use crate::web::kit::error::ApiError;
use crate::web::kit::ids::ApiId;
use crate::web::AppState;

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"url": "https://orders.example.com/hooks/sellable", "events": ["stock.*", "booking.cancelled"]}))]
pub struct CreateBody {
    /// Where events are POSTed: http or https, on a public address.
    url: String,
    /// Event types, and families ending in `.*` (`stock.*`); `*` for all.
    events: Vec<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct WebhookJson {
    id: i64,
    url: String,
    events: Vec<String>,
    /// `ACTIVE` or `PAUSED`.
    status: WebhookStatus,
    /// Why it is paused: `manual`, or `failing` (a day of failed deliveries).
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_reason: Option<PauseReason>,
    /// Since when every delivery failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    failing_since: Option<String>,
    /// Until when the secret before the last rotation still signs.
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_secret_until: Option<String>,
    created_at: String,
}

fn webhook_json(w: &Webhook, now: i64) -> WebhookJson {
    WebhookJson {
        id: w.id,
        url: w.url.clone(),
        events: w.events.clone(),
        status: w.status,
        paused_reason: w
            .paused_reason
            .filter(|_| w.status == WebhookStatus::Paused),
        failing_since: w.failing_since.map(ms_to_rfc3339),
        previous_secret_until: w.old_secret_until.filter(|&t| t > now).map(ms_to_rfc3339),
        created_at: ms_to_rfc3339(w.created_at),
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedJson {
    #[serde(flatten)]
    webhook: WebhookJson,
    /// The signing secret: shown in this answer only.
    secret: String,
}

/// Registers an endpoint for the merchant's events; it is sent those that commit from now on,
/// each signed with the secret given here once (`Sellable-Signature: t=…,v1=…`).
#[utoipa::path(post, path = "/api/v1/webhooks", tag = "webhooks", operation_id = "create_webhook",
    request_body = CreateBody,
    responses(
        (status = 201, description = "The webhook, with its secret (shown once)", body = CreatedJson),
        (status = 422, description = "`required`, `invalid_url`, `private_address`, `unresolvable`, `invalid_choice`, `webhook_exists`: a field is refused", body = crate::web::api::doc::ErrorBody),
        (status = 409, description = "`too_many_webhooks`: the merchant has the most endpoints allowed (`SELLABLE_MAX_WEBHOOKS_PER_MERCHANT`; `limit`)", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<CreateBody>,
) -> Result<impl IntoResponse, ApiError> {
    let (hook, secret) = webhooks::create(
        &state.db,
        &state.codes,
        &caller.actor(),
        caller.merchant_id,
        &body.url,
        &body.events,
        webhooks::Rules {
            allow_private: state.config.serve.webhook_allow_private,
            max_per_merchant: state.config.serve.max_webhooks_per_merchant,
        },
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        [(axum::http::header::CACHE_CONTROL, "no-store")],
        Json(CreatedJson {
            webhook: webhook_json(&hook, state.db.now_ms()),
            secret,
        }),
    ))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct WebhooksJson {
    webhooks: Vec<WebhookJson>,
}

/// The merchant's webhooks, newest first.
#[utoipa::path(get, path = "/api/v1/webhooks", tag = "webhooks", operation_id = "list_webhooks",
    responses((status = 200, description = "The webhooks", body = WebhooksJson)))]
pub async fn list(
    State(state): State<AppState>,
    caller: ApiCaller,
) -> Result<impl IntoResponse, ApiError> {
    let hooks = webhooks::list(&state.db, caller.merchant_id).await?;
    let now = state.db.now_ms();
    Ok(Json(WebhooksJson {
        webhooks: hooks.iter().map(|w| webhook_json(w, now)).collect(),
    }))
}

/// One webhook.
#[utoipa::path(get, path = "/api/v1/webhooks/{id}", tag = "webhooks", operation_id = "get_webhook",
    params(("id" = i64, Path, description = "The webhook's id")),
    responses((status = 200, description = "The webhook", body = WebhookJson)))]
pub async fn get(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let hook = webhooks::get(&state.db, caller.merchant_id, id).await?;
    Ok(Json(webhook_json(&hook, state.db.now_ms())))
}

/// Deletes a webhook: nothing more is sent to it.
#[utoipa::path(delete, path = "/api/v1/webhooks/{id}", tag = "webhooks", operation_id = "delete_webhook",
    params(("id" = i64, Path, description = "The webhook's id")),
    responses((status = 204, description = "Deleted")))]
pub async fn delete(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    webhooks::delete(&state.db, &caller.actor(), caller.merchant_id, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Stops sending; the events keep queueing and are sent on resume.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/pause", tag = "webhooks", operation_id = "pause_webhook",
    params(("id" = i64, Path, description = "The webhook's id")),
    responses((status = 200, description = "The webhook, paused", body = WebhookJson)))]
pub async fn pause(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let hook = webhooks::pause(&state.db, &caller.actor(), caller.merchant_id, id).await?;
    Ok(Json(webhook_json(&hook, state.db.now_ms())))
}

/// Sends again, starting with what queued while paused (a webhook paused for failing too).
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/resume", tag = "webhooks", operation_id = "resume_webhook",
    params(("id" = i64, Path, description = "The webhook's id")),
    responses((status = 200, description = "The webhook, active", body = WebhookJson)))]
pub async fn resume(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let hook = webhooks::resume(&state.db, &caller.actor(), caller.merchant_id, id).await?;
    Ok(Json(webhook_json(&hook, state.db.now_ms())))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
pub struct RotateBody {
    /// Hours the old secret keeps signing beside the new one, 0 to 168 (24 when left out).
    overlap_hours: Option<i64>,
}

/// Gives the webhook a new secret (in this answer only); the old one keeps signing beside it
/// (a second `v1=`) for the overlap.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/rotate", tag = "webhooks", operation_id = "rotate_webhook_secret",
    params(("id" = i64, Path, description = "The webhook's id")),
    request_body = RotateBody,
    responses(
        (status = 200, description = "The webhook, with its new secret (shown once)", body = CreatedJson),
        (status = 422, description = "`invalid_number`: the overlap is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn rotate(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<RotateBody>,
) -> Result<impl IntoResponse, ApiError> {
    let (hook, secret) = webhooks::rotate(
        &state.db,
        &state.codes,
        &caller.actor(),
        caller.merchant_id,
        id,
        body.overlap_hours,
    )
    .await?;
    Ok((
        [(axum::http::header::CACHE_CONTROL, "no-store")],
        Json(CreatedJson {
            webhook: webhook_json(&hook, state.db.now_ms()),
            secret,
        }),
    ))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// `PENDING`, `DELIVERED` or `FAILED`.
    status: Option<String>,
    /// Deliveries older than this id (the `next` of the previous answer).
    before: Option<String>,
    /// At most 200 (50 when left out).
    limit: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AttemptJson {
    at: String,
    /// The receiver's HTTP status, when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    status_code: Option<i64>,
    latency_ms: i64,
    /// Why it failed: `status` (not 2xx), `redirect` (never followed), `timeout`, `connect`,
    /// `unresolvable`, `private_address`, `request`, `event_missing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The first 512 bytes of the answer (or of the error).
    response: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct DeliveryJson {
    id: i64,
    event_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    event_type: Option<String>,
    /// `PENDING`, `DELIVERED`, or `FAILED` (given up after three days of retries).
    status: DeliveryStatus,
    attempts: i64,
    /// When the next attempt is due (pending deliveries).
    #[serde(skip_serializing_if = "Option::is_none")]
    next_attempt_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivered_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_attempt: Option<AttemptJson>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct DeliveriesJson {
    deliveries: Vec<DeliveryJson>,
    /// `before=` for the next (older) page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

fn delivery_json(d: webhooks::Delivery) -> DeliveryJson {
    let state = d.state();
    DeliveryJson {
        id: d.id,
        event_id: d.event_id,
        event_type: d.event_type,
        status: state,
        attempts: d.attempts,
        next_attempt_at: (state == DeliveryStatus::Pending)
            .then(|| ms_to_rfc3339(d.next_attempt_at)),
        delivered_at: d.delivered_at.map(ms_to_rfc3339),
        last_attempt: d.last_at.map(|at| AttemptJson {
            at: ms_to_rfc3339(at),
            status_code: d.last_status_code,
            latency_ms: d.last_latency_ms.unwrap_or(0),
            error: d.last_error,
            response: d.last_head.unwrap_or_default(),
        }),
    }
}

const LIMIT: i64 = 50;
const LIMIT_MAX: i64 = 200;

/// A webhook's delivery log, newest first: each event sent, its state, and its last attempt
/// (time, status, latency, the answer's first bytes).
#[utoipa::path(get, path = "/api/v1/webhooks/{id}/deliveries", tag = "webhooks", operation_id = "list_webhook_deliveries",
    params(("id" = i64, Path, description = "The webhook's id"), DeliveriesQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = DeliveriesJson),
        (status = 422, description = "`invalid_number`, `invalid_choice`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn deliveries(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiQuery(q): ApiQuery<DeliveriesQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = validate::Errors::default();
    let before = errs
        .take(validate::query_int("before", q.before.as_deref(), 1))
        .flatten()
        .unwrap_or(0);
    let limit = errs
        .take(validate::query_int("limit", q.limit.as_deref(), 1))
        .flatten()
        .unwrap_or(LIMIT)
        .min(LIMIT_MAX);
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => match DeliveryStatus::parse(&s.to_ascii_uppercase()) {
            Some(st) => Some(st),
            None => {
                errs.push(FieldError::new(
                    "status",
                    "invalid_choice",
                    crate::messages::bad_choice("status", DeliveryStatus::NAMES),
                ));
                None
            }
        },
    };
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let list =
        webhooks::deliveries(&state.db, caller.merchant_id, id, status, before, limit).await?;
    let next = (list.len() as i64 == limit)
        .then(|| list.last().map(|d| d.id.to_string()))
        .flatten();
    Ok(Json(DeliveriesJson {
        deliveries: list.into_iter().map(delivery_json).collect(),
        next,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct RedeliverJson {
    /// `queued`: it is sent at the next pass (when the webhook is active).
    status: String,
}

/// Sends a delivery again, now, whatever its state (with three more days of retries).
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", tag = "webhooks",
    operation_id = "redeliver_webhook_delivery",
    params(("id" = i64, Path, description = "The webhook's id"),
           ("delivery_id" = i64, Path, description = "The delivery's id")),
    responses((status = 202, description = "Queued", body = RedeliverJson)))]
pub async fn redeliver(
    State(state): State<AppState>,
    caller: ApiCaller,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
) -> Result<impl IntoResponse, ApiError> {
    let Path((id, delivery)) = path?;
    let (Ok(id), Ok(delivery)) = (id.parse::<i64>(), delivery.parse::<i64>()) else {
        return Err(DomainError::NotFound("delivery").into());
    };
    webhooks::redeliver(&state.db, &caller.actor(), caller.merchant_id, id, delivery).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(RedeliverJson {
            status: "queued".into(),
        }),
    ))
}
