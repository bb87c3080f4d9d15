//! Change events: written with their change and never without it, fed in commit order after a
//! cursor, filtered by type, scoped to the key's merchant.

use std::time::Duration;

use serde_json::{json, Value};

use crate::both;
use crate::helpers::Api;

/// Every event after `after` (walking pages of `limit`), and the final cursor.
async fn all_events(api: &Api, after: &str, types: &str, limit: i64) -> (Vec<Value>, String) {
    let mut cursor = after.to_string();
    let mut out = Vec::new();
    loop {
        let (s, b) = api
            .get(&format!(
                "/api/v1/events?after={cursor}&types={types}&limit={limit}"
            ))
            .await;
        assert_eq!(s, 200, "{b}");
        let page = b["events"].as_array().unwrap().clone();
        let next = b["next"].as_str().unwrap().to_string();
        if page.is_empty() {
            assert_eq!(next, cursor, "an empty page keeps the cursor");
            return (out, cursor);
        }
        out.extend(page);
        cursor = next;
    }
}

fn types_of(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

both!(
    every_change_writes_its_event_in_order_and_a_refused_one_writes_none,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 2}])).await;
        assert_eq!(s, 201, "{b}");
        let (_, before_refusal) = all_events(&api, "0", "", 100).await;
        let (s, b) = api
            .reserve("o-2", json!([{"sku": "TEA", "qty": 100}]))
            .await;
        assert_eq!(s, 409, "{b}");
        let (refused, _) = all_events(&api, &before_refusal, "", 100).await;
        assert!(
            refused.is_empty(),
            "a refused reservation writes no event: {refused:?}"
        );
        let (s, b) = api
            .post(
                "/api/v1/reservations/o-1/confirm",
                json!({"payment_ref": "P-1"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        // Pages of one: the cursor walks every event once, in order.
        let (events, _) = all_events(&api, "0", "", 1).await;
        assert_eq!(
            types_of(&events),
            // One transaction's events keep its order: the reservation's is written before the
            // balance it locks (outside the hot row's lock).
            [
                "sku.created",
                "stock.receive",
                "reservation.reserved",
                "stock.reserve",
                "stock.confirm",
                "reservation.confirmed"
            ]
        );
        let ids: Vec<i64> = events.iter().map(|e| e["id"].as_i64().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "increasing: {ids:?}");
        let created = &events[0];
        assert_eq!(
            created["subject"],
            json!({"kind": "sku", "id": "TEA", "sku": "TEA"})
        );
        assert_eq!(created["data"]["sku"], "TEA");
        assert!(created["data"]["product_id"].as_i64().unwrap() > 0);
        let receive = &events[1];
        assert_eq!(receive["merchant"], "acme");
        assert_eq!(
            receive["subject"],
            json!({"kind": "sku", "id": "TEA", "sku": "TEA"})
        );
        assert_eq!(receive["data"]["warehouse"], "main");
        assert_eq!(receive["data"]["before"]["available"], 0);
        assert_eq!(receive["data"]["after"]["available"], 10);
        assert_eq!(receive["data"]["after"]["total"], 10);
        let confirmed = &events[5];
        assert_eq!(confirmed["subject"]["id"], "o-1");
        assert_eq!(confirmed["data"]["before"], "RESERVED");
        assert_eq!(confirmed["data"]["after"], "CONFIRMED");
        assert_eq!(confirmed["data"]["payment_ref"], "P-1");
        // Filters: a family, an exact type, and one that is not a type.
        let (stock, _) = all_events(&api, "0", "stock.*", 100).await;
        assert_eq!(
            types_of(&stock),
            ["stock.receive", "stock.reserve", "stock.confirm"]
        );
        let (exact, _) = all_events(&api, "0", "reservation.confirmed,booking.*", 100).await;
        assert_eq!(types_of(&exact), ["reservation.confirmed"]);
        for bad in ["stock", "nope.*", "reservation.paid"] {
            let (s, b) = api.get(&format!("/api/v1/events?types={bad}")).await;
            assert_eq!(
                (s, b["error"].as_str()),
                (422, Some("invalid_choice")),
                "{bad}: {b}"
            );
        }
        let (s, b) = api.get("/api/v1/events?after=abc").await;
        assert_eq!(s, 422, "{b}");
        // Another merchant sees none of these.
        let other = app.merchant_api("other").await;
        let (theirs, _) = all_events(&other, "0", "", 100).await;
        assert!(theirs.is_empty(), "{theirs:?}");
    }
);

both!(
    a_late_payment_that_finds_no_stock_rolls_back_and_leaves_no_confirmed_event,
    |app| {
        let api = crate::orders::expired_order(&app, 5, "late", 4).await;
        api.reserve("other", json!([{"sku": "TEA", "qty": 4}]))
            .await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/late/confirm",
                json!({"payment_ref": "P"}),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("reservation_expired")),
            "{b}"
        );
        let (events, _) = all_events(&api, "0", "reservation.*", 100).await;
        let late: Vec<String> = events
            .iter()
            .filter(|e| e["subject"]["id"] == "late")
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            late,
            ["reservation.reserved", "reservation.expired"],
            "the rolled-back confirm wrote nothing"
        );
        // The payment that found nothing to take is an alert: a paid-not-held exception.
        let (exceptions, _) = all_events(&api, "0", "exception.*", 100).await;
        assert_eq!(
            types_of(&exceptions),
            ["exception.opened"],
            "{exceptions:?}"
        );
        assert_eq!(exceptions[0]["data"]["order_id"], "late");
        assert_eq!(exceptions[0]["data"]["payment_ref"], "P");
        // And the event rows are exactly the ledger's: one stock event per ledger row.
        let ledger = app.count("stock_ledger").await;
        let (stock, _) = all_events(&api, "0", "stock.*", 100).await;
        assert_eq!(stock.len() as i64, ledger);
    }
);

both!(bookings_slots_and_closures_write_their_events, |app| {
    let api = app.acme_api().await;
    api.product("service", "MASSAGE").await;
    let start = app.now() + chrono::Duration::days(2);
    let slot = api
        .one_off("MASSAGE", start, start + chrono::Duration::hours(1), 3)
        .await;
    let (s, b) = api.book(slot, "Wang Fang", "13800138000", None).await;
    assert_eq!(s, 201, "{b}");
    let reference = b["reference"].as_str().unwrap().to_string();
    let (s, _) = api
        .call(
            reqwest::Method::PATCH,
            &format!("/api/v1/slots/{slot}"),
            Some(json!({"capacity": 5})),
        )
        .await;
    assert_eq!(s, 200);
    let (s, _) = api
        .post(
            &format!("/api/v1/bookings/{reference}/cancel"),
            json!({"reason": "ill"}),
        )
        .await;
    assert_eq!(s, 200);
    let (s, _) = api
        .post(
            &format!("/api/v1/slots/{slot}/close"),
            json!({"reason": "leave"}),
        )
        .await;
    assert_eq!(s, 200);
    let (s, _) = api
        .post(&format!("/api/v1/slots/{slot}/open"), json!({}))
        .await;
    assert_eq!(s, 200);
    let (events, _) = all_events(&api, "0", "booking.*,slot.*", 100).await;
    assert_eq!(
        types_of(&events),
        [
            "slot.created",
            "booking.booked",
            "slot.capacity_changed",
            "booking.cancelled",
            "slot.closed",
            "slot.opened"
        ]
    );
    assert_eq!(events[0]["subject"]["id"], slot.to_string());
    assert_eq!(events[0]["data"]["after"]["capacity"], 3);
    assert_eq!(events[0]["data"]["source"], "ONE_OFF");
    assert_eq!(events[1]["subject"]["id"], reference);
    assert_eq!(events[1]["subject"]["sku"], "MASSAGE");
    assert_eq!(events[2]["data"]["before"]["capacity"], 3);
    assert_eq!(events[2]["data"]["after"]["capacity"], 5);
    assert_eq!(events[3]["data"]["before"], "BOOKED");
});

/// The slots of `events` by type: each event's slot id.
fn slots_by_type(events: &[Value], ty: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = events
        .iter()
        .filter(|e| e["type"] == ty)
        .map(|e| {
            assert_eq!(e["subject"]["kind"], "slot", "{e}");
            e["subject"]["id"].as_str().unwrap().parse().unwrap()
        })
        .collect();
    ids.sort_unstable();
    ids
}

both!(
    schedule_saves_and_closures_tell_each_slot_they_create_close_reopen_resize_or_remove,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let all_days = json!(["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]);
        let rules = |opens: &str, closes: &str, capacity: i64| {
            json!({"rules": [{"weekdays": all_days, "opens": opens, "closes": closes,
                "slot_minutes": 60, "capacity": capacity}]})
        };
        let slot_ids = |_: &Api| async {
            sqlx::query_scalar::<_, i64>("SELECT id FROM slots ORDER BY id")
                .fetch_all(&app.db.pool)
                .await
                .unwrap()
        };
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules("10:00", "12:00", 2))
            .await;
        assert_eq!(s, 200, "{b}");
        let (created, cursor) = all_events(&api, "0", "slot.*", 1000).await;
        let made = slot_ids(&api).await;
        assert_eq!(made.len() as i64, b["created"].as_i64().unwrap());
        assert_eq!(slots_by_type(&created, "slot.created"), made);
        assert!(created.iter().all(|e| e["subject"]["sku"] == "CUT"));
        // The rules themselves are the service's: one `sku.updated` for the save.
        let (saved, _) = all_events(&api, "0", "sku.updated", 100).await;
        assert_eq!(saved.len(), 1, "{saved:?}");
        assert_eq!(saved[0]["subject"]["sku"], "CUT");
        assert_eq!(saved[0]["data"]["changed"], "schedule");
        assert_eq!(saved[0]["data"]["store"], "main-store");

        // A store-wide closure over the next three days closes each slot it covers, once.
        let now = app.now();
        let (s, c) = api
            .post(
                "/api/v1/closures",
                json!({"starts_at": now.to_rfc3339(),
                    "ends_at": (now + chrono::Duration::days(3)).to_rfc3339(),
                    "reason": "Renovation"}),
            )
            .await;
        assert_eq!(s, 201, "{c}");
        let closure_id = c["id"].as_i64().unwrap();
        let closed_in_sql: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM slots WHERE closure_id = $1 ORDER BY id")
                .bind(closure_id)
                .fetch_all(&app.db.pool)
                .await
                .unwrap();
        assert!(closed_in_sql.len() >= 4, "{closed_in_sql:?}");
        let (after_closure, cursor) = all_events(&api, &cursor, "slot.*", 1000).await;
        assert_eq!(slots_by_type(&after_closure, "slot.closed"), closed_in_sql);
        assert_eq!(
            after_closure.len(),
            closed_in_sql.len(),
            "{after_closure:?}"
        );
        assert!(after_closure
            .iter()
            .all(|e| e["data"]["closure_id"] == closure_id && e["data"]["after"] == "CLOSED"));

        // Reopened: each of them opens again.
        let (s, _) = api
            .post(&format!("/api/v1/closures/{closure_id}/reopen"), json!({}))
            .await;
        assert_eq!(s, 200);
        let (reopened, cursor) = all_events(&api, &cursor, "slot.*", 1000).await;
        assert_eq!(slots_by_type(&reopened, "slot.opened"), closed_in_sql);
        assert_eq!(reopened.len(), closed_in_sql.len());

        // Same hours, new capacity: every slot's capacity changes, with before and after.
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules("10:00", "12:00", 4))
            .await;
        assert_eq!(s, 200, "{b}");
        let (resized, cursor) = all_events(&api, &cursor, "slot.*", 1000).await;
        assert_eq!(slots_by_type(&resized, "slot.capacity_changed"), made);
        assert_eq!(resized.len(), made.len());
        assert_eq!(resized[0]["data"]["before"]["capacity"], 2);
        assert_eq!(resized[0]["data"]["after"]["capacity"], 4);

        // Other hours: the old slots are removed and the new ones created.
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules("14:00", "15:00", 4))
            .await;
        assert_eq!(s, 200, "{b}");
        let (moved, _) = all_events(&api, &cursor, "slot.*", 1000).await;
        let removed = slots_by_type(&moved, "slot.removed");
        let now_made = slot_ids(&api).await;
        assert_eq!(removed.len() as i64, b["removed"].as_i64().unwrap());
        assert!(removed
            .iter()
            .all(|id| made.contains(id) && !now_made.contains(id)));
        assert_eq!(slots_by_type(&moved, "slot.created"), now_made);
        let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE type LIKE 'slot.%'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(
            left as usize,
            created.len() + after_closure.len() + reopened.len() + resized.len() + moved.len(),
            "no slot event outside what the feed gave"
        );
    }
);

both!(
    a_reader_polling_during_a_burst_of_concurrent_changes_misses_none_and_sees_none_twice,
    |app| {
        let api = app.acme_api().await;
        for sku in ["A", "B", "C"] {
            api.product("goods", sku).await;
            api.receive(sku, "main", 100).await;
        }
        let (_, start) = all_events(&api, "0", "", 1000).await;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The reader walks the feed while the orders commit, as an integration would.
        let reader = {
            let (api, done, start) = (api.clone(), done.clone(), start.clone());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut cursor = start;
                loop {
                    let finished = done.load(std::sync::atomic::Ordering::SeqCst);
                    let (page, next) = all_events(&api, &cursor, "stock.reserve", 7).await;
                    seen.extend(page);
                    cursor = next;
                    if finished {
                        return seen;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        };
        let orders = (0..60).map(|i| {
            let api = api.clone();
            async move {
                let sku = ["A", "B", "C"][i % 3];
                api.reserve(&format!("o-{i}"), json!([{"sku": sku, "qty": 1}]))
                    .await
                    .0
            }
        });
        let answers = futures_util::future::join_all(orders).await;
        assert!(answers.iter().all(|s| *s == 201), "{answers:?}");
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let seen = reader.await.unwrap();
        let mut orders: Vec<String> = seen
            .iter()
            .map(|e| e["data"]["order_id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            orders.len(),
            60,
            "every committed reservation's move, once each"
        );
        orders.sort();
        orders.dedup();
        assert_eq!(orders.len(), 60, "none twice");
    }
);

both!(
    a_freeze_by_reconciliation_is_an_event_once_while_it_stays_open,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        let sku: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'TEA'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        sqlx::query("UPDATE stock_balances SET total = total + 7 WHERE sku_id = $1")
            .bind(sku)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let actor = sellable::domain::Actor::system("test");
        for _ in 0..2 {
            let r = sellable::domain::reconcile::run(&app.db, "job", &actor)
                .await
                .unwrap();
            assert_eq!(r.broken.len(), 1, "{r:?}");
        }
        let (events, _) = all_events(&api, "0", "reconcile.*", 100).await;
        assert_eq!(types_of(&events), ["reconcile.frozen"], "once: {events:?}");
        let e = &events[0];
        assert_eq!(
            (&e["subject"]["kind"], &e["subject"]["id"]),
            (&json!("sku"), &json!("TEA"))
        );
        assert_eq!(e["data"]["kind"], "ledger_mismatch");
        assert_eq!(e["data"]["after"]["frozen"], true);
        assert!(e["data"]["finding"].is_i64(), "{e}");
    }
);

both!(
    a_gate_alert_shows_on_the_dashboard_and_closes_once_when_no_instance_renews_it,
    |app| {
        let api = app.acme_api().await;
        let now = app.now_ms();
        // Another instance said its gate has been off for two minutes, as watch_gate writes it:
        // under the event counter's lock (this app's own watcher runs beside the test).
        let mut tx = app.db.begin_write().await.unwrap();
        sqlx::query("UPDATE event_sequence SET last_seq = last_seq WHERE id = 1")
            .execute(&mut *tx)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO alerts_open (name, since, seen_at) VALUES ('gate_degraded:other', $1, $2)",
        )
        .bind(now - 120_000)
        .bind(now)
        .execute(&mut *tx)
        .await
        .unwrap();
        tx.commit().await.unwrap();
        sellable::domain::integration::alerts::watch_gate(&app.db, now)
            .await
            .unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        assert_eq!(app.page(&admin, "/admin").await.count("#gate-alert"), 1);
        let (events, _) = all_events(&api, "0", "gate.*", 100).await;
        assert!(events.is_empty(), "still open: {events:?}");
        // That instance stopped renewing it (it died, or runs without Redis): it closes, once.
        for _ in 0..2 {
            sellable::domain::integration::alerts::watch_gate(&app.db, now + 61_000)
                .await
                .unwrap();
        }
        let (events, _) = all_events(&api, "0", "gate.*", 100).await;
        assert_eq!(types_of(&events), ["gate.recovered"], "{events:?}");
        assert_eq!(events[0]["subject"]["kind"], "gate");
        assert_eq!(app.page(&admin, "/admin").await.count("#gate-alert"), 0);
    }
);

async fn watch(app: &crate::helpers::TestApp) -> sellable::domain::sellable::WatchReport {
    sellable::domain::sellable::watch(&app.db, &Default::default())
        .await
        .unwrap()
}

both!(
    a_sku_turning_sellable_or_not_is_told_once_with_its_reasons_and_nothing_else_is,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 2).await;
        let first = watch(&app).await;
        assert_eq!((first.first_seen, first.turned), (1, 0), "{first:?}");
        let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 1}])).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(watch(&app).await.turned, 0, "one unit left: still sellable");
        let (s, b) = api.reserve("o-2", json!([{"sku": "TEA", "qty": 1}])).await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(watch(&app).await.turned, 1);
        assert_eq!(watch(&app).await.turned, 0, "told once");
        let (s, _) = api
            .post("/api/v1/reservations/o-2/release", json!({}))
            .await;
        assert_eq!(s, 200);
        assert_eq!(watch(&app).await.turned, 1);
        // Besides TEA's making, only its two turns: the sale in between told nothing.
        let (events, _) = all_events(&api, "0", "sku.*", 100).await;
        assert_eq!(
            types_of(&events),
            [
                "sku.created",
                "sku.sellable_changed",
                "sku.sellable_changed"
            ]
        );
        let (off, on) = (&events[1], &events[2]);
        assert_eq!(off["subject"]["kind"], "sku");
        assert_eq!(off["subject"]["sku"], "TEA");
        assert_eq!(off["merchant"], "acme");
        assert_eq!(
            off["data"]["before"],
            json!({"sellable": true, "reasons": []})
        );
        assert_eq!(off["data"]["after"]["sellable"], false);
        assert_eq!(off["data"]["after"]["reasons"], json!(["out_of_stock"]));
        assert_eq!(off["data"]["reasons"][0]["code"], "out_of_stock");
        assert!(off["data"]["reasons"][0]["facts"].is_object(), "{off}");
        assert_eq!(
            on["data"]["before"],
            json!({"sellable": false, "reasons": ["out_of_stock"]})
        );
        assert_eq!(
            on["data"]["after"],
            json!({"sellable": true, "reasons": [], "quantity": 1})
        );
    }
);

both!(
    a_verdict_that_turns_with_the_clock_alone_is_told_and_a_new_sku_is_only_recorded,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        watch(&app).await;
        // The sale ends: no write touches the SKU, only time passes.
        sqlx::query("UPDATE products SET sale_ends_at = $1")
            .bind(app.now_ms() - 1)
            .execute(&app.db.pool)
            .await
            .unwrap();
        api.product("goods", "NEW").await;
        let r = watch(&app).await;
        assert_eq!((r.turned, r.first_seen), (1, 1), "{r:?}");
        let (events, _) = all_events(&api, "0", "sku.sellable_changed", 100).await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["subject"]["sku"], "TEA");
        assert_eq!(events[0]["data"]["after"]["reasons"], json!(["sale_ended"]));
    }
);

both!(
    watchers_racing_on_one_database_tell_each_turn_exactly_once,
    |app| {
        let api = app.acme_api().await;
        for sku in ["A", "B", "C", "D"] {
            api.product("goods", sku).await;
            api.receive(sku, "main", 1).await;
        }
        watch(&app).await;
        for (i, sku) in ["A", "B", "C", "D"].iter().enumerate() {
            let (s, b) = api
                .reserve(&format!("o-{i}"), json!([{"sku": sku, "qty": 1}]))
                .await;
            assert_eq!(s, 201, "{b}");
        }
        // Eight passes at once, as eight instances would run them.
        let passes = (0..8).map(|_| watch(&app));
        let reports = futures_util::future::join_all(passes).await;
        let told: usize = reports.iter().map(|r| r.turned).sum();
        assert_eq!(told, 4, "{reports:?}");
        // Each SKU's making, then each turn once.
        let (events, _) = all_events(&api, "0", "sku.*", 100).await;
        let skus = |ty: &str| {
            let mut skus: Vec<&str> = events
                .iter()
                .filter(|e| e["type"] == ty)
                .map(|e| e["subject"]["sku"].as_str().unwrap())
                .collect();
            skus.sort_unstable();
            skus
        };
        assert_eq!(events.len(), 8, "{events:?}");
        assert_eq!(skus("sku.created"), ["A", "B", "C", "D"]);
        assert_eq!(skus("sku.sellable_changed"), ["A", "B", "C", "D"]);
    }
);

async fn the_watch_job_tells_a_turn_without_anyone_asking(backend: crate::helpers::Backend) {
    let Some(app) =
        crate::helpers::TestApp::spawn_with(backend, |c| c.serve.verdict_watch_seconds = 1).await
    else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 1).await;
    // The job records the SKU as sellable first, then sees it sell out. Its first pass may have
    // read the SKU before the receipt (recorded out of stock): the sale would then be no turn,
    // so the wait is for the sellable record. On a loaded machine (the whole suite at once on two
    // cores) a one-second job can be late by several seconds: wait up to a minute, and say so if
    // that pass never came rather than failing on the event below.
    let mut seen = false;
    for _ in 0..600 {
        seen = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM sku_verdicts WHERE sellable = 1")
            .fetch_one(&app.db.pool)
            .await
            .unwrap()
            == 1;
        if seen {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen, "the watch job never recorded the SKU as sellable");
    let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 1}])).await;
    assert_eq!(s, 201, "{b}");
    // A first pass that came before the receipt told TEA turning sellable: the turn looked for
    // is the one to not sellable.
    let mut sold_out = Vec::new();
    for _ in 0..600 {
        let (events, _) = all_events(&api, "0", "sku.*", 100).await;
        // TEA's making, and its turns: nothing else about the SKU.
        assert!(
            events
                .iter()
                .all(|e| e["type"] == "sku.sellable_changed" || e["type"] == "sku.created"),
            "{events:?}"
        );
        sold_out = events
            .into_iter()
            .filter(|e| e["data"]["after"]["sellable"] == false)
            .collect();
        if !sold_out.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(sold_out.len(), 1, "{sold_out:?}");
    assert_eq!(sold_out[0]["data"]["before"]["sellable"], true);
}
crate::on_both!(the_watch_job_tells_a_turn_without_anyone_asking);
