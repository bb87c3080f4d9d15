//! A small time-limited cache, for look-ups the hot path would otherwise ask SQL on every call.
//! What is cached, and for how long, is the domain's: each room keeps its own (`infra::ext`).

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, Instant};

pub struct TtlCache<K, V> {
    ttl: Duration,
    // A read-write lock: every request of a flood reads two or three of these caches, from all
    // runtime threads at once; readers need not queue behind each other.
    // foldhash (seeded per process) rather than SipHash: only rows that exist are cached, so a
    // caller cannot choose the keys, and SipHash was a visible part of a sold-out refusal.
    map: RwLock<HashMap<K, (Instant, V), foldhash::fast::RandomState>>,
}

impl<K: std::hash::Hash + Eq + Clone, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration) -> Self {
        TtlCache {
            ttl,
            map: RwLock::new(HashMap::default()),
        }
    }
    pub fn get(&self, k: &K) -> Option<V> {
        let map = self.map.read().ok()?;
        map.get(k)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, v)| v.clone())
    }
    pub fn put(&self, k: K, v: V) {
        if let Ok(mut map) = self.map.write() {
            if map.len() > 100_000 {
                map.clear();
            }
            map.insert(k, (Instant::now(), v));
        }
    }
    pub fn clear(&self) {
        if let Ok(mut map) = self.map.write() {
            map.clear();
        }
    }
    pub fn remove(&self, k: &K) {
        if let Ok(mut map) = self.map.write() {
            map.remove(k);
        }
    }
}
