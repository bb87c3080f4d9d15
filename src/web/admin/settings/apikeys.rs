//! API keys for the merchant's order systems: created here (the key is shown once), revoked after
//! a confirmation.

use crate::domain::MerchantId;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::{tenancy::apikeys, tenancy::tenants, DomainError};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::page::PageCtx;
use crate::web::view::Errs;

use crate::web::kit::layout::Layout;
use crate::web::AppState;

pub struct KeyView {
    pub id: i64,
    pub name: String,
    pub prefix: String,
    pub created_by: String,
    pub created_at: String,
    pub last_used_at: String,
    pub revoked_at: String,
    /// The key's rate as the page says it ("default (1,000/s)", "50/s", "unlimited").
    pub rate: String,
    /// What the rate field holds: the key's own rate, empty for the default.
    pub rate_value: String,
}

#[derive(Template)]
#[template(path = "admin/apikeys.html")]
struct KeysPage {
    layout: Layout,
    keys: Vec<KeyView>,
    name: String,
    errors: Errs,
    /// The plaintext of a key just created: shown on this one response only.
    new_key: Option<String>,
    /// The key whose rate was refused (0: none), and what was typed.
    rate_for: i64,
    rate_typed: String,
}

fn admin_merchant(user: &CurrentUser) -> Result<MerchantId, WebError> {
    Ok(user.account.require_admin()?)
}

async fn keys_page(
    state: &AppState,
    cx: &PageCtx,
    merchant_id: MerchantId,
) -> Result<KeysPage, WebError> {
    let tz: Tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    let lang = crate::i18n::current();
    let default_rate = i64::from(state.config.serve.api_rate_per_second);
    let rate_said = |rate: i64| {
        if rate == 0 {
            lang.t("apikey-rate-unlimited")
        } else {
            lang.t1("apikey-rate-per-second", "rate", rate)
        }
    };
    let keys = apikeys::list(&state.db, merchant_id)
        .await?
        .into_iter()
        .map(|k| KeyView {
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            created_by: crate::web::view::actor::said(&k.created_by),
            created_at: crate::web::view::time::when(k.created_at, tz),
            last_used_at: k
                .last_used_at
                .map(|t| crate::web::view::time::when(t, tz))
                .unwrap_or_default(),
            revoked_at: k
                .revoked_at
                .map(|t| crate::web::view::time::when(t, tz))
                .unwrap_or_default(),
            rate: match k.rate_per_second {
                Some(r) => rate_said(r),
                None if default_rate == 0 => {
                    format!(
                        "{}{}",
                        lang.t("apikey-rate-default-label"),
                        lang.paren(rate_said(0))
                    )
                }
                None => lang.t1("apikey-rate-default", "rate", default_rate),
            },
            rate_value: k.rate_per_second.map(|r| r.to_string()).unwrap_or_default(),
        })
        .collect();
    Ok(KeysPage {
        layout: cx.layout().await,
        keys,
        name: String::new(),
        errors: Errs::default(),
        new_key: None,
        rate_for: 0,
        rate_typed: String::new(),
    })
}

pub async fn list(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx.user)?;
    cx.whole(&keys_page(&state, &cx, merchant_id).await?)
}

#[derive(Deserialize)]
pub struct CreateForm {
    #[serde(default)]
    name: String,
}

pub async fn create(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<CreateForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx.user)?;
    match apikeys::create(
        &state.db,
        &cx.actor(&paths::api_keys()),
        merchant_id,
        &form.name,
        None,
    )
    .await
    {
        Ok((_, secret)) => {
            let mut page = keys_page(&state, &cx, merchant_id).await?;
            page.new_key = Some(secret);
            // The key must not linger in caches or history.
            Ok((
                [(axum::http::header::CACHE_CONTROL, "no-store")],
                Html(page.render()?),
            )
                .into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = keys_page(&state, &cx, merchant_id).await?;
            page.name = form.name;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
pub struct RateForm {
    #[serde(default)]
    rate_per_second: String,
}

/// Sets a key's requests per second (empty: the instance's default; 0: unlimited).
pub async fn set_rate(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<RateForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx.user)?;
    let typed = form.rate_per_second.trim();
    let parsed = match typed {
        "" => Ok(None),
        t => t.parse::<i64>().map(Some).map_err(|_| {
            crate::domain::FieldError::new(
                "rate_per_second",
                "invalid_number",
                messages::bad_rate(0, apikeys::RATE_MAX),
            )
        }),
    };
    let result = match parsed {
        Ok(rate) => {
            apikeys::set_rate(
                &state.db,
                &cx.actor(&paths::api_keys()),
                merchant_id,
                id,
                rate,
            )
            .await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    match result {
        Ok(key) => {
            let page = keys_page(&state, &cx, merchant_id).await?;
            let said = page
                .keys
                .iter()
                .find(|k| k.id == key.id)
                .map(|k| k.rate.clone())
                .unwrap_or_default();
            cx.flash(FlashKind::Success, messages::key_rate_set(&key.name, &said))
                .await;
            Ok(Redirect::to(&paths::api_keys()).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = keys_page(&state, &cx, merchant_id).await?;
            page.rate_for = id;
            page.rate_typed = form.rate_per_second;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Template)]
#[template(path = "admin/apikey_revoke.html")]
struct RevokePage {
    layout: Layout,
    id: i64,
    name: String,
    prefix: String,
}

pub async fn confirm_revoke(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx.user)?;
    let key = apikeys::list(&state.db, merchant_id)
        .await?
        .into_iter()
        .find(|k| k.id == id && k.revoked_at.is_none())
        .ok_or(DomainError::NotFound("API key"))?;
    let page = RevokePage {
        layout: cx.layout().await,
        id,
        name: key.name,
        prefix: key.prefix,
    };
    cx.whole(&page)
}

pub async fn revoke(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin_merchant(&cx.user)?;
    let key = apikeys::revoke(&state.db, &cx.actor(&paths::api_keys()), merchant_id, id).await?;
    cx.flash(FlashKind::Success, messages::key_revoked(&key.name))
        .await;
    Ok(Redirect::to(&paths::api_keys()).into_response())
}
