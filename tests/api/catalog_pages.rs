use crate::both;
use crate::helpers::html;

/// A form, the field whose error it should show, and the exact message.
type FormCase<'a> = (Vec<(&'static str, &'a str)>, &'static str, &'static str);

fn product_form<'a>(name: &'a str, code: &'a str, price: &'a str) -> Vec<(&'static str, &'a str)> {
    vec![
        ("name", name),
        ("kind", "goods"),
        ("status", "ONLINE"),
        ("sale_starts_at", ""),
        ("sale_ends_at", ""),
        ("sku_code", code),
        ("sku_name", "Standard"),
        ("sku_price", price),
    ]
}

both!(merchant_admin_creates_a_product_and_sees_it_listed, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    let r = client
        .post(app.url("/admin/products"))
        .form(&product_form("Green tea", "TEA-1", "12.50"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let page = app.page(&client, &location).await;
    assert_eq!(page.text("h1"), "Green tea");
    assert_eq!(page.text(".flash"), "Product \"Green tea\" created.");
    // The price as the merchant's currency writes it (the page is English: CN¥).
    assert_eq!(page.text("#skus td.num"), "CN¥12.50");
    let list = app.page(&client, "/admin/products").await;
    assert_eq!(list.texts("table.products tbody td a"), vec!["Green tea"]);
    let price: i64 = sqlx::query_scalar("SELECT price FROM skus WHERE code = 'TEA-1'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(price, 1250, "stored in minor units");
});

both!(
    duplicate_sku_code_is_a_field_error_and_writes_nothing,
    |app| {
        app.merchant("acme").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        client
            .post(app.url("/admin/products"))
            .form(&product_form("First", "DUP-1", "1"))
            .send()
            .await
            .unwrap();
        let (products, skus) = (app.count("products").await, app.count("skus").await);
        let r = client
            .post(app.url("/admin/products"))
            .form(&product_form("Second", "DUP-1", "2"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(".field-error[data-field=sku_code]"),
            "SKU code \"DUP-1\" is already used by another SKU of this merchant."
        );
        assert_eq!(
            page.attr("input[name=name]", "value").as_deref(),
            Some("Second"),
            "the form keeps what was typed"
        );
        assert_eq!(
            (app.count("products").await, app.count("skus").await),
            (products, skus)
        );
    }
);

both!(same_sku_code_is_fine_in_another_merchant, |app| {
    app.merchant("acme").await;
    app.merchant("globex").await;
    let a = app.signed_in("merchant_admin", Some("acme")).await;
    let b = app.signed_in("merchant_admin", Some("globex")).await;
    assert_eq!(
        a.post(app.url("/admin/products"))
            .form(&product_form("A", "SAME", "1"))
            .send()
            .await
            .unwrap()
            .status(),
        303
    );
    assert_eq!(
        b.post(app.url("/admin/products"))
            .form(&product_form("B", "SAME", "1"))
            .send()
            .await
            .unwrap()
            .status(),
        303
    );
});

both!(
    bad_form_input_shows_every_error_inline_and_writes_nothing,
    |app| {
        app.merchant("acme").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let long_code = "X".repeat(65);
        let long_name = "n".repeat(201);
        let cases: Vec<FormCase> = vec![
            (product_form("", "OK-1", "1"), "name", "Name is required."),
            (
                product_form(&long_name, "OK-1", "1"),
                "name",
                "Name is too long: at most 200 characters.",
            ),
            (
                product_form("Tea", "", "1"),
                "sku_code",
                "SKU code is required.",
            ),
            (
                product_form("Tea", &long_code, "1"),
                "sku_code",
                "SKU code is too long: at most 64 characters.",
            ),
            (
                product_form("Tea", "has space", "1"),
                "sku_code",
                "SKU code may contain only letters, digits, '-', '_' and '.'.",
            ),
            (
                product_form("Tea", "OK-1", "-5"),
                "sku_price",
                "Price cannot be negative.",
            ),
            (
                product_form("Tea", "OK-1", "abc"),
                "sku_price",
                "Price must be a number of at most two decimals, like 12.50.",
            ),
            (
                product_form("Tea", "OK-1", "99999999999999999999"),
                "sku_price",
                "Price can be at most 10,000,000,000.",
            ),
        ];
        for (form, field, message) in cases {
            let r = client
                .post(app.url("/admin/products"))
                .form(&form)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{field}: {message}");
            let page = html(r).await;
            assert_eq!(
                page.text(&format!(".field-error[data-field={field}]")),
                message
            );
        }
        let mut bad_status = product_form("Tea", "OK-1", "1");
        bad_status[2] = ("status", "SOLD_OUT");
        let page = html(
            client
                .post(app.url("/admin/products"))
                .form(&bad_status)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            page.text(".field-error[data-field=status]"),
            "Status must be one of: DRAFT, ONLINE, OFFLINE."
        );
        let mut reversed = product_form("Tea", "OK-1", "1");
        reversed[3] = ("sale_starts_at", "2026-12-10T10:00");
        reversed[4] = ("sale_ends_at", "2026-12-01T10:00");
        let page = html(
            client
                .post(app.url("/admin/products"))
                .form(&reversed)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            page.text(".field-error[data-field=sale_ends_at]"),
            "The sale must end after it starts."
        );
        // Several mistakes at once are all reported.
        let page = html(
            client
                .post(app.url("/admin/products"))
                .form(&product_form("", "", "-1"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.count(".field-error"), 3);
        assert_eq!(app.count("products").await, 0);
        assert_eq!(app.count("skus").await, 0);
    }
);

both!(product_list_searches_by_name_or_code_and_paginates, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    for i in 0..25 {
        let name = format!("Item {i:02}");
        let code = format!("ITEM-{i:02}");
        client
            .post(app.url("/admin/products"))
            .form(&product_form(&name, &code, "1"))
            .send()
            .await
            .unwrap();
    }
    client
        .post(app.url("/admin/products"))
        .form(&product_form("Jasmine 100% leaf", "JAS_1", "1"))
        .send()
        .await
        .unwrap();
    let page = app.page(&client, "/admin/products").await;
    assert_eq!(page.count("table.products tbody tr"), 20);
    assert!(page.text("#product-count").starts_with("26 products"));
    assert_eq!(page.attr("nav.pager", "data-pages").as_deref(), Some("2"));
    // Sorted by name, then the other way round, from the column's header.
    let href = page.attr("th[data-sort=name] a", "href").unwrap();
    let by_name = app.page(&client, &href).await;
    assert_eq!(by_name.texts("table.products tbody td a")[0], "Item 00");
    let href = by_name.attr("th[data-sort=name] a", "href").unwrap();
    let by_name_desc = app.page(&client, &href).await;
    assert_eq!(
        by_name_desc.texts("table.products tbody td a")[0],
        "Jasmine 100% leaf"
    );
    assert_eq!(
        by_name_desc
            .attr("th[data-sort=name]", "aria-sort")
            .as_deref(),
        Some("descending")
    );
    // The filters send the order along (the table, swapped alone, holds it for the form).
    assert_eq!(
        by_name_desc
            .attr("input[name=sort][form=product-filters]", "value")
            .as_deref(),
        Some("name")
    );
    assert_eq!(
        by_name_desc.count("input[name=desc][form=product-filters]"),
        1
    );
    assert_eq!(by_name_desc.count("form#product-filters"), 1);
    // The CSV: every product's SKUs, both pages.
    let csv = client
        .get(app.url("/admin/products.csv"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut rd = csv::Reader::from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
    assert_eq!(rd.records().count(), 26);
    let page2 = html(
        client
            .get(app.url("/admin/products?page=2"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(page2.count("table.products tbody tr"), 6);
    let found = html(
        client
            .get(app.url("/admin/products?q=item-07"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(found.texts("table.products tbody td a"), vec!["Item 07"]);
    // LIKE wildcards in the query are literal.
    let pct = html(
        client
            .get(app.url("/admin/products?q=100%25"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        pct.texts("table.products tbody td a"),
        vec!["Jasmine 100% leaf"]
    );
    let none = html(
        client
            .get(app.url("/admin/products?q=zzz"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(none.text(".empty"), "No product matches these filters.");
    // The search box asks htmx for the table alone.
    let r = client
        .get(app.url("/admin/products?q=item-07"))
        .header("HX-Request", "true")
        .header("HX-Target", "product-table")
        .send()
        .await
        .unwrap();
    let body = r.text().await.unwrap();
    assert!(
        body.trim_start().starts_with("<div id=\"product-table\">"),
        "fragment only: {body}"
    );
});

both!(empty_catalog_shows_an_empty_state_with_a_next_step, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    let page = app.page(&client, "/admin/products").await;
    assert!(page.text(".empty").starts_with("No products yet."));
    assert_eq!(
        page.attr(".empty a", "href").as_deref(),
        Some("/admin/products/new")
    );
});

both!(status_buttons_swap_the_status_panel_in_place, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    let r = client
        .post(app.url("/admin/products"))
        .form(&product_form("Tea", "T-1", "1"))
        .send()
        .await
        .unwrap();
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let r = client
        .post(app.url(&format!("{location}/status")))
        .header("HX-Request", "true")
        .form(&[("status", "OFFLINE")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let fragment = r.text().await.unwrap();
    assert!(fragment
        .trim_start()
        .starts_with("<section id=\"status-panel\""));
    let frag = crate::helpers::Html::parse(&fragment);
    assert_eq!(
        frag.attr(".badge", "data-status").as_deref(),
        Some("OFFLINE")
    );
    let status: String = sqlx::query_scalar("SELECT status FROM products")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(status, "OFFLINE");
    let audit: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'product.status'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(audit, 1);
});

both!(
    edit_form_changes_name_and_sale_window_in_the_merchant_timezone,
    |app| {
        app.merchant("acme").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let r = client
            .post(app.url("/admin/products"))
            .form(&product_form("Tea", "T-1", "1"))
            .send()
            .await
            .unwrap();
        let location = r.headers()["location"].to_str().unwrap().to_string();
        let r = client
            .post(app.url(&location))
            .form(&[
                ("name", "Better tea"),
                ("status", "ONLINE"),
                ("sale_starts_at", "2026-12-01T09:00"),
                ("sale_ends_at", ""),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let starts: i64 = sqlx::query_scalar("SELECT sale_starts_at FROM products")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        // 09:00 in Asia/Shanghai is 01:00 UTC.
        assert_eq!(
            sellable::domain::kernel::validate::ms_to_rfc3339(starts),
            "2026-12-01T01:00:00+00:00"
        );
        let page = app.page(&client, &location).await;
        assert_eq!(page.text("h1"), "Better tea");
        assert_eq!(
            page.attr("input[name=sale_starts_at]", "value").as_deref(),
            Some("2026-12-01T09:00")
        );
    }
);

both!(sku_can_be_added_and_repriced_but_keeps_its_code, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    let r = client
        .post(app.url("/admin/products"))
        .form(&product_form("Tea", "T-1", "1"))
        .send()
        .await
        .unwrap();
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let r = client
        .post(app.url(&format!("{location}/skus")))
        .form(&[("code", "T-2"), ("name", "Big"), ("price", "3.5")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let r = client
        .post(app.url(&format!("{location}/skus")))
        .form(&[("code", "T-2"), ("name", "Again"), ("price", "1")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(
        html(r).await.text(".field-error[data-field=code]"),
        "SKU code \"T-2\" is already used by another SKU of this merchant."
    );
    let id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'T-2'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let r = client
        .post(app.url(&format!("/admin/skus/{id}")))
        .form(&[("name", "Bigger"), ("price", "4")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let r = client
        .post(app.url(&format!("/admin/skus/{id}")))
        .form(&[("name", "Bigger"), ("price", "-4")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let (name, price): (String, i64) = sqlx::query_as("SELECT name, price FROM skus WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!((name.as_str(), price), ("Bigger", 400));
});

both!(
    store_staff_and_operators_can_read_but_not_change_the_catalog,
    |app| {
        app.merchant("acme").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let r = admin
            .post(app.url("/admin/products"))
            .form(&product_form("Tea", "T-1", "1"))
            .send()
            .await
            .unwrap();
        let location = r.headers()["location"].to_str().unwrap().to_string();
        for client in [
            app.signed_in("store_staff", Some("acme")).await,
            app.signed_in("operator", None).await,
        ] {
            let page = app.page(&client, &location).await;
            assert_eq!(page.text("h1"), "Tea");
            assert_eq!(page.count("form[action$='/status']"), 0, "no edit controls");
            assert_eq!(
                client
                    .get(app.url("/admin/products/new"))
                    .send()
                    .await
                    .unwrap()
                    .status(),
                403
            );
            let r = client
                .post(app.url("/admin/products"))
                .form(&product_form("Nope", "N-1", "1"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 403);
            let r = client
                .post(app.url(&format!("{location}/status")))
                .form(&[("status", "OFFLINE")])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 403);
            assert_eq!(
                client
                    .get(app.url("/admin/api-keys"))
                    .send()
                    .await
                    .unwrap()
                    .status(),
                403
            );
        }
        assert_eq!(app.count("products").await, 1);
    }
);

both!(operator_sees_every_merchant_and_can_filter_by_one, |app| {
    app.merchant("acme").await;
    app.merchant("globex").await;
    let a = app.signed_in("merchant_admin", Some("acme")).await;
    let b = app.signed_in("merchant_admin", Some("globex")).await;
    a.post(app.url("/admin/products"))
        .form(&product_form("Acme thing", "A-1", "1"))
        .send()
        .await
        .unwrap();
    b.post(app.url("/admin/products"))
        .form(&product_form("Globex thing", "G-1", "1"))
        .send()
        .await
        .unwrap();
    let op = app.signed_in("operator", None).await;
    let page = app.page(&op, "/admin/products").await;
    let mut names = page.texts("table.products tbody td a");
    names.sort();
    assert_eq!(names, vec!["Acme thing", "Globex thing"]);
    let page = html(
        op.get(app.url("/admin/products?merchant=globex"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        page.texts("table.products tbody td a"),
        vec!["Globex thing"]
    );
    // A merchant admin never sees the other merchant's products.
    let page = app.page(&a, "/admin/products").await;
    assert_eq!(page.texts("table.products tbody td a"), vec!["Acme thing"]);
});

both!(oversized_form_body_is_refused_with_413, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    let big = "x".repeat(200 * 1024);
    let r = client
        .post(app.url("/admin/products"))
        .form(&product_form(&big, "T-1", "1"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(app.count("products").await, 0);
});

both!(
    an_online_product_whose_sale_ended_says_so_on_its_badge_in_the_list,
    |app| {
        let api = app.acme_api().await;
        let (s, b) = api
            .post(
                "/api/v1/products",
                serde_json::json!({"name": "Old tea", "kind": "goods", "status": "ONLINE",
                    "sale_starts_at": "2020-01-01T00:00:00Z", "sale_ends_at": "2020-02-01T00:00:00Z",
                    "skus": [{"code": "OLD", "name": "Old", "price": 100}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        api.product("goods", "NEW").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&client, "/admin/products").await;
        assert_eq!(
            page.attrs("table.products [data-sale]", "data-sale"),
            ["ended"]
        );
        assert_eq!(page.count("table.products .badge[data-status=ONLINE]"), 2);
    }
);

both!(
    the_products_list_shows_each_skus_verdict_and_how_many_can_be_sold,
    |app| {
        let api = app.acme_api().await;
        let (s, b) = api
            .post(
                "/api/v1/products",
                serde_json::json!({"name": "Tea", "kind": "goods", "status": "ONLINE", "skus": [
                    {"code": "TEA-A", "name": "A", "price": 100},
                    {"code": "TEA-B", "name": "B", "price": 100},
                    {"code": "TEA-C", "name": "C", "price": 100},
                    {"code": "TEA-D", "name": "D", "price": 100}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        api.receive("TEA-A", "main", 7).await;
        api.receive("TEA-B", "main", 2).await;
        api.adjust("TEA-B", "main", "WRITE_OFF", 2).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&client, "/admin/products").await;
        let row = "table.products .sku-verdict";
        assert_eq!(
            page.attrs(row, "data-sku"),
            ["TEA-A", "TEA-B", "TEA-C"],
            "the first SKUs, in code order"
        );
        assert_eq!(page.attrs(row, "data-sellable"), ["true", "false", "false"]);
        assert!(page.text(&format!("{row}[data-sku=TEA-A]")).contains('7'));
        assert_eq!(
            page.attr(&format!("{row}[data-sku=TEA-B]"), "data-code")
                .as_deref(),
            Some("out_of_stock")
        );
        assert_eq!(
            page.attr(&format!("{row}[data-sku=TEA-C]"), "data-code")
                .as_deref(),
            Some("no_stock_record")
        );
        // The fourth is on the product's page.
        assert_eq!(page.count("table.products a.more-skus"), 1);
    }
);

both!(
    saving_the_edit_form_after_a_status_button_keeps_the_new_status_unless_the_choice_was_changed,
    |app| {
        app.merchant("acme").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let r = client
            .post(app.url("/admin/products"))
            .form(&product_form("Tea", "T-1", "1"))
            .send()
            .await
            .unwrap();
        let location = r.headers()["location"].to_str().unwrap().to_string();
        // The page is opened: the edit form says ONLINE.
        let page = app.page(&client, &location).await;
        let was = page
            .attr("input[name=status_was]", "value")
            .expect("the form carries the status it was opened with");
        assert_eq!(was, "ONLINE");
        let status = || async {
            sqlx::query_scalar::<_, String>("SELECT status FROM products")
                .fetch_one(&app.db.pool)
                .await
                .unwrap()
        };
        // "Back to draft" above the form swaps the panel only; the form still says ONLINE.
        let r = client
            .post(app.url(&format!("{location}/status")))
            .header("HX-Request", "true")
            .form(&[("status", "DRAFT")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        // Renaming through that form keeps the product a draft.
        let save = |name: &'static str, status: &'static str| {
            let client = client.clone();
            let url = app.url(&location);
            let was = was.clone();
            async move {
                let r = client
                    .post(url)
                    .form(&[
                        ("name", name),
                        ("description", ""),
                        ("status", status),
                        ("status_was", was.as_str()),
                        ("sale_starts_at", ""),
                        ("sale_ends_at", ""),
                    ])
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 303);
            }
        };
        save("Green tea", "ONLINE").await;
        assert_eq!(status().await, "DRAFT", "the status button's change stands");
        let name: String = sqlx::query_scalar("SELECT name FROM products")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(name, "Green tea");
        // A choice changed in the form is saved.
        save("Green tea", "OFFLINE").await;
        assert_eq!(status().await, "OFFLINE");
    }
);

both!(
    an_operators_product_list_and_csv_write_sale_windows_in_each_merchants_time,
    |app| {
        let api = app.acme_api().await;
        let (s, b) = api
            .post(
                "/api/v1/products",
                serde_json::json!({"name": "Mooncake", "kind": "goods", "status": "ONLINE",
                       "sale_starts_at": "2030-01-01T01:00:00Z",
                       "skus": [{"code": "MOON", "name": "MOON", "price": 100}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let operator = app.signed_in("operator", None).await;
        // 01:00 UTC is 09:00 in the merchant's Asia/Shanghai.
        let page = app.page(&operator, "/admin/products").await;
        let rows = page.texts("table.products tbody tr");
        assert!(
            rows.iter()
                .any(|r| r.contains("Mooncake") && r.contains("09:00")),
            "{rows:?}"
        );
        let csv = operator
            .get(app.url("/admin/products.csv"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let mut rd = csv::Reader::from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
        let headers = rd.headers().unwrap().clone();
        let at = headers.iter().position(|h| h == "sale_starts_at").unwrap();
        let moon = rd
            .records()
            .map(|r| r.unwrap())
            .find(|r| r.iter().any(|c| c == "MOON"))
            .unwrap();
        assert_eq!(&moon[at], "2030-01-01 09:00");
    }
);
