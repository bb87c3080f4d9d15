//! Importing codes: a file (one code per line, or CSV with a `code` column and optional
//! `expires_at`) or a generated set, streamed through a parser thread into batched inserts. Codes
//! of a batch that is still CREATING are never sold (see `codes::NOT_IMPORTING`) and go on sale
//! together when the batch commits; a batch that dies half-way is failed and its codes deleted. Memory stays flat in the file size except for the
//! duplicate index (about 40 bytes per code).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Arc;

use rand::Rng;
use tokio::sync::mpsc;

use crate::domain::catalog::Sku;
use crate::domain::codes::{self, normalize, Batch, CODE_MAX_CHARS};
use crate::domain::kernel::code_keys::CodeKeys;
use crate::domain::kernel::error::DomainResult;
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::infra::db::{Db, Dialect};
use crate::messages;

pub const MAX_LINES: u64 = 1_000_000;
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
pub const GENERATE_MAX: i64 = 1_000_000;
const CHUNK: usize = 500;
/// Codes imported at once past which PostgreSQL's statistics of `codes` are refreshed.
const ANALYZE_AFTER: i64 = 10_000;
/// Longest line kept in memory; anything longer is reported without being stored.
const LINE_CAP: usize = 4096;

crate::text_enum! {
    /// The characters generated codes are made of.
    pub enum Alphabet { Unambiguous = "unambiguous", Digits = "digits", Letters = "letters" }
}

impl Alphabet {
    pub fn chars(self) -> &'static str {
        match self {
            // No 0/O, 1/I/L: a code read aloud or typed from paper is not misread.
            Alphabet::Unambiguous => "23456789ABCDEFGHJKMNPQRSTUVWXYZ",
            Alphabet::Digits => "0123456789",
            Alphabet::Letters => "ABCDEFGHJKMNPQRSTUVWXYZ",
        }
    }
}

crate::text_enum! {
    /// Which lines of an uploaded file a batch keeps: every valid one (`valid`), or all of them
    /// or none (`all`: one bad line refuses the file).
    pub enum ImportMode { Valid = "valid", All = "all" }
}

pub enum Source {
    Text(PathBuf),
    Csv(PathBuf),
    Generated {
        count: u64,
        length: usize,
        alphabet: &'static str,
    },
}

struct Item {
    line: i64,
    progress: u64,
    code: Result<(String, Option<i64>), String>,
    /// The code was typed with spaces inside it, stored without them.
    normalised: bool,
}

impl Item {
    fn of(
        line: i64,
        progress: u64,
        checked: Result<(String, bool), String>,
        expires_at: Option<i64>,
    ) -> Item {
        let normalised = matches!(checked, Ok((_, true)));
        Item {
            line,
            progress,
            code: checked.map(|(c, _)| (c, expires_at)),
            normalised,
        }
    }
}

crate::text_enum! {
    /// The characters a batch allows in its codes (chosen at upload; `any` by default). A code
    /// with another character is refused, its line numbered, with the character's position.
    pub enum Allowed {
        Any = "any",
        /// ASCII letters and digits.
        Alnum = "alnum",
        /// ASCII letters, digits and hyphens.
        AlnumDash = "alnum_dash",
        /// Capital ASCII letters and digits.
        UpperAlnum = "upper_alnum",
        Digits = "digits",
    }
}

impl Allowed {
    pub fn allows(self, c: char) -> bool {
        match self {
            Allowed::Any => true,
            Allowed::Alnum => c.is_ascii_alphanumeric(),
            Allowed::AlnumDash => c.is_ascii_alphanumeric() || c == '-',
            Allowed::UpperAlnum => c.is_ascii_uppercase() || c.is_ascii_digit(),
            Allowed::Digits => c.is_ascii_digit(),
        }
    }

    /// The form's or the API's field (`allowed`): empty is `any`.
    pub fn field(raw: &str) -> Result<Allowed, FieldError> {
        match raw.trim() {
            "" => Ok(Allowed::Any),
            v => Allowed::parse(v).ok_or_else(|| {
                FieldError::new("allowed", "invalid_allowed", messages::bad_allowed(v))
            }),
        }
    }
}

#[derive(Debug, Clone)]
pub struct NewBatch {
    pub name: String,
    /// "valid" or "all"
    pub mode: String,
    pub expires_at: Option<i64>,
    pub generated: bool,
    /// File size in bytes, or the number of codes to generate: the progress bar's 100%.
    pub size: i64,
    pub user_id: Option<i64>,
    pub allowed: Allowed,
}

pub fn mode(raw: &str) -> Result<String, FieldError> {
    match raw.trim() {
        "" => Ok(ImportMode::Valid.to_string()),
        other => ImportMode::parse(other)
            .map(|m| m.to_string())
            .ok_or_else(|| {
                FieldError::new("mode", "invalid_mode", messages::bad_import_mode(other))
            }),
    }
}

/// Records a batch in CREATING state; the import itself runs with [`run`].
#[tracing::instrument(skip_all)]
pub async fn create_batch(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    sku: &Sku,
    nb: NewBatch,
) -> DomainResult<Batch> {
    let name = crate::domain::kernel::validate::name(
        "name",
        &nb.name,
        crate::domain::kernel::validate::NAME_MAX,
    )
    .map_err(|e| DomainError::Invalid(vec![e]))?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO code_batches (merchant_id, sku_id, name, source, mode, status, bytes_total, expires_at, key_version, created_by,
            created_by_user, heartbeat_at, created_at, allowed)
         VALUES ($1, $2, $3, $4, $5, 'CREATING', $6, $7, $8, $9, $10, $11, $11, $12) RETURNING id",
    )
    .bind(sku.merchant_id)
    .bind(sku.id)
    .bind(&name)
    .bind(if nb.generated { "GENERATED" } else { "UPLOAD" })
    .bind(&nb.mode)
    .bind(nb.size)
    .bind(nb.expires_at)
    .bind(keys.current_version())
    .bind(&actor.label)
    .bind(nb.user_id)
    .bind(now)
    .bind(nb.allowed.as_str())
    .fetch_one(&mut *tx)
    .await?;
    let verb = if nb.generated {
        "batch.generate"
    } else {
        "batch.upload"
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(sku.merchant_id),
        verb,
        &format!("batch:{id}"),
        &name,
    )
    .await?;
    // Verdicts show the SKU's newest batch and how far it got: its readers (the kept catalogs,
    // webhooks) learn of it here, and of its end from the event the import writes then.
    crate::domain::trail::events::record_for_batch(
        &mut tx,
        db.now_ms(),
        id,
        crate::domain::trail::events::EventType::CodeBatchCreated,
        serde_json::json!({"before": null, "after": "CREATING",
            "source": if nb.generated { "GENERATED" } else { "UPLOAD" }}),
    )
    .await?;
    tx.commit().await?;
    codes::batch(db, Scope::Merchant(sku.merchant_id), id).await
}

/// Why a line was refused or an import failed, as it is stored (`code_import_errors.reason`,
/// `code_batches.failure`): a short form in no language ("too_long 130 128"). Imports run in the
/// background, where there is no reader yet; the pages, the CSV of errors and the API say it in
/// their reader's language with [`say`]. Rows stored before hold an English sentence, shown as
/// they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportWhy {
    InvalidCharacters,
    TooLong {
        chars: usize,
        limit: usize,
    },
    TooLongUnread {
        cap: usize,
    },
    NotUtf8,
    Empty,
    BadExpiry,
    Expired,
    BadCsv,
    /// The same code as an earlier line of the file.
    Duplicate {
        first: i64,
    },
    /// Already imported by another batch (0: a batch since removed).
    AlreadyImported {
        batch: i64,
    },
    CsvNeedsCodeColumn,
    /// The file held no codes.
    NoCodes,
    NothingValid,
    AllOrNothing {
        rejected: i64,
    },
    /// The process stopped before the import finished.
    Abandoned,
    /// The character at this position (1-based, in the code as stored) is outside the batch's
    /// rule. The character itself is not kept: it is part of a code.
    NotAllowed {
        at: usize,
        rule: Allowed,
    },
}

impl ImportWhy {
    /// The stored form.
    pub fn stored(self) -> String {
        use ImportWhy::*;
        match self {
            InvalidCharacters => "invalid_characters".into(),
            TooLong { chars, limit } => format!("too_long {chars} {limit}"),
            TooLongUnread { cap } => format!("too_long_unread {cap}"),
            NotUtf8 => "not_utf8".into(),
            Empty => "empty".into(),
            BadExpiry => "bad_expiry".into(),
            Expired => "expired".into(),
            BadCsv => "bad_csv".into(),
            Duplicate { first } => format!("duplicate {first}"),
            AlreadyImported { batch } => format!("already_imported {batch}"),
            CsvNeedsCodeColumn => "csv_needs_code_column".into(),
            NoCodes => "no_codes".into(),
            NothingValid => "nothing_valid".into(),
            AllOrNothing { rejected } => format!("all_or_nothing {rejected}"),
            Abandoned => "abandoned".into(),
            NotAllowed { at, rule } => format!("not_allowed {at} {rule}"),
        }
    }

    /// Back from the stored form; None for anything else (an English sentence of an older row).
    pub fn parse(stored: &str) -> Option<ImportWhy> {
        use ImportWhy::*;
        let words: Vec<&str> = stored.split_whitespace().collect();
        let n = |w: &str| w.parse::<i64>().ok();
        let u = |w: &str| w.parse::<usize>().ok();
        Some(match words.as_slice() {
            ["invalid_characters"] => InvalidCharacters,
            ["too_long", chars, limit] => TooLong {
                chars: u(chars)?,
                limit: u(limit)?,
            },
            ["too_long_unread", cap] => TooLongUnread { cap: u(cap)? },
            ["not_utf8"] => NotUtf8,
            ["empty"] => Empty,
            ["bad_expiry"] => BadExpiry,
            ["expired"] => Expired,
            ["bad_csv"] => BadCsv,
            ["duplicate", first] => Duplicate { first: n(first)? },
            ["already_imported", batch] => AlreadyImported { batch: n(batch)? },
            ["csv_needs_code_column"] => CsvNeedsCodeColumn,
            ["no_codes"] => NoCodes,
            ["nothing_valid"] => NothingValid,
            ["all_or_nothing", rejected] => AllOrNothing {
                rejected: n(rejected)?,
            },
            ["abandoned"] => Abandoned,
            ["not_allowed", at, rule] => NotAllowed {
                at: u(at)?,
                rule: Allowed::parse(rule)?,
            },
            _ => return None,
        })
    }

    /// The sentence, in the current language.
    pub fn message(self) -> String {
        use ImportWhy::*;
        match self {
            InvalidCharacters => messages::line_invalid_characters(),
            TooLong { chars, limit } => messages::line_too_long(chars, limit),
            TooLongUnread { cap } => messages::line_too_long_unread(cap),
            NotUtf8 => messages::line_not_utf8(),
            Empty => messages::line_empty(),
            BadExpiry => messages::line_bad_expiry(),
            Expired => messages::line_expired(),
            BadCsv => messages::line_bad_csv(),
            Duplicate { first } => messages::line_duplicate(first),
            AlreadyImported { batch } => messages::line_already_imported(batch),
            CsvNeedsCodeColumn => messages::csv_needs_code_column(),
            NoCodes => messages::import_empty(),
            NothingValid => messages::import_nothing_valid(),
            AllOrNothing { rejected } => messages::import_all_or_nothing(rejected),
            Abandoned => messages::import_abandoned(),
            NotAllowed { at, rule } => messages::line_not_allowed(at, rule.as_str()),
        }
    }
}

/// A stored reason or failure as the current reader reads it.
pub fn say(stored: &str) -> String {
    ImportWhy::parse(stored).map_or_else(|| stored.to_string(), ImportWhy::message)
}

/// A line's code as stored (without its spaces), and whether spaces were taken out of it; or why
/// the line is refused.
fn check_code(raw: &str, allowed: Allowed) -> Result<(String, bool), String> {
    let code = raw.trim();
    if code.chars().any(|c| c.is_control()) {
        return Err(ImportWhy::InvalidCharacters.stored());
    }
    let n = normalize(code);
    let chars = n.chars().count();
    if chars > CODE_MAX_CHARS {
        return Err(ImportWhy::TooLong {
            chars,
            limit: CODE_MAX_CHARS,
        }
        .stored());
    }
    if let Some(at) = n.chars().position(|c| !allowed.allows(c)) {
        return Err(ImportWhy::NotAllowed {
            at: at + 1,
            rule: allowed,
        }
        .stored());
    }
    let normalised = n.len() != code.len();
    Ok((n, normalised))
}

fn parse_expiry(raw: &str, now: i64) -> Result<Option<i64>, String> {
    let v = raw.trim();
    if v.is_empty() {
        return Ok(None);
    }
    let at = chrono::DateTime::parse_from_rfc3339(v)
        .map(|t| t.timestamp_millis())
        .or_else(|_| {
            // A date means "valid through that day" (UTC).
            chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d").map(|d| {
                (d + chrono::Duration::days(1))
                    .and_hms_opt(0, 0, 0)
                    .map(|t| t.and_utc().timestamp_millis())
                    .unwrap_or(0)
            })
        })
        .map_err(|_| ImportWhy::BadExpiry.stored())?;
    if at <= now {
        return Err(ImportWhy::Expired.stored());
    }
    Ok(Some(at))
}

/// Reads one line of at most LINE_CAP bytes into `buf`; longer lines are consumed and flagged.
fn read_line_bounded<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> std::io::Result<(usize, bool)> {
    let mut total = 0;
    let mut too_long = false;
    loop {
        let available = r.fill_buf()?;
        if available.is_empty() {
            return Ok((total, too_long));
        }
        let (used, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if buf.len() + used <= LINE_CAP {
            buf.extend_from_slice(&available[..used]);
        } else {
            too_long = true;
        }
        r.consume(used);
        total += used;
        if done {
            return Ok((total, too_long));
        }
    }
}

fn send(tx: &mpsc::Sender<Vec<Item>>, chunk: &mut Vec<Item>) -> bool {
    if chunk.is_empty() {
        return true;
    }
    tx.blocking_send(std::mem::take(chunk)).is_ok()
}

/// Parses a file of one code a line; returns how many blank lines it skipped.
fn parse_text(
    path: &PathBuf,
    allowed: Allowed,
    tx: &mpsc::Sender<Vec<Item>>,
) -> Result<i64, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut r = BufReader::with_capacity(256 * 1024, file);
    let mut buf = Vec::with_capacity(256);
    let (mut line, mut progress, mut blank) = (0i64, 0u64, 0i64);
    let mut chunk = Vec::with_capacity(CHUNK);
    loop {
        buf.clear();
        let (n, too_long) = read_line_bounded(&mut r, &mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        line += 1;
        progress += n as u64;
        if line == 1 && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
            buf.drain(..3);
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        let checked = if too_long {
            Err(ImportWhy::TooLongUnread { cap: LINE_CAP }.stored())
        } else {
            match std::str::from_utf8(&buf) {
                Err(_) => Err(ImportWhy::NotUtf8.stored()),
                Ok(s) if s.trim().is_empty() => {
                    blank += 1;
                    continue;
                }
                Ok(s) => check_code(s, allowed),
            }
        };
        chunk.push(Item::of(line, progress, checked, None));
        if chunk.len() >= CHUNK && !send(tx, &mut chunk) {
            return Ok(blank);
        }
    }
    send(tx, &mut chunk);
    Ok(blank)
}

/// Parses a CSV file with a `code` column; returns how many blank lines it skipped.
fn parse_csv(
    path: &PathBuf,
    allowed: Allowed,
    tx: &mpsc::Sender<Vec<Item>>,
    now: i64,
) -> Result<i64, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(BufReader::with_capacity(256 * 1024, file));
    let headers = reader
        .byte_headers()
        .map_err(|_| ImportWhy::CsvNeedsCodeColumn.stored())?
        .clone();
    let column = |name: &str| {
        headers.iter().position(|h| {
            let h = String::from_utf8_lossy(h);
            h.trim_start_matches('\u{feff}')
                .trim()
                .eq_ignore_ascii_case(name)
        })
    };
    let code_col = column("code").ok_or_else(|| ImportWhy::CsvNeedsCodeColumn.stored())?;
    let expiry_col = column("expires_at");
    let mut chunk = Vec::with_capacity(CHUNK);
    let mut record = csv::ByteRecord::new();
    let mut last_error_at = 0u64;
    let mut blank = 0i64;
    loop {
        let pos = reader.position().clone();
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map(|p| p.line()).unwrap_or(pos.line()) as i64;
                let progress = reader.position().byte();
                if record.iter().all(|f| f.iter().all(u8::is_ascii_whitespace)) {
                    blank += 1;
                    continue;
                }
                let cell = record.get(code_col).unwrap_or(b"");
                let checked = match std::str::from_utf8(cell) {
                    Err(_) => Err(ImportWhy::NotUtf8.stored()),
                    Ok(s) if s.trim().is_empty() => Err(ImportWhy::Empty.stored()),
                    Ok(s) => check_code(s, allowed),
                };
                let expiry = match expiry_col.and_then(|i| record.get(i)) {
                    Some(raw) => parse_expiry(&String::from_utf8_lossy(raw), now),
                    None => Ok(None),
                };
                // The code's own refusal first, then its expiry's.
                let (checked, expiry) = match (checked, expiry) {
                    (Ok(c), Ok(e)) => (Ok(c), e),
                    (Err(e), _) | (_, Err(e)) => (Err(e), None),
                };
                chunk.push(Item::of(line, progress, checked, expiry));
            }
            Err(e) => {
                let at = e.position().map(|p| p.byte()).unwrap_or(pos.byte());
                if at == last_error_at && at != 0 {
                    break;
                }
                last_error_at = at;
                let line = e.position().map(|p| p.line()).unwrap_or(pos.line()) as i64;
                chunk.push(Item::of(line, at, Err(ImportWhy::BadCsv.stored()), None));
            }
        }
        if chunk.len() >= CHUNK && !send(tx, &mut chunk) {
            return Ok(blank);
        }
    }
    send(tx, &mut chunk);
    Ok(blank)
}

fn generate(
    count: u64,
    length: usize,
    alphabet: &str,
    tx: &mpsc::Sender<Vec<Item>>,
) -> Result<i64, String> {
    let chars: Vec<char> = alphabet.chars().collect();
    let mut rng = rand::rng();
    let mut seen = HashSet::with_capacity(count as usize);
    let mut chunk = Vec::with_capacity(CHUNK);
    let mut line = 0i64;
    while (line as u64) < count {
        let code: String = (0..length)
            .map(|_| chars[rng.random_range(0..chars.len())])
            .collect();
        if !seen.insert(code.clone()) {
            continue;
        }
        line += 1;
        chunk.push(Item::of(line, line as u64, Ok((code, false)), None));
        if chunk.len() >= CHUNK && !send(tx, &mut chunk) {
            return Ok(0);
        }
    }
    send(tx, &mut chunk);
    Ok(0)
}

struct Row {
    line: i64,
    hash: [u8; 16],
    ciphertext: Vec<u8>,
    nonce: Vec<u8>,
    expires_at: Option<i64>,
    /// Typed with spaces inside, stored without them (noted with its line when stored).
    normalised: bool,
}

/// Runs an import to its end. Never panics the caller: failures end as a FAILED batch with the
/// reason recorded. The source file is removed afterwards.
#[tracing::instrument(skip_all)]
pub async fn run(db: Db, keys: Arc<CodeKeys>, batch: Batch, source: Source) {
    // Removes the file when the import ends, however it ends (a panic unwinds through it too).
    let _spool = match &source {
        Source::Text(p) | Source::Csv(p) => Some(Spool::adopt(p.clone())),
        Source::Generated { .. } => None,
    };
    let result = import(&db, &keys, &batch, source).await;
    if let Err(e) = result {
        tracing::warn!(batch = batch.id, error = %e, "code import failed");
        let failure = match &e {
            DomainError::Invalid(v) => v.first().map(|f| f.message.clone()).unwrap_or_default(),
            other => other.message(),
        };
        if let Err(e) = finish_failed(&db, batch.id, &failure).await {
            // The batch stays CREATING until the sweep of abandoned imports fails it.
            tracing::warn!(batch = batch.id, error = %e, "a failed code import could not be marked failed");
        }
    }
}

async fn finish_failed(db: &Db, batch_id: i64, failure: &str) -> DomainResult<()> {
    let mut tx = db.begin_write().await?;
    sqlx::query("DELETE FROM codes WHERE batch_id = $1")
        .bind(batch_id)
        .execute(&mut *tx)
        .await?;
    // Nothing of it was stored: nor were its codes stored without their spaces.
    sqlx::query("DELETE FROM code_import_notes WHERE batch_id = $1")
        .bind(batch_id)
        .execute(&mut *tx)
        .await?;
    let failed = sqlx::query("UPDATE code_batches SET status = 'FAILED', failure = $1, imported = 0, normalised = 0, finished_at = $2 WHERE id = $3 AND status = 'CREATING'")
        .bind(failure)
        .bind(db.now_ms())
        .bind(batch_id)
        .execute(&mut *tx)
        .await?;
    if failed.rows_affected() == 1 {
        crate::domain::trail::events::record_for_batch(
            &mut tx,
            db.now_ms(),
            batch_id,
            crate::domain::trail::events::EventType::CodeBatchFailed,
            serde_json::json!({"before": "CREATING", "after": "FAILED", "failure": say(failure)}),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

async fn import(db: &Db, keys: &CodeKeys, batch: &Batch, source: Source) -> DomainResult<()> {
    let (tx, mut rx) = mpsc::channel::<Vec<Item>>(8);
    let allowed = Allowed::parse(&batch.allowed).unwrap_or(Allowed::Any);
    let now = db.now_ms();
    let parser = tokio::task::spawn_blocking(move || match source {
        Source::Text(p) => parse_text(&p, allowed, &tx),
        Source::Csv(p) => parse_csv(&p, allowed, &tx, now),
        Source::Generated {
            count,
            length,
            alphabet,
        } => generate(count, length, alphabet, &tx),
    });
    let started = std::time::Instant::now();
    let merchant = batch.merchant_id;
    // One connection for the whole import. On SQLite it gets a larger page cache: the unique
    // index on random hashes is what an import spends its time on once it outgrows the default.
    let mut conn = db.pool.acquire().await?;
    if db.dialect == Dialect::Sqlite {
        sqlx::query("PRAGMA cache_size = -32768")
            .execute(&mut *conn)
            .await?;
    }
    let (mut read, mut imported, mut rejected, mut normalised) = (0i64, 0i64, 0i64, 0i64);
    while let Some(items) = rx.recv().await {
        let mut rows = Vec::with_capacity(items.len());
        let mut errors: Vec<(i64, String)> = Vec::new();
        let mut progress = 0;
        for item in items {
            read += 1;
            progress = item.progress;
            match item.code {
                Err(reason) => errors.push((item.line, reason)),
                Ok((code, expires_at)) => {
                    // Duplicates, within the file or against earlier batches, are found by the
                    // unique index itself (no in-memory index that grows with the file).
                    let hash = keys.hash(merchant, &code);
                    let (ciphertext, nonce) = keys
                        .encrypt(merchant, &code)
                        .map_err(|e| DomainError::Internal(e.to_string()))?;
                    rows.push(Row {
                        line: item.line,
                        hash,
                        ciphertext,
                        nonce,
                        expires_at: expires_at.or(batch.expires_at),
                        normalised: item.normalised,
                    });
                }
            }
        }
        let mut tally = Tally {
            read,
            progress: progress as i64,
            imported,
            rejected,
            normalised,
        };
        insert_rows(db, &mut conn, (keys, batch), (&rows, &errors), &mut tally).await?;
        (imported, rejected, normalised) = (tally.imported, tally.rejected, tally.normalised);
    }
    if db.dialect == Dialect::Sqlite {
        sqlx::query("PRAGMA cache_size = -2000")
            .execute(&mut *conn)
            .await?;
    }
    drop(conn);
    tracing::info!(
        batch = batch.id,
        read,
        imported,
        rejected,
        secs = started.elapsed().as_secs_f64(),
        "code import: lines stored"
    );
    let parsed = parser
        .await
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    let blank = match parsed {
        Err(fatal) => return Err(DomainError::field("file", "unreadable", fatal)),
        Ok(blank) => blank,
    };
    sqlx::query("UPDATE code_batches SET blank_lines = $1 WHERE id = $2")
        .bind(blank)
        .bind(batch.id)
        .execute(&db.pool)
        .await?;
    finish(db, batch, imported, rejected).await
}

/// "(…)" with `n` placeholders numbered from `offset + 1`; with `status_at`, the literal
/// 'AVAILABLE' is inserted after that many values. SQLite gets anonymous "?": sqlx looks every named parameter
/// up with sqlite3_bind_parameter_name, which scans the statement's name list, so a 5,500-parameter
/// insert with "$N" names binds in quadratic time (measured 2.5x slower at 500 rows).
fn row_placeholders(dialect: Dialect, offset: usize, n: usize, status_at: Option<usize>) -> String {
    let mut parts: Vec<String> = (1..=n)
        .map(|i| match dialect {
            Dialect::Sqlite => "?".to_string(),
            Dialect::Postgres => format!("${}", offset + i),
        })
        .collect();
    if let Some(at) = status_at {
        parts.insert(at, "'AVAILABLE'".to_string());
    }
    format!("({})", parts.join(", "))
}

/// How far an import has come: lines read, bytes done, and codes imported and rejected so far.
#[derive(Debug, Default)]
struct Tally {
    read: i64,
    progress: i64,
    imported: i64,
    rejected: i64,
    /// Codes stored without the spaces they were typed with.
    normalised: i64,
}

/// What `code_import_notes.note` says of a line: its code was stored without its spaces.
pub const NOTE_SPACES_REMOVED: &str = "spaces_removed";

/// One chunk of an import: its rows and the errors of its lines, in one transaction with the
/// batch's progress.
async fn insert_rows(
    db: &Db,
    conn: &mut sqlx::AnyConnection,
    (keys, batch): (&CodeKeys, &Batch),
    (rows, errors): (&[Row], &[(i64, String)]),
    tally: &mut Tally,
) -> DomainResult<()> {
    let (read, progress) = (tally.read, tally.progress);
    let (imported, rejected) = (&mut tally.imported, &mut tally.rejected);
    let mut notes: Vec<i64> = Vec::new();
    let now = db.now_ms();
    let mut tx = match db.dialect {
        Dialect::Sqlite => sqlx::Connection::begin_with(conn, "BEGIN IMMEDIATE").await?,
        Dialect::Postgres => sqlx::Connection::begin(conn).await?,
    };
    let mut inserted: HashSet<Vec<u8>> = HashSet::new();
    if !rows.is_empty() {
        let mut sql = String::from(
            "INSERT INTO codes (merchant_id, batch_id, sku_id, line, ciphertext, nonce, key_version, code_hash, status, expires_at, created_at, updated_at) VALUES ",
        );
        for i in 0..rows.len() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&row_placeholders(db.dialect, i * 11, 11, Some(8)));
        }
        sql.push_str(" ON CONFLICT (merchant_id, code_hash) DO NOTHING RETURNING code_hash");
        let mut q = sqlx::query_scalar::<_, Vec<u8>>(&sql);
        for r in rows {
            q = q
                .bind(batch.merchant_id)
                .bind(batch.id)
                .bind(batch.sku_id)
                .bind(r.line)
                .bind(r.ciphertext.clone())
                .bind(r.nonce.clone())
                .bind(keys.current_version())
                .bind(r.hash.to_vec())
                .bind(r.expires_at)
                .bind(now)
                .bind(now);
        }
        inserted = q.fetch_all(&mut *tx).await?.into_iter().collect();
    }
    let mut all_errors: Vec<(i64, String)> = errors.to_vec();
    // A row was stored when its hash came back and it is the first row with that hash here.
    let mut first_seen: HashSet<&[u8]> = HashSet::new();
    let mut stored = 0i64;
    for r in rows {
        if inserted.contains(r.hash.as_slice()) && first_seen.insert(r.hash.as_slice()) {
            stored += 1;
            if r.normalised {
                notes.push(r.line);
            }
            continue;
        }
        let other: Option<(i64, i64)> = sqlx::query_as(
            "SELECT batch_id, line FROM codes WHERE merchant_id = $1 AND code_hash = $2",
        )
        .bind(batch.merchant_id)
        .bind(r.hash.to_vec())
        .fetch_optional(&mut *tx)
        .await?;
        let reason = match other {
            Some((b, line)) if b == batch.id => ImportWhy::Duplicate { first: line },
            Some((b, _)) => ImportWhy::AlreadyImported { batch: b },
            None => ImportWhy::AlreadyImported { batch: 0 },
        };
        all_errors.push((r.line, reason.stored()));
    }
    for chunk in all_errors.chunks(300) {
        let mut sql =
            String::from("INSERT INTO code_import_errors (batch_id, line, reason) VALUES ");
        for i in 0..chunk.len() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&row_placeholders(db.dialect, i * 3, 3, None));
        }
        let mut q = sqlx::query(&sql);
        for (line, reason) in chunk {
            q = q.bind(batch.id).bind(*line).bind(reason.clone());
        }
        q.execute(&mut *tx).await?;
    }
    for chunk in notes.chunks(300) {
        let mut sql = String::from("INSERT INTO code_import_notes (batch_id, line, note) VALUES ");
        for i in 0..chunk.len() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&row_placeholders(db.dialect, i * 3, 3, None));
        }
        let mut q = sqlx::query(&sql);
        for line in chunk {
            q = q.bind(batch.id).bind(*line).bind(NOTE_SPACES_REMOVED);
        }
        q.execute(&mut *tx).await?;
    }
    *imported += stored;
    *rejected += all_errors.len() as i64;
    tally.normalised += notes.len() as i64;
    sqlx::query("UPDATE code_batches SET lines_read = $1, imported = $2, rejected = $3, bytes_done = $4, heartbeat_at = $5, normalised = $7 WHERE id = $6")
        .bind(read)
        .bind(*imported)
        .bind(*rejected)
        .bind(progress)
        .bind(now)
        .bind(batch.id)
        .bind(tally.normalised)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

async fn finish(db: &Db, batch: &Batch, imported: i64, rejected: i64) -> DomainResult<()> {
    if imported == 0 {
        let why = if rejected == 0 {
            ImportWhy::NoCodes
        } else {
            ImportWhy::NothingValid
        };
        return finish_failed(db, batch.id, &why.stored()).await;
    }
    if batch.mode == ImportMode::All.as_str() && rejected > 0 {
        return finish_failed(db, batch.id, &ImportWhy::AllOrNothing { rejected }.stored()).await;
    }
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    // The commit point: the batch leaves CREATING and every code of it goes on sale at once.
    let status = if rejected == 0 { "READY" } else { "PARTIAL" };
    let done = sqlx::query("UPDATE code_batches SET status = $1, bytes_done = bytes_total, finished_at = $2, heartbeat_at = $2 WHERE id = $3 AND status = 'CREATING'")
        .bind(status)
        .bind(now)
        .bind(batch.id)
        .execute(&mut *tx)
        .await?;
    if done.rows_affected() == 1 {
        let ty = if rejected == 0 {
            crate::domain::trail::events::EventType::CodeBatchReady
        } else {
            crate::domain::trail::events::EventType::CodeBatchPartial
        };
        crate::domain::trail::events::record_for_batch(
            &mut tx,
            db.now_ms(),
            batch.id,
            ty,
            serde_json::json!({"before": "CREATING", "after": status, "imported": imported,
                "rejected": rejected}),
        )
        .await?;
    }
    tx.commit().await?;
    // A big import changes what the planner should know of the table: without fresh statistics
    // PostgreSQL plans a batch's page as if it held a few thousand codes (a sort of a million
    // rows). SQLite keeps no statistics unless asked.
    if db.dialect == Dialect::Postgres && imported >= ANALYZE_AFTER {
        if let Err(e) = sqlx::query("ANALYZE codes").execute(&db.pool).await {
            tracing::warn!(error = %e, "analyzing codes after an import failed");
        }
    }
    // New codes are on sale: the pool reloads from SQL on its next use.
    db.forget([crate::infra::counters::Subject::Codes(batch.sku_id)])
        .await;
    tracing::info!(
        batch = batch.id,
        secs = (db.now_ms() - now) as f64 / 1000.0,
        "code import: batch committed"
    );
    Ok(())
}

/// An uploaded file of plaintext codes waiting for its import. Created 0600 in a 0700 folder, and
/// removed when dropped: on every exit path of the request that wrote it (a refusal, an error, a
/// client gone, the request's timeout dropping it half-way) and at the end of the import that
/// takes it over ([`Spool::keep`] hands the file to the import, whose own guard removes it, also
/// if it panics). What a crash leaves behind is swept at start-up and by a job ([`sweep_spool`]).
#[derive(Debug)]
pub struct Spool {
    path: std::path::PathBuf,
    armed: bool,
}

impl Spool {
    /// Takes charge of a spool file another guard handed over.
    pub fn adopt(path: std::path::PathBuf) -> Spool {
        Spool { path, armed: true }
    }
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
    /// Hands the file over (to an import that adopts it); this guard no longer removes it.
    pub fn keep(mut self) -> std::path::PathBuf {
        self.armed = false;
        std::mem::take(&mut self.path)
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Creates a spool file readable by this user only, in a folder only this user can enter.
fn create_private(dest: &std::path::Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        if let Some(dir) = dest.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        opts.mode(0o600);
    }
    #[cfg(not(unix))]
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir)?;
    }
    opts.open(dest)
}

/// Spool files are named `<32 hex digits>.spool`; the sweep removes nothing else, whatever else
/// the folder holds (a misconfigured `--upload-dir data` must not take the database with it).
const SPOOL_EXT: &str = "spool";

/// A new spool file's name.
pub fn spool_name() -> String {
    format!("{}.{SPOOL_EXT}", uuid::Uuid::new_v4().simple())
}

fn is_spool(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.strip_suffix(".spool")
        .is_some_and(|stem| stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Removes spool files older than `older_than` (all of them with `None`, at start-up, when no
/// import of this process can be running). An import still reading a file keeps its open handle.
pub fn sweep_spool(dir: &std::path::Path, older_than: Option<std::time::Duration>) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        if !meta.is_file() || !is_spool(&e.file_name()) {
            continue;
        }
        let old = match older_than {
            None => true,
            Some(limit) => meta
                .modified()
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age >= limit),
        };
        if old && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Streams an upload into a new spool file at `dest`, within the size and line limits. The file
/// is removed unless the returned guard is kept.
pub async fn save_upload<S, E>(
    mut stream: S,
    dest: &std::path::Path,
) -> Result<(Spool, u64), UploadError>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    E: Into<UploadError>,
{
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let owned = dest.to_path_buf();
    let std_file = tokio::task::spawn_blocking(move || create_private(&owned))
        .await
        .map_err(|e| UploadError::Io(e.to_string()))?
        .map_err(|e| UploadError::Io(e.to_string()))?;
    let spool = Spool::adopt(dest.to_path_buf());
    let mut file = tokio::fs::File::from_std(std_file);
    let (mut size, mut lines, mut last) = (0u64, 0u64, b'\n');
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(Into::into)?;
        size += chunk.len() as u64;
        lines += chunk.iter().filter(|b| **b == b'\n').count() as u64;
        if let Some(b) = chunk.last() {
            last = *b;
        }
        if size > MAX_BYTES {
            return Err(UploadError::TooLarge);
        }
        if lines > MAX_LINES + 1 {
            return Err(UploadError::TooManyLines);
        }
        file.write_all(&chunk)
            .await
            .map_err(|e| UploadError::Io(e.to_string()))?;
    }
    // A last line without a newline still counts.
    if last != b'\n' {
        lines += 1;
    }
    file.flush()
        .await
        .map_err(|e| UploadError::Io(e.to_string()))?;
    if lines > MAX_LINES + 1 {
        return Err(UploadError::TooManyLines);
    }
    Ok((spool, size))
}

#[derive(Debug)]
pub enum UploadError {
    TooLarge,
    TooManyLines,
    Stream(String),
    Io(String),
}

impl UploadError {
    pub fn message(&self) -> String {
        match self {
            UploadError::TooLarge => messages::upload_too_large(MAX_BYTES / (1024 * 1024)),
            UploadError::TooManyLines => messages::upload_too_many_lines(MAX_LINES),
            UploadError::Stream(e) => messages::upload_broken(e),
            UploadError::Io(_) => messages::internal_error(),
        }
    }
}

/// Validated generation parameters.
pub fn generation(
    count: i64,
    length: i64,
    alphabet: &str,
) -> Result<(u64, usize, &'static str), DomainError> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
    if !(1..=GENERATE_MAX).contains(&count) {
        errs.push(FieldError::new(
            "count",
            "invalid_count",
            messages::bad_generate_count(GENERATE_MAX),
        ));
    }
    if !(10..=32).contains(&length) {
        errs.push(FieldError::new(
            "length",
            "invalid_length",
            messages::bad_code_length(10, 32),
        ));
    }
    let chars = Alphabet::parse(alphabet.trim()).map(Alphabet::chars);
    if chars.is_none() {
        errs.push(FieldError::new(
            "alphabet",
            "invalid_choice",
            messages::bad_choice("Alphabet", Alphabet::NAMES),
        ));
    }
    match (errs.is_empty(), chars) {
        (true, Some(c)) => Ok((count as u64, length as usize, c)),
        _ => Err(errs.refusal()),
    }
}

#[cfg(test)]
mod tests {
    use super::{say, ImportWhy};
    use crate::i18n::{scope, Lang};

    const ALL: [ImportWhy; 15] = [
        ImportWhy::InvalidCharacters,
        ImportWhy::TooLong {
            chars: 130,
            limit: 128,
        },
        ImportWhy::TooLongUnread { cap: 4096 },
        ImportWhy::NotUtf8,
        ImportWhy::Empty,
        ImportWhy::BadExpiry,
        ImportWhy::Expired,
        ImportWhy::BadCsv,
        ImportWhy::Duplicate { first: 1234 },
        ImportWhy::AlreadyImported { batch: 7 },
        ImportWhy::CsvNeedsCodeColumn,
        ImportWhy::NoCodes,
        ImportWhy::NothingValid,
        ImportWhy::AllOrNothing { rejected: 3 },
        ImportWhy::Abandoned,
    ];

    #[tokio::test]
    async fn import_reasons_are_stored_in_no_language_and_said_in_the_readers() {
        for why in ALL {
            let stored = why.stored();
            assert_eq!(ImportWhy::parse(&stored), Some(why), "{stored}");
            assert!(stored.is_ascii() && !stored.contains(':'), "{stored}");
            let en = say(&stored);
            assert_eq!(en, why.message(), "English, as the import used to store it");
            let zh = scope(Lang::ZhCn, async { say(&stored) }).await;
            assert_ne!(zh, en, "{stored}");
        }
        assert_eq!(
            say(&ImportWhy::Duplicate { first: 1234 }.stored()),
            "duplicates line 1234"
        );
        assert_eq!(say("too_long 130 128"), "130 characters, the limit is 128");
        // Rows stored before hold an English sentence: shown as they are, in any language.
        let old = "duplicates line 3";
        assert_eq!(scope(Lang::ZhCn, async { say(old) }).await, old);
        assert_eq!(say("too_long x 128"), "too_long x 128");
    }
}
