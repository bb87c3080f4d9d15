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

#[derive(Debug)]
pub struct Bounded {
    /// Turns: one per job that may run.
    turns: Arc<Semaphore>,
    /// Places in the queue for a turn (a turn holder keeps its place too).
    places: Arc<Semaphore>,
    running: Arc<AtomicUsize>,
    peak: AtomicUsize,
    limit: usize,
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
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The most jobs that ever ran at once.
    pub fn peak(&self) -> usize {
        self.peak.load(SeqCst)
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
