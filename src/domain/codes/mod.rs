//! Codes: vouchers and card keys, one row each with a state machine
//! (AVAILABLE → BOOKING → SOLD; BOOKING → AVAILABLE; AVAILABLE ↔ LOCKED; AVAILABLE → EXPIRED |
//! INVALID). Plaintext exists only in memory: in the database a code is ciphertext plus a keyed
//! hash, and it never goes to logs, URLs or error messages.

pub mod code;
pub mod counts;
pub mod gate;
pub mod history;
pub mod import;

use crate::domain::{MerchantId, StoreId};
use serde::Serialize;
use sqlx::FromRow;

use crate::domain::catalog::{self, Sku};
use crate::domain::kernel::code_keys::CodeKeys;
use crate::domain::kernel::error::DomainResult;
use crate::domain::{Actor, DomainError, Scope};
use crate::infra::counters::Subject;
use crate::infra::db::Db;
use crate::messages;

pub const CODE_MAX_CHARS: usize = 128;
/// In counts: the AVAILABLE codes of a batch still importing (not for sale yet).
pub const PENDING: &str = "PENDING";
pub const ERROR_PAGE_SIZE: i64 = 100;

/// How a code is compared: surrounding and inner white space do not count (people paste codes
/// with spaces); letters keep their case.
pub fn normalize(raw: &str) -> String {
    raw.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A voucher SKU of the merchant, or a field error naming what the SKU is instead.
pub async fn voucher_sku(
    db: &Db,
    merchant_id: MerchantId,
    code: &str,
    field: &str,
) -> DomainResult<Sku> {
    catalog::sku_of_unit(db, merchant_id, code, field, catalog::UnitType::Code).await
}

/// A voucher SKU as the back office lists it, with its merchant (operators see every merchant).
#[derive(Debug, Clone, FromRow)]
pub struct VoucherSku {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub merchant_slug: String,
    pub merchant_name: String,
    pub code: String,
    pub name: String,
}

/// The voucher SKUs in scope, by merchant and code.
pub async fn voucher_skus(db: &Db, scope: Scope) -> DomainResult<Vec<VoucherSku>> {
    let tenant = scope.filter("k.merchant_id", 1);
    Ok(sqlx::query_as(&format!(
        "SELECT k.id, k.merchant_id, m.slug AS merchant_slug, m.name AS merchant_name, k.code, k.name
         FROM skus k JOIN merchants m ON m.id = k.merchant_id
         WHERE k.unit_type = 'code' AND {tenant} ORDER BY m.name, m.id, k.code",
    ))
    .bind(scope.bind())
    .fetch_all(&db.pool)
    .await?)
}

crate::text_enum! {
    /// A batch imports (CREATING), then holds all its lines (READY), some (PARTIAL) or none
    /// (FAILED).
    pub enum BatchStatus {
        Creating = "CREATING",
        Ready = "READY",
        Partial = "PARTIAL",
        Failed = "FAILED",
    }
}

impl BatchStatus {
    /// Whether the import is over and its codes are in.
    pub fn imported(self) -> bool {
        matches!(self, BatchStatus::Ready | BatchStatus::Partial)
    }
}

crate::text_enum! {
    /// Where a batch's codes came from: a file the merchant uploaded, or generated here (and
    /// downloadable once, by whoever generated them).
    pub enum BatchSource { Upload = "UPLOAD", Generated = "GENERATED" }
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Batch {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub sku_id: i64,
    pub sku_code: String,
    pub name: String,
    #[sqlx(try_from = "String")]
    pub source: BatchSource,
    pub mode: String,
    #[sqlx(try_from = "String")]
    pub status: BatchStatus,
    pub lines_read: i64,
    pub imported: i64,
    pub rejected: i64,
    pub bytes_total: i64,
    pub bytes_done: i64,
    pub expires_at: Option<i64>,
    pub key_version: i64,
    pub failure: Option<String>,
    pub created_by: String,
    pub created_by_user: Option<i64>,
    pub downloaded_at: Option<i64>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
    /// Blank lines of the file, skipped.
    pub blank_lines: i64,
    /// Codes stored without the spaces they were typed with (their lines: [`normalised_lines`]).
    pub normalised: i64,
    /// The characters its codes may hold (`code_import::Allowed`).
    pub allowed: String,
}

/// The lines whose codes were stored without their spaces, in order, at most `limit`.
pub async fn normalised_lines(db: &Db, batch_id: i64, limit: i64) -> DomainResult<Vec<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT line FROM code_import_notes WHERE batch_id = $1 ORDER BY line LIMIT $2",
    )
    .bind(batch_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

impl Batch {
    /// Percent done, for the progress bar.
    pub fn progress(&self) -> i64 {
        if self.status != BatchStatus::Creating {
            100
        } else if self.bytes_total > 0 {
            (100 * self.bytes_done / self.bytes_total).clamp(0, 99)
        } else {
            0
        }
    }
}

const BATCH_SELECT: &str = "SELECT b.id, b.merchant_id, b.sku_id, k.code AS sku_code, b.name, b.source, b.mode, b.status, b.lines_read,
        b.imported, b.rejected, b.bytes_total, b.bytes_done, b.expires_at, b.key_version, b.failure, b.created_by,
        b.created_by_user, b.downloaded_at, b.created_at, b.finished_at, b.blank_lines, b.normalised, b.allowed
    FROM code_batches b JOIN skus k ON k.id = b.sku_id";

pub async fn batch(db: &Db, scope: Scope, id: i64) -> DomainResult<Batch> {
    let tenant = scope.filter("b.merchant_id", 2);
    sqlx::query_as(&format!("{BATCH_SELECT} WHERE b.id = $1 AND {tenant}"))
        .bind(id)
        .bind(scope.bind())
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("batch"))
}

pub async fn batches(
    db: &Db,
    scope: Scope,
    sku_id: Option<i64>,
    limit: i64,
    offset: i64,
) -> DomainResult<Vec<Batch>> {
    let tenant = scope.filter("b.merchant_id", 1);
    Ok(sqlx::query_as(&format!("{BATCH_SELECT} WHERE {tenant} AND ($2 IS NULL OR b.sku_id = $2) ORDER BY b.id DESC LIMIT $3 OFFSET $4"))
        .bind(scope.bind())
        .bind(sku_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(&db.pool)
        .await?)
}

/// How many batches a SKU has (in the caller's scope).
pub async fn count_batches(db: &Db, scope: Scope, sku_id: i64) -> DomainResult<i64> {
    let tenant = scope.filter("b.merchant_id", 1);
    Ok(sqlx::query_scalar(&format!(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM code_batches b WHERE {tenant} AND b.sku_id = $2"
    ))
    .bind(scope.bind())
    .bind(sku_id)
    .fetch_one(&db.pool)
    .await?)
}

#[derive(Debug, Clone, FromRow, Serialize, utoipa::ToSchema)]
pub struct ImportError {
    pub line: i64,
    pub reason: String,
}

/// Import errors with their reasons in the reader's language (they are stored in no language).
fn said(rows: Vec<ImportError>) -> Vec<ImportError> {
    rows.into_iter()
        .map(|e| ImportError {
            reason: crate::domain::codes::import::say(&e.reason),
            ..e
        })
        .collect()
}

impl Batch {
    /// Why the import failed, in the reader's language (stored in no language).
    pub fn failure_said(&self) -> Option<String> {
        self.failure
            .as_deref()
            .map(crate::domain::codes::import::say)
    }
}

/// A page of a batch's import errors (1-based), and the number of pages.
pub async fn errors(
    db: &Db,
    batch_id: i64,
    page: i64,
    page_size: i64,
) -> DomainResult<(Vec<ImportError>, i64, i64)> {
    let total: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM code_import_errors WHERE batch_id = $1")
            .bind(batch_id)
            .fetch_one(&db.pool)
            .await?;
    let pages = ((total + page_size - 1) / page_size).max(1);
    let page = page.clamp(1, pages);
    let rows = sqlx::query_as("SELECT line, reason FROM code_import_errors WHERE batch_id = $1 ORDER BY line, id LIMIT $2 OFFSET $3")
        .bind(batch_id)
        .bind(page_size)
        .bind((page - 1) * page_size)
        .fetch_all(&db.pool)
        .await?;
    Ok((said(rows), page, pages))
}

pub async fn all_errors_csv(db: &Db, batch_id: i64) -> DomainResult<String> {
    let rows: Vec<ImportError> = sqlx::query_as(
        "SELECT line, reason FROM code_import_errors WHERE batch_id = $1 ORDER BY line, id",
    )
    .bind(batch_id)
    .fetch_all(&db.pool)
    .await?;
    let mut out = crate::domain::kernel::export::Csv::new(&["line", "reason"]);
    for r in said(rows) {
        out.row(&[r.line.into(), (&r.reason).into()]);
    }
    Ok(out.finish())
}

/// Codes of a batch still importing are stored AVAILABLE but are not for sale until the batch
/// commits (one status flip of the batch rather than an UPDATE of a million code rows). Every
/// query that sells codes carries this condition; `$1` is the SKU id.
pub const NOT_IMPORTING: &str = not_importing!();

macro_rules! not_importing {
    () => {
        "batch_id NOT IN (SELECT id FROM code_batches WHERE sku_id = $1 AND status = 'CREATING')"
    };
}
use not_importing;

/// The SQL condition for a code that can be handed out now: AVAILABLE, not past its expiry, not
/// of a batch still importing (`$1` is the SKU id, `$2` now). The one copy of the rule: the
/// count, the Redis pool's refill and reconciliation all use it.
pub const SELLABLE: &str = concat!(
    "status = 'AVAILABLE' AND (expires_at IS NULL OR expires_at > $2) AND ",
    not_importing!()
);

/// Counts by status for a SKU. PENDING: codes of a batch still importing.
#[derive(Debug, Clone, Serialize, Default, utoipa::ToSchema)]
pub struct Summary {
    pub sku: String,
    pub counts: std::collections::BTreeMap<String, i64>,
    /// AVAILABLE and not past expiry: what can be sold now.
    pub sellable: i64,
}

pub async fn summary(db: &Db, sku: &Sku) -> DomainResult<Summary> {
    let tally = tally(db, sku.id).await?;
    let mut s = Summary {
        sku: sku.code.clone(),
        sellable: tally.sellable,
        ..Default::default()
    };
    for st in CodeStatus::NAMES.iter().chain(&[PENDING]) {
        s.counts.insert(st.to_string(), 0);
    }
    s.counts.extend(tally.counts);
    Ok(s)
}

/// One SKU's kept counts (see `code_counts`): a few rows, however many codes.
async fn tally(db: &Db, sku_id: i64) -> DomainResult<crate::domain::codes::counts::Tally> {
    use crate::domain::codes::counts;
    let (kept, expired) = tokio::try_join!(
        counts::counts(db, "k.sku_id = $1", Some(sku_id), true),
        counts::past_expiry(db, "+c.sku_id = $1", Some(sku_id), db.now_ms(), true),
    )?;
    Ok(counts::by_sku(kept, &expired)
        .remove(&sku_id)
        .unwrap_or_default())
}

/// Codes of a SKU that can be handed out now, as the kept counts say (what a refusal reports).
pub async fn sellable_count(db: &Db, sku_id: i64) -> DomainResult<i64> {
    Ok(tally(db, sku_id).await?.sellable)
}

/// Counts by status of one batch's codes (every status present, zero when none).
pub async fn batch_counts(
    db: &Db,
    merchant_id: MerchantId,
    batch_id: i64,
) -> DomainResult<std::collections::BTreeMap<String, i64>> {
    let kept = crate::domain::codes::counts::of_batch(db, merchant_id, batch_id).await?;
    let mut counts: std::collections::BTreeMap<String, i64> = CodeStatus::NAMES
        .iter()
        .chain(&[PENDING])
        .map(|s| (s.to_string(), 0))
        .collect();
    for tally in crate::domain::codes::counts::by_sku(kept, &[]).into_values() {
        counts.extend(tally.counts);
    }
    Ok(counts)
}

crate::text_enum! {
    /// A code's state: AVAILABLE → BOOKING (an order holds it) → SOLD, or back to AVAILABLE when
    /// the order is released or expires; SOLD → VOIDED | REDEEMED, never back to sale; staff LOCK
    /// and INVALIDATE available ones; past its
    /// expiry an available code is EXPIRED. (PENDING in counts is not a state: it is the
    /// AVAILABLE codes of a batch still importing.)
    pub enum CodeStatus {
        Available = "AVAILABLE",
        Booking = "BOOKING",
        Sold = "SOLD",
        Locked = "LOCKED",
        Expired = "EXPIRED",
        Invalid = "INVALID",
        /// Final: a sold code refunded or leaked (after-sales).
        Voided = "VOIDED",
        /// Final: a sold code used at the counter.
        Redeemed = "REDEEMED",
    }
}

/// One code as the back office shows it: never the plaintext.
#[derive(Debug, Clone, FromRow, Serialize)]
pub struct CodeRow {
    pub id: i64,
    pub batch_id: i64,
    pub sku_id: i64,
    pub line: i64,
    #[sqlx(try_from = "String")]
    pub status: CodeStatus,
    pub order_id: Option<String>,
    pub expires_at: Option<i64>,
    pub sold_at: Option<i64>,
    pub updated_at: i64,
    pub redeemed_at: Option<i64>,
    pub redeemed_store_id: Option<StoreId>,
}

const CODE_SELECT: &str =
    "SELECT id, batch_id, sku_id, line, status, order_id, expires_at, sold_at, updated_at,
    redeemed_at, redeemed_store_id FROM codes";

/// Which of a batch's codes a page lists.
#[derive(Debug, Clone, Default)]
pub struct CodeFilter {
    pub status: Option<CodeStatus>,
    /// A code as a customer reads it out (see [`candidates`]) or an order number.
    pub search: String,
}

/// A page of a batch's codes.
#[derive(Debug, Clone)]
pub struct CodePage {
    pub rows: Vec<CodeRow>,
    /// The page shown (1-based, within the pages).
    pub page: i64,
    pub pages: i64,
    /// The codes matching the filter.
    pub total: i64,
}

/// A page of a batch's codes in id order. Without a search the total comes from the kept counts
/// (no count of a million rows) and the page from an index read in order; a search finds a few
/// codes by their keyed hash or their order and pages them here.
pub async fn codes_of_batch(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    batch_id: i64,
    filter: &CodeFilter,
    page: i64,
    page_size: i64,
) -> DomainResult<CodePage> {
    let pages_of = |total: i64| ((total + page_size - 1) / page_size).max(1);
    if !filter.search.trim().is_empty() {
        let mut found = search_batch(db, keys, merchant_id, batch_id, &filter.search).await?;
        found.retain(|c| filter.status.is_none_or(|s| c.status == s));
        let total = found.len() as i64;
        let pages = pages_of(total);
        let page = page.clamp(1, pages);
        let rows = found
            .into_iter()
            .skip(((page - 1) * page_size) as usize)
            .take(page_size as usize)
            .collect();
        return Ok(CodePage {
            rows,
            page,
            pages,
            total,
        });
    }
    let counts = batch_counts(db, merchant_id, batch_id).await?;
    let total = match filter.status {
        Some(s) => counts.get(s.as_str()).copied().unwrap_or(0),
        None => counts.values().sum(),
    };
    let pages = pages_of(total);
    let page = page.clamp(1, pages);
    let offset = (page - 1) * page_size;
    // A batch imported alone holds one run of ids: page k starts at its first id plus the rows
    // before it, found without skipping anything.
    // Each end read from the (batch, id) index alone: a condition on another column would make
    // SQLite visit every code of the batch (0.5 s at a million). The merchant is checked by the
    // page's own query below.
    let (first, last): (Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT (SELECT MIN(id) FROM codes WHERE batch_id = $1), (SELECT MAX(id) FROM codes WHERE batch_id = $1)",
    )
    .bind(batch_id)
    .fetch_one(&db.pool)
    .await?;
    let one_run = matches!((first, last), (Some(f), Some(l)) if l - f + 1 == total);
    let rows = match (filter.status, first) {
        (None, Some(first)) if one_run => {
            sqlx::query_as(&format!(
                "{CODE_SELECT} WHERE batch_id = $1 AND merchant_id = $2 AND id >= $3 AND id < $4
                 ORDER BY batch_id, id"
            ))
            .bind(batch_id)
            .bind(merchant_id)
            .bind(first + offset)
            .bind(first + offset + page_size)
            .fetch_all(&db.pool)
            .await?
        }
        // Otherwise the page's first id is found by skipping through the index alone (batch,
        // status, id), and only the page's own rows are read. The ORDER BY names the index's
        // columns so that PostgreSQL walks that index rather than the whole table's. The skip
        // names no merchant (the index has none; the batch was found in the reader's scope, and
        // the rows read are scoped again).
        (status, _) => {
            let (by_status, order) = if status.is_some() {
                ("AND status = $5", "batch_id, status, id")
            } else {
                ("AND $5 IS NULL", "batch_id, id")
            };
            sqlx::query_as(&format!(
                "{CODE_SELECT} WHERE batch_id = $1 AND merchant_id = $2 {by_status}
                 AND id >= (SELECT id FROM codes WHERE batch_id = $1 {by_status} ORDER BY {order} LIMIT 1 OFFSET $4)
                 ORDER BY {order} LIMIT $3"
            ))
            .bind(batch_id)
            .bind(merchant_id)
            .bind(page_size)
            .bind(offset)
            .bind(status.map(|s| s.as_str()))
            .fetch_all(&db.pool)
            .await?
        }
    };
    Ok(CodePage {
        rows,
        page,
        pages,
        total,
    })
}

/// The codes of a batch that a search names: the code itself (by its keyed hash, as the look-up
/// finds it) or the order holding it. In id order.
async fn search_batch(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    batch_id: i64,
    typed: &str,
) -> DomainResult<Vec<CodeRow>> {
    let mut found: Vec<CodeRow> = Vec::new();
    for c in candidates(typed) {
        let row: Option<CodeRow> = sqlx::query_as(&format!(
            "{CODE_SELECT} WHERE merchant_id = $1 AND code_hash = $2 AND batch_id = $3"
        ))
        .bind(merchant_id)
        .bind(keys.hash(merchant_id, &c).to_vec())
        .bind(batch_id)
        .fetch_optional(&db.pool)
        .await?;
        found.extend(row);
    }
    // The order's ids first, then its codes by their index: asked in one statement, a planner
    // may walk the whole batch instead.
    let orders: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM reservations WHERE merchant_id = $1 AND order_id = $2")
            .bind(merchant_id)
            .bind(typed.trim())
            .fetch_all(&db.pool)
            .await?;
    for order in orders {
        let by_order: Vec<CodeRow> = sqlx::query_as(&format!(
            "{CODE_SELECT} WHERE reservation_id = $1 AND batch_id = $2 AND merchant_id = $3"
        ))
        .bind(order)
        .bind(batch_id)
        .bind(merchant_id)
        .fetch_all(&db.pool)
        .await?;
        found.extend(by_order);
    }
    found.sort_by_key(|c| c.id);
    found.dedup_by_key(|c| c.id);
    Ok(found)
}

pub async fn code(db: &Db, merchant_id: MerchantId, id: i64) -> DomainResult<CodeRow> {
    sqlx::query_as(&format!("{CODE_SELECT} WHERE id = $1 AND merchant_id = $2"))
        .bind(id)
        .bind(merchant_id)
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("code"))
}

/// The codes a typed text may be, as stored: without its spaces, as typed and in capitals (codes
/// are stored as imported, and customers read them out in either case). Empty for blank text.
pub fn candidates(typed: &str) -> Vec<String> {
    let n = normalize(typed);
    if n.is_empty() {
        return Vec::new();
    }
    let upper = n.to_uppercase();
    if upper == n {
        vec![n]
    } else {
        vec![n, upper]
    }
}

/// Finds a code a customer reads out, by its keyed hash.
pub async fn lookup(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    typed: &str,
) -> DomainResult<Option<CodeRow>> {
    for c in candidates(typed) {
        let row = sqlx::query_as(&format!(
            "{CODE_SELECT} WHERE merchant_id = $1 AND code_hash = $2"
        ))
        .bind(merchant_id)
        .bind(keys.hash(merchant_id, &c).to_vec())
        .fetch_optional(&db.pool)
        .await?;
        if row.is_some() {
            return Ok(row);
        }
    }
    Ok(None)
}

/// Shows one code's plaintext to a merchant admin; every reveal is written to the audit log.
pub async fn reveal(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
) -> DomainResult<String> {
    let (ct, nonce, version, batch_id): (Vec<u8>, Vec<u8>, i64, i64) =
        sqlx::query_as("SELECT ciphertext, nonce, key_version, batch_id FROM codes WHERE id = $1 AND merchant_id = $2")
            .bind(id)
            .bind(merchant_id)
            .fetch_optional(&db.pool)
            .await?
            .ok_or(DomainError::NotFound("code"))?;
    let plain = keys
        .decrypt(merchant_id, version, &ct, &nonce)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    let mut tx = db.begin_write().await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "code.reveal",
        &format!("code:{id}"),
        &format!("batch {batch_id}"),
    )
    .await?;
    tx.commit().await?;
    Ok(plain)
}

/// Plaintext of the codes an order holds (BOOKING, SOLD or REDEEMED; a voided code is no longer
/// the order's to use), for the order's answer.
pub async fn codes_of_reservation(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    reservation_id: i64,
    sku_id: i64,
) -> DomainResult<Vec<String>> {
    let rows: Vec<(Vec<u8>, Vec<u8>, i64)> =
        sqlx::query_as("SELECT ciphertext, nonce, key_version FROM codes WHERE reservation_id = $1 AND sku_id = $2 AND merchant_id = $3 AND status <> 'VOIDED' ORDER BY id")
            .bind(reservation_id)
            .bind(sku_id)
            .bind(merchant_id)
            .fetch_all(&db.pool)
            .await?;
    rows.iter()
        .map(|(ct, nonce, v)| {
            keys.decrypt(merchant_id, *v, ct, nonce)
                .map_err(|e| DomainError::Internal(e.to_string()))
        })
        .collect()
}

/// Ops moves on single codes or whole batches, each only from the states the machine allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpsMove {
    Lock,
    Unlock,
    Invalidate,
}

impl OpsMove {
    /// The state a code must be in for this move, and the state it goes to.
    fn states(self) -> (CodeStatus, CodeStatus) {
        match self {
            OpsMove::Lock => (CodeStatus::Available, CodeStatus::Locked),
            OpsMove::Unlock => (CodeStatus::Locked, CodeStatus::Available),
            OpsMove::Invalidate => (CodeStatus::Available, CodeStatus::Invalid),
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            OpsMove::Lock => "lock",
            OpsMove::Unlock => "unlock",
            OpsMove::Invalidate => "invalidate",
        }
    }
}

/// Applies a move to one code; refused (with the code's status) when the machine does not allow it.
pub async fn move_code(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    mv: OpsMove,
) -> DomainResult<CodeRow> {
    move_code_because(db, actor, merchant_id, id, mv, "").await
}

/// `move_code` with why, kept in the code's history.
pub async fn move_code_because(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    mv: OpsMove,
    reason: &str,
) -> DomainResult<CodeRow> {
    let current = code(db, merchant_id, id).await?;
    let (from, to) = mv.states();
    let mut tx = db.begin_write().await?;
    let moved = code::ops_move(
        &mut tx,
        db.now_ms(),
        merchant_id,
        code::Which::One(id),
        (from, to),
    )
    .await?;
    if moved != 1 {
        tx.rollback().await?;
        let now = code(db, merchant_id, id).await?;
        return Err(DomainError::conflict(
            "code_state",
            messages::code_move_refused(mv.label(), now.status.as_str()),
            serde_json::json!({ "code_id": id, "status": now.status }),
        ));
    }
    let event = match mv {
        OpsMove::Lock => history::CodeEvent::Locked,
        OpsMove::Unlock => history::CodeEvent::Unlocked,
        OpsMove::Invalidate => history::CodeEvent::Invalidated,
    };
    history::record(
        &mut tx,
        db.now_ms(),
        actor,
        merchant_id,
        id,
        None,
        event,
        reason,
        None,
    )
    .await?;
    let detail = if reason.is_empty() {
        current.status.as_str().to_string()
    } else {
        format!("{}: {reason}", current.status)
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        &format!("code.{}", mv.label()),
        &format!("code:{id}"),
        &detail,
    )
    .await?;
    tx.commit().await?;
    let moved = code(db, merchant_id, id).await?;
    db.forget([Subject::Codes(moved.sku_id)]).await;
    Ok(moved)
}

/// Applies a move to every code of a batch that is in the right state; returns how many moved.
pub async fn move_batch(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    batch_id: i64,
    mv: OpsMove,
) -> DomainResult<u64> {
    let b = batch(db, Scope::Merchant(merchant_id), batch_id).await?;
    let (from, to) = mv.states();
    let mut tx = db.begin_write().await?;
    let moved = code::ops_move(
        &mut tx,
        db.now_ms(),
        merchant_id,
        code::Which::Batch(batch_id),
        (from, to),
    )
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        &format!("batch.{}", mv.label()),
        &format!("batch:{batch_id}"),
        &moved.to_string(),
    )
    .await?;
    // One change event for the batch (a code's own moves write one each): webhooks, the
    // reconciliation of what changed and the kept catalogs learn the SKU's codes moved.
    if moved > 0 {
        crate::domain::trail::events::record(
            &mut tx,
            db.now_ms(),
            merchant_id,
            crate::domain::trail::events::EventType::CodeBatchStateChanged,
            crate::domain::trail::events::Subject::new("code_batch", batch_id, Some(b.sku_id)),
            serde_json::json!({"action": mv.label(), "before": from.as_str(),
                "after": to.as_str(), "codes": moved}),
        )
        .await?;
    }
    tx.commit().await?;
    db.forget([Subject::Codes(b.sku_id)]).await;
    Ok(moved)
}

/// The expiry job: AVAILABLE codes past their expiry become EXPIRED. Idempotent.
pub async fn expire_due(db: &Db) -> DomainResult<u64> {
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let skus = code::expire_available(&mut tx, now).await?;
    tx.commit().await?;
    let n = skus.len() as u64;
    let distinct: std::collections::BTreeSet<i64> = skus.into_iter().collect();
    db.forget(distinct.into_iter().map(Subject::Codes)).await;
    Ok(n)
}

/// Batches whose import stopped (the process died): marked FAILED and their pending codes removed,
/// so nothing of them is ever half-visible for sale.
pub async fn fail_abandoned(db: &Db, stale_after_ms: i64) -> DomainResult<usize> {
    let cutoff = db.now_ms() - stale_after_ms;
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM code_batches WHERE status = 'CREATING' AND COALESCE(heartbeat_at, created_at) < $1")
        .bind(cutoff)
        .fetch_all(&db.pool)
        .await?;
    let mut n = 0;
    for id in ids {
        let mut tx = db.begin_write().await?;
        let r = sqlx::query("UPDATE code_batches SET status = 'FAILED', failure = $1, imported = 0, finished_at = $2 WHERE id = $3 AND status = 'CREATING' AND COALESCE(heartbeat_at, created_at) < $4")
            .bind(crate::domain::codes::import::ImportWhy::Abandoned.stored())
            .bind(db.now_ms())
            .bind(id)
            .bind(cutoff)
            .execute(&mut *tx)
            .await?;
        if r.rows_affected() == 1 {
            sqlx::query("DELETE FROM codes WHERE batch_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            // As an import that fails by itself: its `code_batch.created` gets its end.
            crate::domain::trail::events::record_for_batch(
                &mut tx,
                db.now_ms(),
                id,
                crate::domain::trail::events::EventType::CodeBatchFailed,
                serde_json::json!({"before": "CREATING", "after": "FAILED",
                    "failure": crate::domain::codes::import::say(&crate::domain::codes::import::ImportWhy::Abandoned.stored())}),
            )
            .await?;
            n += 1;
        }
        tx.commit().await?;
    }
    Ok(n)
}

/// Who generated a batch, and so alone may download it: a signed-in user, or an API key (by its
/// actor label, `apikey:<id>:<name>`).
#[derive(Debug, Clone, Copy)]
pub enum Generator<'a> {
    User(i64),
    Key(&'a str),
}

/// Marks a generated batch downloaded (once, by its creator) and returns its codes' plaintext.
pub async fn download_generated(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    owner: Generator<'_>,
    merchant_id: MerchantId,
    batch_id: i64,
) -> DomainResult<(Batch, Vec<String>)> {
    let b = batch(db, Scope::Merchant(merchant_id), batch_id).await?;
    let theirs = match owner {
        Generator::User(id) => b.created_by_user == Some(id),
        Generator::Key(label) => b.created_by_user.is_none() && b.created_by == label,
    };
    if b.source != BatchSource::Generated || !theirs || b.status == BatchStatus::Creating {
        return Err(DomainError::Forbidden);
    }
    let mut tx = db.begin_write().await?;
    let r = sqlx::query(
        "UPDATE code_batches SET downloaded_at = $1 WHERE id = $2 AND downloaded_at IS NULL",
    )
    .bind(db.now_ms())
    .bind(batch_id)
    .execute(&mut *tx)
    .await?;
    if r.rows_affected() != 1 {
        tx.rollback().await?;
        return Err(DomainError::conflict(
            "already_downloaded",
            messages::already_downloaded(),
            serde_json::json!({ "batch_id": batch_id }),
        ));
    }
    let rows: Vec<(Vec<u8>, Vec<u8>, i64)> = sqlx::query_as(
        "SELECT ciphertext, nonce, key_version FROM codes WHERE batch_id = $1 ORDER BY id",
    )
    .bind(batch_id)
    .fetch_all(&mut *tx)
    .await?;
    let plain = rows
        .iter()
        .map(|(ct, n, v)| {
            keys.decrypt(merchant_id, *v, ct, n)
                .map_err(|e| DomainError::Internal(e.to_string()))
        })
        .collect::<DomainResult<Vec<_>>>()?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "batch.download",
        &format!("batch:{batch_id}"),
        &plain.len().to_string(),
    )
    .await?;
    tx.commit().await?;
    Ok((b, plain))
}
