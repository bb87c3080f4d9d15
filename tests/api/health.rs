use crate::both;

both!(healthz_answers_ok, |app| {
    let r = reqwest::get(app.url("/healthz")).await.unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["status"], "ok");
});

both!(readyz_reports_database_and_redis_state, |app| {
    let r = reqwest::get(app.url("/readyz")).await.unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["database"], "ok");
    let expected_redis = if app.redis_url.is_some() {
        "ok"
    } else {
        "not_configured"
    };
    assert_eq!(body["redis"], expected_redis);
});

both!(
    readyz_stays_ready_and_says_redis_is_unreachable_when_it_is,
    |app| {
        // A second app on the same database whose Redis URL points at a closed port.
        let mut config = sellable::Config::for_database(&app.database_url);
        config.global.redis_url = Some("redis://127.0.0.1:1".into());
        config.clock = app.db.clock.clone();
        let other = sellable::build(config).await.unwrap();
        let addr = other.local_addr();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(other.run_until(async move {
            let _ = rx.await;
        }));
        let r = reqwest::get(format!("http://{addr}/readyz")).await.unwrap();
        // Redis only gates the hot paths; without it the instance serves from SQL.
        assert_eq!(r.status(), 200);
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["redis"], "unreachable");
        assert_eq!(body["database"], "ok");
        let _ = tx.send(());
    }
);

both!(metrics_count_requests_by_route_and_status, |app| {
    let client = app.client();
    client.get(app.url("/healthz")).send().await.unwrap();
    client
        .get(app.url("/admin/products/999"))
        .send()
        .await
        .unwrap();
    let text = crate::helpers::metrics_text(&app.base).await;
    assert!(
        text.lines().any(|l| l.starts_with("http_requests_total")
            && l.contains(r#"route="/healthz""#)
            && l.contains(r#"status="200""#)),
        "healthz counted by route and status:\n{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("http_requests_total")
            && l.contains(r#"route="/admin/products/{id}""#)
            && l.contains(r#"status="303""#)),
        "route templates, not raw paths:\n{text}"
    );
    assert!(text.contains("http_request_duration_seconds"));
    // What waits for someone: read at each scrape (values are process-wide in this test binary).
    for gauge in [
        "sellable_open_findings",
        "sellable_open_exceptions",
        "sellable_undelivered_events",
        "sellable_oldest_undelivered_event_age_seconds",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(gauge)),
            "{gauge} in /metrics:\n{text}"
        );
    }
});

both!(
    every_response_carries_security_headers_request_id_and_vary,
    |app| {
        let r = reqwest::get(app.url("/login")).await.unwrap();
        let h = r.headers();
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert_eq!(h["x-frame-options"], "DENY");
        assert!(h["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'self'"));
        assert!(!h["x-request-id"].is_empty());
        assert!(h
            .get_all("vary")
            .iter()
            .any(|v| v.to_str().unwrap() == "HX-Request, HX-Target"));
    }
);

both!(
    unknown_page_is_a_404_page_and_unknown_api_route_is_json,
    |app| {
        let r = reqwest::get(app.url("/no/such/page")).await.unwrap();
        assert_eq!(r.status(), 404);
        let page = crate::helpers::html(r).await;
        assert!(page.text("h1").starts_with("404"));
        let r = reqwest::get(app.url("/api/v1/nothing-here")).await.unwrap();
        assert_eq!(r.status(), 404);
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"], "not_found");
    }
);

#[test]
fn both_dialects_ship_the_same_migration_versions() {
    use sellable::infra::db::{migration_versions, Dialect};
    let sqlite = migration_versions(Dialect::Sqlite);
    assert!(!sqlite.is_empty());
    assert_eq!(sqlite, migration_versions(Dialect::Postgres));
    let files = |d: &str| {
        let mut v: Vec<String> =
            std::fs::read_dir(format!("{}/migrations/{d}", env!("CARGO_MANIFEST_DIR")))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .collect();
        v.sort();
        v
    };
    assert_eq!(
        files("sqlite"),
        files("postgres"),
        "same file names in both dialects"
    );
}

both!(
    pages_and_long_listings_are_gzipped_but_small_api_answers_are_not,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        let gzip = |r: &reqwest::Response| {
            r.headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap().to_string())
        };
        let page = api
            .http
            .get(app.url("/login"))
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(gzip(&page).as_deref(), Some("gzip"), "pages are compressed");
        let listing = api
            .http
            .get(app.url("/api/v1/sellable?status=all"))
            .bearer_auth(&api.key)
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(listing.status(), 200);
        assert_eq!(
            gzip(&listing).as_deref(),
            Some("gzip"),
            "the listing is compressed"
        );
        let refusal = api
            .http
            .post(app.url("/api/v1/reservations"))
            .bearer_auth(&api.key)
            .header("Accept-Encoding", "gzip")
            .json(&serde_json::json!({"order_id": "o-1", "items": [{"sku": "TEA", "qty": 1}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(refusal.status(), 409);
        assert_eq!(
            gzip(&refusal),
            None,
            "a small hot-path answer is sent as is"
        );
        let body: serde_json::Value = refusal.json().await.unwrap();
        assert_eq!(body["error"], "insufficient_stock");
        assert_eq!(body["sku"], "TEA");
        assert_eq!(body["available"], 0);
    }
);
