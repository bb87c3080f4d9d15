//! The dashboard: what needs attention (not sellable, low stock, open findings, today's
//! bookings) and what the user's scope holds.

use crate::web::kit::paths;
use askama::Template;
use axum::extract::State;
use axum::response::Response;

use crate::domain::sellable::{self, Totals};
use crate::domain::{catalog, reconcile, slots::booking, tenancy::tenants};
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::AppState;

/// The dashboard's figures about selling.
#[derive(Debug, Clone, Default)]
pub struct Tiles {
    pub not_sellable: i64,
    pub low_stock: i64,
    /// None for store staff, who do not review findings.
    pub open_findings: Option<i64>,
    pub bookings_today: i64,
}

#[derive(Template)]
#[template(path = "admin/dashboard.html")]
struct DashboardPage {
    layout: Layout,
    /// Not sellable, low stock, open findings, today's bookings.
    tiles: Tiles,
    counts: Vec<(String, i64)>,
    total: i64,
    stores: Vec<tenants::Store>,
    /// A merchant admin edits what the stores' booking pages say.
    edits_stores: bool,
    warehouses: Vec<tenants::Warehouse>,
    merchants: usize,
    /// Operators: each merchant's name by id, to say whose store or warehouse a row is.
    merchant_names: std::collections::HashMap<crate::domain::MerchantId, String>,
    /// Open reconciliation findings in the user's scope (store staff: not counted).
    open_findings: i64,
    /// Payments to settle (merchant admins and operators).
    open_exceptions: Option<i64>,
    /// The merchant's webhooks paused after a day of failures (merchant admins).
    failing: Vec<crate::web::view::hooks::HookView>,
    /// Since when the Redis gate has been off (over a minute), as the page says it.
    gate_off_since: Option<String>,
    /// The merchant's code imports that failed in the last day (merchant admins).
    failed_imports: i64,
    /// Per store the user works in: bookings in closed slots nobody has reached yet (name,
    /// store query value, count); operators do not call customers.
    to_call: Vec<(String, String, i64)>,
    /// Per store the user works in: today's fill and this week's no-show rate.
    today: Vec<TodayView>,
}

/// A store's headline figures as the dashboard shows them.
pub struct TodayView {
    pub store_name: String,
    pub store_slug: String,
    pub fill: String,
    pub booked: i64,
    pub capacity: i64,
    pub no_show: String,
    /// Nothing was marked this week: the rate is a dash, and the page says how to get one.
    pub unmarked_week: bool,
}

impl DashboardPage {
    /// The merchant a store or warehouse belongs to, for the operator's lists.
    fn merchant_of(&self, id: &crate::domain::MerchantId) -> &str {
        self.merchant_names.get(id).map_or("", String::as_str)
    }
}

pub async fn show(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    crate::web::kit::fix_trail::end(&cx.session).await;
    let scope = cx.user.actor("").scope();
    let th = state.config.sellable_thresholds();
    let totals = Totals::of(&sellable::recent_catalog(&state.db, &th, scope, None).await?);
    let open_findings = match cx.user.account.findings_scope() {
        Ok(s) => Some(reconcile::open_count(&state.db, s).await?),
        Err(_) => None,
    };
    let tiles = Tiles {
        not_sellable: totals.blocked,
        low_stock: totals.low_stock,
        open_findings,
        bookings_today: booking::today_count(&state.db, scope).await?,
    };
    let counts = catalog::count_products(&state.db, scope).await?;
    let (failing, failed_imports) = match cx.user.account.require_admin() {
        Ok(m) => (
            crate::web::view::hooks::failing_views(&state, m).await?,
            crate::domain::integration::alerts::failed_imports(&state.db, m).await?,
        ),
        Err(_) => (Vec::new(), 0),
    };
    let tz = match scope {
        crate::domain::Scope::Merchant(m) => tenants::merchant(&state.db, m).await?.tz(),
        _ => chrono_tz::UTC,
    };
    let gate_off_since = crate::domain::integration::alerts::gate_degraded_since(&state.db)
        .await?
        .map(|t| crate::web::view::time::when(t, tz));
    let mut to_call = Vec::new();
    let mut today = Vec::new();
    if cx.user.account.role() != crate::domain::kernel::scope::Role::Operator {
        for store in tenants::stores(&state.db, scope).await? {
            if !cx.user.account.sees_store(store.id) {
                continue;
            }
            let (waiting, _) = crate::domain::slots::to_call::counts(&state.db, store.id).await?;
            if waiting > 0 {
                to_call.push((store.name.clone(), store.slug.clone(), waiting));
            }
            let t = crate::domain::slots::today::of(&state.db, &store).await?;
            today.push(TodayView {
                fill: cx.lang.percent(t.fill_rate()),
                booked: t.booked,
                capacity: t.capacity,
                no_show: cx.lang.percent(t.week.no_show_rate()),
                unmarked_week: t.week.attended + t.week.no_show == 0,
                store_name: store.name,
                store_slug: store.slug,
            });
        }
    }
    let all_merchants = tenants::merchants(&state.db, scope).await?;
    let page = DashboardPage {
        layout: cx.layout().await,
        tiles,
        total: counts.iter().map(|(_, n)| n).sum(),
        counts,
        stores: tenants::stores(&state.db, scope).await?,
        edits_stores: cx.user.account.require_admin().is_ok(),
        warehouses: tenants::warehouses(&state.db, scope).await?,
        merchants: all_merchants.len(),
        merchant_names: if cx.user.account.merchant_id.is_none() {
            all_merchants.into_iter().map(|m| (m.id, m.name)).collect()
        } else {
            Default::default()
        },
        open_findings: open_findings.unwrap_or(0),
        // The people who settle payments, or oversee them, see how many wait.
        open_exceptions: match cx.user.account.findings_scope() {
            Ok(s) => Some(crate::domain::orders::exceptions::count_open(&state.db, s).await?),
            Err(_) => None,
        },
        failing,
        gate_off_since,
        failed_imports,
        to_call,
        today,
    };
    cx.whole(&page)
}
