//! The Bookings tab: every booking of the store, upcoming, past or cancelled, searched by name,
//! phone or reference and filtered by service and staff member, a page at a time, and the same
//! selection as CSV.

use crate::domain::slots::booking::BookingStatus;
use crate::domain::slots::SlotStatus;
use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::domain::slots::booking::list::{self, BookingSort, Filter, Listed, When};
use crate::domain::slots::schedule;
use crate::domain::slots::staff as members;
use crate::domain::DomainError;
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::pager::Pager;
use crate::web::view::sort::Sorting;
use crate::web::view::store::{self, no_store_page, StoreCtx};
use crate::web::view::time::{clock, when as when_text, DATETIME_FMT};
use crate::web::view::{query, Opt};
use crate::web::AppState;

const PER_PAGE: i64 = 50;
/// The most rows one CSV export holds; the page says when a selection is larger.
const EXPORT_MAX: i64 = 50_000;

#[derive(Deserialize, Default, Clone)]
pub struct ListQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    when: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    service: String,
    #[serde(default)]
    staff: String,
    #[serde(default)]
    page: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    desc: String,
}

pub struct Row {
    pub b: Listed,
    pub when: String,
}

#[derive(Template)]
#[template(path = "admin/slots/booking_list.html")]
struct ListPage {
    layout: Layout,
    ctx: StoreCtx,
    when: &'static str,
    q: String,
    services: Vec<Opt>,
    staff: Vec<Opt>,
    rows: Vec<Row>,
    total: i64,
    pager: Pager,
    sorting: Sorting,
    /// The filters as a query string (without the page), for the CSV link.
    filters: String,
    /// The filters without `when`, for the tabs.
    filters_but_when: String,
    /// A search that found nothing in this tab: the other tabs where it finds bookings, and how
    /// many (`when`, count).
    elsewhere: Vec<(&'static str, i64)>,
}

struct Resolved {
    ctx: StoreCtx,
    filter: Filter,
    services: Vec<Opt>,
    staff: Vec<Opt>,
}

async fn resolve(state: &AppState, cx: &PageCtx, q: &ListQuery) -> Result<Resolved, WebError> {
    let ctx = store::ctx(
        state,
        &cx.user,
        &q.store,
        Tab::Bookings,
        &paths::bookings_list(),
    )
    .await?;
    let Some(store) = ctx.store.clone() else {
        return Ok(Resolved {
            ctx,
            filter: Filter::default(),
            services: Vec::new(),
            staff: Vec::new(),
        });
    };
    let skus = schedule::service_skus(&state.db, store.merchant_id).await?;
    let people = members::staff_of_store(&state.db, store.merchant_id, store.id).await?;
    // An unknown choice filters nothing rather than everything: the select shows "all".
    let sku_id = skus.iter().find(|s| s.code == q.service).map(|s| s.id);
    let staff_id = people
        .iter()
        .find(|s| s.id.to_string() == q.staff)
        .map(|s| s.id);
    Ok(Resolved {
        filter: Filter {
            when: When::parse(&q.when),
            text: q.q.chars().take(100).collect(),
            sku_id,
            staff_id,
            sort: BookingSort::parse(&q.sort),
            desc: q.desc == "1",
        },
        services: skus
            .iter()
            .map(|s| Opt {
                value: s.code.clone(),
                label: format!("{} · {}", s.code, s.name),
                selected: Some(s.id) == sku_id,
            })
            .collect(),
        staff: people
            .iter()
            .map(|s| Opt {
                value: s.id.to_string(),
                label: s.name.clone(),
                selected: Some(s.id) == staff_id,
            })
            .collect(),
        ctx,
    })
}

fn filters(ctx: &StoreCtx, f: &Filter, q: &ListQuery, with_when: bool) -> String {
    let when = f.when.as_str();
    let mut pairs: Vec<(&str, &str)> = vec![("store", ctx.value.as_str())];
    if with_when {
        pairs.push(("when", when));
    }
    for (k, v) in [
        ("q", q.q.as_str()),
        ("service", q.service.as_str()),
        ("staff", q.staff.as_str()),
    ] {
        if !v.trim().is_empty() {
            pairs.push((k, v));
        }
    }
    query(&pairs)
}

pub async fn list(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    let r = resolve(&state, &cx, &q).await?;
    let Some(store) = r.ctx.store.clone() else {
        return no_store_page(&cx, r.ctx).await;
    };
    let tz = store.tz();
    let total = list::count(&state.db, store.id, &r.filter).await?;
    let pages = Pager::pages(total, PER_PAGE);
    let page = q.page.trim().parse::<i64>().unwrap_or(1).clamp(1, pages);
    let rows = list::page(
        &state.db,
        store.id,
        &r.filter,
        PER_PAGE,
        (page - 1) * PER_PAGE,
    )
    .await?;
    // A search finds nothing here: say where it does, rather than doubt the spelling.
    let mut elsewhere = Vec::new();
    if total == 0 && !r.filter.text.trim().is_empty() {
        for w in [When::Upcoming, When::Past, When::Cancelled] {
            if w == r.filter.when {
                continue;
            }
            let f = Filter {
                when: w,
                ..r.filter.clone()
            };
            let n = list::count(&state.db, store.id, &f).await?;
            if n > 0 {
                elsewhere.push((w.as_str(), n));
            }
        }
    }
    let rows = rows
        .into_iter()
        .map(|b| Row {
            when: format!("{}–{}", when_text(b.starts_at, tz), clock(b.ends_at, tz)),
            b,
        })
        .collect();
    let sorting = Sorting {
        path: paths::bookings_list(),
        filters: filters(&r.ctx, &r.filter, &q, true),
        key: r
            .filter
            .sort
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
        desc: r.filter.sort.is_some() && r.filter.desc,
    };
    let p = ListPage {
        layout: cx.layout().await,
        when: r.filter.when.as_str(),
        q: q.q.clone(),
        // The CSV holds the same selection in the same order.
        filters: sorting.query(),
        filters_but_when: filters(&r.ctx, &r.filter, &q, false),
        elsewhere,
        services: r.services,
        staff: r.staff,
        rows,
        total,
        pager: Pager {
            path: paths::bookings_list(),
            query: sorting.query(),
            page,
            pages,
            target: "",
        },
        sorting,
        ctx: r.ctx,
    };
    cx.whole(&p)
}

pub async fn csv(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    let r = resolve(&state, &cx, &q).await?;
    let store = r.ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let tz = store.tz();
    let rows = list::all(&state.db, store.id, &r.filter, EXPORT_MAX).await?;
    // A byte-order mark first: spreadsheet programs then read the customers' Chinese names as
    // UTF-8 instead of the system's code page.
    let body = "\u{feff}".to_string()
        + &list::csv(&rows, |ms| {
            crate::web::view::time::local(ms, tz)
                .format(DATETIME_FMT)
                .to_string()
        });
    let name = format!(
        "attachment; filename=\"bookings-{}-{}.csv\"",
        store.slug,
        r.filter.when.as_str()
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, name),
        ],
        body,
    )
        .into_response())
}
