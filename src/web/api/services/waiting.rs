//! The waiting list through the API: joining, the list of a slot, offers accepted or declined.

#[allow(unused_imports)]
use super::*;

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"name": "王芳", "phone": "13800138000", "places": 2}))]
pub struct WaitBody {
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) phone: String,
    /// The party (1 when left out), at most the service's `max_places`.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1)]
    pub(super) places: Value,
}

/// A waiting customer of a full slot.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WaitJson {
    pub(super) id: i64,
    pub(super) slot_id: i64,
    /// The place in the queue (1 = next) while WAITING; 0 otherwise.
    pub(super) position: i64,
    pub(super) status: crate::domain::slots::waitlist::WaitStatus,
    pub(super) name: String,
    pub(super) phone: String,
    pub(super) places: i64,
    pub(super) created_at: String,
    /// The booking it became, once BOOKED (or the held one, while OFFERED).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) booking_reference: Option<String>,
    /// While OFFERED: until when the place is held for this customer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) offer_expires_at: Option<String>,
}

pub(super) fn wait_json(e: crate::domain::slots::waitlist::Entry) -> WaitJson {
    WaitJson {
        id: e.id,
        slot_id: e.slot_id,
        position: e.position,
        status: e.status,
        name: e.customer_name,
        phone: e.customer_phone,
        places: e.places,
        created_at: ms_to_rfc3339(e.created_at),
        booking_reference: e.booking_reference,
        offer_expires_at: e.hold_until.map(ms_to_rfc3339),
    }
}

/// Puts a customer on a full slot's waiting list. When places free (a cancel, a move away, more
/// capacity…) the first waiting customer whose party fits is booked at once, exactly once; the
/// booking says `from_waitlist`. Nobody waits for a slot that has started.
#[utoipa::path(post, path = "/api/v1/slots/{id}/waitlist", tag = "bookings",
    params(("id" = i64, Path, description = "The slot's id")),
    request_body = WaitBody,
    responses(
        (status = 201, description = "Waiting, with its `position` (or BOOKED at once if places freed meanwhile)", body = WaitJson),
        (status = 409, description = "`slot_has_room` (book instead), `slot_started`, `slot_closed`, `already_booked`, `already_waiting` (with `id` and `position`)", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_name`, `invalid_phone`, `too_long`, `invalid_places`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn join_waitlist(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<WaitBody>,
) -> Result<impl IntoResponse, ApiError> {
    let places = match &body.places {
        Value::Null => 1,
        v => v.as_i64().unwrap_or(0),
    };
    let input = crate::domain::slots::waitlist::JoinInput {
        slot_id: id,
        name: body.name,
        phone: body.phone,
        places,
        region: None,
        // The order system answers for its own customers: no public caps.
        public: None,
    };
    let e =
        crate::domain::slots::waitlist::join(&state.db, &caller.actor(), caller.merchant_id, input)
            .await?;
    Ok((StatusCode::CREATED, Json(wait_json(e))))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct WaitlistJson {
    pub(super) slot_id: i64,
    /// Every entry in order, the waiting ones with their position.
    pub(super) waitlist: Vec<WaitJson>,
}

/// A slot's waiting list, in order: who waits, and who was booked from it.
#[utoipa::path(get, path = "/api/v1/slots/{id}/waitlist", tag = "bookings",
    params(("id" = i64, Path, description = "The slot's id")),
    responses((status = 200, description = "The waiting list", body = WaitlistJson)))]
pub async fn waitlist(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let slot = slots::get(&state.db, Scope::Merchant(caller.merchant_id), id).await?;
    let list =
        crate::domain::slots::waitlist::of_slot(&state.db, caller.merchant_id, slot.id).await?;
    Ok(Json(WaitlistJson {
        slot_id: slot.id,
        waitlist: list.into_iter().map(wait_json).collect(),
    }))
}

/// Accepts, for the customer, the place held for a waiting-list entry (a store that offers and
/// holds freed places): the hold is cleared and the entry is BOOKED. Accepting twice answers the
/// entry.
#[utoipa::path(post, path = "/api/v1/waitlist/{id}/accept", tag = "bookings",
    params(("id" = i64, Path, description = "The waiting-list entry's id")),
    responses(
        (status = 200, description = "The entry, BOOKED, with its `booking_reference`", body = WaitJson),
        (status = 404, description = "`not_found`: no such entry of this merchant", body = crate::web::api::doc::ErrorBody),
        (status = 409, description = "`offer_ended`: no place is held for this entry (it lapsed, was declined, or was never offered)", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn accept_offer(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let e = crate::domain::slots::waitlist::entry(&state.db, caller.merchant_id, id).await?;
    let e = crate::domain::slots::waitlist::accept(&state.db, &caller.actor(), e).await?;
    Ok(Json(wait_json(e)))
}

/// Declines, for the customer, the place held for a waiting-list entry: the held booking is
/// cancelled and the place goes to the next in line.
#[utoipa::path(post, path = "/api/v1/waitlist/{id}/decline", tag = "bookings",
    params(("id" = i64, Path, description = "The waiting-list entry's id")),
    responses(
        (status = 200, description = "The entry, DECLINED", body = WaitJson),
        (status = 404, description = "`not_found`: no such entry of this merchant", body = crate::web::api::doc::ErrorBody),
        (status = 409, description = "`offer_ended`: no place is held for this entry", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn decline_offer(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let e = crate::domain::slots::waitlist::entry(&state.db, caller.merchant_id, id).await?;
    let e = crate::domain::slots::waitlist::decline(&state.db, &caller.actor(), e).await?;
    Ok(Json(wait_json(e)))
}
