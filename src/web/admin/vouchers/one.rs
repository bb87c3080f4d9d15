//! One code's page: its state, where it came from, who bought it, and its history (sold, voided,
//! redeemed, reissued, locked, unlocked, invalidated: when, by whom, why). Lock, unlock and
//! invalidate from here ask for a reason. Never the code's text (reveal is its own audited act).

use crate::domain::codes::CodeStatus;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::codes::{self, CodeRow, OpsMove};
use crate::domain::orders::aftersales::{self, HistoryRow};
use crate::domain::{kernel::validate, orders::read, tenancy::tenants, DomainError, Scope};
use crate::web::admin::vouchers::admin;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::time::when;
use crate::web::view::Errs;
use crate::web::AppState;

pub struct EventView {
    pub action: &'static str,
    pub reason: String,
    pub order_id: String,
    pub store: String,
    pub actor: String,
    pub at: String,
}

#[derive(Template)]
#[template(path = "admin/codes/code.html")]
struct CodePage {
    layout: Layout,
    c: CodeRow,
    status: &'static str,
    batch_name: String,
    sku: String,
    sold: String,
    order_page: Option<i64>,
    redeemed: String,
    history: Vec<EventView>,
    errors: Errs,
    reason: String,
}

fn event_view(e: HistoryRow, tz: chrono_tz::Tz) -> EventView {
    EventView {
        action: e.action.as_str(),
        reason: e.reason,
        order_id: e.order_id.unwrap_or_default(),
        store: e.store.unwrap_or_default(),
        actor: crate::web::view::actor::said(&e.actor),
        at: when(e.created_at, tz),
    }
}

async fn code_page(
    state: &AppState,
    cx: &PageCtx,
    id: i64,
    errors: Errs,
    reason: String,
) -> Result<CodePage, WebError> {
    let merchant_id = admin(&cx.user)?;
    let c = codes::code(&state.db, merchant_id, id).await?;
    let b = codes::batch(&state.db, Scope::Merchant(merchant_id), c.batch_id).await?;
    let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    let order_page = match &c.order_id {
        Some(o) => read::id_of(&state.db, merchant_id, o).await.ok(),
        None => None,
    };
    let history = aftersales::history(&state.db, merchant_id, id)
        .await?
        .into_iter()
        .map(|e| event_view(e, tz))
        .collect();
    Ok(CodePage {
        layout: cx.layout().await,
        status: c.status.as_str(),
        batch_name: b.name,
        sku: b.sku_code,
        sold: c.sold_at.map(|t| when(t, tz)).unwrap_or_default(),
        redeemed: c.redeemed_at.map(|t| when(t, tz)).unwrap_or_default(),
        order_page,
        history,
        errors,
        reason,
        c,
    })
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let page = code_page(&state, &cx, id, Errs::default(), String::new()).await?;
    cx.whole(&page)
}

#[derive(Deserialize)]
pub struct MoveForm {
    #[serde(default)]
    action: String,
    #[serde(default)]
    reason: String,
}

/// Lock, unlock or invalidate one code, with why (required here).
pub async fn change(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<MoveForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let mv = match form.action.as_str() {
        "lock" => OpsMove::Lock,
        "unlock" => OpsMove::Unlock,
        "invalidate" => OpsMove::Invalidate,
        _ => return Err(DomainError::NotFound("action").into()),
    };
    let reason = match validate::name("reason", &form.reason, validate::REASON_MAX) {
        Ok(r) => r,
        Err(e) => {
            let page = code_page(&state, &cx, id, Errs(vec![e]), form.reason).await?;
            return cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page);
        }
    };
    let actor = cx.actor(&paths::code(id));
    match codes::move_code_because(&state.db, &actor, merchant_id, id, mv, &reason).await {
        Ok(_) => {
            cx.flash(
                FlashKind::Success,
                crate::messages::code_moved(mv.label(), id),
            )
            .await;
        }
        Err(DomainError::Conflict { message, .. }) => cx.flash(FlashKind::Error, message).await,
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&paths::code(id)).into_response())
}
