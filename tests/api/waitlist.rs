//! The waiting list of a full slot (issue 19): when places free, the first waiting customer whose
//! party fits is booked, exactly once.

use std::time::Duration;

use serde_json::{json, Value};

use crate::both;
use crate::helpers::{Api, TestApp};
use crate::on_each_day;

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
        let slot = api.party_slot("CUT", 3, 2).await;
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
                sellable::domain::slots::waitlist::fill(&db, m, slot)
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
        let slot = api.party_slot("CUT", 3, 1).await;
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
        let slot = api.party_slot("CUT", 3, 2).await;
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
        let slot = api.party_slot("CUT", 3, 1).await;
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
        // A second waiting customer leaves the list from their page, after a confirmation.
        let d = app.client();
        let store_slug = app.public_slug().await;
        let r = d
            .post(app.url(&format!("/book/{store_slug}/slots/{slot}/waitlist")))
            .form(&[
                ("name", "Bo Chen"),
                ("phone", "+86 139 0000 0002"),
                ("places", "1"),
            ])
            .send()
            .await
            .unwrap();
        let theirs = crate::helpers::location(&r);
        let page = app.page(&d, &format!("{theirs}/leave")).await;
        assert_eq!(page.count("form#leave-form button#leave-confirm"), 1);
        let r = d
            .post(app.url(&format!("{theirs}/leave")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&d, &theirs).await;
        assert_eq!(
            page.attr("#wait-status", "data-status").as_deref(),
            Some("CANCELLED")
        );
        // Another token is nobody's page.
        let r = c
            .get(app.url("/waitlist/not-a-token"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
);

/// Switches the acme store to holding freed places for `minutes` (through the store page, as
/// its admin would); a refused value is shown under the field and changes nothing.
async fn hold_offers(app: &crate::helpers::TestApp, minutes: &str) {
    let store_id: i64 = sqlx::query_scalar("SELECT id FROM stores WHERE slug = 'main-store'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    let form = |v: &str| crate::helpers::store_form("", v);
    let path = format!("/admin/stores/{store_id}");
    for bad in ["0", "1441", "soon", "15e"] {
        let r = admin
            .post(app.url(&path))
            .form(&form(bad))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422, "{bad}");
        let page = crate::helpers::html(r).await;
        assert_eq!(
            page.count(".field-error[data-field=waitlist_hold]"),
            1,
            "{bad}"
        );
    }
    let held: Option<i64> =
        sqlx::query_scalar("SELECT waitlist_hold_minutes FROM stores WHERE id = $1")
            .bind(store_id)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(held, None, "a refused value changes nothing");
    let r = admin
        .post(app.url(&path))
        .form(&form(minutes))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let page = app.page(&admin, &path).await;
    assert_eq!(
        page.attr("input[name=waitlist_hold]", "value").as_deref(),
        Some(minutes)
    );
}

/// Joins the public waiting list of `slot` and answers the customer's own page.
async fn wait_in_public(
    app: &crate::helpers::TestApp,
    c: &reqwest::Client,
    slot: i64,
    phone: &str,
) -> String {
    let store = app.public_slug().await;
    let r = c
        .post(app.url(&format!("/book/{store}/slots/{slot}/waitlist")))
        .form(&[("name", "Waiting"), ("phone", phone), ("places", "1")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    crate::helpers::location(&r)
}

/// The wait's status on the customer's own page.
async fn wait_status(app: &crate::helpers::TestApp, c: &reqwest::Client, mine: &str) -> String {
    app.page(c, mine)
        .await
        .attr("#wait-status", "data-status")
        .unwrap_or_default()
}

async fn a_store_that_holds_offers_holds_a_freed_place_for_the_first_in_line_who_accepts_it_on_their_page(
    app: TestApp,
) {
    let api = app.acme_api().await;
    hold_offers(&app, "15").await;
    let slot = api.party_slot("CUT", 3, 1).await;
    let (_, b) = api.book(slot, "Booked", "+86 138 0013 8001", None).await;
    let reference = b["reference"].as_str().unwrap().to_string();
    let (first, second) = (app.client(), app.client());
    let first_page = wait_in_public(&app, &first, slot, "+86 139 0000 0001").await;
    let second_page = wait_in_public(&app, &second, slot, "+86 139 0000 0002").await;
    let (s, _) = api
        .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
        .await;
    assert_eq!(s, 200);
    // The place is held for the first in line: it counts against the slot, so nobody else
    // can book it, and the second still waits.
    let l = until(&api, slot, |l| l[0]["status"] == "OFFERED").await;
    assert_eq!(statuses(&l)[1], (1, "WAITING".to_string()));
    let expires =
        chrono::DateTime::parse_from_rfc3339(l[0]["offer_expires_at"].as_str().unwrap()).unwrap();
    let left = expires.timestamp_millis() - app.now_ms();
    assert!((13 * 60_000..=15 * 60_000).contains(&left), "{left}");
    assert_eq!(app.slot_booked(slot).await, 1);
    let (s, b) = api.book(slot, "Walk-in", "+86 138 0013 8009", None).await;
    assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
    let held = l[0]["booking_reference"].as_str().unwrap().to_string();
    let (_, b) = api.get(&format!("/api/v1/bookings/{held}")).await;
    assert!(b["held_until"].is_string(), "{b}");
    // Staff see the offer and until when it is held.
    let staff = app.signed_in("store_staff", Some("acme")).await;
    let slot_page = app.page(&staff, &format!("/admin/slots/{slot}")).await;
    assert_eq!(
        slot_page.count("#waitlist tr[data-status=OFFERED] .held-until"),
        1
    );
    let list = app.page(&staff, "/admin/bookings/list").await;
    assert_eq!(
        list.count(&format!("tr[data-ref='{held}'] [data-code=held]")),
        1
    );
    assert_eq!(slot_page.count("table.bookings [data-code=held]"), 1);
    // The customer's page offers it; they accept and land on their booking.
    let page = app.page(&first, &first_page).await;
    assert_eq!(page.count("#offer"), 1);
    assert_eq!(page.count("form[action$='/accept'] button#accept-offer"), 1);
    assert_eq!(wait_status(&app, &second, &second_page).await, "WAITING");
    let accept = format!("{first_page}/accept");
    let r = first.post(app.url(&accept)).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(crate::helpers::location(&r), format!("/booking/{held}"));
    let page = app.page(&first, &format!("/booking/{held}")).await;
    assert_eq!(page.count(".flash-success"), 1);
    assert_eq!(wait_status(&app, &first, &first_page).await, "BOOKED");
    let (_, b) = api.get(&format!("/api/v1/bookings/{held}")).await;
    assert_eq!(
        (b["status"].as_str(), b["from_waitlist"].as_bool()),
        (Some("BOOKED"), Some(true))
    );
    assert!(b.get("held_until").is_none(), "the hold is gone: {b}");
    // Accepting again answers the booking; the hold can no longer lapse.
    let r = first.post(app.url(&accept)).send().await.unwrap();
    assert_eq!(crate::helpers::location(&r), format!("/booking/{held}"));
    assert_eq!(
        sellable::domain::slots::waitlist::end_lapsed_offers(&app.db)
            .await
            .unwrap(),
        0
    );
    assert_eq!(app.slot_booked(slot).await, 1);
    app.assert_reconciled().await;
}
on_each_day!(a_store_that_holds_offers_holds_a_freed_place_for_the_first_in_line_who_accepts_it_on_their_page);

/// Makes the hold of `reference` run out now (as fifteen minutes passing would).
async fn run_out(app: &crate::helpers::TestApp, reference: &str) {
    sqlx::query("UPDATE bookings SET hold_until = $1 WHERE reference = $2")
        .bind(app.now_ms() - 1)
        .bind(reference)
        .execute(&app.db.pool)
        .await
        .unwrap();
}

both!(
    a_declined_or_lapsed_offer_goes_to_the_next_in_line_and_can_no_longer_be_accepted,
    |app| {
        let api = app.acme_api().await;
        hold_offers(&app, "10").await;
        let slot = api.party_slot("CUT", 3, 1).await;
        let (_, b) = api.book(slot, "Booked", "+86 138 0013 8001", None).await;
        let reference = b["reference"].as_str().unwrap().to_string();
        let c = app.client();
        let first = wait_in_public(&app, &c, slot, "+86 139 0000 0001").await;
        let (s, b) = wait(&api, slot, "+86 139 0000 0002", 1).await;
        assert_eq!(s, 201, "{b}");
        let second_id = b["id"].as_i64().unwrap();
        let (s, b) = wait(&api, slot, "+86 139 0000 0003", 1).await;
        assert_eq!(s, 201, "{b}");
        let third_id = b["id"].as_i64().unwrap();
        api.post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        until(&api, slot, |l| l[0]["status"] == "OFFERED").await;

        // The first customer declines on their page, after a confirmation page.
        let page = app.page(&c, &format!("{first}/decline")).await;
        assert_eq!(
            page.count("form[action$='/decline'] button#decline-confirm"),
            1
        );
        let r = c
            .post(app.url(&format!("{first}/decline")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&c, &first).await;
        assert_eq!(
            page.attr("#wait-status", "data-status").as_deref(),
            Some("DECLINED")
        );
        assert_eq!(page.count(".flash"), 0, "the page says it once");
        // The place goes to the second, held for them.
        let l = until(&api, slot, |l| l[1]["status"] == "OFFERED").await;
        let second_hold = l[1]["booking_reference"].as_str().unwrap().to_string();
        // Accepting the declined offer is refused.
        let r = c
            .post(app.url(&format!("{first}/accept")))
            .send()
            .await
            .unwrap();
        assert_eq!(crate::helpers::location(&r), first);
        let page = app.page(&c, &first).await;
        assert_eq!(page.count(".flash-error"), 1);
        assert_eq!(
            page.attr("#wait-status", "data-status").as_deref(),
            Some("DECLINED")
        );

        // The second lets the hold run out: the sweep ends it and the third is offered it.
        run_out(&app, &second_hold).await;
        assert_eq!(
            sellable::domain::slots::waitlist::end_lapsed_offers(&app.db)
                .await
                .unwrap(),
            1
        );
        let l = until(&api, slot, |l| l[2]["status"] == "OFFERED").await;
        assert_eq!(l[1]["status"], "EXPIRED");
        // Staff read that the offer ran out, not that the slot started.
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let page = app.page(&staff, &format!("/admin/slots/{slot}")).await;
        assert_eq!(page.count("#waitlist [data-code=offer_lapsed]"), 1);
        assert_eq!(
            page.count("#waitlist .held-until"),
            1,
            "the third's offer is held"
        );
        let (_, b) = api.get(&format!("/api/v1/bookings/{second_hold}")).await;
        assert_eq!(b["status"], "CANCELLED", "{b}");
        // Through the API, the lapsed offer cannot be accepted; the live one can.
        let (s, b) = api
            .post(&format!("/api/v1/waitlist/{second_id}/accept"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("offer_ended")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/waitlist/{third_id}/accept"), json!({}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("BOOKED")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/waitlist/{third_id}/decline"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("offer_ended")), "{b}");
        let (s, _) = api.post("/api/v1/waitlist/999999/accept", json!({})).await;
        assert_eq!(s, 404);
        assert_eq!(app.slot_booked(slot).await, 1);
        let live: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM bookings WHERE slot_id = $1 AND status = 'BOOKED'",
        )
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(live, 1);
        app.assert_reconciled().await;
    }
);

both!(
    an_accept_racing_the_hold_running_out_ends_one_way_only_never_booked_and_cancelled,
    |app| {
        let api = app.acme_api().await;
        hold_offers(&app, "10").await;
        let m: sellable::domain::MerchantId =
            sqlx::query_scalar("SELECT id FROM merchants WHERE slug = 'acme'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        api.product("service", "CUT").await;
        // Eight slots of one place, each with a booked customer and one waiting.
        let start = app.now() + chrono::Duration::hours(24);
        let mut offers = Vec::new();
        for i in 0..8i64 {
            let at = start + chrono::Duration::hours(i);
            let slot = api
                .one_off("CUT", at, at + chrono::Duration::minutes(30), 1)
                .await;
            let (_, b) = api
                .book(slot, "Booked", &format!("+86 138 0013 80{i:02}"), None)
                .await;
            let reference = b["reference"].as_str().unwrap().to_string();
            let (s, b) = wait(&api, slot, &format!("+86 139 0000 00{i:02}"), 1).await;
            assert_eq!(s, 201, "{b}");
            let id = b["id"].as_i64().unwrap();
            api.post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
                .await;
            sellable::domain::slots::waitlist::fill(&app.db, m, slot)
                .await
                .unwrap();
            let l = until(&api, slot, |l| l[0]["status"] == "OFFERED").await;
            offers.push((
                slot,
                id,
                l[0]["booking_reference"].as_str().unwrap().to_string(),
            ));
        }
        // Each hold runs out a few milliseconds from now; the customer's accept and two
        // instances' sweeps arrive around that instant.
        let soon = app.now_ms() + 40;
        for (_, _, held) in &offers {
            sqlx::query("UPDATE bookings SET hold_until = $1 WHERE reference = $2")
                .bind(soon)
                .bind(held)
                .execute(&app.db.pool)
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
        let accepts = offers.iter().map(|(_, id, _)| {
            let (api, id) = (api.clone(), *id);
            tokio::spawn(async move {
                api.post(&format!("/api/v1/waitlist/{id}/accept"), json!({}))
                    .await
            })
        });
        let accepts: Vec<_> = accepts.collect();
        let sweeps: Vec<_> = (0..2)
            .map(|_| {
                let db = app.db.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    sellable::domain::slots::waitlist::end_lapsed_offers(&db)
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut accepted = 0;
        for a in accepts {
            let (s, b) = a.await.unwrap();
            match s {
                200 => accepted += 1,
                409 => assert_eq!(b["error"], "offer_ended", "{b}"),
                _ => panic!("{s} {b}"),
            }
        }
        let mut lapsed = 0;
        for s in sweeps {
            lapsed += s.await.unwrap();
        }
        assert_eq!(accepted + lapsed, 8, "every offer ended exactly one way");
        // Whatever won, the entry and its booking agree, and no slot lost or doubled a place.
        for (slot, id, held) in &offers {
            let (entry,): (String,) = sqlx::query_as("SELECT status FROM waitlist WHERE id = $1")
                .bind(id)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
            let (booking, hold): (String, Option<i64>) =
                sqlx::query_as("SELECT status, hold_until FROM bookings WHERE reference = $1")
                    .bind(held)
                    .fetch_one(&app.db.pool)
                    .await
                    .unwrap();
            match entry.as_str() {
                "BOOKED" => {
                    assert_eq!((booking.as_str(), hold), ("BOOKED", None));
                    assert_eq!(app.slot_booked(*slot).await, 1);
                }
                "EXPIRED" => {
                    assert_eq!(booking, "CANCELLED");
                    assert_eq!(app.slot_booked(*slot).await, 0);
                }
                other => panic!("entry {id} ended {other}"),
            }
        }
        app.assert_reconciled().await;
    }
);

both!(
    a_held_place_cannot_be_moved_or_marked_is_nobody_to_call_and_a_staff_cancel_withdraws_the_offer,
    |app| {
        let api = app.acme_api().await;
        hold_offers(&app, "15").await;
        let slot = api.party_slot("CUT", 3, 1).await;
        let start = app.now() + chrono::Duration::hours(30);
        let other = api
            .one_off("CUT", start, start + chrono::Duration::hours(1), 2)
            .await;
        let (_, b) = api.book(slot, "Booked", "+86 138 0013 8001", None).await;
        let reference = b["reference"].as_str().unwrap().to_string();
        let c = app.client();
        let mine = wait_in_public(&app, &c, slot, "+86 139 0000 0001").await;
        api.post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        let l = until(&api, slot, |l| l[0]["status"] == "OFFERED").await;
        let held = l[0]["booking_reference"].as_str().unwrap().to_string();
        // Staff cannot move it or mark it: nobody accepted it yet.
        let (s, b) = api
            .post(
                &format!("/api/v1/bookings/{held}/move"),
                json!({"slot_id": other}),
            )
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("booking_held")), "{b}");
        let starts: i64 = sqlx::query_scalar("SELECT starts_at FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let set_start = |at: i64| {
            sqlx::query("UPDATE slots SET starts_at = $1 WHERE id = $2")
                .bind(at)
                .bind(slot)
                .execute(&app.db.pool)
        };
        set_start(app.now_ms() - 60_000).await.unwrap();
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{held}/attended"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("booking_held")), "{b}");
        set_start(starts).await.unwrap();
        // The slot closes: the held place is nobody to call, and it can no longer be accepted.
        let (s, b) = api
            .post(
                &format!("/api/v1/slots/{slot}/close"),
                json!({"reason": "Power cut"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let to_call = app.page(&staff, "/admin/to-call").await;
        assert_eq!(to_call.count(&format!("#call-{held}")), 0);
        let r = c
            .post(app.url(&format!("{mine}/accept")))
            .send()
            .await
            .unwrap();
        assert_eq!(crate::helpers::location(&r), mine);
        assert_eq!(wait_status(&app, &c, &mine).await, "OFFERED");
        // Staff cancel it: the offer is withdrawn in the same commit, and the page says so.
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{held}/cancel"), json!({}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CANCELLED")), "{b}");
        assert!(b.get("held_until").is_none(), "{b}");
        let page = app.page(&c, &mine).await;
        assert_eq!(
            page.attr("#wait-status", "data-status").as_deref(),
            Some("CANCELLED")
        );
        assert_eq!(page.count("[data-code=offer_withdrawn]"), 1);
        assert_eq!(app.slot_booked(slot).await, 0);
        app.assert_reconciled().await;
    }
);

both!(
    a_schedule_save_keeps_a_slot_a_waiting_list_refers_to_closed_and_lists_it_instead_of_failing,
    |app| {
        // The review's path (issue 52, finding 2): capacity 1; A books X; B waits on X; A moves
        // away (B is booked from the list); B moves away. X is then unbooked but the waiting list
        // and the moved bookings still point at it, and a save that no longer makes X answered 500.
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let all_days = json!(["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]);
        let rules = |opens: &str, closes: &str| {
            json!({"rules": [{"weekdays": all_days, "opens": opens, "closes": closes,
                "slot_minutes": 60, "capacity": 1}]})
        };
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules("10:00", "12:00"))
            .await;
        assert_eq!(s, 200, "{b}");
        let after = (app.now() + chrono::Duration::hours(24)).timestamp_millis();
        let slots: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM slots WHERE starts_at > $1 ORDER BY starts_at LIMIT 3",
        )
        .bind(after)
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        let (x, y, z) = (slots[0], slots[1], slots[2]);
        let (s, a) = api.book(x, "A", "+86 138 0013 8001", None).await;
        assert_eq!(s, 201, "{a}");
        let (s, w) = wait(&api, x, "+86 138 0013 8002", 1).await;
        assert_eq!(s, 201, "{w}");
        let (s, m) = api
            .post(
                &format!("/api/v1/bookings/{}/move", a["reference"].as_str().unwrap()),
                json!({ "slot_id": y }),
            )
            .await;
        assert_eq!(s, 200, "{m}");
        let l = until(&api, x, |l| l.iter().any(|e| e["status"] == "BOOKED")).await;
        let b_ref = l[0]["booking_reference"].as_str().unwrap().to_string();
        let (s, m) = api
            .post(
                &format!("/api/v1/bookings/{b_ref}/move"),
                json!({ "slot_id": z }),
            )
            .await;
        assert_eq!(s, 200, "{m}");

        // Other hours: X leaves the schedule. The save succeeds and says it kept X, closed.
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules("14:00", "16:00"))
            .await;
        assert_eq!(s, 200, "{b}");
        let kept: Vec<i64> = b["kept_closed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["slot_id"].as_i64().unwrap())
            .collect();
        assert!(kept.contains(&x), "{b}");
        let (status,): (String,) = sqlx::query_as("SELECT status FROM slots WHERE id = $1")
            .bind(x)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(status, "CLOSED");
        // The waiting list still reads, with B's entry booked.
        assert_eq!(list(&api, x).await[0]["status"], "BOOKED");
        // A second save with X still referenced succeeds as well.
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules("14:00", "15:00"))
            .await;
        assert_eq!(s, 200, "{b}");
    }
);

/// Joins a slot's waiting list on the public page as a customer at `c`'s address would: the
/// status, and the refusal's stable code when refused.
async fn join_publicly(
    app: &TestApp,
    c: &reqwest::Client,
    store: &str,
    slot: i64,
    phone: &str,
) -> (u16, Option<String>, bool) {
    let r = c
        .post(app.url(&format!("/book/{store}/slots/{slot}/waitlist")))
        .form(&[("name", "Waiting"), ("phone", phone), ("places", "1")])
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let page = crate::helpers::html(r).await;
    (
        status,
        page.attr(".refusal", "data-code"),
        page.count("#call-store a[href^='tel:']") == 1,
    )
}

async fn full_slot(api: &Api, hours: i64) -> i64 {
    let start = api.now() + chrono::Duration::hours(hours);
    let slot = api
        .one_off("CUT", start, start + chrono::Duration::hours(1), 1)
        .await;
    let (s, b) = api
        .book(slot, "Holder", &format!("+86 137 0000 {:04}", hours), None)
        .await;
    assert_eq!(s, 201, "{b}");
    slot
}

async fn public_waits_count_against_the_caps_and_the_list_books_nobody_past_them(
    backend: crate::helpers::Backend,
) {
    let Some(app) = TestApp::spawn_with(backend, |c| {
        c.serve.max_bookings_per_phone = 2;
        c.serve.max_bookings_per_address = 3;
        c.serve.public_rate_per_minute = 100_000;
    })
    .await
    else {
        return;
    };
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    sqlx::query("UPDATE stores SET phone = '+86 21 5555 0100'")
        .execute(&app.db.pool)
        .await
        .unwrap();
    let store = app.public_slug().await;
    let mut slots = Vec::new();
    for h in 0..6 {
        slots.push(full_slot(&api, 30 + h).await);
    }
    // One phone waits for at most as many times as it may book (2); the refusal says how to
    // reach the store.
    let x = app.client_from(2);
    let p = "+86 150 0000 0001";
    assert_eq!(join_publicly(&app, &x, &store, slots[0], p).await.0, 303);
    assert_eq!(join_publicly(&app, &x, &store, slots[1], p).await.0, 303);
    let (s, code, call) = join_publicly(&app, &x, &store, slots[2], p).await;
    assert_eq!(
        (s, code.as_deref(), call),
        (409, Some("too_many_waits"), true)
    );
    // One address waits at most as often as it may book (3), whatever the phones.
    let y = app.client_from(3);
    for (i, slot) in slots.iter().take(3).enumerate() {
        let phone = format!("+86 150 0000 01{i:02}");
        assert_eq!(join_publicly(&app, &y, &store, *slot, &phone).await.0, 303);
    }
    let (s, code, _) = join_publicly(&app, &y, &store, slots[3], "+86 150 0000 0199").await;
    assert_eq!((s, code.as_deref()), (409, Some("too_many_waits")));

    // The list books nobody past a cap: P, first in line for slots[0], meanwhile holds two
    // bookings (made by staff), so the freed place goes to the next in line and P still waits.
    let free = |h: i64| {
        let api = api.clone();
        async move {
            let start = api.now() + chrono::Duration::hours(h);
            api.one_off("CUT", start, start + chrono::Duration::hours(1), 5)
                .await
        }
    };
    for h in [50, 51] {
        let slot = free(h).await;
        let (s, b) = api.book(slot, "P", p, None).await;
        assert_eq!(s, 201, "{b}");
    }
    let holder: String = sqlx::query_scalar(
        "SELECT reference FROM bookings WHERE slot_id = $1 AND status = 'BOOKED'",
    )
    .bind(slots[0])
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    let (s, b) = api
        .post(&format!("/api/v1/bookings/{holder}/cancel"), json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    let l = until(&api, slots[0], |l| {
        l.iter().any(|e| e["status"] == "BOOKED")
    })
    .await;
    let by_phone: Vec<(String, String)> = l
        .iter()
        .map(|e| {
            (
                e["phone"].as_str().unwrap().replace(' ', ""),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        by_phone.contains(&("+8615000000001".into(), "WAITING".into())),
        "{by_phone:?}"
    );
    assert!(
        by_phone.contains(&("+8615000000100".into(), "BOOKED".into())),
        "{by_phone:?}"
    );
    let p_upcoming: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM bookings WHERE customer_key = (SELECT customer_key FROM waitlist WHERE slot_id = $1 ORDER BY id LIMIT 1) AND status = 'BOOKED'",
    )
    .bind(slots[0])
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(p_upcoming, 2, "the list did not book P a third time");
}
crate::on_both!(public_waits_count_against_the_caps_and_the_list_books_nobody_past_them);

/// 200 joins of one waiting list at once, from 20 addresses with 200 phones: each address gets
/// exactly its cap, never one more (the lock rows serialise one customer's joins).
async fn two_hundred_joins_at_once_from_twenty_addresses_hold_the_per_address_cap_exactly(
    backend: crate::helpers::Backend,
) {
    let Some(app) = TestApp::spawn_with(backend, |c| {
        c.serve.max_bookings_per_address = 5;
        c.serve.public_rate_per_minute = 100_000;
    })
    .await
    else {
        return;
    };
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let store = app.public_slug().await;
    let slot = full_slot(&api, 30).await;
    let app = std::sync::Arc::new(app);
    let mut racing = Vec::new();
    for i in 0..200u32 {
        let (app, store) = (app.clone(), store.clone());
        racing.push(tokio::spawn(async move {
            let c = app.client_from(10 + (i % 20) as u8);
            let phone = format!("+86 151 0000 {i:04}");
            join_publicly(&app, &c, &store, slot, &phone).await.0
        }));
    }
    let mut statuses = std::collections::BTreeMap::new();
    for r in racing {
        *statuses.entry(r.await.unwrap()).or_insert(0) += 1;
    }
    assert_eq!(statuses.get(&303), Some(&100), "{statuses:?}");
    assert_eq!(statuses.get(&409), Some(&100), "{statuses:?}");
    let per_address: Vec<(String, i64)> = sqlx::query_as(
        "SELECT client_ip, COUNT(*) FROM waitlist WHERE status = 'WAITING' GROUP BY client_ip ORDER BY client_ip",
    )
    .fetch_all(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(per_address.len(), 20, "{per_address:?}");
    assert!(per_address.iter().all(|(_, n)| *n == 5), "{per_address:?}");
}
crate::on_both!(two_hundred_joins_at_once_from_twenty_addresses_hold_the_per_address_cap_exactly);
