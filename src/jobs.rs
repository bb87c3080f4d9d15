//! Background loops. Each is safe to run on every instance at once: the work is idempotent.

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::infra::db::Db;
use crate::infra::sessions::SqlSessionStore;

/// What the loops need, and no more: the pool, the session store, and their intervals.
pub struct JobSettings {
    pub expiry_interval_seconds: u64,
    pub slot_window_days: i64,
    pub reconcile_interval_seconds: u64,
    pub reconcile_full_interval_seconds: u64,
    pub upload_dir: std::path::PathBuf,
    pub webhook_poll_ms: u64,
    pub webhook_timeout_seconds: u64,
    pub webhook_allow_private: bool,
    pub verdict_watch_seconds: u64,
    pub thresholds: crate::domain::sellable::Thresholds,
}

impl JobSettings {
    pub fn from_config(c: &crate::Config) -> Self {
        JobSettings {
            expiry_interval_seconds: c.serve.expiry_interval_seconds,
            slot_window_days: c.serve.slot_window_days,
            reconcile_interval_seconds: c.serve.reconcile_interval_seconds,
            reconcile_full_interval_seconds: c.serve.reconcile_full_interval_seconds,
            upload_dir: c.serve.upload_dir.clone(),
            webhook_poll_ms: c.serve.webhook_poll_ms,
            webhook_timeout_seconds: c.serve.webhook_timeout_seconds,
            webhook_allow_private: c.serve.webhook_allow_private,
            verdict_watch_seconds: c.serve.verdict_watch_seconds,
            thresholds: c.sellable_thresholds(),
        }
    }
}

pub struct Jobs(Vec<JoinHandle<()>>);

impl Jobs {
    pub fn abort(&self) {
        for h in &self.0 {
            h.abort();
        }
    }
}

/// Starts every loop on this instance; each is one function below.
pub fn spawn(
    pool: &Db,
    sessions: &SqlSessionStore,
    keys: &std::sync::Arc<crate::domain::kernel::code_keys::CodeKeys>,
    settings: JobSettings,
) -> Jobs {
    let db = || pool.clone();
    let mut jobs = vec![
        tokio::spawn(cleanup(db(), sessions.clone())),
        tokio::spawn(expiry(db(), settings.expiry_interval_seconds)),
        tokio::spawn(materialize(db(), settings.slot_window_days)),
        tokio::spawn(codes_and_no_shows(db(), settings.upload_dir.clone())),
        tokio::spawn(warm_then_reconcile(
            db(),
            settings.reconcile_interval_seconds,
            settings.reconcile_full_interval_seconds,
        )),
        tokio::spawn(sequencer(db())),
        tokio::spawn(gate_watch(db())),
        tokio::spawn(waitlist(db())),
    ];
    if settings.verdict_watch_seconds > 0 {
        jobs.push(tokio::spawn(verdict_watch(
            db(),
            settings.thresholds,
            settings.verdict_watch_seconds,
        )));
    }
    if settings.webhook_poll_ms > 0 {
        let dispatcher = crate::domain::integration::webhooks::dispatch::Dispatcher::new(
            keys.clone(),
            Duration::from_secs(settings.webhook_timeout_seconds.max(1)),
            settings.webhook_allow_private,
        );
        jobs.push(tokio::spawn(webhooks(
            db(),
            dispatcher,
            settings.webhook_poll_ms,
        )));
    }
    if let Some(replica) = pool.replica.clone() {
        jobs.push(tokio::spawn(replica_probe(replica, pool.pool.clone())));
    }
    Jobs(jobs)
}

/// Every five minutes: expired sessions and old sign-in failures go.
async fn cleanup(db: Db, sessions: SqlSessionStore) {
    let mut tick = tokio::time::interval(Duration::from_secs(300));
    loop {
        tick.tick().await;
        if let Err(e) = sessions.delete_expired().await {
            tracing::warn!(error = %e, "expired session cleanup failed");
        }
        if let Err(e) = crate::domain::tenancy::users::purge_old_attempts(&db).await {
            tracing::warn!(error = %e, "login failure cleanup failed");
        }
    }
}

/// Holds past their time are released, in batches.
async fn expiry(db: Db, every_seconds: u64) {
    let mut tick = tokio::time::interval(Duration::from_secs(every_seconds.max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // Drain in batches; every instance may run this at once (the moves are conditional).
        loop {
            match crate::domain::orders::expire_due(&db, 200).await {
                Ok(n) if n > 0 => tracing::info!(expired = n, "reservations expired"),
                Ok(_) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "reservation expiry failed");
                    break;
                }
            }
        }
    }
}

/// Hourly: the window rolls forward a day at a time; rule changes materialise at once.
async fn materialize(db: Db, window: i64) {
    let mut tick = tokio::time::interval(Duration::from_secs(3600));
    let mut started = false;
    loop {
        tick.tick().await;
        match crate::domain::slots::schedule::materialize_all(&db, window).await {
            Ok(n) if n > 0 => tracing::info!(created = n, "slots materialised"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "slot materialisation failed"),
        }
        // Not at start: a database just created has nothing worth measuring yet.
        if std::mem::replace(&mut started, true) {
            if let Err(e) = db.refresh_statistics().await {
                tracing::warn!(error = %e, "refreshing the planner's statistics failed");
            }
        }
    }
}

/// Every minute: fail imports whose process died, expire codes past their date, and mark the
/// stores' automatic no-shows.
async fn codes_and_no_shows(db: Db, upload_dir: std::path::PathBuf) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        match crate::domain::codes::fail_abandoned(&db, 120_000).await {
            Ok(n) if n > 0 => {
                tracing::warn!(batches = n, "abandoned code imports marked FAILED")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "abandoned import check failed"),
        }
        // Spool files no import holds any more (a crash mid-import): plaintext codes must not
        // stay on disk. An hour is far past the longest import.
        let dir = upload_dir.clone();
        let _ = tokio::task::spawn_blocking(move || {
            crate::domain::codes::import::sweep_spool(&dir, Some(Duration::from_secs(3600)))
        })
        .await;
        match crate::domain::codes::expire_due(&db).await {
            Ok(n) if n > 0 => tracing::info!(codes = n, "codes expired"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "code expiry failed"),
        }
        // Stores that asked for it: unmarked bookings of ended slots become no-shows.
        match crate::domain::slots::no_show::sweep(&db).await {
            Ok(n) if n > 0 => tracing::info!(bookings = n, "bookings marked no-show"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "automatic no-show failed"),
        }
    }
}

/// Warms the gate first (recently active SKUs and slots are in Redis before the first buyer),
/// then reconciles what changed since the last run, and everything once every `full_seconds`.
async fn warm_then_reconcile(db: Db, every: u64, full_seconds: u64) {
    match crate::domain::orders::gate::warm(&db).await {
        Ok(n) if n > 0 => tracing::info!(keys = n, "Redis gate warmed"),
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "warming the Redis gate failed"),
    }
    if every == 0 {
        return;
    }
    let full_every = Duration::from_secs(full_seconds);
    let actor = crate::domain::Actor::system("system:reconcile");
    let mut tick = tokio::time::interval(Duration::from_secs(every));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        match crate::domain::reconcile::run_scheduled(&db, &actor, full_every).await {
            Ok(r) if !r.broken.is_empty() => {
                tracing::error!(
                    run = r.run.id,
                    broken = r.broken.len(),
                    "reconciliation found broken identities"
                )
            }
            Ok(r) => tracing::info!(
                run = r.run.id,
                repaired = r.repaired.len(),
                "reconciliation done"
            ),
            Err(e) => tracing::warn!(error = %e, "reconciliation failed"),
        }
    }
}

/// Every second: number the committed change events, so a feed read finds little to do, and
/// fold the code counts' deltas, so a page adds few of them.
async fn sequencer(db: Db) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(e) = crate::domain::trail::events::sequence(&db).await {
            tracing::warn!(error = %e, "numbering events failed");
        }
        if let Err(e) = crate::domain::codes::counts::fold(&db, 20_000).await {
            tracing::warn!(error = %e, "folding code counts failed");
        }
    }
}

/// Every 10 s: a gate off for over a minute is an alert (and its end another).
async fn gate_watch(db: Db) {
    let mut tick = tokio::time::interval(Duration::from_secs(10));
    loop {
        tick.tick().await;
        if let Err(e) = crate::domain::integration::alerts::watch_gate(&db, db.now_ms()).await {
            tracing::warn!(error = %e, "watching the Redis gate failed");
        }
    }
}

/// Places freed on this instance go to waiting customers at once; every 30 s a sweep catches
/// what no mark said (another instance's change, a killed instance), ends the waits of slots
/// that have started and the held offers whose time ran out.
async fn waitlist(db: Db) {
    use crate::domain::slots::waitlist;
    let slot_cache = crate::domain::slots::cache::of(&db);
    let mut sweep = tokio::time::interval(Duration::from_secs(30));
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let slots = tokio::select! {
            _ = slot_cache.freed.marked() => slot_cache.freed.take(),
            _ = sweep.tick() => {
                if let Err(e) = waitlist::expire_started(&db).await {
                    tracing::warn!(error = %e, "expiring waits failed");
                }
                // Held offers nobody answered in time: their places go to the next in line
                // (marked as freed, so the next turn of this loop fills them).
                if let Err(e) = waitlist::end_lapsed_offers(&db).await {
                    tracing::warn!(error = %e, "ending lapsed waiting-list offers failed");
                }
                waitlist::fillable(&db).await.unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "reading the waiting lists failed");
                    Vec::new()
                })
            }
        };
        for (merchant_id, slot_id) in slots {
            if let Err(e) = waitlist::fill(&db, merchant_id, slot_id).await {
                tracing::warn!(slot_id, error = %e, "filling a waiting list failed");
            }
        }
    }
}

/// Verdicts turn with time too (a slot starts, a sale ends): watched, not hooked.
async fn verdict_watch(db: Db, th: crate::domain::sellable::Thresholds, every_seconds: u64) {
    let mut tick = tokio::time::interval(Duration::from_secs(every_seconds));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let started = std::time::Instant::now();
        match crate::domain::sellable::watch(&db, &th).await {
            Ok(r) => tracing::debug!(
                skus = r.seen,
                turned = r.turned,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "sellable verdicts watched"
            ),
            Err(e) => tracing::warn!(error = %e, "watching sellable verdicts failed"),
        }
    }
}

/// Every instance sends: claims keep them off each other's deliveries.
async fn webhooks(
    db: Db,
    dispatcher: crate::domain::integration::webhooks::dispatch::Dispatcher,
    poll_ms: u64,
) {
    let mut tick = tokio::time::interval(Duration::from_millis(poll_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = db.now_ms();
        match dispatcher.run_job(&db, now).await {
            Ok(p) if p.sent > 0 => tracing::info!(
                sent = p.sent,
                delivered = p.delivered,
                "webhook deliveries sent"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "sending webhooks failed"),
        }
    }
}

/// Decides, for every read that may lag, whether the replica is close enough behind.
async fn replica_probe(
    replica: std::sync::Arc<crate::infra::replica::Replica>,
    primary: sqlx::AnyPool,
) {
    let mut tick = tokio::time::interval(crate::infra::replica::PROBE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        replica.probe(&primary).await;
        metrics::gauge!("sellable_replica_usable").set(match replica.state() {
            crate::infra::replica::ReplicaState::Ok => 1.0,
            _ => 0.0,
        });
        if let Some(lag) = replica.lag_seconds() {
            metrics::gauge!("sellable_replica_lag_seconds").set(lag);
        }
    }
}
