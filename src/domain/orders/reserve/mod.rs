//! Taking the hold: an order's lines checked, the Redis gate asked first, then one SQL
//! transaction for the header and every line, or nothing.

use super::*;
use crate::domain::MerchantId;

mod redis;
mod resolve;
mod sql;

#[allow(unused_imports)]
pub use redis::*;
#[allow(unused_imports)]
pub use resolve::*;
#[allow(unused_imports)]
pub use sql::*;

/// Holds every item or none. Without a warehouse, a line goes to the highest-priority warehouse
/// that can cover it whole.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn reserve(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    input: ReserveInput,
    max_ttl: i64,
) -> DomainResult<ReservationView> {
    crate::domain::kernel::error::observed(
        "reserve",
        reserve_inner(db, keys, actor, merchant_id, input, max_ttl),
    )
    .await
}

pub(in crate::domain::orders) async fn reserve_inner(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    input: ReserveInput,
    max_ttl: i64,
) -> DomainResult<ReservationView> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
    let order = errs.take(order_id(&input.order_id));
    let ttl = errs.take(ttl(input.ttl_seconds, max_ttl));
    let customer = errs
        .take(customer_id(input.customer_id.as_deref()))
        .flatten();
    let Lines {
        resolved,
        places,
        over_limit,
    } = resolve_lines(db, merchant_id, &input.items, &mut errs).await?;
    // Every field that failed left its error and a None: go on only when all parsed.
    let (Some(order), Some(ttl), true) = (order, ttl, errs.is_empty()) else {
        return Err(errs.refusal());
    };
    if let Some(e) = over_limit {
        return Err(e);
    }
    // Places first: a full or started slot is refused before the gate holds goods for an order
    // that cannot be made (and refuses other buyers meanwhile). With the gate, Redis answers (and
    // takes the place) without SQL; otherwise, or when Redis cannot say, one read of the slot.
    let mut gated_places = Vec::new();
    for (_, p) in &places {
        match place_gate(db, merchant_id, &order, p, gated_places.is_empty()).await {
            Ok(true) => gated_places.push(p),
            Ok(false) => {}
            Err(e) => {
                give_back_places(db, merchant_id, &gated_places).await;
                return Err(e);
            }
        }
    }
    let fp = fingerprint(&input.items, customer.as_deref());
    let order = Order {
        id: &order,
        fp: &fp,
        ttl,
        customer: customer.as_deref(),
    };
    let held = Box::pin(hold_order(
        db,
        keys,
        actor,
        merchant_id,
        order,
        &resolved,
        &places,
        &gated_places,
    ))
    .await;
    // The places Redis gave this request go back unless SQL booked them for it.
    if !matches!(held, Ok((_, true))) {
        give_back_places(db, merchant_id, &gated_places).await;
    }
    held.map(|(view, _)| view)
}

/// An order's identity as the hold writes it.
#[derive(Clone, Copy)]
struct Order<'a> {
    pub(super) id: &'a str,
    pub(super) fp: &'a str,
    pub(super) ttl: i64,
    pub(super) customer: Option<&'a str>,
}

/// The gate's lines, the cheap answers and the SQL transaction of a checked order. Answers the
/// view and whether SQL held the order just now (false: refused, or a repeat replayed).
#[allow(clippy::too_many_arguments)]
async fn hold_order(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    order: Order<'_>,
    resolved: &[ResolvedItem],
    places: &[(usize, ResolvedPlace)],
    gated_places: &[&ResolvedPlace],
) -> DomainResult<(ReservationView, bool)> {
    let Order {
        id: order,
        fp,
        ttl,
        customer,
    } = order;
    // The Redis gate first, when on: a "no" from it answers without touching SQL.
    let plan = match gate_lines(db, order, resolved, ttl).await? {
        Gated::Refused(e) => return Err(e),
        Gated::Held(plan) => (Some(plan), false),
        Gated::Bypass => (None, false),
        Gated::Seen => (None, true),
    };
    let (plan, seen) = plan;
    let via_gate = plan.is_some();

    // Cheap answers next (`cheap_answers`). A single-line order of goods goes to its SKU's group
    // (`batch`) first, which gives them for many orders at once, and asks them only when the
    // group gives the order back.
    let grouped = super::batch::groupable(db, resolved, places.len());
    if !via_gate && !grouped {
        if let Some(answer) = cheap_answers(db, keys, merchant_id, (order, fp), resolved).await? {
            return Ok(answer);
        }
    }

    let now = db.now_ms();
    let expires_at = now + ttl * 1000;

    // Boxed, like the replies below: their futures are large, and held inline they would make
    // every request's future as large, to be allocated and copied even when Redis says no.
    let hold = Hold {
        order,
        fp,
        customer,
        resolved,
        places,
        plan: plan.as_deref(),
        now,
        expires_at,
    };
    // What the group could not answer is held alone.
    let answer = match grouped {
        true => super::batch::hold(db, actor, merchant_id, &hold).await,
        false => None,
    };
    let outcome = match answer {
        Some(super::batch::Grouped::Held(warehouse, slug)) => {
            let item = &resolved[0];
            if !via_gate && !seen {
                gate::touched(db, [item.subject()]);
            }
            if seen {
                gate::stock_mirror(db, &[(item.sku_id, warehouse, item.qty)]).await;
            }
            // A new order of one line, just committed: its answer is what the group wrote.
            return Ok((fresh_view(order, item, slug, expires_at), true));
        }
        Some(super::batch::Grouped::SoldOut) => {
            // Nothing left in any warehouse, as the group read it under the row's lock.
            if let Some(plan) = &plan {
                undo(db, order, resolved, plan).await;
            }
            return Err(insufficient(&resolved[0], 0));
        }
        None => {
            // Given back by the group: the cheap answers it skipped come first, as for any order.
            if grouped && !via_gate {
                if let Some(answer) =
                    cheap_answers(db, keys, merchant_id, (order, fp), resolved).await?
                {
                    return Ok(answer);
                }
            }
            Box::pin(hold_in_sql(db, actor, merchant_id, hold)).await
        }
    };
    let asked = Asked {
        order,
        fp,
        resolved,
        places,
        gated_places,
        plan: plan.as_deref(),
        via_gate,
        seen,
    };
    settle(db, keys, merchant_id, &asked, outcome).await
}

/// An order as the hold path knows it once SQL has answered.
struct Asked<'a> {
    pub(super) order: &'a str,
    pub(super) fp: &'a str,
    pub(super) resolved: &'a [ResolvedItem],
    pub(super) places: &'a [(usize, ResolvedPlace)],
    /// The places Redis gave this request before SQL.
    pub(super) gated_places: &'a [&'a ResolvedPlace],
    /// What the gate held for each line, when it held.
    pub(super) plan: Option<&'a [LinePlan]>,
    pub(super) via_gate: bool,
    /// Redis already held for this order (a twin in flight).
    pub(super) seen: bool,
}

impl Asked<'_> {
    /// Gives back what the gate held for the order.
    pub(super) async fn undo(&self, db: &Db) {
        if let Some(plan) = self.plan {
            undo(db, self.order, self.resolved, plan).await;
        }
    }
}

/// The answer to what SQL made of the hold, and Redis brought in line with it.
async fn settle(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    a: &Asked<'_>,
    outcome: DomainResult<SqlHold>,
) -> DomainResult<(ReservationView, bool)> {
    let order = a.order;
    match outcome {
        Ok(SqlHold::Held(stock_lines)) => {
            held_in_sql(db, merchant_id, a, &stock_lines).await?;
            Box::pin(view(db, keys, merchant_id, order))
                .await
                .map(|v| (v, true))
        }
        Ok(SqlHold::Known) => known(db, keys, merchant_id, a).await,
        Ok(SqlHold::Limit(e)) => {
            a.undo(db).await;
            Err(e)
        }
        Ok(SqlHold::PlaceRefused(k, why)) => {
            a.undo(db).await;
            let (_, p) = &a.places[k];
            Err(crate::domain::slots::booking::place_refusal(
                db,
                merchant_id,
                &p.place,
                &p.code,
                why,
            )
            .await?)
        }
        Ok(SqlHold::Short(i, stale)) => {
            if let Some(plan) = a.plan {
                undo_except(db, order, a.resolved, plan, &stale).await;
            }
            let item = &a.resolved[i];
            let available = if item.is_code {
                crate::domain::codes::sellable_count(db, item.sku_id).await?
            } else {
                best_available(db, item.sku_id, item.warehouse_id).await?
            };
            Err(insufficient(item, available))
        }
        Err(e) => {
            a.undo(db).await;
            Err(e)
        }
    }
}

/// After SQL held an order: Redis takes what SQL alone took (places, units of a twin it recorded,
/// codes taken without the pool), or learns that it changed.
async fn held_in_sql(
    db: &Db,
    merchant_id: MerchantId,
    a: &Asked<'_>,
    stock_lines: &[(i64, i64, i64)],
) -> DomainResult<()> {
    // Places booked by SQL alone (not given by Redis first): Redis takes them too.
    for (_, p) in a
        .places
        .iter()
        .filter(|(_, p)| !a.gated_places.iter().any(|g| std::ptr::eq(*g, p)))
    {
        gate::slot_follow(
            db,
            merchant_id,
            p.place.slot_id,
            &p.place.customer_key,
            None,
            false,
            p.place.places,
        )
        .await;
    }
    if a.seen {
        // Redis recorded this order for a twin still on its way to SQL, and this request
        // won there without Redis counting it: the twin will find the order known and give
        // its Redis hold back, so Redis takes these units now, where SQL put them.
        gate::stock_mirror(db, stock_lines).await;
    }
    if !a.via_gate {
        if !a.seen {
            gate::touched(db, a.resolved.iter().map(ResolvedItem::subject));
        }
        // Codes taken without the pool must leave it, or it would offer them again.
        for item in a.resolved.iter().filter(|i| i.is_code) {
            gate::codes_taken_outside(db, merchant_id, a.order, item.sku_id).await?;
        }
    }
    Ok(())
}

/// The order was seen before: the same request gets the same answer, another is a conflict.
async fn known(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    a: &Asked<'_>,
) -> DomainResult<(ReservationView, bool)> {
    let order = a.order;
    if a.plan.is_some() {
        a.undo(db).await;
        // Best effort: the order's answer does not depend on it.
        if let Err(e) = gate::restore_order_records(db, merchant_id, order).await {
            tracing::warn!(error = %e, "putting back an order's Redis records failed");
        }
    }
    let header = header(db, merchant_id, order)
        .await?
        .ok_or(DomainError::NotFound("reservation"))?;
    if header.fingerprint != a.fp {
        return Err(DomainError::conflict(
            "order_conflict",
            messages::order_conflict(order),
            serde_json::json!({ "order_id": order }),
        ));
    }
    Box::pin(replay(db, keys, merchant_id, order, &header))
        .await
        .map(|v| (v, false))
}

/// The answers given without taking a write lock: a retry of a known order replays its answer (a
/// different request under its id is a conflict), and a line no single warehouse can cover is
/// refused. Without the gate, almost every request of a sold-out flash sale ends here. None: on to
/// the transaction, whose conditional UPDATE stays the authority.
async fn cheap_answers(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    (order, fp): (&str, &str),
    resolved: &[ResolvedItem],
) -> DomainResult<Option<(ReservationView, bool)>> {
    if let Some(h) = header(db, merchant_id, order).await? {
        if h.fingerprint != fp {
            return Err(DomainError::conflict(
                "order_conflict",
                messages::order_conflict(order),
                serde_json::json!({ "order_id": order }),
            ));
        }
        return Box::pin(replay(db, keys, merchant_id, order, &h))
            .await
            .map(|v| Some((v, false)));
    }
    for item in resolved.iter().filter(|i| i.hold != LineHold::Unlimited) {
        let available = if item.is_code {
            crate::domain::codes::sellable_count(db, item.sku_id).await?
        } else {
            best_available(db, item.sku_id, item.warehouse_id).await?
        };
        if available < item.qty {
            return Err(insufficient(item, available));
        }
    }
    Ok(None)
}

/// The view of a single-line order of goods a group just held: what `view` reads back, without
/// reading it (a test holds the two equal).
fn fresh_view(
    order: &str,
    item: &ResolvedItem,
    warehouse: String,
    expires_at: i64,
) -> ReservationView {
    ReservationView {
        order_id: order.to_string(),
        status: ReservationStatus::Reserved,
        expires_at: ms_to_rfc3339(expires_at),
        items: vec![ItemView {
            sku: item.code.clone(),
            qty: item.qty,
            warehouse: Some(warehouse),
            hold: Some(item.hold),
            codes: None,
            slot_id: None,
            booking: None,
        }],
        payment_ref: None,
        late_payment: false,
        release_reason: String::new(),
    }
}

/// The answer to a repeat of a known order. A hold that still stands replays as it was; one that
/// has expired or was released is refused (409), so that a caller who reads only the status code
/// never believes it holds goods (a repeat used to answer 201 with status EXPIRED).
async fn replay(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    order: &str,
    h: &super::Header,
) -> DomainResult<ReservationView> {
    let mut status = h.status;
    if status == ReservationStatus::Reserved && h.expires_at <= db.now_ms() {
        // Past its expiry but not yet swept: expire it now, as confirm does.
        super::settle::expire_one(db, merchant_id, h.id).await?;
        status = header(db, merchant_id, order)
            .await?
            .map_or(ReservationStatus::Expired, |h| h.status);
    }
    match status {
        ReservationStatus::Expired => Err(DomainError::conflict(
            "reservation_expired",
            messages::reservation_expired(order),
            serde_json::json!({ "order_id": order, "status": status.as_str() }),
        )),
        ReservationStatus::Released => Err(super::settle::released(order, status.as_str())),
        _ => view(db, keys, merchant_id, order).await,
    }
}
