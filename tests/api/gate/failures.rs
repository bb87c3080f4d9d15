//! Processes that fail: Redis stopped mid-sale, two instances on one Redis, a server killed mid-sale
//! or mid-order.

#[allow(unused_imports)]
use super::*;

pg!(
    @one_redis with_redis_stopped_mid_sale_requests_go_on_in_sql_and_the_gate_comes_back,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "BOX").await;
        api.receive("BOX", "main", 10).await;
        let mut redis = PrivateRedis::start(free_port());
        let (base, db, stop) = instance(&app, &redis.url(), "private").await;
        let api = Api {
            base: base.clone(),
            ..api
        };
        let sku = sku_id(&app, "BOX").await;
        let (first, held) = flash_sale_orders(std::slice::from_ref(&api), "BOX", 20, "w1").await;
        assert_eq!(first.get(&201), Some(&10), "{first:?}");
        // Redis stops; buyers keep coming and releases keep happening.
        redis.stop();
        for order in &held[..4] {
            let (s, b) = api
                .post(&format!("/api/v1/reservations/{order}/release"), json!({}))
                .await;
            assert_eq!(s, 200, "{b}");
        }
        let second = flash_sale(std::slice::from_ref(&api), "BOX", 30, "w2").await;
        assert_eq!(
            second.get(&201),
            Some(&4),
            "still exactly 10 held: {second:?}"
        );
        assert_eq!(balance(&app, sku).await, (10, 10, 0, 0));
        let ready: Value = reqwest::get(format!("{base}/readyz"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            (ready["status"].as_str(), ready["gate"].as_str()),
            (Some("degraded"), Some("degraded")),
            "{ready}"
        );
        let metrics = crate::helpers::metrics_text(&base).await;
        assert!(
            metrics.contains("sellable_gate_degraded_switches_total"),
            "counted in /metrics"
        );
        // The sellable verdict says so too, as information: it blocks nothing.
        api.receive("BOX", "main", 5).await;
        let (s, verdict) = api.get("/api/v1/skus/BOX/sellable").await;
        assert_eq!(s, 200, "{verdict}");
        assert_eq!(
            (verdict["sellable"].as_bool(), verdict["quantity"].as_i64()),
            (Some(true), Some(5)),
            "{verdict}"
        );
        let codes: Vec<&str> = verdict["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["code"].as_str())
            .collect();
        assert_eq!(codes, ["gate_degraded"], "{verdict}");
        // The back office says so in its header.
        let (email, password) = app.user("operator", None).await;
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .build()
            .unwrap();
        client
            .post(format!("{base}/login"))
            .header("Origin", &base)
            .form(&[("email", email.as_str()), ("password", password.as_str())])
            .send()
            .await
            .unwrap();
        let page = client
            .get(format!("{base}/admin"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            page.contains(r#"id="gate-degraded""#),
            "degraded banner in the header"
        );
        // Redis comes back (empty, like a restarted Redis without persistence): the gate resumes.
        let _redis = PrivateRedis::start(redis.port);
        let mut on = false;
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let r: Value = reqwest::get(format!("{base}/readyz"))
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if r["gate"] == "on" {
                on = true;
                break;
            }
        }
        assert!(on, "the gate came back on");
        api.receive("BOX", "main", 3).await;
        let third = flash_sale(std::slice::from_ref(&api), "BOX", 12, "w3").await;
        assert_eq!(
            third.get(&201),
            Some(&8),
            "the 5 received while degraded and the 3 after: {third:?}"
        );
        let g = db.gate.clone().unwrap();
        assert_eq!(
            redis_available(&g, sku).await,
            Some(0),
            "the gate is in use again"
        );
        let report = reconcile::run(&db, "job", &system()).await.unwrap();
        assert!(report.broken.is_empty(), "{report:?}");
        let _ = stop.send(());
    }
);

pg!(
    two_instances_on_one_database_and_redis_sell_exactly_n,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "DUO").await;
        api.receive("DUO", "main", 10).await;
        let prefix = gate(&app).prefix().to_string();
        let (base, _db, stop) = instance(&app, app.redis_url.as_deref().unwrap(), &prefix).await;
        let other = Api {
            base,
            ..api.clone()
        };
        let by = flash_sale(&[api.clone(), other], "DUO", 80, "two").await;
        assert_eq!(
            (by.get(&201), by.get(&409)),
            (Some(&10), Some(&70)),
            "{by:?}"
        );
        let sku = sku_id(&app, "DUO").await;
        assert_eq!(balance(&app, sku).await, (10, 10, 0, 0));
        assert_eq!(redis_available(&gate(&app), sku).await, Some(0));
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
        let _ = stop.send(());
    }
);

pg!(
    a_server_killed_mid_sale_loses_nothing_and_its_holds_expire,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "KILL").await;
        api.receive("KILL", "main", 50).await;
        let mut server = Process::start(&app).await;
        let base = server.base.clone();
        let remote = Api {
            base: base.clone(),
            ..api.clone()
        };
        // Short holds: the ones the dead process left must expire by themselves.
        let buyers: Vec<_> = (0..200)
            .map(|i| {
                let remote = remote.clone();
                tokio::spawn(async move {
                    remote
                        .post(
                            "/api/v1/reservations",
                            json!({"order_id": format!("k-{i}"), "ttl_seconds": 2, "items": [{"sku": "KILL", "qty": 1}]}),
                        )
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(40)).await;
        server.kill();
        for b in buyers {
            // Requests cut by the kill fail on the client side: nothing to assert on them.
            let _ = b.await;
        }
        server.restart().await;
        let after = flash_sale(std::slice::from_ref(&remote), "KILL", 20, "k2").await;
        assert!(after.values().sum::<usize>() == 20);
        // Every hold expires (ttl 2 s for the first wave, default for the second: release those).
        for i in 0..20 {
            remote
                .post(&format!("/api/v1/reservations/k2-{i}/release"), json!({}))
                .await;
        }
        let sku = sku_id(&app, "KILL").await;
        let mut settled = false;
        for _ in 0..60 {
            if balance(&app, sku).await.1 == 0 {
                settled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(
            settled,
            "held units went back: {:?}",
            balance(&app, sku).await
        );
        assert_eq!(
            balance(&app, sku).await,
            (50, 0, 0, 0),
            "no unit lost or double-counted"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(report.broken.is_empty(), "{report:?}");
        let again = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(again.repaired.is_empty(), "{again:?}");
        assert_eq!(redis_available(&gate(&app), sku).await.unwrap_or(50), 50);
        app.assert_ledger_replays().await;
    }
);

both!(
    a_server_killed_mid_combined_orders_leaves_no_order_half_made,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "KITE").await;
        api.receive("KITE", "main", 40).await;
        api.product("service", "KCLASS").await;
        let starts = app.now() + chrono::Duration::days(1);
        let slot = api
            .one_off("KCLASS", starts, starts + chrono::Duration::hours(1), 30)
            .await;
        let mut server = Process::start(&app).await;
        let remote = Api {
            base: server.base.clone(),
            ..api.clone()
        };
        // Each order holds a unit and books a place; the process dies while they are in flight.
        let buyers: Vec<_> = (0..120)
            .map(|i| {
                let remote = remote.clone();
                tokio::spawn(async move {
                    remote
                        .post(
                            "/api/v1/reservations",
                            json!({"order_id": format!("kc-{i}"), "ttl_seconds": 2, "items": [
                                {"sku": "KITE", "qty": 1},
                                {"sku": "KCLASS", "slot_id": slot, "places": 1,
                                 "customer": {"name": "Kim", "phone": format!("138{:08}", i)}}]}),
                        )
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(60)).await;
        server.kill();
        let mut cut = 0;
        for b in buyers {
            // A request cut by the kill fails on the client side (the helper panics on it).
            cut += usize::from(b.await.is_err());
        }
        assert!(cut > 0, "the kill landed while orders were in flight");
        server.restart().await;
        // Right after the restart: every order the dead process left is whole.
        let sku = sku_id(&app, "KITE").await;
        let held: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM reservations WHERE status = 'RESERVED'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        let booked = app.slot_booked(slot).await;
        let orphans: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM bookings WHERE slot_id = $1 AND reservation_id IS NULL",
        )
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(orphans, 0, "every place was booked by an order");
        assert_eq!(balance(&app, sku).await.1, held, "one unit per held order");
        assert!(
            booked >= held,
            "every held order has its place: {booked} < {held}"
        );
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(report.broken.is_empty(), "{report:?}");
        // The dead process's holds expire by themselves: goods back, bookings cancelled.
        let mut settled = false;
        for _ in 0..60 {
            let booked = app.slot_booked(slot).await;
            if balance(&app, sku).await.1 == 0 && booked == 0 {
                settled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(settled, "holds expired: {:?}", balance(&app, sku).await);
        assert_eq!(balance(&app, sku).await, (40, 0, 0, 0));
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
        app.assert_ledger_replays().await;
    }
);
