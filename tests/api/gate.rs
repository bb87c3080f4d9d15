//! The Redis gate and reconciliation, and staying correct when Redis or the process fails.
//! The failure tests need a real Redis and PostgreSQL (`pg!`); the SQL identities run on both.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::both;
use crate::helpers::{Api, Backend, TestApp};
use sellable::domain::reconcile::{self, Correction};
use sellable::domain::{Actor, Scope};
use sellable::infra::counters::{Gate, StockCounts, Subject};

/// A test that only means something against PostgreSQL and Redis: run with one Redis, and
/// with a Redis Cluster (`TEST_REDIS_CLUSTER_URL`, which `.ci/redis-cluster` starts and prints).
/// `pg!(@one_redis name, …)`: with one Redis only, for a test that brings a Redis of its own.
#[macro_export]
macro_rules! pg {
    (@postgres |$app:ident| $body:block) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn postgres() {
            let Some($app) =
                $crate::helpers::TestApp::spawn($crate::helpers::Backend::Postgres).await
            else {
                return;
            };
            if $app.redis_url.is_none() {
                $crate::helpers::skip_or_fail("Redis", "the gate's tests need it");
                return;
            }
            $body
        }
    };
    (@one_redis $name:ident, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::pg!(@postgres |$app| $body);
        }
    };
    ($name:ident, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::pg!(@postgres |$app| $body);
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn redis_cluster() {
                let Some(url) = $crate::helpers::redis_cluster_url().await else {
                    return;
                };
                let Some($app) = $crate::helpers::TestApp::spawn_with(
                    $crate::helpers::Backend::Postgres,
                    |c| c.redis_url = Some(url),
                )
                .await
                else {
                    return;
                };
                $body
            }
        }
    };
}

fn gate(app: &TestApp) -> Arc<Gate> {
    app.db
        .gate
        .clone()
        .expect("the PostgreSQL test app has the Redis gate")
}

async fn reserve(api: &Api, order: &str, sku: &str, qty: i64) -> (u16, Value) {
    api.reserve(order, json!([{"sku": sku, "qty": qty}])).await
}

/// A new service with one slot of `capacity` places, 30 hours ahead; its id.
async fn service_slot(api: &Api, code: &str, capacity: i64) -> i64 {
    api.product("service", code).await;
    let starts = (api.now() + chrono::Duration::hours(30)).to_rfc3339();
    let ends = (api.now() + chrono::Duration::hours(31)).to_rfc3339();
    let (s, slot) = api
        .post("/api/v1/slots", json!({"sku": code, "store": "main-store", "starts_at": starts, "ends_at": ends, "capacity": capacity}))
        .await;
    assert_eq!(s, 201, "{slot}");
    slot["id"].as_i64().unwrap()
}

/// The merchant a slot belongs to (its Redis keys carry it).
async fn slot_merchant(app: &TestApp, slot: i64) -> i64 {
    sqlx::query_scalar("SELECT merchant_id FROM slots WHERE id = $1")
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// A lazy load (a walk-in's booking) that read an open slot from SQL with `remaining` places
/// before a change, writing what it read only now, after the change committed and Redis
/// followed it (or did not, when the slot was not loaded).
async fn late_load(app: &TestApp, g: &Arc<Gate>, slot: i64, remaining: i64) {
    let (merchant, starts_at): (i64, i64) =
        sqlx::query_as("SELECT merchant_id, starts_at FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    let read = sellable::infra::counters::SlotState {
        remaining,
        status: "OPEN".into(),
        closed_reason: String::new(),
        starts_at,
    };
    g.slot_load(merchant, slot, &read).await.unwrap();
}

/// Waits (up to 3 s) for Redis to count `remaining` places in an open slot: a job that beat the
/// test to a change gives places back (or takes them) right after its commit.
async fn until_slot(g: &Arc<Gate>, merchant: i64, slot: i64, remaining: i64, why: &str) {
    let mut seen = None;
    for _ in 0..60 {
        seen = g.slot_read(merchant, slot).await.unwrap();
        if seen == Some((remaining, "OPEN".into())) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{why}: Redis has {seen:?}, not {remaining} places");
}

async fn sku_id(app: &TestApp, code: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM skus WHERE code = $1")
        .bind(code)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn warehouse_id(app: &TestApp, slug: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM warehouses WHERE slug = $1")
        .bind(slug)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// (total, locked, sold, frozen) of one balance.
/// A goods SKU with `units` in the main warehouse, the gate, and the SKU's id.
async fn goods_in_redis(app: &TestApp, code: &str, units: i64) -> (Api, Arc<Gate>, i64) {
    let api = app.acme_api().await;
    api.product("goods", code).await;
    api.receive(code, "main", units).await;
    let sku = sku_id(app, code).await;
    (api, gate(app), sku)
}

/// A voucher SKU `code` with `n` codes imported, the gate and the SKU's id.
async fn vouchers_in_redis(app: &TestApp, code: &str, n: usize) -> (Api, Arc<Gate>, i64) {
    let api = app.acme_api().await;
    api.product("voucher", code).await;
    let codes: String = (0..n).map(|i| format!("{code}-{i:04}-KEY\n")).collect();
    let file = format!("{}.txt", code.to_lowercase());
    let batch = crate::codes::import(&api, code, &file, &codes, "valid").await;
    assert_eq!(batch["imported"], n, "{batch}");
    (api, gate(app), sku_id(app, code).await)
}

async fn balance(app: &TestApp, sku: i64) -> (i64, i64, i64, i64) {
    sqlx::query_as("SELECT total, locked, sold, frozen FROM stock_balances WHERE sku_id = $1")
        .bind(sku)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// An order of 2 of `sku` paid ("paid") and one of 1 released ("gone"): what each one's retry
/// answers while Redis still has its record (neither is `insufficient_stock`).
async fn paid_and_released(api: &Api, sku: &str) -> ((u16, Value), (u16, Value)) {
    assert_eq!(reserve(api, "paid", sku, 2).await.0, 201);
    let (s, b) = api
        .post("/api/v1/reservations/paid/confirm", json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(reserve(api, "gone", sku, 1).await.0, 201);
    let (s, b) = api
        .post("/api/v1/reservations/gone/release", json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    let paid = reserve(api, "paid", sku, 2).await;
    let gone = reserve(api, "gone", sku, 1).await;
    assert_ne!(paid.1["error"], "insufficient_stock", "{paid:?}");
    assert_ne!(gone.1["error"], "insufficient_stock", "{gone:?}");
    (paid, gone)
}

async fn redis_available(g: &Arc<Gate>, sku: i64) -> Option<i64> {
    g.stock_counts(sku)
        .await
        .ok()
        .flatten()
        .map(|v| v.iter().map(|(_, c)| c.available).sum())
}

/// Many buyers, one unit each, spread over the given APIs; returns the statuses.
async fn flash_sale(apis: &[Api], sku: &str, buyers: usize, tag: &str) -> HashMap<u16, usize> {
    flash_sale_orders(apis, sku, buyers, tag).await.0
}

/// Like [`flash_sale`], with the orders that got their unit.
async fn flash_sale_orders(
    apis: &[Api],
    sku: &str,
    buyers: usize,
    tag: &str,
) -> (HashMap<u16, usize>, Vec<String>) {
    let tasks: Vec<_> = (0..buyers)
        .map(|i| {
            let api = apis[i % apis.len()].clone();
            let sku = sku.to_string();
            let order = format!("{tag}-{i}");
            tokio::spawn(async move { (reserve(&api, &order, &sku, 1).await, order) })
        })
        .collect();
    let mut by = HashMap::new();
    let mut accepted = Vec::new();
    for t in tasks {
        let ((s, b), order) = t.await.unwrap();
        if s == 201 {
            accepted.push(order);
        } else {
            assert_eq!(b["error"], "insufficient_stock", "{s} {b}");
        }
        *by.entry(s).or_insert(0) += 1;
    }
    (by, accepted)
}

fn system() -> Actor {
    Actor::system("test")
}

pg!(
    a_sold_out_sku_is_refused_by_redis_without_touching_sql,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 2).await;
        assert_eq!(reserve(&api, "o-1", "HOT", 2).await.0, 201);
        // Warm the caches (API key, SKU) and the key, then lock every table the path could read:
        // a request that touched SQL would hang here.
        assert_eq!(reserve(&api, "o-2", "HOT", 1).await.0, 409);
        let mut locker = app.db.pool.begin().await.unwrap();
        sqlx::query("LOCK TABLE stock_balances, reservations, stock_reservations, skus, api_keys, warehouses, products IN ACCESS EXCLUSIVE MODE")
            .execute(&mut *locker)
            .await
            .unwrap();
        let tasks: Vec<_> = (0..50)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    tokio::time::timeout(
                        Duration::from_secs(5),
                        reserve(&api, &format!("late-{i}"), "HOT", 1),
                    )
                    .await
                })
            })
            .collect();
        for t in tasks {
            let (s, b) = t
                .await
                .unwrap()
                .expect("a sold-out answer never waits for SQL");
            assert_eq!(
                (s, b["error"].as_str()),
                (409, Some("insufficient_stock")),
                "{b}"
            );
            assert_eq!(b["available"], 0, "{b}");
        }
        locker.rollback().await.unwrap();
        let metrics = crate::helpers::metrics_text(&app.base).await;
        assert!(
            metrics.lines().any(|l| l.starts_with("sellable_gate_total")
                && l.contains(r#"op="reserve""#)
                && l.contains(r#"result="no""#)),
            "gate decisions are counted:\n{metrics}"
        );
        assert!(
            metrics
                .lines()
                .any(|l| l.starts_with("sellable_op_seconds")),
            "operation latency is measured"
        );
    }
);

pg!(redis_follows_reserve_confirm_release_and_expiry, |app| {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    let g = gate(&app);
    let sku = sku_id(&app, "TEA").await;
    let wh = warehouse_id(&app, "main").await;
    assert_eq!(reserve(&api, "a", "TEA", 3).await.0, 201);
    assert_eq!(reserve(&api, "b", "TEA", 2).await.0, 201);
    api.post("/api/v1/reservations/a/confirm", json!({})).await;
    api.post("/api/v1/reservations/b/release", json!({})).await;
    // A release of an order never held moves nothing, and neither does a second release.
    api.post("/api/v1/reservations/b/release", json!({})).await;
    let (s, _) = api
        .post(
            "/api/v1/reservations",
            json!({"order_id": "c", "ttl_seconds": 1, "items": [{"sku": "TEA", "qty": 4}]}),
        )
        .await;
    assert_eq!(s, 201);
    let counts = g.stock_counts(sku).await.unwrap().unwrap();
    assert_eq!(
        counts,
        vec![(
            wh,
            StockCounts {
                available: 3,
                locked: 4,
                sold: 3
            }
        )]
    );
    // The expiry job returns c's units, in SQL and in Redis.
    for _ in 0..50 {
        if g.stock_counts(sku).await.unwrap().unwrap()[0].1.locked == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        g.stock_counts(sku).await.unwrap().unwrap(),
        vec![(
            wh,
            StockCounts {
                available: 7,
                locked: 0,
                sold: 3
            }
        )]
    );
    assert_eq!(balance(&app, sku).await, (10, 0, 3, 0));
    // A retried order is recognised by Redis too: it replays, and moves nothing.
    let (s, b) = reserve(&api, "a", "TEA", 3).await;
    assert_eq!((s, b["status"].as_str()), (201, Some("CONFIRMED")), "{b}");
    assert_eq!(redis_available(&g, sku).await, Some(7));
    // An adjustment outside the gate drops the key; the next use loads it from SQL.
    api.receive("TEA", "main", 5).await;
    assert_eq!(reserve(&api, "d", "TEA", 12).await.0, 201);
    assert_eq!(redis_available(&g, sku).await, Some(0));
    let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
    assert!(
        report.broken.is_empty() && report.repaired.is_empty(),
        "{report:?}"
    );
});

pg!(
    flushing_redis_in_the_middle_of_a_flash_sale_oversells_nothing,
    |app| {
        let (api, g, sku) = goods_in_redis(&app, "DROP", 10).await;
        let sale = {
            let api = api.clone();
            tokio::spawn(async move { flash_sale(&[api], "DROP", 120, "f").await })
        };
        tokio::time::sleep(Duration::from_millis(30)).await;
        let flushed = g.flush_prefix().await.unwrap();
        let by = sale.await.unwrap();
        assert_eq!(
            by.get(&201),
            Some(&10),
            "exactly 10 sold: {by:?} (flushed {flushed} keys)"
        );
        assert_eq!(balance(&app, sku).await, (10, 10, 0, 0));
        // A buyer after the flush rebuilds the key from SQL and is refused by it, once this
        // instance no longer remembers the sell-out (the flush was not its change: for
        // SELLABLE_SOLD_OUT_MEMORY_MS it refuses without asking Redis).
        g.set_sold_out_memory(Duration::ZERO);
        assert_eq!(reserve(&api, "after-flush", "DROP", 1).await.0, 409);
        assert!(g.stock_counts(sku).await.unwrap().is_some());
        let first = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(first.broken.is_empty(), "{first:?}");
        let second = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(second.broken.is_empty(), "nothing broken: {second:?}");
        assert_eq!(redis_available(&g, sku).await, Some(0), "Redis equals SQL");
        app.assert_ledger_replays().await;
    }
);

pg!(
    a_sku_whose_warehouse_counter_alone_was_lost_reloads_it_instead_of_refusing_buyers,
    |app| {
        let (api, g, sku) = goods_in_redis(&app, "LOST", 5).await;
        assert_eq!(reserve(&api, "before", "LOST", 2).await.0, 201);
        assert_eq!(redis_available(&g, sku).await, Some(3));
        // The warehouse list survives, its counter does not (eviction, or a cluster flushed key
        // by key): that must read as "not loaded", not as "none left".
        let lost = g.lose_keys(&format!("{{s{sku}}}:w:*")).await.unwrap();
        assert_eq!(lost, 1, "one warehouse hash dropped");
        let (status, body) = reserve(&api, "after", "LOST", 3).await;
        assert_eq!(status, 201, "the last 3 units still sell: {body}");
        assert_eq!(balance(&app, sku).await, (5, 5, 0, 0));
        assert_eq!(redis_available(&g, sku).await, Some(0), "reloaded from SQL");
        assert_eq!(reserve(&api, "one-more", "LOST", 1).await.0, 409);
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

pg!(
    a_voucher_pool_lost_alone_is_loaded_again_even_after_a_release_instead_of_refusing_buyers,
    |app| {
        let (api, g, sku) = vouchers_in_redis(&app, "POOL", 5).await;
        assert_eq!(reserve(&api, "before", "POOL", 2).await.0, 201);
        let (pool, more) = g.code_pool(sku).await.unwrap().expect("the pool is loaded");
        assert_eq!((pool.len(), more), (3, false));
        // The pool's set goes and its meta stays (eviction, a cluster flushed key by key): that
        // must read as "not loaded", not as "none left".
        assert_eq!(g.lose_keys(&format!("{{c{sku}}}:pool")).await.unwrap(), 1);
        // A release before the next hold gives its codes back: that must not pass for the pool.
        let (s, b) = api
            .post("/api/v1/reservations/before/release", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = reserve(&api, "after", "POOL", 5).await;
        assert_eq!(s, 201, "all 5 codes still sell: {b}");
        // Emptied by sales, the pool is empty, not lost.
        let (s, b) = reserve(&api, "one-more", "POOL", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        let (pool, _) = g.code_pool(sku).await.unwrap().expect("still loaded");
        assert!(pool.is_empty(), "{pool:?}");
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

pg!(
    a_voucher_order_held_through_sql_while_a_refill_was_held_up_is_recognised_on_retry_once_the_pool_ran_dry,
    |app| {
        let (api, g, sku) = vouchers_in_redis(&app, "SLOW", 2).await;
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM codes WHERE sku_id = $1 ORDER BY id")
            .bind(sku)
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
        // The pool holds the first code and SQL has more past its cursor; another caller's
        // refill holds the lock. An order of two waits a moment for it, then takes both codes
        // through SQL alone.
        g.lose_keys(&format!("{{c{sku}}}:*")).await.unwrap();
        assert_eq!(g.code_refill(sku, true, true, ids[0], &ids[..1]).await.unwrap(), 1);
        assert!(g.code_refill_lock(sku).await.unwrap());
        let first = reserve(&api, "slow", "SLOW", 2).await;
        assert_eq!(first.0, 201, "{first:?}");
        assert_eq!(g.lose_keys(&format!("{{c{sku}}}:lock")).await.unwrap(), 1);
        // The next buyer's refill finds nothing more: the pool has run dry.
        let (s, b) = reserve(&api, "next", "SLOW", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        let (pool, more) = g.code_pool(sku).await.unwrap().expect("the pool is loaded");
        assert!(pool.is_empty() && !more, "{pool:?} {more}");
        // The order's retry is its hold, not a sold-out answer.
        assert_eq!(reserve(&api, "slow", "SLOW", 2).await, first);
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

pg!(
    a_retry_of_a_paid_or_released_voucher_order_after_redis_was_flushed_answers_as_before_on_an_emptied_pool,
    |app| {
        let (api, g, sku) = vouchers_in_redis(&app, "CARDS", 4).await;
        let (paid, gone) = paid_and_released(&api, "CARDS").await;
        g.flush_prefix().await.unwrap();
        // The next buyer loads the pool from SQL and takes the last two codes.
        assert_eq!(reserve(&api, "last", "CARDS", 2).await.0, 201);
        let (pool, _) = g.code_pool(sku).await.unwrap().expect("the pool is loaded");
        assert!(pool.is_empty(), "{pool:?}");
        // The records came back with the pool: the retries are recognised, not new buyers.
        assert_eq!(reserve(&api, "paid", "CARDS", 2).await, paid);
        assert_eq!(reserve(&api, "gone", "CARDS", 1).await, gone);
        assert_eq!(
            reserve(&api, "new", "CARDS", 1).await.1["error"],
            "insufficient_stock"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

pg!(
    reconciliation_reloads_a_sku_whose_warehouse_counter_was_lost_instead_of_shifting_nothing_each_run,
    |app| {
        let (api, g, sku) = goods_in_redis(&app, "GONE", 5).await;
        assert_eq!(reserve(&api, "before", "GONE", 2).await.0, 201);
        assert_eq!(g.lose_keys(&format!("{{s{sku}}}:w:*")).await.unwrap(), 1);
        let first = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(first.broken.is_empty(), "{first:?}");
        assert_eq!(first.repaired.len(), 1, "the lost counter is repaired: {first:?}");
        assert_eq!(
            g.stock_counts(sku).await.unwrap(),
            None,
            "the SKU is dropped, to be loaded from SQL"
        );
        let second = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            second.broken.is_empty() && second.repaired.is_empty(),
            "nothing left to repair: {second:?}"
        );
        assert_eq!(reserve(&api, "after", "GONE", 3).await.0, 201);
        assert_eq!(redis_available(&g, sku).await, Some(0));
    }
);

pg!(
    an_order_whose_record_alone_was_lost_keeps_getting_its_hold_on_retry_after_the_sku_sold_out,
    |app| {
        // Goods and vouchers: the order's record is lost on its own (evicted); its first retry
        // takes units in Redis as a new order would, SQL knows the order and that hold is undone.
        // The undo forgets the order in Redis; the record must come back from SQL, or the next
        // retry, after the SKU sold out, hears insufficient_stock.
        let (api, g, goods) = goods_in_redis(&app, "LOSTG", 3).await;
        api.product("voucher", "LOSTC").await;
        let file: String = (0..3).map(|i| format!("LOSTC-{i:04}-KEY\n")).collect();
        let batch = crate::codes::import(&api, "LOSTC", "lostc.txt", &file, "valid").await;
        assert_eq!(batch["imported"], 3, "{batch}");
        let codes = sku_id(&app, "LOSTC").await;
        for (sku, id) in [("LOSTG", goods), ("LOSTC", codes)] {
            let (keep, rest, late) = (
                format!("keep-{sku}"),
                format!("rest-{sku}"),
                format!("late-{sku}"),
            );
            let first = reserve(&api, &keep, sku, 1).await;
            assert_eq!(first.0, 201, "{first:?}");
            let tag = if sku == "LOSTG" { 's' } else { 'c' };
            assert_eq!(
                g.lose_keys(&format!("{{{tag}{id}}}:o:{keep}"))
                    .await
                    .unwrap(),
                1
            );
            assert_eq!(reserve(&api, &keep, sku, 1).await, first);
            let (s, b) = reserve(&api, &rest, sku, 2).await;
            assert_eq!(s, 201, "the units the undone hold took are back: {b}");
            assert_eq!(
                reserve(&api, &late, sku, 1).await.1["error"],
                "insufficient_stock"
            );
            assert_eq!(reserve(&api, &keep, sku, 1).await, first, "{sku}");
        }
        assert_eq!(redis_available(&g, goods).await, Some(0));
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

pg!(
    a_retry_of_an_order_held_before_redis_was_flushed_gets_its_hold_once_the_sku_sold_out,
    |app| {
        let (api, g, sku) = goods_in_redis(&app, "KEPT", 3).await;
        let (s, first) = reserve(&api, "held", "KEPT", 2).await;
        assert_eq!(s, 201, "{first}");
        g.flush_prefix().await.unwrap();
        // The next buyer loads the SKU from SQL and takes the last unit.
        assert_eq!(reserve(&api, "last", "KEPT", 1).await.0, 201);
        assert_eq!(redis_available(&g, sku).await, Some(0));
        // The first order's client never saw its answer and sends it again: it is the order
        // Redis held before the flush, not a new buyer on a sold-out SKU.
        let (s, again) = reserve(&api, "held", "KEPT", 2).await;
        assert_eq!(s, 201, "{again}");
        assert_eq!(again, first, "the retry answers as the order did");
        assert_eq!(reserve(&api, "new", "KEPT", 1).await.0, 409);
        assert_eq!(balance(&app, sku).await, (3, 3, 0, 0));
        // Confirming it settles in Redis too: the record put back is the reserve script's.
        let (s, b) = api
            .post("/api/v1/reservations/held/confirm", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        let counts = g.stock_counts(sku).await.unwrap().unwrap();
        assert_eq!(
            (counts[0].1.locked, counts[0].1.sold),
            (1, 2),
            "Redis moved the order's units to sold"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

pg!(
    a_retry_of_a_paid_or_released_order_after_redis_was_flushed_answers_as_before_on_a_sold_out_sku,
    |app| {
        let (api, g, sku) = goods_in_redis(&app, "KEPT", 4).await;
        let (paid, gone) = paid_and_released(&api, "KEPT").await;
        g.flush_prefix().await.unwrap();
        // The next buyer loads the SKU from SQL and takes the last two units.
        assert_eq!(reserve(&api, "last", "KEPT", 2).await.0, 201);
        assert_eq!(redis_available(&g, sku).await, Some(0));
        // The records came back with the load: the retries are recognised, not new buyers.
        assert_eq!(reserve(&api, "paid", "KEPT", 2).await, paid);
        assert_eq!(reserve(&api, "gone", "KEPT", 1).await, gone);
        assert_eq!(
            reserve(&api, "new", "KEPT", 1).await.1["error"],
            "insufficient_stock"
        );
        assert_eq!(balance(&app, sku).await, (4, 2, 2, 0));
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

/// A Redis server of this test's own, so that it can be stopped and started.
struct PrivateRedis {
    port: u16,
    child: Killable,
}

impl PrivateRedis {
    fn start(port: u16) -> PrivateRedis {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs");
        std::thread::sleep(Duration::from_millis(300));
        PrivateRedis {
            port,
            child: Killable(Some(child)),
        }
    }
    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
    fn stop(&mut self) {
        self.child.kill();
    }
}

/// A child process, killed with SIGKILL and reaped when asked or when dropped.
pub(crate) struct Killable(Option<Child>);

impl Killable {
    fn kill(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Killable {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The application as its own process on the test's database (and Redis, if any), so that a test can
/// kill it with SIGKILL mid-request (`Child::kill`) and start it again on the same port.
pub(crate) struct Process {
    app_env: Vec<(String, String)>,
    port: u16,
    pub(crate) base: String,
    child: Killable,
}

impl Process {
    pub(crate) async fn start(app: &TestApp) -> Process {
        Self::start_with(app, &[]).await
    }

    /// `start`, with more environment variables for the process.
    pub(crate) async fn start_with(app: &TestApp, extra: &[(&str, &str)]) -> Process {
        let port = free_port();
        let dir = |d: &str| app.dir.join(d).to_string_lossy().into_owned();
        let mut app_env = [
            ("DATABASE_URL", app.database_url.clone()),
            ("SELLABLE_BIND", format!("127.0.0.1:{port}")),
            ("SELLABLE_CODE_KEY_FILE", dir("code-keys.json")),
            ("SELLABLE_UPLOAD_DIR", dir("uploads")),
            ("SELLABLE_EXPIRY_INTERVAL_SECONDS", "1".to_string()),
            ("SELLABLE_LOG", "warn".to_string()),
            // The test's day: both instances agree on what has expired and started.
            (
                "SELLABLE_CLOCK_OFFSET_MS",
                app.db.clock.offset_ms().to_string(),
            ),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .to_vec();
        // On SQLite alone there is no gate: the process runs without Redis, as the tests' app.
        if let (Some(url), Some(g)) = (&app.redis_url, &app.db.gate) {
            app_env.push(("REDIS_URL".into(), url.clone()));
            app_env.push(("SELLABLE_REDIS_PREFIX".into(), g.prefix().to_string()));
        }
        app_env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut p = Process {
            app_env,
            port,
            base: format!("http://127.0.0.1:{port}"),
            child: Killable(None),
        };
        p.restart().await;
        p
    }

    /// Starts the process (again) and waits until it answers `/healthz`.
    pub(crate) async fn restart(&mut self) {
        self.kill();
        self.child = Killable(Some(
            Command::new(env!("CARGO_BIN_EXE_sellable"))
                .arg("serve")
                .envs(self.app_env.iter().map(|(k, v)| (k, v)))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("server starts"),
        ));
        for _ in 0..100 {
            if reqwest::get(format!("{}/healthz", self.base))
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("server on port {} did not come up", self.port);
    }

    pub(crate) fn kill(&mut self) {
        self.child.kill();
    }
}

/// Another instance of the application on the same database.
async fn instance(
    app: &TestApp,
    redis_url: &str,
    prefix: &str,
) -> (
    String,
    sellable::infra::db::Db,
    tokio::sync::oneshot::Sender<()>,
) {
    let config = sellable::Config {
        redis_url: Some(redis_url.to_string()),
        redis_prefix: prefix.to_string(),
        code_key_file: app.dir.join("code-keys.json"),
        upload_dir: app.dir.join("uploads"),
        expiry_interval_seconds: 1,
        clock: app.db.clock.clone(),
        metrics_token: Some(crate::helpers::METRICS_TOKEN.to_string()),
        ..sellable::Config::for_database(&app.database_url)
    };
    let other = sellable::build(config).await.unwrap();
    let base = format!("http://{}", other.local_addr());
    let db = other.state.db.clone();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(other.run_until(async move {
        let _ = rx.await;
    }));
    (base, db, tx)
}

pg!(
    @one_redis with_redis_stopped_mid_sale_requests_go_on_in_sql_and_the_gate_comes_back,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "BOX").await;
        api.receive("BOX", "main", 10).await;
        let mut redis = PrivateRedis::start(free_port());
        let (base, db, stop) = instance(&app, &redis.url(), "private").await;
        let api = Api {
            base: base.clone(),
            ..api
        };
        let sku = sku_id(&app, "BOX").await;
        let (first, held) = flash_sale_orders(std::slice::from_ref(&api), "BOX", 20, "w1").await;
        assert_eq!(first.get(&201), Some(&10), "{first:?}");
        // Redis stops; buyers keep coming and releases keep happening.
        redis.stop();
        for order in &held[..4] {
            let (s, b) = api
                .post(&format!("/api/v1/reservations/{order}/release"), json!({}))
                .await;
            assert_eq!(s, 200, "{b}");
        }
        let second = flash_sale(std::slice::from_ref(&api), "BOX", 30, "w2").await;
        assert_eq!(
            second.get(&201),
            Some(&4),
            "still exactly 10 held: {second:?}"
        );
        assert_eq!(balance(&app, sku).await, (10, 10, 0, 0));
        let ready: Value = reqwest::get(format!("{base}/readyz"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            (ready["status"].as_str(), ready["gate"].as_str()),
            (Some("degraded"), Some("degraded")),
            "{ready}"
        );
        let metrics = crate::helpers::metrics_text(&base).await;
        assert!(
            metrics.contains("sellable_gate_degraded_switches_total"),
            "counted in /metrics"
        );
        // The sellable verdict says so too, as information: it blocks nothing.
        api.receive("BOX", "main", 5).await;
        let (s, verdict) = api.get("/api/v1/skus/BOX/sellable").await;
        assert_eq!(s, 200, "{verdict}");
        assert_eq!(
            (verdict["sellable"].as_bool(), verdict["quantity"].as_i64()),
            (Some(true), Some(5)),
            "{verdict}"
        );
        let codes: Vec<&str> = verdict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["code"].as_str())
            .collect();
        assert_eq!(codes, ["gate_degraded"], "{verdict}");
        // The back office says so in its header.
        let (email, password) = app.user("operator", None).await;
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .build()
            .unwrap();
        client
            .post(format!("{base}/login"))
            .header("Origin", &base)
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        let page = client
            .get(format!("{base}/admin"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            page.contains(r#"id="gate-degraded""#),
            "degraded banner in the header"
        );
        // Redis comes back (empty, like a restarted Redis without persistence): the gate resumes.
        let _redis = PrivateRedis::start(redis.port);
        let mut on = false;
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let r: Value = reqwest::get(format!("{base}/readyz"))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if r["gate"] == "on" {
                on = true;
                break;
            }
        }
        assert!(on, "the gate came back on");
        api.receive("BOX", "main", 3).await;
        let third = flash_sale(std::slice::from_ref(&api), "BOX", 12, "w3").await;
        assert_eq!(
            third.get(&201),
            Some(&8),
            "the 5 received while degraded and the 3 after: {third:?}"
        );
        let g = db.gate.clone().unwrap();
        assert_eq!(
            redis_available(&g, sku).await,
            Some(0),
            "the gate is in use again"
        );
        let report = reconcile::run(&db, "job", &system()).await.unwrap();
        assert!(report.broken.is_empty(), "{report:?}");
        let _ = stop.send(());
    }
);

pg!(
    two_instances_on_one_database_and_redis_sell_exactly_n,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "DUO").await;
        api.receive("DUO", "main", 10).await;
        let prefix = gate(&app).prefix().to_string();
        let (base, _db, stop) = instance(&app, app.redis_url.as_deref().unwrap(), &prefix).await;
        let other = Api {
            base,
            ..api.clone()
        };
        let by = flash_sale(&[api.clone(), other], "DUO", 80, "two").await;
        assert_eq!(
            (by.get(&201), by.get(&409)),
            (Some(&10), Some(&70)),
            "{by:?}"
        );
        let sku = sku_id(&app, "DUO").await;
        assert_eq!(balance(&app, sku).await, (10, 10, 0, 0));
        assert_eq!(redis_available(&gate(&app), sku).await, Some(0));
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
        let _ = stop.send(());
    }
);

pg!(
    a_server_killed_mid_sale_loses_nothing_and_its_holds_expire,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "KILL").await;
        api.receive("KILL", "main", 50).await;
        let mut server = Process::start(&app).await;
        let base = server.base.clone();
        let remote = Api {
            base: base.clone(),
            ..api.clone()
        };
        // Short holds: the ones the dead process left must expire by themselves.
        let buyers: Vec<_> = (0..200)
            .map(|i| {
                let remote = remote.clone();
                tokio::spawn(async move {
                    remote
                        .post(
                            "/api/v1/reservations",
                            json!({"order_id": format!("k-{i}"), "ttl_seconds": 2, "items": [{"sku": "KILL", "qty": 1}]}),
                        )
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(40)).await;
        server.kill();
        for b in buyers {
            // Requests cut by the kill fail on the client side: nothing to assert on them.
            let _ = b.await;
        }
        server.restart().await;
        let after = flash_sale(std::slice::from_ref(&remote), "KILL", 20, "k2").await;
        assert!(after.values().sum::<usize>() == 20);
        // Every hold expires (ttl 2 s for the first wave, default for the second: release those).
        for i in 0..20 {
            remote
                .post(&format!("/api/v1/reservations/k2-{i}/release"), json!({}))
                .await;
        }
        let sku = sku_id(&app, "KILL").await;
        let mut settled = false;
        for _ in 0..60 {
            if balance(&app, sku).await.1 == 0 {
                settled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(
            settled,
            "held units went back: {:?}",
            balance(&app, sku).await
        );
        assert_eq!(
            balance(&app, sku).await,
            (50, 0, 0, 0),
            "no unit lost or double-counted"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(report.broken.is_empty(), "{report:?}");
        let again = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(again.repaired.is_empty(), "{again:?}");
        assert_eq!(redis_available(&gate(&app), sku).await.unwrap_or(50), 50);
        app.assert_ledger_replays().await;
    }
);

both!(
    a_server_killed_mid_combined_orders_leaves_no_order_half_made,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "KITE").await;
        api.receive("KITE", "main", 40).await;
        api.product("service", "KCLASS").await;
        let starts = app.now() + chrono::Duration::days(1);
        let slot = api
            .one_off("KCLASS", starts, starts + chrono::Duration::hours(1), 30)
            .await;
        let mut server = Process::start(&app).await;
        let remote = Api {
            base: server.base.clone(),
            ..api.clone()
        };
        // Each order holds a unit and books a place; the process dies while they are in flight.
        let buyers: Vec<_> = (0..120)
            .map(|i| {
                let remote = remote.clone();
                tokio::spawn(async move {
                    remote
                        .post(
                            "/api/v1/reservations",
                            json!({"order_id": format!("kc-{i}"), "ttl_seconds": 2, "items": [
                                {"sku": "KITE", "qty": 1},
                                {"sku": "KCLASS", "slot_id": slot, "places": 1,
                                 "customer": {"name": "Kim", "phone": format!("138{:08}", i)}}]}),
                        )
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(60)).await;
        server.kill();
        let mut cut = 0;
        for b in buyers {
            // A request cut by the kill fails on the client side (the helper panics on it).
            cut += usize::from(b.await.is_err());
        }
        assert!(cut > 0, "the kill landed while orders were in flight");
        server.restart().await;
        // Right after the restart: every order the dead process left is whole.
        let sku = sku_id(&app, "KITE").await;
        let held: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM reservations WHERE status = 'RESERVED'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        let booked = app.slot_booked(slot).await;
        let orphans: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM bookings WHERE slot_id = $1 AND reservation_id IS NULL",
        )
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(orphans, 0, "every place was booked by an order");
        assert_eq!(balance(&app, sku).await.1, held, "one unit per held order");
        assert!(
            booked >= held,
            "every held order has its place: {booked} < {held}"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(report.broken.is_empty(), "{report:?}");
        // The dead process's holds expire by themselves: goods back, bookings cancelled.
        let mut settled = false;
        for _ in 0..60 {
            let booked = app.slot_booked(slot).await;
            if balance(&app, sku).await.1 == 0 && booked == 0 {
                settled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(settled, "holds expired: {:?}", balance(&app, sku).await);
        assert_eq!(balance(&app, sku).await, (40, 0, 0, 0));
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
        app.assert_ledger_replays().await;
    }
);

pg!(
    redis_counts_set_too_high_or_too_low_are_repaired_by_reconciliation,
    |app| {
        let (api, g, sku) = goods_in_redis(&app, "ODD", 5).await;
        let wh = warehouse_id(&app, "main").await;
        assert_eq!(reserve(&api, "x", "ODD", 1).await.0, 201);
        // Too low: Redis refuses what SQL has.
        g.stock_overwrite(
            sku,
            wh,
            StockCounts {
                available: 0,
                locked: 1,
                sold: 0,
            },
        )
        .await
        .unwrap();
        assert_eq!(reserve(&api, "y", "ODD", 1).await.0, 409);
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert_eq!(report.repaired.len(), 1, "{report:?}");
        assert!(report.broken.is_empty());
        assert_eq!(redis_available(&g, sku).await, Some(4));
        assert_eq!(reserve(&api, "y", "ODD", 1).await.0, 201);
        // Too high: Redis says yes, SQL says no, Redis is put back at once, reconciliation repairs.
        assert_eq!(reserve(&api, "z", "ODD", 3).await.0, 201);
        g.stock_overwrite(
            sku,
            wh,
            StockCounts {
                available: 9,
                locked: 5,
                sold: 0,
            },
        )
        .await
        .unwrap();
        let (s, b) = reserve(&api, "w", "ODD", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        assert_eq!(
            redis_available(&g, sku).await,
            Some(9),
            "the refused hold was undone"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert_eq!(report.repaired.len(), 1, "{report:?}");
        assert_eq!(redis_available(&g, sku).await, Some(0));
        assert_eq!(balance(&app, sku).await, (5, 5, 0, 0));
        let runs = reconcile::runs(&app.db, 0).await.unwrap();
        assert_eq!(runs[0].drift_repaired, 1);
    }
);

pg!(
    retried_orders_racing_their_first_try_leave_redis_equal_to_sql,
    |app| {
        // Each order is sent twice at once. Redis holds the first and answers the twin "seen";
        // the twin goes to SQL, which replays the first's answer, or holds when it gets there
        // first (the first then finds the order known and gives its Redis hold back, and the twin
        // takes the units in Redis): the hold is counted once, in Redis as in SQL.
        let api = app.acme_api().await;
        api.product("goods", "RETRY").await;
        api.receive("RETRY", "main", 20).await;
        let sku = sku_id(&app, "RETRY").await;
        let tasks: Vec<_> = (0..80)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(
                    async move { reserve(&api, &format!("retry-{}", i / 2), "RETRY", 1).await },
                )
            })
            .collect();
        let mut answers: HashMap<String, Vec<u16>> = HashMap::new();
        for (i, t) in tasks.into_iter().enumerate() {
            let (s, b) = t.await.unwrap();
            assert!(
                s == 201 || (s == 409 && b["error"] == "insufficient_stock"),
                "{s} {b}"
            );
            answers
                .entry(format!("retry-{}", i / 2))
                .or_default()
                .push(s);
        }
        let held = answers.values().filter(|v| v.contains(&201)).count();
        assert_eq!(held, 20, "twenty orders hold the twenty units: {answers:?}");
        let (total, locked, _, _) = balance(&app, sku).await;
        assert_eq!((total, locked), (20, 20));
        assert_eq!(
            redis_available(&gate(&app), sku).await,
            Some(0),
            "Redis offers nothing SQL has already held"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(report.broken.is_empty(), "{report:?}");
    }
);

pg!(
    double_submits_racing_for_a_slot_leave_redis_equal_to_sql,
    |app| {
        // Each customer submits twice at once. Redis gives the first a place and answers the twin
        // "seen"; the twin waits for the first's outcome in SQL (up to 3 s), then hears it. Should
        // the twin still win there (the first slower than that), the first is refused and gives
        // its place back, and Redis must still count the twin's place, or it would go on offering
        // it and every later buyer would be sent to SQL to be refused.
        let api = app.acme_api().await;
        let slot_id = service_slot(&api, "TWIN", 8).await;
        let tasks: Vec<_> = (0..60)
            .map(|i| {
                let api = api.clone();
                let customer = i / 2;
                tokio::spawn(async move {
                    api.post(
                        "/api/v1/bookings",
                        json!({"slot_id": slot_id, "name": format!("C{customer}"), "phone": format!("+49 170 {customer:07}"), "idempotency_key": format!("twin-{i}")}),
                    )
                    .await
                })
            })
            .collect();
        let mut booked = 0;
        for t in tasks {
            let (s, b) = t.await.unwrap();
            match s {
                201 => booked += 1,
                409 => assert!(
                    matches!(b["error"].as_str(), Some("slot_full" | "already_booked")),
                    "{b}"
                ),
                _ => panic!("{s} {b}"),
            }
        }
        assert_eq!(booked, 8, "every place sold once");
        let (merchant, sql_booked): (i64, i64) =
            sqlx::query_as("SELECT merchant_id, booked FROM slots WHERE id = $1")
                .bind(slot_id)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(sql_booked, 8);
        assert_eq!(
            gate(&app).slot_read(merchant, slot_id).await.unwrap(),
            Some((0, "OPEN".into())),
            "Redis offers no place SQL has already booked"
        );
        // The buyers after the sale are refused, and Redis still agrees with SQL.
        for i in 100..110 {
            let (s, b) = api
                .post(
                    "/api/v1/bookings",
                    json!({"slot_id": slot_id, "name": "Late", "phone": format!("+49 170 {i:07}")}),
                )
                .await;
            assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        }
        assert_eq!(
            gate(&app).slot_read(merchant, slot_id).await.unwrap(),
            Some((0, "OPEN".into()))
        );
    }
);

pg!(
    a_customers_second_order_on_a_slot_waits_for_the_first_that_redis_gave_places_rather_than_booking_past_it,
    |app| {
        // One customer sends two orders for one slot: X (a kite and a party of two) and then Y (a
        // party of one). Redis gives X its two places and answers Y "seen". X is held up in SQL on
        // the kite's row while the slot's row is free: were Y booked now, X would be refused
        // there, and until it gave its places back Redis would count three places for a party of
        // one. Y waits for X instead and hears, as it would after X, that the customer is booked.
        let api = app.acme_api().await;
        api.product("goods", "TKITE").await;
        api.receive("TKITE", "main", 5).await;
        let slot = api.party_slot("TCLASS", 2, 7).await;
        let kite = sku_id(&app, "TKITE").await;
        let customer = json!({"name": "Kim", "phone": "+86 138 0013 8000"});
        let mut kite_row = app.db.begin_write().await.unwrap();
        sqlx::query("UPDATE stock_balances SET version = version WHERE sku_id = $1")
            .bind(kite)
            .execute(&mut *kite_row)
            .await
            .unwrap();
        let x = {
            let api = api.clone();
            let customer = customer.clone();
            tokio::spawn(async move {
                api.reserve("twin-x", json!([{"sku": "TKITE", "qty": 1},
                    {"sku": "TCLASS", "slot_id": slot, "places": 2, "customer": customer}]))
                    .await
            })
        };
        // X takes its places in Redis, then waits on the kite's row.
        let merchant = slot_merchant(&app, slot).await;
        let mut taken = false;
        for _ in 0..100 {
            if gate(&app).slot_read(merchant, slot).await.unwrap() == Some((5, "OPEN".into())) {
                taken = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(taken, "Redis gave X its two places");
        let y = {
            let api = api.clone();
            tokio::spawn(async move {
                api.reserve("twin-y", json!([
                    {"sku": "TCLASS", "slot_id": slot, "places": 1, "customer": customer}]))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!y.is_finished(), "Y waits for X");
        assert_eq!(app.slot_booked(slot).await, 0, "Y is not booked while X holds the places");
        kite_row.rollback().await.unwrap();
        let (s, b) = x.await.unwrap();
        assert_eq!(s, 201, "{b}");
        let (s, b) = y.await.unwrap();
        assert_eq!((s, b["error"].as_str()), (409, Some("already_booked")), "{b}");
        assert_eq!(app.slot_booked(slot).await, 2);
        assert_eq!(
            gate(&app).slot_read(merchant, slot).await.unwrap(),
            Some((5, "OPEN".into())),
            "Redis counts X's places once and nothing for Y"
        );
        app.assert_reconciled().await;
    }
);

pg!(
    a_sku_found_sold_out_is_refused_from_memory_while_a_repeat_of_a_held_order_still_gets_its_hold,
    |app| {
        let api = app.acme_api().await;
        let g = gate(&app);
        // Long enough that no pause of a loaded machine ends it within the test.
        g.set_sold_out_memory(Duration::from_secs(60));
        api.product("goods", "LAST").await;
        api.receive("LAST", "main", 2).await;
        let sku = sku_id(&app, "LAST").await;
        for order in ["last-1", "last-2"] {
            let (s, b) = reserve(&api, order, "LAST", 1).await;
            assert_eq!(s, 201, "{b}");
        }
        assert!(
            !g.remembers_sold_out(Subject::Stock(sku)),
            "units were taken, not refused"
        );
        let (s, b) = reserve(&api, "last-3", "LAST", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        assert!(
            g.remembers_sold_out(Subject::Stock(sku)),
            "the script's \"none left\" is remembered"
        );
        // Redis offers units behind this instance's back: the memory answers without asking.
        let wh: i64 =
            sqlx::query_scalar("SELECT warehouse_id FROM stock_balances WHERE sku_id = $1")
                .bind(sku)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        let truth = StockCounts {
            available: 0,
            locked: 2,
            sold: 0,
        };
        let surplus = StockCounts {
            available: 5,
            ..truth
        };
        g.stock_overwrite(sku, wh, surplus).await.unwrap();
        let (s, b) = reserve(&api, "last-4", "LAST", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        assert_eq!(
            (b["sku"].as_str(), b["available"].as_i64()),
            (Some("LAST"), Some(0)),
            "{b}"
        );
        // Had the script run, it would have taken a unit (and SQL undone it): the memory went.
        assert!(
            g.remembers_sold_out(Subject::Stock(sku)),
            "answered from memory"
        );
        assert!(!g.is_degraded(), "through the gate, not SQL alone");
        g.stock_overwrite(sku, wh, truth).await.unwrap();
        // A repeat of a held order is no new order: its record sends it to the script, and it
        // gets its hold again.
        let (s, b) = reserve(&api, "last-1", "LAST", 1).await;
        assert_eq!(
            (s, b["order_id"].as_str(), b["status"].as_str()),
            (201, Some("last-1"), Some("RESERVED")),
            "{b}"
        );
        // A change this instance makes to the SKU ends the memory at once.
        let (s, b) = api
            .post("/api/v1/reservations/last-2/release", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        assert!(!g.remembers_sold_out(Subject::Stock(sku)));
        let (s, b) = reserve(&api, "last-5", "LAST", 1).await;
        assert_eq!(s, 201, "the released unit is sold again: {b}");
        let (_, locked, _, _) = balance(&app, sku).await;
        assert_eq!(locked, 2);
        app.assert_reconciled().await;
    }
);

pg!(
    a_full_slot_and_a_sold_out_voucher_are_refused_from_memory_while_their_repeats_are_answered_as_before,
    |app| {
        let (api, g, voucher) = vouchers_in_redis(&app, "VMEM", 2).await;
        g.set_sold_out_memory(Duration::from_secs(60));
        // A slot of one place: taken, then found full.
        let slot = service_slot(&api, "SMEM", 1).await;
        let merchant = slot_merchant(&app, slot).await;
        let full = Subject::Slot { merchant, slot };
        let (s, first) = api.book(slot, "Ann", "+86 139 0000 0001", Some("ann-1")).await;
        assert_eq!(s, 201, "{first}");
        let (s, b) = api.book(slot, "Bo", "+86 139 0000 0002", None).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        assert!(g.remembers_sold_out(full));
        // Redis offers places behind this instance's back: the memory answers.
        g.slot_overwrite(merchant, slot, 3).await.unwrap();
        let (s, b) = api.book(slot, "Cy", "+86 139 0000 0003", None).await;
        assert_eq!((s, b["error"].as_str(), b["remaining"].as_i64()), (409, Some("slot_full"), Some(0)), "{b}");
        assert!(g.remembers_sold_out(full), "answered from memory, not by the script");
        assert!(!g.is_degraded(), "through the gate, not SQL alone");
        g.slot_overwrite(merchant, slot, 0).await.unwrap();
        // Ann's repeat is her booking; Ann again with another key is already booked.
        let (s, b) = api.book(slot, "Ann", "+86 139 0000 0001", Some("ann-1")).await;
        assert_eq!((s, &b["reference"]), (201, &first["reference"]), "{b}");
        let (s, b) = api.book(slot, "Ann", "+86 139 0000 0001", Some("ann-2")).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("already_booked")), "{b}");
        // Her cancel, made here, ends the memory: the place goes to the next customer.
        let reference = first["reference"].as_str().unwrap();
        let (s, b) = api.post(&format!("/api/v1/bookings/{reference}/cancel"), json!({})).await;
        assert_eq!(s, 200, "{b}");
        assert!(!g.remembers_sold_out(full));
        let (s, b) = api.book(slot, "Di", "+86 139 0000 0004", None).await;
        assert_eq!(s, 201, "{b}");

        // Two codes, both sold: the next order is refused and the SKU remembered.
        let codes = Subject::Codes(voucher);
        for order in ["vm-1", "vm-2"] {
            assert_eq!(reserve(&api, order, "VMEM", 1).await.0, 201);
        }
        let (s, b) = api.post("/api/v1/reservations/vm-1/confirm", json!({})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = reserve(&api, "vm-3", "VMEM", 1).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("insufficient_stock")), "{b}");
        assert!(g.remembers_sold_out(codes));
        // The paid order's repeat still shows its code.
        let (s, b) = reserve(&api, "vm-1", "VMEM", 1).await;
        assert_eq!((s, b["status"].as_str()), (201, Some("CONFIRMED")), "{b}");
        // The held one's release, made here, ends the memory and its code sells again.
        let (s, b) = api.post("/api/v1/reservations/vm-2/release", json!({})).await;
        assert_eq!(s, 200, "{b}");
        assert!(!g.remembers_sold_out(codes));
        let (s, b) = reserve(&api, "vm-4", "VMEM", 1).await;
        assert_eq!(s, 201, "{b}");
        app.assert_reconciled().await;
    }
);

pg!(
    units_received_through_another_instance_reach_a_sku_remembered_sold_out_once_the_memory_ends,
    |app| {
        let api = app.acme_api().await;
        let g = gate(&app);
        let memory = Duration::from_secs(4);
        g.set_sold_out_memory(memory);
        api.product("goods", "ONE").await;
        api.receive("ONE", "main", 1).await;
        let other = Process::start(&app).await;
        let remote = Api {
            base: other.base.clone(),
            ..api.clone()
        };
        let (s, b) = reserve(&api, "one-1", "ONE", 1).await;
        assert_eq!(s, 201, "{b}");
        let asked = std::time::Instant::now();
        let (s, b) = reserve(&api, "one-2", "ONE", 1).await;
        let heard = std::time::Instant::now();
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        // Another instance receives a unit: this one does not hear of it...
        remote.receive("ONE", "main", 1).await;
        let (s, b) = reserve(&api, "one-3", "ONE", 1).await;
        assert!(asked.elapsed() < memory, "the check ran within the memory");
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        // ...for longer than the memory.
        tokio::time::sleep(memory.saturating_sub(heard.elapsed())).await;
        let (s, b) = reserve(&api, "one-4", "ONE", 1).await;
        assert_eq!(s, 201, "the unit received elsewhere is sold here: {b}");
        app.assert_reconciled().await;
    }
);

pg!(
    a_move_into_a_slot_a_booking_is_loading_is_counted_in_redis_once,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "LOADS").await;
        let start = app.now() + chrono::Duration::days(2);
        let target = api
            .one_off("LOADS", start, start + chrono::Duration::hours(1), 3)
            .await;
        let later = start + chrono::Duration::hours(2);
        let source = api
            .one_off("LOADS", later, later + chrono::Duration::hours(1), 1)
            .await;
        let (s, b) = api.book(source, "Mo", "+86 137 0000 0001", None).await;
        assert_eq!(s, 201, "{b}");
        let reference = b["reference"].as_str().unwrap().to_string();
        let merchant = slot_merchant(&app, target).await;
        let g = gate(&app);
        assert_eq!(
            g.slot_read(merchant, target).await.unwrap(),
            None,
            "not loaded yet"
        );
        // A walk-in's booking finds the target not loaded and reads it from SQL: three places.
        // Staff move a booking into it meanwhile, and Redis follows the move...
        let (s, b) = api
            .post(
                &format!("/api/v1/bookings/{reference}/move"),
                json!({"slot_id": target}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        // ...then the walk-in's load writes what it read: nothing, the slot is loaded.
        late_load(&app, &g, target, 3).await;
        assert_eq!(
            g.slot_read(merchant, target).await.unwrap(),
            Some((2, "OPEN".into())),
            "the moved place is counted"
        );
        // A cancel follows the same way.
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(
            g.slot_read(merchant, target).await.unwrap(),
            Some((3, "OPEN".into()))
        );
        app.assert_reconciled().await;
    }
);

pg!(
    an_order_released_or_expired_while_a_booking_loads_its_slot_gives_its_place_back_in_redis,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "ORDERED").await;
        let start = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("ORDERED", start, start + chrono::Duration::hours(1), 3)
            .await;
        let merchant = slot_merchant(&app, slot).await;
        let g = gate(&app);
        let order = |id: &str, phone: &str, ttl: i64| {
            json!({"order_id": id, "ttl_seconds": ttl, "items": [
                {"sku": "ORDERED", "slot_id": slot, "places": 1,
                 "customer": {"name": "顾客", "phone": phone}}]})
        };
        // A walk-in's booking that found the slot not loaded read it from SQL while the order
        // still held its place (two left), and writes that after the order let go of it.
        let unloaded = |why: &'static str| {
            let g = g.clone();
            async move {
                g.forget(Subject::Slot { merchant, slot }).await;
                assert_eq!(g.slot_read(merchant, slot).await.unwrap(), None, "{why}");
            }
        };

        let (s, b) = api
            .post("/api/v1/reservations", order("rel-1", "13800138001", 600))
            .await;
        assert_eq!(s, 201, "{b}");
        unloaded("a capacity edit or the key's expiry dropped it").await;
        let (s, b) = api
            .post("/api/v1/reservations/rel-1/release", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        late_load(&app, &g, slot, 2).await;
        assert_eq!(
            g.slot_read(merchant, slot).await.unwrap(),
            Some((3, "OPEN".into())),
            "the released place is back on offer"
        );

        let (s, b) = api
            .post("/api/v1/reservations", order("exp-1", "13800138002", 1))
            .await;
        assert_eq!(s, 201, "{b}");
        unloaded("dropped again").await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        // The expiry job may have expired it first: either way through the same settlement.
        let expired = sellable::domain::orders::expire_due(&app.db, 100)
            .await
            .unwrap();
        assert!(expired <= 1);
        let status: String =
            sqlx::query_scalar("SELECT status FROM reservations WHERE order_id = 'exp-1'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(status, "EXPIRED");
        late_load(&app, &g, slot, 2).await;
        until_slot(
            &g,
            merchant,
            slot,
            3,
            "the expired order's place is back on offer",
        )
        .await;
        app.assert_reconciled().await;
    }
);

pg!(
    a_waiting_customer_booked_while_a_booking_loads_the_slot_is_counted_in_redis,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "WAITED").await;
        let start = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("WAITED", start, start + chrono::Duration::hours(1), 1)
            .await;
        let (s, b) = api.book(slot, "First", "+86 138 0013 8001", None).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = api
            .post(
                &format!("/api/v1/slots/{slot}/waitlist"),
                json!({"name": "Waiting", "phone": "+86 139 0000 0001", "places": 1}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let merchant = slot_merchant(&app, slot).await;
        let g = gate(&app);
        // The key is dropped, then a place frees in SQL alone (a second place): the waiting
        // customer gets it, while a walk-in's booking that read one place left loads the slot.
        g.forget(Subject::Slot { merchant, slot }).await;
        assert_eq!(g.slot_read(merchant, slot).await.unwrap(), None);
        sqlx::query("UPDATE slots SET capacity = 2 WHERE id = $1")
            .bind(slot)
            .execute(&app.db.pool)
            .await
            .unwrap();
        // The job may fill it first; either way the one waiting customer is booked once.
        sellable::domain::slots::waitlist::fill(
            &app.db,
            sellable::domain::MerchantId(merchant),
            slot,
        )
        .await
        .unwrap();
        assert_eq!(app.slot_booked(slot).await, 2);
        late_load(&app, &g, slot, 1).await;
        until_slot(
            &g,
            merchant,
            slot,
            0,
            "the place the waiting customer took is taken in Redis too",
        )
        .await;
        app.assert_reconciled().await;
    }
);

pg!(
    slots_and_code_pools_in_redis_follow_bookings_and_sales,
    |app| {
        let api = app.acme_api().await;
        let slot_id = service_slot(&api, "CUT", 3).await;
        let tasks: Vec<_> = (0..30)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.post(
                        "/api/v1/bookings",
                        json!({"slot_id": slot_id, "name": format!("C{i}"), "phone": format!("+49 170 {i:07}")}),
                    )
                    .await
                })
            })
            .collect();
        let mut refs = Vec::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            if s == 201 {
                refs.push(b["reference"].as_str().unwrap().to_string());
            } else {
                assert_eq!(b["error"], "slot_full", "{b}");
            }
        }
        assert_eq!(refs.len(), 3);
        let merchant = slot_merchant(&app, slot_id).await;
        let g = gate(&app);
        assert_eq!(
            g.slot_read(merchant, slot_id).await.unwrap(),
            Some((0, "OPEN".into()))
        );
        api.post(&format!("/api/v1/bookings/{}/cancel", refs[0]), json!({}))
            .await;
        assert_eq!(
            g.slot_read(merchant, slot_id).await.unwrap(),
            Some((1, "OPEN".into()))
        );
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": slot_id, "name": "Late", "phone": "+49 170 9999999"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        // Closing the slot drops its key; the next booking is refused as closed, by SQL.
        api.post(
            &format!("/api/v1/slots/{slot_id}/close"),
            json!({"reason": "Staff on leave"}),
        )
        .await;
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": slot_id, "name": "After", "phone": "+49 170 8888888"}),
            )
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_closed")), "{b}");

        // Codes: the pool holds ids only, and a sale empties it exactly.
        api.product("voucher", "GIFT").await;
        let body = (0..12)
            .map(|i| format!("CODE-{i:04}-XYZ\n"))
            .collect::<String>();
        let part = reqwest::multipart::Part::bytes(body.into_bytes()).file_name("codes.txt");
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .part("file", part);
        let r = api
            .http
            .post(format!("{}/api/v1/code-batches", api.base))
            .bearer_auth(&api.key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        let gift = sku_id(&app, "GIFT").await;
        let mut ready = false;
        for _ in 0..300 {
            let (_, s) = api.get("/api/v1/skus/GIFT/codes/summary").await;
            if s["sellable"] == 12 {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            ready,
            "{:?}",
            api.get("/api/v1/skus/GIFT/codes/summary").await
        );
        let by = flash_sale(std::slice::from_ref(&api), "GIFT", 40, "g").await;
        assert_eq!(by.get(&201), Some(&12), "{by:?}");
        let metrics = crate::helpers::metrics_text(&app.base).await;
        let gate_lines: Vec<&str> = metrics
            .lines()
            .filter(|l| l.starts_with("sellable_gate"))
            .collect();
        let (pool, more) = g
            .code_pool(gift)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("pool not loaded; {gate_lines:#?}"));
        assert!(pool.is_empty() && !more, "pool emptied exactly: {pool:?}");
        api.post("/api/v1/reservations/g-0/release", json!({}))
            .await;
        let released: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM codes WHERE sku_id = $1 AND status = 'AVAILABLE'",
        )
        .bind(gift)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let pool = g.code_pool(gift).await.unwrap().unwrap().0;
        assert_eq!(pool.len() as i64, released, "a release puts the id back");
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);

both!(
    a_balance_changed_by_hand_freezes_the_sku_until_an_operator_corrects_it,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "SAFE").await;
        api.receive("SAFE", "main", 5).await;
        let sku = sku_id(&app, "SAFE").await;
        assert_eq!(reserve(&api, "ok-1", "SAFE", 1).await.0, 201);
        let clean = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(clean.broken.is_empty(), "{clean:?}");
        sqlx::query("UPDATE stock_balances SET total = total + 7 WHERE sku_id = $1")
            .bind(sku)
            .execute(&app.db.pool)
            .await
            .unwrap();
        // The CLI prints the finding and exits with status 2.
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sellable"));
        cmd.arg("reconcile")
            .env("DATABASE_URL", &app.database_url)
            .env("SELLABLE_CODE_KEY_FILE", app.dir.join("code-keys.json"))
            .env(
                "SELLABLE_CLOCK_OFFSET_MS",
                app.db.clock.offset_ms().to_string(),
            )
            .env("SELLABLE_LOG", "error");
        match &app.redis_url {
            Some(url) => cmd
                .env("REDIS_URL", url)
                .env("SELLABLE_REDIS_PREFIX", gate(&app).prefix()),
            None => cmd.env_remove("REDIS_URL"),
        };
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("[ledger_mismatch]"), "{text}");
        assert!(
            text.contains("expected total 5 locked 1 sold 0 frozen 0, found total 12"),
            "{text}"
        );
        let open = reconcile::findings(&app.db, Scope::All, "OPEN", 0)
            .await
            .unwrap();
        assert_eq!(
            open.len(),
            1,
            "one finding, however often it is seen: {open:?}"
        );
        let f = &open[0];
        assert_eq!(
            (f.kind.as_str(), f.action.as_str()),
            ("ledger_mismatch", "frozen")
        );
        // Frozen: nothing more is sold, and the refusal says why.
        if app.backend == Backend::Postgres {
            tokio::time::sleep(Duration::from_millis(2100)).await; // the SKU cache's lifetime
        }
        let (s, b) = reserve(&api, "ok-2", "SAFE", 1).await;
        assert_eq!((s, b["error"].as_str()), (422, Some("sku_frozen")), "{b}");
        assert!(
            b["message"]
                .as_str()
                .unwrap()
                .contains("frozen by reconciliation"),
            "{b}"
        );
        // Unfreezing before correcting is refused; restoring and then unfreezing works.
        let op = Actor::system("operator@test");
        let err = reconcile::unfreeze(&app.db, &op, Scope::All, f.id, "looked at it")
            .await
            .unwrap_err();
        assert!(err.message().contains("Still broken"), "{}", err.message());
        reconcile::correct_stock(
            &app.db,
            &op,
            Scope::All,
            f.id,
            Correction::Restore,
            "hand edit undone",
        )
        .await
        .unwrap();
        app.assert_ledger_replays().await;
        let done = reconcile::unfreeze(&app.db, &op, Scope::All, f.id, "restored")
            .await
            .unwrap();
        assert_eq!(done.status.as_str(), "RESOLVED");
        assert_eq!(balance(&app, sku).await, (5, 1, 0, 0));
        assert_eq!(reserve(&api, "ok-3", "SAFE", 1).await.0, 201);
        let after = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(after.broken.is_empty(), "{after:?}");
    }
);

both!(
    a_stock_correction_racing_confirms_loses_none_of_them,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "RACE").await;
        api.receive("RACE", "main", 40).await;
        let sku = sku_id(&app, "RACE").await;
        for i in 0..20 {
            assert_eq!(reserve(&api, &format!("race-{i}"), "RACE", 1).await.0, 201);
        }
        sqlx::query("UPDATE stock_balances SET total = total + 3 WHERE sku_id = $1")
            .bind(sku)
            .execute(&app.db.pool)
            .await
            .unwrap();
        reconcile::run(&app.db, "job", &system()).await.unwrap();
        let open = reconcile::findings(&app.db, Scope::All, "OPEN", 0)
            .await
            .unwrap();
        let f = open.first().expect("the hand edit is found").id;
        // Twenty confirms and the correction at once.
        let mut tasks = Vec::new();
        for i in 0..20 {
            let api = api.clone();
            tasks.push(tokio::spawn(async move {
                api.post(&format!("/api/v1/reservations/race-{i}/confirm"), json!({}))
                    .await
                    .0
            }));
        }
        let db = app.db.clone();
        let correction = tokio::spawn(async move {
            reconcile::correct_stock(
                &db,
                &Actor::system("operator@test"),
                Scope::All,
                f,
                Correction::Restore,
                "hand edit undone",
            )
            .await
        });
        for t in tasks {
            assert_eq!(t.await.unwrap(), 200);
        }
        correction.await.unwrap().unwrap();
        app.assert_ledger_replays().await;
        assert_eq!(
            balance(&app, sku).await,
            (40, 0, 20, 0),
            "every confirm counted once"
        );
    }
);
