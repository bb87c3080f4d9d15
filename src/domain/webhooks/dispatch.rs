//! Sending webhooks. A pass, on any instance at any time: number committed events, queue each
//! webhook the events after its cursor that its filter admits (one delivery per webhook and
//! event, by a unique key), claim due deliveries, POST them, and record every attempt.
//!
//! A delivery is claimed by moving its next attempt past a lease, in one statement (with
//! `FOR UPDATE SKIP LOCKED` on PostgreSQL, so instances claim different rows without waiting):
//! another instance finds it not due, and a process killed mid-send leaves it due again when the
//! lease runs out. So each event goes to each webhook once while instances live, and at least
//! once when one dies; receivers deduplicate by `Sellable-Event-Id`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use rand::Rng;
use sqlx::FromRow;

use super::signature;
use crate::domain::code_keys::CodeKeys;
use crate::domain::error::DomainResult;
use crate::domain::events::{self, Event, TypeFilter};
use crate::domain::{audit, Actor, MerchantId};
use crate::infra::db::{Db, Dialect};
use crate::infra::outbound::{Answer, Outbound};

const SECOND: i64 = 1000;
const HOUR: i64 = 3600 * SECOND;
/// A webhook failing this long without one success is paused.
pub const PAUSE_AFTER_MS: i64 = 24 * HOUR;
/// A delivery is given up this long after its first attempt.
pub const GIVE_UP_AFTER_MS: i64 = 72 * HOUR;
/// The first retry's delay; each next one doubles, up to `RETRY_MAX_MS`.
const RETRY_BASE_MS: i64 = 30 * SECOND;
const RETRY_MAX_MS: i64 = 6 * HOUR;
/// Events queued per webhook per pass, and deliveries claimed per round.
const FAN_OUT_BATCH: i64 = 5000;
const CLAIM_BATCH: i64 = 500;
/// POSTs in flight at once on one instance.
const PARALLEL: usize = 32;

/// The delay before retry number `attempts` (1: after the first failure): doubling from 30 s to
/// 6 h, each spread by ±25 % so that endpoints coming back are not hit by every retry at once.
pub fn backoff_ms(attempts: i64) -> i64 {
    let doubled = RETRY_BASE_MS.saturating_mul(1 << (attempts - 1).clamp(0, 20));
    let base = doubled.min(RETRY_MAX_MS);
    let jitter: f64 = rand::rng().random_range(0.75..1.25);
    (base as f64 * jitter) as i64
}

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Deliveries queued.
    pub queued: u64,
    /// POSTs made, and how many succeeded.
    pub sent: u64,
    pub delivered: u64,
    /// Webhooks paused for failing a day.
    pub paused: u64,
}

pub struct Dispatcher {
    out: Outbound,
    keys: Arc<CodeKeys>,
    /// How long a claimed delivery is left to its sender before another may take it.
    lease_ms: i64,
}

impl Dispatcher {
    pub fn new(keys: Arc<CodeKeys>, timeout: Duration, allow_private: bool) -> Dispatcher {
        Dispatcher {
            out: Outbound::new(timeout, allow_private),
            keys,
            lease_ms: 2 * timeout.as_millis() as i64 + 10 * SECOND,
        }
    }

    /// Everything due at `now` (ms): queues, sends until nothing is due, pauses the failing.
    pub async fn run_once(&self, db: &Db, now: i64) -> DomainResult<Pass> {
        let mut pass = Pass::default();
        // No webhook: nothing to queue or send (the sequencer job numbers the events anyway).
        let any: Option<i64> =
            sqlx::query_scalar("SELECT id FROM webhooks WHERE status <> 'DELETED' LIMIT 1")
                .fetch_optional(&db.pool)
                .await?;
        if any.is_none() {
            return Ok(pass);
        }
        loop {
            events::sequence(db).await?;
            let queued = fan_out(db, now).await?;
            let (sent, delivered) = self.send_due(db, now).await?;
            pass.queued += queued;
            pass.sent += sent;
            pass.delivered += delivered;
            if queued == 0 && sent < CLAIM_BATCH as u64 {
                break;
            }
        }
        pass.paused = pause_failing(db, now).await?;
        Ok(pass)
    }

    /// Claims due deliveries, POSTs them, records the attempts; returns (sent, delivered).
    async fn send_due(&self, db: &Db, now: i64) -> DomainResult<(u64, u64)> {
        let claimed = claim(db, now, now + self.lease_ms).await?;
        if claimed.is_empty() {
            return Ok((0, 0));
        }
        let jobs = self.prepare(db, &claimed, now).await?;
        let answers: Vec<(Claimed, Answer)> = futures_util::stream::iter(jobs)
            .map(|job| async move {
                let answer = match &job.request {
                    Some((url, headers, body)) => {
                        let headers: Vec<(&str, String)> =
                            headers.iter().map(|(k, v)| (*k, v.clone())).collect();
                        self.out.post_json(url, &headers, body.clone()).await
                    }
                    None => Answer {
                        status: None,
                        latency_ms: 0,
                        error: Some("event_missing"),
                        head: String::new(),
                    },
                };
                (job.claimed, answer)
            })
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
        let delivered = answers.iter().filter(|(_, a)| a.succeeded()).count() as u64;
        record(db, &answers, now).await?;
        Ok((answers.len() as u64, delivered))
    }

    /// Each claimed delivery's request: its webhook's URL, the event's JSON, and the signature
    /// with the webhook's secrets.
    async fn prepare(&self, db: &Db, claimed: &[Claimed], now: i64) -> DomainResult<Vec<Job>> {
        let mut hook_ids: Vec<i64> = claimed.iter().map(|c| c.webhook_id).collect();
        hook_ids.sort_unstable();
        hook_ids.dedup();
        let mut hooks: HashMap<i64, Target> = HashMap::new();
        for id in hook_ids {
            if let Some(t) = self.target(db, id, now).await? {
                hooks.insert(id, t);
            }
        }
        // The events, fetched per merchant.
        let mut wanted: HashMap<MerchantId, Vec<i64>> = HashMap::new();
        for c in claimed {
            if let Some(t) = hooks.get(&c.webhook_id) {
                wanted.entry(t.merchant_id).or_default().push(c.event_seq);
            }
        }
        let mut bodies: HashMap<(MerchantId, i64), (Vec<u8>, &'static str)> = HashMap::new();
        for (merchant, ids) in wanted {
            for e in events::by_ids(db, merchant, &ids).await? {
                let ty = e.ty.as_str();
                let id = e.id;
                bodies.insert((merchant, id), (body_of(&e), ty));
            }
        }
        // The signature's time is the wall clock's (a receiver compares it with its own), not
        // the pass's schedule time.
        let t = crate::infra::db::now_ms() / SECOND;
        Ok(claimed
            .iter()
            .map(|c| {
                let request = hooks.get(&c.webhook_id).and_then(|hook| {
                    let (body, ty) = bodies.get(&(hook.merchant_id, c.event_seq))?;
                    let secrets: Vec<&str> = hook.secrets.iter().map(String::as_str).collect();
                    let headers = vec![
                        ("Sellable-Signature", signature::header(&secrets, t, body)),
                        ("Sellable-Event-Id", c.event_seq.to_string()),
                        ("Sellable-Event-Type", ty.to_string()),
                        ("Sellable-Delivery-Id", c.id.to_string()),
                    ];
                    Some((hook.url.clone(), headers, body.clone()))
                });
                Job {
                    claimed: c.clone(),
                    request,
                }
            })
            .collect())
    }

    /// A webhook's URL and its secrets in signing order (the current, then the rotated-out one
    /// while it still signs).
    async fn target(&self, db: &Db, id: i64, now: i64) -> DomainResult<Option<Target>> {
        let row: Option<TargetRow> = sqlx::query_as(
            "SELECT merchant_id, url, secret_ct, secret_nonce, secret_key_version, old_secret_ct,
                    old_secret_nonce, old_secret_key_version, old_secret_until
             FROM webhooks WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&db.pool)
        .await?;
        let Some(r) = row else { return Ok(None) };
        let merchant_id = MerchantId(r.merchant_id);
        let decrypt = |v: i64, ct: &[u8], nonce: &[u8]| {
            self.keys
                .decrypt(merchant_id, v, ct, nonce)
                .map_err(|e| crate::domain::DomainError::Internal(e.to_string()))
        };
        let mut secrets = vec![decrypt(
            r.secret_key_version,
            &r.secret_ct,
            &r.secret_nonce,
        )?];
        if let (Some(ct), Some(nonce), Some(v), Some(until)) = (
            &r.old_secret_ct,
            &r.old_secret_nonce,
            r.old_secret_key_version,
            r.old_secret_until,
        ) {
            if until > now {
                secrets.push(decrypt(v, ct, nonce)?);
            }
        }
        Ok(Some(Target {
            merchant_id,
            url: r.url,
            secrets,
        }))
    }
}

/// The event as sent: the same JSON as the feed's.
fn body_of(e: &Event) -> Vec<u8> {
    serde_json::to_vec(e).expect("an event serialises")
}

#[derive(FromRow)]
struct TargetRow {
    merchant_id: i64,
    url: String,
    secret_ct: Vec<u8>,
    secret_nonce: Vec<u8>,
    secret_key_version: i64,
    old_secret_ct: Option<Vec<u8>>,
    old_secret_nonce: Option<Vec<u8>>,
    old_secret_key_version: Option<i64>,
    old_secret_until: Option<i64>,
}

struct Target {
    merchant_id: MerchantId,
    url: String,
    secrets: Vec<String>,
}

type Request = (String, Vec<(&'static str, String)>, Vec<u8>);

struct Job {
    claimed: Claimed,
    /// `None`: the webhook or the event is gone.
    request: Option<Request>,
}

#[derive(Debug, Clone, FromRow)]
struct Claimed {
    id: i64,
    webhook_id: i64,
    event_seq: i64,
    attempts: i64,
    first_attempt_at: Option<i64>,
}

/// Queues, for every webhook not deleted (paused ones too: what they miss waits for them), the
/// events after its cursor that its filter admits. The cursor moves in the same transaction, under
/// the webhook row's lock, and a delivery exists once per webhook and event (a unique key).
async fn fan_out(db: &Db, now: i64) -> DomainResult<u64> {
    let hooks: Vec<(i64, i64, String, i64)> = sqlx::query_as(
        "SELECT w.id, w.merchant_id, w.events, w.cursor FROM webhooks w
         WHERE w.status <> 'DELETED'
           AND EXISTS (SELECT 1 FROM events e WHERE e.merchant_id = w.merchant_id AND e.seq > w.cursor)",
    )
    .fetch_all(&db.pool)
    .await?;
    let mut queued = 0;
    for (id, merchant_id, filter, cursor) in hooks {
        let top: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(seq) FROM (SELECT seq FROM events WHERE merchant_id = $1 AND seq > $2
                                   ORDER BY seq LIMIT $3) AS t",
        )
        .bind(merchant_id)
        .bind(cursor)
        .bind(FAN_OUT_BATCH)
        .fetch_one(&db.pool)
        .await?;
        let Some(top) = top else { continue };
        let mut tx = db.begin_write().await?;
        // The row's lock, and its cursor as it is now: another instance may have moved it.
        let Some(cursor): Option<i64> = sqlx::query_scalar(
            "UPDATE webhooks SET cursor = cursor WHERE id = $1 AND cursor < $2 RETURNING cursor",
        )
        .bind(id)
        .bind(top)
        .fetch_optional(&mut *tx)
        .await?
        else {
            tx.rollback().await?;
            continue;
        };
        let types = TypeFilter::parse(&filter).unwrap_or_default().types();
        let placeholders: Vec<String> = (0..types.len()).map(|i| format!("${}", i + 6)).collect();
        let sql = format!(
            "INSERT INTO webhook_deliveries
                 (webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
             SELECT $1, seq, 'PENDING', 0, $2, $2 FROM events
             WHERE merchant_id = $3 AND seq > $4 AND seq <= $5 AND type IN ({})
             ON CONFLICT (webhook_id, event_seq) DO NOTHING",
            placeholders.join(", ")
        );
        let mut q = sqlx::query(&sql)
            .bind(id)
            .bind(now)
            .bind(merchant_id)
            .bind(cursor)
            .bind(top);
        for t in &types {
            q = q.bind(*t);
        }
        queued += q.execute(&mut *tx).await?.rows_affected();
        sqlx::query("UPDATE webhooks SET cursor = $1 WHERE id = $2")
            .bind(top)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    }
    Ok(queued)
}

/// Takes up to a batch of due deliveries of active webhooks, oldest due first, by moving their
/// next attempt to the lease's end.
async fn claim(db: &Db, now: i64, lease_end: i64) -> DomainResult<Vec<Claimed>> {
    let lock = match db.dialect {
        Dialect::Postgres => "FOR UPDATE OF d SKIP LOCKED",
        // One writer at a time: the write transaction is the lock.
        Dialect::Sqlite => "",
    };
    let sql = format!(
        "UPDATE webhook_deliveries
         SET next_attempt_at = $1, attempts = attempts + 1,
             first_attempt_at = COALESCE(first_attempt_at, $2)
         WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                      WHERE d.status = 'PENDING' AND d.next_attempt_at <= $2 AND w.status = 'ACTIVE'
                      ORDER BY d.next_attempt_at, d.id LIMIT $3 {lock})
         RETURNING id, webhook_id, event_seq, attempts, first_attempt_at"
    );
    let mut tx = db.begin_write().await?;
    let claimed: Vec<Claimed> = sqlx::query_as(&sql)
        .bind(lease_end)
        .bind(now)
        .bind(CLAIM_BATCH)
        .fetch_all(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(claimed)
}

/// Every attempt's log row and its delivery's next state, in one transaction: delivered; or
/// retried after a backoff; or given up three days after the first attempt.
async fn record(db: &Db, answers: &[(Claimed, Answer)], now: i64) -> DomainResult<()> {
    let mut tx = db.begin_write().await?;
    for (c, a) in answers {
        sqlx::query(
            "INSERT INTO webhook_attempts
                 (delivery_id, webhook_id, at, status_code, latency_ms, error, response_head)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(c.id)
        .bind(c.webhook_id)
        .bind(now)
        .bind(a.status.map(i64::from))
        .bind(a.latency_ms)
        .bind(a.error)
        .bind(&a.head)
        .execute(&mut *tx)
        .await?;
        if a.succeeded() {
            sqlx::query(
                "UPDATE webhook_deliveries SET status = 'DELIVERED', delivered_at = $1 WHERE id = $2",
            )
            .bind(now)
            .bind(c.id)
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL")
                .bind(c.webhook_id)
                .execute(&mut *tx)
                .await?;
        } else {
            let first = c.first_attempt_at.unwrap_or(now);
            let (status, next) = if now - first >= GIVE_UP_AFTER_MS {
                ("FAILED", now)
            } else {
                ("PENDING", now + backoff_ms(c.attempts))
            };
            sqlx::query(
                "UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2 WHERE id = $3",
            )
            .bind(status)
            .bind(next)
            .bind(c.id)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "UPDATE webhooks SET failing_since = $1 WHERE id = $2 AND failing_since IS NULL",
            )
            .bind(now)
            .bind(c.webhook_id)
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Pauses the webhooks that have failed for a day without a success; each is audited.
async fn pause_failing(db: &Db, now: i64) -> DomainResult<u64> {
    let mut tx = db.begin_write().await?;
    let paused: Vec<(i64, i64, String)> = sqlx::query_as(
        "UPDATE webhooks SET status = 'PAUSED', paused_reason = 'failing', updated_at = $1
         WHERE status = 'ACTIVE' AND failing_since IS NOT NULL AND failing_since <= $2
         RETURNING id, merchant_id, url",
    )
    .bind(now)
    .bind(now - PAUSE_AFTER_MS)
    .fetch_all(&mut *tx)
    .await?;
    let actor = Actor::system("system:webhooks");
    for (id, merchant_id, url) in &paused {
        audit::record(
            &mut tx,
            &actor,
            Some(MerchantId(*merchant_id)),
            "webhook.auto_pause",
            &format!("webhook:{id}"),
            url,
        )
        .await?;
    }
    tx.commit().await?;
    if !paused.is_empty() {
        tracing::warn!(
            webhooks = paused.len(),
            "webhooks paused after a day of failed deliveries"
        );
    }
    Ok(paused.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_from_thirty_seconds_to_six_hours_with_jitter() {
        for _ in 0..100 {
            let first = backoff_ms(1);
            assert!((22_500..37_500).contains(&first), "{first}");
            let fourth = backoff_ms(4);
            assert!((180_000..300_000).contains(&fourth), "{fourth}");
            let late = backoff_ms(40);
            assert!((RETRY_MAX_MS * 3 / 4..RETRY_MAX_MS * 5 / 4).contains(&late));
        }
        // About 17 tries fit in the three days before a delivery is given up.
        let total: i64 = (1..=17)
            .map(|n| RETRY_BASE_MS.saturating_mul(1 << (n - 1)).min(RETRY_MAX_MS))
            .sum();
        assert!(total > GIVE_UP_AFTER_MS - 24 * HOUR && total < GIVE_UP_AFTER_MS + 24 * HOUR);
    }
}
