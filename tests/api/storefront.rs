//! What the booking page tells a customer about what they book (service, price, duration, the
//! store's address, phone and description), the back-office page that sets it, and the store's
//! own error pages.

use serde_json::json;

use crate::both;
use crate::helpers::{html, Api, TestApp};
use sellable::i18n::{format, Lang};

/// A service "CLASS" (¥1,288.50, with a description) and one 45-minute slot a day ahead with 2
/// places; the slot's id.
async fn class(api: &Api) -> i64 {
    let (s, b) = api
        .post(
            "/api/v1/products",
            json!({"name": "Tea class", "description": "Learn to brew oolong.", "kind": "service",
                   "status": "ONLINE", "skus": [{"code": "CLASS", "name": "Beginners", "price": 128850}]}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["description"], "Learn to brew oolong.");
    let start = api.now() + chrono::Duration::hours(26);
    api.one_off("CLASS", start, start + chrono::Duration::minutes(45), 2)
        .await
}

async fn store_id(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT id FROM stores WHERE slug = 'main-store'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

fn storefront<'a>(phone: &'a str, language: &'a str) -> [(&'static str, &'a str); 4] {
    [
        ("address", "上海市黄浦区南京东路 299 号"),
        ("phone", phone),
        ("description", "外滩旁的安静茶室。"),
        ("language", language),
    ]
}

both!(
    the_booking_page_names_the_service_its_price_duration_and_the_store_in_both_languages,
    |app| {
        let api = app.acme_api().await;
        let slot = class(&api).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let store = store_id(&app).await;
        let r = admin
            .post(app.url(&format!("/admin/stores/{store}")))
            .form(&storefront("021 6321 8866", "zh-CN"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let slug = app.public_slug().await;
        let c = app.client();
        // The store speaks Chinese to a browser that asks for nothing of ours.
        let page = app.page(&c, &format!("/book/{slug}")).await;
        assert_eq!(page.attr("html", "lang").as_deref(), Some("zh-CN"));
        assert_eq!(page.text("#store-address"), "上海市黄浦区南京东路 299 号");
        assert_eq!(
            page.attr("#store-phone", "href").as_deref(),
            Some("tel:+862163218866")
        );
        assert_eq!(page.text(".services a strong"), "Tea class");
        assert_eq!(page.text(".services a .price"), "¥1,288.50");
        assert_eq!(
            page.text(".services a .duration"),
            format::minutes(Lang::ZhCn, 45)
        );
        assert_eq!(page.text("#service-description"), "Learn to brew oolong.");
        let en = app.page(&c, &format!("/book/{slug}?lang=en")).await;
        assert_eq!(en.text(".services a .price"), "CN¥1,288.50");
        assert_eq!(en.text(".services a .duration"), "45 minutes");

        // The slot's page and the confirmation say the same, and the places are the slot's.
        let form_page = app.page(&c, &format!("/book/{slug}/slots/{slot}")).await;
        assert_eq!(form_page.text("h1"), "Tea class");
        assert_eq!(form_page.text(".offer .price"), "CN¥1,288.50");
        assert_eq!(
            form_page
                .attr("[data-remaining]", "data-remaining")
                .as_deref(),
            Some("2")
        );
        assert_eq!(
            form_page.text("#store-address"),
            "上海市黄浦区南京东路 299 号"
        );
        let key = form_page
            .attr("input[name=idempotency_key]", "value")
            .unwrap();
        let r = c
            .post(app.url(&format!("/book/{slug}/slots/{slot}")))
            .form(&[
                ("name", "林伟"),
                ("phone", "138 0013 8000"),
                ("idempotency_key", &key),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let location = r.headers()["location"].to_str().unwrap().to_string();
        let done = app.page(&c, &location).await;
        assert_eq!(done.text("#booked-service"), "Tea class · Beginners");
        assert_eq!(done.text("dd.price"), "CN¥1,288.50");
        // The slot is a day ahead: the confirmation counts down in hours.
        let starts_in = done.text("#starts-in");
        assert!(
            starts_in.starts_with("in ") && starts_in.ends_with(" hours"),
            "{starts_in}"
        );
        assert_eq!(
            done.attr("#store-phone", "href").as_deref(),
            Some("tel:+862163218866")
        );
        let zh = app.page(&c, &format!("{location}?lang=zh-CN")).await;
        assert_eq!(zh.text("dd.price"), "¥1,288.50");
    }
);

both!(
    store_settings_refuse_a_bad_phone_beside_the_field_and_change_nothing,
    |app| {
        app.merchant("acme").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let store = store_id(&app).await;
        let page = app.page(&admin, &format!("/admin/stores/{store}")).await;
        assert_eq!(page.count("form textarea[name=description]"), 1);
        let r = admin
            .post(app.url(&format!("/admin/stores/{store}")))
            .form(&storefront("12", "fr"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(page.count(".field-error[data-field=phone]"), 1);
        assert_eq!(page.count(".field-error[data-field=language]"), 1);
        // What was typed stays in the form.
        assert_eq!(
            page.text("textarea[name=description]"),
            "外滩旁的安静茶室。"
        );
        let (address, language): (String, String) =
            sqlx::query_as("SELECT address, language FROM stores WHERE id = $1")
                .bind(store)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(address, "");
        assert_eq!(language, "en");
        // A control character is refused at the edge like anywhere else; lines are kept.
        let r = admin
            .post(app.url(&format!("/admin/stores/{store}")))
            .form(&[
                ("address", "a"),
                ("phone", ""),
                ("description", "a\u{7}b"),
                ("language", "en"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400);
        let r = admin
            .post(app.url(&format!("/admin/stores/{store}")))
            .form(&[
                ("address", "Line 1\r\nLine 2"),
                ("phone", ""),
                ("description", ""),
                ("language", "en"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let address: String = sqlx::query_scalar("SELECT address FROM stores WHERE id = $1")
            .bind(store)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(address, "Line 1\nLine 2");
    }
);

both!(
    only_the_stores_merchant_admin_edits_its_booking_page,
    |app| {
        app.merchant("acme").await;
        app.merchant("other").await;
        let theirs: i64 = sqlx::query_scalar(
            "SELECT s.id FROM stores s JOIN merchants m ON m.id = s.merchant_id WHERE m.slug = 'other'",
        )
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let r = admin
            .post(app.url(&format!("/admin/stores/{theirs}")))
            .form(&storefront("021 6321 8866", "en"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let ours = store_id(&app).await;
        let r = staff
            .get(app.url(&format!("/admin/stores/{ours}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        let untouched: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM stores WHERE address <> '' OR phone <> ''")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(untouched, 0);
    }
);

both!(
    a_missing_slot_or_booking_is_answered_on_the_stores_own_page,
    |app| {
        app.merchant("acme").await;
        let slug = app.public_slug().await;
        let c = app.client();
        for path in [
            format!("/book/{slug}/slots/999999"),
            format!("/book/{slug}/slots/not-a-number"),
        ] {
            let r = c.get(app.url(&path)).send().await.unwrap();
            assert_eq!(r.status(), 404, "{path}");
            let page = html(r).await;
            assert_eq!(
                page.attr("#back-to-store", "href"),
                Some(format!("/book/{slug}"))
            );
            assert_eq!(page.count("a[href^=\"/admin\"]"), 0, "{path}");
            assert_eq!(
                page.attr(".error-page", "data-status").as_deref(),
                Some("404")
            );
        }
        let r = c.get(app.url("/booking/NOSUCHREF1")).send().await.unwrap();
        assert_eq!(r.status(), 404);
        let page = html(r).await;
        assert_eq!(page.count("a[href^=\"/admin\"]"), 0);
        assert_eq!(
            page.text(".error-message"),
            sellable::messages::public_not_found("booking")
        );
    }
);

both!(
    prices_typed_with_a_yuan_sign_full_width_digits_or_the_chinese_comma_are_read_as_meant,
    |app| {
        app.merchant("acme").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        for (i, typed) in ["¥1,288.50", "￥１，２８８．５", "1288.50元"]
            .iter()
            .enumerate()
        {
            let code = format!("P-{i}");
            let r = admin
                .post(app.url("/admin/products"))
                .form(&[
                    ("name", "Tea"),
                    ("kind", "goods"),
                    ("status", "DRAFT"),
                    ("sku_code", code.as_str()),
                    ("sku_name", "Tin"),
                    ("sku_price", typed),
                ])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 303, "{typed}");
            let price: i64 = sqlx::query_scalar("SELECT price FROM skus WHERE code = $1")
                .bind(&code)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
            assert_eq!(price, 128_850, "{typed}");
        }
    }
);

both!(
    a_services_description_edited_in_the_back_office_is_what_the_booking_page_shows,
    |app| {
        let api = app.acme_api().await;
        let slot = class(&api).await;
        let product: i64 = sqlx::query_scalar("SELECT id FROM products WHERE name = 'Tea class'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let page = app
            .page(&admin, &format!("/admin/products/{product}"))
            .await;
        assert_eq!(
            page.text("textarea[name=description]"),
            "Learn to brew oolong."
        );
        let r = admin
            .post(app.url(&format!("/admin/products/{product}")))
            .form(&[
                ("name", "Tea class"),
                ("description", "学习冲泡乌龙茶。"),
                ("status", "ONLINE"),
                ("sale_starts_at", ""),
                ("sale_ends_at", ""),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let slug = app.public_slug().await;
        let page = app
            .page(&app.client(), &format!("/book/{slug}/slots/{slot}"))
            .await;
        assert_eq!(page.text("#service-description"), "学习冲泡乌龙茶。");
        // A change without the field leaves the description as it is.
        let (s, b) = api
            .call(
                reqwest::Method::PATCH,
                &format!("/api/v1/products/{product}"),
                Some(json!({"status": "ONLINE"})),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["description"], "学习冲泡乌龙茶。");
    }
);

both!(
    an_admin_renames_a_store_and_sets_its_phone_country_and_a_bad_country_changes_nothing,
    |app| {
        app.merchant("acme").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let store = store_id(&app).await;
        let mut form: Vec<(&str, String)> = crate::helpers::store_form("", "");
        form.push(("name", "浦东店".to_string()));
        form.push(("country", "hk".to_string()));
        form.retain(|(k, _)| *k != "phone");
        form.push(("phone", "2345 6789".to_string()));
        let r = admin
            .post(app.url(&format!("/admin/stores/{store}")))
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let (name, country, phone): (String, Option<String>, String) =
            sqlx::query_as("SELECT name, country, phone FROM stores WHERE id = $1")
                .bind(store)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(name, "浦东店");
        assert_eq!(country.as_deref(), Some("HK"));
        assert!(
            phone.starts_with("+852"),
            "read as a Hong Kong number: {phone}"
        );
        // A country libphonenumber does not know, and an empty name: said at the fields.
        let mut bad = crate::helpers::store_form("", "");
        bad.push(("name", " ".to_string()));
        bad.push(("country", "XX".to_string()));
        let r = admin
            .post(app.url(&format!("/admin/stores/{store}")))
            .form(&bad)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let page = crate::helpers::html(r).await;
        assert_eq!(page.count("p.field-error[data-field=country]"), 1);
        assert_eq!(page.count("p.field-error[data-field=name]"), 1);
        let name: String = sqlx::query_scalar("SELECT name FROM stores WHERE id = $1")
            .bind(store)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(name, "浦东店");
    }
);
