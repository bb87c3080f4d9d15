//! Who a request comes from (issue 52, finding 6 and 12): behind the reverse proxies a deployment
//! names, the forwarded client counts for the caps, the throttles and the record; anyone else's
//! forwarding header counts for nothing. And `/metrics` is the operator's, not everyone's.

use crate::helpers::{html, Backend, TestApp, METRICS_TOKEN};
use crate::on_both;
use crate::public_booking::{one_off, post_booking};

async fn behind_a_proxy(backend: Backend) {
    let Some(app) = TestApp::spawn_with(backend, |c| {
        c.serve.trusted_proxies =
            sellable::infra::proxies::TrustedProxies::parse("127.0.0.1").unwrap();
        c.serve.max_bookings_per_address = 2;
    })
    .await
    else {
        return;
    };
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let store = app.public_slug().await;
    let slot = one_off(&api, 30, 50).await;
    let book = |c: reqwest::Client, phone: String| {
        let (app, store) = (&app, store.clone());
        async move {
            post_booking(app, &c, &store, slot, "Guest", &phone)
                .await
                .status()
                .as_u16()
        }
    };
    // Two customers behind the same proxy are two addresses: each has its own cap of 2.
    let a = app.client_forwarded_for("203.0.113.1");
    let b = app.client_forwarded_for("198.51.100.1, 203.0.113.2");
    for i in 0..2 {
        assert_eq!(book(a.clone(), format!("+86 139 0000 01{i:02}")).await, 303);
        assert_eq!(book(b.clone(), format!("+86 139 0000 02{i:02}")).await, 303);
    }
    let r = post_booking(&app, &a, &store, slot, "Guest", "+86 139 0000 0199").await;
    assert_eq!(r.status(), 409);
    assert_eq!(html(r).await.count("[data-code=too_many_bookings]"), 1);
    // The record says who booked: the forwarded client (the right-most address the proxy saw,
    // not what the client wrote before it), never the proxy.
    let mut ips: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT client_ip FROM bookings ORDER BY client_ip")
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
    ips.sort();
    assert_eq!(ips, ["203.0.113.1", "203.0.113.2"]);
    // IPv6 clients count by their /64: two addresses of one network share a cap.
    let v6a = app.client_forwarded_for("2001:db8:1:2::a");
    let v6b = app.client_forwarded_for("2001:db8:1:2:ffff::b");
    assert_eq!(book(v6a.clone(), "+86 139 0000 0301".into()).await, 303);
    assert_eq!(book(v6b.clone(), "+86 139 0000 0302".into()).await, 303);
    assert_eq!(book(v6a, "+86 139 0000 0303".into()).await, 409);
    // A peer that is not a trusted proxy cannot choose its address by the header: a client on
    // 127.0.0.2 rotating X-Forwarded-For is still one address.
    for i in 0..3 {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            format!("192.0.2.{}", 10 + i).parse().unwrap(),
        );
        let c = reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .local_address(std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2)))
            .default_headers(h)
            .build()
            .unwrap();
        let status = book(c, format!("+86 139 0000 04{i:02}")).await;
        assert_eq!(status, if i < 2 { 303 } else { 409 }, "attempt {i}");
    }
    let spoofed: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM bookings WHERE client_ip LIKE '192.0.2.%'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(spoofed, 0);
}
on_both!(behind_a_proxy);

/// The public pages' rate limit counts the forwarded client too: one busy customer behind the
/// proxy does not use up the others' budget.
async fn the_rate_limit_counts_each_forwarded_client_not_the_proxy(backend: Backend) {
    let Some(app) = TestApp::spawn_with(backend, |c| {
        c.serve.trusted_proxies =
            sellable::infra::proxies::TrustedProxies::parse("127.0.0.0/8").unwrap();
        c.serve.public_rate_per_minute = 6;
    })
    .await
    else {
        return;
    };
    app.merchant("acme").await;
    let store = app.public_slug().await;
    let get = |c: &reqwest::Client| {
        let url = app.url(&format!("/book/{store}"));
        let c = c.clone();
        async move { c.get(url).send().await.unwrap().status().as_u16() }
    };
    let busy = app.client_forwarded_for("203.0.113.50");
    let mut statuses = Vec::new();
    for _ in 0..10 {
        statuses.push(get(&busy).await);
    }
    assert!(statuses.contains(&429), "{statuses:?}");
    let other = app.client_forwarded_for("203.0.113.51");
    assert_eq!(get(&other).await, 200);
}
on_both!(the_rate_limit_counts_each_forwarded_client_not_the_proxy);

async fn metrics_answer_only_with_the_token_or_on_their_own_listener(backend: Backend) {
    // The test apps set a token: without it or with another, 401; with it, the numbers.
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let c = reqwest::Client::new();
    let url = app.url("/metrics");
    assert_eq!(c.get(&url).send().await.unwrap().status(), 401);
    let wrong = c.get(&url).bearer_auth("guess").send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(wrong.headers().contains_key("www-authenticate"));
    let right = c.get(&url).bearer_auth(METRICS_TOKEN).send().await.unwrap();
    assert_eq!(right.status(), 200);
    assert!(right.text().await.unwrap().contains("http_requests_total"));
    drop(app);
    // Neither a token nor a listener: /metrics does not exist on the public listener.
    let Some(app) = TestApp::spawn_with(backend, |c| c.serve.metrics_token = None).await else {
        return;
    };
    assert_eq!(
        c.get(app.url("/metrics")).send().await.unwrap().status(),
        404
    );
    drop(app);
    // A listener of its own: served there, and not on the public listener even with the token.
    let Some(app) = TestApp::spawn_with(backend, |c| {
        c.serve.metrics_bind = Some("127.0.0.1:0".into());
    })
    .await
    else {
        return;
    };
    let own = app.metrics_base.clone().expect("a metrics listener");
    let on_public = c
        .get(app.url("/metrics"))
        .bearer_auth(METRICS_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(on_public.status(), 404);
    let r = c.get(format!("{own}/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 401, "the token applies there too when set");
    let r = c
        .get(format!("{own}/metrics"))
        .bearer_auth(METRICS_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Only /metrics there: the back office is not on the metrics listener.
    assert_eq!(
        c.get(format!("{own}/login")).send().await.unwrap().status(),
        404
    );
}
on_both!(metrics_answer_only_with_the_token_or_on_their_own_listener);
