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

/// The rate a key has in the database (`None`: the instance's default).
async fn key_rate(app: &crate::helpers::TestApp, key_name: &str) -> Option<i64> {
    sqlx::query_scalar("SELECT rate_per_second FROM api_keys WHERE name = $1")
        .bind(key_name)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

both!(
    a_key_over_its_rate_gets_429_with_retry_after_while_another_key_is_not_slowed,
    |app| {
        let m = app.merchant("acme").await;
        let actor = sellable::domain::Actor::system("test");
        let (_, slow) =
            sellable::domain::tenancy::apikeys::create(&app.db, &actor, m, "slow", Some(5))
                .await
                .unwrap();
        let (_, other) =
            sellable::domain::tenancy::apikeys::create(&app.db, &actor, m, "other", None)
                .await
                .unwrap();
        let api = |key: &str| crate::helpers::Api {
            base: app.url(""),
            key: key.to_string(),
            http: reqwest::Client::new(),
            clock: app.db.clock.clone(),
        };
        let (slow_api, other_api) = (api(&slow), api(&other));
        // Both keys at once, 30 calls each, all in flight together.
        let started = std::time::Instant::now();
        let calls = (0..30).map(|_| {
            let (s, o) = (slow_api.clone(), other_api.clone());
            async move {
                let a = s.get("/api/v1/exceptions").await;
                let b = o.get("/api/v1/exceptions").await;
                (a, b)
            }
        });
        let answers = futures_util::future::join_all(calls).await;
        // The bucket refills 5 a second while the calls are in flight: on a loaded machine the
        // burst takes longer, and more may pass. Never more than the burst and that refill.
        let refilled = (5.0 * started.elapsed().as_secs_f64()).ceil() as usize;
        let ok = answers.iter().filter(|((s, _), _)| *s == 200).count();
        let limited: Vec<_> = answers
            .iter()
            .filter(|((s, _), _)| *s == 429)
            .map(|((_, b), _)| b.clone())
            .collect();
        assert_eq!(ok + limited.len(), 30, "only 200 or 429");
        assert!(
            (5..=5 + refilled.max(5)).contains(&ok),
            "a burst of its rate, then its rate: {ok} passed in {:?}",
            started.elapsed()
        );
        assert!(
            limited.iter().all(|b| b["error"] == "rate_limited"),
            "{limited:?}"
        );
        assert!(
            answers.iter().all(|(_, (s, _))| *s == 200),
            "the other key is not slowed by the first"
        );
        // The header says when to come back, in whole seconds. The bucket may have refilled a
        // token since the burst (a loaded machine is slow): call until it refuses again.
        let mut r = None;
        for _ in 0..20 {
            let answer = reqwest::Client::new()
                .get(app.url("/api/v1/exceptions"))
                .bearer_auth(&slow)
                .send()
                .await
                .unwrap();
            if answer.status() == 429 {
                r = Some(answer);
                break;
            }
        }
        let r = r.expect("refused again within a burst of calls");
        let retry: u64 = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(retry, 1);
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        assert_eq!(slow_api.get("/api/v1/exceptions").await.0, 200, "refilled");
    }
);

both!(
    a_rate_set_in_the_back_office_takes_effect_at_the_next_call_and_a_bad_one_changes_nothing,
    |app| {
        let m = app.merchant("acme").await;
        let actor = sellable::domain::Actor::system("test");
        let (id, key) =
            sellable::domain::tenancy::apikeys::create(&app.db, &actor, m, "shop", None)
                .await
                .unwrap();
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let api = crate::helpers::Api {
            base: app.url(""),
            key,
            http: reqwest::Client::new(),
            clock: app.db.clock.clone(),
        };
        // Warm the key's cache entry: the new rate must still apply at once.
        assert_eq!(api.get("/api/v1/exceptions").await.0, 200);
        let page = app.page(&client, "/admin/api-keys").await;
        assert!(
            page.text("td[data-rate]").contains("1,000/s"),
            "{}",
            page.text("td[data-rate]")
        );
        for bad in ["abc", "-1", "99999999999"] {
            let r = client
                .post(app.url(&format!("/admin/api-keys/{id}/rate")))
                .form(&[("rate_per_second", bad)])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{bad}");
            let page = html(r).await;
            assert_eq!(page.count("[data-field=rate_per_second]"), 1, "{bad}");
            assert_eq!(
                page.attr("input[name=rate_per_second]", "value").as_deref(),
                Some(bad),
                "what was typed stays"
            );
            assert_eq!(
                key_rate(&app, "shop").await,
                None,
                "nothing saved for {bad}"
            );
        }
        let r = client
            .post(app.url(&format!("/admin/api-keys/{id}/rate")))
            .form(&[("rate_per_second", "2")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(key_rate(&app, "shop").await, Some(2));
        let codes: Vec<u16> = futures_util::future::join_all(
            (0..4).map(|_| async { api.get("/api/v1/exceptions").await.0 }),
        )
        .await;
        assert!(
            codes.contains(&429),
            "the new rate applies at once: {codes:?}"
        );
        let page = app.page(&client, "/admin/api-keys").await;
        assert_eq!(
            page.attr("td[data-rate]", "data-rate").as_deref(),
            Some("2")
        );
        // Empty: back to the default.
        let r = client
            .post(app.url(&format!("/admin/api-keys/{id}/rate")))
            .form(&[("rate_per_second", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(key_rate(&app, "shop").await, None);
        let audit: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'apikey.rate'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(audit, 2, "each change is in the audit log");
        // Another merchant's admin cannot touch the key.
        app.merchant("other").await;
        let intruder = app.signed_in("merchant_admin", Some("other")).await;
        let r = intruder
            .post(app.url(&format!("/admin/api-keys/{id}/rate")))
            .form(&[("rate_per_second", "0")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(key_rate(&app, "shop").await, None);
    }
);
