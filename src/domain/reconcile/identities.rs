//! The SQL identities, each checked by one statement within reach: what stock, slots, codes and
//! orders must agree on.

#[allow(unused_imports)]
use super::*;

/// An order that booked places, and its bookings.
#[derive(sqlx::FromRow)]
pub(super) struct OrderPlaces {
    pub(super) merchant_id: MerchantId,
    pub(super) order_id: String,
    pub(super) status: String,
    pub(super) places: i64,
    /// Bookings not cancelled.
    pub(super) active: i64,
    /// Bookings ever made.
    pub(super) ever: i64,
    pub(super) slot: Option<i64>,
    pub(super) sku: Option<i64>,
}

/// What the checks found: how many rows they checked, and the broken identities.
#[derive(Default)]
pub(super) struct Found {
    pub(super) checked: i64,
    pub(super) broken: Vec<Broken>,
}

/// Every SQL identity within reach, each checked by one statement.
pub(super) async fn sql_identities(db: &Db, reach: &Reach) -> DomainResult<(i64, Vec<Broken>)> {
    // A list of ids makes each statement's text new: not worth a prepared statement.
    let persistent = matches!(reach, Reach::All);
    let mut found = Found::default();
    stock_locked(db, reach, persistent, &mut found).await?;
    stock_ledger(db, reach, &mut found).await?;
    slot_counts(db, reach, persistent, &mut found).await?;
    code_states(db, reach, persistent, &mut found).await?;
    code_lines(db, reach, persistent, &mut found).await?;
    order_places(db, reach, persistent, &mut found).await?;
    Ok((found.checked, found.broken))
}

/// Stock: a balance's locked units are what its RESERVED order lines hold.
async fn stock_locked(
    db: &Db,
    reach: &Reach,
    persistent: bool,
    found: &mut Found,
) -> DomainResult<()> {
    let (checked, out) = (&mut found.checked, &mut found.broken);
    // Stock: locked = what RESERVED order lines hold (lines deducted on payment or of unlimited
    // SKUs lock nothing).
    let rows: Vec<(MerchantId, i64, i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT b.merchant_id, b.sku_id, b.warehouse_id, b.locked,
            CAST(COALESCE((SELECT SUM(r.qty) FROM stock_reservations r
                WHERE r.sku_id = b.sku_id AND r.warehouse_id = b.warehouse_id AND r.status = 'RESERVED'
                    AND r.hold = 'locked'), 0) AS BIGINT)
         FROM stock_balances b WHERE 1 = 1{}",
        reach.only("b.sku_id", skus_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    *checked += rows.len() as i64;
    for (m, sku, wh, locked, held) in rows {
        if locked != held {
            out.push(Broken::new(
                FindingKind::LockedMismatch,
                m,
                About::Balance { sku, warehouse: wh },
                format!("locked {held}"),
                format!("locked {locked}"),
            ));
        }
    }
    Ok(())
}

/// Stock: the ledger replays to the balance.
async fn stock_ledger(db: &Db, reach: &Reach, found: &mut Found) -> DomainResult<()> {
    let out = &mut found.broken;
    // Stock: the ledger replays to the balance.
    for m in crate::domain::stock::ledger::replay_mismatches_in(
        db,
        crate::domain::Scope::All,
        reach.skus(),
    )
    .await?
    {
        let merchant: MerchantId = sqlx::query_scalar("SELECT merchant_id FROM skus WHERE id = $1")
            .bind(m.sku_id)
            .fetch_one(&db.pool)
            .await?;
        out.push(Broken::new(
            FindingKind::LedgerMismatch,
            merchant,
            About::Balance {
                sku: m.sku_id,
                warehouse: m.warehouse_id,
            },
            buckets_text(&m.ledger),
            buckets_text(&m.balance),
        ));
    }
    Ok(())
}

/// Slots: booked is the active bookings' places, never above capacity.
async fn slot_counts(
    db: &Db,
    reach: &Reach,
    persistent: bool,
    found: &mut Found,
) -> DomainResult<()> {
    let (checked, out) = (&mut found.checked, &mut found.broken);
    // Slots: booked = active bookings, and never above capacity.
    let rows: Vec<(MerchantId, i64, i64, i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT s.merchant_id, s.sku_id, s.id, s.booked, s.capacity,
            (SELECT CAST(COALESCE(SUM(b.places), 0) AS BIGINT) FROM bookings b WHERE b.slot_id = s.id AND b.status <> 'CANCELLED')
         FROM slots s WHERE 1 = 1{}",
        reach.only("s.id", slots_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    *checked += rows.len() as i64;
    for (m, sku, slot, booked, capacity, active) in rows {
        if booked != active {
            out.push(Broken::new(
                FindingKind::BookedMismatch,
                m,
                About::Slot { sku, slot },
                format!("booked {active}"),
                format!("booked {booked}"),
            ));
        }
        if booked > capacity {
            out.push(Broken::new(
                FindingKind::Overbooked,
                m,
                About::Slot { sku, slot },
                format!("booked ≤ {capacity}"),
                format!("booked {booked}"),
            ));
        }
    }
    Ok(())
}

/// Codes: a BOOKING code has a live order, a SOLD one a confirmed order.
async fn code_states(
    db: &Db,
    reach: &Reach,
    persistent: bool,
    found: &mut Found,
) -> DomainResult<()> {
    let out = &mut found.broken;
    // Codes: BOOKING has a live reservation; SOLD has a confirmed order.
    let rows: Vec<(MerchantId, i64, i64, String)> = sqlx::query_as(&format!(
        "SELECT c.merchant_id, c.sku_id, c.id, c.status FROM codes c LEFT JOIN reservations r ON r.id = c.reservation_id
         WHERE ((c.status = 'BOOKING' AND (r.id IS NULL OR r.status <> 'RESERVED'))
            OR (c.status = 'SOLD' AND (c.order_id IS NULL OR r.id IS NULL OR r.status <> 'CONFIRMED' OR r.order_id <> c.order_id))){}",
        reach.only("c.sku_id", skus_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    for (m, sku, code, status) in rows {
        let kind = if status == "BOOKING" {
            FindingKind::CodeOrphanBooking
        } else {
            FindingKind::CodeSoldWithoutOrder
        };
        let expected = if status == "BOOKING" {
            "a RESERVED order"
        } else {
            "a CONFIRMED order"
        };
        out.push(Broken::new(
            kind,
            m,
            About::Code { sku, code },
            expected,
            status,
        ));
    }
    Ok(())
}

/// Codes: every order line holds exactly its quantity of codes.
async fn code_lines(
    db: &Db,
    reach: &Reach,
    persistent: bool,
    found: &mut Found,
) -> DomainResult<()> {
    let (checked, out) = (&mut found.checked, &mut found.broken);
    // Codes: every order line holds exactly its quantity of codes (no code in two orders, none
    // missing). After sale a code may be redeemed or voided, and each reissue adds one code to
    // the line: the line's codes number its quantity plus its reissues.
    let rows: Vec<(MerchantId, i64, i64, i64, i64)> = sqlx::query_as(&format!(
        "SELECT l.merchant_id, l.sku_id, l.reservation_id, l.qty + l.reissued,
            (SELECT COUNT(*) FROM codes c WHERE c.reservation_id = l.reservation_id AND c.sku_id = l.sku_id
                AND c.status IN ('BOOKING', 'SOLD', 'REDEEMED', 'VOIDED'))
         FROM code_reservations l WHERE l.status IN ('RESERVED', 'CONFIRMED'){}",
        reach.only("l.sku_id", skus_of)
    ))
    .persistent(persistent)
    .fetch_all(&db.pool)
    .await?;
    *checked += rows.len() as i64;
    for (m, sku, reservation, qty, held) in rows {
        if qty != held {
            out.push(Broken::new(
                FindingKind::CodeLineMismatch,
                m,
                About::CodeLine { sku, reservation },
                format!("{qty} codes"),
                format!("{held} codes"),
            ));
        }
    }
    Ok(())
}

/// Orders with places: their bookings agree with their state.
async fn order_places(
    db: &Db,
    reach: &Reach,
    persistent: bool,
    found: &mut Found,
) -> DomainResult<()> {
    let (checked, out) = (&mut found.checked, &mut found.broken);
    // Orders with places: no active booking belongs to a released or expired order, and a held
    // order has every place it booked (a paid one booked each at least once: staff may cancel a
    // paid order's booking later, as any other).
    let rows: Vec<OrderPlaces> =
        sqlx::query_as(&format!(
            "SELECT r.merchant_id, r.order_id, r.status, r.places,
                (SELECT COUNT(*) FROM bookings b WHERE b.reservation_id = r.id AND b.status <> 'CANCELLED') AS active,
                (SELECT COUNT(*) FROM bookings b WHERE b.reservation_id = r.id) AS ever,
                (SELECT MIN(b.slot_id) FROM bookings b WHERE b.reservation_id = r.id) AS slot,
                (SELECT MIN(s.sku_id) FROM bookings b JOIN slots s ON s.id = b.slot_id WHERE b.reservation_id = r.id) AS sku
             FROM reservations r
             WHERE (r.places > 0 OR EXISTS (SELECT 1 FROM bookings b WHERE b.reservation_id = r.id)){}",
            reach.only("r.id", reservations_of)
        ))
        .persistent(persistent)
        .fetch_all(&db.pool)
        .await?;
    *checked += rows.len() as i64;
    for OrderPlaces {
        merchant_id: m,
        order_id: order,
        status,
        places,
        active,
        ever,
        slot,
        sku,
    } in rows
    {
        let (expected, broken) = match status.as_str() {
            "RELEASED" | "EXPIRED" => (0, active != 0),
            "RESERVED" => (places, active != places),
            _ => (places, ever < places),
        };
        if broken {
            out.push(Broken::new(
                FindingKind::OrderBookingMismatch,
                m,
                About::Order { order, sku, slot },
                format!("{expected} active bookings ({status})"),
                format!("{active} active bookings"),
            ));
        }
    }
    Ok(())
}
