//! Orders after the hold: payment references, late payments, and the exceptions they leave.

use std::time::Duration;

use serde_json::json;

use crate::both;
use crate::helpers::{Api, TestApp};

/// TEA with `qty` received in "main", and an order `order` holding `hold` of it for one second,
/// then expired by the job.
async fn expired_order(app: &TestApp, qty: i64, order: &str, hold: i64) -> Api {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", qty).await;
    let (s, b) = api
        .post(
            "/api/v1/reservations",
            json!({"order_id": order, "items": [{"sku": "TEA", "qty": hold}], "ttl_seconds": 1}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    sellable::domain::reservations::expire_due(&app.db, 100)
        .await
        .unwrap();
    assert_eq!(
        api.get(&format!("/api/v1/reservations/{order}")).await.1["status"],
        "EXPIRED"
    );
    api
}

async fn identities_hold(app: &TestApp) {
    app.assert_ledger_replays().await;
    let report =
        sellable::domain::reconcile::run(&app.db, "job", &sellable::domain::Actor::system("test"))
            .await
            .unwrap();
    assert!(report.broken.is_empty(), "{:?}", report.broken);
}

both!(
    a_payment_reference_is_kept_and_another_one_is_a_payment_conflict,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        api.reserve("o-1", json!([{"sku": "TEA", "qty": 2}])).await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/o-1/confirm",
                json!({"payment_ref": " PAY-1 "}),
            )
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CONFIRMED")), "{b}");
        assert_eq!(b["payment_ref"], "PAY-1");
        assert_eq!(b["late_payment"], false);
        // The same payment again answers the same; another is a conflict and changes nothing.
        let (s, again) = api
            .post(
                "/api/v1/reservations/o-1/confirm",
                json!({"payment_ref": "PAY-1"}),
            )
            .await;
        assert_eq!((s, &again), (200, &b));
        let (s, b) = api
            .post(
                "/api/v1/reservations/o-1/confirm",
                json!({"payment_ref": "PAY-2"}),
            )
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("payment_conflict")));
        assert_eq!(b["payment_ref"], "PAY-1");
        assert_eq!(
            api.get("/api/v1/reservations/o-1").await.1["payment_ref"],
            "PAY-1"
        );
        assert_eq!(api.stock("TEA").await["sold"], 2);
        // A confirm with no body at all still works, and a reference may come later.
        api.reserve("o-2", json!([{"sku": "TEA", "qty": 1}])).await;
        let (s, b) = api
            .call(
                reqwest::Method::POST,
                "/api/v1/reservations/o-2/confirm",
                None,
            )
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CONFIRMED")), "{b}");
        assert!(b.get("payment_ref").is_none());
        let (s, b) = api
            .post(
                "/api/v1/reservations/o-2/confirm",
                json!({"payment_ref": "PAY-9"}),
            )
            .await;
        assert_eq!((s, b["payment_ref"].as_str()), (200, Some("PAY-9")));
        // A reference that is not one is refused with its field named.
        api.reserve("o-3", json!([{"sku": "TEA", "qty": 1}])).await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/o-3/confirm",
                json!({"payment_ref": "x".repeat(129)}),
            )
            .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(b["fields"][0]["code"], "invalid_payment_ref");
        assert_eq!(
            api.get("/api/v1/reservations/o-3").await.1["status"],
            "RESERVED"
        );
        identities_hold(&app).await;
    }
);

both!(
    a_late_payment_with_stock_still_there_confirms_late_and_repeats_answer_the_same,
    |app| {
        let api = expired_order(&app, 10, "late", 4).await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/late/confirm",
                json!({"payment_ref": "PAY-L"}),
            )
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CONFIRMED")), "{b}");
        assert_eq!(b["late_payment"], true);
        assert_eq!(b["payment_ref"], "PAY-L");
        let st = api.stock("TEA").await;
        assert_eq!(
            (
                st["sold"].as_i64(),
                st["locked"].as_i64(),
                st["available"].as_i64()
            ),
            (Some(4), Some(0), Some(6))
        );
        let (s, again) = api
            .post(
                "/api/v1/reservations/late/confirm",
                json!({"payment_ref": "PAY-L"}),
            )
            .await;
        assert_eq!((s, &again), (200, &b));
        assert_eq!(api.stock("TEA").await["sold"], 4, "taken once");
        assert_eq!(app.count("order_exceptions").await, 0);
        identities_hold(&app).await;
    }
);

both!(
    a_late_payment_without_stock_records_one_exception_and_a_restock_fulfils_it,
    |app| {
        let api = expired_order(&app, 10, "late", 4).await;
        // Meanwhile another order takes most of what was freed.
        api.reserve("other", json!([{"sku": "TEA", "qty": 8}]))
            .await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/late/confirm",
                json!({"payment_ref": "PAY-L"}),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("reservation_expired")),
            "{b}"
        );
        let exception = b["exception_id"].as_i64().expect("exception_id");
        assert_eq!(
            b["shortfall"],
            json!([{"sku": "TEA", "qty": 4, "available": 2}])
        );
        assert_eq!(api.stock("TEA").await["available"], 2, "nothing taken");
        // A repeat answers the same, and records nothing twice.
        let (s, again) = api
            .post(
                "/api/v1/reservations/late/confirm",
                json!({"payment_ref": "PAY-L"}),
            )
            .await;
        assert_eq!((s, again["exception_id"].as_i64()), (409, Some(exception)));
        assert_eq!(app.count("order_exceptions").await, 1);
        let (s, list) = api.get("/api/v1/exceptions?status=open").await;
        assert_eq!(s, 200);
        assert_eq!(list["exceptions"].as_array().unwrap().len(), 1);
        let e = &list["exceptions"][0];
        assert_eq!(
            (
                e["id"].as_i64(),
                e["order_id"].as_str(),
                e["payment_ref"].as_str()
            ),
            (Some(exception), Some("late"), Some("PAY-L"))
        );
        assert_eq!(
            (e["kind"].as_str(), e["status"].as_str()),
            (Some("PAID_NOT_HELD"), Some("OPEN"))
        );
        // Fulfilling before a restock is refused and changes nothing.
        let resolve = format!("/api/v1/exceptions/{exception}/resolve");
        let (s, b) = api
            .post(
                &resolve,
                json!({"resolution": "fulfilled", "note": "restocked"}),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        assert_eq!(
            api.get("/api/v1/exceptions?status=open").await.1["exceptions"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        // Bad resolutions are refused by field.
        let (s, b) = api.post(&resolve, json!({"resolution": "lost"})).await;
        assert_eq!(s, 422, "{b}");
        let codes: Vec<&str> = b["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["invalid_resolution", "required"]);
        let (s, b) = api.get("/api/v1/exceptions?status=maybe").await;
        assert_eq!(
            (s, b["fields"][0]["code"].as_str()),
            (422, Some("invalid_status"))
        );
        // After a restock, fulfilling takes the goods and confirms the order late.
        api.receive("TEA", "main", 5).await;
        let (s, b) = api
            .post(
                &resolve,
                json!({"resolution": "fulfilled", "note": "restocked on Tuesday"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(
            (
                b["status"].as_str(),
                b["resolution"].as_str(),
                b["note"].as_str()
            ),
            (
                Some("RESOLVED"),
                Some("fulfilled"),
                Some("restocked on Tuesday")
            )
        );
        let order = api.get("/api/v1/reservations/late").await.1;
        assert_eq!(
            (order["status"].as_str(), order["late_payment"].as_bool()),
            (Some("CONFIRMED"), Some(true))
        );
        let st = api.stock("TEA").await;
        assert_eq!(
            (
                st["sold"].as_i64(),
                st["locked"].as_i64(),
                st["available"].as_i64()
            ),
            (Some(4), Some(8), Some(3))
        );
        let (s, b) = api
            .post(&resolve, json!({"resolution": "refunded", "note": "twice"}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("exception_resolved")));
        let (_, open) = api.get("/api/v1/exceptions?status=open").await;
        assert_eq!(open["exceptions"], json!([]));
        let (_, resolved) = api.get("/api/v1/exceptions?status=resolved").await;
        assert_eq!(resolved["exceptions"][0]["id"].as_i64(), Some(exception));
        // Another merchant sees none of it.
        let beta = app.merchant_api("beta").await;
        assert_eq!(
            beta.get("/api/v1/exceptions").await.1["exceptions"],
            json!([])
        );
        assert_eq!(
            beta.post(&resolve, json!({"resolution": "refunded", "note": "x"}))
                .await
                .0,
            404
        );
        identities_hold(&app).await;
    }
);

both!(
    a_payment_after_a_release_is_refused_and_recorded_for_a_refund,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        api.reserve("gone", json!([{"sku": "TEA", "qty": 3}])).await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/gone/release",
                json!({"reason": "customer cancelled"}),
            )
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("RELEASED")));
        assert_eq!(b["release_reason"], "customer cancelled");
        // Without a payment reference: refused, nothing recorded.
        let (s, b) = api
            .post("/api/v1/reservations/gone/confirm", json!({}))
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("reservation_released"))
        );
        assert!(b.get("exception_id").is_none());
        // With one: refused, and the money is recorded for a person.
        let (s, b) = api
            .post(
                "/api/v1/reservations/gone/confirm",
                json!({"payment_ref": "PAY-G"}),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("reservation_released"))
        );
        let id = b["exception_id"].as_i64().expect("exception_id");
        assert_eq!(api.stock("TEA").await["available"], 10);
        let (s, b) = api
            .post(
                &format!("/api/v1/exceptions/{id}/resolve"),
                json!({"resolution": "refunded", "note": "refunded to card"}),
            )
            .await;
        assert_eq!(
            (s, b["resolution"].as_str()),
            (200, Some("refunded")),
            "{b}"
        );
        assert_eq!(
            api.get("/api/v1/reservations/gone").await.1["status"],
            "RELEASED"
        );
        assert_eq!(api.stock("TEA").await["available"], 10);
        identities_hold(&app).await;
    }
);

both!(
    racing_late_payments_take_the_goods_once_or_record_one_exception,
    |app| {
        let api = expired_order(&app, 6, "rich", 3).await;
        let answers = futures_util::future::join_all((0..8).map(|_| {
            let api = api.clone();
            async move {
                api.post(
                    "/api/v1/reservations/rich/confirm",
                    json!({"payment_ref": "PAY-R"}),
                )
                .await
            }
        }))
        .await;
        for (s, b) in &answers {
            assert_eq!((*s, b["late_payment"].as_bool()), (200, Some(true)), "{b}");
        }
        assert_eq!(api.stock("TEA").await["sold"], 3, "taken exactly once");
        // Another order expires with nothing left behind it.
        api.post(
            "/api/v1/reservations",
            json!({"order_id": "poor", "items": [{"sku": "TEA", "qty": 3}], "ttl_seconds": 1}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        sellable::domain::reservations::expire_due(&app.db, 100)
            .await
            .unwrap();
        let (s, b) = api.reserve("hog", json!([{"sku": "TEA", "qty": 3}])).await;
        assert_eq!(s, 201, "{b}");
        let answers = futures_util::future::join_all((0..8).map(|_| {
            let api = api.clone();
            async move {
                api.post(
                    "/api/v1/reservations/poor/confirm",
                    json!({"payment_ref": "PAY-P"}),
                )
                .await
            }
        }))
        .await;
        let ids: std::collections::HashSet<i64> = answers
            .iter()
            .map(|(s, b)| {
                assert_eq!(
                    (*s, b["error"].as_str()),
                    (409, Some("reservation_expired")),
                    "{b}"
                );
                b["exception_id"].as_i64().unwrap()
            })
            .collect();
        assert_eq!(ids.len(), 1, "one exception for one payment");
        assert_eq!(app.count("order_exceptions").await, 1);
        identities_hold(&app).await;
    }
);
