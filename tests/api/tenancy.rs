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
