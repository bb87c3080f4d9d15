//! The store staff pages for slots: week grid, slot page, closures, day list, schedule, staff.
//! Data is made through the JSON API; the pages are read as parsed HTML.

use chrono::{Duration, NaiveDate, TimeZone, Utc};
use chrono_tz::Asia::Shanghai;
use serde_json::json;

use crate::both;
use crate::helpers::location;
use crate::helpers::{at_text, html, Api, TestApp};
use crate::on_each_day;

fn ymd(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

async fn staff(api: &Api, name: &str) -> i64 {
    let (s, b) = api.post("/api/v1/staff", json!({ "name": name })).await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_i64().unwrap()
}

async fn one_off(api: &Api, sku: &str, day: NaiveDate, hour: u32, capacity: i64) -> i64 {
    let (s, b) = api
        .post(
            "/api/v1/slots",
            json!({"sku": sku, "starts_at": at_text(day, hour), "ends_at": at_text(day, hour + 1), "capacity": capacity}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_i64().unwrap()
}

/// The slots of a service between two local days, as the API lists them.
async fn slots_between(
    api: &Api,
    sku: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Vec<serde_json::Value> {
    let (s, b) = api
        .get(&format!(
            "/api/v1/services/{sku}/slots?from={}&to={}",
            at_text(from, 0),
            at_text(to, 0)
        ))
        .await;
    assert_eq!(s, 200, "{b}");
    b.as_array().unwrap().clone()
}

async fn slot_row(app: &TestApp, id: i64) -> (i64, i64, String) {
    sqlx::query_as("SELECT capacity, booked, status FROM slots WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn booking_status(app: &TestApp, reference: &str) -> String {
    sqlx::query_scalar("SELECT status FROM bookings WHERE reference = $1")
        .bind(reference)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

both!(
    week_grid_shows_slots_coloured_by_fill_and_closed_ones_with_their_reason,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api
        .post(
            "/api/v1/services/CUT/schedule",
            json!({"rules": [{"weekdays": ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"],
                              "opens": "09:00", "closes": "12:00", "slot_minutes": 60, "capacity": 2}]}),
        )
        .await;
        assert_eq!(s, 200, "{b}");
        let monday = app.next_monday();
        let week = slots_between(&api, "CUT", monday, monday + Duration::days(7)).await;
        assert_eq!(week.len(), 21, "3 slots a day, 7 days");
        let id = |i: usize| week[i]["id"].as_i64().unwrap();
        let (free, full, closed) = (id(0), id(1), id(2));
        api.booked(full, "Ann Lee", "+86 138 0013 8000").await;
        api.booked(full, "Bo Chen", "+86 138 0013 8001").await;
        let (s, b) = api
            .post(
                &format!("/api/v1/slots/{closed}/close"),
                json!({"reason": "Boiler repair"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");

        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let r = client
            .get(app.url(&format!("/admin/slots?week={}", ymd(monday))))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        assert_eq!(page.count(".week .day"), 7);
        assert_eq!(page.count(".week a.slot"), 21);
        let cell = |id: i64| format!(".week a.slot[data-slot=\"{id}\"]");
        assert_eq!(
            page.attr(&cell(free), "class").as_deref(),
            Some("slot fill-free")
        );
        assert_eq!(page.text(&format!("{} .time", cell(free))), "09:00–10:00");
        assert_eq!(page.text(&format!("{} .sku", cell(free))), "CUT");
        assert_eq!(page.text(&format!("{} .count", cell(free))), "0/2");
        assert_eq!(
            page.attr(&cell(full), "class").as_deref(),
            Some("slot fill-full")
        );
        assert_eq!(page.text(&format!("{} .count", cell(full))), "2/2");
        assert_eq!(
            page.attr(&cell(closed), "class").as_deref(),
            Some("slot fill-closed")
        );
        assert_eq!(
            page.text(&format!("{} .reason", cell(closed))),
            "Boiler repair"
        );
        assert_eq!(
            page.attr(&cell(free), "href").as_deref(),
            Some(format!("/admin/slots/{free}").as_str())
        );
        // Monday's column holds Monday's slots, in local time.
        assert_eq!(
            page.attr(".week .day:first-child", "data-date").as_deref(),
            Some(ymd(monday).as_str())
        );
        assert_eq!(page.count(".week .day:first-child a.slot"), 3);

        // The filters swap the grid alone for htmx; an unknown service shows nothing.
        let r = client
            .get(app.url(&format!(
                "/admin/slots?store=main-store&week={}&service=NOPE",
                ymd(monday)
            )))
            .header("HX-Request", "true")
            .header("HX-Target", "week-grid")
            .send()
            .await
            .unwrap();
        let body = r.text().await.unwrap();
        assert!(!body.contains("<html"), "a fragment, not the page");
        let grid = crate::helpers::Html::parse(&body);
        assert_eq!(grid.count("#week-grid"), 1);
        assert_eq!(grid.count("a.slot[data-slot]"), 0);
        assert_eq!(
            grid.text("#week-grid p.empty"),
            "No slots match these filters this week."
        );
        // The previous week has no slots of this schedule yet (or only past ones): no error.
        let r = client
            .get(app.url(&format!(
                "/admin/slots?week={}",
                ymd(monday - Duration::days(7))
            )))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
);

both!(
    capacity_below_booked_is_refused_beside_the_field_and_changes_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, "CUT", app.next_monday(), 10, 3).await;
        api.booked(slot, "Ann Lee", "13800138000").await;
        api.booked(slot, "Bo Chen", "13800138001").await;
        let client = app.signed_in("store_staff", Some("acme")).await;

        let page = html(
            client
                .get(app.url(&format!("/admin/slots/{slot}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.text("#booked"), "2 / 3");
        assert_eq!(page.count("table.bookings tbody tr"), 2);
        assert_eq!(
            page.attr("input[name=capacity]", "value").as_deref(),
            Some("3")
        );

        let r = client
            .post(app.url(&format!("/admin/slots/{slot}/capacity")))
            .form(&[("capacity", "1")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(".field-error[data-field=capacity]"),
            "Capacity cannot be 1: 2 places are already booked."
        );
        assert_eq!(
            page.attr("input[name=capacity]", "value").as_deref(),
            Some("1"),
            "the form keeps what was typed"
        );
        assert_eq!(slot_row(&app, slot).await, (3, 2, "OPEN".to_string()));

        // htmx gets the panel alone, still 422 so it is swapped in.
        let r = client
            .post(app.url(&format!("/admin/slots/{slot}/capacity")))
            .header("HX-Request", "true")
            .form(&[("capacity", "x")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let body = r.text().await.unwrap();
        assert!(body.trim_start().starts_with("<section id=\"slot-panel\""));
        assert_eq!(
            crate::helpers::Html::parse(&body).text(".field-error[data-field=capacity]"),
            sellable::messages::bad_capacity(1000)
        );

        let r = client
            .post(app.url(&format!("/admin/slots/{slot}/capacity")))
            .form(&[("capacity", "2")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), format!("/admin/slots/{slot}"));
        let page = app.page(&client, &location(&r)).await;
        assert_eq!(page.text(".flash"), "Capacity set to 2.");
        assert_eq!(page.text("#booked"), "2 / 2");
        assert_eq!(
            page.attr("#slot-status", "class").as_deref(),
            Some("badge fill-full")
        );
    }
);

both!(closing_a_staff_member_for_leave_closes_their_slots_and_lists_who_to_call_then_bulk_cancel_and_reopen, |app| {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let alice = staff(&api, "Alice").await;
    let bob = staff(&api, "Bob").await;
    let (s, b) = api
        .post(
            "/api/v1/services/CUT/schedule",
            json!({"rules": [
                {"weekdays": ["MON", "TUE", "WED"], "opens": "09:00", "closes": "11:00", "slot_minutes": 60, "capacity": 1, "staff": "Alice"},
                {"weekdays": ["MON", "TUE", "WED"], "opens": "09:00", "closes": "11:00", "slot_minutes": 60, "capacity": 1, "staff": "Bob"}
            ]}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let monday = app.next_monday();
    let week = slots_between(&api, "CUT", monday, monday + Duration::days(7)).await;
    assert_eq!(week.len(), 12);
    let alice_slot = week.iter().find(|s| s["staff"] == "Alice").unwrap()["id"].as_i64().unwrap();
    let bob_slot = week.iter().find(|s| s["staff"] == "Bob").unwrap()["id"].as_i64().unwrap();
    let alices_booking = api.booked(alice_slot, "Ann Lee", "+86 138 0013 8000").await;
    let bobs_booking = api.booked(bob_slot, "Bo Chen", "+86 139 0000 0001").await;

    let client = app.signed_in("store_staff", Some("acme")).await;
    let page = app.page(&client, "/admin/closures").await;
    assert_eq!(page.text("#closure-list p.empty"), "No closures yet: every slot follows the weekly schedule.");
    // Who is chosen on purpose: a person, or the whole store as the last, explicit choice.
    assert_eq!(
        page.texts("select[name=staff] option"),
        vec!["Choose who…", "Alice", "Bob", "The whole store"]
    );
    assert_eq!(
        page.attr("select[name=staff] option[selected]", "value").as_deref(),
        Some("")
    );
    assert_eq!(
        page.attr("input[name=span][checked]", "value").as_deref(),
        Some("days"),
        "leave is entered in whole days by default"
    );

    // Leave for Alice, Monday to Tuesday inclusive, as whole days.
    let alice_id = alice.to_string();
    let (from, until) = (ymd(monday), ymd(monday + Duration::days(1)));
    let form = |who: &str, reason: &'static str| {
        vec![
            ("store", "main-store".to_string()),
            ("staff", who.to_string()),
            ("span", "days".to_string()),
            ("from_date", from.clone()),
            ("until_date", until.clone()),
            ("reason", reason.to_string()),
        ]
    };
    // Refusals first: nobody chosen, no reason. Nothing closes.
    let r = client.post(app.url("/admin/closures")).form(&form("", "")).send().await.unwrap();
    assert_eq!(r.status(), 422);
    let page = html(r).await;
    assert_eq!(page.text(".field-error[data-field=reason]"), "Reason is required.");
    assert_eq!(page.count(".field-error[data-field=staff]"), 1);
    assert_eq!(page.attr("input[name=from_date]", "value"), Some(from.clone()));
    // The last day before the first: refused beside the last day.
    let mut backwards = form(&alice_id, "Annual leave");
    backwards[4].1 = ymd(monday - Duration::days(1));
    let r = client.post(app.url("/admin/closures")).form(&backwards).send().await.unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(html(r).await.count(".field-error[data-field=until_date]"), 1);
    assert_eq!(app.count("closures").await, 0);
    let form = |reason: &'static str| form(&alice_id, reason);

    let r = client
        .post(app.url("/admin/closures"))
        .form(&form("Annual leave"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let closure_url = location(&r);
    assert!(closure_url.starts_with("/admin/closures/"), "{closure_url}");
    let page = app.page(&client, &closure_url).await;
    assert_eq!(page.text(".flash"), "4 slots closed. One booking needs a call: see below.");
    assert_eq!(page.text("#closed-slots"), "4");
    assert_eq!(page.texts("table.contacts tbody td.reference"), vec![alices_booking.clone()]);
    assert_eq!(page.text("table.contacts tbody td.name"), "Ann Lee");
    assert_eq!(page.text("table.contacts tbody td.phone"), "+86 138 0013 8000");

    // Exactly Alice's Monday and Tuesday slots are closed; Bob's and Alice's Wednesday stay open.
    let closed: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT staff_id, COUNT(*) FROM slots WHERE status = 'CLOSED' GROUP BY staff_id",
    )
    .fetch_all(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(closed, vec![(alice, 4)]);
    let bob_closed: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM slots WHERE staff_id = $1 AND status = 'CLOSED'")
            .bind(bob)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(bob_closed, 0);
    let grid = html(
        client
            .get(app.url(&format!("/admin/slots?week={}&staff={alice}", ymd(monday))))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(grid.count("a.slot.fill-closed"), 4);
    assert_eq!(grid.texts("a.slot.fill-closed .reason")[0], "Annual leave");

    // The list shows it active, first, with the booking it touched still to call.
    let list = app.page(&client, "/admin/closures").await;
    assert_eq!(list.count("#closure-list tbody tr.closure-active"), 1);
    assert_eq!(list.attr("td[data-affected]", "data-affected").as_deref(), Some("1"));
    assert_eq!(list.attr("td[data-to-call]", "data-to-call").as_deref(), Some("1"));

    // Bulk cancel: the confirmation page without JavaScript, then the POST.
    let cancel_url = format!("{}/cancel-bookings", closure_url.split('?').next().unwrap());
    let confirm = html(
        client
            .get(app.url(&format!("{cancel_url}?reason=Alice+on+leave")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(confirm.text("h1"), "Cancel 1 booking?");
    assert_eq!(confirm.attr("input[name=reason]", "value").as_deref(), Some("Alice on leave"));
    let r = client
        .post(app.url(&cancel_url))
        .form(&[("reason", "")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422, "a bulk cancellation needs its reason");
    assert_eq!(booking_status(&app, &alices_booking).await, "BOOKED");
    let r = client
        .post(app.url(&cancel_url))
        .form(&[("reason", "Alice on leave")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let page = app.page(&client, &location(&r)).await;
    assert_eq!(page.text(".flash"), "1 booking cancelled; its place is free again.");
    assert_eq!(page.count("table.contacts"), 0);
    assert_eq!(booking_status(&app, &alices_booking).await, "CANCELLED");
    assert_eq!(booking_status(&app, &bobs_booking).await, "BOOKED", "Bob's customer untouched");
    assert_eq!(slot_row(&app, alice_slot).await, (1, 0, "CLOSED".to_string()), "the place is free");
    let list = app.page(&client, "/admin/closures").await;
    assert_eq!(list.attr("td[data-affected]", "data-affected").as_deref(), Some("1"));
    assert_eq!(list.attr("td[data-to-call]", "data-to-call").as_deref(), Some("0"));

    // Reopen: confirmation page, then the slots open again.
    let reopen_url = format!("{}/reopen", closure_url.split('?').next().unwrap());
    let confirm = app.page(&client, &reopen_url).await;
    assert_eq!(confirm.text("h1"), "Reopen Alice?");
    let r = client.post(app.url(&reopen_url)).send().await.unwrap();
    assert_eq!(r.status(), 303);
    let page = app.page(&client, &location(&r)).await;
    assert_eq!(
        page.text(".flash"),
        "Closure ended: its slots are open again unless another closure covers them."
    );
    let closed_now: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM slots WHERE status = 'CLOSED'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(closed_now, 0);
    assert_eq!(slot_row(&app, alice_slot).await, (1, 0, "OPEN".to_string()));
    let list = app.page(&client, "/admin/closures").await;
    assert_eq!(list.count("#closure-list tbody tr.closure-reopened"), 1);
});

both!(
    store_staff_of_another_store_gets_404_and_operators_get_403_on_changes,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, "CUT", app.next_monday(), 10, 2).await;
        let reference = api.booked(slot, "Ann Lee", "13800138000").await;
        let actor = sellable::domain::Actor::system("test");
        sellable::domain::tenancy::tenants::create_store(
            &app.db,
            &actor,
            "acme",
            "second",
            "Second",
            "Asia/Shanghai",
        )
        .await
        .unwrap();
        let email = "second-staff@example.com";
        let password = "correct horse battery";
        sellable::domain::tenancy::users::create(
            &app.db,
            &actor,
            sellable::domain::tenancy::users::NewUser {
                email,
                password,
                role: "store_staff",
                merchant_slug: Some("acme"),
                store_slug: Some("second"),
            },
        )
        .await
        .unwrap();
        let other = app.sign_in(email, password).await;
        for path in [
            format!("/admin/slots/{slot}"),
            "/admin/slots?store=main-store".to_string(),
            "/admin/closures?store=main-store".to_string(),
            format!("/admin/bookings/{reference}/cancel"),
        ] {
            let r = other.get(app.url(&path)).send().await.unwrap();
            assert_eq!(r.status(), 404, "{path}");
        }
        for (path, form) in [
            (
                format!("/admin/slots/{slot}/capacity"),
                vec![("capacity", "5")],
            ),
            (format!("/admin/slots/{slot}/close"), vec![("reason", "x")]),
            (
                format!("/admin/bookings/{reference}/cancel"),
                vec![("reason", "")],
            ),
        ] {
            let r = other.post(app.url(&path)).form(&form).send().await.unwrap();
            assert_eq!(r.status(), 404, "{path}");
        }
        // Their own store is theirs, and empty.
        let own = app.page(&other, "/admin/slots").await;
        assert_eq!(own.count("a.slot[data-slot]"), 0);

        // Another merchant's admin: the slot does not exist.
        app.merchant("globex").await;
        let stranger = app.signed_in("merchant_admin", Some("globex")).await;
        let r = stranger
            .get(app.url(&format!("/admin/slots/{slot}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);

        // Operators read, and are refused every change.
        let operator = app.signed_in("operator", None).await;
        let empty = app.page(&operator, "/admin/slots").await;
        assert_eq!(
            empty.text("p.empty"),
            "Choose a merchant's store above to see its slots, bookings and closures."
        );
        let r = operator
            .get(app.url("/admin/slots?store=acme/main-store"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let page = html(
            operator
                .get(app.url(&format!("/admin/slots/{slot}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.text("#booked"), "1 / 2");
        assert_eq!(page.count("form[action$=\"/capacity\"]"), 0, "read-only");
        for (path, form) in [
            (
                format!("/admin/slots/{slot}/capacity"),
                vec![("capacity", "5")],
            ),
            (format!("/admin/slots/{slot}/close"), vec![("reason", "x")]),
            (
                format!("/admin/bookings/{reference}/cancel"),
                vec![("reason", "")],
            ),
            ("/admin/staff".to_string(), vec![("name", "Eve")]),
        ] {
            let r = operator
                .post(app.url(&path))
                .form(&form)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 403, "{path}");
        }
        assert_eq!(slot_row(&app, slot).await, (2, 1, "OPEN".to_string()));
        assert_eq!(booking_status(&app, &reference).await, "BOOKED");
    }
);

both!(
    attendance_is_refused_before_the_start_and_cancelling_after_it,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let monday = app.next_monday();
        let slot = one_off(&api, "CUT", monday, 10, 2).await;
        let reference = api.booked(slot, "Ann Lee", "13800138000").await;
        let client = app.signed_in("store_staff", Some("acme")).await;

        let r = client
            .post(app.url(&format!("/admin/bookings/{reference}/attended")))
            .form(&[("from", "slot")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(&format!(".field-error[data-ref=\"{reference}\"]")),
            "Attendance can be recorded once the slot has started."
        );
        assert_eq!(booking_status(&app, &reference).await, "BOOKED");
        // Before the start the row offers a cancellation, not attendance.
        assert_eq!(page.count("form[action$=\"/attended\"]"), 0);
        assert_eq!(
            page.count(&format!(
                "form[action=\"/admin/bookings/{reference}/cancel\"]"
            )),
            1
        );

        // The slot starts (moved an hour into the past): attendance is recorded from the day list.
        let now = app.now_ms();
        sqlx::query("UPDATE slots SET starts_at = $1, ends_at = $2 WHERE id = $3")
            .bind(now - 3_600_000)
            .bind(now + 60_000)
            .bind(slot)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let start_day = Utc
            .timestamp_millis_opt(now - 3_600_000)
            .unwrap()
            .with_timezone(&Shanghai)
            .date_naive();
        let day = html(
            client
                .get(app.url(&format!("/admin/bookings?date={}", ymd(start_day))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            day.texts("table.bookings td.reference"),
            vec![reference.clone()]
        );
        assert_eq!(day.text("table.bookings td.phone"), "+86 138 0013 8000");
        assert_eq!(day.count("form[action$=\"/cancel\"]"), 0);
        let r = client
            .post(app.url(&format!("/admin/bookings/{reference}/cancel")))
            .form(&[("from", "day"), ("reason", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
        page.text(&format!(".field-error[data-ref=\"{reference}\"]")),
        "The slot has started: the booking can no longer be cancelled. Staff record it as attended or no-show."
    );
        assert_eq!(slot_row(&app, slot).await.1, 1, "the place stays counted");

        let r = client
            .post(app.url(&format!("/admin/bookings/{reference}/no-show")))
            .header("HX-Request", "true")
            .form(&[("from", "day")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let frag = crate::helpers::Html::parse(&r.text().await.unwrap());
        assert_eq!(
            frag.text("#day-list .flash"),
            format!("Booking {reference} recorded as a no-show.")
        );
        assert_eq!(
            frag.attr("td .badge", "data-status").as_deref(),
            Some("NO_SHOW")
        );
        assert_eq!(booking_status(&app, &reference).await, "NO_SHOW");
        let r = client
            .post(app.url(&format!("/admin/bookings/{reference}/attended")))
            .form(&[("from", "day")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert!(location(&r).starts_with("/admin/bookings?store=main-store&date="));
        assert_eq!(booking_status(&app, &reference).await, "ATTENDED");
    }
);

both!(
    staff_cancel_a_booking_on_the_customers_behalf_after_confirming,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, "CUT", app.next_monday(), 15, 1).await;
        let reference = api.booked(slot, "Ann Lee", "13800138000").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let confirm = html(
            client
                .get(app.url(&format!("/admin/bookings/{reference}/cancel?from=slot")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(confirm.text("h1"), format!("Cancel booking {reference}?"));
        assert_eq!(
            confirm.attr("main form[method=post]", "action"),
            Some(format!("/admin/bookings/{reference}/cancel"))
        );
        let r = client
            .post(app.url(&format!("/admin/bookings/{reference}/cancel")))
            .form(&[("from", "slot"), ("reason", "Customer called: ill")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&client, &location(&r)).await;
        assert_eq!(
            page.text(".flash"),
            format!("Booking {reference} cancelled. The place is free again.")
        );
        assert_eq!(page.text("#booked"), "0 / 1");
        assert_eq!(
            page.attr("td .badge", "data-status").as_deref(),
            Some("CANCELLED")
        );
        assert_eq!(slot_row(&app, slot).await.1, 0);
    }
);

both!(
    closing_one_slot_lists_its_bookings_to_call_and_reopening_it_works,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, "CUT", app.next_monday(), 11, 2).await;
        let reference = api.booked(slot, "Ann Lee", "+86 138 0013 8000").await;
        let client = app.signed_in("store_staff", Some("acme")).await;
        let r = client
            .post(app.url(&format!("/admin/slots/{slot}/close")))
            .form(&[("reason", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r).await.text(".field-error[data-field=reason]"),
            "Reason is required."
        );
        assert_eq!(slot_row(&app, slot).await.2, "OPEN");
        let r = client
            .post(app.url(&format!("/admin/slots/{slot}/close")))
            .header("HX-Request", "true")
            .form(&[("reason", "Power cut")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let panel = crate::helpers::Html::parse(&r.text().await.unwrap());
        assert_eq!(
            panel.text("#slot-panel .flash"),
            "Slot closed. One customer holds a booking: call them (listed below)."
        );
        assert_eq!(panel.text("#to-contact td.reference"), reference);
        assert_eq!(panel.text("#to-contact td.phone"), "+86 138 0013 8000");
        assert_eq!(panel.text("#closed-reason"), "Power cut");
        let r = client
            .post(app.url(&format!("/admin/slots/{slot}/open")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(slot_row(&app, slot).await, (2, 1, "OPEN".to_string()));
    }
);

both!(
    schedule_page_adds_and_removes_rules_and_reports_what_it_did,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        staff(&api, "Alice").await;
        let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'CUT'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let product_id: i64 = sqlx::query_scalar("SELECT product_id FROM skus WHERE code = 'CUT'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let product = html(
            client
                .get(app.url(&format!("/admin/products/{product_id}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let url = format!("/admin/services/{sku_id}/schedule");
        assert_eq!(
            product.attr("#skus a[href$=\"/schedule\"]", "href"),
            Some(url.clone())
        );

        let page = app.page(&client, &url).await;
        assert_eq!(page.count("table.rules"), 0);
        assert_eq!(page.count(".week-editor fieldset.day"), 7);
        assert_eq!(
            page.count(".week-editor .range"),
            7,
            "one empty range per weekday to add one"
        );

        // A bad line: refused beside its field, nothing saved.
        let bad = [
            ("store", "main-store"),
            ("rules[0].weekdays", "MON"),
            ("rules[0].opens", "12:00"),
            ("rules[0].closes", "09:00"),
            ("rules[0].slot_minutes", "60"),
            ("rules[0].capacity", "2"),
            ("rules[0].staff", ""),
        ];
        let r = client.post(app.url(&url)).form(&bad).send().await.unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(".field-error[data-field=\"rules[0].closes\"]"),
            "Closing time must be after opening time."
        );
        assert_eq!(
            page.attr("input[name=\"rules[0].opens\"]", "value")
                .as_deref(),
            Some("12:00")
        );
        assert_eq!(app.count("schedule_rules").await, 0);

        // Add two lines (the second for Alice) in one save.
        let add = [
            ("store", "main-store"),
            ("rules[0].weekdays", "MON"),
            ("rules[0].weekdays", "TUE"),
            ("rules[0].opens", "09:00"),
            ("rules[0].closes", "11:00"),
            ("rules[0].slot_minutes", "60"),
            ("rules[0].capacity", "2"),
            ("rules[0].staff", ""),
            ("rules[1].weekdays", "WED"),
            ("rules[1].opens", "14:00"),
            ("rules[1].closes", "15:00"),
            ("rules[1].slot_minutes", "30"),
            ("rules[1].capacity", "1"),
            ("rules[1].staff", "Alice"),
            ("rules[2].opens", ""),
            ("rules[2].closes", ""),
            ("rules[2].slot_minutes", "60"),
            ("rules[2].capacity", "1"),
        ];
        let r = client.post(app.url(&url)).form(&add).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        let created: usize = page
            .attr("#report-counts", "data-created")
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            created >= 8,
            "4 weeks of Mon/Tue × 2 and Wed × 2: {created}"
        );
        // The days are named in the page's language ("Mon Tue"); the hook keeps the codes.
        assert_eq!(page.count("table.rules tbody tr"), 2);
        assert_eq!(
            page.attr(
                "table.rules tbody tr:nth-child(1) td[data-days]",
                "data-days"
            )
            .as_deref(),
            Some("MON TUE")
        );
        assert_eq!(
            page.attr(
                "table.rules tbody tr:nth-child(2) td[data-days]",
                "data-days"
            )
            .as_deref(),
            Some("WED")
        );
        assert_eq!(
            page.text("table.rules tbody tr:nth-child(1) td:first-child"),
            "Mon Tue"
        );
        assert_eq!(
            page.text("table.rules tbody tr:nth-child(2) td:last-child"),
            "Alice"
        );
        // Three ranges (Mon, Tue, Wed), each day with its empty one to add another.
        assert_eq!(page.count(".week-editor .range"), 10);
        assert_eq!(app.count("schedule_rules").await, 3);

        // Remove the Wednesday line: its free slots go.
        let remove = [
            ("store", "main-store"),
            ("rules[0].weekdays", "MON"),
            ("rules[0].weekdays", "TUE"),
            ("rules[0].opens", "09:00"),
            ("rules[0].closes", "11:00"),
            ("rules[0].slot_minutes", "60"),
            ("rules[0].capacity", "2"),
            ("rules[0].staff", ""),
            ("rules[1].weekdays", "WED"),
            ("rules[1].opens", "14:00"),
            ("rules[1].closes", "15:00"),
            ("rules[1].slot_minutes", "30"),
            ("rules[1].capacity", "1"),
            ("rules[1].staff", "Alice"),
            ("rules[1].remove", "1"),
        ];
        let r = client
            .post(app.url(&url))
            .form(&remove)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        assert_eq!(
            page.attr("#report-counts", "data-created").as_deref(),
            Some("0")
        );
        let removed: usize = page
            .attr("#report-counts", "data-removed")
            .unwrap()
            .parse()
            .unwrap();
        assert!(removed >= 2, "{removed}");
        assert_eq!(page.count("table.rules tbody tr"), 1);
        assert_eq!(
            page.attr("table.rules tbody tr td[data-days]", "data-days")
                .as_deref(),
            Some("MON TUE")
        );
        let alice_slots: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM slots WHERE staff_id IS NOT NULL")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(alice_slots, 0);
    }
);

both!(staff_page_adds_a_member_and_refuses_a_duplicate, |app| {
    app.acme_api().await;
    let client = app.signed_in("store_staff", Some("acme")).await;
    let page = app.page(&client, "/admin/staff").await;
    assert_eq!(page.count("p.empty"), 1);
    let r = client
        .post(app.url("/admin/staff"))
        .form(&[("store", "main-store"), ("name", "Alice")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let page = app.page(&client, &location(&r)).await;
    assert_eq!(page.text(".flash"), "Alice added to the staff.");
    assert_eq!(
        page.attrs("table.staff tr[data-staff]", "data-name"),
        vec!["Alice"]
    );
    let r = client
        .post(app.url("/admin/staff"))
        .form(&[("store", "main-store"), ("name", "Alice")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(
        html(r).await.text(".field-error[data-field=name]"),
        "There is already a staff member called \"Alice\" in this store."
    );
    assert_eq!(app.count("staff").await, 1);
});

async fn metrics_page_shows_rates_per_service_and_week_with_a_labelled_chart_and_the_dashboard_todays_fill_and_this_weeks_no_show_rate(
    app: TestApp,
) {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    api.product("service", "SPA").await;
    let slot = one_off(&api, "CUT", app.next_monday(), 10, 4).await;
    let a = api.booked(slot, "Ann Lee", "13800138000").await;
    let b = api.booked(slot, "Bo Chen", "13800138001").await;
    // The slot took place this week: two of four places booked, one came, one did not.
    let now = app.now_ms();
    let monday_start = Shanghai
        .from_local_datetime(
            &(app.next_monday() - Duration::days(7))
                .and_hms_opt(0, 0, 0)
                .unwrap(),
        )
        .unwrap()
        .timestamp_millis();
    let start = (now - 60_000).max(monday_start);
    sqlx::query("UPDATE slots SET starts_at = $1, ends_at = $2 WHERE id = $3")
        .bind(start)
        .bind(start + 30_000)
        .bind(slot)
        .execute(&app.db.pool)
        .await
        .unwrap();
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    // Nothing marked yet: the rates are dashes, and both pages say how to get them.
    let page = app.page(&client, "/admin/slots/metrics?weeks=4").await;
    assert_eq!(page.count("#mark-to-see-CUT[data-code=mark_attendance]"), 1);
    let staff = app.signed_in("store_staff", Some("acme")).await;
    let dash = app.page(&staff, "/admin").await;
    let tile = "#week-no-show-main-store";
    assert_eq!(dash.text(&format!("{tile} .num")), "—");
    assert_eq!(
        dash.count(&format!("{tile} [data-code=mark_attendance]")),
        1
    );

    api.post(&format!("/api/v1/bookings/{a}/attended"), json!({}))
        .await;
    api.post(&format!("/api/v1/bookings/{b}/no-show"), json!({}))
        .await;

    // The dashboard's headline: today's slot is half booked, and half of this week's marked
    // places did not show.
    let dash = app.page(&staff, "/admin").await;
    let fill = "#today-fill-main-store";
    assert_eq!(dash.text(&format!("{fill} .num")), "50.0%");
    assert_eq!(
        (
            dash.attr(fill, "data-booked").as_deref(),
            dash.attr(fill, "data-capacity").as_deref()
        ),
        (Some("2"), Some("4"))
    );
    assert_eq!(dash.text(&format!("{tile} .num")), "50.0%");
    assert_eq!(
        dash.count(&format!("{tile} [data-code=mark_attendance]")),
        0
    );
    // Operators do not run a store's day: no headline for them.
    let operator = app.signed_in("operator", None).await;
    assert_eq!(app.page(&operator, "/admin").await.count(".store-today"), 0);

    let page = html(
        client
            .get(app.url("/admin/slots/metrics?weeks=4"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(page.count("section.service-metrics"), 2);
    let cut = "section.service-metrics[data-service=CUT]";
    assert_eq!(page.count(&format!("{cut} table.metrics tbody tr")), 4);
    assert_eq!(page.count(&format!("{cut} svg rect")), 12, "3 bars a week");
    // Both axes say what they measure: 0, 50 and 100% up the side, the weeks along the foot.
    assert_eq!(page.count(&format!("{cut} svg text.y-label")), 3);
    assert_eq!(page.count(&format!("{cut} svg text.x-label")), 4);
    assert_eq!(page.count(&format!("{cut} svg text.axis-title")), 1);
    assert_eq!(page.count("#mark-to-see-CUT"), 0, "marks exist now");
    // The headline over the period: the one slot that took place, half of it shown up.
    assert_eq!(page.text(&format!("{cut} .headline dd.show")), "50.0%");
    let last = format!("{cut} table.metrics tbody tr:last-child");
    assert_eq!(page.text(&format!("{last} td.show")), "50.0%");
    assert_eq!(page.text(&format!("{last} td.no-show")), "50.0%");
    assert_eq!(page.text(&format!("{last} td.vacancy")), "50.0%");
    assert_eq!(
        page.text(&format!("{cut} table.metrics tbody tr:first-child td.show")),
        "—"
    );
    let only = html(
        client
            .get(app.url("/admin/slots/metrics?service=SPA"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(only.count("section.service-metrics"), 1);
    // SPA had no slot in the period: it says so instead of an empty chart and table.
    assert_eq!(only.count("section.service-metrics .nothing-took-place"), 1);
    assert_eq!(only.count("section.service-metrics table.metrics"), 0);
}
on_each_day!(metrics_page_shows_rates_per_service_and_week_with_a_labelled_chart_and_the_dashboard_todays_fill_and_this_weeks_no_show_rate);
