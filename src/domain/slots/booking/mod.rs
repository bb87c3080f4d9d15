//! Bookings: one domain function behind the public page, the back office and the API. A booking
//! takes a place at once (no reserve step) with a conditional increment of the slot's count.

pub mod list;

use crate::domain::{MerchantId, StoreId};
use rand::Rng;
use serde::Serialize;
use sqlx::FromRow;
use std::sync::Arc;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, REASON_MAX};
use crate::domain::slots::gate;
use crate::domain::slots::{self, Slot, SlotStatus};
use crate::domain::trail::events::EventType;
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::infra::counters::SlotAnswer;
use crate::infra::db::{is_unique_violation, Db};
use crate::messages;

pub const NAME_MAX: usize = 100;
/// Unambiguous characters (no 0/O, 1/I/L): a reference is read out over the phone.
const REF_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
const REF_LEN: usize = 10;

#[derive(Debug, Clone, FromRow)]
pub struct Booking {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub slot_id: i64,
    pub reference: String,
    pub customer_name: String,
    pub customer_phone: String,
    pub customer_key: String,
    #[sqlx(try_from = "String")]
    pub status: BookingStatus,
    pub cancel_reason: Option<String>,
    pub created_at: i64,
    /// The order that booked it (a goods-and-slot order), if any.
    pub order_id: Option<String>,
    /// How many places of the slot it takes (a party; 1 for one person).
    pub places: i64,
    /// The slot it was last moved from, if staff moved it.
    pub moved_from_slot_id: Option<i64>,
    /// 1 when the waiting list booked it (a place freed and it was the customer's turn).
    pub from_waitlist: i64,
    /// While set, the place is held for a waiting customer who has not yet accepted it (Unix ms):
    /// it counts against the slot, and lapses (the booking is cancelled) at this instant.
    pub hold_until: Option<i64>,
}

crate::text_enum! {
    /// A booking's state: BOOKED → CANCELLED (before the start) | ATTENDED | NO_SHOW (after it).
    pub enum BookingStatus {
        Booked = "BOOKED",
        Cancelled = "CANCELLED",
        Attended = "ATTENDED",
        NoShow = "NO_SHOW",
    }
}

impl BookingStatus {
    /// Whether a booking in this state, of a slot starting at `starts_at`, may still be cancelled
    /// at `now`: only a live booking, only before the start. One rule for the back office, the
    /// public page and the API.
    pub fn cancellable(self, starts_at: i64, now: i64) -> bool {
        self == BookingStatus::Booked && starts_at > now
    }
    /// Whether staff may record attended / no-show for it: any booking not cancelled, once the
    /// slot has started.
    pub fn markable(self, starts_at: i64, now: i64) -> bool {
        self != BookingStatus::Cancelled && starts_at <= now
    }
}

const BOOKING_SELECT: &str =
    "SELECT id, merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status, cancel_reason, created_at,
        (SELECT r.order_id FROM reservations r WHERE r.id = bookings.reservation_id) AS order_id, places, moved_from_slot_id,
        CAST(from_waitlist AS BIGINT) AS from_waitlist, hold_until FROM bookings";

pub fn new_reference() -> String {
    let mut rng = rand::rng();
    (0..REF_LEN)
        .map(|_| REF_ALPHABET[rng.random_range(0..REF_ALPHABET.len())] as char)
        .collect()
}

pub use crate::domain::kernel::phone::{phone, tel_href};

pub fn customer_name(raw: &str) -> Result<String, FieldError> {
    let v = validate::name("customer_name", raw, NAME_MAX)?;
    if !v.chars().any(|c| c.is_alphabetic()) {
        return Err(FieldError::new(
            "customer_name",
            "invalid_name",
            messages::bad_customer_name(),
        ));
    }
    Ok(v)
}

pub async fn by_reference(db: &Db, scope: Scope, reference: &str) -> DomainResult<Booking> {
    let tenant = scope.filter("merchant_id", 2);
    sqlx::query_as(&format!(
        "{BOOKING_SELECT} WHERE reference = $1 AND {tenant}"
    ))
    .bind(reference.trim().to_uppercase())
    .bind(scope.bind())
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("booking"))
}

#[derive(Debug, Clone)]
pub struct BookInput {
    pub slot_id: i64,
    /// Places the booking takes (a party), at least 1 and at most the service's `max_places`.
    pub places: i64,
    pub name: String,
    pub phone: String,
    pub idempotency_key: Option<String>,
    /// Where a phone number without a country code belongs; None: the slot's store decides.
    pub region: Option<phonenumber::country::Id>,
    /// Set for bookings by anonymous customers (the public page): the caps that apply.
    pub public: Option<PublicCaps>,
}

/// What one anonymous customer may hold in one store: active future bookings per phone number
/// and per client address.
#[derive(Debug, Clone)]
pub struct PublicCaps {
    pub store_id: StoreId,
    pub client_ip: String,
    pub per_phone: i64,
    pub per_address: i64,
}

fn refusal(code: &'static str, message: String, slot: &Slot) -> DomainError {
    refusal_of(
        code,
        message,
        slot.id,
        slot.remaining(),
        slot.status.as_str(),
    )
}

fn refusal_of(
    code: &'static str,
    message: String,
    slot_id: i64,
    remaining: i64,
    status: &str,
) -> DomainError {
    DomainError::conflict(
        code,
        message,
        serde_json::json!({ "slot_id": slot_id, "remaining": remaining, "status": status }),
    )
}

/// A booking made (or found again, for a repeat) and the slot it is in, as read before booking:
/// its service and times, for the answer (its count is from before the booking).
#[derive(Debug, Clone)]
pub struct Booked {
    pub booking: Booking,
    pub slot: Slot,
}

/// Books `places` of a slot of the merchant. Refusals: slot_full, slot_closed, slot_started,
/// already_booked (with the existing reference); an unknown slot is not found. A repeated
/// idempotency key returns the first booking.
pub async fn book(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: BookInput,
) -> DomainResult<Booked> {
    crate::domain::kernel::error::observed("book", book_inner(db, actor, merchant_id, input)).await
}

async fn book_inner(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: BookInput,
) -> DomainResult<Booked> {
    let mut errs = validate::Errors::default();
    let name = errs.take(customer_name(&input.name));
    // The slot is read here only when the phone's region or the party size needs it; otherwise
    // not before the gate, which answers a full slot without touching SQL, nor before the group,
    // which reads it once for all its bookings.
    let local_phone = input.region.is_none() && !input.phone.trim_start().starts_with('+');
    let read = if local_phone || input.places != 1 {
        slots::for_booking(db, merchant_id, input.slot_id).await?
    } else {
        None
    };
    let region = match input.region {
        Some(r) => Some(r),
        // An unknown slot has no region: the phone is refused with the other fields.
        None => read.as_ref().and_then(slots::BookingSlot::phone_region),
    };
    let phone = errs.take(phone(&input.phone, region));
    let places = errs.take(party(read.as_ref(), input.places)?);
    let key = match input
        .idempotency_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        Some(k) => errs
            .take(crate::domain::kernel::validate::idempotency_key(k).map(|k| Some(k.to_string())))
            .flatten(),
        None => None,
    };
    // Public bookings have a key space of their own: an API client cannot name one of theirs.
    let key = match (key, &input.public) {
        (Some(k), Some(_)) => Some(public_key(&k)),
        (Some(k), None) if k.starts_with(PUBLIC_KEY_PREFIX) => {
            errs.push(FieldError::new(
                "idempotency_key",
                "invalid_idempotency_key",
                messages::reserved_key(PUBLIC_KEY_PREFIX),
            ));
            None
        }
        (k, _) => k,
    };
    // Every field that failed left its error and a None: go on only when all parsed.
    let (Some(name), Some((phone_shown, customer_key)), Some(places), true) =
        (name, phone, places, errs.is_empty())
    else {
        return Err(errs.refusal());
    };
    // A customer booking online gives the service its notice; staff and order systems decide
    // for themselves.
    if input.public.is_some() {
        if let Some(e) = within_notice(db, merchant_id, input.slot_id).await? {
            return Err(e);
        }
    }

    // The Redis gate first, when on: a full or started slot is answered without touching SQL.
    let mut took_gate = false;
    if let Some(g) = gate::active(db) {
        match gate::slot_take(
            db,
            g,
            merchant_id,
            input.slot_id,
            &customer_key,
            key.as_deref(),
            places,
        )
        .await?
        {
            Some((SlotAnswer::Full, remaining)) => {
                crate::telemetry::count_gate("book", "no");
                return Err(refusal_of(
                    "slot_full",
                    full_message(remaining, places),
                    input.slot_id,
                    remaining,
                    "OPEN",
                ));
            }
            Some((SlotAnswer::Started, remaining)) => {
                crate::telemetry::count_gate("book", "no");
                return Err(refusal_of(
                    "slot_started",
                    messages::slot_started(),
                    input.slot_id,
                    remaining,
                    "OPEN",
                ));
            }
            Some((SlotAnswer::Booked, _)) => {
                crate::telemetry::count_gate("book", "yes");
                took_gate = true;
            }
            Some((SlotAnswer::Seen, _)) => {
                crate::telemetry::count_gate("book", "bypass");
                await_twin(
                    db,
                    g,
                    merchant_id,
                    input.slot_id,
                    &customer_key,
                    key.as_deref(),
                )
                .await?;
            }
            // Closed, or Redis unavailable: SQL gives the full answer.
            _ => crate::telemetry::count_gate("book", "bypass"),
        }
    }
    let customer = Customer {
        name: &name,
        phone_shown: &phone_shown,
        key: &customer_key,
        places,
    };
    let r = book_in_sql(
        db,
        actor,
        (merchant_id, input.slot_id),
        read.map(|r| r.slot),
        customer,
        key.as_deref(),
        input.public.as_ref(),
    )
    .await;
    // Booked by SQL alone (Redis said "seen" or "closed", or was unavailable): Redis takes the
    // place too. SQL did not take the place the gate gave (a repeat, a refusal, an error): it
    // goes back.
    let give_back = match &r {
        Ok((_, true)) if !took_gate => Some(false),
        Ok((_, true)) => None,
        _ => took_gate.then_some(true),
    };
    if let Some(give_back) = give_back {
        gate::slot_follow(
            db,
            merchant_id,
            input.slot_id,
            &customer_key,
            key.as_deref(),
            give_back,
            places,
        )
        .await
    }
    r.map(|(b, _)| b)
}

/// How long after its twin's take in Redis a booking answered "seen" waits for the twin's
/// outcome before SQL hears it.
const TWIN_WAIT_MS: i64 = 3_000;

/// Waits, when Redis answered "seen", until the twin that took the places there (same customer
/// or same key, on any instance) is booked in SQL or has given its places back. Were this request
/// booked in SQL first, the twin would be refused there and Redis would go on counting the
/// twin's places until it gave them back: a party of two counted for a party of one, and other
/// buyers told "full" with a place left. After the wait SQL answers this one as it would have
/// after the twin: `already_booked`, the first booking for a repeat, or a booking of its own.
/// The wait ends `TWIN_WAIT_MS` after the twin's take: a mark left without a booking (a request
/// cut off between Redis and SQL) delays its customer's next try for that long at most, and an
/// older mark not at all. A twin slower than that in SQL can still lose to this one.
pub(crate) async fn await_twin(
    db: &Db,
    g: &Arc<crate::infra::counters::Gate>,
    merchant_id: MerchantId,
    slot_id: i64,
    customer_key: &str,
    key: Option<&str>,
) -> DomainResult<()> {
    // The mark's time is another instance's clock: this one's own bound caps the wait too.
    let until = std::time::Instant::now() + std::time::Duration::from_millis(TWIN_WAIT_MS as u64);
    let mut pause = 10;
    loop {
        let booked = match key {
            Some(k) => by_key(db, merchant_id, k).await?.is_some(),
            None => false,
        } || active_for_customer(db, slot_id, customer_key)
            .await?
            .is_some();
        if booked {
            return Ok(());
        }
        match gate::slot_marked_at(g, merchant_id, slot_id, customer_key, key).await {
            Some(at) if db.now_ms() < at.saturating_add(TWIN_WAIT_MS) => {}
            _ => return Ok(()),
        }
        if std::time::Instant::now() >= until {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        pause = (pause * 2).min(80);
    }
}

/// A refusal when the slot starts sooner than its service's minimum notice (`too_late_to_book`).
async fn within_notice(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
) -> DomainResult<Option<DomainError>> {
    let row: Option<(i64, i64)> = sqlx::query_as(
        "SELECT s.starts_at, k.min_notice_minutes FROM slots s JOIN skus k ON k.id = s.sku_id WHERE s.id = $1 AND s.merchant_id = $2",
    )
    .bind(slot_id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?;
    let Some((starts_at, notice)) = row else {
        return Err(DomainError::NotFound("slot"));
    };
    let now = db.now_ms();
    Ok(
        (notice > 0 && starts_at > now && starts_at - now < notice * 60_000).then(|| {
            DomainError::conflict(
                "too_late_to_book",
                messages::too_late_to_book(notice),
                serde_json::json!({ "slot_id": slot_id, "notice_minutes": notice }),
            )
        }),
    )
}

/// Until when a customer may cancel or reschedule this booking themselves: its slot's start less
/// the service's change cutoff (staff can cancel until the start). Unix ms.
pub async fn change_deadline(db: &Db, b: &Booking) -> DomainResult<i64> {
    let (starts_at, cutoff): (i64, i64) = sqlx::query_as(
        "SELECT s.starts_at, k.change_cutoff_minutes FROM slots s JOIN skus k ON k.id = s.sku_id WHERE s.id = $1",
    )
    .bind(b.slot_id)
    .fetch_one(&db.pool)
    .await?;
    Ok(starts_at - cutoff * 60_000)
}

/// Refuses a customer's own change (cancel, reschedule) past the deadline (`change_closed`).
/// A booking no longer live is left to the change itself (a repeated cancel is harmless).
pub async fn customer_may_change(db: &Db, b: &Booking) -> DomainResult<()> {
    if b.status != BookingStatus::Booked || db.now_ms() < change_deadline(db, b).await? {
        return Ok(());
    }
    Err(DomainError::conflict(
        "change_closed",
        messages::change_closed(),
        serde_json::json!({ "reference": b.reference }),
    ))
}

/// The places a booking asks for, checked against the service's party size (`max_places`) in
/// the slot read for it. One place needs no look-up: every service takes at least one, so the
/// hot path reads nothing for it.
fn party(read: Option<&slots::BookingSlot>, places: i64) -> DomainResult<Result<i64, FieldError>> {
    if places == 1 {
        return Ok(Ok(1));
    }
    let slot = read.ok_or(DomainError::NotFound("slot"))?;
    Ok(party_size(places, slot.max_places))
}

/// `places` within 1..=`max`, or the field's refusal naming the most one booking may take.
pub fn party_size(places: i64, max: i64) -> Result<i64, FieldError> {
    if (1..=max).contains(&places) {
        Ok(places)
    } else {
        Err(FieldError::new(
            "places",
            "invalid_places",
            messages::bad_party_size(max),
        ))
    }
}

/// "Full", or, for a party larger than what is left, how many places are left.
fn full_message(remaining: i64, places: i64) -> String {
    if remaining > 0 && places > remaining {
        messages::not_enough_places(remaining)
    } else {
        messages::slot_full()
    }
}

/// Who books, once their input is checked: the name, the phone as shown, and the phone's E.164
/// key that identifies the customer.
struct Customer<'a> {
    name: &'a str,
    phone_shown: &'a str,
    key: &'a str,
    /// The places the booking takes.
    places: i64,
}

/// The SQL side of a booking, with the slot when the caller read it already. Returns the booking
/// and whether this call created it.
async fn book_in_sql(
    db: &Db,
    actor: &Actor,
    (merchant_id, slot_id): (MerchantId, i64),
    read: Option<Slot>,
    customer: Customer<'_>,
    key: Option<&str>,
    public: Option<&PublicCaps>,
) -> DomainResult<(Booked, bool)> {
    let Customer {
        name,
        phone_shown,
        key: customer_key,
        places,
    } = customer;
    let now = db.now_ms();
    let room = |slot: &Slot, now: i64| {
        slot.status == SlotStatus::Open
            && slot.booked + places <= slot.capacity
            && !slot.started(now)
    };

    // An order system's booking joins the others of its slot in one transaction
    // (`domain::kernel::groups`), which reads the slot once for all of them, tells repeats and customers
    // already booked by its unique indexes and leaves them to the checks below. A public booking
    // counts its customer's caps under their lock, alone. A slot this booking read already and
    // found without room goes straight to those checks.
    if public.is_none() && db.caches.booked.on() && read.as_ref().is_none_or(|s| room(s, now)) {
        let line = BookLine {
            actor: actor.clone(),
            name: name.to_string(),
            phone_shown: phone_shown.to_string(),
            customer_key: customer_key.to_string(),
            key: key.map(str::to_string),
            places,
            now,
            lang: crate::i18n::current(),
        };
        let joined = db
            .caches
            .booked
            .join(
                db,
                |db| &db.caches.booked,
                book_group,
                (merchant_id, slot_id),
                line,
            )
            .await;
        if let Some(Err(refused)) = joined {
            return Err(refused);
        }
        if let Some(Ok(GroupBooked {
            id,
            reference,
            slot,
        })) = joined
        {
            // Just committed as written: its row, without reading it back.
            let booking = Booking {
                id,
                merchant_id,
                slot_id: slot.id,
                reference,
                customer_name: name.to_string(),
                customer_phone: phone_shown.to_string(),
                customer_key: customer_key.to_string(),
                status: BookingStatus::Booked,
                cancel_reason: None,
                created_at: now,
                order_id: None,
                places,
                moved_from_slot_id: None,
                from_waitlist: 0,
                hold_until: None,
            };
            let slot = Arc::unwrap_or_clone(slot);
            return Ok((Booked { booking, slot }, true));
        }
    }
    let slot = match read {
        Some(slot) => slot,
        None => slots::get(db, Scope::Merchant(merchant_id), slot_id).await?,
    };
    // The group took its time: what follows is decided at its own instant.
    let now = db.now_ms();
    let room = room(&slot, now);

    // A repeated submit (double click, retry on a weak network) gets the first booking back, if it
    // is the same request: a key belongs to one slot and one customer.
    if let Some(k) = key {
        if let Some(b) = by_key(db, merchant_id, k).await? {
            return same_request(b, slot.id, customer_key, places)
                .map(|booking| (Booked { booking, slot }, false));
        }
    }
    if let Some(existing) = active_for_customer(db, slot.id, customer_key).await? {
        return Err(already_booked(&existing));
    }

    // A slot already seen full, closed or started is refused from that read: the write transaction
    // below would only take it back out.
    if !room {
        return Err(refused(db, merchant_id, &slot, now, places).await?);
    }
    let mut tx = db.begin_write().await?;
    if let Some(caps) = public {
        if let Err(e) = within_caps(&mut tx, caps, customer_key, now).await {
            tx.rollback().await?;
            return Err(e);
        }
    }
    // The booking and its audit row go in before the slot's UPDATE: that UPDATE locks the slot row
    // until COMMIT, and on a hot slot every statement after it is time all its other customers
    // wait. If the slot then refuses, the rollback takes them back out.
    let reference = new_reference();
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO bookings (merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status, idempotency_key, source, created_at, updated_at, client_ip, places)
         VALUES ($1, $2, $3, $4, $5, $6, 'BOOKED', $7, $8, $9, $9, $10, $11) RETURNING id",
    )
    .bind(merchant_id)
    .bind(slot.id)
    .bind(&reference)
    .bind(name)
    .bind(phone_shown)
    .bind(customer_key)
    .bind(key)
    .bind(&actor.source)
    .bind(now)
    .bind(public.map(|p| p.client_ip.as_str()))
    .bind(places)
    .fetch_one(&mut *tx)
    .await;
    match inserted {
        Ok(_) => {}
        Err(e) if is_unique_violation(&e) => {
            // A concurrent twin won (same key or same customer).
            tx.rollback().await?;
            if let Some(k) = key {
                if let Some(b) = by_key(db, merchant_id, k).await? {
                    return same_request(b, slot.id, customer_key, places)
                        .map(|booking| (Booked { booking, slot }, false));
                }
            }
            return match active_for_customer(db, slot.id, customer_key).await? {
                Some(existing) => Err(already_booked(&existing)),
                None => Err(DomainError::Internal(
                    "booking insert conflicted with nothing".into(),
                )),
            };
        }
        Err(e) => return Err(e.into()),
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "booking.create",
        &format!("booking:{reference}"),
        &format!("slot:{}", slot.id),
    )
    .await?;
    booking_event(
        &mut tx,
        db.now_ms(),
        merchant_id,
        EventType::BookingBooked,
        &reference,
        slot.id,
        (None, "BOOKED"),
        places,
    )
    .await?;
    if !take_places(&mut tx, merchant_id, slot.id, places, now).await? {
        tx.rollback().await?;
        let slot = slots::get(db, Scope::Merchant(merchant_id), slot.id).await?;
        return Err(refused(db, merchant_id, &slot, now, places).await?);
    }
    tx.commit().await?;
    let booking = by_reference(db, Scope::Merchant(merchant_id), &reference).await?;
    Ok((Booked { booking, slot }, true))
}

/// The groups of bookings, by (merchant, slot).
pub type BookGroups = crate::domain::kernel::groups::Groups<
    (MerchantId, i64),
    BookLine,
    Result<GroupBooked, DomainError>,
>;

/// What a group made of a booking: its id and reference, and the slot as the group read it
/// (shared by the group's bookings) for the answer.
#[derive(Clone)]
pub struct GroupBooked {
    id: i64,
    reference: String,
    slot: Arc<Slot>,
}

impl crate::domain::kernel::groups::Outcome for Result<GroupBooked, DomainError> {
    fn made(&self) -> bool {
        self.is_ok()
    }
}

/// One booking of a group: what its transaction writes.
#[derive(Clone)]
pub struct BookLine {
    actor: Actor,
    name: String,
    phone_shown: String,
    customer_key: String,
    key: Option<String>,
    places: i64,
    now: i64,
    /// The language of the request: a refusal the group gives is written in it.
    lang: crate::i18n::Lang,
}

fn book_group(
    db: Db,
    (merchant_id, slot_id): (MerchantId, i64),
    lines: Vec<BookLine>,
) -> crate::domain::kernel::groups::Answers<Result<GroupBooked, DomainError>> {
    Box::pin(async move {
        let made = match book_together(&db, merchant_id, slot_id, &lines).await {
            Ok(Together::Short { written }) => {
                fit_together(&db, merchant_id, slot_id, &lines, &written).await
            }
            Ok(Together::Answered(answers)) => Ok(answers),
            Err(e) => Err(e),
        };
        made.unwrap_or_else(|e| {
            tracing::warn!(error = %e, bookings = lines.len(), "a group of bookings rolled back; each is made alone");
            Vec::new()
        })
    })
}

/// Each booking's answer from a group (None: made alone).
type GroupAnswers = Vec<Option<Result<GroupBooked, DomainError>>>;

/// How a group's transaction ended.
enum Together {
    Answered(GroupAnswers),
    /// The slot could not take the group's places: nothing was written. The bookings it would
    /// have written (the others are repeats or customers booked already), by index.
    Short {
        written: Vec<usize>,
    },
}

/// Looks at the slot, the first included, at most this many times after a group's places did
/// not fit.
const FIT_TRIES: usize = 4;

/// After a group's places did not fit: the slot as it is now decides. Alone, in arrival order,
/// each booking that fits what is left would be made and each that does not refused; so those
/// that fit are made together once more, and the others are refused together once a look at the
/// slot has no room for any of them. A slot with no room even for the smallest refuses them at
/// once. When the bookings that fitted do not fit any more (another group, of this instance or
/// another, took the places meanwhile: at a sell-out the usual case), the slot is looked at again,
/// up to `FIT_TRIES` looks in all; made alone instead, every one of them would queue on the slot's
/// row for its own answer (that queue was the hot slot's p99). What is still undecided then goes
/// alone, and so does everything when the UPDATE was refused for another reason than places (a
/// freeze, the sale window: every booking fits the look, or the places it asked are still there).
async fn fit_together(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    lines: &[BookLine],
    written: &[usize],
) -> Result<GroupAnswers, sqlx::Error> {
    let mut answers: GroupAnswers = (0..lines.len()).map(|_| None).collect();
    // Only the bookings the first try wrote are decided here: one it left out (a twin of another
    // in the group, by key or customer) is made alone, after its twin.
    let mut pending: Vec<usize> = written.to_vec();
    // The places a try just now asked for and did not get.
    let mut missed: Option<i64> = None;
    for look in 0..FIT_TRIES {
        if pending.is_empty() {
            break;
        }
        match fit_once(
            db,
            merchant_id,
            slot_id,
            lines,
            &mut pending,
            &mut answers,
            missed,
        )
        .await
        {
            Ok(Fit::Again(asked)) => missed = asked,
            Ok(Fit::Done) => break,
            // Nothing committed yet: the caller makes every booking alone.
            Err(e) if answers.iter().all(Option::is_none) => return Err(e),
            Err(e) => {
                // Some are booked already and must hear so: the rest go alone.
                tracing::warn!(error = %e, look, "a group's later look failed; the rest are made alone");
                break;
            }
        }
    }
    Ok(answers)
}

/// What one look at the slot came to.
enum Fit {
    /// Decided what it could; look again (`Some`: the places a try asked and did not get).
    Again(Option<i64>),
    /// Nothing more to decide together: what is pending goes alone.
    Done,
}

/// One look of `fit_together`: refuses every pending booking when none fits, else books together
/// those that fit, in arrival order. Decided bookings leave `pending` with their answer.
async fn fit_once(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    lines: &[BookLine],
    pending: &mut Vec<usize>,
    answers: &mut GroupAnswers,
    missed: Option<i64>,
) -> Result<Fit, sqlx::Error> {
    let slot = match slots::get(db, Scope::Merchant(merchant_id), slot_id).await {
        Ok(slot) => slot,
        Err(DomainError::Db(e)) => return Err(e),
        Err(_) => return Ok(Fit::Done),
    };
    let shut = slot.status != SlotStatus::Open || slot.started(db.now_ms());
    let mut left = slot.remaining();
    let smallest = pending.iter().map(|&i| lines[i].places).min().unwrap_or(1);
    if shut || smallest > left {
        let those: Vec<BookLine> = pending.iter().map(|&i| lines[i].clone()).collect();
        let refused = refuse_together(db, merchant_id, &slot, &those).await?;
        for (&i, a) in pending.iter().zip(refused) {
            answers[i] = a;
        }
        pending.clear();
        return Ok(Fit::Done);
    }
    if slot.frozen_finding_id.is_some() || missed.is_some_and(|asked| asked <= left) {
        // Not for want of places: alone, each hears why.
        return Ok(Fit::Done);
    }
    let mut taken = Vec::new();
    for &i in pending.iter() {
        if lines[i].places <= left {
            left -= lines[i].places;
            taken.push(i);
        }
    }
    if taken.len() == pending.len() {
        // Every booking fits: on the first look, the UPDATE refused for another reason (the sale
        // window), which each hears alone; later, places came back (a cancel), and alone each is
        // made.
        return Ok(Fit::Done);
    }
    let subset: Vec<BookLine> = taken.iter().map(|&i| lines[i].clone()).collect();
    match book_together(db, merchant_id, slot_id, &subset).await? {
        Together::Answered(mut made) => {
            made.resize_with(subset.len(), || None);
            for (&i, a) in taken.iter().zip(made) {
                answers[i] = a;
            }
            // The others did not fit what was left before those were made: the next look
            // refuses those that still do not fit.
            pending.retain(|i| !taken.contains(i));
            Ok(Fit::Again(None))
        }
        Together::Short { written: wrote } => {
            // Taken meanwhile, most likely (the next look tells). Those the try did not write
            // (known by now: a repeat) go alone.
            let unwritten: Vec<usize> = (0..subset.len())
                .filter(|k| !wrote.contains(k))
                .map(|k| taken[k])
                .collect();
            pending.retain(|i| !unwritten.contains(i));
            let asked = wrote.iter().map(|&k| subset[k].places).sum();
            Ok(Fit::Again(Some(asked)))
        }
    }
}

/// A group's transaction: one read of the slot, then the bookings (one INSERT, their audit rows
/// and events with them on PostgreSQL), one conditional update of the slot for their places, one
/// COMMIT. A booking a unique index refuses (its key used, its customer booked, twice in the
/// group) is left out, to be answered alone; when the slot is unknown or cannot take the
/// bookings, nothing is written and each is made alone. A slot that has no room for the smallest
/// booking refuses the group at once (`refuse_together`).
async fn book_together(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    lines: &[BookLine],
) -> Result<Together, sqlx::Error> {
    use crate::infra::db::{json_rows, Dialect};
    use serde_json::{json, Value};
    // Before any write lock, as each booking alone reads it first. The conditional UPDATE below
    // still decides.
    let slot = match slots::get(db, Scope::Merchant(merchant_id), slot_id).await {
        Ok(slot) => Arc::new(slot),
        Err(DomainError::Db(e)) => return Err(e),
        Err(_) => return Ok(Together::Answered(Vec::new())),
    };
    let smallest = lines.iter().map(|l| l.places).min().unwrap_or(1);
    let first = lines
        .iter()
        .map(|l| l.now)
        .min()
        .unwrap_or_else(|| db.now_ms());
    if slot.status != SlotStatus::Open
        || slot.booked + smallest > slot.capacity
        || slot.started(first)
    {
        return Ok(Together::Answered(
            refuse_together(db, merchant_id, &slot, lines).await?,
        ));
    }
    let references: Vec<String> = lines.iter().map(|_| new_reference()).collect();
    // Written in the order of their customers (and keys): two groups of the slot in flight then
    // wait for each other's rows in one order, never in a circle (a deadlock, which PostgreSQL breaks
    // only after a second).
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| {
        (&lines[a].customer_key, &lines[a].key).cmp(&(&lines[b].customer_key, &lines[b].key))
    });
    let rows: Vec<Value> = order
        .iter()
        .map(|&i| (&lines[i], &references[i]))
        .map(|(l, reference)| {
            let data =
                json!({"before": null, "after": "BOOKED", "slot_id": slot_id, "places": l.places});
            json!({"reference": reference, "name": l.name, "phone": l.phone_shown,
                "customer_key": l.customer_key, "idempotency_key": l.key, "source": l.actor.source,
                "at": l.now, "places": l.places, "actor": l.actor.label, "ip": l.actor.ip,
                "sku_id": slot.sku_id, "data": data.to_string()})
        })
        .collect();
    let cols = [
        ("reference", "text"),
        ("name", "text"),
        ("phone", "text"),
        ("customer_key", "text"),
        ("idempotency_key", "text"),
        ("source", "text"),
        ("at", "bigint"),
        ("places", "bigint"),
        ("actor", "text"),
        ("ip", "text"),
        ("sku_id", "bigint"),
        ("data", "text"),
    ];
    let x = json_rows(db.dialect, 3, &cols);
    let insert = format!(
        "INSERT INTO bookings (merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status,
            idempotency_key, source, created_at, updated_at, places)
         SELECT $1, $2, x.reference, x.name, x.phone, x.customer_key, 'BOOKED', x.idempotency_key, x.source, x.at,
            x.at, x.places FROM {x} WHERE true
         ON CONFLICT DO NOTHING RETURNING id, reference"
    );
    let audit = "INSERT INTO audit_log (merchant_id, actor, action, subject, detail, source, ip, at)
         SELECT $1, x.actor, 'booking.create', 'booking:' || x.reference, 'slot:' || CAST($2 AS TEXT), x.source, x.ip, x.at";
    let events = "INSERT INTO events (merchant_id, type, subject_kind, subject_id, sku_id, data, occurred_at)
         SELECT $1, $4, 'booking', x.reference, x.sku_id, x.data, x.at";
    let mut tx = db.begin_write().await?;
    let booked: Vec<(i64, String)> = if db.dialect == Dialect::Postgres {
        // One statement for the rows that do not depend on the slot's count.
        sqlx::query_as(&format!(
            "WITH x AS (SELECT * FROM {x}),
             b AS ({}),
             a AS ({audit} FROM x JOIN b USING (reference)),
             e AS ({events} FROM x JOIN b USING (reference))
             SELECT id, reference FROM b",
            insert.replace(&format!("FROM {x} WHERE true"), "FROM x WHERE true")
        ))
        .bind(merchant_id)
        .bind(slot_id)
        .bind(Value::Array(rows).to_string())
        .bind(EventType::BookingBooked.as_str())
        .fetch_all(&mut *tx)
        .await?
    } else {
        let booked: Vec<(i64, String)> = sqlx::query_as(&insert)
            .bind(merchant_id)
            .bind(slot_id)
            .bind(serde_json::to_string(&rows).unwrap_or_default())
            .fetch_all(&mut *tx)
            .await?;
        // SQLite writes one transaction at a time: the audit rows and events follow in their own
        // statements, for the bookings written (by their reference).
        let kept: Vec<&Value> = rows
            .iter()
            .filter(|v| {
                booked
                    .iter()
                    .any(|(_, r)| v["reference"].as_str() == Some(r))
            })
            .collect();
        let kept = serde_json::to_string(&kept).unwrap_or_default();
        sqlx::query(&format!("{audit} FROM {x}"))
            .bind(merchant_id)
            .bind(slot_id)
            .bind(&kept)
            .execute(&mut *tx)
            .await?;
        sqlx::query(&format!("{events} FROM {x}"))
            .bind(merchant_id)
            .bind(slot_id)
            .bind(&kept)
            .bind(EventType::BookingBooked.as_str())
            .execute(&mut *tx)
            .await?;
        booked
    };
    let ids: std::collections::HashMap<&str, i64> =
        booked.iter().map(|(id, r)| (r.as_str(), *id)).collect();
    let sum: i64 = lines
        .iter()
        .zip(&references)
        .filter(|(_, r)| ids.contains_key(r.as_str()))
        .map(|(l, _)| l.places)
        .sum();
    if sum == 0 {
        return Ok(Together::Answered(Vec::new()));
    }
    // The slot must be open to every booking of the group at its own instant: not started at the
    // latest, on sale at the earliest and at the latest (a sale opening or closing in between sends
    // the group alone).
    let last = lines.iter().map(|l| l.now).max().unwrap_or(first);
    let took = sqlx::query(&format!(
        "UPDATE slots SET booked = booked + $4, updated_at = $1
         WHERE id = $2 AND merchant_id = $3 AND status = 'OPEN' AND booked + $4 <= capacity AND starts_at > $1
           AND frozen_finding_id IS NULL AND {} AND {}",
        crate::domain::catalog::sale::on_sale_sql("slots.sku_id", "$1"),
        crate::domain::catalog::sale::on_sale_sql("slots.sku_id", "$5")
    ))
    .bind(last)
    .bind(slot_id)
    .bind(merchant_id)
    .bind(sum)
    .bind(first)
    .execute(&mut *tx)
    .await?;
    if took.rows_affected() != 1 {
        tx.rollback().await?;
        let written = references
            .iter()
            .enumerate()
            .filter(|(_, r)| ids.contains_key(r.as_str()))
            .map(|(i, _)| i)
            .collect();
        return Ok(Together::Short { written });
    }
    tx.commit().await?;
    Ok(Together::Answered(
        references
            .into_iter()
            .map(|reference| {
                ids.get(reference.as_str()).map(|&id| {
                    Ok(GroupBooked {
                        id,
                        reference,
                        slot: slot.clone(),
                    })
                })
            })
            .collect(),
    ))
}

/// A group on a slot seen without room for any of its bookings, closed or started (before any
/// write): each booking hears the refusal it would have heard alone, from one look-up for the
/// whole group. Only a repeat (its key used) or a customer already booked in the slot goes
/// alone, to be answered with that booking; alone, those are asked before the slot's refusal.
async fn refuse_together(
    db: &Db,
    merchant_id: MerchantId,
    slot: &Slot,
    lines: &[BookLine],
) -> Result<GroupAnswers, sqlx::Error> {
    use crate::infra::db::json_rows;
    use serde_json::{json, Value};
    let asked: Vec<Value> = lines
        .iter()
        .map(|l| json!({"customer_key": l.customer_key, "idempotency_key": l.key}))
        .collect();
    let known: Vec<(Option<String>, String)> = sqlx::query_as(&format!(
        "SELECT b.idempotency_key, b.customer_key FROM bookings b
         WHERE b.merchant_id = $1 AND (b.idempotency_key IN (SELECT x.idempotency_key FROM {x})
            OR (b.slot_id = $3 AND b.status <> 'CANCELLED'
                AND b.customer_key IN (SELECT x.customer_key FROM {x})))",
        x = json_rows(
            db.dialect,
            2,
            &[("customer_key", "text"), ("idempotency_key", "text")]
        )
    ))
    .bind(merchant_id)
    .bind(Value::Array(asked).to_string())
    .bind(slot.id)
    .fetch_all(&db.pool)
    .await?;
    let alone = |l: &BookLine| {
        known
            .iter()
            .any(|(key, customer)| (key.is_some() && *key == l.key) || *customer == l.customer_key)
    };
    // The refusal names what is left against each booking's party, in its request's language:
    // one per party size and language.
    let now = db.now_ms();
    let mut by_places = std::collections::HashMap::new();
    let mut answers = Vec::with_capacity(lines.len());
    for l in lines {
        if alone(l) {
            answers.push(None);
            continue;
        }
        let (code, message, details) = match by_places.get(&(l.places, l.lang)) {
            Some(why) => why,
            None => match crate::i18n::scope(l.lang, refused(db, merchant_id, slot, now, l.places))
                .await
            {
                Ok(DomainError::Conflict {
                    code,
                    message,
                    details,
                }) => by_places
                    .entry((l.places, l.lang))
                    .or_insert((code, message, details)),
                Err(DomainError::Db(e)) => return Err(e),
                // Anything else: each alone says it.
                _ => return Ok(Vec::new()),
            },
        };
        answers.push(Some(Err(DomainError::conflict(
            code,
            message.clone(),
            details.clone(),
        ))));
    }
    Ok(answers)
}

/// Takes `places` of a slot in a booking's transaction, or says no: the one conditional update
/// every booking goes through. The service must be on sale too (product online, in its sale
/// window, priced): the same rules as its verdict, decided by the same statement.
async fn take_places(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    merchant_id: MerchantId,
    slot_id: i64,
    places: i64,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let took = sqlx::query(&format!(
        "UPDATE slots SET booked = booked + $4, updated_at = $1
         WHERE id = $2 AND merchant_id = $3 AND status = 'OPEN' AND booked + $4 <= capacity AND starts_at > $1
           AND frozen_finding_id IS NULL AND {}",
        crate::domain::catalog::sale::on_sale_sql("slots.sku_id", "$1")
    ))
    .bind(now)
    .bind(slot_id)
    .bind(merchant_id)
    .bind(places)
    .execute(&mut **tx)
    .await?;
    Ok(took.rows_affected() == 1)
}

/// Gives a cancelled booking's places back to its slot, in the cancel's transaction.
async fn free_places(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    slot_id: i64,
    places: i64,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE slots SET booked = booked - $3, updated_at = $1 WHERE id = $2 AND booked >= $3",
    )
    .bind(now)
    .bind(slot_id)
    .bind(places)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A place an order books (a goods-and-slot order): its slot and its customer, checked.
#[derive(Debug, Clone)]
pub struct OrderPlace {
    pub slot_id: i64,
    /// The places it takes (a party).
    pub places: i64,
    pub name: String,
    pub phone_shown: String,
    pub customer_key: String,
}

/// Why an order's place could not be booked; the caller rolls back, then asks `place_refusal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceRefused {
    /// The customer already holds a place in that slot.
    AlreadyBooked,
    /// Full, closed, started, frozen or off sale.
    Unavailable,
}

/// Books an order's place inside the order's transaction: the booking (carrying the order) and the
/// slot's conditional update, or a refusal after which the transaction must be rolled back (on
/// PostgreSQL a refused insert has already aborted it). Returns the booking's reference.
pub async fn book_for_order(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    merchant_id: MerchantId,
    reservation_id: i64,
    place: &OrderPlace,
    now: i64,
) -> DomainResult<Result<String, PlaceRefused>> {
    let origin = Origin::Order(reservation_id);
    Ok(book_place(tx, actor, merchant_id, place, now, origin)
        .await?
        .map(|(_, reference)| reference))
}

/// Books a waiting customer's places inside the waiting list's transaction, like an order's place:
/// the booking says it came from the list. With `hold_until` the places are only held for the
/// customer until then (an offer they accept or let lapse). Returns the booking's id and reference.
pub async fn book_from_waitlist(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    merchant_id: MerchantId,
    place: &OrderPlace,
    now: i64,
    hold_until: Option<i64>,
) -> DomainResult<Result<(i64, String), PlaceRefused>> {
    book_place(
        tx,
        actor,
        merchant_id,
        place,
        now,
        Origin::Waitlist { hold_until },
    )
    .await
}

/// Where a booking made inside another change's transaction comes from.
#[derive(Clone, Copy)]
enum Origin {
    /// An order's place line (the reservation's id).
    Order(i64),
    /// The waiting list, booking outright (None) or holding the places until an instant.
    Waitlist { hold_until: Option<i64> },
}

async fn book_place(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    merchant_id: MerchantId,
    place: &OrderPlace,
    now: i64,
    origin: Origin,
) -> DomainResult<Result<(i64, String), PlaceRefused>> {
    let (reservation_id, from_waitlist, hold_until) = match origin {
        Origin::Order(id) => (Some(id), 0, None),
        Origin::Waitlist { hold_until } => (None, 1, hold_until),
    };
    let reference = new_reference();
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO bookings (merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status,
            source, created_at, updated_at, reservation_id, places, from_waitlist, hold_until)
         VALUES ($1, $2, $3, $4, $5, $6, 'BOOKED', $7, $8, $8, $9, $10, $11, $12) RETURNING id",
    )
    .bind(merchant_id)
    .bind(place.slot_id)
    .bind(&reference)
    .bind(&place.name)
    .bind(&place.phone_shown)
    .bind(&place.customer_key)
    .bind(&actor.source)
    .bind(now)
    .bind(reservation_id)
    .bind(place.places)
    .bind(from_waitlist)
    .bind(hold_until)
    .fetch_one(&mut **tx)
    .await;
    let booking_id = match inserted {
        Ok(id) => id,
        Err(e) if is_unique_violation(&e) => return Ok(Err(PlaceRefused::AlreadyBooked)),
        Err(e) => return Err(e.into()),
    };
    if !take_places(tx, merchant_id, place.slot_id, place.places, now).await? {
        return Ok(Err(PlaceRefused::Unavailable));
    }
    crate::domain::trail::audit::record(
        tx,
        now,
        actor,
        Some(merchant_id),
        "booking.create",
        &format!("booking:{reference}"),
        &match origin {
            Origin::Order(_) => format!("slot:{} order", place.slot_id),
            Origin::Waitlist { hold_until: None } => format!("slot:{} waiting list", place.slot_id),
            Origin::Waitlist {
                hold_until: Some(_),
            } => {
                format!("slot:{} waiting list, held", place.slot_id)
            }
        },
    )
    .await?;
    booking_event(
        tx,
        now,
        merchant_id,
        EventType::BookingBooked,
        &reference,
        place.slot_id,
        (None, "BOOKED"),
        place.places,
    )
    .await?;
    Ok(Ok((booking_id, reference)))
}

/// The refusal of an order's place, read after the rollback: the same codes a booking alone gets
/// (`already_booked`, `slot_full`, `slot_closed`, `slot_started` …), naming the line's SKU.
/// An order's place the Redis gate refused (full or started), named by its line like
/// [`place_refusal`], answered without touching SQL. None for any other answer.
pub fn gate_refusal(
    place: &OrderPlace,
    sku: &str,
    answer: &SlotAnswer,
    remaining: i64,
) -> Option<DomainError> {
    let mut e = match answer {
        SlotAnswer::Full => refusal_of(
            "slot_full",
            full_message(remaining, place.places),
            place.slot_id,
            remaining,
            "OPEN",
        ),
        SlotAnswer::Started => refusal_of(
            "slot_started",
            messages::slot_started(),
            place.slot_id,
            remaining,
            "OPEN",
        ),
        _ => return None,
    };
    if let DomainError::Conflict { details, .. } = &mut e {
        details["sku"] = sku.into();
    }
    Some(e)
}

pub async fn place_refusal(
    db: &Db,
    merchant_id: MerchantId,
    place: &OrderPlace,
    sku: &str,
    why: PlaceRefused,
) -> DomainResult<DomainError> {
    let e = match why {
        PlaceRefused::AlreadyBooked => {
            match active_for_customer(db, place.slot_id, &place.customer_key).await? {
                Some(existing) => already_booked(&existing),
                None => slot_refusal(db, merchant_id, place).await?,
            }
        }
        PlaceRefused::Unavailable => slot_refusal(db, merchant_id, place).await?,
    };
    Ok(of_place(e, place, sku))
}

/// The refusal of an order's place on a slot that cannot give it, as [`place_refusal`] asks it
/// (the customer's booking first), or None when that booking is this order's own: the order is
/// being repeated and is answered as it was.
pub async fn order_place_refusal(
    db: &Db,
    merchant_id: MerchantId,
    order: &str,
    place: &OrderPlace,
    sku: &str,
) -> DomainResult<Option<DomainError>> {
    let e = match active_for_customer(db, place.slot_id, &place.customer_key).await? {
        Some(existing) if existing.order_id.as_deref() == Some(order.trim()) => return Ok(None),
        Some(existing) => already_booked(&existing),
        None => slot_refusal(db, merchant_id, place).await?,
    };
    Ok(Some(of_place(e, place, sku)))
}

/// Why a slot cannot give a place, read now.
async fn slot_refusal(
    db: &Db,
    merchant_id: MerchantId,
    place: &OrderPlace,
) -> DomainResult<DomainError> {
    let slot = slots::get(db, Scope::Merchant(merchant_id), place.slot_id).await?;
    refused(db, merchant_id, &slot, db.now_ms(), place.places).await
}

/// A place's refusal names its SKU and slot.
fn of_place(e: DomainError, place: &OrderPlace, sku: &str) -> DomainError {
    match e {
        DomainError::Conflict {
            code,
            message,
            mut details,
        } => {
            details["sku"] = sku.into();
            details["slot_id"] = place.slot_id.into();
            DomainError::Conflict {
                code,
                message,
                details,
            }
        }
        other => other,
    }
}

/// A booking's change event, in the change's transaction.
// The transaction's time stamp came as an eighth argument when the app got its own clock (issue
// 51); the others are what the row says.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn booking_event(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    now: i64,
    merchant_id: MerchantId,
    ty: EventType,
    reference: &str,
    slot_id: i64,
    (before, after): (Option<&str>, &str),
    places: i64,
) -> Result<(), sqlx::Error> {
    crate::domain::trail::events::record_in_slot(
        tx,
        now,
        merchant_id,
        ty,
        "booking",
        reference,
        slot_id,
        serde_json::json!({"before": before, "after": after, "slot_id": slot_id, "places": places}),
    )
    .await
}

/// Cancels the bookings an order made, when the order is released or expires (`reason`: "order
/// released" / "order expired"), inside the order's transaction; each frees its place in the slot
/// count. Returns (slot, customer key, places) of each, for Redis to follow once committed.
pub async fn cancel_for_order(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    reservation_id: i64,
    reason: &str,
    now: i64,
) -> DomainResult<Vec<(i64, String, i64)>> {
    let cancelled: Vec<(i64, String, String, MerchantId, i64)> = sqlx::query_as(
        "UPDATE bookings SET status = 'CANCELLED', cancel_reason = $1, updated_at = $2
         WHERE reservation_id = $3 AND status = 'BOOKED' RETURNING slot_id, customer_key, reference, merchant_id, places",
    )
    .bind(reason)
    .bind(now)
    .bind(reservation_id)
    .fetch_all(&mut **tx)
    .await?;
    for (slot, _, reference, merchant_id, places) in &cancelled {
        booking_event(
            tx,
            now,
            *merchant_id,
            EventType::BookingCancelled,
            reference,
            *slot,
            (Some("BOOKED"), "CANCELLED"),
            *places,
        )
        .await?;
    }
    let cancelled: Vec<(i64, String, i64)> = cancelled
        .into_iter()
        .map(|(s, k, _, _, p)| (s, k, p))
        .collect();
    for (slot, _, places) in &cancelled {
        free_places(tx, *slot, *places, now).await?;
    }
    Ok(cancelled)
}

/// Why a slot will not take a booking now, in the order a customer needs to hear it: the service
/// off sale, the slot frozen, closed, started, or full (for a party: fewer places left than it
/// asks).
async fn refused(
    db: &Db,
    merchant_id: MerchantId,
    slot: &slots::Slot,
    now: i64,
    places: i64,
) -> DomainResult<DomainError> {
    let sku =
        crate::domain::catalog::sku_by_id(db, Scope::Merchant(merchant_id), slot.sku_id).await?;
    if let Some(why) = crate::domain::catalog::sale::not_on_sale_now(db, &sku).await? {
        return Ok(refusal(
            "not_on_sale",
            messages::not_on_sale(&sku.code, &why.message),
            slot,
        ));
    }
    if let Some(finding) = slots::frozen_by(db, slot.id).await? {
        return Ok(refusal("slot_frozen", messages::slot_frozen(finding), slot));
    }
    Ok(if slot.status == SlotStatus::Closed {
        refusal(
            "slot_closed",
            messages::slot_closed(slot.closed_reason.as_deref().unwrap_or("")),
            slot,
        )
    } else if slot.started(now) {
        refusal("slot_started", messages::slot_started(), slot)
    } else {
        refusal("slot_full", full_message(slot.remaining(), places), slot)
    })
}

/// The booking an idempotency key already made, if this request is the one that made it.
fn same_request(
    b: Booking,
    slot_id: i64,
    customer_key: &str,
    places: i64,
) -> DomainResult<Booking> {
    if b.slot_id == slot_id && b.customer_key == customer_key && b.places == places {
        Ok(b)
    } else {
        Err(DomainError::conflict(
            "idempotency_conflict",
            messages::booking_key_conflict(),
            serde_json::Value::Null,
        ))
    }
}

/// Refuses a public booking past the caps. The upserts lock this customer's rows (phone first,
/// then address, always in that order) until the transaction ends, so a second booking of the
/// same customer waits for the first to commit and then counts it: the caps cannot be raced past.
pub(crate) async fn within_caps(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    caps: &PublicCaps,
    customer_key: &str,
    now: i64,
) -> DomainResult<()> {
    let phone_subject = format!("phone:{customer_key}");
    let ip_subject = format!("ip:{}", caps.client_ip);
    for subject in [&phone_subject, &ip_subject] {
        sqlx::query(
            "INSERT INTO booking_locks (store_id, subject, touched_at) VALUES ($1, $2, $3)
             ON CONFLICT (store_id, subject) DO UPDATE SET touched_at = excluded.touched_at",
        )
        .bind(caps.store_id)
        .bind(subject)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    }
    let (by_phone, by_ip): (i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN b.customer_key = $2 THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN b.client_ip = $3 THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM bookings b JOIN slots s ON s.id = b.slot_id
         WHERE s.store_id = $1 AND b.status = 'BOOKED' AND s.starts_at > $4
           AND (b.customer_key = $2 OR b.client_ip = $3)",
    )
    .bind(caps.store_id)
    .bind(customer_key)
    .bind(&caps.client_ip)
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    if by_phone >= caps.per_phone {
        return Err(DomainError::conflict(
            "too_many_bookings",
            messages::too_many_bookings_phone(caps.per_phone),
            serde_json::json!({ "limit": caps.per_phone }),
        ));
    }
    if by_ip >= caps.per_address {
        return Err(DomainError::conflict(
            "too_many_bookings",
            messages::too_many_bookings_address(caps.per_address),
            serde_json::json!({ "limit": caps.per_address }),
        ));
    }
    Ok(())
}

fn already_booked(existing: &Booking) -> DomainError {
    DomainError::conflict(
        "already_booked",
        messages::already_booked(&existing.reference),
        serde_json::json!({ "reference": existing.reference, "slot_id": existing.slot_id }),
    )
}

const PUBLIC_KEY_PREFIX: &str = "public:";

/// The idempotency key a public booking form's token stands for.
pub fn public_key(token_nonce: &str) -> String {
    format!("{PUBLIC_KEY_PREFIX}{token_nonce}")
}

/// Whether an idempotency key has already made a booking.
pub async fn key_used(db: &Db, merchant_id: MerchantId, key: &str) -> DomainResult<bool> {
    Ok(by_key(db, merchant_id, key).await?.is_some())
}

async fn by_key(db: &Db, merchant_id: MerchantId, key: &str) -> DomainResult<Option<Booking>> {
    Ok(sqlx::query_as(&format!(
        "{BOOKING_SELECT} WHERE merchant_id = $1 AND idempotency_key = $2"
    ))
    .bind(merchant_id)
    .bind(key)
    .fetch_optional(&db.pool)
    .await?)
}

async fn active_for_customer(
    db: &Db,
    slot_id: i64,
    customer_key: &str,
) -> DomainResult<Option<Booking>> {
    Ok(sqlx::query_as(&format!(
        "{BOOKING_SELECT} WHERE slot_id = $1 AND customer_key = $2 AND status <> 'CANCELLED'"
    ))
    .bind(slot_id)
    .bind(customer_key)
    .fetch_optional(&db.pool)
    .await?)
}

/// Cancels before the slot starts and frees the place in the same transaction. Cancelling twice
/// is harmless; after the start it is refused (staff record attended or no-show instead).
pub async fn cancel(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    reference: &str,
    reason: Option<&str>,
) -> DomainResult<Booking> {
    crate::domain::kernel::error::observed(
        "cancel",
        cancel_inner(db, actor, scope, reference, reason),
    )
    .await
}

async fn cancel_inner(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    reference: &str,
    reason: Option<&str>,
) -> DomainResult<Booking> {
    let b = by_reference(db, scope, reference).await?;
    let reason = match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => Some(
            validate::name("reason", r, REASON_MAX).map_err(|e| DomainError::Invalid(vec![e]))?,
        ),
        None => None,
    };
    // Redis gives the place back after the commit: the slot loaded before it.
    gate::slot_ensure_loaded(db, b.merchant_id, b.slot_id).await?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let done: Option<(String, Option<String>, i64)> = sqlx::query_as(
        "UPDATE bookings SET status = 'CANCELLED', cancel_reason = $1, updated_at = $2, hold_until = NULL
         WHERE id = $3 AND status = 'BOOKED' AND (SELECT s.starts_at FROM slots s WHERE s.id = bookings.slot_id) > $2
         RETURNING customer_key, idempotency_key, places",
    )
    .bind(reason.as_deref())
    .bind(now)
    .bind(b.id)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some((customer_key, idem, places)) = done {
        free_places(&mut tx, b.slot_id, places, now).await?;
        if b.hold_until.is_some() {
            // A place held for a waiting customer, withdrawn by staff: the offer ends with it,
            // in the same commit, so the customer's page never shows an offer that is gone.
            // (The waiting list is a table of its own; this is the one write bookings makes to
            // it, to keep the two in one transaction.)
            sqlx::query(
                "UPDATE waitlist SET status = 'CANCELLED', updated_at = $1 WHERE booking_id = $2 AND status = 'OFFERED'",
            )
            .bind(now)
            .bind(b.id)
            .execute(&mut *tx)
            .await?;
        }
        crate::domain::trail::audit::record(
            &mut tx,
            db.now_ms(),
            actor,
            Some(b.merchant_id),
            "booking.cancel",
            &format!("booking:{}", b.reference),
            reason.as_deref().unwrap_or(""),
        )
        .await?;
        booking_event(
            &mut tx,
            db.now_ms(),
            b.merchant_id,
            EventType::BookingCancelled,
            &b.reference,
            b.slot_id,
            (Some("BOOKED"), "CANCELLED"),
            places,
        )
        .await?;
        tx.commit().await?;
        gate::slot_follow(
            db,
            b.merchant_id,
            b.slot_id,
            &customer_key,
            idem.as_deref(),
            true,
            places,
        )
        .await;
        db.caches.freed.mark(b.merchant_id, b.slot_id);
        return by_reference(db, scope, &b.reference).await;
    }
    tx.rollback().await?;
    let b = by_reference(db, scope, &b.reference).await?;
    match b.status.as_str() {
        "CANCELLED" => Ok(b),
        _ => {
            let slot = slots::get(db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
            Err(refusal(
                "slot_started",
                messages::cancel_after_start(),
                &slot,
            ))
        }
    }
}

/// The refusal of an action (move, attendance) on a place still held for a waiting customer.
fn held(b: &Booking) -> DomainError {
    DomainError::conflict(
        "booking_held",
        messages::booking_held(),
        serde_json::json!({ "reference": b.reference }),
    )
}

/// How a place held for a waiting customer ends without them taking it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldEnd {
    /// The customer said no, while it was still held.
    Declined,
    /// The hold's time passed (whether or not the slot has started since: an offer nobody took
    /// is no booking).
    Lapsed,
}

/// Places a cancel gave back, for what follows the commit ([`after_freed`]).
#[derive(Debug, Clone)]
pub struct Freed {
    pub merchant_id: MerchantId,
    pub slot_id: i64,
    pub customer_key: String,
    pub idempotency_key: Option<String>,
    pub places: i64,
}

/// Cancels a held booking inside the caller's transaction (the waiting list's, which moves its
/// entry in the same commit), conditional on the hold still being there: a hold accepted a moment
/// earlier is left alone (None). The cancel, its freed places, audit and event are the ordinary
/// cancel's; the caller commits, then calls [`after_freed`].
pub async fn end_hold(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    booking_id: i64,
    end: HoldEnd,
    now: i64,
) -> DomainResult<Option<Freed>> {
    let (condition, reason) = match end {
        HoldEnd::Declined => ("hold_until > $2", "declined"),
        HoldEnd::Lapsed => ("hold_until <= $2", "lapsed"),
    };
    let done: Option<(MerchantId, i64, String, String, Option<String>, i64)> =
        sqlx::query_as(&format!(
            "UPDATE bookings SET status = 'CANCELLED', cancel_reason = NULL, hold_until = NULL, updated_at = $2
             WHERE id = $1 AND status = 'BOOKED' AND hold_until IS NOT NULL AND {condition}
             RETURNING merchant_id, slot_id, reference, customer_key, idempotency_key, places"
        ))
        .bind(booking_id)
        .bind(now)
        .fetch_optional(&mut **tx)
        .await?;
    let Some((merchant_id, slot_id, reference, customer_key, idempotency_key, places)) = done
    else {
        return Ok(None);
    };
    free_places(tx, slot_id, places, now).await?;
    crate::domain::trail::audit::record(
        tx,
        now,
        actor,
        Some(merchant_id),
        "booking.cancel",
        &format!("booking:{reference}"),
        &format!("waiting-list offer {reason}"),
    )
    .await?;
    booking_event(
        tx,
        now,
        merchant_id,
        EventType::BookingCancelled,
        &reference,
        slot_id,
        (Some("BOOKED"), "CANCELLED"),
        places,
    )
    .await?;
    Ok(Some(Freed {
        merchant_id,
        slot_id,
        customer_key,
        idempotency_key,
        places,
    }))
}

/// After a commit that freed places: the Redis gate follows, and the waiting list hears of it.
pub async fn after_freed(db: &Db, f: &Freed) {
    gate::slot_follow(
        db,
        f.merchant_id,
        f.slot_id,
        &f.customer_key,
        f.idempotency_key.as_deref(),
        true,
        f.places,
    )
    .await;
    db.caches.freed.mark(f.merchant_id, f.slot_id);
}

/// The customer takes a held place, inside the caller's transaction: the hold is cleared if it
/// is still running and its slot still open (false: it lapsed or ended meanwhile, or staff closed
/// the slot, and nothing changed; a hold in a closed slot lapses like any other).
pub async fn take_hold(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    booking_id: i64,
    now: i64,
) -> DomainResult<bool> {
    let done = sqlx::query(
        "UPDATE bookings SET hold_until = NULL, updated_at = $2
         WHERE id = $1 AND status = 'BOOKED' AND hold_until > $2
           AND (SELECT s.status FROM slots s WHERE s.id = bookings.slot_id) = 'OPEN'",
    )
    .bind(booking_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Held bookings whose hold has passed (ids), for the waiting list's sweep.
pub async fn lapsed_holds(db: &Db, now: i64) -> DomainResult<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM bookings WHERE hold_until IS NOT NULL AND hold_until <= $1 AND status = 'BOOKED' ORDER BY hold_until LIMIT 500",
    )
    .bind(now)
    .fetch_all(&db.pool)
    .await?)
}

/// Who moves a booking: the customer on the public page keeps to the service's minimum notice;
/// staff and the order system may override it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveBy {
    Customer,
    Staff,
}

/// Moves a live booking to another slot of the same service and store, keeping its reference:
/// the new places are taken before the old ones are freed, in one transaction, so a full target
/// refuses and nothing changes. A repeat (the booking already in that slot) answers the booking.
/// Refusals: `booking_cancelled`, `booking_not_movable` (attended or no-show), `slot_started`
/// (the booking's own slot has begun), the target's `slot_full`, `slot_closed`, `slot_started`,
/// `slot_frozen`, `not_on_sale`, `already_booked` (the customer holds a place there),
/// `booking_changed` (moved elsewhere meanwhile), `too_late_to_book` (`MoveBy::Customer` only,
/// inside the service's notice); the field errors `unknown_slot` and
/// `different_service`.
pub async fn move_booking(
    db: &Db,
    actor: &Actor,
    scope: Scope,
    reference: &str,
    target_id: i64,
    by: MoveBy,
) -> DomainResult<Booking> {
    let b = by_reference(db, scope, reference).await?;
    let merchant = Scope::Merchant(b.merchant_id);
    if b.slot_id == target_id {
        return Ok(b);
    }
    let target = match slots::get(db, merchant, target_id).await {
        Err(DomainError::NotFound(_)) => {
            return Err(DomainError::field(
                "slot_id",
                "unknown_slot",
                messages::unknown_slot(target_id),
            ))
        }
        r => r?,
    };
    let from = slots::get(db, merchant, b.slot_id).await?;
    if target.sku_id != from.sku_id || target.store_id != from.store_id {
        return Err(DomainError::field(
            "slot_id",
            "different_service",
            messages::move_other_service(),
        ));
    }
    let now = db.now_ms();
    match b.status {
        BookingStatus::Booked => {}
        BookingStatus::Cancelled => {
            return Err(DomainError::conflict(
                "booking_cancelled",
                messages::booking_cancelled(&b.reference),
                serde_json::json!({ "reference": b.reference }),
            ))
        }
        _ => {
            return Err(DomainError::conflict(
                "booking_not_movable",
                messages::booking_not_movable(),
                serde_json::json!({ "reference": b.reference, "status": b.status.as_str() }),
            ))
        }
    }
    if b.hold_until.is_some() {
        return Err(held(&b));
    }
    if from.started(now) {
        return Err(refusal("slot_started", messages::move_after_start(), &from));
    }
    // A customer moving online gives the service its notice, as a booking does
    // (`too_late_to_book`); staff and the order system may move closer in.
    if by == MoveBy::Customer {
        if let Some(e) = within_notice(db, b.merchant_id, target.id).await? {
            return Err(e);
        }
    }
    // Redis follows the move after the commit: both slots loaded before it.
    gate::slot_ensure_loaded(db, b.merchant_id, target.id).await?;
    gate::slot_ensure_loaded(db, b.merchant_id, from.id).await?;
    let mut tx = db.begin_write().await?;
    // The new places first: a full, closed or started target ends it here.
    if !take_places(&mut tx, b.merchant_id, target.id, b.places, now).await? {
        tx.rollback().await?;
        let target = slots::get(db, merchant, target.id).await?;
        return Err(refused(db, b.merchant_id, &target, now, b.places).await?);
    }
    // Conditional on the booking as read: a cancel or another move meanwhile wins. The unique
    // index of one active booking per customer per slot refuses a customer already there.
    let moved = sqlx::query(
        "UPDATE bookings SET slot_id = $1, moved_from_slot_id = $2, updated_at = $3
         WHERE id = $4 AND slot_id = $2 AND status = 'BOOKED' AND hold_until IS NULL",
    )
    .bind(target.id)
    .bind(from.id)
    .bind(now)
    .bind(b.id)
    .execute(&mut *tx)
    .await;
    let moved = match moved {
        Ok(r) => r.rows_affected() == 1,
        Err(e) if is_unique_violation(&e) => {
            tx.rollback().await?;
            return match active_for_customer(db, target.id, &b.customer_key).await? {
                Some(existing) => Err(already_booked(&existing)),
                None => Err(DomainError::Internal(
                    "booking move conflicted with nothing".into(),
                )),
            };
        }
        Err(e) => return Err(e.into()),
    };
    if !moved {
        tx.rollback().await?;
        // Cancelled or moved by someone else meanwhile: the booking as it is now says which.
        let now_b = by_reference(db, merchant, &b.reference).await?;
        return if now_b.slot_id == target.id {
            Ok(now_b)
        } else if now_b.status == BookingStatus::Cancelled {
            Err(DomainError::conflict(
                "booking_cancelled",
                messages::booking_cancelled(&b.reference),
                serde_json::json!({ "reference": b.reference }),
            ))
        } else {
            Err(DomainError::conflict(
                "booking_changed",
                messages::booking_changed(),
                serde_json::json!({ "reference": b.reference, "slot_id": now_b.slot_id }),
            ))
        };
    }
    free_places(&mut tx, from.id, b.places, now).await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(b.merchant_id),
        "booking.move",
        &format!("booking:{}", b.reference),
        &format!("slot:{} -> slot:{}", from.id, target.id),
    )
    .await?;
    crate::domain::trail::events::record_in_slot(
        &mut tx,
        db.now_ms(),
        b.merchant_id,
        EventType::BookingMoved,
        "booking",
        &b.reference,
        target.id,
        serde_json::json!({"before": {"slot_id": from.id}, "after": {"slot_id": target.id},
            "places": b.places}),
    )
    .await?;
    tx.commit().await?;
    // Redis follows SQL: the target's places are taken, the old slot's given back.
    gate::slot_follow(
        db,
        b.merchant_id,
        target.id,
        &b.customer_key,
        None,
        false,
        b.places,
    )
    .await;
    let idem: Option<String> =
        sqlx::query_scalar("SELECT idempotency_key FROM bookings WHERE id = $1")
            .bind(b.id)
            .fetch_one(&db.pool)
            .await?;
    gate::slot_follow(
        db,
        b.merchant_id,
        from.id,
        &b.customer_key,
        idem.as_deref(),
        true,
        b.places,
    )
    .await;
    db.caches.freed.mark(b.merchant_id, from.id);
    by_reference(db, merchant, &b.reference).await
}

/// After the start: the customer came (ATTENDED) or did not (NO_SHOW). Both keep the place counted.
pub async fn mark(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    reference: &str,
    status: BookingStatus,
) -> DomainResult<Booking> {
    let status = status.as_str();
    let b = by_reference(db, Scope::Merchant(merchant_id), reference).await?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let done = sqlx::query(
        "UPDATE bookings SET status = $1, updated_at = $2, marked_by = $4, marked_at = $2
         WHERE id = $3 AND status IN ('BOOKED', 'ATTENDED', 'NO_SHOW') AND hold_until IS NULL
           AND (SELECT s.starts_at FROM slots s WHERE s.id = bookings.slot_id) <= $2",
    )
    .bind(status)
    .bind(now)
    .bind(b.id)
    .bind(&actor.label)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() != 1 {
        tx.rollback().await?;
        let slot = slots::get(db, Scope::Merchant(merchant_id), b.slot_id).await?;
        return Err(if b.status == BookingStatus::Cancelled {
            DomainError::conflict(
                "booking_cancelled",
                messages::booking_cancelled(&b.reference),
                serde_json::json!({ "reference": b.reference }),
            )
        } else if b.hold_until.is_some() {
            held(&b)
        } else {
            refusal("slot_not_started", messages::slot_not_started(), &slot)
        });
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "booking.mark",
        &format!("booking:{}", b.reference),
        status,
    )
    .await?;
    let ty = if status == BookingStatus::Attended.as_str() {
        EventType::BookingAttended
    } else {
        EventType::BookingNoShow
    };
    booking_event(
        &mut tx,
        db.now_ms(),
        merchant_id,
        ty,
        &b.reference,
        b.slot_id,
        (Some(b.status.as_str()), status),
        b.places,
    )
    .await?;
    tx.commit().await?;
    by_reference(db, Scope::Merchant(merchant_id), &b.reference).await
}

/// Cancels every active booking in a closure's slots (staff called the customers).
pub async fn cancel_for_closure(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    closure_id: i64,
    reason: &str,
) -> DomainResult<usize> {
    let contacts =
        crate::domain::slots::closures::closure_contacts(db, merchant_id, closure_id).await?;
    let mut n = 0;
    for c in contacts {
        match cancel(
            db,
            actor,
            Scope::Merchant(merchant_id),
            &c.reference,
            Some(reason),
        )
        .await
        {
            Ok(b) if b.status == BookingStatus::Cancelled => n += 1,
            Ok(_) | Err(DomainError::Conflict { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Every booking of one slot (cancelled ones too), oldest first, for the slot's page.
pub async fn of_slot(db: &Db, merchant_id: MerchantId, slot_id: i64) -> DomainResult<Vec<Booking>> {
    Ok(sqlx::query_as(&format!(
        "{BOOKING_SELECT} WHERE merchant_id = $1 AND slot_id = $2 ORDER BY id"
    ))
    .bind(merchant_id)
    .bind(slot_id)
    .fetch_all(&db.pool)
    .await?)
}

/// Bookings of a store on one local day, for the day list.
#[derive(Debug, Clone, FromRow)]
pub struct DayBooking {
    pub reference: String,
    pub customer_name: String,
    pub customer_phone: String,
    #[sqlx(try_from = "String")]
    pub status: BookingStatus,
    pub slot_id: i64,
    pub starts_at: i64,
    pub sku_code: String,
    pub staff_name: Option<String>,
    pub places: i64,
    /// The slot's status: a booking in a closed slot is one to call.
    pub slot_status: String,
    /// Who marked it attended or no-show (`auto`: the automatic no-show job).
    pub marked_by: Option<String>,
    /// When staff reached the customer about a closed slot (the to-call list).
    pub contacted_at: Option<i64>,
    /// A place held for a waiting customer, not yet accepted: until then.
    pub hold_until: Option<i64>,
}

pub async fn day_list(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
    from: i64,
    to: i64,
) -> DomainResult<Vec<DayBooking>> {
    Ok(sqlx::query_as(
        "SELECT b.reference, b.customer_name, b.customer_phone, b.status, b.slot_id, s.starts_at, k.code AS sku_code, st.name AS staff_name, b.places, s.status AS slot_status, b.marked_by, b.contacted_at, b.hold_until
         FROM bookings b JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id LEFT JOIN staff st ON st.id = s.staff_id
         WHERE b.merchant_id = $1 AND s.store_id = $2 AND s.starts_at >= $3 AND s.starts_at < $4
         ORDER BY s.starts_at, b.id",
    )
    .bind(merchant_id)
    .bind(store_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?)
}

/// The nearest open slots of the same service and store with room for `places`, for a refusal
/// page.
pub async fn nearest_free(
    db: &Db,
    slot: &Slot,
    places: i64,
    limit: i64,
) -> DomainResult<Vec<Slot>> {
    free_near(db, slot, places, limit, None).await
}

/// Like [`nearest_free`], only slots starting within `[from, to)` (one day the clerk picked).
pub async fn free_between(
    db: &Db,
    slot: &Slot,
    places: i64,
    limit: i64,
    (from, to): (i64, i64),
) -> DomainResult<Vec<Slot>> {
    free_near(db, slot, places, limit, Some((from, to))).await
}

async fn free_near(
    db: &Db,
    slot: &Slot,
    places: i64,
    limit: i64,
    within: Option<(i64, i64)>,
) -> DomainResult<Vec<Slot>> {
    let (from, to) = within.unwrap_or((i64::MIN, i64::MAX));
    let sql = format!(
        "{} WHERE sl.sku_id = $1 AND sl.store_id = $2 AND sl.status = 'OPEN' AND sl.frozen_finding_id IS NULL AND sl.booked + $7 <= sl.capacity AND sl.starts_at > $3 AND sl.id <> $4
           AND sl.starts_at >= $8 AND sl.starts_at < $9
         ORDER BY ABS(sl.starts_at - $5), sl.starts_at LIMIT $6",
        slots::SLOT_SELECT
    );
    Ok(sqlx::query_as(&sql)
        .bind(slot.sku_id)
        .bind(slot.store_id)
        .bind(db.now_ms())
        .bind(slot.id)
        .bind(slot.starts_at)
        .bind(limit)
        .bind(places)
        .bind(from)
        .bind(to)
        .fetch_all(&db.pool)
        .await?)
}

/// Show, no-show and vacancy for the past slots of a service in a period. Places are never summed
/// across slots into a stock-like number; these are rates.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SlotMetrics {
    pub slots: i64,
    pub capacity: i64,
    pub booked: i64,
    pub attended: i64,
    pub no_show: i64,
    /// Of the no-shows, those the store's automatic no-show marked (nobody marked them).
    pub auto_no_show: i64,
    pub unmarked: i64,
}

impl std::ops::AddAssign<&SlotMetrics> for SlotMetrics {
    fn add_assign(&mut self, m: &SlotMetrics) {
        self.slots += m.slots;
        self.capacity += m.capacity;
        self.booked += m.booked;
        self.attended += m.attended;
        self.no_show += m.no_show;
        self.auto_no_show += m.auto_no_show;
        self.unmarked += m.unmarked;
    }
}

impl SlotMetrics {
    pub fn show_rate(&self) -> Option<f64> {
        let marked = self.attended + self.no_show;
        (marked > 0).then(|| 100.0 * self.attended as f64 / marked as f64)
    }
    pub fn no_show_rate(&self) -> Option<f64> {
        let marked = self.attended + self.no_show;
        (marked > 0).then(|| 100.0 * self.no_show as f64 / marked as f64)
    }
    pub fn vacancy_rate(&self) -> Option<f64> {
        (self.capacity > 0)
            .then(|| 100.0 * (self.capacity - self.booked) as f64 / self.capacity as f64)
    }
}

/// One slot of [`metrics_by_period`]'s query with its marks counted.
#[derive(FromRow)]
struct PeriodRow {
    sku_id: i64,
    starts_at: i64,
    capacity: i64,
    booked: i64,
    #[sqlx(try_from = "String")]
    status: SlotStatus,
    attended: i64,
    no_show: i64,
    auto_no_show: i64,
    unmarked: i64,
}

/// The metrics of every service of a store in consecutive periods: `bounds` are the periods'
/// edges (n + 1 instants for n periods, ascending), and the answer maps (SKU id, period index) to
/// that period's figures. Slots that have not started yet do not count. One grouped query, one row
/// per slot: summing into periods happens here because period edges are local midnights, which
/// SQL cannot compute the same way on both databases.
pub async fn metrics_by_period(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
    bounds: &[i64],
) -> DomainResult<std::collections::HashMap<(i64, usize), SlotMetrics>> {
    let mut out = std::collections::HashMap::new();
    let (Some(&from), Some(&last)) = (bounds.first(), bounds.last()) else {
        return Ok(out);
    };
    let to = last.min(db.now_ms());
    let rows: Vec<PeriodRow> = sqlx::query_as(
        "SELECT s.sku_id, s.starts_at, s.capacity, s.booked, s.status,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'ATTENDED' THEN b.places ELSE 0 END), 0) AS BIGINT) AS attended,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'NO_SHOW' THEN b.places ELSE 0 END), 0) AS BIGINT) AS no_show,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'NO_SHOW' AND b.marked_by = 'auto' THEN b.places ELSE 0 END), 0) AS BIGINT) AS auto_no_show,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'BOOKED' THEN b.places ELSE 0 END), 0) AS BIGINT) AS unmarked
         FROM slots s LEFT JOIN bookings b ON b.slot_id = s.id
         WHERE s.merchant_id = $1 AND s.store_id = $2 AND s.starts_at >= $3 AND s.starts_at < $4
         GROUP BY s.id, s.sku_id, s.starts_at, s.capacity, s.booked, s.status",
    )
    .bind(merchant_id)
    .bind(store_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?;
    for r in rows {
        let PeriodRow {
            sku_id,
            starts_at,
            capacity,
            booked,
            status,
            attended,
            no_show,
            auto_no_show,
            unmarked,
        } = r;
        // The period whose edges hold the start: the last edge at or before it.
        let period = bounds
            .partition_point(|&b| b <= starts_at)
            .saturating_sub(1);
        let m: &mut SlotMetrics = out.entry((sku_id, period)).or_default();
        // Places count on open slots only (a closed slot offered none); marks count on every slot.
        if status == SlotStatus::Open {
            m.slots += 1;
            m.capacity += capacity;
            m.booked += booked;
        }
        m.attended += attended;
        m.no_show += no_show;
        m.auto_no_show += auto_no_show;
        m.unmarked += unmarked;
    }
    Ok(out)
}

/// Bookings (not cancelled) in slots starting today, each store's day in its own timezone.
pub async fn today_count(db: &Db, scope: Scope) -> DomainResult<i64> {
    let mut n = 0;
    for store in crate::domain::tenancy::tenants::stores(db, scope).await? {
        let (from, to) = crate::domain::slots::storefront::day_bounds(
            &store,
            crate::domain::slots::storefront::today(db, &store),
        );
        n += sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM bookings b JOIN slots sl ON sl.id = b.slot_id
             WHERE sl.store_id = $1 AND sl.starts_at >= $2 AND sl.starts_at < $3 AND b.status <> 'CANCELLED'",
        )
        .bind(store.id)
        .bind(from)
        .bind(to)
        .fetch_one(&db.pool)
        .await?;
    }
    Ok(n)
}

#[cfg(test)]
mod status_tests {
    use super::BookingStatus;

    #[test]
    fn only_a_live_booking_before_its_start_may_be_cancelled() {
        for s in ["BOOKED", "CANCELLED", "ATTENDED", "NO_SHOW"] {
            let st = BookingStatus::parse(s).unwrap();
            assert_eq!(st.as_str(), s);
            assert_eq!(st.cancellable(10, 5), st == BookingStatus::Booked);
            assert!(!st.cancellable(5, 5), "{s} at its start");
        }
    }
}

/// Which bookings a listing shows. `None` means any.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub store_id: Option<StoreId>,
    pub slot_id: Option<i64>,
    pub status: Option<BookingStatus>,
    /// Slots starting at or after this instant (Unix ms).
    pub from: Option<i64>,
    /// Slots starting before this instant (Unix ms).
    pub to: Option<i64>,
}

/// A booking with its slot's service and times, as listings show it.
#[derive(Debug, Clone, FromRow)]
pub struct Listed {
    #[sqlx(flatten)]
    pub booking: Booking,
    pub sku_code: String,
    pub starts_at: i64,
    pub ends_at: i64,
}

/// A merchant's bookings after a cursor (a booking id; 0 for the first), in the order they were
/// made, at most `limit`: a feed an order system resumes from the last id it read.
pub async fn list(
    db: &Db,
    merchant_id: MerchantId,
    f: &ListFilter,
    after: i64,
    limit: i64,
) -> DomainResult<Vec<Listed>> {
    Ok(sqlx::query_as(
        "SELECT b.id, b.merchant_id, b.slot_id, b.reference, b.customer_name, b.customer_phone, b.customer_key,
            b.status, b.cancel_reason, b.created_at,
            (SELECT r.order_id FROM reservations r WHERE r.id = b.reservation_id) AS order_id, b.places, b.moved_from_slot_id,
            CAST(b.from_waitlist AS BIGINT) AS from_waitlist, b.hold_until,
            k.code AS sku_code, s.starts_at, s.ends_at
         FROM bookings b JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id
         WHERE b.merchant_id = $1 AND ($2 IS NULL OR s.store_id = $2) AND ($3 IS NULL OR b.slot_id = $3)
           AND ($4 = '' OR b.status = $4) AND ($5 IS NULL OR s.starts_at >= $5) AND ($6 IS NULL OR s.starts_at < $6)
           AND b.id > $7
         ORDER BY b.id LIMIT $8",
    )
    .bind(merchant_id)
    .bind(f.store_id.map(|s| s.0))
    .bind(f.slot_id)
    .bind(f.status.map_or("", |s| s.as_str()))
    .bind(f.from)
    .bind(f.to)
    .bind(after)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}
