//! What the hot path keeps in memory so that a flood of requests (most of them "no") does not
//! read SQL on every call: SKUs, products' sale states and API keys, a few seconds each. They
//! live beside the pool, on every instance, whether Redis is configured or not. A change on this
//! instance drops its entry at once; other instances see it when the entry expires.

use std::time::Duration;

use super::apikeys::KeyOwner;
use super::catalog::Sku;
use super::sellable::SaleState;
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
}

impl Default for Caches {
    fn default() -> Caches {
        Caches {
            skus: TtlCache::new(Duration::from_secs(2)),
            products: TtlCache::new(Duration::from_secs(2)),
            api_keys: TtlCache::new(Duration::from_secs(10)),
            slot_skus: TtlCache::new(Duration::from_secs(60)),
        }
    }
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Caches")
    }
}
