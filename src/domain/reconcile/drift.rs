//! Redis against SQL, kept counts against the codes, listed holds against frozen units: drift that
//! is repaired and recorded, never left.

#[allow(unused_imports)]
use super::*;

/// Compares every loaded Redis key with SQL; repairs what still differs on a second look.
pub(super) async fn redis_drift(db: &Db, run_id: i64) -> DomainResult<Vec<Finding>> {
    let Some(g) = gate::active(db) else {
        return Ok(Vec::new());
    };
    let Ok(subjects) = g.loaded_subjects().await else {
        return Ok(Vec::new());
    };
    let mut repaired = Vec::new();
    // Every loaded key, in a changed-only run too: Redis can drift with no SQL change behind it
    // (an instance killed between its Redis hold and its commit leaves a hold no event names).
    // The cost follows the keys loaded (recently active SKUs and slots), not the history.
    for s in subjects {
        let Some(g) = gate::active(db) else { break };
        match s {
            Subject::Stock(sku) => {
                let Some(first) = stock_drift(db, sku).await? else {
                    continue;
                };
                tokio::time::sleep(Duration::from_millis(150)).await;
                let Some(second) = stock_drift(db, sku).await? else {
                    continue;
                };
                for (wh, d) in second {
                    if first.get(&wh) != Some(&d) {
                        continue;
                    }
                    // Warehouse 0: the warehouse list itself differs.
                    let shifted = if wh == 0 {
                        Ok(false)
                    } else {
                        g.stock_fix(sku, wh, d).await
                    };
                    match shifted {
                        // The list differs, or a warehouse's counter is gone (evicted: shifting
                        // a missing key moves nothing): load the SKU afresh.
                        Ok(false) => g.forget(s).await,
                        Ok(true) => {}
                        Err(_) => continue,
                    }
                    let merchant = merchant_of_sku(db, sku).await?;
                    repaired.push(
                        record_drift(
                            db,
                            run_id,
                            merchant,
                            &format!("sku:{sku} warehouse:{wh}"),
                            Some(sku),
                            &format!(
                                "available/locked/sold shifted by {}/{}/{}",
                                d.available, d.locked, d.sold
                            ),
                        )
                        .await?,
                    );
                }
            }
            Subject::Slot { merchant, slot } => {
                let Some(first) = slot_drift(db, MerchantId(merchant), slot).await? else {
                    continue;
                };
                tokio::time::sleep(Duration::from_millis(150)).await;
                let Some(second) = slot_drift(db, MerchantId(merchant), slot).await? else {
                    continue;
                };
                if first != second {
                    continue;
                }
                let (delta, status, reason) = second;
                if g.slot_fix(merchant, slot, delta, &status, &reason)
                    .await
                    .is_err()
                {
                    continue;
                }
                repaired.push(
                    record_drift(
                        db,
                        run_id,
                        MerchantId(merchant),
                        &format!("slot:{slot}"),
                        None,
                        &format!("remaining shifted by {delta}, status {status}"),
                    )
                    .await?,
                );
            }
            Subject::Codes(sku) => {
                let Some((stale1, missing1)) = code_drift(db, sku).await? else {
                    continue;
                };
                tokio::time::sleep(Duration::from_millis(150)).await;
                let Some((stale2, missing2)) = code_drift(db, sku).await? else {
                    continue;
                };
                let stale: Vec<i64> = stale2.into_iter().filter(|i| stale1.contains(i)).collect();
                let missing: Vec<i64> = missing2
                    .into_iter()
                    .filter(|i| missing1.contains(i))
                    .collect();
                if stale.is_empty() && missing.is_empty() {
                    continue;
                }
                // A pool not loaded (or lost) was left for its next load: nothing was repaired.
                if !matches!(g.code_pool_fix(sku, &stale, &missing).await, Ok(true)) {
                    continue;
                }
                let merchant = merchant_of_sku(db, sku).await?;
                repaired.push(
                    record_drift(
                        db,
                        run_id,
                        merchant,
                        &format!("sku:{sku} code pool"),
                        Some(sku),
                        &format!(
                            "{} stale ids removed, {} missing ids added",
                            stale.len(),
                            missing.len()
                        ),
                    )
                    .await?,
                );
            }
        }
    }
    Ok(repaired)
}

pub(super) async fn merchant_of_sku(db: &Db, sku: i64) -> DomainResult<MerchantId> {
    Ok(
        sqlx::query_scalar("SELECT merchant_id FROM skus WHERE id = $1")
            .bind(sku)
            .fetch_one(&db.pool)
            .await?,
    )
}

/// Per warehouse, SQL minus Redis (only where they differ). Warehouse 0 stands for "the
/// warehouse list differs". None when the SKU is not loaded.
pub(super) async fn stock_drift(
    db: &Db,
    sku: i64,
) -> DomainResult<Option<BTreeMap<i64, StockCounts>>> {
    let Some(g) = gate::active(db) else {
        return Ok(None);
    };
    let Ok(Some(redis)) = g.stock_counts(sku).await else {
        return Ok(None);
    };
    let sql = gate::stock_rows(db, sku).await?;
    let mut out = BTreeMap::new();
    let redis_whs: Vec<i64> = redis.iter().map(|(w, _)| *w).collect();
    let sql_whs: Vec<i64> = sql.iter().map(|(w, _)| *w).collect();
    if redis_whs != sql_whs {
        out.insert(0, StockCounts::default());
        return Ok(Some(out));
    }
    for ((w, r), (_, s)) in redis.iter().zip(sql.iter()) {
        let d = StockCounts {
            available: s.available - r.available,
            locked: s.locked - r.locked,
            sold: s.sold - r.sold,
        };
        if d != StockCounts::default() {
            out.insert(*w, d);
        }
    }
    Ok(Some(out))
}

/// (remaining delta, SQL status, reason) when Redis and SQL differ for a slot.
pub(super) async fn slot_drift(
    db: &Db,
    merchant: MerchantId,
    slot: i64,
) -> DomainResult<Option<(i64, String, String)>> {
    let Some(g) = gate::active(db) else {
        return Ok(None);
    };
    let Ok(Some((r, st))) = g.slot_read(merchant.0, slot).await else {
        return Ok(None);
    };
    let Some(row) = gate::slot_row(db, merchant, slot).await? else {
        return Ok(None);
    };
    let (status, remaining) = (row.gate_status(), row.remaining());
    if remaining == r && status == st {
        return Ok(None);
    }
    Ok(Some((
        remaining - r,
        status,
        row.closed_reason.unwrap_or_default(),
    )))
}

/// (ids in the pool SQL cannot sell, sellable ids missing from a pool that claims to hold them all).
pub(super) async fn code_drift(db: &Db, sku: i64) -> DomainResult<Option<(Vec<i64>, Vec<i64>)>> {
    let Some(g) = gate::active(db) else {
        return Ok(None);
    };
    let Ok(Some((pool, more))) = g.code_pool(sku).await else {
        return Ok(None);
    };
    let cursor = g.code_cursor(sku).await.ok().flatten().unwrap_or(0);
    let sellable: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT id FROM codes WHERE sku_id = $1 AND {} AND id <= $3 ORDER BY id LIMIT 200000",
        crate::domain::codes::SELLABLE
    ))
    .bind(sku)
    .bind(db.now_ms())
    .bind(if more { cursor } else { i64::MAX })
    .fetch_all(&db.pool)
    .await?;
    let sellable_set: HashSet<i64> = sellable.iter().copied().collect();
    let pool_set: HashSet<i64> = pool.iter().copied().collect();
    let stale: Vec<i64> = pool
        .into_iter()
        .filter(|i| !sellable_set.contains(i))
        .collect();
    let missing: Vec<i64> = sellable
        .into_iter()
        .filter(|i| !pool_set.contains(i))
        .collect();
    Ok(Some((stale, missing)))
}

/// Recounts the codes of every batch by status against the kept counts (`code_counts`), and
/// repairs what differs. The recount is one statement, so a sale committing meanwhile is in both
/// sides or in neither: a difference is real, not a race.
pub(super) async fn code_count_drift(
    db: &Db,
    run_id: i64,
    reach: &Reach,
) -> DomainResult<Vec<Finding>> {
    let mut repaired = Vec::new();
    for d in crate::domain::codes::counts::repair_drift(db, reach.skus()).await? {
        let subject = format!("batch:{} status:{}", d.batch_id, d.status);
        let what = format!("kept {}, codes {}", d.kept, d.actual);
        repaired.push(
            record_repair(
                db,
                run_id,
                FindingKind::CodeCountDrift,
                d.merchant_id,
                &subject,
                Some(d.sku_id),
                "kept = codes",
                &what,
            )
            .await?,
        );
    }
    Ok(repaired)
}

/// Holds that do not add up to their frozen units, made to (frozen is the authority: it is
/// what sales subtract). Each pair is checked again inside the transaction that repairs it,
/// after its balance row is locked, so a hold placed meanwhile is no drift.
pub(super) async fn hold_drift(db: &Db, run_id: i64, reach: &Reach) -> DomainResult<Vec<Finding>> {
    let mut repaired = Vec::new();
    for (sku, wh, _, _) in
        crate::domain::stock::holds::mismatches_in(db, Scope::All, reach.skus()).await?
    {
        let merchant = merchant_of_sku(db, sku).await?;
        let mut tx = db.begin_write().await?;
        crate::domain::stock::lock_balance(&mut tx, sku, wh).await?;
        let settled = crate::domain::stock::holds::settle(
            &mut tx,
            db.now_ms(),
            (merchant, sku, wh),
            "system:reconcile",
        )
        .await?;
        tx.commit().await?;
        if let Some((held, frozen)) = settled {
            tracing::warn!(
                sku,
                warehouse = wh,
                held,
                frozen,
                "reconciliation: holds did not add up to frozen units, repaired"
            );
            repaired.push(
                record_repair(
                    db,
                    run_id,
                    FindingKind::HoldDrift,
                    merchant,
                    &format!("sku:{sku} warehouse:{wh}"),
                    Some(sku),
                    &format!("held {frozen}"),
                    &format!("held {held}"),
                )
                .await?,
            );
        }
    }
    Ok(repaired)
}

pub(super) async fn record_drift(
    db: &Db,
    run_id: i64,
    merchant: MerchantId,
    subject: &str,
    sku: Option<i64>,
    what: &str,
) -> DomainResult<Finding> {
    let f = record_repair(
        db,
        run_id,
        FindingKind::RedisDrift,
        merchant,
        subject,
        sku,
        "Redis = SQL",
        what,
    )
    .await?;
    tracing::warn!(subject, what, "reconciliation: Redis drift repaired");
    metrics::counter!("sellable_reconcile_drift_total", "result" => "found").increment(1);
    metrics::counter!("sellable_reconcile_drift_total", "result" => "repaired").increment(1);
    Ok(f)
}

/// A drift found and repaired: a finding resolved at once, and its alert.
#[allow(clippy::too_many_arguments)]
pub(super) async fn record_repair(
    db: &Db,
    run_id: i64,
    kind: FindingKind,
    merchant: MerchantId,
    subject: &str,
    sku: Option<i64>,
    expected: &str,
    what: &str,
) -> DomainResult<Finding> {
    let now = db.now_ms();
    let slot: Option<i64> = subject.strip_prefix("slot:").and_then(|s| s.parse().ok());
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO reconcile_findings (run_id, merchant_id, kind, subject, sku_id, slot_id, expected, found, action, status, created_at, resolved_at, resolved_by, resolution)
         VALUES ($1, $2, $3, $4, $5, $9, $10, $6, 'repaired', 'RESOLVED', $7, $7, 'reconciliation', $8) RETURNING id",
    )
    .bind(run_id)
    .bind(merchant)
    .bind(kind.as_str())
    .bind(subject)
    .bind(sku)
    .bind(what)
    .bind(now)
    .bind(match kind {
        FindingKind::CodeCountDrift => messages::count_repaired(),
        FindingKind::HoldDrift => messages::holds_repaired(),
        _ => messages::drift_repaired(),
    })
    .bind(slot)
    .bind(expected)
    .fetch_one(&mut *tx)
    .await?;
    finding_event(
        &mut tx,
        db.now_ms(),
        merchant,
        match kind {
            FindingKind::CodeCountDrift => {
                crate::domain::trail::events::EventType::ReconcileCountDrift
            }
            FindingKind::HoldDrift => crate::domain::trail::events::EventType::ReconcileHoldDrift,
            _ => crate::domain::trail::events::EventType::ReconcileRedisDrift,
        },
        id,
        sku,
        slot,
        serde_json::json!({"kind": kind.as_str(), "subject": subject,
            "found": what, "action": "repaired"}),
    )
    .await?;
    tx.commit().await?;
    finding(db, Scope::All, id).await
}
