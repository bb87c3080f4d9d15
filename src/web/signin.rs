//! Sign-in for the back office: the sign-in page (argon2 passwords, throttled failures, the device
//! cookie), signing out, and the account routes of whoever is signed in.

use crate::web::kit::flash::FlashKind;
use crate::web::kit::paths;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use serde::Deserialize;
use tower_sessions::Session;

use crate::domain::tenancy::users;
use crate::domain::DomainError;
use crate::messages;
use crate::web::kit::auth::{safe_next, sign_in, CurrentUser};
use crate::web::kit::client_addr::ClientIp;
use crate::web::kit::error::WebError;
use crate::web::kit::flash;
use crate::web::kit::layout::Layout;
use crate::web::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/login", get(login_page).post(login))
        .route("/logout", post(logout))
        .route("/account/language", post(set_language))
        // Signing in or out, one's language: nothing a
        // verdict reads, so the kept catalogs stay usable (a page after signing in is not the
        // whole catalog judged again).
        .layer(axum::middleware::map_response(
            crate::web::edge::middleware::Evented::layer,
        ))
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    layout: Layout,
    email: String,
    next: String,
    error: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct NextQuery {
    #[serde(default)]
    next: String,
}

async fn login_page(
    session: Session,
    Query(q): Query<NextQuery>,
) -> Result<Html<String>, WebError> {
    let layout = Layout {
        flashes: flash::take(&session).await,
        ..Layout::bare()
    };
    Ok(Html(
        LoginPage {
            layout,
            email: String::new(),
            next: q.next,
            error: None,
        }
        .render()?,
    ))
}

#[derive(Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    next: String,
}

async fn login(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    headers: axum::http::HeaderMap,
    Form(form): Form<LoginForm>,
) -> Result<Response, WebError> {
    // Taken before the password is read: a reset made while it is checked ends this session.
    let started = state.db.now_ms();
    let known = device::of(&state, &headers);
    match users::authenticate(&state.db, &form.email, &form.password, &ip.0, known).await {
        Ok(user) => {
            // A fresh session id at sign-in defeats session fixation.
            session
                .cycle_id()
                .await
                .map_err(|e| DomainError::Internal(e.to_string()))?;
            crate::web::kit::fix_trail::forget(&session).await;
            sign_in(&session, user.id, started).await?;
            // A language picked on the sign-in page becomes the account's, unless the account
            // already has its own.
            if let (None, Some(lang)) = (&user.language, crate::web::kit::lang::asked().chosen) {
                users::set_language(&state.db, user.id, lang).await?;
            }
            let mut r = Redirect::to(safe_next(&form.next)).into_response();
            r.headers_mut().append(
                axum::http::header::SET_COOKIE,
                device::cookie(&state, user.id),
            );
            Ok(r)
        }
        Err(
            e @ (DomainError::BadCredentials
            | DomainError::Throttled { .. }
            | DomainError::TooFast { .. }
            | DomainError::Busy { .. }),
        ) => {
            let (status, retry_after) = match e {
                DomainError::Throttled { minutes } => {
                    (StatusCode::TOO_MANY_REQUESTS, Some(minutes as u64 * 60))
                }
                DomainError::TooFast { retry_after } => {
                    (StatusCode::TOO_MANY_REQUESTS, Some(retry_after))
                }
                DomainError::Busy { retry_after } => {
                    (StatusCode::SERVICE_UNAVAILABLE, Some(retry_after))
                }
                _ => (StatusCode::UNAUTHORIZED, None),
            };
            let page = LoginPage {
                layout: Layout::bare(),
                email: form.email,
                next: form.next,
                error: Some(e.message()),
            };
            let mut r = (status, Html(page.render()?)).into_response();
            if let Some(secs) = retry_after {
                r.headers_mut()
                    .insert(axum::http::header::RETRY_AFTER, HeaderValue::from(secs));
            }
            Ok(r)
        }
        Err(e) => Err(e.into()),
    }
}

async fn logout(session: Session) -> Result<Response, WebError> {
    session
        .flush()
        .await
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    flash::push(&session, FlashKind::Info, messages::signed_out()).await;
    Ok(Redirect::to(&paths::login()).into_response())
}

#[derive(Deserialize)]
pub struct LanguageForm {
    #[serde(default)]
    lang: String,
    #[serde(default)]
    next: String,
}

/// The header's switcher: remembers the signed-in user's language on their account and goes
/// back to the page they were on. An unknown language changes nothing.
async fn set_language(
    State(state): State<AppState>,
    user: CurrentUser,
    Form(f): Form<LanguageForm>,
) -> Result<Response, WebError> {
    if let Some(lang) = crate::web::kit::lang::Lang::parse(&f.lang) {
        users::set_language(&state.db, user.account.id, lang).await?;
    }
    Ok(Redirect::to(safe_next(&f.next)).into_response())
}

/// The device cookie (OWASP's answer to account lockout): a browser that signed in to an account
/// carries a signed note of it, and its later sign-ins to that account skip the account-wide
/// turns that slow down guessing from elsewhere (`users::authenticate`). It names a user id and
/// when it was issued, signed with the server's key; it grants nothing by itself.
mod device {
    use axum::http::{HeaderMap, HeaderValue};

    use crate::web::AppState;

    const NAME: &str = "sellable_device";
    /// How long a device is remembered.
    const DAYS: i64 = 90;

    fn mac(state: &AppState, user_id: i64, issued: i64) -> String {
        hex::encode(state.codes.sign_form(&format!("device:{user_id}:{issued}")))
    }

    /// The Set-Cookie value after a successful sign-in.
    pub fn cookie(state: &AppState, user_id: i64) -> HeaderValue {
        let issued = state.db.now_ms();
        let secure = if state.config.serve.secure_cookies {
            "; Secure"
        } else {
            ""
        };
        let value = format!(
            "{NAME}={user_id}.{issued}.{}; Path=/login; Max-Age={}; HttpOnly; SameSite=Lax{secure}",
            mac(state, user_id, issued),
            DAYS * 86_400
        );
        HeaderValue::from_str(&value).expect("a cookie of digits, dots and hex")
    }

    /// The user a valid, unexpired device cookie of this request names.
    pub fn of(state: &AppState, headers: &HeaderMap) -> Option<i64> {
        let now = state.db.now_ms();
        headers
            .get_all(axum::http::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().strip_prefix(NAME)?.strip_prefix('='))
            .find_map(|v| {
                let mut parts = v.splitn(3, '.');
                let user_id: i64 = parts.next()?.parse().ok()?;
                let issued: i64 = parts.next()?.parse().ok()?;
                let given = parts.next()?;
                let same = state
                    .codes
                    .form_signed(&format!("device:{user_id}:{issued}"), given);
                (same && now - issued < DAYS * 86_400_000 && issued <= now).then_some(user_id)
            })
    }
}
