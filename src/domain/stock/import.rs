//! Stock sheets: a CSV of receipts (a delivery note) or of counts (a stocktake), previewed line by
//! line, then applied all-or-nothing (one transaction: every line or none) or valid lines only
//! (each line its own transaction). A file is applied once: the same bytes of the same kind for
//! the same merchant are refused a second time (a unique index on the applied file's SHA-256).
//!
//! The sheet: a header row, then one line per SKU × warehouse. Columns by name, in any order, in
//! English or Chinese: `sku` (SKU编码), `warehouse` (仓库), `qty` (数量), and optionally
//! `reason_code` (原因代码) and `note` (备注). UTF-8 (a byte-order mark is fine) or, as Excel saves
//! CSV on Chinese Windows, GB18030.

use std::collections::HashMap;

use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::stock::{self, AdjustInput, AdjustKind};
use crate::domain::{Actor, DomainError, FieldError, MerchantId};
use crate::infra::counters::Subject;
use crate::infra::db::Db;
use crate::messages;

/// The largest sheet taken: a stocktake of a large catalog fits easily.
pub const MAX_BYTES: usize = 2 * 1024 * 1024;
pub const MAX_LINES: usize = 20_000;

crate::text_enum! {
    /// What a sheet's quantities are.
    pub enum SheetKind {
        /// Units received: each line adds its quantity.
        Receipts = "receipts",
        /// Units counted on the shelf: each line sets on hand; the difference is booked.
        Counts = "counts",
    }
}

crate::text_enum! {
    /// How a sheet with bad lines is applied.
    pub enum ApplyMode {
        /// Every line in one transaction, only when no line is bad.
        AllOrNothing = "all_or_nothing",
        /// The good lines, each on its own; the bad ones are listed and left.
        ValidOnly = "valid_only",
    }
}

impl SheetKind {
    fn adjust_kind(self) -> AdjustKind {
        match self {
            SheetKind::Receipts => AdjustKind::Receive,
            SheetKind::Counts => AdjustKind::Count,
        }
    }
    /// The reason a line says when its sheet gives none.
    fn default_reason(self) -> &'static str {
        match self {
            SheetKind::Receipts => "received",
            SheetKind::Counts => "count",
        }
    }
}

/// A sheet as uploaded and kept until applied.
#[derive(Debug, Clone, FromRow)]
pub struct Sheet {
    pub id: i64,
    pub merchant_id: MerchantId,
    #[sqlx(try_from = "String")]
    pub kind: SheetKind,
    pub file_name: String,
    pub file_sha256: String,
    pub body: String,
    pub status: String,
    pub mode: Option<String>,
    pub applied_lines: i64,
    pub created_by: String,
    pub created_at: i64,
    pub applied_at: Option<i64>,
}

impl Sheet {
    pub fn applied(&self) -> bool {
        self.status == "APPLIED"
    }
}

/// A line that would be booked, and what it would do.
#[derive(Debug, Clone, Serialize)]
pub struct GoodLine {
    pub line: u64,
    pub sku: String,
    pub sku_id: i64,
    pub sku_name: String,
    pub warehouse: String,
    pub warehouse_name: String,
    pub qty: i64,
    /// Counts: on hand now, and the difference the count books.
    pub on_hand: i64,
    pub diff: i64,
    pub reason_code: String,
    pub note: String,
}

/// A line that cannot be booked, with every reason.
#[derive(Debug, Clone, Serialize)]
pub struct BadLine {
    pub line: u64,
    /// The line as it reads in the file (cut at 200 characters).
    pub text: String,
    /// Stable codes (`unknown_sku`, `invalid_qty`, …), one per problem.
    pub codes: Vec<String>,
    pub messages: Vec<String>,
}

/// A sheet read against the catalog and the stock as they are now.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Preview {
    pub good: Vec<GoodLine>,
    pub bad: Vec<BadLine>,
    /// Lines skipped: nothing on them, or (a count sheet) no quantity counted.
    pub empty: u64,
    /// A file-level problem (no header, a missing column): nothing can be read.
    pub unreadable: Option<String>,
    /// The import that already applied these bytes, if any.
    pub already_applied: Option<i64>,
}

/// The bytes as text: UTF-8 (without its byte-order mark), else GB18030.
pub fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => encoding_rs::GB18030.decode(bytes).0.into_owned(),
    }
}

/// Keeps an uploaded sheet for preview. Refuses a file too large, with too many lines, or that is
/// not text.
pub async fn upload(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    kind: SheetKind,
    file_name: &str,
    bytes: &[u8],
) -> DomainResult<i64> {
    if bytes.len() > MAX_BYTES {
        return Err(DomainError::field(
            "file",
            "file_too_large",
            messages::sheet_too_large(MAX_BYTES / 1024 / 1024),
        ));
    }
    let body = decode(bytes);
    if body.trim().is_empty() {
        return Err(DomainError::field(
            "file",
            "required",
            messages::sheet_empty(),
        ));
    }
    if body.lines().count() > MAX_LINES + 1 {
        return Err(DomainError::field(
            "file",
            "too_many_lines",
            messages::sheet_too_many_lines(MAX_LINES),
        ));
    }
    let sha = hex::encode(Sha256::digest(bytes));
    let name: String = file_name
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO stock_imports (merchant_id, kind, file_name, file_sha256, body, status, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, 'PREVIEW', $6, $7) RETURNING id",
    )
    .bind(merchant_id)
    .bind(kind.as_str())
    .bind(&name)
    .bind(&sha)
    .bind(&body)
    .bind(&actor.label)
    .bind(db.now_ms())
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

pub async fn get(db: &Db, merchant_id: MerchantId, id: i64) -> DomainResult<Sheet> {
    sqlx::query_as(
        "SELECT id, merchant_id, kind, file_name, file_sha256, body, status, mode, applied_lines, created_by,
            created_at, applied_at
         FROM stock_imports WHERE id = $1 AND merchant_id = $2",
    )
    .bind(id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("stock sheet"))
}

/// The merchant's latest sheets, newest first.
pub async fn recent(db: &Db, merchant_id: MerchantId, limit: i64) -> DomainResult<Vec<Sheet>> {
    Ok(sqlx::query_as(
        "SELECT id, merchant_id, kind, file_name, file_sha256, '' AS body, status, mode, applied_lines, created_by,
            created_at, applied_at
         FROM stock_imports WHERE merchant_id = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(merchant_id)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// Which column of the header holds what.
struct Columns {
    sku: usize,
    warehouse: usize,
    qty: usize,
    reason_code: Option<usize>,
    note: Option<usize>,
}

fn columns(header: &csv::StringRecord) -> Result<Columns, String> {
    let find = |names: &[&str]| {
        header.iter().position(|h| {
            let h = h.trim().trim_start_matches('\u{feff}').to_lowercase();
            names.iter().any(|n| h == *n)
        })
    };
    let sku = find(&["sku", "sku_code", "code", "sku编码", "sku 编码", "编码"]);
    let warehouse = find(&["warehouse", "仓库"]);
    let qty = find(&["qty", "quantity", "counted", "数量", "盘点数"]);
    let missing: Vec<&str> = [("sku", sku), ("warehouse", warehouse), ("qty", qty)]
        .iter()
        .filter(|(_, c)| c.is_none())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        return Err(messages::sheet_missing_columns(&missing.join(", ")));
    }
    Ok(Columns {
        sku: sku.unwrap_or(0),
        warehouse: warehouse.unwrap_or(0),
        qty: qty.unwrap_or(0),
        reason_code: find(&["reason_code", "原因代码", "原因"]),
        note: find(&["note", "reason", "备注"]),
    })
}

/// One line of the sheet as the adjustment it asks for.
struct Asked {
    line: u64,
    text: String,
    input: Option<AdjustInput>,
    errors: Vec<FieldError>,
}

/// Reads the sheet's lines into adjustments, with the problems only the sheet can see (a
/// quantity that is not a number, a count of the same place twice).
fn read(sheet: &Sheet) -> Result<(Vec<Asked>, u64), String> {
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(sheet.body.as_bytes());
    let cols = columns(
        &rd.headers()
            .map_err(|_| messages::sheet_no_header())?
            .clone(),
    )?;
    let kind = sheet.kind;
    let mut out = Vec::new();
    // The reader skips blank lines without counting them: count them here, and number lines by
    // the newlines before each record, as an editor shows them.
    let mut empty = sheet
        .body
        .lines()
        .skip(1)
        .filter(|l| l.trim().is_empty())
        .count() as u64;
    let body = sheet.body.as_bytes();
    let physical: Vec<&str> = sheet.body.lines().collect();
    let line_at = |byte: u64| {
        // With CRLF endings (as Excel saves) a record's position may fall between the CR and
        // the LF that end the line before: step over line endings first.
        let mut at = (byte as usize).min(body.len());
        while body.get(at).is_some_and(|b| *b == b'\r' || *b == b'\n') {
            at += 1;
        }
        let mut n = 1 + memchr::memchr_iter(b'\n', &body[..at]).count();
        // A record's position is where the reader started looking, before the blank lines it
        // skipped.
        while physical.get(n - 1).is_some_and(|l| l.trim().is_empty()) {
            n += 1;
        }
        n as u64
    };
    let mut counted: HashMap<(String, String), u64> = HashMap::new();
    for rec in rd.records() {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| line_at(p.byte()));
                out.push(Asked {
                    line,
                    text: String::new(),
                    input: None,
                    errors: vec![FieldError::new(
                        "line",
                        "unreadable_line",
                        messages::sheet_bad_line(),
                    )],
                });
                continue;
            }
        };
        let line = rec.position().map_or(0, |p| line_at(p.byte()));
        if rec.iter().all(|c| c.trim().is_empty()) {
            empty += 1;
            continue;
        }
        let cell = |i: usize| rec.get(i).unwrap_or("").trim().to_string();
        // A count sheet lists every SKU; one left blank was not counted.
        if kind == SheetKind::Counts && cell(cols.qty).is_empty() {
            empty += 1;
            continue;
        }
        let text: String = rec
            .iter()
            .collect::<Vec<_>>()
            .join(",")
            .chars()
            .take(200)
            .collect();
        let mut errors = Vec::new();
        if rec.iter().any(|c| c.chars().any(char::is_control)) {
            errors.push(FieldError::new(
                "line",
                "invalid_characters",
                messages::sheet_bad_characters(),
            ));
        }
        let raw_qty = cell(cols.qty);
        let qty = match kind {
            SheetKind::Counts => stock::typed_qty(AdjustKind::Count.as_str(), &raw_qty),
            SheetKind::Receipts => stock::qty_text("qty", &raw_qty),
        };
        let qty = match qty {
            Ok(q) => q,
            Err(e) => {
                errors.push(e);
                0
            }
        };
        let (sku, warehouse) = (cell(cols.sku), cell(cols.warehouse));
        if kind == SheetKind::Counts {
            // Codes and slugs are matched as written (case counts), as the catalog does.
            let key = (sku.clone(), warehouse.clone());
            if let Some(first) = counted.get(&key) {
                errors.push(FieldError::new(
                    "sku",
                    "counted_twice",
                    messages::sheet_counted_twice(*first),
                ));
            } else {
                counted.insert(key, line);
            }
        }
        let reason_code = cols
            .reason_code
            .map(cell)
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| kind.default_reason().to_string());
        out.push(Asked {
            line,
            text,
            input: Some(AdjustInput {
                sku,
                warehouse,
                kind: kind.adjust_kind().as_str().to_string(),
                qty,
                reason: cols.note.map(cell).unwrap_or_default(),
                reason_code,
                ..Default::default()
            }),
            errors,
        });
    }
    Ok((out, empty))
}

/// Each line checked against the catalog, the warehouses and the stock as they are now.
async fn check_lines(
    db: &Db,
    sheet: &Sheet,
) -> DomainResult<(Preview, Vec<(u64, stock::Checked)>)> {
    let mut preview = Preview {
        already_applied: applied_before(db, sheet).await?,
        ..Default::default()
    };
    let (asked, empty) = match read(sheet) {
        Ok(r) => r,
        Err(message) => {
            preview.unreadable = Some(message);
            return Ok((preview, Vec::new()));
        }
    };
    preview.empty = empty;
    let mut checked = Vec::new();
    for a in asked {
        let mut errors = a.errors;
        let mut ok = None;
        if let Some(input) = &a.input {
            match stock::check(db, sheet.merchant_id, input).await {
                Ok(c) => ok = Some(c),
                Err(DomainError::Invalid(mut more)) => {
                    // A quantity the sheet already refused is not refused twice.
                    more.retain(|e| !(e.field == "qty" && errors.iter().any(|x| x.field == "qty")));
                    errors.append(&mut more);
                }
                Err(e) => return Err(e),
            }
        }
        match ok {
            Some(c) if errors.is_empty() => {
                let input = a.input.as_ref().expect("checked lines have an input");
                let on_hand = stock::buckets(db, c.sku().id, c.warehouse().id)
                    .await?
                    .on_hand();
                preview.good.push(GoodLine {
                    line: a.line,
                    sku: c.sku().code.clone(),
                    sku_id: c.sku().id,
                    sku_name: c.sku().name.clone(),
                    warehouse: c.warehouse().slug.clone(),
                    warehouse_name: c.warehouse().name.clone(),
                    qty: input.qty,
                    on_hand,
                    diff: match sheet.kind {
                        SheetKind::Counts => input.qty - on_hand,
                        SheetKind::Receipts => input.qty,
                    },
                    reason_code: input.reason_code.clone(),
                    note: input.reason.clone(),
                });
                checked.push((a.line, c));
            }
            _ => preview.bad.push(BadLine {
                line: a.line,
                text: a.text,
                codes: errors.iter().map(|e| e.code.to_string()).collect(),
                messages: errors.iter().map(|e| e.message.clone()).collect(),
            }),
        }
    }
    Ok((preview, checked))
}

/// What applying the sheet now would do.
pub async fn preview(db: &Db, sheet: &Sheet) -> DomainResult<Preview> {
    Ok(check_lines(db, sheet).await?.0)
}

async fn applied_before(db: &Db, sheet: &Sheet) -> DomainResult<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM stock_imports WHERE merchant_id = $1 AND kind = $2 AND file_sha256 = $3 AND status = 'APPLIED'",
    )
    .bind(sheet.merchant_id)
    .bind(sheet.kind.as_str())
    .bind(&sheet.file_sha256)
    .fetch_optional(&db.pool)
    .await?)
}

/// What applying did.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub lines: i64,
    /// Valid-only: lines refused when they were booked (the stock moved since the preview).
    pub refused: Vec<BadLine>,
}

/// Applies a previewed sheet. All-or-nothing: every line in one transaction, refused when any
/// line is bad (`sheet_has_bad_lines`) or when one fails as it is booked (nothing is applied).
/// Valid-only: each good line in its own transaction. Either way the sheet is marked applied in
/// a transaction of its own first-come (`sheet_already_applied` for a second time, or the same
/// file applied through another upload).
pub async fn apply(
    db: &Db,
    actor: &Actor,
    sheet: &Sheet,
    mode: ApplyMode,
) -> DomainResult<Applied> {
    if sheet.applied() {
        return Err(already(sheet.id));
    }
    let (preview, checked) = check_lines(db, sheet).await?;
    if let Some(first) = preview.already_applied {
        return Err(already(first));
    }
    if let Some(m) = preview.unreadable {
        return Err(DomainError::field("file", "unreadable_sheet", m));
    }
    if checked.is_empty() {
        return Err(DomainError::conflict(
            "sheet_has_no_good_lines",
            messages::sheet_no_good_lines(),
            serde_json::json!({ "bad": preview.bad.len() }),
        ));
    }
    let merchant_id = sheet.merchant_id;
    let mut touched = Vec::new();
    let mut refused = Vec::new();
    let lines = match mode {
        ApplyMode::AllOrNothing => {
            if !preview.bad.is_empty() {
                return Err(DomainError::conflict(
                    "sheet_has_bad_lines",
                    messages::sheet_has_bad_lines(preview.bad.len()),
                    serde_json::json!({ "bad": preview.bad.len() }),
                ));
            }
            let mut tx = db.begin_write().await?;
            mark_applied(&mut tx, db.now_ms(), sheet, mode, checked.len() as i64).await?;
            for (line, c) in &checked {
                if let Err(e) = stock::book(&mut tx, db.now_ms(), actor, merchant_id, c).await {
                    tx.rollback().await?;
                    return Err(DomainError::conflict(
                        "sheet_line_refused",
                        messages::sheet_line_refused(*line, &e.message()),
                        serde_json::json!({ "line": line, "error": e.code() }),
                    ));
                }
                touched.push(c.sku().id);
            }
            tx.commit().await?;
            checked.len() as i64
        }
        ApplyMode::ValidOnly => {
            // Claimed first, so that two clicks cannot both apply it.
            let mut tx = db.begin_write().await?;
            mark_applied(&mut tx, db.now_ms(), sheet, mode, 0).await?;
            tx.commit().await?;
            let mut done = 0;
            for (line, c) in &checked {
                let mut tx = db.begin_write().await?;
                match stock::book(&mut tx, db.now_ms(), actor, merchant_id, c).await {
                    Ok(()) => {
                        // The count of lines applied moves with each line, so that a failure
                        // part-way leaves the sheet saying what it booked.
                        sqlx::query(
                            "UPDATE stock_imports SET applied_lines = applied_lines + 1 WHERE id = $1",
                        )
                        .bind(sheet.id)
                        .execute(&mut *tx)
                        .await?;
                        tx.commit().await?;
                        // Changed outside the gate: Redis reloads it from SQL on its next use.
                        db.forget([Subject::Stock(c.sku().id)]).await;
                        done += 1;
                    }
                    Err(e) => {
                        tx.rollback().await?;
                        refused.push(BadLine {
                            line: *line,
                            text: c.sku().code.clone(),
                            codes: vec![e.code().to_string()],
                            messages: vec![e.message()],
                        });
                    }
                }
            }
            done
        }
    };
    // Changed outside the gate: Redis reloads these SKUs from SQL on their next use.
    db.forget(touched.into_iter().map(Subject::Stock)).await;
    Ok(Applied { lines, refused })
}

fn already(id: i64) -> DomainError {
    DomainError::conflict(
        "sheet_already_applied",
        messages::sheet_already_applied(id),
        serde_json::json!({ "import": id }),
    )
}

/// Marks the sheet applied, once: a second apply of it, or of the same bytes through another
/// upload (the unique index), finds it taken.
async fn mark_applied(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    now: i64,
    sheet: &Sheet,
    mode: ApplyMode,
    lines: i64,
) -> DomainResult<()> {
    let done = sqlx::query(
        "UPDATE stock_imports SET status = 'APPLIED', mode = $1, applied_lines = $2, applied_at = $3
         WHERE id = $4 AND status = 'PREVIEW'",
    )
    .bind(mode.as_str())
    .bind(lines)
    .bind(now)
    .bind(sheet.id)
    .execute(&mut **tx)
    .await;
    match done {
        Ok(r) if r.rows_affected() == 1 => Ok(()),
        Ok(_) => Err(already(sheet.id)),
        // The unique index: the same file was applied through another upload meanwhile.
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(already(sheet.id)),
        Err(e) => Err(e.into()),
    }
}

/// A sheet to fill in: the header, and for counts every goods SKU in every warehouse with its
/// quantity left blank (a line left blank is not counted).
pub async fn template(db: &Db, merchant_id: MerchantId, kind: SheetKind) -> DomainResult<String> {
    use crate::domain::kernel::export::{Cell, Csv};
    let mut out = Csv::new(&["sku", "name", "warehouse", "qty", "reason_code", "note"]);
    if kind == SheetKind::Counts {
        let rows: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT s.code, s.name, w.slug FROM skus s CROSS JOIN warehouses w
             WHERE s.merchant_id = $1 AND w.merchant_id = $1 AND s.unit_type = 'quantity' AND s.stock_policy = 'tracked'
             ORDER BY s.code, w.priority DESC, w.id",
        )
        .bind(merchant_id)
        .fetch_all(&db.pool)
        .await?;
        for (code, name, warehouse) in &rows {
            out.row(&[
                Cell::from(code),
                Cell::from(name),
                Cell::from(warehouse),
                Cell::Text(""),
                Cell::Text("count"),
                Cell::Text(""),
            ]);
        }
    }
    Ok(format!("\u{feff}{}", out.finish()))
}
