//! Users, passwords and sign-in throttling.

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::Argon2;
use rand::distr::{Alphanumeric, SampleString};
use sqlx::FromRow;

use super::error::DomainResult;
use super::scope::Role;
use super::validate::{self, Errors};
use super::{Actor, DomainError, FieldError};
use crate::messages;
use crate::store::db::{is_unique_violation, now_ms, Db};

pub const PASSWORD_MIN: usize = 10;
/// Sign-in throttling: failures counted over this window...
pub const THROTTLE_WINDOW_MS: i64 = 15 * 60 * 1000;
/// ...refused past this many per account...
pub const THROTTLE_PER_ACCOUNT: i64 = 5;
/// ...or this many per client address.
pub const THROTTLE_PER_IP: i64 = 20;

#[derive(Debug, Clone, FromRow)]
pub struct User {
    pub id: i64,
    pub email: String,
    pub role: String,
    pub merchant_id: Option<i64>,
    pub store_id: Option<i64>,
    pub merchant_slug: Option<String>,
    pub merchant_name: Option<String>,
    pub store_name: Option<String>,
}

impl User {
    pub fn role(&self) -> Role {
        Role::parse(&self.role).unwrap_or(Role::StoreStaff)
    }

    pub fn actor(&self, source: &str) -> Actor {
        Actor {
            label: format!("user:{}", self.email),
            role: Some(self.role()),
            merchant_id: self.merchant_id,
            store_id: self.store_id,
            source: source.to_string(),
            ip: String::new(),
        }
    }
}

const USER_SELECT: &str = "SELECT u.id, u.email, u.role, u.merchant_id, u.store_id,
        m.slug AS merchant_slug, m.name AS merchant_name, s.name AS store_name
    FROM users u LEFT JOIN merchants m ON m.id = u.merchant_id LEFT JOIN stores s ON s.id = u.store_id";

pub async fn get(db: &Db, id: i64) -> DomainResult<Option<User>> {
    let sql = format!("{USER_SELECT} WHERE u.id = $1 AND u.disabled = 0");
    Ok(sqlx::query_as::<_, User>(&sql)
        .bind(id)
        .fetch_optional(&db.pool)
        .await?)
}

/// Hashing is deliberately slow, so it runs off the async worker threads.
pub async fn hash_password(password: String) -> DomainResult<String> {
    tokio::task::spawn_blocking(move || {
        Argon2::default()
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| DomainError::Internal(format!("argon2: {e}")))
    })
    .await
    .map_err(|e| DomainError::Internal(e.to_string()))?
}

pub async fn verify_password(password: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&hash)
            .map(|parsed| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok()
            })
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}

pub fn generate_password() -> String {
    Alphanumeric.sample_string(&mut rand::rng(), 16)
}

pub struct NewUser<'a> {
    pub email: &'a str,
    pub password: &'a str,
    pub role: &'a str,
    pub merchant_slug: Option<&'a str>,
    pub store_slug: Option<&'a str>,
}

/// Creates a user; the role decides whether a merchant and store are required.
pub async fn create(db: &Db, actor: &Actor, input: NewUser<'_>) -> DomainResult<i64> {
    let mut errs = Errors::default();
    let email = errs.take(validate::email(input.email));
    let role = errs.take(
        validate::choice("role", input.role, &Role::ALL)
            .map(|r| Role::parse(r).unwrap_or(Role::StoreStaff)),
    );
    if input.password.chars().count() < PASSWORD_MIN {
        errs.push(FieldError::new(
            "password",
            "password_too_short",
            messages::password_too_short(PASSWORD_MIN),
        ));
    }
    errs.into_result()?;
    let (email, role) = (email.unwrap_or_default(), role.unwrap_or(Role::StoreStaff));

    let merchant_id = match input.merchant_slug {
        Some(slug) => Some(super::tenants::merchant_id_by_slug(db, slug).await?),
        None => None,
    };
    let store_id = match (merchant_id, input.store_slug) {
        (Some(m), Some(slug)) => Some(super::tenants::store_by_slug(db, m, slug).await?.id),
        (None, Some(_)) => {
            return Err(DomainError::field(
                "store",
                "invalid_scope",
                messages::role_scope(role.as_str()),
            ))
        }
        _ => None,
    };
    let scope_ok = match role {
        Role::Operator => merchant_id.is_none() && store_id.is_none(),
        Role::MerchantAdmin => merchant_id.is_some() && store_id.is_none(),
        Role::StoreStaff => merchant_id.is_some() && store_id.is_some(),
    };
    if !scope_ok {
        return Err(DomainError::field(
            "role",
            "invalid_scope",
            messages::role_scope(role.as_str()),
        ));
    }
    let hash = hash_password(input.password.to_string()).await?;
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO users (email, password_hash, role, merchant_id, store_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(&email)
    .bind(hash)
    .bind(role.as_str())
    .bind(merchant_id)
    .bind(store_id)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            DomainError::field(
                "email",
                "duplicate_email",
                messages::duplicate_email(&email),
            )
        } else {
            e.into()
        }
    })?;
    super::audit::record(
        &mut tx,
        actor,
        merchant_id,
        "user.create",
        &format!("user:{email}"),
        role.as_str(),
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// Checks credentials, counting failures per account and per client address so that guessing
/// is slow on every instance at once. Returns the user on success.
pub async fn authenticate(
    db: &Db,
    email: &str,
    password: &str,
    client_ip: &str,
) -> DomainResult<User> {
    let email = email.trim().to_lowercase();
    let now = now_ms();
    let since = now - THROTTLE_WINDOW_MS;
    let account_key = format!("account:{email}");
    let ip_key = format!("ip:{client_ip}");
    let (account_failures, ip_failures): (i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN throttle_key = $1 THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN throttle_key = $2 THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM login_failures WHERE throttle_key IN ($1, $2) AND at > $3",
    )
    .bind(&account_key)
    .bind(&ip_key)
    .bind(since)
    .fetch_one(&db.pool)
    .await?;
    if account_failures >= THROTTLE_PER_ACCOUNT || ip_failures >= THROTTLE_PER_IP {
        return Err(DomainError::Throttled {
            minutes: THROTTLE_WINDOW_MS / 60_000,
        });
    }

    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT id, password_hash FROM users WHERE email = $1 AND disabled = 0")
            .bind(&email)
            .fetch_optional(&db.pool)
            .await?;
    // Verify against a fixed hash when the account does not exist, so timing does not reveal which emails exist.
    let (id, hash) = row.unwrap_or((0, DUMMY_HASH.to_string()));
    let ok = verify_password(password.to_string(), hash).await && id != 0;
    if !ok {
        for key in [&account_key, &ip_key] {
            sqlx::query("INSERT INTO login_failures (throttle_key, at) VALUES ($1, $2)")
                .bind(key)
                .bind(now)
                .execute(&db.pool)
                .await?;
        }
        return Err(DomainError::BadCredentials);
    }
    sqlx::query("DELETE FROM login_failures WHERE throttle_key = $1 OR at < $2")
        .bind(&account_key)
        .bind(since)
        .execute(&db.pool)
        .await?;
    get(db, id).await?.ok_or(DomainError::BadCredentials)
}

/// argon2id of a random string nobody knows; only its cost matters.
const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c2VsbGFibGVkdW1teXNhbHQ$3Yb0m1CKRvu8v1mHqSmp0hZ5zL9kq1a5Jp6lQXf3ZxQ";
