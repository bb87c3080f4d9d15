//! The stock page as a merchant works it (issue 20): one form per task, holds listed with their
//! reason and release day, tiles that say what they count, figures and chart that refresh with
//! the panel, and a ledger that names people.

use serde_json::json;

use crate::both;
use crate::helpers::{field_codes, html, Html, TestApp};

/// The open holds of a SKU × warehouse always add up to its frozen units.
async fn assert_holds_add_up(app: &TestApp) {
    let wrong = sellable::domain::stock::holds::mismatches(&app.db, sellable::domain::Scope::All)
        .await
        .unwrap();
    assert!(wrong.is_empty(), "holds ≠ frozen: {wrong:?}");
}

fn in_days(app: &TestApp, n: i64) -> String {
    (app.now() + chrono::Duration::days(n))
        .with_timezone(&chrono_tz::Asia::Shanghai)
        .format("%Y-%m-%d")
        .to_string()
}

both!(
    a_hold_is_listed_with_its_reason_and_release_day_and_released_from_that_hold_only,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 20).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let sku_id = app.sku_id("TEA").await;
        let path = format!("/admin/skus/{sku_id}/stock/adjustments");
        let hold = |qty: &'static str, release_on: String| {
            vec![
                ("kind", "FREEZE".to_string()),
                ("warehouse", "main".to_string()),
                ("qty", qty.to_string()),
                ("reason_code", "qc_hold".to_string()),
                ("reason", "check for damp".to_string()),
                ("release_on", release_on),
            ]
        };
        // A release day in the past or not a date is refused under its field, nothing held.
        for (day, code) in [
            (in_days(&app, -2), "period_in_past"),
            ("31/12".to_string(), "invalid_date"),
        ] {
            let r = admin
                .post(app.url(&path))
                .form(&hold("4", day))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422);
            let page = html(r).await;
            assert_eq!(
                page.count(".field-error[data-field=release_on]"),
                1,
                "{code}"
            );
        }
        let (s, b) = api
            .post(
                "/api/v1/stock/adjustments",
                json!({"sku": "TEA", "warehouse": "main", "kind": "FREEZE", "qty": 1, "reason_code": "qc_hold",
                       "release_on": in_days(&app, -1), "idempotency_key": "past"}),
            )
            .await;
        assert_eq!(
            (s, field_codes(&b)),
            (422, vec!["release_on:period_in_past".to_string()])
        );
        assert_eq!(api.stock("TEA").await["frozen"], 0);
        // Two holds: one due in a week, one due today.
        let r = admin
            .post(app.url(&path))
            .form(&hold("4", in_days(&app, 7)))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let r = admin
            .post(app.url(&path))
            .form(&hold("3", in_days(&app, 0)))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_holds_add_up(&app).await;
        let page = app
            .page(&admin, &format!("/admin/skus/{sku_id}/stock"))
            .await;
        let rows = page.attrs("table.holds tbody tr", "data-hold");
        assert_eq!(rows.len(), 2);
        assert_eq!(page.count("table.holds .reason-code[data-code=qc_hold]"), 2);
        assert_eq!(
            page.count("table.holds tr.due [data-code=hold-due]"),
            1,
            "today's is due"
        );
        assert_eq!(page.text("#unavailable"), "7");
        assert_eq!(page.text("#on-hand"), "20");
        assert_eq!(page.text("#available"), "13");
        let (s, listed) = api.get("/api/v1/skus/TEA/holds").await;
        assert_eq!(s, 200);
        assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
        assert_eq!(listed[0]["release_on"], in_days(&app, 7));
        assert_eq!(listed[0]["remaining"], 4);
        let first: i64 = rows[0].parse().unwrap();
        let second: i64 = rows[1].parse().unwrap();
        // The release form opens on the hold asked for, with its units.
        let page = app
            .page(
                &admin,
                &format!("/admin/skus/{sku_id}/stock?task=UNFREEZE&hold={second}"),
            )
            .await;
        assert_eq!(
            page.attr("select[name=hold_id] option[selected]", "value"),
            Some(second.to_string())
        );
        assert_eq!(
            page.attr("form.adjust input[name=qty]", "value").as_deref(),
            Some("3")
        );
        // Releasing more than a hold holds is refused, though the warehouse holds 7.
        let release = |hold: i64, qty: &'static str| {
            vec![
                ("kind", "UNFREEZE".to_string()),
                ("hold_id", hold.to_string()),
                ("qty", qty.to_string()),
                ("reason_code", "qc_hold".to_string()),
                ("reason", "check passed".to_string()),
            ]
        };
        let r = admin
            .post(app.url(&path))
            .form(&release(second, "4"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r)
                .await
                .attr(".field-error[data-field=qty]", "data-field")
                .as_deref(),
            Some("qty"),
            "the refusal is said at the quantity"
        );
        assert_eq!(api.stock("TEA").await["frozen"], 7, "nothing released");
        // Two of the second hold released: it keeps one, the first keeps its four.
        let r = admin
            .post(app.url(&path))
            .form(&release(second, "2"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let (_, listed) = api.get("/api/v1/skus/TEA/holds").await;
        let remaining: Vec<(i64, i64)> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["id"].as_i64().unwrap(), h["remaining"].as_i64().unwrap()))
            .collect();
        assert_eq!(remaining, [(first, 4), (second, 1)]);
        assert_holds_add_up(&app).await;
        // From the API without a hold: the oldest first, into the next.
        let (s, b) = api
            .post(
                "/api/v1/stock/adjustments",
                json!({"sku": "TEA", "warehouse": "main", "kind": "UNFREEZE", "qty": 5,
                       "reason_code": "qc_hold", "idempotency_key": "fifo"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let (_, listed) = api.get("/api/v1/skus/TEA/holds").await;
        assert_eq!(listed.as_array().unwrap().len(), 0, "{listed}");
        assert_holds_add_up(&app).await;
        // A hold that is gone: the form says so under the hold's field.
        let r = admin
            .post(app.url(&path))
            .form(&release(first, "1"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(html(r).await.count(".field-error[data-field=hold_id]"), 1);
        let page = app
            .page(&admin, &format!("/admin/skus/{sku_id}/stock?task=UNFREEZE"))
            .await;
        assert_eq!(page.count("#nothing-held"), 1);
        assert_eq!(page.count("form.adjust"), 0);
        app.assert_ledger_replays().await;
        app.assert_reconciled().await;
    }
);

both!(
    releases_of_one_hold_racing_release_exactly_what_it_holds,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let (s, b) = api
            .post(
                "/api/v1/stock/adjustments",
                json!({"sku": "TEA", "warehouse": "main", "kind": "FREEZE", "qty": 5,
                       "reason_code": "qc_hold", "idempotency_key": "h"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        // A second hold in the same warehouse, which the releases of the first must not touch.
        let (s, _) = api
            .post(
                "/api/v1/stock/adjustments",
                json!({"sku": "TEA", "warehouse": "main", "kind": "FREEZE", "qty": 2,
                       "reason_code": "damaged", "idempotency_key": "h2"}),
            )
            .await;
        assert_eq!(s, 201);
        let (_, listed) = api.get("/api/v1/skus/TEA/holds").await;
        let hold = listed[0]["id"].as_i64().unwrap();
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.post(
                        "/api/v1/stock/adjustments",
                        json!({"sku": "TEA", "warehouse": "main", "kind": "UNFREEZE", "qty": 1,
                               "hold_id": hold, "reason_code": "qc_hold", "idempotency_key": format!("r-{i}")}),
                    )
                    .await
                })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            let (s, b) = t.await.unwrap();
            match s {
                201 => ok += 1,
                409 => assert_eq!(b["error"], "insufficient_held", "{b}"),
                _ => panic!("{s} {b}"),
            }
        }
        assert_eq!(ok, 5, "the hold held five");
        let (_, listed) = api.get("/api/v1/skus/TEA/holds").await;
        assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
        assert_eq!(listed[0]["remaining"], 2, "the other hold is untouched");
        assert_eq!(api.stock("TEA").await["frozen"], 2);
        assert_holds_add_up(&app).await;
        app.assert_ledger_replays().await;
    }
);

both!(
    each_task_opens_its_own_form_and_the_figures_refresh_with_the_panel,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let sku_id = app.sku_id("TEA").await;
        let stock = format!("/admin/skus/{sku_id}/stock");
        // Never stocked: the figures say so instead of "out of stock".
        let page = app.page(&admin, &stock).await;
        assert_eq!(page.count("#never-stocked"), 1);
        assert_eq!(
            page.count("form.adjust input[name=kind][value=RECEIVE]"),
            1,
            "receive opens first"
        );
        // Each task asks only what it needs.
        let fields = |p: &Html| {
            p.attrs("form.adjust [name]", "name")
                .into_iter()
                .filter(|n| n != "csrf_token")
                .collect::<Vec<_>>()
        };
        let task = |t: &'static str| {
            let url = format!("{stock}?task={t}");
            let admin = admin.clone();
            let app = &app;
            async move { app.page(&admin, &url).await }
        };
        assert_eq!(
            fields(&task("RECEIVE").await),
            ["kind", "warehouse", "qty", "reason_code", "reason"]
        );
        assert_eq!(
            fields(&task("TRANSFER").await),
            [
                "kind",
                "warehouse",
                "to_warehouse",
                "qty",
                "reason_code",
                "reason"
            ]
        );
        assert_eq!(
            fields(&task("FREEZE").await),
            [
                "kind",
                "warehouse",
                "qty",
                "reason_code",
                "release_on",
                "reason"
            ]
        );
        let write_off = task("WRITE_OFF").await;
        assert_eq!(
            write_off.attrs("form.adjust select[name=reason_code] option", "value"),
            [
                "",
                "correction",
                "damaged",
                "theft_loss",
                "promotion_donation",
                "other"
            ]
        );
        // htmx asks for a task's panel alone.
        let r = admin
            .get(app.url(&format!("{stock}?task=COUNT")))
            .header("HX-Request", "true")
            .header("HX-Target", "stock-panel")
            .send()
            .await
            .unwrap();
        let body = r.text().await.unwrap();
        assert!(
            body.trim_start().starts_with("<section id=\"stock-panel\""),
            "{body}"
        );
        // A receipt in place: tiles, figures and chart come back with the panel.
        let r = admin
            .post(app.url(&format!("{stock}/adjustments")))
            .header("HX-Request", "true")
            .form(&[
                ("kind", "RECEIVE"),
                ("warehouse", "main"),
                ("qty", "12"),
                ("reason_code", "received"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let frag = Html::parse(&r.text().await.unwrap());
        assert_eq!(frag.text("#on-hand"), "12");
        assert_eq!(frag.count("#stock-panel #figures"), 1);
        assert_eq!(frag.count("#never-stocked"), 0);
        assert_eq!(frag.count("#stock-chart .mark[data-kind=RECEIVE]"), 1);
        // The chart's window: 7, 30 or 90 days; anything else is 30.
        for (asked, shown) in [("7", "7"), ("90", "90"), ("365", "30")] {
            let page = app.page(&admin, &format!("{stock}?days={asked}")).await;
            assert_eq!(
                page.attr("#stock-chart", "data-days").as_deref(),
                Some(shown)
            );
            assert_eq!(page.count("#stock-chart .chart-axis span"), 4);
            // A SKU made moments ago charts from its creation: its axis says no moment twice
            // (not today's date four times).
            let axis = page.texts("#stock-chart .chart-axis span");
            let said: Vec<_> = axis.iter().filter(|a| !a.is_empty()).collect();
            let distinct: std::collections::HashSet<_> = said.iter().collect();
            assert!(!said.is_empty() && distinct.len() == said.len(), "{axis:?}");
        }
        // A count changed after its preview is previewed again, not booked unseen.
        let before = app.count("stock_ledger").await;
        let r = admin
            .post(app.url(&format!("{stock}/adjustments")))
            .form(&[
                ("kind", "COUNT"),
                ("warehouse", "main"),
                ("qty", "9"),
                ("reason_code", "count"),
                ("confirm_count", "1"),
                ("preview_of", "main:11"),
                ("expected_on_hand", "12"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let page = crate::helpers::html(r).await;
        assert_eq!(page.count(".count-preview"), 1);
        assert_eq!(
            page.attr("input[name=preview_of]", "value").as_deref(),
            Some("main:9")
        );
        assert_eq!(app.count("stock_ledger").await, before, "nothing booked");
        // Committed and sold tiles follow the orders.
        let (s, b) = api
            .post(
                "/api/v1/reservations",
                json!({"order_id": "o-1", "items": [{"sku": "TEA", "qty": 2}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let page = app.page(&admin, &stock).await;
        assert_eq!(
            (
                page.text("#on-hand"),
                page.text("#available"),
                page.text("#committed"),
                page.text("#sold")
            ),
            (
                "12".to_string(),
                "10".to_string(),
                "2".to_string(),
                "0".to_string()
            )
        );
    }
);

both!(
    the_ledger_names_the_person_the_api_key_and_the_system_that_moved_stock,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        sqlx::query("UPDATE users SET display_name = '李经理' WHERE email = $1")
            .bind(&email)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let admin = app.sign_in(&email, &password).await;
        let sku_id = app.sku_id("TEA").await;
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku_id}/stock/adjustments")))
            .form(&[
                ("kind", "WRITE_OFF"),
                ("warehouse", "main"),
                ("qty", "1"),
                ("reason_code", "damaged"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app
            .page(&admin, &format!("/admin/skus/{sku_id}/stock"))
            .await;
        let by = page.texts("table.ledger tbody tr td:last-child");
        assert_eq!(by[0], "李经理", "{by:?}");
        assert!(
            by[1].contains("API") && !by[1].starts_with("apikey:"),
            "{by:?}"
        );
    }
);

both!(
    reconciliation_makes_holds_add_up_to_frozen_units_again_both_ways_and_two_runs_repair_once,
    |app| {
        use sellable::domain::reconcile::{run, FindingKind};
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 20).await;
        for qty in [3, 2] {
            let (s, b) = api
                .post(
                    "/api/v1/stock/adjustments",
                    json!({"sku": "TEA", "warehouse": "main", "kind": "FREEZE", "qty": qty,
                           "reason_code": "qc_hold", "idempotency_key": format!("f{qty}")}),
                )
                .await;
            assert_eq!(s, 201, "{b}");
        }
        assert_holds_add_up(&app).await;
        let actor = sellable::domain::Actor::system("test");
        let drift_of = |r: &sellable::domain::reconcile::Report| {
            r.repaired
                .iter()
                .filter(|f| f.kind == FindingKind::HoldDrift)
                .count()
        };
        for broken in [
            // A hold emptied behind the ledger's back: 2 frozen units listed by none.
            "UPDATE stock_holds SET remaining = 0 WHERE qty = 2",
            // A hold listing 4 units that are not frozen.
            "INSERT INTO stock_holds (merchant_id, sku_id, warehouse_id, qty, remaining, reason, actor, created_at)
             SELECT merchant_id, sku_id, warehouse_id, 4, 4, '', 'test', 0 FROM stock_balances",
        ] {
            sqlx::query(broken).execute(&app.db.pool).await.unwrap();
            assert!(!sellable::domain::stock::holds::mismatches(&app.db, sellable::domain::Scope::All)
                .await
                .unwrap()
                .is_empty());
            // Two reconciliations at once (every instance runs one): repaired once.
            let (one, other) = tokio::join!(
                run(&app.db, "job", &actor),
                run(&app.db, "job", &actor)
            );
            let (one, other) = (one.unwrap(), other.unwrap());
            assert_eq!(drift_of(&one) + drift_of(&other), 1, "{broken}");
            assert!(one.broken.is_empty() && other.broken.is_empty(), "repaired, not frozen");
            assert_holds_add_up(&app).await;
            // Frozen is the authority: it did not move, and the SKU still sells.
            assert_eq!(api.stock("TEA").await["frozen"], 5, "{broken}");
            let (s, v) = api.get("/api/v1/skus/TEA/sellable").await;
            assert_eq!((s, &v["sellable"]), (200, &json!(true)), "{v}");
        }
        let again = run(&app.db, "job", &actor).await.unwrap();
        assert_eq!(drift_of(&again), 0, "{:?}", again.repaired);
    }
);
