use crate::both;
use crate::helpers::html;

both!(
    signed_out_admin_pages_redirect_to_login_keeping_the_destination,
    |app| {
        let r = app
            .client()
            .get(app.url("/admin/products?q=tea"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(
            r.headers()["location"],
            "/login?next=/admin/products%3Fq%3Dtea"
        );
    }
);

both!(
    htmx_request_without_session_gets_hx_redirect_not_a_login_fragment,
    |app| {
        let r = app
            .client()
            .get(app.url("/admin/products"))
            .header("HX-Request", "true")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        assert!(r.headers()["hx-redirect"]
            .to_str()
            .unwrap()
            .starts_with("/login?next="));
    }
);

both!(correct_password_signs_in_and_lands_on_next, |app| {
    app.merchant("acme").await;
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let client = app.client();
    let r = client
        .post(app.url("/login"))
        .form(&[
            ("email", email.to_uppercase().as_str()),
            ("password", password.as_str()),
            ("next", "/admin/products"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(r.headers()["location"], "/admin/products");
    let page = html(client.get(app.url("/admin")).send().await.unwrap()).await;
    assert_eq!(page.text("h1"), "Dashboard");
    assert_eq!(page.text(".who .email"), email);
});

both!(next_parameter_never_redirects_off_site, |app| {
    app.merchant("acme").await;
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let r = app
        .client()
        .post(app.url("/login"))
        .form(&[
            ("email", email.as_str()),
            ("password", password.as_str()),
            ("next", "//evil.example/x"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["location"], "/admin");
});

both!(wrong_password_rerenders_login_with_a_message, |app| {
    app.merchant("acme").await;
    let (email, _) = app.user("merchant_admin", Some("acme")).await;
    let r = app
        .client()
        .post(app.url("/login"))
        .form(&[("email", email.as_str()), ("password", "nope-nope-nope")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let page = html(r).await;
    assert_eq!(page.text(".form-error"), "Email or password is wrong.");
    assert_eq!(
        page.attr("input[name=email]", "value").as_deref(),
        Some(email.as_str())
    );
});

both!(
    repeated_failures_throttle_the_account_even_for_the_right_password,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        let client = app.client();
        for _ in 0..5 {
            let r = client
                .post(app.url("/login"))
                .form(&[("email", email.as_str()), ("password", "wrong-wrong")])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401);
        }
        let r = client
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429);
        let page = html(r).await;
        assert!(page
            .text(".form-error")
            .contains("Too many failed sign-ins"));
    }
);

both!(
    failures_from_one_address_throttle_every_account_it_tries,
    |app| {
        let client = app.client();
        for i in 0..20 {
            let email = format!("guess{i}@example.com");
            client
                .post(app.url("/login"))
                .form(&[("email", email.as_str()), ("password", "x")])
                .send()
                .await
                .unwrap();
        }
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        let r = client
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429);
    }
);

both!(
    session_cookie_is_httponly_lax_and_renewed_at_sign_in,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        let client = app.client();
        // Anonymous visit that stores something in the session (a flash after logout).
        let r = client.post(app.url("/logout")).send().await.unwrap();
        let before = r.headers()["set-cookie"].to_str().unwrap().to_string();
        assert!(
            before.contains("HttpOnly") && before.contains("SameSite=Lax"),
            "{before}"
        );
        let r = client
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        let after = r.headers()["set-cookie"].to_str().unwrap().to_string();
        let id = |c: &str| c.split(';').next().unwrap().to_string();
        assert_ne!(id(&before), id(&after), "a new session id at sign-in");
    }
);

both!(sign_out_ends_the_session, |app| {
    app.merchant("acme").await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    assert_eq!(
        client.get(app.url("/admin")).send().await.unwrap().status(),
        200
    );
    let r = client.post(app.url("/logout")).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(
        client.get(app.url("/admin")).send().await.unwrap().status(),
        303
    );
    let page = html(client.get(app.url("/login")).send().await.unwrap()).await;
    assert_eq!(page.text(".flash"), "You are signed out.");
});

both!(
    cross_site_form_posts_are_refused_and_change_nothing,
    |app| {
        app.merchant("acme").await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let before = app.count("products").await;
        let form = [
            ("name", "Evil"),
            ("kind", "goods"),
            ("status", "ONLINE"),
            ("sku_code", "EVIL-1"),
            ("sku_name", "x"),
            ("sku_price", "1"),
        ];
        let r = client
            .post(app.url("/admin/products"))
            .header("Sec-Fetch-Site", "cross-site")
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        let r = client
            .post(app.url("/admin/products"))
            .header("Origin", "http://evil.example")
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        assert_eq!(app.count("products").await, before);
        // Same-origin posts (what a browser sends from our own pages) pass.
        let r = client
            .post(app.url("/admin/products"))
            .header("Origin", app.base.clone())
            .header("Sec-Fetch-Site", "same-origin")
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
    }
);
