//! Closures (staff on leave, the store closed) through the API: listed, made and reopened.

#[allow(unused_imports)]
use super::*;

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"store": "jingan", "staff": "Mei", "starts_at": "2026-12-07T00:00:00+08:00",
    "ends_at": "2026-12-09T00:00:00+08:00", "reason": "annual leave"}))]
pub struct ClosureBody {
    pub(super) store: Option<String>,
    /// A staff member's name; left out: the whole store.
    pub(super) staff: Option<String>,
    /// RFC 3339.
    #[serde(default)]
    pub(super) starts_at: String,
    #[serde(default)]
    pub(super) ends_at: String,
    #[serde(default)]
    pub(super) reason: String,
    /// What the public booking page says about the closed slots.
    #[serde(default)]
    pub(super) public_note: Option<String>,
}

/// The store a query names (none when left out) and the timezone its dates are read in: the
/// store's, else the merchant's.
pub(super) async fn store_and_tz(
    state: &AppState,
    merchant_id: MerchantId,
    raw: Option<&str>,
) -> Result<
    (
        Option<crate::domain::tenancy::tenants::Store>,
        chrono_tz::Tz,
    ),
    ApiError,
> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => {
            let store = schedule::resolve_store(&state.db, merchant_id, Some(s)).await?;
            let tz = store.tz();
            Ok((Some(store), tz))
        }
        None => {
            let tz = crate::domain::tenancy::tenants::merchant(&state.db, merchant_id)
                .await?
                .tz();
            Ok((None, tz))
        }
    }
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ClosuresQuery {
    /// A store's slug (may be left out when the merchant has one).
    pub(super) store: Option<String>,
}

/// A closure (leave, a holiday) and the bookings of its slots to call.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClosureJson {
    pub(super) id: i64,
    /// `null`: the whole store.
    pub(super) staff: Option<String>,
    pub(super) starts_at: String,
    pub(super) ends_at: String,
    pub(super) reason: String,
    pub(super) reopened_at: Option<String>,
    pub(super) bookings_to_contact: Vec<ContactJson>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ClosuresJson {
    pub(super) store: String,
    pub(super) closures: Vec<ClosureJson>,
}

/// `GET /api/v1/closures`: a store's closures, active ones first (the store may be left out when
/// the merchant has one).
/// A store's closures, active ones first.
#[utoipa::path(get, path = "/api/v1/closures", tag = "slots",
    params(ClosuresQuery),
    responses(
        (status = 200, description = "The closures", body = ClosuresJson),
        (status = 422, description = "`unknown_store`, `required`: the store is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn list_closures(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiQuery(q): ApiQuery<ClosuresQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let store = schedule::resolve_store(&state.db, caller.merchant_id, q.store.as_deref()).await?;
    let list = closures::closures(&state.db, caller.merchant_id, store.id).await?;
    let mut out = Vec::with_capacity(list.len());
    for c in &list {
        let contacts = closures::closure_contacts(&state.db, caller.merchant_id, c.id).await?;
        out.push(closure_json(c, contacts));
    }
    Ok(Json(ClosuresJson {
        store: store.slug,
        closures: out,
    }))
}

pub(super) fn closure_json(c: &closures::Closure, contacts: Vec<Contact>) -> ClosureJson {
    ClosureJson {
        id: c.id,
        staff: c.staff_name.clone(),
        starts_at: ms_to_rfc3339(c.starts_at),
        ends_at: ms_to_rfc3339(c.ends_at),
        reason: c.reason.clone(),
        reopened_at: c.reopened_at.map(ms_to_rfc3339),
        bookings_to_contact: contacts_json(contacts),
    }
}

/// Closes a staff member's (or the whole store's) slots over a period; the bookings they hold
/// are listed to call.
#[utoipa::path(post, path = "/api/v1/closures", tag = "slots",
    request_body = ClosureBody,
    responses(
        (status = 201, description = "The closure", body = ClosureJson),
        (status = 422, description = "`required`, `invalid_time`, `invalid_period`, `period_in_past`, `too_long`, `unknown_staff`, `unknown_store`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn create_closure(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<ClosureBody>,
) -> Result<impl IntoResponse, ApiError> {
    let store =
        schedule::resolve_store(&state.db, caller.merchant_id, body.store.as_deref()).await?;
    let staff = staff_named(&state, caller.merchant_id, store.id, body.staff.as_deref()).await?;
    let mut errs = validate::Errors::default();
    let starts_at = time_field("starts_at", &body.starts_at, &mut errs);
    let ends_at = time_field("ends_at", &body.ends_at, &mut errs);
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let input = ClosureInput {
        staff,
        starts_at,
        ends_at,
        reason: body.reason,
        public_note: body.public_note,
    };
    let (closure, contacts) = closures::create_closure(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        &store,
        input,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(closure_json(&closure, contacts))))
}

/// Ends a closure: its slots open again (those not closed otherwise).
#[utoipa::path(post, path = "/api/v1/closures/{id}/reopen", tag = "slots",
    params(("id" = i64, Path, description = "The closure's id")),
    responses(
        (status = 200, description = "The closure, reopened", body = ClosureJson),
        (status = 409, description = "`invalid_period`: already reopened, or already over", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn reopen_closure(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let closure =
        closures::reopen_closure(&state.db, &caller.actor(), caller.merchant_id, id).await?;
    Ok(Json(closure_json(&closure, Vec::new())))
}
