//! Moving a hold on: confirm (paid), release (cancelled) and expiry share one transition of the
//! header and its lines, with the ledger and audit rows, then Redis follows.

use super::*;
use crate::domain::MerchantId;

/// Moves every RESERVED line of a header whose status this transaction just changed.
// The transaction's time stamp came as an eighth argument when the app got its own clock (issue
// 51); the others are what the row says.
#[allow(clippy::too_many_arguments)]
pub(super) async fn settle_lines(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    header_id: i64,
    order: &str,
    to_status: &str,
    kind: &'static str,
    actor: &str,
) -> DomainResult<Settled> {
    let mut settled = Settled::default();
    if kind == "CONFIRM" {
        crate::domain::codes::code::sell_held(tx, now, header_id, None).await?;
    } else {
        // Held codes go back to the pool; a SOLD code never does.
        let back = crate::domain::codes::code::release_held(tx, now, header_id).await?;
        for (sku, id) in back {
            match settled.codes.iter_mut().find(|(s, _)| *s == sku) {
                Some((_, ids)) => ids.push(id),
                None => settled.codes.push((sku, vec![id])),
            }
        }
    }
    sqlx::query("UPDATE code_reservations SET status = $1 WHERE reservation_id = $2 AND status = 'RESERVED'")
        .bind(to_status)
        .bind(header_id)
        .execute(&mut **tx)
        .await?;
    if kind != "CONFIRM" {
        // The order's places go with it; paid, they stay booked.
        let reason = if kind == "EXPIRE" {
            "order expired"
        } else {
            "order released"
        };
        settled.places =
            crate::domain::slots::booking::cancel_for_order(tx, header_id, reason, now).await?;
    }
    for line in lines(tx, header_id).await? {
        let moved = sqlx::query("UPDATE stock_reservations SET status = $1, updated_at = $2 WHERE id = $3 AND status = 'RESERVED'")
            .bind(to_status)
            .bind(now)
            .bind(line.id)
            .execute(&mut **tx)
            .await?;
        if moved.rows_affected() != 1 {
            continue;
        }
        match (line.hold, kind == "CONFIRM") {
            (LineHold::Locked, _) => {}
            // Nothing was taken from stock for the order: a release or expiry moves no unit.
            (LineHold::Checked | LineHold::Unlimited, false) => continue,
            (LineHold::Checked, true) => {
                // Deducted on payment: sold now from available with the conditional update, or
                // not at all (the caller refuses the payment and records an exception).
                let mv = Move {
                    kind,
                    qty: line.qty,
                    delta: Buckets {
                        sold: line.qty,
                        ..Default::default()
                    },
                    reason: "deducted on payment",
                    actor,
                    order_id: Some(order),
                    reason_code: None,
                };
                let sold = stock::apply(
                    tx,
                    now,
                    merchant_id,
                    line.sku_id,
                    line.warehouse_id,
                    Guard::Available(line.qty),
                    &mv,
                )
                .await?;
                if sold.is_none() {
                    settled.short.push(shortfall(tx, &line).await?);
                }
                settled.reload.push(Subject::Stock(line.sku_id));
                continue;
            }
            (LineHold::Unlimited, true) => {
                sell_unlimited(tx, now, merchant_id, &line, order, actor).await?;
                continue;
            }
        }
        let delta = if kind == "CONFIRM" {
            Buckets {
                locked: -line.qty,
                sold: line.qty,
                ..Default::default()
            }
        } else {
            Buckets {
                locked: -line.qty,
                ..Default::default()
            }
        };
        let mv = Move {
            kind,
            qty: line.qty,
            delta,
            reason: "",
            actor,
            order_id: Some(order),
            reason_code: None,
        };
        if stock::apply(
            tx,
            now,
            merchant_id,
            line.sku_id,
            line.warehouse_id,
            Guard::Locked(line.qty),
            &mv,
        )
        .await?
        .is_none()
        {
            // The balance holds fewer locked units than this line: the books disagree. Refuse
            // rather than invent units; reconciliation will flag it.
            return Err(DomainError::Internal(format!(
                "order {order}: locked units missing for line {}",
                line.id
            )));
        }
        settled.stock.push((line.sku_id, line.warehouse_id));
    }
    Ok(settled)
}

/// The sale of an unlimited SKU's line: never refused, never short, and still one ledger row, in
/// which total and sold rise together so that what is available does not move.
pub(super) async fn sell_unlimited(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    line: &Line,
    order: &str,
    actor: &str,
) -> DomainResult<()> {
    stock::ensure_balance(tx, now, merchant_id, line.sku_id, line.warehouse_id).await?;
    let mv = Move {
        kind: "CONFIRM",
        qty: line.qty,
        delta: Buckets {
            total: line.qty,
            sold: line.qty,
            ..Default::default()
        },
        reason: "unlimited",
        actor,
        order_id: Some(order),
        reason_code: None,
    };
    stock::apply(
        tx,
        now,
        merchant_id,
        line.sku_id,
        line.warehouse_id,
        Guard::None,
        &mv,
    )
    .await?
    .ok_or_else(|| DomainError::Internal(format!("order {order}: no balance row")))?;
    Ok(())
}

/// What a line deducted on payment needed and what there was when the payment came.
async fn shortfall(tx: &mut Transaction<'_, Any>, line: &Line) -> DomainResult<Shortfall> {
    let (code, available): (String, Option<i64>) = sqlx::query_as(
        "SELECT s.code, (SELECT MAX(total - locked - sold - frozen) FROM stock_balances b WHERE b.sku_id = s.id)
         FROM skus s WHERE s.id = $1",
    )
    .bind(line.sku_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(Shortfall {
        sku: code,
        qty: line.qty,
        available: available.unwrap_or(0).max(0),
    })
}

pub use crate::domain::catalog::ReservationStatus;

/// What a settlement moved, for Redis to follow once SQL committed.
#[derive(Debug, Default)]
pub(super) struct Settled {
    pub(super) stock: Vec<(i64, i64)>,
    pub(super) codes: Vec<(i64, Vec<i64>)>,
    /// Places freed: (slot, customer key, places) of each booking the order cancelled.
    pub(super) places: Vec<(i64, String, i64)>,
    /// Lines deducted on payment that stock could no longer cover: the confirm must roll back.
    pub(super) short: Vec<Shortfall>,
    /// Counters Redis reloads from SQL: goods sold without a hold it knew of.
    pub(super) reload: Vec<Subject>,
}

impl Settled {
    /// Mirrors the committed settlement in Redis: held units sold, or back to available (and
    /// held codes back to the pool).
    pub(super) async fn follow(
        &self,
        db: &Db,
        merchant_id: MerchantId,
        order: &str,
        action: Settle,
    ) {
        gate::stock_settle(db, &self.stock, order, action).await;
        db.forget(self.reload.iter().copied()).await;
        for (slot, customer, places) in &self.places {
            gate::slot_follow(db, merchant_id, *slot, customer, None, true, *places).await;
            crate::domain::slots::cache::freed(db, merchant_id, *slot);
        }
        if action != Settle::Confirm {
            for (sku, ids) in &self.codes {
                gate::code_give_back(db, *sku, order, ids, false).await;
            }
        }
    }
}

/// How a RESERVED order settles. The three share one transition: the header's conditional
/// update, every line in the ledger, the audit row, one commit, then Redis follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Settlement {
    /// Paid, while the hold lasts.
    Confirm,
    /// Cancelled by the order system, whenever it is still held.
    Release,
    /// The hold ran out (the expiry job, or a late payment finding it past its time).
    Expire,
}

impl Settlement {
    pub(super) fn to(self) -> ReservationStatus {
        match self {
            Settlement::Confirm => ReservationStatus::Confirmed,
            Settlement::Release => ReservationStatus::Released,
            Settlement::Expire => ReservationStatus::Expired,
        }
    }
    /// The ledger rows' kind.
    pub(super) fn ledger_kind(self) -> &'static str {
        match self {
            Settlement::Confirm => "CONFIRM",
            Settlement::Release => "RELEASE",
            Settlement::Expire => "EXPIRE",
        }
    }
    /// The change event of the order's move.
    pub(super) fn event(self) -> crate::domain::trail::events::EventType {
        use crate::domain::trail::events::EventType;
        match self {
            Settlement::Confirm => EventType::ReservationConfirmed,
            Settlement::Release => EventType::ReservationReleased,
            Settlement::Expire => EventType::ReservationExpired,
        }
    }
    pub(super) fn audit_action(self) -> &'static str {
        match self {
            Settlement::Confirm => "reservation.confirm",
            Settlement::Release => "reservation.release",
            Settlement::Expire => "reservation.expire",
        }
    }
    /// The header's condition besides being RESERVED (`$1` is now).
    pub(super) fn when(self) -> &'static str {
        match self {
            Settlement::Confirm => "AND expires_at > $1",
            Settlement::Release => "",
            Settlement::Expire => "AND expires_at <= $1",
        }
    }
    pub(super) fn redis(self) -> Settle {
        match self {
            Settlement::Confirm => Settle::Confirm,
            Settlement::Release | Settlement::Expire => Settle::Release,
        }
    }
}

/// What a settlement records beside the status: the payment's reference (confirm) and why
/// (release). The first reference given stays; a later one is a conflict (see `confirm`).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Note<'a> {
    pub(super) payment_ref: Option<&'a str>,
    pub(super) reason: &'a str,
}

impl Note<'_> {
    /// The audit row's detail: what the caller said.
    fn detail(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = self.payment_ref {
            parts.push(format!("payment {p}"));
        }
        if !self.reason.is_empty() {
            parts.push(self.reason.to_string());
        }
        parts.join("; ")
    }
}

/// Which order a settlement is about: by its id (from the API) or its header (from the sweep).
#[derive(Debug, Clone, Copy)]
pub(super) enum Which<'a> {
    Order(&'a str),
    Header(i64),
}

/// What a settlement came to.
pub(super) enum Outcome {
    /// Settled.
    Done,
    /// Not (any more) held under the settlement's condition: nothing done.
    NotHeld,
    /// A confirm whose lines deducted on payment stock could no longer cover: nothing done.
    Short {
        header_id: i64,
        shortfall: Vec<Shortfall>,
    },
}

/// Settles a RESERVED order, or does nothing when it is not (any more) held under the
/// settlement's condition. Safe to race: the header's update decides.
pub(super) async fn settle(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    which: Which<'_>,
    s: Settlement,
    note: Note<'_>,
) -> DomainResult<Outcome> {
    if s != Settlement::Confirm {
        load_place_slots(db, merchant_id, which).await?;
    }
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let (column, to, when) = match which {
        Which::Order(_) => ("order_id", s.to(), s.when()),
        Which::Header(_) => ("id", s.to(), s.when()),
    };
    let sql = format!(
        "UPDATE reservations SET status = '{to}', updated_at = $1, payment_ref = COALESCE($4, payment_ref),
            release_reason = $5
         WHERE merchant_id = $2 AND {column} = $3 AND status = 'RESERVED' {when} RETURNING id, order_id"
    );
    let q = sqlx::query_as::<_, (i64, String)>(&sql)
        .bind(now)
        .bind(merchant_id);
    let q = match which {
        Which::Order(order) => q.bind(order.to_string()),
        Which::Header(id) => q.bind(id),
    };
    let q = q
        .bind(note.payment_ref.map(str::to_string))
        .bind(note.reason.to_string());
    let Some((id, order)) = q.fetch_optional(&mut *tx).await? else {
        tx.rollback().await?;
        return Ok(Outcome::NotHeld);
    };
    let settled = settle_lines(
        &mut tx,
        db.now_ms(),
        merchant_id,
        id,
        &order,
        to.as_str(),
        s.ledger_kind(),
        &actor.label,
    )
    .await?;
    if !settled.short.is_empty() {
        tx.rollback().await?;
        return Ok(Outcome::Short {
            header_id: id,
            shortfall: settled.short,
        });
    }
    let subject = format!("order:{order}");
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        s.audit_action(),
        &subject,
        &note.detail(),
    )
    .await?;
    crate::domain::trail::events::record(
        &mut tx,
        db.now_ms(),
        merchant_id,
        s.event(),
        crate::domain::trail::events::Subject::new("reservation", &order, None),
        serde_json::json!({"before": "RESERVED", "after": to.as_str(),
            "payment_ref": note.payment_ref, "reason": note.reason}),
    )
    .await?;
    tx.commit().await?;
    settled.follow(db, merchant_id, &order, s.redis()).await;
    Ok(Outcome::Done)
}

/// Loads into Redis the slots an order holds places in, before a release or expiry frees them
/// in SQL and Redis then gives them back (`Settled::follow`), as a cancel does
/// (`gate::slot_ensure_loaded` says why: a booking loading the slot meanwhile would otherwise
/// write a count read before the release after its follow found no key, and the places would
/// stay hidden from buyers until reconciliation). Only with the gate; an order without places
/// costs one indexed read.
async fn load_place_slots(db: &Db, merchant_id: MerchantId, which: Which<'_>) -> DomainResult<()> {
    if gate::active(db).is_none() {
        return Ok(());
    }
    let q = match which {
        Which::Order(order) => sqlx::query_scalar::<_, i64>(
            "SELECT DISTINCT b.slot_id FROM bookings b JOIN reservations r ON r.id = b.reservation_id
             WHERE r.merchant_id = $1 AND r.order_id = $2 AND r.status = 'RESERVED' AND b.status = 'BOOKED'",
        )
        .bind(merchant_id)
        .bind(order.to_string()),
        Which::Header(id) => sqlx::query_scalar::<_, i64>(
            "SELECT DISTINCT slot_id FROM bookings WHERE merchant_id = $1 AND reservation_id = $2 AND status = 'BOOKED'",
        )
        .bind(merchant_id)
        .bind(id),
    };
    for slot in q.fetch_all(&db.pool).await? {
        gate::slot_ensure_loaded(db, merchant_id, slot).await?;
    }
    Ok(())
}

/// Payment arrived: locked → sold, with the payment's reference when the order system gives one.
/// A payment that comes after the hold expired is not refused out of hand: the order's payment
/// decides (see `late`), and what cannot be fulfilled is recorded as an exception, never lost.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn confirm(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    order: &str,
    payment_ref: Option<&str>,
) -> DomainResult<ReservationView> {
    crate::domain::kernel::error::observed(
        "confirm",
        confirm_inner(db, keys, actor, merchant_id, order, payment_ref),
    )
    .await
}

pub(super) async fn confirm_inner(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    order: &str,
    payment_ref: Option<&str>,
) -> DomainResult<ReservationView> {
    let order = order.trim();
    let which = Which::Order(order);
    let note = Note {
        payment_ref,
        reason: "",
    };
    match settle(db, actor, merchant_id, which, Settlement::Confirm, note).await? {
        Outcome::Done => return view(db, keys, merchant_id, order).await,
        Outcome::Short {
            header_id,
            shortfall,
        } => {
            let sold_out = SoldOut {
                order,
                header_id,
                payment_ref,
                shortfall: &shortfall,
            };
            return Box::pin(sold_out.refuse(db, keys, actor, merchant_id)).await;
        }
        Outcome::NotHeld => {}
    }
    let mut h = header(db, merchant_id, order)
        .await?
        .ok_or(DomainError::NotFound("reservation"))?;
    if h.status == ReservationStatus::Reserved {
        // Past its expiry but not yet swept: expire it now; the payment then decides below.
        expire_one(db, merchant_id, h.id).await?;
        h = header(db, merchant_id, order)
            .await?
            .ok_or(DomainError::NotFound("reservation"))?;
    }
    match h.status {
        ReservationStatus::Confirmed => {
            paid_again(db, actor, merchant_id, &h, order, payment_ref).await?;
            view(db, keys, merchant_id, order).await
        }
        ReservationStatus::Expired => {
            super::late::confirm_late(db, keys, actor, merchant_id, &h, order, payment_ref).await
        }
        ReservationStatus::Released if h.release_reason == NOT_IN_STOCK_AT_PAYMENT => {
            // Refused at payment before: the same answer, with the exception it recorded.
            match crate::domain::orders::exceptions::open_for(db, merchant_id, h.id).await? {
                Some(e) => Err(not_in_stock_at_payment(order, e.id, &e.shortfall)),
                None => Err(released(order, h.status.as_str())),
            }
        }
        ReservationStatus::Released => {
            // Cancelled on purpose: a payment that still arrives is money to give back, recorded.
            let exception = match payment_ref {
                Some(p) => Some(
                    crate::domain::orders::exceptions::record_paid_not_held(
                        db,
                        actor,
                        merchant_id,
                        h.id,
                        order,
                        Some(p),
                        h.status,
                        &[],
                    )
                    .await?,
                ),
                None => None,
            };
            Err(released_with(order, h.status.as_str(), exception))
        }
        // Settled above or by a racing confirm: read again by the caller's retry.
        ReservationStatus::Reserved => Err(released(order, h.status.as_str())),
    }
}

/// Why an order deducted on payment was released when its payment came (`release_reason`).
pub(super) const NOT_IN_STOCK_AT_PAYMENT: &str = "not in stock at payment";

/// A payment for an order whose lines deducted on payment stock no longer covers.
struct SoldOut<'a> {
    order: &'a str,
    header_id: i64,
    payment_ref: Option<&'a str>,
    shortfall: &'a [Shortfall],
}

impl SoldOut<'_> {
    /// Releases the order (its locked lines back on sale, its places freed), records the payment
    /// as an exception "paid, not held" for a merchant admin (refund, or fulfil after a restock)
    /// and refuses: 409 `insufficient_stock` with the exception.
    async fn refuse(
        self,
        db: &Db,
        keys: &CodeKeys,
        actor: &Actor,
        merchant_id: MerchantId,
    ) -> DomainResult<ReservationView> {
        let note = Note {
            payment_ref: self.payment_ref,
            reason: NOT_IN_STOCK_AT_PAYMENT,
        };
        let which = Which::Header(self.header_id);
        if let Outcome::NotHeld =
            settle(db, actor, merchant_id, which, Settlement::Release, note).await?
        {
            // A racing confirm, release or expiry moved the order first: answer from where it is.
            return confirm_inner(db, keys, actor, merchant_id, self.order, self.payment_ref).await;
        }
        let id = crate::domain::orders::exceptions::record_paid_not_held(
            db,
            actor,
            merchant_id,
            self.header_id,
            self.order,
            self.payment_ref,
            ReservationStatus::Released,
            self.shortfall,
        )
        .await?;
        Err(not_in_stock_at_payment(self.order, id, self.shortfall))
    }
}

/// 409 `insufficient_stock` for a payment that came when stock could not cover a line deducted on
/// payment: the order was released and the payment recorded as an exception.
fn not_in_stock_at_payment(order: &str, exception_id: i64, shortfall: &[Shortfall]) -> DomainError {
    DomainError::conflict(
        "insufficient_stock",
        messages::paid_not_in_stock(order, exception_id),
        serde_json::json!({
            "order_id": order, "status": "RELEASED", "exception_id": exception_id, "shortfall": shortfall,
        }),
    )
}

/// A confirm of an order already paid: the same payment answers the same; another payment
/// reference is a conflict (two payments for one order are for a person to look at); a reference
/// given to an order confirmed without one is recorded.
async fn paid_again(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    h: &Header,
    order: &str,
    payment_ref: Option<&str>,
) -> DomainResult<()> {
    let Some(given) = payment_ref else {
        return Ok(());
    };
    match h.payment_ref.as_deref() {
        Some(stored) if stored == given => Ok(()),
        Some(stored) => Err(DomainError::conflict(
            "payment_conflict",
            messages::payment_conflict(order, stored),
            serde_json::json!({ "order_id": order, "payment_ref": stored }),
        )),
        None => {
            let mut tx = db.begin_write().await?;
            let set = sqlx::query(
                "UPDATE reservations SET payment_ref = $1 WHERE id = $2 AND payment_ref IS NULL",
            )
            .bind(given)
            .bind(h.id)
            .execute(&mut *tx)
            .await?;
            if set.rows_affected() == 1 {
                crate::domain::trail::audit::record(
                    &mut tx,
                    db.now_ms(),
                    actor,
                    Some(merchant_id),
                    "reservation.payment_ref",
                    &format!("order:{order}"),
                    &format!("payment {given}"),
                )
                .await?;
                tx.commit().await?;
                return Ok(());
            }
            tx.rollback().await?;
            // Another confirm recorded its reference first: compare with that one.
            let now = header(db, merchant_id, order)
                .await?
                .ok_or(DomainError::NotFound("reservation"))?;
            Box::pin(paid_again(db, actor, merchant_id, &now, order, payment_ref)).await
        }
    }
}

pub(super) fn released(order: &str, status: &str) -> DomainError {
    released_with(order, status, None)
}

/// `reservation_released`, naming the exception a payment that came anyway was recorded as.
pub(super) fn released_with(order: &str, status: &str, exception: Option<i64>) -> DomainError {
    let mut details = serde_json::json!({ "order_id": order, "status": status });
    if let Some(id) = exception {
        details["exception_id"] = id.into();
    }
    DomainError::conflict(
        "reservation_released",
        messages::reservation_released(order, status),
        details,
    )
}

/// Order cancelled: locked → available, with why when the caller says. After payment this is
/// refused (returns are their own flow).
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn release(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    order: &str,
    reason: &str,
) -> DomainResult<ReservationView> {
    crate::domain::kernel::error::observed(
        "release",
        release_inner(db, keys, actor, merchant_id, order, reason),
    )
    .await
}

pub(super) async fn release_inner(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    order: &str,
    reason: &str,
) -> DomainResult<ReservationView> {
    let order = order.trim();
    let which = Which::Order(order);
    let note = Note {
        payment_ref: None,
        reason,
    };
    if let Outcome::Done = settle(db, actor, merchant_id, which, Settlement::Release, note).await? {
        return view(db, keys, merchant_id, order).await;
    }
    let h = header(db, merchant_id, order)
        .await?
        .ok_or(DomainError::NotFound("reservation"))?;
    match h.status {
        ReservationStatus::Confirmed => Err(DomainError::conflict(
            "reservation_confirmed",
            messages::reservation_confirmed(order),
            serde_json::json!({ "order_id": order, "status": "CONFIRMED" }),
        )),
        // The hold ran out before the cancel arrived: nothing is held any more, but the order
        // is still cancelled on purpose, and must read so. Left EXPIRED, a later payment would
        // take the goods again (`late`) and sell what the order system had cancelled.
        ReservationStatus::Expired => {
            release_expired(db, actor, merchant_id, h.id, order, reason).await?;
            view(db, keys, merchant_id, order).await
        }
        // Already released: say so again.
        _ => view(db, keys, merchant_id, order).await,
    }
}

/// EXPIRED → RELEASED for an order the system cancels after its hold ran out: the status, the
/// reason, the audit row and the event, in one transaction. No ledger row: the expiry already
/// gave every unit back. Conditional, so a late payment that re-took the goods meanwhile wins
/// and the release answers as it would for a confirmed order.
async fn release_expired(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    header_id: i64,
    order: &str,
    reason: &str,
) -> DomainResult<()> {
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let moved = sqlx::query(
        "UPDATE reservations SET status = 'RELEASED', updated_at = $1, release_reason = $2
         WHERE merchant_id = $3 AND id = $4 AND status = 'EXPIRED'",
    )
    .bind(now)
    .bind(reason.to_string())
    .bind(merchant_id)
    .bind(header_id)
    .execute(&mut *tx)
    .await?;
    if moved.rows_affected() == 0 {
        tx.rollback().await?;
        return Ok(());
    }
    let note = Note {
        payment_ref: None,
        reason,
    };
    let subject = format!("order:{order}");
    crate::domain::trail::audit::record(
        &mut tx,
        now,
        actor,
        Some(merchant_id),
        Settlement::Release.audit_action(),
        &subject,
        &note.detail(),
    )
    .await?;
    crate::domain::trail::events::record(
        &mut tx,
        now,
        merchant_id,
        Settlement::Release.event(),
        crate::domain::trail::events::Subject::new("reservation", order, None),
        serde_json::json!({"before": "EXPIRED", "after": "RELEASED", "reason": reason}),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

pub(super) const EXPIRY_ACTOR: &str = "system:expiry";

/// Expires one reservation if it is still RESERVED and past its time. Safe to race.
pub async fn expire_one(db: &Db, merchant_id: MerchantId, header_id: i64) -> DomainResult<bool> {
    let actor = Actor::job(EXPIRY_ACTOR);
    let which = Which::Header(header_id);
    let outcome = settle(
        db,
        &actor,
        merchant_id,
        which,
        Settlement::Expire,
        Note::default(),
    )
    .await?;
    Ok(matches!(outcome, Outcome::Done))
}

/// The expiry sweep: releases holds past their time. Returns how many it expired.
pub async fn expire_due(db: &Db, limit: i64) -> DomainResult<usize> {
    let due: Vec<(i64, MerchantId)> = sqlx::query_as(
        "SELECT id, merchant_id FROM reservations WHERE status = 'RESERVED' AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
    )
    .bind(db.now_ms())
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    let mut n = 0;
    for (id, merchant_id) in due {
        if expire_one(db, merchant_id, id).await? {
            n += 1;
        }
    }
    Ok(n)
}
