//! What changed since the last run, read off the change events.
//!
//! Every change of a quantity or a state writes its event in its own transaction (the outbox,
//! `domain::trail::events`), and the sequencer numbers committed events in commit order. So the events
//! numbered after a run's watermark name every SKU, slot and order a change touched since: a
//! transaction still in flight when the watermark is read gets a later number, and the next run
//! sees it. What bypasses the events (a hand edit in SQL, a write path that forgets its event) is
//! what the slower full sweep is for.

use std::collections::BTreeSet;

use crate::domain::kernel::error::DomainResult;
use crate::infra::db::Db;

/// Past this many touched SKUs, slots or orders a run checks everything: one pass over the
/// tables costs less than lists that long written into every statement.
pub const MOST_TOUCHED: usize = 10_000;

/// The SKUs, slots and orders (reservation ids) the events in (after, upto] touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    pub skus: Vec<i64>,
    pub slots: Vec<i64>,
    pub reservations: Vec<i64>,
}

impl Touched {
    pub fn len(&self) -> usize {
        self.skus
            .len()
            .max(self.slots.len())
            .max(self.reservations.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The last number the sequencer handed out, after numbering what has committed: everything a
/// run started now can see is at or below it.
pub async fn watermark(db: &Db) -> DomainResult<i64> {
    crate::domain::trail::events::sequence(db).await?;
    Ok(
        sqlx::query_scalar("SELECT last_seq FROM event_sequence WHERE id = 1")
            .fetch_one(&db.pool)
            .await?,
    )
}

/// Where the last finished run got to: every event at or below it was checked (by a full run
/// that started there, or by changed-only runs one after the other). None before any.
pub async fn last_checked(db: &Db) -> DomainResult<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT MAX(seq_upto) FROM reconcile_runs WHERE finished_at IS NOT NULL AND error IS NULL",
    )
    .fetch_one(&db.pool)
    .await?)
}

/// When the last full run that finished started (ms), on any instance.
pub async fn last_full(db: &Db) -> DomainResult<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT MAX(started_at) FROM reconcile_runs WHERE scope = 'full' AND finished_at IS NOT NULL AND error IS NULL",
    )
    .fetch_one(&db.pool)
    .await?)
}

/// What the events numbered in (after, upto] touched. Each statement reads a range of the
/// `events_seq` index, so its cost follows the number of changes, not the size of the tables.
pub async fn touched(db: &Db, after: i64, upto: i64) -> DomainResult<Touched> {
    touched_in(db, after, upto, false).await
}

/// What the events numbered after `after` touched, however late they were numbered, and those
/// that committed but are not numbered yet: for a reader that must see every committed change
/// without numbering (a write). No upper bound: the sequencer may number an event between the
/// reader's look at the last number and these statements, and a bound read before would then
/// miss it (no longer unnumbered, and above the bound). The reader keeps the number it read as
/// its mark, so the events numbered after it are seen once more later.
pub async fn touched_since(db: &Db, after: i64) -> DomainResult<Touched> {
    touched_in(db, after, i64::MAX, true).await
}

async fn touched_in(db: &Db, after: i64, upto: i64, unnumbered: bool) -> DomainResult<Touched> {
    let range = if unnumbered {
        "((e.seq > $1 AND e.seq <= $2) OR e.seq IS NULL)"
    } else {
        "e.seq > $1 AND e.seq <= $2"
    };

    // Every event about a SKU, a slot or a booking names the SKU (a slot's is its service's).
    // A verdict turning changed nothing: the watcher tells it after reading the facts.
    let skus: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT DISTINCT e.sku_id FROM events e WHERE {range} AND e.sku_id IS NOT NULL
           AND e.type <> 'sku.sellable_changed'"
    ))
    .bind(after)
    .bind(upto)
    .fetch_all(&db.pool)
    .await?;
    // Slots: those named by slot events, those of the bookings named, and the slot each move
    // left (its event's `before`; the booking's row names only where it is now).
    let named: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT e.subject_id FROM events e WHERE {range} AND e.subject_kind = 'slot'"
    ))
    .bind(after)
    .bind(upto)
    .fetch_all(&db.pool)
    .await?;
    let mut slots: BTreeSet<i64> = named.iter().filter_map(|s| s.parse().ok()).collect();
    let of_bookings: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT DISTINCT b.slot_id FROM events e JOIN bookings b ON b.reference = e.subject_id
         WHERE {range} AND e.subject_kind = 'booking'"
    ))
    .bind(after)
    .bind(upto)
    .fetch_all(&db.pool)
    .await?;
    slots.extend(of_bookings);
    let moves: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT e.data FROM events e WHERE {range} AND e.type = 'booking.moved'"
    ))
    .bind(after)
    .bind(upto)
    .fetch_all(&db.pool)
    .await?;
    slots.extend(moves.iter().filter_map(|d| {
        serde_json::from_str::<serde_json::Value>(d).ok()?["before"]["slot_id"].as_i64()
    }));
    // Orders: those named by reservation events, and those whose bookings changed.
    let reservations: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT r.id FROM events e JOIN reservations r ON r.merchant_id = e.merchant_id AND r.order_id = e.subject_id
         WHERE {range} AND e.subject_kind = 'reservation'
         UNION SELECT b.reservation_id FROM events e JOIN bookings b ON b.reference = e.subject_id
         WHERE {range} AND e.subject_kind = 'booking' AND b.reservation_id IS NOT NULL"
    ))
    .bind(after)
    .bind(upto)
    .fetch_all(&db.pool)
    .await?;
    // An order's own events name no SKU (it may have several lines): the SKUs of its goods and
    // code lines are touched with it (a release moves both the lines and the codes).
    let mut reservations = reservations;
    reservations.sort_unstable();
    reservations.dedup();
    let mut skus: BTreeSet<i64> = skus.into_iter().collect();
    for chunk in reservations.chunks(MOST_TOUCHED) {
        let ids = crate::infra::db::id_in("reservation_id", chunk);
        let of_lines: Vec<i64> = sqlx::query_scalar(&format!(
            "SELECT sku_id FROM stock_reservations WHERE {ids}
             UNION SELECT sku_id FROM code_reservations WHERE {ids}"
        ))
        .persistent(false)
        .fetch_all(&db.pool)
        .await?;
        skus.extend(of_lines);
    }
    let skus: Vec<i64> = skus.into_iter().collect();
    Ok(Touched {
        skus,
        slots: slots.into_iter().collect(),
        reservations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_counts_its_longest_list() {
        let t = Touched {
            skus: vec![1, 2],
            slots: vec![5, 6, 7],
            reservations: vec![],
        };
        assert_eq!(t.len(), 3);
        assert!(!t.is_empty());
        assert!(Touched::default().is_empty());
    }
}
