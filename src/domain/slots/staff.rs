//! A store's staff members: who a schedule rule, a slot or a closure is about.

use crate::domain::{MerchantId, StoreId};
use serde::Serialize;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, NAME_MAX};
use crate::domain::{tenancy::tenants, Actor, DomainError, Scope};
use crate::infra::db::Db;
use crate::messages;

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Staff {
    pub id: i64,
    pub store_id: StoreId,
    pub name: String,
}

/// A staff member as the staff page lists them, archived ones included.
#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Member {
    pub id: i64,
    pub name: String,
    pub active: i64,
}

/// Everyone of a store, the working first.
pub async fn members_of_store(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
) -> DomainResult<Vec<Member>> {
    Ok(sqlx::query_as(
        "SELECT id, name, CAST(active AS BIGINT) AS active FROM staff WHERE merchant_id = $1 AND store_id = $2
         ORDER BY active DESC, name",
    )
    .bind(merchant_id)
    .bind(store_id)
    .fetch_all(&db.pool)
    .await?)
}

/// Renames a staff member: their slots, rules and history follow (they hold the id).
pub async fn rename(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    name: &str,
) -> DomainResult<Staff> {
    let name = validate::name("name", name, NAME_MAX).map_err(|e| DomainError::Invalid(vec![e]))?;
    let before = staff_by_id(db, merchant_id, id).await?;
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE staff SET name = $1 WHERE id = $2 AND merchant_id = $3")
        .bind(&name)
        .bind(id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await
        .map_err(crate::domain::kernel::error::unique_as(
            "name",
            "duplicate_staff",
            || messages::duplicate_staff(&name),
        ))?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "staff.rename",
        &format!("staff:{id}"),
        &format!("{} → {name}", before.name),
    )
    .await?;
    // A verdict names the person of the closures over a service's coming slots (its next
    // slots, with their staff, are read live by each page, never kept): each such service's SKU
    // is told, as an edit of the SKU would be.
    let services: Vec<(i64, String)> = sqlx::query_as(
        "SELECT DISTINCT k.id, k.code FROM slots s JOIN skus k ON k.id = s.sku_id
         JOIN closures c ON c.id = s.closure_id
         WHERE s.starts_at > $1 AND c.staff_id = $2 ORDER BY k.id",
    )
    .bind(db.now_ms())
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    for (sku_id, code) in services {
        crate::domain::trail::events::record(
            &mut tx,
            db.now_ms(),
            merchant_id,
            crate::domain::trail::events::EventType::SkuUpdated,
            crate::domain::trail::events::Subject::new("sku", sku_id, Some(sku_id)),
            serde_json::json!({ "sku": code, "changed": "staff", "staff": name }),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Staff { name, ..before })
}

/// Archives a staff member (they keep their history and take no new slots) or brings them back.
/// Refused while the weekly schedule names them or slots of theirs are still to come
/// (`staff_still_scheduled`): those are moved or closed first, so nothing is left without them.
pub async fn set_archived(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    archived: bool,
) -> DomainResult<Staff> {
    let member = staff_by_id(db, merchant_id, id).await?;
    let mut tx = db.begin_write().await?;
    // The row's lock before the count: new work for this person (see `lock_active`) waits for
    // this transaction, or this count waits for theirs and sees it.
    sqlx::query("UPDATE staff SET version = version + 1 WHERE id = $1 AND merchant_id = $2")
        .bind(id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await?;
    if archived {
        // Date overrides that still give them hours count as rules: they make slots later.
        let today = db.clock.now().format("%Y-%m-%d").to_string();
        let (rules, slots): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM schedule_rules WHERE staff_id = $1)
                    + (SELECT COUNT(*) FROM schedule_overrides WHERE staff_id = $1 AND opens_min IS NOT NULL AND on_date >= $3),
                    (SELECT COUNT(*) FROM slots WHERE staff_id = $1 AND status = 'OPEN' AND starts_at > $2)",
        )
        .bind(id)
        .bind(db.now_ms())
        .bind(today)
        .fetch_one(&mut *tx)
        .await?;
        if rules + slots > 0 {
            return Err(DomainError::conflict(
                "staff_still_scheduled",
                messages::staff_still_scheduled(&member.name, rules, slots),
                serde_json::json!({ "rules": rules, "slots": slots }),
            ));
        }
    }
    sqlx::query("UPDATE staff SET active = $1 WHERE id = $2 AND merchant_id = $3")
        .bind(if archived { 0i16 } else { 1i16 })
        .bind(id)
        .bind(merchant_id)
        .execute(&mut *tx)
        .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        if archived {
            "staff.archive"
        } else {
            "staff.restore"
        },
        &format!("staff:{id}"),
        &member.name,
    )
    .await?;
    tx.commit().await?;
    Ok(member)
}

/// Takes a staff member's row lock for the transaction (PostgreSQL; SQLite runs one writer at a
/// time anyway) and says whether they are still active. Whatever gives someone new work (a rule,
/// a slot) calls it inside its transaction, and archiving takes the same lock before it counts
/// their work: the two cannot pass each other, one waits and then sees what the other did.
pub(crate) async fn lock_active(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    staff_id: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("UPDATE staff SET version = version + 1 WHERE id = $1 AND active = 1")
        .bind(staff_id)
        .execute(&mut **tx)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// The refusal of new work for a member archived since it was asked for.
pub(crate) fn archived_meanwhile(name: &str) -> DomainError {
    DomainError::conflict(
        "staff_archived",
        messages::staff_archived_meanwhile(name),
        serde_json::json!({ "staff": name }),
    )
}

pub async fn add_staff(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    store_id: StoreId,
    name: &str,
) -> DomainResult<Staff> {
    let name = validate::name("name", name, NAME_MAX).map_err(|e| DomainError::Invalid(vec![e]))?;
    let store = tenants::store_by_id(db, Scope::Merchant(merchant_id), store_id).await?;
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar("INSERT INTO staff (merchant_id, store_id, name, created_at) VALUES ($1, $2, $3, $4) RETURNING id")
        .bind(merchant_id)
        .bind(store.id)
        .bind(&name)
        .bind(db.now_ms())
        .fetch_one(&mut *tx)
        .await
        .map_err(crate::domain::kernel::error::unique_as("name", "duplicate_staff", || {
            messages::duplicate_staff(&name)
        }))?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "staff.create",
        &format!("staff:{id}"),
        &name,
    )
    .await?;
    tx.commit().await?;
    Ok(Staff {
        id,
        store_id: store.id,
        name,
    })
}

pub async fn staff_of_store(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
) -> DomainResult<Vec<Staff>> {
    Ok(sqlx::query_as("SELECT id, store_id, name FROM staff WHERE merchant_id = $1 AND store_id = $2 AND active = 1 ORDER BY name")
        .bind(merchant_id)
        .bind(store_id)
        .fetch_all(&db.pool)
        .await?)
}

pub async fn staff_by_name(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
    name: &str,
) -> DomainResult<Option<Staff>> {
    // Archived members take no new rules or slots: they are not found by name.
    Ok(sqlx::query_as("SELECT id, store_id, name FROM staff WHERE merchant_id = $1 AND store_id = $2 AND name = $3 AND active = 1")
        .bind(merchant_id)
        .bind(store_id)
        .bind(name.trim())
        .fetch_optional(&db.pool)
        .await?)
}

pub async fn staff_by_id(db: &Db, merchant_id: MerchantId, id: i64) -> DomainResult<Staff> {
    sqlx::query_as("SELECT id, store_id, name FROM staff WHERE merchant_id = $1 AND id = $2")
        .bind(merchant_id)
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .ok_or(DomainError::NotFound("staff member"))
}
