//! "Why can't this be sold?": the verdict of each situation the issue lists, the catalog listing,
//! and the promise that a verdict and a real reservation or booking agree.

use std::collections::BTreeSet;

use std::time::Duration;

use rand::{Rng, SeedableRng};

use serde_json::{json, Value};

use sellable::domain::{catalog, reconcile, Actor};

use crate::both;

use crate::helpers::{Api, TestApp};

// ---- building situations -------------------------------------------------------------------

fn at(api: &Api, days: f64) -> String {
    (api.now() + chrono::Duration::seconds((days * 86_400.0) as i64)).to_rfc3339()
}

async fn product(api: &Api, kind: &str, code: &str) {
    api.product(kind, code).await;
}

async fn sku_json(api: &Api, code: &str) -> Value {
    let (s, b) = api.get(&format!("/api/v1/skus/{code}")).await;
    assert_eq!(s, 200, "{b}");
    b
}

async fn patch_product(api: &Api, code: &str, body: Value) {
    let product = sku_json(api, code).await["product_id"].as_i64().unwrap();
    let (s, b) = api
        .call(
            reqwest::Method::PATCH,
            &format!("/api/v1/products/{product}"),
            Some(body),
        )
        .await;
    assert_eq!(s, 200, "{b}");
}

async fn set_price(app: &TestApp, api: &Api, code: &str, price: i64) {
    let sku = sku_json(api, code).await;
    let merchant: sellable::domain::MerchantId =
        sqlx::query_scalar("SELECT merchant_id FROM skus WHERE id = $1")
            .bind(sku["id"].as_i64().unwrap())
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    let actor = Actor {
        merchant_id: Some(merchant),
        ..Actor::system("test")
    };
    catalog::edit_sku(
        &app.db,
        &actor,
        sku["id"].as_i64().unwrap(),
        sku["name"].as_str().unwrap(),
        Some(price),
        &catalog::PolicyInput::default(),
    )
    .await
    .unwrap();
}

async fn adjust(api: &Api, sku: &str, kind: &str, qty: i64, reason: &str) {
    let (s, b) = api
        .post(
            "/api/v1/stock/adjustments",
            json!({"sku": sku, "warehouse": "main", "kind": kind, "qty": qty, "reason": reason,
                   "idempotency_key": uuid::Uuid::new_v4().to_string()}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
}

async fn reserve(api: &Api, sku: &str, qty: i64) -> (u16, Value) {
    let order = uuid::Uuid::new_v4().to_string();
    api.reserve(&order, json!([{"sku": sku, "qty": qty}])).await
}

async fn reserved(api: &Api, sku: &str, qty: i64) -> String {
    let (s, b) = reserve(api, sku, qty).await;
    assert_eq!(s, 201, "{b}");
    b["order_id"].as_str().unwrap().to_string()
}

async fn slot(api: &Api, sku: &str, days: f64, capacity: i64, staff: Option<&str>) -> i64 {
    let mut body = json!({"sku": sku, "starts_at": at(api, days), "ends_at": at(api, days + 1.0 / 24.0), "capacity": capacity});
    if let Some(s) = staff {
        body["staff"] = json!(s);
    }
    let (s, b) = api.post("/api/v1/slots", body).await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_i64().unwrap()
}

async fn book(api: &Api, slot: i64) -> (u16, Value) {
    let n: u32 = rand::rng().random_range(10_000_000..99_999_999);
    api.book(slot, "Ann Lee", &format!("+86 138 {n}"), None)
        .await
}

fn codes(prefix: &str, n: usize) -> String {
    (0..n).map(|i| format!("{prefix}-{i:04}\n")).collect()
}

async fn verdict(api: &Api, code: &str) -> Value {
    let (s, b) = api.get(&format!("/api/v1/skus/{code}/sellable")).await;
    assert_eq!(s, 200, "{b}");
    b
}

fn list_codes(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .iter()
        .map(|r| r["code"].as_str().unwrap().to_string())
        .collect()
}

/// TEA's balance row set by hand (no ledger row, no event): as another instance's or a bug's
/// write would look.
async fn tea_total_by_hand(app: &TestApp, total: i64) {
    sqlx::query(
        "UPDATE stock_balances SET total = $1 WHERE sku_id IN (SELECT id FROM skus WHERE code = 'TEA')",
    )
    .bind(total)
    .execute(&app.db.pool)
    .await
    .unwrap();
}

async fn run_reconciliation(app: &TestApp) {
    reconcile::run(&app.db, "cli", &Actor::system("test"))
        .await
        .unwrap();
}

// ---- the table -----------------------------------------------------------------------------

mod kept;
mod pages;
mod promise;
mod table;

#[allow(unused_imports)]
use {kept::*, pages::*, promise::*, table::*};
