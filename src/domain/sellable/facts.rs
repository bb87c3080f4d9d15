//! Reading everything a verdict needs, for one SKU or a whole catalog: a fixed number of
//! queries (one per table, grouped by SKU), not one per SKU.

use super::*;
use crate::domain::codes::counts;
use crate::domain::StoreId;
use crate::infra::db::by_ids;

/// Which SKUs to compute: one, a list of them (a page's), those of a product, or every SKU in a
/// scope (one merchant's, or every merchant's).
#[derive(Debug, Clone, Copy)]
pub(super) enum Selection<'a> {
    Sku(i64),
    /// Never empty (the caller answers an empty list itself): `IN ()` is no SQL.
    Skus(&'a [i64]),
    Product(i64),
    Tenant(Scope),
}

impl Selection<'_> {
    pub(super) fn bind(self) -> Option<i64> {
        match self {
            Selection::Sku(id) | Selection::Product(id) => Some(id),
            Selection::Skus(_) => None,
            Selection::Tenant(scope) => scope.bind().map(|m| m.0),
        }
    }
    // Every filter names `$1` (NULL for every merchant, as in `Scope::filter`) and is written per
    // case rather than as `($1 IS NULL OR col = $1)`, so that the planner can use the indexes.
    // A list of SKUs is written into the SQL as numbers (ids, never text from a request), with
    // `$1 IS NULL` so that the one parameter is still named.

    /// Whether its statements are worth keeping prepared: not those that carry a list of ids,
    /// which are new text for each page and would push the order path's statements out of each
    /// connection's cache.
    pub(super) fn persistent(self) -> bool {
        !matches!(self, Selection::Skus(_))
    }

    /// The list as SQL: `1,2,3`.
    fn ids(ids: &[i64]) -> String {
        ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
    }

    /// `$1` filter on a column holding a SKU id.
    pub(super) fn sku(self, col: &str) -> String {
        match self {
            Selection::Sku(_) => format!("{col} = $1"),
            Selection::Skus(ids) => format!("({col} IN ({}) AND $1 IS NULL)", Self::ids(ids)),
            Selection::Product(_) => {
                format!("{col} IN (SELECT id FROM skus WHERE product_id = $1)")
            }
            Selection::Tenant(Scope::All) => "$1 IS NULL".to_string(),
            Selection::Tenant(Scope::Merchant(_)) => {
                format!("{col} IN (SELECT id FROM skus WHERE merchant_id = $1)")
            }
        }
    }
    /// `$1` filter on a column holding a merchant id: the merchant of the SKUs selected.
    pub(super) fn merchant(self, col: &str) -> String {
        match self {
            Selection::Sku(_) => format!("{col} IN (SELECT merchant_id FROM skus WHERE id = $1)"),
            Selection::Skus(ids) => format!(
                "({col} IN (SELECT merchant_id FROM skus WHERE id IN ({})) AND $1 IS NULL)",
                Self::ids(ids)
            ),
            Selection::Product(_) => {
                format!("{col} IN (SELECT merchant_id FROM products WHERE id = $1)")
            }
            Selection::Tenant(scope) => scope.filter(col, 1),
        }
    }
    /// `$1` filter on a table with `sku_id` and `merchant_id` columns.
    pub(super) fn on(self, alias: &str) -> String {
        match self {
            Selection::Tenant(_) => self.merchant(&format!("{alias}.merchant_id")),
            other => other.sku(&format!("{alias}.sku_id")),
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct SkuRow {
    pub(super) id: i64,
    pub(super) merchant_id: MerchantId,
    pub(super) merchant_slug: String,
    pub(super) merchant_name: String,
    pub(super) timezone: String,
    pub(super) product_id: i64,
    pub(super) product_name: String,
    pub(super) code: String,
    pub(super) name: String,
    /// None: never priced (`no_price`); Some(0) is free.
    pub(super) price: Option<i64>,
    pub(super) unit_type: UnitType,
    /// Goods whose stock is not counted (`stock_policy = unlimited`).
    pub(super) unlimited: bool,
    pub(super) frozen_finding_id: Option<i64>,
    /// The SKU's own low-stock line (None: the global setting).
    pub(super) low_stock_threshold: Option<i64>,
    pub(super) kind: String,
    pub(super) status: ProductStatus,
    pub(super) sale_starts_at: Option<i64>,
    pub(super) sale_ends_at: Option<i64>,
}

#[derive(Debug, Clone, Default, FromRow)]
pub(super) struct StockRow {
    pub(super) sku_id: i64,
    pub(super) balances: i64,
    pub(super) total: i64,
    pub(super) locked: i64,
    pub(super) sold: i64,
    pub(super) frozen: i64,
}

impl StockRow {
    pub(super) fn available(&self) -> i64 {
        self.total - self.locked - self.sold - self.frozen
    }
}

/// A service's slots of the coming week: enough for the verdict of one with a place to book.
#[derive(Debug, Clone, FromRow)]
pub(super) struct SoonAgg {
    pub(super) sku_id: i64,
    /// Bookable before the window or the week ends, whichever comes first.
    pub(super) bookable: i64,
    pub(super) bookable_week: i64,
    pub(super) first: Option<i64>,
    pub(super) store_id: Option<StoreId>,
}

/// A service's future slots, counted. For a service with a place to book in the coming week
/// only `bookable` (then at least 1, not the window's count), `bookable_week`, `first` and
/// `store_id` are read; the rest stay 0.
#[derive(Debug, Clone, Default, FromRow)]
pub(super) struct SlotAgg {
    pub(super) sku_id: i64,
    /// Slots that have not started.
    pub(super) future: i64,
    pub(super) in_window: i64,
    pub(super) closed: i64,
    pub(super) full: i64,
    pub(super) frozen: i64,
    pub(super) bookable: i64,
    pub(super) bookable_week: i64,
    /// The soonest slot with places in the window, packed as `starts_at * PACK + remaining`
    /// (capacity is at most 1000): one aggregate gives both.
    pub(super) first: Option<i64>,
    /// The first slot with places after the window.
    pub(super) beyond: Option<i64>,
    #[sqlx(skip)]
    pub(super) beyond_id: Option<i64>,
    /// A store the service has slots in (merchant/store), for links.
    pub(super) store_id: Option<StoreId>,
}

#[derive(Debug, Clone, FromRow)]
pub(super) struct NextSlotRow {
    pub(super) id: i64,
    pub(super) sku_id: i64,
    pub(super) starts_at: i64,
    pub(super) capacity: i64,
    pub(super) remaining: i64,
    pub(super) store_id: StoreId,
    pub(super) staff_id: Option<i64>,
}

/// A store as links and local times need it.
#[derive(Debug, Clone, FromRow)]
pub(super) struct StoreRef {
    pub(super) id: StoreId,
    /// `merchant/store`, as the back office's `?store=` takes it.
    pub(super) value: String,
    pub(super) slug: String,
    pub(super) timezone: String,
}

#[derive(Debug, Clone, FromRow)]
pub(super) struct ClosureRow {
    pub(super) sku_id: i64,
    pub(super) closure_id: Option<i64>,
    pub(super) reason: Option<String>,
    pub(super) starts_at: Option<i64>,
    pub(super) ends_at: Option<i64>,
    pub(super) staff_name: Option<String>,
    pub(super) timezone: String,
    pub(super) store_slug: String,
    pub(super) merchant_slug: String,
    pub(super) slots: i64,
}

#[derive(Debug, Clone, FromRow)]
pub(super) struct BatchRow {
    pub(super) id: i64,
    pub(super) sku_id: i64,
    pub(super) name: String,
    pub(super) status: String,
    pub(super) lines_read: i64,
    pub(super) imported: i64,
    pub(super) rejected: i64,
    pub(super) bytes_total: i64,
    pub(super) bytes_done: i64,
    pub(super) failure: Option<String>,
}

impl BatchRow {
    pub(super) fn progress(&self) -> i64 {
        if self.status != "CREATING" {
            100
        } else if self.bytes_total > 0 {
            (100 * self.bytes_done / self.bytes_total).clamp(0, 99)
        } else {
            0
        }
    }
}

/// Everything read for the SKUs being judged, by SKU id.
#[derive(Default)]
pub(super) struct Facts {
    pub(super) stock: HashMap<i64, StockRow>,
    pub(super) freeze_reasons: HashMap<i64, String>,
    pub(super) rules: HashMap<i64, i64>,
    pub(super) slots: HashMap<i64, SlotAgg>,
    /// Loaded for one SKU or one product; a whole catalog adds them to the page it shows.
    pub(super) next_slots: Option<HashMap<i64, Vec<NextSlot>>>,
    pub(super) closures: HashMap<i64, Vec<ClosureRow>>,
    pub(super) frozen_slot_findings: HashMap<i64, Vec<i64>>,
    pub(super) stores: HashMap<StoreId, StoreRef>,
    pub(super) batches: HashMap<i64, BatchRow>,
    pub(super) batch_errors: HashMap<i64, Vec<(i64, String)>>,
    pub(super) codes: HashMap<i64, counts::Tally>,
    pub(super) sold_recently: HashMap<i64, i64>,
    pub(super) findings: HashMap<i64, reconcile::Finding>,
}

/// The SKUs selected with their product and merchant, by merchant name and SKU code. Three
/// narrow queries (products and merchants are few) rather than one wide join: fewer values to
/// carry per SKU.
pub(super) async fn read_skus(db: &Db, sel: Selection<'_>) -> DomainResult<Vec<SkuRow>> {
    type SkuBase = (
        i64,
        MerchantId,
        i64,
        String,
        String,
        Option<i64>,
        String,
        Option<i64>,
        Option<i64>,
        String,
    );
    type ProductBase = (i64, String, String, String, Option<i64>, Option<i64>);
    let sku_filter = match sel {
        Selection::Sku(_) | Selection::Skus(_) => sel.sku("id"),
        Selection::Product(_) => "product_id = $1".to_string(),
        Selection::Tenant(_) => sel.merchant("merchant_id"),
    };
    let product_filter = match sel {
        Selection::Sku(_) | Selection::Skus(_) => {
            format!(
                "id IN (SELECT product_id FROM skus WHERE {})",
                sel.sku("id")
            )
        }
        Selection::Product(_) => "id = $1".to_string(),
        Selection::Tenant(_) => sel.merchant("merchant_id"),
    };
    let skus: Vec<SkuBase> = sqlx::query_as(&format!(
        "SELECT id, merchant_id, product_id, code, name, CASE WHEN priced_at IS NULL THEN NULL ELSE price END,
            unit_type, frozen_finding_id, low_stock_threshold, stock_policy FROM skus WHERE {sku_filter}"
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?;
    if skus.is_empty() {
        return Ok(Vec::new());
    }
    let products: HashMap<i64, ProductBase> = sqlx::query_as::<_, ProductBase>(&format!(
        "SELECT id, name, kind, status, sale_starts_at, sale_ends_at FROM products WHERE {product_filter}"
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .map(|p| (p.0, p))
    .collect();
    let merchants: HashMap<MerchantId, (String, String, String)> =
        sqlx::query_as::<_, (MerchantId, String, String, String)>(&format!(
            "SELECT id, slug, name, timezone FROM merchants WHERE {}",
            sel.merchant("id")
        ))
        .persistent(sel.persistent())
        .bind(sel.bind())
        .fetch_all(&db.pool)
        .await?
        .into_iter()
        .map(|(id, slug, name, tz)| (id, (slug, name, tz)))
        .collect();
    let mut rows: Vec<SkuRow> = skus
        .into_iter()
        .filter_map(
            |(
                id,
                merchant_id,
                product_id,
                code,
                name,
                price,
                unit_type,
                frozen,
                low_stock,
                policy,
            )| {
                let p = products.get(&product_id)?;
                let m = merchants.get(&merchant_id)?;
                Some(SkuRow {
                    id,
                    merchant_id,
                    merchant_slug: m.0.clone(),
                    merchant_name: m.1.clone(),
                    timezone: m.2.clone(),
                    product_id,
                    product_name: p.1.clone(),
                    code,
                    name,
                    price,
                    // The column's CHECK allows only these three.
                    unit_type: UnitType::parse(&unit_type).unwrap_or(UnitType::Quantity),
                    unlimited: policy == crate::domain::catalog::StockPolicy::Unlimited.as_str(),
                    frozen_finding_id: frozen,
                    low_stock_threshold: low_stock,
                    kind: p.2.clone(),
                    // The column's CHECK allows only the three.
                    status: ProductStatus::parse(&p.3).unwrap_or(ProductStatus::Draft),
                    sale_starts_at: p.4,
                    sale_ends_at: p.5,
                })
            },
        )
        .collect();
    rows.sort_by(|a, b| {
        (&a.merchant_name, a.merchant_id, &a.code).cmp(&(&b.merchant_name, b.merchant_id, &b.code))
    });
    Ok(rows)
}

pub(super) async fn read_stock(db: &Db, sel: Selection<'_>, facts: &mut Facts) -> DomainResult<()> {
    let rows: Vec<StockRow> = sqlx::query_as(&format!(
        "SELECT b.sku_id, CAST(COUNT(*) AS BIGINT) AS balances, CAST(SUM(b.total) AS BIGINT) AS total,
            CAST(SUM(b.locked) AS BIGINT) AS locked, CAST(SUM(b.sold) AS BIGINT) AS sold,
            CAST(SUM(b.frozen) AS BIGINT) AS frozen
         FROM stock_balances b WHERE {} GROUP BY b.sku_id",
        sel.on("b")
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?;
    // Why units are frozen: the latest FREEZE's reason, for SKUs blocked with frozen units.
    let frozen_out: Vec<i64> = rows
        .iter()
        .filter(|r| r.frozen > 0 && r.available() <= 0)
        .map(|r| r.sku_id)
        .collect();
    facts.stock = rows.into_iter().map(|r| (r.sku_id, r)).collect();
    if !frozen_out.is_empty() {
        let reasons: Vec<(i64, String)> = by_ids(
            db,
            "SELECT sku_id, reason FROM (SELECT sku_id, reason, ROW_NUMBER() OVER (PARTITION BY sku_id ORDER BY created_at DESC, id DESC) AS rn
               FROM stock_ledger WHERE kind = 'FREEZE' AND sku_id IN ({ids})) x WHERE rn = 1",
            &[],
            &frozen_out,
        )
        .await?;
        facts.freeze_reasons = reasons.into_iter().collect();
    }
    Ok(())
}

/// A slot a customer can book now: open, with room, not frozen.
const BOOKABLE: &str =
    "sl.status = 'OPEN' AND sl.booked < sl.capacity AND sl.frozen_finding_id IS NULL";

pub(super) async fn read_slots(
    db: &Db,
    sel: Selection<'_>,
    now: i64,
    th: &Thresholds,
    facts: &mut Facts,
) -> DomainResult<()> {
    let window_end = now + th.window_days * DAY_MS;
    let agg = slot_aggregates(db, sel, now, window_end, facts).await?;
    why_nothing_to_book(db, &agg, now, window_end, facts).await?;
    let beyond_ids = first_beyond(db, &agg, window_end).await?;
    // Stores, for links and local times.
    let stores: Vec<StoreRef> = sqlx::query_as(&format!(
        "SELECT st.id, m.slug || '/' || st.slug AS value, st.slug, st.timezone FROM stores st
         JOIN merchants m ON m.id = st.merchant_id WHERE {}",
        sel.merchant("st.merchant_id")
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?;
    facts.stores = stores.into_iter().map(|s| (s.id, s)).collect();
    facts.slots = agg
        .into_iter()
        .map(|mut a| {
            a.beyond_id = beyond_ids.get(&a.sku_id).copied();
            (a.sku_id, a)
        })
        .collect();
    Ok(())
}

/// Each service's slots counted: over the coming week for those with a place to book soon, over
/// the whole window (and its rules) for the others.
async fn slot_aggregates(
    db: &Db,
    sel: Selection<'_>,
    now: i64,
    window_end: i64,
    facts: &mut Facts,
) -> DomainResult<Vec<SlotAgg>> {
    let week_end = now + 7 * DAY_MS;
    let slot_filter = sel.on("sl");
    // Most services have a place to book within days: their verdict needs only the coming
    // week's slots (whether one is bookable in the window, the first one's places, how many in
    // the week). Only the others are counted over the whole window, which is what reading every
    // future slot of the catalog cost on each page (50,000 slots at 2,000 services).
    let soon_end = window_end.min(week_end);
    let soon: Vec<SoonAgg> = sqlx::query_as(&format!(
        "SELECT sl.sku_id,
            CAST(SUM(CASE WHEN sl.starts_at < $3 AND {BOOKABLE} THEN 1 ELSE 0 END) AS BIGINT) AS bookable,
            CAST(SUM(CASE WHEN {BOOKABLE} THEN 1 ELSE 0 END) AS BIGINT) AS bookable_week,
            MIN(CASE WHEN sl.starts_at < $3 AND {BOOKABLE} THEN sl.starts_at * {PACK} + sl.capacity - sl.booked END) AS first,
            MIN(sl.store_id) AS store_id
         FROM slots sl WHERE {slot_filter} AND sl.starts_at > $2 AND sl.starts_at < $4 GROUP BY sl.sku_id"
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .bind(now)
    .bind(soon_end)
    .bind(week_end)
    .fetch_all(&db.pool)
    .await?;
    let mut agg: Vec<SlotAgg> = soon
        .into_iter()
        .filter(|a| a.bookable > 0)
        .map(|a| SlotAgg {
            sku_id: a.sku_id,
            bookable: a.bookable,
            bookable_week: a.bookable_week,
            first: a.first,
            store_id: a.store_id,
            ..SlotAgg::default()
        })
        .collect();
    let bookable_soon: HashSet<i64> = agg.iter().map(|a| a.sku_id).collect();
    let service_filter = match sel {
        Selection::Tenant(_) => sel.merchant("k.merchant_id"),
        _ => sel.sku("k.id"),
    };
    let rest: Vec<i64> = sqlx::query_scalar::<_, i64>(&format!(
        "SELECT k.id FROM skus k WHERE {service_filter} AND k.unit_type = 'slot'"
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .filter(|id| !bookable_soon.contains(id))
    .collect();
    if !rest.is_empty() {
        // The rules matter only where nothing can be booked (no schedule at all, or nothing in
        // the window): counted for these services alone.
        let rules: Vec<(i64, i64)> = by_ids(
            db,
            "SELECT r.sku_id, CAST(COUNT(*) AS BIGINT) FROM schedule_rules r WHERE r.sku_id IN ({ids}) GROUP BY r.sku_id",
            &[],
            &rest,
        )
        .await?;
        facts.rules = rules.into_iter().collect();
        agg.extend(
            by_ids::<SlotAgg>(
                db,
                &format!(
                    "SELECT sl.sku_id, CAST(COUNT(*) AS BIGINT) AS future,
                        CAST(SUM(CASE WHEN sl.starts_at < $2 THEN 1 ELSE 0 END) AS BIGINT) AS in_window,
                        CAST(SUM(CASE WHEN sl.starts_at < $2 AND sl.status = 'CLOSED' THEN 1 ELSE 0 END) AS BIGINT) AS closed,
                        CAST(SUM(CASE WHEN sl.starts_at < $2 AND sl.status = 'OPEN' AND sl.booked >= sl.capacity THEN 1 ELSE 0 END) AS BIGINT) AS full,
                        CAST(SUM(CASE WHEN sl.starts_at < $2 AND sl.status = 'OPEN' AND sl.booked < sl.capacity AND sl.frozen_finding_id IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS frozen,
                        CAST(SUM(CASE WHEN sl.starts_at < $2 AND {BOOKABLE} THEN 1 ELSE 0 END) AS BIGINT) AS bookable,
                        CAST(SUM(CASE WHEN sl.starts_at < $3 AND {BOOKABLE} THEN 1 ELSE 0 END) AS BIGINT) AS bookable_week,
                        MIN(CASE WHEN sl.starts_at < $2 AND {BOOKABLE} THEN sl.starts_at * {PACK} + sl.capacity - sl.booked END) AS first,
                        MIN(CASE WHEN sl.starts_at >= $2 AND {BOOKABLE} THEN sl.starts_at END) AS beyond,
                        MIN(sl.store_id) AS store_id
                     FROM slots sl WHERE sl.starts_at > $1 AND sl.sku_id IN ({{ids}}) GROUP BY sl.sku_id"
                ),
                &[now, window_end, week_end],
                &rest,
            )
            .await?,
        );
    }

    Ok(agg)
}

/// Services with nothing to book in the window: what closed their slots, and which findings
/// froze them.
async fn why_nothing_to_book(
    db: &Db,
    agg: &[SlotAgg],
    now: i64,
    window_end: i64,
    facts: &mut Facts,
) -> DomainResult<()> {
    let stuck: Vec<i64> = agg
        .iter()
        .filter(|a| a.bookable == 0 && a.closed > 0)
        .map(|a| a.sku_id)
        .collect();
    if !stuck.is_empty() {
        let rows: Vec<ClosureRow> = by_ids(
            db,
            "SELECT sl.sku_id, sl.closure_id, MIN(COALESCE(c.reason, sl.closed_reason)) AS reason,
                MIN(c.starts_at) AS starts_at, MIN(c.ends_at) AS ends_at, MIN(sf.name) AS staff_name,
                MIN(st.timezone) AS timezone, MIN(st.slug) AS store_slug, MIN(m.slug) AS merchant_slug,
                CAST(COUNT(*) AS BIGINT) AS slots
             FROM slots sl JOIN stores st ON st.id = sl.store_id JOIN merchants m ON m.id = st.merchant_id
             LEFT JOIN closures c ON c.id = sl.closure_id LEFT JOIN staff sf ON sf.id = c.staff_id
             WHERE sl.status = 'CLOSED' AND sl.starts_at > $1 AND sl.starts_at < $2 AND sl.sku_id IN ({ids})
             GROUP BY sl.sku_id, sl.closure_id, CASE WHEN sl.closure_id IS NULL THEN sl.closed_reason END
             ORDER BY sl.sku_id, MIN(sl.starts_at)",
            &[now, window_end],
            &stuck,
        )
        .await?;
        for r in rows {
            facts.closures.entry(r.sku_id).or_default().push(r);
        }
    }
    let frozen: Vec<i64> = agg
        .iter()
        .filter(|a| a.bookable == 0 && a.frozen > 0)
        .map(|a| a.sku_id)
        .collect();
    if !frozen.is_empty() {
        let rows: Vec<(i64, i64)> = by_ids(
            db,
            "SELECT DISTINCT sl.sku_id, sl.frozen_finding_id FROM slots sl
             WHERE sl.frozen_finding_id IS NOT NULL AND sl.status = 'OPEN' AND sl.starts_at > $1 AND sl.starts_at < $2
               AND sl.sku_id IN ({ids}) ORDER BY sl.sku_id, sl.frozen_finding_id",
            &[now, window_end],
            &frozen,
        )
        .await?;
        for (sku, f) in rows {
            facts.frozen_slot_findings.entry(sku).or_default().push(f);
        }
    }
    Ok(())
}

/// The first slot past the window of each service with nothing to book in it.
async fn first_beyond(
    db: &Db,
    agg: &[SlotAgg],
    window_end: i64,
) -> DomainResult<HashMap<i64, i64>> {
    let beyond: Vec<i64> = agg
        .iter()
        .filter(|a| a.bookable == 0 && a.beyond.is_some())
        .map(|a| a.sku_id)
        .collect();
    if beyond.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<(i64, i64)> = by_ids(
        db,
        &format!(
            "SELECT sku_id, id FROM (SELECT sl.sku_id, sl.id, ROW_NUMBER() OVER (PARTITION BY sl.sku_id ORDER BY sl.starts_at, sl.id) AS rn
               FROM slots sl WHERE sl.starts_at >= $1 AND {BOOKABLE} AND sl.sku_id IN ({{ids}})) x WHERE rn = 1"
        ),
        &[window_end],
        &beyond,
    )
    .await?;
    Ok(rows.into_iter().collect())
}

/// The next open slots with places in the window, one by one, of each service given.
pub(super) async fn next_slots_of(
    db: &Db,
    th: &Thresholds,
    now: i64,
    sku_ids: &[i64],
) -> DomainResult<HashMap<i64, Vec<NextSlot>>> {
    let mut out: HashMap<i64, Vec<NextSlot>> = HashMap::new();
    if sku_ids.is_empty() {
        return Ok(out);
    }
    const BOOKABLE: &str =
        "sl.status = 'OPEN' AND sl.booked < sl.capacity AND sl.frozen_finding_id IS NULL";
    // Ordered by start alone, as the (sku_id, starts_at) index already is: no sort.
    let rows: Vec<NextSlotRow> = by_ids(
        db,
        &format!(
            "SELECT id, sku_id, starts_at, capacity, remaining, store_id, staff_id FROM (
                SELECT sl.id, sl.sku_id, sl.starts_at, sl.capacity, sl.capacity - sl.booked AS remaining,
                    sl.store_id, sl.staff_id, ROW_NUMBER() OVER (PARTITION BY sl.sku_id ORDER BY sl.starts_at) AS rn
                FROM slots sl
                WHERE sl.sku_id IN ({{ids}}) AND sl.starts_at > $1 AND sl.starts_at < $2 AND {BOOKABLE}) x
             WHERE rn <= $3"
        ),
        &[now, now + th.window_days * DAY_MS, NEXT_SLOTS as i64],
        sku_ids,
    )
    .await?;
    if rows.is_empty() {
        return Ok(out);
    }
    let store_ids: Vec<i64> = rows
        .iter()
        .map(|r| r.store_id.0)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let staff_ids: Vec<i64> = rows
        .iter()
        .filter_map(|r| r.staff_id)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let stores: HashMap<StoreId, StoreRef> = by_ids::<StoreRef>(
        db,
        "SELECT st.id, m.slug || '/' || st.slug AS value, st.slug, st.timezone FROM stores st
         JOIN merchants m ON m.id = st.merchant_id WHERE st.id IN ({ids})",
        &[],
        &store_ids,
    )
    .await?
    .into_iter()
    .map(|s| (s.id, s))
    .collect();
    let staff: HashMap<i64, String> = if staff_ids.is_empty() {
        HashMap::new()
    } else {
        by_ids::<(i64, String)>(
            db,
            "SELECT id, name FROM staff WHERE id IN ({ids})",
            &[],
            &staff_ids,
        )
        .await?
        .into_iter()
        .collect()
    };
    let mut rows = rows;
    rows.sort_by_key(|r| (r.sku_id, r.starts_at, r.id));
    for r in rows {
        // Every slot has its store (a foreign key); the look-up cannot miss.
        let Some(store) = stores.get(&r.store_id).cloned() else {
            continue;
        };
        out.entry(r.sku_id).or_default().push(NextSlot {
            slot_id: r.id,
            starts_at: ms_to_rfc3339(r.starts_at),
            starts_at_local: local(r.starts_at, &store.timezone),
            timezone: store.timezone,
            store: store.slug,
            staff: r.staff_id.and_then(|id| staff.get(&id)).cloned(),
            capacity: r.capacity,
            remaining: r.remaining,
        });
    }
    Ok(out)
}

/// Lists the next open slots of the sellable services among `verdicts` (a listing's page: the
/// whole-catalog computation leaves them out).
pub async fn attach_next_slots(
    db: &Db,
    th: &Thresholds,
    verdicts: &mut [Verdict],
) -> DomainResult<()> {
    let ids: Vec<i64> = verdicts
        .iter()
        .filter(|v| v.meta.unit_type == UnitType::Slot && v.sellable)
        .map(|v| v.meta.sku_id)
        .collect();
    let mut next = next_slots_of(db, th, db.now_ms(), &ids).await?;
    for v in verdicts
        .iter_mut()
        .filter(|v| v.meta.unit_type == UnitType::Slot)
    {
        v.next_slots = Some(next.remove(&v.meta.sku_id).unwrap_or_default());
    }
    Ok(())
}

pub(super) async fn read_codes(
    db: &Db,
    sel: Selection<'_>,
    now: i64,
    facts: &mut Facts,
) -> DomainResult<()> {
    let batches: Vec<BatchRow> = sqlx::query_as(&format!(
        "SELECT b.id, b.sku_id, b.name, b.status, b.lines_read, b.imported, b.rejected, b.bytes_total, b.bytes_done, b.failure
         FROM code_batches b WHERE b.id IN (SELECT MAX(b.id) FROM code_batches b WHERE {} GROUP BY b.sku_id)",
        sel.on("b")
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?;
    let with_errors: Vec<i64> = batches
        .iter()
        .filter(|b| b.status == "FAILED" || b.status == "PARTIAL")
        .map(|b| b.id)
        .collect();
    if !with_errors.is_empty() {
        let rows: Vec<(i64, i64, String)> = by_ids(
            db,
            "SELECT batch_id, line, reason FROM (SELECT batch_id, line, reason,
                 ROW_NUMBER() OVER (PARTITION BY batch_id ORDER BY line, id) AS rn
               FROM code_import_errors WHERE batch_id IN ({ids})) x WHERE rn <= $1 ORDER BY batch_id, line",
            &[FIRST_ERRORS as i64],
            &with_errors,
        )
        .await?;
        for (batch, line, reason) in rows {
            // Stored in no language: said in the reader's when judged (the facts may be judged
            // in several languages).
            facts
                .batch_errors
                .entry(batch)
                .or_default()
                .push((line, reason));
        }
    }
    facts.batches = batches.into_iter().map(|b| (b.sku_id, b)).collect();

    // The kept counts by batch and status (a few rows per batch, whatever its size), less the
    // available codes already past their expiry (few: the expiry job marks them within a minute).
    // `+c.sku_id`: no index on the SKU for this filter, so that the planner takes the partial
    // index of available codes by expiry rather than walking a big SKU's available codes.
    let code_filter = match sel {
        Selection::Tenant(Scope::All) => "$1 IS NULL".to_string(),
        other => other.sku("+c.sku_id"),
    };
    let on = sel.on("k");
    let (kept, expired) = tokio::try_join!(
        counts::counts(db, &on, sel.bind(), sel.persistent()),
        counts::past_expiry(db, &code_filter, sel.bind(), now, sel.persistent()),
    )?;
    facts.codes = counts::by_sku(kept, &expired);

    // Recent sales: paid order lines of codes.
    let sold: Vec<(i64, i64)> = sqlx::query_as(&format!(
        "SELECT cr.sku_id, CAST(SUM(cr.qty) AS BIGINT) FROM code_reservations cr
         WHERE {} AND cr.status = 'CONFIRMED' AND cr.created_at > $2 GROUP BY cr.sku_id",
        sel.on("cr")
    ))
    .persistent(sel.persistent())
    .bind(sel.bind())
    .bind(now - RATE_DAYS * DAY_MS)
    .fetch_all(&db.pool)
    .await?;
    facts.sold_recently = sold.into_iter().collect();
    Ok(())
}

pub(super) async fn read_findings(db: &Db, ids: impl IntoIterator<Item = i64>, facts: &mut Facts) {
    for id in ids.into_iter().collect::<HashSet<_>>() {
        // A finding that cannot be read still freezes; the reason then names it by number alone.
        if let Ok(f) = reconcile::finding(db, Scope::All, id).await {
            facts.findings.insert(id, f);
        }
    }
}

/// Reads the stock, slots and codes of the selection, the three at once. `kinds` are the unit
/// types present (None: all of them, when the SKUs are read at the same time).
pub(super) async fn read(
    db: &Db,
    th: &Thresholds,
    sel: Selection<'_>,
    kinds: Option<&HashSet<UnitType>>,
    now: i64,
) -> DomainResult<Facts> {
    let has = |unit: UnitType| kinds.is_none_or(|k| k.contains(&unit));
    let (mut stock, mut slots, mut codes) = (Facts::default(), Facts::default(), Facts::default());
    let read_stock = async {
        let t = std::time::Instant::now();
        if has(UnitType::Quantity) {
            read_stock(db, sel, &mut stock).await?;
        }
        Ok::<_, crate::domain::DomainError>(t.elapsed())
    };
    let read_slots = async {
        let t = std::time::Instant::now();
        if has(UnitType::Slot) {
            read_slots(db, sel, now, th, &mut slots).await?;
        }
        Ok::<_, crate::domain::DomainError>(t.elapsed())
    };
    let read_codes = async {
        let t = std::time::Instant::now();
        if has(UnitType::Code) {
            read_codes(db, sel, now, &mut codes).await?;
        }
        Ok::<_, crate::domain::DomainError>(t.elapsed())
    };
    let (stock_t, slots_t, codes_t) = tokio::try_join!(read_stock, read_slots, read_codes)?;
    tracing::debug!(
        stock_ms = stock_t.as_secs_f64() * 1e3,
        slots_ms = slots_t.as_secs_f64() * 1e3,
        codes_ms = codes_t.as_secs_f64() * 1e3,
        "sellable facts read"
    );
    let mut facts = slots;
    facts.stock = stock.stock;
    facts.freeze_reasons = stock.freeze_reasons;
    facts.batches = codes.batches;
    facts.batch_errors = codes.batch_errors;
    facts.codes = codes.codes;
    facts.sold_recently = codes.sold_recently;
    Ok(facts)
}
