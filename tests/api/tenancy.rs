use crate::both;

both!(
    store_staff_of_another_merchant_gets_404_on_a_product_by_url,
    |app| {
        app.merchant("acme").await;
        app.merchant("globex").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let form = [
            ("name", "Secret tea"),
            ("kind", "goods"),
            ("status", "ONLINE"),
            ("sku_code", "SEC-1"),
            ("sku_name", "x"),
            ("sku_price", "1"),
        ];
        let r = admin
            .post(app.url("/admin/products"))
            .form(&form)
            .send()
            .await
            .unwrap();
        let location = r.headers()["location"].to_str().unwrap().to_string();
        let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();

        let staff = app.signed_in("store_staff", Some("globex")).await;
        let r = staff.get(app.url(&location)).send().await.unwrap();
        assert_eq!(r.status(), 404);
        assert!(
            !r.text().await.unwrap().contains("Secret tea"),
            "no data of the other merchant"
        );
        let other_admin = app.signed_in("merchant_admin", Some("globex")).await;
        assert_eq!(
            other_admin
                .get(app.url(&location))
                .send()
                .await
                .unwrap()
                .status(),
            404
        );
        assert_eq!(
            other_admin
                .get(app.url(&format!("/admin/skus/{sku_id}/edit")))
                .send()
                .await
                .unwrap()
                .status(),
            404
        );
        let r = other_admin
            .post(app.url(&format!("{location}/status")))
            .form(&[("status", "OFFLINE")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        let status: String = sqlx::query_scalar("SELECT status FROM products")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(status, "ONLINE");
    }
);

both!(
    api_key_of_another_merchant_gets_404_on_product_and_sku,
    |app| {
        app.merchant("acme").await;
        app.merchant("globex").await;
        let acme = app.api_key("acme").await;
        let globex = app.api_key("globex").await;
        let http = reqwest::Client::new();
        let r = http
        .post(app.url("/api/v1/products"))
        .bearer_auth(&acme)
        .json(&serde_json::json!({"name": "Secret", "kind": "goods", "skus": [{"code": "SEC-1", "name": "x", "price": 100}]}))
        .send()
        .await
        .unwrap();
        assert_eq!(r.status(), 201);
        let id = r.json::<serde_json::Value>().await.unwrap()["id"]
            .as_i64()
            .unwrap();
        for path in [
            format!("/api/v1/products/{id}"),
            "/api/v1/skus/SEC-1".to_string(),
        ] {
            let r = http
                .get(app.url(&path))
                .bearer_auth(&globex)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 404, "{path}");
            let body: serde_json::Value = r.json().await.unwrap();
            assert_eq!(body["error"], "not_found");
            assert!(!body.to_string().contains("Secret"));
            assert_eq!(
                http.get(app.url(&path))
                    .bearer_auth(&acme)
                    .send()
                    .await
                    .unwrap()
                    .status(),
                200,
                "{path}"
            );
        }
        let r = http
            .patch(app.url(&format!("/api/v1/products/{id}")))
            .bearer_auth(&globex)
            .json(&serde_json::json!({"status": "OFFLINE"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
);

/// What a copy of one of acme's rows, with one column pointed elsewhere, does to the database:
/// Ok, or the error, led by its kind (`ForeignKeyViolation: ...`).
async fn copy_row(
    app: &crate::helpers::TestApp,
    sql: &str,
    id: i64,
    to: i64,
) -> Result<(), String> {
    sqlx::query(sql)
        .bind(to)
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(id)
        .execute(&app.db.pool)
        .await
        .map(|_| ())
        .map_err(|e| match &e {
            sqlx::Error::Database(d) => format!("{:?}: {e}", d.kind()),
            _ => e.to_string(),
        })
}

fn refused_by_a_key(r: &Result<(), String>) -> bool {
    matches!(r, Err(e) if e.starts_with("ForeignKeyViolation"))
}

both!(
    a_goods_line_or_ledger_row_naming_another_merchants_sku_or_warehouse_is_refused_by_the_database,
    |app| {
        let acme = app.acme_api().await;
        acme.product("goods", "TEA").await;
        acme.receive("TEA", "main", 5).await;
        let (s, b) = acme
            .reserve("o-1", serde_json::json!([{"sku": "TEA", "qty": 1}]))
            .await;
        assert_eq!(s, 201, "{b}");
        let globex = app.merchant_api("globex").await;
        globex.product("goods", "GTEA").await;
        let theirs_sku = app.sku_id("GTEA").await;
        let theirs_warehouse: i64 = sqlx::query_scalar(
            "SELECT w.id FROM warehouses w JOIN merchants m ON m.id = w.merchant_id WHERE m.slug = 'globex'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let ours_sku = app.sku_id("TEA").await;
        let ours_warehouse: i64 = sqlx::query_scalar(
            "SELECT w.id FROM warehouses w JOIN merchants m ON m.id = w.merchant_id WHERE m.slug = 'acme'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let ledger_id: i64 = sqlx::query_scalar("SELECT MAX(id) FROM stock_ledger")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let line_id: i64 = sqlx::query_scalar("SELECT MAX(id) FROM stock_reservations")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let ledger = |col: &str| {
            let (sku, wh) = if col == "sku_id" {
                ("$1", "warehouse_id")
            } else {
                ("sku_id", "$1")
            };
            format!(
                "INSERT INTO stock_ledger (merchant_id, sku_id, warehouse_id, kind, qty, total_after, locked_after,
                    sold_after, frozen_after, actor, event_id, created_at)
                 SELECT merchant_id, {sku}, {wh}, kind, qty, total_after, locked_after, sold_after, frozen_after,
                    actor, $2, created_at FROM stock_ledger WHERE id = $3"
            )
        };
        let line = |col: &str| {
            let (sku, wh) = if col == "sku_id" {
                ("$1", "warehouse_id")
            } else {
                ("sku_id", "$1")
            };
            format!(
                "INSERT INTO stock_reservations (merchant_id, reservation_id, order_id, sku_id, warehouse_id, qty,
                    status, expires_at, created_at, updated_at)
                 SELECT merchant_id, reservation_id, $2, {sku}, {wh}, qty, status, expires_at, created_at,
                    updated_at FROM stock_reservations WHERE id = $3"
            )
        };
        for (what, sql, id) in [
            ("ledger row", ledger("sku_id"), ledger_id),
            ("goods line", line("sku_id"), line_id),
        ] {
            let r = copy_row(&app, &sql, id, theirs_sku).await;
            assert!(
                refused_by_a_key(&r),
                "a {what} of acme's naming globex's SKU is refused: {r:?}"
            );
            // The same statement with acme's own SKU goes through: the refusal was the key's.
            assert_eq!(copy_row(&app, &sql, id, ours_sku).await, Ok(()), "{what}");
        }
        for (what, sql, id) in [
            ("ledger row", ledger("warehouse_id"), ledger_id),
            ("goods line", line("warehouse_id"), line_id),
        ] {
            let r = copy_row(&app, &sql, id, theirs_warehouse).await;
            assert!(
                refused_by_a_key(&r),
                "a {what} of acme's naming globex's warehouse is refused: {r:?}"
            );
            assert_eq!(
                copy_row(&app, &sql, id, ours_warehouse).await,
                Ok(()),
                "{what}"
            );
        }
    }
);
