use serde_json::json;

use crate::both;
use crate::helpers::{html, Api, TestApp};

async fn public_slug(app: &TestApp) -> String {
    sqlx::query_scalar(
        "SELECT public_slug FROM stores WHERE slug = 'main-store' ORDER BY id LIMIT 1",
    )
    .fetch_one(&app.db.pool)
    .await
    .unwrap()
}

async fn one_off(api: &Api, hours: i64, capacity: i64) -> i64 {
    let start = chrono::Utc::now() + chrono::Duration::hours(hours);
    let (s, b) = api
        .post("/api/v1/slots", json!({"sku": "CUT", "starts_at": start.to_rfc3339(), "ends_at": (start + chrono::Duration::minutes(45)).to_rfc3339(), "capacity": capacity}))
        .await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_i64().unwrap()
}

both!(
    customer_books_on_the_public_page_gets_a_reference_and_cancels,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let slot = one_off(&api, 26, 2).await;
        let store = public_slug(&app).await;
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
        assert_eq!(page.count(".days a"), 14);
        // The slot is tomorrow or the day after in Shanghai: pick its day.
        let day = sqlx::query_scalar::<_, i64>("SELECT starts_at FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let day = sellable::domain::validate::ms_to_local(
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
            page.text(&format!("li[data-slot='{slot}'] .places")),
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
        assert!(
            frag.trim_start().starts_with("<div id=\"picker\">"),
            "fragment: {frag:?}"
        );
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
        let page = html(c.get(app.url(&location)).send().await.unwrap()).await;
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
        let page = html(c.get(app.url(&location)).send().await.unwrap()).await;
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
        let store = public_slug(&app).await;
        let c = app.client();
        let page = html(
            c.get(app.url(&format!("/book/{store}/slots/{full}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.text(".refusal p"), "This slot is full.");
        assert_eq!(page.count("form"), 0);
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
        assert_eq!(
            page.text(".refusal p"),
            "This slot is closed: Staff training."
        );
        // Posting to a slot that filled up meanwhile answers 409 with the same explanation.
        let r = c
            .post(app.url(&format!("/book/{store}/slots/{full}")))
            .form(&[
                ("name", "Bob"),
                ("phone", "+86 13900139000"),
                ("idempotency_key", "k"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 409);
        assert_eq!(html(r).await.text(".refusal p"), "This slot is full.");
        // The customer who already holds it is told their reference.
        let r = c
            .post(app.url(&format!("/book/{store}/slots/{full}")))
            .form(&[
                ("name", "Ann"),
                ("phone", "+86 13800138000"),
                ("idempotency_key", "k2"),
            ])
            .send()
            .await
            .unwrap();
        let page = html(r).await;
        assert!(page
            .text(".refusal p")
            .starts_with("You already have a booking in this slot"));
        assert!(page
            .attr(".refusal a", "href")
            .unwrap()
            .starts_with("/booking/"));
    }
);

both!(public_form_errors_show_inline_and_book_nothing, |app| {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let slot = one_off(&api, 30, 2).await;
    let store = public_slug(&app).await;
    let c = app.client();
    let r = c
        .post(app.url(&format!("/book/{store}/slots/{slot}")))
        .form(&[("name", ""), ("phone", "12"), ("idempotency_key", "k")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let page = html(r).await;
    assert_eq!(
        page.text(".field-error[data-field=name]"),
        "Name is required."
    );
    assert_eq!(
        page.text(".field-error[data-field=phone]"),
        "Enter a phone number of 6 to 15 digits, like +86 138 0013 8000."
    );
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
        let store = public_slug(&app).await;
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
    let config = sellable::Config {
        public_rate_per_minute: 6,
        ..sellable::Config::for_database(&app.database_url)
    };
    let limited = sellable::build(config).await.unwrap();
    let addr = limited.local_addr();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(limited.run_until(async move {
        let _ = rx.await;
    }));
    app.merchant("acme").await;
    let store = public_slug(&app).await;
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
    assert_eq!(
        html(r).await.text(".error-message"),
        "Too many requests from your address. Wait a minute and try again."
    );
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
