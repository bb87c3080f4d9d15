//! Code batches for the merchant's systems: upload (multipart), progress and errors, and counts
//! by status. The API never returns a code's plaintext except to the order that bought it.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::{ApiCaller, ApiJson, ApiMultipart, ApiPath, ApiQuery};
use crate::domain::codes::{self, Batch};
use crate::domain::{aftersales, tenants};
use crate::web::error::ApiError;
use crate::web::ids::ApiId;
use crate::web::{uploads, AppState};

fn batch_json(b: &Batch) -> serde_json::Value {
    json!({
        "batch_id": b.id,
        "sku": b.sku_code,
        "name": b.name,
        "source": b.source,
        "mode": b.mode,
        "status": b.status,
        "read": b.lines_read,
        "imported": b.imported,
        "rejected": b.rejected,
        "progress": b.progress(),
        "failure": b.failure_said(),
    })
}

pub async fn upload(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiMultipart(multipart): ApiMultipart,
) -> Result<impl IntoResponse, ApiError> {
    let form = uploads::receive(&state, multipart).await.map_err(|f| {
        let code = if f.status == StatusCode::PAYLOAD_TOO_LARGE {
            "payload_too_large"
        } else {
            "invalid_upload"
        };
        ApiError::new(f.status, code, f.message)
    })?;
    let batch = uploads::start(&state, &caller.actor(), caller.merchant_id, None, form).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "batch_id": batch.id, "status": batch.status })),
    ))
}

pub async fn get_batch(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let b = codes::batch(&state.db, caller.scope(), id).await?;
    let (errors, _, pages) = codes::errors(&state.db, b.id, 1, codes::ERROR_PAGE_SIZE).await?;
    let mut body = batch_json(&b);
    body["errors"] = json!(errors);
    body["error_pages"] = json!(pages);
    Ok(Json(body))
}

#[derive(Deserialize)]
pub struct PageQuery {
    page: Option<i64>,
}

pub async fn batch_errors(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let b = codes::batch(&state.db, caller.scope(), id).await?;
    let (errors, page, pages) =
        codes::errors(&state.db, b.id, q.page.unwrap_or(1), codes::ERROR_PAGE_SIZE).await?;
    Ok(Json(
        json!({ "batch_id": b.id, "page": page, "pages": pages, "errors": errors }),
    ))
}

pub async fn summary(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = codes::voucher_sku(&state.db, caller.merchant_id, &code, "sku")
        .await
        .map_err(super::unknown_sku_is_404("SKU"))?;
    Ok(Json(codes::summary(&state.db, &sku).await?))
}

/// A code named in a body (never in a URL), with why.
#[derive(Deserialize)]
pub struct CodeBody {
    #[serde(default)]
    code: String,
    #[serde(default)]
    reason: String,
    /// A redemption: the store's slug where it was used.
    #[serde(default)]
    store: Option<String>,
}

impl CodeBody {
    /// The reason a void or reissue must give, checked.
    fn reason(&self) -> Result<String, ApiError> {
        crate::domain::validate::name("reason", &self.reason, crate::domain::validate::REASON_MAX)
            .map_err(|e| crate::domain::DomainError::Invalid(vec![e]).into())
    }
}

/// `POST /api/v1/reservations/{order_id}/codes/void`: SOLD → VOIDED.
pub async fn void(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<impl IntoResponse, ApiError> {
    let reason = body.reason()?;
    let view = aftersales::void(
        &state.db,
        &state.codes,
        &caller.actor(),
        caller.merchant_id,
        &order_id,
        &body.code,
        &reason,
    )
    .await?;
    Ok((NO_STORE, Json(view)))
}

/// `POST /api/v1/reservations/{order_id}/codes/reissue`: voids the code and hands the order a new one.
pub async fn reissue(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(order_id): ApiPath<String>,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<impl IntoResponse, ApiError> {
    let reason = body.reason()?;
    let view = aftersales::reissue(
        &state.db,
        &state.codes,
        &caller.actor(),
        caller.merchant_id,
        &order_id,
        &body.code,
        &reason,
    )
    .await?;
    Ok((NO_STORE, Json(view)))
}

/// `POST /api/v1/codes/redeem`: SOLD → REDEEMED, once.
pub async fn redeem(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<CodeBody>,
) -> Result<impl IntoResponse, ApiError> {
    let store = match body
        .store
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        None => None,
        Some(slug) => Some(
            tenants::store_by_slug(&state.db, caller.merchant_id, slug)
                .await
                .map_err(|_| {
                    crate::domain::DomainError::Invalid(vec![crate::domain::FieldError::new(
                        "store",
                        "unknown_store",
                        crate::messages::unknown_store(slug),
                    )])
                })?
                .id,
        ),
    };
    let r = aftersales::redeem(
        &state.db,
        &state.codes,
        &caller.actor(),
        caller.merchant_id,
        &body.code,
        store,
    )
    .await?;
    Ok(Json(r))
}

const NO_STORE: [(axum::http::HeaderName, &str); 1] =
    [(axum::http::header::CACHE_CONTROL, "no-store")];

#[derive(Deserialize, Default)]
pub struct MoveBody {
    #[serde(default)]
    reason: String,
}

/// Locks, unlocks or invalidates one code (by its id: the code itself never travels in a URL),
/// with why; the move is kept in the code's history. 409 `code_state` when its state forbids it.
async fn move_code(
    state: &AppState,
    caller: &ApiCaller,
    id: i64,
    mv: codes::OpsMove,
    reason: &str,
) -> Result<Json<serde_json::Value>, ApiError> {
    let reason =
        crate::domain::validate::name("reason", reason, crate::domain::validate::REASON_MAX)
            .map_err(|e| crate::domain::DomainError::Invalid(vec![e]))?;
    let row = codes::move_code_because(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        id,
        mv,
        &reason,
    )
    .await?;
    Ok(Json(
        json!({ "id": row.id, "status": row.status, "batch_id": row.batch_id }),
    ))
}

pub async fn lock(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<impl IntoResponse, ApiError> {
    move_code(&state, &caller, id, codes::OpsMove::Lock, &body.reason).await
}

pub async fn unlock(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<impl IntoResponse, ApiError> {
    move_code(&state, &caller, id, codes::OpsMove::Unlock, &body.reason).await
}

pub async fn invalidate(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<impl IntoResponse, ApiError> {
    move_code(
        &state,
        &caller,
        id,
        codes::OpsMove::Invalidate,
        &body.reason,
    )
    .await
}
