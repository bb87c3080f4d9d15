//! What the slots keep in memory on each instance: the service of each slot, the slots whose
//! places freed (for the waiting list), and the bookings of each hot slot waiting for its next
//! transaction (`domain::kernel::groups`).

use std::sync::Arc;
use std::time::Duration;

use crate::domain::slots::booking::BookGroups;
use crate::domain::MerchantId;
use crate::infra::cache::TtlCache;
use crate::infra::db::Db;

pub struct Cache {
    /// The service SKU of each slot by (merchant, slot id), kept a minute: a slot never changes
    /// its SKU, and an order's place line checks it on every request.
    pub slot_skus: TtlCache<(MerchantId, i64), i64>,
    /// Slots whose places freed on this instance, for the waiting list.
    pub freed: FreedSlots,
    /// Not a cache: the bookings of each hot slot waiting for its next transaction.
    pub booked: Arc<BookGroups>,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache {
            slot_skus: TtlCache::new(Duration::from_secs(60)),
            freed: FreedSlots::default(),
            booked: Arc::new(crate::domain::kernel::groups::Groups::new("slot")),
        }
    }
}

/// This instance's slot cache.
pub fn of(db: &Db) -> Arc<Cache> {
    db.ext.get::<Cache>()
}

/// Slots whose places freed (a cancel, a move away, an order released, more capacity, a slot
/// reopened) since the waiting-list job last looked. The change that frees places only marks the
/// slot here, after its commit; the job (`jobs.rs`) gives the places to waiting customers. The
/// job also sweeps every slot with waiting customers and room now and then, so a mark lost with a
/// killed instance, or made on another instance, is caught.
#[derive(Default)]
pub struct FreedSlots {
    slots: std::sync::Mutex<std::collections::HashSet<(MerchantId, i64)>>,
    notify: tokio::sync::Notify,
}

impl FreedSlots {
    pub fn mark(&self, merchant_id: MerchantId, slot_id: i64) {
        if let Ok(mut s) = self.slots.lock() {
            s.insert((merchant_id, slot_id));
        }
        self.notify.notify_one();
    }

    /// Every slot marked since the last call.
    pub fn take(&self) -> Vec<(MerchantId, i64)> {
        self.slots
            .lock()
            .map(|mut s| s.drain().collect())
            .unwrap_or_default()
    }

    /// Waits for a mark.
    pub async fn marked(&self) {
        self.notify.notified().await
    }
}

/// Marks a slot whose places freed, for the waiting list (after the change's commit).
pub fn freed(db: &Db, merchant_id: MerchantId, slot_id: i64) {
    of(db).freed.mark(merchant_id, slot_id);
}
