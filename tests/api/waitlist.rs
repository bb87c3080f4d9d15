//! The waiting list of a full slot (issue 19): when places free, the first waiting customer whose
//! party fits is booked, exactly once.

use std::time::Duration;

use serde_json::{json, Value};

use crate::both;
use crate::helpers::Api;

/// A service CUT taking parties up to 3, and one slot of `capacity` a day ahead.
async fn full_slot(api: &Api, capacity: i64) -> i64 {
    api.product("service", "CUT").await;
    let (s, b) = api.patch_sku("CUT", json!({"max_places": 3})).await;
    assert_eq!(s, 200, "{b}");
    let start = chrono::Utc::now() + chrono::Duration::hours(24);
    api.one_off("CUT", start, start + chrono::Duration::hours(1), capacity)
        .await
}

async fn wait(api: &Api, slot: i64, phone: &str, places: i64) -> (u16, Value) {
    api.post(
        &format!("/api/v1/slots/{slot}/waitlist"),
        json!({"name": "Waiting", "phone": phone, "places": places}),
    )
    .await
}

async fn list(api: &Api, slot: i64) -> Vec<Value> {
    let (s, b) = api.get(&format!("/api/v1/slots/{slot}/waitlist")).await;
    assert_eq!(s, 200, "{b}");
    b["waitlist"].as_array().unwrap().clone()
}

/// Polls the waiting list until `done` holds (the job fills it right after the change commits).
async fn until(api: &Api, slot: i64, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    for _ in 0..100 {
        let l = list(api, slot).await;
        if done(&l) {
            return l;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("waiting list never got there: {:?}", list(api, slot).await);
}

fn statuses(l: &[Value]) -> Vec<(i64, String)> {
    l.iter()
        .map(|e| {
            (
                e["position"].as_i64().unwrap(),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

both!(
    two_cancels_at_once_give_the_places_to_the_first_waiting_customers_exactly_once,
    |app| {
        let api = app.acme_api().await;
        let slot = full_slot(&api, 2).await;
        let mut refs = Vec::new();
        for phone in ["+86 138 0013 8001", "+86 138 0013 8002"] {
            let (s, b) = api.book(slot, "Booked", phone, None).await;
            assert_eq!(s, 201, "{b}");
            refs.push(b["reference"].as_str().unwrap().to_string());
        }
        for (i, phone) in [
            "+86 139 0000 0001",
            "+86 139 0000 0002",
            "+86 139 0000 0003",
        ]
        .iter()
        .enumerate()
        {
            let (s, b) = wait(&api, slot, phone, 1).await;
            assert_eq!(s, 201, "{b}");
            assert_eq!(
                (b["status"].as_str(), b["position"].as_i64()),
                (Some("WAITING"), Some(i as i64 + 1)),
                "{b}"
            );
        }
        // Both booked customers cancel at the same moment, and eight fills race besides (as
        // several instances' jobs would).
        let cancels = refs.iter().map(|r| {
            let (api, r) = (api.clone(), r.clone());
            tokio::spawn(async move {
                api.post(&format!("/api/v1/bookings/{r}/cancel"), json!({}))
                    .await
            })
        });
        let cancels: Vec<_> = cancels.collect();
        let fills = (0..8).map(|_| {
            let db = app.db.clone();
            tokio::spawn(async move {
                let m: sellable::domain::MerchantId =
                    sqlx::query_scalar("SELECT id FROM merchants WHERE slug = 'acme'")
                        .fetch_one(&db.pool)
                        .await
                        .unwrap();
                sellable::domain::waitlist::fill(&db, m, slot)
                    .await
                    .unwrap()
            })
        });
        let fills: Vec<_> = fills.collect();
        for c in cancels {
            let (s, b) = c.await.unwrap();
            assert_eq!(s, 200, "{b}");
        }
        for f in fills {
            f.await.unwrap();
        }
        let l = until(&api, slot, |l| {
            l.iter().filter(|e| e["status"] == "BOOKED").count() == 2
        })
        .await;
        assert_eq!(
            statuses(&l),
            [
                (0, "BOOKED".to_string()),
                (0, "BOOKED".to_string()),
                (1, "WAITING".to_string())
            ]
        );
        // Exactly one booking each, marked as from the list; the slot is full, not overfull.
        for e in &l[..2] {
            let reference = e["booking_reference"].as_str().unwrap();
            let (s, b) = api.get(&format!("/api/v1/bookings/{reference}")).await;
            assert_eq!(s, 200);
            assert_eq!(b["from_waitlist"], true, "{b}");
            assert_eq!(b["status"], "BOOKED");
        }
        let from_list: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM bookings WHERE from_waitlist = 1")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(from_list, 2);
        assert_eq!(app.slot_booked(slot).await, 2);
        app.assert_reconciled().await;
    }
);

both!(
    a_freed_place_goes_to_the_first_waiting_party_that_fits_and_more_capacity_books_the_rest,
    |app| {
        let api = app.acme_api().await;
        let slot = full_slot(&api, 1).await;
        let (_, b) = api.book(slot, "Booked", "+86 138 0013 8001", None).await;
        let reference = b["reference"].as_str().unwrap().to_string();
        let (s, b) = wait(&api, slot, "+86 139 0000 0001", 2).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = wait(&api, slot, "+86 139 0000 0002", 1).await;
        assert_eq!(s, 201, "{b}");
        let (s, _) = api
            .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200);
        // One place: the party of two does not fit, the party of one does.
        let l = until(&api, slot, |l| l[1]["status"] == "BOOKED").await;
        assert_eq!(l[0]["status"], "WAITING");
        assert_eq!(l[0]["position"], 1);
        // Two more places: the party of two is booked.
        let (s, b) = api
            .call(
                reqwest::Method::PATCH,
                &format!("/api/v1/slots/{slot}"),
                Some(json!({"capacity": 3})),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        until(&api, slot, |l| l[0]["status"] == "BOOKED").await;
        assert_eq!(app.slot_booked(slot).await, 3);
        app.assert_reconciled().await;
    }
);

both!(
    joining_a_waiting_list_is_refused_with_room_twice_or_when_booked_and_adds_nothing,
    |app| {
        let api = app.acme_api().await;
        let slot = full_slot(&api, 2).await;
        let (s, b) = wait(&api, slot, "+86 139 0000 0001", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("slot_has_room")),
            "{b}"
        );
        let (s, _) = api.book(slot, "Booked", "+86 138 0013 8001", None).await;
        assert_eq!(s, 201);
        // One place left: a party of one books; a party of two may wait.
        let (s, b) = wait(&api, slot, "+86 139 0000 0001", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("slot_has_room")),
            "{b}"
        );
        let (s, b) = wait(&api, slot, "+86 139 0000 0001", 2).await;
        assert_eq!(s, 201, "{b}");
        let id = b["id"].clone();
        let (s, b) = wait(&api, slot, "+86 139 0000 0001", 2).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("already_waiting")),
            "{b}"
        );
        assert_eq!((b["id"].clone(), b["position"].as_i64()), (id, Some(1)));
        let (s, _) = api.book(slot, "Booked", "+86 138 0013 8002", None).await;
        assert_eq!(s, 201);
        let (s, b) = wait(&api, slot, "+86 138 0013 8002", 1).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("already_booked")),
            "{b}"
        );
        for bad in [0, 4] {
            let (s, b) = wait(&api, slot, "+86 139 0000 0009", bad).await;
            assert_eq!(s, 422, "{b}");
            assert_eq!(crate::helpers::field_codes(&b), ["places:invalid_places"]);
        }
        let (s, _) = api.get("/api/v1/slots/999999/waitlist").await;
        assert_eq!(s, 404);
        assert_eq!(list(&api, slot).await.len(), 1);
    }
);

both!(
    a_customer_waits_on_the_public_page_and_their_page_shows_the_booking_once_a_place_frees,
    |app| {
        let api = app.acme_api().await;
        let slot = full_slot(&api, 1).await;
        let (_, b) = api.book(slot, "Booked", "+86 138 0013 8001", None).await;
        let reference = b["reference"].as_str().unwrap().to_string();
        let store = app.public_slug().await;
        let c = app.client();
        let path = format!("/book/{store}/slots/{slot}");
        let page = crate::helpers::html(c.get(app.url(&path)).send().await.unwrap()).await;
        assert_eq!(
            page.count("form#waitlist-form"),
            1,
            "a full slot offers the list"
        );
        // A bad phone is refused beside the field and nobody waits.
        let r = c
            .post(app.url(&format!("{path}/waitlist")))
            .form(&[("name", "Ann Lee"), ("phone", "12345"), ("places", "2")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let refused = crate::helpers::html(r).await;
        assert_eq!(
            refused.count("#waitlist-form p.field-error[data-field=phone]"),
            1
        );
        assert_eq!(app.count("waitlist").await, 0);
        let r = c
            .post(app.url(&format!("{path}/waitlist")))
            .form(&[
                ("name", "Ann Lee"),
                ("phone", "+86 139 0000 0001"),
                ("places", "1"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let mine = crate::helpers::location(&r);
        assert!(mine.starts_with("/waitlist/"), "{mine}");
        let page = app.page(&c, &mine).await;
        assert_eq!(
            page.attr("#wait-status", "data-status").as_deref(),
            Some("WAITING")
        );
        assert_eq!(
            page.attr("[data-position]", "data-position").as_deref(),
            Some("1")
        );
        // Staff see who waits on the slot's page.
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let slot_page = app.page(&staff, &format!("/admin/slots/{slot}")).await;
        assert_eq!(slot_page.count("#waitlist tr[data-status=WAITING]"), 1);
        // The booked customer cancels: the place is the waiting customer's, on their page.
        let (s, _) = api
            .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200);
        let mut booked = None;
        for _ in 0..100 {
            let page = app.page(&c, &mine).await;
            if page.attr("#wait-status", "data-status").as_deref() == Some("BOOKED") {
                booked = page.attr("#wait-booking", "href");
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let booking = booked.expect("the wait became a booking");
        let page = app.page(&c, &booking).await;
        assert_eq!(page.text(".status"), "Booked");
        // Another token is nobody's page.
        let r = c
            .get(app.url("/waitlist/not-a-token"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
);
