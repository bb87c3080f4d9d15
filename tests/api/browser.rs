//! Drives headless Chromium through the back office (Debian chromium + chromium-driver).

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{ClientBuilder, Locator};

use crate::both;
use crate::helpers::{skip_or_fail, TestApp};

pub(crate) struct Driver {
    child: Child,
    port: u16,
    profile: std::path::PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn chromedriver_path() -> Option<String> {
    std::env::var("CHROMEDRIVER").ok().or_else(|| {
        ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
            .iter()
            .find(|p| std::path::Path::new(p).exists())
            .map(|p| p.to_string())
    })
}

pub(crate) async fn start_driver() -> Option<Driver> {
    let Some(path) = chromedriver_path() else {
        skip_or_fail(
            "chromium-driver",
            "no chromedriver found (apt-get install chromium chromium-driver)",
        );
        return None;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(path)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            let profile = std::env::temp_dir()
                .join(format!("sellable-chrome-{}", uuid::Uuid::new_v4().simple()));
            return Some(Driver {
                child,
                port,
                profile,
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("chromedriver did not listen on port {port}");
}

/// A desktop browser that asks for English.
async fn browser(driver: &Driver) -> fantoccini::Client {
    browser_as(driver, (1280, 900), "en").await
}

/// A browser of this window size whose user reads `lang` (its `Accept-Language`).
pub(crate) async fn browser_as(
    driver: &Driver,
    (w, h): (u32, u32),
    lang: &str,
) -> fantoccini::Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                     "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     format!("--user-data-dir={}", driver.profile.display()), format!("--window-size={w},{h}"),
                     format!("--lang={lang}")],
            "prefs": {"intl.accept_languages": lang}
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("webdriver session")
}

async fn run(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    app.merchant("acme").await;
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let c = browser(&driver).await;
    let result = async {
        c.goto(&app.url("/admin/products")).await?;
        // Redirected to sign in, then back to where we were going.
        c.wait()
            .for_element(Locator::Css("input[name=email]"))
            .await?
            .send_keys(&email)
            .await?;
        c.find(Locator::Css("input[name=password]"))
            .await?
            .send_keys(&password)
            .await?;
        c.find(Locator::Css("form[action='/login'] button[type=submit]"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("a[href='/admin/products/new']"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("input[name=name]"))
            .await?
            .send_keys("Browser tea")
            .await?;
        c.find(Locator::Css("input[name=sku_code]"))
            .await?
            .send_keys("BROWSER-1")
            .await?;
        c.find(Locator::Css("input[name=sku_name]"))
            .await?
            .send_keys("Tin")
            .await?;
        c.find(Locator::Css("input[name=sku_price]"))
            .await?
            .send_keys("9.90")
            .await?;
        c.find(Locator::Css(
            "form[action='/admin/products'] button[type=submit]",
        ))
        .await?
        .click()
        .await?;
        let h1 = c
            .wait()
            .for_element(Locator::XPath("//h1[text()='Browser tea']"))
            .await?;
        assert_eq!(h1.text().await?, "Browser tea");
        // htmx: put it online; the status panel changes in place.
        c.find(Locator::Css(
            "form:has(input[name=status][value=ONLINE]) button[type=submit]",
        ))
        .await?
        .click()
        .await?;
        c.wait()
            .for_element(Locator::Css(
                "section#status-panel span.badge[data-status='ONLINE']",
            ))
            .await?;
        // The list shows it; the htmx search narrows the table as one types.
        c.goto(&app.url("/admin/products")).await?;
        let link = c
            .wait()
            .for_element(Locator::LinkText("Browser tea"))
            .await?;
        assert!(link
            .attr("href")
            .await?
            .unwrap_or_default()
            .starts_with("/admin/products/"));
        c.find(Locator::Css("input[name=q]"))
            .await?
            .send_keys("no-such-thing")
            .await?;
        c.wait()
            .for_element(Locator::XPath(
                "//p[@class='empty' and contains(text(),'No product matches')]",
            ))
            .await?;
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("browser flow");
    let status: String = sqlx::query_scalar("SELECT status FROM products")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(status, "ONLINE");
}

both!(
    browser_admin_signs_in_creates_a_product_and_sees_it_listed,
    |app| {
        run(&app).await;
    }
);

pub(crate) async fn sign_in(
    c: &fantoccini::Client,
    app: &TestApp,
    email: &str,
    password: &str,
) -> Result<(), fantoccini::error::CmdError> {
    c.goto(&app.url("/login")).await?;
    c.wait()
        .for_element(Locator::Css("input[name=email]"))
        .await?
        .send_keys(email)
        .await?;
    c.find(Locator::Css("input[name=password]"))
        .await?
        .send_keys(password)
        .await?;
    c.find(Locator::Css("form[action='/login'] button[type=submit]"))
        .await?
        .click()
        .await?;
    // Signed in, in whatever language: the sign-out button is there.
    c.wait()
        .for_element(Locator::Css("form[action='/logout'] button"))
        .await?;
    Ok(())
}

async fn run_stock(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'TEA'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let c = browser(&driver).await;
    let result = async {
        sign_in(&c, app, &email, &password).await?;
        c.goto(&app.url(&format!("/admin/skus/{sku_id}/stock")))
            .await?;
        c.wait().for_element(Locator::Css("form.adjust")).await?;
        // A marker on the window survives an htmx swap but not a page load.
        c.execute("window.__noReload = true; return true;", vec![])
            .await?;
        c.find(Locator::Css("form.adjust input[name=qty]"))
            .await?
            .send_keys("7")
            .await?;
        c.find(Locator::Css("form.adjust input[name=reason]"))
            .await?
            .send_keys("Browser delivery")
            .await?;
        c.find(Locator::Css("form.adjust button[type=submit]"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::XPath("//span[@id='available' and text()='7']"))
            .await?;
        c.wait()
            .for_element(Locator::XPath(
                "//section[@id='ledger']//td[@class='reason' and contains(., 'Browser delivery')]",
            ))
            .await?;
        let same_page = c
            .execute("return window.__noReload === true;", vec![])
            .await?;
        assert_eq!(
            same_page,
            serde_json::json!(true),
            "the balance changed in place, without a reload"
        );
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("browser stock flow");
    assert_eq!(api.stock("TEA").await["available"], 7);
}

both!(
    browser_admin_receives_stock_sees_the_balance_change_in_place_and_the_ledger_row,
    |app| {
        run_stock(&app).await;
    }
);

async fn run_booking(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let (_, b) = api
        .post("/api/v1/staff", serde_json::json!({"name": "Mia"}))
        .await;
    assert!(b["id"].is_i64(), "{b}");
    let start = app.now() + chrono::Duration::days(2);
    let (s, b) = api
        .post(
            "/api/v1/slots",
            serde_json::json!({"sku": "CUT", "staff": "Mia", "starts_at": start.to_rfc3339(), "ends_at": (start + chrono::Duration::hours(1)).to_rfc3339(), "capacity": 3}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let slot_id = b["id"].as_i64().unwrap();
    let store: String =
        sqlx::query_scalar("SELECT public_slug FROM stores WHERE slug = 'main-store'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    let tz: chrono_tz::Tz = "Asia/Shanghai".parse().unwrap();
    let day = start.with_timezone(&tz).date_naive();
    let (email, password) = app.user("store_staff", Some("acme")).await;
    let c = browser(&driver).await;
    let result = async {
        // A customer books, reads the reference, cancels, then books again.
        for round in 0..2 {
            c.goto(&app.url(&format!("/book/{store}"))).await?;
            // The page opens on the first day with a free place, which is the class's day.
            let opened = c.wait().for_element(Locator::Css("nav.days a[aria-current=date]")).await?.attr("data-date").await?;
            assert_eq!(opened.as_deref(), Some(day.to_string().as_str()));
            let link = c.find(Locator::XPath(&format!("//nav[@class='days']/a[contains(@href,'day={day}')]"))).await?;
            click_to_next_page(&c, link).await?;
            c.wait().for_element(Locator::Css(&format!("a[data-slot='{slot_id}']"))).await?.click().await?;
            c.wait().for_element(Locator::Css("input[name=name]")).await?.send_keys("Ann Lee").await?;
            c.find(Locator::Css("input[name=phone]")).await?.send_keys("+86 138 0013 8000").await?;
            c.find(Locator::Css("form button[type=submit]")).await?.click().await?;
            let reference = c.wait().for_element(Locator::Css(".reference")).await?.text().await?;
            assert_eq!(reference.len(), 10);
            if round == 0 {
                c.find(Locator::LinkText("Cancel this booking")).await?.click().await?;
                c.wait().for_element(Locator::XPath("//button[text()='Yes, cancel it']")).await?.click().await?;
                c.wait().for_element(Locator::XPath("//dd[@class='status' and text()='Cancelled']")).await?;
            }
        }
        // Staff close the whole day for leave and see the customer to call.
        sign_in(&c, app, &email, &password).await?;
        c.goto(&app.url("/admin/closures")).await?;
        c.wait().for_element(Locator::Css("form.new-closure")).await?;
        let from = format!("{day}T00:00");
        let to = format!("{}T00:00", day + chrono::Duration::days(1));
        c.execute(
            "document.querySelector('select[name=staff]').value = '*'; document.querySelector('input[name=span][value=times]').click(); document.querySelector('input[name=starts_at]').value = arguments[0]; document.querySelector('input[name=ends_at]').value = arguments[1]; return true;",
            vec![serde_json::json!(from), serde_json::json!(to)],
        )
        .await?;
        c.find(Locator::Css("form.new-closure input[name=reason]")).await?.send_keys("Staff on leave").await?;
        c.find(Locator::Css("form.new-closure button[type=submit]")).await?.click().await?;
        let name = c.wait().for_element(Locator::Css("table.contacts td.name")).await?.text().await?;
        assert_eq!(name, "Ann Lee");
        let phone = c.find(Locator::Css("table.contacts td.phone")).await?.text().await?;
        assert_eq!(phone, "+86 138 0013 8000");
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("browser booking flow");
    let status: String = sqlx::query_scalar("SELECT status FROM slots WHERE id = $1")
        .bind(slot_id)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(status, "CLOSED");
}

both!(
    browser_customer_books_and_cancels_then_staff_close_the_day_and_see_the_booking,
    |app| {
        run_booking(&app).await;
    }
);

async fn run_codes(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("voucher", "GIFT").await;
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let file = app.dir.join("browser-codes.txt");
    std::fs::write(
        &file,
        format!("BROWSER-CODE-1\n{}\nBROWSER-CODE-2\n", "X".repeat(200)),
    )
    .unwrap();
    let c = browser(&driver).await;
    let result = async {
        sign_in(&c, app, &email, &password).await?;
        c.goto(&app.url("/admin/codes?sku=GIFT")).await?;
        c.wait()
            .for_element(Locator::Css("form.upload input[type=file]"))
            .await?
            .send_keys(&file.display().to_string())
            .await?;
        c.find(Locator::Css("form.upload button[type=submit]"))
            .await?
            .click()
            .await?;
        // The batch page polls until the import is done, then lists the bad line.
        let bad = c
            .wait()
            .for_element(Locator::Css("li[data-line='2']"))
            .await?
            .text()
            .await?;
        assert_eq!(bad, "line 2: 200 characters, the limit is 128");
        c.wait()
            .for_element(Locator::XPath("//*[contains(text(),'PARTIAL')]"))
            .await?;
        c.find(Locator::Css("form.reveal button"))
            .await?
            .click()
            .await?;
        let plain = c
            .wait()
            .for_element(Locator::Css("code.plaintext"))
            .await?
            .text()
            .await?;
        assert!(
            plain == "BROWSER-CODE-1" || plain == "BROWSER-CODE-2",
            "{plain}"
        );
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("browser codes flow");
    let reveals: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'code.reveal'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(reveals, 1);
}

both!(
    browser_admin_uploads_codes_sees_the_bad_line_and_reveals_a_code,
    |app| {
        run_codes(&app).await;
    }
);

async fn run_not_sellable(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("service", "TEA-CLASS").await;
    let (s, b) = api
        .post("/api/v1/staff", serde_json::json!({"name": "Mia"}))
        .await;
    assert_eq!(s, 201, "{b}");
    let start = app.now() + chrono::Duration::days(2);
    let (s, b) = api
        .post(
            "/api/v1/slots",
            serde_json::json!({"sku": "TEA-CLASS", "staff": "Mia", "starts_at": start.to_rfc3339(), "ends_at": (start + chrono::Duration::hours(1)).to_rfc3339(), "capacity": 4}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = api
        .post(
            "/api/v1/closures",
            serde_json::json!({"staff": "Mia", "starts_at": (start - chrono::Duration::days(1)).to_rfc3339(), "ends_at": (start + chrono::Duration::days(1)).to_rfc3339(), "reason": "Staff on leave"}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (operator, operator_password) = app.user("operator", None).await;
    let (admin, admin_password) = app.user("merchant_admin", Some("acme")).await;
    let row = "//section[@id='reason-all_slots_closed']//tr[@data-sku='TEA-CLASS']";
    let c = browser(&driver).await;
    let result = async {
        // The operator sees why the class cannot be booked, and who can reopen it: no link to a
        // page where they could only read.
        sign_in(&c, app, &operator, &operator_password).await?;
        c.find(Locator::LinkText("Not sellable"))
            .await?
            .click()
            .await?;
        let heading = c
            .wait()
            .for_element(Locator::Css("#reason-all_slots_closed h2"))
            .await?
            .text()
            .await?;
        assert_eq!(heading, "All slots closed (1)");
        let why = c
            .find(Locator::XPath(&format!(
                "{row}//li[@data-code='all_slots_closed']"
            )))
            .await?
            .text()
            .await?;
        assert!(why.contains("Staff on leave (Mia, "), "{why}");
        assert!(
            c.find(Locator::XPath(&format!("{row}//a[@class='fix']")))
                .await
                .is_err(),
            "operators read; the merchant reopens"
        );
        let who = c
            .find(Locator::XPath(&format!(
                "{row}//span[@data-fixed-by='store']"
            )))
            .await?
            .text()
            .await?;
        assert!(who.contains("acme Ltd"), "{who}");
        c.find(Locator::Css("form[action='/logout'] button"))
            .await?
            .click()
            .await?;

        // The merchant admin follows the same link and reopens the closure.
        sign_in(&c, app, &admin, &admin_password).await?;
        c.goto(&app.url("/admin/sellable")).await?;
        c.wait()
            .for_element(Locator::XPath(&format!("{row}//a[@class='fix']")))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::XPath("//button[text()='Reopen…']"))
            .await?;
        c.execute("window.confirm = () => true; return true;", vec![])
            .await?;
        c.find(Locator::XPath("//button[text()='Reopen…']"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::XPath(
                "//dd[@id='closure-state' and starts-with(text(), 'reopened')]",
            ))
            .await?;

        // Back on the page, nothing is left to explain.
        c.find(Locator::LinkText("Not sellable"))
            .await?
            .click()
            .await?;
        let blocked = c
            .wait()
            .for_element(Locator::Css("#blocked-count"))
            .await?
            .text()
            .await?;
        assert_eq!(blocked, "0");
        assert!(
            c.find(Locator::XPath(row)).await.is_err(),
            "the class is sellable again"
        );
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("browser not-sellable flow");
    let (_, v) = api.get("/api/v1/skus/TEA-CLASS/sellable").await;
    assert_eq!(v["sellable"], true, "{v}");
    assert_eq!(v["quantity"], 4, "{v}");
}

both!(
    browser_operator_sees_all_slots_closed_for_leave_follows_the_link_and_once_reopened_the_class_is_sellable,
    |app| {
        run_not_sellable(&app).await;
    }
);

/// The page fits a phone's width: nothing to scroll sideways.
/// Clicks a link or button that loads a new page and waits until the new page has replaced the
/// old one. The public page already lists times on the day it opens on, so waiting for an
/// element alone can find the old page's copy just before it goes stale.
pub(crate) async fn click_to_next_page(
    c: &fantoccini::Client,
    element: fantoccini::elements::Element,
) -> Result<(), fantoccini::error::CmdError> {
    c.execute("window.__leaving = true; return true;", vec![])
        .await?;
    element.click().await?;
    for _ in 0..200 {
        let still = c
            .execute("return window.__leaving === true;", vec![])
            .await
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        if !still {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(())
}

pub(crate) async fn fits_the_width(
    c: &fantoccini::Client,
) -> Result<bool, fantoccini::error::CmdError> {
    let v = c
        .execute(
            "return document.documentElement.scrollWidth <= window.innerWidth;",
            vec![],
        )
        .await?;
    Ok(v == serde_json::json!(true))
}

pub(crate) async fn html_lang(
    c: &fantoccini::Client,
) -> Result<String, fantoccini::error::CmdError> {
    let v = c
        .execute("return document.documentElement.lang;", vec![])
        .await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// A phone in China: 390 × 844, Chinese first.
pub(crate) const PHONE: (u32, u32) = (390, 844);

/// A browser driver and a Chinese store with a tea class taught by 王美玲, one 60-minute slot two
/// days ahead with 3 places: (driver, API client, (slot id, local day, public slug)). None when
/// there is no chromedriver (the skip is recorded).
async fn chinese_class(
    app: &TestApp,
) -> Option<(
    Driver,
    crate::helpers::Api,
    (i64, chrono::NaiveDate, String),
)> {
    let driver = start_driver().await?;
    let api = app.acme_api().await;
    let (s, b) = api
        .post(
            "/api/v1/products",
            serde_json::json!({"name": "茶艺课", "kind": "service", "status": "ONLINE",
                               "skus": [{"code": "CLASS-60", "name": "60分钟", "price": 18800}]}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = api
        .post("/api/v1/staff", serde_json::json!({"name": "王美玲"}))
        .await;
    assert_eq!(s, 201, "{b}");
    let start = app.now() + chrono::Duration::days(2);
    let (s, b) = api
        .post(
            "/api/v1/slots",
            serde_json::json!({"sku": "CLASS-60", "staff": "王美玲", "starts_at": start.to_rfc3339(),
                               "ends_at": (start + chrono::Duration::hours(1)).to_rfc3339(), "capacity": 3}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    app.speaks(sellable::i18n::Lang::ZhCn, true).await;
    let tz: chrono_tz::Tz = "Asia/Shanghai".parse().unwrap();
    let class = (
        b["id"].as_i64().unwrap(),
        start.with_timezone(&tz).date_naive(),
        app.public_slug().await,
    );
    Some((driver, api, class))
}

async fn run_phone_booking_in_chinese(app: &TestApp) {
    let Some((driver, _, (slot_id, day, store))) = chinese_class(app).await else {
        return;
    };
    let c = browser_as(&driver, PHONE, "zh-CN").await;
    let result = async {
        c.goto(&app.url(&format!("/book/{store}"))).await?;
        c.wait().for_element(Locator::Css("nav.days")).await?;
        assert_eq!(html_lang(&c).await?, "zh-CN");
        assert!(fits_the_width(&c).await?, "the store page fits the phone");
        let price = c
            .find(Locator::Css(".services a .price"))
            .await?
            .text()
            .await?;
        assert_eq!(price, "¥188.00");
        let link = c
            .find(Locator::XPath(&format!(
                "//nav[@class='days']/a[contains(@href,'day={day}')]"
            )))
            .await?;
        click_to_next_page(&c, link).await?;
        c.wait()
            .for_element(Locator::Css(&format!("a[data-slot='{slot_id}']")))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("input[name=name]"))
            .await?
            .send_keys("林伟")
            .await?;
        assert!(fits_the_width(&c).await?, "the booking form fits the phone");
        c.find(Locator::Css("input[name=phone]"))
            .await?
            .send_keys("138 0013 8000")
            .await?;
        c.find(Locator::Css("form button[type=submit]"))
            .await?
            .click()
            .await?;
        let reference = c
            .wait()
            .for_element(Locator::Css(".reference"))
            .await?
            .text()
            .await?;
        assert_eq!(reference.len(), 10);
        assert_eq!(html_lang(&c).await?, "zh-CN");
        assert!(fits_the_width(&c).await?, "the confirmation fits the phone");
        c.find(Locator::Css("a.button.danger[href$='/cancel']"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("form[action$='/cancel'] button[type=submit]"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("dd.status[data-status='CANCELLED']"))
            .await?;
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("phone booking in Chinese");
    let booked: i64 = sqlx::query_scalar("SELECT booked FROM slots WHERE id = $1")
        .bind(slot_id)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(booked, 0, "the cancelled place is free again");
}

both!(
    browser_in_chinese_a_customer_books_and_cancels_on_a_phone,
    |app| {
        run_phone_booking_in_chinese(&app).await;
    }
);

async fn run_leave_in_chinese(app: &TestApp) {
    let Some((driver, api, (slot_id, day, _))) = chinese_class(app).await else {
        return;
    };
    let (s, b) = api.book(slot_id, "林伟", "+86 138 0013 8000", None).await;
    assert_eq!(s, 201, "{b}");
    let staff_id: i64 = sqlx::query_scalar("SELECT id FROM staff WHERE name = '王美玲'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let (email, password) = app.user("store_staff", Some("acme")).await;
    let c = browser_as(&driver, (1280, 900), "zh-CN").await;
    let result = async {
        sign_in(&c, app, &email, &password).await?;
        assert_eq!(html_lang(&c).await?, "zh-CN", "the merchant's language");
        c.goto(&app.url("/admin/closures")).await?;
        c.wait().for_element(Locator::Css("form.new-closure")).await?;
        c.execute(
            "document.querySelector('select[name=staff]').value = arguments[0]; document.querySelector('input[name=span][value=times]').click(); document.querySelector('input[name=starts_at]').value = arguments[1]; document.querySelector('input[name=ends_at]').value = arguments[2]; return true;",
            vec![
                serde_json::json!(staff_id.to_string()),
                serde_json::json!(format!("{day}T00:00")),
                serde_json::json!(format!("{}T00:00", day + chrono::Duration::days(1))),
            ],
        )
        .await?;
        // Beside the picker, the chosen time reads as the page writes dates.
        c.execute(
            "var i = document.querySelector('input[name=starts_at]'); i.dispatchEvent(new Event('input', {bubbles: true})); return true;",
            vec![],
        )
        .await?;
        let echo = c
            .find(Locator::Css("input[name=starts_at] + output.date-echo"))
            .await?
            .text()
            .await?;
        let midnight = day.and_hms_opt(0, 0, 0).unwrap();
        assert_eq!(echo, sellable::i18n::format::date_time(sellable::i18n::Lang::ZhCn, midnight));
        c.find(Locator::Css("form.new-closure input[name=reason]")).await?.send_keys("请假").await?;
        c.find(Locator::Css("form.new-closure button[type=submit]")).await?.click().await?;
        let name = c.wait().for_element(Locator::Css("table.contacts td.name")).await?.text().await?;
        assert_eq!(name, "林伟");
        let phone = c.find(Locator::Css("table.contacts td.phone")).await?.text().await?;
        assert_eq!(phone, "+86 138 0013 8000");
        assert_eq!(html_lang(&c).await?, "zh-CN");
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("leave in Chinese");
    let (status, closed_by): (String, Option<i64>) =
        sqlx::query_as("SELECT status, closure_id FROM slots WHERE id = $1")
            .bind(slot_id)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(status, "CLOSED");
    assert!(closed_by.is_some());
}

both!(
    browser_in_chinese_staff_close_a_teachers_slots_for_leave_and_see_the_bookings_to_call,
    |app| {
        run_leave_in_chinese(&app).await;
    }
);

async fn run_not_sellable_in_chinese(app: &TestApp) {
    let Some((driver, api, _)) = chinese_class(app).await else {
        return;
    };
    let now = app.now();
    let (s, b) = api
        .post(
            "/api/v1/closures",
            serde_json::json!({"staff": "王美玲", "starts_at": now.to_rfc3339(),
                               "ends_at": (now + chrono::Duration::days(30)).to_rfc3339(), "reason": "请假"}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (admin, password) = app.user("merchant_admin", Some("acme")).await;
    let title = sellable::i18n::scope(sellable::i18n::Lang::ZhCn, async {
        sellable::messages::reason_title(
            sellable::domain::sellable::ReasonCode::AllSlotsClosed.as_str(),
        )
    })
    .await;
    let c = browser_as(&driver, (1280, 900), "zh-CN").await;
    let result = async {
        sign_in(&c, app, &admin, &password).await?;
        c.goto(&app.url("/admin/sellable")).await?;
        let heading = c
            .wait()
            .for_element(Locator::Css("#reason-all_slots_closed h2"))
            .await?
            .text()
            .await?;
        assert!(heading.starts_with(&title), "{heading} / {title}");
        let why = c
            .find(Locator::XPath(
                "//section[@id='reason-all_slots_closed']//tr[@data-sku='CLASS-60']//li[@data-code='all_slots_closed']",
            ))
            .await?
            .text()
            .await?;
        // Chinese around the staff's own words and the teacher's name.
        assert!(why.contains("时段") && why.contains("请假") && why.contains("王美玲"), "{why}");
        assert_eq!(html_lang(&c).await?, "zh-CN");
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("not sellable in Chinese");
}

both!(
    browser_in_chinese_a_merchant_reads_why_a_class_is_not_sellable,
    |app| {
        run_not_sellable_in_chinese(&app).await;
    }
);

async fn run_release_and_redeem(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 2).await;
    api.reserve("unpaid-7", serde_json::json!([{"sku": "TEA", "qty": 2}]))
        .await;
    api.product("voucher", "GIFT").await;
    let (s, b) = api
        .upload("GIFT", "g.txt", b"RD-1001\nRD-1002\n".to_vec(), "valid")
        .await;
    assert_eq!(s, 202, "{b}");
    for _ in 0..100 {
        let (_, st) = api
            .get(&format!("/api/v1/code-batches/{}", b["batch_id"]))
            .await;
        if st["status"] != "CREATING" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    api.reserve("gift-1", serde_json::json!([{"sku": "GIFT", "qty": 1}]))
        .await;
    let (_, paid) = api
        .post("/api/v1/reservations/gift-1/confirm", serde_json::json!({}))
        .await;
    let code = paid["items"][0]["codes"][0].as_str().unwrap().to_string();
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let (staff_email, staff_password) = app.user("store_staff", Some("acme")).await;
    let c = browser(&driver).await;
    let result = async {
        // The merchant: "Not sellable" → the orders holding TEA → the order → release it.
        sign_in(&c, app, &email, &password).await?;
        c.goto(&app.url("/admin/sellable")).await?;
        c.wait()
            .for_element(Locator::Css("a.held-orders"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("tr[data-order='unpaid-7'] a"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("#release-link"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("input[name=reason]"))
            .await?
            .send_keys("customer called to cancel")
            .await?;
        c.find(Locator::Css("#release-hold")).await?.click().await?;
        c.wait()
            .for_element(Locator::Css("#release-reason"))
            .await?;
        let shot = c.screenshot().await?;
        std::fs::write(
            std::env::temp_dir().join("sellable-order-released.png"),
            shot,
        )
        .ok();
        c.find(Locator::Css("form[action='/logout'] button"))
            .await?
            .click()
            .await?;
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("browser release flow");
    assert_eq!(api.stock("TEA").await["available"], 2);
    // Store staff, on a phone, in Chinese (the merchant's language now): check the code, then
    // redeem it.
    app.speaks(sellable::i18n::Lang::ZhCn, true).await;
    let c = browser_as(&driver, (390, 844), "zh-CN").await;
    let result = async {
        sign_in(&c, app, &staff_email, &staff_password).await?;
        c.goto(&app.url("/admin/counter")).await?;
        c.wait()
            .for_element(Locator::Css("#counter-code"))
            .await?
            .send_keys(&code.to_lowercase())
            .await?;
        c.find(Locator::Css("form.counter-form button[type=submit]"))
            .await?
            .click()
            .await?;
        c.wait()
            .for_element(Locator::Css("#counter-result[data-state='SOLD']"))
            .await?;
        c.find(Locator::Css("#redeem")).await?.click().await?;
        c.wait()
            .for_element(Locator::Css("#counter-result[data-state='REDEEMED']"))
            .await?;
        assert!(fits_the_width(&c).await?, "the counter fits a phone");
        assert_eq!(html_lang(&c).await?, "zh-CN");
        assert!(
            !c.current_url().await?.as_str().contains(&code),
            "no code in the URL"
        );
        let shot = c.screenshot().await?;
        std::fs::write(std::env::temp_dir().join("sellable-counter-zh.png"), shot).ok();
        Ok::<(), fantoccini::error::CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("browser counter flow");
    let (s, b) = api
        .post("/api/v1/codes/redeem", serde_json::json!({"code": code}))
        .await;
    assert_eq!(
        (s, b["error"].as_str()),
        (409, Some("code_already_redeemed"))
    );
}

both!(
    browser_merchant_follows_a_held_sku_to_its_order_and_releases_it_and_staff_redeem_a_code_on_a_phone,
    |app| {
        run_release_and_redeem(&app).await;
    }
);
