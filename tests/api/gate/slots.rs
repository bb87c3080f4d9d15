//! The gate in front of slots: double submits, a customer's twin, moves, releases and waiting
//! customers while a slot loads, and Redis following bookings and sales.

#[allow(unused_imports)]
use super::*;

pg!(
    double_submits_racing_for_a_slot_leave_redis_equal_to_sql,
    |app| {
        // Each customer submits twice at once. Redis gives the first a place and answers the twin
        // "seen"; the twin waits for the first's outcome in SQL (up to 3 s), then hears it. Should
        // the twin still win there (the first slower than that), the first is refused and gives
        // its place back, and Redis must still count the twin's place, or it would go on offering
        // it and every later buyer would be sent to SQL to be refused.
        let api = app.acme_api().await;
        let slot_id = service_slot(&api, "TWIN", 8).await;
        let tasks: Vec<_> = (0..60)
            .map(|i| {
                let api = api.clone();
                let customer = i / 2;
                tokio::spawn(async move {
                    api.post(
                        "/api/v1/bookings",
                        json!({"slot_id": slot_id, "name": format!("C{customer}"), "phone": format!("+49 170 {customer:07}"), "idempotency_key": format!("twin-{i}")}),
                    )
                    .await
                })
            })
            .collect();
        let mut booked = 0;
        for t in tasks {
            let (s, b) = t.await.unwrap();
            match s {
                201 => booked += 1,
                409 => assert!(
                    matches!(b["error"].as_str(), Some("slot_full" | "already_booked")),
                    "{b}"
                ),
                _ => panic!("{s} {b}"),
            }
        }
        assert_eq!(booked, 8, "every place sold once");
        let (merchant, sql_booked): (i64, i64) =
            sqlx::query_as("SELECT merchant_id, booked FROM slots WHERE id = $1")
                .bind(slot_id)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(sql_booked, 8);
        assert_eq!(
            gate(&app).slot_read(merchant, slot_id).await.unwrap(),
            Some((0, "OPEN".into())),
            "Redis offers no place SQL has already booked"
        );
        // The buyers after the sale are refused, and Redis still agrees with SQL.
        for i in 100..110 {
            let (s, b) = api
                .post(
                    "/api/v1/bookings",
                    json!({"slot_id": slot_id, "name": "Late", "phone": format!("+49 170 {i:07}")}),
                )
                .await;
            assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        }
        assert_eq!(
            gate(&app).slot_read(merchant, slot_id).await.unwrap(),
            Some((0, "OPEN".into()))
        );
    }
);

pg!(
    a_customers_second_order_on_a_slot_waits_for_the_first_that_redis_gave_places_rather_than_booking_past_it,
    |app| {
        // One customer sends two orders for one slot: X (a kite and a party of two) and then Y (a
        // party of one). Redis gives X its two places and answers Y "seen". X is held up in SQL on
        // the kite's row while the slot's row is free: were Y booked now, X would be refused
        // there, and until it gave its places back Redis would count three places for a party of
        // one. Y waits for X instead and hears, as it would after X, that the customer is booked.
        let api = app.acme_api().await;
        api.product("goods", "TKITE").await;
        api.receive("TKITE", "main", 5).await;
        let slot = api.party_slot("TCLASS", 2, 7).await;
        let kite = sku_id(&app, "TKITE").await;
        let customer = json!({"name": "Kim", "phone": "+86 138 0013 8000"});
        let mut kite_row = app.db.begin_write().await.unwrap();
        sqlx::query("UPDATE stock_balances SET version = version WHERE sku_id = $1")
            .bind(kite)
            .execute(&mut *kite_row)
            .await
            .unwrap();
        let x = {
            let api = api.clone();
            let customer = customer.clone();
            tokio::spawn(async move {
                api.reserve("twin-x", json!([{"sku": "TKITE", "qty": 1},
                    {"sku": "TCLASS", "slot_id": slot, "places": 2, "customer": customer}]))
                    .await
            })
        };
        // X takes its places in Redis, then waits on the kite's row.
        let merchant = slot_merchant(&app, slot).await;
        let mut taken = false;
        for _ in 0..100 {
            if gate(&app).slot_read(merchant, slot).await.unwrap() == Some((5, "OPEN".into())) {
                taken = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(taken, "Redis gave X its two places");
        let y = {
            let api = api.clone();
            tokio::spawn(async move {
                api.reserve("twin-y", json!([
                    {"sku": "TCLASS", "slot_id": slot, "places": 1, "customer": customer}]))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!y.is_finished(), "Y waits for X");
        assert_eq!(app.slot_booked(slot).await, 0, "Y is not booked while X holds the places");
        kite_row.rollback().await.unwrap();
        let (s, b) = x.await.unwrap();
        assert_eq!(s, 201, "{b}");
        let (s, b) = y.await.unwrap();
        assert_eq!((s, b["error"].as_str()), (409, Some("already_booked")), "{b}");
        assert_eq!(app.slot_booked(slot).await, 2);
        assert_eq!(
            gate(&app).slot_read(merchant, slot).await.unwrap(),
            Some((5, "OPEN".into())),
            "Redis counts X's places once and nothing for Y"
        );
        app.assert_reconciled().await;
    }
);

pg!(
    a_full_slot_and_a_sold_out_voucher_are_refused_from_memory_while_their_repeats_are_answered_as_before,
    |app| {
        let (api, g, voucher) = vouchers_in_redis(&app, "VMEM", 2).await;
        g.set_sold_out_memory(Duration::from_secs(60));
        // A slot of one place: taken, then found full.
        let slot = service_slot(&api, "SMEM", 1).await;
        let merchant = slot_merchant(&app, slot).await;
        let full = Subject::Slot { merchant, slot };
        let (s, first) = api.book(slot, "Ann", "+86 139 0000 0001", Some("ann-1")).await;
        assert_eq!(s, 201, "{first}");
        let (s, b) = api.book(slot, "Bo", "+86 139 0000 0002", None).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        assert!(g.remembers_sold_out(full));
        // Redis offers places behind this instance's back: the memory answers.
        g.slot_overwrite(merchant, slot, 3).await.unwrap();
        let (s, b) = api.book(slot, "Cy", "+86 139 0000 0003", None).await;
        assert_eq!((s, b["error"].as_str(), b["remaining"].as_i64()), (409, Some("slot_full"), Some(0)), "{b}");
        assert!(g.remembers_sold_out(full), "answered from memory, not by the script");
        assert!(!g.is_degraded(), "through the gate, not SQL alone");
        g.slot_overwrite(merchant, slot, 0).await.unwrap();
        // Ann's repeat is her booking; Ann again with another key is already booked.
        let (s, b) = api.book(slot, "Ann", "+86 139 0000 0001", Some("ann-1")).await;
        assert_eq!((s, &b["reference"]), (201, &first["reference"]), "{b}");
        let (s, b) = api.book(slot, "Ann", "+86 139 0000 0001", Some("ann-2")).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("already_booked")), "{b}");
        // Her cancel, made here, ends the memory: the place goes to the next customer.
        let reference = first["reference"].as_str().unwrap();
        let (s, b) = api.post(&format!("/api/v1/bookings/{reference}/cancel"), json!({})).await;
        assert_eq!(s, 200, "{b}");
        assert!(!g.remembers_sold_out(full));
        let (s, b) = api.book(slot, "Di", "+86 139 0000 0004", None).await;
        assert_eq!(s, 201, "{b}");

        // Two codes, both sold: the next order is refused and the SKU remembered.
        let codes = Subject::Codes(voucher);
        for order in ["vm-1", "vm-2"] {
            assert_eq!(reserve(&api, order, "VMEM", 1).await.0, 201);
        }
        let (s, b) = api.post("/api/v1/reservations/vm-1/confirm", json!({})).await;
        assert_eq!(s, 200, "{b}");
        let (s, b) = reserve(&api, "vm-3", "VMEM", 1).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("insufficient_stock")), "{b}");
        assert!(g.remembers_sold_out(codes));
        // The paid order's repeat still shows its code.
        let (s, b) = reserve(&api, "vm-1", "VMEM", 1).await;
        assert_eq!((s, b["status"].as_str()), (201, Some("CONFIRMED")), "{b}");
        // The held one's release, made here, ends the memory and its code sells again.
        let (s, b) = api.post("/api/v1/reservations/vm-2/release", json!({})).await;
        assert_eq!(s, 200, "{b}");
        assert!(!g.remembers_sold_out(codes));
        let (s, b) = reserve(&api, "vm-4", "VMEM", 1).await;
        assert_eq!(s, 201, "{b}");
        app.assert_reconciled().await;
    }
);

pg!(
    a_move_into_a_slot_a_booking_is_loading_is_counted_in_redis_once,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "LOADS").await;
        let start = app.now() + chrono::Duration::days(2);
        let target = api
            .one_off("LOADS", start, start + chrono::Duration::hours(1), 3)
            .await;
        let later = start + chrono::Duration::hours(2);
        let source = api
            .one_off("LOADS", later, later + chrono::Duration::hours(1), 1)
            .await;
        let (s, b) = api.book(source, "Mo", "+86 137 0000 0001", None).await;
        assert_eq!(s, 201, "{b}");
        let reference = b["reference"].as_str().unwrap().to_string();
        let merchant = slot_merchant(&app, target).await;
        let g = gate(&app);
        assert_eq!(
            g.slot_read(merchant, target).await.unwrap(),
            None,
            "not loaded yet"
        );
        // A walk-in's booking finds the target not loaded and reads it from SQL: three places.
        // Staff move a booking into it meanwhile, and Redis follows the move...
        let (s, b) = api
            .post(
                &format!("/api/v1/bookings/{reference}/move"),
                json!({"slot_id": target}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        // ...then the walk-in's load writes what it read: nothing, the slot is loaded.
        late_load(&app, &g, target, 3).await;
        assert_eq!(
            g.slot_read(merchant, target).await.unwrap(),
            Some((2, "OPEN".into())),
            "the moved place is counted"
        );
        // A cancel follows the same way.
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(
            g.slot_read(merchant, target).await.unwrap(),
            Some((3, "OPEN".into()))
        );
        app.assert_reconciled().await;
    }
);

pg!(
    an_order_released_or_expired_while_a_booking_loads_its_slot_gives_its_place_back_in_redis,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "ORDERED").await;
        let start = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("ORDERED", start, start + chrono::Duration::hours(1), 3)
            .await;
        let merchant = slot_merchant(&app, slot).await;
        let g = gate(&app);
        let order = |id: &str, phone: &str, ttl: i64| {
            json!({"order_id": id, "ttl_seconds": ttl, "items": [
                {"sku": "ORDERED", "slot_id": slot, "places": 1,
                 "customer": {"name": "顾客", "phone": phone}}]})
        };
        // A walk-in's booking that found the slot not loaded read it from SQL while the order
        // still held its place (two left), and writes that after the order let go of it.
        let unloaded = |why: &'static str| {
            let g = g.clone();
            async move {
                g.forget(Subject::Slot { merchant, slot }).await;
                assert_eq!(g.slot_read(merchant, slot).await.unwrap(), None, "{why}");
            }
        };

        let (s, b) = api
            .post("/api/v1/reservations", order("rel-1", "13800138001", 600))
            .await;
        assert_eq!(s, 201, "{b}");
        unloaded("a capacity edit or the key's expiry dropped it").await;
        let (s, b) = api
            .post("/api/v1/reservations/rel-1/release", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        late_load(&app, &g, slot, 2).await;
        assert_eq!(
            g.slot_read(merchant, slot).await.unwrap(),
            Some((3, "OPEN".into())),
            "the released place is back on offer"
        );

        let (s, b) = api
            .post("/api/v1/reservations", order("exp-1", "13800138002", 1))
            .await;
        assert_eq!(s, 201, "{b}");
        unloaded("dropped again").await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        // The expiry job may have expired it first: either way through the same settlement.
        let expired = sellable::domain::orders::expire_due(&app.db, 100)
            .await
            .unwrap();
        assert!(expired <= 1);
        let status: String =
            sqlx::query_scalar("SELECT status FROM reservations WHERE order_id = 'exp-1'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(status, "EXPIRED");
        late_load(&app, &g, slot, 2).await;
        until_slot(
            &g,
            merchant,
            slot,
            3,
            "the expired order's place is back on offer",
        )
        .await;
        app.assert_reconciled().await;
    }
);

pg!(
    a_waiting_customer_booked_while_a_booking_loads_the_slot_is_counted_in_redis,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "WAITED").await;
        let start = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("WAITED", start, start + chrono::Duration::hours(1), 1)
            .await;
        let (s, b) = api.book(slot, "First", "+86 138 0013 8001", None).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = api
            .post(
                &format!("/api/v1/slots/{slot}/waitlist"),
                json!({"name": "Waiting", "phone": "+86 139 0000 0001", "places": 1}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let merchant = slot_merchant(&app, slot).await;
        let g = gate(&app);
        // The key is dropped, then a place frees in SQL alone (a second place): the waiting
        // customer gets it, while a walk-in's booking that read one place left loads the slot.
        g.forget(Subject::Slot { merchant, slot }).await;
        assert_eq!(g.slot_read(merchant, slot).await.unwrap(), None);
        sqlx::query("UPDATE slots SET capacity = 2 WHERE id = $1")
            .bind(slot)
            .execute(&app.db.pool)
            .await
            .unwrap();
        // The job may fill it first; either way the one waiting customer is booked once.
        sellable::domain::slots::waitlist::fill(
            &app.db,
            sellable::domain::MerchantId(merchant),
            slot,
        )
        .await
        .unwrap();
        assert_eq!(app.slot_booked(slot).await, 2);
        late_load(&app, &g, slot, 1).await;
        until_slot(
            &g,
            merchant,
            slot,
            0,
            "the place the waiting customer took is taken in Redis too",
        )
        .await;
        app.assert_reconciled().await;
    }
);

pg!(
    slots_and_code_pools_in_redis_follow_bookings_and_sales,
    |app| {
        let api = app.acme_api().await;
        let slot_id = service_slot(&api, "CUT", 3).await;
        let tasks: Vec<_> = (0..30)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    api.post(
                        "/api/v1/bookings",
                        json!({"slot_id": slot_id, "name": format!("C{i}"), "phone": format!("+49 170 {i:07}")}),
                    )
                    .await
                })
            })
            .collect();
        let mut refs = Vec::new();
        for t in tasks {
            let (s, b) = t.await.unwrap();
            if s == 201 {
                refs.push(b["reference"].as_str().unwrap().to_string());
            } else {
                assert_eq!(b["error"], "slot_full", "{b}");
            }
        }
        assert_eq!(refs.len(), 3);
        let merchant = slot_merchant(&app, slot_id).await;
        let g = gate(&app);
        assert_eq!(
            g.slot_read(merchant, slot_id).await.unwrap(),
            Some((0, "OPEN".into()))
        );
        api.post(&format!("/api/v1/bookings/{}/cancel", refs[0]), json!({}))
            .await;
        assert_eq!(
            g.slot_read(merchant, slot_id).await.unwrap(),
            Some((1, "OPEN".into()))
        );
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": slot_id, "name": "Late", "phone": "+49 170 9999999"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        // Closing the slot drops its key; the next booking is refused as closed, by SQL.
        api.post(
            &format!("/api/v1/slots/{slot_id}/close"),
            json!({"reason": "Staff on leave"}),
        )
        .await;
        let (s, b) = api
            .post(
                "/api/v1/bookings",
                json!({"slot_id": slot_id, "name": "After", "phone": "+49 170 8888888"}),
            )
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_closed")), "{b}");

        // Codes: the pool holds ids only, and a sale empties it exactly.
        api.product("voucher", "GIFT").await;
        let body = (0..12)
            .map(|i| format!("CODE-{i:04}-XYZ\n"))
            .collect::<String>();
        let part = reqwest::multipart::Part::bytes(body.into_bytes()).file_name("codes.txt");
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .part("file", part);
        let r = api
            .http
            .post(format!("{}/api/v1/code-batches", api.base))
            .bearer_auth(&api.key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        let gift = sku_id(&app, "GIFT").await;
        let mut ready = false;
        for _ in 0..300 {
            let (_, s) = api.get("/api/v1/skus/GIFT/codes/summary").await;
            if s["sellable"] == 12 {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            ready,
            "{:?}",
            api.get("/api/v1/skus/GIFT/codes/summary").await
        );
        let by = flash_sale(std::slice::from_ref(&api), "GIFT", 40, "g").await;
        assert_eq!(by.get(&201), Some(&12), "{by:?}");
        let metrics = crate::helpers::metrics_text(&app.base).await;
        let gate_lines: Vec<&str> = metrics
            .lines()
            .filter(|l| l.starts_with("sellable_gate"))
            .collect();
        let (pool, more) = g
            .code_pool(gift)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("pool not loaded; {gate_lines:#?}"));
        assert!(pool.is_empty() && !more, "pool emptied exactly: {pool:?}");
        api.post("/api/v1/reservations/g-0/release", json!({}))
            .await;
        let released: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM codes WHERE sku_id = $1 AND status = 'AVAILABLE'",
        )
        .bind(gift)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let pool = g.code_pool(gift).await.unwrap().unwrap().0;
        assert_eq!(pool.len() as i64, released, "a release puts the id back");
        let report = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }
);
