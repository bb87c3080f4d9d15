//! What the catalog keeps in memory so that a flood of requests (most of them "no") does not read
//! SQL on every call: SKUs and products' sale states, two seconds each. A change on this instance
//! drops its entry at once; other instances see it when the entry expires.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::catalog::sale::SaleState;
use crate::domain::catalog::Sku;
use crate::domain::MerchantId;
use crate::infra::cache::TtlCache;
use crate::infra::db::Db;

pub struct Cache {
    /// SKUs by (merchant, code).
    pub skus: TtlCache<(MerchantId, String), Sku>,
    /// Products' sale states by product id (is it on sale?).
    pub products: TtlCache<i64, SaleState>,
}

impl Default for Cache {
    fn default() -> Cache {
        Cache {
            skus: TtlCache::new(Duration::from_secs(2)),
            products: TtlCache::new(Duration::from_secs(2)),
        }
    }
}

/// This instance's catalog cache.
pub fn of(db: &Db) -> Arc<Cache> {
    db.ext.get::<Cache>()
}
