//! The API's OpenAPI 3.1 document. Each route's operation is written beside its handler
//! (`#[utoipa::path]`) and registered with it (`routes!`); this module holds what they share: the
//! document's head, the bearer key, the error body, and the refusals every route can give.
//!
//! A refusal's description names its `error` codes in backticks (`` `insufficient_stock` ``):
//! the test suite checks every error it sees against them, so a code a route gives is a code its
//! operation lists.

use utoipa::openapi::path::Operation;
use utoipa::openapi::response::Response;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{Content, OpenApi, Ref, RefOr};
use utoipa::ToSchema;

use crate::domain::FieldError;

/// Every answer under /api/v1 that is not 2xx: a stable `error` code, a sentence in the
/// caller's language, the invalid fields of a 422, and, for some codes, facts at the top level
/// (`insufficient_stock` adds `sku` and `available`, or `exception_id` and `shortfall` when a
/// payment found the stock gone). Documented here rather than derived from the serialiser, which writes the
/// parts straight to the socket.
#[derive(ToSchema)]
#[schema(
    as = Error,
    example = json!({"error": "insufficient_stock", "message": "Only 2 of TEA-250G left.",
                     "sku": "TEA-250G", "available": 2})
)]
pub struct ErrorBody {
    /// The stable code to branch on.
    pub error: String,
    /// What went wrong, in the caller's language.
    pub message: String,
    /// A 422's invalid fields, each with its own code; `error` is the first one's.
    pub fields: Option<Vec<FieldError>>,
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "sellable",
        description = "Stock, slots and codes for a merchant's order system. Every call carries \
`Authorization: Bearer <key>` (a key made with `sellable apikey create`) and acts for the key's \
merchant. Times are RFC 3339; where a query takes a time bound, a date (`2026-12-01`) is the start \
(`from`) or end (`to`) of that day in the store's timezone. Amounts are minor units (fen). Every \
refusal is JSON with a stable `error` code.",
        license(name = "Proprietary")
    ),
    components(schemas(ErrorBody, FieldError)),
    tags(
        (name = "catalog", description = "Products and SKUs"),
        (name = "stock", description = "Goods: stock per warehouse, its ledger and adjustments"),
        (name = "orders", description = "Reservations (holds), payment, release, returns, exceptions"),
        (name = "codes", description = "Vouchers and card keys: batches, moves, redemption"),
        (name = "slots", description = "Services: staff, schedules, slots, closures"),
        (name = "bookings", description = "Bookings of places in slots"),
        (name = "sellable", description = "Why a SKU can or cannot be sold"),
        (name = "audit", description = "Who changed what"),
        (name = "events", description = "Change events: the feed"),
        (name = "webhooks", description = "Signed webhooks: each event POSTed to the merchant's \
endpoints with `Sellable-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<body>\")>` \
(one `v1=` per secret while a rotated-out one still signs) and `Sellable-Event-Id`; retried with \
backoff for three days; at least once, so deduplicate by the event id"),
    )
)]
struct Head;

/// The document before the routes add their operations.
pub fn base() -> OpenApi {
    <Head as utoipa::OpenApi>::openapi()
}

/// The bearer key every operation needs, and the refusals any route can give: added to each
/// operation so that no route has to repeat them.
pub fn finish(doc: &mut OpenApi) {
    let components = doc.components.get_or_insert_with(Default::default);
    components.security_schemes.insert(
        "api_key".into(),
        RefOr::T(SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer))),
    );
    doc.security = Some(vec![SecurityRequirement::new(
        "api_key",
        Vec::<String>::new(),
    )]);
    for item in doc.paths.paths.values_mut() {
        for op in [
            &mut item.get,
            &mut item.post,
            &mut item.patch,
            &mut item.put,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        {
            common_refusals(op);
        }
    }
}

fn common_refusals(op: &mut Operation) {
    let has_body = op.request_body.is_some();
    let has_query = op.parameters.iter().flatten().any(|p| match p {
        RefOr::T(p) => matches!(p.parameter_in, utoipa::openapi::path::ParameterIn::Query),
        RefOr::Ref(_) => false,
    });
    let mut bad_request = vec!["invalid_text"];
    if has_body {
        bad_request.push("invalid_json");
    }
    if has_query {
        bad_request.push("invalid_query");
    }
    let mut add = |status: &str, codes: &[&str], why: &str| {
        add_refusal(op, status, codes, why);
    };
    add(
        "400",
        &bad_request,
        "A control character (NUL among them) in the path, query or body, or a body that is not JSON.",
    );
    add(
        "401",
        &["unauthorized"],
        "No key, or a key that is unknown or revoked.",
    );
    add(
        "429",
        &["rate_limited"],
        "The key made more requests a second than its rate; try again after `Retry-After` seconds.",
    );
    add(
        "404",
        &["not_found"],
        "Nothing of this merchant's at this address.",
    );
    add(
        "503",
        &["busy"],
        "The database is busy; try again after `Retry-After` seconds.",
    );
    if has_body {
        add(
            "413",
            &["payload_too_large"],
            "The body is larger than the limit.",
        );
        add(
            "415",
            &["unsupported_media_type"],
            "The body is not `application/json`.",
        );
    }
}

/// Adds a refusal with these codes to an operation, or its codes to one it already lists.
fn add_refusal(op: &mut Operation, status: &str, codes: &[&str], why: &str) {
    let listed = codes
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match op.responses.responses.get_mut(status) {
        Some(RefOr::T(r)) => {
            let missing: Vec<String> = codes
                .iter()
                .filter(|c| !r.description.contains(&format!("`{c}`")))
                .map(|c| format!("`{c}`"))
                .collect();
            if !missing.is_empty() {
                r.description = format!("{} Also {}: {why}", r.description, missing.join(", "));
            }
            if r.content.is_empty() {
                r.content.insert("application/json".into(), error_content());
            }
        }
        Some(RefOr::Ref(_)) => {}
        None => {
            let mut r = Response::new(format!("{listed}: {why}"));
            r.content.insert("application/json".into(), error_content());
            op.responses.responses.insert(status.into(), RefOr::T(r));
        }
    }
}

fn error_content() -> RefOr<Content> {
    RefOr::T(Content::new(Some(Ref::from_schema_name("Error"))))
}

/// The error codes an operation's answer with this status lists (the backticked words of its
/// description).
pub fn listed_codes(description: &str) -> Vec<&str> {
    description
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_codes_are_the_backticked_snake_case_words() {
        assert_eq!(
            listed_codes(
                "`insufficient_stock` (with `sku`), `order_state`: refused; `Retry-After`"
            ),
            ["insufficient_stock", "sku", "order_state"]
        );
    }
}
