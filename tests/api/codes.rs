use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::both;
use crate::helpers::{Api, TestApp};

fn errors(b: &Value) -> Vec<(i64, String)> {
    b["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["line"].as_i64().unwrap(),
                e["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub(crate) async fn summary(api: &Api, sku: &str) -> Value {
    let (s, b) = api.get(&format!("/api/v1/skus/{sku}/codes/summary")).await;
    assert_eq!(s, 200, "{b}");
    b
}

async fn gift(app: &TestApp) -> Api {
    let api = app.acme_api().await;
    api.product("voucher", "GIFT").await;
    api
}

both!(
    import_reports_duplicates_with_line_numbers_within_the_file_and_against_earlier_batches,
    |app| {
        let api = gift(&app).await;
        let first = api
            .import_codes("GIFT", "first.txt", "AAA-1\nBBB-2\nCCC-3\n", "valid")
            .await;
        assert_eq!(
            (
                first["status"].as_str(),
                first["imported"].as_i64(),
                first["rejected"].as_i64()
            ),
            (Some("READY"), Some(3), Some(0))
        );
        let first_id = first["batch_id"].as_i64().unwrap();
        let second = api
            .import_codes(
                "GIFT",
                "second.txt",
                "DDD-4\nEEE-5\nDDD-4\nBBB-2\nFFF-6\n",
                "valid",
            )
            .await;
        assert_eq!(
            (
                second["status"].as_str(),
                second["imported"].as_i64(),
                second["rejected"].as_i64(),
                second["read"].as_i64()
            ),
            (Some("PARTIAL"), Some(3), Some(2), Some(5))
        );
        assert_eq!(
            errors(&second),
            vec![
                (3, "duplicates line 1".to_string()),
                (4, format!("already imported in batch #{first_id}"))
            ]
        );
        let s = summary(&api, "GIFT").await;
        assert_eq!(
            (s["counts"]["AVAILABLE"].as_i64(), s["sellable"].as_i64()),
            (Some(6), Some(6))
        );
        let (st, page) = api
            .get(&format!(
                "/api/v1/code-batches/{}/errors?page=1",
                second["batch_id"]
            ))
            .await;
        assert_eq!(
            (
                st,
                page["pages"].as_i64(),
                page["errors"].as_array().map(|a| a.len())
            ),
            (200, Some(1), Some(2))
        );
    }
);

both!(all_or_nothing_imports_nothing_when_any_line_is_bad, |app| {
    let api = gift(&app).await;
    let b = api
        .import_codes(
            "GIFT",
            "codes.txt",
            "GOOD-1\nGOOD-2\nbad\u{7}code\nGOOD-3\n",
            "all",
        )
        .await;
    assert_eq!(b["status"], "FAILED");
    assert_eq!(b["imported"], 0);
    assert_eq!(errors(&b), vec![(3, "invalid characters".to_string())]);
    assert!(b["failure"]
        .as_str()
        .unwrap()
        .starts_with("All or nothing: 1 lines were rejected"));
    let s = summary(&api, "GIFT").await;
    assert_eq!(s["counts"]["AVAILABLE"], 0);
    assert_eq!(s["counts"]["PENDING"], 0, "nothing half-visible");
    assert_eq!(app.count("codes").await, 0);
    // The same codes import fine afterwards: a failed batch holds nothing back.
    let ok = api
        .import_codes("GIFT", "codes.txt", "GOOD-1\nGOOD-2\nGOOD-3\n", "all")
        .await;
    assert_eq!(
        (ok["status"].as_str(), ok["imported"].as_i64()),
        (Some("READY"), Some(3))
    );
});

both!(
    messy_files_import_what_a_person_would_expect_and_garbage_is_reported_not_crashed_on,
    |app| {
        let api = gift(&app).await;
        // A BOM, CRLF line ends, blank lines and trailing spaces.
        let messy = "\u{feff}CODE-ONE  \r\n\r\n   CODE-TWO\r\n\t\r\nCODE-THREE \r\n";
        let b = api.import_codes("GIFT", "messy.txt", messy, "valid").await;
        assert_eq!(
            (
                b["status"].as_str(),
                b["imported"].as_i64(),
                b["rejected"].as_i64()
            ),
            (Some("READY"), Some(3), Some(0))
        );
        let mut bytes: Vec<u8> = b"OK-CODE-1\n".to_vec();
        bytes.extend_from_slice(b"\xff\xfe\x00bin\x00ary\n"); // line 2: not UTF-8
        bytes.extend_from_slice(format!("{}\n", "X".repeat(300)).as_bytes()); // line 3: too long
        bytes.extend_from_slice(format!("{}\n", "Y".repeat(10_000)).as_bytes()); // line 4: far too long
        bytes.extend_from_slice(b"NUL\x00INSIDE\n"); // line 5: control character
        bytes.extend_from_slice(b"OK-CODE-2"); // line 6: no final newline
        let (s, up) = api.upload("GIFT", "garbage.txt", bytes, "valid").await;
        assert_eq!(s, 202, "{up}");
        let b = api.batch_done(up["batch_id"].as_i64().unwrap()).await;
        assert_eq!(
            (
                b["status"].as_str(),
                b["imported"].as_i64(),
                b["rejected"].as_i64()
            ),
            (Some("PARTIAL"), Some(2), Some(4))
        );
        assert_eq!(
            errors(&b),
            vec![
                (
                    2,
                    "not valid UTF-8 text (save the file as UTF-8)".to_string()
                ),
                (3, "300 characters, the limit is 128".to_string()),
                (
                    4,
                    "more than 4,096 bytes, the limit is 128 characters".to_string()
                ),
                (5, "invalid characters".to_string()),
            ]
        );
        // CSV with a header, an empty code cell and expiry dates.
        let csv = "code,expires_at\nCSV-1,2030-01-31\n,2030-01-31\nCSV-2,\nCSV-3,not a date\nCSV-4,2001-01-01\n";
        let b = api.import_codes("GIFT", "codes.csv", csv, "valid").await;
        assert_eq!(
            (b["imported"].as_i64(), b["rejected"].as_i64()),
            (Some(2), Some(3))
        );
        let reasons = errors(&b);
        assert_eq!(reasons[0], (3, "empty".to_string()));
        assert_eq!(reasons[1].0, 5);
        assert!(reasons[1].1.starts_with("expires_at must be a date"));
        assert_eq!(reasons[2], (6, "already expired".to_string()));
        let b = api
            .import_codes("GIFT", "nohead.csv", "voucher\nX1\n", "valid")
            .await;
        assert_eq!(b["status"], "FAILED");
        assert_eq!(
            b["failure"],
            "The CSV file needs a header row with a \"code\" column."
        );
        let b = api
            .import_codes("GIFT", "empty.txt", "\n\n  \n", "valid")
            .await;
        assert_eq!(
            (b["status"].as_str(), b["failure"].as_str()),
            (Some("FAILED"), Some("The file has no codes."))
        );
    }
);

both!(upload_refusals_are_clear_and_write_nothing, |app| {
    let api = gift(&app).await;
    api.product("goods", "TEA").await;
    let (s, b) = api.upload("TEA", "c.txt", b"A1\n".to_vec(), "valid").await;
    assert_eq!((s, b["error"].as_str().unwrap()), (422, "wrong_sku_kind"));
    let (s, b) = api.upload("NOPE", "c.txt", b"A1\n".to_vec(), "valid").await;
    assert_eq!((s, b["error"].as_str().unwrap()), (422, "unknown_sku"));
    let (s, b) = api
        .upload("GIFT", "c.txt", b"A1\n".to_vec(), "sometimes")
        .await;
    assert_eq!((s, b["error"].as_str().unwrap()), (422, "invalid_mode"));
    let form = reqwest::multipart::Form::new().text("sku", "GIFT");
    let r = api
        .http
        .post(format!("{}/api/v1/code-batches", api.base))
        .bearer_auth(&api.key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(
        r.json::<Value>().await.unwrap()["fields"][0]["message"],
        "Choose a file to upload."
    );
    // More than 1,000,000 lines is refused while streaming.
    let many = "a\n".repeat(1_000_002).into_bytes();
    let (s, b) = api.upload("GIFT", "many.txt", many, "valid").await;
    assert_eq!(
        (s, b["error"].as_str().unwrap()),
        (413, "payload_too_large")
    );
    assert_eq!(
        b["message"],
        sellable::messages::upload_too_many_lines(1_000_000)
    );
    assert_eq!(app.count("code_batches").await, 0);
    let leftovers = std::fs::read_dir(app.dir.join("uploads"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(leftovers, 0, "refused uploads leave no file behind");
});

both!(
    sixty_four_orders_racing_for_ten_codes_get_ten_distinct_codes,
    |app| {
        let api = gift(&app).await;
        let text: String = (0..10).map(|i| format!("RACE-CODE-{i:02}\n")).collect();
        api.import_codes("GIFT", "ten.txt", &text, "valid").await;
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let api = api.clone();
                tokio::spawn(async move {
                    let order = format!("race-{i}");
                    let (s, b) = api
                        .post(
                            "/api/v1/reservations",
                            json!({"order_id": order, "items": [{"sku": "GIFT", "qty": 1}]}),
                        )
                        .await;
                    if s != 201 {
                        assert_eq!(
                            (s, b["error"].as_str().unwrap()),
                            (409, "insufficient_stock"),
                            "{b}"
                        );
                        return None;
                    }
                    let (s, b) = api
                        .post(&format!("/api/v1/reservations/{order}/confirm"), json!({}))
                        .await;
                    assert_eq!(s, 200, "{b}");
                    let codes = b["items"][0]["codes"].as_array().unwrap().clone();
                    assert_eq!(codes.len(), 1);
                    Some(codes[0].as_str().unwrap().to_string())
                })
            })
            .collect();
        let mut sold = Vec::new();
        for t in tasks {
            if let Some(c) = t.await.unwrap() {
                sold.push(c);
            }
        }
        assert_eq!(sold.len(), 10, "exactly ten orders got a code");
        let unique: HashSet<&String> = sold.iter().collect();
        assert_eq!(unique.len(), 10, "no code in two orders");
        let s = summary(&api, "GIFT").await;
        assert_eq!(
            (
                s["counts"]["SOLD"].as_i64(),
                s["counts"]["AVAILABLE"].as_i64(),
                s["counts"]["BOOKING"].as_i64()
            ),
            (Some(10), Some(0), Some(0))
        );
    }
);

both!(
    codes_are_held_sold_once_and_returned_to_the_pool_only_from_booking,
    |app| {
        let api = gift(&app).await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 5).await;
        api.import_codes("GIFT", "three.txt", "G-1\nG-2\nG-3\n", "valid")
            .await;
        // A bundle of goods and codes: all or nothing.
        let (s, b) = api.post("/api/v1/reservations", json!({"order_id": "mix", "items": [{"sku": "TEA", "qty": 1}, {"sku": "GIFT", "qty": 2}]})).await;
        assert_eq!(s, 201, "{b}");
        let gift_item = b["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["sku"] == "GIFT")
            .cloned()
            .unwrap();
        assert_eq!(gift_item["qty"], 2);
        assert!(gift_item.get("codes").is_none(), "no codes before payment");
        assert!(gift_item.get("warehouse").is_none());
        assert_eq!(summary(&api, "GIFT").await["counts"]["BOOKING"], 2);
        let (s, b) = api.post("/api/v1/reservations", json!({"order_id": "short", "items": [{"sku": "TEA", "qty": 1}, {"sku": "GIFT", "qty": 2}]})).await;
        assert_eq!(
            (
                s,
                b["error"].as_str().unwrap(),
                b["sku"].as_str().unwrap(),
                b["available"].as_i64()
            ),
            (409, "insufficient_stock", "GIFT", Some(1))
        );
        assert_eq!(
            api.stock("TEA").await["locked"],
            1,
            "the TEA line of the refused order was not held"
        );
        let (_, b) = api
            .post("/api/v1/reservations/mix/confirm", json!({}))
            .await;
        let codes = b["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["sku"] == "GIFT")
            .unwrap()["codes"]
            .clone();
        assert_eq!(codes.as_array().unwrap().len(), 2);
        let (_, again) = api.get("/api/v1/reservations/mix").await;
        assert_eq!(
            again["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["sku"] == "GIFT")
                .unwrap()["codes"],
            codes,
            "returned again on read"
        );
        // Release of a paid order is refused, so SOLD codes never return; nor do returns.
        let (s, _) = api
            .post("/api/v1/reservations/mix/release", json!({}))
            .await;
        assert_eq!(s, 409);
        let (s, b) = api.post("/api/v1/returns", json!({"return_id": "r1", "order_id": "mix", "sku": "GIFT", "qty": 1, "condition": "RESELLABLE"})).await;
        assert_eq!(
            (s, b["error"].as_str().unwrap()),
            (422, "code_not_returnable")
        );
        // A held code goes back on release, and on expiry.
        api.post(
            "/api/v1/reservations",
            json!({"order_id": "hold", "items": [{"sku": "GIFT", "qty": 1}]}),
        )
        .await;
        assert_eq!(summary(&api, "GIFT").await["sellable"], 0);
        let (s, b) = api
            .post("/api/v1/reservations/hold/release", json!({}))
            .await;
        assert_eq!((s, b["status"].as_str().unwrap()), (200, "RELEASED"));
        assert_eq!(summary(&api, "GIFT").await["sellable"], 1);
        api.post(
            "/api/v1/reservations",
            json!({"order_id": "late", "items": [{"sku": "GIFT", "qty": 1}], "ttl_seconds": 1}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        sellable::domain::orders::expire_due(&app.db, 100)
            .await
            .unwrap();
        let s = summary(&api, "GIFT").await;
        assert_eq!(
            (
                s["counts"]["SOLD"].as_i64(),
                s["counts"]["AVAILABLE"].as_i64(),
                s["counts"]["BOOKING"].as_i64()
            ),
            (Some(2), Some(1), Some(0))
        );
        // Paid after all: the order's payment decides, and a code is taken again for it.
        let (s, b) = api
            .post("/api/v1/reservations/late/confirm", json!({}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CONFIRMED")), "{b}");
        assert_eq!(b["late_payment"], true);
        assert_eq!(b["items"][0]["codes"].as_array().map(Vec::len), Some(1));
        let s = summary(&api, "GIFT").await;
        assert_eq!(
            (
                s["counts"]["SOLD"].as_i64(),
                s["counts"]["AVAILABLE"].as_i64()
            ),
            (Some(3), Some(0))
        );
    }
);

both!(
    lock_invalidate_and_expiry_move_codes_only_from_allowed_states,
    |app| {
        let api = gift(&app).await;
        api.import_codes(
            "GIFT",
            "c.csv",
            "code,expires_at\nL-1,\nL-2,\nL-3,\nL-4,2099-01-01\n",
            "valid",
        )
        .await;
        let merchant = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, "acme")
            .await
            .unwrap();
        let actor = sellable::domain::Actor::system("test");
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM codes ORDER BY id")
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
        use sellable::domain::codes::{move_code, OpsMove};
        // Sell L-1 (whichever code the order gets): reserve and confirm the only unlocked one.
        for id in &ids[1..] {
            move_code(&app.db, &actor, merchant, *id, OpsMove::Lock)
                .await
                .unwrap();
        }
        api.post(
            "/api/v1/reservations",
            json!({"order_id": "o", "items": [{"sku": "GIFT", "qty": 1}]}),
        )
        .await;
        api.post("/api/v1/reservations/o/confirm", json!({})).await;
        let sold = ids[0];
        for mv in [OpsMove::Lock, OpsMove::Unlock, OpsMove::Invalidate] {
            let e = move_code(&app.db, &actor, merchant, sold, mv)
                .await
                .unwrap_err();
            assert_eq!(e.code(), "code_state", "SOLD never moves");
        }
        assert!(
            move_code(&app.db, &actor, merchant, ids[1], OpsMove::Lock)
                .await
                .is_err(),
            "already LOCKED"
        );
        assert!(
            move_code(&app.db, &actor, merchant, ids[1], OpsMove::Invalidate)
                .await
                .is_err(),
            "INVALID only from AVAILABLE"
        );
        move_code(&app.db, &actor, merchant, ids[1], OpsMove::Unlock)
            .await
            .unwrap();
        move_code(&app.db, &actor, merchant, ids[1], OpsMove::Invalidate)
            .await
            .unwrap();
        assert!(
            move_code(&app.db, &actor, merchant, ids[1], OpsMove::Unlock)
                .await
                .is_err(),
            "INVALID stays"
        );
        // Expiry: only AVAILABLE codes past their date.
        move_code(&app.db, &actor, merchant, ids[2], OpsMove::Unlock)
            .await
            .unwrap();
        let past = app.now_ms() - 1000;
        sqlx::query("UPDATE codes SET expires_at = $1")
            .bind(past)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let n = sellable::domain::codes::expire_due(&app.db).await.unwrap();
        assert_eq!(n, 1, "only the AVAILABLE one expires");
        let statuses: Vec<String> = sqlx::query_scalar("SELECT status FROM codes ORDER BY id")
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(statuses, ["SOLD", "INVALID", "EXPIRED", "LOCKED"]);
        assert_eq!(
            sellable::domain::codes::expire_due(&app.db).await.unwrap(),
            0,
            "running twice changes nothing"
        );
        let n = sellable::domain::codes::move_batch(
            &app.db,
            &actor,
            merchant,
            sqlx::query_scalar("SELECT id FROM code_batches")
                .fetch_one(&app.db.pool)
                .await
                .unwrap(),
            OpsMove::Unlock,
        )
        .await
        .unwrap();
        assert_eq!(n, 1);
    }
);

both!(the_database_never_holds_a_code_in_plain_text, |app| {
    let api = gift(&app).await;
    let canary = "PLAINTEXT-CANARY-7Q4Z";
    api.import_codes(
        "GIFT",
        "canary.txt",
        &format!("{canary}\nOTHER-CODE-1\n{canary}\n"),
        "valid",
    )
    .await;
    api.post(
        "/api/v1/reservations",
        json!({"order_id": "c1", "items": [{"sku": "GIFT", "qty": 2}]}),
    )
    .await;
    let (_, b) = api.post("/api/v1/reservations/c1/confirm", json!({})).await;
    assert!(b.to_string().contains(canary), "the buyer gets the code");
    let merchant = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, "acme")
        .await
        .unwrap();
    let id: i64 = sqlx::query_scalar("SELECT id FROM codes ORDER BY id LIMIT 1")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let keys = sellable::domain::kernel::code_keys::CodeKeys::load(&app.dir.join("code-keys.json"))
        .unwrap()
        .0;
    let shown = sellable::domain::codes::reveal(
        &app.db,
        &keys,
        &sellable::domain::Actor::system("test"),
        merchant,
        id,
    )
    .await
    .unwrap();
    assert_eq!(shown, canary);
    match app.backend {
        crate::helpers::Backend::Sqlite => {
            sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&app.db.pool)
                .await
                .unwrap();
            for entry in std::fs::read_dir(&app.dir).unwrap() {
                let path = entry.unwrap().path();
                if path.to_string_lossy().contains("sellable.db") {
                    let bytes = std::fs::read(&path).unwrap();
                    assert!(
                        !bytes.windows(canary.len()).any(|w| w == canary.as_bytes()),
                        "plaintext in {}",
                        path.display()
                    );
                }
            }
        }
        crate::helpers::Backend::Postgres => {
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'",
            )
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
            assert!(tables.len() > 10);
            for t in tables {
                let rows: Vec<String> =
                    sqlx::query_scalar(&format!("SELECT CAST(t AS TEXT) FROM {t} t"))
                        .fetch_all(&app.db.pool)
                        .await
                        .unwrap();
                assert!(
                    !rows.iter().any(|r| r.contains(canary)),
                    "plaintext in table {t}"
                );
            }
        }
    }
});

both!(
    an_import_that_dies_half_way_is_failed_with_nothing_on_sale,
    |app| {
        let api = gift(&app).await;
        let sku = sellable::domain::codes::voucher_sku(
            &app.db,
            sellable::domain::MerchantId(1),
            "GIFT",
            "sku",
        )
        .await
        .unwrap();
        let keys =
            sellable::domain::kernel::code_keys::CodeKeys::load(&app.dir.join("code-keys.json"))
                .unwrap()
                .0;
        let nb = sellable::domain::codes::import::NewBatch {
            name: "crashed".into(),
            mode: "valid".into(),
            expires_at: None,
            generated: false,
            size: 10,
            user_id: None,
            allowed: sellable::domain::codes::import::Allowed::Any,
        };
        let batch = sellable::domain::codes::import::create_batch(
            &app.db,
            &keys,
            &sellable::domain::Actor::system("test"),
            &sku,
            nb,
        )
        .await
        .unwrap();
        // What a half-done import leaves: a stored code and no heartbeat since.
        let (ct, nonce) = keys.encrypt(sku.merchant_id, "HALF-DONE").unwrap();
        sqlx::query("INSERT INTO codes (merchant_id, batch_id, sku_id, ciphertext, nonce, key_version, code_hash, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 1, $6, 'AVAILABLE', 0, 0)")
        .bind(sku.merchant_id)
        .bind(batch.id)
        .bind(sku.id)
        .bind(ct)
        .bind(nonce)
        .bind(keys.hash(sku.merchant_id, "HALF-DONE").to_vec())
        .execute(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(
            summary(&api, "GIFT").await["sellable"],
            0,
            "a pending code is not for sale"
        );
        assert_eq!(
            sellable::domain::codes::fail_abandoned(&app.db, 60_000)
                .await
                .unwrap(),
            0,
            "a live import is left alone"
        );
        assert_eq!(
            sellable::domain::codes::fail_abandoned(&app.db, -1)
                .await
                .unwrap(),
            1
        );
        let (_, b) = api.get(&format!("/api/v1/code-batches/{}", batch.id)).await;
        assert_eq!(b["status"], "FAILED");
        assert!(b["failure"].as_str().unwrap().contains("server restarted"));
        assert_eq!(app.count("codes").await, 0);
        // Its `code_batch.created` gets its end, as an import that fails by itself.
        let (s, b) = api
            .get("/api/v1/events?types=code_batch.created,code_batch.failed")
            .await;
        assert_eq!(s, 200, "{b}");
        let types: Vec<&str> = b["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, ["code_batch.created", "code_batch.failed"], "{b}");
        assert_eq!(b["events"][1]["subject"]["sku"], "GIFT");
        assert_eq!(b["events"][1]["data"]["after"], "FAILED");
    }
);

/// GIFT with codes G-1 … G-n imported, and order "paid" confirmed holding `qty` of them.
pub(crate) async fn paid_gift(app: &TestApp, n: usize, qty: i64) -> (Api, Vec<String>) {
    let api = gift(app).await;
    let text: String = (1..=n).map(|i| format!("G-{i}\n")).collect();
    api.import_codes("GIFT", "g.txt", &text, "valid").await;
    let (s, b) = api
        .reserve("paid", json!([{"sku": "GIFT", "qty": qty}]))
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = api
        .post(
            "/api/v1/reservations/paid/confirm",
            json!({"payment_ref": "PAY-G"}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let codes = b["items"][0]["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    (api, codes)
}

async fn code_lines_reconcile(app: &TestApp) {
    let report =
        sellable::domain::reconcile::run(&app.db, "job", &sellable::domain::Actor::system("test"))
            .await
            .unwrap();
    assert!(report.broken.is_empty(), "{:?}", report.broken);
}

both!(
    a_sold_code_is_redeemed_once_and_voided_or_unsold_codes_are_refused_by_state,
    |app| {
        let (api, codes) = paid_gift(&app, 3, 1).await;
        let code = &codes[0];
        // Typed as a person reads it out: spaces do not count, lower case is found.
        let typed = format!(" {} ", code.to_lowercase().replace('-', "- "));
        let (s, b) = api
            .post(
                "/api/v1/codes/redeem",
                json!({"code": typed, "store": "main-store"}),
            )
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("REDEEMED")), "{b}");
        assert_eq!(
            (
                b["sku"].as_str(),
                b["store"].as_str(),
                b["order_id"].as_str()
            ),
            (Some("GIFT"), Some("main-store"), Some("paid"))
        );
        assert!(b.get("code").is_none(), "the answer never carries the code");
        let (s, b) = api
            .post("/api/v1/codes/redeem", json!({"code": code}))
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("code_already_redeemed")),
            "{b}"
        );
        assert!(b["redeemed_at"].as_str().is_some());
        assert_eq!(b["store"], "main-store");
        assert!(
            !b.to_string().contains(code.as_str()),
            "no error repeats the code"
        );
        let unsold = (1..=3)
            .map(|i| format!("G-{i}"))
            .find(|c| c != code)
            .unwrap();
        let (s, b) = api
            .post("/api/v1/codes/redeem", json!({"code": unsold}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("code_not_sold")));
        let (s, b) = api
            .post("/api/v1/codes/redeem", json!({"code": "NOPE-1"}))
            .await;
        assert_eq!((s, b["error"].as_str()), (404, Some("not_found")));
        let (s, b) = api
            .post(
                "/api/v1/codes/redeem",
                json!({"code": code, "store": "elsewhere"}),
            )
            .await;
        assert_eq!(
            (s, b["fields"][0]["code"].as_str()),
            (422, Some("unknown_store"))
        );
        // The order still shows the redeemed code; the summary counts it.
        let (_, order) = api.get("/api/v1/reservations/paid").await;
        assert_eq!(order["items"][0]["codes"], json!([code]));
        let s = summary(&api, "GIFT").await;
        assert_eq!(
            (s["counts"]["REDEEMED"].as_i64(), s["sellable"].as_i64()),
            (Some(1), Some(2))
        );
        code_lines_reconcile(&app).await;
    }
);

both!(
    void_and_reissue_never_put_a_sold_code_back_on_sale_and_reissue_gives_the_order_a_new_one,
    |app| {
        let (api, codes) = paid_gift(&app, 4, 2).await;
        let (first, second) = (&codes[0], &codes[1]);
        // A reason is required, and the code must be the order's.
        let (s, b) = api
            .post(
                "/api/v1/reservations/paid/codes/void",
                json!({"code": first}),
            )
            .await;
        assert_eq!((s, b["fields"][0]["field"].as_str()), (422, Some("reason")));
        let other = (1..=4)
            .map(|i| format!("G-{i}"))
            .find(|c| !codes.contains(c))
            .unwrap();
        let (s, _) = api
            .post(
                "/api/v1/reservations/paid/codes/void",
                json!({"code": other, "reason": "x"}),
            )
            .await;
        assert_eq!(s, 404);
        let (s, b) = api
            .post(
                "/api/v1/reservations/paid/codes/void",
                json!({"code": first, "reason": "refunded"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(
            b["items"][0]["codes"],
            json!([second]),
            "a voided code is no longer the order's"
        );
        let (s, b) = api
            .post("/api/v1/codes/redeem", json!({"code": first}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("code_voided")));
        let (s, b) = api
            .post(
                "/api/v1/reservations/paid/codes/void",
                json!({"code": first, "reason": "again"}),
            )
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("code_voided")));
        // Reissue: the second code is voided and the line gets a new one, in one go.
        let (s, b) = api
            .post(
                "/api/v1/reservations/paid/codes/reissue",
                json!({"code": second, "reason": "leaked"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let now: Vec<String> = b["items"][0]["codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        assert_eq!(now.len(), 1);
        assert!(!codes.contains(&now[0]), "a new code: {now:?}");
        let s = summary(&api, "GIFT").await;
        assert_eq!(
            (
                s["counts"]["VOIDED"].as_i64(),
                s["counts"]["SOLD"].as_i64(),
                s["sellable"].as_i64()
            ),
            (Some(2), Some(1), Some(1))
        );
        // A reissue with no code left refuses and voids nothing.
        api.reserve("rest", json!([{"sku": "GIFT", "qty": 1}]))
            .await;
        let (s, b) = api
            .post(
                "/api/v1/reservations/paid/codes/reissue",
                json!({"code": now[0], "reason": "again"}),
            )
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("insufficient_stock")),
            "{b}"
        );
        let (_, order) = api.get("/api/v1/reservations/paid").await;
        assert_eq!(order["items"][0]["codes"], json!([now[0]]));
        // The code's history is kept, without its text.
        let events: Vec<(String, String)> =
            sqlx::query_as("SELECT action, reason FROM code_events ORDER BY id")
                .fetch_all(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(
            events,
            [
                ("VOIDED".into(), "refunded".into()),
                ("REISSUED".into(), "leaked".into())
            ]
        );
        let audit: Vec<String> =
            sqlx::query_scalar("SELECT detail FROM audit_log WHERE action LIKE 'code.%'")
                .fetch_all(&app.db.pool)
                .await
                .unwrap();
        for d in &audit {
            for c in codes.iter().chain(&now) {
                assert!(!d.contains(c.as_str()), "audit holds a code: {d}");
            }
        }
        code_lines_reconcile(&app).await;
    }
);

both!(
    two_counters_redeeming_one_code_at_once_redeem_it_once,
    |app| {
        let (api, codes) = paid_gift(&app, 2, 1).await;
        let code = codes[0].clone();
        let answers = futures_util::future::join_all((0..8).map(|_| {
            let (api, code) = (api.clone(), code.clone());
            async move {
                api.post("/api/v1/codes/redeem", json!({"code": code}))
                    .await
            }
        }))
        .await;
        let ok = answers.iter().filter(|(s, _)| *s == 200).count();
        let again = answers
            .iter()
            .filter(|(s, b)| *s == 409 && b["error"] == "code_already_redeemed")
            .count();
        assert_eq!((ok, again), (1, 7), "{answers:?}");
        let events: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM code_events WHERE action = 'REDEEMED'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(events, 1);
    }
);

both!(
    an_order_system_locks_unlocks_and_invalidates_a_code_by_its_id_with_a_reason_kept_in_its_history,
    |app| {
        let api = app.acme_api().await;
        api.product("voucher", "GIFT").await;
        api.import_codes("GIFT", "codes.txt", "LOCK-ME-0001\nKEEP-ME-0002\n", "valid").await;
        let id: i64 = sqlx::query_scalar("SELECT MIN(id) FROM codes")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let (s, b) = api
            .post(&format!("/api/v1/codes/{id}/lock"), json!({"reason": " "}))
            .await;
        assert_eq!((s, b["fields"][0]["code"].as_str()), (422, Some("required")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/codes/{id}/lock"), json!({"reason": "suspected leak"}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("LOCKED")), "{b}");
        // Locked twice is refused by its state, and says which.
        let (s, b) = api
            .post(&format!("/api/v1/codes/{id}/lock"), json!({"reason": "again"}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("code_state")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/codes/{id}/unlock"), json!({"reason": "false alarm"}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("AVAILABLE")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/codes/{id}/invalidate"), json!({"reason": "printed wrong"}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("INVALID")), "{b}");
        let reasons: Vec<String> =
            sqlx::query_scalar("SELECT reason FROM code_events WHERE code_id = $1 ORDER BY id")
                .bind(id)
                .fetch_all(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(reasons, ["suspected leak", "false alarm", "printed wrong"]);
        // The code never appears in an answer; another merchant's key finds nothing.
        assert!(!b.to_string().contains("LOCK-ME"));
        let other = app.merchant_api("globex").await;
        let (s, _) = other
            .post(&format!("/api/v1/codes/{id}/lock"), json!({"reason": "x"}))
            .await;
        assert_eq!(s, 404);
        assert_eq!(api.post("/api/v1/codes/abc/lock", json!({"reason": "x"})).await.0, 404);
    }
);

both!(
    codes_generated_by_api_are_given_once_to_the_key_that_asked,
    |app| {
        let api = gift(&app).await;
        let (s, b) = api
            .post(
                "/api/v1/code-batches/generate",
                json!({"sku": "GIFT", "count": 50, "length": 12}),
            )
            .await;
        assert_eq!(s, 202, "{b}");
        let id = b["batch_id"].as_i64().unwrap();
        let done = api.batch_done(id).await;
        assert_eq!(
            (&done["status"], &done["imported"]),
            (&json!("READY"), &json!(50)),
            "{done}"
        );
        assert_eq!(done["source"], "GENERATED");
        // Another key of the same merchant may not take them.
        let other = crate::helpers::Api {
            base: api.base.clone(),
            key: app.api_key("acme").await,
            http: reqwest::Client::new(),
            clock: app.db.clock.clone(),
        };
        let (s, b) = other
            .post(&format!("/api/v1/code-batches/{id}/download"), json!({}))
            .await;
        assert_eq!((s, &b["error"]), (403, &json!("forbidden")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/code-batches/{id}/download"), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        let codes: Vec<&str> = b["codes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(codes.len(), 50);
        assert!(codes.iter().all(|c| c.len() == 12), "{codes:?}");
        let unique: std::collections::HashSet<_> = codes.iter().collect();
        assert_eq!(unique.len(), 50);
        assert!(
            codes.iter().all(|c| !c.contains(['0', 'O', '1', 'I'])),
            "unambiguous by default: {codes:?}"
        );
        let (s, b) = api
            .post(&format!("/api/v1/code-batches/{id}/download"), json!({}))
            .await;
        assert_eq!((s, &b["error"]), (409, &json!("already_downloaded")), "{b}");
        let (s, b) = api
            .post(
                "/api/v1/code-batches/generate",
                json!({"sku": "GIFT", "count": 0, "length": 5, "alphabet": "emoji"}),
            )
            .await;
        assert_eq!(s, 422, "{b}");
        let fields: Vec<&str> = b["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["field"].as_str().unwrap())
            .collect();
        assert_eq!(fields, ["count", "length", "alphabet"], "{b}");
    }
);

/// Posts a multipart form of one's own making to the upload endpoint.
async fn post_upload(
    app: &TestApp,
    api: &Api,
    form: reqwest::multipart::Form,
) -> reqwest::Response {
    app.client()
        .post(format!("{}/api/v1/code-batches", api.base))
        .bearer_auth(&api.key)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

both!(
    an_import_reports_blank_lines_codes_stored_without_spaces_and_refuses_characters_outside_its_rule,
    |app| {
        let api = gift(&app).await;
        // Line 2 and 5 blank, line 3 typed with spaces, line 6 has a character outside the rule.
        let text = "AB-12\n\nCD 34 EF\nGH-56\n   \nIJ_78\n";
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .text("mode", "valid")
            .text("allowed", "alnum_dash")
            .part(
                "file",
                reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name("c.txt"),
            );
        let r = post_upload(&app, &api, form).await;
        assert_eq!(r.status(), 202);
        let id = r.json::<Value>().await.unwrap()["batch_id"].as_i64().unwrap();
        let b = api.batch_done(id).await;
        assert_eq!(
            (
                b["status"].as_str(),
                b["imported"].as_i64(),
                b["rejected"].as_i64(),
                b["read"].as_i64()
            ),
            (Some("PARTIAL"), Some(3), Some(1), Some(4)),
            "{b}"
        );
        assert_eq!(b["blank_lines"].as_i64(), Some(2), "{b}");
        assert_eq!(b["normalised"].as_i64(), Some(1), "{b}");
        assert_eq!(b["normalised_lines"], json!([3]));
        assert_eq!(b["allowed"], "alnum_dash");
        let errs = errors(&b);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].0, 6);
        assert!(!errs[0].1.contains("IJ_78"), "an error never repeats the code");
        // The refused line stored nothing.
        let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM codes WHERE batch_id = $1")
            .bind(id)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(stored, 3);
        // An unknown rule is refused before anything is read, with its field named.
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .text("allowed", "emoji")
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"ZZ-1\n".to_vec()).file_name("c.txt"),
            );
        let r = post_upload(&app, &api, form).await;
        assert_eq!(r.status(), 422);
        let b: Value = r.json().await.unwrap();
        assert_eq!(crate::helpers::field_codes(&b), ["allowed:invalid_allowed"], "{b}");
    }
);

both!(
    a_multipart_text_part_past_its_small_limit_is_refused_while_it_streams_in_the_api_and_the_back_office,
    |app| {
        let api = gift(&app).await;
        // 4 KB is the most a text part holds; one byte more is refused, whatever follows it.
        let long = "n".repeat(sellable::web::kit::uploads::MAX_TEXT_PART + 1);
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .text("name", long)
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"A1\n".to_vec()).file_name("c.txt"),
            );
        let r = api
            .http
            .post(format!("{}/api/v1/code-batches", api.base))
            .bearer_auth(&api.key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 413);
        let b: Value = r.json().await.unwrap();
        assert_eq!(b["error"], "payload_too_large", "{b}");
        // A name at the limit is taken.
        let at = "n".repeat(sellable::web::kit::uploads::MAX_TEXT_PART);
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .text("name", at.clone())
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"A1\n".to_vec()).file_name("c.txt"),
            );
        let r = api
            .http
            .post(format!("{}/api/v1/code-batches", api.base))
            .bearer_auth(&api.key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        // Past the streaming limit the name is judged as a field (its own length rule).
        assert_ne!(r.status(), 413);
        assert!(app.count("code_batches").await <= 1);
        // The back office's stock sheet: its `kind` part is a text part too.
        let c = app.signed_in("merchant_admin", Some("acme")).await;
        let form = reqwest::multipart::Form::new()
            .text("kind", "k".repeat(8 * 1024))
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"sku,qty\n".to_vec()).file_name("s.csv"),
            );
        let r = c
            .post(app.url("/admin/stock/import"))
            .multipart(form)
            .send()
            .await
            .unwrap();
        let status = r.status();
        let body = r.text().await.unwrap();
        let page = crate::helpers::Html::parse(&body);
        assert_eq!(status, 422);
        assert_eq!(page.count("[data-field=file]"), 1, "{body}");
        assert_eq!(
            page.text("[data-field=file]"),
            sellable::messages::text_part_too_long(4)
        );
    }
);
