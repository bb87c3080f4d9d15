//! What the hot path keeps in memory so that a flood of requests (most of them "no") does not
//! read SQL on every call: SKUs, products' sale states and API keys, a few seconds each. They
//! live beside the pool, on every instance, whether Redis is configured or not. A change on this
//! instance drops its entry at once; other instances see it when the entry expires.

use std::time::Duration;

use crate::domain::catalog::sale::SaleState;
use crate::domain::catalog::Sku;
use crate::domain::tenancy::apikeys::KeyOwner;
use crate::domain::MerchantId;
use crate::infra::cache::TtlCache;

pub struct Caches {
    /// SKUs by (merchant, code), kept two seconds.
    pub skus: TtlCache<(MerchantId, String), Sku>,
    /// Products' sale states by product id, kept two seconds (is it on sale?).
    pub products: TtlCache<i64, SaleState>,
    /// API keys by hash, kept ten seconds. A revoke clears this instance's entries at once;
    /// other instances notice within ten seconds.
    pub api_keys: TtlCache<[u8; 32], KeyOwner>,
    /// The service SKU of each slot by (merchant, slot id), kept a minute: a slot never changes
    /// its SKU, and an order's place line checks it on every request.
    pub slot_skus: TtlCache<(MerchantId, i64), i64>,
    /// Slots whose places freed on this instance, for the waiting list.
    pub freed: FreedSlots,
    /// Catalogs' verdicts as last judged, for the pages that show a whole catalog.
    pub verdicts: crate::domain::sellable::Recent,
    /// Not caches: the holds and bookings of each hot row waiting for its next transaction
    /// (`domain::kernel::groups`). They live here because every hold and booking reaches this struct.
    pub held: crate::domain::orders::HoldGroups,
    pub booked: crate::domain::slots::booking::BookGroups,
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

impl Default for Caches {
    fn default() -> Caches {
        Caches {
            skus: TtlCache::new(Duration::from_secs(2)),
            products: TtlCache::new(Duration::from_secs(2)),
            api_keys: TtlCache::new(Duration::from_secs(10)),
            slot_skus: TtlCache::new(Duration::from_secs(60)),
            freed: FreedSlots::default(),
            verdicts: Default::default(),
            held: crate::domain::kernel::groups::Groups::new("stock"),
            booked: crate::domain::kernel::groups::Groups::new("slot"),
        }
    }
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Caches")
    }
}
