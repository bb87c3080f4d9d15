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

use super::clock::wall_ms as now_ms;

/// How often the probe runs.
pub const PROBE_EVERY: Duration = Duration::from_millis(500);
/// How long one probe query may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

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
    /// The probe's own connection: readers holding every connection of `pool` must not make
    /// the probe time out and the replica look down.
    probe_pool: AnyPool,
    max_lag_ms: i64,
    /// Primary readings kept while the replica is behind: enough to span the allowed lag.
    max_samples: usize,
    /// Wall-clock ms up to which the replica holds every commit; 0: unknown (unreachable).
    caught_up_ms: AtomicI64,
    /// Primary readings (ms, WAL position) not yet known to be replayed, oldest first, with the
    /// latest one that is.
    samples: Mutex<VecDeque<(i64, i64)>>,
}

impl Replica {
    /// A pool that connects when first used: a replica down at start does not stop the service.
    pub fn new(url: &str, max_lag: Duration) -> Result<Replica, sqlx::Error> {
        // A short wait for a connection: a read that cannot have one goes to the primary.
        let pool = AnyPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(1))
            .connect_lazy(url)?;
        let probe_pool = AnyPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(PROBE_TIMEOUT)
            .connect_lazy(url)?;
        let max_lag_ms = max_lag.as_millis() as i64;
        Ok(Replica {
            pool,
            probe_pool,
            max_lag_ms,
            max_samples: (max_lag_ms / PROBE_EVERY.as_millis() as i64).max(0) as usize + 4,
            caught_up_ms: AtomicI64::new(0),
            samples: Mutex::new(VecDeque::new()),
        })
    }

    /// Whether a read by someone whose last change was at `wrote_ms` (0: none known) may go to
    /// the replica now.
    pub fn usable_for(&self, wrote_ms: i64) -> bool {
        let caught_up = self.caught_up_ms.load(Ordering::Acquire);
        // Strictly after the write: a reading taken in the same millisecond may precede its
        // commit. (1: behind by an unknown amount.)
        caught_up > 1 && caught_up > wrote_ms && now_ms() - caught_up <= self.max_lag_ms
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
            0 | 1 => None,
            c => Some((now_ms() - c).max(0) as f64 / 1000.0),
        }
    }

    /// One probe: the primary's position first, then the replica's, so that a replica that has
    /// replayed a reading holds everything committed before it was taken.
    pub async fn probe(&self, primary: &AnyPool) {
        let at = now_ms();
        let Some(Ok((position, primary_id))) = tokio::time::timeout(
            PROBE_TIMEOUT,
            sqlx::query_as::<_, (i64, i64)>(
                "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::BIGINT, \
                 (SELECT system_identifier FROM pg_control_system())::BIGINT",
            )
            .fetch_one(primary),
        )
        .await
        .ok() else {
            // The primary does not answer: nothing to compare with, the last finding stands.
            return;
        };
        let replayed = tokio::time::timeout(
            PROBE_TIMEOUT,
            sqlx::query_as::<_, (bool, Option<i64>, i64)>(
                "SELECT pg_is_in_recovery(), \
                 pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::BIGINT, \
                 (SELECT system_identifier FROM pg_control_system())::BIGINT",
            )
            .fetch_one(&self.probe_pool),
        )
        .await;
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        samples.push_back((at, position));
        let caught_up = match replayed {
            // The primary itself (named twice): up to date.
            Ok(Ok((false, _, id))) if id == primary_id => {
                samples.clear();
                at
            }
            // A standby of this primary: up to what it replayed.
            Ok(Ok((true, Some(replayed), id))) if id == primary_id => {
                let done = samples.iter().rposition(|(_, p)| *p <= replayed);
                match done {
                    Some(i) => {
                        // The latest reading replayed stays first; what came after follows.
                        samples.drain(..i);
                        while samples.len() > self.max_samples {
                            samples.remove(1);
                        }
                        samples.front().map_or(1, |(t, _)| *t)
                    }
                    // Behind every reading kept: what an earlier probe found still holds (a
                    // replica only moves forward), else "behind, by an unknown amount".
                    None => {
                        while samples.len() > self.max_samples {
                            samples.pop_front();
                        }
                        self.caught_up_ms.load(Ordering::Acquire).max(1)
                    }
                }
            }
            // Another server: a promoted replica, or a copy of some other database. Its data
            // may differ from the primary's: never read.
            Ok(Ok(_)) => {
                if self.caught_up_ms.load(Ordering::Acquire) > 1 {
                    tracing::warn!(
                        "read replica is not a standby of the primary: reads go to the primary"
                    );
                }
                samples.clear();
                1
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
        if self.caught_up_ms.load(Ordering::Acquire) > 1 {
            tracing::warn!(
                error = why,
                "read replica does not answer: reads go to the primary"
            );
        }
    }
}
