//! The audit log page and its CSV export: who may read which rows, the filters, paging, and that
//! changes made through the API and the back office are written with who and from where.

use serde_json::json;

use crate::both;
use crate::helpers::{html, Api, Html, TestApp};

/// The rows of the audit table as (action, subject, detail, actor, source).
fn rows(page: &Html) -> Vec<(String, String, String, String, String)> {
    let col = |c: &str| page.texts(&format!("table.audit td.{c}"));
    let (a, s, d, who, from) = (
        col("action"),
        col("subject"),
        col("detail"),
        // Who, as the records keep it (the cell says it as people read it).
        page.attrs("table.audit td.actor", "data-actor"),
        col("source"),
    );
    assert!(
        [s.len(), d.len(), who.len(), from.len()]
            .iter()
            .all(|n| *n == a.len()),
        "every row has every cell"
    );
    (0..a.len())
        .map(|i| {
            (
                a[i].clone(),
                s[i].clone(),
                d[i].clone(),
                who[i].clone(),
                from[i].clone(),
            )
        })
        .collect()
}

async fn get(client: &reqwest::Client, app: &TestApp, path: &str) -> Html {
    let r = client.get(app.url(path)).send().await.unwrap();
    assert_eq!(r.status(), 200, "GET {path}");
    html(r).await
}

/// A product created through the API of `merchant`, named so that its audit row is recognisable.
async fn product_of(app: &TestApp, merchant: &str, name: &str, code: &str) {
    let api = Api {
        base: app.base.clone(),
        key: app.api_key(merchant).await,
        http: reqwest::Client::new(),
        clock: app.db.clock.clone(),
    };
    let (s, b) = api
        .post(
            "/api/v1/products",
            json!({"name": name, "kind": "goods", "skus": [{"code": code, "name": code, "price": 100}]}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
}

both!(
    merchant_admin_sees_their_merchants_rows_and_never_another_merchants,
    |app| {
        app.merchant("acme").await;
        app.merchant("globex").await;
        product_of(&app, "acme", "Acme tea", "AT-1").await;
        product_of(&app, "globex", "Globex coffee", "GC-1").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;

        let page = get(&admin, &app, "/admin/audit").await;
        let details = page.texts("table.audit td.detail");
        assert!(details.contains(&"Acme tea".to_string()), "{details:?}");
        assert!(!details.iter().any(|d| d.contains("Globex")), "{details:?}");
        assert_eq!(page.count("select[name=merchant]"), 0, "no merchant picker");
        assert_eq!(page.count("table.audit td.merchant"), 0);
        // Times are readable local times, not unix milliseconds.
        let time = page.text("table.audit td.time");
        let year = app.now().format("%Y").to_string();
        assert!(
            time.contains(&year) && time.matches(':').count() == 2,
            "{time}"
        );
        // The merchant's zone, as the page's language names it.
        let zone = sellable::i18n::format::zone(sellable::i18n::Lang::En, "Asia/Shanghai");
        assert!(page.text(".audit-summary").contains(&zone), "{zone}");

        // Asking for the other merchant does not widen the scope, on the page or in the export.
        let page = get(&admin, &app, "/admin/audit?merchant=globex").await;
        assert!(!page
            .texts("table.audit td.detail")
            .iter()
            .any(|d| d.contains("Globex")));
        let csv = admin
            .get(app.url("/admin/audit.csv?merchant=globex"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(csv.contains("Acme tea") && !csv.contains("Globex"), "{csv}");
    }
);

both!(operator_sees_every_merchant_and_can_filter_by_one, |app| {
    app.merchant("acme").await;
    app.merchant("globex").await;
    product_of(&app, "acme", "Acme tea", "AT-1").await;
    product_of(&app, "globex", "Globex coffee", "GC-1").await;
    let operator = app.signed_in("operator", None).await;

    let page = get(&operator, &app, "/admin/audit").await;
    let details = page.texts("table.audit td.detail");
    assert!(details.contains(&"Acme tea".to_string()), "{details:?}");
    assert!(
        details.contains(&"Globex coffee".to_string()),
        "{details:?}"
    );
    assert_eq!(page.count("select[name=merchant] option"), 3, "All + two");
    assert!(page.text(".audit-summary").contains("UTC"));

    let page = get(&operator, &app, "/admin/audit?merchant=globex").await;
    let details = page.texts("table.audit td.detail");
    assert!(
        details.contains(&"Globex coffee".to_string()),
        "{details:?}"
    );
    assert!(!details.contains(&"Acme tea".to_string()), "{details:?}");
    let merchants = page.texts("table.audit td.merchant");
    assert!(!merchants.is_empty());
    assert!(merchants.iter().all(|m| m == "globex Ltd"), "{merchants:?}");
    assert_eq!(
        page.attr("select[name=merchant] option[selected]", "value")
            .as_deref(),
        Some("globex")
    );
});

both!(
    store_staff_are_refused_the_audit_log_and_its_export,
    |app| {
        app.merchant("acme").await;
        let staff = app.signed_in("store_staff", Some("acme")).await;
        for path in ["/admin/audit", "/admin/audit.csv"] {
            let r = staff.get(app.url(path)).send().await.unwrap();
            assert_eq!(r.status(), 403, "{path}");
        }
        let dashboard = get(&staff, &app, "/admin").await;
        assert_eq!(dashboard.count("nav a[href='/admin/audit']"), 0);

        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let dashboard = get(&admin, &app, "/admin").await;
        assert_eq!(dashboard.count("nav a[href='/admin/audit']"), 1);
        let operator = app.signed_in("operator", None).await;
        let dashboard = get(&operator, &app, "/admin").await;
        assert_eq!(dashboard.count("nav a[href='/admin/audit']"), 1);
    }
);

both!(
    action_filter_offers_the_actions_present_and_shows_only_the_chosen_one,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let (s, b) = api.adjust("TEA", "main", "FREEZE", 2).await;
        assert_eq!(s, 201, "{b}");
        let admin = app.signed_in("merchant_admin", Some("acme")).await;

        let page = get(&admin, &app, "/admin/audit").await;
        let offered = page.texts("select[name=action] option");
        for a in [
            "stock.receive",
            "stock.freeze",
            "product.create",
            "apikey.create",
        ] {
            assert!(offered.contains(&a.to_string()), "{a} in {offered:?}");
        }
        assert!(!offered.contains(&"slot.close".to_string()), "{offered:?}");

        let page = get(&admin, &app, "/admin/audit?action=stock.freeze").await;
        let r = rows(&page);
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].0, "stock.freeze");
        assert_eq!(r[0].1, "sku:TEA");
        assert!(page
            .text(".audit-summary")
            .contains("1 entry matches these filters."));

        let page = get(&admin, &app, "/admin/audit?action=slot.close").await;
        assert_eq!(page.count("table.audit"), 0);
        assert_eq!(page.text(".empty"), "No entries match these filters.");
    }
);

both!(
    who_and_subject_filters_match_part_of_the_text_in_any_case_and_dates_bound_the_rows,
    |app| {
        let api = app.acme_api().await;
        for code in ["TEA_1", "TEAX1"] {
            api.product("goods", code).await;
            api.receive(code, "main", 1).await;
        }
        let admin = app.signed_in("merchant_admin", Some("acme")).await;

        let page = get(&admin, &app, "/admin/audit?actor=APIKEY").await;
        let r = rows(&page);
        assert!(!r.is_empty());
        assert!(r.iter().all(|x| x.3.starts_with("apikey:")), "{r:?}");
        // The cell says who as people read it: the key by its name, not its label.
        let said = page.texts("table.audit td.actor");
        assert!(
            said.iter()
                .all(|w| !w.starts_with("apikey:") && !w.is_empty()),
            "{said:?}"
        );

        // An underscore is a character to look for, not a LIKE wildcard.
        let page = get(&admin, &app, "/admin/audit?subject=tea_1").await;
        let subjects: Vec<String> = rows(&page).into_iter().map(|x| x.1).collect();
        assert_eq!(subjects, vec!["sku:TEA_1".to_string()]);

        let today = app
            .now()
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .date_naive();
        let page = get(
            &admin,
            &app,
            &format!("/admin/audit?from={today}&to={today}"),
        )
        .await;
        assert!(!rows(&page).is_empty(), "today's rows are within today");
        let tomorrow = today.succ_opt().unwrap();
        let page = get(&admin, &app, &format!("/admin/audit?from={tomorrow}")).await;
        assert_eq!(page.text(".empty"), "No entries match these filters.");
    }
);

both!(csv_export_holds_the_filtered_rows_under_a_header, |app| {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    api.receive("TEA", "main", 5).await;
    let (s, _) = api.adjust("TEA", "main", "WRITE_OFF", 1).await;
    assert_eq!(s, 201);
    let admin = app.signed_in("merchant_admin", Some("acme")).await;

    let page = get(&admin, &app, "/admin/audit?action=stock.receive").await;
    let link = page.attr(".audit-summary a.button", "href").unwrap();
    assert_eq!(link, "/admin/audit.csv?action=stock.receive");

    let r = admin.get(app.url(&link)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8");
    assert!(r.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    let body = r.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(body.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        vec!["time", "merchant", "actor", "action", "subject", "detail", "source", "ip"]
    );
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), 2, "{body}");
    for rec in &records {
        assert_eq!(&rec[1], "acme");
        assert_eq!(&rec[3], "stock.receive");
        assert_eq!(&rec[4], "sku:TEA");
        assert!(rec[0].ends_with("+08:00"), "merchant time: {}", &rec[0]);
        assert_eq!(&rec[7], "127.0.0.1", "the client address");
    }
    // Newest first, like the page.
    assert!(records[0][5].starts_with("5 @ main"), "{body}");
    assert!(records[1][5].starts_with("10 @ main"), "{body}");
});

both!(
    api_and_back_office_changes_are_logged_with_who_and_from_where,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'TEA'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku_id}/stock/adjustments")))
            .form(&[
                ("kind", "FREEZE"),
                ("warehouse", "main"),
                ("qty", "3"),
                ("reason", "quality check"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);

        let page = get(&admin, &app, "/admin/audit?subject=sku:TEA").await;
        let r = rows(&page);
        let freeze = r
            .iter()
            .find(|x| x.0 == "stock.freeze")
            .expect("form change logged");
        assert!(
            freeze.3.starts_with("user:merchant_admin-") && freeze.3.ends_with("@example.com"),
            "{freeze:?}"
        );
        assert_eq!(freeze.4, format!("/admin/skus/{sku_id}/stock"));
        assert_eq!(freeze.2, "3 @ main — quality check");
        let receive = r
            .iter()
            .find(|x| x.0 == "stock.receive")
            .expect("API change logged");
        assert!(
            receive.3.starts_with("apikey:") && receive.3.ends_with(":test"),
            "{receive:?}"
        );
        assert_eq!(receive.4, "api POST /api/v1/stock/adjustments");
        // And the client address of both, page and API.
        assert_eq!(
            page.texts("table.audit td.ip"),
            vec!["127.0.0.1".to_string(); r.len()]
        );
        // Newest first.
        assert_eq!(r.first().map(|x| x.0.as_str()), Some("stock.freeze"));
    }
);

both!(order_flow_and_bookings_through_the_api_are_logged, |app| {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    for order in ["o-1", "o-2"] {
        let (s, b) = api
            .post(
                "/api/v1/reservations",
                json!({"order_id": order, "items": [{"sku": "TEA", "qty": 2}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
    }
    let (s, b) = api
        .post("/api/v1/reservations/o-1/confirm", json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    // A repeated confirm changes nothing and writes nothing.
    let (s, _) = api
        .post("/api/v1/reservations/o-1/confirm", json!({}))
        .await;
    assert_eq!(s, 200);
    let (s, b) = api
        .post("/api/v1/reservations/o-2/release", json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = api
        .post("/api/v1/returns", json!({"return_id": "r-1", "order_id": "o-1", "sku": "TEA", "qty": 1, "condition": "DAMAGED"}))
        .await;
    assert_eq!(s, 201, "{b}");

    api.product("service", "CLASS").await;
    let start = app.now() + chrono::Duration::hours(5);
    let (s, slot) = api
        .post("/api/v1/slots", json!({"sku": "CLASS", "starts_at": start.to_rfc3339(), "ends_at": (start + chrono::Duration::hours(1)).to_rfc3339(), "capacity": 3}))
        .await;
    assert_eq!(s, 201, "{slot}");
    let (s, booking) = api
        .post("/api/v1/bookings", json!({"slot_id": slot["id"], "name": "Ann", "phone": "+86 138 0013 8000", "idempotency_key": "b-1"}))
        .await;
    assert_eq!(s, 201, "{booking}");

    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    let page = get(&admin, &app, "/admin/audit?actor=apikey").await;
    let r = rows(&page);
    let find = |action: &str| -> Vec<(String, String)> {
        r.iter()
            .filter(|x| x.0 == action)
            .map(|x| (x.1.clone(), x.2.clone()))
            .collect()
    };
    assert_eq!(find("reservation.reserve").len(), 2);
    assert!(find("reservation.reserve").contains(&("order:o-1".into(), "TEA × 2".into())));
    assert_eq!(
        find("reservation.confirm"),
        vec![("order:o-1".into(), String::new())]
    );
    assert_eq!(
        find("reservation.release"),
        vec![("order:o-2".into(), String::new())]
    );
    let ret = find("stock.return");
    assert_eq!(ret.len(), 1);
    assert_eq!(ret[0].0, "sku:TEA");
    assert!(
        ret[0].1.contains("DAMAGED") && ret[0].1.contains("o-1"),
        "{ret:?}"
    );
    assert_eq!(
        find("booking.create"),
        vec![(
            format!("booking:{}", booking["reference"].as_str().unwrap()),
            format!("slot:{}", slot["id"])
        )]
    );
    assert_eq!(find("slot.create").len(), 1);
});

both!(reservation_expiry_is_logged_by_the_expiry_job, |app| {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    let (s, b) = api
        .post(
            "/api/v1/reservations",
            json!({"order_id": "o-late", "items": [{"sku": "TEA", "qty": 1}], "ttl_seconds": 1}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let mut expired = Vec::new();
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        expired = sqlx::query_as::<_, (String, String, String)>(
            "SELECT actor, subject, source FROM audit_log WHERE action = 'reservation.expire'",
        )
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        if !expired.is_empty() {
            break;
        }
    }
    assert_eq!(
        expired,
        vec![("system:expiry".into(), "order:o-late".into(), "job".into())]
    );
});

both!(
    pages_run_newest_first_and_older_and_newer_links_walk_the_log,
    |app| {
        let api = app.acme_api().await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        api.product("goods", "TEA").await;
        for q in 1..=55 {
            api.receive("TEA", "main", q).await;
        }
        let total = app.count("audit_log WHERE merchant_id IS NOT NULL").await;
        assert!(total > 55 && total <= 100, "{total}");

        let first = get(&admin, &app, "/admin/audit").await;
        let first_rows = rows(&first);
        assert_eq!(first_rows.len(), 50);
        assert!(first_rows[0].2.starts_with("55 @ main"), "newest first");
        assert_eq!(first.count(".pager a[rel=prev]"), 0, "nothing newer");
        assert!(first
            .text(".audit-summary")
            .contains(&format!("{total} entries")));

        let older = first
            .attr(".pager a[rel=next]", "href")
            .expect("older link");
        let second = get(&admin, &app, &older).await;
        let second_rows = rows(&second);
        assert_eq!(second_rows.len() as i64, total - 50);
        assert_eq!(second.count(".pager a[rel=next]"), 0, "nothing older");
        assert!(second_rows[0].2.starts_with("5 @ main"), "{second_rows:?}");
        for r in &second_rows {
            assert!(!first_rows.contains(r), "a row on two pages: {r:?}");
        }

        let newer = second
            .attr(".pager a[rel=prev]", "href")
            .expect("newer link");
        assert_eq!(rows(&get(&admin, &app, &newer).await), first_rows);

        // The filter travels with the page links.
        let filtered = get(&admin, &app, "/admin/audit?action=stock.receive").await;
        let older = filtered.attr(".pager a[rel=next]", "href").unwrap();
        assert!(
            older.starts_with("/admin/audit?action=stock.receive&before="),
            "{older}"
        );
        let rest = rows(&get(&admin, &app, &older).await);
        assert_eq!(rest.len(), 5);
        assert!(rest.iter().all(|x| x.0 == "stock.receive"));
    }
);

both!(filter_form_gets_the_table_alone_from_htmx, |app| {
    app.acme_api().await;
    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    let page = get(&admin, &app, "/admin/audit").await;
    assert_eq!(page.attr("form.filters", "method").as_deref(), Some("get"));
    assert_eq!(
        page.attr("form.filters", "hx-target").as_deref(),
        Some("#audit-table")
    );
    let r = admin
        .get(app.url("/admin/audit?action=apikey.create"))
        .header("HX-Request", "true")
        .header("HX-Target", "audit-table")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body = r.text().await.unwrap();
    assert!(
        body.trim_start().starts_with("<div id=\"audit-table\""),
        "{body}"
    );
    let frag = Html::parse(&body);
    assert_eq!(frag.count("form.filters"), 0);
    assert_eq!(
        frag.texts("table.audit td.action"),
        vec!["apikey.create".to_string()]
    );
});

both!(empty_log_shows_an_empty_state, |app| {
    app.merchant("acme").await;
    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    // Setting up the merchant and its admin wrote rows; without them the log is empty.
    sqlx::query("DELETE FROM audit_log")
        .execute(&app.db.pool)
        .await
        .unwrap();
    let page = get(&admin, &app, "/admin/audit").await;
    assert_eq!(page.text(".empty"), "No changes recorded yet.");
    assert_eq!(page.count("table.audit"), 0);
});
