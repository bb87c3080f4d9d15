//! The gate's sold-out memory: a SKU Redis found sold out in every warehouse, a slot it found
//! with no place left and a voucher SKU with no code left are believed so by this instance for
//! a moment (`SELLABLE_SOLD_OUT_MEMORY_MS`) without running the script again. The callers still
//! look for the order's record (a booking's marks) first, so a repeat is answered as before; the
//! memory only ever says no. See `Gate::stock_reserve`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Subject;

/// The size at which the map first drops its expired entries; after a sweep, twice what is left.
const FIRST_SWEEP_AT: usize = 4096;

#[derive(Default)]
pub(super) struct SoldOutMemory {
    /// How long a "none left" is believed, in milliseconds (0: never).
    memory_ms: AtomicU64,
    /// Moves at every change this instance makes, under the map's lock: a "none left" read from
    /// Redis before a change landed there is not remembered after it.
    epoch: AtomicU64,
    /// Entries in the map, so that a gate call finds nothing remembered without the lock.
    live: AtomicUsize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    until: HashMap<Subject, Instant>,
    sweep_at: usize,
}

/// Ends the memory of a subject once more when dropped: after the change it guards reached Redis,
/// or failed, or was given up.
pub(super) struct Changing<'a> {
    memory: &'a SoldOutMemory,
    subject: Subject,
}

impl Drop for Changing<'_> {
    fn drop(&mut self) {
        self.memory.changed(self.subject);
    }
}

impl SoldOutMemory {
    pub(super) fn set_memory(&self, memory: Duration) {
        let ms = u64::try_from(memory.as_millis()).unwrap_or(u64::MAX);
        self.memory_ms.store(ms, Ordering::Relaxed);
        if ms == 0 {
            self.clear();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether Redis said, less than the memory's time ago, that nothing of it is left.
    pub(super) fn remembers(&self, s: Subject) -> bool {
        if self.live.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let mut m = self.lock();
        match m.until.get(&s) {
            Some(until) if Instant::now() < *until => true,
            Some(_) => {
                m.until.remove(&s);
                self.live.store(m.until.len(), Ordering::Relaxed);
                false
            }
            None => false,
        }
    }

    /// Where the changes stand: read before asking Redis, handed to [`SoldOutMemory::remember`].
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// Remembers a subject Redis found with nothing left, unless this instance changed something
    /// since `epoch`: that change may have reached Redis after the script answered.
    pub(super) fn remember(&self, s: Subject, epoch: u64) {
        let ms = self.memory_ms.load(Ordering::Relaxed);
        if ms == 0 {
            return;
        }
        let now = Instant::now();
        let mut m = self.lock();
        if self.epoch.load(Ordering::SeqCst) != epoch {
            return;
        }
        // Entries go when looked up past their time or at a change; those of subjects never
        // asked for again are swept here, so that the map stays about as large as what is sold
        // out now.
        if m.until.len() >= m.sweep_at.max(FIRST_SWEEP_AT) {
            m.until.retain(|_, until| *until > now);
            m.sweep_at = m.until.len() * 2;
        }
        m.until.insert(s, now + Duration::from_millis(ms));
        self.live.store(m.until.len(), Ordering::Relaxed);
    }

    /// Redis gave units (places, codes) of a subject remembered as sold out: units came back
    /// through another instance. The entry goes; the epoch stays, since a hold takes units and
    /// cannot make a "none left" on its way wrong.
    pub(super) fn refuted(&self, s: Subject) {
        if self.live.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut m = self.lock();
        m.until.remove(&s);
        self.live.store(m.until.len(), Ordering::Relaxed);
    }

    /// A change this instance makes to a subject's counts or keys: Redis is asked again.
    pub(super) fn changed(&self, s: Subject) {
        let mut m = self.lock();
        self.epoch.fetch_add(1, Ordering::SeqCst);
        m.until.remove(&s);
        self.live.store(m.until.len(), Ordering::Relaxed);
    }

    /// [`SoldOutMemory::changed`] now and again when the guard is dropped, after the change.
    pub(super) fn changing(&self, s: Subject) -> Changing<'_> {
        self.changed(s);
        Changing {
            memory: self,
            subject: s,
        }
    }

    pub(super) fn clear(&self) {
        let mut m = self.lock();
        self.epoch.fetch_add(1, Ordering::SeqCst);
        m.until.clear();
        self.live.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::{SoldOutMemory, Subject};
    use std::time::Duration;

    const SLOT: Subject = Subject::Slot {
        merchant: 1,
        slot: 8,
    };

    #[test]
    fn a_sold_out_subject_is_remembered_for_the_memory_only_and_forgotten_at_a_change_or_when_off()
    {
        let m = SoldOutMemory::default();
        m.remember(Subject::Stock(7), m.epoch());
        assert!(
            !m.remembers(Subject::Stock(7)),
            "no memory until one is set"
        );
        m.set_memory(Duration::from_millis(1000));
        m.remember(Subject::Stock(7), m.epoch());
        m.remember(SLOT, m.epoch());
        assert!(m.remembers(Subject::Stock(7)) && m.remembers(SLOT));
        assert!(!m.remembers(Subject::Stock(8)));
        m.changed(SLOT);
        assert!(m.remembers(Subject::Stock(7)) && !m.remembers(SLOT));
        m.refuted(Subject::Stock(7));
        assert!(
            !m.remembers(Subject::Stock(7)),
            "Redis gave units: forgotten"
        );
        m.set_memory(Duration::ZERO);
        m.remember(Subject::Stock(7), m.epoch());
        assert!(
            !m.remembers(Subject::Stock(7)),
            "turned off, nothing is remembered"
        );
    }

    #[test]
    fn a_none_left_heard_before_a_change_landed_is_not_remembered_and_a_hold_does_not_cancel_it() {
        let m = SoldOutMemory::default();
        m.set_memory(Duration::from_secs(60));
        // A change in progress (its guard alive) and one finished since the epoch was read.
        let before = m.epoch();
        let change = m.changing(Subject::Stock(9));
        m.remember(Subject::Stock(9), before);
        assert!(!m.remembers(Subject::Stock(9)));
        let during = m.epoch();
        drop(change);
        m.remember(Subject::Stock(9), during);
        assert!(
            !m.remembers(Subject::Stock(9)),
            "the change landed after that no was read"
        );
        // A hold elsewhere refutes nothing on its way.
        let before = m.epoch();
        m.refuted(Subject::Stock(3));
        m.remember(Subject::Stock(9), before);
        assert!(m.remembers(Subject::Stock(9)));
    }

    #[test]
    fn the_memory_expires() {
        let m = SoldOutMemory::default();
        m.set_memory(Duration::from_millis(50));
        m.remember(Subject::Stock(7), m.epoch());
        std::thread::sleep(Duration::from_millis(80));
        assert!(
            !m.remembers(Subject::Stock(7)),
            "past the memory Redis is asked again"
        );
    }
}
