//! The audit log page: who changed what, when and from where. Merchant admins read their
//! merchant's rows, operators every merchant's (and can pick one); store staff are refused. The
//! filters are a plain GET form (htmx swaps only the table) and the CSV export takes the same query.

use crate::web::kit::paths;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::trail::audit::{self, Cursor, Entry, Filter, EXPORT_MAX};
use crate::domain::{tenancy::tenants, MerchantId, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::actor::People;
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
    /// Who, as people read it.
    pub actor: String,
    /// Who, as the records keep it (`user:…`, `apikey:ID:NAME`, `system:…`): a stable hook.
    pub actor_label: String,
    pub action: String,
    pub subject: String,
    pub detail: String,
    pub source: String,
    pub ip: String,
}

/// A row's detail as the reader reads it. Details are stored as written, mostly names, reasons
/// and values people typed, in the language they typed them; the few the code writes in a fixed
/// form (what a schedule save did) are read back and said in the reader's language. Any other
/// detail, and the CSV export, stay as stored.
fn detail_said(action: &str, detail: &str) -> String {
    let words: Vec<&str> = detail.split_whitespace().collect();
    let n = |w: &str| w.trim_end_matches(',').parse::<usize>().ok();
    let said = match (action, words.as_slice()) {
        (
            "schedule.apply",
            [created, "created,", removed, "removed,", changed, "capacity", "changed,", kept, "kept", "with", "bookings,", edited, "hand-edited", "capacities", "kept"],
        ) => (|| {
            Some(messages::audit_schedule_applied(
                n(created)?,
                n(removed)?,
                n(changed)?,
                n(kept)?,
                n(edited)?,
            ))
        })(),
        ("schedule.replace", [rules, "rules", "in", store]) => {
            n(rules).map(|r| messages::audit_schedule_rules(r, store))
        }
        _ => None,
    };
    said.unwrap_or_else(|| detail.to_string())
}

fn row_view(e: Entry, tz: Tz, people: &People) -> RowView {
    RowView {
        time: crate::web::view::time::when_s(e.at, tz),
        merchant: e.merchant_name.unwrap_or_default(),
        detail: detail_said(&e.action, &e.detail),
        actor: people.say(&e.actor),
        actor_label: e.actor,
        action: e.action,
        subject: e.subject,
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
    let people = People::of(&state.db, r.scope.merchant()).await?;
    let export_capped = page.export_capped();
    let t = AuditPage {
        layout: cx.layout().await,
        show_merchant: r.scope == Scope::All,
        merchants: r.merchants,
        actions,
        rows: page
            .entries
            .into_iter()
            .map(|e| row_view(e, r.tz, &people))
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

#[cfg(test)]
mod tests {
    use super::detail_said;
    use crate::i18n::{scope, Lang};

    #[tokio::test]
    async fn schedule_details_are_said_in_the_readers_language_and_others_as_stored() {
        let applied = "192 created, 0 removed, 3 capacity changed, 1 kept with bookings, 2 hand-edited capacities kept";
        let rules = "7 rules in main-store";
        assert_eq!(detail_said("schedule.apply", applied), applied);
        assert_eq!(detail_said("schedule.replace", rules), rules);
        let zh = scope(Lang::ZhCn, async {
            [
                detail_said("schedule.apply", applied),
                detail_said("schedule.replace", rules),
                detail_said("closure.create", "Alice: 12 created, annual leave"),
                detail_said("schedule.apply", "something else"),
            ]
        })
        .await;
        assert_eq!(
            zh[0],
            "新建 192 个时段，删除 0 个，3 个名额有变化，1 个因有预约而保留，2 个手动设置的名额保持不变"
        );
        assert_eq!(zh[1], "门店 main-store：7 条排班规则");
        assert_eq!(zh[2], "Alice: 12 created, annual leave");
        assert_eq!(zh[3], "something else");
    }
}
