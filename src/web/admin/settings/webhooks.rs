//! Webhooks in the back office: register an endpoint (its secret shown once), pause, resume,
//! rotate the secret, delete after a confirmation, and read the delivery log with a redeliver
//! button. A banner names the endpoints the sender paused after a day of failures.

use crate::web::kit::paths;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::integration::webhooks::{self, DeliveryStatus, WebhookStatus};
use crate::domain::trail::events::EventType;
use crate::domain::{tenancy::tenants, DomainError, MerchantId};
use crate::messages;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::hooks::{failing_views, hook_view, HookView};
use crate::web::view::time::when;
use crate::web::view::Errs;
use crate::web::AppState;

/// The families offered as boxes to tick; single types are typed in the field beside them.
pub const FAMILIES: &[&str] = &[
    "stock.*",
    "reservation.*",
    "booking.*",
    "sku.*",
    "slot.*",
    "closure.*",
    "code_batch.*",
    "code.*",
    "reconcile.*",
    "exception.*",
    "gate.*",
    "webhook.*",
];

#[derive(Template)]
#[template(path = "admin/webhooks/list.html")]
struct ListPage {
    layout: Layout,
    hooks: Vec<HookView>,
    /// The endpoints paused for failing: the banner.
    failing: Vec<HookView>,
    families: &'static [&'static str],
    types: &'static [&'static str],
    /// What the form holds after a refusal.
    url: String,
    ticked: Vec<String>,
    others: String,
    errors: Errs,
    /// The secret of a webhook just created: on this one response only.
    new_secret: Option<String>,
    allow_private: bool,
}

impl ListPage {
    fn is_ticked(&self, family: &str) -> bool {
        self.ticked.iter().any(|t| t == family)
    }
}

fn admin_merchant(cx: &PageCtx) -> Result<MerchantId, WebError> {
    Ok(cx.user.account.require_admin()?)
}

async fn tz_of(state: &AppState, merchant_id: MerchantId) -> Result<Tz, WebError> {
    Ok(tenants::merchant(&state.db, merchant_id).await?.tz())
}

async fn list_page(
    state: &AppState,
    cx: &PageCtx,
    merchant_id: MerchantId,
) -> Result<ListPage, WebError> {
    let tz = tz_of(state, merchant_id).await?;
    let now = state.db.now_ms();
    let hooks: Vec<HookView> = webhooks::list(&state.db, merchant_id)
        .await?
        .iter()
        .map(|w| hook_view(w, tz, now))
        .collect();
    let failing = failing_views(state, merchant_id).await?;
    Ok(ListPage {
        layout: cx.layout().await,
        hooks,
        failing,
        families: FAMILIES,
        types: EventType::NAMES,
        url: String::new(),
        ticked: Vec::new(),
        others: String::new(),
        errors: Errs::default(),
        new_secret: None,
        allow_private: state.config.serve.webhook_allow_private,
    })
}

pub async fn list(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    cx.whole(&list_page(&state, &cx, merchant_id).await?)
}

/// The page's secret answer: never cached, never kept in history.
fn secret_page(html: String) -> Response {
    (
        [(axum::http::header::CACHE_CONTROL, "no-store")],
        Html(html),
    )
        .into_response()
}

/// The create form: `url`, ticked `events` boxes (repeated), and `others` typed by hand.
pub async fn create(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    let field = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let url = field("url");
    let others = field("others");
    let ticked: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| k == "events")
        .map(|(_, v)| v.clone())
        .collect();
    let mut events = ticked.clone();
    events.push(others.clone());
    match webhooks::create(
        &state.db,
        &state.codes,
        &cx.actor(&paths::webhooks()),
        merchant_id,
        &url,
        &events,
        webhooks::Rules {
            allow_private: state.config.serve.webhook_allow_private,
            max_per_merchant: state.config.serve.max_webhooks_per_merchant,
        },
    )
    .await
    {
        Ok((_, secret)) => {
            let mut page = list_page(&state, &cx, merchant_id).await?;
            page.new_secret = Some(secret);
            Ok(secret_page(page.render()?))
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = list_page(&state, &cx, merchant_id).await?;
            page.url = url;
            page.ticked = ticked;
            page.others = others;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

pub struct DeliveryView {
    pub id: i64,
    pub event_id: i64,
    pub event_type: String,
    pub status: &'static str,
    pub attempts: i64,
    pub next_attempt_at: String,
    pub last_at: String,
    pub last_status_code: String,
    pub last_latency_ms: String,
    pub last_error: String,
    pub last_head: String,
}

#[derive(Template)]
#[template(path = "admin/webhooks/show.html")]
struct ShowPage {
    layout: Layout,
    hook: HookView,
    active: bool,
    deliveries: Vec<DeliveryView>,
    status_filter: String,
    statuses: &'static [&'static str],
    /// `before=` for the next (older) page.
    older: Option<i64>,
    paged: bool,
    new_secret: Option<String>,
    overlap_default: i64,
    overlap_max: i64,
    overlap_typed: String,
    errors: Errs,
}

#[derive(Deserialize, Default)]
pub struct ShowQuery {
    #[serde(default)]
    status: String,
    #[serde(default)]
    before: String,
}

const PAGE: i64 = 50;

async fn show_page(
    state: &AppState,
    cx: &PageCtx,
    merchant_id: MerchantId,
    id: i64,
    q: &ShowQuery,
) -> Result<ShowPage, WebError> {
    let tz = tz_of(state, merchant_id).await?;
    let hook = webhooks::get(&state.db, merchant_id, id).await?;
    let status = DeliveryStatus::parse(q.status.trim());
    let before = q.before.trim().parse::<i64>().unwrap_or(0).max(0);
    let list = webhooks::deliveries(&state.db, merchant_id, id, status, before, PAGE).await?;
    let older = (list.len() as i64 == PAGE)
        .then(|| list.last().map(|d| d.id))
        .flatten();
    let deliveries = list
        .into_iter()
        .map(|d| DeliveryView {
            id: d.id,
            event_id: d.event_id,
            event_type: d.event_type.clone().unwrap_or_default(),
            status: d.state().as_str(),
            attempts: d.attempts,
            next_attempt_at: if d.state() == DeliveryStatus::Pending {
                when(d.next_attempt_at, tz)
            } else {
                String::new()
            },
            last_at: d.last_at.map(|t| when(t, tz)).unwrap_or_default(),
            last_status_code: d
                .last_status_code
                .map(|c| c.to_string())
                .unwrap_or_default(),
            last_latency_ms: d.last_latency_ms.map(|c| c.to_string()).unwrap_or_default(),
            last_error: d.last_error.unwrap_or_default(),
            last_head: d.last_head.unwrap_or_default(),
        })
        .collect();
    Ok(ShowPage {
        layout: cx.layout().await,
        active: hook.status == WebhookStatus::Active,
        hook: hook_view(&hook, tz, state.db.now_ms()),
        deliveries,
        status_filter: status.map_or("", |s| s.as_str()).to_string(),
        statuses: DeliveryStatus::NAMES,
        older,
        paged: before > 0,
        new_secret: None,
        overlap_default: webhooks::OVERLAP_DEFAULT_HOURS,
        overlap_max: webhooks::OVERLAP_MAX_HOURS,
        overlap_typed: String::new(),
        errors: Errs::default(),
    })
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(q): Query<ShowQuery>,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    cx.whole(&show_page(&state, &cx, merchant_id, id, &q).await?)
}

pub async fn pause(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    let hook = webhooks::pause(&state.db, &cx.actor(&paths::webhooks()), merchant_id, id).await?;
    cx.flash(FlashKind::Success, messages::webhook_paused(&hook.url))
        .await;
    Ok(Redirect::to(&paths::webhook(id)).into_response())
}

pub async fn resume(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    let hook = webhooks::resume(&state.db, &cx.actor(&paths::webhooks()), merchant_id, id).await?;
    cx.flash(FlashKind::Success, messages::webhook_resumed(&hook.url))
        .await;
    Ok(Redirect::to(&paths::webhook(id)).into_response())
}

#[derive(Deserialize)]
pub struct RotateForm {
    #[serde(default)]
    overlap_hours: String,
}

pub async fn rotate(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<RotateForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    let typed = form.overlap_hours.trim();
    let hours = match typed {
        "" => Ok(None),
        t => t
            .parse::<i64>()
            .map(Some)
            .map_err(|_| webhooks::overlap(Some(-1)).expect_err("-1 is refused")),
    };
    let result = match hours {
        Ok(h) => {
            webhooks::rotate(
                &state.db,
                &state.codes,
                &cx.actor(&paths::webhooks()),
                merchant_id,
                id,
                h,
            )
            .await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    match result {
        Ok((_, secret)) => {
            let mut page = show_page(&state, &cx, merchant_id, id, &ShowQuery::default()).await?;
            page.new_secret = Some(secret);
            Ok(secret_page(page.render()?))
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = show_page(&state, &cx, merchant_id, id, &ShowQuery::default()).await?;
            page.overlap_typed = form.overlap_hours;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Template)]
#[template(path = "admin/webhooks/delete.html")]
struct DeletePage {
    layout: Layout,
    hook: HookView,
}

pub async fn confirm_delete(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    let tz = tz_of(&state, merchant_id).await?;
    let hook = webhooks::get(&state.db, merchant_id, id).await?;
    let page = DeletePage {
        layout: cx.layout().await,
        hook: hook_view(&hook, tz, state.db.now_ms()),
    };
    cx.whole(&page)
}

pub async fn delete(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx)?;
    let hook = webhooks::get(&state.db, merchant_id, id).await?;
    webhooks::delete(&state.db, &cx.actor(&paths::webhooks()), merchant_id, id).await?;
    cx.flash(FlashKind::Success, messages::webhook_deleted(&hook.url))
        .await;
    Ok(Redirect::to(&paths::webhooks()).into_response())
}

pub async fn redeliver(
    State(state): State<AppState>,
    cx: PageCtx,
    path: Result<Path<(i64, i64)>, axum::extract::rejection::PathRejection>,
) -> Result<Response, WebError> {
    let Path((id, delivery)) = path?;
    let merchant_id = admin_merchant(&cx)?;
    let event = webhooks::redeliver(
        &state.db,
        &cx.actor(&paths::webhooks()),
        merchant_id,
        id,
        delivery,
    )
    .await?;
    cx.flash(FlashKind::Success, messages::webhook_redelivered(event))
        .await;
    Ok(Redirect::to(&paths::webhook(id)).into_response())
}

/// A GET where only a POST answers (the language switcher reloads the address a rotation was
/// shown at): back to the webhook's page, rather than a bare 405.
pub async fn back_to_webhook(PathId(id): PathId) -> Redirect {
    Redirect::to(&paths::webhook(id))
}
