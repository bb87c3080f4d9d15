//! Sign-in for the back office: sessions in our own database, argon2 passwords, throttled failures.

use crate::web::flash::FlashKind;

use askama::Template;
use axum::extract::{FromRef, FromRequestParts, OriginalUri, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use serde::Deserialize;
use tower_sessions::Session;

use super::error::WebError;
use super::flash;
use super::layout::Layout;
use super::page::is_htmx;
use super::AppState;
use crate::domain::tenancy::users::{self, User};
use crate::domain::{Actor, DomainError};
use crate::messages;
use crate::web::middleware::ClientIp;

const USER_KEY: &str = "user_id";
/// When the session signed in (unix ms): a session older than its user's
/// `sessions_valid_after` (a reset, a changed password, a deactivation) is ended.
pub const SIGNED_IN_KEY: &str = "signed_in_at";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/login", get(login_page).post(login))
        .route("/logout", post(logout))
        .route("/account/language", post(set_language))
        .route("/account", get(super::admin::people::account))
        .route("/account/name", post(super::admin::people::save_name))
        .route(
            "/account/password",
            post(super::admin::people::change_password),
        )
        .route(
            "/invite/{token}",
            get(super::admin::people::invitation).post(super::admin::people::accept),
        )
        // Signing in or out, one's language, name or password, an invitation taken: nothing a
        // verdict reads, so the kept catalogs stay usable (a page after signing in is not the
        // whole catalog judged again).
        .layer(axum::middleware::map_response(
            super::middleware::Evented::layer,
        ))
}

/// The signed-in user. Extracting it from a request without a session redirects to the login page
/// (or tells htmx to, with `HX-Redirect`, so a login form is never swapped into a fragment).
#[derive(Debug, Clone)]
pub struct CurrentUser {
    pub account: User,
    /// The Redis gate of this instance is degraded (shown in the page header).
    pub gate_degraded: bool,
    /// The client's address, for the audit trail.
    pub ip: ClientIp,
}

impl CurrentUser {
    pub fn actor(&self, source: &str) -> Actor {
        Actor {
            ip: self.ip.0.clone(),
            ..self.account.actor(source)
        }
    }
}

pub struct AuthRedirect {
    target: String,
    htmx: bool,
}

impl IntoResponse for AuthRedirect {
    fn into_response(self) -> Response {
        if self.htmx {
            let mut r = StatusCode::UNAUTHORIZED.into_response();
            if let Ok(v) = HeaderValue::from_str(&self.target) {
                r.headers_mut().insert("HX-Redirect", v);
            }
            r
        } else {
            Redirect::to(&self.target).into_response()
        }
    }
}

impl<S> FromRequestParts<S> for CurrentUser
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(state);
        let session = Session::from_request_parts(parts, &state)
            .await
            .map_err(|e| e.into_response())?;
        let redirect = || {
            // Inside a nested router the URI has lost its prefix; the original one has not.
            let uri = parts
                .extensions
                .get::<OriginalUri>()
                .map(|o| &o.0)
                .unwrap_or(&parts.uri);
            let next = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/admin");
            let target = super::view::link("/login", &[("next", next)]);
            AuthRedirect {
                target,
                htmx: is_htmx(&parts.headers),
            }
            .into_response()
        };
        let Some(id) = session.get::<i64>(USER_KEY).await.ok().flatten() else {
            return Err(redirect());
        };
        let signed_in_at = session
            .get::<i64>(SIGNED_IN_KEY)
            .await
            .ok()
            .flatten()
            .unwrap_or(0);
        match users::get(&state.db, id).await {
            Ok(Some(user)) if signed_in_at < user.sessions_valid_after => {
                let _ = session.flush().await;
                Err(redirect())
            }
            Ok(Some(account)) => Ok(CurrentUser {
                account,
                gate_degraded: state.db.gate.as_ref().is_some_and(|g| g.is_degraded()),
                ip: ClientIp::of(parts),
            }),
            Ok(None) => {
                let _ = session.flush().await;
                Err(redirect())
            }
            Err(e) => Err(WebError::from(e).into_response()),
        }
    }
}

/// Only a path of this site: never redirect a signed-in user to another one. `next` must parse as
/// a path and query, start with one `/` (not `//` or `/\\`, which browsers read as another host),
/// and hold visible ASCII only: browsers drop tabs and newlines from URLs, so `/\t/evil.example`
/// would become `//evil.example`. Anything else goes to the dashboard.
pub fn safe_next(next: &str) -> &str {
    let b = next.as_bytes();
    let local = b.first() == Some(&b'/')
        && !matches!(b.get(1), Some(b'/' | b'\\'))
        && b.iter().all(|c| (0x21..=0x7e).contains(c))
        && next.parse::<axum::http::uri::PathAndQuery>().is_ok();
    if local {
        next
    } else {
        "/admin"
    }
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
            super::fix_trail::forget(&session).await;
            sign_in(&session, user.id, started).await?;
            // A language picked on the sign-in page becomes the account's, unless the account
            // already has its own.
            if let (None, Some(lang)) = (&user.language, super::lang::asked().chosen) {
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

/// Marks the session as signed in as `user_id` at `at` (unix ms).
pub async fn sign_in(session: &Session, user_id: i64, at: i64) -> Result<(), WebError> {
    let failed = |e: tower_sessions::session::Error| DomainError::Internal(e.to_string());
    session.insert(USER_KEY, user_id).await.map_err(failed)?;
    session.insert(SIGNED_IN_KEY, at).await.map_err(failed)?;
    Ok(())
}

async fn logout(session: Session) -> Result<Response, WebError> {
    session
        .flush()
        .await
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    flash::push(&session, FlashKind::Info, messages::signed_out()).await;
    Ok(Redirect::to("/login").into_response())
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
    if let Some(lang) = super::lang::Lang::parse(&f.lang) {
        users::set_language(&state.db, user.account.id, lang).await?;
    }
    Ok(Redirect::to(safe_next(&f.next)).into_response())
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_must_be_a_plain_local_path() {
        assert_eq!(
            safe_next("/admin/slots?day=2026-12-01"),
            "/admin/slots?day=2026-12-01"
        );
        for bad in [
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/a\nb",
            "/a\0b",
            "https://evil.example",
            "evil",
            "",
            "/a b",
        ] {
            assert_eq!(safe_next(bad), "/admin", "{bad:?}");
        }
    }

    proptest::proptest! {
        /// Whatever `next` holds, the redirect stays on this site: one leading slash, then visible
        /// ASCII only (browsers drop tabs and newlines, which could turn `/\t/x` into `//x`).
        #[test]
        fn next_never_leads_off_site(next in "\\PC{0,30}|/[/\\\\\t]?\\PC{0,20}") {
            let to = safe_next(&next);
            proptest::prop_assert!(to.starts_with('/'));
            proptest::prop_assert!(!to.starts_with("//") && !to.starts_with("/\\"));
            proptest::prop_assert!(to.bytes().all(|b| (0x21..=0x7e).contains(&b)));
        }
    }
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
