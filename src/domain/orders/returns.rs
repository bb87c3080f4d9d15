//! Returns after a sale: the goods restocked or written off, once per order line.

use super::*;
use crate::domain::MerchantId;

#[derive(Debug, Clone)]
pub struct ReturnInput {
    pub return_id: String,
    pub order_id: String,
    pub sku: String,
    pub qty: i64,
    pub condition: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct ReturnView {
    pub return_id: String,
    pub order_id: String,
    pub sku: String,
    pub qty: i64,
    pub condition: String,
    pub warehouse: String,
}

pub const CONDITIONS: [&str; 2] = ["RESELLABLE", "DAMAGED"];

/// Goods came back. RESELLABLE units return to total (sold stays, so sales figures stay true);
/// DAMAGED ones are recorded and make nothing sellable. Idempotent by return id.
#[tracing::instrument(skip_all, fields(merchant_id = ?merchant_id))]
pub async fn record_return(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: ReturnInput,
) -> DomainResult<ReturnView> {
    let Checked {
        return_id,
        order,
        condition,
        sku,
    } = check(db, merchant_id, &input).await?;
    let fp = format!("{order}|{}|{}|{condition}", sku.code, input.qty);
    let q = input.qty;

    let mut tx = db.begin_write().await?;
    if stock::claim_key(&mut tx, db.now_ms(), merchant_id, "return", &return_id, &fp)
        .await?
        .is_some()
    {
        tx.rollback().await?;
        return stock::replay_answer(db, merchant_id, "return", &return_id, &fp, ())
            .await
            .map_err(|e| match e {
                DomainError::Conflict {
                    code: "idempotency_conflict",
                    ..
                } => DomainError::conflict(
                    "return_conflict",
                    messages::return_conflict(&return_id),
                    serde_json::json!({ "return_id": return_id }),
                ),
                other => other,
            });
    }
    let (warehouse_id, warehouse) =
        match count_returned(&mut tx, db, merchant_id, (&order, &sku.code, sku.id), q).await {
            Ok(line) => line,
            Err(e) => {
                tx.rollback().await?;
                return Err(e);
            }
        };
    let (kind, delta) = if condition == "RESELLABLE" {
        (
            "RETURN_RESTOCK",
            Buckets {
                total: q,
                ..Default::default()
            },
        )
    } else {
        ("RETURN_DAMAGED", Buckets::default())
    };
    let reason = format!("return {return_id}");
    let mv = Move {
        kind,
        qty: q,
        delta,
        reason: &reason,
        actor: &actor.label,
        order_id: Some(&order),
        reason_code: None,
    };
    stock::apply(
        &mut tx,
        db.now_ms(),
        merchant_id,
        sku.id,
        warehouse_id,
        Guard::None,
        &mv,
    )
    .await?;
    let sku_id_of_return = sku.id;
    let answer = ReturnView {
        return_id: return_id.clone(),
        order_id: order,
        sku: sku.code,
        qty: q,
        condition: condition.to_string(),
        warehouse,
    };
    stock::store_answer(&mut tx, merchant_id, "return", &return_id, &answer).await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "stock.return",
        &format!("sku:{}", answer.sku),
        &format!(
            "{q} {condition} @ {} — order {} ({reason})",
            answer.warehouse, answer.order_id
        ),
    )
    .await?;
    tx.commit().await?;
    db.forget([Subject::Stock(sku_id_of_return)]).await;
    Ok(answer)
}

/// A return's input once every field parsed.
struct Checked {
    return_id: String,
    order: String,
    condition: &'static str,
    sku: crate::domain::catalog::Sku,
}

/// Checks every field at once: a refusal lists all that failed. A voucher is not returnable
/// (its code was handed out).
async fn check(db: &Db, merchant_id: MerchantId, input: &ReturnInput) -> DomainResult<Checked> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
    let return_id = stock::idempotency_key(&input.return_id)
        .map(str::to_string)
        .map_err(|mut e| {
            e.field = "return_id".into();
            errs.push(e)
        })
        .ok();
    let order = errs.take(order_id(&input.order_id));
    if let Err(e) = stock::qty("qty", input.qty) {
        errs.push(e);
    }
    let condition = errs.take(crate::domain::kernel::validate::choice(
        "condition",
        &input.condition,
        &CONDITIONS,
    ));
    let sku = match crate::domain::catalog::sku_by_code(db, merchant_id, &input.sku).await {
        Ok(s) if s.unit_type == UnitType::Code => {
            errs.push(FieldError::new(
                "sku",
                "code_not_returnable",
                messages::code_not_returnable(&s.code),
            ));
            None
        }
        _ => match stock::goods_sku(db, merchant_id, &input.sku, "sku").await {
            Ok(s) => Some(s),
            Err(DomainError::Invalid(mut v)) => {
                errs.append(&mut v);
                None
            }
            Err(e) => return Err(e),
        },
    };
    // Every field that failed left its error and a None: go on only when all parsed.
    let (Some(return_id), Some(order), Some(condition), Some(sku), true) =
        (return_id, order, condition, sku, errs.is_empty())
    else {
        return Err(errs.refusal());
    };
    Ok(Checked {
        return_id,
        order,
        condition,
        sku,
    })
}

/// Counts `q` units of the order's line of the SKU as returned, at most what was bought: the
/// line's warehouse (id and slug). Refusals: the order unknown, the SKU not in it, the order
/// not paid, more than is left to return. The caller rolls back on a refusal.
async fn count_returned(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    db: &Db,
    merchant_id: MerchantId,
    (order, sku_code, sku_id): (&str, &str, i64),
    q: i64,
) -> DomainResult<(i64, String)> {
    let line: Option<(i64, i64, String, String)> = sqlx::query_as(
        "SELECT l.id, l.warehouse_id, w.slug, r.status FROM reservations r
         JOIN stock_reservations l ON l.reservation_id = r.id JOIN warehouses w ON w.id = l.warehouse_id
         WHERE r.merchant_id = $1 AND r.order_id = $2 AND l.sku_id = $3",
    )
    .bind(merchant_id)
    .bind(order)
    .bind(sku_id)
    .fetch_optional(&mut **tx)
    .await?;
    let Some((line_id, warehouse_id, warehouse, status)) = line else {
        return match header(db, merchant_id, order).await? {
            None => Err(DomainError::NotFound("order")),
            Some(_) => Err(DomainError::conflict(
                "sku_not_in_order",
                messages::sku_not_in_order(sku_code, order),
                serde_json::json!({ "order_id": order, "sku": sku_code }),
            )),
        };
    };
    if ReservationStatus::parse(&status) != Some(ReservationStatus::Confirmed) {
        return Err(DomainError::conflict(
            "order_not_confirmed",
            messages::order_not_confirmed(order),
            serde_json::json!({ "order_id": order, "status": status }),
        ));
    }
    let counted = sqlx::query("UPDATE stock_reservations SET returned = returned + $1, updated_at = $2 WHERE id = $3 AND returned + $1 <= qty")
        .bind(q)
        .bind(db.now_ms())
        .bind(line_id)
        .execute(&mut **tx)
        .await?;
    if counted.rows_affected() != 1 {
        let (bought, returned): (i64, i64) =
            sqlx::query_as("SELECT qty, returned FROM stock_reservations WHERE id = $1")
                .bind(line_id)
                .fetch_one(&mut **tx)
                .await?;
        return Err(DomainError::conflict(
            "return_exceeds_order",
            messages::return_exceeds_order(bought - returned),
            serde_json::json!({ "order_id": order, "sku": sku_code, "returnable": bought - returned }),
        ));
    }
    Ok((warehouse_id, warehouse))
}
