//! The audit log page: who changed what, when and from where. Merchant admins read their
//! merchant's rows, operators every merchant's (and can pick one); store staff are refused. The
//! filters are a plain GET form (htmx swaps only the table) and the CSV export takes the same query.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::audit::{self, Cursor, Entry, Filter, EXPORT_MAX};
use crate::domain::{tenants, MerchantId, Scope};
use crate::web::auth::CurrentUser;
use crate::web::error::WebError;
use crate::web::layout::Layout;
use crate::web::page::{PageCtx, Part};
use crate::web::view::time::day_bound;
use crate::web::view::{query, thousands};
use crate::web::AppState;

#[derive(Deserialize, Default, Clone)]
pub struct AuditQuery {
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    actor: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    subject: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    /// Older than this row id.
    #[serde(default)]
    before: String,
    /// Newer than this row id.
    #[serde(default)]
    after: String,
}

impl AuditQuery {
    /// The filters as a query string (no page cursor), for the pager and the export link.
    fn filters(&self) -> String {
        query(&[
            ("merchant", self.merchant.trim()),
            ("actor", self.actor.trim()),
            ("action", self.action.trim()),
            ("subject", self.subject.trim()),
            ("from", self.from.trim()),
            ("to", self.to.trim()),
        ])
    }

    fn cursor(&self) -> Cursor {
        match (self.before.trim().parse(), self.after.trim().parse()) {
            (Ok(id), _) => Cursor::Before(id),
            (_, Ok(id)) => Cursor::After(id),
            _ => Cursor::Newest,
        }
    }
}

pub struct RowView {
    pub time: String,
    pub merchant: String,
    pub actor: String,
    pub action: String,
    pub subject: String,
    pub detail: String,
    pub source: String,
    pub ip: String,
}

fn row_view(e: Entry, tz: Tz) -> RowView {
    RowView {
        time: crate::web::view::time::when_s(e.at, tz),
        merchant: e.merchant_name.unwrap_or_default(),
        actor: e.actor,
        action: e.action,
        subject: e.subject,
        detail: e.detail,
        source: e.source,
        ip: e.ip,
    }
}

#[derive(Template)]
#[template(path = "admin/audit.html", blocks = ["table"])]
struct AuditPage {
    layout: Layout,
    filter: AuditQuery,
    show_merchant: bool,
    merchants: Vec<tenants::Merchant>,
    actions: Vec<String>,
    rows: Vec<RowView>,
    newer: Option<i64>,
    older: Option<i64>,
    /// Not on the newest page: offer a way back to it.
    paged: bool,
    matching: i64,
    export_capped: bool,
    export_max: String,
    tz_name: String,
    base_query: String,
}

/// What the signed-in user may read, the filter of the query, and the timezone of its dates.
struct Resolved {
    scope: Scope,
    filter: Filter,
    tz: Tz,
    merchants: Vec<tenants::Merchant>,
}

async fn resolve(
    state: &AppState,
    user: &CurrentUser,
    q: &AuditQuery,
) -> Result<Resolved, WebError> {
    let scope = audit::reader_scope(&user.actor(""))?;
    let (merchants, tz) = match scope {
        Scope::All => (tenants::merchants(&state.db, scope).await?, chrono_tz::UTC),
        Scope::Merchant(m) => (Vec::new(), tenants::merchant(&state.db, m).await?.tz()),
    };
    // Only operators pick a merchant; an unknown one matches nothing rather than everything.
    let merchant_id = (!merchants.is_empty() && !q.merchant.trim().is_empty()).then(|| {
        merchants
            .iter()
            .find(|m| m.slug == q.merchant.trim())
            .map(|m| m.id)
            .unwrap_or(MerchantId(-1))
    });
    let filter = Filter {
        merchant_id,
        actor: q.actor.clone(),
        action: q.action.clone(),
        subject: q.subject.clone(),
        from: day_bound(&q.from, tz, false),
        to: day_bound(&q.to, tz, true),
    };
    Ok(Resolved {
        scope,
        filter,
        tz,
        merchants,
    })
}

pub async fn list(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<AuditQuery>,
) -> Result<Response, WebError> {
    let r = resolve(&state, &cx.user, &q).await?;
    let cursor = q.cursor();
    let page = audit::page(&state.db, r.scope, &r.filter, cursor).await?;
    let actions = audit::actions(&state.db, r.scope).await?;
    let export_capped = page.export_capped();
    let t = AuditPage {
        layout: cx.layout().await,
        show_merchant: r.scope == Scope::All,
        merchants: r.merchants,
        actions,
        rows: page
            .entries
            .into_iter()
            .map(|e| row_view(e, r.tz))
            .collect(),
        newer: page.newer,
        older: page.older,
        paged: cursor != Cursor::Newest,
        matching: page.matching,
        export_capped,
        export_max: thousands(EXPORT_MAX),
        tz_name: r.tz.name().to_string(),
        base_query: q.filters(),
        filter: q,
    };
    // The filter form asks htmx for the table alone.
    cx.answer(StatusCode::OK, &t, Part::Target("audit-table"), |p| {
        p.as_table().render()
    })
}

pub async fn csv(
    State(state): State<AppState>,
    user: CurrentUser,
    Query(q): Query<AuditQuery>,
) -> Result<Response, WebError> {
    let r = resolve(&state, &user, &q).await?;
    let body = audit::csv(&state.db, r.scope, &r.filter, r.tz).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"audit-log.csv\"",
            ),
        ],
        body,
    )
        .into_response())
}
