//! HTTP surfaces: the back office (/admin), the JSON API (/api/v1) and the operational endpoints.
//! Handlers extract, call the domain, and render. No SQL here.

pub mod admin;
pub mod api;
pub mod edge;
pub mod kit;
pub mod public;
pub mod signin;
pub mod view;

use crate::web::kit::paths;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::Router;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};

use crate::config::Config;
use crate::infra::db::Db;
use crate::infra::sessions::SqlSessionStore;
use edge::{health, middleware};
use kit::{error, input, lang};

/// What every handler shares. One `Arc` around it, because axum clones the state for each
/// extractor of each request: cloning five fields there showed up in the gate's profile.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub db: Db,
    pub config: Arc<Config>,
    pub sessions: SqlSessionStore,
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
    pub codes: Arc<crate::domain::kernel::code_keys::CodeKeys>,
    /// Each API key's requests per second on this instance.
    pub api_limits: api::limits::RateLimits,
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    pub fn new(
        config: Config,
        db: Db,
        codes: Arc<crate::domain::kernel::code_keys::CodeKeys>,
    ) -> Self {
        let sessions = SqlSessionStore::new(db.pool.clone());
        AppState(Arc::new(Shared {
            db,
            config: Arc::new(config),
            sessions,
            metrics: crate::telemetry::prometheus(),
            codes,
            api_limits: Default::default(),
        }))
    }
}

/// Every path template the router answers, read from the router itself (its `Debug` lists the
/// paths it matches): the attack sweep of the test suite walks these, so a new route is covered
/// without anyone remembering to add it.
pub fn route_paths(router: &Router) -> Vec<String> {
    let dump = format!("{router:?}");
    let mut paths: Vec<String> = Vec::new();
    // The path maps print as `RouteId(n): "/path"`.
    for piece in dump.split("RouteId(").skip(1) {
        let Some(rest) = piece.split_once("): \"").map(|(_, r)| r) else {
            continue;
        };
        if let Some((path, _)) = rest.split_once('"') {
            if path.starts_with('/') && !paths.iter().any(|p| p == path) {
                paths.push(path.to_string());
            }
        }
    }
    paths.sort();
    paths
}

/// Where the static files live: next to Cargo.toml in development, set for packaging.
fn static_dir(config: &crate::Config) -> std::path::PathBuf {
    config
        .serve
        .static_dir
        .clone()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/static").into())
}

pub fn router(state: AppState) -> Router {
    let session_layer = SessionManagerLayer::new(state.sessions.clone())
        .with_name("sellable_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.config.serve.secure_cookies)
        .with_expiry(Expiry::OnInactivity(time::Duration::hours(8)));

    // Sessions only where people sign in: the JSON API authenticates each call with its key, and
    // skipping the session layer there keeps cookie parsing off the order system's hot path.
    let pages = Router::new()
        .route(
            "/",
            get(|| async { axum::response::Redirect::to(&paths::dashboard()) }),
        )
        .merge(signin::routes())
        .merge(admin::settings::people::account_routes())
        .nest("/admin", admin::routes())
        .merge(public::routes(state.config.serve.public_rate_per_minute))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            input::guard_form,
        ))
        .layer(session_layer)
        // Forms post with the session cookie; the JSON API authenticates each call with a key in
        // a header, which another site cannot make a browser send, so it needs no CSRF check.
        .layer(tower_http::csrf::CsrfLayer::new().with_rejection_response(error::csrf_rejected));
    // Compressed: pages, static files, /metrics and the API's long listings. Not the API's small
    // answers on the hot paths, where the compression layer's wrapping was a visible cost of
    // every sold-out refusal and gzip would not pay for itself.
    // The API's routes and its document come from one place; the reference page serves the
    // document and the Swagger UI files the crate carries (nothing from a CDN).
    let (api, openapi) = api::routes();
    let docs = api::reference(openapi);
    let compressed = Router::new()
        .merge(pages)
        .merge(docs)
        .merge(health::routes())
        .nest_service("/static", ServeDir::new(static_dir(&state.config)))
        .layer(CompressionLayer::new());
    let app = Router::new()
        .merge(compressed)
        .merge(api)
        .route_layer(middleware::Around(middleware::TagRoute))
        .fallback(error::not_found)
        .layer(middleware::Around(middleware::MarkChanges {
            kept: crate::domain::sellable::kept(&state.db),
            replica: state.db.replica.is_some(),
            secure: state.config.serve.secure_cookies,
        }))
        .layer(axum::middleware::from_fn(lang::negotiate))
        .layer(DefaultBodyLimit::max(state.config.serve.body_limit))
        .with_state(state.clone());

    app.layer(
        ServiceBuilder::new()
            // Who the client is, read through the trusted proxies (`ClientIp`, the throttles).
            .layer(axum::Extension(state.config.serve.trusted_proxies.clone()))
            .layer(middleware::Around(middleware::Edge))
            .layer(TraceLayer::new_for_http().make_span_with(middleware::make_span))
            .layer(CatchPanicLayer::custom(error::panic_response))
            .layer(TimeoutLayer::with_status_code(
                axum::http::StatusCode::REQUEST_TIMEOUT,
                Duration::from_secs(30),
            ))
            .layer(input::GuardUri),
    )
}
