//! The Schedules tab: every service of the store with its weekly hours and upcoming date
//! overrides at a glance, each leading to its editor, a page of services at a time (a store
//! with thousands of services reads a page's rules in two queries, not two per service).

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;

use serde::Deserialize;

use crate::domain::catalog::Sku;
use crate::domain::slots::schedule::{self, overrides};
use crate::domain::slots::staff as members;
use crate::web::admin::services::schedule::{lines_of, RuleLine};
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::pager::Pager;
use crate::web::view::query;
use crate::web::view::store::{self, no_store_page, StoreCtx};

use crate::web::AppState;

/// Services listed per page.
pub const PER_PAGE: usize = 25;

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    page: String,
}

pub struct ServiceSchedule {
    pub sku: Sku,
    pub lines: Vec<RuleLine>,
    /// Upcoming dates with other hours (or none).
    pub overridden: usize,
}

#[derive(Template)]
#[template(path = "admin/slots/schedules.html")]
struct SchedulesPage {
    layout: Layout,
    ctx: StoreCtx,
    services: Vec<ServiceSchedule>,
    /// Services of the store in all (every page).
    total: usize,
    pager: Pager,
}

pub async fn index(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(
        &state,
        &cx.user,
        &q.store,
        Tab::Schedules,
        &paths::schedules(),
    )
    .await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let staff = members::staff_of_store(&state.db, store.merchant_id, store.id).await?;
    let today = state.db.clock.today(store.tz());
    let all = schedule::service_skus(&state.db, store.merchant_id).await?;
    let pages = Pager::pages(all.len() as i64, PER_PAGE as i64);
    let page = q.page.trim().parse::<i64>().unwrap_or(1).clamp(1, pages);
    let shown: Vec<Sku> = all
        .iter()
        .skip((page - 1) as usize * PER_PAGE)
        .take(PER_PAGE)
        .cloned()
        .collect();
    let ids: Vec<i64> = shown.iter().map(|s| s.id).collect();
    let mut rules = schedule::rules_of_many(&state.db, store.id, &ids).await?;
    let dated = overrides::dates_per_service(&state.db, store.id, &ids, today).await?;
    let services = shown
        .into_iter()
        .map(|sku| ServiceSchedule {
            lines: lines_of(&rules.remove(&sku.id).unwrap_or_default(), &staff),
            overridden: dated.get(&sku.id).copied().unwrap_or(0) as usize,
            sku,
        })
        .collect();
    let pager = Pager {
        path: paths::schedules(),
        query: query(&[("store", ctx.value.as_str())]),
        page,
        pages,
        target: "",
    };
    let page = SchedulesPage {
        layout: cx.layout().await,
        ctx,
        services,
        total: all.len(),
        pager,
    };
    cx.whole(&page)
}
