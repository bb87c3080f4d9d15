//! A SKU's selling policy: its price (0 is free, never set is not on sale), when stock is
//! deducted (`on_order` or `on_payment`) and whether it is counted at all (`tracked` or
//! `unlimited`). Every case ends with the ledger replaying and reconciliation clean.

use serde_json::{json, Value};

use crate::both;
use crate::helpers::{Api, TestApp};

async fn identities_hold(app: &TestApp) {
    app.assert_ledger_replays().await;
    let report =
        sellable::domain::reconcile::run(&app.db, "job", &sellable::domain::Actor::system("test"))
            .await
            .unwrap();
    assert!(report.broken.is_empty(), "{:?}", report.broken);
}

async fn patch(api: &Api, sku: &str, body: Value) -> (u16, Value) {
    api.call(
        reqwest::Method::PATCH,
        &format!("/api/v1/skus/{sku}"),
        Some(body),
    )
    .await
}

/// (total, locked, sold, available) of a SKU over its warehouses.
async fn counts(api: &Api, sku: &str) -> (i64, i64, i64, i64) {
    let st = api.stock(sku).await;
    let n = |k: &str| st[k].as_i64().unwrap_or(-1);
    (n("total"), n("locked"), n("sold"), n("available"))
}

fn codes_of(b: &Value) -> Vec<String> {
    crate::helpers::field_codes(b)
}

both!(
    a_sku_never_priced_is_not_on_sale_and_a_price_of_zero_is_a_free_item_that_sells,
    |app| {
        let api = app.acme_api().await;
        let (s, b) = api
            .post(
                "/api/v1/products",
                json!({"name": "Sample", "kind": "goods", "status": "ONLINE",
                       "skus": [{"code": "SAMPLE", "name": "Sample"}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(
            (
                b["skus"][0]["price_set"].as_bool(),
                b["skus"][0]["price"].as_i64()
            ),
            (Some(false), Some(0))
        );
        api.receive("SAMPLE", "main", 10).await;
        let (s, b) = api
            .reserve("o-1", json!([{"sku": "SAMPLE", "qty": 1}]))
            .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(codes_of(&b), ["items[0].sku:not_on_sale"]);
        let (_, v) = api.get("/api/v1/skus/SAMPLE/sellable").await;
        assert_eq!(v["reasons"][0]["code"], "no_price", "{v}");

        // Priced at 0 on purpose: free, and it sells.
        let (s, b) = patch(&api, "SAMPLE", json!({"price": 0})).await;
        assert_eq!(
            (s, b["price_set"].as_bool(), b["price"].as_i64()),
            (200, Some(true), Some(0)),
            "{b}"
        );
        let (_, v) = api.get("/api/v1/skus/SAMPLE/sellable").await;
        assert_eq!(
            (v["sellable"].as_bool(), v["quantity"].as_i64()),
            (Some(true), Some(10)),
            "{v}"
        );
        let (s, b) = api
            .reserve("o-1", json!([{"sku": "SAMPLE", "qty": 1}]))
            .await;
        assert_eq!(s, 201, "{b}");
        // A bad price is refused and changes nothing.
        let (s, b) = patch(&api, "SAMPLE", json!({"price": -1, "max_per_order": 3})).await;
        assert_eq!(
            (s, codes_of(&b)),
            (422, vec!["price:invalid_price".to_string()])
        );
        let (_, sku) = api.get("/api/v1/skus/SAMPLE").await;
        assert_eq!(
            (sku["price"].as_i64(), sku["max_per_order"].as_i64()),
            (Some(0), None)
        );
        identities_hold(&app).await;
    }
);

both!(
    a_sku_deducted_on_payment_locks_nothing_when_ordered_and_sells_only_what_payment_finds,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        let (s, b) = patch(&api, "TEA", json!({"deduct": "on_payment"})).await;
        assert_eq!((s, b["deduct"].as_str()), (200, Some("on_payment")), "{b}");
        // The order is checked against what is there, and holds nothing.
        let (s, b) = api.reserve("big", json!([{"sku": "TEA", "qty": 6}])).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        for order in ["a", "b"] {
            let (s, b) = api.reserve(order, json!([{"sku": "TEA", "qty": 3}])).await;
            assert_eq!(s, 201, "{b}");
            assert_eq!(b["items"][0]["hold"], "checked", "{b}");
        }
        assert_eq!(counts(&api, "TEA").await, (5, 0, 0, 5), "nothing locked");
        // The first payment sells; the second finds 2 of 3 and is refused with an exception.
        let (s, b) = api
            .post(
                "/api/v1/reservations/a/confirm",
                json!({"payment_ref": "PAY-A"}),
            )
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CONFIRMED")), "{b}");
        assert_eq!(counts(&api, "TEA").await, (5, 0, 3, 2));
        let (s, b) = api
            .post(
                "/api/v1/reservations/b/confirm",
                json!({"payment_ref": "PAY-B"}),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        let exception = b["exception_id"].as_i64().expect("an exception");
        assert_eq!(
            b["shortfall"],
            json!([{"sku": "TEA", "qty": 3, "available": 2}])
        );
        let (_, order) = api.get("/api/v1/reservations/b").await;
        assert_eq!(
            (
                order["status"].as_str(),
                order["release_reason"].as_str(),
                order["payment_ref"].as_str()
            ),
            (
                Some("RELEASED"),
                Some("not in stock at payment"),
                Some("PAY-B")
            ),
            "{order}"
        );
        assert_eq!(counts(&api, "TEA").await, (5, 0, 3, 2), "nothing taken");
        // The same payment again answers the same, with the same exception.
        let (s, again) = api
            .post(
                "/api/v1/reservations/b/confirm",
                json!({"payment_ref": "PAY-B"}),
            )
            .await;
        assert_eq!((s, again["exception_id"].as_i64()), (409, Some(exception)));
        assert_eq!(again["error"], "insufficient_stock");
        assert_eq!(app.count("order_exceptions").await, 1);
        // After a restock the merchant fulfils it: the goods are taken then.
        api.receive("TEA", "main", 4).await;
        let (s, b) = api
            .post(
                &format!("/api/v1/exceptions/{exception}/resolve"),
                json!({"resolution": "fulfilled", "note": "restocked"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(counts(&api, "TEA").await, (9, 0, 6, 3));
        assert_eq!(
            api.get("/api/v1/reservations/b").await.1["status"],
            "CONFIRMED"
        );
        identities_hold(&app).await;
    }
);

both!(
    racing_payments_for_a_sku_deducted_on_payment_sell_exactly_what_is_in_stock,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 5).await;
        let (s, b) = patch(&api, "HOT", json!({"deduct": "on_payment"})).await;
        assert_eq!(s, 200, "{b}");
        for i in 0..20 {
            let (s, b) = api
                .reserve(&format!("p-{i}"), json!([{"sku": "HOT", "qty": 1}]))
                .await;
            assert_eq!(s, 201, "{b}");
        }
        let payments: Vec<_> = (0..20)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.post(
                        &format!("/api/v1/reservations/p-{i}/confirm"),
                        json!({"payment_ref": format!("PAY-{i}")}),
                    )
                    .await
                })
            })
            .collect();
        let mut sold = 0;
        let mut refused = 0;
        for p in payments {
            let (s, b) = p.await.unwrap();
            match (s, b["error"].as_str()) {
                (200, _) => sold += 1,
                (409, Some("insufficient_stock")) => refused += 1,
                other => panic!("unexpected answer {other:?}: {b}"),
            }
        }
        assert_eq!((sold, refused), (5, 15));
        assert_eq!(counts(&api, "HOT").await, (5, 0, 5, 0));
        assert_eq!(app.count("order_exceptions").await, 15);
        identities_hold(&app).await;
    }
);

both!(
    an_unlimited_sku_never_blocks_never_locks_and_writes_a_ledger_row_for_every_sale,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "EBOOK").await;
        let (s, b) = patch(&api, "EBOOK", json!({"stock_policy": "unlimited"})).await;
        assert_eq!(
            (s, b["stock_policy"].as_str()),
            (200, Some("unlimited")),
            "{b}"
        );
        let (_, v) = api.get("/api/v1/skus/EBOOK/sellable").await;
        assert_eq!(
            (v["sellable"].as_bool(), v["unlimited"].as_bool()),
            (Some(true), Some(true)),
            "{v}"
        );
        assert_eq!(v["reasons"][0]["code"], "stock_unlimited", "{v}");
        // No stock was ever received: it sells anyway, and locks nothing.
        let (s, b) = api
            .reserve("e-1", json!([{"sku": "EBOOK", "qty": 1000}]))
            .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["items"][0]["hold"], "unlimited");
        let (s, b) = api
            .reserve("e-2", json!([{"sku": "EBOOK", "qty": 2}]))
            .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(counts(&api, "EBOOK").await, (0, 0, 0, 0));
        let (s, b) = api
            .post("/api/v1/reservations/e-1/confirm", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = api
            .post("/api/v1/reservations/e-2/release", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        // The sale is in the ledger (total and sold rise together); the release moved nothing.
        assert_eq!(counts(&api, "EBOOK").await, (1000, 0, 1000, 0));
        let rows: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT l.kind, l.d_total, l.d_sold FROM stock_ledger l JOIN skus s ON s.id = l.sku_id
             WHERE s.code = 'EBOOK' ORDER BY l.id",
        )
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(rows, vec![("CONFIRM".to_string(), 1000, 1000)]);
        // Its stock page says stock is not counted, instead of asking for a first delivery.
        let sku: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'EBOOK'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, &format!("/admin/skus/{sku}/stock")).await;
        assert_eq!(page.count("#stock-unlimited"), 1);
        assert_eq!(page.count("#stock-panel p.empty"), 0);
        identities_hold(&app).await;
    }
);

both!(
    a_policy_changed_while_orders_are_open_settles_each_order_as_it_was_made,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let (s, b) = api
            .reserve("locked", json!([{"sku": "TEA", "qty": 4}]))
            .await;
        assert_eq!(
            (s, b["items"][0]["hold"].as_str()),
            (201, Some("locked")),
            "{b}"
        );
        let (s, _) = patch(&api, "TEA", json!({"deduct": "on_payment"})).await;
        assert_eq!(s, 200);
        let (s, b) = api
            .reserve("checked", json!([{"sku": "TEA", "qty": 2}]))
            .await;
        assert_eq!(
            (s, b["items"][0]["hold"].as_str()),
            (201, Some("checked")),
            "{b}"
        );
        assert_eq!(counts(&api, "TEA").await, (10, 4, 0, 6));
        // The Orders page says which line only checked its units.
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin/orders").await;
        assert_eq!(page.count("[data-hold=checked]"), 1);
        let (s, _) = patch(&api, "TEA", json!({"deduct": "on_order"})).await;
        assert_eq!(s, 200);
        // The locked order sells its locked units; the checked one sells from available.
        for order in ["locked", "checked"] {
            let (s, b) = api
                .post(&format!("/api/v1/reservations/{order}/confirm"), json!({}))
                .await;
            assert_eq!(s, 200, "{b}");
        }
        assert_eq!(counts(&api, "TEA").await, (10, 0, 6, 4));
        identities_hold(&app).await;
    }
);

both!(
    a_stock_policy_or_deduction_mode_that_is_not_a_choice_or_not_for_goods_is_refused_and_changes_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.product("service", "CLASS").await;
        let (s, b) = patch(&api, "TEA", json!({"stock_policy": "infinite", "deduct": null})).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            codes_of(&b),
            ["stock_policy:invalid_choice", "deduct:invalid_choice"]
        );
        let (s, b) = patch(&api, "CLASS", json!({"stock_policy": "unlimited", "deduct": "on_payment"})).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            codes_of(&b),
            ["stock_policy:not_applicable", "deduct:not_applicable"]
        );
        for sku in ["TEA", "CLASS"] {
            let (_, b) = api.get(&format!("/api/v1/skus/{sku}")).await;
            assert_eq!(
                (b["stock_policy"].as_str(), b["deduct"].as_str()),
                (Some("tracked"), Some("on_order")),
                "{b}"
            );
        }
    }
);
