//! The Orders pages: every hold listed (open first), filtered, one order's page with its timeline
//! and ledger, "Release hold" behind a confirmation with a reason, the links from "held by unpaid
//! orders", and payments to settle on the list and the dashboard.

use std::time::Duration;

use serde_json::json;

use crate::both;
use crate::helpers::{html, location, Api, TestApp};

const FLASH: &str = ".flash:not(.degraded)";

async fn order_page_id(app: &TestApp, order: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM reservations WHERE order_id = $1")
        .bind(order)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn sku_id(app: &TestApp, code: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM skus WHERE code = $1")
        .bind(code)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// TEA with 5 units, all held by two unpaid orders; CUP with one paid order.
async fn held_tea(app: &TestApp) -> Api {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.product("goods", "CUP").await;
    api.receive("TEA", "main", 5).await;
    api.receive("CUP", "main", 5).await;
    api.reserve("paid-1", json!([{"sku": "CUP", "qty": 1}]))
        .await;
    api.post(
        "/api/v1/reservations/paid-1/confirm",
        json!({"payment_ref": "PAY-77"}),
    )
    .await;
    api.reserve("hold-1", json!([{"sku": "TEA", "qty": 2}]))
        .await;
    api.reserve(
        "hold-2",
        json!([{"sku": "TEA", "qty": 3}, {"sku": "CUP", "qty": 1}]),
    )
    .await;
    api
}

both!(
    the_orders_page_lists_open_holds_first_and_filters_by_status_and_sku,
    |app| {
        held_tea(&app).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin/orders").await;
        let orders: Vec<String> = page
            .attrs("tr[data-order]", "data-order")
            .into_iter()
            .collect();
        assert_eq!(orders.len(), 3);
        assert_eq!(
            page.attrs("tr[data-order]", "data-status"),
            ["RESERVED", "RESERVED", "CONFIRMED"],
            "open holds first"
        );
        assert!(page.text("tr[data-order=\"paid-1\"]").contains("PAY-77"));
        assert_eq!(page.count("tr[data-order=\"hold-1\"] .countdown"), 1);
        let page = app
            .page(&admin, "/admin/orders?status=RESERVED&sku=CUP")
            .await;
        assert_eq!(page.attrs("tr[data-order]", "data-order"), ["hold-2"]);
        let page = app.page(&admin, "/admin/orders?sku=NOPE").await;
        assert_eq!(page.count("#no-orders"), 1);
        // Another merchant's admin sees none of them, nor their pages.
        app.merchant("beta").await;
        let other = app.signed_in("merchant_admin", Some("beta")).await;
        let page = app.page(&other, "/admin/orders").await;
        assert_eq!(page.count("tr[data-order]"), 0);
        let id = order_page_id(&app, "hold-1").await;
        let r = other
            .get(app.url(&format!("/admin/orders/{id}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        // Operators read across merchants; store staff see only orders that booked their store.
        let operator = app.signed_in("operator", None).await;
        assert_eq!(
            app.page(&operator, "/admin/orders")
                .await
                .count("tr[data-order]"),
            3
        );
        let staff = app.signed_in("store_staff", Some("acme")).await;
        assert_eq!(
            app.page(&staff, "/admin/orders")
                .await
                .count("tr[data-order]"),
            0
        );
    }
);

both!(
    a_merchant_follows_held_by_unpaid_orders_to_the_order_and_releases_it_with_a_reason,
    |app| {
        let api = held_tea(&app).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        // "Not sellable" says TEA is out of stock, held by unpaid orders, and links to them.
        let page = app.page(&admin, "/admin/sellable").await;
        let link = page
            .attr("a.held-orders", "href")
            .expect("a link to the orders holding TEA");
        assert_eq!(link, "/admin/orders?status=RESERVED&sku=TEA");
        let sku = sku_id(&app, "TEA").await;
        let stock = app.page(&admin, &format!("/admin/skus/{sku}/stock")).await;
        assert_eq!(
            stock.attr("#tile-locked", "href").as_deref(),
            Some(link.as_str())
        );
        let list = app.page(&admin, &link).await;
        assert_eq!(
            list.attrs("tr[data-order]", "data-order"),
            ["hold-1", "hold-2"]
        );
        let id = order_page_id(&app, "hold-1").await;
        let order = app.page(&admin, &format!("/admin/orders/{id}")).await;
        assert_eq!(
            order.attrs("#timeline li", "data-action"),
            ["reservation.reserve"]
        );
        assert_eq!(
            order.attrs("#order-ledger tr[data-kind]", "data-kind"),
            ["RESERVE"]
        );
        let release = order.attr("#release-link", "href").unwrap();
        // The confirmation asks for a reason; without one nothing changes.
        let r = admin
            .post(app.url(&release))
            .form(&[("reason", "  ")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let form = html(r).await;
        assert_eq!(form.count("p.field-error[data-field=\"reason\"]"), 1);
        assert_eq!(api.stock("TEA").await["locked"], 5);
        let r = admin
            .post(app.url(&release))
            .form(&[("reason", "customer cancelled by phone")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), format!("/admin/orders/{id}"));
        let order = app.page(&admin, &format!("/admin/orders/{id}")).await;
        assert_eq!(order.count(FLASH), 1);
        assert_eq!(order.text("#release-reason"), "customer cancelled by phone");
        assert_eq!(
            order.count("#release-link"),
            0,
            "a released order has no release"
        );
        assert_eq!(
            order.attrs("#timeline li", "data-action"),
            ["reservation.reserve", "reservation.release"]
        );
        assert_eq!(
            order.attrs("#order-ledger tr[data-kind]", "data-kind"),
            ["RESERVE", "RELEASE"]
        );
        let st = api.stock("TEA").await;
        assert_eq!(
            (st["locked"].as_i64(), st["available"].as_i64()),
            (Some(3), Some(2))
        );
        let (_, b) = api.get("/api/v1/reservations/hold-1").await;
        assert_eq!(
            (b["status"].as_str(), b["release_reason"].as_str()),
            (Some("RELEASED"), Some("customer cancelled by phone"))
        );
        // The audit log names who released it.
        let (n, actor): (i64, String) = sqlx::query_as(
            "SELECT COUNT(*), MAX(actor) FROM audit_log WHERE action = 'reservation.release' AND subject = 'order:hold-1'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(n, 1);
        assert!(actor.starts_with("user:merchant_admin-"), "{actor}");
        // Operators and staff may read but not release.
        let operator = app.signed_in("operator", None).await;
        let id2 = order_page_id(&app, "hold-2").await;
        let page = app.page(&operator, &format!("/admin/orders/{id2}")).await;
        assert_eq!(page.count("#release-link"), 0);
        let r = operator
            .post(app.url(&format!("/admin/orders/{id2}/release")))
            .form(&[("reason", "x")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        assert_eq!(api.stock("TEA").await["locked"], 3);
    }
);

both!(
    a_payment_that_could_not_be_fulfilled_is_listed_counted_and_settled_on_the_orders_page,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 4).await;
        api.post(
            "/api/v1/reservations",
            json!({"order_id": "late", "items": [{"sku": "TEA", "qty": 4}], "ttl_seconds": 1}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        sellable::domain::orders::expire_due(&app.db, 100)
            .await
            .unwrap();
        api.reserve("hog", json!([{"sku": "TEA", "qty": 4}])).await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/late/confirm",
                json!({"payment_ref": "PAY-L"}),
            )
            .await;
        assert_eq!(s, 409, "{b}");
        let exception = b["exception_id"].as_i64().unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let dash = app.page(&admin, "/admin").await;
        assert_eq!(dash.count("#exceptions-alert"), 1);
        let list = app.page(&admin, "/admin/orders").await;
        assert_eq!(
            list.attrs("#exceptions tr[data-exception]", "data-exception"),
            [exception.to_string()]
        );
        let id = order_page_id(&app, "late").await;
        let order = app.page(&admin, &format!("/admin/orders/{id}")).await;
        assert_eq!(
            order.count(&format!("section[data-exception=\"{exception}\"] form")),
            1
        );
        let action = format!("/admin/orders/{id}/exceptions/{exception}/resolve");
        // Without a note: refused inline, nothing settled.
        let r = admin
            .post(app.url(&action))
            .form(&[("resolution", "refunded"), ("note", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(html(r).await.count("p.field-error[data-field=\"note\"]"), 1);
        let r = admin
            .post(app.url(&action))
            .form(&[("resolution", "refunded"), ("note", "refunded to the card")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let order = app.page(&admin, &format!("/admin/orders/{id}")).await;
        assert_eq!(
            order
                .attr("[data-resolution]", "data-resolution")
                .as_deref(),
            Some("refunded")
        );
        assert_eq!(
            app.page(&admin, "/admin").await.count("#exceptions-alert"),
            0
        );
        assert_eq!(
            app.page(&admin, "/admin/orders").await.count("#exceptions"),
            0
        );
        assert_eq!(
            api.stock("TEA").await["locked"],
            4,
            "a refund moves nothing"
        );
    }
);

both!(
    a_merchant_sets_a_skus_limits_on_its_edit_page_and_a_bad_one_saves_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let sku = sku_id(&app, "TEA").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, &format!("/admin/skus/{sku}/edit")).await;
        assert_eq!(page.count("#policy input[name=max_per_order]"), 1);
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku}")))
            .form(&[
                ("name", "TEA"),
                ("price", "9.99"),
                ("max_per_order", "two"),
                ("max_per_customer", ""),
                ("low_stock_threshold", ""),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let refused = html(r).await;
        assert_eq!(
            refused.count("p.field-error[data-field=\"max_per_order\"]"),
            1
        );
        // Said at the top of the form too, and the field marked for assistive technology.
        assert_eq!(refused.count("#sku-not-saved[data-code=not_saved]"), 1);
        assert_eq!(
            refused.count("input[name=max_per_order][aria-invalid=true]"),
            1
        );
        assert_eq!(
            api.get("/api/v1/skus/TEA").await.1["price"],
            100,
            "nothing saved"
        );
        let updates = || async {
            sqlx::query_scalar::<_, i64>(
                "SELECT COUNT(*) FROM events WHERE type = 'sku.updated' AND sku_id = $1",
            )
            .bind(sku)
            .fetch_one(&app.db.pool)
            .await
            .unwrap()
        };
        let before = updates().await;
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku}")))
            .form(&[
                ("name", "Tea leaves"),
                ("price", "1.00"),
                ("max_per_order", "２"),
                ("max_per_customer", ""),
                ("low_stock_threshold", "3"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        // Back to the top of the product's page, where the confirmation shows.
        let product = sqlx::query_scalar::<_, i64>("SELECT product_id FROM skus WHERE id = $1")
            .bind(sku)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(
            r.headers()["location"].to_str().unwrap(),
            format!("/admin/products/{product}")
        );
        let (_, b) = api.get("/api/v1/skus/TEA").await;
        assert_eq!(
            (
                b["max_per_order"].as_i64(),
                b["low_stock_threshold"].as_i64()
            ),
            (Some(2), Some(3))
        );
        assert_eq!(
            (b["name"].as_str(), b["price"].as_i64()),
            (Some("Tea leaves"), Some(100))
        );
        // The name, the price and the limits are one change: one transaction, one event.
        assert_eq!(updates().await - before, 1, "one sku.updated for one save");
        let (s, b) = api.reserve("o", json!([{"sku": "TEA", "qty": 3}])).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("limit_exceeded")));
    }
);

both!(
    a_merchant_chooses_unlimited_stock_or_deduction_on_payment_on_the_sku_page_and_free_shows_as_free,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "EBOOK").await;
        api.product("service", "CLASS").await;
        let sku = sku_id(&app, "EBOOK").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, &format!("/admin/skus/{sku}/edit")).await;
        assert_eq!(
            page.attr("select[name=stock_policy] option[selected]", "value"),
            Some("tracked".to_string())
        );
        assert_eq!(
            page.attr("select[name=deduct] option[selected]", "value"),
            Some("on_order".to_string())
        );
        // A service has no stock to count: no such choice on its page.
        let class = sku_id(&app, "CLASS").await;
        let page = app.page(&admin, &format!("/admin/skus/{class}/edit")).await;
        assert_eq!(page.count("select[name=stock_policy]"), 0);
        // A choice that is not one is refused inline and saves nothing.
        let form = |policy: &'static str, price: &'static str| {
            vec![
                ("name", "EBOOK"),
                ("price", price),
                ("max_per_order", ""),
                ("max_per_customer", ""),
                ("low_stock_threshold", ""),
                ("stock_policy", policy),
                ("deduct", "on_payment"),
            ]
        };
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku}")))
            .form(&form("infinite", "0"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r)
                .await
                .count("p.field-error[data-field=\"stock_policy\"]"),
            1
        );
        assert_eq!(api.get("/api/v1/skus/EBOOK").await.1["price"], 100);
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku}")))
            .form(&form("unlimited", "0"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let (_, b) = api.get("/api/v1/skus/EBOOK").await;
        assert_eq!(
            (
                b["stock_policy"].as_str(),
                b["deduct"].as_str(),
                b["price"].as_i64(),
                b["price_set"].as_bool()
            ),
            (Some("unlimited"), Some("on_payment"), Some(0), Some(true))
        );
        // Once priced, the price cannot be emptied again.
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku}")))
            .form(&form("unlimited", ""))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let product = b["product_id"].as_i64().unwrap();
        let page = app.page(&admin, &format!("/admin/products/{product}")).await;
        assert_eq!(page.count("td.price[data-price=free]"), 1);
        let (_, v) = api.get("/api/v1/skus/EBOOK/sellable").await;
        assert_eq!(v["sellable"], true, "{v}");
    }
);

both!(
    the_orders_list_sorts_by_a_column_both_ways_keeping_its_filters_and_its_filters_keep_the_sort_and_pages_with_a_jump,
    |app| {
        held_tea(&app).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin/orders?sku=TEA").await;
        let by_order = page.attr("th[data-sort=order] a", "href").unwrap();
        assert!(by_order.contains("sku=TEA"), "{by_order}");
        let sorted = app.page(&admin, &by_order).await;
        assert_eq!(
            sorted.attrs("tr[data-order]", "data-order"),
            ["hold-1", "hold-2"]
        );
        assert_eq!(
            sorted.attr("th[data-sort=order]", "aria-sort").as_deref(),
            Some("ascending")
        );
        let back = sorted.attr("th[data-sort=order] a", "href").unwrap();
        let reversed = app.page(&admin, &back).await;
        assert_eq!(
            reversed.attrs("tr[data-order]", "data-order"),
            ["hold-2", "hold-1"]
        );
        assert_eq!(
            reversed.attr("th[data-sort=order]", "aria-sort").as_deref(),
            Some("descending")
        );
        // The filters send the order along (the table, swapped alone, holds it for the form).
        assert_eq!(
            reversed.attr("input[name=sort][form=orders-filters]", "value").as_deref(),
            Some("order")
        );
        assert_eq!(
            reversed.attr("input[name=desc][form=orders-filters]", "value").as_deref(),
            Some("1")
        );
        assert_eq!(reversed.count("form#orders-filters"), 1);
        // By status, all orders: CONFIRMED before RESERVED.
        let page = app.page(&admin, "/admin/orders?sort=status").await;
        assert_eq!(
            page.attrs("tr[data-order]", "data-status"),
            ["CONFIRMED", "RESERVED", "RESERVED"]
        );
        // An unknown column keeps the list's own order.
        let page = app.page(&admin, "/admin/orders?sort=nope").await;
        assert_eq!(
            page.attrs("tr[data-order]", "data-status"),
            ["RESERVED", "RESERVED", "CONFIRMED"]
        );
        // The pager says where it is and carries a jump box (one page here).
        assert_eq!(page.attr("nav.pager", "data-pages").as_deref(), Some("1"));
    }
);
