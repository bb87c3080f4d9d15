//! Bookings through the API: listed for an order system, made, moved, read, cancelled, marked.

#[allow(unused_imports)]
use super::*;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BookingsQuery {
    /// Slots starting at or after: an RFC 3339 time or a date (the start of that day).
    pub(super) from: Option<String>,
    /// Slots starting before: an RFC 3339 time or a date (the end of that day).
    pub(super) to: Option<String>,
    pub(super) slot_id: Option<String>,
    /// `BOOKED`, `CANCELLED`, `ATTENDED` or `NO_SHOW`.
    pub(super) status: Option<String>,
    /// A store's slug (its timezone reads the dates).
    pub(super) store: Option<String>,
    /// The `next` of the previous page.
    pub(super) after: Option<String>,
    /// At most 500 (100 when left out).
    pub(super) limit: Option<String>,
}

/// A booking in a listing: with its id, the cursor.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ListedBookingJson {
    pub(super) id: i64,
    #[serde(flatten)]
    pub(super) booking: BookingJson,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct BookingsJson {
    pub(super) bookings: Vec<ListedBookingJson>,
    /// Where the next page starts (`after=`); `null` at the end.
    pub(super) next: Option<String>,
}

pub(super) const BOOKINGS_LIMIT: i64 = 100;

pub(super) const BOOKINGS_LIMIT_MAX: i64 = 500;

/// `GET /api/v1/bookings`: bookings whose slot starts in a period (dates read in the store's or
/// merchant's timezone), of one slot or status, in the order they were made, after a cursor.
/// Bookings by day, slot or status, in the order they were made.
#[utoipa::path(get, path = "/api/v1/bookings", tag = "bookings",
    params(BookingsQuery),
    responses(
        (status = 200, description = "A page", body = BookingsJson),
        (status = 422, description = "`invalid_time`, `invalid_period`, `invalid_number`, `invalid_choice`, `unknown_store`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn list_bookings(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiQuery(q): ApiQuery<BookingsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let (store, tz) = store_and_tz(&state, caller.merchant_id, q.store.as_deref()).await?;
    let mut errs = validate::Errors::default();
    let (from, to) = crate::web::api::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
    if let (Some(f), Some(t)) = (from, to) {
        if t <= f {
            errs.push(FieldError::new(
                "to",
                "invalid_period",
                crate::messages::ends_before_starts(),
            ));
        }
    }
    let slot_id = errs
        .take(validate::query_int("slot_id", q.slot_id.as_deref(), 1))
        .flatten();
    let status = match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => errs
            .take(validate::choice("status", s, BookingStatus::NAMES))
            .and_then(BookingStatus::parse),
    };
    let (after, limit) = crate::web::api::feed_page(
        &mut errs,
        q.after.as_deref(),
        q.limit.as_deref(),
        BOOKINGS_LIMIT,
        BOOKINGS_LIMIT_MAX,
    );
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let filter = booking::ListFilter {
        store_id: store.map(|s| s.id),
        slot_id,
        status,
        from,
        to,
    };
    let rows = booking::list(&state.db, caller.merchant_id, &filter, after, limit).await?;
    let next = (rows.len() as i64 == limit)
        .then(|| rows.last().map(|r| r.booking.id.to_string()))
        .flatten();
    let list: Vec<ListedBookingJson> = rows
        .iter()
        .map(|r| {
            let b = &r.booking;
            let booking = booking_json_of(b, r.sku_code.clone(), r.starts_at, r.ends_at);
            ListedBookingJson { id: b.id, booking }
        })
        .collect();
    Ok(Json(BookingsJson {
        bookings: list,
        next,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"slot_id": 4411, "name": "王芳", "phone": "13800138000", "places": 2}))]
pub struct BookBody {
    #[serde(default)]
    #[schema(value_type = i64)]
    pub(super) slot_id: Value,
    /// Places to book (a party): 1 when left out, at most the service's `max_places`.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1)]
    pub(super) places: Value,
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) phone: String,
    pub(super) idempotency_key: Option<String>,
}

/// Books a place in a slot. A repeat with the same `idempotency_key` (scoped to the key and
/// the booking's details) answers the same booking.
#[utoipa::path(post, path = "/api/v1/bookings", tag = "bookings",
    request_body = BookBody,
    responses(
        (status = 201, description = "The booking", body = BookingJson),
        (status = 409, description = "`slot_full`, `slot_closed`, `slot_started`, `slot_frozen`, `already_booked`, `too_many_bookings`, `not_on_sale`, `idempotency_conflict`: not booked", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_name`, `invalid_phone`, `too_long`, `invalid_idempotency_key`, `unknown_slot`, `invalid_places`: a field is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn book(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<BookBody>,
) -> Result<impl IntoResponse, ApiError> {
    let slot_id = body.slot_id.as_i64().ok_or_else(|| {
        DomainError::field("slot_id", "required", crate::messages::required("slot_id"))
    })?;
    // Not a whole number: 0, which the domain refuses naming the service's party size.
    let places = match &body.places {
        Value::Null => 1,
        v => v.as_i64().unwrap_or(0),
    };
    let input = BookInput {
        slot_id,
        places,
        name: body.name,
        phone: body.phone,
        idempotency_key: body.idempotency_key,
        region: None,
        public: None,
        staff: None,
    };
    let b = booking::book(&state.db, &caller.actor(), caller.merchant_id, input).await?;
    // The slot the booking read gives the answer its service and times: no second read.
    let json = booking_json_of(
        &b.booking,
        b.slot.sku_code,
        b.slot.starts_at,
        b.slot.ends_at,
    );
    Ok((StatusCode::CREATED, Json(json)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"slot_id": 4412}))]
pub struct MoveBody {
    /// The slot to move to: the same service and store.
    #[serde(default)]
    #[schema(value_type = i64)]
    pub(super) slot_id: Value,
}

/// Moves a booking to another slot of the same service and store, keeping its reference: the
/// new places are taken before the old ones are freed, in one transaction; a full target
/// refuses and nothing changes. Repeating a move that was made answers the booking.
#[utoipa::path(post, path = "/api/v1/bookings/{reference}/move", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    request_body = MoveBody,
    responses(
        (status = 200, description = "The booking in its new slot (`moved_from_slot_id` says where from)", body = BookingJson),
        (status = 409, description = "`slot_full`, `slot_closed`, `slot_started`, `slot_frozen`, `not_on_sale`, `already_booked`, `booking_cancelled`, `booking_not_movable`, `booking_changed`, `booking_held` (a place held for a waiting customer who has not accepted it): not moved", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `unknown_slot`, `different_service`: the target is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn move_booking(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(reference): ApiPath<String>,
    ApiJson(body): ApiJson<MoveBody>,
) -> Result<impl IntoResponse, ApiError> {
    let slot_id = body.slot_id.as_i64().ok_or_else(|| {
        DomainError::field("slot_id", "required", crate::messages::required("slot_id"))
    })?;
    let b = booking::move_booking(
        &state.db,
        &caller.actor(),
        caller.scope(),
        &reference,
        slot_id,
        booking::MoveBy::Staff,
    )
    .await?;
    booking_json(&state, &b).await
}

/// A booking by its reference.
#[utoipa::path(get, path = "/api/v1/bookings/{reference}", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    responses((status = 200, description = "The booking", body = BookingJson)))]
pub async fn get_booking(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(reference): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let b = booking::by_reference(&state.db, caller.scope(), &reference).await?;
    booking_json(&state, &b).await
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({"reason": "customer asked"}))]
pub struct CancelBody {
    pub(super) reason: Option<String>,
}

/// Cancels a booking before its slot starts, freeing its place (a body is optional).
#[utoipa::path(post, path = "/api/v1/bookings/{reference}/cancel", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    request_body(content = Option<CancelBody>, description = "Optional"),
    responses(
        (status = 200, description = "The booking, CANCELLED (or as it already was)", body = BookingJson),
        (status = 409, description = "`booking_cancelled`, `slot_started`: it cannot be cancelled", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`too_long`: the reason is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn cancel_booking(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(reference): ApiPath<String>,
    body: axum::body::Bytes,
) -> Result<impl IntoResponse, ApiError> {
    // The body is optional here: an empty one means "no reason given".
    let reason = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<CancelBody>(&body)
            .map_err(|e| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_json",
                    crate::messages::bad_json(&e.to_string()),
                )
            })?
            .reason
    };
    let actor = caller.actor();
    let b = booking::cancel(
        &state.db,
        &actor,
        caller.scope(),
        &reference,
        reason.as_deref(),
    )
    .await?;
    booking_json(&state, &b).await
}

/// Marks a booking ATTENDED once its slot has started.
#[utoipa::path(post, path = "/api/v1/bookings/{reference}/attended", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    responses(
        (status = 200, description = "The booking, ATTENDED", body = BookingJson),
        (status = 409, description = "`booking_cancelled`, `slot_not_started`, `booking_held` (a place only held for a waiting customer): it cannot be marked", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn attended(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(reference): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    mark(
        &state,
        &caller,
        &reference,
        booking::BookingStatus::Attended,
    )
    .await
}

/// Marks a booking NO_SHOW once its slot has started.
#[utoipa::path(post, path = "/api/v1/bookings/{reference}/no-show", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    responses(
        (status = 200, description = "The booking, NO_SHOW", body = BookingJson),
        (status = 409, description = "`booking_cancelled`, `slot_not_started`, `booking_held` (a place only held for a waiting customer): it cannot be marked", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn no_show(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(reference): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    mark(&state, &caller, &reference, booking::BookingStatus::NoShow).await
}

/// Attended or no-show: one call, two documented routes.
async fn mark(
    state: &AppState,
    caller: &ApiCaller,
    reference: &str,
    status: booking::BookingStatus,
) -> Result<impl IntoResponse, ApiError> {
    let b = booking::mark(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        reference,
        status,
    )
    .await?;
    booking_json(state, &b).await
}
