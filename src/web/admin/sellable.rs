//! "Not sellable": every SKU that cannot be sold right now, grouped by reason (operators: every
//! merchant, or one). The verdict panel on a SKU's own pages is `web::view::verdicts`.

use crate::domain::MerchantId;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;

use crate::domain::sellable::{self, Group, ListFilter, ReasonCode, Totals, Verdict};
use crate::domain::{tenancy::tenants, Scope};
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::AppState;
// Used by the templates: `fix.link()`.
use crate::web::view::links::FixLink;

/// SKUs shown under each reason on the overview; the reason's own page lists them all.
pub const GROUP_CAP: usize = 20;
pub const PER_PAGE: i64 = 50;

#[derive(Deserialize, Default)]
pub struct PageQuery {
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    page: String,
    /// `1`: every SKU judged now rather than the catalog as kept ("Check again now").
    #[serde(default)]
    fresh: String,
}

#[derive(Template)]
#[template(path = "admin/sellable/index.html")]
struct IndexPage {
    layout: Layout,
    operator: bool,
    merchants: Vec<tenants::Merchant>,
    merchant: String,
    /// `&merchant=…` for links, empty when not filtered.
    merchant_query: String,
    reason: String,
    reason_title: String,
    is_warning: bool,
    totals: Totals,
    groups: Vec<Group>,
    rows: Vec<Verdict>,
    page: i64,
    pages: i64,
    total: i64,
    /// Seconds since the verdicts' facts were read.
    judged_ago: i64,
}

pub async fn index(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<PageQuery>,
) -> Result<Response, WebError> {
    let list = crate::web::view::link(
        &paths::sellable(),
        &[
            ("merchant", q.merchant.as_str()),
            ("reason", q.reason.as_str()),
            ("page", q.page.as_str()),
        ],
    );
    let scope = cx.actor("").scope();
    let operator = scope == Scope::All;
    let merchants = if operator {
        tenants::merchants(&state.db, scope).await?
    } else {
        Vec::new()
    };
    let chosen = merchants.iter().find(|m| m.slug == q.merchant);
    let merchant_id = chosen.map(|m| m.id);
    crate::web::kit::fix_trail::at_list(&cx.session, list, merchant_id).await;
    let merchant = chosen.map(|m| m.slug.clone()).unwrap_or_default();
    let th = state.config.sellable_thresholds();
    let all = if q.fresh == "1" {
        sellable::judged_now(&state.db, &th, scope, merchant_id).await?
    } else {
        sellable::recent_catalog(&state.db, &th, scope, merchant_id).await?
    };
    let code = ReasonCode::parse(&q.reason);
    let reason = code.map(ReasonCode::as_str).unwrap_or("");
    let is_warning = code.is_some_and(ReasonCode::is_warning);
    let mut page = IndexPage {
        layout: cx.layout().await,
        operator,
        merchants,
        merchant_query: if merchant.is_empty() {
            String::new()
        } else {
            format!("&merchant={merchant}")
        },
        merchant,
        reason: reason.to_string(),
        reason_title: code
            .map(|c| crate::messages::reason_title(c.as_str()))
            .unwrap_or_default(),
        is_warning,
        // Pages may show a catalog judged a few seconds ago (`sellable::recent`): say how long.
        judged_ago: ((state.db.now_ms() - all.read_at) / 1000).max(0),
        totals: Totals::default(),
        groups: Vec::new(),
        rows: Vec::new(),
        page: 1,
        pages: 1,
        total: 0,
    };
    match code {
        None => {
            page.totals = Totals::of(&all);
            page.groups = sellable::groups(&all, GROUP_CAP);
        }
        Some(code) => page.list(&all, code, merchant_id, &q.page),
    }
    cx.whole(&page)
}

impl IndexPage {
    /// A fix link from this list: it starts a trail back here (see `web::kit::fix_trail`).
    fn fix_href(&self, fix: &crate::domain::sellable::Fix) -> String {
        let link = fix.link();
        let sep = if link.contains('?') { '&' } else { '?' };
        format!("{link}{sep}from=sellable")
    }

    /// One reason's page: every SKU that has it, paginated.
    fn list(
        &mut self,
        all: &[sellable::Shared],
        code: ReasonCode,
        merchant_id: Option<MerchantId>,
        page: &str,
    ) {
        let filter = ListFilter {
            // A warning's SKUs can be sold; a reason's cannot.
            status: if code.is_warning() { "all" } else { "blocked" }.into(),
            merchant_id,
            reason: code.to_string(),
            page: page.parse().unwrap_or(1),
            per_page: PER_PAGE,
            fresh: false,
        };
        let l = sellable::page_of(all, &filter);
        self.totals = l.totals;
        self.rows = l.items;
        self.page = l.page;
        self.pages = l.pages;
        self.total = l.total;
    }
}

#[derive(Template)]
#[template(path = "admin/sellable/_back.html")]
struct BackBanner {
    layout: Layout,
}

/// The banner on the way back to Not sellable, asked for again after a fix made in place (an
/// htmx form answers with `HX-Trigger: sellable-changed`): its count made anew. Empty once the
/// trail has ended.
pub async fn back(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    let layout = Layout {
        lang: cx.lang,
        back_to_sellable: crate::web::kit::fix_trail::left(&state, &cx.user, &cx.session).await,
        ..Layout::default()
    };
    cx.whole(&BackBanner { layout })
}
