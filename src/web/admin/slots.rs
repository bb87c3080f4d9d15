//! Store staff pages for services booked in slots: the store context every slot page shares
//! (which store, who may change what), the week grid, one slot's page with its bookings and
//! actions, and the show / no-show / vacancy figures.
//!
//! Who may do what: store staff everything on their own store (other stores answer 404), merchant
//! admins everything of their merchant, operators read (their POSTs answer 403). Every lookup is
//! scoped by merchant, so another merchant's ids are simply "not found".

use crate::web::ids::PathId;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use serde::Deserialize;
use tower_sessions::Session;

use super::reconcile::{frozen_banner, FrozenBanner};
use super::Errs;
use crate::domain::bookings::{self, Booking};
use crate::domain::scope::Role;
use crate::domain::slots::{self, Slot, SlotFilter};
use crate::domain::tenants::{self, Store};
use crate::domain::validate::ms_to_local;
use crate::domain::{catalog, schedule, DomainError, FieldError, Scope};
use crate::infra::db::now_ms;
use crate::messages;
use crate::web::auth::{is_htmx, CurrentUser};
use crate::web::error::WebError;
use crate::web::flash;
use crate::web::layout::Layout;
use crate::web::AppState;

pub(super) const DATE_FMT: &str = "%Y-%m-%d";
pub(super) const TIME_FMT: &str = "%H:%M";
pub(super) const DATETIME_FMT: &str = "%Y-%m-%d %H:%M";

// ---------- the store context ----------

/// A choice in a select: value, label, and whether it is the current one.
#[derive(Debug, Clone)]
pub struct Opt {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// Which store a slot page shows, and what the signed-in user may do there.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub store: Option<Store>,
    /// The `store` query value that names this store ("main-store", or "acme/main-store" for
    /// operators, who see every merchant).
    pub value: String,
    /// `store=…` for links, empty when no store is chosen.
    pub q: String,
    /// The store switcher's choices; empty for store staff (they have one store).
    pub options: Vec<Opt>,
    pub can_edit: bool,
    /// The sub-navigation tab: week | day | closures | staff | metrics | schedule.
    pub tab: &'static str,
    /// Where the store switcher sends its GET.
    pub path: String,
}

impl Ctx {
    pub fn tz(&self) -> Tz {
        self.store.as_ref().map(Store::tz).unwrap_or(chrono_tz::UTC)
    }
    pub fn tz_name(&self) -> String {
        self.tz().name().to_string()
    }
    pub fn store_name(&self) -> String {
        self.store
            .as_ref()
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }
}

fn store_value(user: &CurrentUser, merchant_slug: &str, store: &Store) -> String {
    if user.0.role() == Role::Operator {
        format!("{merchant_slug}/{}", store.slug)
    } else {
        store.slug.clone()
    }
}

/// The store a page is about, from `?store=` and the user's role; None when an operator has not
/// picked one yet or the merchant has no store (the page shows an empty state).
pub(super) async fn ctx(
    state: &AppState,
    user: &CurrentUser,
    raw: &str,
    tab: &'static str,
    path: &str,
) -> Result<Ctx, WebError> {
    let raw = raw.trim();
    let u = &user.0;
    let (store, options) = match (u.role(), u.merchant_id, u.store_id) {
        (Role::StoreStaff, Some(m), Some(s)) => {
            let store = tenants::store_by_id(&state.db, Scope::Merchant(m), s).await?;
            let own = u.merchant_slug.as_deref().unwrap_or("");
            if !raw.is_empty() && raw != store.slug && raw != format!("{own}/{}", store.slug) {
                return Err(DomainError::NotFound("store").into());
            }
            (Some(store), Vec::new())
        }
        (Role::MerchantAdmin, Some(m), _) => {
            let stores = tenants::stores(&state.db, Scope::Merchant(m)).await?;
            let own = u.merchant_slug.as_deref().unwrap_or("");
            let wanted = raw.strip_prefix(&format!("{own}/")).unwrap_or(raw);
            let store = if wanted.is_empty() {
                stores.first().cloned()
            } else {
                Some(
                    stores
                        .iter()
                        .find(|s| s.slug == wanted)
                        .cloned()
                        .ok_or(DomainError::NotFound("store"))?,
                )
            };
            let options = stores
                .iter()
                .map(|s| Opt {
                    value: s.slug.clone(),
                    label: s.name.clone(),
                    selected: store.as_ref().is_some_and(|c| c.id == s.id),
                })
                .collect();
            (store, options)
        }
        (Role::Operator, _, _) => {
            let merchants = tenants::merchants(&state.db, Scope::All).await?;
            let stores = tenants::stores(&state.db, Scope::All).await?;
            let slug_of = |merchant_id: i64| {
                merchants
                    .iter()
                    .find(|m| m.id == merchant_id)
                    .map(|m| (m.slug.clone(), m.name.clone()))
                    .unwrap_or_default()
            };
            let store = if raw.is_empty() {
                None
            } else {
                Some(
                    stores
                        .iter()
                        .find(|s| format!("{}/{}", slug_of(s.merchant_id).0, s.slug) == raw)
                        .cloned()
                        .ok_or(DomainError::NotFound("store"))?,
                )
            };
            let mut options: Vec<Opt> = stores
                .iter()
                .map(|s| {
                    let (mslug, mname) = slug_of(s.merchant_id);
                    Opt {
                        value: format!("{mslug}/{}", s.slug),
                        label: format!("{mname} · {}", s.name),
                        selected: store.as_ref().is_some_and(|c| c.id == s.id),
                    }
                })
                .collect();
            options.sort_by(|a, b| a.label.cmp(&b.label));
            (store, options)
        }
        _ => return Err(DomainError::Forbidden.into()),
    };
    with_store(state, user, store, options, tab, path).await
}

/// The context of a page whose store comes from the object shown (a slot, a closure).
pub(super) async fn ctx_of_store(
    state: &AppState,
    user: &CurrentUser,
    store: Store,
    tab: &'static str,
    path: &str,
) -> Result<Ctx, WebError> {
    with_store(state, user, Some(store), Vec::new(), tab, path).await
}

async fn with_store(
    state: &AppState,
    user: &CurrentUser,
    store: Option<Store>,
    options: Vec<Opt>,
    tab: &'static str,
    path: &str,
) -> Result<Ctx, WebError> {
    let value = match &store {
        Some(s) => {
            let m = tenants::merchant(&state.db, s.merchant_id).await?;
            store_value(user, &m.slug, s)
        }
        None => String::new(),
    };
    Ok(Ctx {
        q: if value.is_empty() {
            String::new()
        } else {
            format!("store={value}")
        },
        value,
        can_edit: user.0.role() != Role::Operator,
        store,
        options,
        tab,
        path: path.to_string(),
    })
}

/// The merchant whose slots the user may change: operators read only.
pub(super) fn writer(user: &CurrentUser) -> Result<i64, WebError> {
    match (user.0.role(), user.0.merchant_id) {
        (Role::MerchantAdmin | Role::StoreStaff, Some(m)) => Ok(m),
        _ => Err(DomainError::Forbidden.into()),
    }
}

/// Store staff see their own store only; another store's objects do not exist for them.
pub(super) fn check_store(
    user: &CurrentUser,
    store_id: i64,
    what: &'static str,
) -> Result<(), WebError> {
    if user.0.role() == Role::StoreStaff && user.0.store_id != Some(store_id) {
        return Err(DomainError::NotFound(what).into());
    }
    Ok(())
}

/// A slot the user may see (merchant-scoped, and store-scoped for store staff), with its store.
pub(super) async fn visible_slot(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
) -> Result<(Slot, Store), WebError> {
    let slot = slots::get(&state.db, user.actor("").scope(), id).await?;
    check_store(user, slot.store_id, "slot")?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(slot.merchant_id), slot.store_id).await?;
    Ok((slot, store))
}

#[derive(Template)]
#[template(path = "admin/slots/no_store.html")]
struct NoStorePage {
    layout: Layout,
    ctx: Ctx,
    operator: bool,
}

/// The empty state of every store page: pick a store (operators) or create one first.
pub(super) async fn no_store_page(
    user: &CurrentUser,
    session: &Session,
    ctx: Ctx,
) -> Result<Response, WebError> {
    let page = NoStorePage {
        layout: Layout::new(user, session, "/admin/slots").await,
        operator: user.0.role() == Role::Operator,
        ctx,
    };
    Ok(Html(page.render()?).into_response())
}

// ---------- time in the store's timezone ----------

pub(super) fn today(tz: Tz) -> NaiveDate {
    Utc::now().with_timezone(&tz).date_naive()
}

/// The first instant of a local day. Where midnight falls in a daylight-saving gap, the day
/// starts at the first local time that exists.
pub(super) fn day_start(tz: Tz, date: NaiveDate) -> i64 {
    (0..=4)
        .filter_map(|h| date.and_hms_opt(h, 0, 0))
        .find_map(|t| tz.from_local_datetime(&t).earliest())
        .map(|t| t.timestamp_millis())
        .unwrap_or_else(|| {
            Utc.from_utc_datetime(&date.and_time(chrono::NaiveTime::MIN))
                .timestamp_millis()
        })
}

pub(super) fn local_date(ms: i64, tz: Tz) -> Option<NaiveDate> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.with_timezone(&tz).date_naive())
}

pub(super) fn monday_of(d: NaiveDate) -> NaiveDate {
    d - Duration::days(d.weekday().num_days_from_monday() as i64)
}

pub(super) fn parse_date(raw: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(raw.trim(), DATE_FMT).ok()
}

pub(super) fn period(start: i64, end: i64, tz: Tz) -> String {
    let (sd, ed) = (local_date(start, tz), local_date(end, tz));
    if sd == ed {
        format!(
            "{}–{}",
            ms_to_local(start, tz, DATETIME_FMT),
            ms_to_local(end, tz, TIME_FMT)
        )
    } else {
        format!(
            "{} → {}",
            ms_to_local(start, tz, DATETIME_FMT),
            ms_to_local(end, tz, DATETIME_FMT)
        )
    }
}

/// `key=value` pairs for links, empty values left out. Values here are slugs, codes, ids and
/// dates; anything else is percent-encoded.
pub(super) fn query(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| {
            let v: String = v
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// One page of a list already in memory.
pub(super) fn paginate<T>(items: Vec<T>, page: &str, per: usize) -> (Vec<T>, i64, i64, i64) {
    let total = items.len();
    let pages = total.div_ceil(per).max(1);
    let page = page.parse::<usize>().unwrap_or(1).clamp(1, pages);
    let rows = items.into_iter().skip((page - 1) * per).take(per).collect();
    (rows, page as i64, pages as i64, total as i64)
}

fn htmx_target(headers: &HeaderMap, id: &str) -> bool {
    is_htmx(headers) && headers.get("HX-Target").is_some_and(|v| v == id)
}

// ---------- week grid ----------

#[derive(Deserialize, Default)]
pub struct WeekQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    week: String,
    #[serde(default)]
    service: String,
    #[serde(default)]
    staff: String,
}

pub struct SlotCell {
    pub id: i64,
    pub time: String,
    pub sku_code: String,
    pub staff: String,
    pub booked: i64,
    pub capacity: i64,
    pub fill: &'static str,
    pub reason: String,
}

pub struct DayCol {
    pub date: String,
    pub label: String,
    pub today: bool,
    pub slots: Vec<SlotCell>,
}

#[derive(Template)]
#[template(path = "admin/slots/week.html", blocks = ["grid"])]
struct WeekPage {
    layout: Layout,
    ctx: Ctx,
    week: String,
    week_label: String,
    this_week: String,
    prev_href: String,
    next_href: String,
    this_href: String,
    service: String,
    staff: String,
    services: Vec<Opt>,
    /// Each service's weekly schedule page: value is the SKU id, label its code.
    service_links: Vec<Opt>,
    staff_opts: Vec<Opt>,
    days: Vec<DayCol>,
    slot_count: usize,
}

pub async fn week(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    Query(q): Query<WeekQuery>,
) -> Result<Response, WebError> {
    let ctx = ctx(&state, &user, &q.store, "week", "/admin/slots").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&user, &session, ctx).await;
    };
    let tz = store.tz();
    let monday = monday_of(parse_date(&q.week).unwrap_or_else(|| today(tz)));
    let next = monday + Duration::days(7);
    let skus = schedule::service_skus(&state.db, store.merchant_id).await?;
    let staff = schedule::staff_of_store(&state.db, store.merchant_id, store.id).await?;
    let service = q.service.trim().to_string();
    let staff_filter = q.staff.trim().to_string();
    // An unknown service or staff member matches nothing rather than everything.
    let sku_id = if service.is_empty() {
        None
    } else {
        Some(skus.iter().find(|s| s.code == service).map_or(-1, |s| s.id))
    };
    let staff_id = if staff_filter.is_empty() {
        None
    } else {
        Some(staff_filter.parse::<i64>().unwrap_or(-1))
    };
    let filter = SlotFilter {
        store_id: Some(store.id),
        sku_id,
        staff_id,
        from: day_start(tz, monday),
        to: day_start(tz, next),
        only_open_future: false,
    };
    let list = slots::list(&state.db, Scope::Merchant(store.merchant_id), &filter).await?;
    let now = now_ms();
    let today = today(tz);
    let mut days: Vec<DayCol> = (0..7)
        .map(|i| {
            let d = monday + Duration::days(i);
            DayCol {
                date: d.format(DATE_FMT).to_string(),
                label: d.format("%a %-d %b").to_string(),
                today: d == today,
                slots: Vec::new(),
            }
        })
        .collect();
    for s in &list {
        let Some(d) = local_date(s.starts_at, tz) else {
            continue;
        };
        let i = (d - monday).num_days();
        if let Some(col) = usize::try_from(i).ok().and_then(|i| days.get_mut(i)) {
            col.slots.push(SlotCell {
                id: s.id,
                time: format!(
                    "{}–{}",
                    ms_to_local(s.starts_at, tz, TIME_FMT),
                    ms_to_local(s.ends_at, tz, TIME_FMT)
                ),
                sku_code: s.sku_code.clone(),
                staff: s.staff_name.clone().unwrap_or_default(),
                booked: s.booked,
                capacity: s.capacity,
                fill: s.fill(now),
                reason: s.closed_reason.clone().unwrap_or_default(),
            });
        }
    }
    let link = |week: NaiveDate| {
        let week = week.format(DATE_FMT).to_string();
        format!(
            "/admin/slots?{}",
            query(&[
                ("store", &ctx.value),
                ("week", &week),
                ("service", &service),
                ("staff", &staff_filter),
            ])
        )
    };
    let page = WeekPage {
        layout: Layout::new(&user, &session, "/admin/slots").await,
        prev_href: link(monday - Duration::days(7)),
        next_href: link(next),
        this_href: link(monday_of(today)),
        week: monday.format(DATE_FMT).to_string(),
        week_label: format!(
            "{} – {}",
            monday.format(DATE_FMT),
            (next - Duration::days(1)).format(DATE_FMT)
        ),
        this_week: monday_of(today).format(DATE_FMT).to_string(),
        services: skus
            .iter()
            .map(|s| Opt {
                value: s.code.clone(),
                label: format!("{} · {}", s.code, s.name),
                selected: s.code == service,
            })
            .collect(),
        service_links: skus
            .iter()
            .map(|s| Opt {
                value: s.id.to_string(),
                label: s.code.clone(),
                selected: false,
            })
            .collect(),
        staff_opts: staff
            .iter()
            .map(|s| Opt {
                value: s.id.to_string(),
                label: s.name.clone(),
                selected: s.id.to_string() == staff_filter,
            })
            .collect(),
        service,
        staff: staff_filter,
        slot_count: list.len(),
        days,
        ctx,
    };
    let html = if htmx_target(&headers, "week-grid") {
        page.as_grid().render()?
    } else {
        page.render()?
    };
    Ok(Html(html).into_response())
}

// ---------- one slot ----------

pub struct SlotView {
    pub id: i64,
    pub date: String,
    pub week: String,
    pub time: String,
    pub sku_code: String,
    pub sku_name: String,
    pub staff: String,
    pub capacity: i64,
    pub booked: i64,
    pub remaining: i64,
    pub status: String,
    pub fill: &'static str,
    pub reason: String,
}

pub struct BookingRow {
    pub reference: String,
    pub name: String,
    pub phone: String,
    pub status: String,
    pub cancel_reason: String,
    pub booked_at: String,
    pub can_cancel: bool,
    pub can_mark: bool,
    pub error: Option<String>,
}

#[derive(Deserialize, Default, Clone)]
pub struct CapacityForm {
    #[serde(default)]
    capacity: String,
}

#[derive(Deserialize, Default, Clone)]
pub struct ReasonForm {
    #[serde(default)]
    reason: String,
}

#[derive(Template)]
#[template(path = "admin/slots/slot.html", blocks = ["panel"])]
pub(super) struct SlotPage {
    layout: Layout,
    ctx: Ctx,
    slot: SlotView,
    started: bool,
    bookings: Vec<BookingRow>,
    /// Active bookings of a closed slot: the people to call.
    contacts: Vec<BookingRow>,
    capacity: String,
    close_reason: String,
    errors: Errs,
    pub(super) notice: Option<String>,
    /// Set while reconciliation has frozen the slot.
    frozen: Option<FrozenBanner>,
}

impl SlotPage {
    /// Shows a refusal beside the booking it concerns.
    pub(super) fn booking_error(&mut self, reference: &str, message: String) {
        if let Some(row) = self.bookings.iter_mut().find(|b| b.reference == reference) {
            row.error = Some(message);
        }
    }
}

pub(super) fn booking_row(b: &Booking, starts_at: i64, now: i64, tz: Tz) -> BookingRow {
    BookingRow {
        reference: b.reference.clone(),
        name: b.customer_name.clone(),
        phone: b.customer_phone.clone(),
        status: b.status.clone(),
        cancel_reason: b.cancel_reason.clone().unwrap_or_default(),
        booked_at: ms_to_local(b.created_at, tz, DATETIME_FMT),
        can_cancel: crate::domain::bookings::cancellable(&b.status, starts_at, now),
        can_mark: b.status != "CANCELLED" && starts_at <= now,
        error: None,
    }
}

pub(super) async fn slot_page(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    slot: Slot,
    store: Store,
) -> Result<SlotPage, WebError> {
    let tz = store.tz();
    let now = now_ms();
    let list = bookings::of_slot(&state.db, slot.merchant_id, slot.id).await?;
    let rows: Vec<BookingRow> = list
        .iter()
        .map(|b| booking_row(b, slot.starts_at, now, tz))
        .collect();
    let contacts = if slot.status == "CLOSED" {
        list.iter()
            .filter(|b| b.status == crate::domain::bookings::BookingStatus::Booked.as_str())
            .map(|b| booking_row(b, slot.starts_at, now, tz))
            .collect()
    } else {
        Vec::new()
    };
    let date = local_date(slot.starts_at, tz).unwrap_or_else(|| today(tz));
    let view = SlotView {
        id: slot.id,
        date: date.format(DATE_FMT).to_string(),
        week: monday_of(date).format(DATE_FMT).to_string(),
        time: period(slot.starts_at, slot.ends_at, tz),
        sku_code: slot.sku_code.clone(),
        sku_name: slot.sku_name.clone(),
        staff: slot.staff_name.clone().unwrap_or_default(),
        capacity: slot.capacity,
        booked: slot.booked,
        remaining: slot.remaining(),
        status: slot.status.clone(),
        fill: slot.fill(now),
        reason: slot.closed_reason.clone().unwrap_or_default(),
    };
    let frozen = frozen_banner(state, user, slot.merchant_id, slot.frozen_finding_id).await?;
    Ok(SlotPage {
        frozen,
        layout: Layout::new(user, session, "/admin/slots").await,
        ctx: ctx_of_store(state, user, store, "week", "/admin/slots").await?,
        started: slot.started(now),
        capacity: slot.capacity.to_string(),
        slot: view,
        bookings: rows,
        contacts,
        close_reason: String::new(),
        errors: Errs::default(),
        notice: None,
    })
}

/// The slot page, or its panel for htmx, with a status (422 for a refusal, so htmx swaps it).
pub(super) fn render_slot(
    page: &SlotPage,
    headers: &HeaderMap,
    status: StatusCode,
) -> Result<Response, WebError> {
    let html = if is_htmx(headers) {
        page.as_panel().render()?
    } else {
        page.render()?
    };
    Ok((status, Html(html)).into_response())
}

pub async fn show(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let (slot, store) = visible_slot(&state, &user, id).await?;
    let page = slot_page(&state, &user, &session, slot, store).await?;
    render_slot(&page, &headers, StatusCode::OK)
}

/// After a change: htmx gets the panel with a notice; a plain form goes back to the page.
async fn slot_done(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
    headers: &HeaderMap,
    slot_id: i64,
    notice: String,
) -> Result<Response, WebError> {
    if is_htmx(headers) {
        let (slot, store) = visible_slot(state, user, slot_id).await?;
        let mut page = slot_page(state, user, session, slot, store).await?;
        page.notice = Some(notice);
        render_slot(&page, headers, StatusCode::OK)
    } else {
        flash::push(session, "success", notice).await;
        Ok(Redirect::to(&format!("/admin/slots/{slot_id}")).into_response())
    }
}

pub async fn set_capacity(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    PathId(id): PathId,
    Form(form): Form<CapacityForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let (slot, store) = visible_slot(&state, &user, id).await?;
    let result = match form.capacity.trim().parse::<i64>() {
        Ok(c) => {
            let actor = user.actor(&format!("/admin/slots/{}", slot.id));
            slots::set_capacity(&state.db, &actor, merchant_id, slot.id, c).await
        }
        Err(_) => Err(DomainError::Invalid(vec![FieldError::new(
            "capacity",
            "invalid_capacity",
            messages::bad_capacity(schedule::CAPACITY_MAX),
        )])),
    };
    match result {
        Ok(saved) => {
            let notice = messages::slot_capacity_saved(saved.capacity);
            slot_done(&state, &user, &session, &headers, slot.id, notice).await
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = slot_page(&state, &user, &session, slot, store).await?;
            page.capacity = form.capacity;
            page.errors = Errs(errors);
            render_slot(&page, &headers, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn close(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    PathId(id): PathId,
    Form(form): Form<ReasonForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let (slot, store) = visible_slot(&state, &user, id).await?;
    let actor = user.actor(&format!("/admin/slots/{}", slot.id));
    match slots::close(&state.db, &actor, merchant_id, slot.id, &form.reason).await {
        Ok((_, contacts)) => {
            let notice = messages::slot_closed_by_staff(contacts.len());
            slot_done(&state, &user, &session, &headers, slot.id, notice).await
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = slot_page(&state, &user, &session, slot, store).await?;
            page.close_reason = form.reason;
            page.errors = Errs(errors);
            render_slot(&page, &headers, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn open(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    headers: HeaderMap,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = writer(&user)?;
    let (slot, _) = visible_slot(&state, &user, id).await?;
    let actor = user.actor(&format!("/admin/slots/{}", slot.id));
    slots::open(&state.db, &actor, merchant_id, slot.id).await?;
    let notice = messages::slot_reopened();
    slot_done(&state, &user, &session, &headers, slot.id, notice).await
}

// ---------- show, no-show and vacancy ----------

pub const WEEKS_DEFAULT: i64 = 8;
pub const WEEKS_MAX: i64 = 26;

#[derive(Deserialize, Default)]
pub struct MetricsQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    service: String,
    #[serde(default)]
    weeks: String,
}

pub struct WeekFigures {
    pub week: String,
    pub slots: i64,
    pub marked: i64,
    pub unmarked: i64,
    pub show: String,
    pub no_show: String,
    pub vacancy: String,
}

pub struct Bar {
    pub x: String,
    pub y: String,
    pub height: String,
    /// show | no_show | vacancy
    pub kind: &'static str,
    pub week: String,
    pub value: String,
}

pub struct ServiceFigures {
    pub code: String,
    pub name: String,
    pub weeks: Vec<WeekFigures>,
    pub bars: Vec<Bar>,
    pub labels: Vec<(String, String)>,
    pub chart_width: i64,
}

#[derive(Template)]
#[template(path = "admin/slots/metrics.html")]
struct MetricsPage {
    layout: Layout,
    ctx: Ctx,
    weeks: i64,
    service: String,
    services: Vec<Opt>,
    figures: Vec<ServiceFigures>,
}

fn rate(r: Option<f64>) -> String {
    r.map(|p| format!("{p:.1}%")).unwrap_or_else(|| "—".into())
}

const GROUP_W: i64 = 48;
const BAR_W: i64 = 12;

pub async fn metrics(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
    Query(q): Query<MetricsQuery>,
) -> Result<Response, WebError> {
    let ctx = ctx(&state, &user, &q.store, "metrics", "/admin/slots/metrics").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&user, &session, ctx).await;
    };
    let tz = store.tz();
    let weeks = q
        .weeks
        .trim()
        .parse::<i64>()
        .unwrap_or(WEEKS_DEFAULT)
        .clamp(1, WEEKS_MAX);
    let skus = schedule::service_skus(&state.db, store.merchant_id).await?;
    let service = q.service.trim().to_string();
    let chosen: Vec<&catalog::Sku> = skus
        .iter()
        .filter(|s| service.is_empty() || s.code == service)
        .collect();
    let this_monday = monday_of(today(tz));
    let mut figures = Vec::new();
    for sku in chosen {
        let mut rows = Vec::new();
        let mut bars = Vec::new();
        let mut labels = Vec::new();
        for i in 0..weeks {
            let monday = this_monday - Duration::days(7 * (weeks - 1 - i));
            let (from, to) = (
                day_start(tz, monday),
                day_start(tz, monday + Duration::days(7)),
            );
            let m =
                bookings::metrics(&state.db, store.merchant_id, sku.id, store.id, from, to).await?;
            let x0 = i * GROUP_W + 6;
            for (j, (kind, r)) in [
                ("show", m.show_rate()),
                ("no_show", m.no_show_rate()),
                ("vacancy", m.vacancy_rate()),
            ]
            .into_iter()
            .enumerate()
            {
                let h = r.unwrap_or(0.0).clamp(0.0, 100.0);
                bars.push(Bar {
                    x: (x0 + j as i64 * BAR_W).to_string(),
                    y: format!("{:.1}", 100.0 - h),
                    height: format!("{h:.1}"),
                    kind,
                    week: monday.format(DATE_FMT).to_string(),
                    value: rate(r),
                });
            }
            labels.push((
                (x0 + BAR_W * 3 / 2).to_string(),
                monday.format("%m-%d").to_string(),
            ));
            rows.push(WeekFigures {
                week: monday.format(DATE_FMT).to_string(),
                slots: m.slots,
                marked: m.attended + m.no_show,
                unmarked: m.unmarked,
                show: rate(m.show_rate()),
                no_show: rate(m.no_show_rate()),
                vacancy: rate(m.vacancy_rate()),
            });
        }
        figures.push(ServiceFigures {
            code: sku.code.clone(),
            name: sku.name.clone(),
            weeks: rows,
            bars,
            labels,
            chart_width: weeks * GROUP_W,
        });
    }
    let page = MetricsPage {
        layout: Layout::new(&user, &session, "/admin/slots").await,
        weeks,
        services: skus
            .iter()
            .map(|s| Opt {
                value: s.code.clone(),
                label: format!("{} · {}", s.code, s.name),
                selected: s.code == service,
            })
            .collect(),
        service,
        figures,
        ctx,
    };
    Ok(Html(page.render()?).into_response())
}
