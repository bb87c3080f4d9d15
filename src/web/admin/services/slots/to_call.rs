//! The To call list: every active booking in a closed slot of the store, soonest first, with
//! whether someone reached the customer, a note, and the two ways out: move the booking to
//! another time or staff member, or cancel it with a reason the customer reads.

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::slots::to_call::{self, ToCall};
use crate::domain::DomainError;
use crate::messages;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::store::{self, no_store_page, writer, StoreCtx};
use crate::web::view::time::{period, when};
use crate::web::view::{link, Errs};
use crate::web::AppState;

#[derive(Deserialize, Default)]
pub struct ToCallQuery {
    #[serde(default)]
    store: String,
    /// "all": those already reached too.
    #[serde(default)]
    show: String,
}

pub struct ToCallRow {
    pub item: ToCall,
    /// Who reached the customer, as people read it (no `user:` prefix).
    pub reached_by: String,
    pub when: String,
    pub contacted_when: String,
    /// The note as typed after a refused save, else the stored one.
    pub note: String,
    pub errors: Errs,
}

#[derive(Template)]
#[template(path = "admin/slots/to_call.html")]
struct ToCallPage {
    layout: Layout,
    ctx: StoreCtx,
    rows: Vec<ToCallRow>,
    all: bool,
    /// Not reached yet, and in all.
    waiting: i64,
    total: i64,
}

async fn page(
    state: &AppState,
    cx: &PageCtx,
    ctx: StoreCtx,
    all: bool,
) -> Result<ToCallPage, WebError> {
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let tz = store.tz();
    let (waiting, total) = to_call::counts(&state.db, store.id).await?;
    let rows = to_call::list(&state.db, store.id, all)
        .await?
        .into_iter()
        .map(|item| ToCallRow {
            reached_by: item
                .contacted_by
                .as_deref()
                .map(|b| b.trim_start_matches("user:").to_string())
                .unwrap_or_default(),
            when: period(item.starts_at, item.ends_at, tz),
            contacted_when: item.contacted_at.map(|t| when(t, tz)).unwrap_or_default(),
            note: item.contact_note.clone().unwrap_or_default(),
            errors: Errs::default(),
            item,
        })
        .collect();
    Ok(ToCallPage {
        layout: cx.layout().await,
        ctx,
        rows,
        all,
        waiting,
        total,
    })
}

pub async fn list(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<ToCallQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(&state, &cx.user, &q.store, Tab::ToCall, &paths::to_call()).await?;
    if ctx.store.is_none() {
        return no_store_page(&cx, ctx).await;
    }
    let p = page(&state, &cx, ctx, q.show == "all").await?;
    cx.whole(&p)
}

#[derive(Deserialize, Default)]
pub struct MarkForm {
    #[serde(default)]
    store: String,
    /// "1": reached; "0": not reached (undo); "note": the note only, the mark as it is.
    #[serde(default)]
    contacted: String,
    #[serde(default)]
    note: String,
    #[serde(default)]
    show: String,
}

/// Marks a customer reached (or not), with the note; back to the list at that booking.
pub async fn mark(
    State(state): State<AppState>,
    cx: PageCtx,
    Path(reference): Path<String>,
    Form(form): Form<MarkForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let ctx = store::ctx(
        &state,
        &cx.user,
        &form.store,
        Tab::ToCall,
        &paths::to_call(),
    )
    .await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let contacted = match form.contacted.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    };
    let actor = cx.actor(&paths::to_call());
    let result = to_call::mark(
        &state.db,
        &actor,
        merchant_id,
        store.id,
        &reference,
        contacted,
        &form.note,
    )
    .await;
    let all = form.show == "all";
    match result {
        Ok(()) => {
            let notice = match contacted {
                Some(true) => messages::customer_reached(&reference),
                Some(false) => messages::customer_not_reached(&reference),
                None => messages::call_note_saved(&reference),
            };
            cx.flash(FlashKind::Success, notice).await;
            let show = if all { "all" } else { "" };
            let to = link(&paths::to_call(), &[("store", &ctx.value), ("show", show)]);
            Ok(Redirect::to(&to).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut p = page(&state, &cx, ctx, true).await?;
            if let Some(row) = p.rows.iter_mut().find(|r| r.item.reference == reference) {
                row.note = form.note;
                row.errors = Errs(errors);
            }
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &p)
        }
        Err(e) => Err(e.into()),
    }
}
