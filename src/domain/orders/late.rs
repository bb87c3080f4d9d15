//! A payment after the hold expired. The order's payment decides: every line is taken again in one
//! transaction (the warehouse it was held in if it can, else the others by priority; codes
//! again). If all can be, the order is confirmed late; if one cannot, nothing is taken and an
//! exception "paid, not held" is recorded for a merchant admin to settle, so the payment is never
//! lost. The same taking serves an exception resolved as fulfilled after a restock.

use super::*;
use crate::domain::orders::exceptions;
use crate::domain::MerchantId;
use crate::infra::counters::Subject;

/// A line that could not be taken again: what it needs and what there is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Shortfall {
    pub sku: String,
    pub qty: i64,
    pub available: i64,
}

/// What taking an order's lines again came to, inside the caller's transaction.
pub enum Retaken {
    /// Every line taken and the order confirmed; the subjects Redis must reload once committed.
    Done(Vec<Subject>),
    /// The order was no longer in the status expected (a racing confirm or resolution won).
    Lost,
    /// These lines could not be taken: roll back.
    Short(Vec<Shortfall>),
}

/// Confirms an expired order late, or records why it cannot be and refuses with the exception.
pub(super) async fn confirm_late(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    h: &Header,
    order: &str,
    payment_ref: Option<&str>,
) -> DomainResult<ReservationView> {
    // A repeat of a payment already recorded as an exception answers the same: taking the goods
    // now is the exception's resolution ("fulfilled"), decided by a person.
    if let Some(e) = exceptions::open_for(db, merchant_id, h.id).await? {
        return Err(expired_with(order, e.id, &e.shortfall));
    }
    let mut tx = db.begin_write().await?;
    let taken = take_again(
        &mut tx,
        db.now_ms(),
        actor,
        merchant_id,
        h.id,
        order,
        payment_ref,
        ReservationStatus::Expired,
        "reservation.confirm_late",
    )
    .await?;
    match taken {
        Retaken::Done(subjects) => {
            tx.commit().await?;
            db.forget(subjects).await;
            view(db, keys, merchant_id, order).await
        }
        Retaken::Short(shortfall) => {
            tx.rollback().await?;
            let id = exceptions::record_paid_not_held(
                db,
                actor,
                merchant_id,
                h.id,
                order,
                payment_ref,
                ReservationStatus::Expired,
                &shortfall,
            )
            .await?;
            Err(expired_with(order, id, &shortfall))
        }
        Retaken::Lost => {
            tx.rollback().await?;
            // A racing late confirm decided first: answer as a repeat would.
            let now = header(db, merchant_id, order)
                .await?
                .ok_or(DomainError::NotFound("reservation"))?;
            if now.status == ReservationStatus::Confirmed {
                return Box::pin(confirm_inner(
                    db,
                    keys,
                    actor,
                    merchant_id,
                    order,
                    payment_ref,
                ))
                .await;
            }
            match exceptions::open_for(db, merchant_id, h.id).await? {
                Some(e) => Err(expired_with(order, e.id, &e.shortfall)),
                None => Err(released(order, now.status.as_str())),
            }
        }
    }
}

/// 409 `reservation_expired` for a paid order that could not be held: the exception recorded
/// and what was missing.
pub(super) fn expired_with(order: &str, exception_id: i64, shortfall: &[Shortfall]) -> DomainError {
    DomainError::conflict(
        "reservation_expired",
        messages::paid_not_held(order, exception_id),
        serde_json::json!({
            "order_id": order, "status": "EXPIRED", "exception_id": exception_id, "shortfall": shortfall,
        }),
    )
}

/// A goods line to take again, with its SKU's code and freeze.
#[derive(FromRow)]
struct LineAgain {
    #[sqlx(flatten)]
    line: Line,
    code: String,
    #[sqlx(rename = "frozen_finding_id")]
    frozen: Option<i64>,
}

/// Takes every line of an order that no longer holds them (`from`: EXPIRED or RELEASED) and
/// confirms it, marked as a late payment, in the caller's transaction. Goods go straight from
/// available to sold (the hold is over; a payment is in hand), first in the warehouse the line
/// was held in; codes are taken again and sold. Every line is tried, so a shortfall names all.
#[allow(clippy::too_many_arguments)]
pub async fn take_again(
    tx: &mut Transaction<'_, Any>,
    now: i64,
    actor: &Actor,
    merchant_id: MerchantId,
    header_id: i64,
    order: &str,
    payment_ref: Option<&str>,
    from: ReservationStatus,
    audit_action: &str,
) -> DomainResult<Retaken> {
    let moved = sqlx::query(
        "UPDATE reservations SET status = 'CONFIRMED', late_payment = 1, payment_ref = COALESCE($1, payment_ref),
            updated_at = $2
         WHERE id = $3 AND merchant_id = $4 AND status = $5",
    )
    .bind(payment_ref.map(str::to_string))
    .bind(now)
    .bind(header_id)
    .bind(merchant_id)
    .bind(from.as_str())
    .execute(&mut **tx)
    .await?;
    if moved.rows_affected() != 1 {
        return Ok(Retaken::Lost);
    }
    // In the caller's transaction: a shortfall rolls it back, and this event with it.
    crate::domain::trail::events::record(
        tx,
        now,
        merchant_id,
        crate::domain::trail::events::EventType::ReservationConfirmed,
        crate::domain::trail::events::Subject::new("reservation", order, None),
        serde_json::json!({"before": from.as_str(), "after": "CONFIRMED", "late_payment": true,
            "payment_ref": payment_ref}),
    )
    .await?;
    let again = Again {
        now,
        actor,
        merchant_id,
        header_id,
        order,
        from,
    };
    let mut taken = Taken::default();
    again.goods(tx, &mut taken).await?;
    again.codes(tx, &mut taken).await?;
    if !taken.short.is_empty() {
        return Ok(Retaken::Short(taken.short));
    }
    if let Some(short) = again.places(tx, &mut taken).await? {
        return Ok(Retaken::Short(vec![short]));
    }
    let detail = match payment_ref {
        Some(p) => format!("payment {p}; was {from}"),
        None => format!("was {from}"),
    };
    crate::domain::trail::audit::record(
        tx,
        now,
        actor,
        Some(merchant_id),
        audit_action,
        &format!("order:{order}"),
        &detail,
    )
    .await?;
    Ok(Retaken::Done(taken.subjects))
}

/// An order taken again after its hold ended: who pays, and which order, from which state.
struct Again<'a> {
    now: i64,
    actor: &'a Actor,
    merchant_id: MerchantId,
    header_id: i64,
    order: &'a str,
    from: ReservationStatus,
}

/// What taking again found: the lines short, and what the gate must hear of.
#[derive(Default)]
struct Taken {
    short: Vec<Shortfall>,
    subjects: Vec<Subject>,
}

impl Again<'_> {
    /// The goods lines: each sold again from a warehouse that has the units (the one it was
    /// held in first), or listed short.
    async fn goods(&self, tx: &mut Transaction<'_, Any>, taken: &mut Taken) -> DomainResult<()> {
        let stock_lines: Vec<LineAgain> = sqlx::query_as(
            "SELECT l.id, l.sku_id, l.warehouse_id, l.qty, l.hold, s.code, s.frozen_finding_id
             FROM stock_reservations l JOIN skus s ON s.id = l.sku_id
             WHERE l.reservation_id = $1 AND l.status = $2 ORDER BY l.id",
        )
        .bind(self.header_id)
        .bind(self.from.as_str())
        .fetch_all(&mut **tx)
        .await?;
        for line in stock_lines {
            self.goods_line(tx, line, taken).await?;
        }
        Ok(())
    }

    async fn goods_line(
        &self,
        tx: &mut Transaction<'_, Any>,
        LineAgain { line, code, frozen }: LineAgain,
        taken: &mut Taken,
    ) -> DomainResult<()> {
        let (now, merchant_id, order) = (self.now, self.merchant_id, self.order);
        let Line {
            id: line_id,
            sku_id,
            warehouse_id: held_in,
            qty,
            hold,
        } = line;
        if hold == LineHold::Unlimited {
            // Nothing to take again: the sale is written, as any unlimited sale.
            super::settle::sell_unlimited(tx, now, merchant_id, &line, order, &self.actor.label)
                .await?;
            sqlx::query(
                "UPDATE stock_reservations SET status = 'CONFIRMED', updated_at = $1 WHERE id = $2",
            )
            .bind(now)
            .bind(line_id)
            .execute(&mut **tx)
            .await?;
            return Ok(());
        }
        let mut candidates: Vec<i64> = sqlx::query_scalar(
            "SELECT b.warehouse_id FROM stock_balances b JOIN warehouses w ON w.id = b.warehouse_id
             WHERE b.sku_id = $1 AND b.total - b.locked - b.sold - b.frozen >= $2
             ORDER BY CASE WHEN b.warehouse_id = $3 THEN 0 ELSE 1 END, w.priority DESC, w.id",
        )
        .bind(sku_id)
        .bind(qty)
        .bind(held_in)
        .fetch_all(&mut **tx)
        .await?;
        if frozen.is_some() {
            // Reconciliation froze the SKU: nothing of it is sold until a person looks.
            candidates.clear();
        }
        for wh in candidates {
            let mv = Move {
                kind: "CONFIRM",
                qty,
                delta: Buckets {
                    sold: qty,
                    ..Default::default()
                },
                reason: "late payment",
                actor: &self.actor.label,
                order_id: Some(order),
                reason_code: None,
            };
            if stock::apply(tx, now, merchant_id, sku_id, wh, Guard::Available(qty), &mv)
                .await?
                .is_some()
            {
                sqlx::query(
                    "UPDATE stock_reservations SET status = 'CONFIRMED', warehouse_id = $1, updated_at = $2 WHERE id = $3",
                )
                .bind(wh)
                .bind(now)
                .bind(line_id)
                .execute(&mut **tx)
                .await?;
                taken.subjects.push(Subject::Stock(sku_id));
                return Ok(());
            }
        }
        let available: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(total - locked - sold - frozen) FROM stock_balances WHERE sku_id = $1",
        )
        .bind(sku_id)
        .fetch_one(&mut **tx)
        .await?;
        taken.short.push(Shortfall {
            sku: code,
            qty,
            available: if frozen.is_some() {
                0
            } else {
                available.unwrap_or(0).max(0)
            },
        });
        Ok(())
    }

    /// The code lines: codes taken again and sold, or the line listed short.
    async fn codes(&self, tx: &mut Transaction<'_, Any>, taken: &mut Taken) -> DomainResult<()> {
        let (now, header_id) = (self.now, self.header_id);
        let code_lines: Vec<(i64, i64, String)> = sqlx::query_as(
            "SELECT l.sku_id, l.qty, s.code FROM code_reservations l JOIN skus s ON s.id = l.sku_id
             WHERE l.reservation_id = $1 AND l.status = $2 ORDER BY l.id",
        )
        .bind(header_id)
        .bind(self.from.as_str())
        .fetch_all(&mut **tx)
        .await?;
        for (sku_id, qty, code) in code_lines {
            let (held, _) = take_codes(tx, header_id, self.order, sku_id, qty, now, &[]).await?;
            if held < qty {
                taken.short.push(Shortfall {
                    sku: code,
                    qty,
                    available: held,
                });
                continue;
            }
            crate::domain::codes::code::sell_held(tx, now, header_id, Some(sku_id)).await?;
            sqlx::query("UPDATE code_reservations SET status = 'CONFIRMED' WHERE reservation_id = $1 AND sku_id = $2")
                .bind(header_id)
                .bind(sku_id)
                .execute(&mut **tx)
                .await?;
            taken.subjects.push(Subject::Codes(sku_id));
        }
        Ok(())
    }

    /// Places last, each booked again for the same customer in the same slot; the first that
    /// cannot be ends the try (a refused insert has aborted the transaction on PostgreSQL).
    async fn places(
        &self,
        tx: &mut Transaction<'_, Any>,
        taken: &mut Taken,
    ) -> DomainResult<Option<Shortfall>> {
        let cancelled: Vec<(i64, String, String, String, String, i64)> = sqlx::query_as(
            "SELECT b.slot_id, b.customer_name, b.customer_phone, b.customer_key, k.code, b.places FROM bookings b
             JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id
             WHERE b.reservation_id = $1 AND b.status = 'CANCELLED' ORDER BY b.id",
        )
        .bind(self.header_id)
        .fetch_all(&mut **tx)
        .await?;
        let mut again: Vec<(i64, String, String, String, String, i64)> = Vec::new();
        for c in cancelled {
            again.retain(|a| a.0 != c.0);
            again.push(c);
        }
        for (slot_id, name, phone_shown, customer_key, sku, places) in again {
            let place = crate::domain::slots::booking::OrderPlace {
                slot_id,
                places,
                name,
                phone_shown,
                customer_key,
            };
            let booked = crate::domain::slots::booking::book_for_order(
                tx,
                self.actor,
                self.merchant_id,
                self.header_id,
                &place,
                self.now,
            )
            .await?;
            if booked.is_err() {
                return Ok(Some(Shortfall {
                    sku,
                    qty: places,
                    available: 0,
                }));
            }
            taken.subjects.push(Subject::Slot {
                merchant: self.merchant_id.0,
                slot: slot_id,
            });
        }
        Ok(None)
    }
}
