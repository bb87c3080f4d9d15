//! Code batches for the merchant's systems: upload (multipart), progress and errors, and counts
//! by status. The API never returns a code's plaintext except to the order that bought it.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::domain::codes;
use crate::domain::{orders::aftersales, tenancy::tenants};
use crate::web::api::{ApiCaller, ApiJson, ApiMultipart, ApiPath, ApiQuery};
use crate::web::kit::error::ApiError;
use crate::web::kit::ids::ApiId;
use crate::web::{kit::uploads, AppState};

/// A batch and how far its import has come.
#[derive(Serialize, utoipa::ToSchema)]
pub struct BatchJson {
    batch_id: i64,
    sku: String,
    name: String,
    source: codes::BatchSource,
    /// `valid` (import the valid lines) or `all` (all or nothing).
    mode: String,
    status: codes::BatchStatus,
    /// The characters its codes may hold: `any`, `alnum`, `alnum_dash`, `upper_alnum`, `digits`.
    allowed: String,
    /// Blank lines of the file, skipped (not counted in `read`).
    blank_lines: i64,
    /// Codes stored without the spaces they were typed with...
    normalised: i64,
    /// ...and the first 100 of their lines (the code itself is never repeated).
    normalised_lines: Vec<i64>,
    /// Lines read so far.
    read: i64,
    imported: i64,
    rejected: i64,
    /// Percent done.
    progress: i64,
    /// Why a FAILED batch failed.
    failure: Option<String>,
    /// The first page of its rejected lines.
    errors: Vec<codes::ImportError>,
    error_pages: i64,
}

/// An upload taken: the batch imports in the background (poll it).
#[derive(Serialize, utoipa::ToSchema)]
pub struct BatchStartedJson {
    batch_id: i64,
    status: codes::BatchStatus,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct BatchErrorsJson {
    batch_id: i64,
    page: i64,
    pages: i64,
    errors: Vec<codes::ImportError>,
}

/// The multipart form of an upload.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The voucher SKU's code.
    sku: String,
    /// A name for the batch.
    name: Option<String>,
    /// `valid` (the default: import the valid lines, report the others) or `all` (all or nothing).
    mode: Option<String>,
    /// RFC 3339: when the codes stop being sellable.
    expires_at: Option<String>,
    /// The characters a code may hold: `any` (the default), `alnum` (ASCII letters and digits),
    /// `alnum_dash` (and hyphens), `upper_alnum` (capitals and digits) or `digits`. A code with
    /// another character is refused (`not_allowed`, with its position), its line numbered.
    allowed: Option<String>,
    /// One code per line (UTF-8 text or CSV).
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// Uploads a batch of codes (multipart: the file and its SKU); they are encrypted at rest.
#[utoipa::path(post, path = "/api/v1/code-batches", tag = "codes",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 202, description = "Taken; the import runs in the background", body = BatchStartedJson),
        (status = 409, description = "`already_imported`: this file was already uploaded for the SKU", body = crate::web::api::doc::ErrorBody),
        (status = 413, description = "`payload_too_large`: the file is larger than the limit", body = crate::web::api::doc::ErrorBody),
        (status = 415, description = "`unsupported_media_type`: not multipart", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`invalid_upload`, `required`, `unknown_sku`, `wrong_sku_kind`, `invalid_mode`, `invalid_allowed`, `invalid_choice`, `bad_expiry`, `invalid_time`, `too_long`, `bad_csv`, `csv_needs_code_column`, `no_codes`, `nothing_valid`: the form or file is refused", body = crate::web::api::doc::ErrorBody),
    ))]
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
        Json(BatchStartedJson {
            batch_id: batch.id,
            status: batch.status,
        }),
    ))
}

/// A batch's progress and the first page of its rejected lines.
#[utoipa::path(get, path = "/api/v1/code-batches/{id}", tag = "codes",
    params(("id" = i64, Path, description = "The batch's id")),
    responses((status = 200, description = "The batch", body = BatchJson)))]
pub async fn get_batch(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let b = codes::batch(&state.db, caller.scope(), id).await?;
    let (errors, _, pages) = codes::errors(&state.db, b.id, 1, codes::ERROR_PAGE_SIZE).await?;
    Ok(Json(BatchJson {
        progress: b.progress(),
        failure: b.failure_said(),
        batch_id: b.id,
        sku: b.sku_code,
        name: b.name,
        source: b.source,
        mode: b.mode,
        status: b.status,
        allowed: b.allowed,
        blank_lines: b.blank_lines,
        normalised: b.normalised,
        normalised_lines: codes::normalised_lines(&state.db, b.id, 100).await?,
        read: b.lines_read,
        imported: b.imported,
        rejected: b.rejected,
        errors,
        error_pages: pages,
    }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// From 1.
    page: Option<i64>,
}

/// A page of a batch's rejected lines, with why.
#[utoipa::path(get, path = "/api/v1/code-batches/{id}/errors", tag = "codes",
    params(("id" = i64, Path, description = "The batch's id"), PageQuery),
    responses((status = 200, description = "A page", body = BatchErrorsJson)))]
pub async fn batch_errors(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let b = codes::batch(&state.db, caller.scope(), id).await?;
    let (errors, page, pages) =
        codes::errors(&state.db, b.id, q.page.unwrap_or(1), codes::ERROR_PAGE_SIZE).await?;
    Ok(Json(BatchErrorsJson {
        batch_id: b.id,
        page,
        pages,
        errors,
    }))
}

/// A voucher SKU's codes counted by state.
#[utoipa::path(get, path = "/api/v1/skus/{code}/codes/summary", tag = "codes", operation_id = "code_summary",
    params(("code" = String, Path, description = "The SKU's code")),
    responses(
        (status = 200, description = "The counts", body = codes::Summary),
        (status = 422, description = "`wrong_sku_kind`: the SKU does not sell codes", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn summary(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = codes::voucher_sku(&state.db, caller.merchant_id, &code, "sku")
        .await
        .map_err(crate::web::api::unknown_sku_is_404("SKU"))?;
    Ok(Json(codes::summary(&state.db, &sku).await?))
}

/// A code named in a body (never in a URL), with why.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"code": "GIFT-7Q2M-99XK", "reason": "leaked in chat"}))]
pub struct CodeBody {
    /// The code's text (never in a URL).
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
        crate::domain::kernel::validate::name(
            "reason",
            &self.reason,
            crate::domain::kernel::validate::REASON_MAX,
        )
        .map_err(|e| crate::domain::DomainError::Invalid(vec![e]).into())
    }
}

/// `POST /api/v1/reservations/{order_id}/codes/void`: SOLD → VOIDED.
#[utoipa::path(post, path = "/api/v1/reservations/{order_id}/codes/void", tag = "codes",
    params(("order_id" = String, Path, description = "The order that bought the code")),
    request_body = CodeBody,
    responses(
        (status = 200, description = "The order, its code voided", body = crate::domain::orders::ReservationView),
        (status = 409, description = "`code_not_sold`, `code_voided`, `code_already_redeemed`, `order_not_confirmed`: the code is not sold to this order, or is already final", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
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
#[utoipa::path(post, path = "/api/v1/reservations/{order_id}/codes/reissue", tag = "codes",
    params(("order_id" = String, Path, description = "The order that bought the code")),
    request_body = CodeBody,
    responses(
        (status = 200, description = "The order with its new code", body = crate::domain::orders::ReservationView),
        (status = 409, description = "`code_not_sold`, `code_voided`, `code_already_redeemed`, `order_not_confirmed`, `insufficient_stock`: no code to hand instead, or the code is not sold to this order", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
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
#[utoipa::path(post, path = "/api/v1/codes/redeem", tag = "codes",
    request_body = CodeBody,
    responses(
        (status = 200, description = "The code after this use: REDEEMED, or for a pass with uses left SOLD with `uses_left`", body = aftersales::Redeemed),
        (status = 409, description = "`code_not_sold`, `code_voided`, `code_already_redeemed`: not sold, or already used", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `unknown_store`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
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

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({"reason": "suspected leak"}))]
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
) -> Result<Json<CodeMovedJson>, ApiError> {
    let reason = crate::domain::kernel::validate::name(
        "reason",
        reason,
        crate::domain::kernel::validate::REASON_MAX,
    )
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
    Ok(Json(CodeMovedJson {
        id: row.id,
        status: row.status,
        batch_id: row.batch_id,
    }))
}

/// Undoes a code's last redemption (撤销核销) within the configured window
/// (`SELLABLE_REDEEM_UNDO_MINUTES`, 30 by default), with why: the code is SOLD again and the use
/// is given back; its history keeps both.
#[utoipa::path(post, path = "/api/v1/codes/{id}/unredeem", tag = "codes",
    params(("id" = i64, Path, description = "The code's id")),
    request_body = MoveBody,
    responses(
        (status = 200, description = "The code, SOLD again, with the uses it has left", body = aftersales::Redeemed),
        (status = 404, description = "`not_found`: no such code of this merchant", body = crate::web::api::doc::ErrorBody),
        (status = 409, description = "`undo_window_passed`: the last use is older than the window; `code_not_redeemed`: nothing to undo", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: the reason is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn unredeem(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<impl IntoResponse, ApiError> {
    let r = aftersales::unredeem(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        id,
        &body.reason,
        state.config.serve.redeem_undo_minutes,
    )
    .await?;
    Ok((NO_STORE, Json(r)))
}

/// A code after a move: its id and state, never its text.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CodeMovedJson {
    id: i64,
    status: codes::CodeStatus,
    batch_id: i64,
}

/// AVAILABLE → LOCKED: held back from sale.
#[utoipa::path(post, path = "/api/v1/codes/{id}/lock", tag = "codes",
    params(("id" = i64, Path, description = "The code's id")),
    request_body = MoveBody,
    responses(
        (status = 200, description = "The code's new state", body = CodeMovedJson),
        (status = 409, description = "`code_state`: the code is not AVAILABLE", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: the reason is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn lock(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<impl IntoResponse, ApiError> {
    move_code(&state, &caller, id, codes::OpsMove::Lock, &body.reason).await
}

/// LOCKED → AVAILABLE: back on sale.
#[utoipa::path(post, path = "/api/v1/codes/{id}/unlock", tag = "codes",
    params(("id" = i64, Path, description = "The code's id")),
    request_body = MoveBody,
    responses(
        (status = 200, description = "The code's new state", body = CodeMovedJson),
        (status = 409, description = "`code_state`: the code is not LOCKED", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: the reason is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn unlock(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<impl IntoResponse, ApiError> {
    move_code(&state, &caller, id, codes::OpsMove::Unlock, &body.reason).await
}

/// AVAILABLE → INVALID, for good (a locked code is unlocked first).
#[utoipa::path(post, path = "/api/v1/codes/{id}/invalidate", tag = "codes",
    params(("id" = i64, Path, description = "The code's id")),
    request_body = MoveBody,
    responses(
        (status = 200, description = "The code's new state", body = CodeMovedJson),
        (status = 409, description = "`code_state`: the code is not AVAILABLE (locked, held, sold or final)", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: the reason is refused", body = crate::web::api::doc::ErrorBody),
    ))]
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

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"sku": "GIFT-100", "count": 500, "length": 16, "alphabet": "unambiguous"}))]
pub struct GenerateBody {
    /// The voucher SKU's code.
    sku: String,
    /// A name for the batch (the date when left out).
    name: Option<String>,
    /// How many codes, 1 to 1,000,000.
    count: i64,
    /// Characters per code, 10 to 32 (16 when left out).
    length: Option<i64>,
    /// `unambiguous` (the default: no 0/O, 1/I/L), `digits` or `letters`.
    alphabet: Option<String>,
}

/// Generates a batch of random codes for a voucher SKU, in the background (poll the batch); the
/// key that asked downloads them once (`POST /api/v1/code-batches/{id}/download`).
#[utoipa::path(post, path = "/api/v1/code-batches/generate", tag = "codes", operation_id = "generate_codes",
    request_body = GenerateBody,
    responses(
        (status = 202, description = "Taken; the codes are generated in the background", body = BatchStartedJson),
        (status = 422, description = "`required`, `unknown_sku`, `wrong_sku_kind`, `invalid_count`, `invalid_length`, `invalid_choice`, `too_long`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn generate(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<GenerateBody>,
) -> Result<impl IntoResponse, ApiError> {
    let name = body
        .name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| {
            state
                .db
                .clock
                .now()
                .format("generated %Y-%m-%d %H:%M")
                .to_string()
        });
    let batch = uploads::generate(
        &state,
        &caller.actor(),
        caller.merchant_id,
        None,
        uploads::Generate {
            sku_code: &body.sku,
            name: &name,
            count: body.count,
            length: body.length.unwrap_or(16),
            alphabet: body.alphabet.as_deref().unwrap_or("unambiguous"),
        },
    )
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(BatchStartedJson {
            batch_id: batch.id,
            status: batch.status,
        }),
    ))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct GeneratedCodesJson {
    batch_id: i64,
    /// The plaintext codes: given once, then never again.
    codes: Vec<String>,
}

/// The codes of a generated batch, once, to the key that generated it (afterwards 409
/// `already_downloaded`); 403 for a batch another key or a person generated, or one still
/// generating.
#[utoipa::path(post, path = "/api/v1/code-batches/{id}/download", tag = "codes", operation_id = "download_generated_codes",
    params(("id" = i64, Path, description = "The batch's id")),
    responses(
        (status = 200, description = "The codes (never again)", body = GeneratedCodesJson),
        (status = 403, description = "`forbidden`: not generated by this key, or still generating", body = crate::web::api::doc::ErrorBody),
        (status = 409, description = "`already_downloaded`: the codes were given out already", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn download(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let actor = caller.actor();
    let (b, plain) = codes::download_generated(
        &state.db,
        &state.codes,
        &actor,
        codes::Generator::Key(&actor.label),
        caller.merchant_id,
        id,
    )
    .await?;
    Ok((
        [(axum::http::header::CACHE_CONTROL, "no-store")],
        Json(GeneratedCodesJson {
            batch_id: b.id,
            codes: plain,
        }),
    ))
}
