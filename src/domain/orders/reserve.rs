//! Taking the hold: an order's lines checked, the Redis gate asked first, then one SQL
//! transaction for the header and every line, or nothing.

use super::*;
use crate::domain::MerchantId;

pub fn order_id(raw: &str) -> Result<String, FieldError> {
    let v = raw.trim();
    if v.is_empty() || v.len() > ORDER_ID_MAX || v.chars().any(|c| c.is_control()) {
        return Err(FieldError::new(
            "order_id",
            "invalid_order_id",
            messages::bad_order_id(ORDER_ID_MAX),
        ));
    }
    Ok(v.to_string())
}

/// A customer id as the order system sends it: trimmed, printable, at most `ORDER_ID_MAX`
/// characters; empty or absent is none.
pub fn customer_id(raw: Option<&str>) -> Result<Option<String>, FieldError> {
    let Some(v) = raw.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    if v.chars().count() > ORDER_ID_MAX || v.chars().any(char::is_control) {
        return Err(FieldError::new(
            "customer_id",
            "invalid_customer_id",
            messages::bad_customer_id(ORDER_ID_MAX),
        ));
    }
    Ok(Some(v.to_string()))
}

pub fn ttl(raw: Option<i64>, max: i64) -> Result<i64, FieldError> {
    match raw {
        None => Ok(DEFAULT_TTL_SECONDS.min(max)),
        Some(t) if (1..=max).contains(&t) => Ok(t),
        Some(_) => Err(FieldError::new(
            "ttl_seconds",
            "invalid_ttl",
            messages::bad_ttl(max),
        )),
    }
}

/// The request's items in a canonical order, so a retry with lines shuffled is the same request.
pub(super) fn fingerprint(items: &[ItemInput], customer: Option<&str>) -> String {
    let mut parts: Vec<String> = items
        .iter()
        .map(|i| match &i.place {
            // A place: its slot and who comes (goods-only orders keep the fingerprint they had).
            Some(p) => format!(
                "{}@{}:{}:{}",
                i.sku.trim(),
                p.slot_id,
                p.places,
                p.phone.trim()
            ),
            None => format!(
                "{}:{}:{}",
                i.sku.trim(),
                i.qty,
                i.warehouse.as_deref().unwrap_or("").trim()
            ),
        })
        .collect();
    parts.sort();
    // The customer counts too (orders without one keep the fingerprint they had).
    match customer {
        Some(c) => format!("{}|customer:{c}", parts.join(",")),
        None => parts.join(","),
    }
}

pub(super) struct ResolvedItem {
    pub(super) sku_id: i64,
    pub(super) code: String,
    pub(super) qty: i64,
    pub(super) warehouse_id: Option<i64>,
    /// Sold as codes (a voucher) rather than from stock.
    pub(super) is_code: bool,
    /// At most this many units held and paid by one customer.
    pub(super) max_per_customer: Option<i64>,
    /// Goods: how the line holds its units (codes: always `Locked`, as BOOKING).
    pub(super) hold: LineHold,
}

/// A place line, checked: its service SKU and the booking it will make.
pub(super) struct ResolvedPlace {
    pub(super) code: String,
    pub(super) place: crate::domain::slots::booking::OrderPlace,
}

/// Checks a place line: a service SKU, one of its slots, one place, and a customer with a name
/// and a phone number (read in the slot's store's country when it has no country code).
async fn resolve_place(
    db: &Db,
    merchant_id: MerchantId,
    i: usize,
    item: &ItemInput,
    place: &PlaceInput,
) -> DomainResult<Result<ResolvedPlace, Vec<FieldError>>> {
    use crate::domain::{slots, slots::booking};
    let field = |f: &str| format!("items[{i}].{f}");
    let mut errs = Vec::new();
    let sku = match crate::domain::catalog::sku_by_code(db, merchant_id, &item.sku).await {
        Ok(s) if s.unit_type == UnitType::Slot => s,
        Ok(s) => {
            return Ok(Err(vec![FieldError::new(
                &field("sku"),
                "wrong_sku_kind",
                messages::wrong_unit(&s.code, s.unit_type.as_str(), UnitType::Slot.as_str()),
            )]))
        }
        Err(DomainError::NotFound(_)) => {
            return Ok(Err(vec![FieldError::new(
                &field("sku"),
                "unknown_sku",
                messages::unknown_sku(item.sku.trim()),
            )]))
        }
        Err(e) => return Err(e),
    };
    // A line books one booking of `places` (a party), within the service's party size.
    if let Err(mut e) = booking::party_size(place.places, sku.max_places) {
        e.field = field("places");
        errs.push(e);
    }
    let slot_cache = slots::cache::of(db);
    let cached = slot_cache.slot_skus.get(&(merchant_id, place.slot_id));
    let slot_sku = match cached {
        Some(id) => Ok(id),
        None => slots::get(
            db,
            crate::domain::Scope::Merchant(merchant_id),
            place.slot_id,
        )
        .await
        .map(|slot| {
            slot_cache
                .slot_skus
                .put((merchant_id, place.slot_id), slot.sku_id);
            slot.sku_id
        }),
    };
    match slot_sku {
        Ok(id) if id == sku.id => {}
        Ok(_) => errs.push(FieldError::new(
            &field("slot_id"),
            "slot_not_of_sku",
            messages::slot_not_of_sku(place.slot_id, &sku.code),
        )),
        Err(DomainError::NotFound(_)) => errs.push(FieldError::new(
            &field("slot_id"),
            "unknown_slot",
            messages::unknown_slot(place.slot_id),
        )),
        Err(e) => return Err(e),
    }
    let name = booking::customer_name(&place.name).map_err(|mut e| {
        e.field = field("customer.name");
        e
    });
    let region = if place.phone.trim_start().starts_with('+') {
        None
    } else {
        slots::phone_region(db, merchant_id, place.slot_id).await?
    };
    let phone = booking::phone(&place.phone, region).map_err(|mut e| {
        e.field = field("customer.phone");
        e
    });
    match (name, phone, errs.is_empty()) {
        (Ok(name), Ok((phone_shown, customer_key)), true) => Ok(Ok(ResolvedPlace {
            code: sku.code,
            place: booking::OrderPlace {
                slot_id: place.slot_id,
                places: place.places,
                name,
                phone_shown,
                customer_key,
            },
        })),
        (name, phone, _) => {
            errs.extend(name.err());
            errs.extend(phone.err());
            Ok(Err(errs))
        }
    }
}

/// A SKU an order can hold: goods (stock) or a voucher (codes). Services are booked, not reserved.
pub(super) async fn orderable_sku(
    db: &Db,
    merchant_id: MerchantId,
    code: &str,
    field: &str,
) -> DomainResult<crate::domain::catalog::Sku> {
    match crate::domain::catalog::sku_by_code(db, merchant_id, code).await {
        Ok(s) if s.unit_type == UnitType::Code => Ok(s),
        Ok(s) => crate::domain::catalog::of_unit(s, field, UnitType::Quantity),
        Err(DomainError::NotFound(_)) => Err(DomainError::field(
            field,
            "unknown_sku",
            messages::unknown_sku(code.trim()),
        )),
        Err(e) => Err(e),
    }
}

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

pub(super) async fn reserve_inner(
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
    // A line over its SKU's per-order limit is refused once the request parses.
    let mut over_limit = None;
    if input.items.is_empty() {
        errs.push(FieldError::new(
            "items",
            "required",
            messages::required("items"),
        ));
    }
    if input.items.len() > MAX_LINES {
        errs.push(FieldError::new(
            "items",
            "too_many",
            messages::too_many_lines(MAX_LINES),
        ));
    }
    let mut seen = HashSet::new();
    let mut resolved = Vec::new();
    let mut places = Vec::new();
    for (i, item) in input.items.iter().enumerate() {
        // A line's field path is only formatted for an error: most lines have none.
        let field = |f: &str| format!("items[{i}].{f}");
        let at = |mut e: FieldError, f: &str| {
            e.field = field(f);
            e
        };
        if let Some(place) = &item.place {
            if !seen.insert(format!("{}@{}", item.sku.trim(), place.slot_id)) {
                errs.push(FieldError::new(
                    &field("slot_id"),
                    "duplicate_slot",
                    messages::duplicate_line(item.sku.trim()),
                ));
                continue;
            }
            match resolve_place(db, merchant_id, i, item, place).await? {
                Ok(p) => places.push((i, p)),
                Err(mut v) => errs.append(&mut v),
            }
            continue;
        }
        if let Err(e) = stock::qty("qty", item.qty) {
            errs.push(at(e, "qty"));
        }
        if !seen.insert(item.sku.trim().to_string()) {
            errs.push(FieldError::new(
                &field("sku"),
                "duplicate_sku",
                messages::duplicate_line(item.sku.trim()),
            ));
            continue;
        }
        let sku = match orderable_sku(db, merchant_id, &item.sku, "sku").await {
            Ok(s) => s,
            Err(DomainError::Invalid(v)) => {
                errs.append(&mut v.into_iter().map(|e| at(e, "sku")).collect());
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(finding) = sku.frozen_finding_id {
            errs.push(FieldError::new(
                &field("sku"),
                "sku_frozen",
                messages::sku_frozen(&sku.code, finding),
            ));
            continue;
        }
        // Draft, offline, outside its sale window or unpriced: the same rules as its verdict.
        if let Some(why) = crate::domain::catalog::sale::not_on_sale(db, &sku).await? {
            errs.push(FieldError::new(
                &field("sku"),
                "not_on_sale",
                messages::not_on_sale(&sku.code, &why.message),
            ));
            continue;
        }
        let is_code = sku.unit_type == UnitType::Code;
        let warehouse_id = match item
            .warehouse
            .as_deref()
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            None => None,
            Some(_) if is_code => {
                errs.push(FieldError::new(
                    &field("warehouse"),
                    "warehouse_not_applicable",
                    messages::warehouse_not_applicable(&sku.code),
                ));
                continue;
            }
            Some(slug) => match stock::warehouse_by_slug(db, merchant_id, slug).await? {
                Some(w) => Some(w.id),
                None => {
                    errs.push(FieldError::new(
                        &field("warehouse"),
                        "unknown_warehouse",
                        messages::unknown_warehouse(slug),
                    ));
                    continue;
                }
            },
        };
        if let Some(limit) = sku.max_per_order.filter(|&m| item.qty > m) {
            over_limit.get_or_insert_with(|| limit_exceeded(&sku.code, limit, 0, false));
        }
        let hold = if is_code {
            LineHold::Locked
        } else {
            sku.line_hold()
        };
        resolved.push(ResolvedItem {
            sku_id: sku.id,
            code: sku.code,
            qty: item.qty,
            warehouse_id,
            is_code,
            max_per_customer: sku.max_per_customer,
            hold,
        });
    }
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
    id: &'a str,
    fp: &'a str,
    ttl: i64,
    customer: Option<&'a str>,
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
    match outcome {
        Ok(SqlHold::Held(stock_lines)) => {
            // Places booked by SQL alone (not given by Redis first): Redis takes them too.
            for (_, p) in places
                .iter()
                .filter(|(_, p)| !gated_places.iter().any(|g| std::ptr::eq(*g, p)))
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
            if seen {
                // Redis recorded this order for a twin still on its way to SQL, and this request
                // won there without Redis counting it: the twin will find the order known and give
                // its Redis hold back, so Redis takes these units now, where SQL put them.
                gate::stock_mirror(db, &stock_lines).await;
            }
            if !via_gate {
                if !seen {
                    gate::touched(db, resolved.iter().map(ResolvedItem::subject));
                }
                // Codes taken without the pool must leave it, or it would offer them again.
                for item in resolved.iter().filter(|i| i.is_code) {
                    gate::codes_taken_outside(db, merchant_id, order, item.sku_id).await?;
                }
            }
            Box::pin(view(db, keys, merchant_id, order))
                .await
                .map(|v| (v, true))
        }
        Ok(SqlHold::Known) => {
            // The order was seen before: the same request gets the same answer, another is a conflict.
            if let Some(plan) = &plan {
                undo(db, order, resolved, plan).await;
                // Best effort: the order's answer does not depend on it.
                if let Err(e) = gate::restore_order_records(db, merchant_id, order).await {
                    tracing::warn!(error = %e, "putting back an order's Redis records failed");
                }
            }
            let header = header(db, merchant_id, order)
                .await?
                .ok_or(DomainError::NotFound("reservation"))?;
            if header.fingerprint != fp {
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
        Ok(SqlHold::Limit(e)) => {
            if let Some(plan) = &plan {
                undo(db, order, resolved, plan).await;
            }
            Err(e)
        }
        Ok(SqlHold::PlaceRefused(k, why)) => {
            if let Some(plan) = &plan {
                undo(db, order, resolved, plan).await;
            }
            let (_, p) = &places[k];
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
            if let Some(plan) = &plan {
                undo_except(db, order, resolved, plan, &stale).await;
            }
            let item = &resolved[i];
            let available = if item.is_code {
                crate::domain::codes::sellable_count(db, item.sku_id).await?
            } else {
                best_available(db, item.sku_id, item.warehouse_id).await?
            };
            Err(insufficient(item, available))
        }
        Err(e) => {
            if let Some(plan) = &plan {
                undo(db, order, resolved, plan).await;
            }
            Err(e)
        }
    }
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

/// Asks the gate for an order's place. Ok(true): Redis took it for this request; Ok(false): SQL
/// decides (no gate, Redis could not say, or the slot is closed or the customer seen: the slot is
/// then read once, and a place it cannot give is refused now, unless it is this order's own: a
/// repeat is answered as the order was); Err: refused. `may_wait`: this request holds no place in Redis
/// yet, so it may wait for a twin (one holding places while it waits could hold up a twin that
/// waits for those).
async fn place_gate(
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
async fn give_back_places(db: &Db, merchant_id: MerchantId, places: &[&ResolvedPlace]) {
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

/// What SQL made of a hold.
pub(super) enum SqlHold {
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

/// One line's hold granted by the gate.
#[derive(Debug, Clone)]
pub(super) enum LinePlan {
    Stock {
        warehouse: i64,
    },
    Codes {
        ids: Vec<i64>,
    },
    /// A line the gate holds nothing for (it locks nothing).
    Unheld,
}

pub(super) enum Gated {
    Refused(DomainError),
    Held(Vec<LinePlan>),
    /// Redis is unavailable: SQL alone.
    Bypass,
    /// Redis already holds for this order (a twin of this request, or its first try, in flight):
    /// SQL alone, which replays the order's answer or, when this request gets there first, holds.
    Seen,
}

impl ResolvedItem {
    pub(super) fn subject(&self) -> Subject {
        if self.is_code {
            Subject::Codes(self.sku_id)
        } else {
            Subject::Stock(self.sku_id)
        }
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

/// Asks the gate for every line; a refusal undoes the lines already held.
pub(super) async fn gate_lines(
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
pub(super) async fn undo(db: &Db, order: &str, resolved: &[ResolvedItem], plan: &[LinePlan]) {
    undo_except(db, order, resolved, plan, &[]).await
}

pub(super) async fn undo_except(
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

/// An order as the SQL transaction writes it: its id and fingerprint, its lines, the plan Redis
/// made for them (when it did), and when it was made and expires.
pub(super) struct Hold<'a> {
    pub(super) order: &'a str,
    pub(super) fp: &'a str,
    pub(super) customer: Option<&'a str>,
    pub(super) resolved: &'a [ResolvedItem],
    /// Place lines, with their index among the request's items.
    pub(super) places: &'a [(usize, ResolvedPlace)],
    pub(super) plan: Option<&'a [LinePlan]>,
    pub(super) now: i64,
    pub(super) expires_at: i64,
}

/// The SQL transaction of a reservation: the header, then every line, or nothing.
pub(super) async fn hold_in_sql(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    hold: Hold<'_>,
) -> DomainResult<SqlHold> {
    let Hold {
        order,
        fp,
        customer,
        resolved,
        places,
        plan,
        now,
        expires_at,
    } = hold;
    let mut tx = db.begin_write().await?;
    let limited = customer.filter(|_| resolved.iter().any(|i| i.max_per_customer.is_some()));
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
        .execute(&mut *tx)
        .await?;
    }
    let header_id: Option<i64> = sqlx::query_scalar(
        "INSERT INTO reservations (merchant_id, order_id, status, fingerprint, expires_at, created_at, updated_at, places,
            customer_id)
         VALUES ($1, $2, 'RESERVED', $3, $4, $5, $5, $6, $7)
         ON CONFLICT (merchant_id, order_id) DO NOTHING RETURNING id",
    )
    .bind(merchant_id)
    .bind(order)
    .bind(fp)
    .bind(expires_at)
    .bind(now)
    .bind(places.len() as i64)
    .bind(customer.map(str::to_string))
    .fetch_optional(&mut *tx)
    .await?;
    let Some(header_id) = header_id else {
        tx.rollback().await?;
        return Ok(SqlHold::Known);
    };
    if let Some(c) = limited {
        for item in resolved {
            let Some(limit) = item.max_per_customer else {
                continue;
            };
            let already = customer_holds(&mut tx, merchant_id, c, item.sku_id, header_id).await?;
            if already + item.qty > limit {
                tx.rollback().await?;
                return Ok(SqlHold::Limit(limit_exceeded(
                    &item.code, limit, already, true,
                )));
            }
        }
    }

    // Everything that does not depend on the balances is written before the first balance UPDATE:
    // that UPDATE locks the row until COMMIT, and on a hot SKU every statement after it is time all
    // the other buyers of that SKU wait.
    let lines: Vec<String> = resolved
        .iter()
        .map(|i| format!("{} × {}", i.code, i.qty))
        .chain(
            places
                .iter()
                .map(|(_, p)| format!("{} @ slot {}", p.code, p.place.slot_id)),
        )
        .collect();
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "reservation.reserve",
        &format!("order:{order}"),
        &lines.join(", "),
    )
    .await?;
    // The event too: it does not depend on the balances (a refusal rolls it back with the rest).
    crate::domain::trail::events::record(
        &mut tx,
        db.now_ms(),
        merchant_id,
        crate::domain::trail::events::EventType::ReservationReserved,
        crate::domain::trail::events::Subject::new("reservation", order, None),
        serde_json::json!({"before": null, "after": "RESERVED",
            "expires_at": crate::domain::kernel::validate::ms_to_rfc3339(expires_at)}),
    )
    .await?;

    let mut stock_lines = Vec::new();
    for (i, item) in resolved.iter().enumerate() {
        // The authority on freezes: the gate's SKU cache may be up to two seconds old.
        let frozen: Option<i64> =
            sqlx::query_scalar("SELECT frozen_finding_id FROM skus WHERE id = $1")
                .bind(item.sku_id)
                .fetch_one(&mut *tx)
                .await?;
        if let Some(finding) = frozen {
            tx.rollback().await?;
            return Err(DomainError::field(
                &format!("items[{i}].sku"),
                "sku_frozen",
                messages::sku_frozen(&item.code, finding),
            ));
        }
        let planned = plan.and_then(|p| p.get(i));
        if item.is_code {
            let preferred = match planned {
                Some(LinePlan::Codes { ids }) => ids.as_slice(),
                _ => &[],
            };
            let stale =
                hold_codes(&mut tx, merchant_id, header_id, order, item, now, preferred).await?;
            if let Some(stale) = stale {
                tx.rollback().await?;
                return Ok(SqlHold::Short(i, stale));
            }
            continue;
        }
        if item.hold != LineHold::Locked {
            let line = StockLine {
                merchant_id,
                header_id,
                order,
                item,
                now,
                expires_at,
            };
            match unlocked_warehouse(&mut tx, merchant_id, item).await? {
                Some(wh) => line.insert(&mut tx, wh).await?,
                None => {
                    tx.rollback().await?;
                    return Ok(SqlHold::Short(i, Vec::new()));
                }
            }
            continue;
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
            .fetch_all(&mut *tx)
            .await?,
        };
        // With one candidate (the gate's plan, or the order's warehouse) the line row goes in
        // first, for the same reason; if the balance then refuses, the transaction rolls back.
        let line_first = candidates.len() == 1;
        let line = StockLine {
            merchant_id,
            header_id,
            order,
            item,
            now,
            expires_at,
        };
        let mut held = false;
        for wh in candidates {
            if line_first {
                line.insert(&mut tx, wh).await?;
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
            if stock::apply(
                &mut tx,
                db.now_ms(),
                merchant_id,
                item.sku_id,
                wh,
                Guard::Available(item.qty),
                &mv,
            )
            .await?
            .is_some()
            {
                if !line_first {
                    line.insert(&mut tx, wh).await?;
                }
                stock_lines.push((item.sku_id, wh, item.qty));
                held = true;
                break;
            }
        }
        if !held {
            tx.rollback().await?;
            return Ok(SqlHold::Short(i, Vec::new()));
        }
    }
    // Places last: a booking holds the slot's row until COMMIT, as a balance does.
    for (k, (_, p)) in places.iter().enumerate() {
        let booked = crate::domain::slots::booking::book_for_order(
            &mut tx,
            actor,
            merchant_id,
            header_id,
            &p.place,
            now,
        )
        .await?;
        if let Err(why) = booked {
            tx.rollback().await?;
            return Ok(SqlHold::PlaceRefused(k, why));
        }
    }
    tx.commit().await?;
    Ok(SqlHold::Held(stock_lines))
}

/// The warehouse a line that locks nothing is recorded in. `checked`: the order's warehouse, or
/// the highest-priority one, that has the units available now (None: refused as short; the
/// payment checks again). `unlimited`: the order's warehouse, or the merchant's highest-priority
/// one, where its sales are written (None only when the merchant has no warehouse).
async fn unlocked_warehouse(
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
pub(super) struct StockLine<'a> {
    pub(super) merchant_id: MerchantId,
    pub(super) header_id: i64,
    pub(super) order: &'a str,
    pub(super) item: &'a ResolvedItem,
    pub(super) now: i64,
    pub(super) expires_at: i64,
}

impl StockLine<'_> {
    pub(super) async fn insert(
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
pub(super) async fn hold_codes(
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

pub(super) use crate::domain::codes::code::hold_for_order as take_codes;

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
async fn customer_holds(
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
pub(super) fn limit_exceeded(
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

pub(super) fn insufficient(item: &ResolvedItem, available: i64) -> DomainError {
    DomainError::conflict(
        "insufficient_stock",
        messages::insufficient_stock(&item.code, item.qty, available),
        serde_json::json!({ "sku": item.code, "requested": item.qty, "available": available }),
    )
}

/// What one line could get: the given warehouse's available, or the best single warehouse's.
pub(super) async fn best_available(
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
