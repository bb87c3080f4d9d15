//! API keys for order systems: shown once, stored as a SHA-256 hash, scoped to one merchant.
//! A key has 190 bits of randomness, so a fast hash is enough (unlike passwords, nothing to brute-force).

use crate::domain::MerchantId;
use rand::distr::{Alphanumeric, SampleString};
use sha2::{Digest, Sha256};
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::{self, NAME_MAX};
use crate::domain::{Actor, DomainError, FieldError};
use crate::infra::db::Db;

/// API keys by hash, kept ten seconds beside the pool (`infra::ext`). A revoke clears this
/// instance's entries at once; other instances notice within ten seconds.
struct KeyCache(crate::infra::cache::TtlCache<[u8; 32], KeyOwner>);

impl Default for KeyCache {
    fn default() -> KeyCache {
        KeyCache(crate::infra::cache::TtlCache::new(
            std::time::Duration::from_secs(10),
        ))
    }
}

fn key_cache(db: &Db) -> std::sync::Arc<KeyCache> {
    db.ext.get::<KeyCache>()
}

const KEY_PREFIX: &str = "sk_";

#[derive(Debug, Clone, FromRow)]
pub struct ApiKey {
    pub id: i64,
    pub name: String,
    pub prefix: String,
    pub created_by: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// Requests per second on each instance; `None`: the instance's default; 0: unlimited.
    pub rate_per_second: Option<i64>,
}

/// The merchant a valid key acts for.
#[derive(Debug, Clone)]
pub struct KeyOwner {
    pub key_id: i64,
    pub merchant_id: MerchantId,
    pub name: String,
    /// The key's own rate (`None`: the instance's default; 0: unlimited).
    pub rate_per_second: Option<i64>,
}

/// The highest rate a key can be given, per second.
pub const RATE_MAX: i64 = 1_000_000;

/// A key's rate as typed: a whole number from 0 (unlimited) to `RATE_MAX`, or nothing (the
/// instance's default).
pub fn rate(field: &str, raw: Option<i64>) -> Result<Option<i64>, FieldError> {
    match raw {
        None => Ok(None),
        Some(n) if (0..=RATE_MAX).contains(&n) => Ok(Some(n)),
        Some(_) => Err(FieldError::new(
            field,
            "invalid_number",
            crate::messages::bad_rate(0, RATE_MAX),
        )),
    }
}

fn hash(key: &str) -> String {
    hex::encode(digest(key))
}

/// The key's SHA-256: the stored hash is its hex form; the hot path's cache is keyed by the raw
/// bytes, because turning them into hex cost as much as hashing on every authenticated call.
fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Creates a key and returns (id, plaintext). The plaintext is never stored.
pub async fn create(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    name: &str,
    rate_per_second: Option<i64>,
) -> DomainResult<(i64, String)> {
    let name = validate::name("name", name, NAME_MAX).map_err(|e| DomainError::Invalid(vec![e]))?;
    let rate_per_second =
        rate("rate_per_second", rate_per_second).map_err(|e| DomainError::Invalid(vec![e]))?;
    let secret = format!(
        "{KEY_PREFIX}{}",
        Alphanumeric.sample_string(&mut rand::rng(), 32)
    );
    let prefix = secret[..KEY_PREFIX.len() + 6].to_string();
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO api_keys (merchant_id, name, prefix, key_hash, created_by, created_at, rate_per_second)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(merchant_id)
    .bind(&name)
    .bind(&prefix)
    .bind(hash(&secret))
    .bind(&actor.label)
    .bind(db.now_ms())
    .bind(rate_per_second)
    .fetch_one(&mut *tx)
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "apikey.create",
        &format!("apikey:{id}"),
        &name,
    )
    .await?;
    tx.commit().await?;
    Ok((id, secret))
}

pub async fn list(db: &Db, merchant_id: MerchantId) -> DomainResult<Vec<ApiKey>> {
    Ok(sqlx::query_as(
        "SELECT id, name, prefix, created_by, created_at, last_used_at, revoked_at, rate_per_second FROM api_keys
         WHERE merchant_id = $1 ORDER BY revoked_at IS NOT NULL, id DESC",
    )
    .bind(merchant_id)
    .fetch_all(&db.pool)
    .await?)
}

/// Revokes a key of the merchant. Revoking twice is harmless; another merchant's key is "not found".
pub async fn revoke(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
) -> DomainResult<ApiKey> {
    let mut tx = db.begin_write().await?;
    let key: ApiKey = sqlx::query_as(
        "SELECT id, name, prefix, created_by, created_at, last_used_at, revoked_at, rate_per_second FROM api_keys
         WHERE id = $1 AND merchant_id = $2",
    )
    .bind(id)
    .bind(merchant_id)
    .fetch_optional(&mut *tx)
    .await?
    .ok_or(DomainError::NotFound("API key"))?;
    let r = sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(db.now_ms())
        .bind(id)
        .execute(&mut *tx)
        .await?;
    if r.rows_affected() == 1 {
        crate::domain::trail::audit::record(
            &mut tx,
            db.now_ms(),
            actor,
            Some(merchant_id),
            "apikey.revoke",
            &format!("apikey:{id}"),
            &key.name,
        )
        .await?;
    }
    tx.commit().await?;
    key_cache(db).0.clear();
    Ok(key)
}

/// Sets how many requests per second a key may make (`None`: the instance's default; 0:
/// unlimited). Takes effect on each instance at its next call with the key.
pub async fn set_rate(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    rate_per_second: Option<i64>,
) -> DomainResult<ApiKey> {
    let rate_per_second =
        rate("rate_per_second", rate_per_second).map_err(|e| DomainError::Invalid(vec![e]))?;
    let mut tx = db.begin_write().await?;
    let r = sqlx::query(
        "UPDATE api_keys SET rate_per_second = $1 WHERE id = $2 AND merchant_id = $3 AND revoked_at IS NULL",
    )
    .bind(rate_per_second)
    .bind(id)
    .bind(merchant_id)
    .execute(&mut *tx)
    .await?;
    if r.rows_affected() != 1 {
        return Err(DomainError::NotFound("API key"));
    }
    let key: ApiKey = sqlx::query_as(
        "SELECT id, name, prefix, created_by, created_at, last_used_at, revoked_at, rate_per_second
         FROM api_keys WHERE id = $1",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?;
    let said = rate_per_second.map_or_else(|| "default".to_string(), |n| n.to_string());
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "apikey.rate",
        &format!("apikey:{id}"),
        &format!("{}: {said}/s", key.name),
    )
    .await?;
    tx.commit().await?;
    // The authenticated keys are cached with their rate: the next call reads it again.
    key_cache(db).0.clear();
    Ok(key)
}

/// A live key of a merchant by its name (the CLI names keys, the pages use ids).
pub async fn by_name(db: &Db, merchant_id: MerchantId, name: &str) -> DomainResult<ApiKey> {
    sqlx::query_as(
        "SELECT id, name, prefix, created_by, created_at, last_used_at, revoked_at, rate_per_second
         FROM api_keys WHERE merchant_id = $1 AND name = $2 AND revoked_at IS NULL ORDER BY id DESC",
    )
    .bind(merchant_id)
    .bind(name.trim())
    .fetch_optional(&db.pool)
    .await?
    .ok_or(DomainError::NotFound("API key"))
}

#[derive(FromRow)]
struct KeyRow {
    id: i64,
    merchant_id: MerchantId,
    name: String,
    last_used_at: Option<i64>,
    rate_per_second: Option<i64>,
}

/// Resolves a presented key to its merchant, or None when unknown or revoked.
pub async fn authenticate(db: &Db, presented: &str) -> DomainResult<Option<KeyOwner>> {
    if !presented.starts_with(KEY_PREFIX) || presented.len() > 128 {
        return Ok(None);
    }
    let key_digest = digest(presented);
    if let Some(owner) = key_cache(db).0.get(&key_digest) {
        return Ok(Some(owner));
    }
    let row: Option<KeyRow> = sqlx::query_as(
        "SELECT id, merchant_id, name, last_used_at, rate_per_second FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
    )
    .bind(hex::encode(key_digest))
    .fetch_optional(&db.pool)
    .await?;
    let Some(KeyRow {
        id: key_id,
        merchant_id,
        name,
        last_used_at: last_used,
        rate_per_second,
    }) = row
    else {
        return Ok(None);
    };
    // Record use at most once a minute: a hot order system should not write on every call.
    let now = db.now_ms();
    if last_used.is_none_or(|t| now - t > 60_000) {
        sqlx::query("UPDATE api_keys SET last_used_at = $1 WHERE id = $2")
            .bind(now)
            .bind(key_id)
            .execute(&db.pool)
            .await?;
    }
    let owner = KeyOwner {
        key_id,
        merchant_id,
        name,
        rate_per_second,
    };
    key_cache(db).0.put(key_digest, owner.clone());
    Ok(Some(owner))
}
