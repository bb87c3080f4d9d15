//! Who is signed in: the `CurrentUser` extractor, the session keys it reads, and the one check of a
//! `next` path. The sign-in pages themselves are `web::signin`.

use crate::web::kit::paths;
use axum::extract::{FromRef, FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use tower_sessions::Session;

use crate::domain::tenancy::users::{self, User};
use crate::domain::{Actor, DomainError};
use crate::web::kit::client_addr::ClientIp;
use crate::web::kit::error::WebError;
use crate::web::kit::page::is_htmx;
use crate::web::AppState;

const USER_KEY: &str = "user_id";
/// When the session signed in (unix ms): a session older than its user's
/// `sessions_valid_after` (a reset, a changed password, a deactivation) is ended.
pub const SIGNED_IN_KEY: &str = "signed_in_at";

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
            let target = crate::web::view::link(&paths::login(), &[("next", next)]);
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

/// Marks the session as signed in as `user_id` at `at` (unix ms).
pub async fn sign_in(session: &Session, user_id: i64, at: i64) -> Result<(), WebError> {
    let failed = |e: tower_sessions::session::Error| DomainError::Internal(e.to_string());
    session.insert(USER_KEY, user_id).await.map_err(failed)?;
    session.insert(SIGNED_IN_KEY, at).await.map_err(failed)?;
    Ok(())
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
