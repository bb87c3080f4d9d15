//! Staff members renamed and archived (issue 20): an archived member keeps their history, takes
//! no new slots, and cannot be archived while still on the schedule.

use serde_json::json;

use crate::both;
use crate::helpers::html;

/// `h` o'clock next Monday in the test stores' timezone, as RFC 3339.
fn at(app: &crate::helpers::TestApp, h: u32) -> String {
    chrono::TimeZone::from_local_datetime(
        &chrono_tz::Asia::Shanghai,
        &app.next_monday().and_hms_opt(h, 0, 0).unwrap(),
    )
    .unwrap()
    .to_rfc3339()
}

async fn staff_of_slot(app: &crate::helpers::TestApp, slot: i64) -> String {
    sqlx::query_scalar(
        "SELECT s.name FROM slots l JOIN staff s ON s.id = l.staff_id WHERE l.id = $1",
    )
    .bind(slot)
    .fetch_one(&app.db.pool)
    .await
    .unwrap()
}

both!(
    a_staff_member_is_renamed_and_archived_keeps_history_and_takes_no_new_slots,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Alice"})).await;
        assert_eq!(s, 201, "{b}");
        let alice = b["id"].as_i64().unwrap();
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Bob"})).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = api
            .post("/api/v1/slots", json!({"sku": "CUT", "starts_at": at(&app, 10), "ends_at": at(&app, 11), "capacity": 2, "staff": "Alice"}))
            .await;
        assert_eq!(s, 201, "{b}");
        let slot = b["id"].as_i64().unwrap();
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        let change = |id: i64, action: &'static str, name: &'static str| {
            admin
                .post(app.url(&format!("/admin/staff/{id}")))
                .form(&[
                    ("store", "acme/main-store"),
                    ("action", action),
                    ("name", name),
                ])
                .send()
        };
        // Renamed: their slot follows; a name taken by a colleague is refused in the row.
        let r = change(alice, "rename", "Alice Wang").await.unwrap();
        assert_eq!(r.status(), 303);
        let r = change(alice, "rename", "Bob").await.unwrap();
        assert_eq!(r.status(), 422);
        let page = html(r).await;
        assert_eq!(
            page.count(&format!("tr[data-staff='{alice}'] .field-error")),
            1
        );
        assert_eq!(staff_of_slot(&app, slot).await, "Alice Wang");
        // Still scheduled: archiving is refused and says why.
        let r = change(alice, "archive", "").await.unwrap();
        assert_eq!(r.status(), 409);
        let active: i64 =
            sqlx::query_scalar("SELECT CAST(active AS BIGINT) FROM staff WHERE id = $1")
                .bind(alice)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(active, 1);
        // Their slot closed, they are archived: kept in the list, marked, no new slots.
        let (s, b) = api
            .post(
                &format!("/api/v1/slots/{slot}/close"),
                json!({"reason": "leaving"}),
            )
            .await;
        assert!(s == 200 || s == 201, "{s} {b}");
        let r = change(alice, "archive", "").await.unwrap();
        assert_eq!(r.status(), 303);
        let page = app.page(&admin, "/admin/staff?store=acme/main-store").await;
        assert_eq!(
            page.attr(&format!("tr[data-staff='{alice}']"), "data-active")
                .as_deref(),
            Some("0")
        );
        let (s, b) = api
            .post("/api/v1/slots", json!({"sku": "CUT", "starts_at": at(&app, 12), "ends_at": at(&app, 13), "capacity": 2, "staff": "Alice Wang"}))
            .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            staff_of_slot(&app, slot).await,
            "Alice Wang",
            "their history keeps them"
        );
        // Brought back, they take slots again.
        let r = change(alice, "restore", "").await.unwrap();
        assert_eq!(r.status(), 303);
        let (s, b) = api
            .post("/api/v1/slots", json!({"sku": "CUT", "starts_at": at(&app, 12), "ends_at": at(&app, 13), "capacity": 2, "staff": "Alice Wang"}))
            .await;
        assert_eq!(s, 201, "{b}");
        // Another merchant's admin cannot reach them.
        app.merchant("other").await;
        let theirs = app.signed_in("merchant_admin", Some("other")).await;
        let r = theirs
            .post(app.url(&format!("/admin/staff/{alice}")))
            .form(&[
                ("store", "other/main-store"),
                ("action", "rename"),
                ("name", "Mine"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
);

both!(
    archiving_a_person_racing_a_schedule_save_or_a_new_slot_never_leaves_them_archived_with_work,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let admin = app.signed_in("merchant_admin", Some("acme")).await;
        for round in 0..8u32 {
            let name = format!("P{round}");
            let (s, b) = api.post("/api/v1/staff", json!({"name": name})).await;
            assert_eq!(s, 201, "{b}");
            let id = b["id"].as_i64().unwrap();
            let archive = admin
                .post(app.url(&format!("/admin/staff/{id}")))
                .form(&[
                    ("store", "acme/main-store"),
                    ("action", "archive"),
                    ("name", ""),
                ])
                .send();
            // Even rounds: a weekly schedule naming them; odd rounds: a one-off slot of theirs.
            let work = async {
                if round % 2 == 0 {
                    api.post(
                        "/api/v1/services/CUT/schedule",
                        json!({"rules": [{"weekdays": ["MON"], "opens": "09:00", "closes": "10:00",
                               "slot_minutes": 60, "capacity": 1, "staff": name}]}),
                    )
                    .await
                } else {
                    api.post(
                        "/api/v1/slots",
                        json!({"sku": "CUT", "starts_at": at(&app, 8 + round), "ends_at": at(&app, 9 + round),
                               "capacity": 1, "staff": name}),
                    )
                    .await
                }
            };
            let (archived, (s, b)) = tokio::join!(archive, work);
            let archived = archived.unwrap().status().as_u16();
            assert!(
                [200, 201, 409, 422].contains(&s),
                "the work is done or refused: {s} {b}"
            );
            assert!([303, 409].contains(&archived), "{archived}");
            let (active, work): (i64, i64) = sqlx::query_as(
                "SELECT CAST(active AS BIGINT),
                    (SELECT COUNT(*) FROM schedule_rules WHERE staff_id = $1)
                    + (SELECT COUNT(*) FROM slots WHERE staff_id = $1 AND status = 'OPEN')
                 FROM staff WHERE id = $1",
            )
            .bind(id)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
            assert!(
                active == 1 || work == 0,
                "round {round}: archived with {work} rules or slots (archive {archived}, work {s} {b})"
            );
            // Archived or not, the next round starts from a schedule without them.
            let (s, b) = api
                .post("/api/v1/services/CUT/schedule", json!({"rules": []}))
                .await;
            assert_eq!(s, 200, "{b}");
        }
    }
);
