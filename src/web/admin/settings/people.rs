//! People and sign-ins in the back office: a merchant admin's list of the merchant's people and
//! invitations (invite, revoke, reset a password, deactivate, reactivate), everyone's own
//! account page (name and password), and the public page where an invitation is accepted.

use crate::domain::kernel::scope::Role;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Form;
use axum::Router;
use serde::Deserialize;
use tower_sessions::Session;

use crate::domain::tenancy::people::{self, Invitation, InviteInput, Person};
use crate::domain::{tenancy::tenants, DomainError, FieldError, MerchantId, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::actor::People;
use crate::web::view::Errs;
use crate::web::AppState;

fn admin(user: &CurrentUser) -> Result<MerchantId, WebError> {
    user.account
        .admin_merchant()
        .ok_or_else(|| DomainError::Forbidden.into())
}

#[derive(Deserialize, Default, Clone)]
pub struct InviteForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    store: String,
}

pub struct InvitationView {
    pub invitation: Invitation,
    pub by: String,
    pub expires: String,
}

#[derive(Template)]
#[template(path = "admin/people/index.html")]
struct PeoplePage {
    layout: Layout,
    me: i64,
    people: Vec<Person>,
    invitations: Vec<InvitationView>,
    stores: Vec<tenants::Store>,
    form: InviteForm,
    errors: Errs,
    /// Just invited: the one-time link, shown this once.
    link: Option<String>,
}

async fn people_page(
    state: &AppState,
    cx: &PageCtx,
    merchant_id: MerchantId,
    form: InviteForm,
) -> Result<PeoplePage, WebError> {
    let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    let names = People::of_merchant(&state.db, merchant_id).await?;
    let invitations = people::pending(&state.db, merchant_id)
        .await?
        .into_iter()
        .map(|i| InvitationView {
            by: names.say(&i.created_by),
            expires: crate::web::view::time::when(i.expires_at, tz),
            invitation: i,
        })
        .collect();
    Ok(PeoplePage {
        layout: cx.layout().await,
        me: cx.user.account.id,
        people: people::list(&state.db, merchant_id).await?,
        invitations,
        stores: tenants::stores(&state.db, Scope::Merchant(merchant_id)).await?,
        form,
        errors: Errs::default(),
        link: None,
    })
}

pub async fn index(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let form = InviteForm {
        role: "store_staff".into(),
        ..Default::default()
    };
    let page = people_page(&state, &cx, merchant_id, form).await?;
    cx.whole(&page)
}

/// The link an invitation's token opens, on the site the admin is using (its host as their
/// browser named it; https when a proxy in front says so).
fn invitation_link(headers: &axum::http::HeaderMap, token: &str) -> String {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let host = text("host");
    let scheme = match text("x-forwarded-proto") {
        "https" => "https",
        _ => "http",
    };
    if host.is_empty() {
        format!("/invite/{token}")
    } else {
        format!("{scheme}://{host}/invite/{token}")
    }
}

pub async fn invite(
    State(state): State<AppState>,
    cx: PageCtx,
    headers: axum::http::HeaderMap,
    Form(form): Form<InviteForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let actor = cx.actor(&paths::people());
    let input = InviteInput {
        email: &form.email,
        display_name: &form.display_name,
        role: &form.role,
        store: &form.store,
    };
    match people::invite(&state.db, &actor, merchant_id, input).await {
        Ok((_, token)) => {
            // Shown in this answer only: the token is kept hashed, never in a URL of ours or a
            // flash.
            let fresh = InviteForm {
                role: form.role.clone(),
                store: form.store.clone(),
                ..Default::default()
            };
            let mut page = people_page(&state, &cx, merchant_id, fresh).await?;
            page.layout.flashes.push(crate::web::kit::flash::Flash {
                kind: FlashKind::Success,
                text: messages::invited(form.email.trim()),
            });
            page.link = Some(invitation_link(&headers, &token));
            no_store(cx.whole(&page))
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = people_page(&state, &cx, merchant_id, form).await?;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn revoke(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let email = people::pending(&state.db, merchant_id)
        .await?
        .into_iter()
        .find(|i| i.id == id)
        .map(|i| i.email);
    people::revoke(&state.db, &cx.actor(&paths::people()), merchant_id, id).await?;
    cx.flash(
        FlashKind::Success,
        messages::invitation_revoked(email.as_deref().unwrap_or("")),
    )
    .await;
    Ok(Redirect::to(&paths::people()).into_response())
}

crate::text_enum! {
    /// What a person-changing page confirms: its path's last segment and its message's choice.
    pub enum PersonAction { Reset = "reset", Deactivate = "deactivate" }
}

impl PersonAction {
    /// Where the confirmation posts.
    fn path(self, person: &i64) -> String {
        match self {
            PersonAction::Reset => paths::person_reset(person),
            PersonAction::Deactivate => paths::person_deactivate(person),
        }
    }
}

/// What a person-changing page asks to confirm, or what it did.
#[derive(Template)]
#[template(path = "admin/people/confirm.html")]
struct ConfirmPage {
    layout: Layout,
    person: Person,
    action: PersonAction,
    /// After a reset: the new password, shown this once.
    password: Option<String>,
    errors: Errs,
}

async fn confirm_page(
    state: &AppState,
    cx: &PageCtx,
    id: i64,
    action: PersonAction,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let person = people::person(&state.db, merchant_id, id).await?;
    let page = ConfirmPage {
        layout: cx.layout().await,
        person,
        action,
        password: None,
        errors: Errs::default(),
    };
    cx.whole(&page)
}

pub async fn confirm_reset(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    confirm_page(&state, &cx, id, PersonAction::Reset).await
}

pub async fn confirm_deactivate(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    confirm_page(&state, &cx, id, PersonAction::Deactivate).await
}

pub async fn reset(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let password =
        people::reset_password(&state.db, &cx.actor(&paths::people()), merchant_id, id).await?;
    let page = ConfirmPage {
        layout: cx.layout().await,
        person: people::person(&state.db, merchant_id, id).await?,
        action: PersonAction::Reset,
        password: Some(password),
        errors: Errs::default(),
    };
    no_store(cx.whole(&page))
}

/// A page that shows a secret once must not linger in caches or the browser's history.
fn no_store(r: Result<Response, WebError>) -> Result<Response, WebError> {
    r.map(|mut r| {
        r.headers_mut().insert(
            axum::http::header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-store"),
        );
        r
    })
}

pub async fn deactivate(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    set_active(state, cx, id, false).await
}

pub async fn reactivate(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    set_active(state, cx, id, true).await
}

async fn set_active(
    state: AppState,
    cx: PageCtx,
    id: i64,
    active: bool,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let actor = cx.actor(&paths::people());
    match people::set_active(
        &state.db,
        &actor,
        (merchant_id, cx.user.account.id),
        id,
        active,
    )
    .await
    {
        Ok(p) => {
            let who = if p.display_name.is_empty() {
                p.email
            } else {
                p.display_name
            };
            let said = if active {
                messages::person_reactivated(&who)
            } else {
                messages::person_deactivated(&who)
            };
            cx.flash(FlashKind::Success, said).await;
            Ok(Redirect::to(&paths::people()).into_response())
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            let page = ConfirmPage {
                layout: cx.layout().await,
                person: people::person(&state.db, merchant_id, id).await?,
                action: PersonAction::Deactivate,
                password: None,
                errors: Errs(vec![FieldError::new("form", code, message)]),
            };
            cx.whole_as(StatusCode::CONFLICT, &page)
        }
        Err(e) => Err(e.into()),
    }
}

// Everyone's own account.

#[derive(Template)]
#[template(path = "admin/account.html")]
struct AccountPage {
    layout: Layout,
    email: String,
    display_name: String,
    errors: Errs,
}

async fn account_page(cx: &PageCtx, errors: Vec<FieldError>) -> AccountPage {
    AccountPage {
        layout: cx.layout().await,
        email: cx.user.account.email.clone(),
        display_name: cx.user.account.display_name.clone(),
        errors: Errs(errors),
    }
}

/// One's own account (name, password) and an invitation taken: outside `/admin`, beside the
/// sign-in. Nothing a verdict reads, so the kept catalogs stay usable.
pub fn account_routes() -> Router<AppState> {
    Router::new()
        .route("/account", get(account))
        .route("/account/name", post(save_name))
        .route("/account/password", post(change_password))
        .route("/invite/{token}", get(invitation).post(accept))
        .layer(axum::middleware::map_response(
            crate::web::edge::middleware::Evented::layer,
        ))
}

pub async fn account(cx: PageCtx) -> Result<Response, WebError> {
    let page = account_page(&cx, Vec::new()).await;
    cx.whole(&page)
}

#[derive(Deserialize, Default)]
pub struct NameForm {
    #[serde(default)]
    display_name: String,
}

pub async fn save_name(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<NameForm>,
) -> Result<Response, WebError> {
    match people::set_own_name(&state.db, cx.user.account.id, &form.display_name).await {
        Ok(_) => {
            cx.flash(FlashKind::Success, messages::own_name_saved())
                .await;
            Ok(Redirect::to(&paths::account()).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = account_page(&cx, errors).await;
            page.display_name = form.display_name;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize, Default)]
pub struct PasswordForm {
    #[serde(default)]
    current: String,
    #[serde(default)]
    new: String,
    #[serde(default)]
    confirm: String,
}

pub async fn change_password(
    State(state): State<AppState>,
    cx: PageCtx,
    session: Session,
    Form(form): Form<PasswordForm>,
) -> Result<Response, WebError> {
    let passwords = (
        form.current.as_str(),
        form.new.as_str(),
        form.confirm.as_str(),
    );
    match people::change_own_password(&state.db, cx.user.account.id, passwords).await {
        Ok(at) => {
            // This session stays signed in; the others end.
            crate::web::kit::auth::sign_in(&session, cx.user.account.id, at).await?;
            cx.flash(FlashKind::Success, messages::own_password_changed())
                .await;
            Ok(Redirect::to(&paths::account()).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let page = account_page(&cx, errors).await;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

// Accepting an invitation (public: the link is the credential).

#[derive(Template)]
#[template(path = "invite.html")]
struct InvitePage {
    layout: Layout,
    invitation: Option<Invitation>,
    display_name: String,
    errors: Errs,
}

pub async fn invitation(
    State(state): State<AppState>,
    axum::extract::Path(token): axum::extract::Path<String>,
) -> Result<Response, WebError> {
    let invitation = people::by_token(&state.db, &token).await?;
    let status = if invitation.is_some() {
        StatusCode::OK
    } else {
        StatusCode::GONE
    };
    let page = InvitePage {
        layout: Layout::bare(),
        display_name: invitation
            .as_ref()
            .map(|i| i.display_name.clone())
            .unwrap_or_default(),
        invitation,
        errors: Errs::default(),
    };
    Ok((status, axum::response::Html(page.render()?)).into_response())
}

#[derive(Deserialize, Default)]
pub struct AcceptForm {
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    confirm: String,
}

pub async fn accept(
    State(state): State<AppState>,
    session: Session,
    axum::extract::Path(token): axum::extract::Path<String>,
    Form(form): Form<AcceptForm>,
) -> Result<Response, WebError> {
    let mut invitation = people::by_token(&state.db, &token).await?;
    // A link that is not (or no longer) an invitation costs no password hashing: anyone can post
    // here, and hashing turns are shared with sign-in.
    if invitation.is_none() {
        let page = InvitePage {
            layout: Layout::bare(),
            invitation: None,
            display_name: String::new(),
            errors: Errs::default(),
        };
        return Ok((StatusCode::GONE, axum::response::Html(page.render()?)).into_response());
    }
    let result = people::accept(
        &state.db,
        &token,
        &form.display_name,
        &form.password,
        &form.confirm,
    )
    .await;
    let errors = match result {
        Ok(user_id) => {
            // A fresh session id at sign-in defeats session fixation.
            session
                .cycle_id()
                .await
                .map_err(|e| DomainError::Internal(e.to_string()))?;
            crate::web::kit::auth::sign_in(&session, user_id, state.db.now_ms()).await?;
            let name = match form.display_name.trim() {
                "" => invitation
                    .as_ref()
                    .map(|i| i.email.clone())
                    .unwrap_or_default(),
                n => n.to_string(),
            };
            crate::web::kit::flash::push(&session, FlashKind::Success, messages::welcome(&name))
                .await;
            return Ok(Redirect::to(&paths::dashboard()).into_response());
        }
        Err(DomainError::Invalid(errors)) => errors,
        // Used up meanwhile (another browser took it first): gone, as for anyone after.
        Err(DomainError::Conflict { code, message, .. }) => {
            invitation = None;
            vec![FieldError::new("form", code, message)]
        }
        Err(e) => return Err(e.into()),
    };
    let status = if invitation.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::GONE
    };
    let page = InvitePage {
        layout: Layout::bare(),
        invitation,
        display_name: form.display_name,
        errors: Errs(errors),
    };
    Ok((status, axum::response::Html(page.render()?)).into_response())
}
