//! Every path a page links to, in one place: templates write `{{ paths::sku_stock(s.id) }}`
//! rather than the path, and handlers redirect through the same functions. A route that moves
//! changes here, and `every_path` lets the suite check each one against the router (a path
//! here that no route answers fails `web_links::every_link_the_pages_write_is_a_route`).
//!
//! Query strings and fragments stay where they are written: they belong to the page's state.

use std::fmt::Display;

pub fn account() -> String {
    "/account".to_string()
}

pub fn account_language() -> String {
    "/account/language".to_string()
}

pub fn account_name() -> String {
    "/account/name".to_string()
}

pub fn account_password() -> String {
    "/account/password".to_string()
}

pub fn dashboard() -> String {
    "/admin".to_string()
}

pub fn api_keys() -> String {
    "/admin/api-keys".to_string()
}

pub fn api_key_rate(api_key: impl Display) -> String {
    format!("/admin/api-keys/{api_key}/rate")
}

pub fn api_key_revoke(api_key: impl Display) -> String {
    format!("/admin/api-keys/{api_key}/revoke")
}

pub fn audit() -> String {
    "/admin/audit".to_string()
}

pub fn audit_csv() -> String {
    "/admin/audit.csv".to_string()
}

pub fn back_to_sellable() -> String {
    "/admin/back-to-sellable".to_string()
}

pub fn bookings() -> String {
    "/admin/bookings".to_string()
}

pub fn bookings_list() -> String {
    "/admin/bookings/list".to_string()
}

pub fn bookings_list_csv() -> String {
    "/admin/bookings/list.csv".to_string()
}

pub fn booking_attended(booking: impl Display) -> String {
    format!("/admin/bookings/{booking}/attended")
}

pub fn booking_cancel(booking: impl Display) -> String {
    format!("/admin/bookings/{booking}/cancel")
}

/// Staff book for a caller or a walk-in (the form of the slot page, the day list and the week).
pub fn booking_new() -> String {
    "/admin/bookings/new".to_string()
}

/// A full slot: staff put the customer on its waiting list instead.
pub fn booking_new_wait() -> String {
    "/admin/bookings/new/wait".to_string()
}

pub fn booking_move(booking: impl Display) -> String {
    format!("/admin/bookings/{booking}/move")
}

pub fn booking_no_show(booking: impl Display) -> String {
    format!("/admin/bookings/{booking}/no-show")
}

pub fn closures() -> String {
    "/admin/closures".to_string()
}

pub fn closure(closure: impl Display) -> String {
    format!("/admin/closures/{closure}")
}

pub fn closure_cancel_bookings(closure: impl Display) -> String {
    format!("/admin/closures/{closure}/cancel-bookings")
}

pub fn closure_reopen(closure: impl Display) -> String {
    format!("/admin/closures/{closure}/reopen")
}

pub fn codes() -> String {
    "/admin/codes".to_string()
}

pub fn code_batch(batch: impl Display) -> String {
    format!("/admin/codes/batches/{batch}")
}

pub fn code_batch_download(batch: impl Display) -> String {
    format!("/admin/codes/batches/{batch}/download")
}

pub fn code_batch_errors_csv(batch: impl Display) -> String {
    format!("/admin/codes/batches/{batch}/errors.csv")
}

pub fn code_batch_invalidate(batch: impl Display) -> String {
    format!("/admin/codes/batches/{batch}/invalidate")
}

pub fn code_batch_lock(batch: impl Display) -> String {
    format!("/admin/codes/batches/{batch}/lock")
}

pub fn code_batch_search(batch: impl Display) -> String {
    format!("/admin/codes/batches/{batch}/search")
}

pub fn code_batch_unlock(batch: impl Display) -> String {
    format!("/admin/codes/batches/{batch}/unlock")
}

pub fn codes_generate() -> String {
    "/admin/codes/generate".to_string()
}

pub fn codes_lookup() -> String {
    "/admin/codes/lookup".to_string()
}

pub fn codes_upload() -> String {
    "/admin/codes/upload".to_string()
}

pub fn code(code: impl Display) -> String {
    format!("/admin/codes/{code}")
}

pub fn code_invalidate(code: impl Display) -> String {
    format!("/admin/codes/{code}/invalidate")
}

pub fn code_lock(code: impl Display) -> String {
    format!("/admin/codes/{code}/lock")
}

pub fn code_reveal(code: impl Display) -> String {
    format!("/admin/codes/{code}/reveal")
}

pub fn code_unlock(code: impl Display) -> String {
    format!("/admin/codes/{code}/unlock")
}

pub fn counter() -> String {
    "/admin/counter".to_string()
}

pub fn orders() -> String {
    "/admin/orders".to_string()
}

pub fn order(order: impl Display) -> String {
    format!("/admin/orders/{order}")
}

pub fn order_exception_resolve(order: impl Display, exception: impl Display) -> String {
    format!("/admin/orders/{order}/exceptions/{exception}/resolve")
}

pub fn order_release(order: impl Display) -> String {
    format!("/admin/orders/{order}/release")
}

pub fn people() -> String {
    "/admin/people".to_string()
}

pub fn people_invitation_revoke(invitation: impl Display) -> String {
    format!("/admin/people/invitations/{invitation}/revoke")
}

pub fn people_invite() -> String {
    "/admin/people/invite".to_string()
}

pub fn person_deactivate(person: impl Display) -> String {
    format!("/admin/people/{person}/deactivate")
}

pub fn person_reactivate(person: impl Display) -> String {
    format!("/admin/people/{person}/reactivate")
}

pub fn person_reset(person: impl Display) -> String {
    format!("/admin/people/{person}/reset")
}

pub fn places() -> String {
    "/admin/places".to_string()
}

pub fn places_stores() -> String {
    "/admin/places/stores".to_string()
}

pub fn places_warehouses() -> String {
    "/admin/places/warehouses".to_string()
}

pub fn places_warehouse(warehouse: impl Display) -> String {
    format!("/admin/places/warehouses/{warehouse}")
}

pub fn products() -> String {
    "/admin/products".to_string()
}

pub fn products_csv() -> String {
    "/admin/products.csv".to_string()
}

pub fn products_new() -> String {
    "/admin/products/new".to_string()
}

pub fn product(product: impl Display) -> String {
    format!("/admin/products/{product}")
}

pub fn product_skus(product: impl Display) -> String {
    format!("/admin/products/{product}/skus")
}

pub fn product_status(product: impl Display) -> String {
    format!("/admin/products/{product}/status")
}

pub fn reconcile() -> String {
    "/admin/reconcile".to_string()
}

pub fn reconcile_finding(finding: impl Display) -> String {
    format!("/admin/reconcile/findings/{finding}")
}

pub fn reconcile_finding_correct(finding: impl Display) -> String {
    format!("/admin/reconcile/findings/{finding}/correct")
}

pub fn reconcile_finding_correct_slot(finding: impl Display) -> String {
    format!("/admin/reconcile/findings/{finding}/correct-slot")
}

pub fn reconcile_finding_unfreeze(finding: impl Display) -> String {
    format!("/admin/reconcile/findings/{finding}/unfreeze")
}

pub fn reconcile_run() -> String {
    "/admin/reconcile/run".to_string()
}

pub fn schedules() -> String {
    "/admin/schedules".to_string()
}

pub fn sellable() -> String {
    "/admin/sellable".to_string()
}

pub fn service_schedule(service: impl Display) -> String {
    format!("/admin/services/{service}/schedule")
}

pub fn service_schedule_overrides(service: impl Display) -> String {
    format!("/admin/services/{service}/schedule/overrides")
}

pub fn service_schedule_overrides_remove(service: impl Display) -> String {
    format!("/admin/services/{service}/schedule/overrides/remove")
}

pub fn service_slots(service: impl Display) -> String {
    format!("/admin/services/{service}/slots")
}

pub fn sku(sku: impl Display) -> String {
    format!("/admin/skus/{sku}")
}

pub fn sku_edit(sku: impl Display) -> String {
    format!("/admin/skus/{sku}/edit")
}

pub fn sku_ledger_csv(sku: impl Display) -> String {
    format!("/admin/skus/{sku}/ledger.csv")
}

pub fn sku_stock(sku: impl Display) -> String {
    format!("/admin/skus/{sku}/stock")
}

pub fn sku_stock_adjustments(sku: impl Display) -> String {
    format!("/admin/skus/{sku}/stock/adjustments")
}

pub fn slots() -> String {
    "/admin/slots".to_string()
}

pub fn slots_metrics() -> String {
    "/admin/slots/metrics".to_string()
}

pub fn slot(slot: impl Display) -> String {
    format!("/admin/slots/{slot}")
}

pub fn slot_capacity(slot: impl Display) -> String {
    format!("/admin/slots/{slot}/capacity")
}

pub fn slot_close(slot: impl Display) -> String {
    format!("/admin/slots/{slot}/close")
}

pub fn slot_open(slot: impl Display) -> String {
    format!("/admin/slots/{slot}/open")
}

pub fn staff() -> String {
    "/admin/staff".to_string()
}

pub fn staff_member(staff: impl Display) -> String {
    format!("/admin/staff/{staff}")
}

pub fn stock() -> String {
    "/admin/stock".to_string()
}

pub fn stock_import() -> String {
    "/admin/stock/import".to_string()
}

pub fn stock_import_template_csv() -> String {
    "/admin/stock/import/template.csv".to_string()
}

pub fn stock_import_sheet(import: impl Display) -> String {
    format!("/admin/stock/imports/{import}")
}

pub fn stock_import_sheet_apply(import: impl Display) -> String {
    format!("/admin/stock/imports/{import}/apply")
}

pub fn store(store: impl Display) -> String {
    format!("/admin/stores/{store}")
}

pub fn to_call() -> String {
    "/admin/to-call".to_string()
}

pub fn to_call_booking(booking: impl Display) -> String {
    format!("/admin/to-call/{booking}")
}

pub fn webhooks() -> String {
    "/admin/webhooks".to_string()
}

pub fn webhook(webhook: impl Display) -> String {
    format!("/admin/webhooks/{webhook}")
}

pub fn webhook_delete(webhook: impl Display) -> String {
    format!("/admin/webhooks/{webhook}/delete")
}

pub fn webhook_delivery_redeliver(webhook: impl Display, delivery: impl Display) -> String {
    format!("/admin/webhooks/{webhook}/deliveries/{delivery}/redeliver")
}

pub fn webhook_pause(webhook: impl Display) -> String {
    format!("/admin/webhooks/{webhook}/pause")
}

pub fn webhook_resume(webhook: impl Display) -> String {
    format!("/admin/webhooks/{webhook}/resume")
}

pub fn webhook_rotate(webhook: impl Display) -> String {
    format!("/admin/webhooks/{webhook}/rotate")
}

pub fn login() -> String {
    "/login".to_string()
}

pub fn logout() -> String {
    "/logout".to_string()
}

/// The customer-facing pages: the booking page of a store, a booking, a place on a waiting list.
pub mod public {
    use std::fmt::Display;

    pub fn book(store: impl Display) -> String {
        format!("/book/{store}")
    }

    pub fn book_slot(store: impl Display, slot: impl Display) -> String {
        format!("/book/{store}/slots/{slot}")
    }

    pub fn book_slot_waitlist(store: impl Display, slot: impl Display) -> String {
        format!("/book/{store}/slots/{slot}/waitlist")
    }

    pub fn booking(booking: impl Display) -> String {
        format!("/booking/{booking}")
    }

    pub fn booking_calendar_ics(booking: impl Display) -> String {
        format!("/booking/{booking}/calendar.ics")
    }

    pub fn booking_cancel(booking: impl Display) -> String {
        format!("/booking/{booking}/cancel")
    }

    pub fn booking_reschedule(booking: impl Display) -> String {
        format!("/booking/{booking}/reschedule")
    }

    pub fn waitlist(waitlist: impl Display) -> String {
        format!("/waitlist/{waitlist}")
    }

    pub fn waitlist_accept(waitlist: impl Display) -> String {
        format!("/waitlist/{waitlist}/accept")
    }

    pub fn waitlist_decline(waitlist: impl Display) -> String {
        format!("/waitlist/{waitlist}/decline")
    }

    pub fn waitlist_leave(waitlist: impl Display) -> String {
        format!("/waitlist/{waitlist}/leave")
    }
}

/// Every path above with `sample` in each parameter, for the test that finds each one a route.
pub fn every_path(sample: &str) -> Vec<String> {
    vec![
        account(),
        account_language(),
        account_name(),
        account_password(),
        dashboard(),
        api_keys(),
        api_key_rate(sample),
        api_key_revoke(sample),
        audit(),
        audit_csv(),
        back_to_sellable(),
        bookings(),
        bookings_list(),
        bookings_list_csv(),
        booking_attended(sample),
        booking_cancel(sample),
        booking_move(sample),
        booking_new(),
        booking_new_wait(),
        booking_no_show(sample),
        closures(),
        closure(sample),
        closure_cancel_bookings(sample),
        closure_reopen(sample),
        codes(),
        code_batch(sample),
        code_batch_download(sample),
        code_batch_errors_csv(sample),
        code_batch_invalidate(sample),
        code_batch_lock(sample),
        code_batch_search(sample),
        code_batch_unlock(sample),
        codes_generate(),
        codes_lookup(),
        codes_upload(),
        code(sample),
        code_invalidate(sample),
        code_lock(sample),
        code_reveal(sample),
        code_unlock(sample),
        counter(),
        orders(),
        order(sample),
        order_exception_resolve(sample, sample),
        order_release(sample),
        people(),
        people_invitation_revoke(sample),
        people_invite(),
        person_deactivate(sample),
        person_reactivate(sample),
        person_reset(sample),
        places(),
        places_stores(),
        places_warehouses(),
        places_warehouse(sample),
        products(),
        products_csv(),
        products_new(),
        product(sample),
        product_skus(sample),
        product_status(sample),
        reconcile(),
        reconcile_finding(sample),
        reconcile_finding_correct(sample),
        reconcile_finding_correct_slot(sample),
        reconcile_finding_unfreeze(sample),
        reconcile_run(),
        schedules(),
        sellable(),
        service_schedule(sample),
        service_schedule_overrides(sample),
        service_schedule_overrides_remove(sample),
        service_slots(sample),
        sku(sample),
        sku_edit(sample),
        sku_ledger_csv(sample),
        sku_stock(sample),
        sku_stock_adjustments(sample),
        slots(),
        slots_metrics(),
        slot(sample),
        slot_capacity(sample),
        slot_close(sample),
        slot_open(sample),
        staff(),
        staff_member(sample),
        stock(),
        stock_import(),
        stock_import_template_csv(),
        stock_import_sheet(sample),
        stock_import_sheet_apply(sample),
        store(sample),
        to_call(),
        to_call_booking(sample),
        webhooks(),
        webhook(sample),
        webhook_delete(sample),
        webhook_delivery_redeliver(sample, sample),
        webhook_pause(sample),
        webhook_resume(sample),
        webhook_rotate(sample),
        public::book(sample),
        public::book_slot(sample, sample),
        public::book_slot_waitlist(sample, sample),
        public::booking(sample),
        public::booking_calendar_ics(sample),
        public::booking_cancel(sample),
        public::booking_reschedule(sample),
        login(),
        logout(),
        public::waitlist(sample),
        public::waitlist_accept(sample),
        public::waitlist_decline(sample),
        public::waitlist_leave(sample),
    ]
}
