//! Moving a booking to another slot (issue 19): the new places are taken before the old ones are
//! freed, in one transaction; the booking keeps its reference and says where it came from.

use serde_json::{json, Value};

use crate::both;
use crate::helpers::{html, Api};

/// A one-off slot of `sku` `hours` from now, an hour long, with `capacity` places.
async fn slot_at(api: &Api, sku: &str, hours: i64, capacity: i64) -> i64 {
    let start = api.now() + chrono::Duration::hours(hours);
    api.one_off(sku, start, start + chrono::Duration::hours(1), capacity)
        .await
}

async fn move_to(api: &Api, reference: &str, slot: i64) -> (u16, Value) {
    api.post(
        &format!("/api/v1/bookings/{reference}/move"),
        json!({ "slot_id": slot }),
    )
    .await
}

both!(
    a_move_takes_the_new_places_before_freeing_the_old_and_keeps_the_reference,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.product("service", "MASSAGE").await;
        let (s, b) = api.patch_sku("CUT", json!({"max_places": 2})).await;
        assert_eq!(s, 200, "{b}");
        let from = slot_at(&api, "CUT", 24, 2).await;
        let nearly_full = slot_at(&api, "CUT", 25, 3).await;
        let free = slot_at(&api, "CUT", 26, 2).await;
        let other_service = slot_at(&api, "MASSAGE", 27, 5).await;
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": from, "name": "Wang Fang", "phone": "+86 138 0013 8000", "places": 2}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let reference = b["reference"].as_str().unwrap().to_string();
        let (s, b) = api
            .book(nearly_full, "Li Lei", "+86 139 0013 8000", None)
            .await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = api
            .book(nearly_full, "Han Mei", "+86 137 0013 8000", None)
            .await;
        assert_eq!(s, 201, "{b}");

        // Two places do not fit where one is left: refused, and nothing moved.
        let (s, b) = move_to(&api, &reference, nearly_full).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        assert_eq!(b["remaining"], 1, "{b}");
        assert_eq!(app.slot_places(from).await, (2, 2));
        assert_eq!(app.slot_places(nearly_full).await, (2, 2));
        // Another service, or a slot that does not exist: refused beside the field.
        let (s, b) = move_to(&api, &reference, other_service).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            crate::helpers::field_codes(&b),
            ["slot_id:different_service"]
        );
        let (s, b) = move_to(&api, &reference, 999_999).await;
        assert_eq!(crate::helpers::field_codes(&b), ["slot_id:unknown_slot"]);
        assert_eq!(s, 422);

        let (s, b) = move_to(&api, &reference, free).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["reference"], reference.as_str());
        assert_eq!(b["slot_id"], free);
        assert_eq!(b["moved_from_slot_id"], from);
        assert_eq!(b["places"], 2);
        assert_eq!(app.slot_places(from).await, (0, 0));
        assert_eq!(app.slot_places(free).await, (2, 2));
        // A repeat of the move answers the booking and changes nothing.
        let (s, b) = move_to(&api, &reference, free).await;
        assert_eq!((s, b["slot_id"].as_i64()), (200, Some(free)), "{b}");
        assert_eq!(app.slot_places(free).await, (2, 2));
        // The freed places are bookable again (Redis included).
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": from, "name": "Zhou Jie", "phone": "+86 136 0013 8000", "places": 2}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        // The move is an event and an audit row.
        let (_, feed) = api.get("/api/v1/events?types=booking.moved").await;
        let moved = feed["events"].as_array().unwrap();
        assert_eq!(moved.len(), 1, "{feed}");
        assert_eq!(moved[0]["subject"]["id"], reference.as_str());
        assert_eq!(moved[0]["data"]["before"]["slot_id"], from);
        assert_eq!(moved[0]["data"]["after"]["slot_id"], free);
        let audited: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'booking.move'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(audited, 1);
        // A cancelled booking does not move.
        let (s, _) = api
            .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200);
        let (s, b) = move_to(&api, &reference, nearly_full).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("booking_cancelled")),
            "{b}"
        );
        app.assert_reconciled().await;
    }
);

both!(
    moves_racing_bookings_into_one_slot_never_overfill_it_or_lose_a_booking,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let target = slot_at(&api, "CUT", 30, 5).await;
        let mut moving = Vec::new();
        for i in 0..10 {
            let source = slot_at(&api, "CUT", 31 + i, 1).await;
            let (s, b) = api
                .book(source, "Mover", &format!("+49 170 {i:07}"), None)
                .await;
            assert_eq!(s, 201, "{b}");
            moving.push((b["reference"].as_str().unwrap().to_string(), source));
        }
        let moves = moving.iter().map(|(reference, _)| {
            let (api, reference) = (api.clone(), reference.clone());
            tokio::spawn(async move { move_to(&api, &reference, target).await })
        });
        let books = (0..10).map(|i| {
            let api = api.clone();
            tokio::spawn(async move {
                api.book(target, "Walk-in", &format!("+49 171 {i:07}"), None)
                    .await
            })
        });
        let tasks: Vec<_> = moves.chain(books).collect();
        let mut accepted = 0;
        for t in tasks {
            let (s, b) = t.await.unwrap();
            match s {
                200 | 201 => accepted += 1,
                409 => assert_eq!(b["error"], "slot_full", "{b}"),
                _ => panic!("{s} {b}"),
            }
        }
        assert_eq!(accepted, 5, "exactly the target's five places were given");
        assert_eq!(app.slot_places(target).await, (5, 5));
        // Every booking that was moving is still live, in its old slot or in the target.
        for (reference, source) in &moving {
            let (s, b) = api.get(&format!("/api/v1/bookings/{reference}")).await;
            assert_eq!((s, b["status"].as_str()), (200, Some("BOOKED")), "{b}");
            let at = b["slot_id"].as_i64().unwrap();
            assert!(at == *source || at == target, "{b}");
            let (booked, active) = app.slot_places(*source).await;
            assert_eq!(booked, active);
            assert_eq!(booked, i64::from(at == *source));
        }
        app.assert_reconciled().await;
    }
);

both!(
    staff_move_a_booking_from_a_closed_slot_on_the_move_page_and_a_full_target_changes_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let from = slot_at(&api, "CUT", 24, 2).await;
        let full = slot_at(&api, "CUT", 25, 1).await;
        let free = slot_at(&api, "CUT", 26, 2).await;
        let (_, b) = api.book(from, "Wang Fang", "+86 138 0013 8000", None).await;
        let reference = b["reference"].as_str().unwrap().to_string();
        let (s, _) = api.book(full, "Li Lei", "+86 139 0013 8000", None).await;
        assert_eq!(s, 201);
        let (s, _) = api
            .post(
                &format!("/api/v1/slots/{from}/close"),
                json!({"reason": "Mei ill"}),
            )
            .await;
        assert_eq!(s, 200);
        let staff = app.signed_in("store_staff", Some("acme")).await;
        // The closed slot lists the booking to call, with a way to move it.
        let page = app.page(&staff, &format!("/admin/slots/{from}")).await;
        let link = page
            .attr(
                &format!("#to-contact tr[data-ref='{reference}'] a.move"),
                "href",
            )
            .expect("a move link beside the booking to call");
        let page = app.page(&staff, &link).await;
        // Only slots with room are offered.
        assert_eq!(
            page.attrs("#move-choices li", "data-slot"),
            [free.to_string()]
        );
        // A target that filled meanwhile: refused on the move page, nothing changed.
        let r = staff
            .post(app.url(&format!("/admin/bookings/{reference}/move")))
            .form(&[("slot_id", full.to_string()), ("from", "slot".into())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(html(r).await.count("#move-error"), 1);
        assert_eq!(app.slot_places(from).await, (1, 1));
        assert_eq!(app.slot_places(full).await, (1, 1));
        let r = staff
            .post(app.url(&format!("/admin/bookings/{reference}/move")))
            .form(&[("slot_id", free.to_string()), ("from", "slot".into())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(crate::helpers::location(&r), format!("/admin/slots/{free}"));
        let page = app.page(&staff, &format!("/admin/slots/{free}")).await;
        assert_eq!(page.count(&format!("tr[data-ref='{reference}']")), 1);
        assert_eq!(app.slot_places(from).await, (0, 0));
        assert_eq!(app.slot_places(free).await, (1, 1));
        // Nobody is left to call about the closed slot.
        let page = app.page(&staff, &format!("/admin/slots/{from}")).await;
        assert_eq!(page.count("#to-contact"), 0);
        // Another merchant's staff cannot see it to move it.
        app.merchant("globex").await;
        let other = app.signed_in("store_staff", Some("globex")).await;
        let r = other
            .get(app.url(&format!("/admin/bookings/{reference}/move")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
);

both!(
    the_move_page_lists_any_picked_days_times_beyond_the_twelve_nearest,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let from = slot_at(&api, "CUT", 24, 2).await;
        for h in 25..40 {
            slot_at(&api, "CUT", h, 2).await;
        }
        let far = slot_at(&api, "CUT", 24 * 10, 2).await;
        let (_, b) = api.book(from, "Wang Fang", "+86 138 0013 8000", None).await;
        let reference = b["reference"].as_str().unwrap().to_string();
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let path = format!("/admin/bookings/{reference}/move?from=day");
        let page = app.page(&staff, &path).await;
        assert_eq!(page.count("#move-choices li"), 12, "the nearest twelve");
        assert!(!page
            .attrs("#move-choices li", "data-slot")
            .contains(&far.to_string()));
        assert_eq!(page.count("form#move-day input[type=date][name=day]"), 1);
        let starts: i64 = sqlx::query_scalar("SELECT starts_at FROM slots WHERE id = $1")
            .bind(far)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let day = chrono::DateTime::from_timestamp_millis(starts)
            .unwrap()
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .date_naive();
        let page = app.page(&staff, &format!("{path}&day={day}")).await;
        assert_eq!(
            page.attrs("#move-choices li", "data-slot"),
            [far.to_string()]
        );
        // A day without room says so; a day that is no date lists the nearest again.
        let page = app
            .page(
                &staff,
                &format!("{path}&day={}", day + chrono::Duration::days(1)),
            )
            .await;
        assert_eq!(page.count("#no-move-choices"), 1);
        let page = app.page(&staff, &format!("{path}&day=someday")).await;
        assert_eq!(page.count("#move-choices li"), 12);
    }
);
