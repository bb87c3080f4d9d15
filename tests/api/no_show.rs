//! Automatic no-shows (issue 19): off by default; a store that asks has the unmarked bookings of
//! a slot that ended its number of minutes ago marked NO_SHOW, once, by `auto`, told like a
//! staff mark; the day list says who marked what.

use chrono::TimeZone;
use chrono_tz::Asia::Shanghai;

use crate::helpers::{html, TestApp};
use crate::on_each_day;

async fn status_and_by(app: &TestApp, reference: &str) -> (String, Option<String>) {
    sqlx::query_as("SELECT status, marked_by FROM bookings WHERE reference = $1")
        .bind(reference)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn unmarked_bookings_of_an_ended_slot_become_no_shows_once_in_a_store_that_asks_and_racing_sweeps_mark_each_once(
    app: TestApp,
) {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let now = app.now();
    let slot = api
        .one_off(
            "CUT",
            now + chrono::Duration::hours(1),
            now + chrono::Duration::hours(2),
            4,
        )
        .await;
    let late = api
        .one_off(
            "CUT",
            now + chrono::Duration::hours(3),
            now + chrono::Duration::hours(4),
            4,
        )
        .await;
    let mut refs = Vec::new();
    for (s, name, phone) in [
        (slot, "Ann Lee", "13800138000"),
        (slot, "Bo Chen", "13800138001"),
        (late, "Cy Wu", "13800138002"),
    ] {
        let (st, b) = api.book(s, name, phone, None).await;
        assert_eq!(st, 201, "{b}");
        refs.push(b["reference"].as_str().unwrap().to_string());
    }
    let (ann, bo, cy) = (refs[0].clone(), refs[1].clone(), refs[2].clone());
    // The first slot ended an hour ago; the other ended ten minutes ago.
    let ms = now.timestamp_millis();
    for (id, ended_ago) in [(slot, 3_600_000i64), (late, 600_000)] {
        sqlx::query("UPDATE slots SET starts_at = $1, ends_at = $2 WHERE id = $3")
            .bind(ms - ended_ago - 3_600_000)
            .bind(ms - ended_ago)
            .bind(id)
            .execute(&app.db.pool)
            .await
            .unwrap();
    }
    let staff = app.signed_in("store_staff", Some("acme")).await;
    let r = staff
        .post(app.url(&format!("/admin/bookings/{bo}/attended")))
        .form(&[("from", "day")])
        .send()
        .await
        .unwrap();
    assert!(r.status().is_redirection(), "{}", r.status());

    // Off by default: nothing is marked.
    assert_eq!(
        sellable::domain::slots::no_show::sweep(&app.db)
            .await
            .unwrap(),
        0
    );
    assert_eq!(status_and_by(&app, &ann).await.0, "BOOKED");

    // The merchant switches it on for the store: 30 minutes; a bad value is refused.
    let store_id: i64 = sqlx::query_scalar("SELECT id FROM stores WHERE slug = 'main-store'")
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    let form = |v: &str| crate::helpers::store_form(v, "");
    let path = format!("/admin/stores/{store_id}");
    let r = admin
        .post(app.url(&path))
        .form(&form("soon"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    assert_eq!(
        html(r).await.count(".field-error[data-field=auto_no_show]"),
        1
    );
    let r = admin
        .post(app.url(&path))
        .form(&form("30"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let page = app.page(&admin, &path).await;
    assert_eq!(
        page.attr("input[name=auto_no_show]", "value").as_deref(),
        Some("30")
    );

    // Four instances sweep at once: Ann is marked once; Bo (marked by staff) and Cy (ended
    // ten minutes ago) are not touched.
    let (a, b, c, d) = tokio::join!(
        sellable::domain::slots::no_show::sweep(&app.db),
        sellable::domain::slots::no_show::sweep(&app.db),
        sellable::domain::slots::no_show::sweep(&app.db),
        sellable::domain::slots::no_show::sweep(&app.db),
    );
    assert_eq!(a.unwrap() + b.unwrap() + c.unwrap() + d.unwrap(), 1);
    assert_eq!(
        status_and_by(&app, &ann).await,
        ("NO_SHOW".into(), Some("auto".into()))
    );
    let (bo_status, bo_by) = status_and_by(&app, &bo).await;
    assert_eq!(bo_status, "ATTENDED");
    assert!(bo_by.is_some_and(|b| b.contains("store_staff")));
    assert_eq!(status_and_by(&app, &cy).await, ("BOOKED".into(), None));
    let told: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM events WHERE type = 'booking.no_show' AND subject_id = $1",
    )
    .bind(&ann)
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(told, 1);
    let (s, b) = api.get(&format!("/api/v1/bookings/{ann}")).await;
    assert_eq!((s, b["status"].as_str()), (200, Some("NO_SHOW")), "{b}");

    // The day list says who marked what.
    let day = Shanghai
        .timestamp_millis_opt(ms - 2 * 3_600_000)
        .unwrap()
        .date_naive();
    let list = app
        .page(
            &staff,
            &format!("/admin/bookings?date={}", day.format("%Y-%m-%d")),
        )
        .await;
    assert_eq!(
        list.attr(&format!("tr[data-ref=\"{ann}\"] .marked-by"), "data-by")
            .as_deref(),
        Some("auto")
    );
    assert!(list
        .attr(&format!("tr[data-ref=\"{bo}\"] .marked-by"), "data-by")
        .is_some_and(|b| b.contains("store_staff")));
    app.assert_reconciled().await;
}
on_each_day!(unmarked_bookings_of_an_ended_slot_become_no_shows_once_in_a_store_that_asks_and_racing_sweeps_mark_each_once);
