//! Staff, weekly schedules and slots through the API: a service's hours, its slots listed,
//! one-off slots, capacity, closing and opening.

#[allow(unused_imports)]
use super::*;

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"store": "jingan", "name": "Mei"}))]
pub struct StaffBody {
    /// The store's slug (may be left out when the merchant has one).
    pub(super) store: Option<String>,
    #[serde(default)]
    pub(super) name: String,
}

/// A staff member slots can be given to.
#[derive(Serialize, utoipa::ToSchema)]
pub struct StaffJson {
    pub(super) id: i64,
    pub(super) name: String,
    pub(super) store: String,
}

/// Adds a staff member to a store.
#[utoipa::path(post, path = "/api/v1/staff", tag = "slots",
    request_body = StaffBody,
    responses(
        (status = 201, description = "The staff member", body = StaffJson),
        (status = 409, description = "`duplicate_staff`: the store already has someone of that name", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`, `unknown_store`: a field is refused", body = crate::web::api::doc::ErrorBody),
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
    pub(super) weekdays: Vec<String>,
    /// `HH:MM`.
    #[serde(default)]
    pub(super) opens: String,
    #[serde(default)]
    pub(super) closes: String,
    #[serde(default)]
    #[schema(value_type = i64)]
    pub(super) slot_minutes: Value,
    #[serde(default)]
    #[schema(value_type = i64)]
    pub(super) capacity: Value,
    /// A staff member's name: the slots are theirs.
    pub(super) staff: Option<String>,
    /// A break after each slot before the next starts, in minutes (0–240; default 0).
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    pub(super) buffer_minutes: Value,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"store": "jingan", "rules": [{"weekdays": ["MON", "TUE"], "opens": "10:00",
    "closes": "18:00", "slot_minutes": 60, "capacity": 4, "staff": "Mei"}]}))]
pub struct ScheduleBody {
    pub(super) store: Option<String>,
    #[serde(default)]
    pub(super) rules: Vec<RuleBody>,
}

/// What a schedule save did to the slots of the window.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ScheduleJson {
    pub(super) sku: String,
    pub(super) store: String,
    pub(super) rules: Vec<RuleJson>,
    pub(super) created: i64,
    pub(super) removed: i64,
    pub(super) capacity_changed: i64,
    /// Slots the new rules no longer make, kept because they hold bookings.
    pub(super) kept_with_bookings: Vec<schedule::KeptSlot>,
    /// Slots whose capacity was set by hand, kept as they are.
    pub(super) kept_edited: Vec<schedule::KeptSlot>,
    /// Slots the new rules no longer make, taken off sale but kept (closed) because history
    /// refers to them: a waiting list, a cancelled or moved booking, a finding. Also in `removed`.
    pub(super) kept_closed: Vec<schedule::KeptSlot>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct RuleJson {
    pub(super) weekday: &'static str,
    pub(super) opens: String,
    pub(super) closes: String,
    pub(super) slot_minutes: i64,
    pub(super) capacity: i64,
    pub(super) staff_id: Option<i64>,
    pub(super) buffer_minutes: i64,
}

/// Replaces a service's weekly schedule at a store and brings the window's slots in line
/// (slots with bookings, and capacities edited by hand, are kept).
#[utoipa::path(post, path = "/api/v1/services/{sku}/schedule", tag = "slots",
    params(("sku" = String, Path, description = "The service SKU's code")),
    request_body = ScheduleBody,
    responses(
        (status = 200, description = "The rules and what changed", body = ScheduleJson),
        (status = 422, description = "`required`, `invalid_weekday`, `invalid_time`, `invalid_period`, `overlapping_rule`, `invalid_slot_length`, `invalid_buffer`, `invalid_capacity`, `unknown_staff`, `unknown_store`, `wrong_sku_kind`, `unknown_sku`, `too_many`: a rule is refused (see `fields`)", body = crate::web::api::doc::ErrorBody),
        (status = 409, description = "`staff_archived`: a person the rules name was archived while they were being saved (nothing is saved)", body = crate::web::api::doc::ErrorBody),
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
    pub(super) from: Option<String>,
    /// An RFC 3339 time or a date (the end of that day); left out: 14 days after `from`.
    pub(super) to: Option<String>,
    /// A store's slug; left out: every store.
    pub(super) store: Option<String>,
}

/// A service's slots in a period.
#[utoipa::path(get, path = "/api/v1/services/{sku}/slots", tag = "slots",
    params(("sku" = String, Path, description = "The service SKU's code"), SlotsQuery),
    responses(
        (status = 200, description = "The slots, by start", body = Vec<SlotJson>),
        (status = 422, description = "`invalid_time`, `invalid_period`, `unknown_store`, `wrong_sku_kind`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn list_slots(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(sku): ApiPath<String>,
    ApiQuery(q): ApiQuery<SlotsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let sku = schedule::service_sku(&state.db, caller.merchant_id, &sku, "sku")
        .await
        .map_err(crate::web::api::unknown_sku_is_404("service"))?;
    let (store, tz) = store_and_tz(&state, caller.merchant_id, q.store.as_deref()).await?;
    let mut errs = validate::Errors::default();
    let (from, to) = crate::web::api::period(&mut errs, q.from.as_deref(), q.to.as_deref(), tz);
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
    pub(super) sku: String,
    pub(super) store: Option<String>,
    /// RFC 3339.
    #[serde(default)]
    pub(super) starts_at: String,
    #[serde(default)]
    pub(super) ends_at: String,
    #[serde(default)]
    #[schema(value_type = i64)]
    pub(super) capacity: Value,
    pub(super) staff: Option<String>,
}

pub(super) async fn staff_named(
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
        (status = 409, description = "`slot_exists`, `slot_overlap`: a slot of this service and staff already takes that time; `staff_archived`: the person was archived meanwhile", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `invalid_time`, `invalid_period`, `invalid_capacity`, `unknown_staff`, `unknown_store`, `unknown_sku`, `wrong_sku_kind`, `slot_in_past`: a field is refused", body = crate::web::api::doc::ErrorBody),
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
    pub(super) capacity: Value,
}

/// Sets a slot's capacity by hand.
#[utoipa::path(patch, path = "/api/v1/slots/{id}", tag = "slots",
    params(("id" = i64, Path, description = "The slot's id")),
    request_body = CapacityBody,
    responses(
        (status = 200, description = "The slot", body = SlotJson),
        (status = 409, description = "`capacity_below_booked`, `slot_started`: the capacity cannot change", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`invalid_capacity`, `capacity_below_booked`: the capacity is refused", body = crate::web::api::doc::ErrorBody),
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
    pub(super) reason: String,
}

/// A closed slot, with the bookings it still holds (to call).
#[derive(Serialize, utoipa::ToSchema)]
pub struct ClosedSlotJson {
    #[serde(flatten)]
    pub(super) slot: SlotJson,
    pub(super) bookings_to_contact: Vec<ContactJson>,
}

/// Closes a slot: nobody can book it; its bookings are listed to call.
#[utoipa::path(post, path = "/api/v1/slots/{id}/close", tag = "slots",
    params(("id" = i64, Path, description = "The slot's id")),
    request_body = ReasonBody,
    responses(
        (status = 200, description = "The slot, CLOSED", body = ClosedSlotJson),
        (status = 409, description = "`slot_started`: a slot that has started is not closed", body = crate::web::api::doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`: the reason is refused", body = crate::web::api::doc::ErrorBody),
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
        (status = 409, description = "`slot_started`: it stays closed", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn open_slot(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<impl IntoResponse, ApiError> {
    let slot = slots::open(&state.db, &caller.actor(), caller.merchant_id, id).await?;
    Ok(Json(SlotJson::of(&slot, state.db.now_ms())))
}
