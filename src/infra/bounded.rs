//! Bounded blocking work: CPU- and memory-heavy jobs (password hashes: about 19 MiB and tens of
//! milliseconds of a core each) run a few at a time on blocking threads, callers queue briefly,
//! and past a short queue or wait they are told to come back. A flood of sign-ins once queued 200
//! hashes at once and took the server to 2.8 GB.
//!
//! Every count is held by a guard, so a request dropped at any point (the client hung up, the
//! request timed out) gives back what it took; and the turn itself travels into the blocking job,
//! so a job keeps its turn until it has finished even when its request is long gone. One per
//! application (held by `Db`), so that applications in one process (the tests) do not share it.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

/// How many callers may wait for a turn (or hold one) before the next is refused at once.
pub const QUEUE: usize = 64;
/// How long a caller waits for a turn.
pub const WAIT: Duration = Duration::from_secs(5);
/// How many places in the queue one source (a client address) may hold at once (`run_for`):
/// sixteen sources are needed to fill it, not one.
pub const PER_SOURCE: usize = 4;

#[derive(Debug)]
pub struct Bounded {
    /// Turns: one per job that may run.
    turns: Arc<Semaphore>,
    /// Places in the queue for a turn (a turn holder keeps its place too).
    places: Arc<Semaphore>,
    running: Arc<AtomicUsize>,
    peak: AtomicUsize,
    limit: usize,
    /// Places held per source (`run_for`); a source leaves the map when it holds none.
    by_source: Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
}

/// One place of a source, given back on drop.
struct SourcePlace {
    map: Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
    source: String,
}

impl Drop for SourcePlace {
    fn drop(&mut self) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = map.get_mut(&self.source) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.source);
            }
        }
    }
}

/// Why a job did not run.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue is full or the wait ran out: come back later.
    Busy,
    /// The blocking job panicked.
    Failed(String),
}

/// The default number of concurrent jobs: one core less than the machine has (at least one), so
/// that a flood leaves a core to everything else.
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().saturating_sub(1))
        .unwrap_or(1)
        .max(1)
}

/// Counts a running job for as long as it lives, wherever it is dropped.
struct Running(Arc<AtomicUsize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

impl Bounded {
    pub fn new(concurrency: usize) -> Bounded {
        let n = concurrency.max(1);
        Bounded {
            turns: Arc::new(Semaphore::new(n)),
            places: Arc::new(Semaphore::new(QUEUE + n)),
            running: Default::default(),
            peak: 0.into(),
            limit: n,
            by_source: Default::default(),
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The most jobs that ever ran at once.
    pub fn peak(&self) -> usize {
        self.peak.load(SeqCst)
    }

    /// As `run`, but refused at once (`Busy`) when `source` already holds `PER_SOURCE` places.
    pub async fn run_for<T: Send + 'static>(
        &self,
        source: &str,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refused> {
        let place = {
            let mut map = self.by_source.lock().unwrap_or_else(|e| e.into_inner());
            let n = map.entry(source.to_string()).or_insert(0);
            if *n >= PER_SOURCE {
                return Err(Refused::Busy);
            }
            *n += 1;
            SourcePlace {
                map: self.by_source.clone(),
                source: source.to_string(),
            }
        };
        // Held until the job ends or the caller goes away, like the queue's own place.
        let result = self.run(f).await;
        drop(place);
        result
    }

    /// Runs `f` on a blocking thread when a turn is free.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refused> {
        // A place in the queue, or "busy" at once; given back on drop, however the request ends.
        let place = self
            .places
            .clone()
            .try_acquire_owned()
            .map_err(|_| Refused::Busy)?;
        let turn = tokio::time::timeout(WAIT, self.turns.clone().acquire_owned())
            .await
            .map_err(|_| Refused::Busy)?
            .map_err(|_| Refused::Busy)?;
        let now = self.running.fetch_add(1, SeqCst) + 1;
        self.peak.fetch_max(now, SeqCst);
        let running = Running(self.running.clone());
        // The count, the turn and the place go into the job: they end when the job does, in that
        // order (a tuple drops front to back), so no next job is counted while this one still is.
        tokio::task::spawn_blocking(move || {
            let _held = (running, turn, place);
            f()
        })
        .await
        .map_err(|e| Refused::Failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_source_holds_at_most_its_share_of_the_queue_and_others_still_get_in() {
        let b = Arc::new(Bounded::new(1));
        let gate = Arc::new(std::sync::Barrier::new(2));
        // One job runs and waits at the barrier; the source's other places wait for a turn.
        let mut held = Vec::new();
        for _ in 0..PER_SOURCE {
            let (b, gate) = (b.clone(), gate.clone());
            held.push(tokio::spawn(async move {
                b.run_for("203.0.113.9", move || {
                    gate.wait();
                })
                .await
            }));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        // The source's next try is refused at once.
        let refused = b.run_for("203.0.113.9", || ()).await;
        assert_eq!(refused, Err(Refused::Busy));
        // Another source queues for a turn instead of being refused.
        let other = {
            let b = b.clone();
            tokio::spawn(async move { b.run_for("198.51.100.7", || 7).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!other.is_finished(), "queued, not refused");
        // Let every held job through (each waits at the barrier with this thread).
        for _ in 0..PER_SOURCE {
            let gate = gate.clone();
            tokio::task::spawn_blocking(move || gate.wait())
                .await
                .unwrap();
        }
        for h in held {
            assert_eq!(h.await.unwrap(), Ok(()));
        }
        assert_eq!(other.await.unwrap(), Ok(7));
        // Places given back: the source may try again.
        assert_eq!(b.run_for("203.0.113.9", || 1).await, Ok(1));
    }
}
