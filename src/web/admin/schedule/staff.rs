//! The store's staff members: the list and the form that adds one.

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use super::StoreQuery;
use crate::domain::staff::{self as members, Staff};
use crate::domain::DomainError;
use crate::messages;
use crate::web::error::WebError;
use crate::web::flash::FlashKind;
use crate::web::layout::Layout;
use crate::web::page::PageCtx;
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
    staff: Vec<Staff>,
    name: String,
    errors: Errs,
}

pub async fn staff(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(&state, &cx.user, &q.store, "staff", "/admin/staff").await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let page = StaffPage {
        layout: cx.layout().await,
        staff: members::staff_of_store(&state.db, store.merchant_id, store.id).await?,
        ctx,
        name: String::new(),
        errors: Errs::default(),
    };
    cx.whole(&page)
}

pub async fn add_staff(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<StaffForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let ctx = store::ctx(&state, &cx.user, &form.store, "staff", "/admin/staff").await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let actor = cx.actor("/admin/staff");
    match members::add_staff(&state.db, &actor, merchant_id, store.id, &form.name).await {
        Ok(added) => {
            cx.flash(FlashKind::Success, messages::staff_added(&added.name))
                .await;
            let to = link("/admin/staff", &[("store", &ctx.value)]);
            Ok(Redirect::to(&to).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let page = StaffPage {
                layout: cx.layout().await,
                staff: members::staff_of_store(&state.db, merchant_id, store.id).await?,
                ctx,
                name: form.name,
                errors: Errs(errors),
            };
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
