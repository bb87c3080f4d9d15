//! The Redis gate's side of a hold: places and lines taken in Redis before SQL, and given back
//! when SQL does not take them.

#[allow(unused_imports)]
use super::*;

/// Asks the gate for every line; a refusal undoes the lines already held.
pub(in crate::domain::orders) async fn gate_lines(
    db: &Db,
    order: &str,
    resolved: &[ResolvedItem],
    ttl: i64,
) -> DomainResult<Gated> {
    let Some(gate) = gate::active(db) else {
        return Ok(Gated::Bypass);
    };
    // Order records outlive the hold so that a late retry is still recognised.
    let record_ttl = ttl + gate::RECORD_AFTER_HOLD_S;
    let mut plan = Vec::with_capacity(resolved.len());
    for item in resolved {
        // Lines that lock nothing pass the gate: SQL checks a `checked` line, nothing limits an
        // `unlimited` one.
        if item.hold != LineHold::Locked {
            plan.push(LinePlan::Unheld);
            continue;
        }
        let step = if item.is_code {
            match gate::code_take(db, gate, item.sku_id, order, item.qty, record_ttl).await? {
                Some(CodeAnswer::Held { ids, .. }) => Ok(LinePlan::Codes { ids }),
                Some(CodeAnswer::No(n)) => Err(Gated::Refused(insufficient(item, n))),
                // A twin that holds codes in Redis gives back its own ids when SQL finds the
                // order known; codes this request takes in SQL leave the pool: nothing to mirror.
                _ => Err(Gated::Bypass),
            }
        } else {
            match gate::stock_hold(
                db,
                gate,
                item.sku_id,
                order,
                item.qty,
                item.warehouse_id,
                record_ttl,
            )
            .await?
            {
                Some(StockAnswer::Held(warehouse)) => Ok(LinePlan::Stock { warehouse }),
                Some(StockAnswer::No(n)) => Err(Gated::Refused(insufficient(item, n))),
                Some(StockAnswer::Seen) => Err(Gated::Seen),
                _ => Err(Gated::Bypass),
            }
        };
        match step {
            Ok(p) => plan.push(p),
            Err(stop) => {
                undo(db, order, &resolved[..plan.len()], &plan).await;
                crate::telemetry::count_gate(
                    "reserve",
                    match stop {
                        Gated::Refused(_) => "no",
                        Gated::Seen => "seen",
                        _ => "bypass",
                    },
                );
                return Ok(stop);
            }
        }
    }
    crate::telemetry::count_gate("reserve", "yes");
    Ok(Gated::Held(plan))
}

/// Gives back in Redis what the gate held for lines SQL did not take.
pub(in crate::domain::orders) async fn undo(
    db: &Db,
    order: &str,
    resolved: &[ResolvedItem],
    plan: &[LinePlan],
) {
    undo_except(db, order, resolved, plan, &[]).await
}

pub(in crate::domain::orders) async fn undo_except(
    db: &Db,
    order: &str,
    resolved: &[ResolvedItem],
    plan: &[LinePlan],
    stale: &[i64],
) {
    for (item, p) in resolved.iter().zip(plan) {
        match p {
            LinePlan::Stock { warehouse } => {
                gate::stock_settle(db, &[(item.sku_id, *warehouse)], order, Settle::Undo).await
            }
            LinePlan::Codes { ids } => {
                let back: Vec<i64> = ids.iter().copied().filter(|i| !stale.contains(i)).collect();
                gate::code_give_back(db, item.sku_id, order, &back, true).await
            }
            LinePlan::Unheld => {}
        }
    }
}

/// Asks the gate for an order's place. Ok(true): Redis took it for this request; Ok(false): SQL
/// decides (no gate, Redis could not say, or the slot is closed or the customer seen: the slot is
/// then read once, and a place it cannot give is refused now, unless it is this order's own: a
/// repeat is answered as the order was); Err: refused. `may_wait`: this request holds no place in Redis
/// yet, so it may wait for a twin (one holding places while it waits could hold up a twin that
/// waits for those).
pub(super) async fn place_gate(
    db: &Db,
    merchant_id: MerchantId,
    order: &str,
    p: &ResolvedPlace,
    may_wait: bool,
) -> DomainResult<bool> {
    use crate::infra::counters::SlotAnswer;
    if let Some(g) = gate::active(db) {
        let answer = gate::slot_take(
            db,
            g,
            merchant_id,
            p.place.slot_id,
            &p.place.customer_key,
            None,
            p.place.places,
        )
        .await?;
        match answer {
            Some((SlotAnswer::Booked, _)) => {
                crate::telemetry::count_gate("book", "yes");
                return Ok(true);
            }
            // Another request of this customer (a twin of this order, or another order of
            // theirs) took places in Redis: its outcome in SQL first, as a booking's twin waits
            // (`booking::await_twin`), or this one could be booked there while Redis counts the
            // other's places.
            Some((SlotAnswer::Seen, _)) if may_wait => {
                crate::domain::slots::booking::await_twin(
                    db,
                    g,
                    merchant_id,
                    p.place.slot_id,
                    &p.place.customer_key,
                    None,
                )
                .await?;
            }
            Some((a, remaining)) => {
                if let Some(e) =
                    crate::domain::slots::booking::gate_refusal(&p.place, &p.code, &a, remaining)
                {
                    crate::telemetry::count_gate("book", "no");
                    return Err(e);
                }
            }
            None => {}
        }
        crate::telemetry::count_gate("book", "bypass");
    }
    let slot = crate::domain::slots::get(
        db,
        crate::domain::Scope::Merchant(merchant_id),
        p.place.slot_id,
    )
    .await?;
    if slot.status != crate::domain::slots::SlotStatus::Open
        || slot.booked + p.place.places > slot.capacity
        || slot.started(db.now_ms())
    {
        // Asked as "already booked" first: a customer who holds the place hears that, unless
        // the place is this order's own (a repeat, answered as the order was).
        return match crate::domain::slots::booking::order_place_refusal(
            db,
            merchant_id,
            order,
            &p.place,
            &p.code,
        )
        .await?
        {
            Some(e) => Err(e),
            None => Ok(false),
        };
    }
    Ok(false)
}

/// Gives back in Redis the places it gave an order SQL did not book.
pub(super) async fn give_back_places(db: &Db, merchant_id: MerchantId, places: &[&ResolvedPlace]) {
    for p in places {
        gate::slot_follow(
            db,
            merchant_id,
            p.place.slot_id,
            &p.place.customer_key,
            None,
            true,
            p.place.places,
        )
        .await;
    }
}

/// One line's hold granted by the gate.
#[derive(Debug, Clone)]
pub(in crate::domain::orders) enum LinePlan {
    Stock {
        warehouse: i64,
    },
    Codes {
        ids: Vec<i64>,
    },
    /// A line the gate holds nothing for (it locks nothing).
    Unheld,
}

pub(in crate::domain::orders) enum Gated {
    Refused(DomainError),
    Held(Vec<LinePlan>),
    /// Redis is unavailable: SQL alone.
    Bypass,
    /// Redis already holds for this order (a twin of this request, or its first try, in flight):
    /// SQL alone, which replays the order's answer or, when this request gets there first, holds.
    Seen,
}
