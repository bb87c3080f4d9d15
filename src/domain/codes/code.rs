//! The code state machine of DESIGN §6, written in one place: every UPDATE of `codes` is a
//! function here named for its transition, and each states in its WHERE clause the one state it
//! leaves, so a code in any other state is not touched (the caller learns it from the count).
//!
//! ```text
//! AVAILABLE → BOOKING (an order holds it) → SOLD (paid) → VOIDED | REDEEMED   (final)
//!           ← BOOKING (released, expired)
//! AVAILABLE ⇄ LOCKED (ops)   AVAILABLE → INVALID (ops)   AVAILABLE → EXPIRED (its date)
//! ```
//! A SOLD code never goes back to sale: no function here writes AVAILABLE from SOLD, and
//! [`allowed`] says so for tests and callers.

use sqlx::{Any, Transaction};

use super::CodeStatus;
use crate::domain::kernel::error::DomainResult;
use crate::domain::{MerchantId, StoreId};

/// Every move the machine allows, as (from, to).
pub const MOVES: &[(CodeStatus, CodeStatus)] = &[
    (CodeStatus::Available, CodeStatus::Booking),
    (CodeStatus::Booking, CodeStatus::Sold),
    (CodeStatus::Booking, CodeStatus::Available),
    (CodeStatus::Sold, CodeStatus::Voided),
    (CodeStatus::Sold, CodeStatus::Redeemed),
    (CodeStatus::Available, CodeStatus::Locked),
    (CodeStatus::Locked, CodeStatus::Available),
    (CodeStatus::Available, CodeStatus::Invalid),
    (CodeStatus::Available, CodeStatus::Expired),
];

/// Whether the machine lets a code go from one state to another.
pub fn allowed(from: CodeStatus, to: CodeStatus) -> bool {
    MOVES.contains(&(from, to))
}

/// AVAILABLE → BOOKING: holds up to `qty` sellable codes of a SKU for an order header, the
/// `preferred` ids first (those the gate handed out), then at random among the lowest ids so
/// that concurrent orders do not fight over the lowest id. Returns how many it took and the
/// preferred ids found already taken.
pub async fn hold_for_order(
    tx: &mut Transaction<'_, Any>,
    header_id: i64,
    order: &str,
    sku_id: i64,
    qty: i64,
    now: i64,
    preferred: &[i64],
) -> DomainResult<(i64, Vec<i64>)> {
    use rand::seq::SliceRandom;
    let mut held = 0;
    let mut stale = Vec::new();
    // `codes::SELLABLE` reads `$1` as the SKU and `$2` as now: the take binds them so.
    let take_sql = format!(
        "UPDATE codes SET status = 'BOOKING', reservation_id = $3, order_id = $4, version = version + 1, updated_at = $2
         WHERE id = $5 AND sku_id = $1 AND {}",
        super::SELLABLE
    );
    let take = |id: i64| {
        sqlx::query(&take_sql)
            .bind(sku_id)
            .bind(now)
            .bind(header_id)
            .bind(order.to_string())
            .bind(id)
    };
    for &id in preferred {
        let took = take(id).execute(&mut **tx).await?.rows_affected() as i64;
        if took == 0 {
            stale.push(id);
        }
        held += took;
    }
    for _round in 0..5 {
        if held >= qty {
            break;
        }
        let limit = (qty - held) * 4 + 16;
        let mut candidates: Vec<i64> = sqlx::query_scalar(&format!(
            "SELECT id FROM codes WHERE sku_id = $1 AND {} ORDER BY id LIMIT $3",
            super::SELLABLE
        ))
        .bind(sku_id)
        .bind(now)
        .bind(limit)
        .fetch_all(&mut **tx)
        .await?;
        let exhausted = (candidates.len() as i64) < limit;
        candidates.shuffle(&mut rand::rng());
        for id in candidates {
            if held == qty {
                break;
            }
            held += take(id).execute(&mut **tx).await?.rows_affected() as i64;
        }
        if exhausted {
            break;
        }
    }
    Ok((held, stale))
}

/// BOOKING → SOLD: the codes an order header holds (of one SKU, or all), sold at `now`.
/// Returns the ids sold.
pub async fn sell_held(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    header_id: i64,
    sku_id: Option<i64>,
) -> Result<Vec<i64>, sqlx::Error> {
    // Two statements rather than `$3 IS NULL OR …`: each keeps a plan of its own.
    match sku_id {
        Some(sku) => sqlx::query_scalar(
            "UPDATE codes SET status = 'SOLD', sold_at = $1, version = version + 1, updated_at = $1
                 WHERE reservation_id = $2 AND sku_id = $3 AND status = 'BOOKING' RETURNING id",
        )
        .bind(now)
        .bind(header_id)
        .bind(sku)
        .fetch_all(&mut **tx)
        .await,
        None => sqlx::query_scalar(
            "UPDATE codes SET status = 'SOLD', sold_at = $1, version = version + 1, updated_at = $1
                 WHERE reservation_id = $2 AND status = 'BOOKING' RETURNING id",
        )
        .bind(now)
        .bind(header_id)
        .fetch_all(&mut **tx)
        .await,
    }
}

/// BOOKING → AVAILABLE: the codes an order header holds go back to the pool (a SOLD code never
/// does). Returns (SKU, id) of each.
pub async fn release_held(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    header_id: i64,
) -> Result<Vec<(i64, i64)>, sqlx::Error> {
    sqlx::query_as(
        "UPDATE codes SET status = 'AVAILABLE', reservation_id = NULL, order_id = NULL, version = version + 1, updated_at = $1
         WHERE reservation_id = $2 AND status = 'BOOKING' RETURNING sku_id, id",
    )
    .bind(now)
    .bind(header_id)
    .fetch_all(&mut **tx)
    .await
}

/// SOLD → VOIDED (refunded or leaked). False: the code was not SOLD.
pub async fn void_sold(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    id: i64,
) -> Result<bool, sqlx::Error> {
    let moved = sqlx::query(
        "UPDATE codes SET status = 'VOIDED', version = version + 1, updated_at = $1
         WHERE id = $2 AND merchant_id = $3 AND status = 'SOLD'",
    )
    .bind(now)
    .bind(id)
    .bind(merchant_id)
    .execute(&mut **tx)
    .await?;
    Ok(moved.rows_affected() == 1)
}

/// SOLD → REDEEMED (used at a counter of `store`). False: the code was not SOLD.
pub async fn redeem_sold(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    id: i64,
    store: Option<StoreId>,
) -> Result<bool, sqlx::Error> {
    // One use taken; the last use of a pass (of one, for a plain voucher) ends it REDEEMED. Both
    // SET expressions read the row as it was.
    let moved = sqlx::query(
        "UPDATE codes SET uses_taken = uses_taken + 1,
            status = CASE WHEN uses_taken + 1 >= (SELECT k.uses FROM skus k WHERE k.id = codes.sku_id) THEN 'REDEEMED' ELSE status END,
            redeemed_at = $1, redeemed_store_id = $2, version = version + 1, updated_at = $1
         WHERE id = $3 AND merchant_id = $4 AND status = 'SOLD'",
    )
    .bind(now)
    .bind(store)
    .bind(id)
    .bind(merchant_id)
    .execute(&mut **tx)
    .await?;
    Ok(moved.rows_affected() == 1)
}

/// Gives back the last use taken at `since` or later: the code is SOLD again, with one use more.
/// Its last use's time and store are cleared, so a use is undone at most once. Whether it moved.
pub async fn unredeem_last(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    id: i64,
    since: i64,
) -> Result<bool, sqlx::Error> {
    let moved = sqlx::query(
        "UPDATE codes SET uses_taken = uses_taken - 1, status = 'SOLD', redeemed_at = NULL,
            redeemed_store_id = NULL, version = version + 1, updated_at = $1
         WHERE id = $2 AND merchant_id = $3 AND status IN ('SOLD', 'REDEEMED') AND uses_taken > 0
           AND redeemed_at >= $4",
    )
    .bind(now)
    .bind(id)
    .bind(merchant_id)
    .bind(since)
    .execute(&mut **tx)
    .await?;
    Ok(moved.rows_affected() == 1)
}

/// Which codes an ops move takes: one by id, or every one of a batch.
#[derive(Debug, Clone, Copy)]
pub enum Which {
    One(i64),
    Batch(i64),
}

/// An ops move (lock, unlock, invalidate) from `from` to `to`, for the codes in `from`. Returns
/// how many moved. A move the machine does not allow moves nothing.
pub async fn ops_move(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    merchant_id: MerchantId,
    which: Which,
    (from, to): (CodeStatus, CodeStatus),
) -> Result<u64, sqlx::Error> {
    if !allowed(from, to) {
        return Ok(0);
    }
    let (column, id) = match which {
        Which::One(id) => ("id", id),
        Which::Batch(id) => ("batch_id", id),
    };
    let r = sqlx::query(&format!(
        "UPDATE codes SET status = $1, version = version + 1, updated_at = $2
         WHERE {column} = $3 AND merchant_id = $4 AND status = $5"
    ))
    .bind(to.as_str())
    .bind(now)
    .bind(id)
    .bind(merchant_id)
    .bind(from.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(r.rows_affected())
}

/// AVAILABLE → EXPIRED for every code past its date. Returns the SKU of each.
pub async fn expire_available(
    tx: &mut Transaction<'_, Any>,
    now: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE codes SET status = 'EXPIRED', version = version + 1, updated_at = $1
         WHERE status = 'AVAILABLE' AND expires_at IS NOT NULL AND expires_at <= $1 RETURNING sku_id",
    )
    .bind(now)
    .fetch_all(&mut **tx)
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_move_the_machine_allows_is_allowed() {
        for (from, to) in [
            ("AVAILABLE", "BOOKING"),
            ("BOOKING", "SOLD"),
            ("BOOKING", "AVAILABLE"),
            ("SOLD", "VOIDED"),
            ("SOLD", "REDEEMED"),
            ("AVAILABLE", "LOCKED"),
            ("LOCKED", "AVAILABLE"),
            ("AVAILABLE", "INVALID"),
            ("AVAILABLE", "EXPIRED"),
        ] {
            let (f, t) = (
                CodeStatus::parse(from).unwrap(),
                CodeStatus::parse(to).unwrap(),
            );
            assert!(allowed(f, t), "{from} → {to} is a move of the machine");
        }
    }

    #[test]
    fn a_sold_code_never_goes_back_to_sale_and_final_states_stay_final() {
        use CodeStatus as S;
        for to in S::ALL {
            assert!(
                !allowed(S::Sold, *to) || matches!(to, S::Voided | S::Redeemed),
                "SOLD → {to}"
            );
            assert!(!allowed(S::Voided, *to), "VOIDED is final, not → {to}");
            assert!(!allowed(S::Redeemed, *to), "REDEEMED is final, not → {to}");
            assert!(!allowed(S::Expired, *to), "EXPIRED is final, not → {to}");
            assert!(!allowed(S::Invalid, *to), "INVALID is final, not → {to}");
            assert!(!allowed(*to, *to), "{to} → {to} is no move");
        }
        assert!(!allowed(S::Sold, S::Available));
        assert!(!allowed(S::Sold, S::Booking));
        assert!(
            !allowed(S::Locked, S::Booking),
            "a locked code is never held"
        );
    }

    #[test]
    fn every_pair_is_either_a_listed_move_or_refused() {
        // 8 states, 64 pairs: exactly the nine listed moves are allowed.
        let n = CodeStatus::ALL
            .iter()
            .flat_map(|f| CodeStatus::ALL.iter().map(move |t| (*f, *t)))
            .filter(|(f, t)| allowed(*f, *t))
            .count();
        assert_eq!(n, MOVES.len());
        assert_eq!(n, 9);
    }
}
