//! The dated parts of a service's schedule page: date overrides (a holiday without slots, an
//! event day with other hours) and one-off slots added from the back office.

use crate::web::kit::paths;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use chrono::NaiveDate;
use serde::Deserialize;

use crate::domain::catalog::Sku;
use crate::domain::slots::schedule::{self, overrides, WEEKDAYS};
use crate::domain::slots::staff::{self as members, Staff};
use crate::domain::slots::{self, OneOffInput};
use crate::domain::tenancy::tenants::Store;
use crate::domain::{kernel::validate, DomainError, FieldError};
use crate::messages;
use crate::web::admin::services::schedule::{load, report_view, schedule_page, staff_opts};
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::page::PageCtx;
use crate::web::view::store::writer;
use crate::web::view::{time, Errs, Opt};
use crate::web::AppState;

/// One opening range of an overridden date.
pub struct RangeView {
    pub opens: String,
    pub closes: String,
    pub slot_minutes: i64,
    pub capacity: i64,
    pub staff: String,
}

/// An overridden date: no slots (`ranges` empty), or its own ranges.
pub struct OverrideDay {
    pub iso: String,
    pub date: String,
    pub ranges: Vec<RangeView>,
}

/// The override form as typed (or its defaults).
pub struct OverrideForm {
    pub date: String,
    pub closed: bool,
    pub opens: String,
    pub closes: String,
    pub slot_minutes: String,
    pub buffer_minutes: String,
    pub capacity: String,
    pub staff: Vec<Opt>,
}

/// The one-off slot form as typed (or its defaults).
pub struct OneOffForm {
    pub date: String,
    pub time: String,
    pub minutes: String,
    pub capacity: String,
    pub staff: Vec<Opt>,
}

pub struct DatedView {
    pub days: Vec<OverrideDay>,
    pub form: OverrideForm,
    pub form_errors: Errs,
    pub one_off: OneOffForm,
    pub one_off_errors: Errs,
    /// Today in the store's timezone: the earliest date either form takes.
    pub today: String,
}

impl DatedView {
    /// The weekday code of an overridden date, for the template to name it.
    pub fn weekday(iso: &str) -> &'static str {
        time::parse_day(iso)
            .map(|d| WEEKDAYS[chrono::Datelike::weekday(&d).num_days_from_monday() as usize])
            .unwrap_or("")
    }
}

fn name_of(staff: &[Staff], id: Option<i64>) -> String {
    id.and_then(|id| staff.iter().find(|s| s.id == id))
        .map(|s| s.name.clone())
        .unwrap_or_default()
}

/// The upcoming overrides and empty forms.
pub async fn view(
    state: &AppState,
    sku: &Sku,
    store: &Store,
    staff: &[Staff],
) -> Result<DatedView, WebError> {
    let tz = store.tz();
    let today = state.db.clock.today(tz);
    let lang = crate::i18n::current();
    let mut days: Vec<OverrideDay> = Vec::new();
    for o in overrides::list(&state.db, sku.id, store.id, today).await? {
        let date = NaiveDate::parse_from_str(&o.on_date, time::DATE_FMT).ok();
        if days.last().map(|d| d.iso.as_str()) != Some(o.on_date.as_str()) {
            days.push(OverrideDay {
                iso: o.on_date.clone(),
                date: date
                    .map(|d| crate::i18n::format::day_long(lang, d))
                    .unwrap_or_else(|| o.on_date.clone()),
                ranges: Vec::new(),
            });
        }
        if let (Some(opens), Some(closes), Some(len), Some(cap), Some(day)) = (
            o.opens_min,
            o.closes_min,
            o.slot_minutes,
            o.capacity,
            days.last_mut(),
        ) {
            day.ranges.push(RangeView {
                opens: schedule::hhmm(opens),
                closes: schedule::hhmm(closes),
                slot_minutes: len,
                capacity: cap,
                staff: name_of(staff, o.staff_id),
            });
        }
    }
    Ok(DatedView {
        days,
        form: OverrideForm {
            date: String::new(),
            closed: true,
            opens: String::new(),
            closes: String::new(),
            slot_minutes: "60".into(),
            buffer_minutes: "0".into(),
            capacity: "1".into(),
            staff: staff_opts(staff, ""),
        },
        form_errors: Errs::default(),
        one_off: OneOffForm {
            date: String::new(),
            time: String::new(),
            minutes: "60".into(),
            capacity: "1".into(),
            staff: staff_opts(staff, ""),
        },
        one_off_errors: Errs::default(),
        today: today.format(time::DATE_FMT).to_string(),
    })
}

#[derive(Deserialize, Default)]
pub struct OverrideIn {
    #[serde(default)]
    store: String,
    #[serde(default)]
    date: String,
    /// "1": no slots that date; anything else: the hours below.
    #[serde(default)]
    closed: String,
    #[serde(default)]
    opens: String,
    #[serde(default)]
    closes: String,
    #[serde(default)]
    slot_minutes: String,
    #[serde(default)]
    buffer_minutes: String,
    #[serde(default)]
    capacity: String,
    #[serde(default)]
    staff: String,
}

/// A whole number of a form, or the field's error (pushed) and 0.
fn number(raw: &str, field: &str, errs: &mut Vec<FieldError>, message: String) -> i64 {
    validate::typed_int(raw).unwrap_or_else(|| {
        errs.push(FieldError::new(field, "invalid_number", message));
        0
    })
}

pub async fn add_override(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<OverrideIn>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (sku, ctx) = load(&state, &cx.user, id, &form.store).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let closed = form.closed == "1";
    let mut errs = Vec::new();
    if closed && !(form.opens.trim().is_empty() && form.closes.trim().is_empty()) {
        // "No slots" ticked with hours typed: which was meant is not ours to guess.
        errs.push(FieldError::new(
            "closed",
            "ambiguous",
            messages::override_closed_with_hours(),
        ));
    }
    if form.date.trim().is_empty() {
        errs.push(FieldError::new(
            "date",
            "required",
            messages::choose_a_date(),
        ));
    }
    let (mut slot_minutes, mut capacity, mut buffer_minutes) = (0, 0, 0);
    if !closed {
        slot_minutes = number(
            &form.slot_minutes,
            "slot_minutes",
            &mut errs,
            messages::bad_slot_length(),
        );
        capacity = number(
            &form.capacity,
            "capacity",
            &mut errs,
            messages::bad_capacity(slots::CAPACITY_MAX),
        );
        if !form.buffer_minutes.trim().is_empty() {
            buffer_minutes = number(
                &form.buffer_minutes,
                "buffer_minutes",
                &mut errs,
                messages::bad_buffer(schedule::BUFFER_MAX),
            );
        }
    }
    let result = if errs.is_empty() {
        let input = overrides::OverrideInput {
            date: form.date.clone(),
            closed,
            opens: form.opens.clone(),
            closes: form.closes.clone(),
            slot_minutes,
            capacity,
            staff: Some(form.staff.clone()).filter(|s| !s.trim().is_empty()),
            buffer_minutes,
        };
        let actor = cx.actor(&paths::service_schedule(sku.id));
        let window = state.config.serve.slot_window_days;
        overrides::add(&state.db, &actor, merchant_id, &sku, &store, input, window).await
    } else {
        Err(DomainError::Invalid(errs))
    };
    match result {
        Ok(report) => {
            let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
            page.report = Some(report_view(&report, &store));
            cx.whole(&page)
        }
        Err(DomainError::Invalid(errors)) => {
            let staff = members::staff_of_store(&state.db, merchant_id, store.id).await?;
            let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
            page.dated.form = OverrideForm {
                date: form.date,
                closed,
                opens: form.opens,
                closes: form.closes,
                slot_minutes: form.slot_minutes,
                buffer_minutes: form.buffer_minutes,
                capacity: form.capacity,
                staff: staff_opts(&staff, &form.staff),
            };
            page.dated.form_errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize, Default)]
pub struct DateIn {
    #[serde(default)]
    store: String,
    #[serde(default)]
    date: String,
}

pub async fn remove_override(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<DateIn>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (sku, ctx) = load(&state, &cx.user, id, &form.store).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let actor = cx.actor(&paths::service_schedule(sku.id));
    let window = state.config.serve.slot_window_days;
    let report = overrides::remove(
        &state.db,
        &actor,
        merchant_id,
        &sku,
        &store,
        &form.date,
        window,
    )
    .await?;
    let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
    page.report = Some(report_view(&report, &store));
    cx.whole(&page)
}

#[derive(Deserialize, Default)]
pub struct OneOffIn {
    #[serde(default)]
    store: String,
    #[serde(default)]
    date: String,
    #[serde(default)]
    time: String,
    #[serde(default)]
    minutes: String,
    #[serde(default)]
    capacity: String,
    #[serde(default)]
    staff: String,
}

/// The one-off form's fields as the domain's input, or the fields' errors.
async fn one_off_input(
    state: &AppState,
    store: &Store,
    form: &OneOffIn,
) -> Result<OneOffInput, DomainError> {
    let mut errs = Vec::new();
    let date = time::parse_day(&form.date);
    if form.date.trim().is_empty() {
        errs.push(FieldError::new(
            "date",
            "required",
            messages::choose_a_date(),
        ));
    } else if date.is_none() {
        errs.push(FieldError::new(
            "date",
            "invalid_date",
            messages::bad_time_or_date(&messages::label("date")),
        ));
    }
    let at = match schedule::parse_hhmm("time", &form.time) {
        Ok(m) if m < 1440 => Some(m),
        Ok(_) | Err(_) => {
            errs.push(FieldError::new(
                "time",
                "invalid_time",
                messages::bad_clock(&messages::label("starts_at")),
            ));
            None
        }
    };
    let minutes = number(
        &form.minutes,
        "minutes",
        &mut errs,
        messages::bad_slot_length(),
    );
    if minutes != 0 && !(5..=1440).contains(&minutes) {
        errs.push(FieldError::new(
            "minutes",
            "invalid_slot_length",
            messages::bad_slot_length(),
        ));
    }
    let capacity = number(
        &form.capacity,
        "capacity",
        &mut errs,
        messages::bad_capacity(slots::CAPACITY_MAX),
    );
    let staff = match form.staff.trim() {
        "" => None,
        name => match members::staff_by_name(&state.db, store.merchant_id, store.id, name).await? {
            Some(s) => Some(s),
            None => {
                errs.push(FieldError::new(
                    "staff",
                    "unknown_staff",
                    messages::unknown_staff(name),
                ));
                None
            }
        },
    };
    let starts_at = match (date, at) {
        (Some(d), Some(m)) => {
            let t = schedule::local_ms(store.tz(), d, m);
            if t.is_none() {
                // A wall-clock time skipped by a daylight-saving change.
                errs.push(FieldError::new(
                    "time",
                    "invalid_time",
                    messages::bad_clock(&messages::label("starts_at")),
                ));
            }
            t
        }
        _ => None,
    };
    match (starts_at, errs.is_empty()) {
        (Some(starts_at), true) => Ok(OneOffInput {
            starts_at,
            ends_at: starts_at + minutes * 60_000,
            capacity,
            staff,
        }),
        _ => Err(DomainError::Invalid(errs)),
    }
}

pub async fn add_slot(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<OneOffIn>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (sku, ctx) = load(&state, &cx.user, id, &form.store).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let result = match one_off_input(&state, &store, &form).await {
        Ok(input) => {
            let actor = cx.actor(&paths::service_schedule(sku.id));
            slots::create_one_off(&state.db, &actor, merchant_id, sku.id, &store, input).await
        }
        Err(e) => Err(e),
    };
    let errors = match result {
        Ok(slot) => {
            cx.flash(
                FlashKind::Success,
                messages::one_off_added(&time::when(slot.starts_at, store.tz())),
            )
            .await;
            return Ok(Redirect::to(&paths::slot(slot.id)).into_response());
        }
        // The domain names the instants; the form has a date, a time and a length.
        Err(DomainError::Invalid(errors)) => errors
            .into_iter()
            .map(|e| {
                let field = match e.field.as_str() {
                    "starts_at" => "date",
                    "ends_at" => "minutes",
                    other => other,
                };
                FieldError::new(field, e.code, e.message)
            })
            .collect(),
        Err(DomainError::Conflict { code, message, .. }) => {
            vec![FieldError::new("time", code, message)]
        }
        Err(e) => return Err(e.into()),
    };
    let staff = members::staff_of_store(&state.db, merchant_id, store.id).await?;
    let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
    page.dated.one_off = OneOffForm {
        date: form.date,
        time: form.time,
        minutes: form.minutes,
        capacity: form.capacity,
        staff: staff_opts(&staff, &form.staff),
    };
    page.dated.one_off_errors = Errs(errors);
    cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
}

#[derive(Deserialize, Default)]
pub struct StoreQuery {
    #[serde(default)]
    store: String,
}

/// The form addresses opened as pages (a refresh, the language switcher after a post) lead back
/// to the schedule page instead of a bare 405.
pub async fn back_to_schedule(
    PathId(id): PathId,
    axum::extract::Query(q): axum::extract::Query<StoreQuery>,
) -> Response {
    let to = crate::web::view::link(&paths::service_schedule(id), &[("store", q.store.as_str())]);
    Redirect::to(&to).into_response()
}
