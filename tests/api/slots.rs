use std::collections::HashMap;

use serde_json::{json, Value};

use crate::both;
use crate::helpers::{Api, TestApp};

/// A one-off slot `hours` from now lasting an hour.
async fn slot(api: &Api, sku: &str, hours: i64, capacity: i64, staff: Option<&str>) -> i64 {
    let start = api.now() + chrono::Duration::hours(hours);
    let mut body = json!({"sku": sku, "starts_at": start.to_rfc3339(), "ends_at": (start + chrono::Duration::hours(1)).to_rfc3339(), "capacity": capacity});
    if let Some(s) = staff {
        body["staff"] = json!(s);
    }
    let (s, b) = api.post("/api/v1/slots", body).await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_i64().unwrap()
}

async fn slot_json(api: &Api, sku: &str, id: i64) -> Value {
    let (s, list) = api
        .get(&format!(
            "/api/v1/services/{sku}/slots?from={}",
            urlenc(&(api.now() - chrono::Duration::days(1)).to_rfc3339())
        ))
        .await;
    assert_eq!(s, 200, "{list}");
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == id)
        .cloned()
        .expect("slot listed")
}

fn urlenc(s: &str) -> String {
    s.replace('+', "%2B").replace(':', "%3A")
}

async fn active_count(app: &TestApp, slot: i64) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM bookings WHERE slot_id = $1 AND status <> 'CANCELLED'")
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn booked(app: &TestApp, slot: i64) -> i64 {
    sqlx::query_scalar("SELECT booked FROM slots WHERE id = $1")
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

both!(
    fifty_customers_racing_for_the_last_five_places_get_exactly_five,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let id = slot(&api, "CUT", 24, 8, None).await;
        for i in 0..3 {
            assert_eq!(
                api.book(
                    id,
                    "Early",
                    &format!("+86 1380000000{i}"),
                    Some(&format!("early-{i}"))
                )
                .await
                .0,
                201
            );
        }
        let tasks: Vec<_> = (0..50)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.book(
                        id,
                        &format!("Customer {i}"),
                        &format!("+49 170 {i:07}"),
                        Some(&format!("race-{i}")),
                    )
                    .await
                })
            })
            .collect();
        let mut by: HashMap<u16, usize> = HashMap::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            if s == 409 {
                assert_eq!(b["error"], "slot_full", "{b}");
            }
            *by.entry(s).or_default() += 1;
        }
        assert_eq!(
            (by.get(&201), by.get(&409)),
            (Some(&5), Some(&45)),
            "{by:?}"
        );
        assert_eq!(booked(&app, id).await, 8);
        assert_eq!(
            active_count(&app, id).await,
            8,
            "booked always equals the active bookings"
        );
        // The booking and audit rows go in before the slot's guard decides: a customer it refuses
        // must leave neither behind.
        assert_eq!(app.count("bookings").await, 8);
        let audited: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'booking.create'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(audited, 8, "one audit row per booking made");
        let s = slot_json(&api, "CUT", id).await;
        assert_eq!(
            (s["remaining"].as_i64(), s["booked"].as_i64()),
            (Some(0), Some(8))
        );
    }
);

both!(
    one_customer_submitting_ten_times_at_once_gets_one_booking,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let id = slot(&api, "CUT", 24, 10, None).await;
        let tasks: Vec<_> = (0..10)
            .map(|i| {
                let api = api.clone();
                // Half reuse one key (double click), half send fresh keys (reload and resubmit).
                let key = if i % 2 == 0 {
                    "same-key".to_string()
                } else {
                    format!("key-{i}")
                };
                tokio::spawn(
                    async move { api.book(id, "Ann", "+86 138 0013 8000", Some(&key)).await },
                )
            })
            .collect();
        let mut refs = std::collections::HashSet::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            match s {
                201 => refs.insert(b["reference"].as_str().unwrap().to_string()),
                409 => {
                    assert_eq!(b["error"], "already_booked", "{b}");
                    refs.insert(b["reference"].as_str().unwrap().to_string())
                }
                _ => panic!("{s} {b}"),
            };
        }
        assert_eq!(
            refs.len(),
            1,
            "every answer names the one booking: {refs:?}"
        );
        assert_eq!(booked(&app, id).await, 1);
        assert_eq!(active_count(&app, id).await, 1);
        // The same person typed differently is the same customer.
        let (s, b) = api
            .book(id, "Ann", "+86-138-0013-8000", Some("other"))
            .await;
        assert_eq!((s, b["error"].as_str().unwrap()), (409, "already_booked"));
    }
);

both!(
    concurrent_cancels_and_books_on_a_full_slot_keep_the_count_true,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let id = slot(&api, "CUT", 24, 5, None).await;
        let mut refs = Vec::new();
        for i in 0..5 {
            refs.push(
                api.book(
                    id,
                    "Regular",
                    &format!("+86 138 0000 00{i:02}"),
                    Some(&format!("r{i}")),
                )
                .await
                .1["reference"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        let mut tasks = Vec::new();
        for (i, r) in refs.iter().enumerate() {
            let (a, r) = (api.clone(), r.clone());
            tasks.push(tokio::spawn(async move {
                a.post(&format!("/api/v1/bookings/{r}/cancel"), json!({}))
                    .await
                    .0
            }));
            for j in 0..4 {
                let a = api.clone();
                tasks.push(tokio::spawn(async move {
                    a.book(
                        id,
                        "Walk-in",
                        &format!("+86 139 1111 {i}{j:03}"),
                        Some(&format!("w{i}-{j}")),
                    )
                    .await
                    .0
                }));
            }
        }
        for t in tasks {
            let s = t.await.unwrap();
            assert!(s == 200 || s == 201 || s == 409, "{s}");
        }
        let b = booked(&app, id).await;
        assert!((0..=5).contains(&b), "booked {b} out of range");
        assert_eq!(b, active_count(&app, id).await);
    }
);

both!(booking_refusals_say_why_and_change_nothing, |app| {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    api.product("goods", "TEA").await;
    let full = slot(&api, "CUT", 24, 1, None).await;
    let (s, first) = api.book(full, "Ann", "+86 13800138000", Some("a")).await;
    assert_eq!(s, 201);
    let (s, b) = api.book(full, "Bob", "+86 13900139000", Some("b")).await;
    assert_eq!(
        (
            s,
            b["error"].as_str().unwrap(),
            b["message"].as_str().unwrap()
        ),
        (409, "slot_full", "This slot is full.")
    );
    let (s, b) = api.book(full, "Ann", "+86 13800138000", Some("c")).await;
    assert_eq!((s, b["error"].as_str().unwrap()), (409, "already_booked"));
    assert_eq!(b["reference"], first["reference"]);
    let closed = slot(&api, "CUT", 25, 3, None).await;
    api.post(
        &format!("/api/v1/slots/{closed}/close"),
        json!({"reason": "Boiler repair"}),
    )
    .await;
    let (s, b) = api.book(closed, "Bob", "+86 13900139000", Some("d")).await;
    assert_eq!(
        (
            s,
            b["error"].as_str().unwrap(),
            b["message"].as_str().unwrap()
        ),
        (409, "slot_closed", "This slot is closed: Boiler repair.")
    );
    let started = slot(&api, "CUT", 26, 3, None).await;
    sqlx::query("UPDATE slots SET starts_at = $1 WHERE id = $2")
        .bind(app.now_ms() - 60_000)
        .bind(started)
        .execute(&app.db.pool)
        .await
        .unwrap();
    let (s, b) = api.book(started, "Bob", "+86 13900139000", Some("e")).await;
    assert_eq!((s, b["error"].as_str().unwrap()), (409, "slot_started"));
    let (s, b) = api.book(999_999, "Bob", "+86 13900139000", Some("f")).await;
    assert_eq!((s, b["error"].as_str().unwrap()), (404, "not_found"));
    let ok = slot(&api, "CUT", 27, 3, None).await;
    let long_name = "N".repeat(101);
    for (name, phone, code, field) in [
        ("", "+86 13900139000", "required", "customer_name"),
        (
            long_name.as_str(),
            "+86 13900139000",
            "too_long",
            "customer_name",
        ),
        ("12345", "+86 13900139000", "invalid_name", "customer_name"),
        ("Bob", "", "required", "phone"),
        ("Bob", "12", "invalid_phone", "phone"),
        ("Bob", "call me maybe", "invalid_phone", "phone"),
        ("Bob", "+86 1390013900013900139", "invalid_phone", "phone"),
    ] {
        let (s, b) = api
            .book(
                ok,
                name,
                phone,
                Some(&format!("bad-{code}-{field}-{}", phone.len())),
            )
            .await;
        assert_eq!(s, 422, "{name:?} {phone:?}: {b}");
        assert!(
            b["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == code && f["field"] == field),
            "{b}"
        );
    }
    assert_eq!(booked(&app, ok).await, 0);
    let (s, _) = api
        .post("/api/v1/services/TEA/schedule", json!({"rules": []}))
        .await;
    assert_eq!(s, 422, "goods are not booked in slots");
});

both!(
    cancel_frees_the_place_once_and_is_refused_after_the_start,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let id = slot(&api, "CUT", 24, 1, None).await;
        let (_, b) = api.book(id, "Ann", "+86 13800138000", Some("a")).await;
        let r = b["reference"].as_str().unwrap().to_string();
        assert_eq!(r.len(), 10);
        let (s, b) = api
            .post(
                &format!("/api/v1/bookings/{r}/cancel"),
                json!({"reason": "ill"}),
            )
            .await;
        assert_eq!((s, b["status"].as_str().unwrap()), (200, "CANCELLED"));
        assert_eq!(booked(&app, id).await, 0);
        let (s, _) = api
            .post(&format!("/api/v1/bookings/{r}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200, "cancelling twice is harmless");
        assert_eq!(booked(&app, id).await, 0, "and frees nothing twice");
        // The customer may book again after cancelling.
        let (s, b) = api.book(id, "Ann", "+86 13800138000", Some("again")).await;
        assert_eq!(s, 201, "{b}");
        let r2 = b["reference"].as_str().unwrap().to_string();
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{r2}/attended"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str().unwrap()), (409, "slot_not_started"));
        sqlx::query("UPDATE slots SET starts_at = $1 WHERE id = $2")
            .bind(app.now_ms() - 1000)
            .bind(id)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{r2}/cancel"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str().unwrap()), (409, "slot_started"));
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{r2}/no-show"), json!({}))
            .await;
        assert_eq!((s, b["status"].as_str().unwrap()), (200, "NO_SHOW"));
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{r2}/attended"), json!({}))
            .await;
        assert_eq!(
            (s, b["status"].as_str().unwrap()),
            (200, "ATTENDED"),
            "a mistaken mark can be corrected"
        );
        assert_eq!(
            booked(&app, id).await,
            1,
            "attended and no-show keep the place counted"
        );
        let (s, b) = api.get(&format!("/api/v1/bookings/{r2}")).await;
        assert_eq!(
            (
                s,
                b["status"].as_str().unwrap(),
                b["name"].as_str().unwrap()
            ),
            (200, "ATTENDED", "Ann")
        );
        assert_eq!(api.get("/api/v1/bookings/NOSUCHREF1").await.0, 404);
    }
);

both!(
    capacity_never_drops_below_booked_and_slot_input_is_checked,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.post("/api/v1/staff", json!({"name": "Mia"})).await;
        let id = slot(&api, "CUT", 24, 3, Some("Mia")).await;
        api.book(id, "Ann", "+86 13800138000", Some("a")).await;
        api.book(id, "Bob", "+86 13900139000", Some("b")).await;
        let (s, b) = api
            .call(
                reqwest::Method::PATCH,
                &format!("/api/v1/slots/{id}"),
                Some(json!({"capacity": 1})),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str().unwrap()),
            (422, "capacity_below_booked")
        );
        assert_eq!(
            b["message"],
            "Capacity cannot be 1: 2 places are already booked."
        );
        let (s, b) = api
            .call(
                reqwest::Method::PATCH,
                &format!("/api/v1/slots/{id}"),
                Some(json!({"capacity": 2})),
            )
            .await;
        assert_eq!((s, b["capacity"].as_i64()), (200, Some(2)));
        let now = app.now();
        let at = |h: i64| (now + chrono::Duration::hours(h)).to_rfc3339();
        for (body, code) in [
            (
                json!({"sku": "CUT", "starts_at": at(-2), "ends_at": at(-1), "capacity": 1}),
                "slot_in_past",
            ),
            (
                json!({"sku": "CUT", "starts_at": at(5), "ends_at": at(4), "capacity": 1}),
                "invalid_period",
            ),
            (
                json!({"sku": "CUT", "starts_at": at(5), "ends_at": at(6), "capacity": 0}),
                "invalid_capacity",
            ),
            (
                json!({"sku": "CUT", "starts_at": at(5), "ends_at": at(6), "capacity": -3}),
                "invalid_capacity",
            ),
            (
                json!({"sku": "CUT", "starts_at": at(5), "ends_at": at(6), "capacity": 1001}),
                "invalid_capacity",
            ),
            (
                json!({"sku": "CUT", "starts_at": "soon", "ends_at": at(6), "capacity": 1}),
                "invalid_time",
            ),
            (
                json!({"sku": "CUT", "starts_at": at(5), "ends_at": at(6), "capacity": 1, "staff": "Nobody"}),
                "unknown_staff",
            ),
            (
                json!({"sku": "NOPE", "starts_at": at(5), "ends_at": at(6), "capacity": 1}),
                "unknown_sku",
            ),
        ] {
            let (s, b) = api.post("/api/v1/slots", body.clone()).await;
            assert_eq!(s, 422, "{body}: {b}");
            assert_eq!(b["error"], code, "{body}: {b}");
        }
        // Overlapping one-off slots for the same staff member are refused; racing ones too.
        let (s, b) = api.post("/api/v1/slots", json!({"sku": "CUT", "starts_at": (now + chrono::Duration::minutes(24 * 60 + 30)).to_rfc3339(), "ends_at": at(26), "capacity": 1, "staff": "Mia"})).await;
        assert_eq!((s, b["error"].as_str().unwrap()), (409, "slot_overlap"));
        let tasks: Vec<_> = (0..6)
        .map(|i| {
            let api = api.clone();
            let (s, e) = ((now + chrono::Duration::hours(40) + chrono::Duration::minutes(i * 10)).to_rfc3339(), (now + chrono::Duration::hours(41) + chrono::Duration::minutes(i * 10)).to_rfc3339());
            tokio::spawn(async move { api.post("/api/v1/slots", json!({"sku": "CUT", "starts_at": s, "ends_at": e, "capacity": 1, "staff": "Mia"})).await.0 })
        })
        .collect();
        let mut created = 0;
        for t in tasks {
            if t.await.unwrap() == 201 {
                created += 1;
            }
        }
        assert_eq!(created, 1, "overlapping slots raced: only one may exist");
        let slots_before = app.count("slots").await;
        assert_eq!(app.count("slots").await, slots_before);
    }
);

both!(
    leave_closes_exactly_the_staff_members_slots_and_reopening_restores_them,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.post("/api/v1/staff", json!({"name": "Mia"})).await;
        api.post("/api/v1/staff", json!({"name": "Leo"})).await;
        let mia_in = slot(&api, "CUT", 30, 2, Some("Mia")).await;
        let mia_later = slot(&api, "CUT", 100, 2, Some("Mia")).await;
        let leo_in = slot(&api, "CUT", 30, 2, Some("Leo")).await;
        let nobody_in = slot(&api, "CUT", 31, 2, None).await;
        let already_closed = slot(&api, "CUT", 32, 2, Some("Mia")).await;
        api.post(
            &format!("/api/v1/slots/{already_closed}/close"),
            json!({"reason": "Training"}),
        )
        .await;
        let (_, b) = api.book(mia_in, "Ann", "+86 13800138000", Some("a")).await;
        let ann_ref = b["reference"].as_str().unwrap().to_string();
        let now = app.now();
        let (s, c) = api
        .post("/api/v1/closures", json!({"staff": "Mia", "starts_at": (now + chrono::Duration::hours(24)).to_rfc3339(), "ends_at": (now + chrono::Duration::hours(48)).to_rfc3339(), "reason": "Annual leave"}))
        .await;
        assert_eq!(s, 201, "{c}");
        let contacts = c["bookings_to_contact"].as_array().unwrap();
        assert_eq!(contacts.len(), 1);
        assert_eq!(
            (
                contacts[0]["reference"].as_str(),
                contacts[0]["phone"].as_str()
            ),
            (Some(ann_ref.as_str()), Some("+86 138 0013 8000"))
        );
        let status = |id: i64| {
            let api = api.clone();
            async move {
                let s = slot_json(&api, "CUT", id).await;
                (
                    s["status"].as_str().unwrap().to_string(),
                    s["closed_reason"].as_str().unwrap_or("").to_string(),
                )
            }
        };
        assert_eq!(
            status(mia_in).await,
            ("CLOSED".into(), "Annual leave".into())
        );
        assert_eq!(status(mia_later).await.0, "OPEN", "outside the period");
        assert_eq!(status(leo_in).await.0, "OPEN", "another staff member");
        assert_eq!(status(nobody_in).await.0, "OPEN", "a slot without staff");
        assert_eq!(
            status(already_closed).await,
            ("CLOSED".into(), "Training".into()),
            "closed for another reason keeps it"
        );
        let (s, b) = api.book(mia_in, "Bob", "+86 13900139000", Some("b")).await;
        assert_eq!((s, b["error"].as_str().unwrap()), (409, "slot_closed"));
        let capacity: i64 = sqlx::query_scalar("SELECT capacity FROM slots WHERE id = $1")
            .bind(mia_in)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(capacity, 2, "leave never edits capacity");
        // A store-wide closure overlapping the same slot, then reopening the staff one: still closed.
        let (_, store_wide) = api
        .post("/api/v1/closures", json!({"starts_at": (now + chrono::Duration::hours(29)).to_rfc3339(), "ends_at": (now + chrono::Duration::hours(33)).to_rfc3339(), "reason": "Power cut"}))
        .await;
        assert_eq!(status(leo_in).await, ("CLOSED".into(), "Power cut".into()));
        let id = c["id"].as_i64().unwrap();
        let (s, _) = api
            .post(&format!("/api/v1/closures/{id}/reopen"), json!({}))
            .await;
        assert_eq!(s, 200);
        assert_eq!(
            status(mia_in).await,
            ("CLOSED".into(), "Power cut".into()),
            "another closure still covers it"
        );
        api.post(
            &format!("/api/v1/closures/{}/reopen", store_wide["id"]),
            json!({}),
        )
        .await;
        assert_eq!(status(mia_in).await.0, "OPEN");
        assert_eq!(status(leo_in).await.0, "OPEN");
        assert_eq!(
            status(already_closed).await,
            ("CLOSED".into(), "Training".into())
        );
        assert_eq!(
            booked(&app, mia_in).await,
            1,
            "Ann's booking survived the leave"
        );
        let (s, b) = api.post("/api/v1/closures", json!({"starts_at": (now + chrono::Duration::hours(5)).to_rfc3339(), "ends_at": (now + chrono::Duration::hours(4)).to_rfc3339(), "reason": "x"})).await;
        assert_eq!((s, b["error"].as_str().unwrap()), (422, "invalid_period"));
        let (s, b) = api.post("/api/v1/closures", json!({"starts_at": (now + chrono::Duration::hours(4)).to_rfc3339(), "ends_at": (now + chrono::Duration::hours(5)).to_rfc3339(), "reason": ""})).await;
        assert_eq!((s, b["error"].as_str().unwrap()), (422, "required"));
    }
);

both!(
    materialisation_is_idempotent_and_follows_daylight_saving,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        sellable::domain::tenancy::tenants::create_store(
            &app.db,
            &sellable::domain::Actor::system("test"),
            "acme",
            "berlin",
            "Berlin",
            "Europe/Berlin",
        )
        .await
        .unwrap();
        let (s, b) = api
        .post(
            "/api/v1/services/CUT/schedule",
            json!({"store": "berlin", "rules": [
                {"weekdays": ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"], "opens": "09:00", "closes": "10:00", "slot_minutes": 60, "capacity": 2},
                {"weekdays": ["SUN"], "opens": "01:30", "closes": "03:30", "slot_minutes": 30, "capacity": 1}
            ]}),
        )
        .await;
        assert_eq!(s, 200, "{b}");
        assert!(b["created"].as_i64().unwrap() >= 28, "{b}");
        let store = sellable::domain::tenancy::tenants::store_by_slug(
            &app.db,
            sellable::domain::MerchantId(1),
            "berlin",
        )
        .await
        .unwrap();
        let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'CUT'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        // Clocks go forward in Berlin on Sunday 28 March 2027 at 02:00.
        let from = chrono::NaiveDate::from_ymd_opt(2027, 3, 26).unwrap();
        let first = sellable::domain::slots::schedule::materialize(
            &app.db, sku_id, &store, from, 4, false, None,
        )
        .await
        .unwrap();
        let second = sellable::domain::slots::schedule::materialize(
            &app.db, sku_id, &store, from, 4, false, None,
        )
        .await
        .unwrap();
        assert_eq!(
            first.created,
            4 + 2,
            "four mornings, and Sunday's 01:30 and 03:00: 02:00 and 02:30 do not exist"
        );
        assert_eq!(second.created, 0, "running twice creates nothing new");
        let starts: Vec<i64> = sqlx::query_scalar("SELECT starts_at FROM slots WHERE store_id = $1 AND starts_at >= $2 AND starts_at < $3 ORDER BY starts_at")
        .bind(store.id)
        .bind(chrono::DateTime::parse_from_rfc3339("2027-03-26T00:00:00Z").unwrap().timestamp_millis())
        .bind(chrono::DateTime::parse_from_rfc3339("2027-03-30T00:00:00Z").unwrap().timestamp_millis())
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        let utc: Vec<String> = starts
            .iter()
            .map(|t| sellable::domain::kernel::validate::ms_to_rfc3339(*t))
            .collect();
        assert!(
            utc.contains(&"2027-03-26T08:00:00+00:00".to_string()),
            "09:00 CET is 08:00 UTC: {utc:?}"
        );
        assert!(
            utc.contains(&"2027-03-29T07:00:00+00:00".to_string()),
            "09:00 CEST is 07:00 UTC: {utc:?}"
        );
        assert!(
            utc.contains(&"2027-03-28T00:30:00+00:00".to_string()),
            "01:30 CET exists: {utc:?}"
        );
        assert!(
            utc.contains(&"2027-03-28T01:00:00+00:00".to_string()),
            "03:00 CEST exists: {utc:?}"
        );
        assert_eq!(
            utc.iter().filter(|t| t.starts_with("2027-03-28T0")).count(),
            3,
            "02:00 and 02:30 do not exist: {utc:?}"
        );
    }
);

both!(
    a_rule_change_never_deletes_booked_slots_and_reports_them,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let all_days = json!(["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]);
        let (s, b) = api.post("/api/v1/services/CUT/schedule", json!({"rules": [{"weekdays": all_days, "opens": "10:00", "closes": "12:00", "slot_minutes": 60, "capacity": 2}]})).await;
        assert_eq!(s, 200, "{b}");
        let created = b["created"].as_i64().unwrap();
        assert!(created >= 54, "{b}");
        let (_, again) = api.post("/api/v1/services/CUT/schedule", json!({"rules": [{"weekdays": all_days, "opens": "10:00", "closes": "12:00", "slot_minutes": 60, "capacity": 2}]})).await;
        assert_eq!(
            (again["created"].as_i64(), again["removed"].as_i64()),
            (Some(0), Some(0)),
            "the same rules change nothing"
        );
        let (_, list) = api.get("/api/v1/services/CUT/slots").await;
        let target = list
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["starts_at"].as_str().unwrap().contains("T03:00:00"))
            .cloned()
            .unwrap();
        let id = target["id"].as_i64().unwrap();
        api.book(id, "Ann", "+86 13800138000", Some("a")).await;
        // Afternoons only now: the morning slots go, except the booked one.
        let (s, b) = api.post("/api/v1/services/CUT/schedule", json!({"rules": [{"weekdays": all_days, "opens": "14:00", "closes": "15:00", "slot_minutes": 60, "capacity": 2}]})).await;
        assert_eq!(s, 200, "{b}");
        let kept = b["kept_with_bookings"].as_array().unwrap();
        assert_eq!(kept.len(), 1, "{b}");
        assert_eq!(kept[0]["slot_id"], id);
        assert_eq!(b["removed"].as_i64().unwrap(), created - 1);
        assert_eq!(booked(&app, id).await, 1);
        let (s, b) = api.post("/api/v1/services/CUT/schedule", json!({"rules": [{"weekdays": ["XYZ"], "opens": "25:00", "closes": "10:00", "slot_minutes": 2, "capacity": 0, "staff": "Ghost"}]})).await;
        assert_eq!(s, 422);
        let codes: Vec<&str> = b["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        for code in [
            "invalid_weekday",
            "invalid_time",
            "invalid_slot_length",
            "invalid_capacity",
            "unknown_staff",
        ] {
            assert!(codes.contains(&code), "{code} in {b}");
        }
    }
);

both!(
    a_capacity_set_by_hand_survives_any_rule_change_and_the_save_reports_and_audits_what_it_did,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let tue = json!({"weekdays": ["TUE"], "opens": "16:00", "closes": "17:00", "slot_minutes": 60, "capacity": 6});
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", json!({"rules": [tue]}))
            .await;
        assert_eq!(s, 200, "{b}");
        let (_, list) = api.get("/api/v1/services/CUT/slots").await;
        let id = list[0]["id"].as_i64().unwrap();
        // Staff cap Tuesday's class at 2, and it fills.
        let (s, b) = api
            .call(
                reqwest::Method::PATCH,
                &format!("/api/v1/slots/{id}"),
                Some(json!({"capacity": 2})),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        for (i, phone) in ["+86 138 0013 8001", "+86 138 0013 8002"]
            .iter()
            .enumerate()
        {
            let (s, b) = api
                .book(id, "Guest", phone, Some(&format!("cap-{i}")))
                .await;
            assert_eq!(s, 201, "{b}");
        }
        // An unrelated Saturday rule is added, and Tuesday's own rule changes its capacity too.
        let sat = json!({"weekdays": ["SAT"], "opens": "09:00", "closes": "10:00", "slot_minutes": 60, "capacity": 3});
        let tue8 = json!({"weekdays": ["TUE"], "opens": "16:00", "closes": "17:00", "slot_minutes": 60, "capacity": 8});
        for rules in [json!([tue, sat]), json!([tue8, sat])] {
            let (s, b) = api
                .post("/api/v1/services/CUT/schedule", json!({"rules": rules}))
                .await;
            assert_eq!(s, 200, "{b}");
            let kept: Vec<i64> = b["kept_edited"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["slot_id"].as_i64().unwrap())
                .collect();
            assert!(
                kept.contains(&id),
                "the hand-edited slot is reported as kept: {b}"
            );
            let (_, slot) = api.get("/api/v1/services/CUT/slots").await;
            let ours = slot
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["id"] == id)
                .cloned()
                .unwrap();
            assert_eq!(
                (ours["capacity"].as_i64(), ours["remaining"].as_i64()),
                (Some(2), Some(0)),
                "{ours}"
            );
        }
        // Nobody else can book the class staff capped.
        let (s, b) = api
            .book(id, "Late", "+86 138 0013 8003", Some("cap-late"))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        let applied: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'schedule.apply'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(applied, 3, "every save records what it changed");
    }
);

both!(a_slot_that_has_started_lists_no_places_remaining, |app| {
    let api = app.acme_api().await;
    api.product("service", "CLASS").await;
    let starts = app.now() + chrono::Duration::hours(2);
    let slot = api
        .one_off("CLASS", starts, starts + chrono::Duration::hours(1), 3)
        .await;
    let list = |api: Api| async move {
        let (s, b) = api
            .get("/api/v1/services/CLASS/slots?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z")
            .await;
        assert_eq!(s, 200, "{b}");
        b.as_array().unwrap()[0]["remaining"].as_i64()
    };
    assert_eq!(list(api.clone()).await, Some(3));
    // The clock moves past its start (as a slot of this morning is by noon).
    sqlx::query("UPDATE slots SET starts_at = starts_at - 3 * 3600 * 1000 WHERE id = $1")
        .bind(slot)
        .execute(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(list(api.clone()).await, Some(0));
});
