//! Automatic no-shows: in a store that switched it on, bookings of a slot that ended the store's
//! number of minutes ago, and that nobody marked, become NO_SHOW. The change is conditional on
//! the booking still being BOOKED, so several instances running the job, or staff marking at the
//! same moment, mark each booking once; each is told as `booking.no_show` like a staff mark, and
//! kept as marked by `auto`.

use crate::domain::kernel::error::DomainResult;
use crate::domain::slots::booking::{booking_event, BookingStatus};
use crate::domain::trail::events::EventType;
use crate::domain::{Actor, MerchantId, StoreId};
use crate::infra::db::Db;

/// Who marked a booking when the job did.
pub const AUTO: &str = "auto";

/// At most this many bookings per store per run: a store switching it on with a long history
/// catches up over a few runs instead of one long transaction.
const BATCH: i64 = 500;

/// Marks the due bookings of every store that asks for it; how many were marked.
pub async fn sweep(db: &Db) -> DomainResult<usize> {
    let stores: Vec<(StoreId, MerchantId, i64)> = sqlx::query_as(
        "SELECT id, merchant_id, auto_no_show_minutes FROM stores WHERE auto_no_show_minutes IS NOT NULL",
    )
    .fetch_all(&db.pool)
    .await?;
    let mut marked = 0;
    for (store_id, merchant_id, minutes) in stores {
        marked += sweep_store(db, store_id, merchant_id, minutes).await?;
    }
    Ok(marked)
}

async fn sweep_store(
    db: &Db,
    store_id: StoreId,
    merchant_id: MerchantId,
    minutes: i64,
) -> DomainResult<usize> {
    let now = db.now_ms();
    let due: Vec<(i64, String, i64, i64)> = sqlx::query_as(&format!(
        "SELECT b.id, b.reference, b.slot_id, b.places FROM bookings b JOIN slots s ON s.id = b.slot_id
         WHERE s.store_id = $1 AND b.status = 'BOOKED' AND s.ends_at <= $2 ORDER BY s.ends_at, b.id LIMIT {BATCH}"
    ))
    .bind(store_id)
    .bind(now - minutes * 60_000)
    .fetch_all(&db.pool)
    .await?;
    if due.is_empty() {
        return Ok(0);
    }
    let mut tx = db.begin_write().await?;
    let mut marked = 0;
    for (id, reference, slot_id, places) in &due {
        let done = sqlx::query(
            "UPDATE bookings SET status = 'NO_SHOW', marked_by = $1, marked_at = $2, updated_at = $2
             WHERE id = $3 AND status = 'BOOKED' AND hold_until IS NULL",
        )
        .bind(AUTO)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 1 {
            marked += 1;
            booking_event(
                &mut tx,
                now,
                merchant_id,
                EventType::BookingNoShow,
                reference,
                *slot_id,
                (Some(BookingStatus::Booked.as_str()), "NO_SHOW"),
                *places,
            )
            .await?;
        }
    }
    if marked > 0 {
        crate::domain::trail::audit::record(
            &mut tx,
            db.now_ms(),
            &Actor::system("auto-no-show"),
            Some(merchant_id),
            "booking.auto_no_show",
            &format!("store:{}", store_id.0),
            &format!("{marked} bookings not marked {minutes} min after their slot ended"),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(marked)
}
