//! Products and their SKUs. A product's kind (goods, voucher, service) fixes how its SKUs are
//! counted — stock, codes or slots — and never changes after creation.

pub mod cache;
pub mod sale;
pub mod why;

use crate::domain::MerchantId;
use std::collections::HashSet;

use serde::Serialize;
use sqlx::{Any, FromRow, Transaction};

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, Errors, NAME_MAX};
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::infra::db::Db;
use crate::messages;

/// The most places one slot may offer.
pub const CAPACITY_MAX: i64 = 1000;

crate::text_enum! {
    /// An order's hold: RESERVED until it is paid (CONFIRMED), cancelled (RELEASED) or runs out
    /// of time (EXPIRED).
    pub enum ReservationStatus {
        Reserved = "RESERVED",
        Confirmed = "CONFIRMED",
        Released = "RELEASED",
        Expired = "EXPIRED",
    }
}

crate::text_enum! {
    /// How an order line of goods holds its units, fixed when the order is made (from the SKU's
    /// deduction mode and stock policy): `locked` (locked now, sold at payment), `checked`
    /// (seen available now, sold at payment if still there), `unlimited` (never counted
    /// against stock; the sale writes its ledger row, total and sold rising together).
    #[derive(Default)]
    pub enum LineHold {
        #[default]
        Locked = "locked",
        Checked = "checked",
        Unlimited = "unlimited",
    }
}

/// The kinds a product may be, as the forms and the API name them.
pub const KINDS: &[&str] = ProductKind::NAMES;
/// The statuses a product may be in.
pub const STATUSES: &[&str] = ProductStatus::NAMES;
pub const MAX_SKUS: usize = 100;
pub const DESCRIPTION_MAX: usize = 1000;
pub const PAGE_SIZE: i64 = 20;

crate::text_enum! {
    /// How a SKU counts what is left: stock per warehouse, slots per time, or one row per code.
    #[derive(Default)]
    pub enum UnitType {
        #[default]
        Quantity = "quantity",
        Slot = "slot",
        Code = "code",
    }
}

crate::text_enum! {
    /// Whether a goods SKU's stock is counted (`tracked`) or never runs out (`unlimited`: digital
    /// goods; a sale still writes its ledger row).
    #[derive(Default)]
    pub enum StockPolicy {
        #[default]
        Tracked = "tracked",
        Unlimited = "unlimited",
    }
}

crate::text_enum! {
    /// When a goods SKU's units leave stock: locked by the order and sold at payment
    /// (`on_order`), or only checked by the order and sold at payment (`on_payment`).
    #[derive(Default)]
    pub enum Deduct {
        #[default]
        OnOrder = "on_order",
        OnPayment = "on_payment",
    }
}

crate::text_enum! {
    /// What a product sells, which fixes how its SKUs count what is left (never changes).
    pub enum ProductKind { Goods = "goods", Voucher = "voucher", Service = "service" }
}

impl ProductKind {
    /// How this kind's SKUs count what is left.
    pub fn unit_type(self) -> UnitType {
        match self {
            ProductKind::Goods => UnitType::Quantity,
            ProductKind::Voucher => UnitType::Code,
            ProductKind::Service => UnitType::Slot,
        }
    }
}

crate::text_enum! {
    /// Whether a product is on sale: only ONLINE (inside its sale window, priced) sells.
    pub enum ProductStatus { Draft = "DRAFT", Online = "ONLINE", Offline = "OFFLINE" }
}

/// How a kind's SKUs count what is left.
pub fn unit_type(kind: &str) -> &'static str {
    match kind {
        "voucher" => "code",
        "service" => "slot",
        _ => "quantity",
    }
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Product {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub merchant_name: String,
    pub name: String,
    /// What the booking page (and, later, a shop) tells customers about it; empty: nothing.
    pub description: String,
    #[sqlx(try_from = "String")]
    pub kind: ProductKind,
    #[sqlx(try_from = "String")]
    pub status: ProductStatus,
    pub sale_starts_at: Option<i64>,
    pub sale_ends_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub sku_count: i64,
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Sku {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub product_id: i64,
    pub code: String,
    pub name: String,
    /// The price in minor units; meaningful only when `priced_at` is set (0 then means free).
    pub price: i64,
    /// When the price was last set; None: never, and the SKU is not on sale (`no_price`).
    pub priced_at: Option<i64>,
    #[sqlx(try_from = "String")]
    pub unit_type: UnitType,
    #[sqlx(try_from = "String")]
    pub stock_policy: StockPolicy,
    #[sqlx(try_from = "String")]
    pub deduct: Deduct,
    /// Set while reconciliation has frozen the SKU: the finding that says why.
    pub frozen_finding_id: Option<i64>,
    /// At most this many units in one order.
    pub max_per_order: Option<i64>,
    /// At most this many units held and paid by one customer (orders that name a customer_id).
    pub max_per_customer: Option<i64>,
    /// Below this many available, the SKU warns of low stock (None: the global setting).
    pub low_stock_threshold: Option<i64>,
    /// A service's party size: the most places one booking may take (1 for everything else).
    pub max_places: i64,
    /// A service: customers book at least this many minutes before a slot starts.
    pub min_notice_minutes: i64,
    /// A service: customers cancel or reschedule at least this many minutes before the start.
    pub change_cutoff_minutes: i64,
    /// Goods: what one unit cost the merchant, in minor units (the stock report's value at cost).
    pub unit_cost: Option<i64>,
    /// Vouchers: the visits one code is good for (a multi-visit pass, 次卡); 1 for everything else.
    pub uses: i64,
}

impl Sku {
    /// Whether a price was ever set (a price of 0 set on purpose is a free item).
    pub fn priced(&self) -> bool {
        self.priced_at.is_some()
    }

    /// Goods whose stock is not counted (`stock_policy = unlimited`).
    pub fn unlimited(&self) -> bool {
        self.stock_policy == StockPolicy::Unlimited
    }

    /// How a new order line of this SKU holds its units.
    pub fn line_hold(&self) -> LineHold {
        match (self.stock_policy, self.deduct) {
            (StockPolicy::Unlimited, _) => LineHold::Unlimited,
            (_, Deduct::OnPayment) => LineHold::Checked,
            (_, Deduct::OnOrder) => LineHold::Locked,
        }
    }
}

/// A change of a SKU's policy: `None` leaves a field as it is, `Some(None)` removes a limit.
#[derive(Debug, Clone, Default)]
pub struct PolicyInput {
    pub max_per_order: Option<Option<i64>>,
    pub max_per_customer: Option<Option<i64>>,
    pub low_stock_threshold: Option<Option<i64>>,
    pub stock_policy: Option<StockPolicy>,
    pub deduct: Option<Deduct>,
    /// A price to set (minor units; 0 is free).
    pub price: Option<i64>,
    /// A service's party size (places one booking may take).
    pub max_places: Option<i64>,
    /// A service's minimum notice and customers' change cutoff, in minutes.
    pub min_notice_minutes: Option<i64>,
    pub change_cutoff_minutes: Option<i64>,
    /// Goods: what one unit cost (minor units); `Some(None)` removes it.
    pub unit_cost: Option<Option<i64>>,
    /// Vouchers: the visits one code is good for.
    pub uses: Option<i64>,
}

/// The longest notice or cutoff a service may ask: thirty days.
pub const NOTICE_MAX_MINUTES: i64 = 30 * 24 * 60;

pub const LIMIT_MAX: i64 = 1_000_000_000;

/// The most visits one pass may be good for.
pub const USES_MAX: i64 = 1_000;

/// Checks a policy change without saving it: each limit a whole number in range (a per-order or
/// per-customer limit at least 1; a low-stock line at least 0); a stock policy or deduction mode
/// other than the default only on goods.
pub fn check_policy(unit: UnitType, input: &PolicyInput) -> DomainResult<()> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
    let check = |field: &str, v: Option<Option<i64>>, min: i64| match v {
        Some(Some(n)) if !(min..=LIMIT_MAX).contains(&n) => Err(FieldError::new(
            field,
            "invalid_limit",
            messages::bad_limit(min, LIMIT_MAX),
        )),
        _ => Ok(()),
    };
    errs.take(check("max_per_order", input.max_per_order, 1));
    errs.take(check("max_per_customer", input.max_per_customer, 1));
    errs.take(check("low_stock_threshold", input.low_stock_threshold, 0));
    if let Some(p) = input.price {
        errs.take(validate::price_minor("price", p));
    }
    if let Some(Some(c)) = input.unit_cost {
        errs.take(validate::price_minor("unit_cost", c));
    }
    for (field, v) in [
        ("min_notice_minutes", input.min_notice_minutes),
        ("change_cutoff_minutes", input.change_cutoff_minutes),
    ] {
        match v {
            Some(n) if unit != UnitType::Slot && n != 0 => errs.push(FieldError::new(
                field,
                "not_applicable",
                messages::services_only_rule(),
            )),
            Some(n) if !(0..=NOTICE_MAX_MINUTES).contains(&n) => errs.push(FieldError::new(
                field,
                "invalid_limit",
                messages::bad_minutes(NOTICE_MAX_MINUTES),
            )),
            _ => {}
        }
    }
    if let Some(n) = input.max_places {
        if unit != UnitType::Slot && n != 1 {
            errs.push(FieldError::new(
                "max_places",
                "not_applicable",
                messages::services_only_party(),
            ));
        } else if !(1..=CAPACITY_MAX).contains(&n) {
            errs.push(FieldError::new(
                "max_places",
                "invalid_limit",
                messages::bad_max_places(CAPACITY_MAX),
            ));
        }
    }
    if let Some(n) = input.uses {
        if unit != UnitType::Code && n != 1 {
            errs.push(FieldError::new(
                "uses",
                "not_applicable",
                messages::vouchers_only_uses(),
            ));
        } else if !(1..=USES_MAX).contains(&n) {
            errs.push(FieldError::new(
                "uses",
                "invalid_limit",
                messages::bad_limit(1, USES_MAX),
            ));
        }
    }
    if unit != UnitType::Quantity {
        if input
            .stock_policy
            .is_some_and(|p| p != StockPolicy::Tracked)
        {
            errs.push(FieldError::new(
                "stock_policy",
                "not_applicable",
                messages::goods_only_policy(),
            ));
        }
        if input.deduct.is_some_and(|d| d != Deduct::OnOrder) {
            errs.push(FieldError::new(
                "deduct",
                "not_applicable",
                messages::goods_only_policy(),
            ));
        }
    }
    errs.into_result()
}

/// Sets a SKU's limits. Merchant admins and API keys of the merchant only; audited.
pub async fn set_policy(
    db: &Db,
    actor: &Actor,
    code: &str,
    input: &PolicyInput,
) -> DomainResult<Sku> {
    let merchant_id = actor.catalog_writer()?;
    let sku = sku_by_code(db, merchant_id, code).await?;
    check_policy(sku.unit_type, input)?;
    if input.uses.is_some_and(|n| n != sku.uses) && codes_sold(db, sku.id).await? {
        return Err(DomainError::Invalid(vec![FieldError::new(
            "uses",
            "uses_fixed",
            messages::uses_fixed(),
        )]));
    }
    let mut tx = db.begin_write().await?;
    write_policy(&mut tx, actor, merchant_id, &sku, input, db.now_ms()).await?;
    edited(
        &mut tx,
        db.now_ms(),
        merchant_id,
        &[(sku.id, &sku.code)],
        "sku",
    )
    .await?;
    tx.commit().await?;
    cache::of(db).skus.remove(&(merchant_id, sku.code.clone()));
    sku_by_code(db, merchant_id, &sku.code).await
}

/// Whether any code of the SKU was ever sold (held, sold, used or voided).
async fn codes_sold(db: &Db, sku_id: i64) -> DomainResult<bool> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM codes WHERE sku_id = $1 AND status IN ('BOOKING', 'SOLD', 'REDEEMED', 'VOIDED')",
    )
    .bind(sku_id)
    .fetch_one(&db.pool)
    .await?;
    Ok(n > 0)
}

/// A SKU's policy (and price, when `input` has one) written and audited in the caller's
/// transaction; what `input` leaves out stays as `sku` has it.
async fn write_policy(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    merchant_id: MerchantId,
    sku: &Sku,
    input: &PolicyInput,
    now: i64,
) -> DomainResult<()> {
    let max_per_order = input.max_per_order.unwrap_or(sku.max_per_order);
    let max_per_customer = input.max_per_customer.unwrap_or(sku.max_per_customer);
    let low = input.low_stock_threshold.unwrap_or(sku.low_stock_threshold);
    let stock_policy = input.stock_policy.unwrap_or(sku.stock_policy);
    let deduct = input.deduct.unwrap_or(sku.deduct);
    let max_places = input.max_places.unwrap_or(sku.max_places);
    let notice = input.min_notice_minutes.unwrap_or(sku.min_notice_minutes);
    let cutoff = input
        .change_cutoff_minutes
        .unwrap_or(sku.change_cutoff_minutes);
    let unit_cost = input.unit_cost.unwrap_or(sku.unit_cost);
    // `set_policy` refused a change of uses once a code was sold (`uses_fixed`): a code carries
    // only the uses it took, and its buyer keeps the terms they paid for.
    let uses = input.uses.unwrap_or(sku.uses);
    let (price, priced_at) = match input.price {
        Some(p) => (p, Some(now)),
        None => (sku.price, sku.priced_at),
    };
    // Open orders keep the hold they were made with (stock_reservations.hold): a change applies
    // to orders made after it.
    sqlx::query(
        "UPDATE skus SET max_per_order = $1, max_per_customer = $2, low_stock_threshold = $3, updated_at = $4,
            stock_policy = $7, deduct = $8, price = $9, priced_at = $10, max_places = $11,
            min_notice_minutes = $12, change_cutoff_minutes = $13, unit_cost = $14, uses = $15
         WHERE id = $5 AND merchant_id = $6",
    )
    .bind(max_per_order)
    .bind(max_per_customer)
    .bind(low)
    .bind(now)
    .bind(sku.id)
    .bind(merchant_id)
    .bind(stock_policy.as_str())
    .bind(deduct.as_str())
    .bind(price)
    .bind(priced_at)
    .bind(max_places)
    .bind(notice)
    .bind(cutoff)
    .bind(unit_cost)
    .bind(uses)
    .execute(&mut **tx)
    .await?;
    let said = |v: Option<i64>| v.map_or("none".to_string(), |n| n.to_string());
    crate::domain::trail::audit::record(
        tx,
        now,
        actor,
        Some(merchant_id),
        "sku.policy",
        &format!("sku:{}", sku.code),
        &format!(
            "{}max per order {}, max per customer {}, low stock below {}, stock {stock_policy}, deduct {deduct}, places per booking {max_places}, notice {notice} min, change cutoff {cutoff} min, uses {uses}",
            input.price.map_or(String::new(), |p| format!("price {p}; ")),
            said(max_per_order),
            said(max_per_customer),
            said(low)
        ),
    )
    .await?;
    Ok(())
}

/// The change event of an edit to SKUs' settings or to their product's, in the edit's
/// transaction: one `sku.updated` per SKU. The kept catalogs catch up on these SKUs from it
/// (`sellable::recent`) instead of judging every SKU again, on every instance.
async fn edited(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    now: i64,
    merchant_id: MerchantId,
    skus: &[(i64, &str)],
    changed: &str,
) -> DomainResult<()> {
    for (id, code) in skus {
        crate::domain::trail::events::record(
            tx,
            now,
            merchant_id,
            crate::domain::trail::events::EventType::SkuUpdated,
            crate::domain::trail::events::Subject::new("sku", id, Some(*id)),
            serde_json::json!({ "sku": code, "changed": changed }),
        )
        .await?;
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub struct ProductDetail {
    pub product: Product,
    pub skus: Vec<Sku>,
}

#[derive(Debug, Clone, Default)]
pub struct SkuInput {
    pub code: String,
    pub name: String,
    /// None: no price yet (the SKU is `no_price` until one is set; 0 is a free item).
    pub price: Option<i64>,
}

/// A product as submitted. Times and prices arrive already parsed by the surface (forms and the
/// API spell them differently); everything else is checked here.
#[derive(Debug, Clone, Default)]
pub struct ProductInput {
    pub name: String,
    pub description: String,
    pub kind: String,
    pub status: String,
    pub sale_starts_at: Option<i64>,
    pub sale_ends_at: Option<i64>,
    pub skus: Vec<SkuInput>,
}

#[derive(Debug, Clone, Default)]
pub struct ProductPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub status: Option<String>,
    /// `Some(None)` clears the bound, `None` leaves it as it is.
    pub sale_starts_at: Option<Option<i64>>,
    pub sale_ends_at: Option<Option<i64>>,
}

#[derive(Debug, Clone, Default)]
pub struct ProductFilter {
    pub q: String,
    pub status: String,
    pub kind: String,
    /// Operators may narrow to one merchant.
    pub merchant_id: Option<MerchantId>,
    pub page: i64,
    /// A column to sort by (`name`, `status`, `kind`, `skus`, `created`); newest first otherwise.
    pub sort: String,
    pub desc: bool,
}

/// The WHERE of a product list's filters ($1 the scope, $2 status, $3 kind, $4 the search and
/// $5 its LIKE pattern), with the status and kind it binds (unknown ones match everything).
fn product_where(scope: Scope, filter: &ProductFilter) -> (String, &str, &str) {
    let tenant = scope.filter("p.merchant_id", 1);
    let status = if STATUSES.contains(&filter.status.as_str()) {
        filter.status.as_str()
    } else {
        ""
    };
    let kind = if KINDS.contains(&filter.kind.as_str()) {
        filter.kind.as_str()
    } else {
        ""
    };
    let where_sql = format!(
        "WHERE {tenant}
          AND ($2 = '' OR p.status = $2)
          AND ($3 = '' OR p.kind = $3)
          AND ($4 = '' OR LOWER(p.name) LIKE $5 ESCAPE '\\'
               OR EXISTS (SELECT 1 FROM skus x WHERE x.product_id = p.id AND LOWER(x.code) LIKE $5 ESCAPE '\\'))"
    );
    (where_sql, status, kind)
}

/// The ORDER BY of a product list's sort column: a fixed list, never the request's text.
fn product_order(sort: &str, desc: bool) -> String {
    let col = match sort {
        "name" => "LOWER(p.name)",
        "status" => "p.status",
        "kind" => "p.kind",
        "skus" => "sku_count",
        "created" => "p.id",
        _ => return "p.id DESC".into(),
    };
    let dir = if desc { "DESC" } else { "ASC" };
    format!("{col} {dir}, p.id DESC")
}

#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub page: i64,
    pub pages: i64,
    pub total: i64,
}

pub fn sku_field(i: usize, field: &str) -> String {
    format!("skus[{i}].{field}")
}

fn check_sku(i: usize, sku: &SkuInput, errs: &mut Errors) {
    let code_field = sku_field(i, "code");
    let name_field = sku_field(i, "name");
    if let Err(mut e) = validate::sku_code(&code_field, &sku.code) {
        e.field = code_field;
        errs.push(e);
    }
    if let Err(mut e) = validate::name("sku_name", &sku.name, NAME_MAX) {
        e.field = name_field;
        errs.push(e);
    }
    if let Some(Err(e)) = sku
        .price
        .map(|p| validate::price_minor(&sku_field(i, "price"), p))
    {
        errs.push(e);
    }
}

/// Every rule a new product must meet, all reported at once.
pub fn validate_product(input: &ProductInput) -> Errors {
    let mut errs = Errors::default();
    if let Err(e) = validate::name("name", &input.name, NAME_MAX) {
        errs.push(e);
    }
    if let Err(e) = validate::optional_text("description", &input.description, DESCRIPTION_MAX) {
        errs.push(e);
    }
    if let Err(e) = validate::choice("kind", &input.kind, KINDS) {
        errs.push(e);
    }
    if let Err(e) = validate::choice("status", &input.status, STATUSES) {
        errs.push(e);
    }
    if let Err(e) = validate::sale_window(input.sale_starts_at, input.sale_ends_at) {
        errs.push(e);
    }
    if input.skus.is_empty() {
        errs.push(FieldError::new("skus", "required", messages::no_skus()));
    }
    if input.skus.len() > MAX_SKUS {
        errs.push(FieldError::new(
            "skus",
            "too_many",
            messages::too_many_skus(MAX_SKUS),
        ));
    }
    let mut seen = HashSet::new();
    for (i, sku) in input.skus.iter().enumerate() {
        check_sku(i, sku, &mut errs);
        let code = sku.code.trim().to_string();
        if !code.is_empty() && !seen.insert(code.clone()) {
            errs.push(FieldError::new(
                &sku_field(i, "code"),
                "duplicate_sku_code",
                messages::duplicate_sku_in_request(&code),
            ));
        }
    }
    errs
}

/// A product whose form or body already failed to parse in places (times, prices): those errors
/// and every other rule's at once, so the person sees them all. Prices are checked as they are
/// parsed, so the price rule is not run again on the stand-ins of prices that failed.
pub fn refused(input: &ProductInput, mut parse_errors: Errors) -> DomainError {
    let mut others: Vec<FieldError> = validate_product(input)
        .0
        .into_iter()
        .filter(|e| !e.field.ends_with(".price"))
        .collect();
    parse_errors.append(&mut others);
    parse_errors.refusal()
}

const PRODUCT_SELECT: &str =
    "SELECT p.id, p.merchant_id, m.name AS merchant_name, p.name, p.description, p.kind, p.status,
        p.sale_starts_at, p.sale_ends_at, p.created_at, p.updated_at,
        (SELECT COUNT(*) FROM skus s WHERE s.product_id = p.id) AS sku_count
    FROM products p JOIN merchants m ON m.id = p.merchant_id";

/// Every column of `Sku`: one list, so that a new column cannot be forgotten by one query.
pub(crate) const SKU_SELECT: &str =
    "SELECT id, merchant_id, product_id, code, name, price, priced_at, unit_type, stock_policy, deduct, frozen_finding_id,
        max_per_order, max_per_customer, low_stock_threshold, max_places,
        min_notice_minutes, change_cutoff_minutes, unit_cost, uses FROM skus";

async fn insert_sku(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    product_id: i64,
    kind: &str,
    field_index: usize,
    sku: &SkuInput,
) -> DomainResult<i64> {
    let code = sku.code.trim();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO skus (merchant_id, product_id, code, name, price, unit_type, created_at, updated_at, priced_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id",
    )
    .bind(merchant_id)
    .bind(product_id)
    .bind(code)
    .bind(sku.name.trim())
    .bind(sku.price.unwrap_or(0))
    .bind(unit_type(kind))
    .bind(now)
    .bind(sku.price.map(|_| now))
    .fetch_one(&mut **tx)
    .await
    .map_err(crate::domain::kernel::error::unique_as(
        &sku_field(field_index, "code"),
        "duplicate_sku_code",
        || messages::duplicate_sku_code(code),
    ))?;
    // Every SKU is made here, so every one is announced: the kept catalogs add it from this
    // event (`sellable::recent`) instead of judging every SKU again, on every instance.
    crate::domain::trail::events::record(
        tx,
        now,
        merchant_id,
        crate::domain::trail::events::EventType::SkuCreated,
        crate::domain::trail::events::Subject::new("sku", id, Some(id)),
        serde_json::json!({ "sku": code, "product_id": product_id }),
    )
    .await?;
    Ok(id)
}

pub async fn create_product(
    db: &Db,
    actor: &Actor,
    input: ProductInput,
) -> DomainResult<ProductDetail> {
    let merchant_id = actor.catalog_writer()?;
    let errs = validate_product(&input);
    if !errs.is_empty() {
        return Err(errs.refusal());
    }
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO products (merchant_id, name, kind, status, sale_starts_at, sale_ends_at, created_at, updated_at, description)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id",
    )
    .bind(merchant_id)
    .bind(input.name.trim())
    .bind(input.kind.trim())
    .bind(input.status.trim())
    .bind(input.sale_starts_at)
    .bind(input.sale_ends_at)
    .bind(now)
    .bind(input.description.trim().replace("\r\n", "\n"))
    .fetch_one(&mut *tx)
    .await?;
    for (i, sku) in input.skus.iter().enumerate() {
        insert_sku(
            &mut tx,
            db.now_ms(),
            merchant_id,
            id,
            input.kind.trim(),
            i,
            sku,
        )
        .await?;
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "product.create",
        &format!("product:{id}"),
        input.name.trim(),
    )
    .await?;
    tx.commit().await?;
    get_product(db, Scope::Merchant(merchant_id), id).await
}

pub async fn get_product(db: &Db, scope: Scope, id: i64) -> DomainResult<ProductDetail> {
    let tenant = scope.filter("p.merchant_id", 2);
    let sql = format!("{PRODUCT_SELECT} WHERE p.id = $1 AND {tenant}");
    let product: Product = sqlx::query_as(&sql)
        .bind(id)
        .bind(scope.bind())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("product"))?;
    let skus = sqlx::query_as(&format!("{SKU_SELECT} WHERE product_id = $1 ORDER BY id"))
        .bind(id)
        .fetch_all(&db.pool)
        .await?;
    Ok(ProductDetail { product, skus })
}

/// A product search's LIKE pattern: what was typed, trimmed and lower-cased.
fn like_pattern(q: &str) -> String {
    crate::domain::kernel::filters::like_pattern(&q.trim().to_lowercase())
}

pub async fn list_products(
    db: &Db,
    scope: Scope,
    filter: &ProductFilter,
) -> DomainResult<Page<Product>> {
    let scope = scope.narrowed(filter.merchant_id);
    let (where_sql, status, kind) = product_where(scope, filter);
    let q = filter.q.trim();
    let pattern = like_pattern(q);
    let total: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM products p {where_sql}"))
        .bind(scope.bind())
        .bind(status)
        .bind(kind)
        .bind(q)
        .bind(&pattern)
        .fetch_one(&db.pool)
        .await?;
    let pages = ((total + PAGE_SIZE - 1) / PAGE_SIZE).max(1);
    let page = filter.page.clamp(1, pages);
    let items = sqlx::query_as(&format!(
        "{PRODUCT_SELECT} {where_sql} ORDER BY {} LIMIT $6 OFFSET $7",
        product_order(&filter.sort, filter.desc)
    ))
    .bind(scope.bind())
    .bind(status)
    .bind(kind)
    .bind(q)
    .bind(&pattern)
    .bind(PAGE_SIZE)
    .bind((page - 1) * PAGE_SIZE)
    .fetch_all(&db.pool)
    .await?;
    Ok(Page {
        items,
        page,
        pages,
        total,
    })
}

/// One SKU of the product export, with its product.
#[derive(Debug, Clone, FromRow)]
pub struct ExportRow {
    pub merchant_id: MerchantId,
    pub merchant: String,
    pub product_id: i64,
    pub product: String,
    pub kind: String,
    pub status: String,
    pub sale_starts_at: Option<i64>,
    pub sale_ends_at: Option<i64>,
    pub sku: String,
    pub sku_name: String,
    pub price: i64,
    pub priced_at: Option<i64>,
    pub unit_cost: Option<i64>,
    pub stock_policy: String,
    pub low_stock_threshold: Option<i64>,
    pub max_per_order: Option<i64>,
}

/// Every SKU of the products a list's filters find (all pages), product by product: the CSV
/// export of the catalog. At most [`EXPORT_MAX`] rows.
pub async fn export_rows(
    db: &Db,
    scope: Scope,
    filter: &ProductFilter,
) -> DomainResult<Vec<ExportRow>> {
    let scope = scope.narrowed(filter.merchant_id);
    let (where_sql, status, kind) = product_where(scope, filter);
    let q = filter.q.trim();
    let sql = format!(
        "SELECT p.merchant_id, m.name AS merchant, p.id AS product_id, p.name AS product, p.kind, p.status, p.sale_starts_at,
            p.sale_ends_at, s.code AS sku, s.name AS sku_name, s.price, s.priced_at, s.unit_cost, s.stock_policy,
            s.low_stock_threshold, s.max_per_order
         FROM products p JOIN merchants m ON m.id = p.merchant_id JOIN skus s ON s.product_id = p.id
         {where_sql}
         ORDER BY p.id, s.id LIMIT $6"
    );
    Ok(sqlx::query_as(&sql)
        .bind(scope.bind())
        .bind(status)
        .bind(kind)
        .bind(q)
        .bind(like_pattern(q))
        .bind(EXPORT_MAX)
        .fetch_all(&db.pool)
        .await?)
}

/// The most rows a catalog export writes.
pub const EXPORT_MAX: i64 = 100_000;

/// Changes name, status and/or sale window. Kind and merchant never change.
pub async fn update_product(
    db: &Db,
    actor: &Actor,
    id: i64,
    patch: ProductPatch,
) -> DomainResult<ProductDetail> {
    let merchant_id = actor.catalog_writer()?;
    let current = get_product(db, Scope::Merchant(merchant_id), id)
        .await?
        .product;
    let mut errs = Errors::default();
    let name = match &patch.name {
        Some(n) => errs.take(validate::name("name", n, NAME_MAX)),
        None => Some(current.name.clone()),
    };
    let description = match &patch.description {
        Some(d) => errs.take(validate::optional_text("description", d, DESCRIPTION_MAX)),
        None => Some(current.description.clone()),
    };
    let status = match &patch.status {
        Some(s) => errs
            .take(validate::choice("status", s, STATUSES))
            .map(str::to_string),
        None => Some(current.status.to_string()),
    };
    let starts = patch.sale_starts_at.unwrap_or(current.sale_starts_at);
    let ends = patch.sale_ends_at.unwrap_or(current.sale_ends_at);
    if let Err(e) = validate::sale_window(starts, ends) {
        errs.push(e);
    }
    if !errs.is_empty() {
        return Err(errs.refusal());
    }
    let (name, status) = (name.unwrap_or_default(), status.unwrap_or_default());
    let description = description.unwrap_or_default();
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "UPDATE products SET name = $1, status = $2, sale_starts_at = $3, sale_ends_at = $4, updated_at = $5, description = $8
         WHERE id = $6 AND merchant_id = $7",
    )
    .bind(&name)
    .bind(&status)
    .bind(starts)
    .bind(ends)
    .bind(db.now_ms())
    .bind(id)
    .bind(merchant_id)
    .bind(&description)
    .execute(&mut *tx)
    .await?;
    // A status change alone is its own action, so the log can be filtered for it.
    let mut changes = Vec::new();
    if name != current.name {
        changes.push(format!("name: {} → {name}", current.name));
    }
    if (starts, ends) != (current.sale_starts_at, current.sale_ends_at) {
        changes.push("sale window".to_string());
    }
    if description != current.description {
        changes.push("description".to_string());
    }
    let action = if status != current.status.as_str() {
        let only_status = changes.is_empty();
        changes.push(format!("status: {} → {status}", current.status));
        if only_status {
            "product.status"
        } else {
            "product.update"
        }
    } else {
        "product.update"
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        action,
        &format!("product:{id}"),
        &changes.join("; "),
    )
    .await?;
    // Always, even when nothing a verdict reads seems to change: `current` was read before this
    // transaction, and the update writes every field back, over any edit made since.
    let skus: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, code FROM skus WHERE product_id = $1 AND merchant_id = $2")
            .bind(id)
            .bind(merchant_id)
            .fetch_all(&mut *tx)
            .await?;
    let skus: Vec<(i64, &str)> = skus.iter().map(|(i, c)| (*i, c.as_str())).collect();
    edited(&mut tx, db.now_ms(), merchant_id, &skus, "product").await?;
    tx.commit().await?;
    // Whether it is on sale changes at once on this instance (others: within the cache's 2 s).
    cache::of(db).products.remove(&id);
    get_product(db, Scope::Merchant(merchant_id), id).await
}

pub async fn add_sku(db: &Db, actor: &Actor, product_id: i64, sku: SkuInput) -> DomainResult<Sku> {
    let merchant_id = actor.catalog_writer()?;
    let product = get_product(db, Scope::Merchant(merchant_id), product_id).await?;
    let mut errs = Errors::default();
    check_sku(0, &sku, &mut errs);
    if product.skus.len() >= MAX_SKUS {
        errs.push(FieldError::new(
            "skus",
            "too_many",
            messages::too_many_skus(MAX_SKUS),
        ));
    }
    if !errs.is_empty() {
        return Err(errs.refusal());
    }
    let mut tx = db.begin_write().await?;
    let id = insert_sku(
        &mut tx,
        db.now_ms(),
        merchant_id,
        product_id,
        product.product.kind.as_str(),
        0,
        &sku,
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "sku.create",
        &format!("sku:{}", sku.code.trim()),
        &sku.price.map_or("no price".to_string(), |p| p.to_string()),
    )
    .await?;
    tx.commit().await?;
    sku_by_id(db, Scope::Merchant(merchant_id), id).await
}

/// Renames or reprices a SKU and sets its policy, all or nothing (the back office's SKU form):
/// one transaction, one `sku.updated`. Its code stays: order systems refer to it. A price of
/// None leaves the price as it is (a SKU never priced stays so); `policy` as [`set_policy`]
/// takes it (its own price is ignored: `price` is the one).
pub async fn edit_sku(
    db: &Db,
    actor: &Actor,
    sku_id: i64,
    name: &str,
    price: Option<i64>,
    policy: &PolicyInput,
) -> DomainResult<Sku> {
    let merchant_id = actor.catalog_writer()?;
    let sku = sku_by_id(db, Scope::Merchant(merchant_id), sku_id).await?;
    let mut errs = Errors::default();
    check_sku(
        0,
        &SkuInput {
            code: sku.code.clone(),
            name: name.to_string(),
            price,
        },
        &mut errs,
    );
    // The price was checked with the name (as `skus[0].price`): not a second time.
    let policy = PolicyInput {
        price: None,
        ..policy.clone()
    };
    if let Err(DomainError::Invalid(v)) = check_policy(sku.unit_type, &policy) {
        for e in v {
            errs.push(e);
        }
    }
    let policy = PolicyInput { price, ..policy };
    if !errs.is_empty() {
        return Err(errs.refusal());
    }
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE skus SET name = $1 WHERE id = $2 AND merchant_id = $3")
        .bind(name.trim())
        .bind(sku_id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await?;
    let detail = match (sku.priced_at, price) {
        (_, None) => "price unchanged".to_string(),
        (Some(_), Some(p)) => format!("price {} → {p}", sku.price),
        (None, Some(p)) => format!("price set: {p}"),
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "sku.update",
        &format!("sku:{}", sku.code),
        &detail,
    )
    .await?;
    write_policy(&mut tx, actor, merchant_id, &sku, &policy, now).await?;
    edited(
        &mut tx,
        db.now_ms(),
        merchant_id,
        &[(sku.id, &sku.code)],
        "sku",
    )
    .await?;
    tx.commit().await?;
    cache::of(db).skus.remove(&(merchant_id, sku.code.clone()));
    sku_by_id(db, Scope::Merchant(merchant_id), sku_id).await
}

/// Drops a SKU from this instance's cache (`catalog::cache`) after a change the cached copy
/// does not show (frozen or unfrozen by reconciliation).
pub async fn forget_sku(db: &Db, merchant_id: MerchantId, sku_id: i64) -> DomainResult<()> {
    let code: Option<String> = sqlx::query_scalar("SELECT code FROM skus WHERE id = $1")
        .bind(sku_id)
        .fetch_optional(&db.pool)
        .await?;
    if let Some(code) = code {
        cache::of(db).skus.remove(&(merchant_id, code));
    }
    Ok(())
}

/// The first `n` SKUs (by code) of each of these products, in product and code order. The ids
/// come from a list already scoped to the reader.
pub async fn first_skus(db: &Db, product_ids: &[i64], n: i64) -> DomainResult<Vec<Sku>> {
    if product_ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = product_ids
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    Ok(sqlx::query_as(&format!(
        "{SKU_SELECT} WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY product_id ORDER BY code) AS rn
             FROM skus WHERE product_id IN ({ids})) x WHERE rn <= $1)
         ORDER BY product_id, code"
    ))
    .bind(n)
    .fetch_all(&db.pool)
    .await?)
}

pub async fn sku_by_id(db: &Db, scope: Scope, id: i64) -> DomainResult<Sku> {
    let tenant = scope.filter("merchant_id", 2);
    sqlx::query_as(&format!("{SKU_SELECT} WHERE id = $1 AND {tenant}"))
        .bind(id)
        .bind(scope.bind())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("SKU"))
}

pub async fn sku_by_code(db: &Db, merchant_id: MerchantId, code: &str) -> DomainResult<Sku> {
    // With the Redis gate on, the flood of sold-out answers must not read SQL: SKUs are kept for
    // two seconds (a freeze or a new SKU shows within that; SQL still refuses a frozen SKU).
    let cache_key = (merchant_id, code.trim().to_string());
    if let Some(sku) = cache::of(db).skus.get(&cache_key) {
        return Ok(sku);
    }
    let sku: Sku = sqlx::query_as(&format!(
        "{SKU_SELECT} WHERE merchant_id = $1 AND code = $2"
    ))
    .bind(merchant_id)
    .bind(code.trim())
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("SKU"))?;
    cache::of(db).skus.put(cache_key, sku.clone());
    Ok(sku)
}

/// A SKU of the merchant counted in `unit_type` (quantity, slot or code), or a field error:
/// `unknown_sku`, or `wrong_sku_kind` naming what the SKU is instead.
pub async fn sku_of_unit(
    db: &Db,
    merchant_id: MerchantId,
    code: &str,
    field: &str,
    unit_type: UnitType,
) -> DomainResult<Sku> {
    let sku = match sku_by_code(db, merchant_id, code).await {
        Ok(s) => s,
        Err(DomainError::NotFound(_)) => {
            return Err(DomainError::field(
                field,
                "unknown_sku",
                messages::unknown_sku(code.trim()),
            ));
        }
        Err(e) => return Err(e),
    };
    of_unit(sku, field, unit_type)
}

/// The SKU when it is counted in `unit_type`, or the field's error saying what it is instead.
pub fn of_unit(sku: Sku, field: &str, unit_type: UnitType) -> DomainResult<Sku> {
    if sku.unit_type != unit_type {
        let message = messages::wrong_unit(&sku.code, sku.unit_type.as_str(), unit_type.as_str());
        return Err(DomainError::field(field, "wrong_sku_kind", message));
    }
    Ok(sku)
}

pub async fn count_products(db: &Db, scope: Scope) -> DomainResult<Vec<(String, i64)>> {
    let tenant = scope.filter("merchant_id", 1);
    Ok(sqlx::query_as(&format!(
        "SELECT status, COUNT(*) FROM products WHERE {tenant} GROUP BY status ORDER BY status"
    ))
    .bind(scope.bind())
    .fetch_all(&db.pool)
    .await?)
}
