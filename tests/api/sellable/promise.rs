//! The promise: a verdict and a real hold agree, on random situations.

#[allow(unused_imports)]
use super::*;

/// One random situation: its SKU code and kind.
pub(super) async fn random_situation(
    app: &TestApp,
    api: &Api,
    rng: &mut rand::rngs::StdRng,
    i: usize,
) -> (String, &'static str) {
    let kind = ["goods", "service", "voucher"][rng.random_range(0..3)];
    let code = format!("R{i}");
    product(api, kind, &code).await;
    match kind {
        "goods" => {
            let received = rng.random_range(0..=3);
            if received > 0 {
                adjust(api, &code, "RECEIVE", received, "delivery").await;
                let held = rng.random_range(0..=received);
                if held > 0 {
                    reserved(api, &code, held).await;
                }
                let frozen = rng.random_range(0..=received - held);
                if frozen > 0 {
                    adjust(api, &code, "FREEZE", frozen, "check").await;
                }
            }
        }
        "service" => {
            for _ in 0..rng.random_range(0..=2) {
                let beyond = rng.random_bool(0.2);
                let days = if beyond {
                    35.0
                } else {
                    rng.random_range(1.0..6.0)
                };
                let capacity = rng.random_range(1..=2);
                let id = slot(api, &code, days, capacity, None).await;
                for _ in 0..rng.random_range(0..=capacity) {
                    let (s, b) = book(api, id).await;
                    assert_eq!(s, 201, "{b}");
                }
                if rng.random_bool(0.3) {
                    let (s, b) = api
                        .post(
                            &format!("/api/v1/slots/{id}/close"),
                            json!({"reason": "maintenance"}),
                        )
                        .await;
                    assert_eq!(s, 200, "{b}");
                }
            }
        }
        _ => {
            let n = rng.random_range(0..=3);
            if n > 0 {
                api.import_codes(&code, "codes.txt", &codes(&code, n), "valid")
                    .await;
                let held = rng.random_range(0..=n as i64);
                if held > 0 {
                    reserved(api, &code, held).await;
                }
            }
        }
    }
    // The catalog last (holds above need the product on sale).
    match rng.random_range(0..10) {
        0 => patch_product(api, &code, json!({"status": "DRAFT"})).await,
        1 => patch_product(api, &code, json!({"status": "OFFLINE"})).await,
        2 => patch_product(api, &code, json!({"sale_starts_at": at(api, 1.0)})).await,
        3 => {
            patch_product(
                api,
                &code,
                json!({"sale_starts_at": at(api, -2.0), "sale_ends_at": at(api, -1.0)}),
            )
            .await
        }
        4 => set_price(app, api, &code, 0).await,
        _ => {}
    }
    (code, kind)
}

/// Slots of a service inside the booking window that have not started.
pub(super) async fn window_slots(app: &TestApp, code: &str) -> Vec<i64> {
    let now = app.now_ms();
    sqlx::query_scalar(
        "SELECT sl.id FROM slots sl JOIN skus k ON k.id = sl.sku_id WHERE k.code = $1 AND sl.starts_at > $2 AND sl.starts_at < $3 ORDER BY sl.starts_at",
    )
    .bind(code)
    .bind(now)
    .bind(now + 28 * 86_400_000)
    .fetch_all(&app.db.pool)
    .await
    .unwrap()
}

both!(
    whenever_the_verdict_says_sellable_one_unit_can_be_held_and_whenever_it_blocks_the_hold_fails,
    |app| {
        let api = app.acme_api().await;
        let seed: u64 = std::env::var("SELLABLE_PROPERTY_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| rand::rng().random());
        eprintln!("property seed {seed} (SELLABLE_PROPERTY_SEED={seed} replays it)");
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let (mut yes, mut no) = (0, 0);
        for i in 0..36 {
            let (code, kind) = random_situation(&app, &api, &mut rng, i).await;
            let v = verdict(&api, &code).await;
            let what = format!("seed {seed}, {code}: {v}");
            let blocked = v["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["blocking"] == true);
            assert_eq!(v["sellable"], !blocked, "{what}");
            if kind == "service" {
                if v["sellable"] == true {
                    let first = v["next_slots"][0]["slot_id"].as_i64().unwrap();
                    let (s, b) = book(&api, first).await;
                    assert_eq!(
                        s, 201,
                        "sellable, yet booking the next slot failed: {b}; {what}"
                    );
                    yes += 1;
                } else {
                    for id in window_slots(&app, &code).await {
                        let (s, b) = book(&api, id).await;
                        assert_ne!(s, 201, "blocked, yet slot {id} was booked: {b}; {what}");
                    }
                    no += 1;
                }
            } else {
                let (s, b) = reserve(&api, &code, 1).await;
                if v["sellable"] == true {
                    assert_eq!(
                        s, 201,
                        "sellable, yet one unit could not be reserved: {b}; {what}"
                    );
                    yes += 1;
                } else {
                    assert_ne!(s, 201, "blocked, yet one unit was reserved: {b}; {what}");
                    no += 1;
                }
            }
        }
        assert!(
            yes > 0 && no > 0,
            "both outcomes seen (sellable {yes}, blocked {no}), seed {seed}"
        );
    }
);

// ---- back office -------------------------------------------------------------------------
