//! The audit trail: who changed what, when, and from where. Written inside the same transaction
//! as the change it describes, so the two never disagree; read back as a filtered, paged list
//! (newest first) and as a CSV export of the same filter.

use crate::domain::MerchantId;
use chrono_tz::Tz;
use futures_util::TryStreamExt;
use serde::Serialize;
use sqlx::{Any, FromRow, Transaction};

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::export::{Cell, Csv};
use crate::domain::kernel::scope::Role;
use crate::domain::kernel::validate::ms_to_local;
use crate::domain::{Actor, DomainError, Scope};
use crate::infra::db::Db;

/// Rows on one page of the audit log.
pub const PAGE_SIZE: i64 = 50;
/// The most rows one export holds (the newest ones).
pub const EXPORT_MAX: i64 = 100_000;

pub async fn record(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    actor: &Actor,
    merchant_id: Option<MerchantId>,
    action: &str,
    subject: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    let sql = Row {
        merchant_id: "$1",
        actor: "$2",
        action: "$3",
        subject: "$4",
        detail: "$5",
        source: "$6",
        ip: "$7",
        at: "$8",
    }
    .insert("");
    sqlx::query(&sql)
        .bind(merchant_id)
        .bind(&actor.label)
        .bind(action)
        .bind(subject)
        .bind(detail)
        .bind(&actor.source)
        .bind(&actor.ip)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// One audit row as SQL expressions, for a writer whose change and its audit row must be one
/// statement (a group of holds or bookings read from JSON). The column list and its values are
/// paired here and nowhere else (the house test finds `INSERT INTO audit_log` outside `trail`).
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub merchant_id: &'a str,
    pub actor: &'a str,
    pub action: &'a str,
    pub subject: &'a str,
    pub detail: &'a str,
    pub source: &'a str,
    pub ip: &'a str,
    pub at: &'a str,
}

impl Row<'_> {
    /// `INSERT INTO audit_log (…) SELECT …` followed by `rest` (its `FROM`, `JOIN`, `WHERE`).
    pub fn insert(&self, rest: &str) -> String {
        let Row {
            merchant_id,
            actor,
            action,
            subject,
            detail,
            source,
            ip,
            at,
        } = self;
        format!(
            "INSERT INTO audit_log (merchant_id, actor, action, subject, detail, source, ip, at)
             SELECT {merchant_id}, {actor}, {action}, {subject}, {detail}, {source}, {ip}, {at} {rest}"
        )
    }
}

/// Who may read the audit log: operators every merchant's rows (and rows of no merchant),
/// merchant admins their own merchant's. Store staff and API keys may not.
pub fn reader_scope(actor: &Actor) -> DomainResult<Scope> {
    match (actor.role, actor.merchant_id) {
        (Some(Role::Operator), None) => Ok(Scope::All),
        (Some(Role::MerchantAdmin), Some(m)) => Ok(Scope::Merchant(m)),
        _ => Err(DomainError::Forbidden),
    }
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Entry {
    pub id: i64,
    pub merchant_id: Option<MerchantId>,
    pub merchant_slug: Option<String>,
    pub merchant_name: Option<String>,
    pub actor: String,
    pub action: String,
    pub subject: String,
    pub detail: String,
    pub source: String,
    /// The client address ('' when there was none: CLI, jobs).
    pub ip: String,
    /// Unix ms.
    pub at: i64,
}

/// What to show. Empty strings and `None` mean "any".
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// One merchant, within the reader's scope (so a merchant admin can never widen it).
    pub merchant_id: Option<MerchantId>,
    /// Part of the actor label, any case.
    pub actor: String,
    /// Exactly this action.
    pub action: String,
    /// Part of the subject, any case.
    pub subject: String,
    /// Unix ms, inclusive.
    pub from: Option<i64>,
    /// Unix ms, exclusive.
    pub to: Option<i64>,
}

/// Where a page starts. Pages are keyed by row id, so a page never shifts while new rows arrive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Cursor {
    #[default]
    Newest,
    /// The rows older than this id.
    Before(i64),
    /// The rows newer than this id.
    After(i64),
}

#[derive(Debug, Clone)]
pub struct Page {
    /// Newest first.
    pub entries: Vec<Entry>,
    /// Set when newer rows exist: ask for `Cursor::After(id)`.
    pub newer: Option<i64>,
    /// Set when older rows exist: ask for `Cursor::Before(id)`.
    pub older: Option<i64>,
    /// Rows matching the filter, counted up to `EXPORT_MAX + 1`.
    pub matching: i64,
}

impl Page {
    /// More rows match than one export holds.
    pub fn export_capped(&self) -> bool {
        self.matching > EXPORT_MAX
    }
}

const SELECT: &str = "SELECT a.id, a.merchant_id, m.slug AS merchant_slug, m.name AS merchant_name,
        a.actor, a.action, a.subject, a.detail, a.source, a.ip, a.at
    FROM audit_log a LEFT JOIN merchants m ON m.id = a.merchant_id";

use crate::bind_args;
use crate::domain::kernel::filters::{contains_pattern, Arg, Where};

/// The WHERE clause of a filter, with only the conditions in use (so each query can use an index).
fn where_of(scope: Scope, f: &Filter) -> Where {
    let mut w = Where::default();
    if let Scope::Merchant(m) = scope {
        w.push("a.merchant_id =", Arg::Int(m.0));
    }
    if let Some(m) = f.merchant_id {
        w.push("a.merchant_id =", Arg::Int(m.0));
    }
    if let Some(p) = contains_pattern(&f.actor) {
        w.like("a.actor", p);
    }
    if !f.action.trim().is_empty() {
        w.push("a.action =", Arg::Text(f.action.trim().to_string()));
    }
    if let Some(p) = contains_pattern(&f.subject) {
        w.like("a.subject", p);
    }
    if let Some(from) = f.from {
        w.push("a.at >=", Arg::Int(from));
    }
    if let Some(to) = f.to {
        w.push("a.at <", Arg::Int(to));
    }
    w
}

async fn exists(db: &Db, w: &Where) -> DomainResult<bool> {
    let sql = format!("SELECT a.id FROM audit_log a {} LIMIT 1", w.sql());
    let found: Option<i64> = bind_args!(sqlx::query_scalar(&sql), &w.args)
        .fetch_optional(&db.pool)
        .await?;
    Ok(found.is_some())
}

/// One page of the log in the reader's scope, newest first.
pub async fn page(db: &Db, scope: Scope, f: &Filter, cursor: Cursor) -> DomainResult<Page> {
    let base = where_of(scope, f);
    let (w, order) = match cursor {
        Cursor::Newest => (base.clone(), "DESC"),
        Cursor::Before(id) => (base.with("a.id <", Arg::Int(id)), "DESC"),
        Cursor::After(id) => (base.with("a.id >", Arg::Int(id)), "ASC"),
    };
    let sql = format!(
        "{SELECT} {} ORDER BY a.id {order} LIMIT {PAGE_SIZE}",
        w.sql()
    );
    let mut entries: Vec<Entry> = bind_args!(sqlx::query_as(&sql), &w.args)
        .fetch_all(&db.pool)
        .await?;
    if matches!(cursor, Cursor::After(_)) {
        entries.reverse();
    }
    let newer = match entries.first() {
        Some(e) if exists(db, &base.with("a.id >", Arg::Int(e.id))).await? => Some(e.id),
        _ => None,
    };
    let older = match entries.last() {
        Some(e) if exists(db, &base.with("a.id <", Arg::Int(e.id))).await? => Some(e.id),
        _ => None,
    };
    let count_sql = format!(
        "SELECT COUNT(*) FROM (SELECT a.id FROM audit_log a {} LIMIT {}) t",
        base.sql(),
        EXPORT_MAX + 1
    );
    let matching: i64 = bind_args!(sqlx::query_scalar(&count_sql), &base.args)
        .fetch_one(&db.pool)
        .await?;
    Ok(Page {
        entries,
        newer,
        older,
        matching,
    })
}

/// The actions present in the reader's scope, for the filter's choices.
pub async fn actions(db: &Db, scope: Scope) -> DomainResult<Vec<String>> {
    let w = where_of(scope, &Filter::default());
    let sql = format!(
        "SELECT DISTINCT a.action FROM audit_log a {} ORDER BY a.action",
        w.sql()
    );
    Ok(bind_args!(sqlx::query_scalar(&sql), &w.args)
        .fetch_all(&db.pool)
        .await?)
}

/// The filtered log as CSV, newest first, at most [`EXPORT_MAX`] rows; times in `tz`.
pub async fn csv(db: &Db, scope: Scope, f: &Filter, tz: Tz) -> DomainResult<String> {
    let w = where_of(scope, f);
    let sql = format!("{SELECT} {} ORDER BY a.id DESC LIMIT {EXPORT_MAX}", w.sql());
    let mut rows = bind_args!(sqlx::query_as::<_, Entry>(&sql), &w.args).fetch(&db.pool);
    let mut out = Csv::new(&[
        "time", "merchant", "actor", "action", "subject", "detail", "source", "ip",
    ]);
    while let Some(e) = rows.try_next().await? {
        let time = ms_to_local(e.at, tz, "%Y-%m-%dT%H:%M:%S%:z");
        let merchant = e.merchant_slug.unwrap_or_default();
        out.row(&[
            Cell::from(&time),
            Cell::from(&merchant),
            Cell::from(&e.actor),
            Cell::from(&e.action),
            Cell::from(&e.subject),
            Cell::from(&e.detail),
            Cell::from(&e.source),
            Cell::from(&e.ip),
        ]);
    }
    Ok(out.finish())
}
