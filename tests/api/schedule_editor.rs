//! The weekly schedule editor as store staff use it (issue 19): several opening ranges a day,
//! each error beside its range, copy a day, a preview that writes nothing and matches what the
//! save then does (hand-edited, booked and over-full slots kept), date overrides, one-off slots
//! from the back office, and the Schedules tab.

use chrono::{Duration, NaiveDate, TimeZone};
use chrono_tz::Asia::Shanghai;
use serde_json::json;

use crate::both;
use crate::helpers::{html, location, Api, Html, TestApp};
use crate::on_each_day;

fn ymd(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

fn at_ms(day: NaiveDate, hour: u32) -> i64 {
    Shanghai
        .from_local_datetime(&day.and_hms_opt(hour, 0, 0).unwrap())
        .unwrap()
        .timestamp_millis()
}

async fn sku_id(app: &TestApp, code: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM skus WHERE code = $1")
        .bind(code)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// The slot of the service starting at a local day and hour, if any.
async fn slot_at(app: &TestApp, day: NaiveDate, hour: u32) -> Option<(i64, i64, i64)> {
    sqlx::query_as("SELECT id, capacity, booked FROM slots WHERE starts_at = $1")
        .bind(at_ms(day, hour))
        .fetch_optional(&app.db.pool)
        .await
        .unwrap()
}

/// The hours at which a local day has open slots, in order.
async fn open_hours(app: &TestApp, day: NaiveDate) -> Vec<i64> {
    let starts: Vec<i64> = sqlx::query_scalar(
        "SELECT starts_at FROM slots WHERE starts_at >= $1 AND starts_at < $2 AND status = 'OPEN' ORDER BY starts_at",
    )
    .bind(at_ms(day, 0))
    .bind(at_ms(day + Duration::days(1), 0))
    .fetch_all(&app.db.pool)
    .await
    .unwrap();
    starts
        .into_iter()
        .map(|s| (s - at_ms(day, 0)) / 3_600_000)
        .collect()
}

/// One range of the editor's form: `rules[i].*` for one weekday.
fn range(i: usize, day: &str, opens: &str, closes: &str, capacity: &str) -> Vec<(String, String)> {
    let k = |f: &str| format!("rules[{i}].{f}");
    vec![
        (k("weekdays"), day.into()),
        (k("opens"), opens.into()),
        (k("closes"), closes.into()),
        (k("slot_minutes"), "60".into()),
        (k("capacity"), capacity.into()),
        (k("staff"), String::new()),
    ]
}

fn form(ranges: Vec<Vec<(String, String)>>, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out = vec![("store".to_string(), "main-store".to_string())];
    out.extend(ranges.into_iter().flatten());
    out.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    out
}

async fn post(
    app: &TestApp,
    client: &reqwest::Client,
    path: &str,
    f: &[(String, String)],
) -> (u16, Html) {
    let r = client.post(app.url(path)).form(f).send().await.unwrap();
    let status = r.status().as_u16();
    (status, html(r).await)
}

/// Posts a form on a task of its own (many at once race each other); answers the status.
fn post_at_once(
    client: reqwest::Client,
    url: String,
    f: Vec<(String, String)>,
) -> tokio::task::JoinHandle<u16> {
    tokio::spawn(async move {
        let r = client.post(url).form(&f).send().await.unwrap();
        r.status().as_u16()
    })
}

/// Service CUT, open on Mondays from `opens` to `closes` in 60-minute slots of `capacity`
/// places (through the API).
async fn mondays(api: &Api, opens: &str, closes: &str, capacity: i64) {
    api.product("service", "CUT").await;
    let (s, b) = api
        .post(
            "/api/v1/services/CUT/schedule",
            json!({"rules": [{"weekdays": ["MON"], "opens": opens, "closes": closes,
                "slot_minutes": 60, "capacity": capacity}]}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
}

async fn slot_length(app: &TestApp, id: i64) -> i64 {
    sqlx::query_scalar("SELECT ends_at - starts_at FROM slots WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

fn num(page: &Html, selector: &str, attr: &str) -> i64 {
    page.attr(selector, attr)
        .unwrap_or_else(|| panic!("{selector}[{attr}] missing"))
        .parse()
        .unwrap()
}

both!(
    the_weekly_editor_saves_several_ranges_a_day_and_shows_each_error_beside_its_range,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let url = format!("/admin/services/{}/schedule", sku_id(&app, "CUT").await);
        let client = app.signed_in("store_staff", Some("acme")).await;

        // A lunch break is two ranges on one day.
        let lunch = form(
            vec![
                range(0, "MON", "09:00", "12:00", "2"),
                range(1, "MON", "13:00", "18:00", "2"),
            ],
            &[("action", "save")],
        );
        let (s, page) = post(&app, &client, &url, &lunch).await;
        assert_eq!(s, 200);
        assert_eq!(app.count("schedule_rules").await, 2);
        assert_eq!(
            page.count("fieldset.day[data-day=MON] .range"),
            3,
            "two ranges and an empty one to add a third"
        );
        assert_eq!(
            page.attrs("fieldset.day[data-day=MON] input[type=time]", "value")[..4],
            ["09:00", "12:00", "13:00", "18:00"]
        );
        assert_eq!(page.count("fieldset.day[data-day=TUE] .closed-day"), 1);
        // The empty range to add is like the day's last one (2 places), not a bare default.
        assert_eq!(
            page.attrs(
                "fieldset.day[data-day=MON] input[name$=\".capacity\"]",
                "value"
            ),
            vec!["2", "2", "2"]
        );
        assert_eq!(
            open_hours(&app, app.next_monday()).await,
            vec![9, 10, 11, 13, 14, 15, 16, 17]
        );

        // Overlapping ranges of the same person: refused, the overlap named beside the later
        // range, nothing changed.
        let overlap = form(
            vec![
                range(0, "MON", "09:00", "12:00", "2"),
                range(1, "MON", "11:00", "13:00", "2"),
            ],
            &[("action", "save")],
        );
        let (s, page) = post(&app, &client, &url, &overlap).await;
        assert_eq!(s, 422);
        assert_eq!(
            page.count(".range[data-row=\"1\"] .field-error[data-field=\"rules[1].opens\"]"),
            1
        );
        assert_eq!(page.count(".range[data-row=\"0\"] .field-error"), 0);
        assert_eq!(
            page.attr("input[name=\"rules[1].opens\"]", "value")
                .as_deref(),
            Some("11:00"),
            "what was typed stays"
        );
        assert_eq!(app.count("schedule_rules").await, 2);

        // A time that does not exist is refused beside its range; a closing time of 00:00 is
        // midnight (what a time input can say).
        let bad = form(
            vec![
                range(0, "TUE", "25:00", "09:00", "1"),
                range(1, "WED", "22:00", "00:00", "1"),
            ],
            &[("action", "save")],
        );
        let (s, page) = post(&app, &client, &url, &bad).await;
        assert_eq!(s, 422);
        assert_eq!(
            page.count("fieldset.day[data-day=TUE] .field-error[data-field$=\".opens\"]"),
            1
        );
        assert_eq!(page.count("fieldset.day[data-day=WED] .field-error"), 0);
        let night = form(vec![range(0, "WED", "22:00", "00:00", "1")], &[]);
        let (s, _) = post(&app, &client, &url, &night).await;
        assert_eq!(s, 200);
        let closes: i64 = sqlx::query_scalar("SELECT closes_min FROM schedule_rules")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(closes, 1440);
        let page = app.page(&client, &url).await;
        assert_eq!(
            page.attrs(
                "fieldset.day[data-day=WED] input[name$=\".closes\"]",
                "value"
            )[0],
            "00:00",
            "midnight shows as a time input can take it"
        );
    }
);

both!(
    copying_a_day_fills_the_chosen_days_and_saves_nothing,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let url = format!("/admin/services/{}/schedule", sku_id(&app, "CUT").await);
        let client = app.signed_in("store_staff", Some("acme")).await;
        let copy = form(
            vec![
                range(0, "MON", "09:00", "12:00", "2"),
                range(1, "MON", "13:00", "18:00", "2"),
                range(2, "WED", "10:00", "11:00", "1"),
            ],
            &[
                ("copy_to_MON", "WED"),
                ("copy_to_MON", "FRI"),
                ("copy_to_TUE", "SAT"),
                ("copy_from", "MON"),
            ],
        );
        let (s, page) = post(&app, &client, &url, &copy).await;
        assert_eq!(s, 200);
        assert_eq!(page.attr("#copied", "data-from").as_deref(), Some("MON"));
        assert_eq!(page.attr("#copied", "data-to").as_deref(), Some("WED FRI"));
        for day in ["MON", "WED", "FRI"] {
            assert_eq!(
                page.attrs(
                    &format!("fieldset.day[data-day={day}] input[name$=\".opens\"]"),
                    "value"
                ),
                vec!["09:00", "13:00", ""],
                "{day}: Monday's two ranges (Wednesday's own replaced) and an empty one"
            );
        }
        assert_eq!(page.count("fieldset.day[data-day=SAT] .closed-day"), 1);
        assert_eq!(app.count("schedule_rules").await, 0, "nothing saved");
        assert_eq!(app.count("slots").await, 0);
    }
);

async fn the_preview_writes_nothing_and_the_save_then_does_what_it_showed_keeping_booked_edited_and_full_slots(
    app: TestApp,
) {
    let api = app.acme_api().await;
    mondays(&api, "09:00", "11:00", 2).await;
    let monday = app.next_monday();
    let week2 = monday + Duration::days(7);
    // 10:00 next Monday: booked, and the new hours drop it.
    let (ten, _, _) = slot_at(&app, monday, 10).await.unwrap();
    api.booked(ten, "Ann Lee", "13800138000").await;
    // 09:00 next Monday: full with two places; the new capacity is one.
    let (nine, _, _) = slot_at(&app, monday, 9).await.unwrap();
    api.booked(nine, "Bo Chen", "13800138001").await;
    api.booked(nine, "Cy Wu", "13800138002").await;
    // 09:00 the Monday after: capacity set by hand.
    let (edited, _, _) = slot_at(&app, week2, 9).await.unwrap();
    let (s, b) = api
        .call(
            reqwest::Method::PATCH,
            &format!("/api/v1/slots/{edited}"),
            Some(json!({"capacity": 5})),
        )
        .await;
    assert_eq!(s, 200, "{b}");

    let url = format!("/admin/services/{}/schedule", sku_id(&app, "CUT").await);
    let client = app.signed_in("store_staff", Some("acme")).await;
    let ranges = || {
        vec![
            range(0, "MON", "09:00", "10:00", "1"),
            range(1, "TUE", "14:00", "15:00", "3"),
        ]
    };
    let snapshot = || async {
        let slots: (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), CAST(SUM(capacity) AS BIGINT) FROM slots")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        (
            slots,
            app.count("schedule_rules").await,
            app.count("events").await,
        )
    };
    let before = snapshot().await;
    let (s, page) = post(
        &app,
        &client,
        &url,
        &form(ranges(), &[("action", "preview")]),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(snapshot().await, before, "a preview writes nothing");
    let p = "#preview-counts";
    let (created, removed, changed) = (
        num(&page, p, "data-created"),
        num(&page, p, "data-removed"),
        num(&page, p, "data-capacity-changed"),
    );
    assert!(created >= 4, "the Tuesdays of the window: {created}");
    assert!(removed >= 2, "the free 10:00 slots: {removed}");
    assert!(changed >= 1, "the other 09:00 slots: {changed}");
    assert_eq!(num(&page, p, "data-kept-booked"), 1);
    assert_eq!(num(&page, p, "data-kept-edited"), 1);
    assert_eq!(num(&page, p, "data-kept-full"), 1);
    assert_eq!(
        page.attrs("#preview ul.kept li", "data-slot"),
        vec![ten.to_string()]
    );
    assert_eq!(
        page.attrs("#preview ul.kept-edited li", "data-slot"),
        vec![edited.to_string()]
    );
    assert_eq!(
        page.attrs("#preview ul.kept-full li", "data-slot"),
        vec![nine.to_string()]
    );
    let day_created: i64 = page
        .attrs("table.preview-days td[data-created]", "data-created")
        .iter()
        .map(|n| n.parse::<i64>().unwrap())
        .sum();
    assert_eq!(day_created, created, "the days add up to the total");
    assert_eq!(
        page.attrs(
            "fieldset.day[data-day=TUE] input[name$=\".opens\"]",
            "value"
        )[0],
        "14:00",
        "the form keeps what was typed"
    );
    // A range ticked for removal stays on the form ticked after a preview, to be undone.
    let mut with_removed = ranges();
    let mut gone = range(2, "WED", "09:00", "10:00", "1");
    gone.push(("rules[2].remove".into(), "1".into()));
    with_removed.push(gone);
    let (_, again) = post(
        &app,
        &client,
        &url,
        &form(with_removed, &[("action", "preview")]),
    )
    .await;
    assert_eq!(
        again.count("fieldset.day[data-day=WED] input[name$=\".remove\"][checked]"),
        1
    );
    assert_eq!(
        num(&again, p, "data-created"),
        created,
        "a removed range makes nothing"
    );

    let (s, page) = post(&app, &client, &url, &form(ranges(), &[("action", "save")])).await;
    assert_eq!(s, 200);
    let r = "#report-counts";
    assert_eq!(
        (
            num(&page, r, "data-created"),
            num(&page, r, "data-removed"),
            num(&page, r, "data-capacity-changed")
        ),
        (created, removed, changed),
        "the save did what the preview showed"
    );
    assert_eq!(num(&page, "#kept", "data-n"), 1);
    assert_eq!(num(&page, "#kept-edited", "data-n"), 1);
    assert_eq!(num(&page, "#kept-full", "data-n"), 1);
    assert_eq!(slot_at(&app, monday, 9).await, Some((nine, 2, 2)));
    assert_eq!(slot_at(&app, week2, 9).await, Some((edited, 5, 0)));
    assert_eq!(slot_at(&app, monday, 10).await, Some((ten, 2, 1)));
    app.assert_reconciled().await;

    // The same rules previewed again: nothing left to change.
    let (_, page) = post(
        &app,
        &client,
        &url,
        &form(ranges(), &[("action", "preview")]),
    )
    .await;
    assert_eq!(
        (
            num(&page, p, "data-created"),
            num(&page, p, "data-removed"),
            num(&page, p, "data-capacity-changed")
        ),
        (0, 0, 0)
    );
    assert_eq!(page.count("#preview p.empty"), 1);
}
on_each_day!(the_preview_writes_nothing_and_the_save_then_does_what_it_showed_keeping_booked_edited_and_full_slots);

async fn date_overrides_close_a_holiday_give_an_event_day_its_own_hours_and_keep_booked_slots(
    app: TestApp,
) {
    let api = app.acme_api().await;
    mondays(&api, "09:00", "12:00", 1).await;
    let (d1, d2, d3) = (
        app.next_monday(),
        app.next_monday() + Duration::days(7),
        app.next_monday() + Duration::days(14),
    );
    let (booked, _, _) = slot_at(&app, d2, 10).await.unwrap();
    api.booked(booked, "Ann Lee", "13800138000").await;
    let sku = sku_id(&app, "CUT").await;
    let url = format!("/admin/services/{sku}/schedule/overrides");
    let client = app.signed_in("store_staff", Some("acme")).await;
    let over = |date: NaiveDate, closed: bool, opens: &str, closes: &str| {
        vec![
            ("store".to_string(), "main-store".to_string()),
            ("date".to_string(), ymd(date)),
            (
                "closed".to_string(),
                if closed { "1" } else { "0" }.to_string(),
            ),
            ("opens".to_string(), opens.to_string()),
            ("closes".to_string(), closes.to_string()),
            ("slot_minutes".to_string(), "60".to_string()),
            ("capacity".to_string(), "4".to_string()),
            ("staff".to_string(), String::new()),
        ]
    };

    // A holiday: that Monday's free slots go.
    let (s, page) = post(&app, &client, &url, &over(d1, true, "", "")).await;
    assert_eq!(s, 200);
    assert_eq!(num(&page, "#report-counts", "data-removed"), 3);
    assert!(open_hours(&app, d1).await.is_empty());
    // On a day with a booking, the booked slot stays and is listed.
    let (s, page) = post(&app, &client, &url, &over(d2, true, "", "")).await;
    assert_eq!(s, 200);
    assert_eq!(num(&page, "#kept", "data-n"), 1);
    assert_eq!(open_hours(&app, d2).await, vec![10]);
    // An event day with its own hours and places.
    let (s, _) = post(&app, &client, &url, &over(d3, false, "14:00", "16:00")).await;
    assert_eq!(s, 200);
    assert_eq!(open_hours(&app, d3).await, vec![14, 15]);
    assert_eq!(slot_at(&app, d3, 14).await.unwrap().1, 4);
    // A second range the same day may not overlap the first.
    let (s, page) = post(&app, &client, &url, &over(d3, false, "15:00", "17:00")).await;
    assert_eq!(s, 422);
    assert_eq!(page.count("#overrides .field-error[data-field=opens]"), 1);
    assert_eq!(
        page.attr("#overrides input[name=opens]", "value")
            .as_deref(),
        Some("15:00")
    );
    // "No slots" ticked with hours typed is not guessed at: refused, nothing changes.
    let (s, page) = post(&app, &client, &url, &over(d3, true, "18:00", "20:00")).await;
    assert_eq!(s, 422);
    assert_eq!(page.count("#overrides .field-error[data-field=closed]"), 1);
    assert_eq!(page.count("details.add-override[open][data-answer]"), 1);
    assert_eq!(open_hours(&app, d3).await, vec![14, 15]);
    // The form's address opened as a page (a refresh, the language switcher) leads back.
    let r = client.get(app.url(&url)).send().await.unwrap();
    assert_eq!(r.status(), 303);
    assert!(location(&r).starts_with(&format!("/admin/services/{sku}/schedule")));
    // A past or unreadable date is refused beside the date.
    let yesterday = app.now().with_timezone(&Shanghai).date_naive() - Duration::days(1);
    for date in [ymd(yesterday), "next tuesday".to_string()] {
        let mut f = over(d1, true, "", "");
        f[1].1 = date;
        let (s, page) = post(&app, &client, &url, &f).await;
        assert_eq!(s, 422);
        assert_eq!(page.count("#overrides .field-error[data-field=date]"), 1);
    }
    assert_eq!(app.count("schedule_overrides").await, 3);

    let page = app
        .page(&client, &format!("/admin/services/{sku}/schedule"))
        .await;
    assert_eq!(
        page.attrs("ul.overrides > li", "data-date"),
        vec![ymd(d1), ymd(d2), ymd(d3)]
    );
    assert_eq!(
        page.attrs("ul.overrides > li", "data-closed"),
        vec!["true", "true", "false"]
    );

    // The week grid marks the holiday and the event day.
    let week = app
        .page(&client, &format!("/admin/slots?week={}", ymd(d1)))
        .await;
    assert_eq!(
        week.attr(
            &format!(".day[data-date='{}'] .override-mark", ymd(d1)),
            "data-closed"
        )
        .as_deref(),
        Some("true")
    );
    let week3 = app
        .page(&client, &format!("/admin/slots?week={}", ymd(d3)))
        .await;
    assert_eq!(
        week3
            .attr(
                &format!(".day[data-date='{}'] .override-mark", ymd(d3)),
                "data-closed"
            )
            .as_deref(),
        Some("false")
    );
    // Event hours on a day of leave: created, and the report says they are closed at once.
    // (The Wednesday after d1: inside the 28-day window on any weekday; d3 + 7 fell on its
    // last day when the test ran on a Monday.)
    let d4 = d1 + Duration::days(2);
    let (s, b) = api
        .post(
            "/api/v1/closures",
            json!({"starts_at": format!("{}T00:00:00+08:00", ymd(d4)),
                "ends_at": format!("{}T00:00:00+08:00", ymd(d4 + Duration::days(1))),
                "reason": "Stocktaking"}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, page) = post(&app, &client, &url, &over(d4, false, "18:00", "20:00")).await;
    assert_eq!(s, 200);
    assert_eq!(num(&page, "#report-counts", "data-created"), 2);
    assert_eq!(num(&page, "#created-closed", "data-n"), 2);
    let (s, _) = post(
        &app,
        &client,
        &format!("{url}/remove"),
        &[
            ("store".to_string(), "main-store".to_string()),
            ("date".to_string(), ymd(d4)),
        ],
    )
    .await;
    assert_eq!(s, 200);

    // The nightly job keeps to the overrides; removing one brings the weekly hours back.
    sellable::domain::slots::schedule::materialize_all(&app.db, 28)
        .await
        .unwrap();
    assert!(open_hours(&app, d1).await.is_empty());
    assert_eq!(open_hours(&app, d3).await, vec![14, 15]);
    let (s, _) = post(
        &app,
        &client,
        &format!("{url}/remove"),
        &[
            ("store".to_string(), "main-store".to_string()),
            ("date".to_string(), ymd(d1)),
        ],
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(open_hours(&app, d1).await, vec![9, 10, 11]);
    assert_eq!(app.count("schedule_overrides").await, 2);
    app.assert_reconciled().await;
}
on_each_day!(date_overrides_close_a_holiday_give_an_event_day_its_own_hours_and_keep_booked_slots);

both!(
    a_one_off_slot_is_added_from_the_back_office_and_a_clash_is_refused_beside_the_time,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Alice"})).await;
        assert_eq!(s, 201, "{b}");
        let sku = sku_id(&app, "CUT").await;
        let url = format!("/admin/services/{sku}/slots");
        let client = app.signed_in("store_staff", Some("acme")).await;
        let slot = |date: &str, time: &str| {
            vec![
                ("store".to_string(), "main-store".to_string()),
                ("date".to_string(), date.to_string()),
                ("time".to_string(), time.to_string()),
                ("minutes".to_string(), "90".to_string()),
                ("capacity".to_string(), "3".to_string()),
                ("staff".to_string(), "Alice".to_string()),
            ]
        };
        let day = ymd(app.next_monday());
        let r = client
            .post(app.url(&url))
            .form(&slot(&day, "19:00"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        let to = location(&r);
        let id: i64 = to.trim_start_matches("/admin/slots/").parse().unwrap();
        let (starts, ends, cap, source): (i64, i64, i64, String) =
            sqlx::query_as("SELECT starts_at, ends_at, capacity, source FROM slots WHERE id = $1")
                .bind(id)
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(starts, at_ms(app.next_monday(), 19));
        assert_eq!(ends - starts, 90 * 60_000);
        assert_eq!((cap, source.as_str()), (3, "ONE_OFF"));
        let page = app.page(&client, &to).await;
        assert_eq!(page.count(".flash"), 1);

        // Alice is busy until 20:30: refused beside the time, nothing added.
        let (s, page) = post(&app, &client, &url, &slot(&day, "19:30")).await;
        assert_eq!(s, 422);
        assert_eq!(page.count("#one-off .field-error[data-field=time]"), 1);
        assert_eq!(
            page.attr("#one-off input[name=time]", "value").as_deref(),
            Some("19:30")
        );
        // A time already past, and one that is not a time.
        let yesterday = app.now().with_timezone(&Shanghai).date_naive() - Duration::days(1);
        let (s, page) = post(&app, &client, &url, &slot(&ymd(yesterday), "10:00")).await;
        assert_eq!(s, 422);
        assert_eq!(page.count("#one-off .field-error[data-field=date]"), 1);
        let (s, page) = post(&app, &client, &url, &slot(&day, "7pm")).await;
        assert_eq!(s, 422);
        assert_eq!(page.count("#one-off .field-error[data-field=time]"), 1);
        assert_eq!(app.count("slots").await, 1);
    }
);

both!(
    the_weekly_hours_tab_lists_every_service_with_its_hours_and_leads_to_its_editor,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        api.product("service", "SPA").await;
        let (s, b) = api
            .post(
                "/api/v1/services/CUT/schedule",
                json!({"rules": [{"weekdays": ["MON", "TUE"], "opens": "09:00", "closes": "12:00",
                    "slot_minutes": 60, "capacity": 1}]}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let client = app.signed_in("store_staff", Some("acme")).await;
        let week = app.page(&client, "/admin/slots").await;
        let tab = week
            .attr("nav.subnav a[href^=\"/admin/schedules\"]", "href")
            .unwrap();
        let page = app.page(&client, &tab).await;
        assert_eq!(
            page.attr("nav.subnav a[aria-current=page]", "href")
                .as_deref(),
            Some(tab.as_str())
        );
        assert_eq!(
            page.attr("tr[data-sku=CUT] li[data-days]", "data-days")
                .as_deref(),
            Some("MON TUE")
        );
        assert_eq!(page.count("tr[data-sku=SPA] .no-rules"), 1);
        let edit = page.attr("tr[data-sku=SPA] a.button", "href").unwrap();
        assert!(
            edit.starts_with(&format!(
                "/admin/services/{}/schedule",
                sku_id(&app, "SPA").await
            )),
            "{edit}"
        );
        let editor = app.page(&client, &edit).await;
        assert_eq!(editor.count(".week-editor fieldset.day"), 7);
        assert_eq!(
            editor
                .attr("nav.subnav a[aria-current=page]", "href")
                .as_deref(),
            Some(tab.as_str()),
            "the editor sits under the Weekly hours tab"
        );
    }
);

both!(
    a_break_after_each_slot_spaces_the_slots_of_a_range_and_an_out_of_range_break_is_refused,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let rules = |buffer: serde_json::Value| {
            json!({"rules": [{"weekdays": ["MON"], "opens": "09:00", "closes": "12:00",
                "slot_minutes": 45, "capacity": 1, "buffer_minutes": buffer}]})
        };
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules(json!(300)))
            .await;
        assert_eq!(s, 422, "{b}");
        assert_eq!(
            crate::helpers::field_codes(&b),
            vec!["rules[0].buffer_minutes:invalid_buffer"]
        );
        assert_eq!(app.count("schedule_rules").await, 0);
        let (s, b) = api
            .post("/api/v1/services/CUT/schedule", rules(json!(15)))
            .await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(b["rules"][0]["buffer_minutes"], 15);
        // 45 minutes and a 15-minute break: 09:00, 10:00, 11:00.
        assert_eq!(open_hours(&app, app.next_monday()).await, vec![9, 10, 11]);
        let (starts, ends): (i64, i64) =
            sqlx::query_as("SELECT starts_at, ends_at FROM slots WHERE starts_at = $1")
                .bind(at_ms(app.next_monday(), 10))
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        assert_eq!(ends - starts, 45 * 60_000);

        // In the editor: the break shows, and a break that is not a number is refused there.
        let url = format!("/admin/services/{}/schedule", sku_id(&app, "CUT").await);
        let client = app.signed_in("store_staff", Some("acme")).await;
        let page = app.page(&client, &url).await;
        assert_eq!(
            page.attr("table.rules td[data-buffer]", "data-buffer")
                .as_deref(),
            Some("15")
        );
        let mut bad = form(vec![range(0, "MON", "09:00", "12:00", "1")], &[]);
        bad.push(("rules[0].buffer_minutes".into(), "a bit".into()));
        let (s, page) = post(&app, &client, &url, &bad).await;
        assert_eq!(s, 422);
        assert_eq!(
            page.count(".field-error[data-field=\"rules[0].buffer_minutes\"]"),
            1
        );
    }
);

both!(
    overlapping_date_overrides_added_at_once_keep_one_and_saves_at_once_never_double_the_rules,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let sku = sku_id(&app, "CUT").await;
        let day = app.next_monday() + Duration::days(7);
        let url = format!("/admin/services/{sku}/schedule/overrides");
        let client = app.signed_in("store_staff", Some("acme")).await;
        // Eight staff members' screens add an event day's hours for the same date at once, each
        // overlapping all the others (09:00–12:00, 09:10–12:10 …): one range may stand.
        let adds: Vec<_> = (0..8)
            .map(|i| {
                let (app_url, client) = (app.url(&url), client.clone());
                let opens = format!("{:02}:{:02}", 9 + i * 10 / 60, i * 10 % 60);
                let closes = format!("{:02}:{:02}", 12 + i * 10 / 60, i * 10 % 60);
                let f = vec![
                    ("store".to_string(), "main-store".to_string()),
                    ("date".to_string(), ymd(day)),
                    ("closed".to_string(), "0".to_string()),
                    ("opens".to_string(), opens),
                    ("closes".to_string(), closes),
                    ("slot_minutes".to_string(), "60".to_string()),
                    ("capacity".to_string(), "2".to_string()),
                    ("staff".to_string(), String::new()),
                ];
                post_at_once(client, app_url, f)
            })
            .collect();
        let mut statuses = Vec::new();
        for a in adds {
            statuses.push(a.await.unwrap());
        }
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 422, 422, 422, 422, 422, 422, 422]);
        assert_eq!(app.count("schedule_overrides").await, 1);
        assert_eq!(open_hours(&app, day).await.len(), 3, "one range's slots");

        // Four screens save different weekly hours at once: the rules are one save's, whole.
        let saves: Vec<_> = (0..4)
            .map(|i| {
                let (app_url, client) = (
                    app.url(&format!("/admin/services/{sku}/schedule")),
                    client.clone(),
                );
                let opens = format!("{:02}:00", 8 + i);
                let f = form(
                    vec![
                        range(0, "MON", &opens, "18:00", "1"),
                        range(1, "TUE", &opens, "18:00", "1"),
                    ],
                    &[("action", "save")],
                );
                post_at_once(client, app_url, f)
            })
            .collect();
        for s in saves {
            assert_eq!(s.await.unwrap(), 200);
        }
        let rules: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT weekday, opens_min FROM schedule_rules WHERE sku_id = $1 ORDER BY weekday",
        )
        .bind(sku)
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        assert_eq!(rules.len(), 2, "{rules:?}");
        assert_eq!(
            rules[0].1, rules[1].1,
            "both days from the same save: {rules:?}"
        );
    }
);

both!(
    a_range_that_does_not_divide_into_whole_slots_says_which_minutes_stay_free,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let sku = sku_id(&app, "CUT").await;
        let client = app.signed_in("store_staff", Some("acme")).await;
        let url = format!("/admin/services/{sku}/schedule");
        let f = form(
            vec![
                range(0, "MON", "09:00", "11:30", "2"),
                range(1, "TUE", "09:00", "12:00", "2"),
            ],
            &[("action", "preview")],
        );
        let (s, page) = post(&app, &client, &url, &f).await;
        assert_eq!(s, 200);
        assert_eq!(
            page.attrs(
                "fieldset.day[data-day=MON] [data-code=unused_tail]",
                "data-minutes"
            ),
            ["30"]
        );
        assert_eq!(
            page.count("fieldset.day[data-day=TUE] [data-code=unused_tail]"),
            0
        );
    }
);

both!(
    a_new_slot_length_never_gives_one_person_two_slots_at_once_and_the_save_does_what_the_preview_said,
    |app| {
        let api = app.acme_api().await;
        mondays(&api, "10:00", "13:00", 2).await;
        let monday = app.next_monday();
        // 10:00–11:00 next Monday is booked: it keeps the time its customer booked.
        let (ten, _, _) = slot_at(&app, monday, 10).await.unwrap();
        api.booked(ten, "Ann Lee", "13800138000").await;
        // The same hours in 50-minute slots: 10:00, 10:50, 11:40.
        let url = format!("/admin/services/{}/schedule", sku_id(&app, "CUT").await);
        let client = app.signed_in("store_staff", Some("acme")).await;
        let ranges = || {
            let mut r = range(0, "MON", "10:00", "13:00", "2");
            for (k, v) in r.iter_mut() {
                if k.ends_with(".slot_minutes") {
                    *v = "50".into();
                }
            }
            vec![r]
        };
        let (s, preview) =
            post(&app, &client, &url, &form(ranges(), &[("action", "preview")])).await;
        assert_eq!(s, 200);
        // 10:50 next Monday would overlap the booked 10:00–11:00: it is not opened, and the
        // preview links to the slot in the way.
        assert_eq!(
            preview.attrs("#preview ul.blocked li", "data-slot"),
            [ten.to_string()]
        );
        assert_eq!(
            preview.attrs("#preview ul.kept li", "data-slot"),
            [ten.to_string()],
            "the booked slot keeps its old length"
        );
        let (s, saved) = post(&app, &client, &url, &form(ranges(), &[("action", "save")])).await;
        assert_eq!(s, 200);
        let counts = |page: &Html, sel: &str| {
            (
                num(page, sel, "data-created"),
                num(page, sel, "data-removed"),
                page.attr(&format!("{} .length-changed", sel.split(' ').next().unwrap()), "data-n"),
                page.attrs(&format!("{} ul.blocked li", sel.split(' ').next().unwrap()), "data-slot"),
            )
        };
        assert_eq!(
            counts(&saved, "#report #report-counts"),
            counts(&preview, "#preview #preview-counts"),
            "the save does what the preview said"
        );
        // Nobody has two open slots at once, on any day of the window.
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT staff_key, starts_at, ends_at FROM slots WHERE status = 'OPEN' ORDER BY staff_key, starts_at",
        )
        .fetch_all(&app.db.pool)
        .await
        .unwrap();
        for w in rows.windows(2) {
            if w[0].0 == w[1].0 {
                assert!(w[0].2 <= w[1].1, "overlapping slots: {:?} and {:?}", w[0], w[1]);
            }
        }
        // Unbooked 10:00 slots took the new length; the booked one kept its hour.
        let week2 = monday + Duration::days(7);
        let (other_ten, _, _) = slot_at(&app, week2, 10).await.unwrap();
        assert_eq!(slot_length(&app, other_ten).await, 50 * 60_000);
        assert_eq!(slot_length(&app, ten).await, 60 * 60_000);
        app.assert_reconciled().await;
    }
);

both!(
    a_store_with_many_services_pages_its_weekly_hours_and_its_week_grid_and_each_page_shows_only_its_services,
    |app| {
        let api = app.acme_api().await;
        let skus: Vec<_> = (0..30)
            .map(|i| json!({"code": format!("S{i:02}"), "name": format!("Service {i}"), "price": 100}))
            .collect();
        let (s, b) = api
            .post(
                "/api/v1/products",
                json!({"name": "Many", "kind": "service", "status": "ONLINE", "skus": skus}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        // One service on each page of the Schedules tab (25 a page) and of the grid (20 a page).
        for (code, opens, closes) in [("S01", "09:00", "10:00"), ("S27", "10:00", "11:00")] {
            let (s, b) = api
                .post(
                    &format!("/api/v1/services/{code}/schedule"),
                    json!({"rules": [{"weekdays": ["MON"], "opens": opens, "closes": closes,
                        "slot_minutes": 60, "capacity": 1}]}),
                )
                .await;
            assert_eq!(s, 200, "{b}");
        }
        let client = app.signed_in("store_staff", Some("acme")).await;

        let first = app.page(&client, "/admin/schedules").await;
        assert_eq!(first.count("tr[data-sku]"), 25);
        assert_eq!(first.attr("nav.pager", "data-pages").as_deref(), Some("2"));
        assert_eq!(
            first.attr("tr[data-sku=S01] li[data-days]", "data-days").as_deref(),
            Some("MON")
        );
        assert_eq!(first.count("tr[data-sku=S27]"), 0);
        let next = first.attr("nav.pager a[rel=next]", "href").unwrap();
        let second = app.page(&client, &next).await;
        assert_eq!(second.count("tr[data-sku]"), 5);
        assert_eq!(
            second.attr("tr[data-sku=S27] li[data-days]", "data-days").as_deref(),
            Some("MON")
        );
        // A page past the end shows the last one.
        let past = app.page(&client, "/admin/schedules?page=99").await;
        assert_eq!(past.count("tr[data-sku=S27]"), 1);

        let week = app.next_monday().format("%Y-%m-%d").to_string();
        let codes = |page: &Html| page.texts(".week a.slot .sku");
        let grid = app.page(&client, &format!("/admin/slots?week={week}")).await;
        assert_eq!(grid.attr("#services-paged", "data-services").as_deref(), Some("30"));
        assert_eq!(codes(&grid), ["S01"], "page 1 draws the slots of S00–S19 only");
        assert_eq!(grid.count("p.schedules a"), 20);
        let next = grid.attr("#week-grid nav.pager a[rel=next]", "href").unwrap();
        assert!(next.contains(&format!("week={week}")), "{next}");
        let grid2 = app.page(&client, &next).await;
        assert_eq!(codes(&grid2), ["S27"]);
        // The next week keeps the page of services.
        let later = grid2.attr(".week-head a[rel=next]", "href").unwrap();
        assert!(later.contains("page=2"), "{later}");
        // A chosen service needs no pages.
        let one = app
            .page(&client, &format!("/admin/slots?week={week}&service=S27&page=1"))
            .await;
        assert_eq!(codes(&one), ["S27"]);
        assert_eq!(one.count("#services-paged"), 0);
        assert_eq!(one.count("#week-grid nav.pager"), 0);
    }
);
