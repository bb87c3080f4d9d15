//! A store's staff members: who a schedule rule, a slot or a closure is about.

use crate::domain::{MerchantId, StoreId};
use serde::Serialize;
use sqlx::FromRow;

use super::error::DomainResult;
use super::validate::{self, NAME_MAX};
use super::{tenants, Actor, DomainError, Scope};
use crate::infra::db::{now_ms, Db};
use crate::messages;

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Staff {
    pub id: i64,
    pub store_id: StoreId,
    pub name: String,
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
        .bind(now_ms())
        .fetch_one(&mut *tx)
        .await
        .map_err(super::error::unique_as("name", "duplicate_staff", || {
            messages::duplicate_staff(&name)
        }))?;
    super::audit::record(
        &mut tx,
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
    Ok(sqlx::query_as("SELECT id, store_id, name FROM staff WHERE merchant_id = $1 AND store_id = $2 AND name = $3")
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
