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
    let page = app.page(&client, "/admin").await;
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
        // Three failures are free and the fourth takes the account's turn...
        for _ in 0..4 {
            let r = client
                .post(app.url("/login"))
                .form(&[("email", email.as_str()), ("password", "wrong-wrong")])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 401);
        }
        // ...so the right password, right after, waits for the next turn, and is told how long.
        let r = client
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429);
        let wait: u64 = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=10).contains(&wait), "{wait}");
        let page = html(r).await;
        assert_eq!(
            page.text(".form-error"),
            sellable::messages::login_too_fast(wait)
        );
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
    let page = app.page(&client, "/login").await;
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

both!(
    simultaneous_wrong_sign_ins_are_counted_before_the_hash_so_only_five_are_tried,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        let client = app.client();
        // 40 at once, the right password last among them: before the fix every one was checked
        // against the count read before any had failed, and the right one signed in.
        let mut tries = Vec::new();
        for i in 0..40 {
            let (client, url, email) = (client.clone(), app.url("/login"), email.clone());
            let pw = if i == 39 {
                password.clone()
            } else {
                format!("wrong-{i}")
            };
            tries.push(tokio::spawn(async move {
                client
                    .post(url)
                    .form(&[("email", email.as_str()), ("password", pw.as_str())])
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            }));
        }
        let mut statuses = Vec::new();
        for t in tries {
            statuses.push(t.await.unwrap());
        }
        let tried = statuses.iter().filter(|s| **s != 429).count();
        assert!(
            tried <= 5,
            "at most five attempts may reach the password check, {tried} did: {statuses:?}"
        );
        assert!(statuses.iter().all(|s| [401, 429, 303, 503].contains(s)));
    }
);

both!(
    failures_from_elsewhere_slow_an_account_but_never_lock_its_owner_out,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        // The owner signed in from their browser before (it keeps the device cookie).
        let owner = app.client_from(3);
        let r = owner
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let attacker = app.client_from(2);
        let mut last = 0;
        for _ in 0..7 {
            last = attacker
                .post(app.url("/login"))
                .form(&[("email", email.as_str()), ("password", "guess-guess")])
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
        }
        assert_eq!(
            last, 429,
            "the attacker's address is throttled for this account"
        );
        let r = owner
            .post(app.url("/login"))
            .form(&[
                ("email", email.as_str()),
                ("password", password.as_str()),
                ("next", "/admin"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303, "the owner, elsewhere, still signs in");
    }
);

both!(
    a_sign_in_flood_runs_a_bounded_number_of_hashes_and_answers_the_rest_busy_with_retry_after,
    |app| {
        // 120 unknown emails from 120 addresses at once: no throttle applies, so only the bound on
        // concurrent hashes stands between the flood and the server's memory.
        let mut tries = Vec::new();
        for i in 0..120u8 {
            let client = app.client_from(10 + i);
            let url = app.url("/login");
            tries.push(tokio::spawn(async move {
                let r = client
                    .post(url)
                    .form(&[
                        ("email", format!("nobody{i}@example.com")),
                        ("password", "whatever-it-is".to_string()),
                    ])
                    .send()
                    .await
                    .unwrap();
                (
                    r.status().as_u16(),
                    r.headers().get("retry-after").is_some(),
                )
            }));
        }
        for t in tries {
            let (status, retry_after) = t.await.unwrap();
            assert!(
                status == 401 || status == 503 && retry_after,
                "a flooded sign-in answers 401, or 503 with Retry-After: got {status}"
            );
        }
        let bound = app.db.hashers.limit();
        assert!(
            app.db.hashers.peak() <= bound,
            "at most {bound} hashes at once, saw {}",
            app.db.hashers.peak()
        );
    }
);

both!(
    next_with_control_characters_or_a_tab_trick_lands_on_the_dashboard,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        for next in [
            "/\t/evil.example",
            "/\\evil.example",
            "/admin\r\nSet-Cookie: x=1",
            "/ad\u{7f}min",
            "https://evil.example/",
        ] {
            let r = app
                .client()
                .post(app.url("/login"))
                .form(&[
                    ("email", email.as_str()),
                    ("password", password.as_str()),
                    ("next", next),
                ])
                .send()
                .await
                .unwrap();
            assert!(
                r.status() == 303 || r.status() == 400,
                "{next:?}: {}",
                r.status()
            );
            if r.status() == 303 {
                assert_eq!(r.headers()["location"], "/admin", "{next:?}");
            }
        }
    }
);

both!(
    sign_ins_abandoned_while_waiting_or_hashing_give_back_their_turn_and_sign_in_keeps_working,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        // Three waves of 100 sign-ins whose clients give up after 30 ms, some while queued for a
        // turn, some while their hash runs: before the fix each abandoned wait kept its queue place
        // forever, and after 64 of them every sign-in answered 503 until a restart.
        for wave in 0..3u8 {
            let mut tries = Vec::new();
            for i in 0..100u8 {
                let client = reqwest::Client::builder()
                    .local_address(std::net::IpAddr::V4(std::net::Ipv4Addr::new(
                        127,
                        0,
                        1 + wave,
                        10 + i,
                    )))
                    .timeout(std::time::Duration::from_millis(30))
                    .build()
                    .unwrap();
                let url = app.url("/login");
                tries.push(tokio::spawn(async move {
                    let _ = client
                        .post(url)
                        .form(&[
                            ("email", format!("gone{i}@example.com")),
                            ("password", "x".repeat(12)),
                        ])
                        .send()
                        .await;
                }));
            }
            for t in tries {
                t.await.unwrap();
            }
        }
        let bound = app.db.hashers.limit();
        assert!(app.db.hashers.peak() <= bound, "a hash ran without a turn");
        // The abandoned hashes finish, and the owner signs in.
        let mut status = 0;
        for _ in 0..50 {
            status = app
                .client()
                .post(app.url("/login"))
                .form(&[("email", email.as_str()), ("password", password.as_str())])
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            if status == 303 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(
            status, 303,
            "sign-in works again once the abandoned hashes are done"
        );
    }
);

both!(
    a_refused_retry_does_not_count_as_a_failure_so_the_wait_it_names_comes_true,
    |app| {
        app.merchant("acme").await;
        let (email, _) = app.user("merchant_admin", Some("acme")).await;
        let c = app.client();
        let mut statuses = Vec::new();
        for _ in 0..9 {
            statuses.push(
                c.post(app.url("/login"))
                    .form(&[("email", email.as_str()), ("password", "wrong-wrong")])
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16(),
            );
        }
        // Three free failures, one on the account's turn, then "wait for the next turn".
        assert_eq!(statuses, [401, 401, 401, 401, 429, 429, 429, 429, 429]);
        let pair: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM login_failures WHERE throttle_key LIKE 'pair:%'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(pair, 4, "only the four real failures are on record");
    }
);

both!(
    a_password_flood_on_one_account_from_many_addresses_takes_turns_and_its_owners_known_browser_still_signs_in,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        // The owner signed in before from this browser: it carries the device cookie.
        let owner = app.client_from(3);
        let r = owner
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        // 120 wrong passwords at once from 60 addresses.
        let started = std::time::Instant::now();
        let mut tries = Vec::new();
        for i in 0..120u32 {
            let client = app.client_from(20 + (i % 60) as u8);
            let (url, email) = (app.url("/login"), email.clone());
            tries.push(tokio::spawn(async move {
                client
                    .post(url)
                    .form(&[("email", email.as_str()), ("password", "guess-guess")])
                    .send()
                    .await
                    .unwrap()
                    .status()
                    .as_u16()
            }));
        }
        let mut statuses = std::collections::BTreeMap::new();
        for t in tries {
            *statuses.entry(t.await.unwrap()).or_insert(0u32) += 1;
        }
        let elapsed = started.elapsed().as_millis() as u64;
        // Three failures are free; then one password is checked per turn, 10 s apart: in
        // `elapsed` no more turns than that can have come.
        let turns = 1 + elapsed / 10_000;
        let evaluated = u64::from(*statuses.get(&401).unwrap_or(&0));
        assert!(
            evaluated <= 3 + turns,
            "{evaluated} passwords checked in {elapsed} ms: {statuses:?}"
        );
        assert!(statuses.get(&429).copied().unwrap_or(0) > 100, "{statuses:?}");
        assert!(statuses.keys().all(|s| [401, 429, 503].contains(s)), "{statuses:?}");
        // While the account's next turn is ahead (an attack goes on), a stranger's try, even
        // with the right password, is told to wait, and for how long.
        for _ in 0..10 {
            sqlx::query("INSERT INTO login_failures (throttle_key, at) VALUES ($1, $2)")
                .bind(format!("account:{email}"))
                .bind(app.now_ms())
                .execute(&app.db.pool)
                .await
                .unwrap();
        }
        sqlx::query("UPDATE login_turns SET next_at = $1")
            .bind(app.now_ms() + 60_000)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let r = app
            .client_from(200)
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429, "{statuses:?} in {elapsed} ms");
        let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "{wait}");
        // A made-up device cookie is worth nothing.
        let r = reqwest::Client::builder()
            .local_address(std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 201)))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .post(app.url("/login"))
            .header("cookie", "sellable_device=1.1.00ff00ff00ff00ff00ff00ff00ff00ff")
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 429);
        // The owner's known browser is not kept out.
        let r = owner
            .post(app.url("/login"))
            .form(&[
                ("email", email.as_str()),
                ("password", password.as_str()),
                ("next", "/admin"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303, "the owner's browser signs in at once");
    }
);

both!(
    a_password_on_the_common_list_is_refused_when_set_in_any_case,
    |app| {
        app.acme_api().await;
        let (email, password) = app.user("store_staff", Some("acme")).await;
        let here = app.sign_in(&email, &password).await;
        for common in ["1234567890", "1qaz2wsx3edc", "QWERTYUIOP"] {
            let r = here
                .post(app.url("/account/password"))
                .form(&[
                    ("current", password.as_str()),
                    ("new", common),
                    ("confirm", common),
                ])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{common}");
            let page = html(r).await;
            assert_eq!(page.count(".field-error[data-field=new]"), 1, "{common}");
        }
        // Creating a user refuses one too, with a stable code.
        let made = sellable::domain::tenancy::users::create(
            &app.db,
            &sellable::domain::Actor::system("test"),
            sellable::domain::tenancy::users::NewUser {
                email: "common@example.com",
                password: "12345678900",
                role: "store_staff",
                merchant_slug: Some("acme"),
                store_slug: Some("main-store"),
            },
        )
        .await;
        match made {
            Err(sellable::domain::DomainError::Invalid(e)) => {
                assert_eq!(e[0].code, "password_too_common")
            }
            other => panic!("{other:?}"),
        }
    }
);
