//! The gate in front of goods: sold out from Redis, counters lost and reloaded, retries after a
//! flush, memory of a sold-out SKU, and reconciliation repairing Redis.

#[allow(unused_imports)]
use super::*;

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
        let batch = api.import_codes("LOSTC", "lostc.txt", &file, "valid").await;
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
