//! A store's day in a real browser (issue 19): staff build a week with a lunch break and a date
//! override, close a colleague's day for leave and work through the to-call list on a phone,
//! moving one booking and cancelling another; a customer on a phone books two places, downloads
//! the calendar file and reschedules. Each runs in Chinese on SQLite and in English on PostgreSQL,
//! so both languages and both databases are driven without doubling the slowest tests.

use chrono::{Duration, TimeZone};
use chrono_tz::Asia::Shanghai;
use fantoccini::error::CmdError;
use fantoccini::{Client, Locator};
use serde_json::json;

use crate::both;
use crate::browser::{
    browser_as, click_to_next_page, fits_the_width, html_lang, sign_in, start_driver, PHONE,
};
use crate::helpers::{Backend, TestApp};

/// The language this backend's run reads: Chinese on SQLite, English on PostgreSQL.
async fn language(app: &TestApp) -> &'static str {
    if app.backend != Backend::Sqlite {
        return "en";
    }
    app.speaks(sellable::i18n::Lang::ZhCn, true).await;
    "zh-CN"
}

/// Local time on a day in the store's timezone, as Unix ms.
fn at(day: chrono::NaiveDate, h: u32, m: u32) -> i64 {
    Shanghai
        .from_local_datetime(&day.and_hms_opt(h, m, 0).unwrap())
        .unwrap()
        .timestamp_millis()
}

/// Fills the last (empty) opening range of a weekday in the schedule editor.
async fn fill_range(
    c: &Client,
    day: &str,
    (opens, closes): (&str, &str),
    places: &str,
    who: &str,
) -> Result<(), CmdError> {
    c.execute(
        "const [day, opens, closes, places, who] = arguments;
         const r = [...document.querySelectorAll(`fieldset.day[data-day=${day}] .range`)].pop();
         const set = (n, v) => { r.querySelector(`[name$='.${n}']`).value = v; };
         set('opens', opens); set('closes', closes); set('slot_minutes', '60'); set('capacity', places);
         const sel = r.querySelector(\"select[name$='.staff']\");
         sel.value = [...sel.options].find(o => o.text.trim() === who).value;
         return true;",
        vec![
            json!(day),
            json!(opens),
            json!(closes),
            json!(places),
            json!(who),
        ],
    )
    .await?;
    Ok(())
}

/// Keeps a screenshot in the temp directory (`sellable-day-{name}.png`) for people to look at.
async fn shot(c: &Client, name: &str) -> Result<(), CmdError> {
    let png = c.screenshot().await?;
    std::fs::write(
        std::env::temp_dir().join(format!("sellable-day-{name}.png")),
        png,
    )
    .ok();
    Ok(())
}

/// Clicks the editor's first button of this name and value and waits for the answer.
async fn submit(c: &Client, css: &str) -> Result<(), CmdError> {
    let b = c.find(Locator::Css(css)).await?;
    click_to_next_page(c, b).await
}

async fn slot_at(app: &TestApp, staff: &str, starts_at: i64) -> Option<(i64, String, i64)> {
    sqlx::query_as(
        "SELECT s.id, s.status, s.booked FROM slots s JOIN staff p ON p.id = s.staff_id
         WHERE p.name = $1 AND s.starts_at = $2",
    )
    .bind(staff)
    .bind(starts_at)
    .fetch_optional(&app.db.pool)
    .await
    .unwrap()
}

async fn run_staff_day(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    let lang = language(app).await;
    api.product("service", "CUT").await;
    for name in ["Mia", "Jun"] {
        let (s, b) = api.post("/api/v1/staff", json!({ "name": name })).await;
        assert_eq!(s, 201, "{b}");
    }
    // Jun has a class next Monday at 10:00 with two customers booked.
    let monday = app.next_monday();
    let tuesday = monday + Duration::days(1);
    let jun_start = chrono::Utc.timestamp_millis_opt(at(monday, 10, 0)).unwrap();
    let (s, b) = api
        .post(
            "/api/v1/slots",
            json!({"sku": "CUT", "staff": "Jun", "starts_at": jun_start.to_rfc3339(),
                   "ends_at": (jun_start + Duration::hours(1)).to_rfc3339(), "capacity": 2}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let jun_slot = b["id"].as_i64().unwrap();
    let mut refs = Vec::new();
    for (name, phone) in [
        ("Ann Lee", "+86 138 0013 8001"),
        ("Bo Chen", "+86 138 0013 8002"),
    ] {
        let (s, b) = api.book(jun_slot, name, phone, None).await;
        assert_eq!(s, 201, "{b}");
        refs.push(b["reference"].as_str().unwrap().to_string());
    }
    let (moved, cancelled) = (refs[0].clone(), refs[1].clone());
    let (email, password) = app.user("store_staff", Some("acme")).await;
    let c = browser_as(&driver, (1280, 900), lang).await;
    let result = async {
        sign_in(&c, app, &email, &password).await?;
        assert_eq!(html_lang(&c).await?, lang);
        // The Weekly hours tab leads to the service's editor.
        c.goto(&app.url("/admin/schedules")).await?;
        let edit = c
            .wait()
            .for_element(Locator::Css(
                "a[href*='/admin/services/'][href*='/schedule']",
            ))
            .await?;
        click_to_next_page(&c, edit).await?;
        // Monday: 09:00–12:00, preview (which adds a second empty range), then 13:00–17:00.
        c.wait()
            .for_element(Locator::Css("fieldset.day[data-day=MON] .range"))
            .await?;
        fill_range(&c, "MON", ("09:00", "12:00"), "2", "Mia").await?;
        submit(&c, "button[name=action][value=preview]").await?;
        let created = c
            .wait()
            .for_element(Locator::Css("#preview-counts"))
            .await?
            .attr("data-created")
            .await?;
        assert!(
            created.is_some_and(|n| n != "0"),
            "the preview lists new slots"
        );
        fill_range(&c, "MON", ("13:00", "17:00"), "2", "Mia").await?;
        // Copy Monday to Tuesday (the day's "copy to…" folds open), then save.
        c.find(Locator::Css(
            "fieldset.day[data-day=MON] details.copy-day summary",
        ))
        .await?
        .click()
        .await?;
        c.find(Locator::Css("input[name=copy_to_MON][value=TUE]"))
            .await?
            .click()
            .await?;
        submit(&c, "button[name=copy_from][value=MON]").await?;
        let tuesday_ranges = c
            .find_all(Locator::Css("fieldset.day[data-day=TUE] .range"))
            .await?
            .len();
        assert_eq!(tuesday_ranges, 3, "two copied ranges and an empty one");
        submit(&c, "button[name=action][value=save]").await?;
        c.wait().for_element(Locator::Css("#report-counts")).await?;
        assert!(fits_the_width(&c).await?);
        shot(&c, &format!("week-saved-{lang}")).await?;

        // A date override: no slots on Tuesday (a holiday).
        c.find(Locator::Css("details.add-override summary"))
            .await?
            .click()
            .await?;
        c.execute(
            "const f = document.querySelector(\"form[action$='/schedule/overrides']\");
             f.querySelector('input[name=date]').value = arguments[0];
             f.querySelector('input[name=closed][value=\"1\"]').checked = true;
             return true;",
            vec![json!(tuesday.to_string())],
        )
        .await?;
        submit(
            &c,
            "form[action$='/schedule/overrides'] button[type=submit]",
        )
        .await?;
        c.wait()
            .for_element(Locator::Css(&format!(
                "ul.overrides > li[data-date='{tuesday}']"
            )))
            .await?;

        // Jun is off sick on Monday: the whole day, by date.
        c.goto(&app.url("/admin/closures")).await?;
        c.wait()
            .for_element(Locator::Css("form.new-closure"))
            .await?;
        c.execute(
            "const f = document.querySelector('form.new-closure');
             const sel = f.querySelector('select[name=staff]');
             sel.value = [...sel.options].find(o => o.text.trim() === 'Jun').value;
             f.querySelector('input[name=span][value=days]').checked = true;
             f.querySelector('input[name=from_date]').value = arguments[0];
             f.querySelector('input[name=until_date]').value = arguments[0];
             return true;",
            vec![json!(monday.to_string())],
        )
        .await?;
        c.find(Locator::Css("form.new-closure input[name=reason]"))
            .await?
            .send_keys(if lang == "en" { "Sick leave" } else { "病假" })
            .await?;
        submit(&c, "form.new-closure button[type=submit]").await?;
        c.wait()
            .for_element(Locator::Css("table.contacts td.name"))
            .await?;
        Ok::<(), CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("staff build the week and close Jun's day");

    // The week: Mia works 09–12 and 13–17 on Monday, nothing at 12:00 (lunch); Tuesday is a
    // holiday by the override although Monday was copied onto it.
    for (h, expected) in [(9, true), (11, true), (12, false), (13, true), (16, true)] {
        assert_eq!(
            slot_at(app, "Mia", at(monday, h, 0)).await.is_some(),
            expected,
            "Mia at {h}:00 on Monday"
        );
    }
    assert_eq!(
        slot_at(app, "Mia", at(tuesday, 9, 0)).await,
        None,
        "Tuesday is off"
    );
    let (mia_ten, _, _) = slot_at(app, "Mia", at(monday, 10, 0)).await.unwrap();
    assert_eq!(
        slot_at(app, "Jun", at(monday, 10, 0)).await.map(|s| s.1),
        Some("CLOSED".to_string())
    );

    // At the counter, on a phone: call the two customers, move one to Mia, cancel the other.
    let c = browser_as(&driver, PHONE, lang).await;
    let result = async {
        sign_in(&c, app, &email, &password).await?;
        c.goto(&app.url("/admin/to-call")).await?;
        c.wait()
            .for_element(Locator::Css(&format!("#call-{moved}")))
            .await?;
        assert!(fits_the_width(&c).await?, "the to-call list fits the phone");
        shot(&c, &format!("to-call-{lang}")).await?;
        let waiting = c
            .find(Locator::Css("#to-call-counts"))
            .await?
            .attr("data-waiting")
            .await?;
        assert_eq!(waiting.as_deref(), Some("2"));
        let move_link = c
            .find(Locator::Css(&format!("#call-{moved} a.move")))
            .await?;
        click_to_next_page(&c, move_link).await?;
        let here = c
            .wait()
            .for_element(Locator::Css(&format!("li[data-slot='{mia_ten}'] button")))
            .await?;
        assert!(fits_the_width(&c).await?, "the move page fits the phone");
        click_to_next_page(&c, here).await?;
        c.wait()
            .for_element(Locator::Css(&format!("#call-{cancelled}")))
            .await?;
        assert!(
            c.find(Locator::Css(&format!("#call-{moved}")))
                .await
                .is_err(),
            "the moved booking left the list"
        );
        let cancel_link = c
            .find(Locator::Css(&format!("#call-{cancelled} a.cancel")))
            .await?;
        click_to_next_page(&c, cancel_link).await?;
        c.wait()
            .for_element(Locator::Css("input[name=reason]"))
            .await?
            .send_keys(if lang == "en" {
                "Jun is off sick"
            } else {
                "老师病假"
            })
            .await?;
        submit(&c, "form[action$='/cancel'] button.danger").await?;
        c.wait()
            .for_element(Locator::Css("#nobody-to-call"))
            .await?;
        assert!(fits_the_width(&c).await?);
        Ok::<(), CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("staff work through the to-call list on a phone");
    let moved_to: (i64, String, i64) = sqlx::query_as(
        "SELECT slot_id, status, moved_from_slot_id FROM bookings WHERE reference = $1",
    )
    .bind(&moved)
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(moved_to, (mia_ten, "BOOKED".to_string(), jun_slot));
    let (status, reason): (String, Option<String>) =
        sqlx::query_as("SELECT status, cancel_reason FROM bookings WHERE reference = $1")
            .bind(&cancelled)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(status, "CANCELLED");
    assert!(reason.is_some_and(|r| !r.is_empty()));
    assert_eq!(slot_at(app, "Mia", at(monday, 10, 0)).await.unwrap().2, 1);
    assert_eq!(slot_at(app, "Jun", at(monday, 10, 0)).await.unwrap().2, 0);
    app.assert_reconciled().await;
}

both!(
    browser_staff_build_a_week_with_a_lunch_break_and_a_holiday_close_a_colleagues_day_and_work_the_to_call_list_on_a_phone,
    |app| {
        run_staff_day(&app).await;
    }
);

async fn run_customer_party(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    let lang = language(app).await;
    api.product("service", "CUT").await;
    let (s, b) = api.patch_sku("CUT", json!({"max_places": 3})).await;
    assert_eq!(s, 200, "{b}");
    let day = app.now().with_timezone(&Shanghai).date_naive() + Duration::days(2);
    let utc = |h| chrono::Utc.timestamp_millis_opt(at(day, h, 0)).unwrap();
    let morning = api.one_off("CUT", utc(10), utc(11), 4).await;
    let afternoon = api.one_off("CUT", utc(14), utc(15), 4).await;
    let store = app.public_slug().await;
    let c = browser_as(&driver, PHONE, lang).await;
    let result = async {
        c.goto(&app.url(&format!("/book/{store}"))).await?;
        let time = c
            .wait()
            .for_element(Locator::Css(&format!("a[data-slot='{morning}']")))
            .await?;
        assert_eq!(html_lang(&c).await?, lang);
        assert!(fits_the_width(&c).await?, "the day's times fit the phone");
        click_to_next_page(&c, time).await?;
        c.wait().for_element(Locator::Css("#party-size")).await?;
        c.execute(
            "document.querySelector('#party-size').value = '2'; return true;",
            vec![],
        )
        .await?;
        c.find(Locator::Css("input[name=name]"))
            .await?
            .send_keys(if lang == "en" { "Ann Lee" } else { "林伟" })
            .await?;
        c.find(Locator::Css("input[name=phone]"))
            .await?
            .send_keys("138 0013 8000")
            .await?;
        submit(&c, "form button[type=submit].primary").await?;
        c.wait().for_element(Locator::Css(".reference")).await?;
        let places = c
            .find(Locator::Css("#booked-places"))
            .await?
            .attr("data-places")
            .await?;
        assert_eq!(places.as_deref(), Some("2"));
        assert!(fits_the_width(&c).await?, "the confirmation fits the phone");
        shot(&c, &format!("party-booked-{lang}")).await?;
        // The calendar file downloads as an event.
        let ics = c
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 fetch(document.querySelector('#calendar-file').href).then(r => r.text()).then(done);",
                vec![],
            )
            .await?;
        let ics = ics.as_str().unwrap_or_default().to_string();
        assert!(ics.starts_with("BEGIN:VCALENDAR"), "{ics}");
        assert!(ics.contains("BEGIN:VEVENT"), "{ics}");
        // Reschedule to the afternoon.
        let link = c.find(Locator::Css("#reschedule-link")).await?;
        click_to_next_page(&c, link).await?;
        c.wait()
            .for_element(Locator::Css("#reschedule-choices"))
            .await?;
        assert!(fits_the_width(&c).await?, "the reschedule page fits the phone");
        shot(&c, &format!("reschedule-{lang}")).await?;
        submit(
            &c,
            &format!(
                "#reschedule-choices form:has(input[name=slot_id][value='{afternoon}']) button"
            ),
        )
        .await?;
        c.wait().for_element(Locator::Css(".reference")).await?;
        Ok::<(), CmdError>(())
    }
    .await;
    let _ = c.close().await;
    result.expect("a customer on a phone books two places and reschedules");
    let (slot_id, places, status): (i64, i64, String) = sqlx::query_as(
        "SELECT slot_id, places, status FROM bookings WHERE customer_key LIKE '%8613800138000%'",
    )
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    assert_eq!((slot_id, places, status.as_str()), (afternoon, 2, "BOOKED"));
    assert_eq!(app.slot_booked(morning).await, 0);
    assert_eq!(app.slot_booked(afternoon).await, 2);
    app.assert_reconciled().await;
}

both!(
    browser_a_customer_on_a_phone_books_two_places_downloads_the_calendar_file_and_reschedules,
    |app| {
        run_customer_party(&app).await;
    }
);

/// Staff on a phone take a caller's booking from the day list, and at a desk a walk-in's from the
/// slot page inside the service's notice (after confirming it).
async fn run_staff_booking(app: &TestApp) {
    let Some(driver) = start_driver().await else {
        return;
    };
    let api = app.acme_api().await;
    let lang = language(app).await;
    api.product("service", "CUT").await;
    let (s, b) = api
        .patch_sku("CUT", json!({"min_notice_minutes": 240, "max_places": 4}))
        .await;
    assert_eq!(s, 200, "{b}");
    let today = app.now().with_timezone(&Shanghai).date_naive();
    // The test clock reads 10:00 in the store: 12:00 and 13:00 today are inside the service's
    // four hours' notice for online bookings.
    let mut slots = Vec::new();
    for h in [12, 13] {
        let start = chrono::Utc.timestamp_millis_opt(at(today, h, 0)).unwrap();
        slots.push(
            api.one_off("CUT", start, start + Duration::minutes(45), 3)
                .await,
        );
    }
    let (email, password) = app.user("store_staff", Some("acme")).await;
    let phone = browser_as(&driver, PHONE, lang).await;
    let result = async {
        sign_in(&phone, app, &email, &password).await?;
        phone.goto(&app.url("/admin/bookings")).await?;
        phone
            .find(Locator::Css("details.staff-book-box summary"))
            .await?
            .click()
            .await?;
        phone
            .execute(
                "const f = document.getElementById('staff-book');
                 f.querySelector('select[name=slot_id]').value = arguments[0];
                 f.querySelector('input[name=name]').value = arguments[1];
                 f.querySelector('input[name=phone]').value = '138 0013 8000';
                 f.querySelector('input[name=places]').value = '2';
                 f.querySelector('input[name=channel][value=PHONE]').checked = true;
                 return true;",
                vec![
                    json!(slots[0].to_string()),
                    json!(if lang == "en" { "Wang Fang" } else { "王芳" }),
                ],
            )
            .await?;
        assert!(fits_the_width(&phone).await?);
        shot(&phone, &format!("staff-book-form-{lang}")).await?;
        submit(&phone, "#staff-book button[type=submit]").await?;
        // Inside the notice: asked to confirm, what was typed kept.
        phone
            .wait()
            .for_element(Locator::Css("#book-refused[data-code=too_late_to_book]"))
            .await?;
        phone
            .find(Locator::Css("#confirm-notice input[name=confirm]"))
            .await?
            .click()
            .await?;
        assert!(fits_the_width(&phone).await?);
        shot(&phone, &format!("staff-book-confirm-{lang}")).await?;
        submit(&phone, "#staff-book button[type=submit]").await?;
        phone
            .wait()
            .for_element(Locator::Css("#day-list .taken[data-channel=PHONE]"))
            .await?;
        assert!(fits_the_width(&phone).await?);
        shot(&phone, &format!("staff-booked-day-{lang}")).await?;
        Ok::<(), CmdError>(())
    }
    .await;
    let _ = phone.close().await;
    result.expect("staff book a caller from the day list on a phone");

    let desk = browser_as(&driver, (1280, 900), lang).await;
    let result = async {
        sign_in(&desk, app, &email, &password).await?;
        desk.goto(&app.url(&format!("/admin/slots/{}", slots[1])))
            .await?;
        desk.find(Locator::Css("#staff-book input[name=name]"))
            .await?
            .send_keys(if lang == "en" { "Li Lei" } else { "李雷" })
            .await?;
        desk.find(Locator::Css("#staff-book input[name=phone]"))
            .await?
            .send_keys("139 0013 8000")
            .await?;
        desk.find(Locator::Css(
            "#staff-book input[name=channel][value=WALK_IN]",
        ))
        .await?
        .click()
        .await?;
        submit(&desk, "#staff-book button[type=submit]").await?;
        desk.find(Locator::Css("#confirm-notice input[name=confirm]"))
            .await?
            .click()
            .await?;
        submit(&desk, "#staff-book button[type=submit]").await?;
        desk.wait()
            .for_element(Locator::Css(".taken[data-channel=WALK_IN]"))
            .await?;
        shot(&desk, &format!("staff-booked-slot-{lang}")).await?;
        Ok::<(), CmdError>(())
    }
    .await;
    let _ = desk.close().await;
    result.expect("staff book a walk-in from the slot page");
    let taken: Vec<(String, i64)> = sqlx::query_as(
        "SELECT channel, places FROM bookings WHERE taken_by IS NOT NULL ORDER BY slot_id",
    )
    .fetch_all(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(
        taken,
        [("PHONE".to_string(), 2), ("WALK_IN".to_string(), 1)]
    );
    app.assert_reconciled().await;
}

both!(
    browser_staff_book_a_caller_on_a_phone_from_the_day_list_and_a_walk_in_at_the_desk_confirming_the_notice,
    |app| {
        run_staff_booking(&app).await;
    }
);
