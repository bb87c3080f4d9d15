//! Stock adjustment reasons (issue 20): a code from a fixed list beside the free note, kept on
//! the ledger row, filtered by, and refused when unknown or when it does not fit the kind.

use serde_json::json;

use crate::both;
use crate::helpers::{field_codes, Api};

async fn adjust(api: &Api, body: serde_json::Value) -> (u16, serde_json::Value) {
    api.post("/api/v1/stock/adjustments", body).await
}

both!(
    an_adjustment_keeps_its_reason_code_the_ledger_filters_by_it_and_a_code_that_does_not_fit_is_refused,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        let body = |kind: &str, qty: i64, code: &str, note: &str, key: &str| {
            json!({"sku": "TEA", "warehouse": "main", "kind": kind, "qty": qty,
                   "reason_code": code, "reason": note, "idempotency_key": key})
        };
        // A code that says why needs no note; `other` does.
        let (s, b) = adjust(&api, body("RECEIVE", 10, "received", "", "r-1")).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = adjust(&api, body("WRITE_OFF", 2, "damaged", "cracked in transit", "w-1")).await;
        assert_eq!(s, 201, "{b}");
        let before = api.stock("TEA").await;
        for (b, field) in [
            (body("RECEIVE", 1, "damaged", "", "x-1"), "reason_code:reason_code_mismatch"),
            (body("RECEIVE", 1, "bogus", "note", "x-2"), "reason_code:invalid_reason_code"),
            (body("WRITE_OFF", 1, "other", "", "x-3"), "reason:required"),
            (body("WRITE_OFF", 1, "", "", "x-4"), "reason:required"),
        ] {
            let (s, r) = adjust(&api, b).await;
            assert_eq!(s, 422, "{r}");
            assert_eq!(field_codes(&r), [field], "{r}");
        }
        assert_eq!(api.stock("TEA").await, before, "a refusal changes nothing");
        // The ledger keeps the code and filters by it.
        let (s, b) = api.get("/api/v1/skus/TEA/ledger?reason_code=damaged").await;
        assert_eq!(s, 200, "{b}");
        let entries = b["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "{b}");
        assert_eq!(
            (entries[0]["kind"].as_str(), entries[0]["reason_code"].as_str(), entries[0]["reason"].as_str()),
            (Some("WRITE_OFF"), Some("damaged"), Some("cracked in transit"))
        );
        let (s, b) = api.get("/api/v1/skus/TEA/ledger?reason_code=nonsense").await;
        assert_eq!(s, 422, "{b}");
        // In the back office: a hold for quality control with only its reason, then the ledger
        // filtered to holds.
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let sku_id = app.sku_id("TEA").await;
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku_id}/stock/adjustments")))
            .form(&[
                ("kind", "FREEZE"),
                ("warehouse", "main"),
                ("qty", "3"),
                ("reason_code", "qc_hold"),
                ("reason", ""),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app
            .page(&admin, &format!("/admin/skus/{sku_id}/stock?reason_code=qc_hold"))
            .await;
        assert_eq!(page.count("table.ledger tbody tr"), 1);
        assert_eq!(page.count("table.ledger .reason-code[data-code=qc_hold]"), 1);
        // Each task's form offers only the reasons that fit it.
        assert_eq!(
            page.attrs("form.adjust select[name=reason_code] option", "value"),
            ["", "received", "return_restock", "correction", "other"]
        );
        // A form's code that does not fit is shown under the field, and nothing is booked.
        let r = admin
            .post(app.url(&format!("/admin/skus/{sku_id}/stock/adjustments")))
            .form(&[
                ("kind", "RECEIVE"),
                ("warehouse", "main"),
                ("qty", "3"),
                ("reason_code", "theft_loss"),
                ("reason", "x"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = crate::helpers::html(r).await;
        assert_eq!(page.count(".field-error[data-field=reason_code]"), 1);
        assert_eq!(api.stock("TEA").await["available"], 5);
    }
);

both!(
    the_ledger_pages_with_page_numbers_and_a_jump_keeping_its_filter,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        for _ in 0..55 {
            api.receive("TEA", "main", 1).await;
        }
        api.adjust("TEA", "main", "WRITE_OFF", 1).await;
        let id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'TEA'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app
            .page(&admin, &format!("/admin/skus/{id}/stock?kind=RECEIVE"))
            .await;
        assert_eq!(page.count("table.ledger tbody tr"), 50);
        assert_eq!(page.attr("#ledger-rows", "data-n").as_deref(), Some("55"));
        assert_eq!(page.attr("nav.pager", "data-pages").as_deref(), Some("2"));
        assert_eq!(
            page.count("nav.pager form.pager-jump input[name=kind][value=RECEIVE]"),
            1
        );
        let next = page.attr("nav.pager a[rel=next]", "href").unwrap();
        let second = app.page(&admin, &next).await;
        assert_eq!(second.count("table.ledger tbody tr"), 5);
        assert_eq!(
            second.attrs("table.ledger td.kind", "data-kind"),
            vec!["RECEIVE"; 5],
            "the filter rides along"
        );
    }
);
