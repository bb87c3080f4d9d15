//! The sentences that code chooses (templates ask the catalogue themselves). Each function names a
//! message of `locales/<lang>/*.ftl` and fills its placeholders; the text, its plurals and its
//! word order live in the catalogue, in the language of the request being answered
//! ([`crate::i18n::current`]): the CLI, jobs and logs get English.

use crate::domain::catalog::UnitType;
use crate::domain::reconcile::FindingKind;
use crate::domain::sellable::ReasonCode;
use crate::i18n::Arg;

/// The message `key` in the current request's language.
fn tr(key: &str, args: &[(&'static str, Arg)]) -> String {
    crate::i18n::current().t_args(key, args)
}

/// A store's time zone as people name it in the page's language ("中国时间", "China Time"),
/// not its IANA id.
fn zone(iana: &str) -> Arg {
    Arg::from(crate::i18n::current().zone(iana))
}

/// An id, a line or a run number: passed as text, so the catalogue's digit grouping leaves it as
/// written (finding #1234, not #1,234).
fn as_id(n: i64) -> Arg {
    Arg::from(n.to_string())
}

pub fn required(field: &str) -> String {
    tr("m-required", &[("field", field.into())])
}
pub fn too_long(field: &str, max: usize) -> String {
    tr(
        "m-too-long",
        &[("field", field.into()), ("max", max.into())],
    )
}
pub fn bad_slug(field: &str) -> String {
    tr("m-bad-slug", &[("field", field.into())])
}
pub fn bad_code() -> String {
    tr("m-bad-code", &[])
}
pub fn bad_email() -> String {
    tr("m-bad-email", &[])
}
pub fn bad_choice(field: &str, allowed: &[&str]) -> String {
    tr(
        "m-bad-choice",
        &[
            ("field", field.into()),
            ("allowed", allowed.join(", ").into()),
        ],
    )
}
/// A missing page on the booking pages, said to the customer who followed the link.
pub fn public_not_found(thing: &str) -> String {
    tr("m-public-not-found", &[("thing", thing.into())])
}
pub fn bad_language() -> String {
    tr("m-bad-language", &[])
}
pub fn bad_text(field: &str) -> String {
    tr("m-bad-text", &[("field", field.into())])
}
pub fn storefront_saved() -> String {
    tr("m-storefront-saved", &[])
}
pub fn bad_price() -> String {
    tr("m-bad-price", &[])
}
pub fn negative_price() -> String {
    tr("m-negative-price", &[])
}
/// The limit is said in major units, as the price is typed.
pub fn price_too_large(max_minor: i64) -> String {
    tr("m-price-too-large", &[("max", (max_minor / 100).into())])
}
pub fn bad_time(field: &str) -> String {
    tr("m-bad-time", &[("field", field.into())])
}
pub fn one_cursor() -> String {
    tr("m-one-cursor", &[])
}
pub fn bad_time_or_date(field: &str) -> String {
    tr("m-bad-time-or-date", &[("field", field.into())])
}
pub fn sale_window_order() -> String {
    tr("m-sale-window-order", &[])
}
pub fn bad_timezone(tz: &str) -> String {
    tr("m-bad-timezone", &[("tz", tz.into())])
}
pub fn bad_currency() -> String {
    tr("m-bad-currency", &[])
}
pub fn password_too_short(min: usize) -> String {
    tr("m-password-too-short", &[("min", min.into())])
}
pub fn duplicate_sku_code(code: &str) -> String {
    tr("m-duplicate-sku-code", &[("code", code.into())])
}
pub fn duplicate_sku_in_request(code: &str) -> String {
    tr("m-duplicate-sku-in-request", &[("code", code.into())])
}
pub fn no_skus() -> String {
    tr("m-no-skus", &[])
}
pub fn too_many_skus(max: usize) -> String {
    tr("m-too-many-skus", &[("max", max.into())])
}
pub fn duplicate_slug(what: &str, slug: &str) -> String {
    tr(
        "m-duplicate-slug",
        &[("what", what.into()), ("slug", slug.into())],
    )
}
pub fn duplicate_email(email: &str) -> String {
    tr("m-duplicate-email", &[("email", email.into())])
}
pub fn role_scope(role: &str) -> String {
    match role {
        "operator" => tr("m-role-scope-operator", &[]),
        "merchant_admin" => tr("m-role-scope-merchant-admin", &[]),
        _ => tr("m-role-scope-store-staff", &[]),
    }
}
/// "No such store." `what` is the domain's name of the thing (`DomainError::NotFound`); the
/// catalogue selects its word by the name's kebab-case form.
pub fn not_found(what: &str) -> String {
    let thing = what.to_lowercase().replace(' ', "-");
    tr(
        "m-not-found",
        &[("what", what.into()), ("thing", thing.into())],
    )
}
pub fn forbidden() -> String {
    tr("m-forbidden", &[])
}
pub fn bad_login() -> String {
    tr("m-bad-login", &[])
}
pub fn login_too_fast(seconds: u64) -> String {
    tr("m-login-too-fast", &[("seconds", seconds.into())])
}
pub fn password_too_common() -> String {
    tr("m-password-too-common", &[])
}
pub fn login_throttled(minutes: i64) -> String {
    tr("m-login-throttled", &[("minutes", minutes.into())])
}
pub fn reserved_key(prefix: &str) -> String {
    tr("m-reserved-key", &[("prefix", prefix.into())])
}
pub fn bad_country(code: &str) -> String {
    tr("m-bad-country", &[("code", code.into())])
}
pub fn busy(seconds: u64) -> String {
    tr("m-busy", &[("seconds", seconds.into())])
}
pub fn signed_out() -> String {
    tr("m-signed-out", &[])
}
pub fn product_created(name: &str) -> String {
    tr("m-product-created", &[("name", name.into())])
}
pub fn product_saved(name: &str) -> String {
    tr("m-product-saved", &[("name", name.into())])
}
pub fn status_changed(name: &str, status: &str) -> String {
    tr(
        "m-status-changed",
        &[("name", name.into()), ("status", status.into())],
    )
}
pub fn sku_added(code: &str) -> String {
    tr("m-sku-added", &[("code", code.into())])
}
pub fn sku_saved(code: &str) -> String {
    tr("m-sku-saved", &[("code", code.into())])
}
pub fn key_revoked(name: &str) -> String {
    tr("m-key-revoked", &[("name", name.into())])
}
pub fn internal_error() -> String {
    tr("m-internal-error", &[])
}
pub fn csrf_rejected() -> String {
    tr("m-csrf-rejected", &[])
}
pub fn page_not_found() -> String {
    tr("m-page-not-found", &[])
}
pub fn body_too_large() -> String {
    tr("m-body-too-large", &[])
}
pub fn bad_json(detail: &str) -> String {
    tr("m-bad-json", &[("detail", detail.into())])
}
pub fn bad_multipart() -> String {
    tr("m-bad-multipart", &[])
}
pub fn method_not_allowed() -> String {
    tr("m-method-not-allowed", &[])
}
pub fn invalid_text() -> String {
    tr("m-invalid-text", &[])
}
pub fn too_many_webhooks(limit: i64) -> String {
    tr("m-too-many-webhooks", &[("n", limit.into())])
}
pub fn too_many_waits(limit: i64) -> String {
    tr("m-too-many-waits", &[("n", limit.into())])
}
pub fn text_part_too_long(kb: usize) -> String {
    tr("m-text-part-too-long", &[("kb", kb.into())])
}
pub fn bad_content_type() -> String {
    tr("m-bad-content-type", &[])
}
pub fn bad_api_key() -> String {
    tr("m-bad-api-key", &[])
}
pub fn nothing_to_change() -> String {
    tr("m-nothing-to-change", &[])
}

pub fn unknown_sku(code: &str) -> String {
    tr("m-unknown-sku", &[("code", code.into())])
}
/// A SKU used where another unit is expected.
pub fn wrong_unit(code: &str, actual: UnitType, wanted: UnitType) -> String {
    use UnitType::{Code, Quantity, Slot};
    let key = match (wanted, actual) {
        (Quantity, Code) => "m-wrong-unit-stock-code",
        (Quantity, Slot) => "m-wrong-unit-stock-slot",
        (Quantity, Quantity) => "m-wrong-unit-stock-stock",
        (Slot, Code) => "m-wrong-unit-slot-code",
        (Slot, Quantity) => "m-wrong-unit-slot-stock",
        (Slot, Slot) => "m-wrong-unit-slot-slot",
        (Code, Quantity) => "m-wrong-unit-code-stock",
        (Code, Slot) => "m-wrong-unit-code-slot",
        (Code, Code) => "m-wrong-unit-code-code",
    };
    tr(key, &[("code", code.into())])
}
pub fn unknown_warehouse(slug: &str) -> String {
    if slug.is_empty() {
        tr("m-choose-warehouse", &[])
    } else {
        tr("m-unknown-warehouse", &[("slug", slug.into())])
    }
}
pub fn transfer_same_warehouse() -> String {
    tr("m-transfer-same-warehouse", &[])
}
pub fn bad_qty(max: i64) -> String {
    tr("m-bad-qty", &[("max", max.into())])
}
pub fn bad_count(max: i64) -> String {
    tr("m-bad-count", &[("max", max.into())])
}
pub fn not_enough_available(kind: &str, wanted: i64, available: i64) -> String {
    tr(
        "m-not-enough-available",
        &[
            ("kind", kind.into()),
            ("wanted", wanted.into()),
            ("available", available.into()),
        ],
    )
}
pub fn not_enough_frozen(wanted: i64, frozen: i64) -> String {
    tr(
        "m-not-enough-frozen",
        &[("wanted", wanted.into()), ("frozen", frozen.into())],
    )
}
pub fn count_stale(expected: i64, now: i64) -> String {
    tr(
        "m-count-stale",
        &[("expected", expected.into()), ("now", now.into())],
    )
}
pub fn count_below_held(counted: i64, locked: i64, frozen: i64) -> String {
    tr(
        "m-count-below-held",
        &[
            ("counted", counted.into()),
            ("locked", locked.into()),
            ("frozen", frozen.into()),
        ],
    )
}
pub fn idempotency_conflict(key: &str) -> String {
    tr("m-idempotency-conflict", &[("key", key.into())])
}
/// What a stock adjustment did, as the merchant says it ("2 units written off from Main
/// warehouse: cracked in transit."). `kind` is the adjustment's kind (RECEIVE, WRITE_OFF, COUNT,
/// FREEZE, UNFREEZE, TRANSFER); `qty` the units moved (for a count, the units counted); `why` the
/// note, else the reason's name, else empty.
pub fn stock_adjusted(kind: &str, qty: i64, warehouse: &str, to: &str, why: &str) -> String {
    let why = if why.trim().is_empty() {
        String::new()
    } else {
        tr("m-stock-why", &[("why", why.trim().into())])
    };
    tr(
        "m-stock-adjusted",
        &[
            ("kind", kind.into()),
            ("qty", qty.into()),
            ("warehouse", warehouse.into()),
            ("to", to.into()),
            ("why", why.into()),
        ],
    )
}
pub fn sku_frozen(sku: &str, finding: i64) -> String {
    tr(
        "m-sku-frozen",
        &[("sku", sku.into()), ("finding", as_id(finding))],
    )
}

pub fn slot_frozen(finding: i64) -> String {
    tr("m-slot-frozen", &[("finding", as_id(finding))])
}

// ---- why a SKU can or cannot be sold (domain::sellable) -------------------------------------

/// The heading of a reason or warning, as the "Not sellable" page groups SKUs under it.
pub fn reason_title(code: ReasonCode) -> String {
    tr(&format!("reason-{}", code.as_str()), &[])
}
/// The link to the page that fixes a reason.
pub fn fix_label(code: ReasonCode) -> String {
    use ReasonCode::*;
    let key = match code {
        ProductDraft | ProductOffline | SaleNotStarted | SaleEnded => "fix-product",
        NoPrice => "fix-price",
        SkuFrozen | SlotsFrozen => "fix-finding",
        NoStockRecord | OutOfStock | LowStock => "fix-stock",
        NoSchedule | NoSlotsInWindow | NextSlotBeyondWindow | FewSlots => "fix-schedule",
        AllSlotsClosed => "fix-closures",
        AllSlotsFull => "fix-week",
        NoBatch | NoCodesAvailable | CodesRunningOut => "fix-codes",
        BatchFailed | BatchPartial | BatchImporting => "fix-batch",
        GateDegraded => "fix-open",
        StockUnlimited => "fix-stock",
    };
    tr(key, &[])
}
/// What a sellable SKU can promise now.
pub fn quantity_label(kind: &str, quantity: i64, next_slot: Option<(&str, &str)>) -> String {
    match (kind, next_slot) {
        ("service", Some((at, tz))) => tr(
            "m-quantity-service",
            &[("n", quantity.into()), ("at", at.into()), ("tz", zone(tz))],
        ),
        ("voucher", _) => tr("m-quantity-voucher", &[("n", quantity.into())]),
        _ => tr("m-quantity-goods", &[("n", quantity.into())]),
    }
}
pub fn why_product_draft() -> String {
    tr("m-why-product-draft", &[])
}
pub fn why_product_offline() -> String {
    tr("m-why-product-offline", &[])
}
pub fn why_sale_not_started(at_local: &str, tz: &str) -> String {
    tr(
        "m-why-sale-not-started",
        &[("at_local", at_local.into()), ("tz", zone(tz))],
    )
}
pub fn why_sale_ended(at_local: &str, tz: &str) -> String {
    tr(
        "m-why-sale-ended",
        &[("at_local", at_local.into()), ("tz", zone(tz))],
    )
}
pub fn why_stock_unlimited() -> String {
    tr("m-why-stock-unlimited", &[])
}
pub fn quantity_unlimited() -> String {
    tr("m-quantity-unlimited", &[])
}
pub fn why_no_price() -> String {
    tr("m-why-no-price", &[])
}
pub fn why_sku_frozen(finding: i64, explain: &str) -> String {
    tr(
        "m-why-sku-frozen",
        &[("finding", as_id(finding)), ("explain", explain.into())],
    )
}
pub fn why_no_stock_record() -> String {
    tr("m-why-no-stock-record", &[])
}
/// The language's separator of a list ("a, b" / "a、b").
fn list(parts: &[String]) -> String {
    parts.join(&tr("m-list-sep", &[]))
}
/// The language's separator of clauses ("a; b" / "a；b").
fn clauses(parts: &[String]) -> String {
    parts.join(&tr("m-clause-sep", &[]))
}
/// "None available of 55 received: 12 held by unpaid orders, 3 frozen (quality check), 40 sold."
pub fn why_out_of_stock(
    total: i64,
    locked: i64,
    frozen: i64,
    frozen_reason: Option<&str>,
    sold: i64,
) -> String {
    let mut parts = Vec::new();
    if locked > 0 {
        parts.push(tr("m-oos-locked", &[("n", locked.into())]));
    }
    if frozen > 0 {
        parts.push(match frozen_reason.filter(|r| !r.is_empty()) {
            Some(r) => tr(
                "m-oos-frozen-because",
                &[("n", frozen.into()), ("reason", r.into())],
            ),
            None => tr("m-oos-frozen", &[("n", frozen.into())]),
        });
    }
    if sold > 0 {
        parts.push(tr("m-oos-sold", &[("n", sold.into())]));
    }
    if parts.is_empty() {
        tr("m-oos-none", &[("total", total.into())])
    } else {
        tr(
            "m-oos",
            &[("total", total.into()), ("parts", list(&parts).into())],
        )
    }
}
pub fn why_no_schedule() -> String {
    tr("m-why-no-schedule", &[])
}
pub fn why_no_slots_in_window(days: i64) -> String {
    tr("m-why-no-slots-in-window", &[("days", days.into())])
}
/// One closure (or a reason slots were closed for), as listed in a reason.
pub fn closure_item(reason: &str, staff: Option<&str>, period: &str) -> String {
    let (r, p) = (("reason", reason.into()), ("period", period.into()));
    match (staff.filter(|s| !s.is_empty()), period.is_empty()) {
        (Some(s), false) => tr("m-closure-item-staff-period", &[r, ("staff", s.into()), p]),
        (Some(s), true) => tr("m-closure-item-staff", &[r, ("staff", s.into())]),
        (None, false) => tr("m-closure-item-period", &[r, p]),
        (None, true) => reason.to_string(),
    }
}
pub fn why_all_slots_closed(n: i64, days: i64, closures: &[String]) -> String {
    tr(
        "m-why-all-slots-closed",
        &[
            ("n", n.into()),
            ("days", days.into()),
            ("why", clauses(closures).into()),
        ],
    )
}
pub fn why_all_slots_full(full: i64, closed: i64, days: i64) -> String {
    tr(
        "m-why-all-slots-full",
        &[
            ("full", full.into()),
            ("closed", closed.into()),
            ("days", days.into()),
        ],
    )
}
pub fn why_slots_frozen(n: i64, findings: &[i64]) -> String {
    let ids: Vec<String> = findings.iter().map(|f| format!("#{f}")).collect();
    tr(
        "m-why-slots-frozen",
        &[("n", n.into()), ("ids", ids.join(", ").into())],
    )
}
pub fn why_next_slot_beyond_window(at_local: &str, tz: &str, days: i64) -> String {
    tr(
        "m-why-next-slot-beyond-window",
        &[
            ("at_local", at_local.into()),
            ("tz", zone(tz)),
            ("days", days.into()),
        ],
    )
}
pub fn why_no_batch() -> String {
    tr("m-why-no-batch", &[])
}
fn first_errors(errors: &[(i64, String)]) -> String {
    let lines: Vec<String> = errors
        .iter()
        .map(|(line, reason)| {
            tr(
                "m-error-line",
                &[("line", as_id(*line)), ("reason", reason.into())],
            )
        })
        .collect();
    clauses(&lines)
}
/// A batch's outcome, with its first bad lines when it has any, as one sentence.
fn with_first_errors(text: String, errors: &[(i64, String)]) -> String {
    let text = if errors.is_empty() {
        text
    } else {
        tr(
            "m-with-first-errors",
            &[
                ("text", text.into()),
                ("errors", first_errors(errors).into()),
            ],
        )
    };
    tr("m-sentence", &[("text", text.into())])
}
pub fn why_batch_failed(name: &str, failure: &str, errors: &[(i64, String)]) -> String {
    let text = if failure.is_empty() {
        tr("m-batch-failed", &[("name", name.into())])
    } else {
        tr(
            "m-batch-failed-because",
            &[("name", name.into()), ("failure", failure.into())],
        )
    };
    with_first_errors(text, errors)
}
pub fn why_batch_partial(name: &str, rejected: i64, errors: &[(i64, String)]) -> String {
    let text = tr(
        "m-batch-partial",
        &[("name", name.into()), ("rejected", rejected.into())],
    );
    with_first_errors(text, errors)
}
pub fn why_batch_importing(name: &str, progress: i64) -> String {
    tr(
        "m-why-batch-importing",
        &[("name", name.into()), ("progress", progress.into())],
    )
}
/// Counts by status, e.g. "40 sold, 5 locked, 3 expired".
pub fn why_no_codes_available(counts: &[(String, i64)]) -> String {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(status, n)| {
            tr(
                "m-codes-by-status",
                &[("status", status.into()), ("n", (*n).into())],
            )
        })
        .collect();
    if parts.is_empty() {
        tr("m-no-codes", &[])
    } else {
        tr("m-no-codes-because", &[("parts", list(&parts).into())])
    }
}
pub fn why_gate_degraded() -> String {
    tr("m-why-gate-degraded", &[])
}
pub fn warn_low_stock(available: i64, threshold: i64) -> String {
    tr(
        "m-warn-low-stock",
        &[
            ("available", available.into()),
            ("threshold", threshold.into()),
        ],
    )
}
pub fn warn_few_slots(open: i64, threshold: i64) -> String {
    tr(
        "m-warn-few-slots",
        &[("open", open.into()), ("threshold", threshold.into())],
    )
}
pub fn warn_codes_running_out(available: i64, days_left: i64, per_day: &str) -> String {
    tr(
        "m-warn-codes-running-out",
        &[
            ("available", available.into()),
            ("days_left", days_left.into()),
            ("per_day", per_day.into()),
        ],
    )
}
pub fn bad_whole_number(field: &str) -> String {
    tr("m-bad-whole-number", &[("field", field.into())])
}
/// Refusal of a reservation or booking of something that is not on sale.
pub fn not_on_sale(sku: &str, why: &str) -> String {
    tr("m-not-on-sale", &[("sku", sku.into()), ("why", why.into())])
}

pub fn insufficient_stock(sku: &str, wanted: i64, available: i64) -> String {
    tr(
        "m-insufficient-stock",
        &[
            ("sku", sku.into()),
            ("wanted", wanted.into()),
            ("available", available.into()),
        ],
    )
}
pub fn order_conflict(order_id: &str) -> String {
    tr("m-order-conflict", &[("order_id", order_id.into())])
}
pub fn reservation_expired(order_id: &str) -> String {
    tr("m-reservation-expired", &[("order_id", order_id.into())])
}
pub fn reservation_released(order_id: &str, status: &str) -> String {
    tr(
        "m-reservation-released",
        &[("order_id", order_id.into()), ("status", status.into())],
    )
}
pub fn bad_payment_ref(max: usize) -> String {
    tr("m-bad-payment-ref", &[("max", max.into())])
}
pub fn payment_conflict(order_id: &str, stored: &str) -> String {
    tr(
        "m-payment-conflict",
        &[
            ("order_id", order_id.into()),
            ("payment_ref", stored.into()),
        ],
    )
}
pub fn paid_not_in_stock(order_id: &str, exception_id: i64) -> String {
    tr(
        "m-paid-not-in-stock",
        &[
            ("order_id", order_id.into()),
            ("id", exception_id.to_string().into()),
        ],
    )
}
pub fn paid_not_held(order_id: &str, exception_id: i64) -> String {
    tr(
        "m-paid-not-held",
        &[
            ("order_id", order_id.into()),
            ("id", exception_id.to_string().into()),
        ],
    )
}
pub fn hold_released(order_id: &str) -> String {
    tr("m-hold-released", &[("order_id", order_id.into())])
}
pub fn hold_not_released(order_id: &str) -> String {
    tr("m-hold-not-released", &[("order_id", order_id.into())])
}
pub fn exception_settled(id: i64, how: &str) -> String {
    tr(
        "m-exception-settled",
        &[("id", id.to_string().into()), ("how", how.into())],
    )
}
pub fn goods_only_policy() -> String {
    tr("m-goods-only-policy", &[])
}
pub fn bad_max_places(max: i64) -> String {
    tr("m-bad-max-places", &[("max", max.into())])
}
pub fn services_only_rule() -> String {
    tr("m-services-only-rule", &[])
}
pub fn bad_minutes(max: i64) -> String {
    tr("m-bad-minutes", &[("max", max.into())])
}
pub fn too_late_to_book(minutes: i64) -> String {
    tr("m-too-late-to-book", &[("minutes", minutes.into())])
}
pub fn change_closed() -> String {
    tr("m-change-closed", &[])
}
pub fn services_only_party() -> String {
    tr("m-services-only-party", &[])
}
pub fn unknown_event_type(word: &str) -> String {
    tr("m-unknown-event-type", &[("word", word.into())])
}
pub fn bad_rate(min: i64, max: i64) -> String {
    tr("m-bad-rate", &[("min", min.into()), ("max", max.into())])
}
pub fn rate_limited(rate: i64, seconds: u64) -> String {
    tr(
        "m-rate-limited",
        &[("rate", rate.into()), ("seconds", seconds.into())],
    )
}
pub fn key_rate_set(name: &str, rate: &str) -> String {
    tr(
        "m-key-rate-set",
        &[("name", name.into()), ("rate", rate.into())],
    )
}
pub fn bad_limit(min: i64, max: i64) -> String {
    tr("m-bad-limit", &[("min", min.into()), ("max", max.into())])
}
pub fn limit_exceeded(sku: &str, limit: i64, already: i64, per_customer: bool) -> String {
    tr(
        "m-limit-exceeded",
        &[
            ("sku", sku.into()),
            ("limit", limit.into()),
            ("already", already.into()),
            (
                "per",
                if per_customer { "customer" } else { "order" }.into(),
            ),
        ],
    )
}
pub fn bad_customer_id(max: usize) -> String {
    tr("m-bad-customer-id", &[("max", max.into())])
}
pub fn bad_party_size(max: i64) -> String {
    tr("m-bad-party-size", &[("max", max.into())])
}
pub fn slot_not_of_sku(slot_id: i64, sku: &str) -> String {
    tr(
        "m-slot-not-of-sku",
        &[("slot", slot_id.to_string().into()), ("sku", sku.into())],
    )
}
pub fn unknown_slot(slot_id: i64) -> String {
    tr("m-unknown-slot", &[("slot", slot_id.to_string().into())])
}
pub fn code_unknown() -> String {
    tr("m-code-unknown", &[])
}
pub fn code_already_redeemed() -> String {
    tr("m-code-already-redeemed", &[])
}
pub fn code_voided() -> String {
    tr("m-code-voided", &[])
}
pub fn code_not_sold(status: &str) -> String {
    tr("m-code-not-sold", &[("status", status.into())])
}
pub fn bad_exception_status() -> String {
    tr("m-bad-exception-status", &[])
}
pub fn bad_resolution() -> String {
    tr("m-bad-resolution", &[])
}
pub fn exception_resolved(id: i64) -> String {
    tr("m-exception-resolved", &[("id", id.to_string().into())])
}
pub fn still_short(order_id: &str) -> String {
    tr("m-still-short", &[("order_id", order_id.into())])
}
pub fn order_changed(order_id: &str) -> String {
    tr("m-order-changed", &[("order_id", order_id.into())])
}
pub fn reservation_confirmed(order_id: &str) -> String {
    tr("m-reservation-confirmed", &[("order_id", order_id.into())])
}
pub fn duplicate_line(sku: &str) -> String {
    tr("m-duplicate-line", &[("sku", sku.into())])
}
pub fn too_many_lines(max: usize) -> String {
    tr("m-too-many-lines", &[("max", max.into())])
}
pub fn bad_ttl(max: i64) -> String {
    tr("m-bad-ttl", &[("max", max.into())])
}
pub fn bad_order_id(max: usize) -> String {
    tr("m-bad-order-id", &[("max", max.into())])
}
pub fn order_not_confirmed(order_id: &str) -> String {
    tr("m-order-not-confirmed", &[("order_id", order_id.into())])
}
pub fn sku_not_in_order(sku: &str, order_id: &str) -> String {
    tr(
        "m-sku-not-in-order",
        &[("order_id", order_id.into()), ("sku", sku.into())],
    )
}
pub fn return_exceeds_order(remaining: i64) -> String {
    tr("m-return-exceeds-order", &[("remaining", remaining.into())])
}
pub fn return_conflict(return_id: &str) -> String {
    tr("m-return-conflict", &[("return_id", return_id.into())])
}

pub fn duplicate_staff(name: &str) -> String {
    tr("m-duplicate-staff", &[("name", name.into())])
}
pub fn bad_clock(field: &str) -> String {
    tr("m-bad-clock", &[("field", field.into())])
}
pub fn bad_capacity(max: i64) -> String {
    tr("m-bad-capacity", &[("max", max.into())])
}
pub fn unknown_store(slug: &str) -> String {
    tr("m-unknown-store", &[("slug", slug.into())])
}
pub fn no_store() -> String {
    tr("m-no-store", &[])
}
pub fn store_required() -> String {
    tr("m-store-required", &[])
}
pub fn too_many_rules(max: usize) -> String {
    tr("m-too-many-rules", &[("max", max.into())])
}
pub fn closes_before_opens() -> String {
    tr("m-closes-before-opens", &[])
}
pub fn bad_slot_length() -> String {
    tr("m-bad-slot-length", &[])
}
pub fn bad_weekday(day: &str) -> String {
    tr("m-bad-weekday", &[("day", day.into())])
}
pub fn unknown_staff(name: &str) -> String {
    tr("m-unknown-staff", &[("name", name.into())])
}
pub fn removed_from_schedule() -> String {
    tr("m-removed-from-schedule", &[])
}
pub fn capacity_below_booked(capacity: i64, booked: i64) -> String {
    tr(
        "m-capacity-below-booked",
        &[("capacity", capacity.into()), ("booked", booked.into())],
    )
}
pub fn ends_before_starts() -> String {
    tr("m-ends-before-starts", &[])
}
pub fn slot_in_past() -> String {
    tr("m-slot-in-past", &[])
}
pub fn slot_too_long() -> String {
    tr("m-slot-too-long", &[])
}
pub fn closure_too_long() -> String {
    tr("m-closure-too-long", &[])
}
pub fn slot_overlap(staff: &str) -> String {
    tr("m-slot-overlap", &[("staff", staff.into())])
}
pub fn slot_exists() -> String {
    tr("m-slot-exists", &[])
}
pub fn bad_phone() -> String {
    tr("m-bad-phone", &[])
}
pub fn booking_key_conflict() -> String {
    tr("m-booking-key-conflict", &[])
}
pub fn too_many_bookings_phone(limit: i64) -> String {
    tr("m-too-many-bookings-phone", &[("limit", limit.into())])
}
pub fn too_many_bookings_address(limit: i64) -> String {
    tr("m-too-many-bookings-address", &[("limit", limit.into())])
}
pub fn already_booked_public() -> String {
    tr("m-already-booked-public", &[])
}
pub fn form_used() -> String {
    tr("m-form-used", &[])
}
pub fn bad_customer_name() -> String {
    tr("m-bad-customer-name", &[])
}
pub fn slot_not_available(note: &str) -> String {
    if note.is_empty() {
        tr("m-slot-not-available", &[])
    } else {
        tr("m-slot-not-available-note", &[("note", note.into())])
    }
}
pub fn slot_closed(reason: &str) -> String {
    if reason.is_empty() {
        tr("m-slot-closed", &[])
    } else {
        tr("m-slot-closed-because", &[("reason", reason.into())])
    }
}
pub fn slot_started() -> String {
    tr("m-slot-started", &[])
}
pub fn slot_full() -> String {
    tr("m-slot-full", &[])
}
pub fn not_enough_places(remaining: i64) -> String {
    tr("m-not-enough-places", &[("remaining", remaining.into())])
}
pub fn already_booked(reference: &str) -> String {
    tr("m-already-booked", &[("reference", reference.into())])
}
pub fn cancel_after_start() -> String {
    tr("m-cancel-after-start", &[])
}
pub fn booking_cancelled(reference: &str) -> String {
    tr("m-booking-cancelled", &[("reference", reference.into())])
}
pub fn overlapping_rule(weekday: &str, first: &str, second: &str) -> String {
    tr(
        "m-overlapping-rule",
        &[
            (
                "weekday",
                tr("rules-weekday", &[("day", weekday.into())]).into(),
            ),
            ("first", first.into()),
            ("second", second.into()),
        ],
    )
}
pub fn waitlist_slot_closed() -> String {
    tr("m-waitlist-slot-closed", &[])
}
pub fn waitlist_has_room(remaining: i64) -> String {
    tr("m-waitlist-has-room", &[("remaining", remaining.into())])
}
pub fn already_waiting(position: i64) -> String {
    tr("m-already-waiting", &[("position", position.into())])
}
pub fn waitlist_offer_ended() -> String {
    tr("m-waitlist-offer-ended", &[])
}
pub fn waitlist_offer_accepted() -> String {
    tr("m-waitlist-offer-accepted", &[])
}
pub fn bad_waitlist_hold(max: i64) -> String {
    tr("m-bad-waitlist-hold", &[("max", max.into())])
}
pub fn booking_rescheduled() -> String {
    tr("m-booking-rescheduled", &[])
}
pub fn closure_in_past() -> String {
    tr("m-closure-in-past", &[])
}
pub fn move_other_service() -> String {
    tr("m-move-other-service", &[])
}
pub fn booking_not_movable() -> String {
    tr("m-booking-not-movable", &[])
}
pub fn move_after_start() -> String {
    tr("m-move-after-start", &[])
}
pub fn booking_changed() -> String {
    tr("m-booking-changed", &[])
}
pub fn booking_moved(reference: &str, when: &str) -> String {
    tr(
        "m-booking-moved",
        &[("reference", reference.into()), ("when", when.into())],
    )
}
pub fn slot_not_started() -> String {
    tr("m-slot-not-started", &[])
}

pub fn too_many_requests() -> String {
    tr("m-too-many-requests", &[])
}
pub fn booking_confirmed(reference: &str) -> String {
    tr("m-booking-confirmed", &[("reference", reference.into())])
}
pub fn booking_cancelled_by_customer() -> String {
    tr("m-booking-cancelled-by-customer", &[])
}

/// `status` is a code's state (AVAILABLE, SOLD…), said by the catalogue's word for it (English
/// keeps the name, as the codes pages show it).
pub fn code_move_refused(action: &str, status: &str) -> String {
    let status = tr("codes-status", &[("status", status.into())]);
    tr(
        "m-code-move-refused",
        &[("action", action.into()), ("status", status.into())],
    )
}
pub fn code_not_returnable(code: &str) -> String {
    tr("m-code-not-returnable", &[("code", code.into())])
}
pub fn import_abandoned() -> String {
    tr("m-import-abandoned", &[])
}
pub fn import_empty() -> String {
    tr("m-import-empty", &[])
}
pub fn import_nothing_valid() -> String {
    tr("m-import-nothing-valid", &[])
}
pub fn import_all_or_nothing(rejected: i64) -> String {
    tr("m-import-all-or-nothing", &[("rejected", rejected.into())])
}
pub fn already_downloaded() -> String {
    tr("m-already-downloaded", &[])
}
pub fn bad_import_mode(mode: &str) -> String {
    tr("m-bad-import-mode", &[("mode", mode.into())])
}
pub fn line_invalid_characters() -> String {
    tr("m-line-invalid-characters", &[])
}
pub fn line_too_long(chars: usize, limit: usize) -> String {
    tr(
        "m-line-too-long",
        &[("chars", chars.into()), ("limit", limit.into())],
    )
}
pub fn line_too_long_unread(cap: usize) -> String {
    tr("m-line-too-long-unread", &[("cap", cap.into())])
}
pub fn line_not_utf8() -> String {
    tr("m-line-not-utf8", &[])
}
pub fn line_empty() -> String {
    tr("m-line-empty", &[])
}
pub fn line_bad_expiry() -> String {
    tr("m-line-bad-expiry", &[])
}
pub fn line_expired() -> String {
    tr("m-line-expired", &[])
}
/// A code with a character outside its batch's rule: where (1-based) and the rule's name.
pub fn line_not_allowed(at: usize, rule: &str) -> String {
    tr(
        "m-line-not-allowed",
        &[
            ("at", (at as i64).into()),
            ("rule", allowed_rule(rule).into()),
        ],
    )
}
/// A batch's allowed-character rule, as people read it.
pub fn allowed_rule(rule: &str) -> String {
    tr("m-allowed-rule", &[("rule", rule.into())])
}
pub fn bad_allowed(v: &str) -> String {
    tr("m-bad-allowed", &[("value", v.into())])
}
pub fn line_bad_csv() -> String {
    tr("m-line-bad-csv", &[])
}
pub fn csv_needs_code_column() -> String {
    tr("m-csv-needs-code-column", &[])
}
pub fn line_duplicate(first: i64) -> String {
    tr("m-line-duplicate", &[("first", as_id(first))])
}
pub fn line_already_imported(batch: i64) -> String {
    tr("m-line-already-imported", &[("batch", as_id(batch))])
}
pub fn upload_too_large(mb: u64) -> String {
    tr("m-upload-too-large", &[("mb", mb.into())])
}
pub fn upload_too_many_lines(max: u64) -> String {
    tr("m-upload-too-many-lines", &[("max", max.into())])
}
pub fn upload_broken(detail: &str) -> String {
    tr("m-upload-broken", &[("detail", detail.into())])
}
pub fn upload_missing_file() -> String {
    tr("m-upload-missing-file", &[])
}
pub fn bad_generate_count(max: i64) -> String {
    tr("m-bad-generate-count", &[("max", max.into())])
}
pub fn bad_code_length(min: i64, max: i64) -> String {
    tr(
        "m-bad-code-length",
        &[("min", min.into()), ("max", max.into())],
    )
}
pub fn batch_started(id: i64) -> String {
    tr("m-batch-started", &[("id", as_id(id))])
}
pub fn codes_moved(action: &str, n: u64) -> String {
    tr(
        "m-codes-moved",
        &[("n", n.into()), ("action", action.into())],
    )
}

// Back office: codes.
pub fn upload_not_multipart() -> String {
    tr("m-upload-not-multipart", &[])
}
pub fn generated_batch_name(count: i64) -> String {
    tr("m-generated-batch-name", &[("count", count.into())])
}
pub fn lookup_code_required() -> String {
    tr("m-lookup-code-required", &[])
}
pub fn batch_moved(action: &str, n: u64) -> String {
    let key = match action {
        "lock" => "m-batch-moved-lock",
        "unlock" => "m-batch-moved-unlock",
        "invalidate" => "m-batch-moved-invalidate",
        other => return codes_moved(other, n),
    };
    tr(key, &[("n", n.into())])
}
pub fn code_moved(action: &str, id: i64) -> String {
    let key = match action {
        "lock" => "m-code-moved-lock",
        "unlock" => "m-code-moved-unlock",
        "invalidate" => "m-code-moved-invalidate",
        _ => "m-code-moved-other",
    };
    tr(key, &[("id", as_id(id)), ("action", action.into())])
}

pub fn warehouse_not_applicable(code: &str) -> String {
    tr("m-warehouse-not-applicable", &[("code", code.into())])
}

pub fn code_keys_created(file: &str) -> String {
    tr("m-code-keys-created", &[("file", file.into())])
}

/// Field labels, shown in messages and beside form fields.
pub fn label(field: &str) -> String {
    const KNOWN: &[&str] = &[
        "name",
        "kind",
        "status",
        "code",
        "sku_name",
        "price",
        "sale_starts_at",
        "sale_ends_at",
        "slug",
        "email",
        "role",
        "timezone",
        "currency",
        "password",
        "merchant",
        "store",
        "priority",
        "qty",
        "reason",
        "warehouse",
        "to_warehouse",
        "idempotency_key",
        "order_id",
        "return_id",
        "phone",
        "customer_name",
        "capacity",
        "starts_at",
        "ends_at",
        "opens",
        "closes",
        "expires_at",
        "address",
        "description",
        "language",
        "stock_policy",
        "deduct",
        "url",
        "events",
        "date",
        "note",
        "release_on",
        "display_name",
        "confirm",
        "current",
        "new",
        "mode",
        "file",
    ];
    if KNOWN.contains(&field) {
        tr(&format!("field-{field}"), &[])
    } else {
        tr("field-other", &[])
    }
}

// Back office: slots, bookings, closures and schedules.
pub fn slot_capacity_saved(capacity: i64) -> String {
    tr("m-slot-capacity-saved", &[("capacity", capacity.into())])
}
pub fn slot_closed_by_staff(to_contact: usize) -> String {
    tr("m-slot-closed-by-staff", &[("n", to_contact.into())])
}
pub fn slot_reopened() -> String {
    tr("m-slot-reopened", &[])
}
pub fn booking_cancelled_by_staff(reference: &str) -> String {
    tr(
        "m-booking-cancelled-by-staff",
        &[("reference", reference.into())],
    )
}
pub fn booking_marked(reference: &str, status: &str) -> String {
    tr(
        "m-booking-marked",
        &[("reference", reference.into()), ("status", status.into())],
    )
}
pub fn booking_not_active(reference: &str, status: &str) -> String {
    tr(
        "m-booking-not-active",
        &[("reference", reference.into()), ("status", status.into())],
    )
}
pub fn closure_created(slots_closed: usize, to_contact: usize) -> String {
    tr(
        "m-closure-created",
        &[
            ("slots", slots_closed.into()),
            ("contact", to_contact.into()),
        ],
    )
}
pub fn closure_bookings_cancelled(n: usize) -> String {
    tr("m-closure-bookings-cancelled", &[("n", n.into())])
}
pub fn closure_reopened() -> String {
    tr("m-closure-reopened", &[])
}
pub fn staff_added(name: &str) -> String {
    tr("m-staff-added", &[("name", name.into())])
}

// ---- reconciliation ----------------------------------------------------------------------

/// What a finding means, for an operator.
pub fn finding(kind: FindingKind, subject: &str, expected: &str, found: &str) -> String {
    let what = tr(&format!("finding-{}", kind.as_str()), &[]);
    tr(
        "m-finding",
        &[
            ("what", what.into()),
            ("subject", subject.into()),
            ("expected", finding_value(expected).into()),
            ("found", finding_value(found).into()),
        ],
    )
}

/// A finding's expected or found value as people read it. Reconciliation stores these values in
/// a few fixed English forms ("total 20 locked 0 sold 0 frozen 0", "booked 3", "a RESERVED
/// order", "2 codes", a code's state, what a Redis repair shifted), which are read back here and
/// said in the current language (English says them as stored). Any other value is shown as it is.
pub fn finding_value(raw: &str) -> String {
    let words: Vec<&str> = raw.split_whitespace().collect();
    let num = |w: &str| w.parse::<i64>().ok().map(Arg::from);
    let nums = |w: &str| -> Option<Vec<Arg>> { w.split('/').map(num).collect() };
    let said = match words.as_slice() {
        ["total", total, "locked", locked, "sold", sold, "frozen", frozen] => (|| {
            let args = [
                ("total", num(total)?),
                ("locked", num(locked)?),
                ("sold", num(sold)?),
                ("frozen", num(frozen)?),
            ];
            Some(tr("m-value-buckets", &args))
        })(),
        ["locked", n] => num(n).map(|n| tr("m-value-locked", &[("n", n)])),
        ["booked", n] => num(n).map(|n| tr("m-value-booked", &[("n", n)])),
        ["booked", "≤", n] => num(n).map(|n| tr("m-value-booked-at-most", &[("n", n)])),
        ["a", status @ ("RESERVED" | "CONFIRMED"), "order"] => {
            Some(tr("m-value-order", &[("status", (*status).into())]))
        }
        [n, "codes"] => num(n).map(|n| tr("m-value-codes", &[("n", n)])),
        ["Redis", "=", "SQL"] => Some(tr("m-value-redis-equals-sql", &[])),
        ["available/locked/sold", "shifted", "by", shifts] => match nums(shifts).as_deref() {
            Some([a, l, s]) => Some(tr(
                "m-value-stock-shift",
                &[
                    ("available", a.clone()),
                    ("locked", l.clone()),
                    ("sold", s.clone()),
                ],
            )),
            _ => None,
        },
        ["remaining", "shifted", "by", delta, "status", status] => {
            delta.strip_suffix(',').and_then(num).map(|d| {
                tr(
                    "m-value-slot-shift",
                    &[("delta", d), ("status", (*status).into())],
                )
            })
        }
        [stale, "stale", "ids", "removed,", missing, "missing", "ids", "added"] => {
            match (num(stale), num(missing)) {
                (Some(stale), Some(missing)) => Some(tr(
                    "m-value-pool-fix",
                    &[("stale", stale), ("missing", missing)],
                )),
                _ => None,
            }
        }
        [status] if crate::domain::codes::CodeStatus::parse(status).is_some() => {
            Some(tr("codes-status", &[("status", (*status).into())]))
        }
        _ => None,
    };
    said.unwrap_or_else(|| raw.to_string())
}

pub fn drift_repaired() -> String {
    tr("m-drift-repaired", &[])
}

/// Who can make a fix the reader cannot: `operator`, `store` or `admin` (of `merchant`).
pub fn fixed_by(who: &str, merchant: &str) -> String {
    tr(
        "m-fixed-by",
        &[("who", who.into()), ("merchant", merchant.into())],
    )
}

pub fn count_repaired() -> String {
    tr("m-count-repaired", &[])
}

pub fn holds_repaired() -> String {
    tr("m-holds-repaired", &[])
}

pub fn accept_needs_locked(held: i64, locked: i64) -> String {
    tr(
        "m-accept-needs-locked",
        &[("held", held.into()), ("locked", locked.into())],
    )
}

pub fn correction_impossible(target: &str) -> String {
    tr(
        "m-correction-impossible",
        &[("target", finding_value(target).into())],
    )
}

pub fn unexplained_change(finding: i64) -> String {
    tr("m-unexplained-change", &[("finding", as_id(finding))])
}

pub fn finding_not_correctable() -> String {
    tr("m-finding-not-correctable", &[])
}

pub fn identity_still_broken(expected: &str, found: &str) -> String {
    tr(
        "m-identity-still-broken",
        &[
            ("expected", finding_value(expected).into()),
            ("found", finding_value(found).into()),
        ],
    )
}

// ---- audit log ------------------------------------------------------------------------------

/// What a schedule save did, as the audit log stores it (English, in this form) and reads it back.
pub fn audit_schedule_applied(
    created: usize,
    removed: usize,
    changed: usize,
    kept: usize,
    edited: usize,
) -> String {
    tr(
        "m-audit-schedule-applied",
        &[
            ("created", created.into()),
            ("removed", removed.into()),
            ("changed", changed.into()),
            ("kept", kept.into()),
            ("edited", edited.into()),
        ],
    )
}
pub fn audit_schedule_rules(rules: usize, store: &str) -> String {
    tr(
        "m-audit-schedule-rules",
        &[("rules", rules.into()), ("store", store.into())],
    )
}

// ---- reconciliation pages -----------------------------------------------------------------

pub fn reconcile_run_done(run: i64, checked: i64, broken: usize, repaired: usize) -> String {
    tr(
        "m-reconcile-run-done",
        &[
            ("run", as_id(run)),
            ("checked", checked.into()),
            ("broken", broken.into()),
            ("repaired", repaired.into()),
        ],
    )
}

pub fn reconcile_run_failed(run: i64, error: &str) -> String {
    tr(
        "m-reconcile-run-failed",
        &[("run", as_id(run)), ("error", error.into())],
    )
}

pub fn finding_stock_restored(finding: i64) -> String {
    tr("m-finding-stock-restored", &[("finding", as_id(finding))])
}

pub fn finding_stock_accepted(finding: i64) -> String {
    tr("m-finding-stock-accepted", &[("finding", as_id(finding))])
}

pub fn finding_slot_corrected(finding: i64) -> String {
    tr("m-finding-slot-corrected", &[("finding", as_id(finding))])
}

pub fn finding_unfrozen(finding: i64, what: &str, still_frozen_by: Option<i64>) -> String {
    if !matches!(what, "slot" | "sku") {
        return tr("m-finding-resolved", &[("finding", as_id(finding))]);
    }
    let args = [("finding", as_id(finding)), ("what", what.into())];
    match still_frozen_by {
        Some(other) => tr(
            "m-finding-unfrozen-still",
            &[args[0].clone(), args[1].clone(), ("other", as_id(other))],
        ),
        None => tr("m-finding-unfrozen", &args),
    }
}

// Webhooks.
pub fn webhook_bad_url(max: usize) -> String {
    tr("m-webhook-bad-url", &[("max", (max as i64).into())])
}
pub fn webhook_private_address(host: &str) -> String {
    tr("m-webhook-private-address", &[("host", host.into())])
}
pub fn webhook_no_credentials() -> String {
    tr("m-webhook-no-credentials", &[])
}
pub fn webhook_unresolvable(host: &str) -> String {
    tr("m-webhook-unresolvable", &[("host", host.into())])
}
pub fn webhook_events_required() -> String {
    tr("m-webhook-events-required", &[])
}
pub fn webhook_bad_overlap(max: i64) -> String {
    tr("m-webhook-bad-overlap", &[("max", max.into())])
}
pub fn webhook_paused(url: &str) -> String {
    tr("m-webhook-paused", &[("url", url.into())])
}
pub fn webhook_resumed(url: &str) -> String {
    tr("m-webhook-resumed", &[("url", url.into())])
}
pub fn webhook_deleted(url: &str) -> String {
    tr("m-webhook-deleted", &[("url", url.into())])
}
pub fn webhook_exists(id: i64) -> String {
    tr("m-webhook-exists", &[("id", id.to_string().into())])
}
pub fn webhook_redelivered(event: i64) -> String {
    tr(
        "m-webhook-redelivered",
        &[("event", event.to_string().into())],
    )
}

pub fn override_in_past() -> String {
    tr("m-override-in-past", &[])
}
pub fn too_many_overrides(max: i64) -> String {
    tr("m-too-many-overrides", &[("max", max.into())])
}
pub fn one_off_added(when: &str) -> String {
    tr("m-one-off-added", &[("when", when.into())])
}

pub fn customer_reached(reference: &str) -> String {
    tr("m-customer-reached", &[("reference", reference.into())])
}
pub fn customer_not_reached(reference: &str) -> String {
    tr("m-customer-not-reached", &[("reference", reference.into())])
}

pub fn closure_who_required() -> String {
    tr("m-closure-who-required", &[])
}

pub fn override_closed_with_hours() -> String {
    tr("m-override-closed-with-hours", &[])
}
pub fn choose_a_date() -> String {
    tr("m-choose-a-date", &[])
}
pub fn copy_to_nothing() -> String {
    tr("m-copy-to-nothing", &[])
}

pub fn bad_auto_no_show(max: i64) -> String {
    tr("m-bad-auto-no-show", &[("max", max.into())])
}

pub fn bad_buffer(max: i64) -> String {
    tr("m-bad-buffer", &[("max", max.into())])
}

pub fn call_note_saved(reference: &str) -> String {
    tr("m-call-note-saved", &[("reference", reference.into())])
}
pub fn last_day_before_first() -> String {
    tr("m-last-day-before-first", &[])
}

pub fn whole_day(day: &str) -> String {
    tr("m-whole-day", &[("day", day.to_string().into())])
}
pub fn whole_days(from: &str, until: &str) -> String {
    tr(
        "m-whole-days",
        &[
            ("from", from.to_string().into()),
            ("until", until.to_string().into()),
        ],
    )
}
pub fn bad_reason_code() -> String {
    tr("m-bad-reason-code", &[])
}
/// `code` does not fit the adjustment; `fits` are the codes that do, named as the API and CSV
/// take them.
pub fn reason_code_mismatch(code: &str, fits: &str) -> String {
    tr(
        "m-reason-code-mismatch",
        &[
            (
                "code",
                crate::i18n::current()
                    .t1("stock-reason-code", "code", code)
                    .into(),
            ),
            ("fits", fits.into()),
        ],
    )
}
pub fn booking_held() -> String {
    tr("m-booking-held", &[])
}
pub fn release_on_in_past() -> String {
    tr("m-release-on-in-past", &[])
}
pub fn display_name_taken(name: &str) -> String {
    tr("m-display-name-taken", &[("name", name.into())])
}
pub fn staff_archived_meanwhile(name: &str) -> String {
    tr("m-staff-archived-meanwhile", &[("name", name.into())])
}
pub fn staff_still_scheduled(name: &str, rules: i64, slots: i64) -> String {
    tr(
        "m-staff-still-scheduled",
        &[
            ("name", name.into()),
            ("rules", rules.into()),
            ("slots", slots.into()),
        ],
    )
}
pub fn staff_renamed(name: &str) -> String {
    tr("m-staff-renamed", &[("name", name.into())])
}
pub fn staff_archived(name: &str) -> String {
    tr("m-staff-archived", &[("name", name.into())])
}
pub fn staff_restored(name: &str) -> String {
    tr("m-staff-restored", &[("name", name.into())])
}
pub fn bad_priority(max: i64) -> String {
    tr("m-bad-priority", &[("max", max.into())])
}
pub fn place_saved(name: &str) -> String {
    tr("m-place-saved", &[("name", name.into())])
}
pub fn bad_unit_cost() -> String {
    tr("m-bad-unit-cost", &[])
}
pub fn sheet_choose_file() -> String {
    tr("m-sheet-choose-file", &[])
}
pub fn hold_holds_only(remaining: i64) -> String {
    tr("m-hold-holds-only", &[("n", remaining.into())])
}
pub fn hold_gone() -> String {
    tr("m-hold-gone", &[])
}
pub fn hold_too_small(qty: i64) -> String {
    tr("m-hold-too-small", &[("qty", qty.into())])
}

// Stock sheets (CSV of receipts or counts).
pub fn sheet_too_large(mb: usize) -> String {
    tr("m-sheet-too-large", &[("mb", mb.into())])
}
pub fn sheet_empty() -> String {
    tr("m-sheet-empty", &[])
}
pub fn sheet_too_many_lines(max: usize) -> String {
    tr("m-sheet-too-many-lines", &[("max", max.into())])
}
pub fn sheet_missing_columns(columns: &str) -> String {
    tr("m-sheet-missing-columns", &[("columns", columns.into())])
}
pub fn sheet_no_header() -> String {
    tr("m-sheet-no-header", &[])
}
pub fn sheet_bad_line() -> String {
    tr("m-sheet-bad-line", &[])
}
pub fn sheet_bad_characters() -> String {
    tr("m-sheet-bad-characters", &[])
}
pub fn sheet_counted_twice(first: u64) -> String {
    tr("m-sheet-counted-twice", &[("first", (first as i64).into())])
}
pub fn sheet_no_good_lines() -> String {
    tr("m-sheet-no-good-lines", &[])
}
pub fn sheet_has_bad_lines(n: usize) -> String {
    tr("m-sheet-has-bad-lines", &[("n", n.into())])
}
pub fn sheet_line_refused(line: u64, why: &str) -> String {
    tr(
        "m-sheet-line-refused",
        &[("line", (line as i64).into()), ("why", why.into())],
    )
}
pub fn sheet_applied(lines: i64) -> String {
    tr("m-sheet-applied", &[("n", lines.into())])
}
pub fn sheet_lines_refused_late(lines: &str) -> String {
    tr("m-sheet-lines-refused-late", &[("lines", lines.into())])
}
pub fn sheet_already_applied(id: i64) -> String {
    tr("m-sheet-already-applied", &[("id", id.into())])
}

// People and sign-ins.
pub fn already_invited(email: &str) -> String {
    tr("m-already-invited", &[("email", email.into())])
}
pub fn invitation_invalid() -> String {
    tr("m-invitation-invalid", &[])
}
pub fn password_mismatch() -> String {
    tr("m-password-mismatch", &[])
}
pub fn cannot_deactivate_self() -> String {
    tr("m-cannot-deactivate-self", &[])
}
pub fn wrong_password() -> String {
    tr("m-wrong-password", &[])
}
pub fn invited(email: &str) -> String {
    tr("m-invited", &[("email", email.into())])
}
pub fn invitation_revoked(email: &str) -> String {
    tr("m-invitation-revoked", &[("email", email.into())])
}
pub fn person_deactivated(who: &str) -> String {
    tr("m-person-deactivated", &[("who", who.into())])
}
pub fn person_reactivated(who: &str) -> String {
    tr("m-person-reactivated", &[("who", who.into())])
}
pub fn own_password_changed() -> String {
    tr("m-own-password-changed", &[])
}
pub fn own_name_saved() -> String {
    tr("m-own-name-saved", &[])
}
pub fn welcome(name: &str) -> String {
    tr("m-welcome", &[("name", name.into())])
}

#[cfg(test)]
mod tests {
    use super::{code_move_refused, finding_value, status_changed, stock_adjusted};
    use crate::i18n::{scope, Lang};

    #[tokio::test]
    async fn ids_lines_and_run_numbers_are_written_as_they_are_and_counts_grouped() {
        for lang in Lang::ALL {
            let said = scope(lang, async {
                [
                    super::sku_frozen("TEA", 1234),
                    super::line_duplicate(1234),
                    super::line_already_imported(5678),
                    super::code_moved("lock", 91011),
                    super::reconcile_run_done(1234, 5000, 0, 0),
                    super::finding_unfrozen(1234, "sku", Some(5678)),
                ]
            })
            .await;
            for s in &said {
                assert!(!s.contains("1,234") && !s.contains("5,678"), "{lang}: {s}");
            }
            assert!(said[3].contains("91011"), "{lang}: {}", said[3]);
            assert!(said[4].contains("5,000"), "{lang}: {}", said[4]);
        }
    }

    #[tokio::test]
    async fn states_and_kinds_inside_sentences_are_said_in_chinese_and_named_in_english() {
        assert_eq!(
            stock_adjusted("RECEIVE", 12, "Main", "", ""),
            "12 units received into Main."
        );
        assert_eq!(
            stock_adjusted("WRITE_OFF", 1, "Main", "", "cracked in transit"),
            "1 unit written off from Main: cracked in transit."
        );
        assert_eq!(
            code_move_refused("lock", "LOCKED"),
            "Cannot lock a code that is LOCKED."
        );
        assert_eq!(status_changed("Tea", "ONLINE"), "\"Tea\" is now ONLINE.");
        let zh = scope(Lang::ZhCn, async {
            [
                stock_adjusted("RECEIVE", 12, "主仓", "", ""),
                stock_adjusted("WRITE_OFF", 1_000, "主仓", "", "罐身压痕"),
                code_move_refused("lock", "LOCKED"),
                code_move_refused("invalidate", "SOLD"),
                status_changed("Tea", "OFFLINE"),
            ]
        })
        .await;
        assert_eq!(
            zh,
            [
                "已入库 12 件到主仓。",
                "已从主仓报损 1,000 件（罐身压痕）。",
                "无法对状态为“已锁定”的券码执行锁定。",
                "无法对状态为“已售”的券码执行作废。",
                "“Tea”已下架。",
            ]
        );
    }

    #[tokio::test]
    async fn finding_values_are_said_in_the_readers_language_and_english_as_stored() {
        let stored = [
            "total 20 locked 0 sold 3 frozen 1",
            "locked 2",
            "booked 3",
            "booked ≤ 4",
            "a RESERVED order",
            "a CONFIRMED order",
            "2 codes",
            "SOLD",
            "Redis = SQL",
            "available/locked/sold shifted by -1/0/1",
            "remaining shifted by 2, status CLOSED",
            "3 stale ids removed, 0 missing ids added",
        ];
        for raw in stored {
            assert_eq!(finding_value(raw), raw, "English says it as stored");
        }
        let zh: Vec<String> = scope(Lang::ZhCn, async {
            stored.iter().map(|raw| finding_value(raw)).collect()
        })
        .await;
        assert_eq!(zh[0], "总数 20，锁定 0，已售 3，冻结 1");
        assert_eq!(zh[4], "由未付款订单占用");
        assert_eq!(zh[6], "2 个券码");
        assert_eq!(zh[7], "已售");
        assert_eq!(zh[9], "可售/锁定/已售偏差 -1/0/1");
        assert_eq!(zh[10], "剩余名额偏差 2，状态：停约");
        for (raw, said) in stored.iter().zip(&zh) {
            assert!(
                !said.chars().any(|c| c.is_ascii_lowercase()) || said.contains("Redis"),
                "{raw} → {said}"
            );
        }
        // Anything else, like a value of an older form, is shown as it is.
        for raw in ["something else", "total x locked 0 sold 0 frozen 0", ""] {
            let said = scope(Lang::ZhCn, async { finding_value(raw) }).await;
            assert_eq!(said, raw);
        }
    }
}
