//! The back-office pages for codes: a SKU's codes page with upload and generate, a batch's page
//! with its progress, errors, codes and ops moves, reveal, the one-time download, and look-up.
//! Data is made through the JSON API; the pages are read as parsed HTML.

use std::time::Duration;

use serde_json::json;

use crate::both;
use crate::helpers::location;
use crate::helpers::{html, Api, Html, TestApp};

async fn gift(app: &TestApp) -> Api {
    let api = app.acme_api().await;
    api.product("voucher", "GIFT").await;
    api
}

async fn upload(
    app: &TestApp,
    client: &reqwest::Client,
    filename: &str,
    text: &str,
    mode: &str,
) -> reqwest::Response {
    let form = reqwest::multipart::Form::new()
        .text("sku", "GIFT")
        .text("mode", mode.to_string())
        .part(
            "file",
            reqwest::multipart::Part::bytes(text.as_bytes().to_vec())
                .file_name(filename.to_string()),
        );
    client
        .post(app.url("/admin/codes/upload"))
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// Asks for the batch page's body as the progress poll does until the batch is no longer
/// CREATING, then returns the whole page.
async fn finished(app: &TestApp, client: &reqwest::Client, path: &str) -> Html {
    for _ in 0..200 {
        let r = client
            .get(app.url(path))
            .header("HX-Request", "true")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body = html(r).await;
        if body.attr("#batch-body", "data-status").as_deref() != Some("CREATING") {
            let r = client.get(app.url(path)).send().await.unwrap();
            assert_eq!(r.status(), 200);
            return html(r).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} did not finish within 10 s");
}

/// Uploads a file as the signed-in admin and returns the batch page's path once imported.
async fn imported(
    app: &TestApp,
    client: &reqwest::Client,
    text: &str,
    mode: &str,
) -> (String, Html) {
    let r = upload(app, client, "codes.txt", text, mode).await;
    assert_eq!(r.status(), 303, "an accepted upload goes to its batch");
    let path = location(&r);
    assert!(path.starts_with("/admin/codes/batches/"), "{path}");
    let page = finished(app, client, &path).await;
    (path, page)
}

async fn code_ids(app: &TestApp) -> Vec<i64> {
    sqlx::query_scalar("SELECT id FROM codes ORDER BY id")
        .fetch_all(&app.db.pool)
        .await
        .unwrap()
}

async fn code_status(app: &TestApp, id: i64) -> String {
    sqlx::query_scalar("SELECT status FROM codes WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// Sells one code of GIFT to an order through the API; returns the plaintext the buyer got.
async fn sell(api: &Api, order: &str) -> String {
    let (s, b) = api
        .post(
            "/api/v1/reservations",
            json!({"order_id": order, "items": [{"sku": "GIFT", "qty": 1}]}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = api
        .post(&format!("/api/v1/reservations/{order}/confirm"), json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    b["items"][0]["codes"][0].as_str().unwrap().to_string()
}

both!(
    an_upload_with_a_bad_line_imports_the_valid_lines_and_numbers_the_error,
    |app| {
        gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let text = "AAA-111-XYZ\nBBB-222-XYZ\nbad\u{7}code\nCCC-333-XYZ\n";
        let (path, page) = imported(&app, &client, text, "valid").await;
        assert_eq!(page.text("#batch-status"), "PARTIAL");
        assert_eq!(page.text("#imported"), "3");
        assert_eq!(page.text("#rejected"), "1");
        assert_eq!(
            page.texts(".import-errors li"),
            vec!["line 3: invalid characters"]
        );
        assert_eq!(page.count("table.codes tbody tr"), 3);
        assert_eq!(
            page.texts("table.codes .code-status"),
            vec!["AVAILABLE", "AVAILABLE", "AVAILABLE"]
        );
        assert_eq!(
            page.text(".tile[data-status=\"AVAILABLE\"] .num"),
            "3",
            "the batch's counts"
        );
        // The finished body is served without a poll: the progress bar is gone.
        assert!(page.attr("#batch-body", "hx-trigger").is_none());
        assert!(page.attr("#batch-progress", "value").is_none());

        let csv_href = page.attr("#errors-csv", "href").unwrap();
        let r = client.get(app.url(&csv_href)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv"));
        assert_eq!(
            r.text().await.unwrap(),
            "line,reason\n3,invalid characters\n"
        );

        // The SKU's page: counts by status and the batch, newest first.
        let r = client
            .get(app.url("/admin/codes?sku=GIFT"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let codes_page = html(r).await;
        assert_eq!(codes_page.text("#sellable"), "3");
        assert_eq!(
            codes_page.text(".tile[data-status=\"AVAILABLE\"] .num"),
            "3"
        );
        let id = path.rsplit('/').next().unwrap();
        let row = format!("table.batches tr[data-batch=\"{id}\"]");
        assert_eq!(codes_page.count(&row), 1);
        assert_eq!(codes_page.text(&format!("{row} .batch-status")), "PARTIAL");
        assert_eq!(
            codes_page.attr(&format!("{row} a"), "href").as_deref(),
            Some(path.as_str())
        );
        let (_, again) = imported(&app, &client, "DDD-444-XYZ\n", "valid").await;
        assert_eq!(again.text("#batch-status"), "READY");
        let r = client.get(app.url("/admin/codes")).send().await.unwrap();
        let ids: Vec<i64> = html(r)
            .await
            .texts("table.batches tbody tr td:first-child")
            .iter()
            .map(|t| t.trim_start_matches('#').parse().unwrap())
            .collect();
        assert_eq!(ids.len(), 2);
        assert!(ids[0] > ids[1], "newest first: {ids:?}");
    }
);

both!(
    all_or_nothing_with_a_bad_line_fails_and_puts_nothing_on_sale,
    |app| {
        gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let text = "GOOD-0001\nGOOD-0002\nbad\u{7}code\n";
        let (_, page) = imported(&app, &client, text, "all").await;
        assert_eq!(page.text("#batch-status"), "FAILED");
        assert!(
            page.text("#batch-outcome")
                .starts_with("All or nothing: 1 lines were rejected"),
            "{}",
            page.text("#batch-outcome")
        );
        assert_eq!(
            page.texts(".import-errors li"),
            vec!["line 3: invalid characters"]
        );
        assert_eq!(page.count("table.codes tbody tr"), 0);
        assert_eq!(
            page.text("#batch-body .empty:last-child"),
            "Nothing from this batch was imported."
        );
        let available: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM codes WHERE status = 'AVAILABLE'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(available, 0);
        let r = client
            .get(app.url("/admin/codes?sku=GIFT"))
            .send()
            .await
            .unwrap();
        assert_eq!(html(r).await.text("#sellable"), "0");
    }
);

both!(
    reveal_shows_the_plaintext_once_and_is_written_to_the_audit_log,
    |app| {
        gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let secret = "SECRET-CODE-7Q4Z";
        let r = upload(&app, &client, "one.txt", &format!("{secret}\n"), "valid").await;
        let path = location(&r);
        finished(&app, &client, &path).await;
        let page_html = client
            .get(app.url(&path))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            !page_html.contains(secret),
            "no plaintext on the batch page"
        );
        let id = code_ids(&app).await[0];
        let page = Html::parse(&page_html);
        let reveal = format!("tr[data-code=\"{id}\"] form.reveal");
        assert_eq!(page.attr(&reveal, "method").as_deref(), Some("post"));
        assert_eq!(
            page.attr(&reveal, "action"),
            Some(format!("/admin/codes/{id}/reveal"))
        );

        let r = client
            .post(app.url(&format!("/admin/codes/{id}/reveal")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "no-store");
        assert_eq!(html(r).await.text(".plaintext"), secret);
        let audit: Vec<(String, String)> = sqlx::query_as(
            "SELECT action, subject FROM audit_log WHERE action = 'code.reveal' ORDER BY id",
        )
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(
            audit,
            vec![("code.reveal".to_string(), format!("code:{id}"))]
        );
        let details: Vec<String> = sqlx::query_scalar("SELECT detail FROM audit_log")
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
        assert!(!details.iter().any(|d| d.contains(secret)));

        // htmx swaps just the code into the row; still never cached.
        let r = client
            .post(app.url(&format!("/admin/codes/{id}/reveal")))
            .header("HX-Request", "true")
            .send()
            .await
            .unwrap();
        assert_eq!(r.headers()["cache-control"], "no-store");
        let fragment = r.text().await.unwrap();
        assert!(!fragment.contains("<html"), "a fragment: {fragment}");
        assert_eq!(Html::parse(&fragment).text(".plaintext"), secret);
        // Never by GET, and the page is as before.
        let r = client
            .get(app.url(&format!("/admin/codes/{id}/reveal")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 405);
        let after = client
            .get(app.url(&path))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(!after.contains(secret));
        assert_eq!(app.count("audit_log WHERE action = 'code.reveal'").await, 2);
    }
);

both!(
    lookup_finds_a_typed_code_and_says_when_there_is_none,
    |app| {
        let api = gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let (path, _) = imported(&app, &client, "LOOK-UP-0001\nLOOK-UP-0002\n", "valid").await;
        let batch_id = path.rsplit('/').next().unwrap().to_string();
        let sold = sell(&api, "order-77").await;

        let r = client
            .get(app.url("/admin/codes/lookup"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let form = html(r).await;
        assert_eq!(form.attr("form.lookup", "method").as_deref(), Some("post"));

        let r = client
            .post(app.url("/admin/codes/lookup"))
            .form(&[("code", format!("  {sold}  "))])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "no-store");
        let body = r.text().await.unwrap();
        let page = Html::parse(&body);
        assert_eq!(
            page.attr("form.lookup input[name=code]", "value")
                .map(|v| v.trim().to_string()),
            Some(sold.clone()),
            "the box keeps what was typed (the answer is never stored)"
        );
        assert_eq!(page.text("#found-sku code"), "GIFT");
        assert_eq!(page.text("#found-status"), "SOLD");
        assert_eq!(page.text("#found-order"), "order-77");
        assert_eq!(
            page.attr("#found-batch a", "href"),
            Some(format!("/admin/codes/batches/{batch_id}"))
        );
        let sold_id: i64 = sqlx::query_scalar("SELECT id FROM codes WHERE status = 'SOLD'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(page.text("#lookup-result h2"), format!("Code #{sold_id}"));

        let r = client
            .post(app.url("/admin/codes/lookup"))
            .form(&[("code", "NO-SUCH-CODE-1")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        assert_eq!(page.text("#lookup-none"), "No such code.");
        assert_eq!(page.count("#lookup-result"), 0);

        let r = client
            .post(app.url("/admin/codes/lookup"))
            .form(&[("code", "   ")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r).await.text(".field-error[data-field=\"code\"]"),
            "Type the code the customer reads out."
        );

        // Store staff look codes up too: it reads, and changes nothing.
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let unsold = if sold == "LOOK-UP-0001" {
            "look-up-0002"
        } else {
            "look-up-0001"
        };
        let r = staff
            .post(app.url("/admin/codes/lookup"))
            .form(&[("code", unsold)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(html(r).await.text("#found-status"), "AVAILABLE");

        // Operators say whose code it is: hashes are keyed per merchant.
        let operator = app.signed_in("operator", None).await;
        let r = operator
            .post(app.url("/admin/codes/lookup"))
            .form(&[("code", unsold)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r).await.text(".field-error[data-field=\"merchant\"]"),
            "Merchant is required."
        );
        let r = operator
            .post(app.url("/admin/codes/lookup"))
            .form(&[("code", unsold), ("merchant", "acme")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        assert_eq!(page.text("#found-status"), "AVAILABLE");
        assert_eq!(
            page.attr("select[name=\"merchant\"] option[selected]", "value")
                .as_deref(),
            Some("acme")
        );
    }
);

both!(
    lock_and_unlock_move_a_code_and_refusals_are_shown_beside_it,
    |app| {
        let api = gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let (path, _) = imported(&app, &client, "LOCK-0001\nLOCK-0002\nLOCK-0003\n", "valid").await;
        // One code is sold first; the other two are moved by hand.
        sell(&api, "o-1").await;
        let sold: i64 = sqlx::query_scalar("SELECT id FROM codes WHERE status = 'SOLD'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let others: Vec<i64> = code_ids(&app)
            .await
            .into_iter()
            .filter(|id| *id != sold)
            .collect();
        let (a, b) = (others[0], others[1]);

        let r = client
            .post(app.url(&format!("/admin/codes/{a}/lock")))
            .form(&[("page", "1")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), path);
        assert_eq!(code_status(&app, a).await, "LOCKED");
        let page = app.page(&client, &path).await;
        assert_eq!(
            page.text(".flash"),
            format!("Code #{a} locked: it cannot be sold until it is unlocked.")
        );
        let row = format!("tr[data-code=\"{a}\"]");
        assert_eq!(page.text(&format!("{row} .code-status")), "LOCKED");
        assert_eq!(
            page.attr(&format!("{row} form[action$=\"/unlock\"]"), "method")
                .as_deref(),
            Some("post")
        );

        // Locking a LOCKED code is refused beside it, and nothing changes.
        let r = client
            .post(app.url(&format!("/admin/codes/{a}/lock")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(&format!(".field-error[data-code=\"{a}\"]")),
            "Cannot lock a code that is LOCKED."
        );
        assert_eq!(code_status(&app, a).await, "LOCKED");

        // A SOLD code never moves.
        for action in ["lock", "unlock", "invalidate"] {
            let r = client
                .post(app.url(&format!("/admin/codes/{sold}/{action}")))
                .header("HX-Request", "true")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{action}");
            let body = r.text().await.unwrap();
            assert!(!body.contains("<html"), "htmx gets the body block");
            assert_eq!(
                Html::parse(&body).text(&format!(".field-error[data-code=\"{sold}\"]")),
                format!("Cannot {action} a code that is SOLD.")
            );
        }
        assert_eq!(code_status(&app, sold).await, "SOLD");

        // Unlock by htmx: the body comes back with a notice.
        let r = client
            .post(app.url(&format!("/admin/codes/{a}/unlock")))
            .header("HX-Request", "true")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let body = html(r).await;
        assert_eq!(
            body.text(&format!("tr[data-code=\"{a}\"] .code-status")),
            "AVAILABLE"
        );
        assert_eq!(code_status(&app, a).await, "AVAILABLE");

        // Invalidating one code asks first.
        let r = client
            .get(app.url(&format!("/admin/codes/{b}/invalidate")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let confirm = html(r).await;
        assert_eq!(
            confirm.attr("main form[method=\"post\"]", "action"),
            Some(format!("/admin/codes/{b}/invalidate"))
        );
        assert_eq!(
            code_status(&app, b).await,
            "AVAILABLE",
            "asking changes nothing"
        );
        let r = client
            .post(app.url(&format!("/admin/codes/{b}/invalidate")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(code_status(&app, b).await, "INVALID");

        // The whole batch: lock, unlock, and invalidate after a confirmation page.
        let batch = path.rsplit('/').next().unwrap();
        let r = client
            .post(app.url(&format!("/admin/codes/batches/{batch}/lock")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(code_status(&app, a).await, "LOCKED");
        let page = app.page(&client, &path).await;
        assert_eq!(
            page.texts(".flash"),
            vec![
                format!("Code #{b} invalidated: it will never be sold."),
                "1 code locked: it cannot be sold until it is unlocked.".to_string()
            ]
        );
        let r = client
            .post(app.url(&format!("/admin/codes/batches/{batch}/unlock")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(code_status(&app, a).await, "AVAILABLE");
        let r = client
            .get(app.url(&format!("/admin/codes/batches/{batch}/invalidate")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let confirm = html(r).await;
        assert!(confirm
            .text("#what")
            .starts_with("1 AVAILABLE code becomes INVALID"));
        assert_eq!(code_status(&app, a).await, "AVAILABLE");
        let r = client
            .post(app.url(&format!("/admin/codes/batches/{batch}/invalidate")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(code_status(&app, a).await, "INVALID");
        assert_eq!(code_status(&app, b).await, "INVALID");
        assert_eq!(code_status(&app, sold).await, "SOLD");
    }
);

both!(
    a_generated_batch_downloads_once_and_only_for_the_admin_who_made_it,
    |app| {
        gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let r = client
            .post(app.url("/admin/codes/generate"))
            .form(&[
                ("sku", "GIFT"),
                ("count", "abc"),
                ("length", "40"),
                ("alphabet", "digits"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(".field-error[data-field=\"count\"]"),
            sellable::messages::bad_generate_count(1_000_000)
        );
        assert_eq!(
            page.text(".field-error[data-field=\"length\"]"),
            "Code length must be from 10 to 32 characters."
        );
        assert_eq!(
            page.attr("input[name=\"count\"]", "value").as_deref(),
            Some("abc")
        );
        assert_eq!(app.count("code_batches").await, 0);

        let r = client
            .post(app.url("/admin/codes/generate"))
            .form(&[
                ("sku", "GIFT"),
                ("count", "5"),
                ("length", "12"),
                ("alphabet", "digits"),
                ("name", "Spring promo"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let path = location(&r);
        let page = finished(&app, &client, &path).await;
        assert_eq!(page.text("#batch-status"), "READY");
        assert_eq!(page.text("#imported"), "5");
        let link = page.attr("#download-link", "href").unwrap();
        assert_eq!(link, format!("{path}/download"));

        // Another admin of the same merchant sees no link and is refused.
        let other = app.signed_in("merchant_admin", Some("acme")).await;
        let theirs = app.page(&other, &path).await;
        assert_eq!(theirs.count("#download-link"), 0);
        assert_eq!(
            other.get(app.url(&link)).send().await.unwrap().status(),
            403
        );
        assert_eq!(
            other.post(app.url(&link)).send().await.unwrap().status(),
            403
        );

        // The creator: the link asks first, the POST gives the file.
        let r = client.get(app.url(&link)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            html(r).await.attr("main form[method=\"post\"]", "action"),
            Some(link.clone())
        );
        let r = client.post(app.url(&link)).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "no-store");
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain"));
        assert!(r.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment"));
        let file = r.text().await.unwrap();
        let lines: Vec<&str> = file.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(lines
            .iter()
            .all(|l| l.len() == 12 && l.chars().all(|c| c.is_ascii_digit())));

        let page = app.page(&client, &path).await;
        assert_eq!(page.count("#download-link"), 0, "the link is gone");
        assert_eq!(page.count("#downloaded"), 1);
        let r = client.post(app.url(&link)).send().await.unwrap();
        assert_eq!(r.status(), 422, "a second download is refused");
        let body = r.text().await.unwrap();
        assert!(!lines.iter().any(|l| body.contains(l)));
        assert_eq!(
            Html::parse(&body).text(".form-error"),
            "This batch was already downloaded. Codes can be revealed one at a time from the batch page."
        );
    }
);

both!(
    staff_and_operators_read_but_cannot_change_and_other_merchants_see_nothing,
    |app| {
        gift(&app).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let (path, _) = imported(&app, &admin, "ROLE-0001\nROLE-0002\n", "valid").await;
        let batch = path.rsplit('/').next().unwrap().to_string();
        let code = code_ids(&app).await[0];
        let nav = app.page(&admin, "/admin").await;
        assert_eq!(nav.count(".mainnav a[href=\"/admin/codes\"]"), 1);

        let staff = app.signed_in("store_staff", Some("acme")).await;
        let operator = app.signed_in("operator", None).await;
        let nav = app.page(&staff, "/admin").await;
        assert_eq!(nav.count(".mainnav a[href=\"/admin/codes\"]"), 0);
        for (who, client, index) in [
            ("staff", &staff, "/admin/codes?sku=GIFT"),
            ("operator", &operator, "/admin/codes?sku=acme/GIFT"),
        ] {
            let r = client.get(app.url(index)).send().await.unwrap();
            assert_eq!(r.status(), 200, "{who}");
            let page = html(r).await;
            assert_eq!(page.text("#sellable"), "2", "{who}");
            assert_eq!(
                page.count("form[action=\"/admin/codes/upload\"]"),
                0,
                "{who}"
            );
            assert_eq!(
                page.count("form[action=\"/admin/codes/generate\"]"),
                0,
                "{who}"
            );
            let r = client.get(app.url(&path)).send().await.unwrap();
            assert_eq!(r.status(), 200, "{who}");
            let page = html(r).await;
            assert_eq!(page.count("table.codes tbody tr"), 2, "{who}");
            assert_eq!(
                page.count("#batch-body form:not(#code-filter)"),
                0,
                "{who} gets no actions"
            );
            let posts = [
                format!("/admin/codes/batches/{batch}/lock"),
                format!("/admin/codes/batches/{batch}/unlock"),
                format!("/admin/codes/batches/{batch}/invalidate"),
                format!("/admin/codes/batches/{batch}/download"),
                format!("/admin/codes/{code}/lock"),
                format!("/admin/codes/{code}/invalidate"),
                format!("/admin/codes/{code}/reveal"),
                "/admin/codes/generate".to_string(),
            ];
            for p in &posts {
                let r = client.post(app.url(p)).send().await.unwrap();
                assert_eq!(r.status(), 403, "{who} POST {p}");
            }
            let r = upload(&app, client, "x.txt", "ROLE-0009\n", "valid").await;
            assert_eq!(r.status(), 403, "{who} upload");
        }
        assert_eq!(app.count("code_batches").await, 1);
        assert_eq!(app.count("audit_log WHERE action = 'code.reveal'").await, 0);
        let statuses: Vec<String> = sqlx::query_scalar("SELECT status FROM codes")
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
        assert!(statuses.iter().all(|s| s == "AVAILABLE"));

        // Another merchant's admin: the batch and its codes do not exist.
        app.merchant("globex").await;
        let stranger = app.signed_in("merchant_admin", Some("globex")).await;
        for p in [path.clone(), format!("{path}/errors.csv")] {
            let r = stranger.get(app.url(&p)).send().await.unwrap();
            assert_eq!(r.status(), 404, "GET {p}");
        }
        for p in [
            format!("/admin/codes/batches/{batch}/lock"),
            format!("/admin/codes/{code}/lock"),
            format!("/admin/codes/{code}/reveal"),
        ] {
            let r = stranger.post(app.url(&p)).send().await.unwrap();
            assert_eq!(r.status(), 404, "POST {p}");
        }
        let r = stranger
            .get(app.url("/admin/codes?sku=GIFT"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        let r = stranger
            .post(app.url("/admin/codes/lookup"))
            .form(&[("code", "ROLE-0001")])
            .send()
            .await
            .unwrap();
        assert_eq!(html(r).await.text("#lookup-none"), "No such code.");
        // Their own codes page: no voucher SKU yet.
        let page = app.page(&stranger, "/admin/codes").await;
        assert!(page.text(".empty").starts_with("No voucher SKUs yet."));
    }
);

both!(
    a_missing_file_or_a_broken_upload_re_renders_the_form_with_its_message,
    |app| {
        gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .text("mode", "all")
            .text("name", "Lost file");
        let r = client
            .post(app.url("/admin/codes/upload"))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.text(".field-error[data-field=\"file\"]"),
            "Choose a file to upload."
        );
        assert_eq!(
            page.attr("input[name=\"name\"]", "value").as_deref(),
            Some("Lost file")
        );
        assert_eq!(
            page.attr("input[name=\"mode\"][value=\"all\"]", "checked")
                .as_deref(),
            Some("")
        );
        let r = client
            .post(app.url("/admin/codes/upload"))
            .form(&[("sku", "GIFT")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        assert_eq!(
            html(r).await.text(".field-error[data-field=\"file\"]"),
            "Send the upload form as multipart/form-data, with the file attached."
        );
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .text("expires_at", "next tuesday")
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"EXP-0001\n".to_vec()).file_name("c.txt"),
            );
        let r = client
            .post(app.url("/admin/codes/upload"))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r)
                .await
                .text(".field-error[data-field=\"expires_at\"]"),
            "Expiry must be a date and time, like 2026-12-01T09:00."
        );
        assert_eq!(app.count("code_batches").await, 0);
        let leftovers = std::fs::read_dir(app.dir.join("uploads"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(leftovers, 0, "refused uploads leave no file behind");

        // A local expiry is read in the merchant's timezone.
        let form = reqwest::multipart::Form::new()
            .text("sku", "GIFT")
            .text("expires_at", "2099-01-31T23:59")
            .part(
                "file",
                reqwest::multipart::Part::bytes(b"EXP-0002\n".to_vec()).file_name("c.txt"),
            );
        let r = client
            .post(app.url("/admin/codes/upload"))
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = finished(&app, &client, &location(&r)).await;
        assert_eq!(
            page.text("table.codes tbody tr td:nth-child(5)"),
            "Sat, 31 Jan 2099, 23:59"
        );
    }
);

both!(
    a_batch_still_importing_shows_a_progress_bar_that_polls_until_it_ends,
    |app| {
        gift(&app).await;
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let merchant = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, "acme")
            .await
            .unwrap();
        let sku = sellable::domain::codes::voucher_sku(&app.db, merchant, "GIFT", "sku")
            .await
            .unwrap();
        let keys =
            sellable::domain::kernel::code_keys::CodeKeys::load(&app.dir.join("code-keys.json"))
                .unwrap()
                .0;
        // A batch recorded but never run: it stays CREATING.
        let nb = sellable::domain::codes::import::NewBatch {
            name: "slow".into(),
            mode: "valid".into(),
            expires_at: None,
            generated: false,
            size: 100,
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
        let path = format!("/admin/codes/batches/{}", batch.id);
        let page = app.page(&client, &path).await;
        assert_eq!(
            page.attr("#batch-body", "data-status").as_deref(),
            Some("CREATING")
        );
        assert_eq!(
            page.attr("#batch-body", "hx-get").as_deref(),
            Some(path.as_str())
        );
        assert_eq!(
            page.attr("#batch-body", "hx-trigger").as_deref(),
            Some("every 1s")
        );
        assert_eq!(page.attr("#batch-progress", "max").as_deref(), Some("100"));
        assert_eq!(
            page.attr("#batch-body a", "href").as_deref(),
            Some(path.as_str())
        );
        let r = client
            .get(app.url(&path))
            .header("HX-Request", "true")
            .send()
            .await
            .unwrap();
        let fragment = r.text().await.unwrap();
        assert!(
            !fragment.contains("topbar"),
            "the poll gets the body block alone"
        );
        assert_eq!(
            Html::parse(&fragment)
                .attr("#batch-body", "hx-trigger")
                .as_deref(),
            Some("every 1s")
        );
        // Once the batch ends, the answer carries no trigger: polling stops.
        sellable::domain::codes::fail_abandoned(&app.db, -1)
            .await
            .unwrap();
        let r = client
            .get(app.url(&path))
            .header("HX-Request", "true")
            .send()
            .await
            .unwrap();
        let fragment = Html::parse(&r.text().await.unwrap());
        assert_eq!(
            fragment.attr("#batch-body", "data-status").as_deref(),
            Some("FAILED")
        );
        assert!(fragment.attr("#batch-body", "hx-trigger").is_none());
        assert!(fragment.text("#batch-outcome").contains("server restarted"));
    }
);

both!(the_product_page_links_voucher_skus_to_their_codes, |app| {
    gift(&app).await;
    let client = app.signed_in("merchant_admin", Some("acme")).await;
    let (product, sku): (i64, i64) =
        sqlx::query_as("SELECT product_id, id FROM skus WHERE code = 'GIFT'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    let page = html(
        client
            .get(app.url(&format!("/admin/products/{product}")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(page.count("#skus a[href=\"/admin/codes?sku=GIFT\"]"), 1);
    let operator = app.signed_in("operator", None).await;
    let page = html(
        operator
            .get(app.url(&format!("/admin/products/{product}")))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let href = format!("/admin/codes?sku_id={sku}");
    assert_eq!(page.count(&format!("#skus a[href=\"{href}\"]")), 1);
    let r = operator.get(app.url(&href)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let page = html(r).await;
    assert_eq!(page.text("h1 code"), "GIFT");
    assert_eq!(
        page.attr("select[name=\"sku\"] option[selected]", "value")
            .as_deref(),
        Some("acme/GIFT")
    );
});

both!(
    staff_check_and_redeem_a_code_at_the_counter_and_a_second_redemption_says_when,
    |app| {
        let api = gift(&app).await;
        let r = api
            .upload("GIFT", "g.txt", b"CT-1\nCT-2\n".to_vec(), "valid")
            .await;
        assert_eq!(r.0, 202, "{}", r.1);
        for _ in 0..100 {
            if api
                .get(&format!("/api/v1/code-batches/{}", r.1["batch_id"]))
                .await
                .1["status"]
                != "CREATING"
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        api.reserve("o", json!([{"sku": "GIFT", "qty": 1}])).await;
        let (_, paid) = api.post("/api/v1/reservations/o/confirm", json!({})).await;
        let code = paid["items"][0]["codes"][0].as_str().unwrap().to_string();
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let page = app.page(&staff, "/admin/counter").await;
        assert_eq!(page.count("#counter-code"), 1);
        // Checking shows the state and product, and offers to redeem; the code is not repeated.
        let r = staff
            .post(app.url("/admin/counter"))
            .form(&[("code", code.to_lowercase().as_str()), ("action", "check")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["cache-control"], "no-store");
        let page = html(r).await;
        assert_eq!(
            page.attr("#counter-result", "data-state").as_deref(),
            Some("SOLD")
        );
        assert_eq!(page.count("#redeem"), 1);
        assert!(!page.text("#counter-result").contains(code.as_str()));
        let r = staff
            .post(app.url("/admin/counter"))
            .form(&[("code", code.as_str()), ("action", "redeem")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        assert_eq!(
            page.attr("#counter-result", "data-state").as_deref(),
            Some("REDEEMED")
        );
        assert_eq!(page.count("#redeem"), 0);
        let r = staff
            .post(app.url("/admin/counter"))
            .form(&[("code", code.as_str()), ("action", "redeem")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 409);
        let page = html(r).await;
        assert_eq!(
            page.attr("#counter-refusal", "data-code").as_deref(),
            Some("code_already_redeemed")
        );
        assert!(
            page.text("#redeemed-at").contains("main-store"),
            "{}",
            page.text("#redeemed-at")
        );
        // Unknown and empty codes are said, not errors.
        let r = staff
            .post(app.url("/admin/counter"))
            .form(&[("code", "NOPE"), ("action", "check")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(
            html(r)
                .await
                .attr("#counter-refusal", "data-code")
                .as_deref(),
            Some("not_found")
        );
        // Operators do not work the counter.
        let operator = app.signed_in("operator", None).await;
        let r = operator
            .get(app.url("/admin/counter"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        // The code never reached the audit log.
        let details: Vec<String> =
            sqlx::query_scalar("SELECT subject || ' ' || detail FROM audit_log")
                .fetch_all(&app.db.pool)
                .await
                .unwrap();
        assert!(
            details.iter().all(|d| !d.contains(code.as_str())),
            "{details:?}"
        );
    }
);

both!(
    a_codes_page_shows_its_history_and_lock_unlock_invalidate_there_need_a_reason,
    |app| {
        let api = gift(&app).await;
        let r = api
            .upload("GIFT", "h.txt", b"H-1\nH-2\n".to_vec(), "valid")
            .await;
        assert_eq!(r.0, 202, "{}", r.1);
        for _ in 0..100 {
            if api
                .get(&format!("/api/v1/code-batches/{}", r.1["batch_id"]))
                .await
                .1["status"]
                != "CREATING"
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let id: i64 = sqlx::query_scalar("SELECT MIN(id) FROM codes")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app.page(&admin, &format!("/admin/codes/{id}")).await;
        assert_eq!(
            page.attr("#code-status", "data-status").as_deref(),
            Some("AVAILABLE")
        );
        assert_eq!(page.count("#code-history li"), 0);
        let r = admin
            .post(app.url(&format!("/admin/codes/{id}")))
            .form(&[("action", "lock"), ("reason", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        assert_eq!(
            html(r).await.count("p.field-error[data-field=\"reason\"]"),
            1
        );
        let r = admin
            .post(app.url(&format!("/admin/codes/{id}")))
            .form(&[
                ("action", "lock"),
                ("reason", "customer reported it leaked"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&admin, &format!("/admin/codes/{id}")).await;
        assert_eq!(
            page.attr("#code-status", "data-status").as_deref(),
            Some("LOCKED")
        );
        assert_eq!(page.attrs("#code-history li", "data-action"), ["LOCKED"]);
        assert!(page
            .text("#code-history")
            .contains("customer reported it leaked"));
        // Store staff and other merchants do not see it.
        let staff = app.signed_in("store_staff", Some("acme")).await;
        assert_eq!(
            staff
                .get(app.url(&format!("/admin/codes/{id}")))
                .send()
                .await
                .unwrap()
                .status(),
            403
        );
    }
);
