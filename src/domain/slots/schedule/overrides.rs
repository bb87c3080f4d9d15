//! Date overrides: a date that keeps other hours than its weekday. A holiday is a date without
//! hours (no slots that day); an event day has its own opening ranges. On a date with an
//! override the weekly rules are not used; removing the override brings them back. Every change
//! re-materialises the window like a schedule save, so the slots follow at once.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};
use sqlx::FromRow;

use super::{check_range, materialize, overlaps, MaterializeReport, RangeInput, Rule};
use crate::domain::catalog::Sku;
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::Errors;
use crate::domain::tenancy::tenants::Store;
use crate::domain::{Actor, DomainError, FieldError, MerchantId, StoreId};
use crate::infra::db::Db;
use crate::messages;

/// At most this many override rows per service and store, past ones included.
pub const MAX_OVERRIDES: i64 = 1000;

/// One row: a date without hours, or one opening range on that date.
#[derive(Debug, Clone, FromRow)]
pub struct Override {
    pub id: i64,
    pub staff_id: Option<i64>,
    pub on_date: String,
    pub opens_min: Option<i64>,
    pub closes_min: Option<i64>,
    pub slot_minutes: Option<i64>,
    pub capacity: Option<i64>,
    pub buffer_minutes: i64,
}

impl Override {
    /// The range as a rule of that date's weekday; None for a date without hours.
    fn as_rule(&self, sku_id: i64, store_id: StoreId, date: NaiveDate) -> Option<Rule> {
        Some(Rule {
            id: self.id,
            sku_id,
            store_id,
            staff_id: self.staff_id,
            weekday: date.weekday().num_days_from_monday() as i64,
            opens_min: self.opens_min?,
            closes_min: self.closes_min?,
            slot_minutes: self.slot_minutes?,
            capacity: self.capacity?,
            buffer_minutes: self.buffer_minutes,
        })
    }
}

/// The overridden dates from `from` on, each with its ranges (empty: no slots that day).
pub type ByDate = BTreeMap<NaiveDate, Vec<Rule>>;

/// The override rows of a service in a store from `from` on, by date then opening time.
pub async fn list(
    db: &Db,
    sku_id: i64,
    store_id: StoreId,
    from: NaiveDate,
) -> DomainResult<Vec<Override>> {
    Ok(sqlx::query_as(
        "SELECT id, staff_id, on_date, opens_min, closes_min, slot_minutes, capacity, buffer_minutes
         FROM schedule_overrides WHERE sku_id = $1 AND store_id = $2 AND on_date >= $3
         ORDER BY on_date, opens_min, id",
    )
    .bind(sku_id)
    .bind(store_id)
    .bind(from.format("%Y-%m-%d").to_string())
    .fetch_all(&db.pool)
    .await?)
}

/// How many dates from `from` on keep other hours, per service of the list (services without
/// any are absent).
pub async fn dates_per_service(
    db: &Db,
    store_id: StoreId,
    sku_ids: &[i64],
    from: NaiveDate,
) -> DomainResult<std::collections::HashMap<i64, i64>> {
    // Past dates are dropped here rather than in SQL (the IN list binds ids only): a service
    // keeps at most MAX_OVERRIDES rows, so a page of services reads a bounded few.
    let rows: Vec<(i64, String)> = crate::infra::db::by_ids(
        db,
        "SELECT DISTINCT sku_id, on_date FROM schedule_overrides WHERE store_id = $1 AND sku_id IN ({ids})",
        &[store_id.0],
        sku_ids,
    )
    .await?;
    let from = from.format("%Y-%m-%d").to_string();
    let mut out: std::collections::HashMap<i64, i64> = Default::default();
    for (sku, _) in rows.into_iter().filter(|(_, d)| *d >= from) {
        *out.entry(sku).or_default() += 1;
    }
    Ok(out)
}

/// The overridden dates of every service of a store in [from, to): (date, SKU code, no slots
/// that day), one per date and service. The week grid marks holidays and event days with them.
pub async fn in_store(
    db: &Db,
    store_id: StoreId,
    from: NaiveDate,
    to: NaiveDate,
) -> DomainResult<Vec<(String, String, bool)>> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT o.on_date, k.code, CAST(MAX(CASE WHEN o.opens_min IS NULL THEN 1 ELSE 0 END) AS BIGINT)
         FROM schedule_overrides o JOIN skus k ON k.id = o.sku_id
         WHERE o.store_id = $1 AND o.on_date >= $2 AND o.on_date < $3
         GROUP BY o.on_date, k.code ORDER BY o.on_date, k.code",
    )
    .bind(store_id)
    .bind(from.format("%Y-%m-%d").to_string())
    .bind(to.format("%Y-%m-%d").to_string())
    .fetch_all(&db.pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(d, code, closed)| (d, code, closed != 0))
        .collect())
}

pub async fn by_date(
    db: &Db,
    sku_id: i64,
    store_id: StoreId,
    from: NaiveDate,
) -> DomainResult<ByDate> {
    let mut out = ByDate::new();
    for o in list(db, sku_id, store_id, from).await? {
        let Ok(date) = NaiveDate::parse_from_str(&o.on_date, "%Y-%m-%d") else {
            continue;
        };
        let ranges = out.entry(date).or_default();
        if let Some(r) = o.as_rule(sku_id, store_id, date) {
            ranges.push(r);
        }
    }
    Ok(out)
}

/// An override as typed: a date, and either no hours or one opening range.
#[derive(Debug, Clone, Default)]
pub struct OverrideInput {
    pub date: String,
    /// No slots at all that date (a holiday).
    pub closed: bool,
    pub opens: String,
    pub closes: String,
    pub slot_minutes: i64,
    pub capacity: i64,
    pub staff: Option<String>,
    pub buffer_minutes: i64,
}

/// A date of the form: YYYY-MM-DD, today or later in the store's timezone.
fn future_date(raw: &str, today: NaiveDate, errs: &mut Errors) -> Option<NaiveDate> {
    let label = messages::label("date");
    let Ok(date) = NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d") else {
        errs.push(FieldError::new(
            "date",
            "invalid_date",
            messages::bad_time_or_date(&label),
        ));
        return None;
    };
    if date < today {
        errs.push(FieldError::new(
            "date",
            "period_in_past",
            messages::override_in_past(),
        ));
        return None;
    }
    Some(date)
}

/// Adds an override: a closed date replaces whatever that date had; a range is added beside the
/// date's other ranges (and replaces "closed"). Then the window's slots follow.
pub async fn add(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    sku: &Sku,
    store: &Store,
    input: OverrideInput,
    window_days: i64,
) -> DomainResult<MaterializeReport> {
    let mut errs = Errors::default();
    let date = future_date(&input.date, db.clock.today(store.tz()), &mut errs);
    let mut range = None;
    if !input.closed {
        let r = RangeInput {
            prefix: String::new(),
            opens: &input.opens,
            closes: &input.closes,
            slot_minutes: input.slot_minutes,
            capacity: input.capacity,
            staff: input.staff.as_deref(),
            buffer_minutes: input.buffer_minutes,
        };
        range = check_range(db, merchant_id, store, &r, &mut errs).await?;
    }
    let count: i64 = sqlx::query_scalar(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM schedule_overrides WHERE sku_id = $1 AND store_id = $2",
    )
    .bind(sku.id)
    .bind(store.id)
    .fetch_one(&db.pool)
    .await?;
    if count >= MAX_OVERRIDES {
        errs.push(FieldError::new(
            "date",
            "too_many",
            messages::too_many_overrides(MAX_OVERRIDES),
        ));
    }
    let (Some(date), true) = (date, errs.is_empty()) else {
        return Err(errs.refusal());
    };
    let day = date.format("%Y-%m-%d").to_string();
    let mut tx = db.begin_write().await?;
    super::lock_service(db, &mut tx, sku.id).await?;
    match range {
        None => {
            sqlx::query(
                "DELETE FROM schedule_overrides WHERE sku_id = $1 AND store_id = $2 AND on_date = $3",
            )
            .bind(sku.id)
            .bind(store.id)
            .bind(&day)
            .execute(&mut *tx)
            .await?;
        }
        Some((opens, closes, staff_id)) => {
            // The person named, still active under their row's lock (see `staff::lock_active`).
            if let Some(id) = staff_id {
                if !crate::domain::slots::staff::lock_active(&mut tx, id).await? {
                    tx.rollback().await?;
                    let name = crate::domain::slots::staff::staff_by_id(db, merchant_id, id)
                        .await?
                        .name;
                    return Err(crate::domain::slots::staff::archived_meanwhile(&name));
                }
            }
            sqlx::query(
                "DELETE FROM schedule_overrides WHERE sku_id = $1 AND store_id = $2 AND on_date = $3 AND opens_min IS NULL",
            )
            .bind(sku.id)
            .bind(store.id)
            .bind(&day)
            .execute(&mut *tx)
            .await?;
            // The new range against the date's others, read in the writing transaction.
            let others: Vec<(Option<i64>, i64, i64)> = sqlx::query_as(
                "SELECT staff_id, opens_min, closes_min FROM schedule_overrides
                 WHERE sku_id = $1 AND store_id = $2 AND on_date = $3 AND opens_min IS NOT NULL",
            )
            .bind(sku.id)
            .bind(store.id)
            .bind(&day)
            .fetch_all(&mut *tx)
            .await?;
            let mut rows: Vec<(NaiveDate, i64, i64, Option<i64>, String)> = others
                .into_iter()
                .enumerate()
                .map(|(i, (staff, o, c))| (date, o, c, staff, format!("existing{i}")))
                .collect();
            rows.push((date, opens, closes, staff_id, String::new()));
            let mut clash = Errors::default();
            overlaps(&rows, |d| d.format("%Y-%m-%d").to_string(), &mut clash);
            if !clash.is_empty() {
                tx.rollback().await?;
                // Only the new range is named (its prefix is empty): the stored ones were fine.
                clash.0.retain(|e| e.field == "opens");
                return Err(clash.refusal());
            }
        }
    }
    let (opens, closes, staff_id) = match range {
        Some((o, c, s)) => (Some(o), Some(c), s),
        None => (None, None, None),
    };
    let closed = range.is_none();
    sqlx::query(
        "INSERT INTO schedule_overrides (merchant_id, sku_id, store_id, staff_id, on_date, opens_min, closes_min, slot_minutes, capacity, created_at, buffer_minutes)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(merchant_id)
    .bind(sku.id)
    .bind(store.id)
    .bind(staff_id)
    .bind(&day)
    .bind(opens)
    .bind(closes)
    .bind((!closed).then_some(input.slot_minutes))
    .bind((!closed).then_some(input.capacity))
    .bind(db.now_ms())
    .bind(if closed { 0 } else { input.buffer_minutes })
    .execute(&mut *tx)
    .await?;
    let what = match (opens, closes) {
        (Some(o), Some(c)) => format!("{day} {}–{}", super::hhmm(o), super::hhmm(c)),
        _ => format!("{day} closed"),
    };
    let change = Change {
        actor,
        merchant_id,
        sku,
        store,
        window_days,
    };
    change
        .finish(
            db,
            tx,
            "schedule.override",
            &format!("{what} in {}", store.slug),
        )
        .await
}

/// Removes every override of a date: the weekly rules apply to it again.
pub async fn remove(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    sku: &Sku,
    store: &Store,
    date: &str,
    window_days: i64,
) -> DomainResult<MaterializeReport> {
    let Ok(date) = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d") else {
        return Err(DomainError::NotFound("override"));
    };
    let day = date.format("%Y-%m-%d").to_string();
    let mut tx = db.begin_write().await?;
    let gone = sqlx::query(
        "DELETE FROM schedule_overrides WHERE merchant_id = $1 AND sku_id = $2 AND store_id = $3 AND on_date = $4",
    )
    .bind(merchant_id)
    .bind(sku.id)
    .bind(store.id)
    .bind(&day)
    .execute(&mut *tx)
    .await?;
    if gone.rows_affected() == 0 {
        tx.rollback().await?;
        return Err(DomainError::NotFound("override"));
    }
    let change = Change {
        actor,
        merchant_id,
        sku,
        store,
        window_days,
    };
    change
        .finish(
            db,
            tx,
            "schedule.override_removed",
            &format!("{day} in {}", store.slug),
        )
        .await
}

/// An override change being written: who, for which service and store.
struct Change<'a> {
    actor: &'a Actor,
    merchant_id: MerchantId,
    sku: &'a Sku,
    store: &'a Store,
    window_days: i64,
}

impl Change<'_> {
    /// Records the change in the audit log with its transaction, commits, and brings the
    /// window's slots in line (pruning what the dates no longer call for).
    async fn finish(
        &self,
        db: &Db,
        mut tx: sqlx::Transaction<'_, sqlx::Any>,
        action: &str,
        detail: &str,
    ) -> DomainResult<MaterializeReport> {
        crate::domain::trail::audit::record(
            &mut tx,
            db.now_ms(),
            self.actor,
            Some(self.merchant_id),
            action,
            &format!("sku:{}", self.sku.code),
            detail,
        )
        .await?;
        tx.commit().await?;
        let today = db.clock.today(self.store.tz());
        materialize(
            db,
            self.sku.id,
            self.store,
            today,
            self.window_days,
            true,
            Some(self.actor),
        )
        .await
    }
}
