//! Booking one place (or a party) of a slot: the checks, the conditional increment of the slot's
//! count through the gate or SQL, and the answer to a repeat.

#[allow(unused_imports)]
use super::*;

pub(super) fn refusal(code: &'static str, message: String, slot: &Slot) -> DomainError {
    refusal_of(
        code,
        message,
        slot.id,
        slot.remaining(),
        slot.status.as_str(),
    )
}

pub(super) fn refusal_of(
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
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn book(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: BookInput,
) -> DomainResult<Booked> {
    crate::domain::kernel::error::observed("book", book_inner(db, actor, merchant_id, input)).await
}

pub(super) async fn book_inner(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: BookInput,
) -> DomainResult<Booked> {
    let Checked {
        name,
        phone_shown,
        customer_key,
        places,
        key,
        read,
    } = check(db, merchant_id, &input).await?;
    // A customer booking online gives the service its notice; order systems decide for
    // themselves; staff are asked first and may book inside it once they confirm.
    let asks_notice =
        input.public.is_some() || input.staff.as_ref().is_some_and(|s| !s.override_notice);
    if asks_notice {
        if let Some(e) = within_notice(db, merchant_id, input.slot_id).await? {
            return Err(e);
        }
    }
    let took_gate = match gate::active(db) {
        Some(g) => {
            ask_gate(
                db,
                g,
                (merchant_id, input.slot_id),
                (&customer_key, key.as_deref()),
                places,
            )
            .await?
        }
        None => false,
    };
    let customer = Customer {
        name: &name,
        phone_shown: &phone_shown,
        key: &customer_key,
        places,
        staff: input.staff.as_ref(),
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

/// A booking's input once every field parsed.
struct Checked {
    name: String,
    phone_shown: String,
    customer_key: String,
    places: i64,
    /// The idempotency key, in the public key space for a public booking.
    key: Option<String>,
    /// The slot, when the phone's region or the party size needed it read.
    read: Option<slots::BookingSlot>,
}

/// Checks every field at once: a refusal lists all that failed.
async fn check(db: &Db, merchant_id: MerchantId, input: &BookInput) -> DomainResult<Checked> {
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
    Ok(Checked {
        name,
        phone_shown,
        customer_key,
        places,
        key,
        read,
    })
}

/// The Redis gate, before SQL: a full or started slot is answered without touching SQL. Returns
/// whether the gate took the places (SQL must then take them too, or they go back).
async fn ask_gate(
    db: &Db,
    g: &Arc<crate::infra::counters::Gate>,
    (merchant_id, slot_id): (MerchantId, i64),
    (customer_key, key): (&str, Option<&str>),
    places: i64,
) -> DomainResult<bool> {
    let answer = gate::slot_take(db, g, merchant_id, slot_id, customer_key, key, places).await?;
    match answer {
        Some((SlotAnswer::Full, remaining)) => {
            crate::telemetry::count_gate("book", "no");
            Err(refusal_of(
                "slot_full",
                full_message(remaining, places),
                slot_id,
                remaining,
                "OPEN",
            ))
        }
        Some((SlotAnswer::Started, remaining)) => {
            crate::telemetry::count_gate("book", "no");
            Err(refusal_of(
                "slot_started",
                messages::slot_started(),
                slot_id,
                remaining,
                "OPEN",
            ))
        }
        Some((SlotAnswer::Booked, _)) => {
            crate::telemetry::count_gate("book", "yes");
            Ok(true)
        }
        Some((SlotAnswer::Seen, _)) => {
            crate::telemetry::count_gate("book", "bypass");
            await_twin(db, g, merchant_id, slot_id, customer_key, key).await?;
            Ok(false)
        }
        // Closed, or Redis unavailable: SQL gives the full answer.
        _ => {
            crate::telemetry::count_gate("book", "bypass");
            Ok(false)
        }
    }
}

/// How long after its twin's take in Redis a booking answered "seen" waits for the twin's
/// outcome before SQL hears it.
pub(super) const TWIN_WAIT_MS: i64 = 3_000;

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
pub(super) async fn within_notice(
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

/// The SQL side of a booking, with the slot when the caller read it already. Returns the booking
/// and whether this call created it.
pub(super) async fn book_in_sql(
    db: &Db,
    actor: &Actor,
    (merchant_id, slot_id): (MerchantId, i64),
    read: Option<Slot>,
    customer: Customer<'_>,
    key: Option<&str>,
    public: Option<&PublicCaps>,
) -> DomainResult<(Booked, bool)> {
    let now = db.now_ms();
    // An order system's booking joins the others of its slot in one transaction
    // (`domain::kernel::groups`), which reads the slot once for all of them, tells repeats and customers
    // already booked by its unique indexes and leaves them to the checks below. A public booking
    // counts its customer's caps under their lock, alone, and a staff booking records who took
    // it, alone too. A slot this booking read already and found without room goes straight to
    // those checks.
    if public.is_none()
        && customer.staff.is_none()
        && crate::domain::slots::cache::of(db).booked.on()
        && read
            .as_ref()
            .is_none_or(|s| has_room(s, customer.places, now))
    {
        if let Some(done) =
            join_group(db, actor, (merchant_id, slot_id), &customer, key, now).await?
        {
            return Ok(done);
        }
    }
    let slot = match read {
        Some(slot) => slot,
        None => slots::get(db, Scope::Merchant(merchant_id), slot_id).await?,
    };
    // The group took its time: what follows is decided at its own instant.
    let now = db.now_ms();
    let room = has_room(&slot, customer.places, now);

    // A repeated submit (double click, retry on a weak network) gets the first booking back, if it
    // is the same request: a key belongs to one slot and one customer.
    if let Some(k) = key {
        if let Some(b) = by_key(db, merchant_id, k).await? {
            return same_request(b, slot.id, customer.key, customer.places)
                .map(|booking| (Booked { booking, slot }, false));
        }
    }
    if let Some(existing) = active_for_customer(db, slot.id, customer.key).await? {
        return Err(already_booked(&existing));
    }

    // A slot already seen full, closed or started is refused from that read: the write transaction
    // below would only take it back out.
    if !room {
        return Err(refused(db, merchant_id, &slot, now, customer.places).await?);
    }
    book_alone(db, actor, (merchant_id, slot), &customer, key, public, now).await
}

/// Whether a slot as read has room for `places` at `now`: open, not full, not started.
fn has_room(slot: &Slot, places: i64, now: i64) -> bool {
    slot.status == SlotStatus::Open && slot.booked + places <= slot.capacity && !slot.started(now)
}

/// Books in the slot's group (`book_group`): the booking as committed, or `None` when the
/// group left it to the checks of a booking alone (a repeat, a customer already booked, no room).
async fn join_group(
    db: &Db,
    actor: &Actor,
    (merchant_id, slot_id): (MerchantId, i64),
    customer: &Customer<'_>,
    key: Option<&str>,
    now: i64,
) -> DomainResult<Option<(Booked, bool)>> {
    let line = BookLine {
        actor: actor.clone(),
        name: customer.name.to_string(),
        phone_shown: customer.phone_shown.to_string(),
        customer_key: customer.key.to_string(),
        key: key.map(str::to_string),
        places: customer.places,
        now,
        lang: crate::i18n::current(),
    };
    let joined = crate::domain::slots::cache::of(db)
        .booked
        .join(db, book_group, (merchant_id, slot_id), line)
        .await;
    let GroupBooked {
        id,
        reference,
        slot,
    } = match joined {
        None => return Ok(None),
        Some(Err(refused)) => return Err(refused),
        Some(Ok(booked)) => booked,
    };
    // Just committed as written: its row, without reading it back.
    let booking = Booking {
        id,
        merchant_id,
        slot_id: slot.id,
        reference,
        customer_name: customer.name.to_string(),
        customer_phone: customer.phone_shown.to_string(),
        customer_key: customer.key.to_string(),
        status: BookingStatus::Booked,
        cancel_reason: None,
        created_at: now,
        order_id: None,
        places: customer.places,
        moved_from_slot_id: None,
        from_waitlist: 0,
        hold_until: None,
        channel: Channel::Customer,
        taken_by: None,
    };
    let slot = Arc::unwrap_or_clone(slot);
    Ok(Some((Booked { booking, slot }, true)))
}

/// Books alone, in a write transaction of its own: the public caps under their lock, the booking
/// row, its audit row and event, then the slot's conditional increment.
async fn book_alone(
    db: &Db,
    actor: &Actor,
    (merchant_id, slot): (MerchantId, Slot),
    customer: &Customer<'_>,
    key: Option<&str>,
    public: Option<&PublicCaps>,
    now: i64,
) -> DomainResult<(Booked, bool)> {
    let places = customer.places;
    let mut tx = db.begin_write().await?;
    if let Some(caps) = public {
        if let Err(e) = within_caps(&mut tx, caps, customer.key, now).await {
            tx.rollback().await?;
            return Err(e);
        }
    }
    // The booking and its audit row go in before the slot's UPDATE: that UPDATE locks the slot row
    // until COMMIT, and on a hot slot every statement after it is time all its other customers
    // wait. If the slot then refuses, the rollback takes them back out.
    let reference = new_reference();
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO bookings (merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status, idempotency_key, source, created_at, updated_at, client_ip, places, channel, taken_by)
         VALUES ($1, $2, $3, $4, $5, $6, 'BOOKED', $7, $8, $9, $9, $10, $11, $12, $13) RETURNING id",
    )
    .bind(merchant_id)
    .bind(slot.id)
    .bind(&reference)
    .bind(customer.name)
    .bind(customer.phone_shown)
    .bind(customer.key)
    .bind(key)
    .bind(&actor.source)
    .bind(now)
    .bind(public.map(|p| p.client_ip.as_str()))
    .bind(places)
    .bind(customer.staff.map_or(Channel::Customer, |s| s.channel).as_str())
    .bind(customer.staff.map(|s| s.user_id))
    .fetch_one(&mut *tx)
    .await;
    match inserted {
        Ok(_) => {}
        Err(e) if is_unique_violation(&e) => {
            tx.rollback().await?;
            return twin_won(db, (merchant_id, slot), customer, key).await;
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

/// A concurrent twin won the insert (the same key or the same customer): the first booking back
/// for a repeat of the same request, or `already_booked`.
async fn twin_won(
    db: &Db,
    (merchant_id, slot): (MerchantId, Slot),
    customer: &Customer<'_>,
    key: Option<&str>,
) -> DomainResult<(Booked, bool)> {
    if let Some(k) = key {
        if let Some(b) = by_key(db, merchant_id, k).await? {
            return same_request(b, slot.id, customer.key, customer.places)
                .map(|booking| (Booked { booking, slot }, false));
        }
    }
    match active_for_customer(db, slot.id, customer.key).await? {
        Some(existing) => Err(already_booked(&existing)),
        None => Err(DomainError::Internal(
            "booking insert conflicted with nothing".into(),
        )),
    }
}
