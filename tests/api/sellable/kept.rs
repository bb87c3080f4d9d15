//! The read model: kept catalogs caught up from the change events equal the live judgement.

#[allow(unused_imports)]
use super::*;

/// The kept catalog as a page or the listing gets it, and the catalog judged now, side by side.
pub(super) async fn kept_and_live(
    app: &TestApp,
) -> (
    Vec<sellable::domain::sellable::Verdict>,
    Vec<sellable::domain::sellable::Verdict>,
) {
    use sellable::domain::{sellable as s, Scope};
    let th = app.state.config.sellable_thresholds();
    let kept = s::recent_catalog(&app.db, &th, Scope::All, None)
        .await
        .unwrap()
        .iter()
        .map(|v| (**v).clone())
        .collect();
    let live = s::catalog(&app.db, &th, Scope::All, None).await.unwrap();
    (kept, live)
}

/// As [`model_equals_live`] for the catalog a merchant's pages keep (a merchant's pages never
/// keep the whole one): the kept catalog is the one compared, not one judged whole for the
/// comparison.
pub(super) async fn merchant_model_equals_live(app: &TestApp, slug: &str, after: &str) {
    use sellable::domain::{sellable as s, MerchantId, Scope};
    let m = MerchantId(
        sqlx::query_scalar("SELECT id FROM merchants WHERE slug = $1")
            .bind(slug)
            .fetch_one(&app.db.pool)
            .await
            .unwrap(),
    );
    let th = app.state.config.sellable_thresholds();
    let judged = sellable::domain::sellable::kept(&app.db).stats().0;
    let kept: Vec<s::Verdict> = s::recent_catalog(&app.db, &th, Scope::Merchant(m), None)
        .await
        .unwrap()
        .iter()
        .map(|v| (**v).clone())
        .collect();
    assert_eq!(
        sellable::domain::sellable::kept(&app.db).stats().0,
        judged,
        "after {after}: the kept catalog was not usable"
    );
    let live = s::catalog(&app.db, &th, Scope::Merchant(m), None)
        .await
        .unwrap();
    assert_eq!(kept.len(), live.len(), "after {after}");
    for (k, l) in kept.iter().zip(&live) {
        assert_eq!(
            k, l,
            "after {after}: the kept verdict of {} differs from the live one",
            l.sku
        );
    }
}

/// Eight views of a merchant's three-SKU catalog at once, as kept or asked for fresh: how many
/// whole judgements they made.
pub(super) async fn eight_at_once(
    app: &TestApp,
    m: sellable::domain::MerchantId,
    fresh: bool,
) -> u64 {
    use sellable::domain::{sellable as s, Scope};
    let th = app.state.config.sellable_thresholds();
    let judged = sellable::domain::sellable::kept(&app.db).stats().0;
    let views: Vec<_> = (0..8)
        .map(|_| {
            let db = app.db.clone();
            tokio::spawn(async move {
                let c = if fresh {
                    s::judged_now(&db, &th, Scope::Merchant(m), None).await
                } else {
                    s::recent_catalog(&db, &th, Scope::Merchant(m), None).await
                };
                c.unwrap().len()
            })
        })
        .collect();
    for v in views {
        assert_eq!(v.await.unwrap(), 3);
    }
    sellable::domain::sellable::kept(&app.db).stats().0 - judged
}

pub(super) async fn model_equals_live(app: &TestApp, after: &str) {
    let (kept, live) = kept_and_live(app).await;
    assert_eq!(kept.len(), live.len(), "after {after}");
    for (k, l) in kept.iter().zip(&live) {
        assert_eq!(
            k, l,
            "after {after}: the kept verdict of {} differs from the live one",
            l.sku
        );
    }
}

both!(
    an_event_numbered_after_a_catch_up_read_the_last_number_is_still_in_that_catch_up,
    |app| {
        use sellable::domain::trail::events;
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        events::sequence(&app.db).await.unwrap();
        // A kept catalog catching up reads the last number first (it numbers nothing itself)…
        let mark = events::last_numbered(&app.db).await.unwrap();
        api.receive("TEA", "main", 1).await;
        // …and the sequencer numbers the receipt's event before the catch-up reads the events:
        // the receipt is neither unnumbered any more nor at or below the number read.
        events::sequence(&app.db).await.unwrap();
        assert!(events::last_numbered(&app.db).await.unwrap() > mark);
        let touched = reconcile::changed::touched_since(&app.db, mark)
            .await
            .unwrap();
        assert_eq!(touched.skus, vec![app.sku_id("TEA").await]);
    }
);

pub(super) async fn the_kept_catalog_caught_up_from_change_events_equals_the_live_judgement_after_any_sequence_of_changes(
    backend: crate::helpers::Backend,
) {
    // No watcher (its first pass could land anywhere below): what is kept is kept up by the
    // events alone, for an hour.
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    sellable::domain::sellable::kept(&app.db).set_max_age(3_600_000);
    let api = app.acme_api().await;
    app.warehouse("acme", "east", 5).await;
    let goods = ["G1", "G2", "G3", "G4"];
    for (i, g) in goods.iter().enumerate() {
        product(&api, "goods", g).await;
        if i > 0 {
            adjust(&api, g, "RECEIVE", 4 + i as i64, "delivery").await;
        }
    }
    api.receive("G2", "east", 2).await;
    let mut slots = Vec::new();
    for s in ["S1", "S2"] {
        product(&api, "service", s).await;
        for day in [1.5, 2.5, 9.0] {
            slots.push(slot(&api, s, day, 2, None).await);
        }
    }
    for v in ["V1", "V2"] {
        product(&api, "voucher", v).await;
        api.import_codes(v, "codes.txt", &codes(v, 4), "valid")
            .await;
    }
    // A service with no schedule yet (`no_schedule`): schedule saves below give it one or
    // take it away.
    product(&api, "service", "S3").await;
    let (judged_before, caught_before) = sellable::domain::sellable::kept(&app.db).stats();
    model_equals_live(&app, "the first judgement").await;

    let seed: u64 = std::env::var("SELLABLE_PROPERTY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    println!("seed {seed} (SELLABLE_PROPERTY_SEED={seed} replays it)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut held: Vec<String> = Vec::new();
    let mut booked: Vec<String> = Vec::new();
    let mut orders = 0;
    let mut made = 0;
    let mut closures: Vec<i64> = Vec::new();
    for step in 0..80 {
        let sku = ["G1", "G2", "G3", "G4", "V1", "V2"][rng.random_range(0..6)];
        let (what, status) = match rng.random_range(0..14) {
            0 | 1 => {
                let (s, b) = reserve(&api, sku, rng.random_range(1..=3)).await;
                if s == 201 {
                    held.push(b["order_id"].as_str().unwrap().to_string());
                }
                (format!("reserve {sku}: {s}"), s)
            }
            2 if !held.is_empty() => {
                let o = held.swap_remove(rng.random_range(0..held.len()));
                let (s, _) = api
                    .post(&format!("/api/v1/reservations/{o}/confirm"), json!({}))
                    .await;
                (format!("confirm {o}: {s}"), s)
            }
            3 if !held.is_empty() => {
                let o = held.swap_remove(rng.random_range(0..held.len()));
                let (s, _) = api
                    .post(&format!("/api/v1/reservations/{o}/release"), json!({}))
                    .await;
                (format!("release {o}: {s}"), s)
            }
            4 if sku.starts_with('G') => {
                let kind = ["RECEIVE", "WRITE_OFF", "FREEZE"][rng.random_range(0..3)];
                let (s, _) = api
                    .post(
                        "/api/v1/stock/adjustments",
                        json!({"sku": sku, "warehouse": "main", "kind": kind, "qty": 1, "reason": "count",
                               "idempotency_key": uuid::Uuid::new_v4().to_string()}),
                    )
                    .await;
                (format!("{kind} {sku}: {s}"), s)
            }
            5 | 6 => {
                let id = slots[rng.random_range(0..slots.len())];
                let (s, b) = book(&api, id).await;
                if s == 201 {
                    booked.push(b["reference"].as_str().unwrap().to_string());
                }
                (format!("book slot {id}: {s}"), s)
            }
            7 if !booked.is_empty() => {
                let r = booked.swap_remove(rng.random_range(0..booked.len()));
                let (s, _) = api
                    .post(&format!("/api/v1/bookings/{r}/cancel"), json!({}))
                    .await;
                (format!("cancel {r}: {s}"), s)
            }
            8 if !booked.is_empty() => {
                let r = booked[rng.random_range(0..booked.len())].clone();
                let to = slots[rng.random_range(0..slots.len())];
                let (s, _) = api
                    .post(
                        &format!("/api/v1/bookings/{r}/move"),
                        json!({ "slot_id": to }),
                    )
                    .await;
                (format!("move {r} to {to}: {s}"), s)
            }
            9 => {
                // A catalog edit writes its event too (`sku.updated`): a price, a limit, or its
                // product's status for all its SKUs at once.
                match rng.random_range(0..3) {
                    0 => {
                        let price = rng.random_range(0..3);
                        let (s, _) = api.patch_sku(sku, json!({ "price": price })).await;
                        (format!("price of {sku} to {price}: {s}"), s)
                    }
                    1 => {
                        let max = rng.random_range(1..3);
                        let (s, _) = api.patch_sku(sku, json!({ "max_per_order": max })).await;
                        (format!("max per order of {sku} to {max}: {s}"), s)
                    }
                    _ => {
                        let product: i64 =
                            sqlx::query_scalar("SELECT product_id FROM skus WHERE code = $1")
                                .bind(sku)
                                .fetch_one(&app.db.pool)
                                .await
                                .unwrap();
                        let status = ["ONLINE", "OFFLINE"][rng.random_range(0..2)];
                        let (s, _) = api
                            .call(
                                reqwest::Method::PATCH,
                                &format!("/api/v1/products/{product}"),
                                Some(json!({ "status": status })),
                            )
                            .await;
                        (format!("product of {sku} {status}: {s}"), s)
                    }
                }
            }
            10 => {
                // A SKU made (`sku.created`): put in its place among the kept ones, first,
                // between or last in code order.
                made += 1;
                let code = format!("{}{made}", ["A", "G25", "Z"][rng.random_range(0..3)]);
                let kind = ["goods", "service", "voucher"][rng.random_range(0..3)];
                product(&api, kind, &code).await;
                (format!("{kind} {code} made"), 201)
            }
            11 => {
                // A slot changed by hand (its `slot.*` event): resized, closed, opened, or a
                // new one made.
                let id = slots[rng.random_range(0..slots.len())];
                match rng.random_range(0..6) {
                    0 => {
                        let capacity = rng.random_range(1..4);
                        let (s, _) = api
                            .call(
                                reqwest::Method::PATCH,
                                &format!("/api/v1/slots/{id}"),
                                Some(json!({ "capacity": capacity })),
                            )
                            .await;
                        (format!("slot {id} to {capacity} places: {s}"), s)
                    }
                    1 => {
                        let (s, _) = api
                            .post(
                                &format!("/api/v1/slots/{id}/close"),
                                json!({"reason": "leave"}),
                            )
                            .await;
                        (format!("slot {id} closed: {s}"), s)
                    }
                    2 => {
                        let (s, _) = api
                            .post(&format!("/api/v1/slots/{id}/open"), json!({}))
                            .await;
                        (format!("slot {id} opened: {s}"), s)
                    }
                    4 => {
                        // A closure of the store for some hours from tomorrow: the slots it
                        // covers close (and a verdict quotes it).
                        let from = api.now() + chrono::Duration::hours(rng.random_range(20..60));
                        let to = from + chrono::Duration::hours(rng.random_range(1..30));
                        let (s, b) = api
                            .post(
                                "/api/v1/closures",
                                json!({"starts_at": from.to_rfc3339(), "ends_at": to.to_rfc3339(),
                                    "reason": "stocktake"}),
                            )
                            .await;
                        if s == 201 {
                            closures.push(b["id"].as_i64().unwrap());
                        }
                        (format!("closure {from} to {to}: {s}"), s)
                    }
                    5 if !closures.is_empty() => {
                        let id = closures.swap_remove(rng.random_range(0..closures.len()));
                        let (s, _) = api
                            .post(&format!("/api/v1/closures/{id}/reopen"), json!({}))
                            .await;
                        (format!("closure {id} reopened: {s}"), s)
                    }
                    _ => {
                        let s = ["S1", "S2"][rng.random_range(0..2)];
                        let days = 3.0 + rng.random_range(0..40) as f64 / 8.0;
                        slots.push(slot(&api, s, days, rng.random_range(1..3), None).await);
                        (format!("slot of {s} made in {days} days"), 201)
                    }
                }
            }
            12 => {
                // A schedule saved (the rules' `sku.updated`, the slots' `slot.*`): S3 gets a
                // day of slots or loses them all, S1 gets another day.
                let service = ["S1", "S3"][rng.random_range(0..2)];
                let rules = if rng.random_range(0..3) == 0 {
                    json!([])
                } else {
                    let day = ["MON", "WED", "SAT"][rng.random_range(0..3)];
                    json!([{"weekdays": [day], "opens": "10:00", "closes": "12:00",
                        "slot_minutes": 60, "capacity": rng.random_range(1..3)}])
                };
                let (s, _) = api
                    .post(
                        &format!("/api/v1/services/{service}/schedule"),
                        json!({ "rules": rules }),
                    )
                    .await;
                (format!("schedule of {service} saved, {rules}: {s}"), s)
            }
            13 => {
                // A code of V1 or V2 locked, unlocked or invalidated by hand (its
                // `code.state_changed`).
                let code: i64 = sqlx::query_scalar(
                    "SELECT c.id FROM codes c JOIN skus k ON k.id = c.sku_id
                     WHERE k.code IN ('V1', 'V2') ORDER BY c.id",
                )
                .fetch_all(&app.db.pool)
                .await
                .unwrap()[rng.random_range(0..8)];
                let action =
                    ["lock", "lock", "unlock", "unlock", "invalidate"][rng.random_range(0..5)];
                let (s, _) = api
                    .post(
                        &format!("/api/v1/codes/{code}/{action}"),
                        json!({"reason": "counter check"}),
                    )
                    .await;
                (format!("code {code} {action}: {s}"), s)
            }
            _ => continue,
        };
        // A refused order changed nothing: no event, nothing to catch up.
        if (200..300).contains(&status) {
            orders += 1;
        }
        model_equals_live(&app, &format!("step {step}, {what} (seed {seed})")).await;
    }
    let (judged, caught) = sellable::domain::sellable::kept(&app.db).stats();
    assert_eq!(
        judged - judged_before,
        1,
        "judged whole once at first, never after an order, a catalog edit, a SKU made or a \
         slot or schedule changed"
    );
    // An order answered 200 may change nothing (a release said twice): no event, nothing to
    // catch up. Most do.
    assert!(
        caught - caught_before > orders / 2,
        "orders were caught up from their events: {} times for {orders} orders",
        caught - caught_before
    );
}

crate::on_both!(the_kept_catalog_caught_up_from_change_events_equals_the_live_judgement_after_any_sequence_of_changes);
