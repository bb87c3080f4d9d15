use crate::both;
use crate::helpers::html;

both!(
    merchant_admin_creates_a_key_shown_once_and_revokes_it_after_confirming,
    |app| {
        app.merchant("acme").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let r = client
            .post(app.url("/admin/api-keys"))
            .form(&[("name", "Order system")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "no-store");
        let page = html(r).await;
        let key = page.text("#new-key");
        assert!(key.starts_with("sk_"), "{key}");
        // The key works on the API...
        let http = reqwest::Client::new();
        assert_eq!(
            http.get(app.url("/api/v1/skus/NONE"))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap()
                .status(),
            404
        );
        // ...and is never shown again.
        let list = client
            .get(app.url("/admin/api-keys"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(!list.contains(&key));
        let page = crate::helpers::Html::parse(&list);
        let revoke = page.attr("a.danger", "href").unwrap();
        let confirm = app.page(&client, &revoke).await;
        assert!(confirm.text("h1").starts_with("Revoke API key"));
        let r = client.post(app.url(&revoke)).send().await.unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(
            http.get(app.url("/api/v1/skus/NONE"))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap()
                .status(),
            401
        );
        let page = app.page(&client, "/admin/api-keys").await;
        assert!(page.text(".flash").contains("revoked"));
        assert_eq!(page.count("tr.revoked"), 1);
        let audit: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action LIKE 'apikey.%'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(audit, 2);
    }
);

both!(api_key_name_is_required, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    let r = client
        .post(app.url("/admin/api-keys"))
        .form(&[("name", "  ")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(
        html(r).await.text(".field-error[data-field=name]"),
        "Name is required."
    );
    assert_eq!(app.count("api_keys").await, 0);
});

both!(another_merchants_key_cannot_be_revoked, |app| {
    app.merchant("acme").await;
    app.merchant("globex").await;
    app.api_key("acme").await;
    let id: i64 = sqlx::query_scalar("SELECT id FROM api_keys")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let other = app.signed_in("merchant_admin", Some("globex")).await;
    let r = other
        .post(app.url(&format!("/admin/api-keys/{id}/revoke")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let revoked: Option<i64> = sqlx::query_scalar("SELECT revoked_at FROM api_keys")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert!(revoked.is_none());
});
