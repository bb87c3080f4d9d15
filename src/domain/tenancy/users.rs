//! Users, passwords and sign-in throttling.

use crate::domain::{MerchantId, StoreId};
use crate::i18n::Lang;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::Argon2;
use rand::distr::{Alphanumeric, SampleString};
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::scope::{Role, Scope};
use crate::domain::kernel::validate::{self, Errors};
use crate::domain::{Actor, DomainError, FieldError};
use crate::infra::db::Db;
use crate::messages;

pub const PASSWORD_MIN: usize = 10;
/// Sign-in throttling: failures counted over this window...
pub const THROTTLE_WINDOW_MS: i64 = 15 * 60 * 1000;
/// ...refused past this many for one account from one client address...
pub const THROTTLE_PER_PAIR: i64 = 5;
/// ...or this many from one client address, whatever the account.
pub const THROTTLE_PER_IP: i64 = 20;
/// Failures of one account from everywhere that cost nothing (a person mistyping)...
pub const ACCOUNT_FREE_FAILURES: i64 = 3;
/// ...past them the account takes one password check per this long, from everywhere together:
/// at most 3 + 1 + 6 = 10 checks in any minute, 6 a minute from then on.
pub const ACCOUNT_SPACING: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, Clone, FromRow)]
pub struct User {
    pub id: i64,
    pub email: String,
    pub role: String,
    pub merchant_id: Option<MerchantId>,
    pub store_id: Option<StoreId>,
    pub merchant_slug: Option<String>,
    pub merchant_name: Option<String>,
    pub store_name: Option<String>,
    /// The user's own choice of language (a tag), if they made one.
    pub language: Option<String>,
    /// Their merchant's language: the default for everyone who has not chosen.
    pub merchant_language: Option<String>,
    /// The name they go by ('' until set: their email stands in).
    pub display_name: String,
    /// Sessions signed in before this instant (unix ms) are ended.
    pub sessions_valid_after: i64,
}

impl User {
    pub fn role(&self) -> Role {
        Role::parse(&self.role).unwrap_or(Role::StoreStaff)
    }

    /// The merchant this user administers: merchant admins only. Who may change a merchant's
    /// catalog, stock, codes and API keys, for every page that asks.
    pub fn admin_merchant(&self) -> Option<MerchantId> {
        match (self.role(), self.merchant_id) {
            (Role::MerchantAdmin, Some(m)) => Some(m),
            _ => None,
        }
    }

    /// Whether this user administers merchant `m`.
    pub fn is_admin_of(&self, m: MerchantId) -> bool {
        self.admin_merchant() == Some(m)
    }

    /// The merchant whose changes this user may make, or Forbidden.
    pub fn require_admin(&self) -> DomainResult<MerchantId> {
        self.admin_merchant().ok_or(DomainError::Forbidden)
    }

    /// The merchant whose slots, schedules, closures and bookings this user may change: merchant
    /// admins and store staff; operators read only.
    pub fn slot_writer(&self) -> DomainResult<MerchantId> {
        match (self.role(), self.merchant_id) {
            (Role::MerchantAdmin | Role::StoreStaff, Some(m)) => Ok(m),
            _ => Err(DomainError::Forbidden),
        }
    }

    /// Whether this user sees store `store_id`'s objects at all: store staff their own store
    /// only (another store's objects do not exist for them); everyone else every store their
    /// merchant scope allows.
    pub fn sees_store(&self, store_id: StoreId) -> bool {
        self.role() != Role::StoreStaff || self.store_id == Some(store_id)
    }

    /// The findings this user may read: operators every merchant's, merchant admins their own.
    pub fn findings_scope(&self) -> DomainResult<Scope> {
        match (self.role(), self.merchant_id) {
            (Role::Operator, _) => Ok(Scope::All),
            (Role::MerchantAdmin, Some(m)) => Ok(Scope::Merchant(m)),
            _ => Err(DomainError::Forbidden),
        }
    }

    /// Whether this user may start a reconciliation run: operators only.
    pub fn runs_reconciliation(&self) -> bool {
        self.role() == Role::Operator
    }

    /// The language this user reads: their own choice, else their merchant's; None for an operator
    /// who has not chosen (the browser decides).
    pub fn lang(&self) -> Option<Lang> {
        self.language
            .as_deref()
            .or(self.merchant_language.as_deref())
            .and_then(Lang::parse)
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
        m.slug AS merchant_slug, m.name AS merchant_name, s.name AS store_name,
        u.language, m.language AS merchant_language, u.display_name, u.sessions_valid_after
    FROM users u LEFT JOIN merchants m ON m.id = u.merchant_id LEFT JOIN stores s ON s.id = u.store_id";

pub async fn get(db: &Db, id: i64) -> DomainResult<Option<User>> {
    let sql = format!("{USER_SELECT} WHERE u.id = $1 AND u.disabled = 0");
    Ok(sqlx::query_as::<_, User>(&sql)
        .bind(id)
        .fetch_optional(&db.pool)
        .await?)
}

/// Remembers the language a user chose in the header's switcher.
pub async fn set_language(db: &Db, user_id: i64, lang: Lang) -> DomainResult<()> {
    sqlx::query("UPDATE users SET language = $1 WHERE id = $2")
        .bind(lang.tag())
        .bind(user_id)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Runs one hash within the application's bound (`infra::bounded`).
async fn with_hasher<T: Send + 'static>(
    db: &Db,
    f: impl FnOnce() -> T + Send + 'static,
) -> DomainResult<T> {
    db.hashers.run(f).await.map_err(refused)
}

/// Why a hash did not run, as the domain says it.
fn refused(r: crate::infra::bounded::Refused) -> DomainError {
    use crate::infra::bounded::Refused;
    match r {
        Refused::Busy => DomainError::Busy { retry_after: 2 },
        Refused::Failed(e) => DomainError::Internal(e),
    }
}

/// Hashing is deliberately slow, so it runs off the async worker threads, a few at a time.
pub async fn hash_password(db: &Db, password: String) -> DomainResult<String> {
    with_hasher(db, move || {
        Argon2::default()
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| DomainError::Internal(format!("argon2: {e}")))
    })
    .await?
}

pub async fn verify_password(db: &Db, password: String, hash: String) -> DomainResult<bool> {
    with_hasher(db, move || matches(&password, &hash)).await
}

/// Whether `password` is the one `hash` (argon2, PHC string) was made from.
fn matches(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// A sign-in's hash, counted against its address: one address holds at most
/// `bounded::PER_SOURCE` places in the shared queue, so one source cannot fill it and deny
/// everyone else's sign-in.
async fn verify_sign_in(
    db: &Db,
    address: &str,
    password: String,
    hash: String,
) -> DomainResult<bool> {
    db.hashers
        .run_for(address, move || matches(&password, &hash))
        .await
        .map_err(refused)
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
    } else if is_common_password(input.password) {
        errs.push(FieldError::new(
            "password",
            "password_too_common",
            messages::password_too_common(),
        ));
    }
    errs.into_result()?;
    let (email, role) = (email.unwrap_or_default(), role.unwrap_or(Role::StoreStaff));

    let merchant_id = match input.merchant_slug {
        Some(slug) => Some(crate::domain::tenancy::tenants::merchant_id_by_slug(db, slug).await?),
        None => None,
    };
    let store_id = match (merchant_id, input.store_slug) {
        (Some(m), Some(slug)) => Some(
            crate::domain::tenancy::tenants::store_by_slug(db, m, slug)
                .await?
                .id,
        ),
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
    let hash = hash_password(db, input.password.to_string()).await?;
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
    .bind(db.now_ms())
    .fetch_one(&mut *tx)
    .await
    .map_err(crate::domain::kernel::error::unique_as(
        "email",
        "duplicate_email",
        || messages::duplicate_email(&email),
    ))?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
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

/// Checks credentials. Each attempt is counted *before* the slow hash (a row per key, committed
/// first), so concurrent tries see each other: of 150 at once, only the first few reach the hash.
/// Refused: past [`THROTTLE_PER_PAIR`] failures of this account from this address, or
/// [`THROTTLE_PER_IP`] from this address. Failures of the account from everywhere make it take
/// turns ([`account_delay`]); a browser it signed in from before skips them, so an attacker
/// elsewhere cannot keep the owner out. A success removes the account's failures.
pub async fn authenticate(
    db: &Db,
    email: &str,
    password: &str,
    client_ip: &str,
    known_device_of: Option<i64>,
) -> DomainResult<User> {
    let email = email.trim().to_lowercase();
    let now = db.now_ms();
    let since = now - THROTTLE_WINDOW_MS;
    let address = crate::domain::kernel::scope::address_key(client_ip);
    let pair_key = format!("pair:{address}:{email}");
    let ip_key = format!("ip:{address}");
    let account_key = format!("account:{email}");
    // One statement (one write on SQLite's single writer), committed before the count below.
    let attempt_ids: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO login_failures (throttle_key, at) VALUES ($1, $4), ($2, $4), ($3, $4) RETURNING id",
    )
    .bind(&pair_key)
    .bind(&ip_key)
    .bind(&account_key)
    .bind(now)
    .fetch_all(&db.pool)
    .await?;
    // Counts include this attempt and every one committed before this read.
    let (pair, ip, account): (i64, i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(CASE WHEN throttle_key = $1 THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN throttle_key = $2 THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN throttle_key = $3 THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM login_failures WHERE throttle_key IN ($1, $2, $3) AND at > $4",
    )
    .bind(&pair_key)
    .bind(&ip_key)
    .bind(&account_key)
    .bind(since)
    .fetch_one(&db.pool)
    .await?;
    if pair > THROTTLE_PER_PAIR || ip > THROTTLE_PER_IP {
        // A refused try is not a failure: counting it would restart the window with every retry,
        // and "wait 15 minutes" would never come true.
        forget_attempt(db, &attempt_ids).await?;
        return Err(DomainError::Throttled {
            minutes: THROTTLE_WINDOW_MS / 60_000,
        });
    }
    // Past a few failures the account takes one attempt per `account_delay`, from everywhere
    // together: the attempt takes the account's turn or is refused at once with the wait. Sleeping
    // instead (as before) let 200 addresses sleep side by side and then all hash.
    let row: Option<(i64, String)> =
        sqlx::query_as("SELECT id, password_hash FROM users WHERE email = $1 AND disabled = 0")
            .bind(&email)
            .fetch_optional(&db.pool)
            .await?;
    // A browser this account signed in from before (its device cookie) skips the turns: an
    // attack from elsewhere slows the account for strangers but does not keep its owner out. It
    // still counts against its own address's limits.
    let known_device = row
        .as_ref()
        .is_some_and(|(id, _)| known_device_of == Some(*id));
    let spacing = account_delay(account - 1);
    if !spacing.is_zero() && !known_device {
        if let Err(e) = take_turn(db, &account_key, now, spacing).await {
            forget_attempt(db, &attempt_ids).await?;
            return Err(e);
        }
    }

    // Verify against a fixed hash when the account does not exist, so timing does not reveal which emails exist.
    let (id, hash) = row.unwrap_or((0, DUMMY_HASH.to_string()));
    let verified = verify_sign_in(db, &address, password.to_string(), hash).await;
    let ok = match verified {
        Ok(ok) => ok && id != 0,
        Err(e) => {
            // Not tried: the attempt does not count against anyone.
            forget_attempt(db, &attempt_ids).await?;
            return Err(e);
        }
    };
    if !ok {
        return Err(DomainError::BadCredentials);
    }
    forget_attempt(db, &attempt_ids).await?;
    sqlx::query("DELETE FROM login_failures WHERE throttle_key IN ($1, $2)")
        .bind(&account_key)
        .bind(&pair_key)
        .execute(&db.pool)
        .await?;
    get(db, id).await?.ok_or(DomainError::BadCredentials)
}

/// Takes the account's next turn to check a password, `spacing` after the last one, or refuses
/// with how long until it comes. One conditional update: of many attempts at once, one wins.
async fn take_turn(
    db: &Db,
    account_key: &str,
    now: i64,
    spacing: std::time::Duration,
) -> DomainResult<()> {
    sqlx::query(
        "INSERT INTO login_turns (account_key, next_at) VALUES ($1, 0) ON CONFLICT (account_key) DO NOTHING",
    )
    .bind(account_key)
    .execute(&db.pool)
    .await?;
    let taken =
        sqlx::query("UPDATE login_turns SET next_at = $2 WHERE account_key = $1 AND next_at <= $3")
            .bind(account_key)
            .bind(now + spacing.as_millis() as i64)
            .bind(now)
            .execute(&db.pool)
            .await?;
    if taken.rows_affected() == 1 {
        return Ok(());
    }
    let next_at: i64 = sqlx::query_scalar("SELECT next_at FROM login_turns WHERE account_key = $1")
        .bind(account_key)
        .fetch_one(&db.pool)
        .await?;
    Err(DomainError::TooFast {
        retry_after: ((next_at - now).max(1000) as u64).div_ceil(1000),
    })
}

/// Whether a password is on the shipped list of common passwords (the `passwords` crate's table
/// of about 100,000, Chinese favourites such as `woaini1314` and `88888888` among them), as typed
/// or in lower case. Such passwords are guessed first and are refused when set.
pub fn is_common_password(password: &str) -> bool {
    passwords::analyzer::is_common_password(password)
        || passwords::analyzer::is_common_password(password.to_lowercase())
}

/// Removes sign-in attempts older than the throttle window (the cleanup job).
pub async fn purge_old_attempts(db: &Db) -> DomainResult<u64> {
    let cutoff = db.now_ms() - THROTTLE_WINDOW_MS;
    sqlx::query("DELETE FROM login_turns WHERE next_at < $1")
        .bind(cutoff)
        .execute(&db.pool)
        .await?;
    Ok(sqlx::query("DELETE FROM login_failures WHERE at < $1")
        .bind(cutoff)
        .execute(&db.pool)
        .await?
        .rows_affected())
}

async fn forget_attempt(db: &Db, ids: &[i64]) -> DomainResult<()> {
    let mut q = sqlx::query("DELETE FROM login_failures WHERE id IN ($1, $2, $3)");
    for i in 0..3 {
        q = q.bind(ids.get(i).copied().unwrap_or(0));
    }
    q.execute(&db.pool).await?;
    Ok(())
}

/// The spacing between password checks of an account that has failed `failures` times in the
/// window from anywhere: none up to [`ACCOUNT_FREE_FAILURES`], then [`ACCOUNT_SPACING`].
pub fn account_delay(failures: i64) -> std::time::Duration {
    if failures < ACCOUNT_FREE_FAILURES {
        std::time::Duration::ZERO
    } else {
        ACCOUNT_SPACING
    }
}

/// argon2id of a random string nobody knows; only its cost matters.
const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c2VsbGFibGVkdW1teXNhbHQ$3Yb0m1CKRvu8v1mHqSmp0hZ5zL9kq1a5Jp6lQXf3ZxQ";

/// Every (email, display name) a page may name: a merchant's people and the operators, or, for an
/// operator's page across merchants (`None`), everyone.
pub async fn display_names(
    db: &Db,
    merchant_id: Option<MerchantId>,
) -> DomainResult<Vec<(String, String)>> {
    Ok(match merchant_id {
        Some(m) => sqlx::query_as(
            "SELECT email, display_name FROM users WHERE merchant_id = $1 OR merchant_id IS NULL",
        )
        .bind(m)
        .fetch_all(&db.pool)
        .await?,
        None => {
            sqlx::query_as("SELECT email, display_name FROM users")
                .fetch_all(&db.pool)
                .await?
        }
    })
}
