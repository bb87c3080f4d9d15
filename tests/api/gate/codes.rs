//! The gate in front of code pools: a pool lost and reloaded, holds through SQL, retries after a
//! flush.

#[allow(unused_imports)]
use super::*;

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
