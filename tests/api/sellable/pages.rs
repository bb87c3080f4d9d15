//! The back office's "Not sellable" pages, the SKU page's verdict, and the fixes they link to.

#[allow(unused_imports)]
use super::*;

pub(super) async fn page(
    app: &TestApp,
    client: &reqwest::Client,
    path: &str,
) -> crate::helpers::Html {
    let r = client.get(app.url(path)).send().await.unwrap();
    assert_eq!(r.status(), 200, "{path}");
    crate::helpers::html(r).await
}

/// acme: a draft with stock, goods out of stock, a service whose only slot is closed for leave,
/// and goods in stock.
pub(super) async fn acme_catalog(app: &TestApp) -> Api {
    let api = app.acme_api().await;
    for c in TABLE.iter().filter(|c| {
        matches!(
            c.situation,
            Draft | OutOfStock | AllSlotsClosed | GoodsInStock | LowStock
        )
    }) {
        build(app, &api, c).await;
    }
    api
}

both!(
    not_sellable_page_groups_skus_under_each_reason_with_counts_and_fix_links,
    |app| {
        acme_catalog(&app).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let p = page(&app, &admin, "/admin/sellable").await;
        assert_eq!(p.text("#blocked-count"), "3");
        assert_eq!(
            p.texts(".reason-counts a"),
            [
                "Product is a draft 1",
                "Out of stock 1",
                "All slots closed 1"
            ]
        );
        assert_eq!(
            p.texts("section.reason-group h2"),
            [
                "Product is a draft (1)",
                "Out of stock (1)",
                "All slots closed (1)"
            ]
        );
        assert_eq!(
            p.texts("section#reason-all_slots_closed tr[data-sku] code"),
            ["ALLSLOTSCLOSED"]
        );
        let closed = "section#reason-all_slots_closed li[data-code=all_slots_closed]";
        assert!(
            p.text(closed).contains("staff on leave (Mia, "),
            "{}",
            p.text(closed)
        );
        let fix = p.attr(&format!("{closed} a.fix"), "href").unwrap();
        assert!(fix.starts_with("/admin/closures/"), "{fix}");
        assert_eq!(
            p.attr("section#reason-out_of_stock tr[data-sku] td a", "href")
                .unwrap(),
            p.attr(
                "section#reason-out_of_stock li[data-code=out_of_stock] a.fix",
                "href"
            )
            .unwrap(),
            "the SKU's own page is its stock page, where the fix is"
        );
        assert_eq!(
            p.count("tr[data-sku=GOODSINSTOCK]"),
            0,
            "sellable SKUs are not listed"
        );
        assert_eq!(
            p.texts(".warning-counts a"),
            ["Low stock (1)"],
            "warnings are counted apart"
        );

        // One reason's own list.
        let p = page(&app, &admin, "/admin/sellable?reason=out_of_stock").await;
        assert_eq!(p.texts("tr[data-sku] code"), ["OUTOFSTOCK"]);
        assert_eq!(p.count("section.reason-group"), 0);
        let p = page(&app, &admin, "/admin/sellable?reason=low_stock").await;
        assert_eq!(p.texts("tr[data-sku] code"), ["LOWSTOCK"]);

        // Store staff read it too; the nav links it for everyone. They are led to the fixes
        // they can make (a closure) and told who makes the others (stock: the admin).
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let p = page(&app, &staff, "/admin/sellable").await;
        assert_eq!(p.text("#blocked-count"), "3");
        assert_eq!(p.count(".mainnav a[href='/admin/sellable']"), 1);
        assert_eq!(p.count(&format!("{closed} a.fix")), 1);
        let stock = "section#reason-out_of_stock li[data-code=out_of_stock]";
        assert_eq!(p.count(&format!("{stock} a.fix")), 0);
        assert_eq!(
            p.attr(&format!("{stock} .fix-by"), "data-fixed-by")
                .as_deref(),
            Some("admin")
        );
        assert!(p.text(&format!("{stock} .fix-by")).contains("acme Ltd"));
        // No link leads from a page to itself: the SKU's stock page names no fix on it.
        let sku_page = p
            .attr("section#reason-out_of_stock tr[data-sku] td a", "href")
            .unwrap();
        let own = page(&app, &admin, &sku_page).await;
        assert_eq!(
            own.count(&format!(
                "section.verdict li[data-code=out_of_stock] a[href='{sku_page}']"
            )),
            0
        );
    }
);

both!(
    operators_see_every_merchants_non_sellable_skus_and_can_narrow_to_one,
    |app| {
        let acme = app.acme_api().await;
        product(&acme, "goods", "ACME-EMPTY").await;
        app.merchant("globex").await;
        let globex = Api {
            key: app.api_key("globex").await,
            ..acme.clone()
        };
        product(&globex, "goods", "GLOBEX-EMPTY").await;
        let operator = app.signed_in("operator", None).await;
        let p = page(&app, &operator, "/admin/sellable").await;
        assert_eq!(
            p.texts("section#reason-no_stock_record tr[data-sku] td:first-child"),
            ["acme Ltd", "globex Ltd"]
        );
        let p = page(&app, &operator, "/admin/sellable?merchant=globex").await;
        assert_eq!(p.texts("tr[data-sku] code"), ["GLOBEX-EMPTY"]);
        // An operator cannot receive stock: no link, but whose admin can.
        assert_eq!(p.count("li[data-code=no_stock_record] a.fix"), 0);
        assert_eq!(
            p.attr("li[data-code=no_stock_record] .fix-by", "data-fixed-by")
                .as_deref(),
            Some("admin")
        );
        assert!(p
            .text("li[data-code=no_stock_record] .fix-by")
            .contains("globex Ltd"));
        assert_eq!(
            p.attr(".reason-counts a", "href").unwrap(),
            "/admin/sellable?reason=no_stock_record&merchant=globex",
            "the counts keep the merchant filter"
        );
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let p = page(&app, &admin, "/admin/sellable?merchant=globex").await;
        assert_eq!(
            p.texts("tr[data-sku] code"),
            ["ACME-EMPTY"],
            "a merchant sees its own SKUs whatever the query says"
        );
        assert_eq!(p.count("select[name=merchant]"), 0);
    }
);

both!(
    a_skus_own_pages_show_its_verdict_and_reasons_at_the_top,
    |app| {
        let api = acme_catalog(&app).await;
        for c in TABLE
            .iter()
            .filter(|c| matches!(c.situation, NoCodesAvailable | ServiceOpen))
        {
            build(&app, &api, c).await;
        }
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let id = |code: &'static str| {
            let api = api.clone();
            async move { sku_json(&api, code).await["id"].as_i64().unwrap() }
        };

        let p = page(
            &app,
            &admin,
            &format!("/admin/skus/{}/stock", id("OUTOFSTOCK").await),
        )
        .await;
        assert_eq!(
            p.attr("#stock-panel section.verdict", "data-sellable")
                .unwrap(),
            "false"
        );
        assert_eq!(p.text(".verdict-head"), "Not sellable");
        assert_eq!(
            p.texts(".verdict li.reason").len(),
            1,
            "one reason: {:?}",
            p.texts(".verdict li.reason")
        );
        assert!(p
            .text(".verdict li[data-code=out_of_stock]")
            .contains("3 held by unpaid orders"));

        let p = page(
            &app,
            &admin,
            &format!("/admin/skus/{}/stock", id("LOWSTOCK").await),
        )
        .await;
        assert_eq!(p.text(".verdict-head"), "Sellable · 2 available");
        assert_eq!(
            p.count(".verdict li.reason-warning[data-code=low_stock]"),
            1
        );

        let product = sku_json(&api, "DRAFT").await["product_id"]
            .as_i64()
            .unwrap();
        let p = page(&app, &admin, &format!("/admin/products/{product}")).await;
        assert_eq!(p.count("#product-verdicts li[data-code=product_draft]"), 1);
        assert_eq!(
            p.count("#product-verdicts li[data-code=product_draft] a"),
            0,
            "the fix is on this very page: no link to itself"
        );

        let p = page(
            &app,
            &admin,
            &format!("/admin/services/{}/schedule", id("ALLSLOTSCLOSED").await),
        )
        .await;
        assert!(p
            .text(".verdict li[data-code=all_slots_closed]")
            .contains("staff on leave"));
        let p = page(
            &app,
            &admin,
            &format!("/admin/services/{}/schedule", id("SERVICEOPEN").await),
        )
        .await;
        assert!(
            p.text(".verdict-head")
                .starts_with("Sellable · 2 places left in the next slot, "),
            "{}",
            p.text(".verdict-head")
        );
        assert!(p.text(".verdict .next-slots").contains("2 of 2 left"));

        let p = page(&app, &admin, "/admin/codes?sku=NOCODESAVAILABLE").await;
        assert!(p
            .text(".verdict li[data-code=no_codes_available]")
            .contains("2 held by unpaid orders"));
    }
);

/// A one-off slot today in the store's timezone (Asia/Shanghai), waiting out the last seconds
/// of a day rather than landing in the next one.
pub(super) async fn slot_today(api: &Api, sku: &str) -> i64 {
    let tz = chrono_tz::Asia::Shanghai;
    loop {
        let now = api.now();
        let local = now.with_timezone(&tz);
        let midnight = (local.date_naive() + chrono::Duration::days(1))
            .and_hms_opt(0, 0, 0)
            .unwrap();
        let left = midnight - local.naive_local();
        if left < chrono::Duration::seconds(30) {
            tokio::time::sleep(Duration::from_secs(31)).await;
            continue;
        }
        let start = now + (left / 2).min(chrono::Duration::hours(1));
        let (s, b) = api
            .post(
                "/api/v1/slots",
                json!({"sku": sku, "starts_at": start.to_rfc3339(), "ends_at": (start + chrono::Duration::minutes(5)).to_rfc3339(), "capacity": 5}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        return b["id"].as_i64().unwrap();
    }
}

both!(
    dashboard_tiles_count_not_sellable_low_stock_open_findings_and_todays_bookings,
    |app| {
        let api = acme_catalog(&app).await;
        product(&api, "service", "TODAY").await;
        let today = slot_today(&api, "TODAY").await;
        for _ in 0..2 {
            let (s, b) = book(&api, today).await;
            assert_eq!(s, 201, "{b}");
        }
        let cancelled = book(&api, today).await.1["reference"]
            .as_str()
            .unwrap()
            .to_string();
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{cancelled}/cancel"), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        let later = slot(&api, "TODAY", 3.0, 5, None).await;
        let (s, b) = book(&api, later).await;
        assert_eq!(s, 201, "{b}");
        build(&app, &api, &case(SkuFrozen, "goods", false, &[], &[])).await;
        run_reconciliation(&app).await;

        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let p = page(&app, &admin, "/admin").await;
        assert_eq!(
            p.text("#tile-not-sellable .num"),
            "4",
            "draft, out of stock, closed, frozen"
        );
        assert_eq!(p.text("#tile-low-stock .num"), "1");
        assert_eq!(p.text("#tile-open-findings .num"), "1");
        assert_eq!(
            p.text("#tile-bookings-today .num"),
            "2",
            "not the cancelled one, not the later one"
        );

        let staff = app.signed_in("store_staff", Some("acme")).await;
        let p = page(&app, &staff, "/admin").await;
        assert_eq!(p.text("#tile-not-sellable .num"), "4");
        assert_eq!(
            p.count("#tile-open-findings"),
            0,
            "staff do not review findings"
        );

        app.merchant("globex").await;
        let other = app.signed_in("merchant_admin", Some("globex")).await;
        let p = page(&app, &other, "/admin").await;
        assert_eq!(p.text("#tile-not-sellable .num"), "0");
        assert_eq!(p.text("#tile-bookings-today .num"), "0");
    }
);

both!(
    after_a_fix_link_from_not_sellable_every_page_says_how_many_are_left_and_leads_back_to_the_list,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.product("goods", "CUP").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let list = page(&app, &admin, "/admin/sellable?reason=no_stock_record").await;
        assert_eq!(list.count("#back-to-sellable"), 0, "not on the list itself");
        let fix = list
            .attr("tr[data-sku=TEA] a.fix", "href")
            .expect("a fix link for TEA");
        assert!(fix.contains("from=sellable"), "{fix}");
        let stock = page(&app, &admin, &fix).await;
        assert_eq!(
            stock.attr("#back-to-sellable", "data-left").as_deref(),
            Some("2")
        );
        assert_eq!(
            stock.attr("#back-to-sellable a", "href").as_deref(),
            Some("/admin/sellable?reason=no_stock_record"),
            "back to the very list"
        );
        // The fix, on the stock page's form: TEA is received. The next page, whichever it is,
        // counts one left.
        let receive = |code: &'static str| {
            let (app, admin) = (&app, &admin);
            async move {
                let id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = $1")
                    .bind(code)
                    .fetch_one(&app.db.pool)
                    .await
                    .unwrap();
                let r = admin
                    .post(app.url(&format!("/admin/skus/{id}/stock/adjustments")))
                    .form(&[
                        ("kind", "RECEIVE"),
                        ("warehouse", "main"),
                        ("qty", "3"),
                        ("reason", "delivery"),
                    ])
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 303);
            }
        };
        let left = |p: &crate::helpers::Html| p.attr("#back-to-sellable", "data-left");
        // The banner asks for itself again when a fix made in place says so.
        assert_eq!(
            stock
                .attr("#back-to-sellable-slot", "hx-trigger")
                .as_deref(),
            Some("sellable-changed from:body")
        );
        receive("TEA").await;
        let after = page(&app, &admin, "/admin/products").await;
        assert_eq!(left(&after).as_deref(), Some("1"));
        // A fix made in place (htmx) answers `sellable-changed`; the banner then counts anew.
        let r = admin
            .post(app.url("/admin/skus/0/stock/adjustments"))
            .header("HX-Request", "true")
            .form(&[("kind", "RECEIVE")])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_client_error(), "{}", r.status());
        assert!(
            r.headers().get("hx-trigger").is_none(),
            "a refusal changed nothing"
        );
        let tea: i64 = sqlx::query_scalar("SELECT id FROM products WHERE name = 'Product TEA'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let r = admin
            .post(app.url(&format!("/admin/products/{tea}/status")))
            .header("HX-Request", "true")
            .form(&[("status", "DRAFT")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            r.headers().get("hx-trigger").and_then(|v| v.to_str().ok()),
            Some("sellable-changed")
        );
        let banner = page(&app, &admin, "/admin/back-to-sellable").await;
        assert_eq!(left(&banner).as_deref(), Some("2"), "TEA is a draft now");
        let r = admin
            .post(app.url(&format!("/admin/products/{tea}/status")))
            .header("HX-Request", "true")
            .form(&[("status", "ONLINE")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let online = page(&app, &admin, "/admin/products").await;
        assert_eq!(left(&online).as_deref(), Some("1"), "TEA online again");
        // A change made elsewhere (here through the API) shows after this person's next change
        // or once the count is half a minute old: pages in between keep the count made.
        api.adjust("TEA", "main", "WRITE_OFF", 3).await;
        let kept = page(&app, &admin, "/admin/products").await;
        assert_eq!(left(&kept).as_deref(), Some("1"));
        receive("CUP").await;
        receive("TEA").await;
        let done = page(&app, &admin, "/admin/products").await;
        assert_eq!(left(&done).as_deref(), Some("0"));
        // Seeing the list again ends the trail.
        page(&app, &admin, "/admin/sellable").await;
        let later = page(&app, &admin, "/admin/products").await;
        assert_eq!(later.count("#back-to-sellable"), 0);
        // Another person's session has no trail.
        let other = app.signed_in("merchant_admin", Some("acme")).await;
        assert_eq!(page(&app, &other, &fix).await.count("#back-to-sellable"), 1);
        assert_eq!(
            page(&app, &admin, "/admin/products")
                .await
                .count("#back-to-sellable"),
            0
        );
        // An operator's list narrowed to one merchant counts that merchant's SKUs only.
        let beta = app.merchant_api("beta").await;
        beta.product("goods", "PEN").await;
        let operator = app.signed_in("operator", None).await;
        page(&app, &operator, "/admin/sellable?merchant=beta").await;
        let trail = page(&app, &operator, "/admin/products?from=sellable").await;
        assert_eq!(left(&trail).as_deref(), Some("1"));
    }
);

both!(
    refreshing_statistics_analyses_sqlite_and_postgres_without_autovacuum_and_analyze_always_does,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 3).await;
        // How many tables have statistics now.
        let analysed = || async {
            let sql = match app.db.dialect {
                sellable::infra::db::Dialect::Sqlite => "SELECT COUNT(*) FROM sqlite_stat1",
                sellable::infra::db::Dialect::Postgres => {
                    "SELECT COUNT(*) FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL"
                }
            };
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&app.db.pool)
                .await
                .unwrap()
        };
        app.db.refresh_statistics().await.unwrap();
        let refreshes = match app.db.dialect {
            sellable::infra::db::Dialect::Sqlite => true,
            // PostgreSQL's autovacuum keeps them, unless it is off (as on the CI machine).
            sellable::infra::db::Dialect::Postgres => {
                sqlx::query_scalar::<_, String>("SELECT current_setting('autovacuum')")
                    .fetch_one(&app.db.pool)
                    .await
                    .unwrap()
                    == "off"
            }
        };
        if refreshes {
            assert!(analysed().await > 0, "the hourly refresh wrote statistics");
        }
        // The command does it whatever keeps them otherwise.
        app.db.analyze().await.unwrap();
        assert!(analysed().await > 0, "analyze wrote statistics");
        // Whatever the planner now knows, the answers are the same.
        assert_eq!(api.stock("TEA").await["available"], 3);
    }
);

both!(
    whole_catalog_pages_show_a_catalog_judged_moments_ago_until_a_change_through_this_instance_or_its_age_and_in_the_readers_language,
    |app| {
        // As when the verdict watcher runs (it judges every catalog anyway): pages may show a
        // catalog judged up to a minute ago.
        sellable::domain::sellable::kept(&app.db).set_max_age(60_000);
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 3).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        // A colleague who reads Chinese.
        let (email, password) = app.user("merchant_admin", Some("acme")).await;
        sqlx::query("UPDATE users SET language = 'zh-CN' WHERE email = $1")
            .bind(&email)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let chinese = app.sign_in(&email, &password).await;
        let blocked = |p: &crate::helpers::Html| p.text("#blocked-count");
        // Another merchant's blocked SKU, judged in the same catalogs, never shows here.
        let beta = app.merchant_api("beta").await;
        beta.product("goods", "BETA").await;
        let operator = app.signed_in("operator", None).await;
        let all = page(&app, &operator, "/admin/sellable?reason=no_stock_record").await;
        assert_eq!(all.count("tr[data-sku=\"BETA\"]"), 1);
        // Every event numbered before the watcher reads (the sequencer job's work): none is newer
        // than its catalog.
        sellable::domain::trail::events::sequence(&app.db).await.unwrap();
        sellable::domain::sellable::watch(&app.db, &Default::default())
            .await
            .unwrap();
        assert_eq!(blocked(&page(&app, &admin, "/admin/sellable").await), "0");
        let ours = page(&app, &admin, "/admin/sellable?reason=no_stock_record").await;
        assert_eq!(ours.count("tr[data-sku=\"BETA\"]"), 0, "another merchant's SKU");

        // Another instance (or a job) sells it out: this one has not seen it, and shows what it
        // judged, saying how old that is; the dashboard counts from the same catalog.
        tea_total_by_hand(&app, 0).await;
        let p = page(&app, &admin, "/admin/sellable").await;
        assert_eq!(blocked(&p), "0", "the catalog judged a moment ago");
        assert!(p.attr("#judged-ago", "data-seconds").is_some());
        // Its own language: nothing judged in Chinese is kept yet, so this one is judged now.
        let zh = page(&app, &chinese, "/admin/sellable?reason=out_of_stock").await;
        assert_eq!(zh.attr("html", "lang").as_deref(), Some("zh-CN"));
        assert_eq!(zh.count("tr[data-sku=\"TEA\"]"), 1, "judged now, in Chinese");
        let said = zh.text("tr[data-sku=\"TEA\"] li[data-code=\"out_of_stock\"]");
        assert!(
            said.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{said}"
        );

        // A stock move through the orders API writes its events: the kept catalog catches up on
        // the SKUs they name (TEA, whose row was since emptied by hand) when next used.
        api.receive("TEA", "main", 2).await;
        tea_total_by_hand(&app, 0).await;
        let (judged, _) = sellable::domain::sellable::kept(&app.db).stats();
        let p = page(&app, &admin, "/admin/sellable").await;
        assert_eq!(blocked(&p), "1", "TEA judged again after its events");
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged, "the rest was not");
        // A price edited writes its event (`sku.updated`): caught up on TEA alone again.
        let (s, b) = api.patch_sku("TEA", json!({"price": 200})).await;
        assert_eq!(s, 200, "{b}");
        let p = page(&app, &admin, "/admin/sellable").await;
        assert_eq!(blocked(&p), "1");
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged, "caught up on the edit");
        // So do the back office's forms: the SKU's, and its product's status buttons.
        let tea = app.sku_id("TEA").await;
        let r = admin
            .post(app.url(&format!("/admin/skus/{tea}")))
            .form(&[("name", "Tea"), ("price", "3")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let product: i64 = sqlx::query_scalar("SELECT product_id FROM skus WHERE id = $1")
            .bind(tea)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let r = admin
            .post(app.url(&format!("/admin/products/{product}/status")))
            .form(&[("status", "OFFLINE")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let p = page(&app, &admin, "/admin/sellable?reason=product_offline").await;
        assert_eq!(p.count("tr[data-sku=\"TEA\"]"), 1, "offline, caught up");
        let r = admin
            .post(app.url(&format!("/admin/products/{product}/status")))
            .form(&[("status", "ONLINE")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert_eq!(blocked(&page(&app, &admin, "/admin/sellable").await), "1");
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged, "never judged whole");
        // Signing in changes nothing a verdict reads.
        let again = app.sign_in(&email, &password).await;
        assert_eq!(blocked(&page(&app, &again, "/admin/sellable").await), "1");
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged, "not after a sign-in");
        // A change that may write no such event (a reconciliation run, which can repair rows)
        // through this instance: the next page judges anew. (TEA's row first put back by hand as
        // its ledger has it, so that the run finds nothing to freeze.)
        tea_total_by_hand(&app, 5).await;
        crate::reconcile_pages::run_from_page(&app, &operator).await;
        let p = page(&app, &admin, "/admin/sellable").await;
        assert_eq!(blocked(&p), "0", "judged after the change");
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged + 1);
        assert_eq!(p.attr("#judged-ago", "data-seconds").as_deref(), Some("0"));

        // Too old: judged anew. (The events so far numbered, and the catalog caught up on them,
        // so that only age is at play below.)
        sellable::domain::trail::events::sequence(&app.db).await.unwrap();
        page(&app, &admin, "/admin/sellable").await;
        tea_total_by_hand(&app, 0).await;
        assert_eq!(blocked(&page(&app, &admin, "/admin/sellable").await), "0", "still young");
        sellable::domain::sellable::kept(&app.db).set_max_age(1);
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(blocked(&page(&app, &admin, "/admin/sellable").await), "1", "too old");

        // The watcher's pass is kept for the languages pages asked for: a page then shows it
        // rather than judging again.
        sellable::domain::sellable::kept(&app.db).set_max_age(60_000);
        // Through this instance, and counted (a reconciliation run, over rows as the ledger
        // has them): older catalogs are not used.
        tea_total_by_hand(&app, 5).await;
        crate::reconcile_pages::run_from_page(&app, &operator).await;
        tea_total_by_hand(&app, 0).await;
        // Every event numbered before the watcher reads: none is newer than its catalog.
        sellable::domain::trail::events::sequence(&app.db).await.unwrap();
        sellable::domain::sellable::watch(&app.db, &Default::default())
            .await
            .unwrap();
        tea_total_by_hand(&app, 6).await;
        assert_eq!(
            blocked(&page(&app, &admin, "/admin/sellable").await),
            "1",
            "the watcher's catalog, not judged again"
        );
        let zh = page(&app, &chinese, "/admin/sellable?reason=out_of_stock").await;
        let said = zh.text("tr[data-sku=\"TEA\"] li[data-code=\"out_of_stock\"]");
        assert!(
            said.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "the watcher judged in Chinese too: {said}"
        );
    }
);

both!(
    a_catalog_the_watcher_kept_in_chinese_says_exactly_what_a_live_chinese_judgement_says_in_every_situation,
    |app| {
        use sellable::domain::sellable as verdicts;
        use sellable::i18n::{scope, Lang};
        let api = app.acme_api().await;
        for c in TABLE {
            build(&app, &api, c).await;
        }
        run_reconciliation(&app).await;
        sellable::domain::sellable::kept(&app.db).set_max_age(600_000);
        let th = verdicts::Thresholds::default();
        let all = sellable::domain::Scope::All;
        // A page in Chinese asks: the watcher then judges in Chinese too (it runs in English).
        scope(Lang::ZhCn, verdicts::recent_catalog(&app.db, &th, all, None))
            .await
            .unwrap();
        verdicts::watch(&app.db, &th).await.unwrap();
        let kept = scope(Lang::ZhCn, verdicts::recent_catalog(&app.db, &th, all, None))
            .await
            .unwrap();
        let live = scope(Lang::ZhCn, verdicts::catalog(&app.db, &th, all, None))
            .await
            .unwrap();
        assert_eq!(kept.len(), live.len());
        for (k, l) in kept.iter().zip(live.iter()) {
            // Every sentence, including the import errors quoted in a batch's reason.
            assert_eq!(format!("{k:?}"), format!("{l:?}"), "{}", k.sku);
        }
        assert!(kept.iter().any(|v| v.has(verdicts::ReasonCode::BatchFailed)));
    }
);

both!(
    the_back_office_s_product_sku_slot_code_batch_and_api_key_forms_leave_the_kept_catalog_caught_up_not_judged_whole,
    |app| {
        sellable::domain::sellable::kept(&app.db).set_max_age(3_600_000);
        let api = app.acme_api().await;
        product(&api, "goods", "TEA").await;
        product(&api, "service", "CUT").await;
        let slot = slot(&api, "CUT", 1.5, 2, None).await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let p = page(&app, &admin, "/admin/sellable").await;
        assert_eq!(p.count("tr[data-sku=\"TEA\"]"), 1, "no stock record yet");
        let judged = sellable::domain::sellable::kept(&app.db).stats().0;
        // A product made through its form, and a SKU added to it: each writes its
        // `sku.created`, and the kept catalog takes them in (unpriced, so blocked).
        let r = admin
            .post(app.url("/admin/products"))
            .form(&[
                ("name", "Cups"),
                ("kind", "goods"),
                ("status", "ONLINE"),
                ("sale_starts_at", ""),
                ("sale_ends_at", ""),
                ("sku_code", "CUP"),
                ("sku_name", "Cup"),
                ("sku_price", ""),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let cups = r.headers()["location"].to_str().unwrap().to_string();
        let r = admin
            .post(app.url(&format!("{cups}/skus")))
            .form(&[("code", "AAA-MUG"), ("name", "Mug"), ("price", "")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let p = page(&app, &admin, "/admin/sellable?reason=no_price").await;
        assert_eq!(p.count("tr[data-sku=\"CUP\"]"), 1, "made, and caught up");
        assert_eq!(
            p.count("tr[data-sku=\"AAA-MUG\"]"),
            1,
            "added, and caught up"
        );
        // The slot's forms: its capacity, then closed (its `slot.*` events). CUT's one slot
        // closed blocks it.
        let r = admin
            .post(app.url(&format!("/admin/slots/{slot}/capacity")))
            .form(&[("capacity", "3")])
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success() || r.status().is_redirection(),
            "{}",
            r.status()
        );
        let r = admin
            .post(app.url(&format!("/admin/slots/{slot}/close")))
            .form(&[("reason", "leave")])
            .send()
            .await
            .unwrap();
        assert!(
            r.status().is_success() || r.status().is_redirection(),
            "{}",
            r.status()
        );
        let p = page(&app, &admin, "/admin/sellable?reason=all_slots_closed").await;
        assert_eq!(p.count("tr[data-sku=\"CUT\"]"), 1, "closed, and caught up");
        assert_eq!(
            sellable::domain::sellable::kept(&app.db).stats().0,
            judged,
            "not judged whole after the product, SKU and slot forms"
        );
        // A voucher's batch locked at once (its `code_batch.state_changed`): no code left to
        // sell.
        product(&api, "voucher", "GIFT").await;
        let batch = api.import_codes("GIFT", "codes.txt", &codes("GIFT", 3), "valid").await["batch_id"]
            .as_i64()
            .unwrap();
        page(&app, &admin, "/admin/sellable").await;
        let judged = sellable::domain::sellable::kept(&app.db).stats().0;
        let r = admin
            .post(app.url(&format!("/admin/codes/batches/{batch}/lock")))
            .form(&[("reason", "audit")])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success() || r.status().is_redirection(), "{}", r.status());
        let p = page(&app, &admin, "/admin/sellable?reason=no_codes_available").await;
        assert_eq!(p.count("tr[data-sku=\"GIFT\"]"), 1, "locked, and caught up");
        let (s, b) = api.get("/api/v1/events?types=code_batch.state_changed").await;
        assert_eq!(s, 200, "{b}");
        let moved = &b["events"][0];
        assert_eq!(moved["subject"]["sku"], "GIFT");
        assert_eq!(moved["data"]["action"], "lock");
        assert_eq!(moved["data"]["codes"], 3);
        // An API key made changes nothing a verdict reads.
        let r = admin
            .post(app.url("/admin/api-keys"))
            .form(&[("name", "Shop")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        page(&app, &admin, "/admin/sellable").await;
        assert_eq!(
            sellable::domain::sellable::kept(&app.db).stats().0,
            judged,
            "never judged whole"
        );
        merchant_model_equals_live(&app, "acme", "the forms").await;
    }
);

// Everything a store does in a day through the API, the back office and the public booking page
// writes its events or changes nothing a verdict reads: none of it makes the next "Not
// sellable" judge the whole catalog again, and what the kept catalog says equals a live
// judgement (a renamed staff member named in a closure's reason, a batch of codes that arrived).
both!(
    a_store_s_staff_places_code_batches_attendance_waiting_list_and_public_bookings_leave_the_kept_catalog_caught_up_not_judged_whole,
    |app| {
        sellable::domain::sellable::kept(&app.db).set_max_age(3_600_000);
        let api = app.acme_api().await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let m = sellable::domain::MerchantId(
            sqlx::query_scalar("SELECT id FROM merchants WHERE slug = 'acme'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap(),
        );
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Ann"})).await;
        assert_eq!(s, 201, "{b}");
        for (kind, code) in [("service", "CUT"), ("service", "NAILS"), ("service", "SPA"), ("voucher", "GIFT")] {
            product(&api, kind, code).await;
        }
        // CUT's one slot is Ann's, closed for her leave: its verdict names her.
        slot(&api, "CUT", 1.5, 1, Some("Ann")).await;
        let (s, b) = api
            .post(
                "/api/v1/closures",
                json!({"staff": "Ann", "starts_at": at(&api, 1.0), "ends_at": at(&api, 2.0), "reason": "leave"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let nails = slot(&api, "NAILS", 2.5, 1, None).await;
        let later = slot(&api, "NAILS", 3.5, 1, None).await;
        // SPA's slot has begun (moved there by hand, before anything was kept), with two
        // bookings to mark.
        let spa = slot(&api, "SPA", 1.0, 2, None).await;
        let (_, first) = book(&api, spa).await;
        let (_, second) = book(&api, spa).await;
        let now = app.now_ms();
        sqlx::query("UPDATE slots SET starts_at = $1, ends_at = $2 WHERE id = $3")
            .bind(now - 600_000)
            .bind(now + 3_000_000)
            .bind(spa)
            .execute(&app.db.pool)
            .await
            .unwrap();
        // Every event so far numbered (the sequencer job's work): the catalog kept below holds
        // them, and catches up on what comes after.
        sellable::domain::trail::events::sequence(&app.db).await.unwrap();
        let p = page(&app, &admin, "/admin/sellable?reason=all_slots_closed").await;
        assert_eq!(p.count("tr[data-sku=\"CUT\"]"), 1);
        let judged = sellable::domain::sellable::kept(&app.db).stats().0;
        let ok = |r: &reqwest::Response| r.status().is_success() || r.status().is_redirection();

        // Staff: one added in the back office, Ann renamed (CUT's `sku.updated`), archived
        // and back.
        let r = admin
            .post(app.url("/admin/staff"))
            .form(&[("store", "acme/main-store"), ("name", "Bo")])
            .send()
            .await
            .unwrap();
        assert!(ok(&r), "{}", r.status());
        let ann: i64 = sqlx::query_scalar("SELECT id FROM staff WHERE name = 'Ann'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let bo: i64 = sqlx::query_scalar("SELECT id FROM staff WHERE name = 'Bo'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        for (id, action, name) in [(ann, "rename", "Ann Wang"), (bo, "archive", ""), (bo, "restore", "")] {
            let r = admin
                .post(app.url(&format!("/admin/staff/{id}")))
                .form(&[("store", "acme/main-store"), ("action", action), ("name", name)])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 303, "{action}");
        }
        // Places: a warehouse added and edited, a store added, the store's page saved.
        let r = admin
            .post(app.url("/admin/places/warehouses"))
            .form(&[("name", "East"), ("slug", "east"), ("priority", "5")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let east: i64 = sqlx::query_scalar("SELECT id FROM warehouses WHERE slug = 'east'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let r = admin
            .post(app.url(&format!("/admin/places/warehouses/{east}")))
            .form(&[("name", "East 2"), ("priority", "6")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let r = admin
            .post(app.url("/admin/places/stores"))
            .form(&[("name", "Pudong"), ("slug", "pudong"), ("timezone", "Asia/Shanghai")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let store_id: i64 = sqlx::query_scalar(
            "SELECT id FROM stores WHERE slug = 'main-store' AND merchant_id = $1",
        )
        .bind(m)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
        // The store's page saved: a waiting list's offer is now held for 15 minutes.
        let r = admin
            .post(app.url(&format!("/admin/stores/{store_id}")))
            .form(&crate::helpers::store_form("", "15"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        // GIFT's codes arrive (`code_batch.created`, then `code_batch.ready`), uploaded and
        // generated.
        api.import_codes("GIFT", "codes.txt", &codes("GIFT", 2), "valid").await;
        let (s, b) = api
            .post(
                "/api/v1/code-batches/generate",
                json!({"sku": "GIFT", "name": "more", "count": 3}),
            )
            .await;
        assert_eq!(s, 202, "{b}");
        // Its import runs in the background: waited for, so that no progress moves under the
        // comparison below.
        api.batch_done(b["batch_id"].as_i64().unwrap()).await;
        // SPA's bookings marked: one attended in the back office, one a no-show by the API.
        let first = first["reference"].as_str().unwrap().to_string();
        let second = second["reference"].as_str().unwrap().to_string();
        let r = admin
            .post(app.url(&format!("/admin/bookings/{first}/attended")))
            .form(&[("from", "day")])
            .send()
            .await
            .unwrap();
        assert!(ok(&r), "{}", r.status());
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{second}/no-show"), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        // NAILS's one place, booked and cancelled on the public page.
        let store = app.public_slug().await;
        let customer = app.client();
        let form = page(&app, &customer, &format!("/book/{store}/slots/{nails}")).await;
        let key = form.attr("input[name=idempotency_key]", "value").unwrap();
        let r = customer
            .post(app.url(&format!("/book/{store}/slots/{nails}")))
            .form(&[("name", "Cy Wu"), ("phone", "+86 138 0013 8000"), ("idempotency_key", key.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let booking = r.headers()["location"].to_str().unwrap().to_string();
        // Moved to the later slot and back, then cancelled.
        for to in [later, nails] {
            let r = customer
                .post(app.url(&format!("{booking}/reschedule")))
                .form(&[("slot_id", to.to_string())])
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 303);
            assert_eq!(app.slot_booked(to).await, 1, "moved");
        }
        let r = customer
            .post(app.url(&format!("{booking}/cancel")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        // Then taken by the API and waited for by two; given back, offered to the first (held),
        // who declines, then to the second, who takes it.
        let (s, taken) = book(&api, nails).await;
        assert_eq!(s, 201, "{taken}");
        let mut waits = Vec::new();
        for (name, phone) in [("Dee", "+86 139 0000 0001"), ("Eve", "+86 139 0000 0002")] {
            let (s, wait) = api
                .post(
                    &format!("/api/v1/slots/{nails}/waitlist"),
                    json!({"name": name, "phone": phone, "places": 1}),
                )
                .await;
            assert_eq!(s, 201, "{wait}");
            waits.push(wait["id"].as_i64().unwrap());
        }
        let (s, b) = api
            .post(
                &format!("/api/v1/bookings/{}/cancel", taken["reference"].as_str().unwrap()),
                json!({}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        // The job may have offered it already; either way it is offered once.
        sellable::domain::slots::waitlist::fill(&app.db, m, nails).await.unwrap();
        let (s, b) = api
            .post(&format!("/api/v1/waitlist/{}/decline", waits[0]), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        sellable::domain::slots::waitlist::fill(&app.db, m, nails).await.unwrap();
        let (s, b) = api
            .post(&format!("/api/v1/waitlist/{}/accept", waits[1]), json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["status"], "BOOKED", "{b}");
        assert_eq!(app.slot_booked(nails).await, 1);

        let p = page(&app, &admin, "/admin/sellable").await;
        assert_eq!(p.count("tr[data-sku=\"GIFT\"]"), 0, "its codes arrived");
        assert_eq!(app.slot_booked(later).await, 0, "given back when moved back");
        assert_eq!(
            sellable::domain::sellable::kept(&app.db).stats().0,
            judged,
            "never judged whole"
        );
        // The rename is in the kept catalog: CUT's closure names her new name.
        merchant_model_equals_live(&app, "acme", "a store's day").await;
        let p = page(&app, &admin, "/admin/sellable?reason=all_slots_closed").await;
        assert!(
            p.text("tr[data-sku=\"CUT\"]").contains("Ann Wang"),
            "{}",
            p.text("tr[data-sku=\"CUT\"]")
        );
        let (s, b) = api.get("/api/v1/events?types=sku.updated").await;
        assert_eq!(s, 200, "{b}");
        let renamed: Vec<&Value> = b["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["data"]["changed"] == "staff")
            .collect();
        assert_eq!(renamed.len(), 1, "{b}");
        assert_eq!(renamed[0]["subject"]["sku"], "CUT");
        assert_eq!(renamed[0]["data"]["staff"], "Ann Wang");
        let (s, b) = api.get("/api/v1/events?types=code_batch.created").await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["events"][0]["subject"]["sku"], "GIFT");
        assert_eq!(b["events"][0]["data"]["after"], "CREATING");

        // Asked for fresh, the listing judges every SKU now: it sees what the kept catalog
        // cannot (the closure's reason edited by hand, no event), and is kept for the pages
        // after it. An unknown value is refused.
        sellable::domain::trail::events::sequence(&app.db).await.unwrap();
        page(&app, &admin, "/admin/sellable").await;
        sqlx::query("UPDATE closures SET reason = 'training'")
            .execute(&app.db.pool)
            .await
            .unwrap();
        let cut_row = |p: &crate::helpers::Html| p.text("tr[data-sku=\"CUT\"]");
        let judged = sellable::domain::sellable::kept(&app.db).stats().0;
        let p = page(&app, &admin, "/admin/sellable?reason=all_slots_closed").await;
        assert!(!cut_row(&p).contains("training"), "kept: {}", cut_row(&p));
        let (s, b) = api.get("/api/v1/sellable?status=blocked&fresh=true").await;
        assert_eq!(s, 200, "{b}");
        let cut = b["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["sku"] == "CUT")
            .unwrap();
        assert!(cut.to_string().contains("training"), "{cut}");
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged + 1);
        let p = page(&app, &admin, "/admin/sellable?reason=all_slots_closed").await;
        assert!(cut_row(&p).contains("training"), "then kept: {}", cut_row(&p));
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged + 1, "then kept");
        let (s, b) = api.get("/api/v1/sellable?fresh=yes").await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(b["fields"][0]["field"], "fresh", "{b}");
        // So does "Check again now" on the page.
        sqlx::query("UPDATE closures SET reason = 'moved'")
            .execute(&app.db.pool)
            .await
            .unwrap();
        let p = page(&app, &admin, "/admin/sellable?fresh=1&reason=all_slots_closed").await;
        assert!(cut_row(&p).contains("moved"), "{}", cut_row(&p));
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged + 2);
        assert_eq!(p.attr("#judged-ago", "data-seconds").as_deref(), Some("0"));
        page(&app, &admin, "/admin/sellable").await;
        assert_eq!(sellable::domain::sellable::kept(&app.db).stats().0, judged + 2, "then kept");
    }
);

// A whole judgement reads every SKU (seconds and hundreds of MB at 100,000): views that arrive
// together after a change, or ask for it fresh together, must not each make one.
both!(
    views_arriving_together_after_a_change_or_asking_for_fresh_share_one_whole_judgement_rather_than_one_each,
    |app| {
        use sellable::domain::{sellable as s, Scope};
        sellable::domain::sellable::kept(&app.db).set_max_age(3_600_000);
        let api = app.acme_api().await;
        for code in ["A1", "A2", "A3"] {
            product(&api, "goods", code).await;
        }
        let m = sellable::domain::MerchantId(
            sqlx::query_scalar("SELECT id FROM merchants WHERE slug = 'acme'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap(),
        );
        let th = app.state.config.sellable_thresholds();
        s::recent_catalog(&app.db, &th, Scope::Merchant(m), None)
            .await
            .unwrap();
        // A change through this instance that writes no event: nothing kept is usable.
        sellable::domain::sellable::kept(&app.db).changed();
        assert_eq!(
            eight_at_once(&app, m, false).await,
            1,
            "the first judged, the others took what it kept"
        );
        // Asked for fresh together: one judged since a request was asked serves it too.
        let whole = eight_at_once(&app, m, true).await;
        assert!((1..8).contains(&whole), "{whole} whole judgements for 8 views");
    }
);

// A merchant's kept catalog takes its own new SKUs in code order, not another merchant's; the
// whole catalog takes both.
both!(
    a_kept_catalog_takes_in_the_skus_made_since_in_their_places_and_only_its_merchant_s,
    |app| {
        use sellable::domain::{sellable as s, Scope};
        sellable::domain::sellable::kept(&app.db).set_max_age(3_600_000);
        let acme = app.acme_api().await;
        let globex = app.merchant_api("globex").await;
        for code in ["B1", "B3"] {
            product(&acme, "goods", code).await;
            product(&globex, "goods", code).await;
        }
        let th = app.state.config.sellable_thresholds();
        let m = sellable::domain::MerchantId(
            sqlx::query_scalar("SELECT id FROM merchants WHERE slug = 'acme'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap(),
        );
        let codes = |c: &[sellable::domain::sellable::Shared]| {
            c.iter().map(|v| v.sku.clone()).collect::<Vec<_>>()
        };
        // The whole catalog first: the merchant's, judged after it, is the newer one and is
        // the one its merchant's views then take (and catch up).
        s::recent_catalog(&app.db, &th, Scope::All, None)
            .await
            .unwrap();
        let kept = s::recent_catalog(&app.db, &th, Scope::Merchant(m), None)
            .await
            .unwrap();
        assert_eq!(codes(&kept), ["B1", "B3"]);
        let judged = sellable::domain::sellable::kept(&app.db).stats().0;
        // Each writes its `sku.created`, which is all another instance would see of it.
        for (who, code) in [(&acme, "B2"), (&globex, "B0"), (&acme, "B4"), (&acme, "A0")] {
            product(who, "goods", code).await;
        }
        let kept = s::recent_catalog(&app.db, &th, Scope::Merchant(m), None)
            .await
            .unwrap();
        assert_eq!(codes(&kept), ["A0", "B1", "B2", "B3", "B4"]);
        let live = s::catalog(&app.db, &th, Scope::Merchant(m), None)
            .await
            .unwrap();
        assert_eq!(kept.iter().map(|v| (**v).clone()).collect::<Vec<_>>(), live);
        model_equals_live(&app, "SKUs made by two merchants").await;
        assert_eq!(
            sellable::domain::sellable::kept(&app.db).stats().0,
            judged,
            "caught up, not judged whole"
        );
    }
);

// ---- the read model: kept catalogs caught up from the change events --------------------------
