//! The gate's calls for slots: book, cancel, mirror and repair a slot's places.

use super::*;

impl Gate {
    pub async fn slot_book(
        self: &Arc<Self>,
        merchant: i64,
        slot: i64,
        customer: &str,
        idempotency_key: Option<&str>,
        now_ms: i64,
        places: i64,
    ) -> GateResult<(SlotAnswer, i64)> {
        // A customer's and a key's marks outlive the booking window.
        let expire_at_s = self.redis_seconds(now_ms) + 40 * 86_400;
        let [key, ckey, kkey] = self.slot_keys(merchant, slot, customer, idempotency_key);
        let subject = Subject::Slot { merchant, slot };
        // A slot found full with no place left is believed full for a moment, as a sold-out SKU
        // is (`Gate::stock_reserve`): the customer's and the key's marks are still asked, so a
        // repeat goes on to the script and hears "seen".
        if self
            .refused_from_memory("slot_seen", subject, &[ckey.as_str(), kkey.as_str()])
            .await?
        {
            return Ok((SlotAnswer::Full, 0));
        }
        let epoch = self.sold_out.epoch();
        let v: Vec<Value> = self
            .run("slot_book", |mut c| async move {
                self.scripts
                    .slot_book
                    .key(key)
                    .key(ckey)
                    .key(kkey)
                    .arg(now_ms)
                    .arg(expire_at_s)
                    .arg(places)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        let status = text(v.first());
        let remaining = int(v.get(1));
        let answer = match status.as_str() {
            "ok" => {
                self.sold_out.refuted(subject);
                SlotAnswer::Booked
            }
            "full" => {
                if remaining <= 0 {
                    self.sold_out.remember(subject, epoch);
                }
                SlotAnswer::Full
            }
            "closed" => SlotAnswer::Closed(text(v.get(2))),
            "started" => SlotAnswer::Started,
            "seen" => SlotAnswer::Seen,
            _ => SlotAnswer::Load,
        };
        Ok((answer, remaining))
    }

    pub async fn slot_load(
        self: &Arc<Self>,
        merchant: i64,
        slot: i64,
        s: &SlotState,
    ) -> GateResult<()> {
        let _changing = self.sold_out.changing(Subject::Slot { merchant, slot });
        let key = self.slot_key(merchant, slot);
        // Kept a day past the start: after that nobody can book it.
        let expire_at = self.redis_seconds(s.starts_at) + 86_400;
        self.run("slot_load", |mut c| async move {
            self.scripts
                .slot_load
                .key(key)
                .arg(s.remaining)
                .arg(&s.status)
                .arg(&s.closed_reason)
                .arg(s.starts_at)
                .arg(expire_at)
                .invoke_async::<i64>(&mut c)
                .await
        })
        .await?;
        Ok(())
    }

    /// Moves a booking's places of a slot after SQL decided: back (a committed cancel, or undoing a place
    /// SQL refused: slot_cancel.lua), or taken (a place SQL booked without the gate:
    /// slot_mirror.lua).
    pub async fn slot_follow(
        self: &Arc<Self>,
        merchant: i64,
        slot: i64,
        customer: &str,
        idempotency_key: Option<&str>,
        follow: SlotFollow,
        places: i64,
    ) -> GateResult<()> {
        let _changing = self.sold_out.changing(Subject::Slot { merchant, slot });
        let [key, ckey, kkey] = self.slot_keys(merchant, slot, customer, idempotency_key);
        let (name, script) = match follow {
            SlotFollow::GiveBack => ("slot_cancel", &self.scripts.slot_cancel),
            SlotFollow::Take { .. } => ("slot_mirror", &self.scripts.slot_mirror),
        };
        self.run(name, |mut c| async move {
            let mut call = script.key(key);
            call.key(ckey).key(kkey);
            match follow {
                SlotFollow::Take { at } => {
                    call.arg(self.redis_seconds(at) + 40 * 86_400).arg(places)
                }
                SlotFollow::GiveBack => call.arg(places),
            };
            call.invoke_async::<i64>(&mut c).await
        })
        .await?;
        Ok(())
    }

    /// When Redis marked this customer (or this idempotency key) as booking the slot (ms, the
    /// latest of the two marks), or None without a mark. `slot_book` writes the time of its take;
    /// `slot_mirror` writes 1, for a booking SQL made first.
    pub async fn slot_marked_at(
        self: &Arc<Self>,
        merchant: i64,
        slot: i64,
        customer: &str,
        idempotency_key: Option<&str>,
    ) -> GateResult<Option<i64>> {
        let [_, ckey, kkey] = self.slot_keys(merchant, slot, customer, idempotency_key);
        let marks: Vec<Option<String>> = self
            .run("slot_marked", |mut c| async move {
                redis::cmd("MGET")
                    .arg(ckey)
                    .arg(kkey)
                    .query_async(&mut c)
                    .await
            })
            .await?;
        Ok(marks
            .into_iter()
            .flatten()
            .map(|m| m.parse().unwrap_or(1))
            .max())
    }

    /// A slot's hash, its customer's key and its idempotency key (the customer's again when the
    /// booking has none): the three keys the book, cancel and mirror scripts take. Book and mirror
    /// set the two marks; cancel (a give-back) takes them away.
    pub(super) fn slot_keys(
        &self,
        merchant: i64,
        slot: i64,
        customer: &str,
        idempotency_key: Option<&str>,
    ) -> [String; 3] {
        let key = self.slot_key(merchant, slot);
        let ckey = [key.as_str(), ":c:", customer].concat();
        let kkey = idempotency_key
            .map(|k| [key.as_str(), ":k:", k].concat())
            .unwrap_or_else(|| ckey.clone());
        [key, ckey, kkey]
    }

    /// (remaining, status) as Redis holds them, or None when not loaded.
    pub async fn slot_read(
        self: &Arc<Self>,
        merchant: i64,
        slot: i64,
    ) -> GateResult<Option<(i64, String)>> {
        let key = self.slot_key(merchant, slot);
        let v: (Option<i64>, Option<String>) = self
            .run("slot_read", |mut c| async move {
                redis::cmd("HMGET")
                    .arg(key)
                    .arg("r")
                    .arg("st")
                    .query_async(&mut c)
                    .await
            })
            .await?;
        Ok(match v {
            (Some(r), Some(st)) => Some((r, st)),
            _ => None,
        })
    }

    pub async fn slot_fix(
        self: &Arc<Self>,
        merchant: i64,
        slot: i64,
        delta: i64,
        status: &str,
        reason: &str,
    ) -> GateResult<bool> {
        let _changing = self.sold_out.changing(Subject::Slot { merchant, slot });
        let key = self.slot_key(merchant, slot);
        let n: i64 = self
            .run("slot_fix", |mut c| async move {
                self.scripts
                    .slot_fix
                    .key(key)
                    .arg(delta)
                    .arg(status)
                    .arg(reason)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok(n == 1)
    }

    /// Sets a slot's remaining count (tests use this to corrupt the projection on purpose).
    pub async fn slot_overwrite(
        self: &Arc<Self>,
        merchant: i64,
        slot: i64,
        remaining: i64,
    ) -> GateResult<()> {
        let key = self.slot_key(merchant, slot);
        self.run("slot_overwrite", |mut c| async move {
            redis::cmd("HSET")
                .arg(key)
                .arg("r")
                .arg(remaining)
                .query_async::<i64>(&mut c)
                .await
        })
        .await?;
        Ok(())
    }
}
