//! The Redis gate as an order sees it: the gates of stock, slots and codes under one name (an
//! order may hold all three), and the start-up warming that loads recent SKUs and slots.

pub use crate::domain::codes::gate::*;
pub use crate::domain::kernel::gate::{active, touched, RECORD_AFTER_HOLD_S};
pub use crate::domain::slots::gate::*;
pub use crate::domain::stock::gate::*;

use crate::domain::kernel::error::DomainResult;
use crate::infra::db::Db;

/// Warms the keys of recently active SKUs and slots at start-up, so the first buyers of a sale
/// already find them in Redis.
pub async fn warm(db: &Db) -> DomainResult<usize> {
    let Some(gate) = active(db) else {
        return Ok(0);
    };
    // Keys evicted one by one would make Redis forget an order (its retry would take units
    // again) or part of a SKU: the gate wants a Redis that refuses writes rather than evicts.
    for (node, policy) in gate.eviction_policies().await {
        if policy != "noeviction" {
            tracing::warn!(
                node = %node,
                policy = %policy,
                "Redis evicts keys under memory pressure: set maxmemory-policy noeviction for the gate"
            );
        }
    }
    let since = db.now_ms() - 24 * 3600 * 1000;
    let (goods, whole) = crate::domain::stock::gate::warm_skus(db, gate, since).await?;
    if !whole {
        return Ok(goods);
    }
    let (places, _) = crate::domain::slots::gate::warm_slots(db, gate, since).await?;
    Ok(goods + places)
}
