use std::collections::HashMap;

use serde_json::json;

use crate::both;

both!(
    reserve_confirm_and_release_move_units_between_buckets,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 3}])).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["status"], "RESERVED");
        assert_eq!(
            b["items"],
            json!([{"sku": "TEA", "qty": 3, "warehouse": "main", "hold": "locked"}])
        );
        assert!(b["expires_at"].as_str().unwrap().ends_with("+00:00"));
        let st = api.stock("TEA").await;
        assert_eq!(
            (st["locked"].as_i64(), st["available"].as_i64()),
            (Some(3), Some(7))
        );
        let (s, b) = api
            .post("/api/v1/reservations/o-1/confirm", json!({}))
            .await;
        assert_eq!((s, b["status"].as_str().unwrap()), (200, "CONFIRMED"));
        let st = api.stock("TEA").await;
        assert_eq!(
            (
                st["locked"].as_i64(),
                st["sold"].as_i64(),
                st["available"].as_i64()
            ),
            (Some(0), Some(3), Some(7))
        );
        api.reserve("o-2", json!([{"sku": "TEA", "qty": 2}])).await;
        let (s, b) = api
            .post("/api/v1/reservations/o-2/release", json!({}))
            .await;
        assert_eq!((s, b["status"].as_str().unwrap()), (200, "RELEASED"));
        assert_eq!(api.stock("TEA").await["available"], 7);
        let (s, b) = api.get("/api/v1/reservations/o-2").await;
        assert_eq!((s, b["status"].as_str().unwrap()), (200, "RELEASED"));
        // Repeats answer the same and move nothing twice.
        assert_eq!(
            api.post("/api/v1/reservations/o-1/confirm", json!({}))
                .await
                .1["status"],
            "CONFIRMED"
        );
        assert_eq!(
            api.post("/api/v1/reservations/o-2/release", json!({}))
                .await
                .1["status"],
            "RELEASED"
        );
        let (s, again) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 3}])).await;
        assert_eq!((s, again["status"].as_str().unwrap()), (201, "CONFIRMED"));
        // A released order posted again holds nothing and says so.
        let (s, b) = api.reserve("o-2", json!([{"sku": "TEA", "qty": 2}])).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("reservation_released")),
            "{b}"
        );
        assert_eq!(api.stock("TEA").await["available"], 7);
        // Refusals with stable codes.
        let (s, b) = api
            .post("/api/v1/reservations/o-2/confirm", json!({}))
            .await;
        assert_eq!(
            (s, b["error"].as_str().unwrap()),
            (409, "reservation_released")
        );
        let (s, b) = api
            .post("/api/v1/reservations/o-1/release", json!({}))
            .await;
        assert_eq!(
            (s, b["error"].as_str().unwrap()),
            (409, "reservation_confirmed")
        );
        let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 4}])).await;
        assert_eq!((s, b["error"].as_str().unwrap()), (409, "order_conflict"));
        let (s, b) = api
            .post("/api/v1/reservations/nope/confirm", json!({}))
            .await;
        assert_eq!((s, b["error"].as_str().unwrap()), (404, "not_found"));
        assert_eq!(api.get("/api/v1/reservations/nope").await.0, 404);
        let st = api.stock("TEA").await;
        assert_eq!(
            (
                st["locked"].as_i64(),
                st["sold"].as_i64(),
                st["available"].as_i64()
            ),
            (Some(0), Some(3), Some(7))
        );
        app.assert_ledger_replays().await;
    }
);

both!(
    short_stock_holds_nothing_and_says_what_is_available,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.product("goods", "CUP").await;
        api.receive("TEA", "main", 5).await;
        api.receive("CUP", "main", 1).await;
        let (s, b) = api
            .reserve(
                "bundle",
                json!([{"sku": "TEA", "qty": 2}, {"sku": "CUP", "qty": 2}]),
            )
            .await;
        assert_eq!(s, 409);
        assert_eq!(b["error"], "insufficient_stock");
        assert_eq!(b["sku"], "CUP");
        assert_eq!(b["available"], 1);
        assert_eq!(
            api.stock("TEA").await["locked"],
            0,
            "all or nothing: the TEA line was not held"
        );
        assert_eq!(app.count("reservations").await, 0);
        // The same order id may try again once stock arrives.
        api.receive("CUP", "main", 1).await;
        let (s, _) = api
            .reserve(
                "bundle",
                json!([{"sku": "TEA", "qty": 2}, {"sku": "CUP", "qty": 2}]),
            )
            .await;
        assert_eq!(s, 201);
        app.assert_ledger_replays().await;
    }
);

both!(
    without_a_warehouse_the_highest_priority_one_that_covers_the_line_is_used,
    |app| {
        let api = app.acme_api().await;
        app.warehouse("acme", "east", 20).await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        api.receive("TEA", "east", 3).await;
        let (_, b) = api.reserve("a", json!([{"sku": "TEA", "qty": 2}])).await;
        assert_eq!(
            b["items"][0]["warehouse"], "east",
            "east has the higher priority"
        );
        let (_, b) = api.reserve("b", json!([{"sku": "TEA", "qty": 5}])).await;
        assert_eq!(
            b["items"][0]["warehouse"], "main",
            "east cannot cover 5 and a line is never split"
        );
        let (_, b) = api
            .reserve("c", json!([{"sku": "TEA", "qty": 1, "warehouse": "main"}]))
            .await;
        assert_eq!(b["items"][0]["warehouse"], "main");
        let (s, b) = api.reserve("d", json!([{"sku": "TEA", "qty": 6}])).await;
        assert_eq!(
            (s, b["available"].as_i64()),
            (409, Some(4)),
            "the best single warehouse has 4"
        );
    }
);

both!(
    sixty_four_buyers_racing_for_ten_units_get_exactly_ten,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 10).await;
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.reserve(&format!("race-{i}"), json!([{"sku": "HOT", "qty": 1}]))
                        .await
                })
            })
            .collect();
        let mut by_status: HashMap<u16, usize> = HashMap::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            if s == 409 {
                assert_eq!(b["error"], "insufficient_stock");
            }
            *by_status.entry(s).or_default() += 1;
        }
        assert_eq!(by_status.get(&201), Some(&10), "{by_status:?}");
        assert_eq!(by_status.get(&409), Some(&54), "{by_status:?}");
        let st = api.stock("HOT").await;
        assert_eq!(
            (st["locked"].as_i64(), st["available"].as_i64()),
            (Some(10), Some(0))
        );
        let held: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM stock_reservations WHERE status = 'RESERVED'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(held, 10);
        // The audit and line rows are written before the balance's guard decides: a buyer it
        // refuses must leave neither behind.
        let audited: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM audit_log WHERE action = 'reservation.reserve'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(audited, 10, "one audit row per reservation held");
        assert_eq!(app.count("stock_reservations").await, 10);
        app.assert_ledger_replays().await;
    }
);

both!(
    the_last_units_across_two_warehouses_go_to_exactly_two_buyers,
    |app| {
        let api = app.acme_api().await;
        app.warehouse("acme", "east", 5).await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 1).await;
        api.receive("HOT", "east", 1).await;
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.reserve(&format!("last-{i}"), json!([{"sku": "HOT", "qty": 1}]))
                        .await
                })
            })
            .collect();
        let mut won = Vec::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            if s == 201 {
                won.push(b["items"][0]["warehouse"].as_str().unwrap().to_string());
            } else {
                assert_eq!(s, 409, "{b}");
            }
        }
        won.sort();
        assert_eq!(won, vec!["east", "main"]);
        assert_eq!(api.stock("HOT").await["available"], 0);
        app.assert_ledger_replays().await;
    }
);

both!(
    the_same_order_sent_twenty_times_at_once_is_reserved_once,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 100).await;
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.reserve("dup-order", json!([{"sku": "TEA", "qty": 4}]))
                        .await
                })
            })
            .collect();
        let mut answers = Vec::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            assert_eq!(s, 201, "{b}");
            answers.push(b);
        }
        assert!(
            answers.windows(2).all(|w| w[0] == w[1]),
            "every retry gets the same answer"
        );
        assert_eq!(api.stock("TEA").await["locked"], 4);
        assert_eq!(app.count("reservations").await, 1);
        app.assert_ledger_replays().await;
    }
);

both!(
    confirm_and_release_racing_on_one_order_have_exactly_one_winner,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 100).await;
        for i in 0..8 {
            let order = format!("cr-{i}");
            api.reserve(&order, json!([{"sku": "TEA", "qty": 1}])).await;
            let (a, b) = (api.clone(), api.clone());
            let (o1, o2) = (order.clone(), order.clone());
            let confirm = tokio::spawn(async move {
                a.post(&format!("/api/v1/reservations/{o1}/confirm"), json!({}))
                    .await
            });
            let release = tokio::spawn(async move {
                b.post(&format!("/api/v1/reservations/{o2}/release"), json!({}))
                    .await
            });
            let (c, r) = (confirm.await.unwrap(), release.await.unwrap());
            match (c.0, r.0) {
                (200, 409) => assert_eq!(r.1["error"], "reservation_confirmed"),
                (409, 200) => assert_eq!(c.1["error"], "reservation_released"),
                other => panic!("both or neither won: {other:?} {c:?} {r:?}"),
            }
        }
        let st = api.stock("TEA").await;
        assert_eq!(st["locked"], 0);
        assert_eq!(
            st["sold"].as_i64().unwrap() + st["available"].as_i64().unwrap(),
            100
        );
        app.assert_ledger_replays().await;
    }
);

both!(
    expired_holds_are_released_once_and_posting_them_again_holds_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let (s, _) = api
            .post(
                "/api/v1/reservations",
                json!({"order_id": "late", "items": [{"sku": "TEA", "qty": 4}], "ttl_seconds": 1}),
            )
            .await;
        assert_eq!(s, 201);
        api.post(
            "/api/v1/reservations",
            json!({"order_id": "swept", "items": [{"sku": "TEA", "qty": 2}], "ttl_seconds": 1}),
        )
        .await;
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        // A repeat checks expiry itself, whether or not the job has run.
        let (s, b) = api
            .post(
                "/api/v1/reservations",
                json!({"order_id": "late", "items": [{"sku": "TEA", "qty": 4}], "ttl_seconds": 1}),
            )
            .await;
        assert_eq!(
            (
                s,
                b["error"].as_str().unwrap(),
                b["status"].as_str().unwrap()
            ),
            (409, "reservation_expired", "EXPIRED")
        );
        let first = sellable::domain::orders::expire_due(&app.db, 100)
            .await
            .unwrap();
        let second = sellable::domain::orders::expire_due(&app.db, 100)
            .await
            .unwrap();
        assert!(first <= 1, "late was already expired by the confirm");
        assert_eq!(
            second, 0,
            "running the job twice changes nothing the second time"
        );
        assert_eq!(
            api.get("/api/v1/reservations/swept").await.1["status"],
            "EXPIRED"
        );
        let st = api.stock("TEA").await;
        assert_eq!(
            (st["locked"].as_i64(), st["available"].as_i64()),
            (Some(0), Some(10))
        );
        let expires: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM stock_ledger WHERE kind = 'EXPIRE'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(expires, 2);
        // Posting an expired order again is refused, never 201: a caller that reads only the
        // status code must not believe it holds goods. Nothing is held again.
        for order in ["swept", "late"] {
            let qty = if order == "late" { 4 } else { 2 };
            let (s, b) = api
                .post(
                    "/api/v1/reservations",
                    json!({"order_id": order, "items": [{"sku": "TEA", "qty": qty}], "ttl_seconds": 1}),
                )
                .await;
            assert_eq!(
                (s, b["error"].as_str()),
                (409, Some("reservation_expired")),
                "{order}: {b}"
            );
            assert_eq!(b["status"], "EXPIRED", "{b}");
        }
        assert_eq!(api.stock("TEA").await["locked"], 0);
        // A release after expiry marks the order released (issue 52, finding 9) and moves no
        // unit: the expiry already gave them back.
        let (s, b) = api
            .post("/api/v1/reservations/swept/release", json!({}))
            .await;
        assert_eq!((s, b["status"].as_str().unwrap()), (200, "RELEASED"));
        assert_eq!(api.stock("TEA").await["available"], 10);
        app.assert_ledger_replays().await;
    }
);

both!(the_background_job_expires_holds_by_itself, |app| {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 3).await;
    api.post(
        "/api/v1/reservations",
        json!({"order_id": "bg", "items": [{"sku": "TEA", "qty": 3}], "ttl_seconds": 1}),
    )
    .await;
    // The test app runs the job every second.
    let mut status = String::new();
    for _ in 0..50 {
        status = api.get("/api/v1/reservations/bg").await.1["status"]
            .as_str()
            .unwrap()
            .to_string();
        if status == "EXPIRED" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status, "EXPIRED");
    assert_eq!(api.stock("TEA").await["available"], 3);
});

both!(
    reservation_bad_input_gets_stable_codes_and_holds_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.product("voucher", "GIFT").await;
        api.product("service", "CUT").await;
        api.receive("TEA", "main", 10).await;
        let long_order = "o".repeat(129);
        let cases = [
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 0}]}),
                "invalid_qty",
                "items[0].qty",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": -2}]}),
                "invalid_qty",
                "items[0].qty",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 1_000_000_001i64}]}),
                "invalid_qty",
                "items[0].qty",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 1.5}]}),
                "invalid_qty",
                "items[0].qty",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "NOPE", "qty": 1}]}),
                "unknown_sku",
                "items[0].sku",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 1, "warehouse": "mars"}]}),
                "unknown_warehouse",
                "items[0].warehouse",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "CUT", "qty": 1}]}),
                "wrong_sku_kind",
                "items[0].sku",
            ),
            // Vouchers are reserved as codes (see codes.rs), but a warehouse means nothing to them.
            (
                json!({"order_id": "x", "items": [{"sku": "GIFT", "qty": 1, "warehouse": "main"}]}),
                "warehouse_not_applicable",
                "items[0].warehouse",
            ),
            (
                json!({"order_id": "", "items": [{"sku": "TEA", "qty": 1}]}),
                "invalid_order_id",
                "order_id",
            ),
            (
                json!({"order_id": long_order, "items": [{"sku": "TEA", "qty": 1}]}),
                "invalid_order_id",
                "order_id",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 1}], "ttl_seconds": 0}),
                "invalid_ttl",
                "ttl_seconds",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 1}], "ttl_seconds": 86401}),
                "invalid_ttl",
                "ttl_seconds",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 1}], "ttl_seconds": "soon"}),
                "invalid_ttl",
                "ttl_seconds",
            ),
            (
                json!({"order_id": "x", "items": [{"sku": "TEA", "qty": 1}, {"sku": "TEA", "qty": 2}]}),
                "duplicate_sku",
                "items[1].sku",
            ),
            (json!({"order_id": "x", "items": []}), "required", "items"),
        ];
        for (body, code, field) in cases {
            let (s, b) = api.post("/api/v1/reservations", body.clone()).await;
            assert_eq!(s, 422, "{body} → {b}");
            assert!(
                b["fields"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["code"] == code && f["field"] == field),
                "{body} → {b}"
            );
        }
        let (_, b) = api
            .post(
                "/api/v1/reservations",
                json!({"order_id": "x", "items": [{"sku": "CUT", "qty": 1}]}),
            )
            .await;
        assert!(
            b["message"].as_str().unwrap().contains("CUT is a service"),
            "{b}"
        );
        let r = reqwest::Client::new()
            .post(app.url("/api/v1/reservations"))
            .bearer_auth(&api.key)
            .header("content-type", "application/json")
            .body("[1,")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        assert_eq!(app.count("reservations").await, 0);
        assert_eq!(api.stock("TEA").await["locked"], 0);
    }
);

both!(
    returns_restock_or_record_damage_once_and_never_more_than_bought,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        api.reserve("paid", json!([{"sku": "TEA", "qty": 3}])).await;
        api.post("/api/v1/reservations/paid/confirm", json!({}))
            .await;
        let ret = |id: &str, qty: i64, condition: &str| json!({"return_id": id, "order_id": "paid", "sku": "TEA", "qty": qty, "condition": condition});
        let (s, b) = api
            .post("/api/v1/returns", ret("r-1", 1, "RESELLABLE"))
            .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["warehouse"], "main");
        let st = api.stock("TEA").await;
        assert_eq!(
            (
                st["total"].as_i64(),
                st["sold"].as_i64(),
                st["available"].as_i64()
            ),
            (Some(11), Some(3), Some(8)),
            "sold stays, so sales figures stay true"
        );
        let (s, _) = api.post("/api/v1/returns", ret("r-2", 1, "DAMAGED")).await;
        assert_eq!(s, 201);
        assert_eq!(
            api.stock("TEA").await["available"],
            8,
            "damaged goods make nothing sellable"
        );
        // Idempotent by return id; the same id with other details is a conflict.
        assert_eq!(
            api.post("/api/v1/returns", ret("r-1", 1, "RESELLABLE"))
                .await
                .0,
            201
        );
        assert_eq!(api.stock("TEA").await["total"], 11);
        let (s, b) = api.post("/api/v1/returns", ret("r-1", 1, "DAMAGED")).await;
        assert_eq!((s, b["error"].as_str().unwrap()), (409, "return_conflict"));
        let (s, b) = api
            .post("/api/v1/returns", ret("r-3", 2, "RESELLABLE"))
            .await;
        assert_eq!(
            (s, b["error"].as_str().unwrap(), b["returnable"].as_i64()),
            (409, "return_exceeds_order", Some(1))
        );
        api.reserve("unpaid", json!([{"sku": "TEA", "qty": 1}]))
            .await;
        let (s, b) = api.post("/api/v1/returns", json!({"return_id": "r-4", "order_id": "unpaid", "sku": "TEA", "qty": 1, "condition": "RESELLABLE"})).await;
        assert_eq!(
            (s, b["error"].as_str().unwrap()),
            (409, "order_not_confirmed")
        );
        let (s, _) = api.post("/api/v1/returns", json!({"return_id": "r-5", "order_id": "ghost", "sku": "TEA", "qty": 1, "condition": "RESELLABLE"})).await;
        assert_eq!(s, 404);
        let (s, b) = api.post("/api/v1/returns", json!({"return_id": "r-6", "order_id": "paid", "sku": "TEA", "qty": 1, "condition": "LOST"})).await;
        assert_eq!((s, b["error"].as_str().unwrap()), (422, "invalid_choice"));
        // Concurrent returns of different ids never exceed what was bought.
        let tasks: Vec<_> = (0..10).map(|i| { let api = api.clone(); tokio::spawn(async move { api.post("/api/v1/returns", json!({"return_id": format!("c-{i}"), "order_id": "paid", "sku": "TEA", "qty": 1, "condition": "DAMAGED"})).await.0 }) }).collect();
        let mut ok = 0;
        for t in tasks {
            if t.await.unwrap() == 201 {
                ok += 1;
            }
        }
        assert_eq!(ok, 1, "only one unit was left to return");
        app.assert_ledger_replays().await;
    }
);

both!(
    a_balance_changed_behind_the_ledger_is_detected_by_replay,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        app.assert_ledger_replays().await;
        sqlx::query("UPDATE stock_balances SET total = total + 1")
            .execute(&app.db.pool)
            .await
            .unwrap();
        let bad = sellable::domain::stock::ledger::replay_mismatches(
            &app.db,
            sellable::domain::Scope::All,
        )
        .await
        .unwrap();
        assert_eq!(bad.len(), 1);
        assert_eq!((bad[0].balance.total, bad[0].ledger.total), (6, 5));
    }
);

both!(
    a_release_after_the_hold_expired_marks_the_order_released_so_a_later_payment_hands_out_no_code,
    |app| {
        let api = app.acme_api().await;
        api.product("voucher", "GIFT").await;
        let (s, up) = api
            .upload("GIFT", "c.txt", b"GIFT-0001\nGIFT-0002\n".to_vec(), "valid")
            .await;
        assert_eq!(s, 202, "{up}");
        for _ in 0..200 {
            if api
                .get(&format!("/api/v1/code-batches/{}", up["batch_id"]))
                .await
                .1["status"]
                != "CREATING"
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let (s, b) = api
            .post(
                "/api/v1/reservations",
                json!({"order_id": "gone", "items": [{"sku": "GIFT", "qty": 1}], "ttl_seconds": 1}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        sellable::domain::orders::expire_due(&app.db, 100)
            .await
            .unwrap();
        assert_eq!(
            api.get("/api/v1/reservations/gone").await.1["status"],
            "EXPIRED"
        );
        // The order system cancels the order after the hold ran out.
        let (s, b) = api
            .post(
                "/api/v1/reservations/gone/release",
                json!({"reason": "customer cancelled"}),
            )
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("RELEASED")), "{b}");
        let released: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE type = 'reservation.released'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(released, 1, "the release is on the record");
        // A repeat changes nothing and records nothing more.
        let (s, b) = api
            .post("/api/v1/reservations/gone/release", json!({}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("RELEASED")), "{b}");
        // A payment that still arrives is refused and kept as an exception; no code is sold.
        let (s, b) = api
            .post(
                "/api/v1/reservations/gone/confirm",
                json!({"payment_ref": "PAY-LATE-1"}),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("reservation_released")),
            "{b}"
        );
        assert!(b["exception_id"].as_i64().is_some(), "{b}");
        let sold: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM codes WHERE status = 'SOLD'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(sold, 0);
        let events: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE type = 'reservation.released'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(events, 1);
    }
);
