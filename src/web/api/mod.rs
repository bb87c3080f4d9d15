//! The JSON API for order systems (/api/v1). Authenticated by `Authorization: Bearer <key>`;
//! every call acts for the key's merchant. Errors are `{"error": code, "message": text}`.

use crate::domain::MerchantId;
use axum::extract::{FromRef, FromRequest, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Json, Router};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use tower_http::compression::CompressionLayer;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

use crate::domain::catalog::{self, ProductDetail, ProductInput, ProductPatch, SkuInput};
use crate::domain::kernel::validate::{self, ms_to_rfc3339};
use crate::domain::tenancy::apikeys;
use crate::domain::{tenancy::tenants, Actor, DomainError, FieldError, Scope};
use crate::messages;
use crate::web::kit::error::ApiError;
use crate::web::kit::ids::ApiId;
use crate::web::AppState;

pub mod doc;
mod events;
mod goods;
pub mod limits;
mod orders;
mod sellable;
mod services;
mod settings;
mod vouchers;

/// The API's routes, each registered through its OpenAPI operation (`routes!` reads the path and
/// method from the handler's `#[utoipa::path]`), so no `/api/v1` route can exist without its
/// entry in the document. Registered flat rather than nested under the prefix: nesting rewrote
/// each request's URI and routed it twice, a twentieth of a sold-out refusal's cost.
fn documented() -> OpenApiRouter<AppState> {
    use utoipa_axum::routes;
    let upload_limit = axum::extract::DefaultBodyLimit::max(
        crate::domain::codes::import::MAX_BYTES as usize + 1024 * 1024,
    );
    OpenApiRouter::with_openapi(doc::base())
        .routes(evented(routes!(create_product)))
        .routes(evented(routes!(get_product, patch_product)))
        .routes(evented(routes!(get_sku, patch_sku)))
        .routes(routes!(goods::sku_stock))
        .routes(routes!(goods::sku_holds))
        .routes(routes!(goods::report))
        .routes(routes!(sellable::sku_verdict))
        .routes(compressed(routes!(sellable::list)))
        .routes(evented(routes!(goods::adjust)))
        .routes(evented(routes!(goods::reserve)))
        .routes(routes!(goods::get_reservation))
        .routes(evented(routes!(goods::confirm)))
        .routes(evented(routes!(goods::release)))
        .routes(evented(routes!(goods::record_return)))
        .routes(compressed(routes!(goods::ledger)))
        .routes(evented(routes!(vouchers::void)))
        .routes(evented(routes!(vouchers::reissue)))
        .routes(evented(routes!(vouchers::redeem)))
        .routes(evented(routes!(vouchers::lock)))
        .routes(evented(routes!(vouchers::unredeem)))
        .routes(evented(routes!(vouchers::unlock)))
        .routes(evented(routes!(vouchers::invalidate)))
        .routes(routes!(orders::list_exceptions))
        .routes(evented(routes!(orders::resolve_exception)))
        .routes(layered(evented(routes!(vouchers::upload)), upload_limit))
        .routes(routes!(vouchers::get_batch))
        .routes(evented(routes!(vouchers::generate)))
        .routes(unread(routes!(vouchers::download)))
        .routes(compressed(routes!(vouchers::batch_errors)))
        .routes(routes!(vouchers::summary))
        .routes(unread(routes!(services::add_staff)))
        .routes(evented(routes!(services::replace_schedule)))
        .routes(compressed(routes!(services::list_slots)))
        .routes(evented(routes!(services::create_slot)))
        .routes(evented(routes!(services::patch_slot)))
        .routes(evented(routes!(services::close_slot)))
        .routes(evented(routes!(services::open_slot)))
        .routes(evented(routes!(services::create_closure)))
        .routes(routes!(services::list_closures))
        .routes(evented(routes!(services::reopen_closure)))
        .routes(evented(routes!(services::book)))
        .routes(compressed(routes!(services::list_bookings)))
        .routes(routes!(services::get_booking))
        .routes(evented(routes!(services::cancel_booking)))
        .routes(evented(routes!(services::move_booking)))
        .routes(evented(routes!(
            services::join_waitlist,
            services::waitlist
        )))
        .routes(evented(routes!(services::accept_offer)))
        .routes(evented(routes!(services::decline_offer)))
        .routes(evented(routes!(services::attended)))
        .routes(evented(routes!(services::no_show)))
        .routes(compressed(routes!(settings::audit::list)))
        .routes(compressed(routes!(events::list)))
        .routes(unread(routes!(
            settings::webhooks::create,
            settings::webhooks::list
        )))
        .routes(unread(routes!(
            settings::webhooks::get,
            settings::webhooks::delete
        )))
        .routes(unread(routes!(settings::webhooks::pause)))
        .routes(unread(routes!(settings::webhooks::resume)))
        .routes(unread(routes!(settings::webhooks::rotate)))
        .routes(routes!(settings::webhooks::deliveries))
        .routes(unread(routes!(settings::webhooks::redeliver)))
}

/// A route's handlers behind one more layer (the document is unchanged).
fn layered<L>(
    (schemas, paths, router): UtoipaMethodRouter<AppState>,
    layer: L,
) -> UtoipaMethodRouter<AppState>
where
    L: tower::Layer<axum::routing::Route> + Clone + Send + Sync + 'static,
    L::Service: tower::Service<axum::extract::Request> + Clone + Send + Sync + 'static,
    <L::Service as tower::Service<axum::extract::Request>>::Response: IntoResponse + 'static,
    <L::Service as tower::Service<axum::extract::Request>>::Error:
        Into<std::convert::Infallible> + 'static,
    <L::Service as tower::Service<axum::extract::Request>>::Future: Send + 'static,
{
    (schemas, paths, router.layer(layer))
}

/// The orders API (an exception settled takes an order again through it), the catalog's SKUs
/// made and edited, the slots and schedules, bookings marked,
/// the waiting list, code batches made and codes moved by hand: every change they make writes a
/// change event naming each SKU it touched (for a slot, its service), so they
/// leave this instance's kept catalogs usable (they catch up from the events; see
/// `middleware::Evented`).
fn evented(r: UtoipaMethodRouter<AppState>) -> UtoipaMethodRouter<AppState> {
    layered(
        r,
        axum::middleware::map_response(crate::web::edge::middleware::Evented::layer),
    )
}

/// The routes that change nothing a verdict reads (webhooks, staff added, generated codes
/// downloaded): like [`evented`] ones, they leave the kept catalogs usable.
fn unread(r: UtoipaMethodRouter<AppState>) -> UtoipaMethodRouter<AppState> {
    evented(r)
}

/// The long listings are gzipped; the small answers on the hot paths are not (the compression
/// layer's wrapping was a visible cost of every sold-out refusal).
fn compressed(r: UtoipaMethodRouter<AppState>) -> UtoipaMethodRouter<AppState> {
    layered(r, CompressionLayer::new())
}

/// The API's router and its OpenAPI document, built together.
pub fn routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, mut openapi) = documented().split_for_parts();
    doc::finish(&mut openapi);
    (
        router.method_not_allowed_fallback(method_not_allowed),
        openapi,
    )
}

/// `GET /api/openapi.json` and the reference page at /api/docs, with the Swagger UI files the
/// crate carries (nothing from a CDN). Its refusals are JSON errors like every answer under /api.
pub fn reference(openapi: utoipa::openapi::OpenApi) -> Router<AppState> {
    let ui: Router<AppState> = utoipa_swagger_ui::SwaggerUi::new("/api/docs")
        .url("/api/openapi.json", openapi)
        .into();
    ui.method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::map_response(json_refusal))
}

/// A refusal without a body (the Swagger UI's 404 for a file it does not have) as a JSON error.
async fn json_refusal(r: axum::response::Response) -> axum::response::Response {
    if r.status() == StatusCode::NOT_FOUND
        && !r.headers().contains_key(axum::http::header::CONTENT_TYPE)
    {
        return ApiError::new(r.status(), "not_found", messages::page_not_found()).into_response();
    }
    r
}

/// The OpenAPI document alone (what `GET /api/openapi.json` serves).
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes().1
}

/// A feed's page of a query: where it starts (`after`, an id; 0 for the start) and how many
/// (`limit`, `default` when left out, at most `max`).
pub(super) fn feed_page(
    errs: &mut crate::domain::kernel::validate::Errors,
    after: Option<&str>,
    limit: Option<&str>,
    default: i64,
    max: i64,
) -> (i64, i64) {
    use crate::domain::kernel::validate;
    let after = errs
        .take(validate::query_int("after", after, 0))
        .flatten()
        .unwrap_or(0);
    let limit = errs
        .take(validate::query_int("limit", limit, 1))
        .flatten()
        .unwrap_or(default)
        .min(max);
    (after, limit)
}

/// A query's period: `from` and `to` as instants, a date alone read in `tz` as the start of
/// that day (`from`) or its end (`to`).
pub(super) fn period(
    errs: &mut crate::domain::kernel::validate::Errors,
    from: Option<&str>,
    to: Option<&str>,
    tz: chrono_tz::Tz,
) -> (Option<i64>, Option<i64>) {
    use crate::domain::kernel::validate::{self, Edge};
    let from = errs
        .take(validate::time_bound("from", from, tz, Edge::Start))
        .flatten();
    let to = errs
        .take(validate::time_bound("to", to, tz, Edge::End))
        .flatten();
    (from, to)
}

/// A SKU named in the URL that does not exist is a missing resource (404), not a bad field.
pub(super) fn unknown_sku_is_404(what: &'static str) -> impl Fn(DomainError) -> DomainError {
    move |e| match e {
        DomainError::Invalid(v) if v.first().is_some_and(|f| f.code == "unknown_sku") => {
            DomainError::NotFound(what)
        }
        other => other,
    }
}

/// A path parameter whose rejection (a segment that does not decode) is a JSON `not_found`.
#[derive(axum::extract::FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct ApiPath<T>(pub T);

/// A query string whose rejection (`?page=abc`) is a JSON `invalid_query`.
#[derive(axum::extract::FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct ApiQuery<T>(pub T);

/// A multipart body whose rejection (another content type) is a JSON `unsupported_media_type`.
pub struct ApiMultipart(pub axum::extract::Multipart);

impl<S: Send + Sync> FromRequest<S> for ApiMultipart {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        axum::extract::Multipart::from_request(req, state)
            .await
            .map(ApiMultipart)
            .map_err(|_| {
                ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    messages::bad_multipart(),
                )
            })
    }
}

/// Every answer under /api/v1 that is not 2xx carries `{"error", "message"}`: a method the
/// route does not have is one too.
async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        messages::method_not_allowed(),
    )
}

/// JSON body whose rejections are API errors with stable codes.
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        if !json_content_type(req.headers()) {
            return Err(unsupported_media_type());
        }
        let body = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|r| ApiError::from(axum::extract::rejection::JsonRejection::from(r)))?;
        parse_json(&body).map(ApiJson)
    }
}

/// A JSON body that may be left out: no body at all reads as `T::default()`; a body that is sent
/// follows `ApiJson`'s rules.
pub struct OptionalJson<T>(pub T);

impl<T, S> FromRequest<S> for OptionalJson<T>
where
    T: serde::de::DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let typed = json_content_type(req.headers());
        let body = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|r| ApiError::from(axum::extract::rejection::JsonRejection::from(r)))?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        if !typed {
            return Err(unsupported_media_type());
        }
        parse_json(&body).map(OptionalJson)
    }
}

fn unsupported_media_type() -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        messages::bad_content_type(),
    )
}

fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if !crate::web::kit::input::clean_json(body) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_text",
            messages::invalid_text(),
        ));
    }
    // Parsed plainly first: axum's `Json` tracks the path of every value it reads so that it
    // can say where a body went wrong, which cost a twentieth of a sold-out refusal. Only a
    // body that fails is parsed again through it, for that message.
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(_) => match axum::Json::<T>::from_bytes(body) {
            Ok(axum::Json(v)) => Ok(v),
            Err(rejection) => Err(rejection.into()),
        },
    }
}

/// `application/json`, or any `application/…+json`, parameters aside (what axum's `Json` accepts).
fn json_content_type(headers: &axum::http::HeaderMap) -> bool {
    let Some(ct) = headers.get(axum::http::header::CONTENT_TYPE) else {
        return false;
    };
    if ct.as_bytes() == b"application/json" {
        return true;
    }
    let Ok(ct) = ct.to_str() else {
        return false;
    };
    let essence = ct.split(';').next().unwrap_or("").trim();
    let Some((ty, sub)) = essence.split_once('/') else {
        return false;
    };
    ty.eq_ignore_ascii_case("application")
        && (sub.eq_ignore_ascii_case("json")
            || sub.len() > 5 && sub[sub.len() - 5..].eq_ignore_ascii_case("+json"))
}

/// The merchant an API key acts for.
#[derive(Debug, Clone)]
pub struct ApiCaller {
    pub merchant_id: MerchantId,
    pub key_name: String,
    pub key_id: i64,
    /// The client address, for the audit trail.
    pub ip: String,
    /// The method and the matched route (`POST /api/v1/reservations/{order_id}/confirm`): the
    /// audit trail's source, from the router rather than a string each handler repeats.
    method: axum::http::Method,
    route: Option<axum::extract::MatchedPath>,
}

impl ApiCaller {
    /// The key acting, with the request's route as the audit source.
    pub fn actor(&self) -> Actor {
        let route = self.route.as_ref().map_or("", |r| r.as_str());
        Actor {
            label: format!("apikey:{}:{}", self.key_id, self.key_name),
            role: None,
            merchant_id: Some(self.merchant_id),
            store_id: None,
            source: format!("api {} {route}", self.method),
            ip: self.ip.clone(),
        }
    }
    pub fn scope(&self) -> Scope {
        Scope::Merchant(self.merchant_id)
    }
}

impl<S> FromRequestParts<S> for ApiCaller
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(state);
        let unauthorized = || {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                messages::bad_api_key(),
            )
        };
        let presented = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(unauthorized)?;
        let owner = apikeys::authenticate(&state.db, presented)
            .await?
            .ok_or_else(unauthorized)?;
        let rate = owner
            .rate_per_second
            .unwrap_or(i64::from(state.config.serve.api_rate_per_second));
        if let Err(wait) = state.api_limits.take(owner.key_id, rate) {
            let seconds = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).min(3600) as u32;
            metrics::counter!("sellable_api_rate_limited_total").increment(1);
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                messages::rate_limited(rate, u64::from(seconds)),
            )
            .retry_after(seconds));
        }
        Ok(ApiCaller {
            merchant_id: owner.merchant_id,
            key_name: owner.name,
            key_id: owner.key_id,
            ip: crate::web::kit::client_addr::ClientIp::of(parts).0,
            method: parts.method.clone(),
            route: parts
                .extensions
                .get::<axum::extract::MatchedPath>()
                .cloned(),
        })
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SkuJson {
    pub id: i64,
    pub code: String,
    pub name: String,
    /// Minor units; 0 with `price_set` is a free item.
    pub price: i64,
    /// Whether a price was ever set: a SKU without one is not on sale (`no_price`).
    pub price_set: bool,
    pub currency: String,
    pub unit_type: catalog::UnitType,
    pub product_id: i64,
    pub max_per_order: Option<i64>,
    pub max_per_customer: Option<i64>,
    pub low_stock_threshold: Option<i64>,
    pub stock_policy: catalog::StockPolicy,
    pub deduct: catalog::Deduct,
    /// Services: the most places one booking may take (a party); 1 for everything else.
    pub max_places: i64,
    /// Services: customers book online at least this many minutes ahead (0: until the start).
    pub min_notice_minutes: i64,
    /// Services: customers cancel or reschedule online at least this many minutes ahead.
    pub change_cutoff_minutes: i64,
    /// Goods: what one unit cost, in minor units (`null`: not set); the stock report values
    /// stock at it.
    pub unit_cost: Option<i64>,
    /// Vouchers: the visits one code is good for (a multi-visit pass); 1 for everything else.
    pub uses: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ProductJson {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub kind: catalog::ProductKind,
    pub status: catalog::ProductStatus,
    pub sale_starts_at: Option<String>,
    pub sale_ends_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub skus: Vec<SkuJson>,
}

fn product_json(d: ProductDetail, currency: &str) -> ProductJson {
    let p = d.product;
    ProductJson {
        id: p.id,
        name: p.name,
        description: p.description,
        kind: p.kind,
        status: p.status,
        sale_starts_at: p.sale_starts_at.map(ms_to_rfc3339),
        sale_ends_at: p.sale_ends_at.map(ms_to_rfc3339),
        created_at: ms_to_rfc3339(p.created_at),
        updated_at: ms_to_rfc3339(p.updated_at),
        skus: d.skus.into_iter().map(|s| sku_json(s, currency)).collect(),
    }
}

fn sku_json(s: catalog::Sku, currency: &str) -> SkuJson {
    let price_set = s.priced();
    SkuJson {
        id: s.id,
        code: s.code,
        name: s.name,
        price: s.price,
        price_set,
        currency: currency.to_string(),
        unit_type: s.unit_type,
        product_id: s.product_id,
        max_per_order: s.max_per_order,
        max_per_customer: s.max_per_customer,
        low_stock_threshold: s.low_stock_threshold,
        stock_policy: s.stock_policy,
        deduct: s.deduct,
        max_places: s.max_places,
        min_notice_minutes: s.min_notice_minutes,
        change_cutoff_minutes: s.change_cutoff_minutes,
        unit_cost: s.unit_cost,
        uses: s.uses,
    }
}

/// `PATCH /api/v1/skus/{code}`: a SKU's price, limits and stock policy. A field left out stays;
/// `null` removes a limit.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"price": 12800, "max_per_order": 2, "deduct": "on_payment"}))]
pub struct PolicyBody {
    /// Minor units; 0 is free. Once set it cannot be removed.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>)]
    price: Option<Value>,
    /// Goods only.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<catalog::StockPolicy>)]
    stock_policy: Option<Value>,
    /// Goods only.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<catalog::Deduct>)]
    deduct: Option<Value>,
    /// `null` removes the limit.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>)]
    max_per_order: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>)]
    max_per_customer: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>)]
    low_stock_threshold: Option<Value>,
    /// Services only: the most places one booking may take (1 to 1000; 1 when never set).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000)]
    max_places: Option<Value>,
    /// Services only: minutes ahead a customer must book online (0 to 43200).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 43200)]
    min_notice_minutes: Option<Value>,
    /// Services only: minutes before the start after which a customer can no longer cancel or
    /// reschedule online (staff still can).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 43200)]
    change_cutoff_minutes: Option<Value>,
    /// Goods: what one unit cost, in minor units like `price`; `null` removes it.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 0)]
    unit_cost: Option<Value>,
    /// Vouchers only: the visits one code is good for (1 to 1000), a multi-visit pass (次卡).
    /// Fixed once a code of the SKU was sold (`uses_fixed`).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000)]
    uses: Option<Value>,
}

/// A field that was sent, `null` included (a left-out field stays `None` by `default`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Sets a SKU's price, limits, stock policy or when its stock is deducted.
#[utoipa::path(patch, path = "/api/v1/skus/{code}", tag = "catalog",
    params(("code" = String, Path, description = "The SKU's code")),
    request_body = PolicyBody,
    responses(
        (status = 200, description = "The SKU as it is now", body = SkuJson),
        (status = 422, description = "`invalid_limit`, `invalid_price`, `invalid_choice`, `not_applicable`, `uses_fixed`, `required`: a field is refused (see `fields`); nothing is saved", body = doc::ErrorBody),
    ))]
async fn patch_sku(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
    ApiJson(body): ApiJson<PolicyBody>,
) -> Result<Json<SkuJson>, ApiError> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
    // Absent: unchanged; null: none; a whole number: the limit (its range is the domain's).
    let mut limit = |field: &str, v: &Option<Value>| match v {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => match v.as_i64() {
            Some(n) => Some(Some(n)),
            None => {
                errs.push(FieldError::new(
                    field,
                    "invalid_limit",
                    messages::bad_limit(0, catalog::LIMIT_MAX),
                ));
                None
            }
        },
    };
    let mut input = catalog::PolicyInput {
        max_per_order: limit("max_per_order", &body.max_per_order),
        max_per_customer: limit("max_per_customer", &body.max_per_customer),
        low_stock_threshold: limit("low_stock_threshold", &body.low_stock_threshold),
        ..Default::default()
    };
    // A choice is a string among the allowed; anything else (null included) is refused.
    let text = |v: &Value| v.as_str().unwrap_or("\u{0}").to_string();
    if let Some(v) = &body.stock_policy {
        input.stock_policy = errs
            .take(validate::choice(
                "stock_policy",
                &text(v),
                catalog::StockPolicy::NAMES,
            ))
            .and_then(catalog::StockPolicy::parse);
    }
    if let Some(v) = &body.deduct {
        input.deduct = errs
            .take(validate::choice("deduct", &text(v), catalog::Deduct::NAMES))
            .and_then(catalog::Deduct::parse);
    }
    input.price = body
        .price
        .as_ref()
        .and_then(|v| errs.take(validate::price_json("price", v)));
    input.unit_cost = match &body.unit_cost {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => errs.take(validate::price_json("unit_cost", v)).map(Some),
    };
    // Minutes are whole numbers; no "none" (0 means until the start).
    for (field, v, slot) in [
        (
            "min_notice_minutes",
            &body.min_notice_minutes,
            &mut input.min_notice_minutes,
        ),
        (
            "change_cutoff_minutes",
            &body.change_cutoff_minutes,
            &mut input.change_cutoff_minutes,
        ),
    ] {
        if let Some(v) = v {
            match v.as_i64() {
                Some(n) => *slot = Some(n),
                None => errs.push(FieldError::new(
                    field,
                    "invalid_limit",
                    messages::bad_minutes(catalog::NOTICE_MAX_MINUTES),
                )),
            }
        }
    }
    // A party size is a whole number; it has no "none" (null is refused).
    if let Some(v) = &body.max_places {
        match v.as_i64() {
            Some(n) => input.max_places = Some(n),
            None => errs.push(FieldError::new(
                "max_places",
                "invalid_limit",
                messages::bad_max_places(crate::domain::slots::CAPACITY_MAX),
            )),
        }
    }
    if let Some(v) = &body.uses {
        match v.as_i64() {
            Some(n) => input.uses = Some(n),
            None => errs.push(FieldError::new(
                "uses",
                "invalid_limit",
                messages::bad_limit(1, catalog::USES_MAX),
            )),
        }
    }
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let sku = catalog::set_policy(&state.db, &caller.actor(), &code, &input).await?;
    let merchant = tenants::merchant(&state.db, caller.merchant_id).await?;
    Ok(Json(sku_json(sku, &merchant.currency)))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct SkuBody {
    #[serde(default)]
    code: String,
    #[serde(default)]
    name: String,
    /// Minor units; left out or `null`: not priced yet, so not on sale.
    #[serde(default)]
    #[schema(value_type = Option<i64>)]
    price: Value,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"name": "Longjing 250 g", "kind": "goods", "status": "ONLINE",
    "skus": [{"code": "TEA-250G", "name": "250 g tin", "price": 12800}]}))]
pub struct CreateProductBody {
    #[serde(default)]
    name: String,
    #[serde(default)]
    description: String,
    /// `goods`, `voucher` or `service`; never changes.
    #[serde(default)]
    #[schema(value_type = catalog::ProductKind)]
    kind: String,
    #[serde(default = "default_status")]
    #[schema(value_type = catalog::ProductStatus)]
    status: String,
    /// RFC 3339.
    sale_starts_at: Option<String>,
    sale_ends_at: Option<String>,
    #[serde(default)]
    skus: Vec<SkuBody>,
}

fn default_status() -> String {
    "DRAFT".into()
}

/// Creates a product with its SKUs.
#[utoipa::path(post, path = "/api/v1/products", tag = "catalog",
    request_body = CreateProductBody,
    responses(
        (status = 201, description = "The product made", body = ProductJson),
        (status = 409, description = "`duplicate_sku_code`: a SKU code is taken", body = doc::ErrorBody),
        (status = 422, description = "`required`, `too_long`, `invalid_choice`, `invalid_price`, `invalid_time`, `invalid_sale_window`, `invalid_code`, `invalid_characters`, `duplicate_sku_code`, `too_many`: a field is refused (see `fields`)", body = doc::ErrorBody),
    ))]
async fn create_product(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiJson(body): ApiJson<CreateProductBody>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = validate::Errors::default();
    let starts = errs
        .take(validate::rfc3339_opt(
            "sale_starts_at",
            body.sale_starts_at.as_deref(),
        ))
        .flatten();
    let ends = errs
        .take(validate::rfc3339_opt(
            "sale_ends_at",
            body.sale_ends_at.as_deref(),
        ))
        .flatten();
    let skus: Vec<SkuInput> = body
        .skus
        .iter()
        .enumerate()
        .map(|(i, s)| SkuInput {
            code: s.code.clone(),
            name: s.name.clone(),
            // Left out (or null): no price yet, so not on sale until one is set.
            price: match &s.price {
                Value::Null => None,
                v => Some(
                    errs.take(validate::price_json(&catalog::sku_field(i, "price"), v))
                        .unwrap_or(0),
                ),
            },
        })
        .collect();
    let input = ProductInput {
        name: body.name,
        description: body.description,
        kind: body.kind,
        status: body.status,
        sale_starts_at: starts,
        sale_ends_at: ends,
        skus,
    };
    if !errs.is_empty() {
        return Err(catalog::refused(&input, errs).into());
    }
    let detail = catalog::create_product(&state.db, &caller.actor(), input).await?;
    let merchant = tenants::merchant(&state.db, caller.merchant_id).await?;
    Ok((
        StatusCode::CREATED,
        Json(product_json(detail, &merchant.currency)),
    ))
}

/// A product with its SKUs.
#[utoipa::path(get, path = "/api/v1/products/{id}", tag = "catalog",
    params(("id" = i64, Path, description = "The product's id")),
    responses((status = 200, description = "The product", body = ProductJson)))]
async fn get_product(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
) -> Result<Json<ProductJson>, ApiError> {
    let detail = catalog::get_product(&state.db, caller.scope(), id).await?;
    let merchant = tenants::merchant(&state.db, caller.merchant_id).await?;
    Ok(Json(product_json(detail, &merchant.currency)))
}

/// Distinguishes a missing field (leave as is) from an explicit null (clear it).
fn double_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// A field left out stays as it is; `null` clears a sale bound.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"status": "OFFLINE"}))]
pub struct PatchProductBody {
    name: Option<String>,
    description: Option<String>,
    #[schema(value_type = Option<catalog::ProductStatus>)]
    status: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    sale_starts_at: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>)]
    sale_ends_at: Option<Option<String>>,
}

/// Changes a product's name, description, status or sale window.
#[utoipa::path(patch, path = "/api/v1/products/{id}", tag = "catalog",
    params(("id" = i64, Path, description = "The product's id")),
    request_body = PatchProductBody,
    responses(
        (status = 200, description = "The product as it is now", body = ProductJson),
        (status = 422, description = "`nothing_to_change`, `required`, `too_long`, `invalid_choice`, `invalid_time`, `invalid_sale_window`, `invalid_characters`: a field is refused", body = doc::ErrorBody),
    ))]
async fn patch_product(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiId(id): ApiId,
    ApiJson(body): ApiJson<PatchProductBody>,
) -> Result<Json<ProductJson>, ApiError> {
    if body.name.is_none()
        && body.description.is_none()
        && body.status.is_none()
        && body.sale_starts_at.is_none()
        && body.sale_ends_at.is_none()
    {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "nothing_to_change",
            messages::nothing_to_change(),
        ));
    }
    let mut errs = validate::Errors::default();
    let mut time = |field: &str, v: Option<Option<String>>| match v {
        None => None,
        Some(None) => Some(None),
        Some(Some(s)) => errs.take(validate::rfc3339_opt(field, Some(&s))),
    };
    let patch = ProductPatch {
        name: body.name,
        description: body.description,
        status: body.status,
        sale_starts_at: time("sale_starts_at", body.sale_starts_at),
        sale_ends_at: time("sale_ends_at", body.sale_ends_at),
    };
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let detail = catalog::update_product(&state.db, &caller.actor(), id, patch).await?;
    let merchant = tenants::merchant(&state.db, caller.merchant_id).await?;
    Ok(Json(product_json(detail, &merchant.currency)))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SkuWithProductJson {
    #[serde(flatten)]
    sku: SkuJson,
    product: ProductSummaryJson,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ProductSummaryJson {
    id: i64,
    name: String,
    kind: catalog::ProductKind,
    status: catalog::ProductStatus,
}

/// A SKU with its product.
#[utoipa::path(get, path = "/api/v1/skus/{code}", tag = "catalog",
    params(("code" = String, Path, description = "The SKU's code")),
    responses((status = 200, description = "The SKU", body = SkuWithProductJson)))]
async fn get_sku(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiPath(code): ApiPath<String>,
) -> Result<Json<SkuWithProductJson>, ApiError> {
    let sku = catalog::sku_by_code(&state.db, caller.merchant_id, &code).await?;
    let detail = catalog::get_product(&state.db, caller.scope(), sku.product_id).await?;
    let merchant = tenants::merchant(&state.db, caller.merchant_id).await?;
    let p = detail.product;
    Ok(Json(SkuWithProductJson {
        sku: sku_json(sku, &merchant.currency),
        product: ProductSummaryJson {
            id: p.id,
            name: p.name,
            kind: p.kind,
            status: p.status,
        },
    }))
}
