//! A service's weekly schedule in one store (the rules that make its slots) and the store's staff.
//! The schedule form always re-submits the whole rule list: `schedule::replace_rules` replaces
//! the rules and re-materialises the slots, and the page shows what that did.

use crate::web::ids::PathId;
use std::collections::BTreeMap;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;
use tower_sessions::Session;

use super::slots::{ctx, ctx_of_store, no_store_page, query, writer, Ctx, Opt, DATETIME_FMT};
use super::Errs;
use crate::domain::catalog::{self, Sku};
use crate::domain::schedule::{self, MaterializeReport, Rule, RuleInput, Staff, WEEKDAYS};
use crate::domain::scope::Role;
use crate::domain::tenants::{self, Store};
use crate::domain::validate::{self, ms_to_local};
use crate::domain::{DomainError, FieldError, Scope};
use crate::messages;
use crate::web::auth::CurrentUser;
use crate::web::error::WebError;
use crate::web::flash;
use crate::web::layout::Layout;
use crate::web::AppState;

// ---------- the service schedule ----------

#[derive(Deserialize, Default)]
pub struct StoreQuery {
    #[serde(default)]
    store: String,
}

/// A rule as the table shows it: the days that share the same hours, on one line.
pub struct RuleLine {
    pub days: String,
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
    ctx: Ctx,
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

#[allow(clippy::too_many_arguments)]
fn row(
    index: usize,
    days: &[&str],
    opens: String,
    closes: String,
    slot_minutes: String,
    capacity: String,
    staff_name: String,
    staff: &[Staff],
) -> RuleRow {
    RuleRow {
        index,
        days: WEEKDAYS
            .iter()
            .map(|code| DayBox {
                code,
                checked: days.contains(code),
            })
            .collect(),
        opens,
        closes,
        slot_minutes,
        capacity,
        staff: staff_opts(staff, &staff_name),
        staff_name,
        remove: false,
        errors: Vec::new(),
    }
}

fn blank_row(index: usize, staff: &[Staff]) -> RuleRow {
    row(
        index,
        &[],
        String::new(),
        String::new(),
        "60".into(),
        "1".into(),
        String::new(),
        staff,
    )
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
            days: days.join(" "),
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
            row(
                i,
                &days,
                r.opens(),
                r.closes(),
                r.slot_minutes.to_string(),
                r.capacity.to_string(),
                staff_name(staff, r.staff_id),
                staff,
            )
        })
        .collect();
    rows.push(blank_row(rows.len(), staff));
    rows
}

fn report_view(report: &MaterializeReport, store: &Store) -> ReportView {
    let views = |kept: &[crate::domain::schedule::KeptSlot]| {
        kept.iter()
            .map(|k| KeptView {
                slot_id: k.slot_id,
                time: validate::rfc3339_opt("starts_at", Some(&k.starts_at))
                    .ok()
                    .flatten()
                    .map(|t| ms_to_local(t, store.tz(), DATETIME_FMT))
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
) -> Result<(Sku, Ctx), WebError> {
    let sku = catalog::sku_by_id(&state.db, user.actor("").scope(), id).await?;
    if sku.unit_type != "slot" {
        return Err(DomainError::NotFound("service").into());
    }
    let path = format!("/admin/services/{}/schedule", sku.id);
    let mut ctx = ctx(state, user, store_param, "schedule", &path).await?;
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
    user: &CurrentUser,
    session: &Session,
    sku: Sku,
    ctx: Ctx,
    store: &Store,
) -> Result<SchedulePage, WebError> {
    let verdicts = super::sellable::verdicts_of_sku(state, &sku).await?;
    let staff = schedule::staff_of_store(&state.db, store.merchant_id, store.id).await?;
    let rules = schedule::rules_of(&state.db, sku.id, store.id).await?;
    let product =
        catalog::get_product(&state.db, Scope::Merchant(sku.merchant_id), sku.product_id).await?;
    Ok(SchedulePage {
        layout: Layout::new(user, session, "/admin/slots").await,
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
    user: CurrentUser,
    session: Session,
    PathId(id): PathId,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let (sku, ctx) = load(&state, &user, id, &q.store).await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&user, &session, ctx).await;
    };
    let page = schedule_page(&state, &user, &session, sku, ctx, &store).await?;
    Ok(Html(page.render()?).into_response())
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
            let mut r = row(
                i,
                &days,
                get("opens"),
                get("closes"),
                get("slot_minutes"),
                get("capacity"),
                get("staff"),
                staff,
            );
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
    match raw.trim().parse::<i64>() {
        Ok(n) => n,
        Err(_) => {
            errors.push(FieldError::new(field, "invalid_number", message()));
            0
        }
    }
}

pub async fn save(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    PathId(id): PathId,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let store_param = pairs
        .iter()
        .find(|(k, _)| k == "store")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    let (sku, ctx) = load(&state, &user, id, store_param).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let staff = schedule::staff_of_store(&state.db, merchant_id, store.id).await?;

    // Removed and blank lines drop out; the rest is the new rule list, in order.
    let mut rows: Vec<RuleRow> = parse_rows(&pairs, &staff)
        .into_iter()
        .filter(|r| !r.remove && !r.blank())
        .collect();
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
            messages::bad_capacity(schedule::CAPACITY_MAX)
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
    let result = if bad {
        Err(DomainError::Invalid(Vec::new()))
    } else {
        let actor = user.actor(&format!("/admin/services/{}/schedule", sku.id));
        let window = state.config.slot_window_days;
        schedule::replace_rules(&state.db, &actor, merchant_id, &sku, &store, inputs, window).await
    };
    match result {
        Ok((_, report)) => {
            let mut page = schedule_page(&state, &user, &session, sku, ctx, &store).await?;
            page.report = Some(report_view(&report, &store));
            Ok(Html(page.render()?).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            // "rules[2].opens" goes beside line 2's opening time; anything else above the form.
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
            let mut page = schedule_page(&state, &user, &session, sku, ctx, &store).await?;
            let n = rows.len();
            rows.push(blank_row(n, &staff));
            page.rows = rows;
            page.errors = Errs(others);
            Ok((StatusCode::UNPROCESSABLE_ENTITY, Html(page.render()?)).into_response())
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
    ctx: Ctx,
    staff: Vec<Staff>,
    name: String,
    errors: Errs,
}

pub async fn staff(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let ctx = ctx(&state, &user, &q.store, "staff", "/admin/staff").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&user, &session, ctx).await;
    };
    let page = StaffPage {
        layout: Layout::new(&user, &session, "/admin/staff").await,
        staff: schedule::staff_of_store(&state.db, store.merchant_id, store.id).await?,
        ctx,
        name: String::new(),
        errors: Errs::default(),
    };
    Ok(Html(page.render()?).into_response())
}

pub async fn add_staff(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    Form(form): Form<StaffForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let ctx = ctx(&state, &user, &form.store, "staff", "/admin/staff").await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let actor = user.actor("/admin/staff");
    match schedule::add_staff(&state.db, &actor, merchant_id, store.id, &form.name).await {
        Ok(added) => {
            flash::push(&session, "success", messages::staff_added(&added.name)).await;
            Ok(
                Redirect::to(&format!("/admin/staff?{}", query(&[("store", &ctx.value)])))
                    .into_response(),
            )
        }
        Err(DomainError::Invalid(errors)) => {
            let page = StaffPage {
                layout: Layout::new(&user, &session, "/admin/staff").await,
                staff: schedule::staff_of_store(&state.db, merchant_id, store.id).await?,
                ctx,
                name: form.name,
                errors: Errs(errors),
            };
            Ok((StatusCode::UNPROCESSABLE_ENTITY, Html(page.render()?)).into_response())
        }
        Err(e) => Err(e.into()),
    }
}
