//! Store staff pages for services booked in slots: the week grid here, one slot's page with its
//! bookings and actions (`slot`), a day's bookings (`bookings`), and the show / no-show / vacancy
//! figures (`metrics`). The store context and who may do what are in `web::view::store`.

pub mod book;
pub mod booking_list;
pub mod bookings;
pub mod metrics;
pub mod slot;
pub mod to_call;

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use chrono::{Duration, NaiveDate};
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::catalog::Sku;
use crate::domain::slots::schedule;
use crate::domain::slots::staff::{self, Staff};
use crate::domain::slots::{self, Fill, Slot, SlotFilter};
use crate::domain::Scope;
use crate::infra::clock::Clock;
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::pager::Pager;
use crate::web::view::store::{self, no_store_page, StoreCtx};
use crate::web::view::time::{day_start, local_date, monday_of, parse_day, DATE_FMT};
use crate::web::view::{link, query, Opt};
use crate::web::AppState;

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
    /// The page of services shown when no service is chosen.
    #[serde(default)]
    page: String,
}

/// Services shown at once on the week grid when no service is chosen: a store with hundreds of
/// services pages through them rather than drawing every slot of the week.
pub const WEEK_SERVICES: usize = 20;

pub struct SlotCell {
    pub id: i64,
    pub time: String,
    pub sku_code: String,
    pub staff: String,
    pub booked: i64,
    pub capacity: i64,
    pub fill: Fill,
    pub reason: String,
    /// Closed and not over: its bookings nobody has reached yet (filled in by `week`).
    pub to_call: i64,
}

pub struct DayCol {
    pub date: String,
    pub label: String,
    pub today: bool,
    pub slots: Vec<SlotCell>,
    /// Services whose schedule is overridden that day: (code, no slots at all).
    pub overrides: Vec<(String, bool)>,
}

#[derive(Template)]
#[template(path = "admin/slots/week.html", blocks = ["grid"])]
struct WeekPage {
    layout: Layout,
    ctx: StoreCtx,
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
    /// Pages of services, when the store has more than [`WEEK_SERVICES`] and none is chosen.
    pager: Option<Pager>,
    /// Staff book a caller or a walk-in into one of the week's slots shown.
    book: book::StaffBook,
}

/// The services of a merchant as select choices, by code.
pub(crate) fn service_options(skus: &[Sku], chosen: &str) -> Vec<Opt> {
    skus.iter()
        .map(|s| Opt {
            value: s.code.clone(),
            label: format!("{} · {}", s.code, s.name),
            selected: s.code == chosen,
        })
        .collect()
}

/// The week's slots, under the filters. An unknown service or staff member matches nothing
/// rather than everything.
fn week_filter(
    store: &crate::domain::tenancy::tenants::Store,
    (skus, shown): (&[Sku], &[Sku]),
    q: &WeekQuery,
    monday: NaiveDate,
) -> SlotFilter {
    let tz = store.tz();
    let service = q.service.trim();
    let staff = q.staff.trim();
    SlotFilter {
        store_id: Some(store.id),
        sku_id: (!service.is_empty())
            .then(|| skus.iter().find(|s| s.code == service).map_or(-1, |s| s.id)),
        staff_id: (!staff.is_empty()).then(|| staff.parse::<i64>().unwrap_or(-1)),
        sku_ids: if shown.len() < skus.len() {
            shown.iter().map(|s| s.id).collect()
        } else {
            Vec::new()
        },
        from: day_start(tz, monday),
        to: day_start(tz, monday + Duration::days(7)),
        only_open_future: false,
    }
}

/// Seven columns from Monday, each with its slots.
fn day_columns(list: &[Slot], monday: NaiveDate, tz: Tz, clock: &Clock) -> Vec<DayCol> {
    let now = clock.now_ms();
    let today = clock.today(tz);
    let mut days: Vec<DayCol> = (0..7)
        .map(|i| {
            let d = monday + Duration::days(i);
            DayCol {
                date: d.format(DATE_FMT).to_string(),
                label: crate::i18n::format::day_short(crate::i18n::current(), d),
                today: d == today,
                slots: Vec::new(),
                overrides: Vec::new(),
            }
        })
        .collect();
    for s in list {
        let Some(d) = local_date(s.starts_at, tz) else {
            continue;
        };
        let i = (d - monday).num_days();
        if let Some(col) = usize::try_from(i).ok().and_then(|i| days.get_mut(i)) {
            col.slots.push(SlotCell {
                id: s.id,
                time: format!(
                    "{}–{}",
                    crate::web::view::time::clock(s.starts_at, tz),
                    crate::web::view::time::clock(s.ends_at, tz)
                ),
                sku_code: s.sku_code.clone(),
                staff: s.staff_name.clone().unwrap_or_default(),
                booked: s.booked,
                capacity: s.capacity,
                fill: s.fill(now),
                reason: s.closed_reason.clone().unwrap_or_default(),
                to_call: 0,
            });
        }
    }
    days
}

/// The services the grid draws: all of them, or a page of [`WEEK_SERVICES`] when there are more
/// and no service is chosen (a chosen one is filtered by the slot query itself).
fn services_shown(
    skus: &[Sku],
    q: &WeekQuery,
    ctx: &StoreCtx,
    monday: NaiveDate,
) -> (Vec<Sku>, Option<Pager>) {
    if !q.service.trim().is_empty() || skus.len() <= WEEK_SERVICES {
        return (skus.to_vec(), None);
    }
    let pages = Pager::pages(skus.len() as i64, WEEK_SERVICES as i64);
    let page = q.page.trim().parse::<i64>().unwrap_or(1).clamp(1, pages);
    let shown = skus
        .iter()
        .skip((page - 1) as usize * WEEK_SERVICES)
        .take(WEEK_SERVICES)
        .cloned()
        .collect();
    let week = monday.format(DATE_FMT).to_string();
    let pager = Pager {
        path: paths::slots(),
        query: query(&[
            ("store", ctx.value.as_str()),
            ("week", &week),
            ("staff", q.staff.trim()),
        ]),
        page,
        pages,
        target: "week-grid",
    };
    (shown, Some(pager))
}

impl WeekPage {
    fn new(
        layout: Layout,
        ctx: StoreCtx,
        q: &WeekQuery,
        (skus, shown, staff): (&[Sku], &[Sku], &[Staff]),
        (monday, clock): (NaiveDate, &Clock),
        list: &[Slot],
        pager: Option<Pager>,
    ) -> WeekPage {
        let tz = ctx.tz();
        let (service, staff_filter) = (q.service.trim(), q.staff.trim());
        let next = monday + Duration::days(7);
        let this_monday = monday_of(clock.today(tz));
        let href = |week: NaiveDate| {
            let week = week.format(DATE_FMT).to_string();
            let pairs = [("store", ctx.value.as_str()), ("week", &week)];
            let filters = [
                ("service", service),
                ("staff", staff_filter),
                ("page", q.page.trim()),
            ];
            link(&paths::slots(), &[&pairs[..], &filters[..]].concat())
        };
        let mut book = book::StaffBook::new(book::From::Week, &ctx);
        if ctx.can_edit {
            let now = clock.now_ms();
            book.choices = list
                .iter()
                .filter(|s| book::bookable(s, now))
                .map(|s| book::choice(s, tz))
                .collect();
        }
        WeekPage {
            book,
            layout,
            prev_href: href(monday - Duration::days(7)),
            next_href: href(next),
            this_href: href(this_monday),
            week: monday.format(DATE_FMT).to_string(),
            week_label: {
                let lang = crate::i18n::current();
                let day = |d| crate::i18n::format::day_short(lang, d);
                format!("{} – {}", day(monday), day(next - Duration::days(1)))
            },
            this_week: this_monday.format(DATE_FMT).to_string(),
            services: service_options(skus, service),
            service_links: shown
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
            service: service.to_string(),
            staff: staff_filter.to_string(),
            slot_count: list.len(),
            days: day_columns(list, monday, tz, clock),
            pager,
            ctx,
        }
    }
}

pub async fn week(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<WeekQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(&state, &cx.user, &q.store, Tab::Week, &paths::slots()).await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let tz = store.tz();
    let monday = monday_of(parse_day(&q.week).unwrap_or_else(|| state.db.clock.today(tz)));
    let skus = schedule::service_skus(&state.db, store.merchant_id).await?;
    let staff = staff::staff_of_store(&state.db, store.merchant_id, store.id).await?;
    let (shown, pager) = services_shown(&skus, &q, &ctx, monday);
    let filter = week_filter(&store, (&skus, &shown), &q, monday);
    let list = slots::list(&state.db, Scope::Merchant(store.merchant_id), &filter).await?;
    let mut page = WeekPage::new(
        cx.layout().await,
        ctx,
        &q,
        (&skus, &shown, &staff),
        (monday, &state.db.clock),
        &list,
        pager,
    );
    let marked =
        schedule::overrides::in_store(&state.db, store.id, monday, monday + Duration::days(7))
            .await?;
    let waiting = crate::domain::slots::to_call::per_slot(&state.db, store.id).await?;
    for cell in page.days.iter_mut().flat_map(|d| d.slots.iter_mut()) {
        cell.to_call = waiting.get(&cell.id).copied().unwrap_or(0);
    }
    let shown_codes: std::collections::HashSet<&str> =
        shown.iter().map(|s| s.code.as_str()).collect();
    for (date, code, closed) in marked
        .into_iter()
        .filter(|(_, code, _)| shown_codes.contains(code.as_str()))
    {
        if let Some(col) = page.days.iter_mut().find(|d| d.date == date) {
            col.overrides.push((code, closed));
        }
    }
    cx.answer(StatusCode::OK, &page, Part::Target("week-grid"), |p| {
        p.as_grid().render()
    })
}
