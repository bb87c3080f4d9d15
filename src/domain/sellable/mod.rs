//! "Why can't this be sold?": one answer per SKU across stock, slots and codes, computed live from
//! the same rows the hot paths decide on.
//!
//! A [`Verdict`] says whether a SKU can be sold right now, how many can be promised (goods: units
//! available over all warehouses; services: the places left in the soonest open slot, the next
//! slots listed one by one and never summed; vouchers: codes that can be handed out) and every
//! [`Reason`] that blocks or limits it, each with a stable code, a sentence, the facts behind it and
//! the back-office page that fixes it. A SKU is sellable exactly when no reason blocks it.
//!
//! The catalog rules (product online, inside its sale window, priced) are [`catalog_reasons`]; the
//! reservation and booking paths refuse with the same rules ([`not_on_sale`], [`on_sale_sql`]), so a
//! verdict and a hold cannot disagree about them. The listing computes the whole catalog with a
//! fixed number of queries (one per table, grouped by SKU), not one per SKU.
//!
//! This module holds the verdict's types and the computation's entry points; `sale` the catalog
//! rules, `facts` the reading of everything a verdict needs, `judge` the rules per kind, and
//! `listing` the catalog pages.

mod facts;
mod judge;
mod listing;
mod recent;
mod watch;

pub use crate::domain::catalog::sale::*;
pub use crate::domain::catalog::why::{Fix, Reason, ReasonCode};
pub use facts::attach_next_slots;
use facts::*;
use judge::*;
pub use listing::*;
pub use recent::{judged_now, kept, recent_catalog, Catalog, Recent, Shared};
pub use watch::{watch, WatchReport};

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;
use serde_json::{json, Value};
use sqlx::FromRow;

use crate::domain::catalog::{ProductStatus, Sku, UnitType};
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::ms_to_rfc3339;
use crate::domain::{reconcile, MerchantId, Scope};
use crate::infra::db::Db;
use crate::messages;

/// Open slots listed for a sellable service.
pub const NEXT_SLOTS: usize = 5;
/// Import errors quoted in a batch reason.
pub const FIRST_ERRORS: usize = 3;
/// Days of sales behind a voucher's rate.
pub const RATE_DAYS: i64 = 7;
pub const DEFAULT_PER_PAGE: i64 = 100;
pub const MAX_PER_PAGE: i64 = 10_000;
const DAY_MS: i64 = 86_400_000;
/// Packs a slot's places left next to its start time; above the largest capacity (1000).
const PACK: i64 = 10_000;

fn rank(code: ReasonCode) -> usize {
    ReasonCode::ALL
        .iter()
        .position(|c| *c == code)
        .unwrap_or(ReasonCode::ALL.len())
}

/// The limits warnings are measured against, and the booking window of services.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// Days ahead that slots are materialised and booked (`SELLABLE_SLOT_WINDOW_DAYS`).
    pub window_days: i64,
    /// Goods: warn below this many available units.
    pub low_stock: i64,
    /// Services: warn below this many open slots with places in the next 7 days.
    pub few_slots: i64,
    /// Vouchers: warn when the codes left last fewer days than this at the recent rate.
    pub code_runout_days: i64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            window_days: crate::domain::slots::schedule::DEFAULT_WINDOW_DAYS,
            low_stock: 5,
            few_slots: 3,
            code_runout_days: 7,
        }
    }
}

/// An open slot with places, as a service's verdict lists it.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
pub struct NextSlot {
    pub slot_id: i64,
    pub starts_at: String,
    pub starts_at_local: String,
    pub timezone: String,
    pub store: String,
    pub staff: Option<String>,
    pub capacity: i64,
    pub remaining: i64,
}

/// Who a verdict is about, for pages (not part of the JSON answer).
#[derive(Debug, Clone, PartialEq)]
pub struct SkuMeta {
    pub sku_id: i64,
    pub merchant_id: MerchantId,
    pub merchant_slug: String,
    pub merchant_name: String,
    pub product_id: i64,
    pub product_name: String,
    pub sku_name: String,
    pub unit_type: UnitType,
    /// The SKU's own page: stock, schedule (of a store it has slots in) or codes.
    pub detail: Fix,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub sku: String,
    pub kind: String,
    pub sellable: bool,
    /// How many can be promised right now (0 when not sellable).
    pub quantity: i64,
    /// Services only: the next open slots with places, one by one (empty while blocked). Left
    /// out of whole-catalog computations until [`attach_next_slots`] adds them to a page.
    pub next_slots: Option<Vec<NextSlot>>,
    pub reasons: Vec<Reason>,
    pub warnings: Vec<Reason>,
    /// Who the verdict is about, for pages (the API's JSON leaves it out).
    pub meta: SkuMeta,
}

impl Verdict {
    pub fn blocking(&self) -> impl Iterator<Item = &Reason> {
        self.reasons.iter().filter(|r| r.blocking)
    }
    pub fn has(&self, code: ReasonCode) -> bool {
        self.reasons
            .iter()
            .chain(&self.warnings)
            .any(|r| r.code == code)
    }
    /// "12 available", "3 places left in the next slot, …": what a sellable SKU can promise.
    pub fn quantity_label(&self) -> String {
        if self.has(ReasonCode::StockUnlimited) {
            return messages::quantity_unlimited();
        }
        let next = self
            .next_slots
            .as_ref()
            .and_then(|n| n.first())
            .map(|n| (n.starts_at_local.as_str(), n.timezone.as_str()));
        messages::quantity_label(&self.kind, self.quantity, next)
    }
}

fn degraded(db: &Db) -> bool {
    db.gate.as_ref().is_some_and(|g| g.is_degraded())
}

async fn compute(db: &Db, th: &Thresholds, sel: Selection<'_>) -> DomainResult<Vec<Verdict>> {
    let read = read_all(db, th, sel, true).await?;
    Ok(read.judge(db, th))
}

/// Everything read for a selection's verdicts, ready to be judged (in any language: the facts
/// hold no sentences).
struct Read {
    skus: Vec<SkuRow>,
    facts: Facts,
    now: i64,
    /// When the reading began, and the count of changes made through this instance then
    /// (`recent`).
    began: std::time::Instant,
    changes: u64,
    /// The last change event numbered before the reading began: every event numbered after it
    /// may be newer than the facts (`recent` judges their SKUs again).
    seq: i64,
    read_ms: f64,
}

/// Reads what the selection's verdicts need; `next_slots`: also the next open slots of the
/// services of a selection other than a whole catalog.
async fn read_all(
    db: &Db,
    th: &Thresholds,
    sel: Selection<'_>,
    next_slots: bool,
) -> DomainResult<Read> {
    let changes = recent::kept(db).changes();
    // Only a whole catalog is kept (`recent`): it catches up from the events after this.
    let seq = match sel {
        Selection::Tenant(_) => crate::domain::trail::events::last_numbered(db).await?,
        _ => 0,
    };
    let now = db.now_ms();
    let began = std::time::Instant::now();
    let (skus, mut facts) = match sel {
        // A catalog: the SKUs and everything about them at once.
        Selection::Tenant(_) => tokio::try_join!(read_skus(db, sel), read(db, th, sel, None, now))?,
        // One SKU or product: only what its kinds need, and its next slots.
        _ => {
            let skus = read_skus(db, sel).await?;
            let kinds: HashSet<UnitType> = skus.iter().map(|s| s.unit_type).collect();
            let mut facts = read(db, th, sel, Some(&kinds), now).await?;
            let services: Vec<i64> = skus
                .iter()
                .filter(|s| s.unit_type == UnitType::Slot)
                .map(|s| s.id)
                .collect();
            if next_slots && !services.is_empty() {
                facts.next_slots = Some(next_slots_of(db, th, now, &services).await?);
            }
            (skus, facts)
        }
    };
    if !skus.is_empty() {
        let finding_ids: Vec<i64> = skus
            .iter()
            .filter_map(|s| s.frozen_finding_id)
            .chain(facts.frozen_slot_findings.values().flatten().copied())
            .collect();
        read_findings(db, finding_ids, &mut facts).await;
    }
    Ok(Read {
        skus,
        facts,
        now,
        began,
        changes,
        seq,
        read_ms: began.elapsed().as_secs_f64() * 1e3,
    })
}

impl Read {
    /// The verdicts, said in the current language.
    fn judge(&self, db: &Db, th: &Thresholds) -> Vec<Verdict> {
        let judging = std::time::Instant::now();
        let degraded = degraded(db);
        let verdicts: Vec<Verdict> = self
            .skus
            .iter()
            .map(|s| judge(s, &self.facts, th, self.now, degraded))
            .collect();
        tracing::debug!(
            skus = verdicts.len(),
            read_ms = self.read_ms,
            judge_ms = judging.elapsed().as_secs_f64() * 1e3,
            total_ms = self.began.elapsed().as_secs_f64() * 1e3,
            "sellable verdicts computed"
        );
        verdicts
    }
}

/// One SKU's verdict. The caller has already found the SKU in its scope.
pub async fn verdict(db: &Db, th: &Thresholds, sku: &Sku) -> DomainResult<Verdict> {
    compute(db, th, Selection::Sku(sku.id))
        .await?
        .into_iter()
        .next()
        .ok_or(crate::domain::DomainError::NotFound("SKU"))
}

/// Verdicts of the SKUs given (a page's), read together: a fixed number of queries however many.
/// The caller has already found the SKUs in its scope. In merchant and code order.
pub async fn of_skus(db: &Db, th: &Thresholds, sku_ids: &[i64]) -> DomainResult<Vec<Verdict>> {
    if sku_ids.is_empty() {
        return Ok(Vec::new());
    }
    compute(db, th, Selection::Skus(sku_ids)).await
}

/// As [`of_skus`], without the next open slots of services (a whole catalog's verdicts have
/// none).
async fn of_skus_bare(db: &Db, th: &Thresholds, sku_ids: &[i64]) -> DomainResult<Vec<Verdict>> {
    if sku_ids.is_empty() {
        return Ok(Vec::new());
    }
    let read = read_all(db, th, Selection::Skus(sku_ids), false).await?;
    Ok(read.judge(db, th))
}

/// Verdicts of a product's SKUs, in code order.
pub async fn of_product(db: &Db, th: &Thresholds, product_id: i64) -> DomainResult<Vec<Verdict>> {
    compute(db, th, Selection::Product(product_id)).await
}

/// Verdicts of every SKU in scope (operators: of one merchant when `merchant_id` is given).
pub async fn catalog(
    db: &Db,
    th: &Thresholds,
    scope: Scope,
    merchant_id: Option<MerchantId>,
) -> DomainResult<Vec<Verdict>> {
    compute(db, th, Selection::Tenant(scope.narrowed(merchant_id))).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(status: &str, starts: Option<i64>, ends: Option<i64>) -> SaleState {
        SaleState {
            status: ProductStatus::parse(status).unwrap(),
            sale_starts_at: starts,
            sale_ends_at: ends,
            timezone: "Asia/Shanghai".into(),
        }
    }

    fn codes(r: &[Reason]) -> Vec<&'static str> {
        r.iter().map(|r| r.code.as_str()).collect()
    }

    #[test]
    fn catalog_reasons_name_every_rule_broken_and_none_for_an_online_priced_product() {
        let now = 1_000_000;
        assert!(catalog_reasons(&state("ONLINE", None, None), 1, 1, Some(100), now).is_empty());
        assert!(catalog_reasons(
            &state("ONLINE", Some(now), Some(now + 1)),
            1,
            1,
            Some(1),
            now
        )
        .is_empty());
        // Free (a price of 0 set on purpose) sells; a price never set does not.
        assert!(catalog_reasons(&state("ONLINE", None, None), 1, 1, Some(0), now).is_empty());
        assert_eq!(
            codes(&catalog_reasons(
                &state("DRAFT", Some(now + 1), None),
                1,
                1,
                None,
                now
            )),
            ["product_draft", "sale_not_started", "no_price"]
        );
        assert_eq!(
            codes(&catalog_reasons(
                &state("OFFLINE", None, Some(now)),
                1,
                1,
                Some(5),
                now
            )),
            ["product_offline", "sale_ended"]
        );
    }

    #[test]
    fn sale_dates_are_told_in_the_merchants_timezone() {
        // 2025-12-03 01:00 UTC is 09:00 in Shanghai.
        let starts = 1_764_723_600_000;
        let r = catalog_reasons(&state("ONLINE", Some(starts), None), 1, 1, Some(100), 0);
        assert_eq!(r[0].facts["sale_starts_at_local"], "2025-12-03 09:00");
        // The zone as people name it, not its IANA id.
        let zone = crate::i18n::Lang::default().zone("Asia/Shanghai");
        assert!(!zone.contains('/'), "{zone}");
        let told = format!("2025-12-03 09:00 ({zone})");
        assert!(r[0].message.contains(&told), "{}", r[0].message);
    }

    #[test]
    fn every_code_has_a_title_of_its_own() {
        let titles: HashSet<String> = ReasonCode::ALL
            .iter()
            .map(|&c| messages::reason_title(c.as_str()))
            .collect();
        assert_eq!(titles.len(), ReasonCode::ALL.len());
    }
}
