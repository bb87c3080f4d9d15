//! The counter: store staff type or scan a code a customer shows, see its state and product, and
//! redeem it. The code travels only in POST bodies (never a URL, so never an access log line),
//! the answer is not cached, and the page never repeats the code in full.

use crate::domain::codes::CodeStatus;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::Response;
use axum::Form;
use serde::Deserialize;

use crate::domain::orders::aftersales::{self, Redeemed};
use crate::domain::{DomainError, MerchantId};
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::AppState;

#[derive(Template)]
#[template(path = "admin/counter.html")]
struct CounterPage {
    layout: Layout,
    /// The code as typed, kept in the redeem form only (a hidden field of a no-store page).
    typed: String,
    /// Its last characters, to show which code this is.
    tail: String,
    found: Option<Redeemed>,
    redeemed_now: bool,
    /// The last use was undone by this request.
    undone_now: bool,
    /// The last use may still be undone (within the window): the form is offered.
    can_undo: bool,
    /// The undo's reason as typed, kept when refused.
    reason: String,
    /// A stable code for what went wrong (`not_found`, `code_already_redeemed`, …).
    refusal: Option<&'static str>,
    message: String,
    when: String,
}

#[derive(Deserialize, Default)]
pub struct CounterForm {
    #[serde(default)]
    code: String,
    /// "check" (the default), "redeem" or "undo".
    #[serde(default)]
    action: String,
    /// Why a redemption is undone.
    #[serde(default)]
    reason: String,
}

/// Who works the counter: store staff (redeemed at their store) and merchant admins.
fn counter_merchant(cx: &PageCtx) -> Result<MerchantId, WebError> {
    Ok(cx.user.account.slot_writer()?)
}

fn answer(cx: &PageCtx, status: StatusCode, page: CounterPage) -> Result<Response, WebError> {
    let mut r = cx.whole_as(status, &page)?;
    r.headers_mut()
        .insert(header::CACHE_CONTROL, "no-store".parse().expect("header"));
    Ok(r)
}

/// When a code was redeemed, in the merchant's time.
fn redeemed_when(r: &Redeemed, tz: chrono_tz::Tz) -> String {
    r.redeemed_at
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| crate::web::view::time::when(t.timestamp_millis(), tz))
        .unwrap_or_default()
}

/// Whether the code's last use is recent enough to undo (`SELLABLE_REDEEM_UNDO_MINUTES`).
fn undoable(state: &AppState, r: &Redeemed) -> bool {
    let window = state.config.serve.redeem_undo_minutes;
    r.redeemed_at
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .is_some_and(|t| window > 0 && t.timestamp_millis() >= state.db.now_ms() - window * 60_000)
}

fn blank(layout: Layout) -> CounterPage {
    CounterPage {
        layout,
        typed: String::new(),
        tail: String::new(),
        found: None,
        redeemed_now: false,
        undone_now: false,
        can_undo: false,
        reason: String::new(),
        refusal: None,
        message: String::new(),
        when: String::new(),
    }
}

pub async fn show(cx: PageCtx) -> Result<Response, WebError> {
    counter_merchant(&cx)?;
    answer(&cx, StatusCode::OK, blank(cx.layout().await))
}

pub async fn submit(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<CounterForm>,
) -> Result<Response, WebError> {
    let merchant = counter_merchant(&cx)?;
    let mut page = blank(cx.layout().await);
    let typed = crate::domain::codes::normalize(&form.code);
    if typed.is_empty() {
        page.refusal = Some("required");
        page.message = crate::messages::lookup_code_required();
        return answer(&cx, StatusCode::UNPROCESSABLE_ENTITY, page);
    }
    page.tail = typed
        .chars()
        .rev()
        .take(4)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let tz = crate::domain::tenancy::tenants::merchant(&state.db, merchant)
        .await?
        .tz();
    let outcome = if form.action == "undo" {
        page.reason = form.reason.clone();
        let actor = cx.actor(&paths::counter());
        match aftersales::at_counter(&state.db, &state.codes, merchant, &typed).await {
            Ok(found) => aftersales::unredeem(
                &state.db,
                &actor,
                merchant,
                found.code_id,
                &form.reason,
                state.config.serve.redeem_undo_minutes,
            )
            .await
            .map(|r| {
                page.undone_now = true;
                (r, false)
            }),
            Err(e) => Err(e),
        }
    } else if form.action == "redeem" {
        let actor = cx.actor(&paths::counter());
        aftersales::redeem(
            &state.db,
            &state.codes,
            &actor,
            merchant,
            &typed,
            cx.user.account.store_id,
        )
        .await
        .map(|r| (r, true))
    } else {
        aftersales::at_counter(&state.db, &state.codes, merchant, &typed)
            .await
            .map(|r| (r, false))
    };
    match outcome {
        Ok((r, now)) => {
            page.redeemed_now = now;
            page.typed = typed;
            page.when = redeemed_when(&r, tz);
            page.can_undo = undoable(&state, &r);
            page.found = Some(r);
            answer(&cx, StatusCode::OK, page)
        }
        Err(DomainError::Invalid(errors)) => {
            // The undo's reason: shown beside it, with the code as it is.
            page.refusal = Some("required");
            page.message = errors
                .first()
                .map(|e| e.message.clone())
                .unwrap_or_default();
            page.typed = typed.clone();
            if let Ok(r) = aftersales::at_counter(&state.db, &state.codes, merchant, &typed).await {
                page.when = redeemed_when(&r, tz);
                page.can_undo = undoable(&state, &r);
                page.found = Some(r);
            }
            answer(&cx, StatusCode::UNPROCESSABLE_ENTITY, page)
        }
        Err(DomainError::NotFound(_)) => {
            page.refusal = Some("not_found");
            page.message = crate::messages::code_unknown();
            answer(&cx, StatusCode::NOT_FOUND, page)
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            // Refused at the counter: show the code's state now, and why.
            page.refusal = Some(code);
            page.message = message;
            if let Ok(r) = aftersales::at_counter(&state.db, &state.codes, merchant, &typed).await {
                page.when = redeemed_when(&r, tz);
                page.can_undo = undoable(&state, &r);
                page.typed = typed;
                page.found = Some(r);
            }
            answer(&cx, StatusCode::CONFLICT, page)
        }
        Err(e) => Err(e.into()),
    }
}
