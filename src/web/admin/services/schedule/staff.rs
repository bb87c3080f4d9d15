//! The store's staff members: the list and the form that adds one.

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::slots::staff::{self as members, Member};
use crate::domain::DomainError;
use crate::messages;
use crate::web::admin::services::schedule::StoreQuery;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::store::{self, no_store_page, writer, StoreCtx};
use crate::web::view::{link, Errs};
use crate::web::AppState;

#[derive(Deserialize, Default, Clone)]
pub struct StaffForm {
    #[serde(default)]
    store: String,
    #[serde(default)]
    name: String,
}

#[derive(Template)]
#[template(path = "admin/slots/staff.html")]
struct StaffPage {
    layout: Layout,
    ctx: StoreCtx,
    staff: Vec<Member>,
    name: String,
    errors: Errs,
    /// A row sent back: its id, the name typed and its errors.
    row: Option<(i64, String, Errs)>,
}

impl StaffPage {
    fn row_error(&self, id: impl std::borrow::Borrow<i64>) -> Option<String> {
        match &self.row {
            Some((r, _, errs)) if r == id.borrow() => errs.0.first().map(|e| e.message.clone()),
            _ => None,
        }
    }
    fn row_name(&self, m: &Member) -> String {
        match &self.row {
            Some((r, typed, _)) if *r == m.id => typed.clone(),
            _ => m.name.clone(),
        }
    }
}

pub async fn staff(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(&state, &cx.user, &q.store, Tab::Staff, &paths::staff()).await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let page = StaffPage {
        layout: cx.layout().await,
        staff: members::members_of_store(&state.db, store.merchant_id, store.id).await?,
        ctx,
        name: String::new(),
        errors: Errs::default(),
        row: None,
    };
    cx.whole(&page)
}

pub async fn add_staff(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<StaffForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let ctx = store::ctx(&state, &cx.user, &form.store, Tab::Staff, &paths::staff()).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let actor = cx.actor(&paths::staff());
    match members::add_staff(&state.db, &actor, merchant_id, store.id, &form.name).await {
        Ok(added) => {
            cx.flash(FlashKind::Success, messages::staff_added(&added.name))
                .await;
            let to = link(&paths::staff(), &[("store", &ctx.value)]);
            Ok(Redirect::to(&to).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let page = StaffPage {
                layout: cx.layout().await,
                staff: members::members_of_store(&state.db, merchant_id, store.id).await?,
                ctx,
                name: form.name,
                errors: Errs(errors),
                row: None,
            };
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize, Default)]
pub struct MemberForm {
    #[serde(default)]
    store: String,
    #[serde(default)]
    name: String,
    /// `rename`, `archive` or `restore`.
    #[serde(default)]
    action: String,
}

/// Renames, archives or restores one staff member of the store.
pub async fn change_member(
    State(state): State<AppState>,
    cx: PageCtx,
    crate::web::kit::ids::PathId(id): crate::web::kit::ids::PathId,
    Form(form): Form<MemberForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let ctx = store::ctx(&state, &cx.user, &form.store, Tab::Staff, &paths::staff()).await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let member = members::staff_by_id(&state.db, merchant_id, id).await?;
    if member.store_id != store.id {
        return Err(DomainError::NotFound("staff member").into());
    }
    let actor = cx.actor(&paths::staff());
    let done = match form.action.as_str() {
        "rename" => members::rename(&state.db, &actor, merchant_id, id, &form.name)
            .await
            .map(|s| messages::staff_renamed(&s.name)),
        "archive" => members::set_archived(&state.db, &actor, merchant_id, id, true)
            .await
            .map(|s| messages::staff_archived(&s.name)),
        "restore" => members::set_archived(&state.db, &actor, merchant_id, id, false)
            .await
            .map(|s| messages::staff_restored(&s.name)),
        _ => Err(DomainError::NotFound("action")),
    };
    match done {
        Ok(said) => {
            cx.flash(FlashKind::Success, said).await;
            let to = link(&paths::staff(), &[("store", &ctx.value)]);
            Ok(Redirect::to(&to).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            staff_sent_back(
                &state,
                &cx,
                ctx,
                (id, form.name, errors),
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            let errors = vec![crate::domain::FieldError::new("form", code, message)];
            staff_sent_back(
                &state,
                &cx,
                ctx,
                (id, member.name, errors),
                StatusCode::CONFLICT,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

async fn staff_sent_back(
    state: &AppState,
    cx: &PageCtx,
    ctx: StoreCtx,
    (id, typed, errors): (i64, String, Vec<crate::domain::FieldError>),
    status: StatusCode,
) -> Result<Response, WebError> {
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let page = StaffPage {
        layout: cx.layout().await,
        staff: members::members_of_store(&state.db, store.merchant_id, store.id).await?,
        ctx,
        name: String::new(),
        errors: Errs::default(),
        row: Some((id, typed, Errs(errors))),
    };
    cx.whole_as(status, &page)
}
