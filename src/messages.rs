//! Every sentence a person reads, in one place, so the interface can be translated.
//! Templates hold the page text; this module holds the sentences that code chooses.

use crate::domain::catalog::UnitType;
use crate::domain::reconcile::FindingKind;
use crate::domain::sellable::ReasonCode;

pub fn required(field: &str) -> String {
    format!("{field} is required.")
}
pub fn too_long(field: &str, max: usize) -> String {
    format!("{field} is too long: at most {max} characters.")
}
pub fn bad_slug(field: &str) -> String {
    format!("{field} may contain only lowercase letters, digits and hyphens.")
}
pub fn bad_code() -> String {
    "SKU code may contain only letters, digits, '-', '_' and '.'.".into()
}
pub fn bad_email() -> String {
    "Enter an email address like name@example.com.".into()
}
pub fn bad_choice(field: &str, allowed: &[&str]) -> String {
    format!("{field} must be one of: {}.", allowed.join(", "))
}
pub fn bad_price() -> String {
    "Price must be a number of at most two decimals, like 12.50.".into()
}
pub fn negative_price() -> String {
    "Price cannot be negative.".into()
}
pub fn price_too_large() -> String {
    "Price is too large.".into()
}
pub fn bad_time(field: &str) -> String {
    format!("{field} must be a date and time, like 2026-12-01T09:00.")
}
pub fn sale_window_order() -> String {
    "The sale must end after it starts.".into()
}
pub fn bad_timezone(tz: &str) -> String {
    format!("Unknown timezone {tz:?}: use an IANA name such as Asia/Shanghai.")
}
pub fn bad_currency() -> String {
    "Currency must be a three-letter ISO code such as CNY.".into()
}
pub fn password_too_short(min: usize) -> String {
    format!("Password must be at least {min} characters.")
}
pub fn duplicate_sku_code(code: &str) -> String {
    format!("SKU code {code:?} is already used by another SKU of this merchant.")
}
pub fn duplicate_sku_in_request(code: &str) -> String {
    format!("SKU code {code:?} appears more than once.")
}
pub fn no_skus() -> String {
    "A product needs at least one SKU.".into()
}
pub fn too_many_skus(max: usize) -> String {
    format!("A product can have at most {max} SKUs.")
}
pub fn duplicate_slug(what: &str, slug: &str) -> String {
    format!("There is already a {what} with the slug {slug:?}.")
}
pub fn duplicate_email(email: &str) -> String {
    format!("There is already a user with the email {email:?}.")
}
pub fn role_scope(role: &str) -> String {
    match role {
        "operator" => "An operator belongs to no merchant or store.".into(),
        "merchant_admin" => "A merchant admin needs a merchant and no store.".into(),
        _ => "Store staff need a merchant and one of its stores.".into(),
    }
}
pub fn not_found(what: &str) -> String {
    format!("No such {what}.")
}
pub fn forbidden() -> String {
    "Your role does not allow this.".into()
}
pub fn bad_login() -> String {
    "Email or password is wrong.".into()
}
pub fn login_throttled(minutes: i64) -> String {
    format!("Too many failed sign-ins. Wait {minutes} minutes and try again.")
}
pub fn reserved_key(prefix: &str) -> String {
    format!("Idempotency keys starting with \"{prefix}\" are reserved for the public booking page.")
}
pub fn bad_country(code: &str) -> String {
    format!("{code} is not a country code: use two letters, like CN.")
}
pub fn busy(seconds: u64) -> String {
    format!("The server is busy signing people in. Try again in {seconds} seconds.")
}
pub fn signed_out() -> String {
    "You are signed out.".into()
}
pub fn product_created(name: &str) -> String {
    format!("Product {name:?} created.")
}
pub fn product_saved(name: &str) -> String {
    format!("Product {name:?} saved.")
}
pub fn status_changed(name: &str, status: &str) -> String {
    format!("{name:?} is now {status}.")
}
pub fn sku_added(code: &str) -> String {
    format!("SKU {code} added.")
}
pub fn sku_saved(code: &str) -> String {
    format!("SKU {code} saved.")
}
pub fn key_revoked(name: &str) -> String {
    format!("API key {name:?} revoked. Systems using it can no longer call the API.")
}
pub fn internal_error() -> String {
    "Something went wrong on our side. It has been logged; try again in a moment.".into()
}
pub fn csrf_rejected() -> String {
    "This request came from another site and was refused.".into()
}
pub fn page_not_found() -> String {
    "There is no page at this address.".into()
}
pub fn body_too_large() -> String {
    "The request body is larger than this server accepts.".into()
}
pub fn bad_json(detail: &str) -> String {
    format!("The request body is not valid JSON for this call: {detail}")
}
pub fn bad_multipart() -> String {
    "Send the upload as multipart/form-data with the codes in a part named \"file\".".into()
}
pub fn method_not_allowed() -> String {
    "This address does not answer that method.".into()
}
pub fn invalid_text() -> String {
    "The request contains characters that cannot be stored (such as a NUL byte or another control character). Remove them and try again.".into()
}
pub fn bad_content_type() -> String {
    "Send the body as JSON with Content-Type: application/json.".into()
}
pub fn bad_api_key() -> String {
    "Send a valid API key as Authorization: Bearer <key>.".into()
}
pub fn nothing_to_change() -> String {
    "Nothing to change: send status, sale_starts_at or sale_ends_at.".into()
}

pub fn unknown_sku(code: &str) -> String {
    format!("There is no SKU {code:?} in this catalog.")
}
/// A SKU used where another unit is expected.
pub fn wrong_unit(code: &str, actual: UnitType, wanted: UnitType) -> String {
    use UnitType::{Code, Quantity, Slot};
    match (wanted, actual) {
        (Quantity, Code) => format!("SKU {code} is a voucher: it is sold as codes, not as stock."),
        (Quantity, Slot) => {
            format!("SKU {code} is a service: it is booked in time slots, not held as stock.")
        }
        (Quantity, Quantity) => format!("SKU {code} is not counted as stock."),
        (Slot, Code) => {
            format!("SKU {code} is a voucher: it is sold as codes, not booked in slots.")
        }
        (Slot, Quantity) => {
            format!("SKU {code} is goods: it is held as stock, not booked in slots.")
        }
        (Slot, Slot) => format!("SKU {code} is not a service."),
        (Code, Quantity) => format!("SKU {code} is goods: it is held as stock, not sold as codes."),
        (Code, Slot) => {
            format!("SKU {code} is a service: it is booked in time slots, not sold as codes.")
        }
        (Code, Code) => format!("SKU {code} is not sold as codes."),
    }
}
pub fn unknown_warehouse(slug: &str) -> String {
    if slug.is_empty() {
        "Choose a warehouse.".into()
    } else {
        format!("There is no warehouse {slug:?}.")
    }
}
pub fn transfer_same_warehouse() -> String {
    "Transfer to a different warehouse.".into()
}
pub fn bad_qty(max: i64) -> String {
    format!("Quantity must be a whole number from 1 to {max}.")
}
pub fn bad_count(max: i64) -> String {
    format!("The counted quantity must be a whole number from 0 to {max}.")
}
pub fn not_enough_available(kind: &str, wanted: i64, available: i64) -> String {
    let verb = match kind {
        "WRITE_OFF" => "write off",
        "FREEZE" => "freeze",
        "TRANSFER" => "transfer",
        _ => "take",
    };
    format!("Cannot {verb} {wanted}: only {available} available.")
}
pub fn not_enough_frozen(wanted: i64, frozen: i64) -> String {
    format!("Cannot unfreeze {wanted}: only {frozen} frozen.")
}
pub fn count_stale(expected: i64, now: i64) -> String {
    format!("Stock moved since you counted: on hand was {expected}, it is now {now}. Review the difference and confirm again.")
}
pub fn count_below_held(counted: i64, locked: i64, frozen: i64) -> String {
    format!("Counted {counted}, but {locked} are held by unpaid orders and {frozen} are frozen: release or unfreeze those first.")
}
pub fn idempotency_conflict(key: &str) -> String {
    format!("Idempotency key {key:?} was already used for a different request.")
}
pub fn stock_adjusted(kind: &str, qty: i64, sku: &str) -> String {
    format!("{kind} of {qty} booked for {sku}.")
}
pub fn sku_frozen(sku: &str, finding: i64) -> String {
    format!("{sku} is frozen by reconciliation (finding #{finding}) until an operator reviews it.")
}

pub fn slot_frozen(finding: i64) -> String {
    format!(
        "This slot is frozen by reconciliation (finding #{finding}) until an operator reviews it."
    )
}

// ---- why a SKU can or cannot be sold (domain::sellable) -------------------------------------

/// The heading of a reason or warning, as the "Not sellable" page groups SKUs under it.
pub fn reason_title(code: ReasonCode) -> &'static str {
    use ReasonCode::*;
    match code {
        ProductDraft => "Product is a draft",
        ProductOffline => "Product is offline",
        SaleNotStarted => "Sale not open yet",
        SaleEnded => "Sale has ended",
        NoPrice => "No price",
        SkuFrozen => "Frozen by reconciliation",
        NoStockRecord => "Never stocked",
        OutOfStock => "Out of stock",
        NoSchedule => "No schedule",
        NoSlotsInWindow => "No slots in the booking window",
        AllSlotsClosed => "All slots closed",
        AllSlotsFull => "All open slots full",
        SlotsFrozen => "Slots frozen by reconciliation",
        NextSlotBeyondWindow => "Next open slot beyond the booking window",
        NoBatch => "No codes yet",
        BatchFailed => "Last batch failed",
        BatchPartial => "Last batch imported in part",
        BatchImporting => "Batch still importing",
        NoCodesAvailable => "No codes available",
        GateDegraded => "Redis gate degraded",
        LowStock => "Low stock",
        FewSlots => "Few open slots this week",
        CodesRunningOut => "Codes running out",
    }
}
/// The link to the page that fixes a reason.
pub fn fix_label(code: ReasonCode) -> &'static str {
    use ReasonCode::*;
    match code {
        ProductDraft | ProductOffline | SaleNotStarted | SaleEnded => "Open the product",
        NoPrice => "Set a price",
        SkuFrozen | SlotsFrozen => "Review the finding",
        NoStockRecord | OutOfStock | LowStock => "Open the stock",
        NoSchedule | NoSlotsInWindow | NextSlotBeyondWindow | FewSlots => "Open the schedule",
        AllSlotsClosed => "See why the slots are closed",
        AllSlotsFull => "Open the week",
        NoBatch | NoCodesAvailable | CodesRunningOut => "Open the codes",
        BatchFailed | BatchPartial | BatchImporting => "Open the batch",
        GateDegraded => "Open",
    }
}
/// What a sellable SKU can promise now.
pub fn quantity_label(kind: &str, quantity: i64, next_slot: Option<(&str, &str)>) -> String {
    match (kind, next_slot) {
        ("service", Some((at, tz))) => {
            format!("{quantity} places left in the next slot, {at} ({tz})")
        }
        ("voucher", _) => format!("{quantity} codes available"),
        _ => format!("{quantity} available"),
    }
}
pub fn why_product_draft() -> String {
    "The product is a draft: put it online to sell it.".into()
}
pub fn why_product_offline() -> String {
    "The product is offline: put it online to sell it.".into()
}
pub fn why_sale_not_started(at_local: &str, tz: &str) -> String {
    format!("The sale opens on {at_local} ({tz}).")
}
pub fn why_sale_ended(at_local: &str, tz: &str) -> String {
    format!("The sale closed on {at_local} ({tz}).")
}
pub fn why_no_price() -> String {
    "The SKU has no price (0.00): set one to sell it.".into()
}
pub fn why_sku_frozen(finding: i64, explain: &str) -> String {
    format!("Frozen by reconciliation (finding #{finding}): {explain}")
}
pub fn why_no_stock_record() -> String {
    "No stock has been received in any warehouse.".into()
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
        parts.push(format!("{locked} held by unpaid orders"));
    }
    if frozen > 0 {
        parts.push(match frozen_reason.filter(|r| !r.is_empty()) {
            Some(r) => format!("{frozen} frozen ({r})"),
            None => format!("{frozen} frozen"),
        });
    }
    if sold > 0 {
        parts.push(format!("{sold} sold"));
    }
    if parts.is_empty() {
        format!("None available of {total} received.")
    } else {
        format!("None available of {total} received: {}.", parts.join(", "))
    }
}
pub fn why_no_schedule() -> String {
    "No schedule: the service has no opening rules and no slots ahead.".into()
}
pub fn why_no_slots_in_window(days: i64) -> String {
    format!("No slots in the next {days} days.")
}
/// One closure (or a reason slots were closed for), as listed in a reason.
pub fn closure_item(reason: &str, staff: Option<&str>, period: &str) -> String {
    match (staff.filter(|s| !s.is_empty()), period.is_empty()) {
        (Some(s), false) => format!("{reason} ({s}, {period})"),
        (Some(s), true) => format!("{reason} ({s})"),
        (None, false) => format!("{reason} ({period})"),
        (None, true) => reason.to_string(),
    }
}
pub fn why_all_slots_closed(n: i64, days: i64, closures: &[String]) -> String {
    let why = closures.join("; ");
    if n == 1 {
        format!("The only slot in the next {days} days is closed: {why}.")
    } else {
        format!("All {n} slots in the next {days} days are closed: {why}.")
    }
}
pub fn why_all_slots_full(full: i64, closed: i64, days: i64) -> String {
    let all = if full == 1 {
        format!("The only open slot in the next {days} days is full")
    } else {
        format!("All {full} open slots in the next {days} days are full")
    };
    match closed {
        0 => format!("{all}."),
        1 => format!("{all} (1 more is closed)."),
        n => format!("{all} ({n} more are closed)."),
    }
}
pub fn why_slots_frozen(n: i64, findings: &[i64]) -> String {
    let ids: Vec<String> = findings.iter().map(|f| format!("#{f}")).collect();
    let what = if n == 1 {
        "The open slot with places is".to_string()
    } else {
        format!("{n} open slots with places are")
    };
    format!(
        "{what} frozen by reconciliation (finding {}) until an operator reviews it.",
        ids.join(", ")
    )
}
pub fn why_next_slot_beyond_window(at_local: &str, tz: &str, days: i64) -> String {
    format!("The next open slot, {at_local} ({tz}), is beyond the {days}-day booking window.")
}
pub fn why_no_batch() -> String {
    "No codes have been uploaded or generated.".into()
}
fn first_errors(errors: &[(i64, String)]) -> String {
    errors
        .iter()
        .map(|(line, reason)| format!("line {line}: {reason}"))
        .collect::<Vec<_>>()
        .join("; ")
}
pub fn why_batch_failed(name: &str, failure: &str, errors: &[(i64, String)]) -> String {
    let mut s = format!("The last batch, {name}, failed");
    if !failure.is_empty() {
        s.push_str(&format!(": {failure}"));
    }
    if !errors.is_empty() {
        s.push_str(&format!(". First errors: {}", first_errors(errors)));
    }
    s.push('.');
    s
}
pub fn why_batch_partial(name: &str, rejected: i64, errors: &[(i64, String)]) -> String {
    let mut s = format!("The last batch, {name}, was imported in part: {rejected} lines rejected");
    if !errors.is_empty() {
        s.push_str(&format!(". First errors: {}", first_errors(errors)));
    }
    s.push('.');
    s
}
pub fn why_batch_importing(name: &str, progress: i64) -> String {
    format!("The batch {name} is still importing ({progress}% done): its codes go on sale when it finishes.")
}
/// Counts by status, e.g. "40 sold, 5 locked, 3 expired".
pub fn why_no_codes_available(counts: &[(String, i64)]) -> String {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(status, n)| {
            let what = match status.as_str() {
                "AVAILABLE" => "available but past their expiry",
                "BOOKING" => "held by unpaid orders",
                "SOLD" => "sold",
                "LOCKED" => "locked",
                "EXPIRED" => "expired",
                "INVALID" => "invalidated",
                "PENDING" => "still importing",
                _ => "other",
            };
            format!("{n} {what}")
        })
        .collect();
    if parts.is_empty() {
        "No codes available.".into()
    } else {
        format!("No codes available: {}.", parts.join(", "))
    }
}
pub fn why_gate_degraded() -> String {
    "Redis is not answering: this instance answers from the database alone (slower, still correct)."
        .into()
}
pub fn warn_low_stock(available: i64, threshold: i64) -> String {
    format!("Low stock: {available} left (warning below {threshold}).")
}
pub fn warn_few_slots(open: i64, threshold: i64) -> String {
    format!("Only {open} open slots with places in the next 7 days (warning below {threshold}).")
}
pub fn warn_codes_running_out(available: i64, days_left: i64, per_day: &str) -> String {
    format!("{available} codes left: about {days_left} days at the recent rate of {per_day} a day.")
}
pub fn bad_whole_number(field: &str) -> String {
    format!("{field} must be a whole number of at least 1.")
}
/// Refusal of a reservation or booking of something that is not on sale.
pub fn not_on_sale(sku: &str, why: &str) -> String {
    format!("{sku} is not on sale: {why}")
}

pub fn insufficient_stock(sku: &str, wanted: i64, available: i64) -> String {
    format!("Not enough stock of {sku}: {wanted} wanted, {available} available in one warehouse.")
}
pub fn order_conflict(order_id: &str) -> String {
    format!("Order {order_id:?} was already reserved with different items.")
}
pub fn reservation_released(order_id: &str, status: &str) -> String {
    format!("Order {order_id:?} is {status}: its hold is gone. Reserve again to sell it.")
}
pub fn reservation_confirmed(order_id: &str) -> String {
    format!("Order {order_id:?} is already paid (CONFIRMED); use a return instead of a release.")
}
pub fn duplicate_line(sku: &str) -> String {
    format!("SKU {sku} appears on more than one line; put the whole quantity on one line.")
}
pub fn too_many_lines(max: usize) -> String {
    format!("An order can have at most {max} lines.")
}
pub fn bad_ttl(max: i64) -> String {
    format!("ttl_seconds must be a whole number from 1 to {max}.")
}
pub fn bad_order_id(max: usize) -> String {
    format!("order_id must be 1 to {max} printable characters.")
}
pub fn order_not_confirmed(order_id: &str) -> String {
    format!("Order {order_id:?} is not paid (CONFIRMED); only paid orders can be returned.")
}
pub fn sku_not_in_order(sku: &str, order_id: &str) -> String {
    format!("Order {order_id:?} did not buy SKU {sku}.")
}
pub fn return_exceeds_order(remaining: i64) -> String {
    format!("That is more than the order bought: {remaining} can still be returned.")
}
pub fn return_conflict(return_id: &str) -> String {
    format!("Return {return_id:?} was already recorded with different details.")
}

pub fn duplicate_staff(name: &str) -> String {
    format!("There is already a staff member called {name:?} in this store.")
}
pub fn bad_clock(field: &str) -> String {
    format!("{field} must be a time of day like 09:30.")
}
pub fn bad_capacity(max: i64) -> String {
    format!("Capacity must be a whole number from 1 to {max}.")
}
pub fn unknown_store(slug: &str) -> String {
    format!("There is no store {slug:?}.")
}
pub fn no_store() -> String {
    "This merchant has no store yet.".into()
}
pub fn store_required() -> String {
    "This merchant has several stores: say which one.".into()
}
pub fn too_many_rules(max: usize) -> String {
    format!("At most {max} schedule rules per service and store.")
}
pub fn closes_before_opens() -> String {
    "Closing time must be after opening time.".into()
}
pub fn bad_slot_length() -> String {
    "Slot length must be from 5 to 1440 minutes.".into()
}
pub fn bad_weekday(day: &str) -> String {
    format!("Unknown weekday {day:?}: use MON, TUE, WED, THU, FRI, SAT or SUN.")
}
pub fn unknown_staff(name: &str) -> String {
    format!("There is no staff member {name:?} in this store.")
}
pub fn removed_from_schedule() -> String {
    "Removed from the schedule".into()
}
pub fn capacity_below_booked(capacity: i64, booked: i64) -> String {
    format!("Capacity cannot be {capacity}: {booked} places are already booked.")
}
pub fn ends_before_starts() -> String {
    "The end must be after the start.".into()
}
pub fn slot_in_past() -> String {
    "The slot must start in the future.".into()
}
pub fn slot_too_long() -> String {
    "A slot can last at most 24 hours.".into()
}
pub fn closure_too_long() -> String {
    "A closure can last at most a year.".into()
}
pub fn slot_overlap(staff: &str) -> String {
    format!("{staff} already has a slot at that time.")
}
pub fn slot_exists() -> String {
    "There is already a slot of this service starting at that time.".into()
}
pub fn bad_phone() -> String {
    "Enter a valid phone number, like 138 0013 8000 or +86 138 0013 8000.".into()
}
pub fn booking_key_conflict() -> String {
    "This idempotency key was already used for another request (another slot or customer). Use a new key for a new booking.".into()
}
pub fn too_many_bookings_phone(limit: i64) -> String {
    format!("This phone number already holds {limit} upcoming bookings at this store, the most one customer may hold. Cancel one or call the store.")
}
pub fn too_many_bookings_address(limit: i64) -> String {
    format!("{limit} upcoming bookings at this store were already made from this connection, the most we accept from one. Call the store to book more.")
}
pub fn already_booked_public() -> String {
    "This phone number already holds a place in this slot. The confirmation link you received has the details.".into()
}
pub fn form_used() -> String {
    "This booking form was already sent. Open the time again to book.".into()
}
pub fn bad_customer_name() -> String {
    "Enter the name the booking is for.".into()
}
pub fn slot_not_available(note: &str) -> String {
    if note.is_empty() {
        "This time is not available.".into()
    } else {
        format!("This time is not available: {note}")
    }
}
pub fn slot_closed(reason: &str) -> String {
    if reason.is_empty() {
        "This slot is closed.".into()
    } else {
        format!("This slot is closed: {reason}.")
    }
}
pub fn slot_started() -> String {
    "This slot has already started.".into()
}
pub fn slot_full() -> String {
    "This slot is full.".into()
}
pub fn already_booked(reference: &str) -> String {
    format!("You already have a booking in this slot: reference {reference}.")
}
pub fn cancel_after_start() -> String {
    "The slot has started: the booking can no longer be cancelled. Staff record it as attended or no-show.".into()
}
pub fn booking_cancelled(reference: &str) -> String {
    format!("Booking {reference} was cancelled.")
}
pub fn slot_not_started() -> String {
    "Attendance can be recorded once the slot has started.".into()
}

pub fn too_many_requests() -> String {
    "Too many requests from your address. Wait a minute and try again.".into()
}
pub fn booking_confirmed(reference: &str) -> String {
    format!("You are booked. Your reference is {reference}.")
}
pub fn booking_cancelled_by_customer() -> String {
    "Your booking is cancelled. The place is free for someone else.".into()
}

pub fn code_move_refused(action: &str, status: &str) -> String {
    format!("Cannot {action} a code that is {status}.")
}
pub fn code_not_returnable(code: &str) -> String {
    format!("SKU {code} is sold as codes, and a sold code never returns to sale: invalidate it and issue a new one instead.")
}
pub fn import_abandoned() -> String {
    "The import stopped before it finished (the server restarted). Nothing from it is on sale; upload the file again.".into()
}
pub fn import_empty() -> String {
    "The file has no codes.".into()
}
pub fn import_nothing_valid() -> String {
    "No line of the file is a valid new code: see the errors below.".into()
}
pub fn import_all_or_nothing(rejected: i64) -> String {
    format!("All or nothing: {rejected} lines were rejected, so nothing was imported.")
}
pub fn already_downloaded() -> String {
    "This batch was already downloaded. Codes can be revealed one at a time from the batch page."
        .into()
}
pub fn bad_import_mode(mode: &str) -> String {
    format!("Unknown import mode {mode:?}: use \"valid\" (import the valid lines) or \"all\" (all or nothing).")
}
pub fn line_invalid_characters() -> String {
    "invalid characters".into()
}
pub fn line_too_long(chars: usize, limit: usize) -> String {
    format!("{chars} characters, the limit is {limit}")
}
pub fn line_too_long_unread(cap: usize) -> String {
    format!("more than {cap} bytes, the limit is 128 characters")
}
pub fn line_not_utf8() -> String {
    "not valid UTF-8 text (save the file as UTF-8)".into()
}
pub fn line_empty() -> String {
    "empty".into()
}
pub fn line_bad_expiry() -> String {
    "expires_at must be a date like 2027-01-31 or a time like 2027-01-31T23:59:00Z".into()
}
pub fn line_expired() -> String {
    "already expired".into()
}
pub fn line_bad_csv() -> String {
    "not a valid CSV row".into()
}
pub fn csv_needs_code_column() -> String {
    "The CSV file needs a header row with a \"code\" column.".into()
}
pub fn line_duplicate(first: i64) -> String {
    format!("duplicates line {first}")
}
pub fn line_already_imported(batch: i64) -> String {
    format!("already imported in batch #{batch}")
}
pub fn upload_too_large(mb: u64) -> String {
    format!("The file is larger than {mb} MB. Split it into smaller files.")
}
pub fn upload_too_many_lines(max: u64) -> String {
    format!("The file has more than {max} lines. Split it into smaller files.")
}
pub fn upload_broken(detail: &str) -> String {
    format!("The upload did not arrive completely: {detail}")
}
pub fn upload_missing_file() -> String {
    "Choose a file to upload.".into()
}
pub fn bad_generate_count(max: i64) -> String {
    format!("Generate from 1 to {max} codes.")
}
pub fn bad_code_length(min: i64, max: i64) -> String {
    format!("Code length must be from {min} to {max} characters.")
}
pub fn batch_started(id: i64) -> String {
    format!("Batch #{id} is importing.")
}
pub fn codes_moved(action: &str, n: u64) -> String {
    format!("{n} codes: {action} done.")
}

// Back office: codes.
pub fn upload_not_multipart() -> String {
    "Send the upload form as multipart/form-data, with the file attached.".into()
}
pub fn generated_batch_name(count: i64) -> String {
    format!("{count} generated codes")
}
pub fn lookup_code_required() -> String {
    "Type the code the customer reads out.".into()
}
pub fn batch_moved(action: &str, n: u64) -> String {
    match (action, n) {
        ("lock", 0) => "No code of this batch was AVAILABLE: nothing was locked.".into(),
        ("unlock", 0) => "No code of this batch was LOCKED: nothing was unlocked.".into(),
        ("invalidate", 0) => "No code of this batch was AVAILABLE: nothing was invalidated.".into(),
        ("lock", 1) => "1 code locked: it cannot be sold until it is unlocked.".into(),
        ("unlock", 1) => "1 code unlocked: it is on sale again.".into(),
        ("invalidate", 1) => "1 code invalidated: it will never be sold.".into(),
        ("lock", n) => format!("{n} codes locked: they cannot be sold until they are unlocked."),
        ("unlock", n) => format!("{n} codes unlocked: they are on sale again."),
        ("invalidate", n) => format!("{n} codes invalidated: they will never be sold."),
        (other, n) => codes_moved(other, n),
    }
}
pub fn code_moved(action: &str, id: i64) -> String {
    match action {
        "lock" => format!("Code #{id} locked: it cannot be sold until it is unlocked."),
        "unlock" => format!("Code #{id} unlocked: it is on sale again."),
        "invalidate" => format!("Code #{id} invalidated: it will never be sold."),
        other => format!("Code #{id}: {other} done."),
    }
}

pub fn warehouse_not_applicable(code: &str) -> String {
    format!("SKU {code} is sold as codes: leave the warehouse out.")
}

pub fn code_keys_created(file: &str) -> String {
    format!("Created new keys for codes at rest in {file}. Back this file up: without it the stored codes cannot be read.")
}

/// Field labels, shown in messages and beside form fields.
pub fn label(field: &str) -> &'static str {
    match field {
        "name" => "Name",
        "kind" => "Kind",
        "status" => "Status",
        "code" => "SKU code",
        "sku_name" => "SKU name",
        "price" => "Price",
        "sale_starts_at" => "Sale start",
        "sale_ends_at" => "Sale end",
        "slug" => "Slug",
        "email" => "Email",
        "role" => "Role",
        "timezone" => "Timezone",
        "currency" => "Currency",
        "password" => "Password",
        "merchant" => "Merchant",
        "store" => "Store",
        "priority" => "Priority",
        "qty" => "Quantity",
        "reason" => "Reason",
        "warehouse" => "Warehouse",
        "to_warehouse" => "Destination warehouse",
        "idempotency_key" => "Idempotency key",
        "order_id" => "Order id",
        "return_id" => "Return id",
        "phone" => "Phone",
        "customer_name" => "Name",
        "capacity" => "Capacity",
        "starts_at" => "Start",
        "ends_at" => "End",
        "opens" => "Opening time",
        "closes" => "Closing time",
        "expires_at" => "Expiry",
        _ => "This field",
    }
}

// Back office: slots, bookings, closures and schedules.
pub fn slot_capacity_saved(capacity: i64) -> String {
    format!("Capacity set to {capacity}.")
}
pub fn slot_closed_by_staff(to_contact: usize) -> String {
    match to_contact {
        0 => "Slot closed. Nobody had booked it.".into(),
        1 => "Slot closed. One customer holds a booking: call them (listed below).".into(),
        n => format!("Slot closed. {n} customers hold a booking: call them (listed below)."),
    }
}
pub fn slot_reopened() -> String {
    "Slot reopened: its free places can be booked again.".into()
}
pub fn booking_cancelled_by_staff(reference: &str) -> String {
    format!("Booking {reference} cancelled. The place is free again.")
}
pub fn booking_marked(reference: &str, status: &str) -> String {
    match status {
        "ATTENDED" => format!("Booking {reference} recorded as attended."),
        "NO_SHOW" => format!("Booking {reference} recorded as a no-show."),
        other => format!("Booking {reference} is now {other}."),
    }
}
pub fn booking_not_active(reference: &str, status: &str) -> String {
    match status {
        "CANCELLED" => format!("Booking {reference} is already cancelled."),
        _ => format!("Booking {reference} is {status}: it can no longer be cancelled."),
    }
}
pub fn closure_created(slots_closed: usize, to_contact: usize) -> String {
    let slots = match slots_closed {
        1 => "1 slot closed.".to_string(),
        n => format!("{n} slots closed."),
    };
    match to_contact {
        0 => format!("{slots} Nobody had booked them."),
        1 => format!("{slots} One booking needs a call: see below."),
        n => format!("{slots} {n} bookings need a call: see below."),
    }
}
pub fn closure_bookings_cancelled(n: usize) -> String {
    match n {
        0 => "No booking was left to cancel.".into(),
        1 => "1 booking cancelled; its place is free again.".into(),
        n => format!("{n} bookings cancelled; their places are free again."),
    }
}
pub fn closure_reopened() -> String {
    "Closure ended: its slots are open again unless another closure covers them.".into()
}
pub fn staff_added(name: &str) -> String {
    format!("{name} added to the staff.")
}

// ---- reconciliation ----------------------------------------------------------------------

/// What a finding means, for an operator.
pub fn finding(kind: FindingKind, subject: &str, expected: &str, found: &str) -> String {
    use FindingKind::*;
    let what = match kind {
        LockedMismatch => "Units locked by the balance differ from what open orders hold",
        LedgerMismatch => {
            "The balance changed outside the ledger: replaying the ledger gives another balance"
        }
        BookedMismatch => "The slot's booked count differs from its active bookings",
        Overbooked => "The slot holds more bookings than its capacity",
        CodeOrphanBooking => "A code is held (BOOKING) but no open order holds it",
        CodeSoldWithoutOrder => "A code is SOLD but no paid order has it",
        CodeLineMismatch => "An order line does not hold exactly its quantity of codes",
        RedisDrift => "Redis disagreed with SQL and was repaired from SQL",
    };
    format!("{what} ({subject}): expected {expected}, found {found}.")
}

pub fn drift_repaired() -> String {
    "Repaired automatically: Redis is rebuilt from SQL.".into()
}

pub fn accept_needs_locked(held: i64, locked: i64) -> String {
    format!(
        "Open orders hold {held} units but the balance locks {locked}: accepting would keep that wrong. Restore the balance instead."
    )
}

pub fn correction_impossible(target: &str) -> String {
    format!("This correction would give an impossible balance ({target}). Adjust the stock first, then correct.")
}

pub fn unexplained_change(finding: i64) -> String {
    format!("Change made outside the ledger, found by reconciliation (finding #{finding})")
}

pub fn finding_not_correctable() -> String {
    "This finding cannot be corrected this way (or is already resolved).".into()
}

pub fn identity_still_broken(expected: &str, found: &str) -> String {
    format!("Still broken: expected {expected}, found {found}. Correct it before unfreezing.")
}

// ---- reconciliation pages -----------------------------------------------------------------

pub fn reconcile_run_done(run: i64, checked: i64, broken: usize, repaired: usize) -> String {
    let broken = match broken {
        0 => "no broken identity".to_string(),
        1 => "1 broken identity (frozen, listed below)".to_string(),
        n => format!("{n} broken identities (frozen, listed below)"),
    };
    let repaired = match repaired {
        0 => "no Redis repair".to_string(),
        1 => "1 Redis key repaired".to_string(),
        n => format!("{n} Redis keys repaired"),
    };
    format!("Reconciliation run #{run} checked {checked} balances, slots and order lines: {broken}, {repaired}.")
}

pub fn reconcile_run_failed(run: i64, error: &str) -> String {
    format!("Reconciliation run #{run} failed: {error}")
}

pub fn finding_stock_restored(finding: i64) -> String {
    format!("Balance restored to the ledger and open orders (finding #{finding}). The SKU stays frozen until you unfreeze it.")
}

pub fn finding_stock_accepted(finding: i64) -> String {
    format!("Balance accepted as it is; the difference is booked in the ledger (finding #{finding}). The SKU stays frozen until you unfreeze it.")
}

pub fn finding_slot_corrected(finding: i64) -> String {
    format!("Booked count set to the active bookings (finding #{finding}). The slot stays frozen until you unfreeze it.")
}

pub fn finding_unfrozen(finding: i64, what: &str, still_frozen_by: Option<i64>) -> String {
    let what = match what {
        "slot" => "The slot",
        "sku" => "The SKU",
        _ => return format!("Finding #{finding} resolved."),
    };
    match still_frozen_by {
        Some(other) => format!(
            "Finding #{finding} resolved. {what} stays frozen: finding #{other} is still open."
        ),
        None => format!("Finding #{finding} resolved. {what} is sellable again."),
    }
}
