//! The back office. Pages for every role; the handlers check what each role may change.

pub mod catalog;
pub mod dashboard;
pub mod goods;
pub mod orders;
pub mod reconcile;
pub mod sellable;
pub mod services;
pub mod settings;
pub mod vouchers;

use axum::routing::{get, post};
use axum::Router;

use crate::web::AppState;
use services::slots::{bookings, metrics, slot};
use services::{closures, counter, places, schedule, slots};
use settings::{apikeys, audit, people, stores, webhooks};
use vouchers::batch as code_batch;

/// The back office's routes whose every change writes a change event naming each SKU it touched
/// (the same domain calls as the API's evented routes: stock moves and sheets, orders released
/// or taken again when an exception is settled,
/// bookings and their marks, slots, closures, schedules and their dates, staff renamed, SKUs
/// made, code batches made, codes moved and redeemed): they leave this instance's kept catalogs
/// usable, which catch up from the events (`middleware::Evented`). A GET among them changes
/// nothing and is never counted anyway. Reconciliation's routes are left counted: a run or a
/// correction may repair rows without an event.
fn evented(m: axum::routing::MethodRouter<AppState>) -> axum::routing::MethodRouter<AppState> {
    m.layer(axum::middleware::map_response(
        crate::web::edge::middleware::Evented::layer,
    ))
}

/// The back office's routes that change nothing a verdict reads (people and their invitations,
/// API keys, webhooks, looking codes up, revealing or downloading them, staff added, warehouses,
/// stores and their pages, a stock sheet read before it is applied, the calls to make): like
/// [`evented`] ones, they leave the kept catalogs usable.
fn unread(m: axum::routing::MethodRouter<AppState>) -> axum::routing::MethodRouter<AppState> {
    evented(m)
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(dashboard::show))
        .route("/sellable", get(sellable::index))
        .route("/back-to-sellable", get(sellable::back))
        .route(
            "/counter",
            evented(get(counter::show).post(counter::submit)),
        )
        .route("/orders", get(orders::list))
        .route("/orders/{id}", get(orders::show))
        .route(
            "/orders/{id}/release",
            evented(get(orders::confirm_release).post(orders::release)),
        )
        .route(
            "/orders/{id}/exceptions/{exception}/resolve",
            evented(post(orders::resolve)),
        )
        .route(
            "/products",
            evented(get(catalog::list).post(catalog::create)),
        )
        .route("/products/new", get(catalog::new_form))
        .route("/products.csv", get(catalog::csv))
        .route("/products/{id}", get(catalog::show).post(catalog::update))
        .route("/products/{id}/status", post(catalog::set_status))
        .route("/products/{id}/skus", evented(post(catalog::add_sku)))
        .route("/skus/{id}/edit", get(catalog::edit_sku_form))
        .route("/skus/{id}", post(catalog::update_sku))
        .route("/skus/{id}/stock", get(goods::show))
        .route("/skus/{id}/stock/adjustments", evented(post(goods::adjust)))
        .route("/skus/{id}/ledger.csv", get(goods::ledger_csv))
        .route("/places", get(places::index))
        .route("/places/stores", unread(post(places::add_store)))
        .route("/places/warehouses", unread(post(places::add_warehouse)))
        .route(
            "/places/warehouses/{id}",
            unread(post(places::update_warehouse)),
        )
        .route("/people", get(people::index))
        .route("/people/invite", unread(post(people::invite)))
        .route(
            "/people/invitations/{id}/revoke",
            unread(post(people::revoke)),
        )
        .route(
            "/people/{id}/reset",
            unread(get(people::confirm_reset).post(people::reset)),
        )
        .route(
            "/people/{id}/deactivate",
            unread(get(people::confirm_deactivate).post(people::deactivate)),
        )
        .route("/people/{id}/reactivate", unread(post(people::reactivate)))
        .route("/stock", get(goods::report::show))
        .route("/stock/report.csv", get(goods::report::csv))
        .route(
            "/stock/import",
            unread(get(goods::import::form).post(goods::import::upload)).layer(
                axum::extract::DefaultBodyLimit::max(
                    crate::domain::stock::import::MAX_BYTES + 64 * 1024,
                ),
            ),
        )
        .route("/stock/import/template.csv", get(goods::import::template))
        .route("/stock/imports/{id}", get(goods::import::show))
        .route(
            "/stock/imports/{id}/apply",
            evented(post(goods::import::apply)),
        )
        .route("/slots", get(slots::week))
        .route("/slots/metrics", get(metrics::metrics))
        .route("/slots/{id}", get(slot::show))
        .route("/slots/{id}/capacity", evented(post(slot::set_capacity)))
        .route("/slots/{id}/close", evented(post(slot::close)))
        .route("/slots/{id}/open", evented(post(slot::open)))
        .route("/bookings", get(bookings::day))
        .route("/bookings/list", get(slots::booking_list::list))
        .route("/bookings/list.csv", get(slots::booking_list::csv))
        .route(
            "/bookings/new",
            evented(get(slots::book::form).post(slots::book::create)),
        )
        .route("/bookings/new/wait", evented(post(slots::book::wait)))
        .route(
            "/bookings/{reference}/cancel",
            evented(get(bookings::confirm_cancel).post(bookings::cancel)),
        )
        .route(
            "/bookings/{reference}/move",
            evented(get(bookings::confirm_move).post(bookings::move_booking)),
        )
        .route(
            "/bookings/{reference}/attended",
            evented(post(bookings::attended)),
        )
        .route(
            "/bookings/{reference}/no-show",
            evented(post(bookings::no_show)),
        )
        .route("/to-call", get(slots::to_call::list))
        .route("/to-call/{reference}", unread(post(slots::to_call::mark)))
        .route(
            "/closures",
            evented(get(closures::list).post(closures::create)),
        )
        .route("/closures/{id}", get(closures::show))
        .route(
            "/closures/{id}/cancel-bookings",
            evented(get(closures::confirm_cancel_bookings).post(closures::cancel_bookings)),
        )
        .route(
            "/closures/{id}/reopen",
            evented(get(closures::confirm_reopen).post(closures::reopen)),
        )
        .route("/schedules", get(schedule::list::index))
        .route(
            "/services/{id}/schedule",
            evented(get(schedule::show).post(schedule::save)),
        )
        .route(
            "/services/{id}/schedule/overrides",
            evented(get(schedule::dated::back_to_schedule).post(schedule::dated::add_override)),
        )
        .route(
            "/services/{id}/schedule/overrides/remove",
            evented(get(schedule::dated::back_to_schedule).post(schedule::dated::remove_override)),
        )
        .route(
            "/services/{id}/slots",
            evented(get(schedule::dated::back_to_schedule).post(schedule::dated::add_slot)),
        )
        .route(
            "/staff",
            unread(get(schedule::staff).post(schedule::add_staff)),
        )
        .route("/staff/{id}", evented(post(schedule::change_member)))
        .route("/codes", get(vouchers::index))
        .route(
            "/codes/upload",
            evented(post(vouchers::upload)).layer(axum::extract::DefaultBodyLimit::max(
                crate::domain::codes::import::MAX_BYTES as usize + 1024 * 1024,
            )),
        )
        .route("/codes/generate", evented(post(vouchers::generate)))
        .route(
            "/codes/lookup",
            unread(get(vouchers::lookup_form).post(vouchers::lookup)),
        )
        .route("/codes/batches/{id}", get(code_batch::show))
        .route(
            "/codes/batches/{id}/search",
            unread(post(code_batch::search)),
        )
        .route(
            "/codes/batches/{id}/errors.csv",
            get(code_batch::errors_csv),
        )
        .route(
            "/codes/batches/{id}/lock",
            evented(post(code_batch::lock_batch)),
        )
        .route(
            "/codes/batches/{id}/unlock",
            evented(post(code_batch::unlock_batch)),
        )
        .route(
            "/codes/batches/{id}/invalidate",
            evented(get(code_batch::confirm_invalidate_batch).post(code_batch::invalidate_batch)),
        )
        .route(
            "/codes/batches/{id}/download",
            unread(get(code_batch::download_form).post(code_batch::download)),
        )
        .route(
            "/codes/{id}",
            evented(get(vouchers::one::show).post(vouchers::one::change)),
        )
        .route("/codes/{id}/lock", evented(post(code_batch::lock_code)))
        .route("/codes/{id}/unlock", evented(post(code_batch::unlock_code)))
        .route(
            "/codes/{id}/invalidate",
            evented(get(code_batch::confirm_invalidate_code).post(code_batch::invalidate_code)),
        )
        .route("/codes/{id}/reveal", unread(post(code_batch::reveal)))
        .route("/reconcile", get(reconcile::index))
        .route("/reconcile/run", post(reconcile::run))
        .route("/reconcile/findings/{id}", get(reconcile::show))
        .route("/reconcile/findings/{id}/correct", post(reconcile::correct))
        .route(
            "/reconcile/findings/{id}/correct-slot",
            post(reconcile::correct_slot),
        )
        .route(
            "/reconcile/findings/{id}/unfreeze",
            get(reconcile::confirm_unfreeze).post(reconcile::unfreeze),
        )
        .route(
            "/api-keys",
            unread(get(apikeys::list).post(apikeys::create)),
        )
        .route("/api-keys/{id}/rate", unread(post(apikeys::set_rate)))
        .route(
            "/api-keys/{id}/revoke",
            unread(get(apikeys::confirm_revoke).post(apikeys::revoke)),
        )
        .route(
            "/webhooks",
            unread(get(webhooks::list).post(webhooks::create)),
        )
        .route("/webhooks/{id}", get(webhooks::show))
        .route("/webhooks/{id}/pause", unread(post(webhooks::pause)))
        .route("/webhooks/{id}/resume", unread(post(webhooks::resume)))
        .route(
            "/webhooks/{id}/rotate",
            unread(get(webhooks::back_to_webhook).post(webhooks::rotate)),
        )
        .route(
            "/webhooks/{id}/delete",
            unread(get(webhooks::confirm_delete).post(webhooks::delete)),
        )
        .route(
            "/webhooks/{id}/deliveries/{delivery}/redeliver",
            unread(post(webhooks::redeliver)),
        )
        .route(
            "/stores/{id}",
            unread(get(stores::show).post(stores::update)),
        )
        .route("/audit", get(audit::list))
        .route("/audit.csv", get(audit::csv))
}
