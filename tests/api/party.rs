//! Party sizes (issue 19): a booking takes `places` of its slot, within the service's party size;
//! capacity counts places everywhere (SQL, the Redis gate, reconciliation, orders).

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::both;
use crate::helpers::{html, Api};

async fn book_party(api: &Api, slot: i64, phone: &str, places: Value) -> (u16, Value) {
    api.post(
        "/api/v1/bookings",
        json!({"slot_id": slot, "name": "Party", "phone": phone, "places": places}),
    )
    .await
}

both!(
    forty_parties_of_one_to_three_racing_for_ten_places_never_take_more_than_ten,
    |app| {
        let api = app.acme_api().await;
        let slot = api.party_slot("CUT", 3, 10).await;
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    let places = i % 3 + 1;
                    let (s, b) =
                        book_party(&api, slot, &format!("+49 170 {i:07}"), json!(places)).await;
                    (places, s, b)
                })
            })
            .collect();
        let mut taken = 0;
        let mut by: HashMap<u16, usize> = HashMap::new();
        for t in tasks {
            let (places, s, b) = t.await.unwrap();
            match s {
                201 => {
                    assert_eq!(b["places"], places, "{b}");
                    taken += places;
                }
                409 => assert_eq!(b["error"], "slot_full", "{b}"),
                _ => panic!("{s} {b}"),
            }
            *by.entry(s).or_default() += 1;
        }
        assert!(taken <= 10, "{taken} places taken of 10: {by:?}");
        // Every refusal came when what was left was smaller than the party: with parties of 1
        // among the forty, the slot ends full.
        assert_eq!(taken, 10, "{by:?}");
        assert_eq!(app.slot_places(slot).await, (10, 10));
        app.assert_reconciled().await;
    }
);

both!(
    a_party_too_large_for_the_service_or_for_what_is_left_is_refused_and_books_nothing,
    |app| {
        let api = app.acme_api().await;
        let slot = api.party_slot("CUT", 4, 5).await;
        for bad in [json!(0), json!(-1), json!(5), json!("two"), json!(2.5)] {
            let (s, b) = book_party(&api, slot, "+86 138 0013 8000", bad.clone()).await;
            assert_eq!(s, 422, "{bad}: {b}");
            assert_eq!(crate::helpers::field_codes(&b), ["places:invalid_places"]);
        }
        assert_eq!(app.count("bookings").await, 0);
        let (s, b) = book_party(&api, slot, "+86 138 0013 8001", json!(4)).await;
        assert_eq!((s, b["places"].as_i64()), (201, Some(4)), "{b}");
        let first = b["reference"].as_str().unwrap().to_string();
        // One place left: a party of two hears how many are left, and nothing changes.
        let (s, b) = book_party(&api, slot, "+86 138 0013 8002", json!(2)).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        assert_eq!(b["remaining"], 1, "{b}");
        assert_eq!(app.slot_places(slot).await, (4, 4));
        // The one place still goes to a party of one (the gate gave nothing away).
        let (s, b) = book_party(&api, slot, "+86 138 0013 8002", json!(1)).await;
        assert_eq!(s, 201, "{b}");
        // Cancelling the party of four frees its four places at once.
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{first}/cancel"), json!({}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CANCELLED")), "{b}");
        assert_eq!(app.slot_places(slot).await, (1, 1));
        let (s, b) = book_party(&api, slot, "+86 138 0013 8003", json!(4)).await;
        assert_eq!(
            s, 201,
            "the freed places are bookable again, Redis included: {b}"
        );
        assert_eq!(app.slot_places(slot).await, (5, 5));
        // The booking event says how many places.
        let (_, feed) = api.get("/api/v1/events?types=booking.*").await;
        assert!(feed["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["data"]["places"].as_i64().is_some()));
        app.assert_reconciled().await;
    }
);

both!(
    a_party_size_is_set_on_services_only_and_within_range,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.product("service", "CUT").await;
        let (s, b) = api.patch_sku("TEA", json!({"max_places": 3})).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            crate::helpers::field_codes(&b),
            ["max_places:not_applicable"]
        );
        for bad in [json!(0), json!(1001), json!(null), json!("4")] {
            let (s, b) = api.patch_sku("CUT", json!({"max_places": bad})).await;
            assert_eq!(s, 422, "{bad}: {b}");
            assert_eq!(
                crate::helpers::field_codes(&b),
                ["max_places:invalid_limit"]
            );
        }
        let (s, b) = api.patch_sku("CUT", json!({"max_places": 6})).await;
        assert_eq!((s, b["max_places"].as_i64()), (200, Some(6)), "{b}");
        let (_, b) = api.patch_sku("CUT", json!({"price": 100})).await;
        assert_eq!(b["max_places"], 6, "a field left out stays");
    }
);

both!(
    an_order_line_books_a_party_and_releasing_the_order_frees_every_place,
    |app| {
        let api = app.acme_api().await;
        let slot = api.party_slot("CUT", 3, 4).await;
        let line = |places: i64| {
            json!([{"sku": "CUT", "slot_id": slot, "places": places,
                "customer": {"name": "Wang Fang", "phone": "+86 138 0013 8000"}}])
        };
        let (s, b) = api.reserve("o-big", line(4)).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            crate::helpers::field_codes(&b),
            ["items[0].places:invalid_places"]
        );
        let (s, b) = api.reserve("o-1", line(3)).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(app.slot_places(slot).await, (3, 3));
        let (s, b) = api
            .post("/api/v1/reservations/o-1/release", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(app.slot_places(slot).await, (0, 0));
        let (s, b) = api.reserve("o-2", line(3)).await;
        assert_eq!(s, 201, "{b}");
        app.assert_reconciled().await;
    }
);

both!(
    a_customer_picks_a_party_size_on_the_public_page_and_the_confirmation_says_it,
    |app| {
        let api = app.acme_api().await;
        let slot = api.party_slot("CUT", 4, 3).await;
        let store = app.public_slug().await;
        let c = app.client();
        let path = format!("/book/{store}/slots/{slot}");
        let page = html(c.get(app.url(&path)).send().await.unwrap()).await;
        // Four per booking, but only three places: the picker offers 1 to 3.
        assert_eq!(
            page.attrs("select#party-size option", "value"),
            ["1", "2", "3"]
        );
        let key = page.attr("input[name=idempotency_key]", "value").unwrap();
        // A forged choice beyond the service's party size is refused beside the field.
        let r = c
            .post(app.url(&path))
            .form(&[
                ("name", "Ann Lee"),
                ("phone", "+86 138 0013 8000"),
                ("places", "9"),
                ("idempotency_key", key.as_str()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let refused = html(r).await;
        assert_eq!(refused.count("p.field-error[data-field=places]"), 1);
        assert_eq!(app.count("bookings").await, 0);
        let r = c
            .post(app.url(&path))
            .form(&[
                ("name", "Ann Lee"),
                ("phone", "+86 138 0013 8000"),
                ("places", "2"),
                ("idempotency_key", key.as_str()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let location = crate::helpers::location(&r);
        let page = app.page(&c, &location).await;
        assert_eq!(
            page.attr("#booked-places", "data-places").as_deref(),
            Some("2")
        );
        assert_eq!(app.slot_places(slot).await, (2, 2));
        // Staff see the party on the slot's page.
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let page = app.page(&staff, &format!("/admin/slots/{slot}")).await;
        assert_eq!(page.count("tr[data-ref] .party[data-places='2']"), 1);
        // One place left: the picker is gone.
        let page = html(c.get(app.url(&path)).send().await.unwrap()).await;
        assert_eq!(page.count("select#party-size"), 0);
    }
);

both!(
    a_bookings_answer_names_its_service_and_times_whether_the_slot_was_read_before_the_gate_or_after,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api.patch_sku("CUT", json!({"max_places": 3})).await;
        assert_eq!(s, 200, "{b}");
        let start = app.now() + chrono::Duration::hours(24);
        let start = chrono::DateTime::from_timestamp(start.timestamp(), 0).unwrap();
        let end = start + chrono::Duration::hours(1);
        let slot = api.one_off("CUT", start, end, 10).await;
        let at = |v: &Value| {
            chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
                .map(|t| t.with_timezone(&chrono::Utc))
                .ok()
        };
        let answer_names_the_slot = |b: &Value| {
            assert_eq!(b["sku"], "CUT", "{b}");
            assert_eq!(b["slot_id"], slot, "{b}");
            assert_eq!(at(&b["starts_at"]), Some(start), "{b}");
            assert_eq!(at(&b["ends_at"]), Some(end), "{b}");
        };
        // Read after the gate: a full number and one place need nothing of the slot before.
        let one = json!({"slot_id": slot, "name": "A", "phone": "+86 138 0013 8000",
            "idempotency_key": "answer-a"});
        let (s, first) = api.post("/api/v1/bookings", one.clone()).await;
        assert_eq!(s, 201, "{first}");
        answer_names_the_slot(&first);
        // Read before: a local number needs the store's region, a party the service's size.
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": slot, "name": "B", "phone": "13800138001"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["phone"], "+86 138 0013 8001", "{b}");
        answer_names_the_slot(&b);
        let (s, b) = book_party(&api, slot, "+86 138 0013 8002", json!(3)).await;
        assert_eq!((s, b["places"].as_i64()), (201, Some(3)), "{b}");
        answer_names_the_slot(&b);
        // A repeat gets the first booking back, with the same slot in its answer.
        let (s, again) = api.post("/api/v1/bookings", one).await;
        assert_eq!(s, 201, "{again}");
        assert_eq!(again["reference"], first["reference"]);
        answer_names_the_slot(&again);
        assert_eq!(app.slot_places(slot).await, (5, 5));
        // An unknown slot is not found however it would have been read, and books nothing.
        for (phone, places) in [("+86 138 0013 8003", 1), ("+86 138 0013 8003", 2)] {
            let (s, b) = book_party(&api, 999_999, phone, json!(places)).await;
            assert_eq!(s, 404, "{places}: {b}");
        }
        assert_eq!(app.count("bookings").await, 3);
    }
);
