//! The Bookings tab (issue 19): upcoming, past and cancelled bookings of the store, found by
//! name, phone digits or reference, filtered by service and staff, and exported as CSV.

use serde_json::json;

use crate::both;
use crate::helpers::{at_text, Api, TestApp};

async fn slot(api: &Api, sku: &str, hour: u32, staff: Option<&str>) -> i64 {
    let day = api.next_monday();
    let (s, b) = api
        .post(
            "/api/v1/slots",
            json!({"sku": sku, "starts_at": at_text(day, hour), "ends_at": at_text(day, hour + 1),
                "capacity": 4, "staff": staff}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_i64().unwrap()
}

async fn refs(app: &TestApp, client: &reqwest::Client, query: &str) -> Vec<String> {
    app.page(client, &format!("/admin/bookings/list?{query}"))
        .await
        .attrs("table.blist tbody tr", "data-ref")
}

both!(
    the_bookings_list_finds_by_name_phone_or_reference_filters_by_service_and_staff_and_exports_csv,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.product("service", "SPA").await;
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Alice"})).await;
        assert_eq!(s, 201, "{b}");
        let alice = b["id"].as_i64().unwrap();
        let cut = slot(&api, "CUT", 10, Some("Alice")).await;
        let spa = slot(&api, "SPA", 11, None).await;
        let spa_later = slot(&api, "SPA", 14, None).await;
        let ann = api.booked(cut, "Ann Lee", "13800138000").await;
        let bo = api.booked(spa, "Bo Chen", "13800138001").await;
        let cy = api.booked(spa_later, "Cy Wu", "13900139000").await;
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{cy}/cancel"), json!({}))
            .await;
        assert!(s == 200, "{s} {b}");
        let client = app.signed_in("store_staff", Some("acme")).await;

        // Upcoming by default, soonest first; cancelled ones apart.
        let page = app.page(&client, "/admin/bookings/list").await;
        assert_eq!(
            page.attr("nav.when-tabs a[aria-current=page]", "data-when")
                .as_deref(),
            Some("upcoming")
        );
        assert_eq!(
            page.attrs("table.blist tbody tr", "data-ref"),
            vec![ann.clone(), bo.clone()]
        );
        assert_eq!(
            refs(&app, &client, "when=cancelled").await,
            vec![cy.clone()]
        );
        assert!(refs(&app, &client, "when=past").await.is_empty());

        // By name (any case), by phone digits however typed, by reference. The name searched
        // for has an L, which no reference can hold (their alphabet has no I, L, O, 0 or 1): a
        // random reference never matches it.
        assert_eq!(refs(&app, &client, "q=LEE").await, vec![ann.clone()]);
        assert_eq!(refs(&app, &client, "q=0013+8001").await, vec![bo.clone()]);
        assert_eq!(
            refs(&app, &client, &format!("q={}", bo.to_lowercase())).await,
            vec![bo.clone()]
        );
        assert!(
            refs(&app, &client, "q=%25").await.is_empty(),
            "a % matches only a %"
        );
        let none = app.page(&client, "/admin/bookings/list?q=nobody").await;
        assert_eq!(none.count("#no-bookings"), 1);

        // By service and by staff member.
        assert_eq!(refs(&app, &client, "service=SPA").await, vec![bo.clone()]);
        assert_eq!(
            refs(&app, &client, &format!("staff={alice}")).await,
            vec![ann.clone()]
        );

        // A slot that took place moves its bookings to Past.
        sqlx::query(
            "UPDATE slots SET starts_at = starts_at - $1, ends_at = ends_at - $1 WHERE id = $2",
        )
        .bind(14 * 86_400_000i64)
        .bind(spa)
        .execute(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(refs(&app, &client, "when=past").await, vec![bo.clone()]);
        assert_eq!(refs(&app, &client, "").await, vec![ann.clone()]);

        // The CSV holds the same selection, one row per booking.
        let page = app.page(&client, "/admin/bookings/list?when=past").await;
        let href = page.attr("#blist-csv", "href").unwrap();
        let r = client.get(app.url(&href)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv"));
        let bytes = r.bytes().await.unwrap();
        assert!(
            bytes.starts_with(b"\xEF\xBB\xBF"),
            "a byte-order mark, so that spreadsheets read the names as UTF-8"
        );
        let body = String::from_utf8(bytes[3..].to_vec()).unwrap();
        let mut lines = body.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("reference,starts_at,ends_at,service,staff,customer_name,phone"));
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), 1, "{body}");
        assert!(
            rows[0].starts_with(&format!("{bo},")) && rows[0].contains("Bo Chen"),
            "{body}"
        );
    }
);

both!(
    the_bookings_list_sorts_by_a_column_both_ways_keeping_its_filters_in_the_pager_and_the_csv,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.product("service", "SPA").await;
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Zed"})).await;
        assert_eq!(s, 201, "{b}");
        let cut = slot(&api, "CUT", 10, Some("Zed")).await;
        let spa = slot(&api, "SPA", 9, None).await;
        let spa_later = slot(&api, "SPA", 14, None).await;
        let ann = api.booked(cut, "ann Lee", "13800138000").await;
        let bo = api.booked(spa, "Bo Chen", "13800138001").await;
        let cy = api.booked(spa_later, "Cy Wu", "13900139000").await;
        let client = app.signed_in("store_staff", Some("acme")).await;

        // The list's own order: soonest first.
        assert_eq!(
            refs(&app, &client, "").await,
            [bo.clone(), ann.clone(), cy.clone()]
        );
        // By name (whatever its case), then the other way round.
        assert_eq!(
            refs(&app, &client, "sort=name").await,
            [ann.clone(), bo.clone(), cy.clone()]
        );
        assert_eq!(
            refs(&app, &client, "sort=name&desc=1").await,
            [cy.clone(), bo.clone(), ann.clone()]
        );
        // By service, then by the time within it.
        assert_eq!(
            refs(&app, &client, "sort=service").await,
            [ann.clone(), bo.clone(), cy.clone()]
        );
        // By staff: those without anyone last.
        assert_eq!(
            refs(&app, &client, "sort=staff").await,
            [ann.clone(), bo.clone(), cy.clone()]
        );
        assert_eq!(
            refs(&app, &client, "sort=staff&desc=1").await,
            [cy.clone(), bo.clone(), ann.clone()]
        );
        // Hostile or unknown: the list's own order.
        assert_eq!(
            refs(&app, &client, "sort=%27%3B--&desc=yes").await,
            [bo.clone(), ann.clone(), cy.clone()]
        );

        // The header links: the sorted column says so and links the other way; filters stay.
        let page = app
            .page(&client, "/admin/bookings/list?q=13800&sort=name")
            .await;
        assert_eq!(
            page.attr("th[data-sort=name]", "aria-sort").as_deref(),
            Some("ascending")
        );
        assert_eq!(
            page.attr("th[data-sort=time]", "aria-sort").as_deref(),
            Some("none")
        );
        // The same choice in the filters (a phone shows cards without headers), so that a new
        // search keeps the order.
        assert_eq!(
            page.attr("#blist-sort option[selected]", "value")
                .as_deref(),
            Some("name")
        );
        let href = page.attr("th[data-sort=name] a", "href").unwrap();
        assert!(
            href.contains("q=13800") && href.contains("sort=name") && href.contains("desc=1"),
            "{href}"
        );
        assert_eq!(
            page.attrs("table.blist tbody tr", "data-ref"),
            [ann.clone(), bo.clone()]
        );
        // The CSV holds the same selection in the same order.
        let csv_href = page.attr("#blist-csv", "href").unwrap();
        assert!(csv_href.contains("sort=name"), "{csv_href}");
        let csv = client
            .get(app.url(&csv_href))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let (a, b) = (csv.find(&ann).unwrap(), csv.find(&bo).unwrap());
        assert!(a < b, "{csv}");
        // The shared pager is there, keeping the sort.
        assert_eq!(page.attr("nav.pager", "data-pages").as_deref(), Some("1"));
    }
);

both!(
    a_search_that_finds_nothing_in_its_tab_links_the_tabs_where_it_finds_bookings,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let cut = slot(&api, "CUT", 10, None).await;
        let cy = api.booked(cut, "Cy Wu", "13900139000").await;
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{cy}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        let client = app.signed_in("store_staff", Some("acme")).await;
        let page = app.page(&client, "/admin/bookings/list?q=Cy").await;
        assert_eq!(page.count("table.blist tbody tr"), 0);
        assert_eq!(
            page.attrs("#no-bookings a[data-code=found_elsewhere]", "data-when"),
            ["cancelled"]
        );
        let there = page
            .attr("#no-bookings a[data-code=found_elsewhere]", "href")
            .unwrap();
        assert_eq!(
            refs(&app, &client, there.split('?').nth(1).unwrap()).await,
            [cy]
        );
        // Found nowhere: no tab is offered.
        let page = app.page(&client, "/admin/bookings/list?q=Nobody").await;
        assert_eq!(page.count("#no-bookings a[data-code=found_elsewhere]"), 0);
        assert_eq!(page.count("#no-bookings"), 1);
    }
);
