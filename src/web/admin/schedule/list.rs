//! The Schedules tab: every service of the store with its weekly hours and upcoming date
//! overrides at a glance, each leading to its editor.

use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;

use super::{lines_of, RuleLine, StoreQuery};
use crate::domain::catalog::Sku;
use crate::domain::schedule::{self, overrides};
use crate::domain::staff as members;
use crate::web::error::WebError;
use crate::web::layout::Layout;
use crate::web::page::PageCtx;
use crate::web::view::store::{self, no_store_page, StoreCtx};
use crate::web::view::time;
use crate::web::AppState;

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
}

pub async fn index(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(&state, &cx.user, &q.store, "schedules", "/admin/schedules").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let staff = members::staff_of_store(&state.db, store.merchant_id, store.id).await?;
    let today = time::today(store.tz());
    let mut services = Vec::new();
    for sku in schedule::service_skus(&state.db, store.merchant_id).await? {
        let rules = schedule::rules_of(&state.db, sku.id, store.id).await?;
        let dated = overrides::by_date(&state.db, sku.id, store.id, today).await?;
        services.push(ServiceSchedule {
            lines: lines_of(&rules, &staff),
            overridden: dated.len(),
            sku,
        });
    }
    let page = SchedulesPage {
        layout: cx.layout().await,
        ctx,
        services,
    };
    cx.whole(&page)
}
