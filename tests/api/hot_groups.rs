//! Holds of one hot SKU and bookings of one hot slot, made in one transaction per group
//! (`domain::kernel::groups`): every buyer gets the answer they would have got alone, and nothing is
//! lost or counted twice.

use std::collections::HashMap;

use serde_json::json;

use crate::helpers::{Api, TestApp};

/// Like `both!`, and once more on PostgreSQL without the Redis gate: there every order reaches
/// SQL, and the groups decide alone (with the gate, Redis has said yes first).
macro_rules! on_three {
    ($name:ident, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use crate::helpers::Backend;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let Some($app) = TestApp::spawn(Backend::Sqlite).await else {
                    return;
                };
                $body
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some($app) = TestApp::spawn(Backend::Postgres).await else {
                    return;
                };
                $body
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres_sql_alone() {
                let Some($app) =
                    TestApp::spawn_with(Backend::Postgres, |c| c.global.redis_url = None).await
                else {
                    return;
                };
                $body
            }
        }
    };
}

/// Each ledger row of a SKU × warehouse follows from the one before it by its own move: the rows
/// a group writes read as moves made one after the other.
async fn assert_ledger_chains(app: &TestApp, sku: &str) {
    let sku_id = app.sku_id(sku).await;
    let rows: Vec<(i64, i64, i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT warehouse_id, d_total, d_locked, total_after, locked_after, sold_after
         FROM stock_ledger WHERE sku_id = $1 ORDER BY id",
    )
    .bind(sku_id)
    .fetch_all(&app.db.pool)
    .await
    .unwrap();
    let mut last: HashMap<i64, (i64, i64, i64)> = HashMap::new();
    for (wh, d_total, d_locked, total, locked, sold) in rows {
        let (t0, l0, s0) = last.get(&wh).copied().unwrap_or((0, 0, 0));
        assert_eq!(
            (total, locked, sold),
            (t0 + d_total, l0 + d_locked, s0),
            "a ledger row of warehouse {wh} does not follow from the one before it"
        );
        last.insert(wh, (total, locked, sold));
    }
}

/// Holds a row (`hold`, an UPDATE of it by `id`) in a transaction of its own while twenty calls
/// start, lets them queue behind it for a while, then lets go; their answers, in order.
async fn behind_a_held_row<F, Fut>(
    app: &TestApp,
    hold: &str,
    id: i64,
    call: F,
) -> Vec<(u16, serde_json::Value)>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = (u16, serde_json::Value)> + Send + 'static,
{
    let mut locker = app.db.begin_write().await.unwrap();
    sqlx::query(hold)
        .bind(id)
        .execute(&mut *locker)
        .await
        .unwrap();
    let tasks: Vec<_> = (0..20).map(|i| tokio::spawn(call(i))).collect();
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    locker.rollback().await.unwrap();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    answers
}

/// How many times a SKU's balance row was updated (its version).
async fn balance_version(app: &TestApp, sku: i64) -> i64 {
    sqlx::query_scalar("SELECT version FROM stock_balances WHERE sku_id = $1")
        .bind(sku)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// Fires the orders at once; their answers in the same order.
async fn race(
    api: &Api,
    orders: Vec<(String, serde_json::Value)>,
) -> Vec<(u16, serde_json::Value)> {
    let tasks: Vec<_> = orders
        .into_iter()
        .map(|(order, items)| {
            let api = api.clone();
            tokio::spawn(async move { api.reserve(&order, items).await })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        answers.push(t.await.unwrap());
    }
    answers
}

on_three!(
    racing_orders_of_mixed_sizes_are_refused_only_when_too_few_units_remain,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 25).await;
        let orders: Vec<_> = (0..40)
            .map(|i| {
                let qty = 1 + i % 3;
                (format!("mixed-{i}"), json!([{"sku": "HOT", "qty": qty}]))
            })
            .collect();
        let qtys: Vec<i64> = (0..40).map(|i| 1 + i % 3).collect();
        let answers = race(&api, orders).await;
        let st = api.stock("HOT").await;
        let left = st["available"].as_i64().unwrap();
        let mut held = 0;
        for (i, (s, b)) in answers.iter().enumerate() {
            match s {
                201 => {
                    held += qtys[i];
                    // The answer a group gives is the order as reading it back shows it.
                    let (s, read) = api.get(&format!("/api/v1/reservations/mixed-{i}")).await;
                    assert_eq!(s, 200, "{read}");
                    assert_eq!(
                        b, &read,
                        "the answer of order {i} differs from reading it back"
                    );
                }
                409 => {
                    assert_eq!(b["error"], "insufficient_stock", "{b}");
                    // Units only went down: a refused order was refused while fewer than its
                    // quantity remained, as alone.
                    assert!(
                        left < qtys[i],
                        "order {i} of {} was refused while {left} units remain",
                        qtys[i]
                    );
                    assert!(b["available"].as_i64().unwrap() < qtys[i], "{b}");
                }
                _ => panic!("order {i}: {s} {b}"),
            }
        }
        assert_eq!(st["locked"].as_i64(), Some(held), "{st}");
        assert_eq!(held + left, 25, "no unit lost or counted twice");
        assert_eq!(
            app.count("stock_reservations").await,
            answers.iter().filter(|a| a.0 == 201).count() as i64
        );
        app.assert_ledger_replays().await;
        assert_ledger_chains(&app, "HOT").await;
    }
);

on_three!(
    an_order_sent_twice_at_once_is_held_once_and_both_answers_say_so,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 100).await;
        let orders: Vec<_> = (0..20)
            .flat_map(|i| {
                let items = json!([{"sku": "HOT", "qty": 2}]);
                [
                    (format!("twice-{i}"), items.clone()),
                    (format!("twice-{i}"), items),
                ]
            })
            .collect();
        let answers = race(&api, orders).await;
        for pair in answers.chunks(2) {
            assert_eq!(pair[0].0, 201, "{}", pair[0].1);
            assert_eq!(pair[1].0, 201, "{}", pair[1].1);
            assert_eq!(pair[0].1, pair[1].1, "a repeat answers as the order");
        }
        let st = api.stock("HOT").await;
        assert_eq!(st["locked"].as_i64(), Some(40), "{st}");
        assert_eq!(app.count("reservations").await, 20);
        let ledger: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM stock_ledger WHERE kind = 'RESERVE'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(ledger, 20, "one ledger row per order");
        app.assert_ledger_replays().await;
        assert_ledger_chains(&app, "HOT").await;
    }
);

on_three!(
    after_a_sell_out_a_repeat_of_an_order_that_won_still_gets_its_hold,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 5).await;
        let first = race(
            &api,
            (0..5)
                .map(|i| (format!("won-{i}"), json!([{"sku": "HOT", "qty": 1}])))
                .collect(),
        )
        .await;
        assert!(first.iter().all(|a| a.0 == 201), "{first:?}");
        // Sold out: the winners' repeats race new buyers, and the groups they share answer both.
        let orders: Vec<_> = (0..5)
            .map(|i| (format!("won-{i}"), json!([{"sku": "HOT", "qty": 1}])))
            .chain((0..20).map(|i| (format!("late-{i}"), json!([{"sku": "HOT", "qty": 1}]))))
            .collect();
        let answers = race(&api, orders).await;
        for (i, (s, b)) in answers.iter().enumerate() {
            if i < 5 {
                assert_eq!(*s, 201, "{b}");
                assert_eq!(b, &first[i].1, "the repeat answers as the order did");
            } else {
                assert_eq!(*s, 409, "{b}");
                assert_eq!(
                    (b["error"].as_str(), b["available"].as_i64()),
                    (Some("insufficient_stock"), Some(0))
                );
            }
        }
        assert_eq!(
            app.count("reservations").await,
            5,
            "a refused order leaves no header"
        );
        let audited: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM audit_log WHERE action = 'reservation.reserve'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(audited, 5, "nor an audit row");
        app.assert_ledger_replays().await;
    }
);

on_three!(
    racing_orders_without_a_warehouse_fill_the_first_warehouse_first,
    |app| {
        let api = app.acme_api().await;
        // "east" comes before "main" (priority 10).
        app.warehouse("acme", "east", 20).await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "east", 3).await;
        api.receive("HOT", "main", 20).await;
        let answers = race(
            &api,
            (0..12)
                .map(|i| (format!("wh-{i}"), json!([{"sku": "HOT", "qty": 1}])))
                .collect(),
        )
        .await;
        let mut by_warehouse: HashMap<String, i64> = HashMap::new();
        for (s, b) in &answers {
            assert_eq!(*s, 201, "{b}");
            *by_warehouse
                .entry(b["items"][0]["warehouse"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        assert_eq!(by_warehouse.get("east"), Some(&3), "{by_warehouse:?}");
        assert_eq!(by_warehouse.get("main"), Some(&9), "{by_warehouse:?}");
        app.assert_ledger_replays().await;
        assert_ledger_chains(&app, "HOT").await;
    }
);

on_three!(
    buyers_waiting_on_a_locked_sku_are_held_in_one_transaction,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 100).await;
        let sku = app.sku_id("HOT").await;
        let before = balance_version(&app, sku).await;
        // Someone else holds the balance row: the first transactions wait, the rest queue.
        let hold = "UPDATE stock_balances SET version = version WHERE sku_id = $1";
        let answers = behind_a_held_row(&app, hold, sku, |i| {
            let api = api.clone();
            async move {
                api.reserve(&format!("q-{i}"), json!([{"sku": "HOT", "qty": 1}]))
                    .await
            }
        })
        .await;
        for (s, b) in answers {
            assert_eq!(s, 201, "{b}");
        }
        assert_eq!(api.stock("HOT").await["locked"].as_i64(), Some(20));
        // Each transaction moves the balance once: two were waiting, the other eighteen went in
        // one after them.
        let moves = balance_version(&app, sku).await - before;
        assert!(moves <= 3, "20 holds took {moves} balance updates");
        app.assert_ledger_replays().await;
        assert_ledger_chains(&app, "HOT").await;
    }
);

on_three!(
    orders_queued_on_a_held_sku_asking_more_than_is_left_fill_it_in_few_transactions_and_the_rest_hear_why,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 12).await;
        let sku = app.sku_id("HOT").await;
        let before = balance_version(&app, sku).await;
        // Twenty orders of one and two units (30 in all) queue behind someone holding the
        // balance row: the group that takes them asks for far more than the twelve units.
        let qty = |i: usize| 1 + (i % 2) as i64;
        let hold = "UPDATE stock_balances SET version = version WHERE sku_id = $1";
        let answers = behind_a_held_row(&app, hold, sku, |i| {
            let api = api.clone();
            async move {
                api.reserve(&format!("cut-{i}"), json!([{"sku": "HOT", "qty": qty(i)}]))
                    .await
            }
        })
        .await;
        let st = api.stock("HOT").await;
        let left = st["available"].as_i64().unwrap();
        let mut held = 0;
        for (i, (s, b)) in answers.iter().enumerate() {
            match s {
                201 => held += qty(i),
                409 => {
                    assert_eq!(b["error"], "insufficient_stock", "{b}");
                    assert!(left < qty(i), "order {i} refused while {left} units remain");
                }
                _ => panic!("order {i}: {s} {b}"),
            }
        }
        assert_eq!((held, left), (12, 0), "the SKU ends sold out: {answers:?}");
        assert_eq!(st["locked"].as_i64(), Some(12), "{st}");
        // The two that waited on the row went first; the group that did not fit was cut to the
        // orders that fit, held together once more: not one transaction per order.
        let moves = balance_version(&app, sku).await - before;
        assert!(moves <= 3, "the twelve units took {moves} balance updates");
        assert_eq!(
            app.count("stock_reservations").await,
            answers.iter().filter(|a| a.0 == 201).count() as i64
        );
        app.assert_ledger_replays().await;
        assert_ledger_chains(&app, "HOT").await;
    }
);

on_three!(
    with_grouping_off_racing_buyers_get_exactly_the_units,
    |app| {
        sellable::domain::orders::hold_groups(&app.db).set_max(0);
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.receive("HOT", "main", 10).await;
        let answers = race(
            &api,
            (0..30)
                .map(|i| (format!("off-{i}"), json!([{"sku": "HOT", "qty": 1}])))
                .collect(),
        )
        .await;
        assert_eq!(answers.iter().filter(|a| a.0 == 201).count(), 10);
        assert!(answers
            .iter()
            .all(|a| a.0 == 201 || a.1["error"] == "insufficient_stock"));
        app.assert_ledger_replays().await;
    }
);

on_three!(
    racing_bookings_fill_a_slot_exactly_with_each_customer_once,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CLASS").await;
        let starts = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("CLASS", starts, starts + chrono::Duration::hours(1), 10)
            .await;
        // Thirty customers, each submitting twice with fresh keys, all at once.
        let tasks: Vec<_> = (0..60)
            .map(|i| {
                let api = api.clone();
                let customer = i / 2;
                tokio::spawn(async move {
                    let answer = api
                        .book(
                            slot,
                            &format!("Customer {customer}"),
                            &format!("+86 138 {customer:08}"),
                            None,
                        )
                        .await;
                    (customer, answer)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for t in tasks {
            let (customer, (s, b)) = t.await.unwrap();
            match s {
                201 => {
                    winners.push(customer);
                    let reference = b["reference"].as_str().unwrap();
                    let (s, read) = api.get(&format!("/api/v1/bookings/{reference}")).await;
                    assert_eq!(s, 200, "{read}");
                    assert_eq!(b, read, "the answer differs from reading the booking back");
                }
                409 => assert!(
                    matches!(b["error"].as_str(), Some("slot_full" | "already_booked")),
                    "{b}"
                ),
                _ => panic!("{s} {b}"),
            }
        }
        winners.sort_unstable();
        let booked = winners.len();
        winners.dedup();
        assert_eq!(winners.len(), booked, "a customer booked twice");
        assert_eq!(booked, 10);
        assert_eq!(app.slot_booked(slot).await, 10);
        let audited: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'booking.create'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        let events: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE type = 'booking.booked'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(
            (audited, events),
            (10, 10),
            "one audit row and one event per booking"
        );
    }
);

on_three!(
    a_booking_key_sent_twice_at_once_books_once_and_answers_both,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CLASS").await;
        let starts = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("CLASS", starts, starts + chrono::Duration::hours(1), 50)
            .await;
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let api = api.clone();
                let customer = i / 2;
                tokio::spawn(async move {
                    api.book(
                        slot,
                        &format!("Customer {customer}"),
                        &format!("+86 139 {customer:08}"),
                        Some(&format!("key-{customer}")),
                    )
                    .await
                })
            })
            .collect();
        let mut answers = Vec::new();
        for t in tasks {
            answers.push(t.await.unwrap());
        }
        for pair in answers.chunks(2) {
            assert_eq!((pair[0].0, pair[1].0), (201, 201), "{pair:?}");
            assert_eq!(
                pair[0].1["reference"], pair[1].1["reference"],
                "one booking per key"
            );
        }
        assert_eq!(app.slot_booked(slot).await, 20);
    }
);

/// How many groups of `row` (stock, slot) this process has committed, from /metrics.
async fn groups_held(app: &TestApp, row: &str) -> u64 {
    groups_counted(app, row, "held").await
}

/// How many groups of `row` came to `result` (held, refused, alone) in this process, from /metrics.
async fn groups_counted(app: &TestApp, row: &str, result: &str) -> u64 {
    let metrics = crate::helpers::metrics_text(&app.base).await;
    let label = format!(r#"row="{row}""#);
    metrics
        .lines()
        .filter(|l| {
            l.starts_with("sellable_groups_total{")
                && l.contains(&label)
                && l.contains(&format!(r#"result="{result}""#))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Without the gate, where a sold-out SKU's refusals reach the groups (with it, Redis answers them).
mod a_group_that_only_refused_is_counted_as_refused_not_as_held {
    use super::*;
    use crate::helpers::Backend;

    async fn body(app: TestApp) {
        let api = app.acme_api().await;
        api.product("goods", "GONE").await;
        api.receive("GONE", "main", 1).await;
        let sku = app.sku_id("GONE").await;
        assert_eq!(
            api.reserve("first", json!([{"sku": "GONE", "qty": 1}]))
                .await
                .0,
            201
        );
        let before = groups_counted(&app, "stock", "refused").await;
        let hold = "UPDATE stock_balances SET version = version WHERE sku_id = $1";
        let answers = behind_a_held_row(&app, hold, sku, |i| {
            let api = api.clone();
            async move {
                api.reserve(&format!("late-{i}"), json!([{"sku": "GONE", "qty": 1}]))
                    .await
            }
        })
        .await;
        for (s, b) in &answers {
            assert_eq!(
                (*s, b["error"].as_str()),
                (409, Some("insufficient_stock")),
                "{b}"
            );
        }
        assert!(
            groups_counted(&app, "stock", "refused").await > before,
            "the queued refusals were answered by a group, counted as refused"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        if let Some(app) = TestApp::spawn(Backend::Sqlite).await {
            body(app).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_sql_alone() {
        if let Some(app) =
            TestApp::spawn_with(Backend::Postgres, |c| c.global.redis_url = None).await
        {
            body(app).await;
        }
    }
}

on_three!(
    bookings_waiting_on_a_locked_slot_are_made_in_one_transaction,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CLASS").await;
        let starts = app.now() + chrono::Duration::days(2);
        let slot = api
            .one_off("CLASS", starts, starts + chrono::Duration::hours(1), 100)
            .await;
        let before = groups_held(&app, "slot").await;
        // Someone else holds the slot's row: the first transactions wait, the rest queue.
        let hold = "UPDATE slots SET booked = booked WHERE id = $1";
        let answers = behind_a_held_row(&app, hold, slot, |i| {
            let api = api.clone();
            async move {
                api.book(
                    slot,
                    &format!("Waiting {i}"),
                    &format!("+86 137 {i:08}"),
                    None,
                )
                .await
            }
        })
        .await;
        for (s, b) in answers {
            assert_eq!(s, 201, "{b}");
        }
        assert_eq!(app.slot_booked(slot).await, 20);
        // Other tests of this process can only add to the count, and only by grouping too.
        assert!(
            groups_held(&app, "slot").await > before,
            "no group of bookings was committed"
        );
    }
);

on_three!(
    a_full_slot_refuses_waiting_bookings_together_each_in_its_language_while_a_repeat_gets_its_booking,
    |app| {
        let api = app.acme_api().await;
        let slot = api.party_slot("CLASS", 3, 4).await;
        let (s, first) = api.book(slot, "A", "+86 136 0000 0001", Some("key-a")).await;
        assert_eq!(s, 201, "{first}");
        let party = json!({"slot_id": slot, "name": "B", "phone": "+86 136 0000 0002", "places": 3});
        let (s, b) = api.post("/api/v1/bookings", party.clone()).await;
        assert_eq!(s, 201, "{b}");
        let before = groups_counted(&app, "slot", "refused").await;
        // Twenty at once on the full slot: A's repeat, B again, A once more with a fresh key,
        // and new customers writing in English and in Chinese, parties of one and of two.
        let tasks: Vec<_> = (0..20)
            .map(|i| {
                let api = api.clone();
                let party = party.clone();
                tokio::spawn(async move {
                    let body = match i {
                        0 => json!({"slot_id": slot, "name": "A", "phone": "+86 136 0000 0001",
                            "idempotency_key": "key-a"}),
                        1 => party,
                        2 => json!({"slot_id": slot, "name": "A", "phone": "+86 136 0000 0001",
                            "idempotency_key": "key-a-again"}),
                        _ => json!({"slot_id": slot, "name": format!("C{i}"),
                            "phone": format!("+86 137 {i:08}"), "places": 1 + i % 2}),
                    };
                    let lang = if i % 4 < 2 { "en" } else { "zh-CN" };
                    let r = api
                        .http
                        .post(format!("{}/api/v1/bookings", api.base))
                        .bearer_auth(&api.key)
                        .header("Accept-Language", lang)
                        .json(&body)
                        .send()
                        .await
                        .unwrap();
                    let s = r.status().as_u16();
                    (i, lang, s, r.json::<serde_json::Value>().await.unwrap())
                })
            })
            .collect();
        let full_en = sellable::messages::slot_full();
        let full_zh = sellable::i18n::scope(sellable::i18n::Lang::ZhCn, async {
            sellable::messages::slot_full()
        })
        .await;
        assert_ne!(full_en, full_zh);
        for t in tasks {
            let (i, lang, s, b) = t.await.unwrap();
            match i {
                0 => {
                    assert_eq!(s, 201, "the repeat gets its booking: {b}");
                    assert_eq!(b["reference"], first["reference"]);
                }
                1 | 2 => assert_eq!(
                    (s, b["error"].as_str()),
                    (409, Some("already_booked")),
                    "{b}"
                ),
                _ => {
                    assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
                    assert_eq!((b["remaining"].as_i64(), b["slot_id"].as_i64()), (Some(0), Some(slot)), "{b}");
                    let said = if lang == "en" { &full_en } else { &full_zh };
                    assert_eq!(b["message"].as_str(), Some(said.as_str()), "{lang}: {b}");
                }
            }
        }
        assert_eq!(app.count("bookings").await, 2);
        assert_eq!(app.slot_booked(slot).await, 4);
        // Without the gate every one of them reached SQL, and groups answered them: groups that
        // only refused, counted as such.
        if sellable::domain::kernel::gate::active(&app.db).is_none() {
            assert!(
                groups_counted(&app, "slot", "refused").await > before,
                "no group answered the refusals"
            );
        }
    }
);

on_three!(
    bookings_queued_on_a_held_slot_asking_more_than_is_left_fill_it_exactly_and_the_rest_hear_full,
    |app| {
        let api = app.acme_api().await;
        let slot = api.party_slot("CLASS", 2, 7).await;
        // Twenty parties of one and two queue behind someone holding the slot's row: the group
        // that takes them asks for far more than the seven places. Six customers ask twice, once
        // for one place and once for two: twins within a group.
        let hold = "UPDATE slots SET booked = booked WHERE id = $1";
        let answers = behind_a_held_row(&app, hold, slot, |i| {
            let api = api.clone();
            let customer = i % 14;
            async move {
                api.post(
                    "/api/v1/bookings",
                    json!({"slot_id": slot, "name": format!("Party {customer}"),
                        "phone": format!("+86 135 {customer:08}"), "places": 1 + (i + i / 14) % 2}),
                )
                .await
            }
        })
        .await;
        let mut taken = 0;
        let mut booked = HashMap::new();
        for (s, b) in &answers {
            match s {
                201 => {
                    taken += b["places"].as_i64().unwrap();
                    let before = booked.insert(b["name"].to_string(), b["places"].as_i64());
                    assert!(before.is_none(), "a customer booked twice: {b}");
                }
                409 => assert!(
                    matches!(b["error"].as_str(), Some("slot_full" | "already_booked")),
                    "{b}"
                ),
                _ => panic!("{s} {b}"),
            }
        }
        // Parties of one are among those refused only once the slot is full: it ends full. With
        // the gate too: a customer's twin that Redis answered "seen" waits (up to 3 s) for the
        // twin that took the places there, so SQL does not book the smaller party while Redis
        // counts the larger.
        assert_eq!(taken, 7, "{answers:?}");
        assert_eq!(app.slot_booked(slot).await, 7);
        let events: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM events WHERE type = 'booking.booked' AND subject_kind = 'booking'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let made = answers.iter().filter(|(s, _)| *s == 201).count() as i64;
        assert_eq!(
            events, made,
            "one event per booking made, none for a refusal"
        );
        // Redis agrees: a late customer hears the slot is full.
        let (s, b) = api.book(slot, "Late", "+86 136 00000000", None).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_full")), "{b}");
        assert_eq!(app.slot_booked(slot).await, 7);
        app.assert_reconciled().await;
    }
);

/// The change events of the orders `hot-*` (their `reservation.reserved` and the SKU's
/// `stock.reserve`).
async fn hot_events(app: &TestApp, sku: i64) -> (i64, i64) {
    sqlx::query_as(
        "SELECT COUNT(*), COUNT(seq) FROM events
         WHERE (subject_kind = 'reservation' AND subject_id LIKE 'hot-%')
            OR (type = 'stock.reserve' AND sku_id = $1)",
    )
    .bind(sku)
    .fetch_one(&app.db.pool)
    .await
    .unwrap()
}

/// How many of those events were numbered by the transaction that wrote their order (on
/// PostgreSQL, where a row's `xmin` is the transaction that wrote its current version: the
/// sequencer's UPDATE, running every second in the app, gives its own).
async fn numbered_by_their_group(app: &TestApp, sku: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM events e JOIN reservations r ON r.order_id = e.subject_id
                 WHERE e.subject_kind = 'reservation' AND e.subject_id LIKE 'hot-%'
                   AND e.seq IS NOT NULL AND e.xmin = r.xmin)
              + (SELECT COUNT(*) FROM events e JOIN stock_ledger l ON l.id = e.ledger_id
                 WHERE e.type = 'stock.reserve' AND e.sku_id = $1
                   AND e.seq IS NOT NULL AND e.xmin = l.xmin)",
    )
    .bind(sku)
    .fetch_one(&app.db.pool)
    .await
    .unwrap()
}

on_three!(
    a_large_group_numbers_its_own_events_and_a_reader_never_finds_a_number_without_its_event,
    |app| {
        use sellable::domain::trail::events;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let api = app.acme_api().await;
        api.product("goods", "HOT").await;
        api.product("goods", "COLD").await;
        api.receive("HOT", "main", 100).await;
        events::sequence(&app.db).await.unwrap();
        let sku = app.sku_id("HOT").await;
        let hold = "UPDATE stock_balances SET version = version WHERE sku_id = $1";
        let reserve = |round: usize| {
            let api = api.clone();
            move |i: usize| {
                let api = api.clone();
                async move {
                    api.reserve(
                        &format!("hot-{round}-{i}"),
                        json!([{"sku": "HOT", "qty": 1}]),
                    )
                    .await
                }
            }
        };
        // Twenty orders queued behind a held row: most of them reach SQL as one group.
        let answers = behind_a_held_row(&app, hold, sku, reserve(1)).await;
        assert!(answers.iter().all(|a| a.0 == 201), "{answers:?}");
        // On PostgreSQL the large group numbered its events in its own transaction; on SQLite
        // (one writer, no hot row to relieve) the sequencer does.
        assert_eq!(hot_events(&app, sku).await.0, 40);
        if app.backend == crate::helpers::Backend::Postgres {
            let numbered = numbered_by_their_group(&app, sku).await;
            assert!(
                numbered >= 2 * sellable::domain::orders::NUMBERED_FROM as i64,
                "only {numbered} of the group's events were numbered by it"
            );
        }

        // Again, with the sequencer numbering other changes (receipts of another SKU) and a
        // reader walking the numbers all the while: whatever it reads as the last number
        // handed out, every number up to it is an event it can see, each once.
        let stop = Arc::new(AtomicBool::new(false));
        let reader = tokio::spawn({
            let db = app.db.clone();
            let stop = stop.clone();
            async move {
                let mut reads = 0;
                while !stop.load(Ordering::SeqCst) {
                    let last = events::last_numbered(&db).await.unwrap();
                    let (seen, distinct): (i64, i64) = sqlx::query_as(
                        "SELECT COUNT(*), COUNT(DISTINCT seq) FROM events WHERE seq <= $1",
                    )
                    .bind(last)
                    .fetch_one(&db.pool)
                    .await
                    .unwrap();
                    assert_eq!((seen, distinct), (last, last), "numbers up to {last}");
                    reads += 1;
                }
                reads
            }
        });
        let sequencer = tokio::spawn({
            let db = app.db.clone();
            let api = api.clone();
            let stop = stop.clone();
            async move {
                while !stop.load(Ordering::SeqCst) {
                    api.receive("COLD", "main", 1).await;
                    events::sequence(&db).await.unwrap();
                }
            }
        });
        let answers = behind_a_held_row(&app, hold, sku, reserve(2)).await;
        assert!(answers.iter().all(|a| a.0 == 201), "{answers:?}");
        stop.store(true, Ordering::SeqCst);
        sequencer.await.unwrap();
        assert!(reader.await.unwrap() > 0);
        events::sequence(&app.db).await.unwrap();
        let last = events::last_numbered(&app.db).await.unwrap();
        let (all, numbered, distinct): (i64, i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COUNT(seq), COUNT(DISTINCT seq) FROM events")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!((numbered, distinct, last), (all, all, all));
        assert_eq!(hot_events(&app, sku).await, (80, 80));
        assert_ledger_chains(&app, "HOT").await;
    }
);
