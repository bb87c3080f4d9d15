//! The reconciliation pages: the list with its run button, one finding with its corrections and
//! the unfreeze behind a confirmation, and the frozen banners on the SKU and slot pages. A broken
//! identity is made by corrupting a row by hand, as a bad manual edit would.

use chrono::{Duration, TimeZone, Utc};
use chrono_tz::Asia::Shanghai;
use serde_json::{json, Value};

use crate::both;
use crate::helpers::location;
use crate::helpers::{html, Api, TestApp};

/// The page's flash message, not the "degraded" notice that shares its look.
const FLASH: &str = ".flash:not(.degraded)";

async fn sku_id(app: &TestApp, code: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM skus WHERE code = $1")
        .bind(code)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// Adds units to a balance outside the ledger: the ledger no longer replays to it.
async fn corrupt_total(app: &TestApp, sku: i64, by: i64) {
    sqlx::query("UPDATE stock_balances SET total = total + $1 WHERE sku_id = $2")
        .bind(by)
        .bind(sku)
        .execute(&app.db.pool)
        .await
        .unwrap();
}

async fn open_finding_of_sku(app: &TestApp, sku: i64) -> i64 {
    sqlx::query_scalar(
        "SELECT id FROM reconcile_findings WHERE sku_id = $1 AND kind = 'ledger_mismatch' AND status = 'OPEN'",
    )
    .bind(sku)
    .fetch_one(&app.db.pool)
    .await
    .unwrap()
}

async fn finding_status(app: &TestApp, id: i64) -> String {
    sqlx::query_scalar("SELECT status FROM reconcile_findings WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn total_of(app: &TestApp, sku: i64) -> i64 {
    sqlx::query_scalar("SELECT total FROM stock_balances WHERE sku_id = $1")
        .bind(sku)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn reserve(api: &Api, order: &str, sku: &str) -> (u16, Value) {
    api.reserve(order, json!([{"sku": sku, "qty": 1}])).await
}

/// The SKU cache of the reservation path keeps a SKU for two seconds (catalog::sku_by_code), so a
/// freeze reaches it within that; the receive that set up the stock filled the cache.
async fn let_sku_cache_expire() {
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
}

/// Presses "Run reconciliation now" and follows the redirect to the list.
pub(crate) async fn run_from_page(
    app: &TestApp,
    operator: &reqwest::Client,
) -> crate::helpers::Html {
    let r = operator
        .post(app.url("/admin/reconcile/run"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert_eq!(location(&r), "/admin/reconcile");
    html(
        operator
            .get(app.url("/admin/reconcile"))
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Merchant acme with goods SKU TEA (10 units received), whose balance then gains 5 units outside
/// the ledger, and an operator who has run reconciliation from the page.
async fn broken_tea(app: &TestApp) -> (Api, i64, i64, reqwest::Client) {
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    let sku = sku_id(app, "TEA").await;
    corrupt_total(app, sku, 5).await;
    let operator = app.signed_in("operator", None).await;
    run_from_page(app, &operator).await;
    let finding = open_finding_of_sku(app, sku).await;
    (api, sku, finding, operator)
}

both!(
    operator_runs_reconciliation_from_the_page_and_the_broken_sku_is_listed_frozen_and_refused,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let sku = sku_id(&app, "TEA").await;
        corrupt_total(&app, sku, 5).await;
        let operator = app.signed_in("operator", None).await;

        let page = run_from_page(&app, &operator).await;
        assert!(
            page.text(FLASH).contains("1 broken identity"),
            "{}",
            page.text(FLASH)
        );
        assert!(page.text("#open-alert").starts_with("1 broken identity"));
        let finding = open_finding_of_sku(&app, sku).await;
        let row = format!("tr[data-finding=\"{finding}\"]");
        assert_eq!(page.text(&format!("{row} .kind")), "ledger_mismatch");
        assert_eq!(
            page.attr(&format!("{row} a.subject-link"), "href")
                .as_deref(),
            Some(format!("/admin/skus/{sku}/stock").as_str())
        );
        assert_eq!(
            page.text(&format!("{row} .expected")),
            "total 10 locked 0 sold 0 frozen 0"
        );
        assert_eq!(
            page.text(&format!("{row} .found")),
            "total 15 locked 0 sold 0 frozen 0"
        );
        // The run is listed with who started it.
        assert_eq!(page.count("tr[data-run]"), 1);
        assert!(page.text("tr[data-run]").contains("operator"));

        // The SKU's stock page says why it is frozen and links to the finding.
        let stock = html(
            operator
                .get(app.url(&format!("/admin/skus/{sku}/stock")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let banner = stock.text("#frozen-banner");
        assert!(
            banner.starts_with("Frozen by reconciliation: The balance changed outside the ledger"),
            "{banner}"
        );
        assert_eq!(
            stock.attr("#frozen-banner a", "href").as_deref(),
            Some(format!("/admin/reconcile/findings/{finding}").as_str())
        );

        // The dashboard raises the alert.
        let dash = app.page(&operator, "/admin").await;
        assert!(dash
            .text("#reconcile-alert")
            .starts_with("Open reconciliation findings: 1."));

        // Nothing more is sold from it.
        let_sku_cache_expire().await;
        let (s, b) = reserve(&api, "o-frozen", "TEA").await;
        assert_eq!((s, b["error"].as_str()), (422, Some("sku_frozen")), "{b}");
        assert_eq!(api.stock("TEA").await["locked"], 0);
    }
);

both!(
    reconciliation_pages_show_empty_states_before_anything_is_found,
    |app| {
        let operator = app.signed_in("operator", None).await;
        let page = html(
            operator
                .get(app.url("/admin/reconcile"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.count("#open-alert"), 0);
        assert_eq!(page.count("#no-findings"), 1);
        assert_eq!(page.count("#no-runs"), 1);
        assert_eq!(page.count("#run-now button"), 1);
        let dash = app.page(&operator, "/admin").await;
        assert_eq!(dash.count("#reconcile-alert"), 0);
        // A run that finds nothing says so and leaves the findings empty.
        let page = run_from_page(&app, &operator).await;
        assert!(
            page.text(FLASH).contains("no broken identity"),
            "{}",
            page.text(FLASH)
        );
        assert_eq!(page.count("#no-findings"), 1);
        assert_eq!(page.count("tr[data-run]"), 1);
    }
);

both!(
    unfreeze_is_refused_while_still_broken_and_restore_then_unfreeze_makes_the_sku_sellable,
    |app| {
        let (api, sku, finding, operator) = broken_tea(&app).await;
        let base = format!("/admin/reconcile/findings/{finding}");

        // The finding page explains it and offers the corrections and the unfreeze.
        let page = app.page(&operator, &base).await;
        assert!(page
            .text("#explain")
            .starts_with("The balance changed outside the ledger"));
        assert_eq!(page.count("#frozen-state"), 1);
        assert_eq!(page.count("#correct-stock button[name=mode]"), 2);
        assert_eq!(
            page.attr("#unfreeze a", "href").as_deref(),
            Some(format!("{base}/unfreeze").as_str())
        );

        // Unfreezing first: the confirmation page, then a refusal shown on it.
        let confirm = html(
            operator
                .get(app.url(&format!("{base}/unfreeze")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(confirm.text("h1").starts_with("Unfreeze the SKU"));
        let r = operator
            .post(app.url(&format!("{base}/unfreeze")))
            .form(&[("note", "looks fine to me")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let refused = html(r).await;
        assert!(
            refused.text(".form-error").starts_with("Still broken:"),
            "{}",
            refused.text(".form-error")
        );
        assert_eq!(
            refused.attr("input[name=note]", "value").as_deref(),
            Some("looks fine to me")
        );
        assert_eq!(finding_status(&app, finding).await, "OPEN");

        // A correction needs a reason.
        let r = operator
            .post(app.url(&format!("{base}/correct")))
            .form(&[("mode", "restore"), ("reason", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r)
                .await
                .count("#correct-stock .field-error[data-field=reason]"),
            1
        );
        assert_eq!(total_of(&app, sku).await, 15);

        // Restore: the balance goes back to the ledger, which records both moves.
        let r = operator
            .post(app.url(&format!("{base}/correct")))
            .form(&[("mode", "restore"), ("reason", "manual edit by mistake")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), base);
        let page = app.page(&operator, &base).await;
        assert!(page.text(FLASH).starts_with("Balance restored"));
        assert_eq!(page.text("#balance-now"), "10 / 0 / 0 / 0");
        assert_eq!(total_of(&app, sku).await, 10);
        app.assert_ledger_replays().await;
        // Still frozen until someone unfreezes.
        let_sku_cache_expire().await;
        assert_eq!(reserve(&api, "o-early", "TEA").await.0, 422);

        // The note is required, then the unfreeze goes through.
        let r = operator
            .post(app.url(&format!("{base}/unfreeze")))
            .form(&[("note", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(html(r).await.count(".field-error[data-field=note]"), 1);
        let r = operator
            .post(app.url(&format!("{base}/unfreeze")))
            .form(&[("note", "restored and counted")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&operator, &base).await;
        assert_eq!(
            page.text(FLASH),
            format!("Finding #{finding} resolved. The SKU is sellable again.")
        );
        assert_eq!(page.text("#resolution"), "restored and counted");
        assert_eq!(page.count("#unfreeze"), 0);
        assert_eq!(finding_status(&app, finding).await, "RESOLVED");
        let stock = html(
            operator
                .get(app.url(&format!("/admin/skus/{sku}/stock")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(stock.count("#frozen-banner"), 0);

        let (s, b) = reserve(&api, "o-after", "TEA").await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(api.stock("TEA").await["available"], 9);
        app.assert_ledger_replays().await;
        // The list keeps it, resolved.
        let list = html(
            operator
                .get(app.url("/admin/reconcile?status=RESOLVED"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            list.count(&format!("tr[data-finding=\"{finding}\"].finding-RESOLVED")),
            1
        );
        assert_eq!(list.count("#open-alert"), 0);
    }
);

both!(
    accept_keeps_the_corrupted_balance_and_books_the_difference_in_the_ledger,
    |app| {
        let (api, sku, finding, operator) = broken_tea(&app).await;
        let base = format!("/admin/reconcile/findings/{finding}");
        let r = operator
            .post(app.url(&format!("{base}/correct")))
            .form(&[("mode", "accept"), ("reason", "warehouse count found 15")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(total_of(&app, sku).await, 15);
        app.assert_ledger_replays().await;
        let r = operator
            .post(app.url(&format!("{base}/unfreeze")))
            .form(&[("note", "count confirmed")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let (s, b) = reserve(&api, "o-1", "TEA").await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(api.stock("TEA").await["available"], 14);
    }
);

both!(
    an_unknown_correction_mode_is_refused_inline_and_changes_nothing,
    |app| {
        let (_, sku, finding, operator) = broken_tea(&app).await;
        let r = operator
            .post(app.url(&format!("/admin/reconcile/findings/{finding}/correct")))
            .form(&[("mode", "delete"), ("reason", "why not")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert!(page.text("#correct-stock .form-error").contains("mode"));
        assert_eq!(
            page.attr("#correct-stock input[name=reason]", "value")
                .as_deref(),
            Some("why not")
        );
        assert_eq!(total_of(&app, sku).await, 15);
        assert_eq!(finding_status(&app, finding).await, "OPEN");
    }
);

both!(
    store_staff_are_refused_the_reconciliation_pages_and_only_operators_run_it,
    |app| {
        let (_, _, finding, _) = broken_tea(&app).await;
        let staff = app.signed_in("store_staff", Some("acme")).await;
        for path in [
            "/admin/reconcile".to_string(),
            format!("/admin/reconcile/findings/{finding}"),
            format!("/admin/reconcile/findings/{finding}/unfreeze"),
        ] {
            let r = staff.get(app.url(&path)).send().await.unwrap();
            assert_eq!(r.status(), 403, "{path}");
        }
        let r = staff
            .post(app.url(&format!("/admin/reconcile/findings/{finding}/unfreeze")))
            .form(&[("note", "x")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        let dash = app.page(&staff, "/admin").await;
        assert_eq!(dash.count("a[href=\"/admin/reconcile\"]"), 0);
        assert_eq!(dash.count("#reconcile-alert"), 0);

        // Merchant admins see the page but do not start runs (a run covers every merchant).
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin/reconcile").await;
        assert_eq!(page.count("#run-now"), 0);
        assert_eq!(page.count("tr[data-run]"), 0);
        assert_eq!(page.count("nav.mainnav a[href=\"/admin/reconcile\"]"), 1);
        let r = admin
            .post(app.url("/admin/reconcile/run"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        assert_eq!(app.count("reconcile_runs").await, 1);
    }
);

both!(
    a_merchant_admin_sees_only_their_own_merchants_findings_and_only_operators_resolve_them,
    |app| {
        let (_, acme_sku, acme_finding, operator) = broken_tea(&app).await;
        app.merchant("globex").await;
        let globex = Api {
            base: app.base.clone(),
            key: app.api_key("globex").await,
            http: reqwest::Client::new(),
            clock: app.db.clock.clone(),
        };
        globex.product("goods", "GLOBEX-TEA").await;
        globex.receive("GLOBEX-TEA", "main", 3).await;
        let globex_sku = sku_id(&app, "GLOBEX-TEA").await;
        corrupt_total(&app, globex_sku, 1).await;
        run_from_page(&app, &operator).await;
        let globex_finding = open_finding_of_sku(&app, globex_sku).await;

        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, "/admin/reconcile").await;
        assert_eq!(
            page.count(&format!("tr[data-finding=\"{acme_finding}\"]")),
            1
        );
        assert_eq!(
            page.count(&format!("tr[data-finding=\"{globex_finding}\"]")),
            0
        );
        assert!(page.text("#open-alert").starts_with("1 broken identity"));
        let dash = app.page(&admin, "/admin").await;
        assert!(dash
            .text("#reconcile-alert")
            .starts_with("Open reconciliation findings: 1."));
        // Another merchant's finding does not exist for them, to read or to change.
        let other = format!("/admin/reconcile/findings/{globex_finding}");
        assert_eq!(
            admin.get(app.url(&other)).send().await.unwrap().status(),
            404
        );
        let r = admin
            .post(app.url(&format!("{other}/correct")))
            .form(&[("mode", "restore"), ("reason", "not mine")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(total_of(&app, globex_sku).await, 4);
        // Their own they read, without the forms to resolve it: correcting and unfreezing are
        // the operators' (README, "Reconciliation"), and a post anyway is refused and changes nothing.
        let own = format!("/admin/reconcile/findings/{acme_finding}");
        let page = app.page(&admin, &own).await;
        assert_eq!(page.count("form[action$=\"/correct\"]"), 0);
        for (action, form) in [
            ("correct", [("mode", "restore"), ("reason", "our mistake")]),
            ("unfreeze", [("note", "looks fine"), ("reason", "")]),
        ] {
            let r = admin
                .post(app.url(&format!("{own}/{action}")))
                .form(&form)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 403, "{action}");
        }
        assert_eq!(total_of(&app, acme_sku).await, 15, "still as corrupted");
        let r = operator
            .post(app.url(&format!("{own}/correct")))
            .form(&[("mode", "restore"), ("reason", "their mistake")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(total_of(&app, acme_sku).await, 10);

        // The operator sees both.
        let page = html(
            operator
                .get(app.url("/admin/reconcile"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(page.text("#open-alert").starts_with("2 broken identities"));
    }
);

/// A one-off slot of service CUT two days ahead, 10:00 in the store's timezone, with one booking.
async fn booked_slot(api: &Api) -> i64 {
    api.product("service", "CUT").await;
    let day = api.now().with_timezone(&Shanghai).date_naive() + Duration::days(2);
    let at = |h: u32| {
        Shanghai
            .from_local_datetime(&day.and_hms_opt(h, 0, 0).unwrap())
            .unwrap()
            .with_timezone(&Utc)
            .to_rfc3339()
    };
    let (s, b) = api
        .post(
            "/api/v1/slots",
            json!({"sku": "CUT", "starts_at": at(10), "ends_at": at(11), "capacity": 3}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let slot = b["id"].as_i64().unwrap();
    api.book(slot, "Li Lei", "13800000001", None).await;
    slot
}

both!(
    a_slot_whose_booked_count_drifted_is_frozen_with_a_banner_corrected_and_unfrozen,
    |app| {
        let api = app.acme_api().await;
        let slot = booked_slot(&api).await;
        sqlx::query("UPDATE slots SET booked = booked + 1 WHERE id = $1")
            .bind(slot)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let operator = app.signed_in("operator", None).await;
        run_from_page(&app, &operator).await;
        let finding: i64 = sqlx::query_scalar(
            "SELECT id FROM reconcile_findings WHERE slot_id = $1 AND kind = 'booked_mismatch'",
        )
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();

        let page = html(
            operator
                .get(app.url(&format!("/admin/slots/{slot}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(page
            .text("#frozen-banner")
            .starts_with("Frozen by reconciliation: The slot's booked count differs"));
        assert_eq!(
            page.attr("#frozen-banner a", "href").as_deref(),
            Some(format!("/admin/reconcile/findings/{finding}").as_str())
        );
        let (s, b) = api.book(slot, "Li Lei", "13800000002", None).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_frozen")), "{b}");
        // Customers see it as not available, not as places to take (and not why).
        let store: String = sqlx::query_scalar(
            "SELECT st.public_slug FROM stores st JOIN slots sl ON sl.store_id = st.id WHERE sl.id = $1",
        )
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let day = app.now().with_timezone(&Shanghai).date_naive() + Duration::days(2);
        let public = html(
            app.client()
                .get(app.url(&format!("/book/{store}?service=CUT&day={day}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            public.text(&format!("[data-slot='{slot}'] .places")),
            "not available"
        );

        let base = format!("/admin/reconcile/findings/{finding}");
        let r = operator
            .post(app.url(&format!("{base}/correct-slot")))
            .form(&[("reason", "double-counted booking")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let booked: i64 = sqlx::query_scalar("SELECT booked FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(booked, 1);
        let r = operator
            .post(app.url(&format!("{base}/unfreeze")))
            .form(&[("note", "booked count fixed")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = html(
            operator
                .get(app.url(&format!("/admin/slots/{slot}")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.count("#frozen-banner"), 0);
        let (s, b) = api.book(slot, "Li Lei", "13800000002", None).await;
        assert_eq!(s, 201, "{b}");
    }
);
