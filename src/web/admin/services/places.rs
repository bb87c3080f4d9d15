//! A merchant's places in the back office: its stores (each with its booking-page settings) and
//! its warehouses (name and priority), added and edited by its admins.

use crate::web::kit::paths;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::{tenancy::tenants, DomainError, MerchantId, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::Errs;
use crate::web::AppState;

fn admin(user: &CurrentUser) -> Result<MerchantId, WebError> {
    user.account
        .admin_merchant()
        .ok_or_else(|| DomainError::Forbidden.into())
}

#[derive(Deserialize, Default, Clone)]
pub struct NewPlaceForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    slug: String,
    /// Stores: the IANA timezone.
    #[serde(default)]
    timezone: String,
    /// Warehouses: orders take from the highest first.
    #[serde(default)]
    priority: String,
}

#[derive(Template)]
#[template(path = "admin/places.html")]
struct PlacesPage {
    layout: Layout,
    stores: Vec<tenants::Store>,
    warehouses: Vec<tenants::Warehouse>,
    store_form: NewPlaceForm,
    warehouse_form: NewPlaceForm,
    /// Errors of the store form, the warehouse form, or (with its id) one warehouse's row.
    store_errors: Errs,
    warehouse_errors: Errs,
    row_errors: Option<(i64, Errs)>,
    timezones: Vec<&'static str>,
}

async fn places_page(
    state: &AppState,
    cx: &PageCtx,
    merchant_id: MerchantId,
) -> Result<PlacesPage, WebError> {
    let merchant = tenants::merchant(&state.db, merchant_id).await?;
    let scope = Scope::Merchant(merchant_id);
    Ok(PlacesPage {
        layout: cx.layout().await,
        stores: tenants::stores(&state.db, scope).await?,
        warehouses: tenants::warehouses(&state.db, scope).await?,
        store_form: NewPlaceForm {
            timezone: merchant.timezone.clone(),
            ..Default::default()
        },
        warehouse_form: NewPlaceForm {
            priority: "0".into(),
            ..Default::default()
        },
        store_errors: Errs::default(),
        warehouse_errors: Errs::default(),
        row_errors: None,
        // The zones of mainland China and its neighbours first; any IANA name is taken.
        timezones: vec![
            "Asia/Shanghai",
            "Asia/Urumqi",
            "Asia/Hong_Kong",
            "Asia/Macau",
            "Asia/Taipei",
            "Asia/Singapore",
            "Asia/Tokyo",
            "Europe/London",
            "UTC",
        ],
    })
}

pub async fn index(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let page = places_page(&state, &cx, merchant_id).await?;
    cx.whole(&page)
}

async fn merchant_slug(state: &AppState, merchant_id: MerchantId) -> Result<String, WebError> {
    Ok(tenants::merchant(&state.db, merchant_id).await?.slug)
}

pub async fn add_store(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<NewPlaceForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let slug = merchant_slug(&state, merchant_id).await?;
    let actor = cx.actor(&paths::places());
    match tenants::create_store(
        &state.db,
        &actor,
        &slug,
        &form.slug,
        &form.name,
        &form.timezone,
    )
    .await
    {
        Ok(id) => {
            cx.flash(FlashKind::Success, messages::place_saved(form.name.trim()))
                .await;
            // On to what customers read about it.
            Ok(Redirect::to(&paths::store(id)).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = places_page(&state, &cx, merchant_id).await?;
            page.store_form = form;
            page.store_errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn add_warehouse(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<NewPlaceForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let slug = merchant_slug(&state, merchant_id).await?;
    let actor = cx.actor(&paths::places());
    let created = match tenants::priority_text(&form.priority) {
        Ok(priority) => {
            tenants::create_warehouse(&state.db, &actor, &slug, &form.slug, &form.name, priority)
                .await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    match created {
        Ok(_) => {
            cx.flash(FlashKind::Success, messages::place_saved(form.name.trim()))
                .await;
            Ok(Redirect::to(&format!("{}#warehouses", paths::places())).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = places_page(&state, &cx, merchant_id).await?;
            page.warehouse_form = form;
            page.warehouse_errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize, Default)]
pub struct WarehouseForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    priority: String,
}

pub async fn update_warehouse(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<WarehouseForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let actor = cx.actor(&paths::places());
    match tenants::update_warehouse(
        &state.db,
        &actor,
        merchant_id,
        id,
        (&form.name, &form.priority),
    )
    .await
    {
        Ok(()) => {
            cx.flash(FlashKind::Success, messages::place_saved(form.name.trim()))
                .await;
            Ok(Redirect::to(&format!("{}#warehouses", paths::places())).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = places_page(&state, &cx, merchant_id).await?;
            // The row keeps what was typed.
            if let Some(w) = page.warehouses.iter_mut().find(|w| w.id == id) {
                w.name = form.name.clone();
            }
            page.row_errors = Some((id, Errs(errors)));
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

impl PlacesPage {
    /// A warehouse row's error for a field, if that row was sent back.
    fn row_error(&self, id: impl std::borrow::Borrow<i64>, field: &str) -> Option<String> {
        match &self.row_errors {
            Some((row, errs)) if row == id.borrow() => errs.get(field).map(str::to_string),
            _ => None,
        }
    }
}
