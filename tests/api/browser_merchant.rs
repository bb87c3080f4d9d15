//! A merchant's day in a real browser (issue 20): write off damaged units with a reason, hold
//! some back for quality control, export the stock report, import a count sheet with one bad
//! line, and invite a staff member who then signs in on their phone. In Chinese on SQLite and in
//! English on PostgreSQL, so both languages and both databases are driven.

use fantoccini::error::CmdError;
use fantoccini::{Client, Locator};

use crate::both;
use crate::browser::{browser_as, click_to_next_page, html_lang, sign_in, start_driver, PHONE};
use crate::helpers::{Backend, TestApp};

/// The language this backend's run reads: Chinese on SQLite, English on PostgreSQL.
async fn language(app: &TestApp) -> &'static str {
    if app.backend != Backend::Sqlite {
        return "en";
    }
    app.speaks(sellable::i18n::Lang::ZhCn, true).await;
    "zh-CN"
}

/// Keeps a screenshot in the temp directory (`sellable-merchant-{name}.png`).
async fn shot(c: &Client, name: &str) -> Result<(), CmdError> {
    let png = c.screenshot().await?;
    std::fs::write(
        std::env::temp_dir().join(format!("sellable-merchant-{name}.png")),
        png,
    )
    .ok();
    Ok(())
}

async fn text_of(c: &Client, css: &str) -> Result<String, CmdError> {
    c.find(Locator::Css(css)).await?.text().await
}

/// Waits until the element's text is `want` (an htmx swap lands a moment after the click).
async fn wait_text(c: &Client, css: &str, want: &str) -> Result<(), CmdError> {
    for _ in 0..100 {
        if let Ok(e) = c.find(Locator::Css(css)).await {
            if e.text().await.unwrap_or_default().trim() == want {
                return Ok(());
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{css} never read {want:?}: {:?}", text_of(c, css).await);
}

async fn select(c: &Client, css: &str, value: &str) -> Result<(), CmdError> {
    c.execute(
        "const s = document.querySelector(arguments[0]); s.value = arguments[1];
         s.dispatchEvent(new Event('change', {bubbles: true})); return s.value;",
        vec![serde_json::json!(css), serde_json::json!(value)],
    )
    .await?;
    Ok(())
}

async fn run(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    let lang = language(app).await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 20).await;
    let sku_id = app.sku_id("TEA").await;
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let sheet = std::env::temp_dir().join(format!(
        "sellable-count-{}.csv",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::write(&sheet, "sku,warehouse,qty\nTEA,main,14\nNOPE,main,1\n").unwrap();
    let c = browser_as(&driver, (1280, 900), lang).await;
    let mut invitation = String::new();
    let result = async {
        sign_in(&c, app, &email, &password).await?;
        assert_eq!(html_lang(&c).await?, lang);
        // Write off two damaged units, in place.
        c.goto(&app.url(&format!("/admin/skus/{sku_id}/stock?task=WRITE_OFF"))).await?;
        c.wait().for_element(Locator::Css("form.adjust input[name=kind][value=WRITE_OFF]")).await?;
        c.find(Locator::Css("form.adjust input[name=qty]")).await?.send_keys("2").await?;
        select(&c, "form.adjust select[name=reason_code]", "damaged").await?;
        c.find(Locator::Css("form.adjust input[name=reason]")).await?.send_keys("cracked in transit").await?;
        c.find(Locator::Css("form.adjust button[type=submit]")).await?.click().await?;
        wait_text(&c, "#available", "18").await?;
        c.wait().for_element(Locator::Css("#ledger td.kind[data-kind=WRITE_OFF]")).await?;
        c.wait().for_element(Locator::Css("#ledger .reason-code[data-code=damaged]")).await?;
        shot(&c, &format!("{lang}-written-off")).await?;
        // Hold three back for quality control, due back in a week.
        c.find(Locator::Css("nav.tasks a[data-task=FREEZE]")).await?.click().await?;
        c.wait().for_element(Locator::Css("form.adjust input[name=kind][value=FREEZE]")).await?;
        c.find(Locator::Css("form.adjust input[name=qty]")).await?.send_keys("3").await?;
        let due = (app.now() + chrono::Duration::days(7)).format("%Y-%m-%d").to_string();
        c.execute(
            "document.querySelector('form.adjust input[name=release_on]').value = arguments[0]; return true;",
            vec![serde_json::json!(due)],
        )
        .await?;
        c.find(Locator::Css("form.adjust button[type=submit]")).await?.click().await?;
        wait_text(&c, "#unavailable", "3").await?;
        c.wait().for_element(Locator::Css("table.holds tr[data-hold] .reason-code[data-code=qc_hold]")).await?;
        shot(&c, &format!("{lang}-held")).await?;
        // The stock report, and its CSV as the export link gives it.
        c.goto(&app.url("/admin/stock")).await?;
        c.wait().for_element(Locator::Css("table.report tr[data-sku=TEA]")).await?;
        let href = c.find(Locator::Css("#report-csv")).await?.attr("href").await?.unwrap_or_default();
        let csv = c
            .execute("return fetch(arguments[0]).then(r => r.text());", vec![serde_json::json!(href)])
            .await?;
        let csv = csv.as_str().unwrap_or_default().to_string();
        assert!(csv.contains("sku,name,product,on_hand"), "{csv}");
        assert!(csv.lines().any(|l| l.starts_with("TEA,") && l.contains(",18,15,0,3,")), "{csv}");
        shot(&c, &format!("{lang}-report")).await?;
        // A count sheet with one bad line: previewed, then its valid line applied.
        c.goto(&app.url("/admin/stock/import")).await?;
        c.wait().for_element(Locator::Css("input[type=file][name=file]")).await?;
        c.find(Locator::Css("input[name=kind][value=counts]")).await?.click().await?;
        c.find(Locator::Css("input[type=file][name=file]"))
            .await?
            .send_keys(&sheet.display().to_string())
            .await?;
        let upload = c.find(Locator::Css("form[action='/admin/stock/import'] button[type=submit]")).await?;
        click_to_next_page(&c, upload).await?;
        c.wait().for_element(Locator::Css("table.bad-lines tr[data-line='3']")).await?;
        shot(&c, &format!("{lang}-sheet-preview")).await?;
        let apply = c.find(Locator::Css("#apply-valid")).await?;
        click_to_next_page(&c, apply).await?;
        c.wait().for_element(Locator::Css("#sheet-applied")).await?;
        // Invite a member of staff for the store.
        c.goto(&app.url("/admin/people")).await?;
        c.wait().for_element(Locator::Css("form[action='/admin/people/invite']")).await?;
        c.find(Locator::Css("input[name=email]")).await?.send_keys("xiaolin@example.com").await?;
        c.find(Locator::Css("input[name=display_name]")).await?.send_keys("小林").await?;
        c.find(Locator::Css("input[name=role][value=store_staff]")).await?.click().await?;
        select(&c, "select[name=store]", "main-store").await?;
        let send = c.find(Locator::Css("form[action='/admin/people/invite'] button[type=submit]")).await?;
        click_to_next_page(&c, send).await?;
        let link = c.wait().for_element(Locator::Css("#invitation-link input")).await?;
        invitation = link.prop("value").await?.unwrap_or_default();
        shot(&c, &format!("{lang}-invited")).await?;
        Ok::<(), CmdError>(())
    }
    .await;
    let _ = c.close().await;
    let _ = std::fs::remove_file(&sheet);
    result.expect("the merchant's day in the browser");
    assert_eq!(
        api.stock("TEA").await["total"],
        14,
        "the count set 14 on hand"
    );
    // The invited person opens the link on their phone and signs in as store staff.
    let phone = browser_as(&driver, PHONE, lang).await;
    let joined = async {
        phone.goto(&invitation).await?;
        phone
            .wait()
            .for_element(Locator::Css("#invitation-for"))
            .await?;
        phone
            .find(Locator::Css("input[name=password]"))
            .await?
            .send_keys("a long password")
            .await?;
        phone
            .find(Locator::Css("input[name=confirm]"))
            .await?
            .send_keys("a long password")
            .await?;
        let accept = phone.find(Locator::Css("form button[type=submit]")).await?;
        click_to_next_page(&phone, accept).await?;
        phone
            .wait()
            .for_element(Locator::Css("form[action='/logout'] button"))
            .await?;
        shot(&phone, &format!("{lang}-staff-signed-in")).await?;
        let people_links = phone
            .find_all(Locator::Css("a[href='/admin/people']"))
            .await?
            .len();
        Ok::<usize, CmdError>(people_links)
    }
    .await;
    let _ = phone.close().await;
    assert_eq!(
        joined.expect("the invited person signs in"),
        0,
        "staff see no People page"
    );
    let role: String =
        sqlx::query_scalar("SELECT role FROM users WHERE email = 'xiaolin@example.com'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(role, "store_staff");
}

both!(
    browser_a_merchant_writes_off_holds_back_exports_imports_a_count_sheet_and_invites_staff_who_sign_in,
    |app| {
        run(&app).await;
    }
);
