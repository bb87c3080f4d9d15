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

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono_tz::Tz;
use serde::Serialize;
use serde_json::{json, Value};
use sqlx::FromRow;

use super::catalog::{Sku, UnitType};
use super::codes::BatchStatus;
use super::error::DomainResult;
use super::validate::{ms_to_local, ms_to_rfc3339};
use super::{reconcile, Scope};
use crate::infra::db::{now_ms, Db};
use crate::messages;

/// How local times are written in reasons.
pub const LOCAL_FMT: &str = "%Y-%m-%d %H:%M";
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

crate::text_enum! {
    /// Why a SKU cannot be sold (or, for the last three, a warning), in the order verdicts list
    /// them. The text is the stable `code` clients branch on.
    pub enum ReasonCode {
        ProductDraft = "product_draft",
        ProductOffline = "product_offline",
        SaleNotStarted = "sale_not_started",
        SaleEnded = "sale_ended",
        NoPrice = "no_price",
        SkuFrozen = "sku_frozen",
        NoStockRecord = "no_stock_record",
        OutOfStock = "out_of_stock",
        NoSchedule = "no_schedule",
        NoSlotsInWindow = "no_slots_in_window",
        AllSlotsClosed = "all_slots_closed",
        AllSlotsFull = "all_slots_full",
        SlotsFrozen = "slots_frozen",
        NextSlotBeyondWindow = "next_slot_beyond_window",
        NoBatch = "no_batch",
        BatchFailed = "batch_failed",
        BatchPartial = "batch_partial",
        BatchImporting = "batch_importing",
        NoCodesAvailable = "no_codes_available",
        GateDegraded = "gate_degraded",
        LowStock = "low_stock",
        FewSlots = "few_slots",
        CodesRunningOut = "codes_running_out",
    }
}

impl ReasonCode {
    /// Warnings limit a sale, they never block it.
    pub fn is_warning(self) -> bool {
        matches!(
            self,
            ReasonCode::LowStock | ReasonCode::FewSlots | ReasonCode::CodesRunningOut
        )
    }
}

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
            window_days: super::schedule::DEFAULT_WINDOW_DAYS,
            low_stock: 5,
            few_slots: 3,
            code_runout_days: 7,
        }
    }
}

/// Where a reason is fixed: the web layer turns it into a link. A `store` is the store switcher's
/// value (`merchant/store`), empty when no store is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Fix {
    /// Nothing in the back office fixes it.
    #[default]
    Nothing,
    /// The product's page: status and sale window.
    Product { product_id: i64 },
    /// The SKU's edit form: its price.
    SkuEdit { sku_id: i64 },
    /// A reconciliation finding.
    Finding { finding_id: i64 },
    /// A goods SKU's stock page.
    Stock { sku_id: i64 },
    /// A service's weekly schedule.
    Schedule { sku_id: i64, store: String },
    /// One closure.
    Closure { closure_id: i64, store: String },
    /// A store's closures.
    Closures { store: String },
    /// The week grid, filtered to a service.
    Week { store: String, service: String },
    /// A voucher SKU's codes page.
    Codes { sku_id: i64 },
    /// One code batch.
    Batch { batch_id: i64 },
}

impl Fix {
    pub fn is_nothing(&self) -> bool {
        *self == Fix::Nothing
    }
}

/// One thing that blocks or limits a sale.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Reason {
    /// Stable, snake_case: clients branch on it.
    pub code: ReasonCode,
    pub message: String,
    pub facts: Value,
    /// Where in the back office it is fixed; the web layer makes it a link (`fix_url` in JSON).
    #[serde(skip)]
    pub fix: Fix,
    /// A blocking reason makes the SKU not sellable; the others inform.
    pub blocking: bool,
}

impl Reason {
    fn new(code: ReasonCode, message: String, facts: Value, fix: Fix) -> Reason {
        Reason {
            code,
            message,
            facts,
            fix,
            blocking: true,
        }
    }
    fn info(mut self) -> Reason {
        self.blocking = false;
        self
    }
    pub fn title(&self) -> &'static str {
        messages::reason_title(self.code)
    }
    pub fn fix_label(&self) -> &'static str {
        messages::fix_label(self.code)
    }
}

/// An open slot with places, as a service's verdict lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkuMeta {
    pub sku_id: i64,
    pub merchant_id: i64,
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
        let next = self
            .next_slots
            .as_ref()
            .and_then(|n| n.first())
            .map(|n| (n.starts_at_local.as_str(), n.timezone.as_str()));
        messages::quantity_label(&self.kind, self.quantity, next)
    }
}

// ---- the catalog rules, shared with reserve and book -----------------------------------------

/// What decides whether a product is on sale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaleState {
    pub status: String,
    pub sale_starts_at: Option<i64>,
    pub sale_ends_at: Option<i64>,
    /// The merchant's timezone: sale windows are entered and shown in it.
    pub timezone: String,
}

fn tz_of(name: &str) -> Tz {
    name.parse().unwrap_or(chrono_tz::UTC)
}

fn local(ms: i64, tz: &str) -> String {
    ms_to_local(ms, tz_of(tz), LOCAL_FMT)
}

/// The catalog's reasons a SKU cannot be sold: product DRAFT or OFFLINE, outside its sale window,
/// no price. Empty when the catalog lets it be sold.
pub fn catalog_reasons(
    state: &SaleState,
    sku_id: i64,
    product_id: i64,
    price: i64,
    now: i64,
) -> Vec<Reason> {
    // Formatted only for a reason: the hot paths ask this of every SKU they sell, which has none.
    let product_url = || Fix::Product { product_id };
    let mut out = Vec::new();
    match state.status.as_str() {
        "ONLINE" => {}
        "OFFLINE" => out.push(Reason::new(
            ReasonCode::ProductOffline,
            messages::why_product_offline(),
            json!({ "status": state.status }),
            product_url(),
        )),
        _ => out.push(Reason::new(
            ReasonCode::ProductDraft,
            messages::why_product_draft(),
            json!({ "status": state.status }),
            product_url(),
        )),
    }
    if let Some(starts) = state.sale_starts_at.filter(|s| *s > now) {
        let at = local(starts, &state.timezone);
        out.push(Reason::new(
            ReasonCode::SaleNotStarted,
            messages::why_sale_not_started(&at, &state.timezone),
            json!({ "sale_starts_at": ms_to_rfc3339(starts), "sale_starts_at_local": at, "timezone": state.timezone }),
            product_url(),
        ));
    }
    if let Some(ends) = state.sale_ends_at.filter(|e| *e <= now) {
        let at = local(ends, &state.timezone);
        out.push(Reason::new(
            ReasonCode::SaleEnded,
            messages::why_sale_ended(&at, &state.timezone),
            json!({ "sale_ends_at": ms_to_rfc3339(ends), "sale_ends_at_local": at, "timezone": state.timezone }),
            product_url(),
        ));
    }
    if price <= 0 {
        out.push(Reason::new(
            ReasonCode::NoPrice,
            messages::why_no_price(),
            json!({ "price": price }),
            Fix::SkuEdit { sku_id },
        ));
    }
    out
}

/// The same rules as a SQL condition on a SKU id column and a `now` parameter, for conditional
/// updates that must refuse what is not on sale (a booking takes its place with it).
pub fn on_sale_sql(sku_col: &str, now_param: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM skus ok JOIN products op ON op.id = ok.product_id WHERE ok.id = {sku_col}
           AND ok.price > 0 AND op.status = 'ONLINE'
           AND (op.sale_starts_at IS NULL OR op.sale_starts_at <= {now_param})
           AND (op.sale_ends_at IS NULL OR op.sale_ends_at > {now_param}))"
    )
}

async fn sale_state_sql(db: &Db, product_id: i64) -> DomainResult<SaleState> {
    let row: Option<(String, Option<i64>, Option<i64>, String)> = sqlx::query_as(
        "SELECT p.status, p.sale_starts_at, p.sale_ends_at, m.timezone FROM products p
         JOIN merchants m ON m.id = p.merchant_id WHERE p.id = $1",
    )
    .bind(product_id)
    .fetch_optional(&db.pool)
    .await?;
    let (status, sale_starts_at, sale_ends_at, timezone) =
        row.ok_or(super::DomainError::NotFound("product"))?;
    Ok(SaleState {
        status,
        sale_starts_at,
        sale_ends_at,
        timezone,
    })
}

/// A product's sale state, kept two seconds like SKUs (`domain::cache`), so that a flood of
/// refusals reads nothing from SQL; a change on this instance shows at once.
pub async fn sale_state(db: &Db, product_id: i64) -> DomainResult<SaleState> {
    if let Some(s) = db.caches.products.get(&product_id) {
        return Ok(s);
    }
    let s = sale_state_sql(db, product_id).await?;
    db.caches.products.put(product_id, s.clone());
    Ok(s)
}

/// The first catalog reason this SKU cannot be sold now, if any: what reserve refuses with.
pub async fn not_on_sale(db: &Db, sku: &Sku) -> DomainResult<Option<Reason>> {
    let state = sale_state(db, sku.product_id).await?;
    Ok(
        catalog_reasons(&state, sku.id, sku.product_id, sku.price, now_ms())
            .into_iter()
            .next(),
    )
}

/// Like [`not_on_sale`] but read from SQL now (no cache): to explain a refusal SQL just made.
pub async fn not_on_sale_now(db: &Db, sku: &Sku) -> DomainResult<Option<Reason>> {
    let state = sale_state_sql(db, sku.product_id).await?;
    Ok(
        catalog_reasons(&state, sku.id, sku.product_id, sku.price, now_ms())
            .into_iter()
            .next(),
    )
}

// ---- reading everything a verdict needs, for one SKU or a whole catalog ---------------------

/// Which SKUs to compute: one, those of a product, or every SKU of a merchant (0: of every
/// merchant).
#[derive(Debug, Clone, Copy)]
enum Selection {
    Sku(i64),
    Product(i64),
    Merchant(i64),
}

impl Selection {
    fn bind(self) -> i64 {
        match self {
            Selection::Sku(id) | Selection::Product(id) | Selection::Merchant(id) => id,
        }
    }
    // Every filter names `$1` (bound to 0 for every merchant) and is written per case rather than
    // as `($1 = 0 OR col = $1)`, so that the planner can use the indexes.

    /// `$1` filter on a column holding a SKU id.
    fn sku(self, col: &str) -> String {
        match self {
            Selection::Sku(_) => format!("{col} = $1"),
            Selection::Product(_) => {
                format!("{col} IN (SELECT id FROM skus WHERE product_id = $1)")
            }
            Selection::Merchant(0) => "$1 = 0".to_string(),
            Selection::Merchant(_) => {
                format!("{col} IN (SELECT id FROM skus WHERE merchant_id = $1)")
            }
        }
    }
    /// `$1` filter on a column holding a merchant id: the merchant of the SKUs selected.
    fn merchant(self, col: &str) -> String {
        match self {
            Selection::Sku(_) => format!("{col} IN (SELECT merchant_id FROM skus WHERE id = $1)"),
            Selection::Product(_) => {
                format!("{col} IN (SELECT merchant_id FROM products WHERE id = $1)")
            }
            Selection::Merchant(0) => "$1 = 0".to_string(),
            Selection::Merchant(_) => format!("{col} = $1"),
        }
    }
    /// `$1` filter on a table with `sku_id` and `merchant_id` columns.
    fn on(self, alias: &str) -> String {
        match self {
            Selection::Merchant(_) => self.merchant(&format!("{alias}.merchant_id")),
            other => other.sku(&format!("{alias}.sku_id")),
        }
    }
}

#[derive(Debug, Clone)]
struct SkuRow {
    id: i64,
    merchant_id: i64,
    merchant_slug: String,
    merchant_name: String,
    timezone: String,
    product_id: i64,
    product_name: String,
    code: String,
    name: String,
    price: i64,
    unit_type: UnitType,
    frozen_finding_id: Option<i64>,
    kind: String,
    status: String,
    sale_starts_at: Option<i64>,
    sale_ends_at: Option<i64>,
}

#[derive(Debug, Clone, Default, FromRow)]
struct StockRow {
    sku_id: i64,
    balances: i64,
    total: i64,
    locked: i64,
    sold: i64,
    frozen: i64,
}

impl StockRow {
    fn available(&self) -> i64 {
        self.total - self.locked - self.sold - self.frozen
    }
}

#[derive(Debug, Clone, Default, FromRow)]
struct SlotAgg {
    sku_id: i64,
    /// Slots that have not started.
    future: i64,
    in_window: i64,
    closed: i64,
    full: i64,
    frozen: i64,
    bookable: i64,
    bookable_week: i64,
    /// The soonest slot with places in the window, packed as `starts_at * PACK + remaining`
    /// (capacity is at most 1000): one aggregate gives both.
    first: Option<i64>,
    /// The first slot with places after the window.
    beyond: Option<i64>,
    #[sqlx(skip)]
    beyond_id: Option<i64>,
    /// A store the service has slots in (merchant/store), for links.
    store_id: Option<i64>,
}

#[derive(Debug, Clone, FromRow)]
struct NextSlotRow {
    id: i64,
    sku_id: i64,
    starts_at: i64,
    capacity: i64,
    remaining: i64,
    store_id: i64,
    staff_id: Option<i64>,
}

/// A store as links and local times need it.
#[derive(Debug, Clone, Default, FromRow)]
struct StoreRef {
    id: i64,
    /// `merchant/store`, as the back office's `?store=` takes it.
    value: String,
    slug: String,
    timezone: String,
}

#[derive(Debug, Clone, FromRow)]
struct ClosureRow {
    sku_id: i64,
    closure_id: Option<i64>,
    reason: Option<String>,
    starts_at: Option<i64>,
    ends_at: Option<i64>,
    staff_name: Option<String>,
    timezone: String,
    store_slug: String,
    merchant_slug: String,
    slots: i64,
}

#[derive(Debug, Clone, FromRow)]
struct BatchRow {
    id: i64,
    sku_id: i64,
    name: String,
    status: String,
    lines_read: i64,
    imported: i64,
    rejected: i64,
    bytes_total: i64,
    bytes_done: i64,
    failure: Option<String>,
}

impl BatchRow {
    fn progress(&self) -> i64 {
        if self.status != "CREATING" {
            100
        } else if self.bytes_total > 0 {
            (100 * self.bytes_done / self.bytes_total).clamp(0, 99)
        } else {
            0
        }
    }
}

#[derive(Debug, Clone, FromRow)]
struct CodeCountRow {
    sku_id: i64,
    batch_status: String,
    status: String,
    n: i64,
    past_expiry: i64,
}

/// Codes of one SKU: counts by status (PENDING for a batch still importing) and what can be sold.
#[derive(Debug, Clone, Default)]
struct CodeCounts {
    counts: BTreeMap<String, i64>,
    sellable: i64,
}

/// Everything read for the SKUs being judged, by SKU id.
#[derive(Default)]
struct Facts {
    stock: HashMap<i64, StockRow>,
    freeze_reasons: HashMap<i64, String>,
    rules: HashMap<i64, i64>,
    slots: HashMap<i64, SlotAgg>,
    /// Loaded for one SKU or one product; a whole catalog adds them to the page it shows.
    next_slots: Option<HashMap<i64, Vec<NextSlot>>>,
    closures: HashMap<i64, Vec<ClosureRow>>,
    frozen_slot_findings: HashMap<i64, Vec<i64>>,
    stores: HashMap<i64, StoreRef>,
    batches: HashMap<i64, BatchRow>,
    batch_errors: HashMap<i64, Vec<(i64, String)>>,
    codes: HashMap<i64, CodeCounts>,
    sold_recently: HashMap<i64, i64>,
    findings: HashMap<i64, reconcile::Finding>,
}

/// `$2, $3, …` for an IN list that follows `offset` other parameters.
fn placeholders(n: usize, offset: usize) -> String {
    (1..=n)
        .map(|i| format!("${}", i + offset))
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs `sql` (with `{ids}` standing for the IN list) over chunks of ids, after `pre` binds.
async fn by_ids<T>(db: &Db, sql: &str, pre: &[i64], ids: &[i64]) -> DomainResult<Vec<T>>
where
    T: for<'r> FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        let text = sql.replace("{ids}", &placeholders(chunk.len(), pre.len()));
        let mut q = sqlx::query_as::<_, T>(&text);
        for p in pre {
            q = q.bind(*p);
        }
        for id in chunk {
            q = q.bind(*id);
        }
        out.extend(q.fetch_all(&db.pool).await?);
    }
    Ok(out)
}

/// The SKUs selected with their product and merchant, by merchant name and SKU code. Three
/// narrow queries (products and merchants are few) rather than one wide join: fewer values to
/// carry per SKU.
async fn read_skus(db: &Db, sel: Selection) -> DomainResult<Vec<SkuRow>> {
    type SkuBase = (i64, i64, i64, String, String, i64, String, Option<i64>);
    type ProductBase = (i64, String, String, String, Option<i64>, Option<i64>);
    let sku_filter = match sel {
        Selection::Sku(_) => "id = $1".to_string(),
        Selection::Product(_) => "product_id = $1".to_string(),
        Selection::Merchant(_) => sel.merchant("merchant_id"),
    };
    let product_filter = match sel {
        Selection::Sku(_) => "id IN (SELECT product_id FROM skus WHERE id = $1)".to_string(),
        Selection::Product(_) => "id = $1".to_string(),
        Selection::Merchant(_) => sel.merchant("merchant_id"),
    };
    let skus: Vec<SkuBase> = sqlx::query_as(&format!(
        "SELECT id, merchant_id, product_id, code, name, price, unit_type, frozen_finding_id FROM skus WHERE {sku_filter}"
    ))
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?;
    if skus.is_empty() {
        return Ok(Vec::new());
    }
    let products: HashMap<i64, ProductBase> = sqlx::query_as::<_, ProductBase>(&format!(
        "SELECT id, name, kind, status, sale_starts_at, sale_ends_at FROM products WHERE {product_filter}"
    ))
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?
    .into_iter()
    .map(|p| (p.0, p))
    .collect();
    let merchants: HashMap<i64, (String, String, String)> =
        sqlx::query_as::<_, (i64, String, String, String)>(&format!(
            "SELECT id, slug, name, timezone FROM merchants WHERE {}",
            sel.merchant("id")
        ))
        .bind(sel.bind())
        .fetch_all(&db.pool)
        .await?
        .into_iter()
        .map(|(id, slug, name, tz)| (id, (slug, name, tz)))
        .collect();
    let mut rows: Vec<SkuRow> = skus
        .into_iter()
        .filter_map(
            |(id, merchant_id, product_id, code, name, price, unit_type, frozen)| {
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
                    frozen_finding_id: frozen,
                    kind: p.2.clone(),
                    status: p.3.clone(),
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

async fn read_stock(db: &Db, sel: Selection, facts: &mut Facts) -> DomainResult<()> {
    let rows: Vec<StockRow> = sqlx::query_as(&format!(
        "SELECT b.sku_id, CAST(COUNT(*) AS BIGINT) AS balances, CAST(SUM(b.total) AS BIGINT) AS total,
            CAST(SUM(b.locked) AS BIGINT) AS locked, CAST(SUM(b.sold) AS BIGINT) AS sold,
            CAST(SUM(b.frozen) AS BIGINT) AS frozen
         FROM stock_balances b WHERE {} GROUP BY b.sku_id",
        sel.on("b")
    ))
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

async fn read_slots(
    db: &Db,
    sel: Selection,
    now: i64,
    th: &Thresholds,
    facts: &mut Facts,
) -> DomainResult<()> {
    let window_end = now + th.window_days * DAY_MS;
    let week_end = now + 7 * DAY_MS;
    let (slot_filter, rule_filter) = (sel.on("sl"), sel.on("r"));
    let rules: Vec<(i64, i64)> = sqlx::query_as(&format!(
        "SELECT r.sku_id, CAST(COUNT(*) AS BIGINT) FROM schedule_rules r WHERE {rule_filter} GROUP BY r.sku_id"
    ))
    .bind(sel.bind())
    .fetch_all(&db.pool)
    .await?;
    facts.rules = rules.into_iter().collect();

    const BOOKABLE: &str =
        "sl.status = 'OPEN' AND sl.booked < sl.capacity AND sl.frozen_finding_id IS NULL";
    let agg: Vec<SlotAgg> = sqlx::query_as(&format!(
        "SELECT sl.sku_id, CAST(COUNT(*) AS BIGINT) AS future,
            CAST(SUM(CASE WHEN sl.starts_at < $3 THEN 1 ELSE 0 END) AS BIGINT) AS in_window,
            CAST(SUM(CASE WHEN sl.starts_at < $3 AND sl.status = 'CLOSED' THEN 1 ELSE 0 END) AS BIGINT) AS closed,
            CAST(SUM(CASE WHEN sl.starts_at < $3 AND sl.status = 'OPEN' AND sl.booked >= sl.capacity THEN 1 ELSE 0 END) AS BIGINT) AS full,
            CAST(SUM(CASE WHEN sl.starts_at < $3 AND sl.status = 'OPEN' AND sl.booked < sl.capacity AND sl.frozen_finding_id IS NOT NULL THEN 1 ELSE 0 END) AS BIGINT) AS frozen,
            CAST(SUM(CASE WHEN sl.starts_at < $3 AND {BOOKABLE} THEN 1 ELSE 0 END) AS BIGINT) AS bookable,
            CAST(SUM(CASE WHEN sl.starts_at < $4 AND {BOOKABLE} THEN 1 ELSE 0 END) AS BIGINT) AS bookable_week,
            MIN(CASE WHEN sl.starts_at < $3 AND {BOOKABLE} THEN sl.starts_at * {PACK} + sl.capacity - sl.booked END) AS first,
            MIN(CASE WHEN sl.starts_at >= $3 AND {BOOKABLE} THEN sl.starts_at END) AS beyond,
            MIN(sl.store_id) AS store_id
         FROM slots sl WHERE {slot_filter} AND sl.starts_at > $2 GROUP BY sl.sku_id"
    ))
    .bind(sel.bind())
    .bind(now)
    .bind(window_end)
    .bind(week_end)
    .fetch_all(&db.pool)
    .await?;

    // Services with nothing to book in the window: what closed their slots, and which findings
    // froze them.
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
    // The first slot past the window, where nothing in it can be booked.
    let beyond: Vec<i64> = agg
        .iter()
        .filter(|a| a.bookable == 0 && a.beyond.is_some())
        .map(|a| a.sku_id)
        .collect();
    let mut beyond_ids: HashMap<i64, i64> = HashMap::new();
    if !beyond.is_empty() {
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
        beyond_ids = rows.into_iter().collect();
    }
    // Stores, for links and local times.
    let stores: Vec<StoreRef> = sqlx::query_as(&format!(
        "SELECT st.id, m.slug || '/' || st.slug AS value, st.slug, st.timezone FROM stores st
         JOIN merchants m ON m.id = st.merchant_id WHERE {}",
        sel.merchant("st.merchant_id")
    ))
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

/// The next open slots with places in the window, one by one, of each service given.
async fn next_slots_of(
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
        .map(|r| r.store_id)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let staff_ids: Vec<i64> = rows
        .iter()
        .filter_map(|r| r.staff_id)
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let stores: HashMap<i64, StoreRef> = by_ids::<StoreRef>(
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
        let store = stores.get(&r.store_id).cloned().unwrap_or_default();
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
    let mut next = next_slots_of(db, th, now_ms(), &ids).await?;
    for v in verdicts
        .iter_mut()
        .filter(|v| v.meta.unit_type == UnitType::Slot)
    {
        v.next_slots = Some(next.remove(&v.meta.sku_id).unwrap_or_default());
    }
    Ok(())
}

async fn read_codes(db: &Db, sel: Selection, now: i64, facts: &mut Facts) -> DomainResult<()> {
    let batches: Vec<BatchRow> = sqlx::query_as(&format!(
        "SELECT b.id, b.sku_id, b.name, b.status, b.lines_read, b.imported, b.rejected, b.bytes_total, b.bytes_done, b.failure
         FROM code_batches b WHERE b.id IN (SELECT MAX(b.id) FROM code_batches b WHERE {} GROUP BY b.sku_id)",
        sel.on("b")
    ))
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
            facts
                .batch_errors
                .entry(batch)
                .or_default()
                .push((line, reason));
        }
    }
    facts.batches = batches.into_iter().map(|b| (b.sku_id, b)).collect();

    // One pass over the codes: counts by batch state and status, and which are past expiry.
    let code_filter = match sel {
        Selection::Merchant(0) => "$1 = 0".to_string(),
        Selection::Merchant(_) => {
            "c.batch_id IN (SELECT id FROM code_batches WHERE merchant_id = $1)".to_string()
        }
        other => other.sku("c.sku_id"),
    };
    let rows: Vec<CodeCountRow> = sqlx::query_as(&format!(
        "SELECT x.sku_id, b.status AS batch_status, x.status, CAST(SUM(x.n) AS BIGINT) AS n,
            CAST(SUM(x.past_expiry) AS BIGINT) AS past_expiry
         FROM (SELECT c.sku_id, c.batch_id, c.status, COUNT(*) AS n,
                 SUM(CASE WHEN c.expires_at IS NOT NULL AND c.expires_at <= $2 THEN 1 ELSE 0 END) AS past_expiry
               FROM codes c WHERE {code_filter} GROUP BY c.sku_id, c.batch_id, c.status) x
         JOIN code_batches b ON b.id = x.batch_id
         GROUP BY x.sku_id, b.status, x.status"
    ))
    .bind(sel.bind())
    .bind(now)
    .fetch_all(&db.pool)
    .await?;
    for r in rows {
        let c = facts.codes.entry(r.sku_id).or_default();
        let creating = r.batch_status == BatchStatus::Creating.as_str();
        let status = if creating {
            "PENDING".to_string()
        } else {
            r.status.clone()
        };
        *c.counts.entry(status).or_insert(0) += r.n;
        if !creating && r.status == "AVAILABLE" {
            c.sellable += r.n - r.past_expiry;
        }
    }

    // Recent sales: paid order lines of codes.
    let sold: Vec<(i64, i64)> = sqlx::query_as(&format!(
        "SELECT cr.sku_id, CAST(SUM(cr.qty) AS BIGINT) FROM code_reservations cr
         WHERE {} AND cr.status = 'CONFIRMED' AND cr.created_at > $2 GROUP BY cr.sku_id",
        sel.on("cr")
    ))
    .bind(sel.bind())
    .bind(now - RATE_DAYS * DAY_MS)
    .fetch_all(&db.pool)
    .await?;
    facts.sold_recently = sold.into_iter().collect();
    Ok(())
}

async fn read_findings(db: &Db, ids: impl IntoIterator<Item = i64>, facts: &mut Facts) {
    for id in ids.into_iter().collect::<HashSet<_>>() {
        // A finding that cannot be read still freezes; the reason then names it by number alone.
        if let Ok(f) = reconcile::finding(db, Scope::All, id).await {
            facts.findings.insert(id, f);
        }
    }
}

/// Reads the stock, slots and codes of the selection, the three at once. `kinds` are the unit
/// types present (None: all of them, when the SKUs are read at the same time).
async fn read(
    db: &Db,
    th: &Thresholds,
    sel: Selection,
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
        Ok::<_, super::DomainError>(t.elapsed())
    };
    let read_slots = async {
        let t = std::time::Instant::now();
        if has(UnitType::Slot) {
            read_slots(db, sel, now, th, &mut slots).await?;
        }
        Ok::<_, super::DomainError>(t.elapsed())
    };
    let read_codes = async {
        let t = std::time::Instant::now();
        if has(UnitType::Code) {
            read_codes(db, sel, now, &mut codes).await?;
        }
        Ok::<_, super::DomainError>(t.elapsed())
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

// ---- judging ---------------------------------------------------------------------------------

fn frozen_reason(facts: &Facts, finding: i64) -> Reason {
    let (kind, explain) = match facts.findings.get(&finding) {
        Some(f) => (f.kind.clone(), f.explain()),
        None => (String::new(), String::new()),
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
fn judge_goods(
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
    } else if available < th.low_stock {
        warnings.push(Reason::new(
            ReasonCode::LowStock,
            messages::warn_low_stock(available, th.low_stock),
            json!({ "available": available, "threshold": th.low_stock }),
            url,
        ));
    }
    available
}

/// A store a service has slots in, as `merchant/store` for links, and its timezone.
fn service_store(facts: &Facts, sku_id: i64) -> (String, String) {
    facts
        .slots
        .get(&sku_id)
        .and_then(|a| a.store_id)
        .and_then(|id| facts.stores.get(&id))
        .map(|s| (s.value.clone(), s.timezone.clone()))
        .unwrap_or_default()
}

fn schedule_url(facts: &Facts, sku_id: i64) -> Fix {
    Fix::Schedule {
        sku_id,
        store: service_store(facts, sku_id).0,
    }
}

/// Services: places in the soonest open slot; the next slots one by one.
fn judge_service(
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

const CODE_STATUS_ORDER: [&str; 7] = [
    "AVAILABLE",
    "PENDING",
    "BOOKING",
    "SOLD",
    "LOCKED",
    "EXPIRED",
    "INVALID",
];

/// Vouchers: codes that can be handed out now.
fn judge_voucher(
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
    let errors = facts
        .batch_errors
        .get(&last.id)
        .cloned()
        .unwrap_or_default();
    let batch_facts = json!({
        "batch_id": last.id, "name": last.name, "status": last.status, "read": last.lines_read,
        "imported": last.imported, "rejected": last.rejected, "progress": last.progress(),
        "failure": last.failure,
        "errors": errors.iter().map(|(line, reason)| json!({"line": line, "reason": reason})).collect::<Vec<_>>(),
    });
    let batch_reason = match last.status.as_str() {
        "FAILED" => Some(Reason::new(
            ReasonCode::BatchFailed,
            messages::why_batch_failed(&last.name, last.failure.as_deref().unwrap_or(""), &errors),
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

fn judge(s: &SkuRow, facts: &Facts, th: &Thresholds, now: i64, degraded: bool) -> Verdict {
    let state = SaleState {
        status: s.status.clone(),
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

fn degraded(db: &Db) -> bool {
    db.gate.as_ref().is_some_and(|g| g.is_degraded())
}

async fn compute(db: &Db, th: &Thresholds, sel: Selection) -> DomainResult<Vec<Verdict>> {
    let now = now_ms();
    let started = std::time::Instant::now();
    let (skus, mut facts) = match sel {
        // A catalog: the SKUs and everything about them at once.
        Selection::Merchant(_) => {
            tokio::try_join!(read_skus(db, sel), read(db, th, sel, None, now))?
        }
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
            if !services.is_empty() {
                facts.next_slots = Some(next_slots_of(db, th, now, &services).await?);
            }
            (skus, facts)
        }
    };
    if skus.is_empty() {
        return Ok(Vec::new());
    }
    let finding_ids: Vec<i64> = skus
        .iter()
        .filter_map(|s| s.frozen_finding_id)
        .chain(facts.frozen_slot_findings.values().flatten().copied())
        .collect();
    read_findings(db, finding_ids, &mut facts).await;
    let read_all = started.elapsed();
    let degraded = degraded(db);
    let verdicts: Vec<Verdict> = skus
        .iter()
        .map(|s| judge(s, &facts, th, now, degraded))
        .collect();
    tracing::debug!(
        skus = verdicts.len(),
        read_ms = read_all.as_secs_f64() * 1e3,
        judge_ms = (started.elapsed() - read_all).as_secs_f64() * 1e3,
        "sellable verdicts computed"
    );
    Ok(verdicts)
}

/// One SKU's verdict. The caller has already found the SKU in its scope.
pub async fn verdict(db: &Db, th: &Thresholds, sku: &Sku) -> DomainResult<Verdict> {
    compute(db, th, Selection::Sku(sku.id))
        .await?
        .into_iter()
        .next()
        .ok_or(super::DomainError::NotFound("SKU"))
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
    merchant_id: Option<i64>,
) -> DomainResult<Vec<Verdict>> {
    let merchant = match (scope, merchant_id) {
        (Scope::Merchant(m), _) => m,
        (Scope::All, Some(m)) => m,
        (Scope::All, None) => 0,
    };
    compute(db, th, Selection::Merchant(merchant)).await
}

// ---- the listing -------------------------------------------------------------------------------

#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// blocked | sellable | all (anything else: all).
    pub status: String,
    /// Operators may narrow to one merchant.
    pub merchant_id: Option<i64>,
    /// Only SKUs with this reason or warning code (empty: any).
    pub reason: String,
    /// 1-based.
    pub page: i64,
    /// Defaults to [`DEFAULT_PER_PAGE`], at most [`MAX_PER_PAGE`].
    pub per_page: i64,
}

/// A count of SKUs per reason code.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReasonCount {
    pub code: ReasonCode,
    pub title: &'static str,
    pub skus: i64,
}

/// What the catalog looks like as a whole: the figures above every listing.
#[derive(Debug, Clone, Default, Serialize)]
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
    pub fn of(verdicts: &[Verdict]) -> Totals {
        let mut blocking: BTreeMap<usize, (ReasonCode, i64)> = BTreeMap::new();
        let mut warn: BTreeMap<usize, (ReasonCode, i64)> = BTreeMap::new();
        let mut t = Totals {
            skus: verdicts.len() as i64,
            ..Default::default()
        };
        for v in verdicts {
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
                    title: messages::reason_title(code),
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

fn matches(v: &Verdict, f: &ListFilter) -> bool {
    let status_ok = match f.status.as_str() {
        "blocked" => !v.sellable,
        "sellable" => v.sellable,
        _ => true,
    };
    status_ok && (f.reason.is_empty() || ReasonCode::parse(&f.reason).is_some_and(|c| v.has(c)))
}

/// The catalog's verdicts, filtered and paged, with the totals of the whole catalog.
pub async fn listing(
    db: &Db,
    th: &Thresholds,
    scope: Scope,
    filter: &ListFilter,
) -> DomainResult<Listing> {
    let all = catalog(db, th, scope, filter.merchant_id).await?;
    let mut page = page_of(all, filter);
    attach_next_slots(db, th, &mut page.items).await?;
    Ok(page)
}

/// Filters and pages verdicts already computed.
pub fn page_of(all: Vec<Verdict>, filter: &ListFilter) -> Listing {
    let totals = Totals::of(&all);
    let per_page = if filter.per_page <= 0 {
        DEFAULT_PER_PAGE
    } else {
        filter.per_page.min(MAX_PER_PAGE)
    };
    let matching: Vec<Verdict> = all.into_iter().filter(|v| matches(v, filter)).collect();
    let total = matching.len() as i64;
    let pages = ((total + per_page - 1) / per_page).max(1);
    let page = filter.page.clamp(1, pages);
    let items = matching
        .into_iter()
        .skip(((page - 1) * per_page) as usize)
        .take(per_page as usize)
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
    pub title: &'static str,
    pub skus: i64,
    pub items: Vec<Verdict>,
}

impl Group {
    /// More SKUs have this reason than are listed.
    pub fn more(&self) -> bool {
        self.skus > self.items.len() as i64
    }
}

pub fn groups(verdicts: &[Verdict], cap: usize) -> Vec<Group> {
    let mut by_code: BTreeMap<usize, Group> = BTreeMap::new();
    for v in verdicts.iter().filter(|v| !v.sellable) {
        for r in v.blocking() {
            let g = by_code.entry(rank(r.code)).or_insert_with(|| Group {
                code: r.code,
                title: messages::reason_title(r.code),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn state(status: &str, starts: Option<i64>, ends: Option<i64>) -> SaleState {
        SaleState {
            status: status.into(),
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
        assert!(catalog_reasons(&state("ONLINE", None, None), 1, 1, 100, now).is_empty());
        assert!(
            catalog_reasons(&state("ONLINE", Some(now), Some(now + 1)), 1, 1, 1, now).is_empty()
        );
        assert_eq!(
            codes(&catalog_reasons(
                &state("DRAFT", Some(now + 1), None),
                1,
                1,
                0,
                now
            )),
            ["product_draft", "sale_not_started", "no_price"]
        );
        assert_eq!(
            codes(&catalog_reasons(
                &state("OFFLINE", None, Some(now)),
                1,
                1,
                5,
                now
            )),
            ["product_offline", "sale_ended"]
        );
    }

    #[test]
    fn sale_dates_are_told_in_the_merchants_timezone() {
        // 2025-12-03 01:00 UTC is 09:00 in Shanghai.
        let starts = 1_764_723_600_000;
        let r = catalog_reasons(&state("ONLINE", Some(starts), None), 1, 1, 100, 0);
        assert_eq!(r[0].facts["sale_starts_at_local"], "2025-12-03 09:00");
        assert!(r[0].message.contains("2025-12-03 09:00 (Asia/Shanghai)"));
    }

    #[test]
    fn every_code_has_a_title_of_its_own() {
        let titles: HashSet<&str> = ReasonCode::ALL
            .iter()
            .map(|&c| messages::reason_title(c))
            .collect();
        assert_eq!(titles.len(), ReasonCode::ALL.len());
    }
}
