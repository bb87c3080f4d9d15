//! Vouchers at the counter (issue 54): a redemption undone within its window with a reason
//! (`POST /api/v1/codes/{id}/unredeem`, 409 `undo_window_passed`), and multi-visit passes whose
//! code is good for `uses` visits (`uses_left` after each).

use serde_json::json;

use crate::both;
use crate::codes::paid_gift;
use crate::helpers::{html, TestApp};

async fn code_id(app: &TestApp, order: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM codes WHERE order_id = $1 ORDER BY id LIMIT 1")
        .bind(order)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

both!(
    a_redemption_is_undone_with_a_reason_inside_its_window_and_refused_after_it,
    |app| {
        let (api, codes) = paid_gift(&app, 2, 1).await;
        let code = &codes[0];
        let id = code_id(&app, "paid").await;
        let path = format!("/api/v1/codes/{id}/unredeem");
        // Nothing to undo before it is used.
        let (s, b) = api.post(&path, json!({"reason": "test"})).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("code_not_redeemed")),
            "{b}"
        );
        let (s, b) = api
            .post(
                "/api/v1/codes/redeem",
                json!({"code": code, "store": "main-store"}),
            )
            .await;
        assert_eq!((s, b["uses_left"].as_i64()), (200, Some(0)), "{b}");
        // A reason is required.
        let (s, b) = api.post(&path, json!({"reason": " "})).await;
        assert_eq!(
            (s, b["fields"][0]["code"].as_str()),
            (422, Some("required")),
            "{b}"
        );
        let (s, b) = api
            .post(
                &path,
                json!({"reason": "scanned the wrong customer's code"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(
            (b["status"].as_str(), b["uses_left"].as_i64()),
            (Some("SOLD"), Some(1))
        );
        assert!(
            !b.to_string().contains(code.as_str()),
            "the answer never carries the code"
        );
        // Undone once: the same use cannot be undone twice.
        let (s, b) = api.post(&path, json!({"reason": "again"})).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("code_not_redeemed")),
            "{b}"
        );
        // The code is used again; the history keeps all three, with the reason.
        let (s, b) = api
            .post("/api/v1/codes/redeem", json!({"code": code}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("REDEEMED")), "{b}");
        let actions: Vec<(String, String)> =
            sqlx::query_as("SELECT action, reason FROM code_events WHERE code_id = $1 ORDER BY id")
                .bind(id)
                .fetch_all(&app.db.pool)
                .await
                .unwrap();
        let actions: Vec<&str> = actions.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(actions, ["REDEEMED", "UNREDEEMED", "REDEEMED"]);
        // A use older than the window (30 minutes by default) stays.
        sqlx::query("UPDATE codes SET redeemed_at = redeemed_at - 3600000 WHERE id = $1")
            .bind(id)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let (s, b) = api.post(&path, json!({"reason": "too late"})).await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("undo_window_passed")),
            "{b}"
        );
        assert_eq!(b["window_minutes"].as_i64(), Some(30));
        // Another merchant's key does not find the code.
        let other = app.merchant_api("other").await;
        let (s, _) = other.post(&path, json!({"reason": "x"})).await;
        assert_eq!(s, 404);
        let s = crate::codes::summary(&api, "GIFT").await;
        assert_eq!(s["counts"]["REDEEMED"].as_i64(), Some(1));
        app.assert_reconciled().await;
    }
);

both!(
    a_pass_of_three_visits_is_used_three_times_each_answer_saying_the_uses_left,
    |app| {
        let api = app.acme_api().await;
        api.product("voucher", "PASS").await;
        let (s, b) = api.patch_sku("PASS", json!({"uses": 3})).await;
        assert_eq!((s, b["uses"].as_i64()), (200, Some(3)), "{b}");
        // Only vouchers have uses.
        api.product("service", "CUT").await;
        let (s, b) = api.patch_sku("CUT", json!({"uses": 3})).await;
        assert_eq!(
            (s, b["fields"][0]["code"].as_str()),
            (422, Some("not_applicable")),
            "{b}"
        );
        api.import_codes("PASS", "p.txt", "P-1\nP-2\n", "valid")
            .await;
        let (s, b) = api
            .reserve("pass", json!([{"sku": "PASS", "qty": 1}]))
            .await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = api
            .post(
                "/api/v1/reservations/pass/confirm",
                json!({"payment_ref": "PAY-P"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let code = b["items"][0]["codes"][0].as_str().unwrap().to_string();
        // Sold: the terms are fixed.
        let (s, b) = api.patch_sku("PASS", json!({"uses": 5})).await;
        assert_eq!(
            (s, b["fields"][0]["code"].as_str()),
            (422, Some("uses_fixed")),
            "{b}"
        );
        let mut left = Vec::new();
        for _ in 0..3 {
            let (s, b) = api
                .post("/api/v1/codes/redeem", json!({"code": code}))
                .await;
            assert_eq!(s, 200, "{b}");
            left.push((
                b["status"].as_str().unwrap().to_string(),
                b["uses_left"].as_i64().unwrap(),
            ));
        }
        assert_eq!(
            left,
            [
                ("SOLD".to_string(), 2),
                ("SOLD".to_string(), 1),
                ("REDEEMED".to_string(), 0)
            ]
        );
        let (s, b) = api
            .post("/api/v1/codes/redeem", json!({"code": code}))
            .await;
        assert_eq!(
            (s, b["error"].as_str()),
            (409, Some("code_already_redeemed")),
            "{b}"
        );
        // The last visit undone gives one back.
        let id = code_id(&app, "pass").await;
        let (s, b) = api
            .post(
                &format!("/api/v1/codes/{id}/unredeem"),
                json!({"reason": "counted twice"}),
            )
            .await;
        assert_eq!(
            (s, b["status"].as_str(), b["uses_left"].as_i64()),
            (200, Some("SOLD"), Some(1)),
            "{b}"
        );
        app.assert_reconciled().await;
    }
);

both!(
    staff_undo_a_redemption_at_the_counter_with_a_reason_and_see_the_uses_left,
    |app| {
        let (_api, codes) = paid_gift(&app, 1, 1).await;
        let code = codes[0].clone();
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let post = |form: Vec<(&'static str, String)>| {
            let staff = staff.clone();
            let url = app.url("/admin/counter");
            async move { staff.post(url).form(&form).send().await.unwrap() }
        };
        let r = post(vec![("code", code.clone()), ("action", "redeem".into())]).await;
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        assert_eq!(
            page.attr("#counter-result", "data-state").as_deref(),
            Some("REDEEMED")
        );
        assert_eq!(page.count("form#undo-redeem"), 1);
        // No reason: refused beside the field, nothing undone.
        let r = post(vec![
            ("code", code.clone()),
            ("action", "undo".into()),
            ("reason", "".into()),
        ])
        .await;
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.attr("#counter-refusal", "data-code").as_deref(),
            Some("required")
        );
        let r = post(vec![
            ("code", code.clone()),
            ("action", "undo".into()),
            ("reason", "wrong customer".into()),
        ])
        .await;
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        assert_eq!(
            page.attr("#undone", "data-code").as_deref(),
            Some("unredeemed")
        );
        assert_eq!(
            page.attr("#counter-result", "data-state").as_deref(),
            Some("SOLD")
        );
        assert_eq!(page.count("#redeem"), 1, "it can be redeemed again");
        let who: String =
            sqlx::query_scalar("SELECT actor FROM code_events WHERE action = 'UNREDEEMED'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert!(who.starts_with("user:store_staff-"), "{who}");
    }
);
