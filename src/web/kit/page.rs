//! The one way to write a back-office page. A handler takes a [`PageCtx`] (who is signed in, their
//! session, whether htmx asked and for which element, the path) and answers with
//! [`PageCtx::answer`], which picks the whole page or one of its blocks. The rule of which block
//! answers which `HX-Target` lives here and nowhere else; the edge middleware's `Vary` names both
//! headers it reads.

use askama::Template;
use axum::extract::{FromRef, FromRequestParts, OriginalUri};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use tower_sessions::Session;

use crate::domain::Actor;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::{self, FlashKind};
use crate::web::kit::lang::{settle, Asked, Lang};
use crate::web::kit::layout::Layout;
use crate::web::AppState;

/// Everything a back-office handler needs besides its own input.
pub struct PageCtx {
    pub user: CurrentUser,
    pub session: Session,
    /// The request came from htmx (`HX-Request: true`).
    pub htmx: bool,
    /// The id of the element htmx will swap (`HX-Target`), if it said.
    pub target: Option<String>,
    /// The request's path, prefix included (`/admin/slots/7`).
    pub path: String,
    /// Its query string, if any (filters, sort, page: kept when the language is switched).
    query: Option<String>,
    /// The page's language (see `lang`): the user's, else their merchant's, else the request's.
    pub lang: Lang,
    state: AppState,
}

/// Which requests a page's block answers instead of the whole page.
#[derive(Debug, Clone, Copy)]
pub enum Part {
    /// Every htmx request: the page is only ever swapped as that block.
    AnyHtmx,
    /// An htmx request aimed at the element with this id; other htmx requests (a boosted link,
    /// a form elsewhere on the page) get the whole page.
    Target(&'static str),
}

impl<S> FromRequestParts<S> for PageCtx
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let user = CurrentUser::from_request_parts(parts, state).await?;
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        // Inside a nested router the URI has lost its prefix; the original one has not.
        let path = parts
            .extensions
            .get::<OriginalUri>()
            .map(|o| o.0.path())
            .unwrap_or(parts.uri.path())
            .to_string();
        let asked = parts.extensions.get::<Asked>().copied().unwrap_or_default();
        let lang = settle(
            user.account
                .lang()
                .unwrap_or_else(|| asked.or(Lang::default())),
        );
        if parts.method == axum::http::Method::GET {
            crate::web::kit::fix_trail::follow(&session, parts.uri.query()).await;
        } else {
            crate::web::kit::fix_trail::changed(&session).await;
        }
        Ok(PageCtx {
            state: AppState::from_ref(state),
            lang,
            htmx: is_htmx(&parts.headers),
            target: hx_target(&parts.headers).map(str::to_string),
            user,
            session,
            path,
            query: parts.uri.query().map(str::to_string),
        })
    }
}

pub fn is_htmx(headers: &HeaderMap) -> bool {
    headers.get("HX-Request").is_some_and(|v| v == "true")
}

fn hx_target(headers: &HeaderMap) -> Option<&str> {
    headers.get("HX-Target").and_then(|v| v.to_str().ok())
}

impl Part {
    /// Whether a request (htmx or not, aimed at `target`) asks for this part.
    pub fn wanted(self, htmx: bool, target: Option<&str>) -> bool {
        match self {
            Part::AnyHtmx => htmx,
            Part::Target(id) => htmx && target == Some(id),
        }
    }
}

fn render<T: Template>(
    block_wanted: bool,
    status: StatusCode,
    page: &T,
    block: impl FnOnce(&T) -> askama::Result<String>,
) -> Result<Response, WebError> {
    let html = if block_wanted {
        block(page)?
    } else {
        page.render()?
    };
    Ok((status, Html(html)).into_response())
}

/// [`PageCtx::answer`] for pages outside the back office (the public booking pages), which have
/// no signed-in user: the same rule, read from the request's headers.
pub fn answer_to<T: Template>(
    headers: &HeaderMap,
    page: &T,
    part: Part,
    block: impl FnOnce(&T) -> askama::Result<String>,
) -> Result<Response, WebError> {
    let wanted = part.wanted(is_htmx(headers), hx_target(headers));
    render(wanted, StatusCode::OK, page, block)
}

impl PageCtx {
    /// The frame around the page: navigation for the user's role, the active tab from the path,
    /// and the flashes waiting in the session (taken: they show once).
    pub async fn layout(&self) -> Layout {
        let mut layout = Layout::new(&self.user, &self.session, &self.path, self.lang).await;
        if let Some(q) = self.query.as_deref().filter(|q| !q.is_empty()) {
            layout.here = format!("{}?{q}", self.path);
        }
        // Not for htmx swaps (polls, partial updates): the banner sits outside every block.
        if !self.htmx {
            layout.back_to_sellable =
                crate::web::kit::fix_trail::left(&self.state, &self.user, &self.session).await;
        }
        layout
    }

    /// The signed-in user acting, with `source` for the audit trail.
    pub fn actor(&self, source: &str) -> Actor {
        self.user.actor(source)
    }

    /// Whether this request asks for `part` rather than the whole page.
    pub fn wants(&self, part: Part) -> bool {
        part.wanted(self.htmx, self.target.as_deref())
    }

    /// The whole page, or for a request that [`wants`](Self::wants) `part`, the block `block`
    /// renders from it.
    pub fn answer<T: Template>(
        &self,
        status: StatusCode,
        page: &T,
        part: Part,
        block: impl FnOnce(&T) -> askama::Result<String>,
    ) -> Result<Response, WebError> {
        render(self.wants(part), status, page, block)
    }

    /// A page with no blocks.
    pub fn whole<T: Template>(&self, page: &T) -> Result<Response, WebError> {
        self.whole_as(StatusCode::OK, page)
    }

    /// A page with no blocks, with a status (422 for a form sent back with its errors).
    pub fn whole_as<T: Template>(
        &self,
        status: StatusCode,
        page: &T,
    ) -> Result<Response, WebError> {
        Ok((status, Html(page.render()?)).into_response())
    }

    /// A one-shot message for the next page.
    pub async fn flash(&self, kind: FlashKind, text: String) {
        flash::push(&self.session, kind, text).await;
    }
}
