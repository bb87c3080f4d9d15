//! The merchant-wide stock report (issue 20): its figures are the ledger's, it sorts, filters and
//! pages, and its CSV and JSON say the same as the page.

use std::collections::HashMap;

use serde_json::json;

use crate::both;
use crate::helpers::{field_codes, TestApp};

/// Per SKU code: (on hand, available, committed, unavailable, sold in 30 days) replayed from the
/// ledger's deltas, optionally for one warehouse.
async fn replayed(app: &TestApp, warehouse: Option<&str>) -> HashMap<String, [i64; 5]> {
    let rows: Vec<(String, i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT s.code, CAST(SUM(l.d_total) AS BIGINT), CAST(SUM(l.d_locked) AS BIGINT), CAST(SUM(l.d_sold) AS BIGINT),
            CAST(SUM(l.d_frozen) AS BIGINT), CAST(SUM(CASE WHEN l.kind = 'CONFIRM' THEN l.d_sold ELSE 0 END) AS BIGINT)
         FROM stock_ledger l JOIN skus s ON s.id = l.sku_id JOIN warehouses w ON w.id = l.warehouse_id
         WHERE ($1 IS NULL OR w.slug = $1) GROUP BY s.code",
    )
    .bind(warehouse)
    .fetch_all(&app.db.pool)
    .await
    .unwrap();
    rows.into_iter()
        .map(|(code, total, locked, sold, frozen, sold_30)| {
            (
                code,
                [
                    total - sold,
                    total - locked - sold - frozen,
                    locked,
                    frozen,
                    sold_30,
                ],
            )
        })
        .collect()
}

fn figures(row: &serde_json::Value) -> [i64; 5] {
    [
        "on_hand",
        "available",
        "committed",
        "unavailable",
        "sold_30d",
    ]
    .map(|k| row[k].as_i64().unwrap())
}

both!(
    the_stock_reports_figures_equal_the_ledgers_replay_for_every_sku_and_warehouse,
    |app| {
        let api = app.acme_api().await;
        app.warehouse("acme", "east", 5).await;
        for code in ["TEA", "CUP", "POT", "NEW"] {
            api.product("goods", code).await;
        }
        api.receive("TEA", "main", 30).await;
        api.receive("TEA", "east", 10).await;
        api.receive("CUP", "main", 4).await;
        api.receive("POT", "main", 2).await;
        api.adjust("TEA", "main", "FREEZE", 3).await;
        api.adjust("TEA", "main", "WRITE_OFF", 2).await;
        let (s, b) = api
            .post(
                "/api/v1/stock/adjustments",
                json!({"sku": "TEA", "warehouse": "main", "to_warehouse": "east", "kind": "TRANSFER", "qty": 5,
                       "reason_code": "correction", "idempotency_key": "t"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        api.reserve(
            "o-1",
            json!([{"sku": "TEA", "qty": 4}, {"sku": "CUP", "qty": 1}]),
        )
        .await;
        let (s, b) = api
            .post("/api/v1/reservations/o-1/confirm", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        api.reserve("o-2", json!([{"sku": "POT", "qty": 2}])).await;
        // A cost on one SKU: its value at cost is on hand × cost.
        let (s, b) = api.patch_sku("TEA", json!({"unit_cost": 1250})).await;
        assert_eq!((s, b["unit_cost"].as_i64()), (200, Some(1250)), "{b}");
        for warehouse in [None, Some("main"), Some("east")] {
            let path = match warehouse {
                None => "/api/v1/stock/report".to_string(),
                Some(w) => format!("/api/v1/stock/report?warehouse={w}"),
            };
            let (s, report) = api.get(&path).await;
            assert_eq!(s, 200, "{report}");
            let ledger = replayed(&app, warehouse).await;
            let rows = report["rows"].as_array().unwrap();
            assert_eq!(rows.len(), 4, "every goods SKU, stocked or not: {report}");
            for row in rows {
                let code = row["sku"].as_str().unwrap();
                let expected = ledger.get(code).copied().unwrap_or_default();
                assert_eq!(figures(row), expected, "{code} in {warehouse:?}: {row}");
            }
            let sum = |k: &str| rows.iter().map(|r| r[k].as_i64().unwrap()).sum::<i64>();
            assert_eq!(
                report["totals"]["on_hand"].as_i64().unwrap(),
                sum("on_hand")
            );
        }
        let (_, report) = api.get("/api/v1/stock/report").await;
        let by_code = |c: &str| {
            report["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["sku"] == c)
                .unwrap()
                .clone()
        };
        let tea = by_code("TEA");
        assert_eq!(tea["value_at_cost"].as_i64(), Some(34 * 1250), "{tea}");
        assert_eq!(by_code("CUP")["value_at_cost"], serde_json::Value::Null);
        assert_eq!(
            by_code("POT")["status"],
            "out_of_stock",
            "both units held by o-2"
        );
        assert_eq!(
            by_code("CUP")["status"],
            "low",
            "3 left, under the default line of 5"
        );
        assert_eq!(by_code("NEW")["status"], "out_of_stock");
        assert_eq!(tea["status"], "ok");
        // Filters and order.
        let (_, low) = api.get("/api/v1/stock/report?status=low").await;
        assert_eq!(low["rows"].as_array().unwrap().len(), 1);
        let (_, sorted) = api
            .get("/api/v1/stock/report?sort=available&order=desc")
            .await;
        let order: Vec<&str> = sorted["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["sku"].as_str().unwrap())
            .collect();
        assert_eq!(order, ["TEA", "CUP", "NEW", "POT"]);
        for (query, field) in [
            ("sort=price", "sort:invalid_choice"),
            ("status=fine", "status:invalid_choice"),
            ("order=up", "order:invalid_choice"),
            ("warehouse=nowhere", "warehouse:unknown_warehouse"),
        ] {
            let (s, b) = api.get(&format!("/api/v1/stock/report?{query}")).await;
            assert_eq!(
                (s, field_codes(&b)),
                (422, vec![field.to_string()]),
                "{query}"
            );
        }
    }
);

both!(
    the_stock_page_sorts_by_a_column_filters_pages_and_exports_what_it_shows,
    |app| {
        let api = app.acme_api().await;
        // 60 goods SKUs: TEA-00 … TEA-59, with TEA-nn holding nn units.
        let skus: Vec<_> = (0..60)
            .map(|i| json!({"code": format!("TEA-{i:02}"), "name": format!("茶 {i:02}"), "price": 100}))
            .collect();
        let (s, b) = api
            .post(
                "/api/v1/products",
                json!({"name": "Tea", "kind": "goods", "status": "ONLINE", "skus": skus}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        for i in 1..60 {
            api.receive(&format!("TEA-{i:02}"), "main", i).await;
        }
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin/stock").await;
        assert_eq!(page.count("table.report tbody tr"), 50, "50 to a page");
        assert_eq!(page.attr("nav.pager", "data-pages").as_deref(), Some("2"));
        assert_eq!(page.attrs("table.report tbody tr", "data-sku")[0], "TEA-00");
        // Largest available first, by the column's link.
        let href = page.attr("th[data-sort=available] a", "href").unwrap();
        let page = app.page(&admin, &href).await;
        assert_eq!(
            page.attr("th[data-sort=available]", "aria-sort").as_deref(),
            Some("ascending")
        );
        let href = page.attr("th[data-sort=available] a", "href").unwrap();
        let page = app.page(&admin, &href).await;
        assert_eq!(
            page.attr("th[data-sort=available]", "aria-sort").as_deref(),
            Some("descending")
        );
        assert_eq!(page.attrs("table.report tbody tr", "data-sku")[0], "TEA-59");
        // The filters send the order along (the table, swapped alone, holds it for the form).
        assert_eq!(
            page.attr("input[name=sort][form=report-filters]", "value")
                .as_deref(),
            Some("available")
        );
        assert_eq!(page.count("input[name=desc][form=report-filters]"), 1);
        assert_eq!(page.count("form#report-filters"), 1);
        // The next page keeps the order.
        let next = page.attr("nav.pager a[rel=next]", "href").unwrap();
        let page2 = app.page(&admin, &next).await;
        assert_eq!(
            page2.attrs("table.report tbody tr", "data-sku"),
            [
                "TEA-09", "TEA-08", "TEA-07", "TEA-06", "TEA-05", "TEA-04", "TEA-03", "TEA-02",
                "TEA-01", "TEA-00"
            ]
        );
        // Status filter and search.
        let low = app.page(&admin, "/admin/stock?status=low").await;
        assert_eq!(
            low.count("table.report tbody tr[data-status=low]"),
            4,
            "1 to 4 left"
        );
        let out = app.page(&admin, "/admin/stock?status=out_of_stock").await;
        assert_eq!(out.attrs("table.report tbody tr", "data-sku"), ["TEA-00"]);
        let found = app.page(&admin, "/admin/stock?q=%E8%8C%B6%2033").await;
        assert_eq!(found.attrs("table.report tbody tr", "data-sku"), ["TEA-33"]);
        let none = app.page(&admin, "/admin/stock?q=nothing-like-it").await;
        assert_eq!(none.count("#report-empty"), 1);
        // The CSV: the same rows in the same order, every page, readable by a spreadsheet.
        let csv_href = page.attr("#report-csv", "href").unwrap();
        let r = admin.get(app.url(&csv_href)).send().await.unwrap();
        assert!(r
            .headers()
            .get("content-disposition")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("stock-acme-"));
        let body = r.text().await.unwrap();
        assert!(
            body.starts_with('\u{feff}'),
            "a byte-order mark for spreadsheets"
        );
        let mut rd = csv::Reader::from_reader(body.trim_start_matches('\u{feff}').as_bytes());
        assert_eq!(&rd.headers().unwrap()[0], "sku");
        let codes: Vec<String> = rd.records().map(|r| r.unwrap()[0].to_string()).collect();
        assert_eq!(codes.len(), 60);
        assert_eq!(codes[0], "TEA-59");
        // Store staff read it too, without what things cost (page or CSV).
        let (s, _) = api.patch_sku("TEA-05", json!({"unit_cost": 300})).await;
        assert_eq!(s, 200);
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let page = app.page(&staff, "/admin/stock?q=TEA-0").await;
        assert_eq!(page.count("table.report tbody tr"), 10);
        assert_eq!(page.count("th[data-sort=value_at_cost]"), 0);
        let cost_of = |csv: String| {
            let body = csv.trim_start_matches('\u{feff}').to_string();
            let mut rd = csv::Reader::from_reader(body.as_bytes());
            rd.records()
                .map(|r| r.unwrap())
                .find(|r| &r[0] == "TEA-05")
                .map(|r| r[12].to_string())
                .unwrap()
        };
        let get = |client: reqwest::Client| {
            let url = app.url("/admin/stock/report.csv");
            async move { client.get(url).send().await.unwrap().text().await.unwrap() }
        };
        assert_eq!(cost_of(get(admin.clone()).await), "3.00");
        assert_eq!(cost_of(get(staff.clone()).await), "", "staff see no costs");
    }
);

both!(
    a_merchant_types_a_units_cost_on_the_sku_page_and_a_bad_one_is_refused_and_kept,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let sku_id = app.sku_id("TEA").await;
        let form = |cost: &'static str| [("name", "TEA"), ("price", "1.00"), ("unit_cost", cost)];
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku_id}")))
            .form(&form("-3"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = crate::helpers::html(r).await;
        assert_eq!(page.count(".field-error[data-field=unit_cost]"), 1);
        assert_eq!(
            page.attr("input[name=unit_cost]", "value").as_deref(),
            Some("-3")
        );
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku_id}")))
            .form(&form("12.50"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let (_, b) = api.get("/api/v1/skus/TEA").await;
        assert_eq!(b["unit_cost"], 1250, "{b}");
        let page = app
            .page(&admin, &format!("/admin/skus/{sku_id}/edit"))
            .await;
        assert_eq!(
            page.attr("input[name=unit_cost]", "value").as_deref(),
            Some("12.50")
        );
    }
);

both!(
    the_report_sorts_missing_values_last_either_way_ties_by_code_and_searches_wildcards_literally,
    |app| {
        let api = app.acme_api().await;
        for code in ["B-2", "A-1", "C-3", "D-4", "E_5"] {
            api.product("goods", code).await;
        }
        for code in ["A-1", "B-2", "C-3", "E_5"] {
            api.receive(code, "main", 10).await;
        }
        // Costs on A-1 and C-3 only; sales on B-2 and C-3 only.
        for (code, cost) in [("A-1", 100), ("C-3", 50)] {
            let (s, b) = api.patch_sku(code, json!({"unit_cost": cost})).await;
            assert_eq!(s, 200, "{b}");
        }
        for (order, code, qty) in [("o-b", "B-2", 2), ("o-c", "C-3", 5)] {
            let (s, b) = api.reserve(order, json!([{"sku": code, "qty": qty}])).await;
            assert_eq!(s, 201, "{b}");
            let (s, b) = api
                .post(&format!("/api/v1/reservations/{order}/confirm"), json!({}))
                .await;
            assert_eq!(s, 200, "{b}");
        }
        let order = |query: &'static str| {
            let api = &api;
            async move {
                let (s, b) = api.get(&format!("/api/v1/stock/report?{query}")).await;
                assert_eq!(s, 200, "{b}");
                let codes: Vec<String> = b["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["sku"].as_str().unwrap().to_string())
                    .collect();
                (codes, b["totals"].clone())
            }
        };
        // Value at cost: A-1 1,000, C-3 250 (5 on hand); the rest have none, last both ways.
        let (asc, totals) = order("sort=value_at_cost").await;
        assert_eq!(asc, ["C-3", "A-1", "B-2", "D-4", "E_5"]);
        assert_eq!(totals["value_at_cost"], 1000 + 250, "{totals}");
        let (desc, _) = order("sort=value_at_cost&order=desc").await;
        assert_eq!(desc, ["A-1", "C-3", "B-2", "D-4", "E_5"]);
        // Days of cover: C-3 5 / (5/30) = 30, B-2 8 / (2/30) = 120; no sales, none.
        let (asc, _) = order("sort=days_of_cover").await;
        assert_eq!(asc, ["C-3", "B-2", "A-1", "D-4", "E_5"]);
        let (desc, _) = order("sort=days_of_cover&order=desc").await;
        assert_eq!(desc, ["B-2", "C-3", "A-1", "D-4", "E_5"]);
        // Equal values tie by code, whichever the way.
        let (desc, _) = order("sort=sold_7d&order=desc").await;
        assert_eq!(desc, ["C-3", "B-2", "A-1", "D-4", "E_5"]);
        // A search is case-blind and its `_` and `%` are themselves.
        let (found, totals) = order("q=a-").await;
        assert_eq!(found, ["A-1"]);
        assert_eq!(totals["skus"], 1, "the sums are over what the search keeps");
        let (found, _) = order("q=_").await;
        assert_eq!(found, ["E_5"]);
        let (found, _) = order("q=%25").await;
        assert!(found.is_empty(), "{found:?}");
    }
);

both!(
    the_stock_pages_sums_cover_every_page_and_a_page_past_the_end_shows_the_last,
    |app| {
        let api = app.acme_api().await;
        let skus: Vec<_> = (0..55)
            .map(|i| json!({"code": format!("CUP-{i:02}"), "name": format!("Cup {i:02}"), "price": 100}))
            .collect();
        let (s, b) = api
            .post(
                "/api/v1/products",
                json!({"name": "Cups", "kind": "goods", "status": "ONLINE", "skus": skus}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        for i in 0..55 {
            api.receive(&format!("CUP-{i:02}"), "main", 2).await;
        }
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        for path in [
            "/admin/stock",
            "/admin/stock?page=2",
            "/admin/stock?page=99",
        ] {
            let page = app.page(&admin, path).await;
            assert_eq!(page.text("#total-skus"), "55", "{path}");
            assert_eq!(page.text("#total-on-hand"), "110", "{path}");
            assert_eq!(page.text("#total-low"), "55", "2 left is under 5: {path}");
        }
        let last = app.page(&admin, "/admin/stock?page=99").await;
        assert_eq!(
            last.attrs("table.report tbody tr", "data-sku"),
            ["CUP-50", "CUP-51", "CUP-52", "CUP-53", "CUP-54"]
        );
        assert_eq!(last.text("nav.pager [aria-current=page]"), "2");
    }
);
