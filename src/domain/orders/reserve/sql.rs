//! The SQL transaction of a hold: the header, every line (codes, unlocked lines, units locked in
//! a warehouse), the places, or nothing.

#[allow(unused_imports)]
use super::*;

/// An order as the SQL transaction writes it: its id and fingerprint, its lines, the plan Redis
/// made for them (when it did), and when it was made and expires.
pub(in crate::domain::orders) struct Hold<'a> {
    pub(in crate::domain::orders) order: &'a str,
    pub(in crate::domain::orders) fp: &'a str,
    pub(in crate::domain::orders) customer: Option<&'a str>,
    pub(in crate::domain::orders) resolved: &'a [ResolvedItem],
    /// Place lines, with their index among the request's items.
    pub(in crate::domain::orders) places: &'a [(usize, ResolvedPlace)],
    pub(in crate::domain::orders) plan: Option<&'a [LinePlan]>,
    pub(in crate::domain::orders) now: i64,
    pub(in crate::domain::orders) expires_at: i64,
}

/// The SQL transaction of a reservation: the header, then every line, or nothing.
pub(in crate::domain::orders) async fn hold_in_sql(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    hold: Hold<'_>,
) -> DomainResult<SqlHold> {
    let mut tx = db.begin_write().await?;
    match write_hold(&mut tx, db, actor, merchant_id, &hold).await {
        Ok(SqlHold::Held(stock_lines)) => {
            tx.commit().await?;
            Ok(SqlHold::Held(stock_lines))
        }
        Ok(refused) => {
            tx.rollback().await?;
            Ok(refused)
        }
        Err(e) => {
            // The error says what went wrong; a rollback that fails too would only hide it.
            let _ = tx.rollback().await;
            Err(e)
        }
    }
}

/// What SQL made of a hold.
pub(in crate::domain::orders) enum SqlHold {
    /// Held; the stock lines as (SKU, warehouse, qty).
    Held(Vec<(i64, i64, i64)>),
    /// The order already exists.
    Known,
    /// Line `i` could not be covered; the code ids SQL found already taken (stale in Redis).
    Short(usize, Vec<i64>),
    /// Place `k` (of the order's places) could not be booked.
    PlaceRefused(usize, crate::domain::slots::booking::PlaceRefused),
    /// A line would take its customer past the SKU's per-customer limit.
    Limit(DomainError),
}

/// Everything the transaction writes, in order; anything but `Held` is rolled back.
pub(super) async fn write_hold(
    tx: &mut Transaction<'_, Any>,
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    hold: &Hold<'_>,
) -> DomainResult<SqlHold> {
    let header_id = match write_header(tx, merchant_id, hold).await? {
        Ok(id) => id,
        Err(answer) => return Ok(answer),
    };
    record_reserved(tx, db, actor, merchant_id, hold).await?;
    let mut stock_lines = Vec::new();
    for i in 0..hold.resolved.len() {
        let line = hold_line(tx, db, actor, (merchant_id, header_id), hold, i).await?;
        match line {
            Ok(Some(held)) => stock_lines.push(held),
            Ok(None) => {}
            Err(short) => return Ok(short),
        }
    }
    // Places last: a booking holds the slot's row until COMMIT, as a balance does.
    for (k, (_, p)) in hold.places.iter().enumerate() {
        let booked = crate::domain::slots::booking::book_for_order(
            tx,
            actor,
            merchant_id,
            header_id,
            &p.place,
            hold.now,
        )
        .await?;
        if let Err(why) = booked {
            return Ok(SqlHold::PlaceRefused(k, why));
        }
    }
    Ok(SqlHold::Held(stock_lines))
}

/// The order's header (the customer's orders taking turns first, when a line has a per-customer
/// limit): its id, or the answer when the order is known or a limit is passed.
pub(super) async fn write_header(
    tx: &mut Transaction<'_, Any>,
    merchant_id: MerchantId,
    hold: &Hold<'_>,
) -> DomainResult<Result<i64, SqlHold>> {
    let (resolved, now) = (hold.resolved, hold.now);
    let limited = hold
        .customer
        .filter(|_| resolved.iter().any(|i| i.max_per_customer.is_some()));
    if let Some(c) = limited {
        // The customer's orders take turns from here to COMMIT: what they already hold is then
        // read as it is.
        sqlx::query(
            "INSERT INTO customer_locks (merchant_id, customer_id, touched_at) VALUES ($1, $2, $3)
             ON CONFLICT (merchant_id, customer_id) DO UPDATE SET touched_at = excluded.touched_at",
        )
        .bind(merchant_id)
        .bind(c)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    }
    let header_id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO reservations (merchant_id, order_id, status, fingerprint, expires_at, created_at, updated_at, places,
            customer_id)
         VALUES ($1, $2, 'RESERVED', $3, $4, $5, $5, $6, $7)
         ON CONFLICT (merchant_id, order_id) DO NOTHING RETURNING id",
    )
    .bind(merchant_id)
    .bind(hold.order)
    .bind(hold.fp)
    .bind(hold.expires_at)
    .bind(now)
    .bind(hold.places.len() as i64)
    .bind(hold.customer.map(str::to_string))
    .fetch_optional(&mut **tx)
    .await?;
    let Some(header_id) = header_id else {
        return Ok(Err(SqlHold::Known));
    };
    if let Some(c) = limited {
        for item in resolved {
            let Some(limit) = item.max_per_customer else {
                continue;
            };
            let already = customer_holds(tx, merchant_id, c, item.sku_id, header_id).await?;
            if already + item.qty > limit {
                return Ok(Err(SqlHold::Limit(limit_exceeded(
                    &item.code, limit, already, true,
                ))));
            }
        }
    }
    Ok(Ok(header_id))
}

/// The order's audit row and change event. Everything that does not depend on the balances is
/// written before the first balance UPDATE: that UPDATE locks the row until COMMIT, and on a hot
/// SKU every statement after it is time all the other buyers of that SKU wait.
pub(super) async fn record_reserved(
    tx: &mut Transaction<'_, Any>,
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    hold: &Hold<'_>,
) -> DomainResult<()> {
    let lines: Vec<String> = hold
        .resolved
        .iter()
        .map(|i| format!("{} × {}", i.code, i.qty))
        .chain(
            hold.places
                .iter()
                .map(|(_, p)| format!("{} @ slot {}", p.code, p.place.slot_id)),
        )
        .collect();
    crate::domain::trail::audit::record(
        tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "reservation.reserve",
        &format!("order:{}", hold.order),
        &lines.join(", "),
    )
    .await?;
    // The event too: it does not depend on the balances (a refusal rolls it back with the rest).
    crate::domain::trail::events::record(
        tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::ReservationReserved,
        crate::domain::trail::events::Subject::new("reservation", hold.order, None),
        serde_json::json!({"before": null, "after": "RESERVED",
            "expires_at": crate::domain::kernel::validate::ms_to_rfc3339(hold.expires_at)}),
    )
    .await?;
    Ok(())
}

/// Line `i` of the order held: codes taken, a line that locks nothing recorded, or units locked
/// in the first warehouse that has them. `Ok(Some)`: the units locked as (SKU, warehouse, qty);
/// `Err`: the answer when the line cannot be covered.
pub(super) async fn hold_line(
    tx: &mut Transaction<'_, Any>,
    db: &Db,
    actor: &Actor,
    (merchant_id, header_id): (MerchantId, i64),
    hold: &Hold<'_>,
    i: usize,
) -> DomainResult<Result<Option<(i64, i64, i64)>, SqlHold>> {
    let (order, now, expires_at) = (hold.order, hold.now, hold.expires_at);
    let item = &hold.resolved[i];
    // The authority on freezes: the gate's SKU cache may be up to two seconds old.
    let frozen: Option<i64> =
        sqlx::query_scalar("SELECT frozen_finding_id FROM skus WHERE id = $1")
            .bind(item.sku_id)
            .fetch_one(&mut **tx)
            .await?;
    if let Some(finding) = frozen {
        return Err(DomainError::field(
            &format!("items[{i}].sku"),
            "sku_frozen",
            messages::sku_frozen(&item.code, finding),
        ));
    }
    let planned = hold.plan.and_then(|p| p.get(i));
    if item.is_code {
        let preferred = match planned {
            Some(LinePlan::Codes { ids }) => ids.as_slice(),
            _ => &[],
        };
        let stale = hold_codes(tx, merchant_id, header_id, order, item, now, preferred).await?;
        return Ok(match stale {
            Some(stale) => Err(SqlHold::Short(i, stale)),
            None => Ok(None),
        });
    }
    let line = StockLine {
        merchant_id,
        header_id,
        order,
        item,
        now,
        expires_at,
    };
    if item.hold != LineHold::Locked {
        return Ok(match unlocked_warehouse(tx, merchant_id, item).await? {
            Some(wh) => {
                line.insert(tx, wh).await?;
                Ok(None)
            }
            None => Err(SqlHold::Short(i, Vec::new())),
        });
    }
    let candidates: Vec<i64> = match (planned, item.warehouse_id) {
        (Some(LinePlan::Stock { warehouse }), _) => vec![*warehouse],
        (_, Some(w)) => vec![w],
        (_, None) => sqlx::query_scalar(
            "SELECT b.warehouse_id FROM stock_balances b JOIN warehouses w ON w.id = b.warehouse_id
             WHERE b.sku_id = $1 AND b.total - b.locked - b.sold - b.frozen >= $2
             ORDER BY w.priority DESC, w.id",
        )
        .bind(item.sku_id)
        .bind(item.qty)
        .fetch_all(&mut **tx)
        .await?,
    };
    // With one candidate (the gate's plan, or the order's warehouse) the line row goes in
    // first, for the same reason; if the balance then refuses, the transaction rolls back.
    let line_first = candidates.len() == 1;
    for wh in candidates {
        if line_first {
            line.insert(tx, wh).await?;
        }
        let mv = Move {
            kind: "RESERVE",
            qty: item.qty,
            delta: Buckets {
                locked: item.qty,
                ..Default::default()
            },
            reason: "",
            actor: &actor.label,
            order_id: Some(order),
            reason_code: None,
        };
        let moved = stock::apply(
            tx,
            db.now_ms(),
            merchant_id,
            item.sku_id,
            wh,
            Guard::Available(item.qty),
            &mv,
        )
        .await?;
        if moved.is_some() {
            if !line_first {
                line.insert(tx, wh).await?;
            }
            return Ok(Ok(Some((item.sku_id, wh, item.qty))));
        }
    }
    Ok(Err(SqlHold::Short(i, Vec::new())))
}

/// The warehouse a line that locks nothing is recorded in. `checked`: the order's warehouse, or
/// the highest-priority one, that has the units available now (None: refused as short; the
/// payment checks again). `unlimited`: the order's warehouse, or the merchant's highest-priority
/// one, where its sales are written (None only when the merchant has no warehouse).
pub(super) async fn unlocked_warehouse(
    tx: &mut Transaction<'_, Any>,
    merchant_id: MerchantId,
    item: &ResolvedItem,
) -> Result<Option<i64>, sqlx::Error> {
    if item.hold == LineHold::Unlimited {
        return match item.warehouse_id {
            Some(w) => Ok(Some(w)),
            None => {
                sqlx::query_scalar(
                    "SELECT id FROM warehouses WHERE merchant_id = $1 ORDER BY priority DESC, id LIMIT 1",
                )
                .bind(merchant_id)
                .fetch_optional(&mut **tx)
                .await
            }
        };
    }
    sqlx::query_scalar(
        "SELECT b.warehouse_id FROM stock_balances b JOIN warehouses w ON w.id = b.warehouse_id
         WHERE b.sku_id = $1 AND b.total - b.locked - b.sold - b.frozen >= $2
            AND ($3 IS NULL OR b.warehouse_id = $3)
         ORDER BY w.priority DESC, w.id LIMIT 1",
    )
    .bind(item.sku_id)
    .bind(item.qty)
    .bind(item.warehouse_id)
    .fetch_optional(&mut **tx)
    .await
}

/// One reservation line of goods: `qty` of a SKU held until `expires_at`, in the warehouse
/// given to `insert`.
pub(in crate::domain::orders) struct StockLine<'a> {
    pub(in crate::domain::orders) merchant_id: MerchantId,
    pub(in crate::domain::orders) header_id: i64,
    pub(in crate::domain::orders) order: &'a str,
    pub(in crate::domain::orders) item: &'a ResolvedItem,
    pub(in crate::domain::orders) now: i64,
    pub(in crate::domain::orders) expires_at: i64,
}

impl StockLine<'_> {
    pub(in crate::domain::orders) async fn insert(
        &self,
        tx: &mut Transaction<'_, Any>,
        warehouse_id: i64,
    ) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO stock_reservations (merchant_id, reservation_id, order_id, sku_id, warehouse_id, qty, status,
                expires_at, created_at, updated_at, hold)
             VALUES ($1, $2, $3, $4, $5, $6, 'RESERVED', $7, $8, $8, $9)",
        )
        .bind(self.merchant_id)
        .bind(self.header_id)
        .bind(self.order)
        .bind(self.item.sku_id)
        .bind(warehouse_id)
        .bind(self.item.qty)
        .bind(self.expires_at)
        .bind(self.now)
        .bind(self.item.hold.as_str())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}

/// Holds `qty` specific codes for a new order line: see `take_codes`, then the line's row.
/// Returns None when held, or Some(ids the gate offered that SQL found already taken).
pub(in crate::domain::orders) async fn hold_codes(
    tx: &mut Transaction<'_, Any>,
    merchant_id: MerchantId,
    header_id: i64,
    order: &str,
    item: &ResolvedItem,
    now: i64,
    preferred: &[i64],
) -> DomainResult<Option<Vec<i64>>> {
    let (held, stale) =
        take_codes(tx, header_id, order, item.sku_id, item.qty, now, preferred).await?;
    if held < item.qty {
        return Ok(Some(stale));
    }
    // The order's expiry rides along: the gate's pool load reads the SKU's recent lines by it
    // (`domain::kernel::gate::code_records`).
    sqlx::query("INSERT INTO code_reservations (merchant_id, reservation_id, sku_id, qty, status, created_at, expires_at) VALUES ($1, $2, $3, $4, 'RESERVED', $5, (SELECT expires_at FROM reservations WHERE id = $2))")
        .bind(merchant_id)
        .bind(header_id)
        .bind(item.sku_id)
        .bind(item.qty)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(None)
}

pub(in crate::domain::orders) use crate::domain::codes::code::hold_for_order as take_codes;

/// Takes one more code of a SKU for a paid order (a reissue) and sells it; None when none is left.
#[tracing::instrument(skip_all, fields(sku_id = ?sku_id))]
pub async fn take_one_code(
    tx: &mut Transaction<'_, Any>,
    header_id: i64,
    order: &str,
    sku_id: i64,
    now: i64,
) -> DomainResult<Option<i64>> {
    let (held, _) = take_codes(tx, header_id, order, sku_id, 1, now, &[]).await?;
    if held < 1 {
        return Ok(None);
    }
    let sold = crate::domain::codes::code::sell_held(tx, now, header_id, Some(sku_id)).await?;
    Ok(sold.first().copied())
}

/// Units of a SKU one customer holds or bought in their other orders (held or paid).
pub(super) async fn customer_holds(
    tx: &mut Transaction<'_, Any>,
    merchant_id: MerchantId,
    customer: &str,
    sku_id: i64,
    this_order: i64,
) -> DomainResult<i64> {
    let n: Option<i64> = sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(l.qty), 0) AS BIGINT) FROM (
            SELECT l.qty, l.reservation_id FROM stock_reservations l
             WHERE l.sku_id = $1 AND l.status IN ('RESERVED', 'CONFIRMED')
            UNION ALL
            SELECT l.qty, l.reservation_id FROM code_reservations l
             WHERE l.sku_id = $1 AND l.status IN ('RESERVED', 'CONFIRMED')
         ) l JOIN reservations r ON r.id = l.reservation_id
         WHERE r.merchant_id = $2 AND r.customer_id = $3 AND r.id <> $4",
    )
    .bind(sku_id)
    .bind(merchant_id)
    .bind(customer)
    .bind(this_order)
    .fetch_one(&mut **tx)
    .await?;
    Ok(n.unwrap_or(0))
}

/// 409 `limit_exceeded`: the SKU's limit, per order or per customer, and what the customer
/// already has (0 for a per-order limit).
pub(in crate::domain::orders) fn limit_exceeded(
    sku: &str,
    limit: i64,
    already: i64,
    per_customer: bool,
) -> DomainError {
    DomainError::conflict(
        "limit_exceeded",
        messages::limit_exceeded(sku, limit, already, per_customer),
        serde_json::json!({
            "sku": sku, "limit": limit, "already": already,
            "per": if per_customer { "customer" } else { "order" },
        }),
    )
}

pub(in crate::domain::orders) fn insufficient(item: &ResolvedItem, available: i64) -> DomainError {
    DomainError::conflict(
        "insufficient_stock",
        messages::insufficient_stock(&item.code, item.qty, available),
        serde_json::json!({ "sku": item.code, "requested": item.qty, "available": available }),
    )
}

/// What one line could get: the given warehouse's available, or the best single warehouse's.
pub(in crate::domain::orders) async fn best_available(
    db: &Db,
    sku_id: i64,
    warehouse_id: Option<i64>,
) -> DomainResult<i64> {
    let v: Option<i64> = sqlx::query_scalar(
        "SELECT MAX(total - locked - sold - frozen) FROM stock_balances WHERE sku_id = $1 AND ($2 IS NULL OR warehouse_id = $2)",
    )
    .bind(sku_id)
    .bind(warehouse_id)
    .fetch_one(&db.pool)
    .await?;
    Ok(v.unwrap_or(0).max(0))
}
