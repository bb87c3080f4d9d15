//! A store's settings: its name, the country its phone numbers are read in, what customers read
//! about it (address, phone, description) and the language its page speaks. Merchant admins only; the store must be theirs.

use crate::web::kit::paths;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::tenancy::tenants::{self, Store, StorefrontInput, ADDRESS_MAX, DESCRIPTION_MAX};
use crate::domain::{DomainError, Scope, StoreId};
use crate::i18n::Lang;
use crate::messages;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::Errs;
use crate::web::AppState;

#[derive(Template)]
#[template(path = "admin/store.html")]
struct StorePage {
    layout: Layout,
    store: Store,
    form: StoreForm,
    errors: Errs,
    address_max: usize,
    description_max: usize,
    languages: [Lang; 2],
}

#[derive(Deserialize, Default)]
pub struct StoreForm {
    /// Left out of the post (a client that knows only the booking-page fields): kept as it is.
    #[serde(default)]
    name: Option<String>,
    /// ISO 3166 alpha-2; empty: from the timezone; left out: kept.
    #[serde(default)]
    country: Option<String>,
    #[serde(default)]
    address: String,
    #[serde(default)]
    phone: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    language: String,
    /// Minutes after a slot's end; empty: no automatic no-shows.
    #[serde(default)]
    auto_no_show: String,
    /// Minutes a freed place is held for a waiting customer; empty: book them at once.
    #[serde(default)]
    waitlist_hold: String,
    /// Minutes before the start from which staff check customers in.
    #[serde(default)]
    check_in: String,
}

fn page(layout: Layout, store: Store, form: StoreForm, errors: Errs) -> StorePage {
    StorePage {
        layout,
        store,
        form,
        errors,
        address_max: ADDRESS_MAX,
        description_max: DESCRIPTION_MAX,
        languages: Lang::ALL,
    }
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant = cx.user.account.require_admin()?;
    let store = tenants::store_by_id(&state.db, Scope::Merchant(merchant), StoreId(id)).await?;
    let form = StoreForm {
        name: Some(store.name.clone()),
        country: Some(store.country.clone().unwrap_or_default()),
        address: store.address.clone(),
        phone: store.phone.clone(),
        description: store.description.clone(),
        language: store.language.tag().to_string(),
        auto_no_show: store
            .auto_no_show_minutes
            .map(|m| m.to_string())
            .unwrap_or_default(),
        waitlist_hold: store
            .waitlist_hold_minutes
            .map(|m| m.to_string())
            .unwrap_or_default(),
        check_in: store.check_in_minutes.to_string(),
    };
    cx.whole(&page(cx.layout().await, store, form, Errs::default()))
}

pub async fn update(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<StoreForm>,
) -> Result<Response, WebError> {
    let merchant = cx.user.account.require_admin()?;
    let path = paths::store(id);
    let input = StorefrontInput {
        address: form.address.clone(),
        phone: form.phone.clone(),
        description: form.description.clone(),
        language: form.language.clone(),
        auto_no_show: form.auto_no_show.clone(),
        waitlist_hold: form.waitlist_hold.clone(),
        name: form.name.clone(),
        country: form.country.clone(),
        check_in: Some(form.check_in.clone()),
    };
    match tenants::set_storefront(&state.db, &cx.actor(&path), merchant, StoreId(id), &input).await
    {
        Ok(_) => {
            cx.flash(FlashKind::Success, messages::storefront_saved())
                .await;
            Ok(Redirect::to(&path).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let store =
                tenants::store_by_id(&state.db, Scope::Merchant(merchant), StoreId(id)).await?;
            let page = page(cx.layout().await, store, form, Errs(errors));
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
