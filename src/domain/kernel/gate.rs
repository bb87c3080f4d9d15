//! The domain side of the Redis gate: what to load into Redis from SQL, and the hot-path flow
//! (ask Redis; a "no" answers at once; a "yes" goes on to SQL, which may still refuse).
//!
//! Every function here returns `None` (or does nothing) when the gate is off or Redis failed;
//! the caller then runs on SQL alone and calls [`touched`] for what it changed, so the keys are
//! rebuilt from SQL when Redis comes back.

use std::sync::Arc;

use crate::infra::counters::{Gate, Subject};
use crate::infra::db::Db;

/// The gate of this instance, when configured and not degraded.
pub fn active(db: &Db) -> Option<&Arc<Gate>> {
    db.gate.as_ref().filter(|g| g.on())
}

/// Records that subjects changed in SQL alone (degraded, or Redis failed mid-call).
pub fn touched(db: &Db, subjects: impl IntoIterator<Item = Subject>) {
    if let Some(g) = &db.gate {
        for s in subjects {
            g.touch(s);
        }
    }
}

/// How long an order's record lives past its hold (`orders::reserve::gate_lines`).
pub const RECORD_AFTER_HOLD_S: i64 = 3600;

/// Seconds an order's Redis record has left: the hold's lifetime and an hour, as the reserve and
/// hold scripts give it (negative once that has run out).
pub fn record_left_s(expires_at: i64, now: i64) -> i64 {
    (expires_at - now) / 1000 + RECORD_AFTER_HOLD_S
}
