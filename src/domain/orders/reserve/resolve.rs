//! An order's input checked and resolved: its id, customer and time to live, each line's SKU and
//! warehouse, each place's slot.

#[allow(unused_imports)]
use super::*;

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
pub(in crate::domain::orders) fn fingerprint(
    items: &[ItemInput],
    customer: Option<&str>,
) -> String {
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

pub(in crate::domain::orders) struct ResolvedItem {
    pub(in crate::domain::orders) sku_id: i64,
    pub(in crate::domain::orders) code: String,
    pub(in crate::domain::orders) qty: i64,
    pub(in crate::domain::orders) warehouse_id: Option<i64>,
    /// Sold as codes (a voucher) rather than from stock.
    pub(in crate::domain::orders) is_code: bool,
    /// At most this many units held and paid by one customer.
    pub(in crate::domain::orders) max_per_customer: Option<i64>,
    /// Goods: how the line holds its units (codes: always `Locked`, as BOOKING).
    pub(in crate::domain::orders) hold: LineHold,
}

/// A place line, checked: its service SKU and the booking it will make.
pub(in crate::domain::orders) struct ResolvedPlace {
    pub(in crate::domain::orders) code: String,
    pub(in crate::domain::orders) place: crate::domain::slots::booking::OrderPlace,
}

/// Checks a place line: a service SKU, one of its slots, one place, and a customer with a name
/// and a phone number (read in the slot's store's country when it has no country code).
pub(super) async fn resolve_place(
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
pub(in crate::domain::orders) async fn orderable_sku(
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

/// An order's lines, each checked and resolved to its SKU (and warehouse) or its place.
pub(super) struct Lines {
    pub(super) resolved: Vec<ResolvedItem>,
    pub(super) places: Vec<(usize, ResolvedPlace)>,
    /// A line over its SKU's per-order limit: refused once the whole request parses.
    pub(super) over_limit: Option<DomainError>,
}

/// Checks and resolves every line, leaving each field's error in `errs`.
pub(super) async fn resolve_lines(
    db: &Db,
    merchant_id: MerchantId,
    items: &[ItemInput],
    errs: &mut crate::domain::kernel::validate::Errors,
) -> DomainResult<Lines> {
    let mut lines = Lines {
        resolved: Vec::new(),
        places: Vec::new(),
        over_limit: None,
    };
    if items.is_empty() {
        errs.push(FieldError::new(
            "items",
            "required",
            messages::required("items"),
        ));
    }
    if items.len() > MAX_LINES {
        errs.push(FieldError::new(
            "items",
            "too_many",
            messages::too_many_lines(MAX_LINES),
        ));
    }
    let mut seen = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let Some(place) = &item.place else {
            resolve_goods(db, merchant_id, (i, item), &mut seen, errs, &mut lines).await?;
            continue;
        };
        if !seen.insert(format!("{}@{}", item.sku.trim(), place.slot_id)) {
            errs.push(FieldError::new(
                &format!("items[{i}].slot_id"),
                "duplicate_slot",
                messages::duplicate_line(item.sku.trim()),
            ));
            continue;
        }
        match resolve_place(db, merchant_id, i, item, place).await? {
            Ok(p) => lines.places.push((i, p)),
            Err(mut v) => errs.append(&mut v),
        }
    }
    Ok(lines)
}

/// A line of goods or codes: its quantity, its SKU (orderable, not frozen, on sale) and its
/// warehouse when it names one.
pub(super) async fn resolve_goods(
    db: &Db,
    merchant_id: MerchantId,
    (i, item): (usize, &ItemInput),
    seen: &mut HashSet<String>,
    errs: &mut crate::domain::kernel::validate::Errors,
    lines: &mut Lines,
) -> DomainResult<()> {
    // A line's field path is only formatted for an error: most lines have none.
    let field = |f: &str| format!("items[{i}].{f}");
    let at = |mut e: FieldError, f: &str| {
        e.field = field(f);
        e
    };
    if let Err(e) = stock::qty("qty", item.qty) {
        errs.push(at(e, "qty"));
    }
    if !seen.insert(item.sku.trim().to_string()) {
        errs.push(FieldError::new(
            &field("sku"),
            "duplicate_sku",
            messages::duplicate_line(item.sku.trim()),
        ));
        return Ok(());
    }
    let sku = match orderable_sku(db, merchant_id, &item.sku, "sku").await {
        Ok(s) => s,
        Err(DomainError::Invalid(v)) => {
            errs.append(&mut v.into_iter().map(|e| at(e, "sku")).collect());
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if let Some(finding) = sku.frozen_finding_id {
        errs.push(FieldError::new(
            &field("sku"),
            "sku_frozen",
            messages::sku_frozen(&sku.code, finding),
        ));
        return Ok(());
    }
    // Draft, offline, outside its sale window or unpriced: the same rules as its verdict.
    if let Some(why) = crate::domain::catalog::sale::not_on_sale(db, &sku).await? {
        errs.push(FieldError::new(
            &field("sku"),
            "not_on_sale",
            messages::not_on_sale(&sku.code, &why.message),
        ));
        return Ok(());
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
            return Ok(());
        }
        Some(slug) => match stock::warehouse_by_slug(db, merchant_id, slug).await? {
            Some(w) => Some(w.id),
            None => {
                errs.push(FieldError::new(
                    &field("warehouse"),
                    "unknown_warehouse",
                    messages::unknown_warehouse(slug),
                ));
                return Ok(());
            }
        },
    };
    if let Some(limit) = sku.max_per_order.filter(|&m| item.qty > m) {
        lines
            .over_limit
            .get_or_insert_with(|| limit_exceeded(&sku.code, limit, 0, false));
    }
    let hold = if is_code {
        LineHold::Locked
    } else {
        sku.line_hold()
    };
    lines.resolved.push(ResolvedItem {
        sku_id: sku.id,
        code: sku.code,
        qty: item.qty,
        warehouse_id,
        is_code,
        max_per_customer: sku.max_per_customer,
        hold,
    });
    Ok(())
}

impl ResolvedItem {
    pub(in crate::domain::orders) fn subject(&self) -> Subject {
        if self.is_code {
            Subject::Codes(self.sku_id)
        } else {
            Subject::Stock(self.sku_id)
        }
    }
}
