//! Requests per second per API key, so that one misbehaving integration cannot starve the
//! others. A token bucket per key on each instance: it holds one second of the key's rate and
//! refills continuously, so a key may burst to its rate and then keeps to it. Behind several
//! instances a key gets its rate on each of them (the balancer spreads it); the key's rate is set
//! with that in mind. A key of rate 0 is unlimited (a load generator's, say).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Bucket {
    rate: f64,
    tokens: f64,
    at: Instant,
}

#[derive(Default)]
pub struct RateLimits {
    buckets: Mutex<HashMap<i64, Bucket, foldhash::fast::RandomState>>,
}

impl RateLimits {
    /// Takes one request of `key` at `rate` per second: `Err(wait)` when its bucket is empty, with
    /// how long until the next request is allowed. A changed rate starts the key's bucket anew.
    pub fn take(&self, key: i64, rate: i64) -> Result<(), Duration> {
        if rate <= 0 {
            return Ok(());
        }
        let rate = rate as f64;
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let b = buckets.entry(key).or_insert(Bucket {
            rate,
            tokens: rate,
            at: now,
        });
        if b.rate != rate {
            *b = Bucket {
                rate,
                tokens: rate,
                at: now,
            };
        }
        let elapsed = now.duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rate).min(rate);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / rate))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_bursts_to_its_rate_then_waits_and_other_keys_are_untouched() {
        let l = RateLimits::default();
        for _ in 0..5 {
            assert!(l.take(1, 5).is_ok());
        }
        let wait = l.take(1, 5).unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_millis(200),
            "{wait:?}"
        );
        assert!(l.take(2, 5).is_ok(), "another key has its own bucket");
        assert!(l.take(1, 0).is_ok(), "rate 0 is unlimited");
        std::thread::sleep(Duration::from_millis(250));
        assert!(l.take(1, 5).is_ok(), "the bucket refills");
        // A new rate takes effect at once.
        for _ in 0..50 {
            assert!(l.take(1, 50).is_ok());
        }
        assert!(l.take(1, 50).is_err());
    }
}
