//! What a booking asks and who asks it: the input, the party size, the public caps, the
//! idempotency keys and the refusals a repeat or a second booking of the same customer gets.

#[allow(unused_imports)]
use super::*;

/// The refusal's code when a customer is at a booking cap (per phone or per address): a public
/// page offers the store's phone with it.
pub const TOO_MANY_BOOKINGS: &str = "too_many_bookings";

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
    /// Set for bookings staff take for a caller or a walk-in.
    pub staff: Option<ByStaff>,
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

/// The places a booking asks for, checked against the service's party size (`max_places`) in
/// the slot read for it. One place needs no look-up: every service takes at least one, so the
/// hot path reads nothing for it.
pub(super) fn party(
    read: Option<&slots::BookingSlot>,
    places: i64,
) -> DomainResult<Result<i64, FieldError>> {
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
pub(super) fn full_message(remaining: i64, places: i64) -> String {
    if remaining > 0 && places > remaining {
        messages::not_enough_places(remaining)
    } else {
        messages::slot_full()
    }
}

/// Who books, once their input is checked: the name, the phone as shown, and the phone's E.164
/// key that identifies the customer.
pub(super) struct Customer<'a> {
    pub(super) name: &'a str,
    pub(super) phone_shown: &'a str,
    pub(super) key: &'a str,
    /// The places the booking takes.
    pub(super) places: i64,
    /// Set when staff take the booking for the customer.
    pub(super) staff: Option<&'a ByStaff>,
}

/// Why a slot will not take a booking now, in the order a customer needs to hear it: the service
/// off sale, the slot frozen, closed, started, or full (for a party: fewer places left than it
/// asks).
pub(super) async fn refused(
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
pub(super) fn same_request(
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
            TOO_MANY_BOOKINGS,
            messages::too_many_bookings_phone(caps.per_phone),
            serde_json::json!({ "limit": caps.per_phone }),
        ));
    }
    if by_ip >= caps.per_address {
        return Err(DomainError::conflict(
            TOO_MANY_BOOKINGS,
            messages::too_many_bookings_address(caps.per_address),
            serde_json::json!({ "limit": caps.per_address }),
        ));
    }
    Ok(())
}

pub(super) fn already_booked(existing: &Booking) -> DomainError {
    DomainError::conflict(
        "already_booked",
        messages::already_booked(&existing.reference),
        serde_json::json!({ "reference": existing.reference, "slot_id": existing.slot_id }),
    )
}

pub(super) const PUBLIC_KEY_PREFIX: &str = "public:";

/// The idempotency key a public booking form's token stands for.
pub fn public_key(token_nonce: &str) -> String {
    format!("{PUBLIC_KEY_PREFIX}{token_nonce}")
}

/// Whether an idempotency key has already made a booking.
pub async fn key_used(db: &Db, merchant_id: MerchantId, key: &str) -> DomainResult<bool> {
    Ok(by_key(db, merchant_id, key).await?.is_some())
}

pub(super) async fn by_key(
    db: &Db,
    merchant_id: MerchantId,
    key: &str,
) -> DomainResult<Option<Booking>> {
    Ok(sqlx::query_as(&format!(
        "{BOOKING_SELECT} WHERE merchant_id = $1 AND idempotency_key = $2"
    ))
    .bind(merchant_id)
    .bind(key)
    .fetch_optional(&db.pool)
    .await?)
}

pub(super) async fn active_for_customer(
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
