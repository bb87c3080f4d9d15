//! The listing: filters, totals, pages and groups of a catalog's verdicts.

use std::borrow::Borrow;

use super::*;
use crate::domain::MerchantId;

#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// blocked | sellable | all (anything else: all).
    pub status: String,
    /// Operators may narrow to one merchant.
    pub merchant_id: Option<MerchantId>,
    /// Only SKUs with this reason or warning code (empty: any).
    pub reason: String,
    /// 1-based.
    pub page: i64,
    /// Defaults to [`DEFAULT_PER_PAGE`], at most [`MAX_PER_PAGE`].
    pub per_page: i64,
    /// Judge every SKU now rather than take the kept catalog (`recent`).
    pub fresh: bool,
}

/// A count of SKUs per reason code.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct ReasonCount {
    pub code: ReasonCode,
    pub title: String,
    pub skus: i64,
}

/// What the catalog looks like as a whole: the figures above every listing.
#[derive(Debug, Clone, Default, Serialize, utoipa::ToSchema)]
pub struct Totals {
    pub skus: i64,
    pub sellable: i64,
    pub blocked: i64,
    pub low_stock: i64,
    /// SKUs per blocking reason (a SKU with two reasons counts under both), in listing order.
    pub blocking: Vec<ReasonCount>,
    /// SKUs per warning.
    pub warnings: Vec<ReasonCount>,
}

impl Totals {
    pub fn of<V: Borrow<Verdict>>(verdicts: &[V]) -> Totals {
        let mut blocking: BTreeMap<usize, (ReasonCode, i64)> = BTreeMap::new();
        let mut warn: BTreeMap<usize, (ReasonCode, i64)> = BTreeMap::new();
        let mut t = Totals {
            skus: verdicts.len() as i64,
            ..Default::default()
        };
        for v in verdicts.iter().map(Borrow::borrow) {
            if v.sellable {
                t.sellable += 1;
            } else {
                t.blocked += 1;
            }
            for r in v.blocking() {
                blocking.entry(rank(r.code)).or_insert((r.code, 0)).1 += 1;
            }
            for w in &v.warnings {
                warn.entry(rank(w.code)).or_insert((w.code, 0)).1 += 1;
            }
            if v.warnings.iter().any(|w| w.code == ReasonCode::LowStock) {
                t.low_stock += 1;
            }
        }
        let counts = |m: BTreeMap<usize, (ReasonCode, i64)>| {
            m.into_values()
                .map(|(code, skus)| ReasonCount {
                    code,
                    title: messages::reason_title(code.as_str()),
                    skus,
                })
                .collect()
        };
        t.blocking = counts(blocking);
        t.warnings = counts(warn);
        t
    }
}

#[derive(Debug, Clone)]
pub struct Listing {
    pub items: Vec<Verdict>,
    /// SKUs matching the filter (all pages).
    pub total: i64,
    pub page: i64,
    pub pages: i64,
    pub per_page: i64,
    /// The whole catalog in scope (and merchant filter), whatever the status and reason filters.
    pub totals: Totals,
}

pub(super) fn matches(v: &Verdict, f: &ListFilter) -> bool {
    let status_ok = match f.status.as_str() {
        "blocked" => !v.sellable,
        "sellable" => v.sellable,
        _ => true,
    };
    status_ok && (f.reason.is_empty() || ReasonCode::parse(&f.reason).is_some_and(|c| v.has(c)))
}

/// The catalog's verdicts, filtered and paged, with the totals of the whole catalog: the kept
/// catalog brought up to date from the change events (`recent`), else judged on `read` (the
/// read replica when one may be used, else `db`).
pub async fn listing(
    db: &Db,
    read: &Db,
    th: &Thresholds,
    scope: Scope,
    filter: &ListFilter,
) -> DomainResult<Listing> {
    let all = if filter.fresh {
        recent::judged_now(db, th, scope, filter.merchant_id).await?
    } else {
        recent::recent_catalog_reading(db, read, th, scope, filter.merchant_id).await?
    };
    let mut page = page_of(&all, filter);
    attach_next_slots(read, th, &mut page.items).await?;
    Ok(page)
}

/// Filters and pages verdicts already computed (only the page's are copied).
pub fn page_of<V: Borrow<Verdict>>(all: &[V], filter: &ListFilter) -> Listing {
    let totals = Totals::of(all);
    let per_page = if filter.per_page <= 0 {
        DEFAULT_PER_PAGE
    } else {
        filter.per_page.min(MAX_PER_PAGE)
    };
    let matching: Vec<&Verdict> = all
        .iter()
        .map(Borrow::borrow)
        .filter(|v| matches(v, filter))
        .collect();
    let total = matching.len() as i64;
    let pages = ((total + per_page - 1) / per_page).max(1);
    let page = filter.page.clamp(1, pages);
    let items = matching
        .into_iter()
        .skip(((page - 1) * per_page) as usize)
        .take(per_page as usize)
        .cloned()
        .collect();
    Listing {
        items,
        total,
        page,
        pages,
        per_page,
        totals,
    }
}

/// Non-sellable SKUs under each blocking reason they have, at most `cap` listed per reason.
#[derive(Debug, Clone)]
pub struct Group {
    pub code: ReasonCode,
    pub title: String,
    pub skus: i64,
    pub items: Vec<Verdict>,
}

impl Group {
    /// More SKUs have this reason than are listed.
    pub fn more(&self) -> bool {
        self.skus > self.items.len() as i64
    }
}

pub fn groups<V: Borrow<Verdict>>(verdicts: &[V], cap: usize) -> Vec<Group> {
    let mut by_code: BTreeMap<usize, Group> = BTreeMap::new();
    for v in verdicts.iter().map(Borrow::borrow).filter(|v| !v.sellable) {
        for r in v.blocking() {
            let g = by_code.entry(rank(r.code)).or_insert_with(|| Group {
                code: r.code,
                title: messages::reason_title(r.code.as_str()),
                skus: 0,
                items: Vec::new(),
            });
            g.skus += 1;
            if g.items.len() < cap {
                g.items.push(v.clone());
            }
        }
    }
    by_code.into_values().collect()
}
