use serde_json::json;

use crate::both;
use crate::helpers::{html, Api, TestApp};
use crate::on_each_day;

pub async fn one_off(api: &Api, hours: i64, capacity: i64) -> i64 {
    let start = api.now() + chrono::Duration::hours(hours);
    api.one_off(
        "CUT",
        start,
        start + chrono::Duration::minutes(45),
        capacity,
    )
    .await
}

both!(
    customer_books_on_the_public_page_gets_a_reference_and_cancels,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, 26, 2).await;
        let store = app.public_slug().await;
        let c = app.client();
        let page = html(
            c.get(app.url(&format!("/book/{store}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.text("h1"), "Book at Main store");
        assert_eq!(page.texts(".services a strong"), vec!["Product CUT"]);
        // The days offered are the window the schedule is built for.
        assert_eq!(
            page.count(".days a") as i64,
            sellable::domain::slots::schedule::DEFAULT_WINDOW_DAYS
        );
        // The slot is tomorrow or the day after in Shanghai: pick its day.
        let day = sqlx::query_scalar::<_, i64>("SELECT starts_at FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let day = sellable::domain::kernel::validate::ms_to_local(
            day,
            "Asia/Shanghai".parse().unwrap(),
            "%Y-%m-%d",
        );
        let page = html(
            c.get(app.url(&format!("/book/{store}?service=CUT&day={day}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            page.text(&format!("[data-slot='{slot}'] .places")),
            "2 places left"
        );
        // htmx asks for the picker alone.
        let frag = c
            .get(app.url(&format!("/book/{store}?service=CUT&day={day}")))
            .header("HX-Request", "true")
            .header("HX-Target", "picker")
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        // The picker, and the language switcher out of band so that its links keep the day.
        let parsed = crate::helpers::Html::parse(&frag);
        assert_eq!(parsed.count("div#picker"), 1, "fragment: {frag:?}");
        assert_eq!(parsed.count("header, main"), 0, "fragment: {frag:?}");
        assert_eq!(
            parsed.attr("nav#lang-switch", "hx-swap-oob").as_deref(),
            Some("true")
        );
        assert!(parsed
            .attr("nav#lang-switch a[data-lang=zh-CN]", "href")
            .unwrap()
            .contains(&format!("day={day}")));
        let form_page = html(
            c.get(app.url(&format!("/book/{store}/slots/{slot}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let key = form_page
            .attr("input[name=idempotency_key]", "value")
            .unwrap();
        let form = [
            ("name", "Ann Lee"),
            ("phone", "+86 138 0013 8000"),
            ("idempotency_key", key.as_str()),
        ];
        let r = c
            .post(app.url(&format!("/book/{store}/slots/{slot}")))
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let location = r.headers()["location"].to_str().unwrap().to_string();
        assert!(location.starts_with("/booking/"));
        // A double submit of the same form lands on the same booking.
        let r = c
            .post(app.url(&format!("/book/{store}/slots/{slot}")))
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()["location"].to_str().unwrap(), location);
        let page = app.page(&c, &location).await;
        let reference = page.text(".reference");
        assert_eq!(reference.len(), 10);
        assert!(page.text(".flash").contains(&reference));
        assert_eq!(page.text(".status"), "Booked");
        let confirm = html(
            c.get(app.url(&format!("{location}/cancel")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(confirm.text("h1").starts_with("Cancel booking"));
        let r = c
            .post(app.url(&format!("{location}/cancel")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&c, &location).await;
        assert_eq!(page.text(".status"), "Cancelled");
        assert_eq!(page.count("a.danger"), 0, "nothing left to cancel");
        let booked: i64 = sqlx::query_scalar("SELECT booked FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(booked, 0);
    }
);

both!(
    a_full_or_closed_slot_explains_itself_and_offers_the_nearest_free_ones,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let full = one_off(&api, 30, 1).await;
        let free = one_off(&api, 32, 3).await;
        let closed = one_off(&api, 34, 3).await;
        api.post("/api/v1/bookings", json!({"slot_id": full, "name": "Ann", "phone": "+86 13800138000", "idempotency_key": "a"})).await;
        api.post(
            &format!("/api/v1/slots/{closed}/close"),
            json!({"reason": "Staff training"}),
        )
        .await;
        let store = app.public_slug().await;
        let c = app.client();
        let page = html(
            c.get(app.url(&format!("/book/{store}/slots/{full}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.text(".refusal p"), "This slot is full.");
        // No booking form: only the waiting list's.
        assert_eq!(page.count("form:not(#waitlist-form)"), 0);
        assert_eq!(page.count("form#waitlist-form"), 1);
        assert!(
            page.attr(".slot-list a", "href")
                .unwrap()
                .ends_with(&format!("/slots/{free}")),
            "the nearest free slot is offered"
        );
        let page = html(
            c.get(app.url(&format!("/book/{store}/slots/{closed}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        // Staff's reason is theirs: customers read "not available".
        assert_eq!(page.text(".refusal p"), "This time is not available.");
        assert!(!page.text("main").contains("Staff training"));
        // Posting to a slot that filled up meanwhile answers 409 with the same explanation.
        // (The form was opened while it had room: its token no longer matters once it is full.)
        let r = c
            .post(app.url(&format!("/book/{store}/slots/{full}")))
            .form(&[
                ("name", "Bob"),
                ("phone", "+86 13900139000"),
                ("idempotency_key", "opened-earlier"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 409);
        assert_eq!(html(r).await.text(".refusal p"), "This slot is full.");
        // Whoever types the number of a customer who holds a place learns that it is taken, never
        // the booking itself: no reference, no link to it.
        let r = c
            .post(app.url(&format!("/book/{store}/slots/{full}")))
            .form(&[
                ("name", "Ann"),
                ("phone", "+86 13800138000"),
                ("idempotency_key", "opened-earlier"),
            ])
            .send()
            .await
            .unwrap();
        let page = html(r).await;
        assert_eq!(page.count("a[href^='/booking/']"), 0);
    }
);

both!(public_form_errors_show_inline_and_book_nothing, |app| {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let slot = one_off(&api, 30, 2).await;
    let store = app.public_slug().await;
    let c = app.client();
    let r = c
        .post(app.url(&format!("/book/{store}/slots/{slot}")))
        .form(&[
            ("name", ""),
            ("phone", "12"),
            (
                "idempotency_key",
                form_token(&app, &c, &format!("/book/{store}/slots/{slot}"))
                    .await
                    .as_str(),
            ),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let page = html(r).await;
    assert_eq!(
        page.text(".field-error[data-field=name]"),
        "Name is required."
    );
    assert_eq!(page.count(".field-error[data-field=phone]"), 1);
    assert_eq!(
        page.attr("input[name=phone]", "value").as_deref(),
        Some("12")
    );
    assert_eq!(app.count("bookings").await, 0);
});

both!(
    public_pages_only_show_the_stores_own_online_services,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, 30, 2).await;
        app.merchant("globex").await;
        let other_store: String = sqlx::query_scalar(
            "SELECT public_slug FROM stores WHERE slug = 'main-store' ORDER BY id DESC LIMIT 1",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let store = app.public_slug().await;
        assert_ne!(
            store, other_store,
            "public slugs are unique across merchants"
        );
        let c = app.client();
        assert_eq!(
            c.get(app.url(&format!("/book/{other_store}/slots/{slot}")))
                .send()
                .await
                .unwrap()
                .status(),
            404,
            "a slot of another store"
        );
        assert_eq!(
            c.get(app.url("/book/no-such-store"))
                .send()
                .await
                .unwrap()
                .status(),
            404
        );
        let page = html(
            c.get(app.url(&format!("/book/{other_store}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(page
            .text(".empty")
            .starts_with("Nothing can be booked online here"));
        let id: i64 = sqlx::query_scalar("SELECT product_id FROM skus WHERE code = 'CUT'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        api.call(
            reqwest::Method::PATCH,
            &format!("/api/v1/products/{id}"),
            Some(json!({"status": "OFFLINE"})),
        )
        .await;
        let page = html(
            c.get(app.url(&format!("/book/{store}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            page.count(".services a"),
            0,
            "an OFFLINE service is not offered"
        );
    }
);

both!(the_public_page_is_rate_limited_per_address, |app| {
    let mut config = sellable::Config::for_database(&app.database_url);
    config.serve.public_rate_per_minute = 6;
    config.clock = app.db.clock.clone();
    let limited = sellable::build(config).await.unwrap();
    let addr = limited.local_addr();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(limited.run_until(async move {
        let _ = rx.await;
    }));
    app.merchant("acme").await;
    let store = app.public_slug().await;
    let c = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..12 {
        statuses.push(
            c.get(format!("http://{addr}/book/{store}"))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16(),
        );
    }
    assert!(statuses.iter().take(5).all(|s| *s == 200), "{statuses:?}");
    assert!(statuses.contains(&429), "{statuses:?}");
    let r = c
        .get(format!("http://{addr}/book/{store}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    let page = html(r).await;
    assert_eq!(
        page.text(".error-message"),
        sellable::messages::too_many_requests()
    );
    // In the booking pages' look: no way into the back office from here.
    assert_eq!(
        page.attr(".error-page", "data-status").as_deref(),
        Some("429")
    );
    assert_eq!(page.count("a[href^=\"/admin\"]"), 0);
    // The back office is not limited by the public page's budget.
    assert_eq!(
        c.get(format!("http://{addr}/login"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let _ = tx.send(());
});

/// The token of the booking form the server issued for that page.
pub async fn form_token(app: &crate::helpers::TestApp, c: &reqwest::Client, path: &str) -> String {
    let page = c
        .get(app.url(path))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    crate::helpers::Html::parse(&page)
        .attr("input[name=idempotency_key]", "value")
        .unwrap_or_else(|| panic!("the booking form carries its token: {page}"))
}

/// Posts the public form of a slot with a token fetched by `c`.
pub async fn post_booking(
    app: &TestApp,
    c: &reqwest::Client,
    store: &str,
    slot: i64,
    name: &str,
    phone: &str,
) -> reqwest::Response {
    let path = format!("/book/{store}/slots/{slot}");
    let token = form_token(app, c, &path).await;
    c.post(app.url(&path))
        .form(&[
            ("name", name),
            ("phone", phone),
            ("idempotency_key", token.as_str()),
        ])
        .send()
        .await
        .unwrap()
}

both!(
    a_booking_form_token_cannot_be_made_up_or_replayed_from_another_browser,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, 30, 3).await;
        let store = app.public_slug().await;
        let path = format!("/book/{store}/slots/{slot}");
        let ann = app.client();
        // A key the client chose is not a key we issued.
        let r = ann
            .post(app.url(&path))
            .form(&[
                ("name", "Ann"),
                ("phone", "+86 138 0013 8000"),
                ("idempotency_key", "my-own-key"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 409);
        assert_eq!(html(r).await.count("[data-code=form_used]"), 1);
        assert_eq!(app.count("bookings").await, 0);
        // Ann books with the form she was given...
        let token = form_token(&app, &ann, &path).await;
        let form = [
            ("name", "Ann"),
            ("phone", "+86 138 0013 8000"),
            ("idempotency_key", token.as_str()),
        ];
        let r = ann.post(app.url(&path)).form(&form).send().await.unwrap();
        assert_eq!(r.status(), 303);
        let mine = r.headers()["location"].to_str().unwrap().to_string();
        // ...someone else who got hold of it, even with her number, gets nothing of hers.
        let eve = app.client();
        let r = eve.post(app.url(&path)).form(&form).send().await.unwrap();
        assert_eq!(r.status(), 409);
        let body = r.text().await.unwrap();
        let reference = mine.trim_start_matches("/booking/");
        assert!(
            !body.contains(reference),
            "another browser was shown Ann's booking"
        );
        // A token of one slot does not book another.
        let other = one_off(&api, 31, 3).await;
        let r = eve
            .post(app.url(&format!("/book/{store}/slots/{other}")))
            .form(&[
                ("name", "Eve"),
                ("phone", "+86 139 0013 9000"),
                ("idempotency_key", token.as_str()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 409);
        assert_eq!(app.count("bookings").await, 1);
    }
);

both!(
    an_api_idempotency_key_reused_for_another_slot_or_customer_is_refused_with_idempotency_conflict,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let a = one_off(&api, 30, 3).await;
        let b = one_off(&api, 31, 3).await;
        let body = |slot: i64, phone: &str| json!({"slot_id": slot, "name": "Ann", "phone": phone, "idempotency_key": "order-77"});
        let (s, first) = api
            .post("/api/v1/bookings", body(a, "+86 138 0013 8000"))
            .await;
        assert_eq!(s, 201, "{first}");
        let (s, again) = api
            .post("/api/v1/bookings", body(a, "+86 138 0013 8000"))
            .await;
        assert_eq!(
            (s, &again["reference"]),
            (201, &first["reference"]),
            "the same request repeated"
        );
        let (s, e) = api
            .post("/api/v1/bookings", body(b, "+86 138 0013 8000"))
            .await;
        assert_eq!(
            (s, e["error"].as_str()),
            (409, Some("idempotency_conflict")),
            "{e}"
        );
        let (s, e) = api
            .post("/api/v1/bookings", body(a, "+86 139 0013 9000"))
            .await;
        assert_eq!(
            (s, e["error"].as_str()),
            (409, Some("idempotency_conflict")),
            "{e}"
        );
        assert!(e.get("reference").is_none(), "{e}");
    }
);

both!(
    one_phone_number_however_it_is_written_is_one_customer_and_invalid_numbers_are_refused,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, 30, 6).await;
        let store = app.public_slug().await;
        let c = app.client();
        let r = post_booking(&app, &c, &store, slot, "Ann", "+86 138 0013 8000").await;
        assert_eq!(r.status(), 303);
        // The store is in Asia/Shanghai: numbers without a country code are Chinese.
        for same in [
            "8613800138000",
            "0086 138 0013 8000",
            "138-0013-8000",
            "(138) 0013 8000",
        ] {
            let r = post_booking(&app, &c, &store, slot, "Ann", same).await;
            assert_eq!(r.status(), 409, "{same}");
            assert_eq!(
                html(r).await.count("[data-code=already_booked]"),
                1,
                "{same}"
            );
        }
        for bad in ["12345", "+86 123", "138 0013 800a", "+999 1234 5678"] {
            let r = post_booking(&app, &c, &store, slot, "Bob", bad).await;
            assert_eq!(r.status(), 422, "{bad}");
            assert_eq!(
                html(r).await.count(".field-error[data-field=phone]"),
                1,
                "{bad}"
            );
        }
        let stored: String = sqlx::query_scalar("SELECT customer_key FROM bookings")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(
            stored, "+8613800138000",
            "E.164 is what identifies the customer"
        );
    }
);

both!(
    one_anonymous_customer_cannot_take_more_than_the_cap_even_all_at_once,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let store = app.public_slug().await;
        let c = app.client();
        let mut forms = Vec::new();
        for h in 0..8 {
            let slot = one_off(&api, 30 + h, 5).await;
            let path = format!("/book/{store}/slots/{slot}");
            forms.push((path.clone(), form_token(&app, &c, &path).await));
        }
        // Eight bookings of one phone number at once: the cap (4) holds, not a read-then-write.
        let mut racing = Vec::new();
        for (path, token) in forms {
            let (c, url) = (c.clone(), app.url(&path));
            racing.push(tokio::spawn(async move {
                c.post(url)
                    .form(&[
                        ("name", "Ann"),
                        ("phone", "+86 138 0013 8000"),
                        ("idempotency_key", token.as_str()),
                    ])
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            }));
        }
        let mut statuses = Vec::new();
        for r in racing {
            statuses.push(r.await.unwrap());
        }
        assert_eq!(
            statuses.iter().filter(|s| **s == 303).count(),
            4,
            "{statuses:?}"
        );
        assert_eq!(
            statuses.iter().filter(|s| **s == 409).count(),
            4,
            "{statuses:?}"
        );
        assert_eq!(app.count("bookings").await, 4);
        // Other numbers from one address: up to 10 upcoming bookings from there (another loopback
        // address than the one above, so the page's rate limit does not get in the way).
        let c = app.client_from(2);
        let slot = one_off(&api, 50, 20).await;
        let mut ok = 0;
        let mut last = None;
        for i in 0..11 {
            let r = post_booking(
                &app,
                &c,
                &store,
                slot,
                "Guest",
                &format!("+86 139 0000 00{i:02}"),
            )
            .await;
            if r.status() == 303 {
                ok += 1;
            } else {
                last = Some(html(r).await.count("[data-code=too_many_bookings]"));
            }
        }
        assert_eq!(ok, 10, "the address cap is 10");
        assert_eq!(last, Some(1));
        // The merchant's API is not capped: it answers for its own customers.
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": slot, "name": "Ann", "phone": "+86 138 0013 8000"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
    }
);

both!(
    a_closed_slot_shows_customers_the_closures_note_never_staffs_reason,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, 30, 3).await;
        let store = app.public_slug().await;
        let now = app.now();
        let (s, b) = api
            .post(
                "/api/v1/closures",
                json!({"starts_at": (now + chrono::Duration::hours(29)).to_rfc3339(),
                       "ends_at": (now + chrono::Duration::hours(32)).to_rfc3339(),
                       "reason": "Mei – hospital", "public_note": "Closed for a private event"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let c = app.client();
        let day = (now + chrono::Duration::hours(30))
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .format("%Y-%m-%d");
        for path in [
            format!("/book/{store}?service=CUT&day={day}"),
            format!("/book/{store}/slots/{slot}"),
        ] {
            let body = c
                .get(app.url(&path))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(
                !body.contains("hospital"),
                "{path} publishes staff's reason"
            );
            assert!(
                body.contains("Closed for a private event"),
                "{path} shows the note"
            );
        }
    }
);

both!(an_api_client_cannot_use_the_public_pages_key_space, |app| {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let slot = one_off(&api, 30, 3).await;
    let (s, e) = api
            .post("/api/v1/bookings", json!({"slot_id": slot, "name": "Ann", "phone": "+86 138 0013 8000", "idempotency_key": "public:0123"}))
            .await;
    assert_eq!(
        (s, e["fields"][0]["code"].as_str()),
        (422, Some("invalid_idempotency_key")),
        "{e}"
    );
});

both!(
    the_confirmation_offers_a_calendar_file_and_says_until_when_it_can_be_cancelled,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, 30, 2).await;
        let (s, b) = api.book(slot, "Ann Lee", "+86 138 0013 8000", None).await;
        assert_eq!(s, 201, "{b}");
        let reference = b["reference"].as_str().unwrap().to_string();
        let c = app.client();
        let page = app.page(&c, &format!("/booking/{reference}")).await;
        assert_eq!(page.count("#cancel-until"), 1);
        let href = page.attr("#calendar-file", "href").unwrap();
        let r = c.get(app.url(&href)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/calendar"));
        assert!(r.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains(&format!("booking-{reference}.ics")));
        let ics = r.text().await.unwrap();
        assert!(ics.contains(&format!("UID:{reference}@sellable")), "{ics}");
        assert!(ics.contains("STATUS:CONFIRMED"), "{ics}");
        let starts: i64 = sqlx::query_scalar("SELECT starts_at FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let dtstart = chrono::DateTime::from_timestamp_millis(starts)
            .unwrap()
            .format("DTSTART:%Y%m%dT%H%M%SZ")
            .to_string();
        assert!(ics.contains(&dtstart), "{dtstart} in {ics}");
        // Cancelled, the same file says so (a calendar replaces the entry by its UID).
        let (s, _) = api
            .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200);
        let ics = c
            .get(app.url(&href))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(ics.contains("STATUS:CANCELLED"), "{ics}");
        let page = app.page(&c, &format!("/booking/{reference}")).await;
        assert_eq!(
            page.count("#calendar-file") + page.count("#cancel-until"),
            0
        );
    }
);

both!(
    a_customer_reschedules_to_another_time_keeping_the_reference_and_a_full_time_changes_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let first = one_off(&api, 30, 2).await;
        let full = one_off(&api, 31, 1).await;
        let free = one_off(&api, 32, 2).await;
        let (_, b) = api.book(first, "Ann Lee", "+86 138 0013 8000", None).await;
        let reference = b["reference"].as_str().unwrap().to_string();
        let c = app.client();
        let page = app.page(&c, &format!("/booking/{reference}")).await;
        let href = page.attr("#reschedule-link", "href").unwrap();
        let page = app.page(&c, &href).await;
        let offered = page.attrs("#reschedule-choices li", "data-slot");
        assert_eq!(offered, [full.to_string(), free.to_string()]);
        // The full time fills before the customer chooses it: refused, nothing changes.
        let (s, _) = api.book(full, "Li Lei", "+86 139 0013 8000", None).await;
        assert_eq!(s, 201);
        let r = c
            .post(app.url(&href))
            .form(&[("slot_id", full.to_string())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&c, &crate::helpers::location(&r)).await;
        assert_eq!(page.count(".flash-error"), 1);
        let (_, b) = api.get(&format!("/api/v1/bookings/{reference}")).await;
        assert_eq!(b["slot_id"], first);
        let r = c
            .post(app.url(&href))
            .form(&[("slot_id", free.to_string())])
            .send()
            .await
            .unwrap();
        assert_eq!(
            crate::helpers::location(&r),
            format!("/booking/{reference}")
        );
        let (_, b) = api.get(&format!("/api/v1/bookings/{reference}")).await;
        assert_eq!(
            (b["slot_id"].as_i64(), b["moved_from_slot_id"].as_i64()),
            (Some(free), Some(first))
        );
        assert_eq!(app.slot_booked(first).await, 0);
        assert_eq!(app.slot_booked(free).await, 1);
    }
);

both!(
    a_reschedule_refusal_never_names_another_customers_reference_nor_staffs_closing_reason,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let victims = one_off(&api, 30, 2).await;
        let own = one_off(&api, 31, 2).await;
        let closed = one_off(&api, 32, 2).await;
        // The victim books; a stranger books another time with the victim's phone.
        let phone = "+86 150 1234 0000";
        let (s, b) = api.book(victims, "Victim", phone, None).await;
        assert_eq!(s, 201, "{b}");
        let victim_ref = b["reference"].as_str().unwrap().to_string();
        let (s, b) = api.book(own, "Stranger", phone, None).await;
        assert_eq!(s, 201, "{b}");
        let own_ref = b["reference"].as_str().unwrap().to_string();
        let reason = "Mei's hospital appointment";
        let (s, b) = api
            .post(
                &format!("/api/v1/slots/{closed}/close"),
                json!({ "reason": reason }),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let c = app.client();
        let href = format!("/booking/{own_ref}/reschedule");
        for target in [victims, closed] {
            let r = c
                .post(app.url(&href))
                .form(&[("slot_id", target.to_string())])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 303);
            let body = c
                .get(app.url(&crate::helpers::location(&r)))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let page = crate::helpers::Html::parse(&body);
            assert_eq!(page.count(".flash-error"), 1, "refused, and told so");
            assert!(
                !body.contains(&victim_ref) && !body.contains(reason),
                "slot {target}: {}",
                page.text(".flash-error")
            );
        }
        // Nothing moved.
        let (_, b) = api.get(&format!("/api/v1/bookings/{own_ref}")).await;
        assert_eq!(b["slot_id"], own);
    }
);

async fn the_public_page_offers_the_schedules_window_as_a_month_greys_days_without_room_and_lists_each_time_once_with_its_staff(
    app: TestApp,
) {
    use chrono::{Datelike, TimeZone};
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    for name in ["Mei", "Jun"] {
        let (s, b) = api.post("/api/v1/staff", json!({ "name": name })).await;
        assert_eq!(s, 201, "{b}");
    }
    let tz = chrono_tz::Asia::Shanghai;
    let today = app.now().with_timezone(&tz).date_naive();
    let monday = today + chrono::Duration::days(7 - today.weekday().num_days_from_monday() as i64);
    let at = |d: chrono::NaiveDate, h: u32| {
        tz.from_local_datetime(&d.and_hms_opt(h, 0, 0).unwrap())
            .unwrap()
            .with_timezone(&chrono::Utc)
            .to_rfc3339()
    };
    let slot = |d: chrono::NaiveDate, staff: &'static str, cap: i64| {
        let body = json!({"sku": "CUT", "starts_at": at(d, 14), "ends_at": at(d, 15),
            "capacity": cap, "staff": staff});
        let api = &api;
        async move {
            let (s, b) = api.post("/api/v1/slots", body).await;
            assert_eq!(s, 201, "{b}");
            b["id"].as_i64().unwrap()
        }
    };
    let mei = slot(monday, "Mei", 6).await;
    let jun = slot(monday, "Jun", 2).await;
    let (s, b) = api
        .post(
            &format!("/api/v1/slots/{jun}/close"),
            json!({"reason": "Leave"}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let tuesday = monday + chrono::Duration::days(1);
    let full = slot(tuesday, "Mei", 1).await;
    let (s, b) = api.book(full, "Ann Lee", "13800138000", None).await;
    assert_eq!(s, 201, "{b}");

    let store = app.public_slug().await;
    let day = monday.format("%Y-%m-%d").to_string();
    let page = html(
        app.client()
            .get(app.url(&format!("/book/{store}?service=CUT&day={day}")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    // Each time once, with each staff member's slot at it.
    assert_eq!(page.attrs("li.time-group", "data-time"), vec!["14:00"]);
    assert_eq!(page.count("li.time-group .pick"), 2);
    assert_eq!(page.count(&format!("a.pick.open[data-slot='{mei}']")), 1);
    assert_eq!(
        page.attr(&format!("[data-slot='{jun}'] .places"), "data-state")
            .as_deref(),
        Some("closed")
    );
    // The month: a day with room, a full day (greyed, still open to see why and to wait),
    // and today without any slot.
    let room = |d: chrono::NaiveDate| {
        page.attr(
            &format!(".days a[data-date='{}']", d.format("%Y-%m-%d")),
            "data-room",
        )
    };
    assert_eq!(room(monday).as_deref(), Some("true"));
    assert_eq!(room(tuesday).as_deref(), Some("false"));
    assert_eq!(room(today).as_deref(), Some("false"));
    assert_eq!(
        page.attr(".days a[aria-current=date]", "data-date"),
        Some(day.clone())
    );
    assert_eq!(
        page.count(".days .pad"),
        today.weekday().num_days_from_monday() as usize,
        "days sit under their weekday"
    );
    // Without a day chosen, the page opens on the first day with a free time, under a heading
    // naming the months of the window.
    let first = html(
        app.client()
            .get(app.url(&format!("/book/{store}?service=CUT")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        first.attr(".days a[aria-current=date]", "data-date"),
        Some(day.clone())
    );
    assert!(!first.text("#month-range").is_empty());
    let tue = html(
        app.client()
            .get(app.url(&format!(
                "/book/{store}?service=CUT&day={}",
                tuesday.format("%Y-%m-%d")
            )))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        tue.attr(&format!("a.pick[data-slot='{full}']"), "href"),
        Some(format!("/book/{store}/slots/{full}")),
        "a full time leads to its page, where the waiting list is"
    );
}
on_each_day!(the_public_page_offers_the_schedules_window_as_a_month_greys_days_without_room_and_lists_each_time_once_with_its_staff);

both!(
    a_customer_cannot_reschedule_inside_the_services_minimum_notice_but_staff_and_the_api_can,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api
            .patch_sku("CUT", json!({"min_notice_minutes": 2880}))
            .await;
        assert_eq!(s, 200, "{b}");
        let booked = one_off(&api, 72, 2).await;
        let soon = one_off(&api, 1, 2).await;
        let later = one_off(&api, 96, 2).await;
        let (s, b) = api.book(booked, "Ann Lee", "+86 138 0013 8000", None).await;
        assert_eq!(s, 201, "{b}");
        let reference = b["reference"].as_str().unwrap().to_string();
        let c = app.client();
        let href = format!("/booking/{reference}/reschedule");
        // The page offers only times outside the notice.
        let page = app.page(&c, &href).await;
        assert_eq!(
            page.attrs("#reschedule-choices li", "data-slot"),
            [later.to_string()]
        );
        // A form posted for the time an hour away anyway is refused, and nothing moves.
        let r = c
            .post(app.url(&href))
            .form(&[("slot_id", soon.to_string())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&c, &crate::helpers::location(&r)).await;
        assert_eq!(page.count(".flash-error"), 1);
        let (_, b) = api.get(&format!("/api/v1/bookings/{reference}")).await;
        assert_eq!(b["slot_id"], booked);
        assert_eq!(app.slot_booked(soon).await, 0);
        // The order system (as staff) may move closer in.
        let (s, b) = api
            .post(
                &format!("/api/v1/bookings/{reference}/move"),
                json!({ "slot_id": soon }),
            )
            .await;
        assert_eq!((s, b["slot_id"].as_i64()), (200, Some(soon)), "{b}");
    }
);
