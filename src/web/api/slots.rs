//! Services, slots, closures and bookings for the merchant's systems.

use crate::domain::{MerchantId, StoreId};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ApiCaller, ApiJson, ApiPath, ApiQuery};
use crate::domain::kernel::validate::{self, ms_to_rfc3339};
use crate::domain::slots::booking::{self, BookInput, Booking, BookingStatus};
use crate::domain::slots::closures::{self, ClosureInput};
use crate::domain::slots::schedule::{self, RuleInput};
use crate::domain::slots::{self, Contact, OneOffInput, Slot, SlotFilter, SlotStatus};
use crate::domain::{slots::staff, DomainError, FieldError, Scope};
use crate::web::error::ApiError;
use crate::web::ids::ApiId;
use crate::web::AppState;

/// A slot as the API lists it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SlotJson {
    pub id: i64,
    pub sku: String,
    pub starts_at: String,
    pub ends_at: String,
    pub capacity: i64,
    pub booked: i64,
    pub remaining: i64,
    pub status: SlotStatus,
    pub closed_reason: Option<String>,
    pub staff: Option<String>,
}

impl SlotJson {
    /// The slot as the API shows it at `now`.
    fn of(s: &Slot, now: i64) -> Self {
        SlotJson {
            id: s.id,
            sku: s.sku_code.clone(),
            starts_at: ms_to_rfc3339(s.starts_at),
            ends_at: ms_to_rfc3339(s.ends_at),
            capacity: s.capacity,
            booked: s.booked,
            // Places of a slot that has started cannot be booked: none remain to sell.
            remaining: if s.started(now) { 0 } else { s.remaining() },
            status: s.status,
            closed_reason: s.closed_reason.clone(),
            staff: s.staff_name.clone(),
        }
    }
}

/// A booking as the API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BookingJson {
    pub reference: String,
    pub status: BookingStatus,
    pub slot_id: i64,
    pub sku: String,
    pub starts_at: String,
    pub ends_at: String,
    pub name: String,
    pub phone: String,
    pub cancel_reason: Option<String>,
    /// The order that booked it, for a place booked with goods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    /// The places it takes of its slot (a party).
    pub places: i64,
    /// The slot it was last moved from, when staff moved it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_from_slot_id: Option<i64>,
    /// Booked by the waiting list: a place freed and it was this customer's turn.
    pub from_waitlist: bool,
    /// A place held for a waiting customer who has not accepted it yet: until when. It lapses
    /// (the booking is cancelled) then unless accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_until: Option<String>,
}

/// A booking with its slot's service and times.
async fn booking_json(state: &AppState, b: &Booking) -> Result<Json<BookingJson>, ApiError> {
    let slot = slots::get(&state.db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
    Ok(Json(booking_json_of(
        b,
        slot.sku_code,
        slot.starts_at,
        slot.ends_at,
    )))
}

fn booking_json_of(b: &Booking, sku: String, starts_at: i64, ends_at: i64) -> BookingJson {
    BookingJson {
        reference: b.reference.clone(),
        status: b.status,
        slot_id: b.slot_id,
        sku,
        starts_at: ms_to_rfc3339(starts_at),
        ends_at: ms_to_rfc3339(ends_at),
        name: b.customer_name.clone(),
        phone: b.customer_phone.clone(),
        cancel_reason: b.cancel_reason.clone(),
        order_id: b.order_id.clone(),
        places: b.places,
        moved_from_slot_id: b.moved_from_slot_id,
        from_waitlist: b.from_waitlist != 0,
        held_until: b.hold_until.map(ms_to_rfc3339),
    }
}

/// A booking to call about a closure.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ContactJson {
    reference: String,
    name: String,
    phone: String,
    slot_id: i64,
    starts_at: String,
}

fn contacts_json(c: Vec<Contact>) -> Vec<ContactJson> {
    c.into_iter()
        .map(|c| ContactJson {
            reference: c.reference,
            name: c.customer_name,
            phone: c.customer_phone,
            slot_id: c.slot_id,
            starts_at: ms_to_rfc3339(c.starts_at),
        })
        .collect()
}

fn time_field(field: &str, raw: &str, errs: &mut validate::Errors) -> i64 {
    match validate::rfc3339_opt(field, Some(raw)) {
        Ok(Some(t)) => t,
        Ok(None) => {
            errs.push(FieldError::new(
                field,
                "required",
                crate::messages::required(&crate::messages::label(field)),
            ));
            0
        }
        Err(e) => {
            errs.push(e);
            0
        }
    }
}

fn int_field(
    field: &str,
    v: &Value,
    errs: &mut validate::Errors,
    check: fn(&str, i64) -> Result<i64, FieldError>,
) -> i64 {
    match v.as_i64() {
        Some(n) => errs.take(check(field, n)).unwrap_or(0),
        None => {
            errs.push(check(field, -1).err().unwrap_or_else(|| {
                FieldError::new(field, "invalid_number", crate::messages::required(field))
            }));
            0
        }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"store": "jingan", "name": "Mei"}))]
pub struct StaffBody {
    /// The store's slug (may be left out when the merchant has one).
    store: Option<String>,
    #[serde(default)]
    name: String,
}

/// A staff member slots can be given to.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StaffJson {
    id: i64,
    name: String,
    store: String,
}

/// Adds a staff member to a store.
#[utoipa::path(post, path = "/api/v1/staff", tag = "slots",
    request_body = StaffBody,
    responses(
        (status = 201, description = "The staff member", body = StaffJson),
        (status = 409, description = "`duplicate_staff`: the store already has someone of that name", body = super::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`, `unknown_store`: a field is refused", body = super::doc::ErrorBody),
    ))]
pub async fn add_staff(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<StaffBody>,
) -> Result<impl IntoResponse, ApiError> {
    let store =
        schedule::resolve_store(&state.db, caller.merchant_id, body.store.as_deref()).await?;
    let staff = staff::add_staff(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        store.id,
        &body.name,
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(StaffJson {
            id: staff.id,
            name: staff.name,
            store: store.slug,
        }),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct RuleBody {
    /// `MON` … `SUN`.
    #[serde(default)]
    weekdays: Vec<String>,
    /// `HH:MM`.
    #[serde(default)]
    opens: String,
    #[serde(default)]
    closes: String,
    #[serde(default)]
    #[schema(value_type = i64)]
    slot_minutes: Value,
    #[serde(default)]
    #[schema(value_type = i64)]
    capacity: Value,
    /// A staff member's name: the slots are theirs.
    staff: Option<String>,
    /// A break after each slot before the next starts, in minutes (0–240; default 0).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    buffer_minutes: Value,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"store": "jingan", "rules": [{"weekdays": ["MON", "TUE"], "opens": "10:00",
    "closes": "18:00", "slot_minutes": 60, "capacity": 4, "staff": "Mei"}]}))]
pub struct ScheduleBody {
    store: Option<String>,
    #[serde(default)]
    rules: Vec<RuleBody>,
}

/// What a schedule save did to the slots of the window.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ScheduleJson {
    sku: String,
    store: String,
    rules: Vec<RuleJson>,
    created: i64,
    removed: i64,
    capacity_changed: i64,
    /// Slots the new rules no longer make, kept because they hold bookings.
    kept_with_bookings: Vec<schedule::KeptSlot>,
    /// Slots whose capacity was set by hand, kept as they are.
    kept_edited: Vec<schedule::KeptSlot>,
    /// Slots the new rules no longer make, taken off sale but kept (closed) because history
    /// refers to them: a waiting list, a cancelled or moved booking, a finding. Also in `removed`.
    kept_closed: Vec<schedule::KeptSlot>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct RuleJson {
    weekday: &'static str,
    opens: String,
    closes: String,
    slot_minutes: i64,
    capacity: i64,
    staff_id: Option<i64>,
    buffer_minutes: i64,
}

/// Replaces a service's weekly schedule at a store and brings the window's slots in line
/// (slots with bookings, and capacities edited by hand, are kept).
#[utoipa::path(post, path = "/api/v1/services/{sku}/schedule", tag = "slots",
    params(("sku" = String, Path, description = "The service SKU's code")),
    request_body = ScheduleBody,
    responses(
        (status = 200, description = "The rules and what changed", body = ScheduleJson),
        (status = 422, description = "`required`, `invalid_weekday`, `invalid_time`, `invalid_period`, `overlapping_rule`, `invalid_slot_length`, `invalid_buffer`, `invalid_capacity`, `unknown_staff`, `unknown_store`, `wrong_sku_kind`, `unknown_sku`, `too_many`: a rule is refused (see `fields`)", body = super::doc::ErrorBody),
        (status = 409, description = "`staff_archived`: a person the rules name was archived while they were being saved (nothing is saved)", body = super::doc::ErrorBody),
    ))]
pub async fn replace_schedule(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(sku): ApiPath<String>,
    ApiJson(body): ApiJson<ScheduleBody>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = schedule::service_sku(&state.db, caller.merchant_id, &sku, "sku").await?;
    let store =
        schedule::resolve_store(&state.db, caller.merchant_id, body.store.as_deref()).await?;
    // Non-numbers become -1 so the domain reports them with every other rule error at once.
    let int = |v: &Value| v.as_i64().unwrap_or(-1);
    let rules = body
        .rules
        .iter()
        .map(|r| RuleInput {
            weekdays: r.weekdays.clone(),
            opens: r.opens.clone(),
            closes: r.closes.clone(),
            slot_minutes: int(&r.slot_minutes),
            capacity: int(&r.capacity),
            staff: r.staff.clone(),
            buffer_minutes: if r.buffer_minutes.is_null() {
                0
            } else {
                int(&r.buffer_minutes)
            },
        })
        .collect();
    let actor = caller.actor();
    let window = state.config.serve.slot_window_days;
    let (rules, report) = schedule::replace_rules(
        &state.db,
        &actor,
        caller.merchant_id,
        &sku,
        &store,
        rules,
        window,
    )
    .await?;
    let rules = rules
        .iter()
        .map(|r| RuleJson {
            weekday: r.weekday_label(),
            opens: r.opens(),
            closes: r.closes(),
            slot_minutes: r.slot_minutes,
            capacity: r.capacity,
            staff_id: r.staff_id,
            buffer_minutes: r.buffer_minutes,
        })
        .collect();
    Ok(Json(ScheduleJson {
        sku: sku.code,
        store: store.slug,
        rules,
        created: report.created as i64,
        removed: report.removed as i64,
        capacity_changed: report.capacity_changed as i64,
        kept_with_bookings: report.kept_with_bookings,
        kept_edited: report.kept_edited,
        kept_closed: report.kept_closed,
    }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SlotsQuery {
    /// An RFC 3339 time or a date (the start of that day); left out: now.
    from: Option<String>,
    /// An RFC 3339 time or a date (the end of that day); left out: 14 days after `from`.
    to: Option<String>,
    /// A store's slug; left out: every store.
    store: Option<String>,
}

/// A service's slots in a period.
#[utoipa::path(get, path = "/api/v1/services/{sku}/slots", tag = "slots",
    params(("sku" = String, Path, description = "The service SKU's code"), SlotsQuery),
    responses(
        (status = 200, description = "The slots, by start", body = Vec<SlotJson>),
        (status = 422, description = "`invalid_time`, `invalid_period`, `unknown_store`, `wrong_sku_kind`: a filter is refused", body = super::doc::ErrorBody),
    ))]
pub async fn list_slots(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(sku): ApiPath<String>,
    ApiQuery(q): ApiQuery<SlotsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = schedule::service_sku(&state.db, caller.merchant_id, &sku, "sku")
        .await
        .map_err(super::unknown_sku_is_404("service"))?;
    let (store, tz) = store_and_tz(&state, caller.merchant_id, q.store.as_deref()).await?;
    let mut errs = validate::Errors::default();
    let (from, to) = super::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
    let from = from.unwrap_or_else(|| state.db.now_ms());
    let to = to.unwrap_or(from + 14 * 86_400_000);
    if to <= from {
        errs.push(FieldError::new(
            "to",
            "invalid_period",
            crate::messages::ends_before_starts(),
        ));
    }
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let store_id = store.map(|s| s.id);
    let filter = SlotFilter {
        store_id,
        sku_id: Some(sku.id),
        staff_id: None,
        sku_ids: Vec::new(),
        from,
        to,
        only_open_future: false,
    };
    let list = slots::list(&state.db, caller.scope(), &filter).await?;
    let now = state.db.now_ms();
    Ok(Json(
        list.iter()
            .map(|s| SlotJson::of(s, now))
            .collect::<Vec<_>>(),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"sku": "MASSAGE-60", "store": "jingan", "starts_at": "2026-12-24T19:00:00+08:00",
    "ends_at": "2026-12-24T20:00:00+08:00", "capacity": 2, "staff": "Mei"}))]
pub struct OneOffBody {
    #[serde(default)]
    sku: String,
    store: Option<String>,
    /// RFC 3339.
    #[serde(default)]
    starts_at: String,
    #[serde(default)]
    ends_at: String,
    #[serde(default)]
    #[schema(value_type = i64)]
    capacity: Value,
    staff: Option<String>,
}

async fn staff_named(
    state: &AppState,
    merchant_id: MerchantId,
    store_id: StoreId,
    name: Option<&str>,
) -> Result<Option<staff::Staff>, ApiError> {
    match name.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(n) => match staff::staff_by_name(&state.db, merchant_id, store_id, n).await? {
            Some(s) => Ok(Some(s)),
            None => {
                Err(
                    DomainError::field("staff", "unknown_staff", crate::messages::unknown_staff(n))
                        .into(),
                )
            }
        },
    }
}

/// Adds one slot outside the weekly schedule.
#[utoipa::path(post, path = "/api/v1/slots", tag = "slots",
    request_body = OneOffBody,
    responses(
        (status = 201, description = "The slot", body = SlotJson),
        (status = 409, description = "`slot_exists`, `slot_overlap`: a slot of this service and staff already takes that time; `staff_archived`: the person was archived meanwhile", body = super::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_time`, `invalid_period`, `invalid_capacity`, `unknown_staff`, `unknown_store`, `unknown_sku`, `wrong_sku_kind`, `slot_in_past`: a field is refused", body = super::doc::ErrorBody),
    ))]
pub async fn create_slot(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<OneOffBody>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = schedule::service_sku(&state.db, caller.merchant_id, &body.sku, "sku").await?;
    let store =
        schedule::resolve_store(&state.db, caller.merchant_id, body.store.as_deref()).await?;
    let staff = staff_named(&state, caller.merchant_id, store.id, body.staff.as_deref()).await?;
    let mut errs = validate::Errors::default();
    let starts_at = time_field("starts_at", &body.starts_at, &mut errs);
    let ends_at = time_field("ends_at", &body.ends_at, &mut errs);
    let capacity = int_field("capacity", &body.capacity, &mut errs, slots::capacity);
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let slot = slots::create_one_off(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        sku.id,
        &store,
        OneOffInput {
            starts_at,
            ends_at,
            capacity,
            staff,
        },
    )
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(SlotJson::of(&slot, state.db.now_ms())),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"capacity": 6}))]
pub struct CapacityBody {
    /// Never below the places booked; kept when the schedule is saved again.
    #[serde(default)]
    #[schema(value_type = i64)]
    capacity: Value,
}

/// Sets a slot's capacity by hand.
#[utoipa::path(patch, path = "/api/v1/slots/{id}", tag = "slots",
    params(("id" = i64, Path, description = "The slot's id")),
    request_body = CapacityBody,
    responses(
        (status = 200, description = "The slot", body = SlotJson),
        (status = 409, description = "`capacity_below_booked`, `slot_started`: the capacity cannot change", body = super::doc::ErrorBody),
        (status = 422, description = "`invalid_capacity`, `capacity_below_booked`: the capacity is refused", body = super::doc::ErrorBody),
    ))]
pub async fn patch_slot(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<CapacityBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = validate::Errors::default();
    let capacity = int_field("capacity", &body.capacity, &mut errs, slots::capacity);
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let slot =
        slots::set_capacity(&state.db, &caller.actor(), caller.merchant_id, id, capacity).await?;
    Ok(Json(SlotJson::of(&slot, state.db.now_ms())))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"reason": "Mei on leave"}))]
pub struct ReasonBody {
    #[serde(default)]
    reason: String,
}

/// A closed slot, with the bookings it still holds (to call).
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClosedSlotJson {
    #[serde(flatten)]
    slot: SlotJson,
    bookings_to_contact: Vec<ContactJson>,
}

/// Closes a slot: nobody can book it; its bookings are listed to call.
#[utoipa::path(post, path = "/api/v1/slots/{id}/close", tag = "slots",
    params(("id" = i64, Path, description = "The slot's id")),
    request_body = ReasonBody,
    responses(
        (status = 200, description = "The slot, CLOSED", body = ClosedSlotJson),
        (status = 409, description = "`slot_started`: a slot that has started is not closed", body = super::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: the reason is refused", body = super::doc::ErrorBody),
    ))]
pub async fn close_slot(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<ReasonBody>,
) -> Result<impl IntoResponse, ApiError> {
    let (slot, contacts) = slots::close(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        id,
        &body.reason,
    )
    .await?;
    Ok(Json(ClosedSlotJson {
        slot: SlotJson::of(&slot, state.db.now_ms()),
        bookings_to_contact: contacts_json(contacts),
    }))
}

/// Opens a closed slot again.
#[utoipa::path(post, path = "/api/v1/slots/{id}/open", tag = "slots",
    params(("id" = i64, Path, description = "The slot's id")),
    responses(
        (status = 200, description = "The slot, OPEN", body = SlotJson),
        (status = 409, description = "`slot_started`: it stays closed", body = super::doc::ErrorBody),
    ))]
pub async fn open_slot(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let slot = slots::open(&state.db, &caller.actor(), caller.merchant_id, id).await?;
    Ok(Json(SlotJson::of(&slot, state.db.now_ms())))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"store": "jingan", "staff": "Mei", "starts_at": "2026-12-07T00:00:00+08:00",
    "ends_at": "2026-12-09T00:00:00+08:00", "reason": "annual leave"}))]
pub struct ClosureBody {
    store: Option<String>,
    /// A staff member's name; left out: the whole store.
    staff: Option<String>,
    /// RFC 3339.
    #[serde(default)]
    starts_at: String,
    #[serde(default)]
    ends_at: String,
    #[serde(default)]
    reason: String,
    /// What the public booking page says about the closed slots.
    #[serde(default)]
    public_note: Option<String>,
}

/// The store a query names (none when left out) and the timezone its dates are read in: the
/// store's, else the merchant's.
async fn store_and_tz(
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
    store: Option<String>,
}

/// A closure (leave, a holiday) and the bookings of its slots to call.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClosureJson {
    id: i64,
    /// `null`: the whole store.
    staff: Option<String>,
    starts_at: String,
    ends_at: String,
    reason: String,
    reopened_at: Option<String>,
    bookings_to_contact: Vec<ContactJson>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ClosuresJson {
    store: String,
    closures: Vec<ClosureJson>,
}

/// `GET /api/v1/closures`: a store's closures, active ones first (the store may be left out when
/// the merchant has one).
/// A store's closures, active ones first.
#[utoipa::path(get, path = "/api/v1/closures", tag = "slots",
    params(ClosuresQuery),
    responses(
        (status = 200, description = "The closures", body = ClosuresJson),
        (status = 422, description = "`unknown_store`, `required`: the store is refused", body = super::doc::ErrorBody),
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

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BookingsQuery {
    /// Slots starting at or after: an RFC 3339 time or a date (the start of that day).
    from: Option<String>,
    /// Slots starting before: an RFC 3339 time or a date (the end of that day).
    to: Option<String>,
    slot_id: Option<String>,
    /// `BOOKED`, `CANCELLED`, `ATTENDED` or `NO_SHOW`.
    status: Option<String>,
    /// A store's slug (its timezone reads the dates).
    store: Option<String>,
    /// The `next` of the previous page.
    after: Option<String>,
    /// At most 500 (100 when left out).
    limit: Option<String>,
}

/// A booking in a listing: with its id, the cursor.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ListedBookingJson {
    id: i64,
    #[serde(flatten)]
    booking: BookingJson,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct BookingsJson {
    bookings: Vec<ListedBookingJson>,
    /// Where the next page starts (`after=`); `null` at the end.
    next: Option<String>,
}

const BOOKINGS_LIMIT: i64 = 100;
const BOOKINGS_LIMIT_MAX: i64 = 500;

/// `GET /api/v1/bookings`: bookings whose slot starts in a period (dates read in the store's or
/// merchant's timezone), of one slot or status, in the order they were made, after a cursor.
/// Bookings by day, slot or status, in the order they were made.
#[utoipa::path(get, path = "/api/v1/bookings", tag = "bookings",
    params(BookingsQuery),
    responses(
        (status = 200, description = "A page", body = BookingsJson),
        (status = 422, description = "`invalid_time`, `invalid_period`, `invalid_number`, `invalid_choice`, `unknown_store`: a filter is refused", body = super::doc::ErrorBody),
    ))]
pub async fn list_bookings(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiQuery(q): ApiQuery<BookingsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let (store, tz) = store_and_tz(&state, caller.merchant_id, q.store.as_deref()).await?;
    let mut errs = validate::Errors::default();
    let (from, to) = super::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
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
    let (after, limit) = super::feed_page(
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

fn closure_json(c: &closures::Closure, contacts: Vec<Contact>) -> ClosureJson {
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
        (status = 422, description = "`required`, `invalid_time`, `invalid_period`, `period_in_past`, `too_long`, `unknown_staff`, `unknown_store`: a field is refused", body = super::doc::ErrorBody),
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
        (status = 409, description = "`invalid_period`: already reopened, or already over", body = super::doc::ErrorBody),
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

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"slot_id": 4411, "name": "王芳", "phone": "13800138000", "places": 2}))]
pub struct BookBody {
    #[serde(default)]
    #[schema(value_type = i64)]
    slot_id: Value,
    /// Places to book (a party): 1 when left out, at most the service's `max_places`.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1)]
    places: Value,
    #[serde(default)]
    name: String,
    #[serde(default)]
    phone: String,
    idempotency_key: Option<String>,
}

/// Books a place in a slot. A repeat with the same `idempotency_key` (scoped to the key and
/// the booking's details) answers the same booking.
#[utoipa::path(post, path = "/api/v1/bookings", tag = "bookings",
    request_body = BookBody,
    responses(
        (status = 201, description = "The booking", body = BookingJson),
        (status = 409, description = "`slot_full`, `slot_closed`, `slot_started`, `slot_frozen`, `already_booked`, `too_many_bookings`, `not_on_sale`, `idempotency_conflict`: not booked", body = super::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_name`, `invalid_phone`, `too_long`, `invalid_idempotency_key`, `unknown_slot`, `invalid_places`: a field is refused", body = super::doc::ErrorBody),
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
    slot_id: Value,
}

/// Moves a booking to another slot of the same service and store, keeping its reference: the
/// new places are taken before the old ones are freed, in one transaction; a full target
/// refuses and nothing changes. Repeating a move that was made answers the booking.
#[utoipa::path(post, path = "/api/v1/bookings/{reference}/move", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    request_body = MoveBody,
    responses(
        (status = 200, description = "The booking in its new slot (`moved_from_slot_id` says where from)", body = BookingJson),
        (status = 409, description = "`slot_full`, `slot_closed`, `slot_started`, `slot_frozen`, `not_on_sale`, `already_booked`, `booking_cancelled`, `booking_not_movable`, `booking_changed`, `booking_held` (a place held for a waiting customer who has not accepted it): not moved", body = super::doc::ErrorBody),
        (status = 422, description = "`required`, `unknown_slot`, `different_service`: the target is refused", body = super::doc::ErrorBody),
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

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"name": "王芳", "phone": "13800138000", "places": 2}))]
pub struct WaitBody {
    #[serde(default)]
    name: String,
    #[serde(default)]
    phone: String,
    /// The party (1 when left out), at most the service's `max_places`.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1)]
    places: Value,
}

/// A waiting customer of a full slot.
#[derive(Serialize, utoipa::ToSchema)]
pub struct WaitJson {
    id: i64,
    slot_id: i64,
    /// The place in the queue (1 = next) while WAITING; 0 otherwise.
    position: i64,
    status: crate::domain::slots::waitlist::WaitStatus,
    name: String,
    phone: String,
    places: i64,
    created_at: String,
    /// The booking it became, once BOOKED (or the held one, while OFFERED).
    #[serde(skip_serializing_if = "Option::is_none")]
    booking_reference: Option<String>,
    /// While OFFERED: until when the place is held for this customer.
    #[serde(skip_serializing_if = "Option::is_none")]
    offer_expires_at: Option<String>,
}

fn wait_json(e: crate::domain::slots::waitlist::Entry) -> WaitJson {
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
        (status = 409, description = "`slot_has_room` (book instead), `slot_started`, `slot_closed`, `already_booked`, `already_waiting` (with `id` and `position`)", body = super::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_name`, `invalid_phone`, `too_long`, `invalid_places`: a field is refused", body = super::doc::ErrorBody),
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
    slot_id: i64,
    /// Every entry in order, the waiting ones with their position.
    waitlist: Vec<WaitJson>,
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
        (status = 404, description = "`not_found`: no such entry of this merchant", body = super::doc::ErrorBody),
        (status = 409, description = "`offer_ended`: no place is held for this entry (it lapsed, was declined, or was never offered)", body = super::doc::ErrorBody),
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
        (status = 404, description = "`not_found`: no such entry of this merchant", body = super::doc::ErrorBody),
        (status = 409, description = "`offer_ended`: no place is held for this entry", body = super::doc::ErrorBody),
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
    reason: Option<String>,
}

/// Cancels a booking before its slot starts, freeing its place (a body is optional).
#[utoipa::path(post, path = "/api/v1/bookings/{reference}/cancel", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    request_body(content = Option<CancelBody>, description = "Optional"),
    responses(
        (status = 200, description = "The booking, CANCELLED (or as it already was)", body = BookingJson),
        (status = 409, description = "`booking_cancelled`, `slot_started`: it cannot be cancelled", body = super::doc::ErrorBody),
        (status = 422, description = "`too_long`: the reason is refused", body = super::doc::ErrorBody),
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
        (status = 409, description = "`booking_cancelled`, `slot_not_started`, `booking_held` (a place only held for a waiting customer): it cannot be marked", body = super::doc::ErrorBody),
    ))]
pub async fn attended(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(reference): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let b = booking::mark(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        &reference,
        booking::BookingStatus::Attended,
    )
    .await?;
    booking_json(&state, &b).await
}

/// Marks a booking NO_SHOW once its slot has started.
#[utoipa::path(post, path = "/api/v1/bookings/{reference}/no-show", tag = "bookings",
    params(("reference" = String, Path, description = "The booking's reference")),
    responses(
        (status = 200, description = "The booking, NO_SHOW", body = BookingJson),
        (status = 409, description = "`booking_cancelled`, `slot_not_started`, `booking_held` (a place only held for a waiting customer): it cannot be marked", body = super::doc::ErrorBody),
    ))]
pub async fn no_show(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(reference): ApiPath<String>,
) -> Result<impl IntoResponse, ApiError> {
    let b = booking::mark(
        &state.db,
        &caller.actor(),
        caller.merchant_id,
        &reference,
        booking::BookingStatus::NoShow,
    )
    .await?;
    booking_json(&state, &b).await
}
