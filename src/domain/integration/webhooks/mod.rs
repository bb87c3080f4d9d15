//! Signed webhooks: a merchant's endpoints, each sent the events its filter admits, signed with
//! a secret shown once. Registering checks the URL (a public address, unless allowed); sending
//! (`dispatch`) checks it again at each connection, retries with backoff for three days, and
//! pauses an endpoint that has failed for a day.

pub mod dispatch;
pub mod signature;

use rand::distr::{Alphanumeric, SampleString};
use sqlx::FromRow;

use crate::domain::kernel::code_keys::CodeKeys;
use crate::domain::kernel::error::DomainResult;
use crate::domain::trail::events::TypeFilter;
use crate::domain::{trail::audit, Actor, DomainError, FieldError, MerchantId};
use crate::infra::db::Db;
use crate::infra::outbound::{self, Refused};
use crate::messages;

crate::text_enum! {
    pub enum WebhookStatus {
        Active = "ACTIVE",
        Paused = "PAUSED",
        Deleted = "DELETED",
    }
}

crate::text_enum! {
    /// Why a webhook is paused: by a person, or by the sender after a day of failures.
    pub enum PauseReason {
        Manual = "manual",
        Failing = "failing",
        /// The circuit breaker: too many attempts in a row failed (`dispatch::BREAKER_AFTER`).
        Breaker = "breaker",
    }
}

crate::text_enum! {
    pub enum DeliveryStatus {
        Pending = "PENDING",
        Delivered = "DELIVERED",
        /// Given up after three days of retries (it can still be redelivered by hand).
        Failed = "FAILED",
    }
}

/// The longest URL accepted.
pub const URL_MAX: usize = 2000;
/// The longest a rotated-out secret keeps signing, in hours (a week).
pub const OVERLAP_MAX_HOURS: i64 = 168;
/// What a rotation keeps the old secret for when not told.
pub const OVERLAP_DEFAULT_HOURS: i64 = 24;
const SECRET_PREFIX: &str = "whsec_";

#[derive(Debug, Clone)]
pub struct Webhook {
    pub id: i64,
    pub merchant_id: MerchantId,
    pub url: String,
    /// The filter: types and families (`stock.*`).
    pub events: Vec<String>,
    pub status: WebhookStatus,
    pub paused_reason: Option<PauseReason>,
    /// Since when every attempt failed; `None` after a success.
    pub failing_since: Option<i64>,
    /// Until when the secret before the last rotation still signs.
    pub old_secret_until: Option<i64>,
    pub created_by: String,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(FromRow)]
struct Row {
    id: i64,
    merchant_id: i64,
    url: String,
    events: String,
    status: String,
    paused_reason: Option<String>,
    failing_since: Option<i64>,
    old_secret_until: Option<i64>,
    created_by: String,
    created_at: i64,
    updated_at: i64,
}

const COLUMNS: &str = "id, merchant_id, url, events, status, paused_reason, failing_since,
    old_secret_until, created_by, created_at, updated_at";

impl Row {
    fn into_webhook(self) -> Webhook {
        Webhook {
            id: self.id,
            merchant_id: MerchantId(self.merchant_id),
            url: self.url,
            events: self.events.split(',').map(str::to_string).collect(),
            status: WebhookStatus::parse(&self.status).unwrap_or(WebhookStatus::Paused),
            paused_reason: self.paused_reason.as_deref().and_then(PauseReason::parse),
            failing_since: self.failing_since,
            old_secret_until: self.old_secret_until,
            created_by: self.created_by,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// A webhook URL as given: http or https, with a host, at most `URL_MAX` long. Whether the host
/// is public is `check_destination`'s question.
pub fn parse_url(raw: &str) -> Result<url::Url, FieldError> {
    let raw = raw.trim();
    let bad = || FieldError::new("url", "invalid_url", messages::webhook_bad_url(URL_MAX));
    if raw.is_empty() {
        return Err(FieldError::new(
            "url",
            "required",
            messages::required(&messages::label("url")),
        ));
    }
    if raw.len() > URL_MAX {
        return Err(bad());
    }
    let mut url = url::Url::parse(raw).map_err(|_| bad())?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(bad());
    }
    // A user and password in the URL would be sent as Basic credentials, and kept in plain text
    // in the list, the log and the audit trail.
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FieldError::new(
            "url",
            "invalid_url",
            messages::webhook_no_credentials(),
        ));
    }
    // A fragment is never sent; keeping it would only mislead.
    url.set_fragment(None);
    Ok(url)
}

/// Refuses a URL whose host is not public (unless private ones are allowed) or does not resolve.
pub async fn check_destination(url: &url::Url, allow_private: bool) -> Result<(), FieldError> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(443);
    match outbound::resolve(host, port, allow_private).await {
        Ok(_) => Ok(()),
        // The host as typed, not what it resolved to (an inside name's address is not theirs).
        Err(Refused::Private(_)) => Err(FieldError::new(
            "url",
            "private_address",
            messages::webhook_private_address(host),
        )),
        Err(Refused::Unresolvable) => Err(FieldError::new(
            "url",
            "unresolvable",
            messages::webhook_unresolvable(host),
        )),
    }
}

/// The event filter as given (types and `family.*`), normalised: trimmed, without repeats.
pub fn parse_events(list: &[String]) -> Result<Vec<String>, FieldError> {
    let mut out: Vec<String> = Vec::new();
    for word in list.iter().flat_map(|w| w.split(',')).map(str::trim) {
        if word.is_empty() || out.iter().any(|w| w == word) {
            continue;
        }
        TypeFilter::parse(word).map_err(|w| {
            FieldError::new("events", "invalid_choice", messages::unknown_event_type(&w))
        })?;
        out.push(word.to_string());
    }
    // In one order, so that the same filter typed otherwise is the same webhook.
    out.sort();
    if out.is_empty() {
        return Err(FieldError::new(
            "events",
            "required",
            messages::webhook_events_required(),
        ));
    }
    Ok(out)
}

fn new_secret() -> String {
    format!(
        "{SECRET_PREFIX}{}",
        Alphanumeric.sample_string(&mut rand::rng(), 32)
    )
}

fn encrypt(
    keys: &CodeKeys,
    merchant_id: MerchantId,
    secret: &str,
) -> DomainResult<(Vec<u8>, Vec<u8>, i64)> {
    let (ct, nonce) = keys
        .encrypt(merchant_id, secret)
        .map_err(|e| DomainError::Internal(e.to_string()))?;
    Ok((ct, nonce, keys.current_version()))
}

/// The deployment's rules for registering endpoints (`SELLABLE_WEBHOOK_ALLOW_PRIVATE`,
/// `SELLABLE_MAX_WEBHOOKS_PER_MERCHANT`).
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Loopback, private and link-local destinations are allowed.
    pub allow_private: bool,
    /// Endpoints one merchant may have (not deleted).
    pub max_per_merchant: i64,
}

/// Registers an endpoint; returns it and its signing secret (never shown again). It is sent the
/// events that commit from now on.
pub async fn create(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    url: &str,
    events: &[String],
    rules: Rules,
) -> DomainResult<(Webhook, String)> {
    let Rules {
        allow_private,
        max_per_merchant,
    } = rules;
    // A merchant's endpoints are few: each holds a share of every sender's connections.
    let existing: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM webhooks WHERE merchant_id = $1 AND status <> 'DELETED'",
    )
    .bind(merchant_id)
    .fetch_one(&db.pool)
    .await?;
    if existing >= max_per_merchant {
        return Err(DomainError::conflict(
            "too_many_webhooks",
            messages::too_many_webhooks(max_per_merchant),
            serde_json::json!({ "limit": max_per_merchant }),
        ));
    }
    let mut errors = Vec::new();
    let url = match parse_url(url) {
        Ok(u) => Some(u),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let events = parse_events(events).map_err(|e| errors.push(e)).ok();
    if let Some(u) = &url {
        if let Err(e) = check_destination(u, allow_private).await {
            errors.push(e);
        }
    }
    let (Some(url), Some(events), true) = (url, events, errors.is_empty()) else {
        return Err(DomainError::Invalid(errors));
    };
    // The same endpoint for the same events twice is a mistake (a form posted again, a retried
    // call): say which exists. The same URL for other events is another webhook.
    let twin: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM webhooks WHERE merchant_id = $1 AND url = $2 AND events = $3
           AND status <> 'DELETED'",
    )
    .bind(merchant_id)
    .bind(url.as_str())
    .bind(events.join(","))
    .fetch_optional(&db.pool)
    .await?;
    if let Some(id) = twin {
        return Err(DomainError::Invalid(vec![FieldError::new(
            "url",
            "webhook_exists",
            messages::webhook_exists(id),
        )]));
    }
    let secret = new_secret();
    let (ct, nonce, version) = encrypt(keys, merchant_id, &secret)?;
    // From the events committed so far on: a new endpoint is not sent the past.
    crate::domain::trail::events::sequence(db).await?;
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let cursor: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM events")
        .fetch_one(&mut *tx)
        .await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO webhooks (merchant_id, url, events, status, secret_ct, secret_nonce,
             secret_key_version, cursor, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, 'ACTIVE', $4, $5, $6, $7, $8, $9, $9) RETURNING id",
    )
    .bind(merchant_id)
    .bind(url.as_str())
    .bind(events.join(","))
    .bind(ct)
    .bind(nonce)
    .bind(version)
    .bind(cursor)
    .bind(&actor.label)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "webhook.create",
        &format!("webhook:{id}"),
        &format!("{} [{}]", url, events.join(",")),
    )
    .await?;
    tx.commit().await?;
    Ok((get(db, merchant_id, id).await?, secret))
}

/// The merchant's webhooks (not the deleted), newest first.
pub async fn list(db: &Db, merchant_id: MerchantId) -> DomainResult<Vec<Webhook>> {
    let rows: Vec<Row> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM webhooks WHERE merchant_id = $1 AND status <> 'DELETED'
         ORDER BY id DESC"
    ))
    .bind(merchant_id)
    .fetch_all(&db.pool)
    .await?;
    Ok(rows.into_iter().map(Row::into_webhook).collect())
}

pub async fn get(db: &Db, merchant_id: MerchantId, id: i64) -> DomainResult<Webhook> {
    let row: Option<Row> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM webhooks WHERE id = $1 AND merchant_id = $2 AND status <> 'DELETED'"
    ))
    .bind(id)
    .bind(merchant_id)
    .fetch_optional(&db.pool)
    .await?;
    row.map(Row::into_webhook)
        .ok_or(DomainError::NotFound("webhook"))
}

/// Sets a webhook's status in one conditional statement, with its audit row.
async fn set_status(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    status: WebhookStatus,
    action: &str,
) -> DomainResult<Webhook> {
    let now = db.now_ms();
    let mut tx = db.begin_write().await?;
    let reason = (status == WebhookStatus::Paused).then_some(PauseReason::Manual.as_str());
    let changed = sqlx::query(
        "UPDATE webhooks SET status = $1, paused_reason = $2, updated_at = $3,
             failing_since = CASE WHEN $1 = 'ACTIVE' THEN NULL ELSE failing_since END,
             failures_in_a_row = CASE WHEN $1 = 'ACTIVE' THEN 0 ELSE failures_in_a_row END
         WHERE id = $4 AND merchant_id = $5 AND status <> 'DELETED'",
    )
    .bind(status.as_str())
    .bind(reason)
    .bind(now)
    .bind(id)
    .bind(merchant_id)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if changed == 0 {
        return Err(DomainError::NotFound("webhook"));
    }
    if status == WebhookStatus::Active {
        // What waited while it was paused goes now, with three full days of retries again.
        sqlx::query(
            "UPDATE webhook_deliveries SET next_attempt_at = $1, first_attempt_at = NULL
             WHERE webhook_id = $2 AND status = 'PENDING'",
        )
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    }
    audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        action,
        &format!("webhook:{id}"),
        "",
    )
    .await?;
    tx.commit().await?;
    get(db, merchant_id, id).await
}

/// Stops sending; events keep queueing and go when it is resumed.
pub async fn pause(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
) -> DomainResult<Webhook> {
    set_status(
        db,
        actor,
        merchant_id,
        id,
        WebhookStatus::Paused,
        "webhook.pause",
    )
    .await
}

/// Sends again, starting with what queued while paused.
pub async fn resume(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
) -> DomainResult<Webhook> {
    set_status(
        db,
        actor,
        merchant_id,
        id,
        WebhookStatus::Active,
        "webhook.resume",
    )
    .await
}

/// Deletes a webhook: nothing more is sent; its log stays for the audit trail.
pub async fn delete(db: &Db, actor: &Actor, merchant_id: MerchantId, id: i64) -> DomainResult<()> {
    let hook = get(db, merchant_id, id).await?;
    let mut tx = db.begin_write().await?;
    sqlx::query("UPDATE webhooks SET status = 'DELETED', updated_at = $1 WHERE id = $2")
        .bind(db.now_ms())
        .bind(id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "UPDATE webhook_deliveries SET status = 'FAILED' WHERE webhook_id = $1 AND status = 'PENDING'",
    )
    .bind(id)
    .execute(&mut *tx)
    .await?;
    audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "webhook.delete",
        &format!("webhook:{id}"),
        &hook.url,
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A rotation's overlap as given, in hours (`None`: the default).
pub fn overlap(raw: Option<i64>) -> Result<i64, FieldError> {
    match raw {
        None => Ok(OVERLAP_DEFAULT_HOURS),
        Some(h) if (0..=OVERLAP_MAX_HOURS).contains(&h) => Ok(h),
        Some(_) => Err(FieldError::new(
            "overlap_hours",
            "invalid_number",
            messages::webhook_bad_overlap(OVERLAP_MAX_HOURS),
        )),
    }
}

/// Gives the webhook a new secret (returned, shown once); the old one keeps signing beside it
/// for `overlap_hours`, so the receiver can switch without refusing a request.
pub async fn rotate(
    db: &Db,
    keys: &CodeKeys,
    actor: &Actor,
    merchant_id: MerchantId,
    id: i64,
    overlap_hours: Option<i64>,
) -> DomainResult<(Webhook, String)> {
    let hours = overlap(overlap_hours).map_err(|e| DomainError::Invalid(vec![e]))?;
    get(db, merchant_id, id).await?;
    let secret = new_secret();
    let (ct, nonce, version) = encrypt(keys, merchant_id, &secret)?;
    let now = db.now_ms();
    let until = (hours > 0).then_some(now + hours * 3_600_000);
    let mut tx = db.begin_write().await?;
    // The current secret becomes the old one (or is dropped at once with no overlap).
    sqlx::query(
        "UPDATE webhooks SET
             old_secret_ct = CASE WHEN $1 IS NULL THEN NULL ELSE secret_ct END,
             old_secret_nonce = CASE WHEN $1 IS NULL THEN NULL ELSE secret_nonce END,
             old_secret_key_version = CASE WHEN $1 IS NULL THEN NULL ELSE secret_key_version END,
             old_secret_until = $1,
             secret_ct = $2, secret_nonce = $3, secret_key_version = $4, updated_at = $5
         WHERE id = $6 AND merchant_id = $7",
    )
    .bind(until)
    .bind(ct)
    .bind(nonce)
    .bind(version)
    .bind(now)
    .bind(id)
    .bind(merchant_id)
    .execute(&mut *tx)
    .await?;
    audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "webhook.rotate",
        &format!("webhook:{id}"),
        &format!("overlap {hours} h"),
    )
    .await?;
    tx.commit().await?;
    Ok((get(db, merchant_id, id).await?, secret))
}

/// One event's delivery to a webhook, with its last attempt.
#[derive(Debug, Clone, FromRow)]
pub struct Delivery {
    pub id: i64,
    pub event_id: i64,
    pub event_type: Option<String>,
    pub status: String,
    pub attempts: i64,
    pub next_attempt_at: i64,
    pub delivered_at: Option<i64>,
    pub created_at: i64,
    pub last_at: Option<i64>,
    pub last_status_code: Option<i64>,
    pub last_latency_ms: Option<i64>,
    pub last_error: Option<String>,
    pub last_head: Option<String>,
}

impl Delivery {
    pub fn state(&self) -> DeliveryStatus {
        DeliveryStatus::parse(&self.status).unwrap_or(DeliveryStatus::Pending)
    }
}

/// A webhook's deliveries, newest first, before the delivery id `before` (0: from the newest),
/// optionally of one status.
pub async fn deliveries(
    db: &Db,
    merchant_id: MerchantId,
    webhook_id: i64,
    status: Option<DeliveryStatus>,
    before: i64,
    limit: i64,
) -> DomainResult<Vec<Delivery>> {
    get(db, merchant_id, webhook_id).await?;
    Ok(sqlx::query_as(
        "SELECT d.id, d.event_seq AS event_id, e.type AS event_type, d.status, d.attempts,
                d.next_attempt_at, d.delivered_at, d.created_at, a.at AS last_at,
                a.status_code AS last_status_code, a.latency_ms AS last_latency_ms,
                a.error AS last_error, a.response_head AS last_head
         FROM webhook_deliveries d
         LEFT JOIN events e ON e.seq = d.event_seq
         LEFT JOIN webhook_attempts a
                ON a.id = (SELECT MAX(x.id) FROM webhook_attempts x WHERE x.delivery_id = d.id)
         WHERE d.webhook_id = $1 AND ($2 = 0 OR d.id < $2) AND ($3 = '' OR d.status = $3)
         ORDER BY d.id DESC LIMIT $4",
    )
    .bind(webhook_id)
    .bind(before)
    .bind(status.map_or("", |s| s.as_str()))
    .bind(limit)
    .fetch_all(&db.pool)
    .await?)
}

/// Sends a delivery again, now (whatever its state), with three days of retries; returns the
/// event's id.
pub async fn redeliver(
    db: &Db,
    actor: &Actor,
    merchant_id: MerchantId,
    webhook_id: i64,
    delivery_id: i64,
) -> DomainResult<i64> {
    get(db, merchant_id, webhook_id).await?;
    let mut tx = db.begin_write().await?;
    let event: Option<i64> = sqlx::query_scalar(
        "UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = $1,
             first_attempt_at = NULL, delivered_at = NULL
         WHERE id = $2 AND webhook_id = $3 RETURNING event_seq",
    )
    .bind(db.now_ms())
    .bind(delivery_id)
    .bind(webhook_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(event) = event else {
        return Err(DomainError::NotFound("delivery"));
    };
    audit::record(
        &mut tx,
        db.now_ms(),
        actor,
        Some(merchant_id),
        "webhook.redeliver",
        &format!("webhook:{webhook_id}"),
        &format!("delivery {delivery_id}"),
    )
    .await?;
    tx.commit().await?;
    Ok(event)
}

/// Webhooks the sender paused (a day of failures, or the circuit breaker): the back office's
/// banner.
pub async fn paused_for_failing(db: &Db, merchant_id: MerchantId) -> DomainResult<Vec<Webhook>> {
    Ok(list(db, merchant_id)
        .await?
        .into_iter()
        .filter(|w| {
            matches!(
                w.paused_reason,
                Some(PauseReason::Failing | PauseReason::Breaker)
            )
        })
        .collect())
}

/// Deliveries waiting (pending) across all webhooks, and when the oldest was queued.
pub async fn backlog(db: &Db) -> DomainResult<(i64, Option<i64>)> {
    let (n, oldest): (i64, Option<i64>) = sqlx::query_as(
        "SELECT COUNT(*), MIN(created_at) FROM webhook_deliveries WHERE status = 'PENDING'",
    )
    .fetch_one(&db.pool)
    .await?;
    Ok((n, oldest))
}
