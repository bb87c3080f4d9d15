//! Who works when: staff members, weekly schedule rules per service SKU and store, and the
//! materialisation of rules into slots for a rolling window. Capacity comes from the rule; leave
//! never touches it (closures close slots instead, see `closures`). Staff members are `staff`.

mod materialize;
pub mod overrides;
pub mod preview;

pub use materialize::materialize;

use crate::domain::{MerchantId, StoreId};
use chrono::{Datelike, Duration, NaiveDate, NaiveTime, TimeZone};
use chrono_tz::Tz;
use serde::Serialize;
use serde_json::json;
use sqlx::FromRow;

use crate::domain::catalog::{self, Sku};
use crate::domain::kernel::error::DomainResult;
use crate::domain::tenancy::tenants::{self, Store};
use crate::domain::trail::events::{EventType, Subject};
use crate::domain::{Actor, DomainError, FieldError, Scope};
use crate::infra::db::Db;
use crate::messages;

pub const DEFAULT_WINDOW_DAYS: i64 = 28;
/// At most this many rules (lines) per service and store.
pub const MAX_RULES: usize = 50;
pub const WEEKDAYS: [&str; 7] = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"];

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Rule {
    pub id: i64,
    pub sku_id: i64,
    pub store_id: StoreId,
    pub staff_id: Option<i64>,
    pub weekday: i64,
    pub opens_min: i64,
    pub closes_min: i64,
    pub slot_minutes: i64,
    pub capacity: i64,
    /// A break after each slot before the next one starts.
    pub buffer_minutes: i64,
}

impl Rule {
    pub fn weekday_label(&self) -> &'static str {
        WEEKDAYS.get(self.weekday as usize).copied().unwrap_or("?")
    }
    pub fn opens(&self) -> String {
        hhmm(self.opens_min)
    }
    pub fn closes(&self) -> String {
        hhmm(self.closes_min)
    }
}

pub fn hhmm(min: i64) -> String {
    format!("{:02}:{:02}", min / 60, min % 60)
}

/// "09:30" → 570; "24:00" is accepted as an end of day.
pub fn parse_hhmm(field: &str, raw: &str) -> Result<i64, FieldError> {
    let label = messages::label(field.rsplit('.').next().unwrap_or(field));
    let bad = || FieldError::new(field, "invalid_time", messages::bad_clock(&label));
    let (h, m) = raw.trim().split_once(':').ok_or_else(bad)?;
    let (h, m): (i64, i64) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if !(0..=24).contains(&h) || !(0..60).contains(&m) || (h == 24 && m != 0) {
        return Err(bad());
    }
    Ok(h * 60 + m)
}

/// A rule as submitted: days, opening period, slot length, capacity, optional staff member.
#[derive(Debug, Clone)]
pub struct RuleInput {
    pub weekdays: Vec<String>,
    pub opens: String,
    pub closes: String,
    pub slot_minutes: i64,
    pub capacity: i64,
    pub staff: Option<String>,
    /// A break after each slot, in minutes (0: back to back).
    pub buffer_minutes: i64,
}

/// The longest break after a slot: four hours.
pub const BUFFER_MAX: i64 = 240;

/// A service SKU of the merchant, or a field error naming what the SKU is instead.
pub async fn service_sku(
    db: &Db,
    merchant_id: MerchantId,
    code: &str,
    field: &str,
) -> DomainResult<Sku> {
    catalog::sku_of_unit(db, merchant_id, code, field, catalog::UnitType::Slot).await
}

/// The merchant's service SKUs (booked in slots), by code: the back office's service pickers.
pub async fn service_skus(db: &Db, merchant_id: MerchantId) -> DomainResult<Vec<Sku>> {
    Ok(sqlx::query_as(&format!(
        "{} WHERE merchant_id = $1 AND unit_type = 'slot' ORDER BY code",
        crate::domain::catalog::SKU_SELECT
    ))
    .bind(merchant_id)
    .fetch_all(&db.pool)
    .await?)
}

/// The store a call means: the named one, or the merchant's only store when none is named.
pub async fn resolve_store(
    db: &Db,
    merchant_id: MerchantId,
    slug: Option<&str>,
) -> DomainResult<Store> {
    match slug.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => tenants::store_by_slug(db, merchant_id, s)
            .await
            .map_err(|_| DomainError::field("store", "unknown_store", messages::unknown_store(s))),
        None => {
            let stores = tenants::stores(db, Scope::Merchant(merchant_id)).await?;
            match stores.len() {
                1 => Ok(stores
                    .into_iter()
                    .next()
                    .ok_or(DomainError::NotFound("store"))?),
                0 => Err(DomainError::field(
                    "store",
                    "unknown_store",
                    messages::no_store(),
                )),
                _ => Err(DomainError::field(
                    "store",
                    "required",
                    messages::store_required(),
                )),
            }
        }
    }
}

/// What a schedule change did to existing slots.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MaterializeReport {
    pub created: usize,
    pub removed: usize,
    /// Existing slots whose capacity the new rules changed.
    pub capacity_changed: usize,
    /// Slots whose capacity staff set by hand and the rules would have changed: kept as edited.
    pub kept_edited: Vec<KeptSlot>,
    /// Slots the rules no longer produce but that have bookings: kept, for staff to handle.
    pub kept_with_bookings: Vec<KeptSlot>,
    /// Slots that hold more places than the new capacity: kept at their capacity (a capacity
    /// never drops below what is booked).
    pub kept_full: Vec<KeptSlot>,
    /// Of the created slots, those born closed because a closure (leave) covers them.
    pub created_closed: usize,
    /// Existing slots, still unbooked, whose length the new rules changed (same start).
    pub length_changed: usize,
    /// Slots the rules would create but did not, because a slot that stays (booked, or made by
    /// hand) already covers that time for the same person: by the planned start, the slot in
    /// the way. A person is never given two slots at once.
    pub blocked: Vec<KeptSlot>,
    /// Slots the rules no longer produce and nobody holds, but that history still refers to (a
    /// waiting-list entry, a cancelled or moved booking, a reconciliation finding): taken off
    /// sale and kept, closed, rather than deleted. Also counted in `removed`.
    pub kept_closed: Vec<KeptSlot>,
}

/// A slot that anything refers to is never deleted: a delete would fail the whole save on a
/// foreign key (PostgreSQL) or leave a dangling row (SQLite), and the history would lose its slot.
/// Every table that points at `slots.id` is named here; a new one must be added.
const SLOT_UNREFERENCED: &str = "NOT EXISTS (SELECT 1 FROM bookings b WHERE b.slot_id = slots.id OR b.moved_from_slot_id = slots.id)
     AND NOT EXISTS (SELECT 1 FROM waitlist w WHERE w.slot_id = slots.id)
     AND NOT EXISTS (SELECT 1 FROM reconcile_findings f WHERE f.slot_id = slots.id)";

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct KeptSlot {
    pub slot_id: i64,
    pub starts_at: String,
    pub booked: i64,
}

/// One opening range as typed, before it is checked: the fields of a rule or of a date override.
pub(crate) struct RangeInput<'a> {
    /// The prefix of its fields' names in errors (`rules[2].`, or empty).
    pub prefix: String,
    pub opens: &'a str,
    pub closes: &'a str,
    pub slot_minutes: i64,
    pub capacity: i64,
    pub staff: Option<&'a str>,
    pub buffer_minutes: i64,
}

/// A checked range: opening and closing minutes and the staff member, or None with the errors
/// pushed. A closing time of 00:00 means midnight at the end of the day (a time input cannot say
/// 24:00).
pub(crate) async fn check_range(
    db: &Db,
    merchant_id: MerchantId,
    store: &Store,
    r: &RangeInput<'_>,
    errs: &mut crate::domain::kernel::validate::Errors,
) -> DomainResult<Option<(i64, i64, Option<i64>)>> {
    let f = |name: &str| format!("{}{name}", r.prefix);
    let before = errs.0.len();
    let opens = errs.take(parse_hhmm(&f("opens"), r.opens));
    let closes = errs
        .take(parse_hhmm(&f("closes"), r.closes))
        .map(|c| if c == 0 { 1440 } else { c });
    if let (Some(o), Some(c)) = (opens, closes) {
        if o >= c {
            errs.push(FieldError::new(
                &f("closes"),
                "invalid_period",
                messages::closes_before_opens(),
            ));
        }
    }
    if !(5..=1440).contains(&r.slot_minutes) {
        errs.push(FieldError::new(
            &f("slot_minutes"),
            "invalid_slot_length",
            messages::bad_slot_length(),
        ));
    }
    if !(0..=BUFFER_MAX).contains(&r.buffer_minutes) {
        errs.push(FieldError::new(
            &f("buffer_minutes"),
            "invalid_buffer",
            messages::bad_buffer(BUFFER_MAX),
        ));
    }
    if let Err(e) = crate::domain::slots::capacity(&f("capacity"), r.capacity) {
        errs.push(e);
    }
    let staff_id = match r.staff.map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(name) => {
            match crate::domain::slots::staff::staff_by_name(db, merchant_id, store.id, name)
                .await?
            {
                Some(s) => Some(s.id),
                None => {
                    errs.push(FieldError::new(
                        &f("staff"),
                        "unknown_staff",
                        messages::unknown_staff(name),
                    ));
                    None
                }
            }
        }
    };
    Ok(match (opens, closes) {
        (Some(o), Some(c)) if errs.0.len() == before => Some((o, c, staff_id)),
        _ => None,
    })
}

/// Ranges of one person (or of the service without staff) that overlap on one day would make
/// the same slots twice, and the second would silently create nothing. `rows` are (day, opens,
/// closes, staff, owner): the overlap is named beside the later owner's opening time, once.
pub(crate) fn overlaps<D: PartialEq>(
    rows: &[(D, i64, i64, Option<i64>, String)],
    day_name: impl Fn(&D) -> String,
    errs: &mut crate::domain::kernel::validate::Errors,
) {
    let mut told = std::collections::HashSet::new();
    for (a, ra) in rows.iter().enumerate() {
        for rb in rows.iter().skip(a + 1) {
            let same_day_and_person = ra.0 == rb.0 && ra.3 == rb.3;
            if same_day_and_person && ra.1 < rb.2 && rb.1 < ra.2 && told.insert(rb.4.clone()) {
                errs.push(FieldError::new(
                    &format!("{}opens", rb.4),
                    "overlapping_rule",
                    messages::overlapping_rule(
                        &day_name(&ra.0),
                        &format!("{}–{}", hhmm(ra.1), hhmm(ra.2)),
                        &format!("{}–{}", hhmm(rb.1), hhmm(rb.2)),
                    ),
                ));
            }
        }
    }
}

/// The submitted rules as stored rows (one per weekday), checked; every error names its rule
/// (`rules[i].field`).
pub async fn check_rules(
    db: &Db,
    merchant_id: MerchantId,
    sku: &Sku,
    store: &Store,
    rules: &[RuleInput],
) -> DomainResult<Vec<Rule>> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
    let mut rows: Vec<(i64, i64, i64, Option<i64>, String)> = Vec::new();
    let mut out = Vec::new();
    if rules.len() > MAX_RULES {
        errs.push(FieldError::new(
            "rules",
            "too_many",
            messages::too_many_rules(MAX_RULES),
        ));
    }
    for (i, r) in rules.iter().enumerate() {
        let prefix = format!("rules[{i}].");
        if r.weekdays.is_empty() {
            errs.push(FieldError::new(
                &format!("{prefix}weekdays"),
                "required",
                messages::required("weekdays"),
            ));
        }
        let mut days = Vec::new();
        for d in &r.weekdays {
            match WEEKDAYS
                .iter()
                .position(|w| w.eq_ignore_ascii_case(d.trim()))
            {
                Some(p) if !days.contains(&(p as i64)) => days.push(p as i64),
                Some(_) => {}
                None => errs.push(FieldError::new(
                    &format!("{prefix}weekdays"),
                    "invalid_weekday",
                    messages::bad_weekday(d),
                )),
            }
        }
        let input = RangeInput {
            prefix: prefix.clone(),
            opens: &r.opens,
            closes: &r.closes,
            slot_minutes: r.slot_minutes,
            capacity: r.capacity,
            staff: r.staff.as_deref(),
            buffer_minutes: r.buffer_minutes,
        };
        if let Some((o, c, staff_id)) =
            check_range(db, merchant_id, store, &input, &mut errs).await?
        {
            for d in days {
                rows.push((d, o, c, staff_id, prefix.clone()));
                out.push(Rule {
                    id: 0,
                    sku_id: sku.id,
                    store_id: store.id,
                    staff_id,
                    weekday: d,
                    opens_min: o,
                    closes_min: c,
                    slot_minutes: r.slot_minutes,
                    capacity: r.capacity,
                    buffer_minutes: r.buffer_minutes,
                });
            }
        }
    }
    overlaps(&rows, |d| WEEKDAYS[*d as usize].to_string(), &mut errs);
    if !errs.is_empty() {
        return Err(errs.refusal());
    }
    Ok(out)
}

/// Serialises changes to one service's schedule. On PostgreSQL the service's SKU row is locked
/// for the writing transaction: without it two saves at once each delete only the rules they saw
/// and both insert theirs (the rules doubled), and two overlapping date overrides each pass the
/// overlap check. SQLite's write transactions are serial already (BEGIN IMMEDIATE).
pub(super) async fn lock_service(
    db: &Db,
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    sku_id: i64,
) -> Result<(), sqlx::Error> {
    if db.dialect == crate::infra::db::Dialect::Postgres {
        // NO KEY UPDATE: it still serialises writers of this schedule, but not the key-share
        // lock a new slot's foreign key takes on the SKU (a one-off slot locks its person first,
        // a schedule save locks the SKU first: FOR UPDATE made the two deadlock).
        sqlx::query("SELECT id FROM skus WHERE id = $1 FOR NO KEY UPDATE")
            .bind(sku_id)
            .fetch_optional(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Replaces every rule of a service SKU in one store, then re-materialises its slots.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn replace_rules(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    sku: &Sku,
    store: &Store,
    rules: Vec<RuleInput>,
    window_days: i64,
) -> DomainResult<(Vec<Rule>, MaterializeReport)> {
    let rows = check_rules(db, merchant_id, sku, store, &rules).await?;
    let mut tx = db.begin_write().await?;
    lock_service(db, &mut tx, sku.id).await?;
    // The people the rules name, still active now that their rows are locked (an archive that
    // came first wins; one that comes later sees these rules and is refused).
    let mut people: Vec<i64> = rows.iter().filter_map(|r| r.staff_id).collect();
    people.sort_unstable();
    people.dedup();
    for id in people {
        if !crate::domain::slots::staff::lock_active(&mut tx, id).await? {
            tx.rollback().await?;
            let name = crate::domain::slots::staff::staff_by_id(db, merchant_id, id)
                .await?
                .name;
            return Err(crate::domain::slots::staff::archived_meanwhile(&name));
        }
    }
    sqlx::query("DELETE FROM schedule_rules WHERE sku_id = $1 AND store_id = $2")
        .bind(sku.id)
        .bind(store.id)
        .execute(&mut *tx)
        .await?;
    for r in &rows {
        sqlx::query(
            "INSERT INTO schedule_rules (merchant_id, sku_id, store_id, staff_id, weekday, opens_min, closes_min, slot_minutes, capacity, created_at, buffer_minutes)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(merchant_id)
        .bind(sku.id)
        .bind(store.id)
        .bind(r.staff_id)
        .bind(r.weekday)
        .bind(r.opens_min)
        .bind(r.closes_min)
        .bind(r.slot_minutes)
        .bind(r.capacity)
        .bind(db.now_ms())
        .bind(r.buffer_minutes)
        .execute(&mut *tx)
        .await?;
    }
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "schedule.replace",
        &format!("sku:{}", sku.code),
        &format!("{} rules in {}", rows.len(), store.slug),
    )
    .await?;
    // A verdict counts the rules where nothing can be booked (`no_schedule`): the rules alone
    // changing is a change of the SKU's (the slots they make or take away write their own).
    crate::domain::trail::events::record(
        &mut tx,
        db.now_ms(),
        merchant_id,
        EventType::SkuUpdated,
        Subject::new("sku", sku.id, Some(sku.id)),
        json!({ "sku": sku.code, "changed": "schedule", "store": store.slug }),
    )
    .await?;
    tx.commit().await?;
    let today = db.clock.today(store.tz());
    let report = materialize(db, sku.id, store, today, window_days, true, Some(actor)).await?;
    Ok((rules_of(db, sku.id, store.id).await?, report))
}

pub async fn rules_of(db: &Db, sku_id: i64, store_id: StoreId) -> DomainResult<Vec<Rule>> {
    Ok(rules_of_many(db, store_id, &[sku_id])
        .await?
        .remove(&sku_id)
        .unwrap_or_default())
}

/// The rules of several services in one store, by service (one query, however many services a
/// page lists).
pub async fn rules_of_many(
    db: &Db,
    store_id: StoreId,
    sku_ids: &[i64],
) -> DomainResult<std::collections::HashMap<i64, Vec<Rule>>> {
    let rows: Vec<Rule> = crate::infra::db::by_ids(
        db,
        "SELECT id, sku_id, store_id, staff_id, weekday, opens_min, closes_min, slot_minutes, capacity, buffer_minutes
         FROM schedule_rules WHERE store_id = $1 AND sku_id IN ({ids}) ORDER BY sku_id, weekday, opens_min, id",
        &[store_id.0],
        sku_ids,
    )
    .await?;
    let mut out: std::collections::HashMap<i64, Vec<Rule>> = Default::default();
    for r in rows {
        out.entry(r.sku_id).or_default().push(r);
    }
    Ok(out)
}

/// A slot the rules call for: local start → UTC instants.
pub(crate) struct Planned {
    pub staff_id: Option<i64>,
    pub starts_at: i64,
    pub ends_at: i64,
    pub capacity: i64,
}

/// Local wall-clock time to a UTC instant. In a daylight-saving gap the time does not exist and
/// the slot is skipped; in an overlap the first occurrence is used.
pub(crate) fn local_ms(tz: Tz, date: NaiveDate, minutes: i64) -> Option<i64> {
    let base = date.and_time(NaiveTime::MIN) + Duration::minutes(minutes);
    tz.from_local_datetime(&base)
        .earliest()
        .map(|t| t.timestamp_millis())
}

/// The slots the weekly rules call for over [from, from + days), except on dates with an
/// override, which use the override's ranges instead (none on a closed date).
pub(crate) fn plan(
    rules: &[Rule],
    dated: &overrides::ByDate,
    tz: Tz,
    from: NaiveDate,
    days: i64,
    now: i64,
) -> Vec<Planned> {
    let mut out = Vec::new();
    for offset in 0..days {
        let date = from + Duration::days(offset);
        let weekday = date.weekday().num_days_from_monday() as i64;
        let ranges: Vec<&Rule> = match dated.get(&date) {
            Some(ranges) => ranges.iter().collect(),
            None => rules.iter().filter(|r| r.weekday == weekday).collect(),
        };
        for r in ranges {
            let mut start = r.opens_min;
            while start + r.slot_minutes <= r.closes_min {
                // A slot lasts its length in real time, even across a clock change.
                if let Some(s) = local_ms(tz, date, start) {
                    if s > now {
                        out.push(Planned {
                            staff_id: r.staff_id,
                            starts_at: s,
                            ends_at: s + r.slot_minutes * 60_000,
                            capacity: r.capacity,
                        });
                    }
                }
                start += r.slot_minutes + r.buffer_minutes;
            }
        }
    }
    out
}

/// The materialisation job: every rule set of every store, for the rolling window.
pub async fn materialize_all(db: &Db, window_days: i64) -> DomainResult<usize> {
    let pairs: Vec<(i64, StoreId)> =
        sqlx::query_as("SELECT DISTINCT sku_id, store_id FROM schedule_rules")
            .fetch_all(&db.pool)
            .await?;
    let mut created = 0;
    for (sku_id, store_id) in pairs {
        let store = tenants::store_by_id(db, Scope::All, store_id).await?;
        let today = db.clock.today(store.tz());
        created += materialize(db, sku_id, &store, today, window_days, false, None)
            .await?
            .created;
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::kernel::validate::ms_to_rfc3339;

    #[test]
    fn clock_times_parse_and_reject_nonsense() {
        assert_eq!(parse_hhmm("opens", "09:30").unwrap(), 570);
        assert_eq!(parse_hhmm("closes", "24:00").unwrap(), 1440);
        assert!(parse_hhmm("opens", "24:30").is_err());
        assert!(parse_hhmm("opens", "9").is_err());
        assert!(parse_hhmm("opens", "10:60").is_err());
    }

    #[test]
    fn local_times_in_a_spring_forward_gap_do_not_exist() {
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        let day = NaiveDate::from_ymd_opt(2027, 3, 28).unwrap();
        assert!(local_ms(berlin, day, 2 * 60 + 30).is_none());
        let nine = local_ms(berlin, day, 9 * 60).unwrap();
        assert_eq!(ms_to_rfc3339(nine), "2027-03-28T07:00:00+00:00");
    }
}
