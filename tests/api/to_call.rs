//! The To call list (issue 19): every active booking in a closed slot stays listed, on the
//! dashboard, the Schedule tab, the week grid and the day list, until it is moved, cancelled or
//! its slot reopens; a call is marked with who, when and a note.

use serde_json::json;

use crate::both;
use crate::helpers::{at, html, location, TestApp};
use crate::on_each_day;

async fn mark(
    app: &TestApp,
    client: &reqwest::Client,
    reference: &str,
    contacted: &str,
    note: &str,
) -> reqwest::Response {
    client
        .post(app.url(&format!("/admin/to-call/{reference}")))
        .form(&[
            ("store", "main-store"),
            ("contacted", contacted),
            ("note", note),
        ])
        .send()
        .await
        .unwrap()
}

async fn bookings_in_closed_slots_stay_on_the_to_call_list_until_moved_or_cancelled_and_calls_are_marked_with_a_note(
    app: TestApp,
) {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let day = app.next_monday();
    let closed = api.one_off("CUT", at(day, 10), at(day, 11), 2).await;
    let open = api.one_off("CUT", at(day, 11), at(day, 12), 2).await;
    let mut refs = Vec::new();
    for (name, phone) in [("Ann Lee", "13800138000"), ("Bo Chen", "13800138001")] {
        let (s, b) = api.book(closed, name, phone, None).await;
        assert_eq!(s, 201, "{b}");
        refs.push(b["reference"].as_str().unwrap().to_string());
    }
    let (s, b) = api
        .post(
            &format!("/api/v1/slots/{closed}/close"),
            json!({"reason": "Power cut"}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (ann, bo) = (refs[0].clone(), refs[1].clone());

    let client = app.signed_in("store_staff", Some("acme")).await;
    let list = app.page(&client, "/admin/to-call").await;
    assert_eq!(
        list.attrs("li.to-call-item", "data-ref"),
        vec![ann.clone(), bo.clone()]
    );
    assert_eq!(
        list.attrs("li.to-call-item", "data-contacted"),
        vec!["false", "false"]
    );
    assert_eq!(
        list.attr("#to-call-tab .count-badge", "data-n").as_deref(),
        Some("2")
    );
    let dash = app.page(&client, "/admin").await;
    assert_eq!(
        dash.attr("[data-code=to_call]", "data-n").as_deref(),
        Some("2")
    );
    let week = app
        .page(
            &client,
            &format!("/admin/slots?week={}", day.format("%Y-%m-%d")),
        )
        .await;
    assert_eq!(
        week.attr(".slot.to-call", "data-slot"),
        Some(closed.to_string())
    );
    assert_eq!(
        week.count(&format!(".slot.to-call[data-slot=\"{open}\"]")),
        0
    );
    assert_eq!(
        week.attr(".slot.to-call .to-call-mark", "data-n")
            .as_deref(),
        Some("2"),
        "bookings to call, not places"
    );
    let day_list = app
        .page(
            &client,
            &format!("/admin/bookings?date={}", day.format("%Y-%m-%d")),
        )
        .await;
    assert_eq!(
        day_list.attrs("tr.to-call", "data-ref"),
        vec![ann.clone(), bo.clone()]
    );

    // Ann is reached: off the list to call, on the full list with who and the note.
    let r = mark(&app, &client, &ann, "1", "Moved to Thursday, she agreed").await;
    assert_eq!(r.status(), 303);
    let list = app.page(&client, &location(&r)).await;
    assert_eq!(list.attrs("li.to-call-item", "data-ref"), vec![bo.clone()]);
    assert_eq!(
        list.attr("#to-call-counts", "data-waiting").as_deref(),
        Some("1")
    );
    let all = app.page(&client, "/admin/to-call?show=all").await;
    assert_eq!(
        all.attrs("li.to-call-item", "data-contacted"),
        vec!["true", "false"]
    );
    assert_eq!(
        all.attr(&format!("#call-{ann} input[name=note]"), "value")
            .as_deref(),
        Some("Moved to Thursday, she agreed")
    );
    let (by, note): (Option<String>, Option<String>) =
        sqlx::query_as("SELECT contacted_by, contact_note FROM bookings WHERE reference = $1")
            .bind(&ann)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert!(
        by.is_some_and(|b| b.contains("store_staff")),
        "who called is kept"
    );
    assert_eq!(note.as_deref(), Some("Moved to Thursday, she agreed"));

    // Reached customers leave the marks too: the grid counts one, the day list marks Bo only.
    let week = app
        .page(
            &client,
            &format!("/admin/slots?week={}", day.format("%Y-%m-%d")),
        )
        .await;
    assert_eq!(
        week.attr(".slot.to-call .to-call-mark", "data-n")
            .as_deref(),
        Some("1")
    );
    let day_list = app
        .page(
            &client,
            &format!("/admin/bookings?date={}", day.format("%Y-%m-%d")),
        )
        .await;
    assert_eq!(day_list.attrs("tr.to-call", "data-ref"), vec![bo.clone()]);
    // A note alone ("no answer") keeps Bo on the list to call.
    let r = mark(&app, &client, &bo, "note", "No answer, try after 3 pm").await;
    assert_eq!(r.status(), 303);
    let list = app.page(&client, "/admin/to-call").await;
    assert_eq!(list.attrs("li.to-call-item", "data-ref"), vec![bo.clone()]);
    assert_eq!(
        list.attr(&format!("#call-{bo} input[name=note]"), "value")
            .as_deref(),
        Some("No answer, try after 3 pm")
    );

    // A note too long is refused beside the note, nothing changed.
    let r = mark(&app, &client, &bo, "1", &"x".repeat(501)).await;
    assert_eq!(r.status(), 422);
    let page = html(r).await;
    assert_eq!(
        page.count(&format!("#call-{bo} .field-error[data-field=note]")),
        1
    );
    let contacted: Option<i64> =
        sqlx::query_scalar("SELECT contacted_at FROM bookings WHERE reference = $1")
            .bind(&bo)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(contacted, None);

    // Undo a mistaken mark: back on the list to call.
    let r = mark(&app, &client, &ann, "0", "No answer").await;
    assert_eq!(r.status(), 303);
    let list = app.page(&client, "/admin/to-call").await;
    assert_eq!(list.count("li.to-call-item"), 2);

    // Bo moves to the open slot; Ann is cancelled from the list: it empties.
    let (s, b) = api
        .post(
            &format!("/api/v1/bookings/{bo}/move"),
            json!({"slot_id": open}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let list = app.page(&client, "/admin/to-call").await;
    assert_eq!(list.attrs("li.to-call-item", "data-ref"), vec![ann.clone()]);
    let cancel = list.attr(&format!("#call-{ann} a.cancel"), "href").unwrap();
    let confirm = app.page(&client, &cancel).await;
    assert_eq!(
        confirm.attr("input[name=from]", "value").as_deref(),
        Some("to-call")
    );
    let r = client
        .post(app.url(&format!("/admin/bookings/{ann}/cancel")))
        .form(&[("from", "to-call"), ("reason", "Closed for a power cut")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    assert!(
        location(&r).starts_with("/admin/to-call"),
        "{}",
        location(&r)
    );
    let list = app.page(&client, &location(&r)).await;
    assert_eq!(list.count("li.to-call-item"), 0);
    assert_eq!(list.count("#nobody-to-call"), 1);
    assert_eq!(list.count("#to-call-tab .count-badge"), 0);
    let dash = app.page(&client, "/admin").await;
    assert_eq!(dash.count("[data-code=to_call]"), 0);
    app.assert_reconciled().await;
}
on_each_day!(bookings_in_closed_slots_stay_on_the_to_call_list_until_moved_or_cancelled_and_calls_are_marked_with_a_note);

both!(another_merchant_cannot_mark_a_call, |app| {
    let api = app.acme_api().await;
    api.product("service", "CUT").await;
    let day = app.next_monday();
    let slot = api.one_off("CUT", at(day, 10), at(day, 11), 2).await;
    let (s, b) = api.book(slot, "Ann Lee", "13800138000", None).await;
    assert_eq!(s, 201, "{b}");
    let reference = b["reference"].as_str().unwrap().to_string();
    let (s, _) = api
        .post(
            &format!("/api/v1/slots/{slot}/close"),
            json!({"reason": "Leave"}),
        )
        .await;
    assert_eq!(s, 200);
    app.merchant("globex").await;
    let other = app.signed_in("merchant_admin", Some("globex")).await;
    let r = mark(&app, &other, &reference, "1", "").await;
    assert_eq!(r.status(), 404);
    let contacted: Option<i64> =
        sqlx::query_scalar("SELECT contacted_at FROM bookings WHERE reference = $1")
            .bind(&reference)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    assert_eq!(contacted, None);
});

both!(
    a_booking_in_a_closed_slot_is_marked_in_the_bookings_list_and_its_leave_reads_as_whole_days_and_leads_to_the_to_call_list,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CUT").await;
        let (s, b) = api.post("/api/v1/staff", json!({"name": "Mia"})).await;
        assert_eq!(s, 201, "{b}");
        let day = app.next_monday();
        let start = at(day, 10);
        let (s, b) = api
            .post(
                "/api/v1/slots",
                json!({"sku": "CUT", "staff": "Mia", "starts_at": start.to_rfc3339(),
                       "ends_at": at(day, 11).to_rfc3339(), "capacity": 2}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = api.book(b["id"].as_i64().unwrap(), "Ann Lee", "13800138000", None).await;
        assert_eq!(s, 201, "{b}");
        let ann = b["reference"].as_str().unwrap().to_string();
        let staff = app.signed_in("store_staff", Some("acme")).await;
        let list = app.page(&staff, "/admin/bookings/list").await;
        assert_eq!(list.count(&format!("tr[data-ref='{ann}'] [data-code=slot_closed]")), 0);
        // Mia's leave, entered as one whole day.
        let mia: i64 = sqlx::query_scalar("SELECT id FROM staff WHERE name = 'Mia'")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        let d = day.format("%Y-%m-%d").to_string();
        let r = staff
            .post(app.url("/admin/closures"))
            .form(&[
                ("store", "main-store"),
                ("staff", &mia.to_string()),
                ("span", "days"),
                ("from_date", &d),
                ("until_date", &d),
                ("reason", "Leave"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303, "{}", html(r).await.text("body"));
        let closure = location(&r);
        let page = app.page(&staff, &closure).await;
        // Its page sits under the Schedule tabs, says the day without midnights, and leads to
        // the To call list.
        assert_eq!(page.count("nav.subnav #to-call-tab"), 1);
        assert_eq!(page.count("#to-call-link[href^='/admin/to-call']"), 1);
        assert_eq!(page.count("table.contacts.cards-on-phone"), 1);
        let facts = page.text("dl.facts");
        assert!(!facts.contains("00:00"), "{facts}");
        // The bookings list marks the booking as one to call.
        let list = app.page(&staff, "/admin/bookings/list").await;
        assert_eq!(list.count(&format!("tr[data-ref='{ann}'] a[data-code=slot_closed][href^='/admin/to-call']")), 1);
        // Cancelling it says the place does not go back on sale.
        let cancel = app
            .page(&staff, &format!("/admin/bookings/{ann}/cancel?from=to-call"))
            .await;
        assert_eq!(cancel.attr("#cancel-explain", "data-slot-closed").as_deref(), Some("true"));
    }
);
