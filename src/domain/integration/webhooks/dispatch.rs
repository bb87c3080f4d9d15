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

use rand::Rng;
use sqlx::FromRow;

use super::signature;
use crate::domain::kernel::code_keys::CodeKeys;
use crate::domain::kernel::error::DomainResult;
use crate::domain::trail::events::{self, Event, TypeFilter};
use crate::domain::{trail::audit, Actor, MerchantId};
use crate::infra::db::Db;
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
/// Events queued per webhook per round, and deliveries claimed per round.
const FAN_OUT_BATCH: i64 = 5000;
const CLAIM_BATCH: i64 = 128;
/// POSTs in flight at once on one instance, all endpoints together.
const PARALLEL: usize = 256;
/// Deliveries of one endpoint claimed in one round; an endpoint with a send still in flight on
/// this instance gets none, so a slow or dead endpoint holds at most this many connections and
/// never a round: the others' deliveries go out in the next round, not after its timeouts.
pub const PER_ENDPOINT: i64 = 4;
/// A round waits this long for its answers, then goes on; later answers are recorded by a later
/// round (or at the end of `run_once`).
const ROUND_WAIT: Duration = Duration::from_millis(500);
/// Attempts in a row that failed (timeouts, refusals, errors) after which the circuit breaker
/// pauses an endpoint and tells its merchant.
pub const BREAKER_AFTER: i64 = 20;
/// A pass ends after this long even with more due (the next tick goes on): its rounds' clocks
/// and the failing check stay current.
const PASS_MAX_MS: i64 = 20 * SECOND;

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
    out: Arc<Outbound>,
    keys: Arc<CodeKeys>,
    /// How long a claimed delivery is left to its sender before another may take it.
    lease_ms: i64,
    /// Sends of this instance in flight, per endpoint, and their answers not yet recorded.
    flight: Arc<Flight>,
}

/// What is in flight on this instance.
struct Flight {
    by_hook: std::sync::Mutex<HashMap<i64, usize>>,
    slots: Arc<tokio::sync::Semaphore>,
    answered_tx: tokio::sync::mpsc::UnboundedSender<(Claimed, Answer)>,
    answered_rx: tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<(Claimed, Answer)>>,
}

impl Flight {
    fn busy_hooks(&self) -> Vec<i64> {
        let map = self.by_hook.lock().unwrap_or_else(|e| e.into_inner());
        map.iter()
            .filter(|(_, n)| **n > 0)
            .map(|(h, _)| *h)
            .collect()
    }

    /// Sends started here whose answers are not yet recorded.
    fn in_flight(&self) -> usize {
        let map = self.by_hook.lock().unwrap_or_else(|e| e.into_inner());
        map.values().sum()
    }

    fn start(&self, hook: i64) {
        *self
            .by_hook
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(hook)
            .or_insert(0) += 1;
    }

    fn end(&self, hook: i64) {
        let mut map = self.by_hook.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = map.get_mut(&hook) {
            *n -= 1;
            if *n == 0 {
                map.remove(&hook);
            }
        }
    }
}

impl Dispatcher {
    pub fn new(keys: Arc<CodeKeys>, timeout: Duration, allow_private: bool) -> Dispatcher {
        let (answered_tx, answered_rx) = tokio::sync::mpsc::unbounded_channel();
        Dispatcher {
            out: Arc::new(Outbound::new(timeout, allow_private)),
            keys,
            flight: Arc::new(Flight {
                by_hook: Default::default(),
                slots: Arc::new(tokio::sync::Semaphore::new(PARALLEL)),
                answered_tx,
                answered_rx: tokio::sync::Mutex::new(answered_rx),
            }),
            // A round's sends, at worst every one timing out in turn, and a margin: another
            // instance takes a claim only when its sender is surely gone.
            lease_ms: 2 * timeout.as_millis() as i64 + 10 * SECOND,
        }
    }

    /// Everything due at `now` (ms): queues, sends until nothing is due (or for 20 s), waits for
    /// every answer and records it, pauses the failing. `now` may be a test's own clock: the
    /// pass's clock moves on from it with the wall's.
    pub async fn run_once(&self, db: &Db, now: i64) -> DomainResult<Pass> {
        self.pass(db, now, true).await
    }

    /// A pass of the sending job: as `run_once`, but sends still waiting for a slow endpoint stay
    /// in flight past the pass; a later pass records their answers.
    pub async fn run_job(&self, db: &Db, now: i64) -> DomainResult<Pass> {
        self.pass(db, now, false).await
    }

    async fn pass(&self, db: &Db, now: i64, wait_all: bool) -> DomainResult<Pass> {
        let skew = now - db.now_ms();
        let clock = move || db.now_ms() + skew;
        let mut pass = Pass::default();
        // No webhook: nothing to queue or send (the sequencer job numbers the events anyway).
        let any: Option<i64> =
            sqlx::query_scalar("SELECT id FROM webhooks WHERE status <> 'DELETED' LIMIT 1")
                .fetch_optional(&db.pool)
                .await?;
        if any.is_none() {
            return Ok(pass);
        }
        let started = db.now_ms();
        loop {
            events::sequence(db).await?;
            let queued = fan_out(db, clock()).await?;
            let (sent, delivered) = self.send_due(db, &clock).await?;
            pass.queued += queued;
            pass.sent += sent;
            pass.delivered += delivered;
            let idle = queued == 0 && sent < CLAIM_BATCH as u64;
            if idle || db.now_ms() - started > PASS_MAX_MS {
                break;
            }
        }
        if wait_all {
            // Every answer, however slow (a receiver's timeout at most), and whatever is left;
            // never past a lease (a send that could not answer is then another's to retry).
            let give_up = tokio::time::Instant::now() + Duration::from_millis(self.lease_ms as u64);
            while tokio::time::Instant::now() < give_up {
                let expect = self.flight.in_flight();
                let (sent, delivered) = self.record_answers(db, &clock, expect, ROUND_WAIT).await?;
                pass.sent += sent;
                pass.delivered += delivered;
                if expect == 0 {
                    break;
                }
            }
        }
        pass.paused = pause_failing(db, clock()).await?;
        Ok(pass)
    }

    /// Records the answers that have come (and, when `expect` > 0, waits up to `wait` for that
    /// many); returns (recorded, delivered).
    async fn record_answers(
        &self,
        db: &Db,
        clock: &impl Fn() -> i64,
        expect: usize,
        wait: Duration,
    ) -> DomainResult<(u64, u64)> {
        let mut answers = Vec::new();
        {
            let mut rx = self.flight.answered_rx.lock().await;
            let deadline = tokio::time::Instant::now() + wait;
            loop {
                while let Ok(a) = rx.try_recv() {
                    answers.push(a);
                }
                if answers.len() >= expect {
                    break;
                }
                if self.flight.in_flight() <= answers.len() {
                    // Every send has answered.
                    break;
                }
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Some(a)) => answers.push(a),
                    _ => break,
                }
            }
        }
        if answers.is_empty() {
            return Ok((0, 0));
        }
        let delivered = answers.iter().filter(|(_, a)| a.succeeded()).count() as u64;
        let recorded = record(db, &answers, clock()).await;
        for (c, _) in &answers {
            self.flight.end(c.webhook_id);
        }
        recorded?;
        Ok((answers.len() as u64, delivered))
    }

    /// Claims due deliveries fairly (a few per endpoint, none of an endpoint still answering),
    /// starts their POSTs, and records the answers that come within a round's wait, with any
    /// earlier ones; returns (recorded, delivered).
    async fn send_due(&self, db: &Db, clock: &impl Fn() -> i64) -> DomainResult<(u64, u64)> {
        let now = clock();
        let room = self.flight.slots.available_permits() as i64;
        let claimed = if room > 0 {
            claim(
                db,
                now,
                now + self.lease_ms,
                room.min(CLAIM_BATCH),
                &self.flight.busy_hooks(),
            )
            .await?
        } else {
            Vec::new()
        };
        let started = claimed.len();
        if started > 0 {
            let jobs = self.prepare(db, &claimed, now).await?;
            for job in jobs {
                let permit = self
                    .flight
                    .slots
                    .clone()
                    .try_acquire_owned()
                    .expect("claimed no more than the free slots");
                self.flight.start(job.claimed.webhook_id);
                let (out, flight) = (self.out.clone(), self.flight.clone());
                tokio::spawn(async move {
                    let answer = send(&out, &job).await;
                    drop(permit);
                    // Its endpoint stays busy until the answer is recorded (`record_answers`).
                    let _ = flight.answered_tx.send((job.claimed, answer));
                });
            }
        }
        let (recorded, delivered) = self.record_answers(db, clock, started, ROUND_WAIT).await?;
        // "Sent" counts what this round claimed, so a pass goes on while there is more to claim.
        Ok((recorded.max(started as u64), delivered))
    }

    /// Each claimed delivery's request: its webhook's URL and secrets, and the event's JSON. A
    /// webhook whose secret cannot be read, or an event gone, fails that delivery alone.
    async fn prepare(&self, db: &Db, claimed: &[Claimed], now: i64) -> DomainResult<Vec<Job>> {
        let mut hook_ids: Vec<i64> = claimed.iter().map(|c| c.webhook_id).collect();
        hook_ids.sort_unstable();
        hook_ids.dedup();
        let mut hooks: HashMap<i64, Result<Target, &'static str>> = HashMap::new();
        for id in hook_ids {
            let target = match self.target(db, id, now).await {
                Ok(Some(t)) => Ok(t),
                Ok(None) => Err("webhook_missing"),
                Err(e) => {
                    tracing::error!(webhook = id, error = %e, "a webhook's secret cannot be read");
                    Err("secret_unavailable")
                }
            };
            hooks.insert(id, target);
        }
        // The events, fetched per merchant.
        let mut wanted: HashMap<MerchantId, Vec<i64>> = HashMap::new();
        for c in claimed {
            if let Some(Ok(t)) = hooks.get(&c.webhook_id) {
                wanted.entry(t.merchant_id).or_default().push(c.event_seq);
            }
        }
        let mut bodies: HashMap<(MerchantId, i64), (Vec<u8>, &'static str)> = HashMap::new();
        for (merchant, ids) in wanted {
            for e in events::by_ids(db, merchant, &ids).await? {
                bodies.insert((merchant, e.id), (body_of(&e), e.ty.as_str()));
            }
        }
        Ok(claimed
            .iter()
            .map(|c| {
                let request = match hooks.get(&c.webhook_id) {
                    Some(Ok(hook)) => match bodies.get(&(hook.merchant_id, c.event_seq)) {
                        Some((body, ty)) => Ok(Request {
                            url: hook.url.clone(),
                            secrets: hook.secrets.clone(),
                            event_type: ty,
                            body: body.clone(),
                        }),
                        None => Err("event_missing"),
                    },
                    Some(Err(why)) => Err(*why),
                    None => Err("webhook_missing"),
                };
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

/// One delivery's POST, signed as it goes: the time is the wall clock's at the POST, which a
/// receiver compares with its own.
async fn send(out: &Outbound, job: &Job) -> Answer {
    match &job.request {
        Ok(r) => {
            let t = crate::infra::clock::wall_ms() / SECOND;
            let secrets: Vec<&str> = r.secrets.iter().map(String::as_str).collect();
            let headers = [
                (
                    "Sellable-Signature",
                    signature::header(&secrets, t, &r.body),
                ),
                ("Sellable-Event-Id", job.claimed.event_seq.to_string()),
                ("Sellable-Event-Type", r.event_type.to_string()),
                ("Sellable-Delivery-Id", job.claimed.id.to_string()),
            ];
            out.post_json(&r.url, &headers, r.body.clone()).await
        }
        Err(why) => Answer {
            status: None,
            latency_ms: 0,
            error: Some(why),
            head: String::new(),
        },
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

struct Request {
    url: String,
    secrets: Vec<String>,
    event_type: &'static str,
    body: Vec<u8>,
}

struct Job {
    claimed: Claimed,
    /// Why it cannot be sent: the webhook or the event is gone, or the secret unreadable.
    request: Result<Request, &'static str>,
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
        // A filter that no longer parses (a type removed) admits nothing, not everything.
        let Ok(filter) = TypeFilter::parse(&filter) else {
            tracing::error!(
                webhook = id,
                filter,
                "a webhook's event filter does not parse"
            );
            tx.rollback().await?;
            continue;
        };
        let types = filter.types();
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

/// Takes up to `limit` due deliveries of active webhooks by moving their next attempt to the
/// lease's end: round robin over endpoints (each endpoint's oldest due first, at most
/// `PER_ENDPOINT` of one), leaving out the endpoints in `busy` (a send still in flight here). The
/// update is conditional on the delivery still being due, so of two instances choosing the same
/// row one takes it. On PostgreSQL the chosen rows are locked `SKIP LOCKED` first (a row another
/// instance is claiming is left to it, and two claims never wait on each other's rows in opposite
/// orders); SQLite's one writer is the lock there.
async fn claim(
    db: &Db,
    now: i64,
    lease_end: i64,
    limit: i64,
    busy: &[i64],
) -> DomainResult<Vec<Claimed>> {
    let not_busy = if busy.is_empty() {
        String::new()
    } else {
        let ids: Vec<String> = busy.iter().map(i64::to_string).collect();
        format!("AND d.webhook_id NOT IN ({})", ids.join(","))
    };
    let chosen = format!(
        "SELECT id FROM (
             SELECT d.id, d.next_attempt_at,
                    ROW_NUMBER() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id) AS turn
             FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
             WHERE d.status = 'PENDING' AND d.next_attempt_at <= $2 AND w.status = 'ACTIVE' {not_busy}
         ) AS ranked
         WHERE turn <= {PER_ENDPOINT}
         ORDER BY turn, next_attempt_at, id LIMIT $3"
    );
    let chosen = match db.dialect {
        // Materialised, so the locked rows are chosen once.
        crate::infra::db::Dialect::Postgres => format!(
            "WITH locked AS MATERIALIZED (
                 SELECT d.id FROM webhook_deliveries d WHERE d.id IN ({chosen})
                 FOR UPDATE OF d SKIP LOCKED)
             SELECT id FROM locked"
        ),
        crate::infra::db::Dialect::Sqlite => chosen,
    };
    let sql = format!(
        "UPDATE webhook_deliveries SET next_attempt_at = $1, attempts = attempts + 1,
             first_attempt_at = COALESCE(first_attempt_at, $2)
         WHERE id IN ({chosen}) AND status = 'PENDING' AND next_attempt_at <= $2
         RETURNING id, webhook_id, event_seq, attempts, first_attempt_at"
    );
    let mut tx = db.begin_write().await?;
    let claimed: Vec<Claimed> = sqlx::query_as(&sql)
        .bind(lease_end)
        .bind(now)
        .bind(limit)
        .fetch_all(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(claimed)
}

/// Every attempt's log row and its delivery's next state, in one transaction: delivered; or
/// retried after a backoff; or given up three days after the first attempt. A delivery changes
/// only while it is still this claim's (its attempt count and PENDING): one taken over after the
/// lease, delivered meanwhile or deleted keeps what happened to it since. Webhooks' failing
/// marks are written last, once each, in id order, so that two instances never lock two
/// webhook rows in opposite orders.
async fn record(db: &Db, answers: &[(Claimed, Answer)], now: i64) -> DomainResult<()> {
    let mut tx = db.begin_write().await?;
    let mut succeeded: std::collections::BTreeMap<i64, bool> = Default::default();
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
        let ok = a.succeeded();
        *succeeded.entry(c.webhook_id).or_default() |= ok;
        let (status, next) = if ok {
            ("DELIVERED", now)
        } else if now - c.first_attempt_at.unwrap_or(now) >= GIVE_UP_AFTER_MS {
            ("FAILED", now)
        } else {
            ("PENDING", now + backoff_ms(c.attempts))
        };
        sqlx::query(
            "UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2,
                 delivered_at = CASE WHEN $1 = 'DELIVERED' THEN $3 ELSE delivered_at END
             WHERE id = $4 AND attempts = $5 AND status = 'PENDING'",
        )
        .bind(status)
        .bind(next)
        .bind(now)
        .bind(c.id)
        .bind(c.attempts)
        .execute(&mut *tx)
        .await?;
    }
    let mut failed_in_batch: std::collections::BTreeMap<i64, i64> = Default::default();
    for (c, a) in answers {
        if !a.succeeded() {
            *failed_in_batch.entry(c.webhook_id).or_default() += 1;
        }
    }
    let mut tripped = Vec::new();
    for (webhook, ok) in succeeded {
        let mark = if ok {
            sqlx::query(
                "UPDATE webhooks SET failing_since = NULL, failures_in_a_row = 0
                 WHERE id = $1 AND (failing_since IS NOT NULL OR failures_in_a_row > 0)",
            )
            .bind(webhook)
        } else {
            sqlx::query(
                "UPDATE webhooks SET failing_since = COALESCE(failing_since, $1),
                     failures_in_a_row = failures_in_a_row + $3
                 WHERE id = $2",
            )
            .bind(now)
            .bind(webhook)
            .bind(failed_in_batch.get(&webhook).copied().unwrap_or(0))
        };
        mark.execute(&mut *tx).await?;
        if !ok {
            // The circuit breaker: an endpoint failing again and again is paused now.
            let paused: Option<(i64, String)> = sqlx::query_as(
                "UPDATE webhooks SET status = 'PAUSED', paused_reason = 'breaker', updated_at = $1
                 WHERE id = $2 AND status = 'ACTIVE' AND failures_in_a_row >= $3
                 RETURNING merchant_id, url",
            )
            .bind(now)
            .bind(webhook)
            .bind(BREAKER_AFTER)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some((merchant_id, url)) = paused {
                tripped.push((webhook, MerchantId(merchant_id), url));
            }
        }
    }
    let actor = Actor::system("system:webhooks");
    for (id, merchant_id, url) in &tripped {
        audit::record(
            &mut tx,
            now,
            &actor,
            Some(*merchant_id),
            "webhook.auto_pause",
            &format!("webhook:{id}"),
            url,
        )
        .await?;
        events::record(
            &mut tx,
            now,
            *merchant_id,
            events::EventType::WebhookPaused,
            events::Subject::new("webhook", *id, None),
            serde_json::json!({"url": url, "reason": "breaker",
                "failures_in_a_row": BREAKER_AFTER}),
        )
        .await?;
    }
    tx.commit().await?;
    if !tripped.is_empty() {
        tracing::warn!(
            webhooks = tripped.len(),
            "webhooks paused by the circuit breaker"
        );
    }
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
            db.now_ms(),
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
