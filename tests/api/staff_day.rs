//! Store staff's day (issue 19): what a schedule or a closure refuses instead of saving silently.

use serde_json::json;

use crate::both;

both!(
    an_overlapping_range_for_the_same_person_is_refused_with_the_overlap_named_and_nothing_saved,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Mei"})).await;
        assert_eq!(s, 201, "{b}");
        let rules = json!({"rules": [
            {"weekdays": ["MON", "TUE"], "opens": "09:00", "closes": "12:00", "slot_minutes": 60, "capacity": 1, "staff": "Mei"},
            // A lunch break is two ranges that do not overlap: fine.
            {"weekdays": ["MON"], "opens": "13:00", "closes": "17:00", "slot_minutes": 60, "capacity": 1, "staff": "Mei"},
            // Overlaps the first on Tuesday.
            {"weekdays": ["TUE"], "opens": "11:00", "closes": "14:00", "slot_minutes": 60, "capacity": 1, "staff": "Mei"},
            // Another person at the same hours does not overlap anybody.
            {"weekdays": ["TUE"], "opens": "11:00", "closes": "14:00", "slot_minutes": 60, "capacity": 1}
        ]});
        let (s, b) = api.post("/api/v1/services/CUT/schedule", rules).await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            crate::helpers::field_codes(&b),
            ["rules[2].opens:overlapping_rule"]
        );
        let message = b["fields"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("09:00–12:00") && message.contains("11:00–14:00"),
            "{message}"
        );
        assert_eq!(app.count("schedule_rules").await, 0);
        assert_eq!(app.count("slots").await, 0);
    }
);

both!(
    a_closure_wholly_in_the_past_is_refused_and_records_nothing,
    |app| {
        let api = app.acme_api().await;
        let now = app.now();
        let (s, b) = api
            .post(
                "/api/v1/closures",
                json!({"starts_at": (now - chrono::Duration::days(3)).to_rfc3339(),
                    "ends_at": (now - chrono::Duration::days(2)).to_rfc3339(),
                    "reason": "Leave"}),
            )
            .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(crate::helpers::field_codes(&b), ["ends_at:period_in_past"]);
        assert_eq!(app.count("closures").await, 0);
        // Leave that began yesterday and runs on is still taken.
        let (s, b) = api
            .post(
                "/api/v1/closures",
                json!({"starts_at": (now - chrono::Duration::days(1)).to_rfc3339(),
                    "ends_at": (now + chrono::Duration::days(1)).to_rfc3339(),
                    "reason": "Leave"}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
    }
);

both!(
    a_services_notice_and_change_cutoff_bind_customers_online_and_not_staff,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.product("goods", "TEA").await;
        let (s, b) = api
            .patch_sku("TEA", json!({"min_notice_minutes": 60}))
            .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            crate::helpers::field_codes(&b),
            ["min_notice_minutes:not_applicable"]
        );
        let (s, b) = api
            .patch_sku("CUT", json!({"change_cutoff_minutes": -5}))
            .await;
        assert_eq!(
            (s, crate::helpers::field_codes(&b)),
            (422, vec!["change_cutoff_minutes:invalid_limit".to_string()])
        );
        let (s, b) = api
            .patch_sku(
                "CUT",
                json!({"min_notice_minutes": 240, "change_cutoff_minutes": 1440}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(
            (
                b["min_notice_minutes"].as_i64(),
                b["change_cutoff_minutes"].as_i64()
            ),
            (Some(240), Some(1440))
        );
        let now = app.now();
        let soon = api
            .one_off(
                "CUT",
                now + chrono::Duration::hours(2),
                now + chrono::Duration::hours(3),
                2,
            )
            .await;
        let tomorrow = api
            .one_off(
                "CUT",
                now + chrono::Duration::hours(20),
                now + chrono::Duration::hours(21),
                2,
            )
            .await;
        // Online, two hours ahead is too soon for four hours' notice: no form, and no booking.
        let store = app.public_slug().await;
        let c = app.client();
        let page = app.page(&c, &format!("/book/{store}/slots/{soon}")).await;
        assert_eq!(page.count("form"), 0);
        assert_eq!(page.count(".refusal"), 1);
        let m: sellable::domain::MerchantId =
            sqlx::query_scalar("SELECT id FROM merchants WHERE slug = 'acme'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        let online = sellable::domain::slots::booking::book(
            &app.db,
            &sellable::domain::Actor::system("test"),
            m,
            sellable::domain::slots::booking::BookInput {
                slot_id: soon,
                places: 1,
                name: "Ann Lee".into(),
                phone: "+86 138 0013 8000".into(),
                idempotency_key: None,
                region: None,
                public: Some(sellable::domain::slots::booking::PublicCaps {
                    store_id: sellable::domain::StoreId(
                        sqlx::query_scalar("SELECT store_id FROM slots WHERE id = $1")
                            .bind(soon)
                            .fetch_one(&app.db.pool)
                            .await
                            .unwrap(),
                    ),
                    client_ip: "203.0.113.9".into(),
                    per_phone: 4,
                    per_address: 10,
                }),
                staff: None,
            },
        )
        .await;
        match online {
            Err(sellable::domain::DomainError::Conflict { code, .. }) => {
                assert_eq!(code, "too_late_to_book")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(app.count("bookings").await, 0);
        // Staff (the API) book it all the same.
        let (s, b) = api.book(soon, "Li Lei", "+86 139 0013 8000", None).await;
        assert_eq!(s, 201, "{b}");
        // Twenty hours ahead with a day's cutoff: the customer can no longer change it online.
        let (s, b) = api
            .book(tomorrow, "Ann Lee", "+86 138 0013 8000", None)
            .await;
        assert_eq!(s, 201, "{b}");
        let reference = b["reference"].as_str().unwrap().to_string();
        let page = app.page(&c, &format!("/booking/{reference}")).await;
        assert_eq!(
            page.count("#reschedule-link") + page.count("#cancel-until"),
            0
        );
        let r = c
            .post(app.url(&format!("/booking/{reference}/cancel")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&c, &crate::helpers::location(&r)).await;
        assert_eq!(page.count(".flash-error"), 1);
        let (_, b) = api.get(&format!("/api/v1/bookings/{reference}")).await;
        assert_eq!(b["status"], "BOOKED");
        // Staff still can.
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{reference}/cancel"), json!({}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("CANCELLED")), "{b}");
    }
);

both!(
    staff_check_a_customer_in_from_the_stores_check_in_time_before_the_start_and_no_show_waits_for_the_start,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let now = app.now();
        let soon = api
            .one_off(
                "CUT",
                now + chrono::Duration::minutes(20),
                now + chrono::Duration::minutes(80),
                2,
            )
            .await;
        let later = api
            .one_off(
                "CUT",
                now + chrono::Duration::hours(2),
                now + chrono::Duration::hours(3),
                2,
            )
            .await;
        let (_, b) = api.book(soon, "Ann Lee", "+86 138 0013 8000", None).await;
        let early = b["reference"].as_str().unwrap().to_string();
        let (_, b) = api.book(later, "Li Lei", "+86 139 0013 8000", None).await;
        let too_early = b["reference"].as_str().unwrap().to_string();
        // The day list offers check-in 20 minutes ahead (30 by default), not no-show.
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let date = now
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .format("%Y-%m-%d")
            .to_string();
        let day = app.page(&staff, &format!("/admin/bookings?date={date}")).await;
        let row = |r: &str| format!("tr[data-ref='{r}']");
        assert_eq!(
            day.count(&format!("{} form[action$='/attended']", row(&early))),
            1
        );
        assert_eq!(
            day.count(&format!("{} form[action$='/no-show']", row(&early))),
            0
        );
        assert_eq!(
            day.count(&format!("{} form[action$='/attended']", row(&too_early))),
            0
        );
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{early}/no-show"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_not_started")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{too_early}/attended"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_not_started")), "{b}");
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{early}/attended"), json!({}))
            .await;
        assert_eq!((s, b["status"].as_str()), (200, Some("ATTENDED")), "{b}");
        // A store that checks in only from the start: the same 20 minutes are too early.
        sqlx::query("UPDATE stores SET check_in_minutes = 0")
            .execute(&app.db.pool)
            .await
            .unwrap();
        let (_, b) = api.book(soon, "Wang Fang", "+86 137 0013 8000", None).await;
        let third = b["reference"].as_str().unwrap().to_string();
        let (s, b) = api
            .post(&format!("/api/v1/bookings/{third}/attended"), json!({}))
            .await;
        assert_eq!((s, b["error"].as_str()), (409, Some("slot_not_started")), "{b}");
    }
);
