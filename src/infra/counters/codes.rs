//! The gate's calls for codes: hold ids from a SKU's pool, refill it from SQL, give ids back.

use super::*;

impl Gate {
    pub async fn code_hold(
        self: &Arc<Self>,
        sku: i64,
        order: &str,
        qty: i64,
        order_ttl_s: i64,
    ) -> GateResult<CodeAnswer> {
        let b = self.code_base(sku);
        let record = [b.as_str(), "o:", order].concat();
        let subject = Subject::Codes(sku);
        // A voucher SKU whose pool and SQL are both empty is believed sold out for a moment, as
        // goods are (`Gate::stock_reserve`); the order's record still sends a repeat to the script.
        if self
            .refused_from_memory("code_seen", subject, &[record.as_str()])
            .await?
        {
            return Ok(CodeAnswer::No(0));
        }
        let epoch = self.sold_out.epoch();
        let v: Vec<Value> = self
            .run("code_hold", |mut c| async move {
                self.scripts
                    .code_hold
                    .key([b.as_str(), "pool"].concat())
                    .key([b.as_str(), "meta"].concat())
                    .key(record)
                    .arg(qty)
                    .arg(order_ttl_s)
                    .arg(CODE_LOW_MARK)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok(match text(v.first()).as_str() {
            "ok" => {
                self.sold_out.refuted(subject);
                CodeAnswer::Held {
                    low: text(v.get(1)) == "1",
                    ids: v.iter().skip(2).map(|x| int(Some(x))).collect(),
                }
            }
            "no" => {
                let n = int(v.get(1));
                if n <= 0 {
                    self.sold_out.remember(subject, epoch);
                }
                CodeAnswer::No(n)
            }
            "refill" => CodeAnswer::Refill,
            "seen" => CodeAnswer::Seen,
            _ => CodeAnswer::Load,
        })
    }

    /// Takes the short refill lock; false when another caller holds it.
    pub async fn code_refill_lock(self: &Arc<Self>, sku: i64) -> GateResult<bool> {
        let key = format!("{}lock", self.code_base(sku));
        let got: Option<String> = self
            .run("code_lock", |mut c| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg("1")
                    .arg("NX")
                    .arg("PX")
                    .arg(2000)
                    .query_async(&mut c)
                    .await
            })
            .await?;
        Ok(got.is_some())
    }

    /// The refill cursor (highest id loaded) and whether the pool is loaded at all.
    pub async fn code_cursor(self: &Arc<Self>, sku: i64) -> GateResult<Option<i64>> {
        let key = format!("{}meta", self.code_base(sku));
        let cur: Option<i64> = self
            .run("code_read", |mut c| async move {
                redis::cmd("HGET")
                    .arg(key)
                    .arg("cur")
                    .query_async(&mut c)
                    .await
            })
            .await?;
        Ok(cur)
    }

    /// Adds ids read from SQL (and releases the refill lock). `reset` starts the pool afresh.
    pub async fn code_refill(
        self: &Arc<Self>,
        sku: i64,
        reset: bool,
        more: bool,
        cursor: i64,
        ids: &[i64],
    ) -> GateResult<i64> {
        let _changing = self.sold_out.changing(Subject::Codes(sku));
        let b = self.code_base(sku);
        self.run("code_refill", |mut c| async move {
            let mut inv = self.scripts.code_refill.prepare_invoke();
            inv.key(format!("{b}pool"))
                .key(format!("{b}meta"))
                .key(format!("{b}lock"))
                .arg(if reset { "1" } else { "0" })
                .arg(if more { "1" } else { "0" })
                .arg(cursor);
            for id in ids {
                inv.arg(*id);
            }
            inv.invoke_async::<i64>(&mut c).await
        })
        .await
    }

    /// Puts back the records of orders that took codes of a SKU, as `code_hold` writes them
    /// (`R`, whatever the order became since: a retry only needs to be recognised, and SQL
    /// answers it), where none is. `records` are (order, seconds left). All keys share the SKU's
    /// hash tag: one slot in a cluster.
    pub async fn code_records(
        self: &Arc<Self>,
        sku: i64,
        records: &[(String, i64)],
    ) -> GateResult<()> {
        let base = self.code_base(sku);
        let records = records.iter().map(|(order, ttl_s)| {
            (
                [base.as_str(), "o:", order].concat(),
                "R".to_string(),
                *ttl_s,
            )
        });
        self.put_records("code_records", records).await
    }

    /// Puts ids back in the pool; `undo` also forgets the order (its hold never reached SQL).
    pub async fn code_return(
        self: &Arc<Self>,
        sku: i64,
        order: &str,
        ids: &[i64],
        undo: bool,
    ) -> GateResult<()> {
        let _changing = self.sold_out.changing(Subject::Codes(sku));
        let b = self.code_base(sku);
        self.run("code_return", |mut c| async move {
            let mut inv = self.scripts.code_return.prepare_invoke();
            inv.key(format!("{b}pool"))
                .key(format!("{b}meta"))
                .key(format!("{b}o:{order}"))
                .arg(if undo { "undo" } else { "release" });
            for id in ids {
                inv.arg(*id);
            }
            inv.invoke_async::<i64>(&mut c).await
        })
        .await?;
        Ok(())
    }

    /// The pool's ids and whether SQL has more past the cursor; None when not loaded.
    pub async fn code_pool(self: &Arc<Self>, sku: i64) -> GateResult<Option<(Vec<i64>, bool)>> {
        let b = self.code_base(sku);
        let more: Option<String> = self
            .run("code_read", |mut c| {
                let k = format!("{b}meta");
                async move {
                    redis::cmd("HGET")
                        .arg(k)
                        .arg("more")
                        .query_async(&mut c)
                        .await
                }
            })
            .await?;
        let Some(more) = more else { return Ok(None) };
        let ids: Vec<i64> = self
            .run("code_read", |mut c| {
                let k = format!("{b}pool");
                async move { redis::cmd("SMEMBERS").arg(k).query_async(&mut c).await }
            })
            .await?;
        Ok(Some((ids, more == "1")))
    }

    /// Removes stale ids from a pool (reconciliation), or adds missing ones; a pool that is not
    /// loaded (or was lost) is left alone for its next load. True: the pool was changed.
    pub async fn code_pool_fix(
        self: &Arc<Self>,
        sku: i64,
        remove: &[i64],
        add: &[i64],
    ) -> GateResult<bool> {
        if remove.is_empty() && add.is_empty() {
            return Ok(false);
        }
        let _changing = self.sold_out.changing(Subject::Codes(sku));
        let b = self.code_base(sku);
        self.run("code_fix", |mut c| async move {
            let mut inv = self.scripts.code_fix.prepare_invoke();
            inv.key(format!("{b}pool"))
                .key(format!("{b}meta"))
                .arg(remove.len());
            for id in remove.iter().chain(add) {
                inv.arg(*id);
            }
            inv.invoke_async::<i64>(&mut c).await
        })
        .await
        .map(|n| n >= 0)
    }
}
