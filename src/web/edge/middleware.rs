//! Cross-cutting request handling: trace spans with request ids, and request metrics by route.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;
use std::task::{ready, Context, Poll};
use std::time::Instant;

use axum::extract::MatchedPath;
use axum::http::header::{
    HeaderName, HeaderValue, CONTENT_SECURITY_POLICY, REFERRER_POLICY, VARY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{Request, Response, StatusCode};
use pin_project_lite::pin_project;
use tower::{Layer, Service};
use tracing::Span;

use crate::telemetry::Handles;

pub fn make_span<B>(req: &Request<B>) -> Span {
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    // An invitation link's path is its secret: logged without it.
    let path = match req.uri().path() {
        p if p.starts_with("/invite/") => "/invite/…",
        p => p,
    };
    tracing::info_span!("request", method = %req.method(), path = %path, request_id = %request_id)
}

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/// A layer that does something to each request on the way in and to its response on the way
/// out, for [`Edge`] and [`TagRoute`]. Hand-written rather than `from_fn`: `from_fn` clones and
/// boxes the service behind it on every request, and on the gate's sold-out path that cost a
/// tenth of a refusal.
#[derive(Clone, Default)]
pub struct Around<A>(pub A);

/// The way in: what to do to the request, and what to keep for its response.
pub trait Before {
    type After: After;
    fn before<B>(&self, req: &mut Request<B>) -> Self::After;
}

/// The way out: what to do to the response with what was kept.
pub trait After {
    fn after<B>(self, res: &mut Response<B>);
}

impl<S, A: Clone> Layer<S> for Around<A> {
    type Service = AroundService<S, A>;
    fn layer(&self, inner: S) -> Self::Service {
        AroundService {
            inner,
            around: self.0.clone(),
        }
    }
}

#[derive(Clone)]
pub struct AroundService<S, A> {
    inner: S,
    around: A,
}

impl<S, A, ReqB, ResB> Service<Request<ReqB>> for AroundService<S, A>
where
    S: Service<Request<ReqB>, Response = Response<ResB>>,
    A: Before,
{
    type Response = Response<ResB>;
    type Error = S::Error;
    type Future = AroundFuture<S::Future, A::After>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqB>) -> Self::Future {
        let kept = self.around.before(&mut req);
        AroundFuture {
            inner: self.inner.call(req),
            kept: Some(kept),
        }
    }
}

pin_project! {
    pub struct AroundFuture<F, K> {
        #[pin]
        inner: F,
        kept: Option<K>,
    }
}

impl<F, K, B, E> Future for AroundFuture<F, K>
where
    F: Future<Output = Result<Response<B>, E>>,
    K: After,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.inner.poll(cx))?;
        if let Some(kept) = this.kept.take() {
            kept.after(&mut response);
        }
        Poll::Ready(Ok(response))
    }
}

/// Counts every request that may have changed something (any method but GET, HEAD and OPTIONS)
/// once it is over, so after its commit: the catalogs whose reading began before it are no
/// longer shown (see `domain::sellable::recent`). A refusal (4xx: bad input, sold out) changed
/// nothing and is not counted; a failure (5xx) and a request whose answer never went out (the
/// client left, a timeout, a panic) are, in case they committed. An atomic add, cheap enough for
/// the order system's hot path. An htmx request's answer also says `HX-Trigger:
/// sellable-changed`, so that what a page shows of the catalog (the way back to Not sellable)
/// asks for itself again after a fix made in place.
///
/// With a read replica, the answer also carries the time of the change in a cookie
/// (`web::kit::lagging`): the reader's next listings come from the primary until the replica holds it.
#[derive(Clone)]
pub struct MarkChanges {
    /// The kept catalogs, told of a change no event names.
    pub kept: std::sync::Arc<crate::domain::sellable::Recent>,
    /// A read replica is configured: answers to changes set the cookie.
    pub replica: bool,
    /// The cookie is `Secure` (`SELLABLE_SECURE_COOKIES`).
    pub secure: bool,
}

/// Put in an answer's extensions by the routes whose every change writes a change event naming
/// each SKU it touched (the orders API, the catalog, slots, closures, schedules, staff renamed,
/// codes, bookings and the waiting list, the public booking pages), or that change nothing a
/// verdict reads (signing in, one's own account, people, API keys, webhooks, places): the kept
/// catalogs catch up from those events (`domain::sellable::recent`), so such a change is not
/// counted. What is left counted is reconciliation's runs and corrections.
#[derive(Debug, Clone, Copy)]
pub struct Evented;

impl Evented {
    /// Marks a handler's answer: what it changed wrote its change events.
    pub fn mark(mut response: axum::response::Response) -> axum::response::Response {
        response.extensions_mut().insert(Evented);
        response
    }

    /// [`Evented::mark`] as a layer (`axum::middleware::map_response`).
    pub async fn layer(response: axum::response::Response) -> axum::response::Response {
        Evented::mark(response)
    }
}

/// Counts its change when dropped, unless the answer said nothing changed.
pub struct MarkChangesAfter {
    kept: Option<std::sync::Arc<crate::domain::sellable::Recent>>,
    htmx: bool,
    replica: bool,
    secure: bool,
}

impl Before for MarkChanges {
    type After = MarkChangesAfter;

    fn before<B>(&self, req: &mut Request<B>) -> MarkChangesAfter {
        let reads = matches!(
            *req.method(),
            axum::http::Method::GET | axum::http::Method::HEAD | axum::http::Method::OPTIONS
        );
        MarkChangesAfter {
            kept: (!reads).then(|| self.kept.clone()),
            htmx: !reads && req.headers().contains_key("hx-request"),
            replica: self.replica,
            secure: self.secure,
        }
    }
}

impl After for MarkChangesAfter {
    fn after<B>(mut self, response: &mut Response<B>) {
        if response.status().is_client_error() {
            self.kept = None;
            return;
        }
        let changed = self.kept.is_some();
        // A form's success is a redirect.
        let done = response.status().is_success() || response.status().is_redirection();
        if done && response.extensions().get::<Evented>().is_some() {
            self.kept = None;
        }
        if self.htmx {
            response.headers_mut().append(
                HeaderName::from_static("hx-trigger"),
                HeaderValue::from_static("sellable-changed"),
            );
        }
        if self.replica && changed {
            // After the handler, so after its commit.
            let c = cookie::Cookie::build((
                crate::web::kit::lagging::WROTE_COOKIE,
                crate::infra::clock::wall_ms().to_string(),
            ))
            .path("/")
            .http_only(true)
            .secure(self.secure)
            .same_site(cookie::SameSite::Lax)
            .build();
            if let Ok(v) = HeaderValue::from_str(&c.to_string()) {
                response
                    .headers_mut()
                    .append(axum::http::header::SET_COOKIE, v);
            }
        }
    }
}

impl Drop for MarkChangesAfter {
    fn drop(&mut self) {
        if let Some(kept) = self.kept.take() {
            kept.changed();
        }
    }
}

/// What every request gets at the edge: a request id (kept when the caller sent one, so it can be
/// followed across services; read by the trace span and echoed in the response), the security
/// headers, `Vary: HX-Request, HX-Target` (the same URL answers a page or one of its fragments), and the request
/// metrics by route template (not raw path, so ids don't explode the label set) and status. It
/// runs outside the trace, panic and timeout layers, so timeouts and panics are counted and carry
/// the headers too.
#[derive(Clone, Default)]
pub struct Edge;

pub struct EdgeAfter {
    start: Instant,
    id: HeaderValue,
    method: &'static str,
    is_static: bool,
}

impl Before for Edge {
    type After = EdgeAfter;

    fn before<B>(&self, req: &mut Request<B>) -> EdgeAfter {
        let start = Instant::now();
        let id = match req.headers().get(REQUEST_ID) {
            Some(v) => v.clone(),
            None => {
                let v = new_request_id();
                req.headers_mut().insert(REQUEST_ID, v.clone());
                v
            }
        };
        EdgeAfter {
            start,
            id,
            method: method_label(req.method()),
            is_static: req.uri().path().starts_with("/static/"),
        }
    }
}

impl After for EdgeAfter {
    fn after<B>(self, response: &mut Response<B>) {
        let route = match response.extensions().get::<MatchedPath>() {
            Some(p) => Route::Matched(p.clone()),
            None if self.is_static => Route::Static,
            None => Route::Unmatched,
        };
        let (counter, histogram) = request_metrics(self.method, route, response.status());
        counter.increment(1);
        histogram.record(self.start.elapsed().as_secs_f64());
        let h = response.headers_mut();
        h.entry(REQUEST_ID).or_insert(self.id);
        h.entry(X_CONTENT_TYPE_OPTIONS)
            .or_insert(HeaderValue::from_static("nosniff"));
        h.entry(X_FRAME_OPTIONS)
            .or_insert(HeaderValue::from_static("DENY"));
        h.entry(REFERRER_POLICY)
            .or_insert(HeaderValue::from_static("same-origin"));
        h.entry(CONTENT_SECURITY_POLICY)
            .or_insert(HeaderValue::from_static(CSP));
        h.append(VARY, HeaderValue::from_static("HX-Request, HX-Target"));
    }
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// A new request id: this process's random prefix and a sequence number, unique across instances
/// and cheaper than a random UUID per request.
fn new_request_id() -> HeaderValue {
    static PREFIX: LazyLock<u32> = LazyLock::new(|| uuid::Uuid::new_v4().as_u128() as u32);
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // Written digit by digit: `format!` with padding cost more than the rest of this layer.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = [0u8; 21];
    for (i, b) in id[..8].iter_mut().enumerate() {
        *b = HEX[((*PREFIX >> (28 - 4 * i)) & 0xf) as usize];
    }
    id[8] = b'-';
    for (i, b) in id[9..].iter_mut().enumerate() {
        *b = HEX[((n >> (44 - 4 * i)) & 0xf) as usize];
    }
    HeaderValue::from_bytes(&id).expect("hex digits are a valid header value")
}

/// The route label of a response: its route template, the static files, or none matched.
#[derive(Clone)]
enum Route {
    Matched(MatchedPath),
    Static,
    Unmatched,
}

impl Route {
    fn as_str(&self) -> &str {
        match self {
            Route::Matched(p) => p.as_str(),
            Route::Static => "/static",
            Route::Unmatched => "unmatched",
        }
    }
}

impl PartialEq for Route {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Route {}

impl std::hash::Hash for Route {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

/// The request counter (by method, route and status) and duration histogram (by method and
/// route) of one kind of response.
fn request_metrics(
    method: &'static str,
    route: Route,
    status: StatusCode,
) -> (metrics::Counter, metrics::Histogram) {
    type RequestHandles =
        Handles<(&'static str, Route, u16), (metrics::Counter, metrics::Histogram)>;
    static HANDLES: LazyLock<RequestHandles> = LazyLock::new(Handles::new);
    HANDLES.get((method, route, status.as_u16()), |(method, route, status)| {
        let method = *method;
        let route = route.as_str().to_string();
        (
            metrics::counter!("http_requests_total", "method" => method, "route" => route.clone(), "status" => status.to_string()),
            metrics::histogram!("http_request_duration_seconds", "method" => method, "route" => route),
        )
    })
}

/// The method as a static label (no allocation per request); anything unusual is "other".
fn method_label(m: &axum::http::Method) -> &'static str {
    use axum::http::Method;
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Runs inside the router, where the matched route is known, and hands it to [`Edge`] (which
/// runs outside, so it also sees timeouts and panics) in the response's extensions.
#[derive(Clone, Default)]
pub struct TagRoute;

pub struct Tagged(Option<MatchedPath>);

impl Before for TagRoute {
    type After = Tagged;
    fn before<B>(&self, req: &mut Request<B>) -> Tagged {
        Tagged(req.extensions().get::<MatchedPath>().cloned())
    }
}

impl After for Tagged {
    fn after<B>(self, response: &mut Response<B>) {
        if let Some(m) = self.0 {
            response.extensions_mut().insert(m);
        }
    }
}
