//! What the back office shows, an order system can read too: a SKU's ledger, bookings by day,
//! slot or status, closures and the audit log, each scoped to the key's merchant and paged by a
//! cursor; a date is accepted wherever a time bound is asked.

use chrono::{Duration, NaiveDate};
use serde_json::{json, Value};

use crate::both;
use crate::helpers::{at, Api, TestApp};

fn codes_of(b: &Value) -> Vec<String> {
    crate::helpers::field_codes(b)
}

/// A day some days ahead in Shanghai, and an instant at `hour` o'clock on it.
fn day_ahead(app: &TestApp, days: i64) -> NaiveDate {
    app.today() + Duration::days(days)
}

async fn ids_of(api: &Api, path: &str, list: &str) -> (Vec<i64>, Value) {
    let (s, b) = api.get(path).await;
    assert_eq!(s, 200, "{path}: {b}");
    let ids = b[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    (ids, b["next"].clone())
}

both!(
    a_skus_ledger_reads_as_a_feed_resumed_from_the_last_id_and_filtered_like_the_page,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        for _ in 0..5 {
            api.receive("TEA", "main", 2).await;
        }
        api.reserve("o-1", json!([{"sku": "TEA", "qty": 3}])).await;
        // Two at a time: 6 rows in three pages, oldest first, each page naming the next.
        let (first, next) = ids_of(&api, "/api/v1/skus/TEA/ledger?limit=2", "entries").await;
        assert_eq!(first.len(), 2);
        let (second, next) = ids_of(
            &api,
            &format!(
                "/api/v1/skus/TEA/ledger?limit=2&after={}",
                next.as_str().unwrap()
            ),
            "entries",
        )
        .await;
        let (third, _) = ids_of(
            &api,
            &format!(
                "/api/v1/skus/TEA/ledger?limit=2&after={}",
                next.as_str().unwrap()
            ),
            "entries",
        )
        .await;
        let all: Vec<i64> = [first, second, third].concat();
        assert_eq!(all.len(), 6);
        assert!(all.windows(2).all(|w| w[0] < w[1]), "oldest first: {all:?}");
        let (s, b) = api.get("/api/v1/skus/TEA/ledger?kind=RESERVE").await;
        assert_eq!(s, 200);
        let rows = b["entries"].as_array().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (
                rows[0]["order_id"].as_str(),
                rows[0]["d_locked"].as_i64(),
                rows[0]["available_after"].as_i64()
            ),
            (Some("o-1"), Some(3), Some(7))
        );
        assert_eq!(b["next"], Value::Null);
        // Today's rows by date; tomorrow has none.
        let today = day_ahead(&app, 0).format("%Y-%m-%d").to_string();
        let tomorrow = day_ahead(&app, 1).format("%Y-%m-%d").to_string();
        let (today_rows, _) = ids_of(
            &api,
            &format!("/api/v1/skus/TEA/ledger?from={today}&to={today}"),
            "entries",
        )
        .await;
        assert_eq!(today_rows.len(), 6);
        let (none, _) = ids_of(
            &api,
            &format!("/api/v1/skus/TEA/ledger?from={tomorrow}"),
            "entries",
        )
        .await;
        assert!(none.is_empty());
        // Bad filters are refused by field, with stable codes; unknown SKUs are 404.
        let (s, b) = api
            .get("/api/v1/skus/TEA/ledger?kind=STEAL&limit=0&after=x&warehouse=nowhere&from=yesterday")
            .await;
        assert_eq!(s, 422, "{b}");
        let mut codes = codes_of(&b);
        codes.sort();
        assert_eq!(
            codes,
            [
                "after:invalid_number",
                "from:invalid_time",
                "kind:invalid_choice",
                "limit:invalid_number",
                "warehouse:unknown_warehouse"
            ]
        );
        assert_eq!(api.get("/api/v1/skus/NOPE/ledger").await.0, 404);
        // Another merchant's key sees none of it.
        let other = app.merchant_api("globex").await;
        assert_eq!(other.get("/api/v1/skus/TEA/ledger").await.0, 404);
    }
);

both!(
    bookings_are_listed_by_day_slot_and_status_with_dates_read_in_the_stores_timezone,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (d1, d2) = (day_ahead(&app, 3), day_ahead(&app, 4));
        // 23:00 in Shanghai is 15:00 UTC the same day: a date means the store's day.
        let late = api
            .one_off("CUT", at(d1, 23), at(d1, 23) + Duration::minutes(30), 5)
            .await;
        let next_day = api.one_off("CUT", at(d2, 9), at(d2, 10), 5).await;
        let (_, a) = api.book(late, "Ann", "+86 138 0013 8001", None).await;
        let (_, b) = api.book(late, "Bo", "+86 138 0013 8002", None).await;
        let (_, c) = api.book(next_day, "Cy", "+86 138 0013 8003", None).await;
        let cancelled = b["reference"].as_str().unwrap().to_string();
        let (s, _) = api
            .post(
                &format!("/api/v1/bookings/{cancelled}/cancel"),
                json!({"reason": "ill"}),
            )
            .await;
        assert_eq!(s, 200);
        let ymd = |d: NaiveDate| d.format("%Y-%m-%d").to_string();
        let refs = |b: &Value| -> Vec<String> {
            b["bookings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["reference"].as_str().unwrap().to_string())
                .collect()
        };
        let (s, day1) = api
            .get(&format!(
                "/api/v1/bookings?from={}&to={}&store=main-store",
                ymd(d1),
                ymd(d1)
            ))
            .await;
        assert_eq!(s, 200, "{day1}");
        assert_eq!(
            refs(&day1),
            [a["reference"].as_str().unwrap(), cancelled.as_str()]
        );
        assert_eq!(day1["bookings"][0]["sku"], "CUT");
        let (_, booked) = api
            .get(&format!(
                "/api/v1/bookings?from={}&to={}&status=BOOKED",
                ymd(d1),
                ymd(d2)
            ))
            .await;
        assert_eq!(
            refs(&booked),
            [
                a["reference"].as_str().unwrap(),
                c["reference"].as_str().unwrap()
            ]
        );
        let (_, of_slot) = api
            .get(&format!("/api/v1/bookings?slot_id={next_day}"))
            .await;
        assert_eq!(refs(&of_slot), [c["reference"].as_str().unwrap()]);
        // A cursor: one at a time, the three in the order they were made.
        let mut seen = Vec::new();
        let mut path = "/api/v1/bookings?limit=1".to_string();
        loop {
            let (_, page) = api.get(&path).await;
            seen.extend(refs(&page));
            match page["next"].as_str() {
                Some(n) => path = format!("/api/v1/bookings?limit=1&after={n}"),
                None => break,
            }
            assert!(seen.len() <= 3, "the cursor ends");
        }
        assert_eq!(seen.len(), 3);
        let (s, b) = api
            .get(&format!(
                "/api/v1/bookings?status=GONE&slot_id=0&from={}&to={}",
                ymd(d2),
                ymd(d1)
            ))
            .await;
        assert_eq!(s, 422, "{b}");
        let mut codes = codes_of(&b);
        codes.sort();
        assert_eq!(
            codes,
            [
                "slot_id:invalid_number",
                "status:invalid_choice",
                "to:invalid_period"
            ]
        );
        // The slots listing takes dates too (it used to refuse `from=2026-12-01`).
        let (s, slots) = api
            .get(&format!(
                "/api/v1/services/CUT/slots?from={}&to={}",
                ymd(d1),
                ymd(d1)
            ))
            .await;
        assert_eq!(s, 200, "{slots}");
        let ids: Vec<i64> = slots
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids, [late]);
        // Another merchant's key lists none of them.
        let other = app.merchant_api("globex").await;
        let (_, theirs) = other.get("/api/v1/bookings").await;
        assert!(theirs["bookings"].as_array().unwrap().is_empty());
    }
);

both!(
    closures_and_the_audit_log_are_listed_for_the_keys_merchant_only,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let day = day_ahead(&app, 5);
        api.one_off("CUT", at(day, 10), at(day, 11), 3).await;
        let (s, b) = api
            .post(
                "/api/v1/closures",
                json!({"starts_at": at(day, 0).to_rfc3339(), "ends_at": at(day + Duration::days(1), 0).to_rfc3339(),
                       "reason": "Inventory day"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let (s, list) = api.get("/api/v1/closures").await;
        assert_eq!(s, 200, "{list}");
        assert_eq!(list["store"], "main-store");
        assert_eq!(list["closures"][0]["reason"], "Inventory day");
        assert_eq!(list["closures"][0]["reopened_at"], Value::Null);
        assert_eq!(
            api.get("/api/v1/closures?store=nowhere").await.1["fields"][0]["code"],
            "unknown_store"
        );
        // The audit log: this merchant's rows, newest first, filtered by action and date.
        let (s, log) = api.get("/api/v1/audit?action=closure.create").await;
        assert_eq!(s, 200, "{log}");
        let entries = log["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{log}");
        assert!(entries[0]["detail"]
            .as_str()
            .unwrap()
            .contains("Inventory day"));
        let today = day_ahead(&app, 0).format("%Y-%m-%d").to_string();
        let (_, all) = api.get(&format!("/api/v1/audit?from={today}")).await;
        let n = all["entries"].as_array().unwrap().len();
        assert!(n >= 3, "product, slot and closure at least: {all}");
        let ids: Vec<i64> = all["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_i64().unwrap())
            .collect();
        assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first");
        let (s, b) = api.get("/api/v1/audit?before=5&after=1&from=soon").await;
        assert_eq!(s, 422, "{b}");
        let mut codes = codes_of(&b);
        codes.sort();
        assert_eq!(codes, ["after:invalid_cursor", "from:invalid_time"]);
        let (s, b) = api.get("/api/v1/audit?subject=%00").await;
        assert_eq!((s, b["error"].as_str()), (400, Some("invalid_text")), "{b}");
        let other = app.merchant_api("globex").await;
        let (_, theirs) = other.get("/api/v1/audit?action=closure.create").await;
        assert!(theirs["entries"].as_array().unwrap().is_empty());
    }
);
