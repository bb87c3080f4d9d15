//! A streaming replica for reads that may be a moment behind (`DATABASE_READ_URL`).
//!
//! The replica is only ever used while it is known to be close behind: every half second a probe
//! reads the primary's WAL position (with the wall-clock time it was read) and then the replica's
//! replayed position. The latest primary reading the replica has replayed tells up to when it
//! holds every commit ("caught up to"). A read goes to the replica only when
//! - it is caught up to at most `max_lag` ago, so no answer is more than that behind (plus one
//!   probe);
//! - and it is caught up past the reader's own last write (`wrote_ms`, from a cookie the web layer
//!   sets on every change), so whoever changes something sees it at once.
//!
//! Otherwise, and whenever the replica does not answer, the read goes to the primary. The
//! replica is never asked for a decision: callers choose it by hand, for listings and reports.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::AnyPool;

use super::db::now_ms;

/// How often the probe runs.
pub const PROBE_EVERY: Duration = Duration::from_millis(500);
/// How long one probe query may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Primary readings kept while the replica is behind (a minute of probes).
const MAX_SAMPLES: usize = 120;

/// What the probe last found, for `/readyz` and the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaState {
    /// Caught up to within the allowed lag: reads go to it.
    Ok,
    /// Answering, but further behind than allowed: reads go to the primary.
    Behind,
    /// Not answering (or not probed yet): reads go to the primary.
    Unreachable,
}

impl ReplicaState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReplicaState::Ok => "ok",
            ReplicaState::Behind => "behind",
            ReplicaState::Unreachable => "unreachable",
        }
    }
}

#[derive(Debug)]
pub struct Replica {
    pub pool: AnyPool,
    max_lag_ms: i64,
    /// Wall-clock ms up to which the replica holds every commit; 0: unknown (unreachable).
    caught_up_ms: AtomicI64,
    /// Primary readings (ms, WAL position) not yet known to be replayed, oldest first, with the
    /// latest one that is.
    samples: Mutex<VecDeque<(i64, i64)>>,
}

impl Replica {
    /// A pool that connects when first used: a replica down at start does not stop the service.
    pub fn new(url: &str, max_lag: Duration) -> Result<Replica, sqlx::Error> {
        let pool = AnyPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy(url)?;
        Ok(Replica {
            pool,
            max_lag_ms: max_lag.as_millis() as i64,
            caught_up_ms: AtomicI64::new(0),
            samples: Mutex::new(VecDeque::new()),
        })
    }

    /// Whether a read by someone whose last change was at `wrote_ms` (0: none known) may go to
    /// the replica now.
    pub fn usable_for(&self, wrote_ms: i64) -> bool {
        let caught_up = self.caught_up_ms.load(Ordering::Acquire);
        caught_up > 0 && caught_up >= wrote_ms && now_ms() - caught_up <= self.max_lag_ms
    }

    pub fn state(&self) -> ReplicaState {
        match self.caught_up_ms.load(Ordering::Acquire) {
            0 => ReplicaState::Unreachable,
            _ if self.usable_for(0) => ReplicaState::Ok,
            _ => ReplicaState::Behind,
        }
    }

    /// How far behind the replica is known to be, in seconds (None: unreachable).
    pub fn lag_seconds(&self) -> Option<f64> {
        match self.caught_up_ms.load(Ordering::Acquire) {
            0 => None,
            c => Some((now_ms() - c).max(0) as f64 / 1000.0),
        }
    }

    /// One probe: the primary's position first, then the replica's, so that a replica that has
    /// replayed a reading holds everything committed before it was taken.
    pub async fn probe(&self, primary: &AnyPool) {
        let at = now_ms();
        let Some(Ok(position)) = tokio::time::timeout(
            PROBE_TIMEOUT,
            sqlx::query_scalar::<_, i64>(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::BIGINT",
            )
            .fetch_one(primary),
        )
        .await
        .ok() else {
            // The primary does not answer: nothing to compare with, the last finding stands.
            return;
        };
        // A standby reports what it replayed; a server that is not one (a promoted replica, or
        // the primary named twice) holds what it holds: up to date.
        let replayed = tokio::time::timeout(
            PROBE_TIMEOUT,
            sqlx::query_scalar::<_, Option<i64>>(
                "SELECT CASE WHEN pg_is_in_recovery() \
                 THEN pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::BIGINT END",
            )
            .fetch_one(&self.pool),
        )
        .await;
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        samples.push_back((at, position));
        let caught_up = match replayed {
            Ok(Ok(None)) => {
                samples.clear();
                at
            }
            Ok(Ok(Some(replayed))) => {
                // The latest reading replayed, keeping it and what came after.
                let done = samples.iter().rposition(|(_, p)| *p <= replayed);
                if let Some(i) = done {
                    samples.drain(..i);
                }
                while samples.len() > MAX_SAMPLES {
                    samples.pop_front();
                }
                match done {
                    // Behind every reading kept: what an earlier probe found still holds (a
                    // replica only moves forward), else "behind, by an unknown amount".
                    None => self.caught_up_ms.load(Ordering::Acquire).max(1),
                    Some(_) => samples.front().map_or(1, |(t, _)| *t),
                }
            }
            Ok(Err(e)) => {
                self.went_down(&e.to_string());
                samples.clear();
                0
            }
            Err(_) => {
                self.went_down("timed out");
                samples.clear();
                0
            }
        };
        let before = self.state();
        self.caught_up_ms.store(caught_up, Ordering::Release);
        let after = self.state();
        if before != after {
            tracing::info!(
                from = before.as_str(),
                to = after.as_str(),
                "read replica state changed"
            );
        }
    }

    fn went_down(&self, why: &str) {
        if self.caught_up_ms.load(Ordering::Acquire) != 0 {
            tracing::warn!(
                error = why,
                "read replica does not answer: reads go to the primary"
            );
        }
    }
}
