//! Staff book for a caller or a walk-in (issue 54): the form `#staff-book` on the slot page, the
//! day list and the week grid; how the booking came and who took it; the public caps not
//! applied; the service's notice only after a confirmation; a full slot's waiting list offered.

use serde_json::json;

use crate::helpers::{html, location, TestApp};

/// A signed-in store staff member of acme's main store, and their user id.
async fn staff(app: &TestApp) -> (reqwest::Client, i64) {
    let (email, password) = app.user("store_staff", Some("acme")).await;
    let id: i64 = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
        .bind(&email)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    (app.sign_in(&email, &password).await, id)
}

async fn post(
    app: &TestApp,
    c: &reqwest::Client,
    path: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    c.post(app.url(path)).form(form).send().await.unwrap()
}

/// (channel, taken_by, places, status) of the booking with this reference.
async fn row(app: &TestApp, reference: &str) -> (String, Option<i64>, i64, String) {
    sqlx::query_as("SELECT channel, taken_by, places, status FROM bookings WHERE reference = $1")
        .bind(reference)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// acme's service CUT with one slot of `capacity` places starting `ahead` from now.
async fn cut_slot(
    app: &TestApp,
    ahead: chrono::Duration,
    capacity: i64,
) -> (crate::helpers::Api, i64) {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let start = app.now() + ahead;
    let slot = api
        .one_off("CUT", start, start + chrono::Duration::hours(1), capacity)
        .await;
    (api, slot)
}

async fn only_reference(app: &TestApp, slot: i64) -> String {
    sqlx::query_scalar("SELECT reference FROM bookings WHERE slot_id = $1")
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

crate::both!(
    staff_book_a_caller_from_the_slot_page_recorded_by_phone_with_who_took_it_and_a_double_submit_books_once,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.patch_sku("CUT", json!({"max_places": 4})).await;
        let start = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("CUT", start, start + chrono::Duration::hours(1), 3)
            .await;
        let (c, me) = staff(&app).await;
        sqlx::query("UPDATE users SET display_name = '王美玲' WHERE id = $1")
            .bind(me)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let page = app.page(&c, &format!("/admin/slots/{slot}")).await;
        assert_eq!(page.count("form#staff-book"), 1);
        assert_eq!(
            page.attr("#staff-book input[name=slot_id]", "value"),
            Some(slot.to_string())
        );
        let key = page.attr("#staff-book input[name=key]", "value").unwrap();
        let form = [
            ("slot_id", slot.to_string()),
            ("name", "Wang Fang".into()),
            ("phone", "138 0013 8000".into()),
            ("places", "2".into()),
            ("channel", "PHONE".into()),
            ("from", "slot".into()),
            ("key", key),
        ];
        let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = post(&app, &c, "/admin/bookings/new", &form).await;
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), format!("/admin/slots/{slot}"));
        let page = app.page(&c, &location(&r)).await;
        assert_eq!(page.count(".flash-success"), 1);
        let reference = only_reference(&app, slot).await;
        assert_eq!(
            row(&app, &reference).await,
            ("PHONE".into(), Some(me), 2, "BOOKED".into())
        );
        // A second submit of the same form (a double tap, a retry) books nothing more.
        let r = post(&app, &c, "/admin/bookings/new", &form).await;
        assert_eq!(r.status(), 303);
        assert_eq!(app.slot_places(slot).await, (2, 2));
        assert_eq!(app.count("bookings").await, 1);
        // The slot page says how it came and who took it; the API says so too.
        let page = app.page(&c, &format!("/admin/slots/{slot}")).await;
        assert_eq!(
            page.attrs(&format!("tr[data-ref='{reference}'] .taken"), "data-channel"),
            ["PHONE"]
        );
        // Cancelling it goes through the page that asks why, with or without JavaScript.
        assert_eq!(page.count("form[action$='/cancel'][hx-post]"), 0);
        let cancel = page
            .attr(&format!("tr[data-ref='{reference}'] form[action$='/cancel']"), "action")
            .unwrap();
        let confirm = app.page(&c, &format!("{cancel}?from=slot")).await;
        assert_eq!(confirm.count("input[name=reason]"), 1);
        let (s, b) = api.get(&format!("/api/v1/bookings/{reference}")).await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["channel"], "PHONE");
        // People are named by their name, not their e-mail address.
        assert_eq!(b["taken_by"], "王美玲", "{b}");
        // The audit trail names the person and the page.
        let (who, source): (String, String) = sqlx::query_as(
            "SELECT actor, source FROM audit_log WHERE action = 'booking.create' AND subject = $1",
        )
        .bind(format!("booking:{reference}"))
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert!(who.starts_with("user:store_staff-"), "{who}");
        assert_eq!(source, "/admin/bookings/new");
        app.assert_reconciled().await;
    }
);

async fn staff_bookings_do_not_count_against_the_public_caps(backend: crate::helpers::Backend) {
    let Some(app) = TestApp::spawn_with(backend, |c| {
        c.serve.max_bookings_per_phone = 1;
        c.serve.max_bookings_per_address = 1;
    })
    .await
    else {
        return;
    };
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let (c, _) = staff(&app).await;
    for d in 1..=3 {
        let start = app.now() + chrono::Duration::days(d);
        let slot = api
            .one_off("CUT", start, start + chrono::Duration::hours(1), 2)
            .await;
        let slot = slot.to_string();
        let r = post(
            &app,
            &c,
            "/admin/bookings/new",
            &[
                ("slot_id", &slot),
                ("name", "Zhang Wei"),
                ("phone", "+86 139 0000 0001"),
                ("channel", "WALK_IN"),
                ("from", "slot"),
            ],
        )
        .await;
        assert_eq!(r.status(), 303, "day {d}");
    }
    let walk_ins: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM bookings WHERE channel = 'WALK_IN' AND status = 'BOOKED'",
    )
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(walk_ins, 3);
}
crate::on_both!(staff_bookings_do_not_count_against_the_public_caps);

crate::both!(
    staff_book_inside_the_services_notice_only_after_confirming_it,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api
            .patch_sku("CUT", json!({"min_notice_minutes": 240}))
            .await;
        assert_eq!(s, 200, "{b}");
        let start = app.now() + chrono::Duration::hours(2);
        let slot = api
            .one_off("CUT", start, start + chrono::Duration::hours(1), 2)
            .await
            .to_string();
        let (c, _) = staff(&app).await;
        let form = [
            ("slot_id", slot.as_str()),
            ("name", "Li Na"),
            ("phone", "+86 137 0000 0002"),
            ("channel", "PHONE"),
            ("from", "slot"),
        ];
        let r = post(&app, &c, "/admin/bookings/new", &form).await;
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.attr("#book-refused", "data-code").as_deref(),
            Some("too_late_to_book")
        );
        assert_eq!(
            page.count("#staff-book input[type=checkbox][name=confirm]"),
            1
        );
        // What was typed is kept.
        assert_eq!(
            page.attr("#staff-book input[name=name]", "value")
                .as_deref(),
            Some("Li Na")
        );
        assert_eq!(app.count("bookings").await, 0);
        let mut confirmed = form.to_vec();
        confirmed.push(("confirm", "1"));
        let r = post(&app, &c, "/admin/bookings/new", &confirmed).await;
        assert_eq!(r.status(), 303);
        assert_eq!(app.count("bookings").await, 1);
    }
);

crate::both!(
    a_full_slot_offers_staff_its_waiting_list_and_puts_the_caller_on_it,
    |app| {
        let (api, slot) = cut_slot(&app, chrono::Duration::days(1), 1).await;
        let (s, b) = api.book(slot, "Holder", "+86 136 0000 0003", None).await;
        assert_eq!(s, 201, "{b}");
        let (c, _) = staff(&app).await;
        let slot_s = slot.to_string();
        let form = [
            ("slot_id", slot_s.as_str()),
            ("name", "Chen Jie"),
            ("phone", "+86 135 0000 0004"),
            ("channel", "PHONE"),
            ("from", "day"),
        ];
        let r = post(&app, &c, "/admin/bookings/new", &form).await;
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.attr("#book-refused", "data-code").as_deref(),
            Some("slot_full")
        );
        assert_eq!(page.count("form#offer-wait"), 1);
        assert_eq!(
            page.attr("#offer-wait input[name=phone]", "value")
                .as_deref(),
            Some("+86 135 0000 0004")
        );
        assert_eq!(app.count("bookings").await, 1);
        let r = post(&app, &c, "/admin/bookings/new/wait", &form).await;
        assert_eq!(r.status(), 303);
        assert!(
            location(&r).starts_with("/admin/bookings?"),
            "{}",
            location(&r)
        );
        let waiting: Vec<(String, String)> =
            sqlx::query_as("SELECT customer_name, status FROM waitlist WHERE slot_id = $1")
                .bind(slot)
                .fetch_all(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(waiting, [("Chen Jie".to_string(), "WAITING".to_string())]);
    }
);

crate::both!(
    the_day_list_and_the_week_grid_offer_the_form_with_only_the_slots_staff_may_still_book,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let start = app.now() + chrono::Duration::hours(3);
        let open = api
            .one_off("CUT", start, start + chrono::Duration::minutes(30), 2)
            .await;
        let later = start + chrono::Duration::hours(1);
        let closed = api
            .one_off("CUT", later, later + chrono::Duration::minutes(30), 2)
            .await;
        let (s, b) = api
            .post(
                &format!("/api/v1/slots/{closed}/close"),
                json!({"reason": "Leave"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let (c, _) = staff(&app).await;
        let date = (app.now() + chrono::Duration::hours(3))
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .format("%Y-%m-%d")
            .to_string();
        let day = app.page(&c, &format!("/admin/bookings?date={date}")).await;
        let week = app.page(&c, &format!("/admin/slots?week={date}")).await;
        for page in [&day, &week] {
            assert_eq!(
                page.attrs("#staff-book select[name=slot_id] option[value]", "value"),
                ["".to_string(), open.to_string()]
            );
        }
        assert_eq!(
            day.attr("#staff-book input[name=from]", "value").as_deref(),
            Some("day")
        );
        let open_s = open.to_string();
        let r = post(
            &app,
            &c,
            "/admin/bookings/new",
            &[
                ("slot_id", &open_s),
                ("name", "Zhao Min"),
                ("phone", "+86 134 0000 0005"),
                ("channel", "WALK_IN"),
                ("from", "week"),
            ],
        )
        .await;
        assert_eq!(r.status(), 303);
        let back = location(&r);
        assert!(back.starts_with("/admin/slots?"), "{back}");
        let week = app.page(&c, &back).await;
        assert_eq!(week.count(".flash-success"), 1);
        assert_eq!(week.text(&format!("a[data-slot='{open}'] .count")), "1/2");
    }
);

crate::both!(
    bad_input_on_the_staff_booking_form_is_shown_beside_its_field_and_books_nothing,
    |app| {
        let (_, slot) = cut_slot(&app, chrono::Duration::days(1), 2).await;
        let slot = slot.to_string();
        let (c, _) = staff(&app).await;
        let r = post(
            &app,
            &c,
            "/admin/bookings/new",
            &[
                ("slot_id", &slot),
                ("name", "  "),
                ("phone", "12"),
                ("places", "two"),
                ("from", "slot"),
            ],
        )
        .await;
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.attr("#book-not-saved", "data-code").as_deref(),
            Some("not_saved")
        );
        assert_eq!(page.count(".field-error[data-field=places]"), 1);
        let r = post(
            &app,
            &c,
            "/admin/bookings/new",
            &[("slot_id", &slot), ("name", "  "), ("phone", "12")],
        )
        .await;
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(page.count(".field-error[data-field=customer_name]"), 1);
        assert_eq!(page.count(".field-error[data-field=phone]"), 1);
        // No time chosen (the day list's select left empty): said beside the select.
        let r = post(
            &app,
            &c,
            "/admin/bookings/new",
            &[
                ("slot_id", ""),
                ("name", "Sun Li"),
                ("phone", "+86 133 0000 0006"),
                ("from", "day"),
            ],
        )
        .await;
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(page.count(".field-error[data-field=slot_id]"), 1);
        assert_eq!(app.count("bookings").await, 0);
    }
);

crate::both!(
    an_operator_may_not_book_for_a_customer_and_another_merchants_slot_does_not_exist,
    |app| {
        let (_, slot) = cut_slot(&app, chrono::Duration::days(1), 2).await;
        let slot = slot.to_string();
        let form = [
            ("slot_id", slot.as_str()),
            ("name", "Qian Yu"),
            ("phone", "+86 132 0000 0007"),
        ];
        let operator = app.signed_in("operator", None).await;
        let r = post(&app, &operator, "/admin/bookings/new", &form).await;
        assert_eq!(r.status(), 403);
        app.merchant("other").await;
        let stranger = app.signed_in("merchant_admin", Some("other")).await;
        let r = post(&app, &stranger, "/admin/bookings/new", &form).await;
        assert_eq!(r.status(), 404);
        assert_eq!(app.count("bookings").await, 0);
    }
);
