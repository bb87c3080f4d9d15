//! Reconciliation that checks what changed since the last run (the change events numbered
//! since its watermark), and the full sweep that checks everything on a slower schedule. A broken
//! identity is made by a hand edit, which writes no event: only a full sweep, or a later change of
//! the same SKU or slot, brings it into a changed-only run.

use std::time::Duration;

use sellable::domain::reconcile::{self, FindingKind, Report, RunScope};
use sellable::domain::Actor;

use crate::both;
use crate::helpers::{Api, TestApp};

fn system() -> Actor {
    Actor::system("test")
}

/// Locks a unit outside any order (a hand edit): `locked` no longer equals the open orders.
async fn lock_by_hand(app: &TestApp, sku: i64) {
    sqlx::query("UPDATE stock_balances SET locked = locked + 1 WHERE sku_id = $1")
        .bind(sku)
        .execute(&app.db.pool)
        .await
        .unwrap();
}

/// Counts a place as booked that no booking holds (a hand edit).
async fn book_by_hand(app: &TestApp, slot: i64) {
    sqlx::query("UPDATE slots SET booked = booked + 1 WHERE id = $1")
        .bind(slot)
        .execute(&app.db.pool)
        .await
        .unwrap();
}

fn broken_skus(r: &Report, kind: FindingKind) -> Vec<i64> {
    let mut v: Vec<i64> = r
        .broken
        .iter()
        .filter(|f| f.kind == kind)
        .filter_map(|f| f.sku_id)
        .collect();
    v.sort_unstable();
    v
}

/// Two goods SKUs, TEA and RICE, 10 units each, and a full run that found nothing.
async fn two_stocked(app: &TestApp) -> (Api, i64, i64) {
    let api = app.acme_api().await;
    for code in ["TEA", "RICE"] {
        api.product("goods", code).await;
        api.receive(code, "main", 10).await;
    }
    let first = reconcile::run(&app.db, "job", &system()).await.unwrap();
    assert!(first.broken.is_empty(), "{first:?}");
    assert_eq!(first.run.scope, RunScope::Full);
    (api, app.sku_id("TEA").await, app.sku_id("RICE").await)
}

both!(
    a_changed_only_run_checks_the_skus_changed_since_the_last_run_and_a_full_sweep_the_rest,
    |app| {
        let (api, tea, rice) = two_stocked(&app).await;
        lock_by_hand(&app, tea).await;
        lock_by_hand(&app, rice).await;
        // A receipt of TEA is a change (its event names TEA); RICE has none.
        api.receive("TEA", "main", 1).await;

        let changed = reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        assert_eq!(changed.run.scope, RunScope::Changed);
        assert!(changed.run.seq_after.is_some() && changed.run.seq_upto > changed.run.seq_after);
        assert_eq!(
            broken_skus(&changed, FindingKind::LockedMismatch),
            vec![tea],
            "only the SKU that changed was checked: {changed:?}"
        );
        assert_eq!(changed.run.checked, 1, "one balance looked at");

        // The freeze is itself a change (its event names TEA): the next run looks at TEA again
        // and finds it still open. Then nothing changed since: the run after looks at nothing.
        let again = reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        assert_eq!(again.run.checked, 1, "{again:?}");
        let ids = |r: &Report| {
            let mut v: Vec<i64> = r.broken.iter().map(|f| f.id).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(ids(&again), ids(&changed), "still open, not recorded twice");
        let quiet = reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        assert_eq!(quiet.run.scope, RunScope::Changed);
        assert_eq!(quiet.run.checked, 0);
        assert!(quiet.broken.is_empty(), "{quiet:?}");

        // The full sweep finds the edit no event named.
        let full = reconcile::run(&app.db, "job", &system()).await.unwrap();
        assert_eq!(full.run.scope, RunScope::Full);
        assert_eq!(
            broken_skus(&full, FindingKind::LockedMismatch),
            vec![tea, rice],
            "{full:?}"
        );
    }
);

both!(
    a_changed_only_run_checks_the_slot_a_booking_changed_and_not_the_others,
    |app| {
        let api = app.acme_api().await;
        api.product("service", "CLASS").await;
        let starts = app.now() + chrono::Duration::days(2);
        let busy = api
            .one_off("CLASS", starts, starts + chrono::Duration::hours(1), 5)
            .await;
        let later = starts + chrono::Duration::days(1);
        let quiet = api
            .one_off("CLASS", later, later + chrono::Duration::hours(1), 5)
            .await;
        reconcile::run(&app.db, "job", &system()).await.unwrap();
        book_by_hand(&app, busy).await;
        book_by_hand(&app, quiet).await;
        let (s, b) = api.book(busy, "Wang Fang", "13800138000", None).await;
        assert_eq!(s, 201, "{b}");

        let changed = reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        let slots: Vec<i64> = changed
            .broken
            .iter()
            .filter(|f| f.kind == FindingKind::BookedMismatch)
            .filter_map(|f| f.slot_id)
            .collect();
        assert_eq!(slots, vec![busy], "{changed:?}");

        // The full sweep finds the quiet slot too (and lists the busy one's open finding).
        let full = reconcile::run(&app.db, "job", &system()).await.unwrap();
        let mut slots: Vec<i64> = full
            .broken
            .iter()
            .filter(|f| f.kind == FindingKind::BookedMismatch)
            .filter_map(|f| f.slot_id)
            .collect();
        slots.sort_unstable();
        assert_eq!(slots, vec![busy, quiet], "{full:?}");
    }
);

both!(
    the_job_sweeps_everything_first_then_checks_what_changed_until_the_full_interval_passes,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let hour = Duration::from_secs(3600);

        let first = reconcile::run_scheduled(&app.db, &system(), hour)
            .await
            .unwrap();
        assert_eq!(first.run.scope, RunScope::Full, "no full sweep yet");
        let second = reconcile::run_scheduled(&app.db, &system(), hour)
            .await
            .unwrap();
        assert_eq!(second.run.scope, RunScope::Changed);
        assert_eq!(second.run.seq_after, first.run.seq_upto);
        // A zero interval: every run sweeps everything.
        let zero = reconcile::run_scheduled(&app.db, &system(), Duration::ZERO)
            .await
            .unwrap();
        assert_eq!(zero.run.scope, RunScope::Full);
    }
);

both!(
    a_changed_only_run_with_no_run_before_it_checks_everything,
    |app| {
        let api = app.acme_api().await;
        api.product("goods", "TEA").await;
        api.receive("TEA", "main", 10).await;
        let tea = app.sku_id("TEA").await;
        lock_by_hand(&app, tea).await;
        let r = reconcile::run_changed(&app.db, "cli", &system())
            .await
            .unwrap();
        assert_eq!(r.run.scope, RunScope::Full);
        assert_eq!(broken_skus(&r, FindingKind::LockedMismatch), vec![tea]);
    }
);

both!(
    an_order_released_after_the_watermark_is_checked_by_the_next_changed_only_run,
    |app| {
        let (api, tea, _) = two_stocked(&app).await;
        let (s, b) = api
            .reserve("o-1", serde_json::json!([{"sku": "TEA", "qty": 2}]))
            .await;
        assert_eq!(s, 201, "{b}");
        let after_reserve = reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        assert!(after_reserve.broken.is_empty(), "{after_reserve:?}");
        assert_eq!(after_reserve.run.checked, 1);
        // The release's own change is then broken by hand: the order lets go, the balance not.
        let (s, b) = api
            .post("/api/v1/reservations/o-1/release", serde_json::json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        lock_by_hand(&app, tea).await;
        let r = reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        assert_eq!(
            broken_skus(&r, FindingKind::LockedMismatch),
            vec![tea],
            "{r:?}"
        );
    }
);

both!(
    the_operator_sees_which_runs_checked_everything_and_which_what_changed,
    |app| {
        let (api, _, _) = two_stocked(&app).await;
        api.receive("TEA", "main", 1).await;
        reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        let operator = app.signed_in("operator", None).await;
        let page = crate::helpers::html(
            operator
                .get(app.url("/admin/reconcile"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page.count("tr[data-run] td[data-scope=\"changed\"]"), 1);
        assert_eq!(page.count("tr[data-run] td[data-scope=\"full\"]"), 1);
    }
);

both!(
    a_changed_only_run_checks_the_voucher_of_an_order_that_took_codes,
    |app| {
        let api = app.acme_api().await;
        api.product("voucher", "GIFT").await;
        api.import_codes("GIFT", "g.txt", "G-1\nG-2\nG-3\n", "valid")
            .await;
        let gift = app.sku_id("GIFT").await;
        reconcile::run(&app.db, "job", &system()).await.unwrap();
        // An order takes a code (its events name the order, not the SKU)…
        let (s, b) = api
            .reserve("c-1", serde_json::json!([{"sku": "GIFT", "qty": 1}]))
            .await;
        assert_eq!(s, 201, "{b}");
        // …and a hand edit makes its line ask for two.
        sqlx::query("UPDATE code_reservations SET qty = qty + 1 WHERE sku_id = $1")
            .bind(gift)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let r = reconcile::run_changed(&app.db, "job", &system())
            .await
            .unwrap();
        assert_eq!(r.run.scope, RunScope::Changed);
        assert_eq!(
            broken_skus(&r, FindingKind::CodeLineMismatch),
            vec![gift],
            "{r:?}"
        );
    }
);
