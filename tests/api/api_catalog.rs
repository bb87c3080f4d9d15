use serde_json::{json, Value};

use crate::both;
use crate::helpers::TestApp;

async fn post(app: &TestApp, key: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(app.url("/api/v1/products"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

fn tea() -> Value {
    json!({
        "name": "Green tea", "kind": "goods", "status": "ONLINE",
        "sale_starts_at": "2026-12-01T09:00:00+08:00", "sale_ends_at": null,
        "skus": [{"code": "TEA-1", "name": "100 g", "price": 4800}, {"code": "TEA-2", "name": "250 g", "price": 9800}]
    })
}

both!(api_creates_a_product_with_skus_and_reads_it_back, |app| {
    app.merchant("acme").await;
    let key = app.api_key("acme").await;
    let (status, body) = post(&app, &key, tea()).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["name"], "Green tea");
    assert_eq!(body["status"], "ONLINE");
    assert_eq!(body["kind"], "goods");
    assert_eq!(body["sale_starts_at"], "2026-12-01T01:00:00+00:00");
    assert_eq!(body["sale_ends_at"], Value::Null);
    assert_eq!(body["skus"].as_array().unwrap().len(), 2);
    assert_eq!(body["skus"][0]["price"], 4800);
    assert_eq!(body["skus"][0]["currency"], "CNY");
    assert_eq!(body["skus"][0]["unit_type"], "quantity");
    let id = body["id"].as_i64().unwrap();
    let http = reqwest::Client::new();
    let got: Value = http
        .get(app.url(&format!("/api/v1/products/{id}")))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(got, body);
    let sku: Value = http
        .get(app.url("/api/v1/skus/TEA-2"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(sku["code"], "TEA-2");
    assert_eq!(sku["price"], 9800);
    assert_eq!(sku["product"]["id"], id);
});

both!(api_unit_type_follows_the_product_kind, |app| {
    app.merchant("acme").await;
    let key = app.api_key("acme").await;
    for (kind, unit) in [
        ("voucher", "code"),
        ("service", "slot"),
        ("goods", "quantity"),
    ] {
        let (status, body) = post(&app, &key, json!({"name": kind, "kind": kind, "skus": [{"code": format!("K-{kind}"), "name": "x", "price": 1}]})).await;
        assert_eq!(status, 201);
        assert_eq!(body["status"], "DRAFT", "status defaults to DRAFT");
        assert_eq!(body["skus"][0]["unit_type"], unit);
    }
});

both!(api_patch_changes_status_and_clears_the_sale_window, |app| {
    app.merchant("acme").await;
    let key = app.api_key("acme").await;
    let (_, body) = post(&app, &key, tea()).await;
    let id = body["id"].as_i64().unwrap();
    let http = reqwest::Client::new();
    let r = http
        .patch(app.url(&format!("/api/v1/products/{id}")))
        .bearer_auth(&key)
        .json(&json!({"status": "OFFLINE", "sale_starts_at": null, "sale_ends_at": "2027-01-01T00:00:00Z"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["status"], "OFFLINE");
    assert_eq!(body["sale_starts_at"], Value::Null);
    assert_eq!(body["sale_ends_at"], "2027-01-01T00:00:00+00:00");
    // Leaving a field out leaves it alone.
    let body: Value = http
        .patch(app.url(&format!("/api/v1/products/{id}")))
        .bearer_auth(&key)
        .json(&json!({"status": "ONLINE"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["sale_ends_at"], "2027-01-01T00:00:00+00:00");
    for (patch, code) in [
        (json!({"status": "SOLD_OUT"}), "invalid_choice"),
        (json!({}), "nothing_to_change"),
        (
            json!({"sale_starts_at": "2027-02-01T00:00:00Z"}),
            "invalid_sale_window",
        ),
        (json!({"sale_ends_at": "tomorrow"}), "invalid_time"),
    ] {
        let r = http
            .patch(app.url(&format!("/api/v1/products/{id}")))
            .bearer_auth(&key)
            .json(&patch)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422, "{patch}");
        assert_eq!(r.json::<Value>().await.unwrap()["error"], code, "{patch}");
    }
    let status: String = sqlx::query_scalar("SELECT status FROM products")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(status, "ONLINE");
});

both!(
    api_bad_input_gets_stable_error_codes_and_writes_nothing,
    |app| {
        app.merchant("acme").await;
        let key = app.api_key("acme").await;
        let sku = |code: &str, price: Value| json!({"code": code, "name": "x", "price": price});
        let cases: Vec<(Value, &str, &str)> = vec![
            (
                json!({"name": "", "kind": "goods", "skus": [sku("A", json!(1))]}),
                "required",
                "name",
            ),
            (
                json!({"name": "n".repeat(201), "kind": "goods", "skus": [sku("A", json!(1))]}),
                "too_long",
                "name",
            ),
            (
                json!({"name": "T", "kind": "cars", "skus": [sku("A", json!(1))]}),
                "invalid_choice",
                "kind",
            ),
            (
                json!({"name": "T", "kind": "goods", "status": "LIVE", "skus": [sku("A", json!(1))]}),
                "invalid_choice",
                "status",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": []}),
                "required",
                "skus",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku("A", json!(-1))]}),
                "invalid_price",
                "skus[0].price",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku("A", json!(1.5))]}),
                "invalid_price",
                "skus[0].price",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku("A", json!(u64::MAX))]}),
                "invalid_price",
                "skus[0].price",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku("A", json!(10_000_000_000_000i64))]}),
                "invalid_price",
                "skus[0].price",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku("A", json!("12"))]}),
                "invalid_price",
                "skus[0].price",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku("", json!(1))]}),
                "required",
                "skus[0].code",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku(&"C".repeat(65), json!(1))]}),
                "too_long",
                "skus[0].code",
            ),
            (
                json!({"name": "T", "kind": "goods", "skus": [sku("A", json!(1)), sku("A", json!(2))]}),
                "duplicate_sku_code",
                "skus[1].code",
            ),
            (
                json!({"name": "T", "kind": "goods", "sale_starts_at": "2026-13-01", "skus": [sku("A", json!(1))]}),
                "invalid_time",
                "sale_starts_at",
            ),
            (
                json!({"name": "T", "kind": "goods", "sale_starts_at": "2027-01-02T00:00:00Z", "sale_ends_at": "2027-01-01T00:00:00Z", "skus": [sku("A", json!(1))]}),
                "invalid_sale_window",
                "sale_ends_at",
            ),
        ];
        for (body, code, field) in cases {
            let (status, resp) = post(&app, &key, body.clone()).await;
            assert_eq!(status, 422, "{body} → {resp}");
            assert!(
                resp["fields"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["field"] == field && f["code"] == code),
                "{body} → {resp}"
            );
            assert!(!resp["message"].as_str().unwrap().is_empty());
        }
        // A code already used by another product of the merchant.
        assert_eq!(post(&app, &key, tea()).await.0, 201);
        let (status, resp) = post(
            &app,
            &key,
            json!({"name": "Other", "kind": "goods", "skus": [sku("TEA-1", json!(1))]}),
        )
        .await;
        assert_eq!(
            (status, resp["error"].as_str().unwrap()),
            (422, "duplicate_sku_code")
        );

        let http = reqwest::Client::new();
        let r = http
            .post(app.url("/api/v1/products"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body("{\"name\": ")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        assert_eq!(r.json::<Value>().await.unwrap()["error"], "invalid_json");
        let r = http
            .post(app.url("/api/v1/products"))
            .bearer_auth(&key)
            .header("content-type", "text/plain")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 415);
        assert_eq!(
            r.json::<Value>().await.unwrap()["error"],
            "unsupported_media_type"
        );
        let huge = json!({"name": "x".repeat(100 * 1024), "kind": "goods", "skus": []});
        let r = http
            .post(app.url("/api/v1/products"))
            .bearer_auth(&key)
            .json(&huge)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 413);
        assert_eq!(
            r.json::<Value>().await.unwrap()["error"],
            "payload_too_large"
        );
        let r = http
            .get(app.url("/api/v1/products/not-a-number"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(app.count("products").await, 1);
        assert_eq!(app.count("skus").await, 2);
    }
);

both!(api_refuses_missing_wrong_and_revoked_keys, |app| {
    app.merchant("acme").await;
    let key = app.api_key("acme").await;
    let http = reqwest::Client::new();
    let r = http.get(app.url("/api/v1/skus/X")).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(r.json::<Value>().await.unwrap()["error"], "unauthorized");
    let r = http
        .get(app.url("/api/v1/skus/X"))
        .bearer_auth("sk_wrongwrongwrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        http.get(app.url("/api/v1/skus/X"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let stored: String = sqlx::query_scalar("SELECT key_hash FROM api_keys")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_ne!(stored, key, "only a hash is stored");
    let id: i64 = sqlx::query_scalar("SELECT id FROM api_keys")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let merchant = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, "acme")
        .await
        .unwrap();
    sellable::domain::tenancy::apikeys::revoke(
        &app.db,
        &sellable::domain::Actor::system("test"),
        merchant,
        id,
    )
    .await
    .unwrap();
    assert_eq!(
        http.get(app.url("/api/v1/skus/X"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
});
