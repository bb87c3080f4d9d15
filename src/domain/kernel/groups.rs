//! Changes to one hot row, committed together.
//!
//! Every sale of a SKU × warehouse updates one balance row, every booking of a slot one slot row,
//! and PostgreSQL serialises those updates: the row stays locked from the UPDATE to the COMMIT, so
//! a flash sale of one SKU is accepted no faster than one commit after another (about 1,100 a
//! second on the bench box). Here the changes that reach the same row on this instance while a
//! transaction for it is running wait in a queue; the next transaction takes all of them (its
//! `run` writes their rows in multi-row INSERTs, then one conditional UPDATE for their sum, then
//! one COMMIT). Each caller's answer goes out only after that COMMIT.
//!
//! A group's transaction is all or nothing: when its `run` cannot commit all of it (the sum does
//! not fit, anything goes wrong), every change in it is made alone by the ordinary path, unless
//! the `run` can say what each would have heard alone (bookings: a full slot's refusal, or the
//! bookings that still fit, made in a second transaction); one it cannot take (an order already
//! known) is left out and made alone. So each caller gets exactly the answer they would have got
//! alone. Several instances stay correct: the conditional UPDATE is
//! still the authority.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use tokio::sync::oneshot;

use crate::infra::db::Db;

/// Changes one transaction takes at most, unless `SELLABLE_HOT_BATCH` says otherwise.
pub const DEFAULT_MAX: usize = 128;

/// Transactions of one row in flight at once on an instance: while one holds the row, the next
/// writes its rows up to its UPDATE, so the hot row is never idle between them.
const IN_FLIGHT: usize = 2;

/// A group's transaction: given the row's key and the changes in arrival order, the answer for
/// each, or None for one it leaves to be made alone (a short answer: every one alone).
pub type Run<K, L, A> = fn(Db, K, Vec<L>) -> Answers<A>;

/// What a group's transaction comes to, in the order of its changes.
pub type Answers<A> = Pin<Box<dyn Future<Output = Vec<Option<A>>> + Send>>;

/// What a group's answer to one change says of it, for /metrics.
pub trait Outcome {
    /// The change was made (false: refused, e.g. sold out or full).
    fn made(&self) -> bool;
}

/// The queues of changes waiting for their row's next transaction.
pub struct Groups<K, L, A> {
    /// What kind of row, for /metrics (`stock`, `slot`).
    row: &'static str,
    max: AtomicUsize,
    queues: Mutex<HashMap<K, Queue<L, A>>>,
}

impl<K, L, A> Groups<K, L, A> {
    pub fn new(row: &'static str) -> Self {
        Groups {
            row,
            max: AtomicUsize::new(DEFAULT_MAX),
            queues: Mutex::default(),
        }
    }
}

struct Queue<L, A> {
    waiting: Vec<(L, oneshot::Sender<Option<A>>)>,
    running: usize,
}

impl<K, L, A> Groups<K, L, A>
where
    K: Hash + Eq + Copy + Send + 'static,
    L: Send + 'static,
    A: Outcome + Send + 'static,
{
    /// Changes per transaction at most; 0 or 1 makes every change alone.
    pub fn set_max(&self, max: usize) {
        self.max.store(max, Ordering::Relaxed);
    }

    /// Whether changes are grouped at all.
    pub fn on(&self) -> bool {
        self.max.load(Ordering::Relaxed) >= 2
    }

    /// Joins the row's next transaction. None: not committed by a group; make it alone.
    pub async fn join(self: &Arc<Self>, db: &Db, run: Run<K, L, A>, key: K, line: L) -> Option<A> {
        let (tx, rx) = oneshot::channel();
        let start = {
            // Nothing panics while holding it; were it poisoned, the queues are still whole.
            let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
            let q = queues.entry(key).or_insert_with(|| Queue {
                waiting: Vec::new(),
                running: 0,
            });
            q.waiting.push((line, tx));
            let start = q.running < IN_FLIGHT;
            if start {
                q.running += 1;
            }
            start
        };
        if start {
            // Its own task: a client that hangs up must not cancel the others' transaction.
            tokio::spawn(drain(db.clone(), self.clone(), run, key));
        }
        rx.await.ok().flatten()
    }
}

/// Runs transactions for the row while changes wait for it.
async fn drain<K, L, A>(db: Db, groups: Arc<Groups<K, L, A>>, run: Run<K, L, A>, key: K)
where
    K: Hash + Eq + Copy + Send + 'static,
    L: Send + 'static,
    A: Outcome + Send + 'static,
{
    loop {
        let group: Vec<(L, oneshot::Sender<Option<A>>)> = {
            let mut queues = groups.queues.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(q) = queues.get_mut(&key) else {
                return;
            };
            // A caller that hung up gets nothing written: alone, its transaction would have rolled
            // back with its request.
            q.waiting.retain(|(_, answer)| !answer.is_closed());
            if q.waiting.is_empty() {
                q.running -= 1;
                if q.running == 0 {
                    queues.remove(&key);
                }
                return;
            }
            let n = q
                .waiting
                .len()
                .min(groups.max.load(Ordering::Relaxed).max(1));
            q.waiting.drain(..n).collect()
        };
        let size = group.len();
        let (lines, answers): (Vec<L>, Vec<_>) = group.into_iter().unzip();
        // A transaction that panics answers no one: each change is then made alone, and this
        // row's queue keeps draining (its count of transactions in flight stays true).
        let mut done = std::panic::AssertUnwindSafe(run(db.clone(), key, lines))
            .catch_unwind()
            .await
            .unwrap_or_default();
        done.resize_with(size, || None);
        let result = if done.iter().flatten().any(Outcome::made) {
            GroupResult::Held
        } else if done.iter().any(Option::is_some) {
            GroupResult::Refused
        } else {
            GroupResult::Alone
        };
        crate::telemetry::count_group(groups.row, size, result);
        for (answer, a) in answers.into_iter().zip(done) {
            let _ = answer.send(a);
        }
    }
}

/// What a group's transaction came to, for /metrics (`sellable_groups_total{result}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupResult {
    /// It made at least one of its changes.
    Held,
    /// It answered changes, all refusals (sold out, full): nothing was written.
    Refused,
    /// It answered none: each was made alone.
    Alone,
}

impl GroupResult {
    pub fn label(self) -> &'static str {
        match self {
            GroupResult::Held => "held",
            GroupResult::Refused => "refused",
            GroupResult::Alone => "alone",
        }
    }
}
