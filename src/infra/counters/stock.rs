//! The gate's calls for goods: reserve, settle, load and repair a SKU's warehouse counters.

use super::*;

impl Gate {
    /// Holds `qty` of a SKU for an order (`stock_reserve.lua`).
    ///
    /// A SKU Redis found sold out in every warehouse is remembered for
    /// `SELLABLE_SOLD_OUT_MEMORY_MS`: meanwhile a new order hears "no" after one look at its
    /// record (EXISTS), not the script. The record keeps a repeat of a known order exact: it goes
    /// to the script, which answers "seen", as before. The memory only ever says no, so it cannot
    /// oversell. Every change this instance makes to the SKU in Redis ends it at once; units that
    /// come back through another instance (a release, a receipt) go unseen here for that long at
    /// most (`sold_out`).
    pub async fn stock_reserve(
        self: &Arc<Self>,
        sku: i64,
        order: &str,
        qty: i64,
        warehouse: Option<i64>,
        order_ttl_s: i64,
    ) -> GateResult<StockAnswer> {
        let base = self.stock_base(sku);
        let record = [base.as_str(), "o:", order].concat();
        if self
            .refused_from_memory("stock_seen", Subject::Stock(sku), &[record.as_str()])
            .await?
        {
            return Ok(StockAnswer::No(0));
        }
        let epoch = self.sold_out.epoch();
        let (status, n): (String, i64) = self
            .run("stock_reserve", |mut c| async move {
                self.scripts
                    .stock_reserve
                    .key([base.as_str(), "whs"].concat())
                    .key(record)
                    .arg(qty)
                    .arg(order_ttl_s)
                    .arg(warehouse.map(|w| w.to_string()).unwrap_or_default())
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok(match status.as_str() {
            "ok" => {
                self.sold_out.refuted(Subject::Stock(sku));
                StockAnswer::Held(n)
            }
            "no" => {
                // Nothing in any warehouse (a line for one warehouse says nothing of the rest).
                if n <= 0 && warehouse.is_none() {
                    self.sold_out.remember(Subject::Stock(sku), epoch);
                }
                StockAnswer::No(n)
            }
            "seen" => StockAnswer::Seen,
            _ => StockAnswer::Load,
        })
    }

    /// Loads a SKU's warehouses (priority order) unless another caller got there first.
    pub async fn stock_load(
        self: &Arc<Self>,
        sku: i64,
        rows: &[(i64, StockCounts)],
    ) -> GateResult<()> {
        let _changing = self.sold_out.changing(Subject::Stock(sku));
        let base = self.stock_base(sku);
        let list = rows
            .iter()
            .map(|(w, _)| w.to_string())
            .collect::<Vec<_>>()
            .join(",");
        self.run("stock_load", |mut c| async move {
            let mut inv = self.scripts.stock_load.prepare_invoke();
            inv.key(format!("{base}whs")).arg(list);
            for (w, n) in rows {
                inv.key(format!("{base}w:{w}"))
                    .arg(n.available)
                    .arg(n.locked)
                    .arg(n.sold);
            }
            inv.invoke_async::<i64>(&mut c).await
        })
        .await?;
        Ok(())
    }

    /// Puts back order records as the reserve and settle scripts write them, where none is (a
    /// record still there may say more: a settle since). All keys share the SKU's hash tag: one
    /// slot in a cluster.
    pub async fn stock_records(
        self: &Arc<Self>,
        sku: i64,
        records: &[StockRecord],
    ) -> GateResult<()> {
        let base = self.stock_base(sku);
        let records = records.iter().map(|r| {
            let state = r.settled.map_or("R", Settle::arg);
            (
                [base.as_str(), "o:", &r.order].concat(),
                format!("{}:{}:{state}", r.warehouse, r.qty),
                r.ttl_s,
            )
        });
        self.put_records("stock_records", records).await
    }

    /// Settles a line of an order.
    pub async fn stock_settle(
        self: &Arc<Self>,
        sku: i64,
        warehouse: i64,
        order: &str,
        action: Settle,
    ) -> GateResult<bool> {
        let _changing = self.sold_out.changing(Subject::Stock(sku));
        let base = self.stock_base(sku);
        let moved: i64 = self
            .run("stock_settle", |mut c| async move {
                self.scripts
                    .stock_settle
                    .key(format!("{base}w:{warehouse}"))
                    .key(format!("{base}o:{order}"))
                    .arg(action.arg())
                    .arg(warehouse)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok(moved == 1)
    }

    /// What Redis holds for a SKU: None when it is not loaded.
    pub async fn stock_counts(
        self: &Arc<Self>,
        sku: i64,
    ) -> GateResult<Option<Vec<(i64, StockCounts)>>> {
        let base = self.stock_base(sku);
        let list: Option<String> = self
            .run("stock_read", |mut c| {
                let k = format!("{base}whs");
                async move { redis::cmd("GET").arg(k).query_async(&mut c).await }
            })
            .await?;
        let Some(list) = list else { return Ok(None) };
        let mut out = Vec::new();
        for w in list.split(',').filter(|w| !w.is_empty()) {
            let Ok(w) = w.parse::<i64>() else { continue };
            let key = format!("{base}w:{w}");
            let v: (Option<i64>, Option<i64>, Option<i64>) = self
                .run("stock_read", |mut c| async move {
                    redis::cmd("HMGET")
                        .arg(key)
                        .arg("a")
                        .arg("l")
                        .arg("s")
                        .query_async(&mut c)
                        .await
                })
                .await?;
            out.push((
                w,
                StockCounts {
                    available: v.0.unwrap_or(0),
                    locked: v.1.unwrap_or(0),
                    sold: v.2.unwrap_or(0),
                },
            ));
        }
        Ok(Some(out))
    }

    pub async fn stock_fix(
        self: &Arc<Self>,
        sku: i64,
        warehouse: i64,
        delta: StockCounts,
    ) -> GateResult<bool> {
        let _changing = self.sold_out.changing(Subject::Stock(sku));
        let key = format!("{}w:{warehouse}", self.stock_base(sku));
        let n: i64 = self
            .run("stock_fix", |mut c| async move {
                self.scripts
                    .stock_fix
                    .key(key)
                    .arg(delta.available)
                    .arg(delta.locked)
                    .arg(delta.sold)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Ok(n == 1)
    }

    /// Overwrites one warehouse's counts (tests use this to corrupt the projection on purpose).
    pub async fn stock_overwrite(
        self: &Arc<Self>,
        sku: i64,
        warehouse: i64,
        n: StockCounts,
    ) -> GateResult<()> {
        let key = format!("{}w:{warehouse}", self.stock_base(sku));
        self.run("stock_overwrite", |mut c| async move {
            redis::cmd("HSET")
                .arg(key)
                .arg("a")
                .arg(n.available)
                .arg("l")
                .arg(n.locked)
                .arg("s")
                .arg(n.sold)
                .query_async::<i64>(&mut c)
                .await
        })
        .await?;
        Ok(())
    }
}
