use serde_json::json;

use crate::both;
use crate::helpers::html;

both!(
    receive_write_off_freeze_unfreeze_transfer_and_count_move_the_right_buckets,
    |app| {
        let api = app.acme_api().await;
        app.warehouse("acme", "east", 5).await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 100).await;
        let (s, b) = api.adjust("TEA", "main", "WRITE_OFF", 3).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(
            (b["total"].as_i64(), b["available"].as_i64()),
            (Some(97), Some(97))
        );
        let (_, b) = api.adjust("TEA", "main", "FREEZE", 7).await;
        assert_eq!(
            (b["frozen"].as_i64(), b["available"].as_i64()),
            (Some(7), Some(90))
        );
        let (_, b) = api.adjust("TEA", "main", "UNFREEZE", 2).await;
        assert_eq!(
            (b["frozen"].as_i64(), b["available"].as_i64()),
            (Some(5), Some(92))
        );
        let (s, b) = api
        .post("/api/v1/stock/adjustments", json!({"sku": "TEA", "warehouse": "main", "to_warehouse": "east", "kind": "TRANSFER", "qty": 40, "reason": "rebalance", "idempotency_key": "t-1"}))
        .await;
        assert_eq!(s, 201, "{b}");
        let wh = |b: &serde_json::Value, w: &str| {
            b["warehouses"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["warehouse"] == w)
                .cloned()
                .unwrap()
        };
        assert_eq!(wh(&b, "main")["total"], 57);
        assert_eq!(wh(&b, "east")["total"], 40);
        assert_eq!(b["total"], 97, "a transfer moves, it does not create");
        // Count: 50 counted on the shelf in main (57 on hand) books -7.
        let (s, b) = api.adjust("TEA", "main", "COUNT", 50).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(wh(&b, "main")["total"], 50);
        let kinds: Vec<String> = sqlx::query_scalar("SELECT kind FROM stock_ledger ORDER BY id")
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(
            kinds,
            [
                "RECEIVE",
                "WRITE_OFF",
                "FREEZE",
                "UNFREEZE",
                "TRANSFER",
                "TRANSFER",
                "COUNT"
            ]
        );
        let count_qty: i64 =
            sqlx::query_scalar("SELECT qty FROM stock_ledger WHERE kind = 'COUNT'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(count_qty, -7);
        app.assert_ledger_replays().await;
    }
);

both!(
    adjustment_that_would_go_negative_is_refused_with_what_is_available,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        api.adjust("TEA", "main", "FREEZE", 2).await;
        let ledger_rows = app.count("stock_ledger").await;
        for (kind, qty, code, message) in [
        ("WRITE_OFF", 4, "insufficient_stock", "Cannot write off 4: only 3 available."),
        ("FREEZE", 4, "insufficient_stock", "Cannot freeze 4: only 3 available."),
        ("UNFREEZE", 3, "insufficient_frozen", "Cannot release 3: only 2 held back."),
        ("COUNT", 1, "count_below_held", "Counted 1, but 0 are held by unpaid orders and 2 are frozen: release or unfreeze those first."),
    ] {
        let (s, b) = api.adjust("TEA", "main", kind, qty).await;
        assert_eq!(s, 409, "{kind}: {b}");
        assert_eq!(b["error"], code);
        assert_eq!(b["message"], message);
    }
        assert_eq!(
            app.count("stock_ledger").await,
            ledger_rows,
            "nothing written"
        );
        let b = api.stock("TEA").await;
        assert_eq!(
            (
                b["total"].as_i64(),
                b["frozen"].as_i64(),
                b["available"].as_i64()
            ),
            (Some(5), Some(2), Some(3))
        );
    }
);

both!(
    repeated_idempotency_key_returns_the_first_answer_and_changes_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        let body = json!({"sku": "TEA", "warehouse": "main", "kind": "RECEIVE", "qty": 10, "reason": "delivery 1", "idempotency_key": "rcv-1"});
        let first = api.post("/api/v1/stock/adjustments", body.clone()).await;
        api.receive("TEA", "main", 5).await;
        let again = api.post("/api/v1/stock/adjustments", body.clone()).await;
        assert_eq!(
            first, again,
            "the first answer, even though stock moved since"
        );
        assert_eq!(api.stock("TEA").await["total"], 15);
        let mut other = body.clone();
        other["qty"] = json!(11);
        let (s, b) = api.post("/api/v1/stock/adjustments", other).await;
        assert_eq!(
            (s, b["error"].as_str().unwrap()),
            (409, "idempotency_conflict")
        );
        // Many concurrent retries of one key: one booking.
        let body = json!({"sku": "TEA", "warehouse": "main", "kind": "RECEIVE", "qty": 1, "reason": "retry storm", "idempotency_key": "storm"});
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let api = api.clone();
                let body = body.clone();
                tokio::spawn(async move { api.post("/api/v1/stock/adjustments", body).await })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap().0, 201);
        }
        assert_eq!(api.stock("TEA").await["total"], 16);
        app.assert_ledger_replays().await;
    }
);

both!(
    stock_endpoints_refuse_bad_input_with_stable_codes_and_write_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.product("voucher", "GIFT").await;
        api.product("service", "CUT").await;
        let base = json!({"sku": "TEA", "warehouse": "main", "kind": "RECEIVE", "qty": 1, "reason": "x", "idempotency_key": "k"});
        let with = |k: &str, v: serde_json::Value| {
            let mut b = base.clone();
            b[k] = v;
            b
        };
        for (body, code, field) in [
            (with("qty", json!(0)), "invalid_qty", "qty"),
            (with("qty", json!(-1)), "invalid_qty", "qty"),
            (with("qty", json!(1_000_000_001)), "invalid_qty", "qty"),
            (with("qty", json!(1.5)), "invalid_qty", "qty"),
            (with("qty", json!("3")), "invalid_qty", "qty"),
            (with("sku", json!("NOPE")), "unknown_sku", "sku"),
            (with("sku", json!("GIFT")), "wrong_sku_kind", "sku"),
            (with("sku", json!("CUT")), "wrong_sku_kind", "sku"),
            (
                with("warehouse", json!("nowhere")),
                "unknown_warehouse",
                "warehouse",
            ),
            (with("kind", json!("STEAL")), "invalid_choice", "kind"),
            (with("reason", json!("")), "required", "reason"),
            (
                with("idempotency_key", json!("")),
                "required",
                "idempotency_key",
            ),
            (with("kind", json!("TRANSFER")), "required", "to_warehouse"),
        ] {
            let (s, b) = api.post("/api/v1/stock/adjustments", body.clone()).await;
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
            .post("/api/v1/stock/adjustments", with("sku", json!("GIFT")))
            .await;
        assert!(
            b["message"].as_str().unwrap().contains("GIFT is a voucher"),
            "{b}"
        );
        assert_eq!(app.count("stock_ledger").await, 0);
        assert_eq!(app.count("stock_balances").await, 0);
        let (s, b) = api.get("/api/v1/skus/NOPE/stock").await;
        assert_eq!((s, b["error"].as_str().unwrap()), (404, "not_found"));
        let (s, _) = api.get("/api/v1/skus/GIFT/stock").await;
        assert_eq!(s, 422);
    }
);

both!(
    merchant_admin_adjusts_stock_in_place_and_finds_the_ledger_row,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'TEA'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let page = html(
            client
                .get(app.url(&format!("/admin/skus/{sku_id}/stock")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(page
            .text(".empty")
            .starts_with("No stock in any warehouse yet."));
        let path = format!("/admin/skus/{sku_id}/stock/adjustments");
        let r = client
            .post(app.url(&path))
            .header("HX-Request", "true")
            .form(&[
                ("kind", "RECEIVE"),
                ("warehouse", "main"),
                ("qty", "12"),
                ("reason", "Delivery #7"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body = r.text().await.unwrap();
        let frag = crate::helpers::Html::parse(&body);
        assert_eq!(frag.text("#available"), "12");
        assert_eq!(
            frag.text("#stock-panel .flash"),
            sellable::messages::stock_adjusted("RECEIVE", 12, "Main", "", "Delivery #7"),
            "the flash says what was done, with the warehouse's name and the note"
        );
        assert_eq!(
            frag.attr("#ledger", "hx-swap-oob").as_deref(),
            Some("true"),
            "the ledger refreshes out of band"
        );
        assert_eq!(frag.texts("#ledger td.reason"), vec!["Delivery #7"]);
        // A refusal re-renders the panel with the reason, 422, nothing booked.
        let r = client
            .post(app.url(&path))
            .header("HX-Request", "true")
            .form(&[
                ("kind", "WRITE_OFF"),
                ("warehouse", "main"),
                ("qty", "20"),
                ("reason", "broken"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r).await.text(".field-error[data-field=qty]"),
            "Cannot write off 20: only 12 available.",
            "said at the quantity"
        );
        let r = client
            .post(app.url(&path))
            .form(&[
                ("kind", "RECEIVE"),
                ("warehouse", "main"),
                ("qty", "x"),
                ("reason", ""),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(".field-error[data-field=qty]"),
            sellable::messages::bad_qty(1_000_000_000)
        );
        // COUNT shows the difference first, and books only on confirmation.
        let r = client
            .post(app.url(&path))
            .form(&[
                ("kind", "COUNT"),
                ("warehouse", "main"),
                ("qty", "10"),
                ("reason", "monthly count"),
            ])
            .send()
            .await
            .unwrap();
        let page = html(r).await;
        assert!(
            page.text(".count-preview")
                .contains("on hand now 12, counted 10."),
            "{}",
            page.text(".count-preview")
        );
        assert_eq!(
            page.attr("input[name=expected_on_hand]", "value")
                .as_deref(),
            Some("12")
        );
        assert_eq!(
            app.count("stock_ledger").await,
            1,
            "nothing booked before confirming"
        );
        let confirm = [
            ("kind", "COUNT"),
            ("warehouse", "main"),
            ("qty", "10"),
            ("reason", "monthly count"),
            ("confirm_count", "1"),
            ("preview_of", "main:10"),
            ("expected_on_hand", "12"),
        ];
        let r = client
            .post(app.url(&path))
            .form(&confirm)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = html(
            client
                .get(app.url(&format!("/admin/skus/{sku_id}/stock")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.text("#available"), "10");
        assert_eq!(
            page.attrs("#ledger td.kind", "data-kind"),
            vec!["COUNT", "RECEIVE"]
        );
        // The same confirmation again is stale: on hand is 10 now, not 12.
        let r = client
            .post(app.url(&path))
            .form(&confirm)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert!(html(r)
            .await
            .text(".form-error")
            .starts_with("Stock moved since you counted"));
        // Filters and CSV.
        let page = html(
            client
                .get(app.url(&format!("/admin/skus/{sku_id}/stock?kind=RECEIVE")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.attrs("#ledger td.kind", "data-kind"), vec!["RECEIVE"]);
        let csv = client
            .get(app.url(&format!("/admin/skus/{sku_id}/ledger.csv")))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("time,sku,warehouse,kind,qty"));
        assert!(
            lines[1].contains(",TEA,main,RECEIVE,12,") && lines[1].contains("Delivery #7"),
            "{}",
            lines[1]
        );
        // Negative numbers stay numbers (the count took 2 off): the column sums to what is on hand.
        let mut rd = csv::Reader::from_reader(csv.as_bytes());
        let col = rd
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "total_change")
            .unwrap();
        let changes: Vec<i64> = rd
            .records()
            .map(|r| r.unwrap()[col].parse::<i64>().expect("a number, not text"))
            .collect();
        assert!(changes.contains(&-2), "{changes:?}");
        assert_eq!(changes.iter().sum::<i64>(), 10);
        app.assert_ledger_replays().await;
    }
);

both!(store_staff_see_stock_but_cannot_adjust_it, |app| {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 3).await;
    let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'TEA'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let staff = app.signed_in("store_staff", Some("acme")).await;
    let page = html(
        staff
            .get(app.url(&format!("/admin/skus/{sku_id}/stock")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(page.text("#available"), "3");
    assert_eq!(page.count("form.adjust"), 0);
    let r = staff
        .post(app.url(&format!("/admin/skus/{sku_id}/stock/adjustments")))
        .form(&[
            ("kind", "RECEIVE"),
            ("warehouse", "main"),
            ("qty", "1"),
            ("reason", "x"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    app.merchant("globex").await;
    let other = app.signed_in("merchant_admin", Some("globex")).await;
    assert_eq!(
        other
            .get(app.url(&format!("/admin/skus/{sku_id}/stock")))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
});
