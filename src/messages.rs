//! The sentences that code chooses (templates ask the catalogue themselves). Each function names a
//! message of `locales/<lang>/*.ftl` and fills its placeholders; the text, its plurals and its
//! word order live in the catalogue, in the language of the request being answered
//! ([`crate::i18n::current`]): the CLI, jobs and logs get English.

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

/// One function per message: its parameters, its catalogue key, and what fills each placeholder
/// (a name alone passes the parameter of that name; `name: expr` computes it). What a message
/// says lives in the catalogue; this table says only which message and with what.
macro_rules! messages {
    ($(
        $(#[$meta:meta])*
        $name:ident ( $($param:ident : $ty:ty),* $(,)? ) = $key:literal
            $({ $($arg:ident $(: $value:expr)?),* $(,)? })? ;
    )*) => {
        $(
            $(#[$meta])*
            pub fn $name($($param: $ty),*) -> String {
                tr($key, &[$($((stringify!($arg), messages!(@value $arg $($value)?))),*)?])
            }
        )*
    };
    (@value $arg:ident) => {
        Arg::from($arg)
    };
    (@value $arg:ident $value:expr) => {
        Arg::from($value)
    };
}

messages! {
    required(field: &str) = "m-required" { field };
    too_long(field: &str, max: usize) = "m-too-long" { field, max };
    bad_slug(field: &str) = "m-bad-slug" { field };
    bad_code() = "m-bad-code";
    bad_email() = "m-bad-email";
    bad_choice(field: &str, allowed: &[&str]) = "m-bad-choice" { field, allowed: allowed.join(", ") };
    /// A missing page on the booking pages, said to the customer who followed the link.
    public_not_found(thing: &str) = "m-public-not-found" { thing };
    bad_language() = "m-bad-language";
    bad_text(field: &str) = "m-bad-text" { field };
    storefront_saved() = "m-storefront-saved";
    bad_price() = "m-bad-price";
    negative_price() = "m-negative-price";
    /// The limit is said in major units, as the price is typed.
    price_too_large(max_minor: i64) = "m-price-too-large" { max: (max_minor / 100) };
    bad_time(field: &str) = "m-bad-time" { field };
    one_cursor() = "m-one-cursor";
    bad_time_or_date(field: &str) = "m-bad-time-or-date" { field };
    sale_window_order() = "m-sale-window-order";
    bad_timezone(tz: &str) = "m-bad-timezone" { tz };
    bad_currency() = "m-bad-currency";
    password_too_short(min: usize) = "m-password-too-short" { min };
    duplicate_sku_code(code: &str) = "m-duplicate-sku-code" { code };
    duplicate_sku_in_request(code: &str) = "m-duplicate-sku-in-request" { code };
    no_skus() = "m-no-skus";
    too_many_skus(max: usize) = "m-too-many-skus" { max };
    duplicate_slug(what: &str, slug: &str) = "m-duplicate-slug" { what, slug };
    duplicate_email(email: &str) = "m-duplicate-email" { email };
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
messages! {
    forbidden() = "m-forbidden";
    bad_login() = "m-bad-login";
    login_too_fast(seconds: u64) = "m-login-too-fast" { seconds };
    password_too_common() = "m-password-too-common";
    login_throttled(minutes: i64) = "m-login-throttled" { minutes };
    reserved_key(prefix: &str) = "m-reserved-key" { prefix };
    bad_country(code: &str) = "m-bad-country" { code };
    busy(seconds: u64) = "m-busy" { seconds };
    signed_out() = "m-signed-out";
    product_created(name: &str) = "m-product-created" { name };
    product_saved(name: &str) = "m-product-saved" { name };
    status_changed(name: &str, status: &str) = "m-status-changed" { name, status };
    sku_added(code: &str) = "m-sku-added" { code };
    sku_saved(code: &str) = "m-sku-saved" { code };
    key_revoked(name: &str) = "m-key-revoked" { name };
    internal_error() = "m-internal-error";
    csrf_rejected() = "m-csrf-rejected";
    page_not_found() = "m-page-not-found";
    body_too_large() = "m-body-too-large";
    bad_json(detail: &str) = "m-bad-json" { detail };
    bad_multipart() = "m-bad-multipart";
    method_not_allowed() = "m-method-not-allowed";
    invalid_text() = "m-invalid-text";
    too_many_webhooks(limit: i64) = "m-too-many-webhooks" { n: limit };
    too_many_waits(limit: i64) = "m-too-many-waits" { n: limit };
    text_part_too_long(kb: usize) = "m-text-part-too-long" { kb };
    bad_content_type() = "m-bad-content-type";
    bad_api_key() = "m-bad-api-key";
    nothing_to_change() = "m-nothing-to-change";
    unknown_sku(code: &str) = "m-unknown-sku" { code };
}
/// A SKU used where another unit is expected.
pub fn wrong_unit(code: &str, actual: &str, wanted: &str) -> String {
    // Units by their `unit_type` names; the catalogue says goods' quantities as stock.
    let unit = |u: &str| if u == "quantity" { "stock" } else { u }.to_string();
    tr(
        &format!("m-wrong-unit-{}-{}", unit(wanted), unit(actual)),
        &[("code", code.into())],
    )
}
pub fn unknown_warehouse(slug: &str) -> String {
    if slug.is_empty() {
        tr("m-choose-warehouse", &[])
    } else {
        tr("m-unknown-warehouse", &[("slug", slug.into())])
    }
}
messages! {
    transfer_same_warehouse() = "m-transfer-same-warehouse";
    bad_qty(max: i64) = "m-bad-qty" { max };
    bad_count(max: i64) = "m-bad-count" { max };
    not_enough_available(kind: &str, wanted: i64, available: i64) = "m-not-enough-available" { kind, wanted, available };
    not_enough_frozen(wanted: i64, frozen: i64) = "m-not-enough-frozen" { wanted, frozen };
    count_stale(expected: i64, now: i64) = "m-count-stale" { expected, now };
    count_below_held(counted: i64, locked: i64, frozen: i64) = "m-count-below-held" { counted, locked, frozen };
    idempotency_conflict(key: &str) = "m-idempotency-conflict" { key };
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
messages! {
    sku_frozen(sku: &str, finding: i64) = "m-sku-frozen" { sku, finding: as_id(finding) };
    slot_frozen(finding: i64) = "m-slot-frozen" { finding: as_id(finding) };
}
// ---- why a SKU can or cannot be sold (domain::sellable) -------------------------------------

/// The heading of a reason or warning, as the "Not sellable" page groups SKUs under it.
pub fn reason_title(code: &str) -> String {
    tr(&format!("reason-{code}"), &[])
}
/// The link to the page that fixes a reason: `fix` names it (`fix-product`, `fix-stock`, …).
pub fn fix_label(fix: &str) -> String {
    tr(fix, &[])
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
messages! {
    why_product_draft() = "m-why-product-draft";
    why_product_offline() = "m-why-product-offline";
    why_sale_not_started(at_local: &str, tz: &str) = "m-why-sale-not-started" { at_local, tz: zone(tz) };
    why_sale_ended(at_local: &str, tz: &str) = "m-why-sale-ended" { at_local, tz: zone(tz) };
    why_stock_unlimited() = "m-why-stock-unlimited";
    quantity_unlimited() = "m-quantity-unlimited";
    why_no_price() = "m-why-no-price";
    why_sku_frozen(finding: i64, explain: &str) = "m-why-sku-frozen" { finding: as_id(finding), explain };
    why_no_stock_record() = "m-why-no-stock-record";
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
messages! {
    why_no_schedule() = "m-why-no-schedule";
    why_no_slots_in_window(days: i64) = "m-why-no-slots-in-window" { days };
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
messages! {
    why_all_slots_closed(n: i64, days: i64, closures: &[String]) = "m-why-all-slots-closed" { n, days, why: clauses(closures) };
    why_all_slots_full(full: i64, closed: i64, days: i64) = "m-why-all-slots-full" { full, closed, days };
}
pub fn why_slots_frozen(n: i64, findings: &[i64]) -> String {
    let ids: Vec<String> = findings.iter().map(|f| format!("#{f}")).collect();
    tr(
        "m-why-slots-frozen",
        &[("n", n.into()), ("ids", ids.join(", ").into())],
    )
}
messages! {
    why_next_slot_beyond_window(at_local: &str, tz: &str, days: i64) = "m-why-next-slot-beyond-window" { at_local, tz: zone(tz), days };
    why_no_batch() = "m-why-no-batch";
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
messages! {
    why_batch_importing(name: &str, progress: i64) = "m-why-batch-importing" { name, progress };
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
messages! {
    why_gate_degraded() = "m-why-gate-degraded";
    warn_low_stock(available: i64, threshold: i64) = "m-warn-low-stock" { available, threshold };
    warn_few_slots(open: i64, threshold: i64) = "m-warn-few-slots" { open, threshold };
    warn_codes_running_out(available: i64, days_left: i64, per_day: &str) = "m-warn-codes-running-out" { available, days_left, per_day };
    bad_whole_number(field: &str) = "m-bad-whole-number" { field };
    /// Refusal of a reservation or booking of something that is not on sale.
    not_on_sale(sku: &str, why: &str) = "m-not-on-sale" { sku, why };
    insufficient_stock(sku: &str, wanted: i64, available: i64) = "m-insufficient-stock" { sku, wanted, available };
    order_conflict(order_id: &str) = "m-order-conflict" { order_id };
    reservation_expired(order_id: &str) = "m-reservation-expired" { order_id };
    reservation_released(order_id: &str, status: &str) = "m-reservation-released" { order_id, status };
    bad_payment_ref(max: usize) = "m-bad-payment-ref" { max };
    payment_conflict(order_id: &str, stored: &str) = "m-payment-conflict" { order_id, payment_ref: stored };
    paid_not_in_stock(order_id: &str, exception_id: i64) = "m-paid-not-in-stock" { order_id, id: exception_id.to_string() };
    paid_not_held(order_id: &str, exception_id: i64) = "m-paid-not-held" { order_id, id: exception_id.to_string() };
    hold_released(order_id: &str) = "m-hold-released" { order_id };
    hold_not_released(order_id: &str) = "m-hold-not-released" { order_id };
    exception_settled(id: i64, how: &str) = "m-exception-settled" { id: id.to_string(), how };
    goods_only_policy() = "m-goods-only-policy";
    bad_max_places(max: i64) = "m-bad-max-places" { max };
    services_only_rule() = "m-services-only-rule";
    bad_minutes(max: i64) = "m-bad-minutes" { max };
    too_late_to_book(minutes: i64) = "m-too-late-to-book" { minutes };
    change_closed() = "m-change-closed";
    services_only_party() = "m-services-only-party";
    vouchers_only_uses() = "m-vouchers-only-uses";
    uses_fixed() = "m-uses-fixed";
    bad_check_in(max: i64) = "m-bad-check-in" { max };
    code_not_redeemed() = "m-code-not-redeemed";
    undo_window_passed(minutes: i64) = "m-undo-window-passed" { minutes };
    unknown_event_type(word: &str) = "m-unknown-event-type" { word };
    bad_rate(min: i64, max: i64) = "m-bad-rate" { min, max };
    rate_limited(rate: i64, seconds: u64) = "m-rate-limited" { rate, seconds };
    key_rate_set(name: &str, rate: &str) = "m-key-rate-set" { name, rate };
    bad_limit(min: i64, max: i64) = "m-bad-limit" { min, max };
    limit_exceeded(sku: &str, limit: i64, already: i64, per_customer: bool) = "m-limit-exceeded" { sku, limit, already, per: if per_customer { "customer" } else { "order" } };
    bad_customer_id(max: usize) = "m-bad-customer-id" { max };
    bad_party_size(max: i64) = "m-bad-party-size" { max };
    slot_not_of_sku(slot_id: i64, sku: &str) = "m-slot-not-of-sku" { slot: slot_id.to_string(), sku };
    unknown_slot(slot_id: i64) = "m-unknown-slot" { slot: slot_id.to_string() };
    code_unknown() = "m-code-unknown";
    code_already_redeemed() = "m-code-already-redeemed";
    code_voided() = "m-code-voided";
    code_not_sold(status: &str) = "m-code-not-sold" { status };
    bad_exception_status() = "m-bad-exception-status";
    bad_resolution() = "m-bad-resolution";
    exception_resolved(id: i64) = "m-exception-resolved" { id: id.to_string() };
    still_short(order_id: &str) = "m-still-short" { order_id };
    order_changed(order_id: &str) = "m-order-changed" { order_id };
    reservation_confirmed(order_id: &str) = "m-reservation-confirmed" { order_id };
    duplicate_line(sku: &str) = "m-duplicate-line" { sku };
    too_many_lines(max: usize) = "m-too-many-lines" { max };
    bad_ttl(max: i64) = "m-bad-ttl" { max };
    bad_order_id(max: usize) = "m-bad-order-id" { max };
    order_not_confirmed(order_id: &str) = "m-order-not-confirmed" { order_id };
    sku_not_in_order(sku: &str, order_id: &str) = "m-sku-not-in-order" { order_id, sku };
    return_exceeds_order(remaining: i64) = "m-return-exceeds-order" { remaining };
    return_conflict(return_id: &str) = "m-return-conflict" { return_id };
    duplicate_staff(name: &str) = "m-duplicate-staff" { name };
    bad_clock(field: &str) = "m-bad-clock" { field };
    bad_capacity(max: i64) = "m-bad-capacity" { max };
    unknown_store(slug: &str) = "m-unknown-store" { slug };
    no_store() = "m-no-store";
    store_required() = "m-store-required";
    too_many_rules(max: usize) = "m-too-many-rules" { max };
    closes_before_opens() = "m-closes-before-opens";
    bad_slot_length() = "m-bad-slot-length";
    bad_weekday(day: &str) = "m-bad-weekday" { day };
    unknown_staff(name: &str) = "m-unknown-staff" { name };
    removed_from_schedule() = "m-removed-from-schedule";
    capacity_below_booked(capacity: i64, booked: i64) = "m-capacity-below-booked" { capacity, booked };
    ends_before_starts() = "m-ends-before-starts";
    slot_in_past() = "m-slot-in-past";
    slot_too_long() = "m-slot-too-long";
    closure_too_long() = "m-closure-too-long";
    slot_overlap(staff: &str) = "m-slot-overlap" { staff };
    slot_exists() = "m-slot-exists";
    bad_phone() = "m-bad-phone";
    booking_key_conflict() = "m-booking-key-conflict";
    too_many_bookings_phone(limit: i64) = "m-too-many-bookings-phone" { limit };
    too_many_bookings_address(limit: i64) = "m-too-many-bookings-address" { limit };
    already_booked_public() = "m-already-booked-public";
    form_used() = "m-form-used";
    bad_customer_name() = "m-bad-customer-name";
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
messages! {
    slot_started() = "m-slot-started";
    slot_full() = "m-slot-full";
    not_enough_places(remaining: i64) = "m-not-enough-places" { remaining };
    already_booked(reference: &str) = "m-already-booked" { reference };
    cancel_after_start() = "m-cancel-after-start";
    booking_cancelled(reference: &str) = "m-booking-cancelled" { reference };
    overlapping_rule(weekday: &str, first: &str, second: &str) = "m-overlapping-rule" { weekday: tr("rules-weekday", &[("day", weekday.into())]), first, second };
    waitlist_slot_closed() = "m-waitlist-slot-closed";
    waitlist_has_room(remaining: i64) = "m-waitlist-has-room" { remaining };
    already_waiting(position: i64) = "m-already-waiting" { position };
    waitlist_offer_ended() = "m-waitlist-offer-ended";
    waitlist_offer_accepted() = "m-waitlist-offer-accepted";
    bad_waitlist_hold(max: i64) = "m-bad-waitlist-hold" { max };
    booking_rescheduled() = "m-booking-rescheduled";
    closure_in_past() = "m-closure-in-past";
    move_other_service() = "m-move-other-service";
    booking_not_movable() = "m-booking-not-movable";
    move_after_start() = "m-move-after-start";
    booking_changed() = "m-booking-changed";
    booking_moved(reference: &str, when: &str) = "m-booking-moved" { reference, when };
    slot_not_started() = "m-slot-not-started";
    too_many_requests() = "m-too-many-requests";
    booking_confirmed(reference: &str) = "m-booking-confirmed" { reference };
    booking_cancelled_by_customer() = "m-booking-cancelled-by-customer";
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
messages! {
    code_not_returnable(code: &str) = "m-code-not-returnable" { code };
    import_abandoned() = "m-import-abandoned";
    import_empty() = "m-import-empty";
    import_nothing_valid() = "m-import-nothing-valid";
    import_all_or_nothing(rejected: i64) = "m-import-all-or-nothing" { rejected };
    already_downloaded() = "m-already-downloaded";
    bad_import_mode(mode: &str) = "m-bad-import-mode" { mode };
    line_invalid_characters() = "m-line-invalid-characters";
    line_too_long(chars: usize, limit: usize) = "m-line-too-long" { chars, limit };
    line_too_long_unread(cap: usize) = "m-line-too-long-unread" { cap };
    line_not_utf8() = "m-line-not-utf8";
    line_empty() = "m-line-empty";
    line_bad_expiry() = "m-line-bad-expiry";
    line_expired() = "m-line-expired";
    /// A code with a character outside its batch's rule: where (1-based) and the rule's name.
    line_not_allowed(at: usize, rule: &str) = "m-line-not-allowed" { at: (at as i64), rule: allowed_rule(rule) };
    /// A batch's allowed-character rule, as people read it.
    allowed_rule(rule: &str) = "m-allowed-rule" { rule };
    bad_allowed(v: &str) = "m-bad-allowed" { value: v };
    line_bad_csv() = "m-line-bad-csv";
    csv_needs_code_column() = "m-csv-needs-code-column";
    line_duplicate(first: i64) = "m-line-duplicate" { first: as_id(first) };
    line_already_imported(batch: i64) = "m-line-already-imported" { batch: as_id(batch) };
    upload_too_large(mb: u64) = "m-upload-too-large" { mb };
    upload_too_many_lines(max: u64) = "m-upload-too-many-lines" { max };
    upload_broken(detail: &str) = "m-upload-broken" { detail };
    upload_missing_file() = "m-upload-missing-file";
    bad_generate_count(max: i64) = "m-bad-generate-count" { max };
    bad_code_length(min: i64, max: i64) = "m-bad-code-length" { min, max };
    batch_started(id: i64) = "m-batch-started" { id: as_id(id) };
    codes_moved(action: &str, n: u64) = "m-codes-moved" { n, action };
}
// Back office: codes.
messages! {
    upload_not_multipart() = "m-upload-not-multipart";
    generated_batch_name(count: i64) = "m-generated-batch-name" { count };
    lookup_code_required() = "m-lookup-code-required";
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

messages! {
    warehouse_not_applicable(code: &str) = "m-warehouse-not-applicable" { code };
    code_keys_created(file: &str) = "m-code-keys-created" { file };
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
        "places",
        "uses",
        "slot_id",
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
messages! {
    slot_capacity_saved(capacity: i64) = "m-slot-capacity-saved" { capacity };
    /// Staff booked a caller or a walk-in.
    staff_booked(reference: &str, name: &str, when: &str) = "m-staff-booked" { reference, name, when };
    /// Staff put a customer on a full slot's waiting list.
    staff_waitlisted(name: &str, position: i64) = "m-staff-waitlisted" { name, position };
    staff_book_pick_slot() = "m-staff-book-pick-slot";
    staff_book_inside_notice(minutes: i64) = "m-staff-book-inside-notice" { minutes };
    staff_book_full() = "m-staff-book-full";
    staff_book_left(n: i64) = "m-staff-book-left" { n };
    slot_closed_by_staff(to_contact: usize) = "m-slot-closed-by-staff" { n: to_contact };
    slot_reopened() = "m-slot-reopened";
    booking_cancelled_by_staff(reference: &str) = "m-booking-cancelled-by-staff" { reference };
    booking_marked(reference: &str, status: &str) = "m-booking-marked" { reference, status };
    booking_not_active(reference: &str, status: &str) = "m-booking-not-active" { reference, status };
    closure_created(slots_closed: usize, to_contact: usize) = "m-closure-created" { slots: slots_closed, contact: to_contact };
    closure_bookings_cancelled(n: usize) = "m-closure-bookings-cancelled" { n };
    closure_reopened() = "m-closure-reopened";
    staff_added(name: &str) = "m-staff-added" { name };
}
// ---- reconciliation ----------------------------------------------------------------------

/// What a finding means, for an operator.
pub fn finding(kind: &str, subject: &str, expected: &str, found: &str) -> String {
    let what = tr(&format!("finding-{kind}"), &[]);
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

messages! {
    drift_repaired() = "m-drift-repaired";
    /// Who can make a fix the reader cannot: `operator`, `store` or `admin` (of `merchant`).
    fixed_by(who: &str, merchant: &str) = "m-fixed-by" { who, merchant };
    count_repaired() = "m-count-repaired";
    holds_repaired() = "m-holds-repaired";
    accept_needs_locked(held: i64, locked: i64) = "m-accept-needs-locked" { held, locked };
    correction_impossible(target: &str) = "m-correction-impossible" { target: finding_value(target) };
    unexplained_change(finding: i64) = "m-unexplained-change" { finding: as_id(finding) };
    finding_not_correctable() = "m-finding-not-correctable";
    identity_still_broken(expected: &str, found: &str) = "m-identity-still-broken" { expected: finding_value(expected), found: finding_value(found) };
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
messages! {
    audit_schedule_rules(rules: usize, store: &str) = "m-audit-schedule-rules" { rules, store };
}
// ---- reconciliation pages -----------------------------------------------------------------

messages! {
    reconcile_run_done(run: i64, checked: i64, broken: usize, repaired: usize) = "m-reconcile-run-done" { run: as_id(run), checked, broken, repaired };
    reconcile_run_failed(run: i64, error: &str) = "m-reconcile-run-failed" { run: as_id(run), error };
    finding_stock_restored(finding: i64) = "m-finding-stock-restored" { finding: as_id(finding) };
    finding_stock_accepted(finding: i64) = "m-finding-stock-accepted" { finding: as_id(finding) };
    finding_slot_corrected(finding: i64) = "m-finding-slot-corrected" { finding: as_id(finding) };
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
messages! {
    webhook_bad_url(max: usize) = "m-webhook-bad-url" { max: (max as i64) };
    webhook_private_address(host: &str) = "m-webhook-private-address" { host };
    webhook_no_credentials() = "m-webhook-no-credentials";
    webhook_unresolvable(host: &str) = "m-webhook-unresolvable" { host };
    webhook_events_required() = "m-webhook-events-required";
    webhook_bad_overlap(max: i64) = "m-webhook-bad-overlap" { max };
    webhook_paused(url: &str) = "m-webhook-paused" { url };
    webhook_resumed(url: &str) = "m-webhook-resumed" { url };
    webhook_deleted(url: &str) = "m-webhook-deleted" { url };
    webhook_exists(id: i64) = "m-webhook-exists" { id: id.to_string() };
    webhook_redelivered(event: i64) = "m-webhook-redelivered" { event: event.to_string() };
    override_in_past() = "m-override-in-past";
    too_many_overrides(max: i64) = "m-too-many-overrides" { max };
    one_off_added(when: &str) = "m-one-off-added" { when };
    customer_reached(reference: &str) = "m-customer-reached" { reference };
    customer_not_reached(reference: &str) = "m-customer-not-reached" { reference };
    closure_who_required() = "m-closure-who-required";
    override_closed_with_hours() = "m-override-closed-with-hours";
    choose_a_date() = "m-choose-a-date";
    copy_to_nothing() = "m-copy-to-nothing";
    bad_auto_no_show(max: i64) = "m-bad-auto-no-show" { max };
    bad_buffer(max: i64) = "m-bad-buffer" { max };
    call_note_saved(reference: &str) = "m-call-note-saved" { reference };
    last_day_before_first() = "m-last-day-before-first";
    whole_day(day: &str) = "m-whole-day" { day: day.to_string() };
    whole_days(from: &str, until: &str) = "m-whole-days" { from: from.to_string(), until: until.to_string() };
    bad_reason_code() = "m-bad-reason-code";
    /// `code` does not fit the adjustment; `fits` are the codes that do, named as the API and CSV
    /// take them.
    reason_code_mismatch(code: &str, fits: &str) = "m-reason-code-mismatch" { code: crate::i18n::current().t1("stock-reason-code", "code", code), fits };
    booking_held() = "m-booking-held";
    release_on_in_past() = "m-release-on-in-past";
    display_name_taken(name: &str) = "m-display-name-taken" { name };
    staff_archived_meanwhile(name: &str) = "m-staff-archived-meanwhile" { name };
    staff_still_scheduled(name: &str, rules: i64, slots: i64) = "m-staff-still-scheduled" { name, rules, slots };
    staff_renamed(name: &str) = "m-staff-renamed" { name };
    staff_archived(name: &str) = "m-staff-archived" { name };
    staff_restored(name: &str) = "m-staff-restored" { name };
    bad_priority(max: i64) = "m-bad-priority" { max };
    place_saved(name: &str) = "m-place-saved" { name };
    bad_unit_cost() = "m-bad-unit-cost";
    sheet_choose_file() = "m-sheet-choose-file";
    hold_holds_only(remaining: i64) = "m-hold-holds-only" { n: remaining };
    hold_gone() = "m-hold-gone";
    hold_too_small(qty: i64) = "m-hold-too-small" { qty };
}
// Stock sheets (CSV of receipts or counts).
messages! {
    sheet_too_large(mb: usize) = "m-sheet-too-large" { mb };
    sheet_empty() = "m-sheet-empty";
    sheet_too_many_lines(max: usize) = "m-sheet-too-many-lines" { max };
    sheet_missing_columns(columns: &str) = "m-sheet-missing-columns" { columns };
    sheet_no_header() = "m-sheet-no-header";
    sheet_bad_line() = "m-sheet-bad-line";
    sheet_bad_characters() = "m-sheet-bad-characters";
    sheet_counted_twice(first: u64) = "m-sheet-counted-twice" { first: (first as i64) };
    sheet_no_good_lines() = "m-sheet-no-good-lines";
    sheet_has_bad_lines(n: usize) = "m-sheet-has-bad-lines" { n };
    sheet_line_refused(line: u64, why: &str) = "m-sheet-line-refused" { line: (line as i64), why };
    sheet_applied(lines: i64) = "m-sheet-applied" { n: lines };
    sheet_lines_refused_late(lines: &str) = "m-sheet-lines-refused-late" { lines };
    sheet_already_applied(id: i64) = "m-sheet-already-applied" { id };
}
// People and sign-ins.
messages! {
    already_invited(email: &str) = "m-already-invited" { email };
    invitation_invalid() = "m-invitation-invalid";
    password_mismatch() = "m-password-mismatch";
    cannot_deactivate_self() = "m-cannot-deactivate-self";
    wrong_password() = "m-wrong-password";
    invited(email: &str) = "m-invited" { email };
    invitation_revoked(email: &str) = "m-invitation-revoked" { email };
    person_deactivated(who: &str) = "m-person-deactivated" { who };
    person_reactivated(who: &str) = "m-person-reactivated" { who };
    own_password_changed() = "m-own-password-changed";
    own_name_saved() = "m-own-name-saved";
    welcome(name: &str) = "m-welcome" { name };
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
