//! The people of a merchant and their sign-ins: invitations by a one-time link, password resets
//! (a generated password shown once), deactivation, and each person's own name and password.
//! A merchant admin manages the people of their own merchant only; nobody deactivates themselves.
//! Resetting, changing a password and deactivating end the person's other sessions at once
//! (`users.sessions_valid_after`, checked on every request).

use rand::Rng;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::scope::Role;
use crate::domain::kernel::validate::{self, Errors};
use crate::domain::tenancy::users::{self, PASSWORD_MIN};
use crate::domain::{Actor, DomainError, FieldError, MerchantId};
use crate::infra::db::Db;
use crate::messages;

/// How long an invitation link works.
pub const INVITATION_DAYS: i64 = 7;
pub const NAME_MAX: usize = 100;

/// A person of a merchant, as the people page lists them.
#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Person {
    pub id: i64,
    pub email: String,
    pub display_name: String,
    pub role: String,
    pub store_name: Option<String>,
    pub disabled: i64,
    pub created_at: i64,
}

impl Person {
    pub fn active(&self) -> bool {
        self.disabled == 0
    }
}

pub async fn list(db: &Db, merchant_id: MerchantId) -> DomainResult<Vec<Person>> {
    Ok(sqlx::query_as(
        "SELECT u.id, u.email, u.display_name, u.role, s.name AS store_name, CAST(u.disabled AS BIGINT) AS disabled,
            u.created_at
         FROM users u LEFT JOIN stores s ON s.id = u.store_id
         WHERE u.merchant_id = $1 ORDER BY u.disabled, u.role, LOWER(u.email)",
    )
    .bind(merchant_id)
    .fetch_all(&db.pool)
    .await?)
}

/// One person of the merchant (404 for anyone else's).
pub async fn person(db: &Db, merchant_id: MerchantId, id: i64) -> DomainResult<Person> {
    list(db, merchant_id)
        .await?
        .into_iter()
        .find(|p| p.id == id)
        .ok_or(DomainError::NotFound("person"))
}

/// An invitation waiting to be accepted.
#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Invitation {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub merchant_name: String,
    pub email: String,
    pub display_name: String,
    pub role: String,
    pub store_id: Option<i64>,
    pub store_name: Option<String>,
    pub created_by: String,
    pub created_at: i64,
    pub expires_at: i64,
}

const INVITATION_SELECT: &str = "SELECT i.id, i.merchant_id, m.name AS merchant_name, i.email, i.display_name, i.role,
        i.store_id, s.name AS store_name, i.created_by, i.created_at, i.expires_at
    FROM invitations i JOIN merchants m ON m.id = i.merchant_id LEFT JOIN stores s ON s.id = i.store_id";

/// The merchant's invitations not yet accepted, revoked or expired, newest first.
pub async fn pending(db: &Db, merchant_id: MerchantId) -> DomainResult<Vec<Invitation>> {
    let sql = format!(
        "{INVITATION_SELECT} WHERE i.merchant_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL
         AND i.expires_at > $2 ORDER BY i.id DESC"
    );
    Ok(sqlx::query_as(&sql)
        .bind(merchant_id)
        .bind(db.now_ms())
        .fetch_all(&db.pool)
        .await?)
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.trim().as_bytes()))
}

pub struct InviteInput<'a> {
    pub email: &'a str,
    pub display_name: &'a str,
    pub role: &'a str,
    /// Staff: the store's slug.
    pub store: &'a str,
}

/// Invites a person to the merchant. Returns the invitation and its token, which is shown once
/// (only its hash is kept). Refused: a bad email, name, role or store; an email that already
/// signs in (`duplicate_email`) or has an invitation waiting (`already_invited`).
pub async fn invite(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    input: InviteInput<'_>,
) -> DomainResult<(i64, String)> {
    let mut errs = Errors::default();
    let email = errs.take(validate::email(input.email));
    let name = errs.take(validate::optional_text(
        "display_name",
        input.display_name,
        NAME_MAX,
    ));
    let role = match Role::parse(input.role.trim()) {
        Some(r @ (Role::MerchantAdmin | Role::StoreStaff)) => Some(r),
        _ => {
            errs.push(FieldError::new(
                "role",
                "invalid_choice",
                messages::required(&messages::label("role")),
            ));
            None
        }
    };
    let store_id = match (role, input.store.trim()) {
        (Some(Role::StoreStaff), "") => {
            errs.push(FieldError::new(
                "store",
                "required",
                messages::required(&messages::label("store")),
            ));
            None
        }
        (Some(Role::StoreStaff), slug) => {
            match crate::domain::tenancy::tenants::store_by_slug(db, merchant_id, slug).await {
                Ok(s) => Some(s.id),
                Err(_) => {
                    errs.push(FieldError::new(
                        "store",
                        "unknown_store",
                        messages::unknown_store(slug),
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    if let Some(n) = &name {
        if let Err(e) = name_free(db, Some(merchant_id), None, n).await? {
            errs.push(e);
        }
    }
    let (Some(email), Some(name), Some(role), true) = (email, name, role, errs.is_empty()) else {
        return Err(errs.refusal());
    };
    let taken: Option<i64> =
        sqlx::query_scalar("SELECT id FROM users WHERE LOWER(email) = LOWER($1)")
            .bind(&email)
            .fetch_optional(&db.pool)
            .await?;
    if taken.is_some() {
        return Err(DomainError::field(
            "email",
            "duplicate_email",
            messages::duplicate_email(&email),
        ));
    }
    let now = db.now_ms();
    let waiting: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM invitations WHERE merchant_id = $1 AND LOWER(email) = LOWER($2)
            AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $3",
    )
    .bind(merchant_id)
    .bind(&email)
    .bind(now)
    .fetch_optional(&db.pool)
    .await?;
    if waiting.is_some() {
        return Err(DomainError::field(
            "email",
            "already_invited",
            messages::already_invited(&email),
        ));
    }
    let token = hex::encode(rand::rng().random::<[u8; 32]>());
    let mut tx = db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO invitations (merchant_id, email, display_name, role, store_id, token_hash, created_by,
            created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(merchant_id)
    .bind(&email)
    .bind(&name)
    .bind(role.as_str())
    .bind(store_id)
    .bind(token_hash(&token))
    .bind(&actor.label)
    .bind(now)
    .bind(now + INVITATION_DAYS * 86_400_000)
    .fetch_one(&mut *tx)
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "user.invite",
        &format!("user:{email}"),
        role.as_str(),
    )
    .await?;
    tx.commit().await?;
    Ok((id, token))
}

pub async fn revoke(db: &Db, actor: &Actor, merchant_id: MerchantId, id: i64) -> DomainResult<()> {
    let mut tx = db.begin_write().await?;
    let email: Option<String> = sqlx::query_scalar(
        "UPDATE invitations SET revoked_at = $1
         WHERE id = $2 AND merchant_id = $3 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email",
    )
    .bind(db.now_ms())
    .bind(id)
    .bind(merchant_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(email) = email else {
        return Err(DomainError::NotFound("invitation"));
    };
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "user.invite_revoke",
        &format!("user:{email}"),
        "",
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The invitation a link names, while it can still be accepted.
pub async fn by_token(db: &Db, token: &str) -> DomainResult<Option<Invitation>> {
    let sql = format!(
        "{INVITATION_SELECT} WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL
         AND i.expires_at > $2"
    );
    Ok(sqlx::query_as(&sql)
        .bind(token_hash(token))
        .bind(db.now_ms())
        .fetch_optional(&db.pool)
        .await?)
}

fn new_password(field: &str, password: &str, confirm: &str, errs: &mut Errors) {
    if password.chars().count() < PASSWORD_MIN {
        errs.push(FieldError::new(
            field,
            "password_too_short",
            messages::password_too_short(PASSWORD_MIN),
        ));
    } else if crate::domain::tenancy::users::is_common_password(password) {
        errs.push(FieldError::new(
            field,
            "password_too_common",
            messages::password_too_common(),
        ));
    } else if password != confirm {
        errs.push(FieldError::new(
            "confirm",
            "password_mismatch",
            messages::password_mismatch(),
        ));
    }
}

/// Accepts an invitation: the person chooses their name and password, and signs in with the role
/// and store they were given, nothing more. Once: a second use, a revoked or an expired link is
/// `invitation_invalid`.
pub async fn accept(
    db: &Db,
    token: &str,
    display_name: &str,
    password: &str,
    confirm: &str,
) -> DomainResult<i64> {
    let mut errs = Errors::default();
    let name = errs.take(validate::optional_text(
        "display_name",
        display_name,
        NAME_MAX,
    ));
    new_password("password", password, confirm, &mut errs);
    let Some(name) = name.filter(|_| errs.is_empty()) else {
        return Err(errs.refusal());
    };
    // Hashing is slow and shared with sign-in: only for a link that is still an invitation.
    let Some(invitation) = by_token(db, token).await? else {
        return Err(DomainError::conflict(
            "invitation_invalid",
            messages::invitation_invalid(),
            serde_json::json!({}),
        ));
    };
    if let Err(e) = name_free(db, Some(invitation.merchant_id), None, &name).await? {
        return Err(DomainError::Invalid(vec![e]));
    }
    let hash = users::hash_password(db, password.to_string()).await?;
    let mut tx = db.begin_write().await?;
    // The link is used up in the same transaction as the user is made: of two uses, one wins.
    let row: Option<(i64, MerchantId, String, String, String, Option<i64>)> = sqlx::query_as(
        "UPDATE invitations SET accepted_at = $1
         WHERE token_hash = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1
         RETURNING id, merchant_id, email, display_name, role, store_id",
    )
    .bind(db.now_ms())
    .bind(token_hash(token))
    .fetch_optional(&mut *tx)
    .await?;
    let Some((_, merchant_id, email, invited_name, role, store_id)) = row else {
        return Err(DomainError::conflict(
            "invitation_invalid",
            messages::invitation_invalid(),
            serde_json::json!({}),
        ));
    };
    let name = if name.is_empty() { invited_name } else { name };
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO users (email, password_hash, role, merchant_id, store_id, created_at, display_name)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(&email)
    .bind(hash)
    .bind(&role)
    .bind(merchant_id)
    .bind(store_id)
    .bind(db.now_ms())
    .bind(&name)
    .fetch_one(&mut *tx)
    .await
    .map_err(crate::domain::kernel::error::unique_as("email", "duplicate_email", || {
        messages::duplicate_email(&email)
    }))?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        &Actor::system(&format!("user:{email}")),
        Some(merchant_id),
        "user.create",
        &format!("user:{email}"),
        &format!("{role} (invited)"),
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// Gives a person of the merchant a new generated password, returned to be shown once, and ends
/// their sessions.
pub async fn reset_password(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
) -> DomainResult<String> {
    let p = person(db, merchant_id, id).await?;
    let password = users::generate_password();
    let hash = users::hash_password(db, password.clone()).await?;
    let mut tx = db.begin_write().await?;
    sqlx::query(
        "UPDATE users SET password_hash = $1, sessions_valid_after = $2 WHERE id = $3 AND merchant_id = $4",
    )
    .bind(hash)
    .bind(db.now_ms())
    .bind(id)
    .bind(merchant_id)
    .execute(&mut *tx)
    .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "user.password_reset",
        &format!("user:{}", p.email),
        "",
    )
    .await?;
    tx.commit().await?;
    Ok(password)
}

/// Deactivates (their sessions end at once; their history stays) or reactivates a person of the
/// merchant. Nobody deactivates themselves (`cannot_deactivate_self`).
pub async fn set_active(
    db: &Db,
    actor: &Actor,
    (merchant_id, self_id): (MerchantId, i64),
    id: i64,
    active: bool,
) -> DomainResult<Person> {
    let p = person(db, merchant_id, id).await?;
    if id == self_id && !active {
        return Err(DomainError::conflict(
            "cannot_deactivate_self",
            messages::cannot_deactivate_self(),
            serde_json::json!({}),
        ));
    }
    let mut tx = db.begin_write().await?;
    if !active {
        // Two admins deactivating each other at once must not leave the merchant with none:
        // deactivations of one merchant take turns (the merchant's row is their lock), and one
        // made by someone deactivated meanwhile is refused.
        sqlx::query("UPDATE merchants SET name = name WHERE id = $1")
            .bind(merchant_id)
            .execute(&mut *tx)
            .await?;
        let still: Option<i64> = sqlx::query_scalar(
            "SELECT id FROM users WHERE id = $1 AND merchant_id = $2 AND disabled = 0",
        )
        .bind(self_id)
        .bind(merchant_id)
        .fetch_optional(&mut *tx)
        .await?;
        if still.is_none() {
            return Err(DomainError::Forbidden);
        }
    }
    // Deactivating ends their sessions; reactivating leaves any alone.
    let sql = if active {
        "UPDATE users SET disabled = 0 WHERE id = $1 AND merchant_id = $2"
    } else {
        "UPDATE users SET disabled = 1, sessions_valid_after = $3 WHERE id = $1 AND merchant_id = $2"
    };
    sqlx::query(sql)
        .bind(id)
        .bind(merchant_id)
        .bind(db.now_ms())
        .execute(&mut *tx)
        .await?;
    crate::domain::trail::audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        if active {
            "user.reactivate"
        } else {
            "user.deactivate"
        },
        &format!("user:{}", p.email),
        "",
    )
    .await?;
    tx.commit().await?;
    person(db, merchant_id, id).await
}

/// A person changes their own password: the current one must match. Their other sessions end;
/// the caller keeps the one it is using by signing it again after this instant.
pub async fn change_own_password(
    db: &Db,
    user_id: i64,
    (current, new, confirm): (&str, &str, &str),
) -> DomainResult<i64> {
    let hash: Option<String> =
        sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1 AND disabled = 0")
            .bind(user_id)
            .fetch_optional(&db.pool)
            .await?;
    let Some(hash) = hash else {
        return Err(DomainError::NotFound("user"));
    };
    let mut errs = Errors::default();
    if !users::verify_password(db, current.to_string(), hash.clone()).await? {
        errs.push(FieldError::new(
            "current",
            "wrong_password",
            messages::wrong_password(),
        ));
    }
    new_password("new", new, confirm, &mut errs);
    errs.into_result()?;
    let new_hash = users::hash_password(db, new.to_string()).await?;
    let now = db.now_ms();
    // Only over the password just checked: a reset made meanwhile wins, and this is refused.
    let done = sqlx::query(
        "UPDATE users SET password_hash = $1, sessions_valid_after = $2 WHERE id = $3 AND password_hash = $4",
    )
    .bind(new_hash)
    .bind(now)
    .bind(user_id)
    .bind(&hash)
    .execute(&db.pool)
    .await?;
    if done.rows_affected() != 1 {
        return Err(DomainError::field(
            "current",
            "wrong_password",
            messages::wrong_password(),
        ));
    }
    Ok(now)
}

/// The words the records use for who did something other than a person, in every language:
/// the customer, the system and its parts, an API key. A person's name may not read as one.
const NOT_A_PERSON: &[&str] = &["actor-customer", "actor-migration"];
const SYSTEM_PARTS: &[&str] = &[
    "demo",
    "expiry",
    "reconcile",
    "webhooks",
    "cli",
    "waitlist",
    "auto-no-show",
];

/// Compared without case, spaces or invisible characters, full-width brackets and any quotes
/// read alike: "Demo  data" is "demo data", "System（demo）" is "System (demo)".
fn folded(s: &str) -> String {
    s.chars()
        .filter(|c| {
            !c.is_whitespace()
                && !c.is_control()
                && !matches!(c, '\u{200B}'..='\u{200F}' | '\u{2060}' | '\u{FEFF}')
        })
        .map(|c| match c {
            '（' => '(',
            '）' => ')',
            '"' | '\'' | '“' | '”' | '‘' | '’' | '「' | '」' => '"',
            c => c,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether a name a person would go by is free. Who did something is read by name (the stock
/// ledger's "by", a sheet's importer), so a name may not be another person's email at the same
/// merchant (or an operator's, who appear in every merchant's records), nor read as the
/// customer, the system or an API key. Two people may share a name (two 李娜 are common): the
/// records then add their emails (`web::view::actor`). Empty is free (the email stands in).
async fn name_free(
    db: &Db,
    merchant_id: Option<MerchantId>,
    user_id: Option<i64>,
    name: &str,
) -> DomainResult<Result<(), FieldError>> {
    let name = name.trim();
    if name.is_empty() {
        return Ok(Ok(()));
    }
    let mine = folded(name);
    let taken = || {
        Err(FieldError::new(
            "display_name",
            "name_taken",
            messages::display_name_taken(name),
        ))
    };
    for lang in crate::i18n::Lang::ALL {
        let said = NOT_A_PERSON.iter().map(|k| lang.t(k)).chain(
            SYSTEM_PARTS
                .iter()
                .map(|p| lang.t1("actor-system", "part", *p)),
        );
        if said.map(|s| folded(&s)).any(|s| s == mine) {
            return Ok(taken());
        }
        // "System (…)" and "API key “…”": what comes before the blank.
        for (key, arg) in [("actor-system", "part"), ("actor-apikey", "name")] {
            let frame = lang.t1(key, arg, "\u{1}");
            let head = folded(frame.split('\u{1}').next().unwrap_or_default());
            if !head.is_empty() && mine.starts_with(&head) {
                return Ok(taken());
            }
        }
    }
    let emails: Vec<String> = sqlx::query_scalar(
        "SELECT email FROM users
         WHERE ($1 IS NULL OR merchant_id = $1 OR merchant_id IS NULL) AND id <> $2",
    )
    .bind(merchant_id)
    .bind(user_id.unwrap_or(0))
    .fetch_all(&db.pool)
    .await?;
    if emails.iter().any(|email| folded(email) == mine) {
        return Ok(taken());
    }
    Ok(Ok(()))
}

/// A person sets the name they go by (empty: their email stands in).
pub async fn set_own_name(db: &Db, user_id: i64, name: &str) -> DomainResult<String> {
    let name = validate::optional_text("display_name", name, NAME_MAX)
        .map_err(|e| DomainError::Invalid(vec![e]))?;
    let merchant_id: Option<MerchantId> =
        sqlx::query_scalar("SELECT merchant_id FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_one(&db.pool)
            .await?;
    if let Err(e) = name_free(db, merchant_id, Some(user_id), &name).await? {
        return Err(DomainError::Invalid(vec![e]));
    }
    sqlx::query("UPDATE users SET display_name = $1 WHERE id = $2")
        .bind(&name)
        .bind(user_id)
        .execute(&db.pool)
        .await?;
    Ok(name)
}
