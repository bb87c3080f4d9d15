//! The interface's language (issue 16): which language a page speaks, how a choice is remembered,
//! and that the headers say so. Assertions read `lang` attributes, headers and data hooks; the few
//! sentences checked are the catalogue's own, looked up through `Lang`.

use sellable::i18n::Lang;

use crate::both;
use crate::helpers::{html, Api};

/// Merchant `acme` (and, with `stores`, its stores) speaks `lang`.
async fn speaks(app: &crate::helpers::TestApp, lang: Lang, stores: bool) {
    app.speaks(lang, stores).await;
}

async fn get(c: &reqwest::Client, url: String, accept: Option<&str>) -> reqwest::Response {
    let mut r = c.get(url);
    if let Some(a) = accept {
        r = r.header("Accept-Language", a);
    }
    r.send().await.unwrap()
}

fn header(r: &reqwest::Response, name: &str) -> String {
    r.headers()
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

both!(
    the_booking_page_speaks_the_browsers_language_and_a_chosen_language_is_remembered,
    |app| {
        let api: Api = app.acme_api().await;
        api.product("service", "CUT").await;
        let store = app.public_slug().await;
        let c = app.client();

        let r = get(
            &c,
            app.url(&format!("/book/{store}")),
            Some("zh-CN,zh;q=0.9,en;q=0.8"),
        )
        .await;
        assert_eq!(r.status(), 200);
        assert_eq!(header(&r, "content-language"), "zh-CN");
        assert!(
            header(&r, "vary").contains("Accept-Language"),
            "{}",
            header(&r, "vary")
        );
        let page = html(r).await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
        assert_eq!(
            page.text("h1"),
            Lang::ZhCn.t1("public-book-at", "store", "Main store")
        );

        // ?lang= wins over the browser, and the cookie it leaves keeps it on the next page.
        let r = get(
            &c,
            app.url(&format!("/book/{store}?lang=en")),
            Some("zh-CN"),
        )
        .await;
        assert!(
            header(&r, "set-cookie").contains("sellable_lang=en"),
            "{}",
            header(&r, "set-cookie")
        );
        assert_eq!(html(r).await.attr("html", "lang").as_deref(), Some("en"));
        let r = get(&c, app.url(&format!("/book/{store}")), Some("zh-CN")).await;
        assert_eq!(header(&r, "content-language"), "en");
        let page = html(r).await;
        assert_eq!(page.text("h1"), "Book at Main store");
        assert_eq!(
            page.attr(".lang-switch a[aria-current]", "data-lang")
                .as_deref(),
            Some("en")
        );
    }
);

both!(
    a_chinese_store_greets_a_browser_that_names_none_of_our_languages_in_chinese,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        speaks(&app, Lang::ZhCn, true).await;
        let store = app.public_slug().await;
        let c = app.client();
        for accept in [None, Some("fr-FR, de;q=0.8"), Some("zh-TW")] {
            let page = html(get(&c, app.url(&format!("/book/{store}")), accept).await).await;
            assert_eq!(
                page.attr("html", "lang").as_deref(),
                Some("zh-CN"),
                "{accept:?}"
            );
        }
        // A browser that asks for English gets it, whatever the store speaks.
        let page = html(get(&c, app.url(&format!("/book/{store}")), Some("en-GB")).await).await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("en"));
    }
);

both!(
    staff_read_their_merchants_language_until_they_choose_their_own_in_the_header_which_keeps_the_pages_query,
    |app| {
        app.merchant("acme").await;
        speaks(&app, Lang::ZhCn, false).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        // The merchant's language beats the browser's for its people.
        let r = get(&admin, app.url("/admin"), Some("en-US")).await;
        assert_eq!(header(&r, "content-language"), "zh-CN");
        let page = html(r).await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
        assert_eq!(
            page.text(".mainnav a[aria-current=page]"),
            Lang::ZhCn.t("nav-dashboard")
        );

        let r = admin
            .post(app.url("/account/language"))
            .form(&[("lang", "en"), ("next", "/admin?x=1")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(header(&r, "location"), "/admin?x=1");
        let page = app.page(&admin, "/admin").await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("en"));
        // The switcher comes back to the page with its filters, sort and page.
        let list = app
            .page(&admin, "/admin/stock?status=low&sort=available&desc=1&page=1")
            .await;
        assert_eq!(
            list.attr(".lang-switch input[name=next]", "value").as_deref(),
            Some("/admin/stock?status=low&sort=available&desc=1&page=1")
        );
        assert_eq!(
            page.attr(".lang-switch button[aria-current]", "data-lang")
                .as_deref(),
            Some("en")
        );
        // Remembered on the account: a new sign-in reads English too.
        let stored: Option<String> =
            sqlx::query_scalar("SELECT language FROM users WHERE role = 'merchant_admin'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(stored.as_deref(), Some("en"));

        // An unknown language changes nothing; another site's redirect target is refused.
        let r = admin
            .post(app.url("/account/language"))
            .form(&[("lang", "xx"), ("next", "//evil.example")])
            .send()
            .await
            .unwrap();
        assert_eq!(header(&r, "location"), "/admin");
        assert_eq!(
            app.page(&admin, "/admin")
                .await
                .attr("html", "lang")
                .as_deref(),
            Some("en")
        );
    }
);

both!(sign_in_and_error_pages_speak_the_visitors_language, |app| {
    let c = app.client();
    let r = get(&c, app.url("/login"), Some("zh-CN")).await;
    assert_eq!(header(&r, "content-language"), "zh-CN");
    let page = html(r).await;
    assert_eq!(page.text("h1"), Lang::ZhCn.t("login-title"));
    let r = get(&c, app.url("/no/such/page"), Some("zh")).await;
    assert_eq!(r.status(), 404);
    let page = html(r).await;
    assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
    assert!(
        page.text("h1")
            .contains(&Lang::ZhCn.t1("error-title", "status", 404i64)),
        "{}",
        page.text("h1")
    );
    let page = html(get(&c, app.url("/login"), None).await).await;
    assert_eq!(page.attr("html", "lang").as_deref(), Some("en"));
});

both!(
    the_api_answers_a_chinese_message_for_a_chinese_caller_with_the_same_error_code,
    |app| {
        let api = app.acme_api().await;
        let body = serde_json::json!({"order_id": "o-1", "items": [{"sku": "NOPE", "qty": 1}]});
        let ask = |lang: Option<&'static str>| {
            let mut r = api
                .http
                .post(format!("{}/api/v1/reservations", api.base))
                .bearer_auth(&api.key)
                .json(&body);
            if let Some(l) = lang {
                r = r.header("Accept-Language", l);
            }
            r.send()
        };
        let en = ask(None).await.unwrap();
        assert_eq!(header(&en, "content-language"), "en");
        let en: serde_json::Value = en.json().await.unwrap();
        let zh = ask(Some("zh-CN,zh;q=0.9")).await.unwrap();
        assert_eq!(header(&zh, "content-language"), "zh-CN");
        let zh: serde_json::Value = zh.json().await.unwrap();
        assert_eq!(en["error"], zh["error"], "{en} {zh}");
        assert_eq!(en["error"], "unknown_sku", "{en}");
        // Field names and codes do not change with the language; only the sentences do.
        assert_eq!(
            en["fields"][0]["field"], zh["fields"][0]["field"],
            "{en} {zh}"
        );
        assert_eq!(
            en["fields"][0]["code"], zh["fields"][0]["code"],
            "{en} {zh}"
        );
        sellable::i18n::scope(Lang::ZhCn, async {
            assert_eq!(
                zh["message"],
                sellable::messages::unknown_sku("NOPE"),
                "{zh}"
            );
        })
        .await;
        assert_eq!(
            en["message"],
            sellable::messages::unknown_sku("NOPE"),
            "{en}"
        );
        assert_ne!(en["message"], zh["message"]);
        // A cookie never changes the API's language: only Accept-Language does.
        let r = api
            .http
            .post(format!("{}/api/v1/reservations", api.base))
            .bearer_auth(&api.key)
            .header("Cookie", "sellable_lang=zh-CN")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(header(&r, "content-language"), "en");
    }
);

both!(
    a_chinese_customer_is_refused_in_chinese_on_a_full_slot,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        speaks(&app, Lang::ZhCn, true).await;
        let start = app.now() + chrono::Duration::hours(30);
        let slot = api
            .one_off("CUT", start, start + chrono::Duration::minutes(45), 1)
            .await;
        let store = app.public_slug().await;
        let c = app.client();
        let path = format!("/book/{store}/slots/{slot}");
        let key = crate::public_booking::form_token(&app, &c, &path).await;
        let r = c
            .post(app.url(&path))
            .form(&[
                ("name", "王芳"),
                ("phone", "138 0013 8000"),
                ("idempotency_key", key.as_str()),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303, "booked");
        // The next customer, with no language preference, reads the store's Chinese.
        let other = app.client_from(2);
        let page = html(other.get(app.url(&path)).send().await.unwrap()).await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
        let expected =
            sellable::i18n::scope(Lang::ZhCn, async { sellable::messages::slot_full() }).await;
        assert_eq!(page.text(".refusal p"), expected);
    }
);

both!(
    a_chinese_booking_page_writes_its_days_in_chinese_and_the_switcher_keeps_the_chosen_day,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let start = app.now() + chrono::Duration::hours(30);
        api.one_off("CUT", start, start + chrono::Duration::minutes(45), 2)
            .await;
        let store = app.public_slug().await;
        let c = app.client();
        let tomorrow = (app.now() + chrono::Duration::days(1))
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .date_naive();
        let day = tomorrow.format("%Y-%m-%d").to_string();
        let url = app.url(&format!("/book/{store}?service=CUT&day={day}&lang=zh-CN"));
        let page = html(c.get(url).send().await.unwrap()).await;
        assert_eq!(
            page.attr(".days a.selected", "aria-label")
                .unwrap_or_default(),
            sellable::i18n::format::day_short(Lang::ZhCn, tomorrow)
        );
        assert!(
            page.attr(".days a.selected", "aria-label")
                .unwrap_or_default()
                .contains('月'),
            "{:?}",
            page.attr(".days a.selected", "aria-label")
        );
        assert_eq!(
            page.text("h2"),
            sellable::i18n::format::day_long(Lang::ZhCn, tomorrow)
        );
        let en = page.attr(".lang-switch a[data-lang=en]", "href").unwrap();
        assert_eq!(en, format!("/book/{store}?service=CUT&day={day}&lang=en"));
        let page = html(c.get(app.url(&en)).send().await.unwrap()).await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("en"));
        assert_eq!(
            page.attr(".days a.selected", "aria-label")
                .unwrap_or_default(),
            sellable::i18n::format::day_short(Lang::En, tomorrow)
        );
    }
);

both!(
    the_language_picked_on_the_sign_in_page_becomes_the_accounts_and_a_missing_page_says_what_is_missing,
    |app| {
        app.merchant("acme").await;
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        let c = app.client();
        let r = c.get(app.url("/login?lang=zh-CN")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let r = c
            .post(app.url("/login"))
            .form(&[("email", email.as_str()), ("password", password.as_str()), ("next", "/admin")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&c, "/admin").await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
        let stored: Option<String> =
            sqlx::query_scalar("SELECT language FROM users WHERE email = $1")
                .bind(&email)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(stored.as_deref(), Some("zh-CN"));

        let r = get(&app.client(), app.url("/book/no-such-store"), Some("zh-CN")).await;
        assert_eq!(r.status(), 404);
        let expected = sellable::i18n::scope(Lang::ZhCn, async {
            sellable::messages::public_not_found("store")
        })
        .await;
        assert!(expected.contains("门店"), "{expected}");
        let page = html(r).await;
        assert_eq!(page.text(".error-message"), expected);
        // The customer's page, not the back office's: no dashboard bar or link into /admin.
        assert_eq!(page.count("a[href^=\"/admin\"]"), 0);
        assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
    }
);

both!(
    a_chinese_weekly_schedule_names_its_days_in_chinese_and_its_form_keeps_the_codes,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        speaks(&app, Lang::ZhCn, false).await;
        let sku_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'CUT'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let url = format!("/admin/services/{sku_id}/schedule");
        let page = app.page(&admin, &url).await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
        assert_eq!(page.text("section h2"), Lang::ZhCn.t("rules-current"));
        let days = page.texts(".week-editor fieldset.day > legend");
        assert!(
            days.first().is_some_and(|d| d.starts_with("周一")) && days.len() == 7,
            "{days:?}"
        );
        assert_eq!(
            page.attr(".range[data-row=\"0\"] input[type=hidden]", "value")
                .as_deref(),
            Some("MON")
        );

        let form = [
            ("store", "main-store"),
            ("rules[0].weekdays", "MON"),
            ("rules[0].weekdays", "TUE"),
            ("rules[0].opens", "09:00"),
            ("rules[0].closes", "11:00"),
            ("rules[0].slot_minutes", "60"),
            ("rules[0].capacity", "2"),
            ("rules[0].staff", ""),
        ];
        let r = admin.post(app.url(&url)).form(&form).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let page = html(r).await;
        let count =
            |attr: &str| -> i64 { page.attr("#report-counts", attr).unwrap().parse().unwrap() };
        let said = Lang::ZhCn.t_args(
            "rules-report",
            &[
                ("created", count("data-created").into()),
                ("removed", count("data-removed").into()),
                ("changed", count("data-capacity-changed").into()),
                ("days", count("data-days").into()),
            ],
        );
        assert!(said.contains("个时段"), "{said}");
        assert_eq!(page.text("#report-counts"), said);
        assert_eq!(
            page.text("table.rules tbody tr td:first-child"),
            "周一、周二"
        );
        assert_eq!(
            page.attr("table.rules tbody tr td[data-days]", "data-days")
                .as_deref(),
            Some("MON TUE")
        );
    }
);
