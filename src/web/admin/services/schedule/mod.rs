//! A service's schedule in one store: the weekly editor (one row per weekday, several opening
//! ranges a day, copy a day to others, preview before saving), date overrides and one-off slots
//! (`dated`), and the store's staff (`staff`). The editor always re-submits the whole rule list:
//! `schedule::replace_rules` replaces the rules and re-materialises the slots, and the page shows
//! what that did; a preview shows the same before anything is written.

pub mod dated;
pub mod list;
pub mod staff;

pub use staff::{add_staff, change_member, staff};

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use std::collections::BTreeMap;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Form;
use serde::Deserialize;

use crate::domain::catalog::{self, Sku, UnitType};
use crate::domain::kernel::scope::Role;
use crate::domain::kernel::validate::{self};
use crate::domain::slots;
use crate::domain::slots::schedule::preview::{self, Preview};
use crate::domain::slots::schedule::{
    self, KeptSlot, MaterializeReport, Rule, RuleInput, WEEKDAYS,
};
use crate::domain::slots::staff::{self as members, Staff};
use crate::domain::tenancy::tenants::{self, Store};
use crate::domain::{DomainError, FieldError, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::store::{self, ctx_of_store, no_store_page, writer, StoreCtx};
use crate::web::view::{time, verdicts, Errs, Opt};
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
    pub buffer_minutes: i64,
    pub capacity: i64,
    pub staff: String,
}

/// One opening range of the editor: one weekday, its hours, slot length, places and person.
pub struct RuleRow {
    pub index: usize,
    /// The weekday code (MON…SUN), or empty for a line posted without one.
    pub day: &'static str,
    pub opens: String,
    pub closes: String,
    pub slot_minutes: String,
    pub buffer_minutes: String,
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
    pub fn blank(&self) -> bool {
        self.opens.trim().is_empty() && self.closes.trim().is_empty()
    }
    /// Whether a field has an error (marks the input invalid).
    pub fn bad(&self, field: &str) -> bool {
        self.err(field).is_some()
    }

    /// The minutes at the end of the range that fit no whole slot (09:00–11:30 in 60-minute
    /// slots leaves 11:00–11:30 free), as (from, minutes); None when the range is used to its
    /// end or cannot be read. Said beside the range, so that nobody wonders where 11:00 went.
    pub fn unused_tail(&self) -> Option<(String, i64)> {
        let minute = |raw: &str| {
            chrono::NaiveTime::parse_from_str(raw.trim(), "%H:%M")
                .ok()
                .map(|t| i64::from(chrono::Timelike::hour(&t) * 60 + chrono::Timelike::minute(&t)))
        };
        let opens = minute(&self.opens)?;
        let closes = match minute(&self.closes)? {
            0 => 1440,
            m => m,
        };
        let slot: i64 = self.slot_minutes.trim().parse().ok().filter(|m| *m > 0)?;
        let buffer: i64 = self.buffer_minutes.trim().parse().unwrap_or(0).max(0);
        if closes - opens < slot {
            return None;
        }
        let step = slot + buffer;
        let last_end = opens + (closes - opens - slot) / step * step + slot;
        let tail = closes - last_end;
        (tail > buffer).then(|| (schedule_hhmm(last_end), tail))
    }
}

/// Minutes after midnight as the editor writes them ("11:00").
fn schedule_hhmm(m: i64) -> String {
    format!("{:02}:{:02}", m / 60 % 24, m % 60)
}

pub struct KeptView {
    pub slot_id: i64,
    pub time: String,
    pub booked: i64,
}

/// What a save did (`report`) or a preview would do: the counts, then the slots kept as they are
/// and why.
pub struct ReportView {
    pub created: usize,
    pub removed: usize,
    pub capacity_changed: usize,
    pub kept: Vec<KeptView>,
    /// Slots whose capacity staff set by hand: kept as set, listed so staff can review them.
    pub kept_edited: Vec<KeptView>,
    /// Slots holding more places than the new capacity: kept at their capacity.
    pub kept_full: Vec<KeptView>,
    /// Slots off sale but kept, closed, because history refers to them (save only).
    pub kept_closed: Vec<KeptView>,
    /// Of the created, those born closed by a closure (leave).
    pub created_closed: usize,
    /// Unbooked slots that took the new slot length.
    pub length_changed: usize,
    /// Times not made because a slot that stays covers them for the same person (each links to
    /// the slot in the way).
    pub blocked: Vec<KeptView>,
}

/// A date of the preview with something to change.
pub struct PreviewDayView {
    pub date: String,
    pub iso: String,
    pub created: usize,
    pub removed: usize,
    pub capacity_changed: usize,
}

pub struct PreviewView {
    pub report: ReportView,
    pub unchanged: usize,
    pub days: Vec<PreviewDayView>,
}

/// The weekday fieldsets of the editor, in order, with the localised day name.
pub struct DayGroup {
    pub code: &'static str,
}

#[derive(Template)]
#[template(path = "admin/slots/schedule.html")]
pub struct SchedulePage {
    layout: Layout,
    /// Whether the service can be booked now, and why not.
    verdicts: Vec<crate::domain::sellable::Verdict>,
    ctx: StoreCtx,
    sku: Sku,
    product_name: String,
    lines: Vec<RuleLine>,
    days: Vec<DayGroup>,
    rows: Vec<RuleRow>,
    errors: Errs,
    report: Option<ReportView>,
    preview: Option<PreviewView>,
    /// Set after "copy a day": the day copied and the days it went to, not saved yet.
    copied: Option<(&'static str, Vec<&'static str>)>,
    window_days: i64,
    pub(super) dated: dated::DatedView,
}

impl SchedulePage {
    /// Whether a weekday has any opening range in the editor (otherwise it says "Closed").
    pub fn day_open(&self, code: &str) -> bool {
        self.rows.iter().any(|r| r.day == code && !r.blank())
    }
    /// "Mon copied to Tue, Wed" in the page's language.
    pub fn copied_text(&self) -> String {
        let Some((from, to)) = &self.copied else {
            return String::new();
        };
        let lang = self.layout.lang;
        let day = |d: &str| lang.t1("rules-weekday", "day", d.to_string());
        let to: Vec<String> = to.iter().map(|d| day(d)).collect();
        lang.t_args(
            "rules-copied",
            &[
                ("from", crate::i18n::Arg::from(day(from))),
                (
                    "to",
                    crate::i18n::Arg::from(to.join(&lang.t("rules-day-sep"))),
                ),
            ],
        )
    }
}

/// The staff members as choices; the template adds "Anyone" first.
pub(super) fn staff_opts(staff: &[Staff], chosen: &str) -> Vec<Opt> {
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
#[derive(Default, Clone)]
struct Typed {
    day: &'static str,
    opens: String,
    closes: String,
    slot_minutes: String,
    buffer_minutes: String,
    capacity: String,
    staff_name: String,
}

fn row(index: usize, t: Typed, staff: &[Staff]) -> RuleRow {
    RuleRow {
        index,
        day: t.day,
        opens: t.opens,
        closes: t.closes,
        slot_minutes: t.slot_minutes,
        buffer_minutes: t.buffer_minutes,
        capacity: t.capacity,
        staff: staff_opts(staff, &t.staff_name),
        staff_name: t.staff_name,
        remove: false,
        errors: Vec::new(),
    }
}

fn typed_of(r: &RuleRow) -> Typed {
    Typed {
        day: r.day,
        opens: r.opens.clone(),
        closes: r.closes.clone(),
        slot_minutes: r.slot_minutes.clone(),
        buffer_minutes: r.buffer_minutes.clone(),
        capacity: r.capacity.clone(),
        staff_name: r.staff_name.clone(),
    }
}

fn weekday_code(raw: &str) -> Option<&'static str> {
    WEEKDAYS
        .iter()
        .find(|w| w.eq_ignore_ascii_case(raw.trim()))
        .copied()
}

fn day_index(code: &str) -> usize {
    WEEKDAYS.iter().position(|w| *w == code).unwrap_or(7)
}

/// Rows in editor order (weekday, then opening time), numbered anew, with one empty range at
/// the end of every weekday to add another (a lunch break is two ranges). The empty range takes
/// its length, places and person from the day's last range, else from the first range of the
/// week, so that a second range is like the first unless changed.
fn with_blanks(rows: Vec<RuleRow>, staff: &[Staff]) -> Vec<RuleRow> {
    let mut rows: Vec<RuleRow> = rows.into_iter().filter(|r| !r.blank()).collect();
    let blanks = blanks_for(&rows, staff);
    rows.extend(blanks);
    // Stable: typed lines keep their order within a day, the empty one comes last.
    rows.sort_by_key(|r| (day_index(r.day), r.blank(), r.opens.clone()));
    for (i, r) in rows.iter_mut().enumerate() {
        r.index = i;
    }
    rows
}

/// The empty range of each weekday, like the day's last range or the week's first.
fn blanks_for(rows: &[RuleRow], staff: &[Staff]) -> Vec<RuleRow> {
    let like = |r: &RuleRow| Typed {
        slot_minutes: r.slot_minutes.clone(),
        buffer_minutes: r.buffer_minutes.clone(),
        capacity: r.capacity.clone(),
        staff_name: r.staff_name.clone(),
        ..Typed::default()
    };
    let first = rows.iter().find(|r| !r.remove).map(like);
    let mut blanks = Vec::new();
    for day in WEEKDAYS {
        let base = rows
            .iter()
            .rev()
            .find(|r| r.day == day && !r.remove)
            .map(like)
            .or_else(|| first.clone())
            .unwrap_or(Typed {
                slot_minutes: "60".into(),
                buffer_minutes: "0".into(),
                capacity: "1".into(),
                ..Typed::default()
            });
        blanks.push(row(0, Typed { day, ..base }, staff));
    }
    blanks
}

/// Stored rules (one per weekday and range) grouped back into lines for the summary table: days
/// with the same hours, length, capacity and staff member share a line, in the order they first
/// appear.
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
                o.buffer_minutes,
            ) == (
                r.opens_min,
                r.closes_min,
                r.slot_minutes,
                r.capacity,
                r.staff_id,
                r.buffer_minutes,
            )
        };
        match out.iter_mut().find(|(_, o)| same(o)) {
            Some((days, _)) => days.push(r.weekday_label()),
            None => out.push((vec![r.weekday_label()], r)),
        }
    }
    out
}

pub(super) fn lines_of(rules: &[Rule], staff: &[Staff]) -> Vec<RuleLine> {
    grouped(rules)
        .into_iter()
        .map(|(days, r)| RuleLine {
            days,
            opens: r.opens(),
            closes: r.closes(),
            slot_minutes: r.slot_minutes,
            buffer_minutes: r.buffer_minutes,
            capacity: r.capacity,
            staff: staff_name(staff, r.staff_id),
        })
        .collect()
}

/// A closing time for a time input: midnight at the end of the day is 00:00 there.
fn time_input(min: i64) -> String {
    schedule::hhmm(min % 1440)
}

fn rows_of(rules: &[Rule], staff: &[Staff]) -> Vec<RuleRow> {
    let rows = rules
        .iter()
        .map(|r| {
            let t = Typed {
                day: r.weekday_label(),
                opens: time_input(r.opens_min),
                closes: time_input(r.closes_min),
                slot_minutes: r.slot_minutes.to_string(),
                buffer_minutes: r.buffer_minutes.to_string(),
                capacity: r.capacity.to_string(),
                staff_name: staff_name(staff, r.staff_id),
            };
            row(0, t, staff)
        })
        .collect();
    with_blanks(rows, staff)
}

fn kept_views(kept: &[KeptSlot], store: &Store) -> Vec<KeptView> {
    kept.iter()
        .map(|k| KeptView {
            slot_id: k.slot_id,
            time: validate::rfc3339_opt("starts_at", Some(&k.starts_at))
                .ok()
                .flatten()
                .map(|t| time::when(t, store.tz()))
                .unwrap_or_else(|| k.starts_at.clone()),
            booked: k.booked,
        })
        .collect()
}

pub(super) fn report_view(report: &MaterializeReport, store: &Store) -> ReportView {
    ReportView {
        created: report.created,
        removed: report.removed,
        capacity_changed: report.capacity_changed,
        kept: kept_views(&report.kept_with_bookings, store),
        kept_edited: kept_views(&report.kept_edited, store),
        kept_full: kept_views(&report.kept_full, store),
        kept_closed: kept_views(&report.kept_closed, store),
        created_closed: report.created_closed,
        length_changed: report.length_changed,
        blocked: kept_views(&report.blocked, store),
    }
}

fn preview_view(p: &Preview, store: &Store) -> PreviewView {
    let lang = crate::i18n::current();
    PreviewView {
        report: ReportView {
            created: p.created,
            removed: p.removed,
            capacity_changed: p.capacity_changed,
            kept: kept_views(&p.kept_with_bookings, store),
            kept_edited: kept_views(&p.kept_edited, store),
            kept_full: kept_views(&p.kept_full, store),
            kept_closed: Vec::new(),
            created_closed: 0,
            length_changed: p.length_changed,
            blocked: kept_views(&p.blocked, store),
        },
        unchanged: p.unchanged,
        days: p
            .days
            .iter()
            .map(|d| PreviewDayView {
                date: crate::i18n::format::day_long(lang, d.date),
                iso: d.date.format(time::DATE_FMT).to_string(),
                created: d.created,
                removed: d.removed,
                capacity_changed: d.capacity_changed,
            })
            .collect(),
    }
}

/// The service SKU (slots only) and the store its schedule is edited for.
pub(super) async fn load(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
    store_param: &str,
) -> Result<(Sku, StoreCtx), WebError> {
    let sku = catalog::sku_by_id(&state.db, user.actor("").scope(), id).await?;
    if sku.unit_type != UnitType::Slot {
        return Err(DomainError::NotFound("service").into());
    }
    let path = paths::service_schedule(sku.id);
    let mut ctx = store::ctx(state, user, store_param, Tab::Schedule, &path).await?;
    if ctx.store.is_none() && user.account.role() == Role::Operator {
        // From a product page an operator arrives without a store: the SKU's merchant's first.
        let stores = tenants::stores(&state.db, Scope::Merchant(sku.merchant_id)).await?;
        if let Some(first) = stores.into_iter().next() {
            ctx = ctx_of_store(state, user, first, Tab::Schedule, &path).await?;
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

pub(super) async fn schedule_page(
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
    let dated = dated::view(state, &sku, store, &staff).await?;
    Ok(SchedulePage {
        layout: cx.layout().await,
        verdicts,
        ctx,
        sku,
        product_name: product.product.name,
        lines: lines_of(&rules, &staff),
        days: WEEKDAYS.iter().map(|code| DayGroup { code }).collect(),
        rows: rows_of(&rules, &staff),
        errors: Errs::default(),
        report: None,
        preview: None,
        copied: None,
        window_days: state.config.serve.slot_window_days,
        dated,
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

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> &'a str {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or("")
}

/// The form's rows from `rules[i].field` pairs. A line may name several weekdays (the API's
/// shape, and older forms): it becomes one range per day, as it is stored.
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
            if i < 400 {
                by_index.entry(i).or_default().push((field, v.as_str()));
            }
        }
    }
    let mut out = Vec::new();
    for fields in by_index.into_values() {
        let get = |name: &str| {
            fields
                .iter()
                .find(|(f, _)| *f == name)
                .map(|(_, v)| v.to_string())
                .unwrap_or_default()
        };
        let mut days: Vec<&'static str> = Vec::new();
        let mut unknown = Vec::new();
        for (f, v) in &fields {
            if *f == "weekdays" {
                match weekday_code(v) {
                    Some(d) if !days.contains(&d) => days.push(d),
                    Some(_) => {}
                    None => unknown.push(v.to_string()),
                }
            }
        }
        let base = Typed {
            day: "",
            opens: get("opens"),
            closes: get("closes"),
            slot_minutes: get("slot_minutes"),
            buffer_minutes: get("buffer_minutes"),
            capacity: get("capacity"),
            staff_name: get("staff"),
        };
        let remove = get("remove") == "1";
        if days.is_empty() {
            let mut r = row(0, base, staff);
            r.remove = remove;
            if !r.blank() {
                let e = match unknown.first() {
                    Some(d) => {
                        FieldError::new("weekdays", "invalid_weekday", messages::bad_weekday(d))
                    }
                    None => FieldError::new("weekdays", "required", messages::required("weekdays")),
                };
                r.errors.push(e);
            }
            out.push(r);
            continue;
        }
        for day in days {
            let mut r = row(
                0,
                Typed {
                    day,
                    ..base.clone()
                },
                staff,
            );
            r.remove = remove;
            out.push(r);
        }
    }
    out
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

/// The rule inputs of the rows, in row order; None when a line is refused before the domain
/// sees it (a number that does not parse, a line without a day): the line says which.
fn rule_inputs(rows: &mut [RuleRow]) -> Option<Vec<RuleInput>> {
    let mut inputs = Vec::new();
    let mut bad = false;
    for r in rows.iter_mut() {
        let slot_minutes = whole_number(
            &r.slot_minutes,
            "slot_minutes",
            &mut r.errors,
            messages::bad_slot_length,
        );
        let capacity = whole_number(&r.capacity, "capacity", &mut r.errors, || {
            messages::bad_capacity(slots::CAPACITY_MAX)
        });
        // Left empty (or an older form without the field): no break.
        let buffer_minutes = if r.buffer_minutes.trim().is_empty() {
            0
        } else {
            whole_number(&r.buffer_minutes, "buffer_minutes", &mut r.errors, || {
                messages::bad_buffer(schedule::BUFFER_MAX)
            })
        };
        bad |= !r.errors.is_empty();
        inputs.push(RuleInput {
            weekdays: vec![r.day.to_string()],
            opens: r.opens.clone(),
            closes: r.closes.clone(),
            slot_minutes,
            capacity,
            staff: Some(r.staff_name.clone()).filter(|s| !s.trim().is_empty()),
            buffer_minutes,
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

/// "Copy Monday to Tuesday and Wednesday": the ranges of `from` replace those of each chosen
/// day. Nothing is saved: the editor shows the result to preview or save.
fn copy_day(
    rows: Vec<RuleRow>,
    from: &'static str,
    to: &[&'static str],
    staff: &[Staff],
) -> Vec<RuleRow> {
    let source: Vec<Typed> = rows
        .iter()
        .filter(|r| r.day == from && !r.remove && !r.blank())
        .map(typed_of)
        .collect();
    let mut out: Vec<RuleRow> = rows.into_iter().filter(|r| !to.contains(&r.day)).collect();
    for day in to {
        for t in &source {
            out.push(row(0, Typed { day, ..t.clone() }, staff));
        }
    }
    out
}

/// The editor's three submits: preview (and Enter), save, and "copy this day to…".
enum Action {
    Preview,
    Save,
    Copy(&'static str, Vec<&'static str>),
}

fn action_of(pairs: &[(String, String)]) -> Action {
    if let Some(from) = weekday_code(field(pairs, "copy_from")) {
        let key = format!("copy_to_{from}");
        let mut to: Vec<&'static str> = pairs
            .iter()
            .filter(|(k, _)| *k == key)
            .filter_map(|(_, v)| weekday_code(v))
            .filter(|d| *d != from)
            .collect();
        to.sort_by_key(|d| day_index(d));
        to.dedup();
        return Action::Copy(from, to);
    }
    match field(pairs, "action") {
        "preview" => Action::Preview,
        // A form without the button (an older page, a script) saves, as it always did.
        _ => Action::Save,
    }
}

pub async fn save(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (sku, ctx) = load(&state, &cx.user, id, field(&pairs, "store")).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let staff = members::staff_of_store(&state.db, merchant_id, store.id).await?;
    let parsed = parse_rows(&pairs, &staff);
    let action = action_of(&pairs);
    if let Action::Copy(from, to) = action {
        let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
        if to.is_empty() {
            page.rows = with_blanks(parsed, &staff);
            page.errors = Errs(vec![FieldError::new(
                "copy",
                "required",
                messages::copy_to_nothing(),
            )]);
            return cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page);
        }
        page.rows = with_blanks(copy_day(parsed, from, &to, &staff), &staff);
        page.copied = Some((from, to));
        return cx.whole(&page);
    }
    // Removed and blank lines drop out; the rest is the new rule list, in editor order so that
    // errors point at the lines as they are shown again. Removed lines are shown again ticked
    // after a preview or a refusal, so that the removal can still be undone before saving.
    let (removed, kept): (Vec<RuleRow>, Vec<RuleRow>) = parsed.into_iter().partition(|r| r.remove);
    let mut rows: Vec<RuleRow> = with_blanks(kept, &staff)
        .into_iter()
        .filter(|r| !r.blank())
        .collect();
    let inputs = rule_inputs(&mut rows);
    let result = match (inputs, &action) {
        (None, _) => Err(DomainError::Invalid(Vec::new())),
        (Some(inputs), Action::Preview) => {
            match schedule::check_rules(&state.db, merchant_id, &sku, &store, &inputs).await {
                Ok(rules) => {
                    let window = state.config.serve.slot_window_days;
                    let p = preview::of_rules(&state.db, sku.id, &store, &rules, window).await?;
                    let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
                    page.preview = Some(preview_view(&p, &store));
                    rows.extend(removed);
                    page.rows = with_blanks(rows, &staff);
                    return cx.whole(&page);
                }
                Err(e) => Err(e),
            }
        }
        (Some(inputs), _) => {
            let actor = cx.actor(&paths::service_schedule(sku.id));
            let window = state.config.serve.slot_window_days;
            schedule::replace_rules(&state.db, &actor, merchant_id, &sku, &store, inputs, window)
                .await
                .map(|(_, report)| report)
        }
    };
    match result {
        Ok(report) => {
            let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
            page.report = Some(report_view(&report, &store));
            cx.whole(&page)
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = schedule_page(&state, &cx, sku, ctx, &store).await?;
            page.errors = Errs(place_errors(&mut rows, errors));
            // The refused lines as typed, each error beside its line, and the empty ones again.
            let shown = blanks_for(&rows, &staff);
            let mut all = rows;
            all.extend(shown);
            all.extend(removed.into_iter().filter(|r| !r.blank()));
            all.sort_by_key(|r| (day_index(r.day), r.blank(), r.index));
            for (i, r) in all.iter_mut().enumerate() {
                r.index = i;
            }
            page.rows = all;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
