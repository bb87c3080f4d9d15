//! A service's weekly schedule in one store (the rules that make its slots) and the store's staff.
//! The schedule form always re-submits the whole rule list: `schedule::replace_rules` replaces
//! the rules and re-materialises the slots, and the page shows what that did.

use std::collections::BTreeMap;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::catalog::{self, Sku, UnitType};
use crate::domain::schedule::{self, KeptSlot, MaterializeReport, Rule, RuleInput, WEEKDAYS};
use crate::domain::scope::Role;
use crate::domain::slots;
use crate::domain::staff::{self as members, Staff};
use crate::domain::tenants::{self, Store};
use crate::domain::validate::{self};
use crate::domain::{DomainError, FieldError, Scope};
use crate::messages;
use crate::web::auth::CurrentUser;
use crate::web::error::WebError;
use crate::web::flash::FlashKind;
use crate::web::ids::PathId;
use crate::web::layout::Layout;
use crate::web::page::PageCtx;
use crate::web::view::store::{self, ctx_of_store, no_store_page, writer, StoreCtx};
use crate::web::view::{link, verdicts, Errs, Opt};
use crate::web::AppState;
// Used by the templates: `fix.link()`.
use crate::web::view::links::FixLink;

// ---------- the service schedule ----------

#[derive(Deserialize, Default)]
pub struct StoreQuery {
    #[serde(default)]
    store: String,
}

/// A rule as the table shows it: the days that share the same hours, on one line. The days are
/// weekday codes (MON…SUN): the template names them in the page's language.
pub struct RuleLine {
    pub days: Vec<&'static str>,
    pub opens: String,
    pub closes: String,
    pub slot_minutes: i64,
    pub capacity: i64,
    pub staff: String,
}

pub struct DayBox {
    pub code: &'static str,
    pub checked: bool,
}

/// One line of the schedule form.
pub struct RuleRow {
    pub index: usize,
    pub days: Vec<DayBox>,
    pub opens: String,
    pub closes: String,
    pub slot_minutes: String,
    pub capacity: String,
    pub staff: Vec<Opt>,
    pub staff_name: String,
    pub remove: bool,
    /// By short field name: weekdays, opens, closes, slot_minutes, capacity, staff.
    pub errors: Vec<FieldError>,
}

impl RuleRow {
    pub fn err(&self, field: &str) -> Option<&str> {
        self.errors
            .iter()
            .find(|e| e.field == field)
            .map(|e| e.message.as_str())
    }
    fn blank(&self) -> bool {
        self.days.iter().all(|d| !d.checked)
            && self.opens.trim().is_empty()
            && self.closes.trim().is_empty()
    }
}

pub struct KeptView {
    pub slot_id: i64,
    pub time: String,
    pub booked: i64,
}

pub struct ReportView {
    pub created: usize,
    pub removed: usize,
    pub capacity_changed: usize,
    pub kept: Vec<KeptView>,
    /// Slots whose capacity staff set by hand: kept as set, listed so staff can review them.
    pub kept_edited: Vec<KeptView>,
}

#[derive(Template)]
#[template(path = "admin/slots/schedule.html")]
struct SchedulePage {
    layout: Layout,
    /// Whether the service can be booked now, and why not.
    verdicts: Vec<crate::domain::sellable::Verdict>,
    ctx: StoreCtx,
    sku: Sku,
    product_name: String,
    lines: Vec<RuleLine>,
    rows: Vec<RuleRow>,
    errors: Errs,
    report: Option<ReportView>,
    window_days: i64,
}

fn staff_opts(staff: &[Staff], chosen: &str) -> Vec<Opt> {
    staff
        .iter()
        .map(|s| Opt {
            value: s.name.clone(),
            label: s.name.clone(),
            selected: s.name == chosen,
        })
        .collect()
}

fn staff_name(staff: &[Staff], id: Option<i64>) -> String {
    match id {
        None => String::new(),
        Some(id) => staff
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| format!("#{id}")),
    }
}

/// A line of the form as typed (or as stored, when the page first shows).
#[derive(Default)]
struct Typed<'a> {
    days: Vec<&'a str>,
    opens: String,
    closes: String,
    slot_minutes: String,
    capacity: String,
    staff_name: String,
}

fn row(index: usize, t: Typed<'_>, staff: &[Staff]) -> RuleRow {
    RuleRow {
        index,
        days: WEEKDAYS
            .iter()
            .map(|code| DayBox {
                code,
                checked: t.days.contains(code),
            })
            .collect(),
        opens: t.opens,
        closes: t.closes,
        slot_minutes: t.slot_minutes,
        capacity: t.capacity,
        staff: staff_opts(staff, &t.staff_name),
        staff_name: t.staff_name,
        remove: false,
        errors: Vec::new(),
    }
}

/// The empty line at the end of the form, with the usual hour-long single place.
fn blank_row(index: usize, staff: &[Staff]) -> RuleRow {
    let t = Typed {
        slot_minutes: "60".into(),
        capacity: "1".into(),
        ..Typed::default()
    };
    row(index, t, staff)
}

/// Stored rules (one per weekday) grouped back into lines: days with the same hours, length,
/// capacity and staff member share a line, in the order they first appear.
fn grouped(rules: &[Rule]) -> Vec<(Vec<&'static str>, &Rule)> {
    let mut out: Vec<(Vec<&'static str>, &Rule)> = Vec::new();
    for r in rules {
        let same = |o: &Rule| {
            (
                o.opens_min,
                o.closes_min,
                o.slot_minutes,
                o.capacity,
                o.staff_id,
            ) == (
                r.opens_min,
                r.closes_min,
                r.slot_minutes,
                r.capacity,
                r.staff_id,
            )
        };
        match out.iter_mut().find(|(_, o)| same(o)) {
            Some((days, _)) => days.push(r.weekday_label()),
            None => out.push((vec![r.weekday_label()], r)),
        }
    }
    out
}

fn lines_of(rules: &[Rule], staff: &[Staff]) -> Vec<RuleLine> {
    grouped(rules)
        .into_iter()
        .map(|(days, r)| RuleLine {
            days,
            opens: r.opens(),
            closes: r.closes(),
            slot_minutes: r.slot_minutes,
            capacity: r.capacity,
            staff: staff_name(staff, r.staff_id),
        })
        .collect()
}

fn rows_of(rules: &[Rule], staff: &[Staff]) -> Vec<RuleRow> {
    let mut rows: Vec<RuleRow> = grouped(rules)
        .into_iter()
        .enumerate()
        .map(|(i, (days, r))| {
            let t = Typed {
                days,
                opens: r.opens(),
                closes: r.closes(),
                slot_minutes: r.slot_minutes.to_string(),
                capacity: r.capacity.to_string(),
                staff_name: staff_name(staff, r.staff_id),
            };
            row(i, t, staff)
        })
        .collect();
    rows.push(blank_row(rows.len(), staff));
    rows
}

fn report_view(report: &MaterializeReport, store: &Store) -> ReportView {
    let views = |kept: &[KeptSlot]| {
        kept.iter()
            .map(|k| KeptView {
                slot_id: k.slot_id,
                time: validate::rfc3339_opt("starts_at", Some(&k.starts_at))
                    .ok()
                    .flatten()
                    .map(|t| crate::web::view::time::when(t, store.tz()))
                    .unwrap_or_else(|| k.starts_at.clone()),
                booked: k.booked,
            })
            .collect()
    };
    ReportView {
        created: report.created,
        removed: report.removed,
        capacity_changed: report.capacity_changed,
        kept: views(&report.kept_with_bookings),
        kept_edited: views(&report.kept_edited),
    }
}

/// The service SKU (slots only) and the store its schedule is edited for.
async fn load(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
    store_param: &str,
) -> Result<(Sku, StoreCtx), WebError> {
    let sku = catalog::sku_by_id(&state.db, user.actor("").scope(), id).await?;
    if sku.unit_type != UnitType::Slot {
        return Err(DomainError::NotFound("service").into());
    }
    let path = format!("/admin/services/{}/schedule", sku.id);
    let mut ctx = store::ctx(state, user, store_param, "schedule", &path).await?;
    if ctx.store.is_none() && user.0.role() == Role::Operator {
        // From a product page an operator arrives without a store: the SKU's merchant's first.
        let stores = tenants::stores(&state.db, Scope::Merchant(sku.merchant_id)).await?;
        if let Some(first) = stores.into_iter().next() {
            ctx = ctx_of_store(state, user, first, "schedule", &path).await?;
        }
    }
    if ctx
        .store
        .as_ref()
        .is_some_and(|s| s.merchant_id != sku.merchant_id)
    {
        return Err(DomainError::NotFound("service").into());
    }
    Ok((sku, ctx))
}

async fn schedule_page(
    state: &AppState,
    cx: &PageCtx,
    sku: Sku,
    ctx: StoreCtx,
    store: &Store,
) -> Result<SchedulePage, WebError> {
    let verdicts = verdicts::of_sku(state, &sku).await?;
    let staff = members::staff_of_store(&state.db, store.merchant_id, store.id).await?;
    let rules = schedule::rules_of(&state.db, sku.id, store.id).await?;
    let product =
        catalog::get_product(&state.db, Scope::Merchant(sku.merchant_id), sku.product_id).await?;
    Ok(SchedulePage {
        layout: cx.layout().await,
        verdicts,
        ctx,
        sku,
        product_name: product.product.name,
        lines: lines_of(&rules, &staff),
        rows: rows_of(&rules, &staff),
        errors: Errs::default(),
        report: None,
        window_days: state.config.slot_window_days,
    })
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let (sku, ctx) = load(&state, &cx.user, id, &q.store).await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let page = schedule_page(&state, &cx, sku, ctx, &store).await?;
    cx.whole(&page)
}

/// The form's rows from `rules[i].field` pairs; weekdays repeat, one pair per ticked box.
fn parse_rows(pairs: &[(String, String)], staff: &[Staff]) -> Vec<RuleRow> {
    let mut by_index: BTreeMap<usize, Vec<(&str, &str)>> = BTreeMap::new();
    for (k, v) in pairs {
        let Some(rest) = k.strip_prefix("rules[") else {
            continue;
        };
        let Some((i, field)) = rest.split_once("].") else {
            continue;
        };
        if let Ok(i) = i.parse::<usize>() {
            // A bounded form: ignore absurd indices rather than allocate for them.
            if i < 200 {
                by_index.entry(i).or_default().push((field, v.as_str()));
            }
        }
    }
    by_index
        .into_values()
        .enumerate()
        .map(|(i, fields)| {
            let get = |name: &str| {
                fields
                    .iter()
                    .find(|(f, _)| *f == name)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_default()
            };
            let days: Vec<&str> = fields
                .iter()
                .filter(|(f, _)| *f == "weekdays")
                .map(|(_, v)| *v)
                .collect();
            let t = Typed {
                days,
                opens: get("opens"),
                closes: get("closes"),
                slot_minutes: get("slot_minutes"),
                capacity: get("capacity"),
                staff_name: get("staff"),
            };
            let mut r = row(i, t, staff);
            r.remove = get("remove") == "1";
            r
        })
        .collect()
}

fn whole_number(
    raw: &str,
    field: &str,
    errors: &mut Vec<FieldError>,
    message: impl Fn() -> String,
) -> i64 {
    match validate::typed_int(raw) {
        Some(n) => n,
        None => {
            errors.push(FieldError::new(field, "invalid_number", message()));
            0
        }
    }
}

/// The rule inputs of the kept lines, numbering them anew; None when a number did not parse
/// (the line says which).
fn rule_inputs(rows: &mut [RuleRow]) -> Option<Vec<RuleInput>> {
    let mut inputs = Vec::new();
    let mut bad = false;
    for (i, r) in rows.iter_mut().enumerate() {
        r.index = i;
        let slot_minutes = whole_number(
            &r.slot_minutes,
            "slot_minutes",
            &mut r.errors,
            messages::bad_slot_length,
        );
        let capacity = whole_number(&r.capacity, "capacity", &mut r.errors, || {
            messages::bad_capacity(slots::CAPACITY_MAX)
        });
        bad |= !r.errors.is_empty();
        inputs.push(RuleInput {
            weekdays: r
                .days
                .iter()
                .filter(|d| d.checked)
                .map(|d| d.code.to_string())
                .collect(),
            opens: r.opens.clone(),
            closes: r.closes.clone(),
            slot_minutes,
            capacity,
            staff: Some(r.staff_name.clone()).filter(|s| !s.trim().is_empty()),
        });
    }
    (!bad).then_some(inputs)
}

/// Puts each error beside its line ("rules[2].opens" beside line 2's opening time) and returns
/// the rest, shown above the form.
fn place_errors(rows: &mut [RuleRow], errors: Vec<FieldError>) -> Vec<FieldError> {
    let mut others = Vec::new();
    for e in errors {
        let placed = e
            .field
            .strip_prefix("rules[")
            .and_then(|rest| rest.split_once("]."))
            .and_then(|(i, f)| Some((i.parse::<usize>().ok()?, f.to_string())));
        match placed.and_then(|(i, f)| rows.get_mut(i).map(|r| (r, f))) {
            Some((r, f)) => r.errors.push(FieldError::new(&f, e.code, e.message)),
            None => others.push(e),
        }
    }
    others
}

pub async fn save(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let store_param = pairs
        .iter()
        .find(|(k, _)| k == "store")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    let (sku, ctx) = load(&state, &cx.user, id, store_param).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let staff = members::staff_of_store(&state.db, merchant_id, store.id).await?;
    // Removed and blank lines drop out; the rest is the new rule list, in order.
    let mut rows: Vec<RuleRow> = parse_rows(&pairs, &staff)
        .into_iter()
        .filter(|r| !r.remove && !r.blank())
        .collect();
    let result = match rule_inputs(&mut rows) {
        None => Err(DomainError::Invalid(Vec::new())),
        Some(inputs) => {
            let actor = cx.actor(&format!("/admin/services/{}/schedule", sku.id));
            let window = state.config.slot_window_days;
            schedule::replace_rules(&state.db, &actor, merchant_id, &sku, &store, inputs, window)
                .await
        }
    };
    match result {
        Ok((_, report)) => {
            let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
            page.report = Some(report_view(&report, &store));
            cx.whole(&page)
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
            page.errors = Errs(place_errors(&mut rows, errors));
            let n = rows.len();
            rows.push(blank_row(n, &staff));
            page.rows = rows;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

// ---------- staff ----------

#[derive(Deserialize, Default, Clone)]
pub struct StaffForm {
    #[serde(default)]
    store: String,
    #[serde(default)]
    name: String,
}

#[derive(Template)]
#[template(path = "admin/slots/staff.html")]
struct StaffPage {
    layout: Layout,
    ctx: StoreCtx,
    staff: Vec<Staff>,
    name: String,
    errors: Errs,
}

pub async fn staff(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(&state, &cx.user, &q.store, "staff", "/admin/staff").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let page = StaffPage {
        layout: cx.layout().await,
        staff: members::staff_of_store(&state.db, store.merchant_id, store.id).await?,
        ctx,
        name: String::new(),
        errors: Errs::default(),
    };
    cx.whole(&page)
}

pub async fn add_staff(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<StaffForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let ctx = store::ctx(&state, &cx.user, &form.store, "staff", "/admin/staff").await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let actor = cx.actor("/admin/staff");
    match members::add_staff(&state.db, &actor, merchant_id, store.id, &form.name).await {
        Ok(added) => {
            cx.flash(FlashKind::Success, messages::staff_added(&added.name))
                .await;
            let to = link("/admin/staff", &[("store", &ctx.value)]);
            Ok(Redirect::to(&to).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let page = StaffPage {
                layout: cx.layout().await,
                staff: members::staff_of_store(&state.db, merchant_id, store.id).await?,
                ctx,
                name: form.name,
                errors: Errs(errors),
            };
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
