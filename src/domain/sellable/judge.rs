//! Judging: the rules per kind (goods, services, vouchers) over the facts read.

use super::*;

pub(super) fn frozen_reason(facts: &Facts, finding: i64) -> Reason {
    let (kind, explain) = match facts.findings.get(&finding) {
        Some(f) => (f.kind.as_str(), f.explain()),
        None => ("", String::new()),
    };
    Reason::new(
        ReasonCode::SkuFrozen,
        messages::why_sku_frozen(finding, &explain),
        json!({ "finding_id": finding, "finding_kind": kind, "explain": explain }),
        Fix::Finding {
            finding_id: finding,
        },
    )
}

/// Goods: units available over every warehouse.
pub(super) fn judge_goods(
    s: &SkuRow,
    facts: &Facts,
    th: &Thresholds,
    reasons: &mut Vec<Reason>,
    warnings: &mut Vec<Reason>,
) -> i64 {
    let url = Fix::Stock { sku_id: s.id };
    if let Some(f) = s.frozen_finding_id {
        reasons.push(frozen_reason(facts, f));
    }
    if s.unlimited {
        // Never counted, never short: said, so that nobody wonders why stock does not matter.
        reasons.push(
            Reason::new(
                ReasonCode::StockUnlimited,
                messages::why_stock_unlimited(),
                json!({ "unlimited": true }),
                url,
            )
            .info(),
        );
        return crate::domain::catalog::LIMIT_MAX;
    }
    let Some(st) = facts.stock.get(&s.id).filter(|st| st.balances > 0) else {
        reasons.push(Reason::new(
            ReasonCode::NoStockRecord,
            messages::why_no_stock_record(),
            json!({ "warehouses": 0 }),
            url.clone(),
        ));
        return 0;
    };
    let available = st.available().max(0);
    if available == 0 {
        let frozen_reason = facts.freeze_reasons.get(&s.id).map(String::as_str);
        reasons.push(Reason::new(
            ReasonCode::OutOfStock,
            messages::why_out_of_stock(st.total, st.locked, st.frozen, frozen_reason, st.sold),
            json!({
                "available": 0, "total": st.total, "locked": st.locked, "held_by_unpaid_orders": st.locked,
                "frozen": st.frozen, "frozen_reason": frozen_reason, "sold": st.sold, "warehouses": st.balances,
            }),
            url.clone(),
        ));
    } else if available < s.low_stock_threshold.unwrap_or(th.low_stock) {
        let threshold = s.low_stock_threshold.unwrap_or(th.low_stock);
        warnings.push(Reason::new(
            ReasonCode::LowStock,
            messages::warn_low_stock(available, threshold),
            json!({ "available": available, "threshold": threshold }),
            url,
        ));
    }
    available
}

/// A store a service has slots in, as `merchant/store` for links, and its timezone.
pub(super) fn service_store(facts: &Facts, sku_id: i64) -> (String, String) {
    facts
        .slots
        .get(&sku_id)
        .and_then(|a| a.store_id)
        .and_then(|id| facts.stores.get(&id))
        .map(|s| (s.value.clone(), s.timezone.clone()))
        .unwrap_or_default()
}

pub(super) fn schedule_url(facts: &Facts, sku_id: i64) -> Fix {
    Fix::Schedule {
        sku_id,
        store: service_store(facts, sku_id).0,
    }
}

/// Services: places in the soonest open slot; the next slots one by one.
pub(super) fn judge_service(
    s: &SkuRow,
    facts: &Facts,
    th: &Thresholds,
    reasons: &mut Vec<Reason>,
    warnings: &mut Vec<Reason>,
) -> (i64, Option<Vec<NextSlot>>) {
    let days = th.window_days;
    let agg = facts.slots.get(&s.id).cloned().unwrap_or_default();
    let rules = facts.rules.get(&s.id).copied().unwrap_or(0);
    let (store_value, store_tz) = service_store(facts, s.id);
    let schedule_url = schedule_url(facts, s.id);
    let next: Option<Vec<NextSlot>> = facts
        .next_slots
        .as_ref()
        .map(|all| all.get(&s.id).cloned().unwrap_or_default());
    if agg.bookable > 0 {
        if agg.bookable_week < th.few_slots {
            warnings.push(Reason::new(
                ReasonCode::FewSlots,
                messages::warn_few_slots(agg.bookable_week, th.few_slots),
                json!({ "open_slots_next_7_days": agg.bookable_week, "threshold": th.few_slots }),
                schedule_url,
            ));
        }
        let quantity = agg.first.map(|f| f % PACK).unwrap_or(0);
        return (quantity, next);
    }
    if agg.in_window == 0 {
        if rules == 0 && agg.future == 0 {
            reasons.push(Reason::new(
                ReasonCode::NoSchedule,
                messages::why_no_schedule(),
                json!({ "rules": 0, "future_slots": 0 }),
                schedule_url.clone(),
            ));
        } else if agg.beyond.is_none() {
            reasons.push(Reason::new(
                ReasonCode::NoSlotsInWindow,
                messages::why_no_slots_in_window(days),
                json!({ "window_days": days, "rules": rules, "future_slots": agg.future }),
                schedule_url.clone(),
            ));
        }
    } else {
        let open = agg.in_window - agg.closed;
        if open == 0 {
            let closures = facts.closures.get(&s.id).cloned().unwrap_or_default();
            let items: Vec<String> = closures
                .iter()
                .map(|c| {
                    let tz = c.timezone.as_str();
                    let period = match (c.starts_at, c.ends_at) {
                        (Some(a), Some(b)) => format!("{} – {}", local(a, tz), local(b, tz)),
                        _ => String::new(),
                    };
                    messages::closure_item(
                        c.reason.as_deref().unwrap_or(""),
                        c.staff_name.as_deref(),
                        &period,
                    )
                })
                .collect();
            let listed: Vec<Value> = closures
                .iter()
                .map(|c| {
                    json!({
                        "closure_id": c.closure_id, "reason": c.reason, "staff": c.staff_name,
                        "starts_at": c.starts_at.map(ms_to_rfc3339), "ends_at": c.ends_at.map(ms_to_rfc3339),
                        "starts_at_local": c.starts_at.map(|t| local(t, &c.timezone)),
                        "ends_at_local": c.ends_at.map(|t| local(t, &c.timezone)),
                        "timezone": c.timezone, "slots": c.slots,
                    })
                })
                .collect();
            let with_closure: Vec<&ClosureRow> =
                closures.iter().filter(|c| c.closure_id.is_some()).collect();
            let store_of = |c: &ClosureRow| format!("{}/{}", c.merchant_slug, c.store_slug);
            let fix_url = match (with_closure.as_slice(), closures.first()) {
                ([one], _) if closures.len() == 1 => Fix::Closure {
                    closure_id: one.closure_id.unwrap_or(0),
                    store: store_of(one),
                },
                (_, Some(c)) if !with_closure.is_empty() => Fix::Closures { store: store_of(c) },
                (_, Some(c)) => Fix::Week {
                    store: store_of(c),
                    service: s.code.clone(),
                },
                _ => schedule_url.clone(),
            };
            reasons.push(Reason::new(
                ReasonCode::AllSlotsClosed,
                messages::why_all_slots_closed(agg.closed, days, &items),
                json!({ "window_days": days, "closed": agg.closed, "closures": listed }),
                fix_url,
            ));
        } else {
            let week_url = Fix::Week {
                store: store_value.clone(),
                service: s.code.clone(),
            };
            if agg.full > 0 && agg.frozen == 0 {
                reasons.push(Reason::new(
                    ReasonCode::AllSlotsFull,
                    messages::why_all_slots_full(agg.full, agg.closed, days),
                    json!({ "window_days": days, "full": agg.full, "closed": agg.closed }),
                    week_url.clone(),
                ));
            }
            if agg.frozen > 0 {
                let findings = facts
                    .frozen_slot_findings
                    .get(&s.id)
                    .cloned()
                    .unwrap_or_default();
                let fix_url = findings
                    .first()
                    .map(|&finding_id| Fix::Finding { finding_id })
                    .unwrap_or(week_url);
                reasons.push(Reason::new(
                    ReasonCode::SlotsFrozen,
                    messages::why_slots_frozen(agg.frozen, &findings),
                    json!({ "window_days": days, "frozen_slots": agg.frozen, "full": agg.full, "closed": agg.closed, "finding_ids": findings }),
                    fix_url,
                ));
            }
        }
    }
    if let Some(at) = agg.beyond {
        let tz = if store_tz.is_empty() {
            "UTC".to_string()
        } else {
            store_tz
        };
        let at_local = local(at, &tz);
        reasons.push(Reason::new(
            ReasonCode::NextSlotBeyondWindow,
            messages::why_next_slot_beyond_window(&at_local, &tz, days),
            json!({ "window_days": days, "slot_id": agg.beyond_id, "starts_at": ms_to_rfc3339(at), "starts_at_local": at_local, "timezone": tz }),
            schedule_url,
        ));
    }
    (0, next)
}

pub(super) const CODE_STATUS_ORDER: [&str; 7] = [
    "AVAILABLE",
    "PENDING",
    "BOOKING",
    "SOLD",
    "LOCKED",
    "EXPIRED",
    "INVALID",
];

/// Vouchers: codes that can be handed out now.
pub(super) fn judge_voucher(
    s: &SkuRow,
    facts: &Facts,
    th: &Thresholds,
    reasons: &mut Vec<Reason>,
    warnings: &mut Vec<Reason>,
) -> i64 {
    let url = Fix::Codes { sku_id: s.id };
    if let Some(f) = s.frozen_finding_id {
        reasons.push(frozen_reason(facts, f));
    }
    let Some(last) = facts.batches.get(&s.id) else {
        reasons.push(Reason::new(
            ReasonCode::NoBatch,
            messages::why_no_batch(),
            json!({ "batches": 0 }),
            url,
        ));
        return 0;
    };
    let codes = facts.codes.get(&s.id).cloned().unwrap_or_default();
    let available = codes.sellable.max(0);
    let batch_url = Fix::Batch { batch_id: last.id };
    // Stored in no language: said in the reader's.
    let say = crate::domain::codes::import::say;
    let errors: Vec<(i64, String)> = facts
        .batch_errors
        .get(&last.id)
        .map(|e| e.iter().map(|(line, r)| (*line, say(r))).collect())
        .unwrap_or_default();
    let failure = last.failure.as_deref().map(say);
    let batch_facts = json!({
        "batch_id": last.id, "name": last.name, "status": last.status, "read": last.lines_read,
        "imported": last.imported, "rejected": last.rejected, "progress": last.progress(),
        "failure": failure,
        "errors": errors.iter().map(|(line, reason)| json!({"line": line, "reason": reason})).collect::<Vec<_>>(),
    });
    let batch_reason = match last.status.as_str() {
        "FAILED" => Some(Reason::new(
            ReasonCode::BatchFailed,
            messages::why_batch_failed(&last.name, failure.as_deref().unwrap_or(""), &errors),
            batch_facts,
            batch_url,
        )),
        "PARTIAL" => Some(Reason::new(
            ReasonCode::BatchPartial,
            messages::why_batch_partial(&last.name, last.rejected, &errors),
            batch_facts,
            batch_url,
        )),
        "CREATING" => Some(Reason::new(
            ReasonCode::BatchImporting,
            messages::why_batch_importing(&last.name, last.progress()),
            batch_facts,
            batch_url,
        )),
        _ => None,
    };
    if available == 0 {
        reasons.extend(batch_reason);
        let ordered: Vec<(String, i64)> = CODE_STATUS_ORDER
            .iter()
            .map(|st| (st.to_string(), codes.counts.get(*st).copied().unwrap_or(0)))
            .collect();
        reasons.push(Reason::new(
            ReasonCode::NoCodesAvailable,
            messages::why_no_codes_available(&ordered),
            json!({ "available": 0, "counts": codes.counts }),
            url.clone(),
        ));
        return 0;
    }
    // Codes remain: a failed or partial last batch only informs.
    reasons.extend(batch_reason.map(Reason::info));
    let sold = facts.sold_recently.get(&s.id).copied().unwrap_or(0);
    if sold > 0 {
        let days_left = available * RATE_DAYS / sold;
        if days_left < th.code_runout_days {
            let per_day = format!("{:.1}", sold as f64 / RATE_DAYS as f64);
            warnings.push(Reason::new(
                ReasonCode::CodesRunningOut,
                messages::warn_codes_running_out(available, days_left, &per_day),
                json!({
                    "available": available, "sold_last_7_days": sold, "per_day": sold as f64 / RATE_DAYS as f64,
                    "days_left": days_left, "threshold_days": th.code_runout_days,
                }),
                url,
            ));
        }
    }
    available
}

pub(super) fn judge(
    s: &SkuRow,
    facts: &Facts,
    th: &Thresholds,
    now: i64,
    degraded: bool,
) -> Verdict {
    let state = SaleState {
        status: s.status,
        sale_starts_at: s.sale_starts_at,
        sale_ends_at: s.sale_ends_at,
        timezone: s.timezone.clone(),
    };
    let mut reasons = catalog_reasons(&state, s.id, s.product_id, s.price, now);
    let mut warnings = Vec::new();
    let (quantity, next) = match s.unit_type {
        UnitType::Slot => judge_service(s, facts, th, &mut reasons, &mut warnings),
        UnitType::Code => (
            judge_voucher(s, facts, th, &mut reasons, &mut warnings),
            None,
        ),
        UnitType::Quantity => (judge_goods(s, facts, th, &mut reasons, &mut warnings), None),
    };
    if degraded {
        reasons.push(
            Reason::new(
                ReasonCode::GateDegraded,
                messages::why_gate_degraded(),
                json!({}),
                Fix::Nothing,
            )
            .info(),
        );
    }
    reasons.sort_by_key(|r| rank(r.code));
    // Warnings limit, they never block.
    let mut warnings: Vec<Reason> = warnings.into_iter().map(Reason::info).collect();
    warnings.sort_by_key(|r| rank(r.code));
    let sellable = !reasons.iter().any(|r| r.blocking);
    Verdict {
        sku: s.code.clone(),
        kind: s.kind.clone(),
        sellable,
        quantity: if sellable { quantity } else { 0 },
        next_slots: next.map(|n| if sellable { n } else { Vec::new() }),
        reasons,
        warnings,
        meta: SkuMeta {
            sku_id: s.id,
            merchant_id: s.merchant_id,
            merchant_slug: s.merchant_slug.clone(),
            merchant_name: s.merchant_name.clone(),
            product_id: s.product_id,
            product_name: s.product_name.clone(),
            sku_name: s.name.clone(),
            unit_type: s.unit_type,
            detail: match s.unit_type {
                UnitType::Slot => schedule_url(facts, s.id),
                UnitType::Code => Fix::Codes { sku_id: s.id },
                UnitType::Quantity => Fix::Stock { sku_id: s.id },
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn goods(id: i64) -> SkuRow {
        SkuRow {
            id,
            merchant_id: MerchantId(1),
            merchant_slug: "acme".into(),
            merchant_name: "Acme".into(),
            timezone: "Asia/Shanghai".into(),
            product_id: 1,
            product_name: "Tea".into(),
            code: "TEA".into(),
            name: "Tea".into(),
            price: Some(100),
            unit_type: UnitType::Quantity,
            unlimited: false,
            frozen_finding_id: None,
            low_stock_threshold: None,
            kind: "goods".into(),
            status: ProductStatus::Online,
            sale_starts_at: None,
            sale_ends_at: None,
        }
    }

    fn stock(sku_id: i64, total: i64, locked: i64, sold: i64, frozen: i64) -> Facts {
        let mut facts = Facts::default();
        let row = StockRow {
            sku_id,
            balances: 1,
            total,
            locked,
            sold,
            frozen,
        };
        facts.stock.insert(sku_id, row);
        facts
    }

    fn codes(r: &[Reason]) -> Vec<ReasonCode> {
        r.iter().map(|r| r.code).collect()
    }

    #[test]
    fn goods_never_stocked_are_not_sellable_and_say_so() {
        let v = judge(
            &goods(7),
            &Facts::default(),
            &Thresholds::default(),
            0,
            false,
        );
        assert!(!v.sellable);
        assert_eq!(codes(&v.reasons), [ReasonCode::NoStockRecord]);
        assert_eq!(v.reasons[0].fix, Fix::Stock { sku_id: 7 });
    }

    #[test]
    fn goods_whose_units_are_all_held_frozen_or_sold_are_out_of_stock() {
        let v = judge(
            &goods(7),
            &stock(7, 10, 4, 3, 3),
            &Thresholds::default(),
            0,
            false,
        );
        assert!(!v.sellable);
        assert_eq!(v.quantity, 0);
        assert_eq!(codes(&v.reasons), [ReasonCode::OutOfStock]);
        assert_eq!(v.reasons[0].facts["held_by_unpaid_orders"], 4);
    }

    #[test]
    fn goods_below_the_threshold_sell_with_a_low_stock_warning() {
        let th = Thresholds::default();
        let v = judge(
            &goods(7),
            &stock(7, th.low_stock - 1, 0, 0, 0),
            &th,
            0,
            false,
        );
        assert!(v.sellable);
        assert_eq!(v.quantity, th.low_stock - 1);
        assert!(v.reasons.is_empty());
        assert_eq!(codes(&v.warnings), [ReasonCode::LowStock]);
    }

    #[test]
    fn a_degraded_gate_informs_without_blocking() {
        let v = judge(
            &goods(7),
            &stock(7, 50, 0, 0, 0),
            &Thresholds::default(),
            0,
            true,
        );
        assert!(v.sellable);
        assert_eq!(codes(&v.reasons), [ReasonCode::GateDegraded]);
        assert!(!v.reasons[0].blocking);
    }

    #[test]
    fn a_draft_product_blocks_even_goods_in_stock() {
        let mut s = goods(7);
        s.status = ProductStatus::Draft;
        let v = judge(&s, &stock(7, 50, 0, 0, 0), &Thresholds::default(), 0, false);
        assert!(!v.sellable);
        assert_eq!(codes(&v.reasons), [ReasonCode::ProductDraft]);
        assert_eq!(v.reasons[0].fix, Fix::Product { product_id: 1 });
    }
}
