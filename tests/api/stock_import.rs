//! Stock sheets (issue 20): a CSV of counts or receipts is previewed with every bad line
//! numbered, applied all-or-nothing or valid lines only, and applied once per file.

use crate::both;
use crate::helpers::{html, Html, TestApp};

/// Uploads a sheet as a merchant admin would and returns the sheet's page path.
async fn upload(app: &TestApp, client: &reqwest::Client, kind: &str, bytes: Vec<u8>) -> String {
    let form = reqwest::multipart::Form::new()
        .text("kind", kind.to_string())
        .part(
            "file",
            reqwest::multipart::Part::bytes(bytes)
                .file_name("sheet.csv")
                .mime_str("text/csv")
                .unwrap(),
        );
    let r = client
        .post(app.url("/admin/stock/import"))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303, "{}", r.text().await.unwrap_or_default());
    crate::helpers::location(&r)
}

async fn apply(
    app: &TestApp,
    client: &reqwest::Client,
    sheet: &str,
    mode: &str,
) -> reqwest::Response {
    client
        .post(app.url(&format!("{sheet}/apply")))
        .form(&[("mode", mode)])
        .send()
        .await
        .unwrap()
}

async fn ledger_rows(app: &TestApp, kind: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM stock_ledger WHERE kind = $1")
        .bind(kind)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

both!(
    a_count_sheet_numbers_its_bad_line_applies_all_or_nothing_only_when_clean_and_a_repeated_file_applies_once,
    |app| {
        let api = app.acme_api().await;
        for code in ["TEA", "CUP", "POT"] {
            api.product("goods", code).await;
            api.receive(code, "main", 10).await;
        }
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        // Line 4 names a SKU that does not exist; line 6 counts TEA twice; POT left blank.
        let sheet = "sku,warehouse,qty,note\nTEA,main,8,shelf A\nCUP,main,12,\nNOPE,main,3,\n\nTEA,main,7,again\nPOT,main,,\n";
        let path = upload(&app, &admin, "counts", sheet.as_bytes().to_vec()).await;
        let page = app.page(&admin, &path).await;
        assert_eq!(page.attrs("table.bad-lines tbody tr", "data-line"), ["4", "6"]);
        assert_eq!(
            page.attrs("table.bad-lines tbody tr", "data-codes"),
            ["unknown_sku", "counted_twice"]
        );
        assert_eq!(page.attrs("table.good-lines tbody tr", "data-line"), ["2", "3"]);
        assert_eq!(page.texts("table.good-lines td.diff"), ["-2", "+2"]);
        assert!(page.attr("#apply-all", "disabled").is_some(), "all or nothing needs a clean sheet");
        // All or nothing: refused, and nothing is applied.
        let r = apply(&app, &admin, &path, "all_or_nothing").await;
        assert_eq!(r.status(), 409);
        assert_eq!(
            html(r).await.attr(".form-error", "data-code").as_deref(),
            Some("sheet_has_bad_lines")
        );
        assert_eq!(ledger_rows(&app, "COUNT").await, 0);
        // Valid lines only: TEA and CUP are counted.
        let r = apply(&app, &admin, &path, "valid_only").await;
        assert_eq!(r.status(), 303);
        assert_eq!(api.stock("TEA").await["total"], 8);
        assert_eq!(api.stock("CUP").await["total"], 12);
        assert_eq!(api.stock("POT").await["total"], 10, "not counted");
        assert_eq!(ledger_rows(&app, "COUNT").await, 2);
        let page = app.page(&admin, &path).await;
        assert_eq!(page.count("#sheet-applied"), 1);
        assert_eq!(page.count("#apply-all, #apply-valid"), 0);
        // Applying it again, or the same file uploaded again, books nothing.
        let r = apply(&app, &admin, &path, "valid_only").await;
        assert_eq!(r.status(), 409);
        let again = upload(&app, &admin, "counts", sheet.as_bytes().to_vec()).await;
        let page = app.page(&admin, &again).await;
        assert_eq!(page.count("#sheet-duplicate[data-code=sheet_already_applied]"), 1);
        let r = apply(&app, &admin, &again, "valid_only").await;
        assert_eq!(r.status(), 409);
        assert_eq!(
            html(r).await.attr(".form-error", "data-code").as_deref(),
            Some("sheet_already_applied")
        );
        assert_eq!(ledger_rows(&app, "COUNT").await, 2);
        app.assert_ledger_replays().await;
        app.assert_reconciled().await;
    }
);

both!(
    a_clean_receipts_sheet_in_gb18030_with_chinese_headers_applies_every_line_in_one_go,
    |app| {
        let api = app.acme_api().await;
        app.warehouse("acme", "east", 5).await;
        for code in ["TEA", "CUP"] {
            api.product("goods", code).await;
        }
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        // As Excel saves CSV on Chinese Windows.
        let text = "SKU编码,仓库,数量,备注\r\nTEA,main,40,送货单 1182\r\nCUP,east,12,送货单 1182\r\nTEA,east,5,\r\n";
        let (bytes, _, _) = encoding_rs::GB18030.encode(text);
        let path = upload(&app, &admin, "receipts", bytes.into_owned()).await;
        let page = app.page(&admin, &path).await;
        assert_eq!(page.count("table.bad-lines"), 0);
        assert_eq!(page.count("table.good-lines tbody tr"), 3);
        assert!(page.text("table.good-lines").contains("送货单 1182"));
        assert_eq!(
            page.attrs("table.good-lines tbody tr", "data-line"),
            ["2", "3", "4"],
            "lines numbered as a spreadsheet shows them, CRLF endings and all"
        );
        let r = apply(&app, &admin, &path, "all_or_nothing").await;
        assert_eq!(r.status(), 303);
        assert_eq!(api.stock("TEA").await["total"], 45);
        assert_eq!(api.stock("CUP").await["total"], 12);
        let codes: Vec<Option<String>> = sqlx::query_scalar(
            "SELECT reason_code FROM stock_ledger WHERE kind = 'RECEIVE' ORDER BY id",
        )
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(
            codes,
            vec![Some("received".to_string()); 3],
            "the sheet's default reason"
        );
        // A bad line after a blank one, with CRLF endings, keeps its spreadsheet row number.
        let crlf = b"sku,warehouse,qty\r\nTEA,main,1\r\n\r\nNOPE,main,1\r\n".to_vec();
        let path = upload(&app, &admin, "receipts", crlf).await;
        let page = app.page(&admin, &path).await;
        assert_eq!(page.attrs("table.bad-lines tbody tr", "data-line"), ["4"]);
        // A sheet without the columns it needs says which are missing.
        let path = upload(&app, &admin, "receipts", b"code,amount\nTEA,1\n".to_vec()).await;
        let page = app.page(&admin, &path).await;
        assert_eq!(page.count("#sheet-unreadable"), 1);
        app.assert_ledger_replays().await;
    }
);

both!(
    a_sheet_applied_by_several_clicks_at_once_books_its_lines_once,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let path = upload(
            &app,
            &admin,
            "receipts",
            b"sku,warehouse,qty\nTEA,main,3\nTEA,main,4\n".to_vec(),
        )
        .await;
        let second = upload(
            &app,
            &admin,
            "receipts",
            b"sku,warehouse,qty\nTEA,main,3\nTEA,main,4\n".to_vec(),
        )
        .await;
        let tasks: Vec<_> = (0..6)
            .map(|i| {
                let (app_url, admin) = (app.url(""), admin.clone());
                let sheet = if i % 2 == 0 {
                    path.clone()
                } else {
                    second.clone()
                };
                let mode = if i % 3 == 0 {
                    "valid_only"
                } else {
                    "all_or_nothing"
                };
                tokio::spawn(async move {
                    admin
                        .post(format!("{}{sheet}/apply", app_url.trim_end_matches('/')))
                        .form(&[("mode", mode)])
                        .send()
                        .await
                        .unwrap()
                        .status()
                        .as_u16()
                })
            })
            .collect();
        let mut applied = 0;
        for t in tasks {
            match t.await.unwrap() {
                303 => applied += 1,
                409 => {}
                s => panic!("{s}"),
            }
        }
        assert_eq!(applied, 1, "one apply wins, the others find it applied");
        assert_eq!(api.stock("TEA").await["total"], 7);
        assert_eq!(ledger_rows(&app, "RECEIVE").await, 2);
        app.assert_ledger_replays().await;
    }
);

both!(
    the_count_template_lists_every_counted_sku_in_every_warehouse_and_staff_cannot_import,
    |app| {
        let api = app.acme_api().await;
        app.warehouse("acme", "east", 5).await;
        for code in ["TEA", "CUP"] {
            api.product("goods", code).await;
        }
        api.product("service", "CLASS").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let body = admin
            .get(app.url("/admin/stock/import/template.csv?kind=counts"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let mut rd = csv::Reader::from_reader(body.trim_start_matches('\u{feff}').as_bytes());
        let lines: Vec<(String, String)> = rd
            .records()
            .map(|r| {
                let r = r.unwrap();
                (r[0].to_string(), r[2].to_string())
            })
            .collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines.contains(&("CUP".into(), "east".into())));
        // The template, filled in, reads back as a clean sheet.
        let filled = body.replace(",,count,", ",1,count,");
        let path = upload(&app, &admin, "counts", filled.into_bytes()).await;
        let page: Html = app.page(&admin, &path).await;
        assert_eq!(page.count("table.good-lines tbody tr"), 4);
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let r = staff
            .get(app.url("/admin/stock/import"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
    }
);
