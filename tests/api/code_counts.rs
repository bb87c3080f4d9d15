//! The kept code counts (issue 20): every move of a code keeps its batch's counts exact, racing
//! sales included, reconciliation repairs a count that drifted, and a big batch's page filters
//! by status, finds a code by its text or its order, and pages.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::both;
use crate::helpers::{html, Api, TestApp};
use sellable::domain::codes::counts;

async fn gift(app: &TestApp, n: usize) -> (Api, i64) {
    let api = app.acme_api().await;
    api.product("voucher", "GIFT").await;
    let text: String = (1..=n).map(|i| format!("G-{i:04}\n")).collect();
    let (s, b) = api
        .upload("GIFT", "g.txt", text.into_bytes(), "valid")
        .await;
    assert_eq!(s, 202, "{b}");
    let id = b["batch_id"].as_i64().unwrap();
    for _ in 0..200 {
        let (_, b) = api.get(&format!("/api/v1/code-batches/{id}")).await;
        if b["status"] != "CREATING" {
            assert_eq!(b["imported"].as_i64(), Some(n as i64), "{b}");
            return (api, id);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("batch {id} did not finish");
}

/// The codes counted by status, the slow way.
async fn recount(app: &TestApp, batch: i64) -> BTreeMap<String, i64> {
    let rows: Vec<(String, i64)> =
        sqlx::query_as("SELECT status, COUNT(*) FROM codes WHERE batch_id = $1 GROUP BY status")
            .bind(batch)
            .fetch_all(&app.db.pool)
            .await
            .unwrap();
    rows.into_iter().collect()
}

/// The kept counts as the pages read them (folded or not), without the zeros.
async fn kept(app: &TestApp, batch: i64) -> BTreeMap<String, i64> {
    let merchant = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, "acme")
        .await
        .unwrap();
    counts::of_batch(&app.db, merchant, batch)
        .await
        .unwrap()
        .into_iter()
        .filter(|c| c.n != 0)
        .map(|c| (c.status, c.n))
        .collect()
}

async fn assert_counts_exact(app: &TestApp, batch: i64) {
    assert_eq!(kept(app, batch).await, recount(app, batch).await);
    let drift = counts::drift(&app.db).await.unwrap();
    assert!(drift.is_empty(), "{drift:?}");
}

both!(
    the_kept_code_counts_follow_every_move_of_a_code_and_survive_folding,
    |app| {
        let (api, batch) = gift(&app, 12).await;
        assert_counts_exact(&app, batch).await;
        // Held, paid, released, expired by its order's timeout.
        let (s, b) = api.reserve("o-1", json!([{"sku": "GIFT", "qty": 3}])).await;
        assert_eq!(s, 201, "{b}");
        assert_counts_exact(&app, batch).await;
        let (s, b) = api
            .post("/api/v1/reservations/o-1/confirm", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        let sold = b["items"][0]["codes"][0].as_str().unwrap().to_string();
        let (s, b) = api.reserve("o-2", json!([{"sku": "GIFT", "qty": 2}])).await;
        assert_eq!(s, 201, "{b}");
        let (s, b) = api
            .post("/api/v1/reservations/o-2/release", json!({}))
            .await;
        assert_eq!(s, 200, "{b}");
        assert_counts_exact(&app, batch).await;
        // Redeemed at the counter, then staff moves of the batch.
        let (s, b) = api
            .post(
                "/api/v1/codes/redeem",
                json!({"code": sold, "store": "main-store"}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let r = client
            .post(app.url(&format!("/admin/codes/batches/{batch}/lock")))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success() || r.status().is_redirection());
        assert_counts_exact(&app, batch).await;
        let want: BTreeMap<String, i64> = [("LOCKED", 9), ("REDEEMED", 1), ("SOLD", 2)]
            .into_iter()
            .map(|(s, n)| (s.to_string(), n))
            .collect();
        assert_eq!(recount(&app, batch).await, want);
        // Folding moves the deltas into the counts and changes no total.
        while counts::fold(&app.db, 3).await.unwrap() > 0 {}
        let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM code_count_deltas")
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
        assert_eq!(left, 0);
        assert_counts_exact(&app, batch).await;
        // The SKU's summary reads the same counts.
        let (_, b) = api.get("/api/v1/skus/GIFT/codes/summary").await;
        assert_eq!(
            (b["counts"]["LOCKED"].as_i64(), b["sellable"].as_i64()),
            (Some(9), Some(0)),
            "{b}"
        );
    }
);

both!(
    racing_sales_of_one_batch_while_counts_fold_keep_them_exact,
    |app| {
        let (api, batch) = gift(&app, 30).await;
        let folding = {
            let db = app.db.clone();
            tokio::spawn(async move {
                for _ in 0..40 {
                    let _ = counts::fold(&db, 2).await;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        };
        let sales = (0..40).map(|i| {
            let api = api.clone();
            async move {
                let order = format!("race-{i}");
                let (s, _) = api
                    .reserve(&order, json!([{"sku": "GIFT", "qty": 1}]))
                    .await;
                if s == 201 && i % 2 == 0 {
                    let (s, b) = api
                        .post(&format!("/api/v1/reservations/{order}/confirm"), json!({}))
                        .await;
                    assert_eq!(s, 200, "{b}");
                }
                s
            }
        });
        let answers = futures_util::future::join_all(sales).await;
        folding.await.unwrap();
        let accepted = answers.iter().filter(|s| **s == 201).count();
        assert_eq!(accepted, 30, "every code sold once, no more: {answers:?}");
        assert_counts_exact(&app, batch).await;
        let c = recount(&app, batch).await;
        assert_eq!(c.get("AVAILABLE"), None);
        assert_eq!(
            c.get("SOLD").copied().unwrap_or(0) + c.get("BOOKING").copied().unwrap_or(0),
            30
        );
    }
);

both!(
    reconciliation_recounts_a_drifted_code_count_and_the_next_run_finds_it_right,
    |app| {
        let (api, batch) = gift(&app, 5).await;
        // A count broken behind the triggers' back (a restore, a hand edit), folded or not.
        sqlx::query(
            "INSERT INTO code_count_deltas (batch_id, merchant_id, sku_id, status, n)
             SELECT id, merchant_id, sku_id, 'AVAILABLE', 7 FROM code_batches WHERE id = $1",
        )
        .bind(batch)
        .execute(&app.db.pool)
        .await
        .unwrap();
        while counts::fold(&app.db, 100).await.unwrap() > 0 {}
        let (_, b) = api.get("/api/v1/skus/GIFT/codes/summary").await;
        assert_eq!(
            b["counts"]["AVAILABLE"].as_i64(),
            Some(12),
            "pages read the kept count"
        );
        // Two reconciliations at once (every instance runs one): the difference is added once.
        let actor = sellable::domain::Actor::system("test");
        let (one, other) = tokio::join!(
            sellable::domain::reconcile::run(&app.db, "job", &actor),
            sellable::domain::reconcile::run(&app.db, "job", &actor),
        );
        let (one, other) = (one.unwrap(), other.unwrap());
        let report = if one
            .repaired
            .iter()
            .any(|f| f.kind == sellable::domain::reconcile::FindingKind::CodeCountDrift)
        {
            one
        } else {
            other
        };
        let drift: Vec<_> = report
            .repaired
            .iter()
            .filter(|f| f.kind == sellable::domain::reconcile::FindingKind::CodeCountDrift)
            .collect();
        assert_eq!(drift.len(), 1, "{:?}", report.repaired);
        assert_eq!(drift[0].subject, format!("batch:{batch} status:AVAILABLE"));
        assert!(report.broken.is_empty(), "a count is repaired, not frozen");
        assert_counts_exact(&app, batch).await;
        let (_, b) = api.get("/api/v1/skus/GIFT/codes/summary").await;
        assert_eq!(b["counts"]["AVAILABLE"].as_i64(), Some(5));
        let again = sellable::domain::reconcile::run(&app.db, "job", &actor)
            .await
            .unwrap();
        assert!(
            again
                .repaired
                .iter()
                .all(|f| f.kind != sellable::domain::reconcile::FindingKind::CodeCountDrift),
            "{:?}",
            again.repaired
        );
    }
);

both!(
    a_batch_page_filters_by_status_finds_a_code_by_its_text_or_order_and_pages,
    |app| {
        let (api, batch) = gift(&app, 120).await;
        let (s, b) = api
            .reserve("ord-77", json!([{"sku": "GIFT", "qty": 2}]))
            .await;
        assert_eq!(s, 201, "{b}");
        let client = app.signed_in("merchant_admin", Some("acme")).await;
        let page = |q: &str| {
            let client = client.clone();
            let url = app.url(&format!("/admin/codes/batches/{batch}{q}"));
            async move {
                let r = client.get(url).send().await.unwrap();
                assert_eq!(r.status(), 200);
                html(r).await
            }
        };
        // Every code: 120 in pages of 50, the last page reached by the pager.
        let all = page("").await;
        assert_eq!(
            all.attr("#code-count", "data-total").as_deref(),
            Some("120")
        );
        assert_eq!(all.attr("nav.pager", "data-pages").as_deref(), Some("3"));
        assert_eq!(all.count("table.codes tbody tr"), 50);
        let last = page("?page=3").await;
        assert_eq!(last.count("table.codes tbody tr"), 20);
        let beyond = page("?page=99").await;
        assert_eq!(
            beyond.count("table.codes tbody tr"),
            20,
            "a page past the end shows the last"
        );
        // A status: only its codes, counted from the kept counts.
        let held = page("?status=BOOKING").await;
        assert_eq!(held.attr("#code-count", "data-total").as_deref(), Some("2"));
        assert_eq!(
            held.attrs("table.codes .code-status", "data-status"),
            ["BOOKING", "BOOKING"]
        );
        assert_eq!(
            held.attr("select[name=status] option[selected]", "value")
                .as_deref(),
            Some("BOOKING")
        );
        // The pager keeps the filter on its links.
        let avail = page("?status=AVAILABLE&page=2").await;
        assert_eq!(
            avail.attr("#code-count", "data-total").as_deref(),
            Some("118")
        );
        assert!(avail
            .attrs("nav.pager a", "href")
            .iter()
            .all(|h| h.contains("status=AVAILABLE")));
        // A search comes by POST: a code never travels in an address, and the answer is not kept.
        let search = |q: &str, status: &str| {
            let client = client.clone();
            let url = app.url(&format!("/admin/codes/batches/{batch}/search"));
            let form = [("q", q.to_string()), ("status", status.to_string())];
            async move {
                let r = client.post(url).form(&form).send().await.unwrap();
                assert_eq!(r.status(), 200);
                assert_eq!(r.headers()["cache-control"], "no-store");
                html(r).await
            }
        };
        assert_eq!(
            all.attr("#code-filter", "method").as_deref(),
            Some("post"),
            "the search form posts"
        );
        // A code read out with spaces and in lower case, kept in the box as typed.
        let found = search("g- 00 42", "").await;
        assert_eq!(found.count("table.codes tbody tr"), 1);
        assert_eq!(
            found.attr("input[name=q]", "value").as_deref(),
            Some("g- 00 42")
        );
        let line: Vec<String> = found.texts("table.codes tbody td.num");
        assert_eq!(line, ["42"]);
        assert!(
            found
                .attrs("a", "href")
                .iter()
                .all(|h| !h.to_lowercase().contains("0042")),
            "no link carries the code"
        );
        // A search in a link is ignored.
        let linked = page("?q=G-0042").await;
        assert_eq!(linked.count("table.codes tbody tr"), 50);
        // An order finds the codes it holds; a status and a search together narrow both.
        let order = search("ord-77", "").await;
        assert_eq!(order.count("table.codes tbody tr"), 2);
        assert_eq!(order.texts("table.codes td.order"), ["ord-77", "ord-77"]);
        let none = search("ord-77", "SOLD").await;
        assert_eq!(none.count("table.codes tbody tr"), 0);
        assert_eq!(none.count("#codes-empty"), 1);
        assert_eq!(none.count("#clear-filter"), 1);
        // A code of another batch or merchant is not found here.
        let stranger = search("NOPE-1", "").await;
        assert_eq!(stranger.count("#codes-empty"), 1);
        // An empty search is the list, by status, as a link.
        let r = client
            .post(app.url(&format!("/admin/codes/batches/{batch}/search")))
            .form(&[("q", ""), ("status", "BOOKING")])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303);
        assert!(crate::helpers::location(&r).ends_with("?status=BOOKING"));
        // A batch whose ids are not one run (a code gone from the middle) pages by skipping
        // through the index instead, to the same rows.
        sqlx::query("DELETE FROM codes WHERE batch_id = $1 AND line = 10")
            .bind(batch)
            .execute(&app.db.pool)
            .await
            .unwrap();
        let gapped = page("?page=3").await;
        assert_eq!(gapped.count("table.codes tbody tr"), 19);
        let first = page("?page=1").await;
        let lines = first.texts("table.codes tbody td.num");
        assert_eq!(lines.len(), 50);
        assert_eq!((lines[0].as_str(), lines[9].as_str()), ("1", "11"));
        // An action taken on a filtered page comes back to it.
        let r = client
            .post(app.url(&format!("/admin/codes/batches/{batch}/lock")))
            .form(&[("status", "AVAILABLE"), ("page", "2")])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_redirection(), "{}", r.status());
        let to = crate::helpers::location(&r);
        assert!(
            to.contains("status=AVAILABLE") && to.contains("page=2"),
            "{to}"
        );
    }
);
