//! What a schedule change would do to the window's slots, before it is saved: the same decisions
//! `materialize` takes (create, change capacity, remove, keep), read without writing. A booking
//! or a hand edit that lands between the preview and the save still wins at the save, which
//! reports what it really did.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{Duration, NaiveDate};
use serde::Serialize;

use super::{local_ms, overrides, plan, KeptSlot, Rule};
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::ms_to_rfc3339;
use crate::domain::tenancy::tenants::Store;
use crate::infra::db::Db;

/// One local date of the window with something to change.
#[derive(Debug, Clone, Serialize)]
pub struct PreviewDay {
    pub date: NaiveDate,
    pub created: usize,
    pub removed: usize,
    pub capacity_changed: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Preview {
    pub created: usize,
    pub removed: usize,
    pub capacity_changed: usize,
    /// Slots that stay as they are.
    pub unchanged: usize,
    pub kept_with_bookings: Vec<KeptSlot>,
    pub kept_edited: Vec<KeptSlot>,
    pub kept_full: Vec<KeptSlot>,
    /// Unbooked slots whose length changes (same start).
    pub length_changed: usize,
    /// Planned slots not made because a slot that stays covers that time for the same person.
    pub blocked: Vec<KeptSlot>,
    /// Per date, in date order: only dates where something changes.
    pub days: Vec<PreviewDay>,
}

/// A slot of the window as the preview reads it.
#[derive(sqlx::FromRow)]
struct SlotRow {
    id: i64,
    staff_key: i64,
    starts_at: i64,
    capacity: i64,
    booked: i64,
    edited: i64,
    source: String,
    ends_at: i64,
}

struct Existing {
    id: i64,
    capacity: i64,
    booked: i64,
    edited: bool,
    from_rules: bool,
    ends_at: i64,
}

/// The change `rules` (checked, see `check_rules`) would make to a service's slots in a store
/// over the window from today.
pub async fn of_rules(
    db: &Db,
    sku_id: i64,
    store: &Store,
    rules: &[Rule],
    window_days: i64,
) -> DomainResult<Preview> {
    let tz = store.tz();
    let today = db.clock.today(tz);
    let dated = overrides::by_date(db, sku_id, store.id, today).await?;
    let now = db.now_ms();
    let planned = plan(rules, &dated, tz, today, window_days, now);
    let window_end = local_ms(tz, today + Duration::days(window_days), 0).unwrap_or(i64::MAX);
    let rows: Vec<SlotRow> = sqlx::query_as(
        "SELECT id, staff_key, starts_at, capacity, booked, CAST(capacity_edited AS BIGINT) AS edited, source, ends_at FROM slots
         WHERE sku_id = $1 AND store_id = $2 AND starts_at > $3 AND starts_at < $4",
    )
    .bind(sku_id)
    .bind(store.id)
    .bind(now)
    .bind(window_end)
    .fetch_all(&db.pool)
    .await?;
    let mut existing: HashMap<(i64, i64), Existing> = HashMap::new();
    for SlotRow {
        id,
        staff_key,
        starts_at,
        capacity,
        booked,
        edited,
        source,
        ends_at,
    } in rows
    {
        existing.insert(
            (staff_key, starts_at),
            Existing {
                id,
                capacity,
                booked,
                edited: edited != 0,
                from_rules: source == "RULE",
                ends_at,
            },
        );
    }
    let mut out = Preview::default();
    let mut days: BTreeMap<NaiveDate, PreviewDay> = BTreeMap::new();
    let kept = |e: &Existing, at: i64| KeptSlot {
        slot_id: e.id,
        starts_at: ms_to_rfc3339(at),
        booked: e.booked,
    };
    let mut wanted = HashSet::new();
    for p in &planned {
        let key = (p.staff_id.unwrap_or(0), p.starts_at);
        // As the save decides: a slot that stays (booked, or made by hand) and overlaps this one
        // for the same person means this one is not made.
        let in_the_way = existing
            .iter()
            .filter(|((staff, start), e)| {
                *staff == key.0
                    && *start != key.1
                    && *start < p.ends_at
                    && e.ends_at > p.starts_at
                    && (e.booked > 0 || !e.from_rules)
            })
            .min_by_key(|((_, start), _)| *start);
        if let Some((_, e)) = in_the_way {
            out.blocked.push(kept(e, p.starts_at));
            continue;
        }
        wanted.insert(key);
        let Some(e) = existing.get(&key) else {
            out.created += 1;
            bump(&mut days, day_of_date(tz, p.starts_at, today), |d| {
                d.created += 1
            });
            continue;
        };
        if e.from_rules && e.ends_at != p.ends_at {
            if e.booked == 0 {
                out.length_changed += 1;
            } else {
                out.kept_with_bookings.push(kept(e, p.starts_at));
            }
        }
        if e.capacity == p.capacity || !e.from_rules && !e.edited {
            out.unchanged += 1;
        } else if e.edited {
            out.kept_edited.push(kept(e, p.starts_at));
        } else if e.booked > p.capacity {
            out.kept_full.push(kept(e, p.starts_at));
        } else {
            out.capacity_changed += 1;
            bump(&mut days, day_of_date(tz, p.starts_at, today), |d| {
                d.capacity_changed += 1
            });
        }
    }
    let mut gone: Vec<(&(i64, i64), &Existing)> = existing
        .iter()
        .filter(|(key, e)| e.from_rules && !wanted.contains(*key))
        .collect();
    gone.sort_by_key(|(key, _)| key.1);
    for ((_, starts_at), e) in gone {
        if e.booked == 0 {
            out.removed += 1;
            bump(&mut days, day_of_date(tz, *starts_at, today), |d| {
                d.removed += 1
            });
        } else {
            out.kept_with_bookings.push(kept(e, *starts_at));
        }
    }
    for list in [
        &mut out.kept_with_bookings,
        &mut out.kept_edited,
        &mut out.kept_full,
        &mut out.blocked,
    ] {
        list.sort_by(|a, b| a.starts_at.cmp(&b.starts_at));
    }
    out.days = days.into_values().collect();
    Ok(out)
}

fn day_of_date(tz: chrono_tz::Tz, at: i64, fallback: NaiveDate) -> NaiveDate {
    chrono::DateTime::from_timestamp_millis(at)
        .map(|t| t.with_timezone(&tz).date_naive())
        .unwrap_or(fallback)
}

/// Counts one change on its date.
fn bump(
    days: &mut BTreeMap<NaiveDate, PreviewDay>,
    date: NaiveDate,
    f: impl FnOnce(&mut PreviewDay),
) {
    f(days.entry(date).or_insert(PreviewDay {
        date,
        created: 0,
        removed: 0,
        capacity_changed: 0,
    }))
}
