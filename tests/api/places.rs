//! Stores and warehouses in the back office (issue 20): a merchant admin adds and edits them;
//! bad input is said under its field and changes nothing; staff cannot.

use crate::both;
use crate::helpers::html;

both!(
    a_merchant_admin_adds_a_store_and_a_warehouse_and_renames_one_refusals_change_nothing,
    |app| {
        let api = app.acme_api().await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin/places").await;
        assert_eq!(
            page.attrs("table.warehouses tr[data-warehouse]", "data-warehouse"),
            ["main"]
        );
        // A warehouse with a bad priority, then one whose slug is taken: said, nothing added.
        for (form, field) in [
            (
                [("name", "East"), ("slug", "east"), ("priority", "high")],
                "priority",
            ),
            (
                [("name", "East"), ("slug", "main"), ("priority", "5")],
                "slug",
            ),
            ([("name", ""), ("slug", "east"), ("priority", "5")], "name"),
        ] {
            let r = admin
                .post(app.url("/admin/places/warehouses"))
                .form(&form)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{field}");
            assert_eq!(
                html(r)
                    .await
                    .count(&format!(".field-error[data-field={field}]")),
                1,
                "{field}"
            );
        }
        assert_eq!(app.count("warehouses").await, 1);
        let r = admin
            .post(app.url("/admin/places/warehouses"))
            .form(&[("name", "东区仓"), ("slug", "east"), ("priority", "20")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        // Goods now go to it first (the higher priority).
        api.product("goods", "TEA").await;
        api.receive("TEA", "east", 2).await;
        let stock = api.stock("TEA").await;
        assert_eq!(stock["warehouses"][0]["warehouse"], "east");
        assert_eq!(stock["warehouses"][0]["warehouse_name"], "东区仓");
        // Renamed and lowered; its slug stays.
        let id: i64 = sqlx::query_scalar("SELECT id FROM warehouses WHERE slug = 'east'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let r = admin
            .post(app.url(&format!("/admin/places/warehouses/{id}")))
            .form(&[("name", "浦东仓"), ("priority", "1")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let stock = api.stock("TEA").await;
        assert_eq!(
            (
                &stock["warehouses"][0]["warehouse"],
                &stock["warehouses"][0]["warehouse_name"],
                &stock["warehouses"][0]["priority"]
            ),
            (
                &serde_json::json!("east"),
                &serde_json::json!("浦东仓"),
                &serde_json::json!(1)
            ),
            "{stock}"
        );
        let r = admin
            .post(app.url(&format!("/admin/places/warehouses/{id}")))
            .form(&[("name", "浦东仓"), ("priority", "99999")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r)
                .await
                .count("tr[data-warehouse=east] .field-error[data-field=priority]"),
            1
        );
        // A store: on to its booking-page settings.
        let r = admin
            .post(app.url("/admin/places/stores"))
            .form(&[
                ("name", "浦东店"),
                ("slug", "pudong"),
                ("timezone", "Asia/Shanghai"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert!(crate::helpers::location(&r).starts_with("/admin/stores/"));
        let r = admin
            .post(app.url("/admin/places/stores"))
            .form(&[
                ("name", "Nowhere"),
                ("slug", "nowhere"),
                ("timezone", "Mars/Base"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(html(r).await.count(".field-error[data-field=timezone]"), 1);
        let page = app.page(&admin, "/admin/places").await;
        assert_eq!(page.count("table.stores tr[data-store=pudong]"), 1);
        // Staff see none of it; another merchant's warehouse is not found.
        let staff = app.signed_in("store_staff", Some("acme")).await;
        assert_eq!(
            staff
                .get(app.url("/admin/places"))
                .send()
                .await
                .unwrap()
                .status(),
            403
        );
        app.merchant("other").await;
        let theirs: i64 = sqlx::query_scalar(
            "SELECT w.id FROM warehouses w JOIN merchants m ON m.id = w.merchant_id WHERE m.slug = 'other'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let r = admin
            .post(app.url(&format!("/admin/places/warehouses/{theirs}")))
            .form(&[("name", "Mine now"), ("priority", "1")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
);

both!(
    the_operators_dashboard_names_the_merchant_of_each_store_and_warehouse,
    |app| {
        app.merchant("acme").await;
        app.merchant("other").await;
        let operator = app.signed_in("operator", None).await;
        let page = app.page(&operator, "/admin").await;
        let names = page.texts("td.merchant");
        assert!(names.len() >= 4, "{names:?}");
        assert!(names.iter().all(|n| !n.is_empty()), "{names:?}");
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin").await;
        assert_eq!(page.count("td.merchant"), 0, "a merchant sees its own only");
    }
);
