//! The table of situations: every reason a SKU of each kind cannot be sold, built for real, and
//! the verdict each gives (API, listing and counts).

#[allow(unused_imports)]
use super::*;

#[derive(Debug, Clone, Copy)]
pub(super) enum Situation {
    GoodsInStock,
    LowStock,
    Draft,
    Offline,
    SaleNotStarted,
    SaleEnded,
    NoPrice,
    Free,
    Unlimited,
    NoStockRecord,
    OutOfStock,
    SkuFrozen,
    ServiceOpen,
    FewSlots,
    NoSchedule,
    NoSlotsInWindow,
    AllSlotsClosed,
    AllSlotsFull,
    SlotsFrozen,
    NextSlotBeyondWindow,
    VoucherInStock,
    NoBatch,
    BatchFailed,
    BatchPartialEmpty,
    BatchPartialWithCodes,
    BatchImporting,
    NoCodesAvailable,
    CodesRunningOut,
}

pub(super) use Situation::*;

pub(super) struct Case {
    pub(super) situation: Situation,
    pub(super) kind: &'static str,
    pub(super) sellable: bool,
    /// Every reason, blocking or not, in the order the verdict lists them.
    pub(super) reasons: &'static [&'static str],
    pub(super) warnings: &'static [&'static str],
}

pub(super) const fn case(
    situation: Situation,
    kind: &'static str,
    sellable: bool,
    reasons: &'static [&'static str],
    warnings: &'static [&'static str],
) -> Case {
    Case {
        situation,
        kind,
        sellable,
        reasons,
        warnings,
    }
}

pub(super) const TABLE: &[Case] = &[
    case(GoodsInStock, "goods", true, &[], &[]),
    case(LowStock, "goods", true, &[], &["low_stock"]),
    case(Draft, "goods", false, &["product_draft"], &[]),
    case(Offline, "goods", false, &["product_offline"], &[]),
    case(SaleNotStarted, "goods", false, &["sale_not_started"], &[]),
    case(SaleEnded, "goods", false, &["sale_ended"], &[]),
    case(NoPrice, "goods", false, &["no_price"], &[]),
    // A price of 0 set on purpose is a free item: it sells.
    case(Free, "goods", true, &[], &[]),
    // Digital goods: never counted, sellable without any stock, and the verdict says why.
    case(Unlimited, "goods", true, &["stock_unlimited"], &[]),
    case(NoStockRecord, "goods", false, &["no_stock_record"], &[]),
    case(OutOfStock, "goods", false, &["out_of_stock"], &[]),
    case(SkuFrozen, "goods", false, &["sku_frozen"], &[]),
    case(ServiceOpen, "service", true, &[], &[]),
    case(FewSlots, "service", true, &[], &["few_slots"]),
    case(NoSchedule, "service", false, &["no_schedule"], &[]),
    case(
        NoSlotsInWindow,
        "service",
        false,
        &["no_slots_in_window"],
        &[],
    ),
    case(AllSlotsClosed, "service", false, &["all_slots_closed"], &[]),
    case(AllSlotsFull, "service", false, &["all_slots_full"], &[]),
    case(SlotsFrozen, "service", false, &["slots_frozen"], &[]),
    case(
        NextSlotBeyondWindow,
        "service",
        false,
        &["next_slot_beyond_window"],
        &[],
    ),
    case(VoucherInStock, "voucher", true, &[], &[]),
    case(NoBatch, "voucher", false, &["no_batch"], &[]),
    case(
        BatchFailed,
        "voucher",
        false,
        &["batch_failed", "no_codes_available"],
        &[],
    ),
    case(
        BatchPartialEmpty,
        "voucher",
        false,
        &["batch_partial", "no_codes_available"],
        &[],
    ),
    // Codes remain: the partial batch informs but does not block.
    case(
        BatchPartialWithCodes,
        "voucher",
        true,
        &["batch_partial"],
        &[],
    ),
    case(
        BatchImporting,
        "voucher",
        false,
        &["batch_importing", "no_codes_available"],
        &[],
    ),
    case(
        NoCodesAvailable,
        "voucher",
        false,
        &["no_codes_available"],
        &[],
    ),
    case(
        CodesRunningOut,
        "voucher",
        true,
        &[],
        &["codes_running_out"],
    ),
];

pub(super) fn sku_code(s: Situation) -> String {
    format!("{s:?}").to_uppercase()
}

/// Builds one situation on a fresh SKU (an ONLINE product priced 100, then changed).
pub(super) async fn build(app: &TestApp, api: &Api, c: &Case) {
    let code = sku_code(c.situation);
    let code = code.as_str();
    if let NoPrice = c.situation {
        // Created without a price: never priced.
        let (s, b) = api
            .post(
                "/api/v1/products",
                json!({"name": format!("Product {code}"), "kind": c.kind, "status": "ONLINE",
                       "skus": [{"code": code, "name": code}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["skus"][0]["price_set"], false, "{b}");
    } else {
        product(api, c.kind, code).await;
    }
    match c.situation {
        GoodsInStock => adjust(api, code, "RECEIVE", 10, "delivery").await,
        LowStock => adjust(api, code, "RECEIVE", 2, "delivery").await,
        Draft | Offline | SaleNotStarted | SaleEnded | NoPrice => {
            adjust(api, code, "RECEIVE", 10, "delivery").await;
            match c.situation {
                Draft => patch_product(api, code, json!({"status": "DRAFT"})).await,
                Offline => patch_product(api, code, json!({"status": "OFFLINE"})).await,
                SaleNotStarted => {
                    patch_product(api, code, json!({"sale_starts_at": at(api, 1.0)})).await
                }
                SaleEnded => {
                    patch_product(
                        api,
                        code,
                        json!({"sale_starts_at": at(api, -2.0), "sale_ends_at": at(api, -1.0)}),
                    )
                    .await
                }
                _ => {}
            }
        }
        Free => {
            adjust(api, code, "RECEIVE", 10, "delivery").await;
            set_price(app, api, code, 0).await;
        }
        Unlimited => {
            let (s, b) = api
                .call(
                    reqwest::Method::PATCH,
                    &format!("/api/v1/skus/{code}"),
                    Some(json!({"stock_policy": "unlimited"})),
                )
                .await;
            assert_eq!(
                (s, b["stock_policy"].as_str()),
                (200, Some("unlimited")),
                "{b}"
            );
        }
        NoStockRecord | NoSchedule | NoBatch => {}
        OutOfStock => {
            adjust(api, code, "RECEIVE", 5, "delivery").await;
            reserved(api, code, 3).await;
            adjust(api, code, "FREEZE", 2, "quality check").await;
        }
        SkuFrozen => {
            adjust(api, code, "RECEIVE", 5, "delivery").await;
            // A balance changed outside the ledger: reconciliation (run below) freezes the SKU.
            sqlx::query("UPDATE stock_balances SET total = total + 1 WHERE sku_id = (SELECT id FROM skus WHERE code = $1)")
                .bind(code)
                .execute(&app.db.pool)
                .await
                .unwrap();
        }
        ServiceOpen => {
            for day in [1.0, 2.0, 3.0] {
                slot(api, code, day, 2, None).await;
            }
        }
        FewSlots => {
            slot(api, code, 2.0, 2, None).await;
        }
        NoSlotsInWindow => {
            let (s, b) = api
                .post(
                    &format!("/api/v1/services/{code}/schedule"),
                    json!({"rules": [{"weekdays": ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"], "opens": "09:00", "closes": "10:00", "slot_minutes": 60, "capacity": 1}]}),
                )
                .await;
            assert_eq!(s, 200, "{b}");
            // As if the materialisation job had not run yet: rules, but no slots.
            sqlx::query("DELETE FROM slots WHERE sku_id = (SELECT id FROM skus WHERE code = $1)")
                .bind(code)
                .execute(&app.db.pool)
                .await
                .unwrap();
        }
        AllSlotsClosed => {
            let (s, b) = api.post("/api/v1/staff", json!({"name": "Mia"})).await;
            assert_eq!(s, 201, "{b}");
            slot(api, code, 2.0, 2, Some("Mia")).await;
            let (s, b) = api
                .post(
                    "/api/v1/closures",
                    json!({"staff": "Mia", "starts_at": at(api, 1.0), "ends_at": at(api, 3.0), "reason": "staff on leave"}),
                )
                .await;
            assert_eq!(s, 201, "{b}");
        }
        AllSlotsFull => {
            let id = slot(api, code, 2.0, 1, None).await;
            let (s, b) = book(api, id).await;
            assert_eq!(s, 201, "{b}");
        }
        SlotsFrozen => {
            let id = slot(api, code, 2.0, 3, None).await;
            // booked no longer matches the bookings: reconciliation (run below) freezes the slot.
            sqlx::query("UPDATE slots SET booked = 1 WHERE id = $1")
                .bind(id)
                .execute(&app.db.pool)
                .await
                .unwrap();
        }
        NextSlotBeyondWindow => {
            slot(api, code, 40.0, 2, None).await;
        }
        VoucherInStock => {
            api.import_codes(code, "codes.txt", &codes(code, 10), "valid")
                .await;
        }
        BatchFailed => {
            let b = api
                .import_codes(code, "codes.txt", "A-1\nA-2\nA-1\n", "all")
                .await;
            assert_eq!(b["status"], "FAILED", "{b}");
        }
        BatchPartialEmpty => {
            let b = api
                .import_codes(code, "codes.txt", "B-1\nB-1\n", "valid")
                .await;
            assert_eq!(b["status"], "PARTIAL", "{b}");
            reserved(api, code, 1).await;
        }
        BatchPartialWithCodes => {
            let b = api
                .import_codes(code, "codes.txt", "C-1\nC-2\nC-1\n", "valid")
                .await;
            assert_eq!(b["status"], "PARTIAL", "{b}");
        }
        BatchImporting => {
            // An import caught half-way (its heartbeat fresh, so nobody marks it abandoned).
            let now = app.now_ms();
            sqlx::query(
                "INSERT INTO code_batches (merchant_id, sku_id, name, source, mode, status, bytes_total, bytes_done, key_version, created_by, created_at, heartbeat_at)
                 SELECT merchant_id, id, 'big file', 'UPLOAD', 'valid', 'CREATING', 100, 40, 1, 'test', $2, $2 FROM skus WHERE code = $1",
            )
            .bind(code)
            .bind(now)
            .execute(&app.db.pool)
            .await
            .unwrap();
        }
        NoCodesAvailable => {
            api.import_codes(code, "codes.txt", &codes(code, 2), "valid")
                .await;
            reserved(api, code, 2).await;
        }
        CodesRunningOut => {
            api.import_codes(code, "codes.txt", &codes(code, 3), "valid")
                .await;
            let order = reserved(api, code, 2).await;
            let (s, b) = api
                .post(&format!("/api/v1/reservations/{order}/confirm"), json!({}))
                .await;
            assert_eq!(s, 200, "{b}");
        }
    }
}

both!(
    verdicts_read_together_for_a_page_equal_each_sku_read_alone_in_every_situation,
    |app| {
        let api = app.acme_api().await;
        for c in TABLE {
            build(&app, &api, c).await;
        }
        run_reconciliation(&app).await;
        let th = sellable::domain::sellable::Thresholds::default();
        let merchant: i64 = sqlx::query_scalar("SELECT id FROM merchants WHERE slug = 'acme'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let mut ids = Vec::new();
        for c in TABLE {
            let sku = sellable::domain::catalog::sku_by_code(
                &app.db,
                sellable::domain::MerchantId(merchant),
                &sku_code(c.situation),
            )
            .await
            .unwrap();
            ids.push(sku.id);
        }
        // Another merchant's SKU in the list is judged as its own, beside them.
        let beta = app.merchant_api("beta").await;
        beta.product("goods", "BETA").await;
        beta.receive("BETA", "main", 2).await;
        let beta_id: i64 = sqlx::query_scalar("SELECT id FROM skus WHERE code = 'BETA'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        ids.push(beta_id);
        let together = sellable::domain::sellable::of_skus(&app.db, &th, &ids)
            .await
            .unwrap();
        assert_eq!(together.len(), ids.len());
        for v in &together {
            let sku = sellable::domain::catalog::sku_by_id(
                &app.db,
                sellable::domain::Scope::All,
                v.meta.sku_id,
            )
            .await
            .unwrap();
            let alone = sellable::domain::sellable::verdict(&app.db, &th, &sku)
                .await
                .unwrap();
            // Everything a verdict holds: reasons, facts, quantity, next slots.
            assert_eq!(format!("{v:?}"), format!("{alone:?}"), "{}", v.sku);
        }
        assert!(sellable::domain::sellable::of_skus(&app.db, &th, &[])
            .await
            .unwrap()
            .is_empty());
    }
);

both!(
    verdict_names_the_exact_reasons_of_every_situation_and_a_sellable_sku_has_none,
    |app| {
        let api = app.acme_api().await;
        for c in TABLE {
            build(&app, &api, c).await;
        }
        run_reconciliation(&app).await;
        for c in TABLE {
            let code = sku_code(c.situation);
            let v = verdict(&api, &code).await;
            let what = format!("{:?}: {v}", c.situation);
            assert_eq!(v["sku"], code.as_str(), "{what}");
            assert_eq!(v["kind"], c.kind, "{what}");
            assert_eq!(v["sellable"], c.sellable, "{what}");
            assert_eq!(list_codes(&v, "reasons"), c.reasons, "{what}");
            assert_eq!(list_codes(&v, "warnings"), c.warnings, "{what}");
            let blocking = v["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["blocking"] == true)
                .count();
            assert_eq!(
                blocking == 0,
                c.sellable,
                "sellable means no blocking reason: {what}"
            );
            assert!(
                v["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|w| w["blocking"] == false),
                "warnings never block: {what}"
            );
            for r in v["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .chain(v["warnings"].as_array().unwrap())
            {
                assert!(!r["message"].as_str().unwrap().is_empty(), "{what}");
                assert!(r["facts"].is_object(), "{what}");
                if r["code"] != "gate_degraded" {
                    assert!(
                        r["fix_url"].as_str().unwrap().starts_with("/admin/"),
                        "{what}"
                    );
                }
            }
            if !c.sellable {
                assert_eq!(
                    v["quantity"], 0,
                    "nothing is promised while blocked: {what}"
                );
            }
        }

        // The facts behind the sentences.
        let v = verdict(&api, "OUTOFSTOCK").await;
        let r = &v["reasons"][0];
        assert_eq!(r["facts"]["held_by_unpaid_orders"], 3, "{v}");
        assert_eq!(r["facts"]["frozen"], 2, "{v}");
        assert_eq!(r["facts"]["frozen_reason"], "quality check", "{v}");
        assert_eq!(
            r["message"],
            "None available of 5 in stock: 3 held by unpaid orders, 2 frozen (quality check)."
        );

        let v = verdict(&api, "GOODSINSTOCK").await;
        assert_eq!(v["quantity"], 10, "{v}");
        assert!(v.get("next_slots").is_none(), "goods list no slots: {v}");

        let v = verdict(&api, "SERVICEOPEN").await;
        assert_eq!(
            v["quantity"], 2,
            "places of the soonest slot, never summed over slots: {v}"
        );
        let next = v["next_slots"].as_array().unwrap();
        assert_eq!(next.len(), 3, "{v}");
        assert!(next.iter().all(|s| s["remaining"] == 2), "{v}");
        assert!(
            next.windows(2)
                .all(|w| w[0]["starts_at"].as_str() < w[1]["starts_at"].as_str()),
            "soonest first: {v}"
        );

        let v = verdict(&api, "ALLSLOTSCLOSED").await;
        let r = &v["reasons"][0];
        assert!(
            r["message"]
                .as_str()
                .unwrap()
                .contains("staff on leave (Mia, "),
            "{v}"
        );
        assert_eq!(r["facts"]["closures"][0]["reason"], "staff on leave");
        assert_eq!(r["facts"]["closures"][0]["staff"], "Mia");
        assert_eq!(r["facts"]["closures"][0]["timezone"], "Asia/Shanghai");
        assert!(
            r["fix_url"]
                .as_str()
                .unwrap()
                .starts_with("/admin/closures/"),
            "the link opens the closure: {v}"
        );

        let v = verdict(&api, "SALENOTSTARTED").await;
        let facts = &v["reasons"][0]["facts"];
        assert_eq!(facts["timezone"], "Asia/Shanghai", "{v}");
        let local = chrono::DateTime::parse_from_rfc3339(facts["sale_starts_at"].as_str().unwrap())
            .unwrap()
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .format("%Y-%m-%d %H:%M")
            .to_string();
        assert_eq!(facts["sale_starts_at_local"], local.as_str(), "{v}");

        let v = verdict(&api, "SKUFROZEN").await;
        let finding = v["reasons"][0]["facts"]["finding_id"].as_i64().unwrap();
        assert_eq!(
            v["reasons"][0]["fix_url"],
            format!("/admin/reconcile/findings/{finding}").as_str()
        );
        assert_eq!(
            v["reasons"][0]["facts"]["finding_kind"], "ledger_mismatch",
            "{v}"
        );

        let v = verdict(&api, "BATCHFAILED").await;
        assert_eq!(v["reasons"][0]["facts"]["errors"][0]["line"], 3, "{v}");
        assert!(
            v["reasons"][0]["message"]
                .as_str()
                .unwrap()
                .contains("line 3: "),
            "{v}"
        );

        let v = verdict(&api, "BATCHIMPORTING").await;
        assert_eq!(v["reasons"][0]["facts"]["progress"], 40, "{v}");

        let v = verdict(&api, "NOCODESAVAILABLE").await;
        assert_eq!(v["reasons"][0]["facts"]["counts"]["BOOKING"], 2, "{v}");
        assert!(
            v["reasons"][0]["message"]
                .as_str()
                .unwrap()
                .contains("2 held by unpaid orders"),
            "{v}"
        );

        let v = verdict(&api, "BATCHPARTIALWITHCODES").await;
        assert_eq!(v["reasons"][0]["blocking"], false, "{v}");
        assert_eq!(v["quantity"], 2, "{v}");

        // The catalog listing agrees with the verdicts, and counts SKUs per reason.
        let (s, l) = api.get("/api/v1/sellable?status=blocked").await;
        assert_eq!(s, 200, "{l}");
        let listed: BTreeSet<String> = l["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["sku"].as_str().unwrap().to_string())
            .collect();
        let expected: BTreeSet<String> = TABLE
            .iter()
            .filter(|c| !c.sellable)
            .map(|c| sku_code(c.situation))
            .collect();
        assert_eq!(listed, expected);
        assert_eq!(l["total"], expected.len());
        assert_eq!(l["counts"]["skus"], TABLE.len());
        assert_eq!(l["counts"]["blocked"], expected.len());
        let per_reason = |code: &str| {
            l["counts"]["blocking"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["code"] == code)
                .map(|c| c["skus"].as_i64().unwrap())
                .unwrap_or(0)
        };
        assert_eq!(per_reason("no_codes_available"), 4);
        assert_eq!(per_reason("out_of_stock"), 1);
        let (_, l) = api.get("/api/v1/sellable?status=sellable").await;
        assert_eq!(
            l["total"],
            TABLE.iter().filter(|c| c.sellable).count(),
            "{l}"
        );
        let open = l["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["sku"] == "SERVICEOPEN")
            .unwrap();
        assert_eq!(
            open,
            &verdict(&api, "SERVICEOPEN").await,
            "the listing says what the single verdict says, next slots included"
        );
        let (_, l) = api.get("/api/v1/sellable?reason=low_stock").await;
        assert_eq!(l["items"][0]["sku"], "LOWSTOCK", "{l}");
        assert_eq!(l["total"], 1, "{l}");
    }
);

both!(
    sellable_listing_pages_and_refuses_unknown_filters_with_stable_codes,
    |app| {
        let api = app.acme_api().await;
        for i in 0..5 {
            product(&api, "goods", &format!("G{i}")).await;
        }
        let (s, l) = api.get("/api/v1/sellable?per_page=2&page=3").await;
        assert_eq!(s, 200, "{l}");
        assert_eq!(
            (l["page"].as_i64(), l["pages"].as_i64()),
            (Some(3), Some(3))
        );
        assert_eq!(l["items"].as_array().unwrap().len(), 1, "{l}");
        assert_eq!(l["total"], 5);
        let (s, b) = api.get("/api/v1/sellable?status=maybe").await;
        assert_eq!(
            (s, b["error"].as_str()),
            (422, Some("invalid_choice")),
            "{b}"
        );
        let (s, b) = api.get("/api/v1/sellable?reason=bored").await;
        assert_eq!(
            (s, b["error"].as_str()),
            (422, Some("invalid_choice")),
            "{b}"
        );
        let (s, b) = api.get("/api/v1/sellable?page=zero").await;
        assert_eq!(
            (s, b["error"].as_str()),
            (422, Some("invalid_number")),
            "{b}"
        );
        let (s, b) = api.get("/api/v1/skus/NOPE/sellable").await;
        assert_eq!((s, b["error"].as_str()), (404, Some("not_found")), "{b}");
    }
);

both!(
    another_merchants_sku_has_no_verdict_and_is_not_listed,
    |app| {
        let acme = app.acme_api().await;
        product(&acme, "goods", "MINE").await;
        app.merchant("globex").await;
        let globex = Api {
            key: app.api_key("globex").await,
            ..acme.clone()
        };
        product(&globex, "goods", "THEIRS").await;
        let (s, _) = acme.get("/api/v1/skus/THEIRS/sellable").await;
        assert_eq!(s, 404);
        let (_, l) = acme.get("/api/v1/sellable").await;
        let skus: Vec<&str> = l["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["sku"].as_str().unwrap())
            .collect();
        assert_eq!(skus, ["MINE"]);
    }
);

both!(
    reserve_and_book_refuse_what_is_not_on_sale_with_not_on_sale,
    |app| {
        let api = app.acme_api().await;
        product(&api, "goods", "TEA").await;
        adjust(&api, "TEA", "RECEIVE", 5, "delivery").await;
        patch_product(&api, "TEA", json!({"status": "OFFLINE"})).await;
        let (s, b) = reserve(&api, "TEA", 1).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(b["error"], "not_on_sale", "{b}");
        assert_eq!(b["fields"][0]["field"], "items[0].sku", "{b}");
        assert_eq!(api.stock("TEA").await["locked"], 0);

        product(&api, "service", "CUT").await;
        let id = slot(&api, "CUT", 2.0, 2, None).await;
        patch_product(&api, "CUT", json!({"sale_starts_at": at(&api, 1.0)})).await;
        let (s, b) = book(&api, id).await;
        assert_eq!((s, b["error"].as_str()), (409, Some("not_on_sale")), "{b}");
        patch_product(&api, "CUT", json!({"sale_starts_at": null})).await;
        let (s, b) = book(&api, id).await;
        assert_eq!(s, 201, "on sale again, the booking goes through: {b}");
    }
);

// ---- the promise: a verdict and a real hold agree ------------------------------------------
