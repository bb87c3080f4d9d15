//! Operations under load: a webhook backlog drained, and reconciliation over a large ledger.

#[allow(unused_imports)]
use super::*;

/// What the bench's webhook receiver has taken: every event id, and one signed request to check.
#[derive(Default)]
pub(super) struct Taken {
    pub(super) ids: Vec<i64>,
    pub(super) sample: Option<(String, Vec<u8>)>,
}

pub(super) async fn webhook_drain(a: DrainArgs) -> anyhow::Result<bool> {
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::HeaderMap;
    let c = Arc::new(a.common);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(c.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    let taken: Arc<std::sync::Mutex<Taken>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let receiver = format!("http://{}/hook", listener.local_addr()?);
    async fn take(
        State(t): State<Arc<std::sync::Mutex<Taken>>>,
        headers: HeaderMap,
        body: Bytes,
    ) -> &'static str {
        let id = headers
            .get("sellable-event-id")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .unwrap_or(-1);
        let mut t = t.lock().unwrap();
        t.ids.push(id);
        if t.sample.is_none() {
            let sig = headers
                .get("sellable-signature")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            t.sample = Some((sig, body.to_vec()));
        }
        "ok"
    }
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(take))
        .with_state(taken.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let sku = format!("DRAIN-{}", chrono::Utc::now().format("%Y%m%d%H%M%S%3f"));
    seed_sku(&http, &c, "goods", &sku).await?;
    let (st, hook) = post(
        &http,
        &c,
        "/api/v1/webhooks",
        json!({"url": receiver, "events": ["stock.receive"]}),
    )
    .await?;
    anyhow::ensure!(st == 201, "registering the webhook failed: {st} {hook}");
    let id = hook["id"].as_i64().unwrap_or_default();
    let secret = hook["secret"].as_str().unwrap_or_default().to_string();
    let (st, b) = post(
        &http,
        &c,
        &format!("/api/v1/webhooks/{id}/pause"),
        json!({}),
    )
    .await?;
    anyhow::ensure!(st == 200, "pausing failed: {st} {b}");
    let queued_at = Instant::now();
    let jobs: Vec<_> = (0..a.events)
        .map(|i| {
            let (http, c, sku, wh) = (http.clone(), c.clone(), sku.clone(), a.warehouse.clone());
            async move {
                let (st, b) = post(
                    &http,
                    &c,
                    "/api/v1/stock/adjustments",
                    json!({"sku": sku, "warehouse": wh, "kind": "RECEIVE", "qty": 1,
                           "reason": "bench", "idempotency_key": format!("{sku}-{i}")}),
                )
                .await?;
                anyhow::ensure!(st == 201, "an adjustment failed: {st} {b}");
                Ok(())
            }
        })
        .collect();
    bounded(c.concurrency, jobs).await?;
    let queue_secs = queued_at.elapsed().as_secs_f64();
    let started = Instant::now();
    let (st, b) = post(
        &http,
        &c,
        &format!("/api/v1/webhooks/{id}/resume"),
        json!({}),
    )
    .await?;
    anyhow::ensure!(st == 200, "resuming failed: {st} {b}");
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut last = 0;
    let mut last_change = Instant::now();
    while taken.lock().unwrap().ids.len() < a.events && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let n = taken.lock().unwrap().ids.len();
        if n != last {
            (last, last_change) = (n, Instant::now());
        } else if last_change.elapsed() > Duration::from_secs(60) {
            break; // stuck
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let t = taken.lock().unwrap();
    let mut unique = t.ids.clone();
    unique.sort_unstable();
    unique.dedup();
    let twice = t.ids.len() - unique.len();
    let signed = t.sample.as_ref().is_some_and(|(sig, body)| {
        sellable::domain::integration::webhooks::signature::verify(
            sig,
            &secret,
            body,
            chrono::Utc::now().timestamp(),
            300,
        )
    });
    println!(
        "scenario      webhook-drain  ({} stock events queued while paused)",
        a.events
    );
    println!("server        {}", c.url);
    println!(
        "queued in     {queue_secs:.2} s  ({:.0} adjustments/s over {} connections)",
        a.events as f64 / queue_secs,
        c.concurrency
    );
    println!(
        "drained       {} of {} in {secs:.2} s  = {:.0} events/s  (resume to the last one received)",
        unique.len(),
        a.events,
        unique.len() as f64 / secs
    );
    println!("invariant     sent twice {twice}, signature of a sample verifies: {signed}");
    Ok(unique.len() == a.events && twice == 0 && signed)
}

/// `INSERT INTO … SELECT … FROM g` over the integers 1..=n, on either database (a recursive CTE:
/// PostgreSQL's generate_series has no SQLite twin).
pub(super) fn over_series(n: i64, insert: &str, select: &str) -> String {
    format!("{insert} WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {n}) {select}")
}

pub(super) async fn reconcile_bench(a: ReconcileArgs) -> anyhow::Result<bool> {
    use rand::seq::SliceRandom;
    let db = sellable::infra::db::Db::connect(&a.database_url).await?;
    let (http, c) = seeder(&a.url, &a.api_key, 120)?;
    let (merchant, warehouse, slug): (i64, i64, String) = sqlx::query_as(
        "SELECT w.merchant_id, w.id, w.slug FROM warehouses w JOIN merchants m ON m.id = w.merchant_id
         WHERE m.slug = 'demo' ORDER BY w.priority DESC, w.id LIMIT 1",
    )
    .fetch_one(&db.pool)
    .await?;
    seed_ledger(&db, &a, (merchant, warehouse)).await?;
    let mut codes: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT code FROM skus WHERE code LIKE 'RB%' AND merchant_id = {merchant}"
    ))
    .fetch_all(&db.pool)
    .await?;
    codes.shuffle(&mut rand::rng());
    let ok = time_runs(&db, (&http, &c), &a, &codes, &slug).await?;
    let listing = format!("{}/api/v1/sellable?status=blocked", c.url);
    time_kept_listings((&http, &c), &listing, &codes, &slug).await?;
    time_fresh_together((&http, &c), &listing).await?;
    Ok(ok)
}

/// `a.skus` goods of the demo merchant, written straight into the database with `a.ledger`
/// receipts between them, each ledger row with its event as the API writes them.
async fn seed_ledger(
    db: &sellable::infra::db::Db,
    a: &ReconcileArgs,
    (merchant, warehouse): (i64, i64),
) -> anyhow::Result<()> {
    let per = (a.ledger / a.skus).max(1);
    let now = db.now_ms();
    let seeding = Instant::now();
    let mut tx = db.pool.begin().await?;
    sqlx::query(&over_series(
        a.skus,
        "INSERT INTO products (merchant_id, name, kind, status, created_at, updated_at)",
        &format!(
            "SELECT {merchant}, 'Reconcile bench ' || i, 'goods', 'ONLINE', {now}, {now} FROM g"
        ),
    ))
    .execute(&mut *tx)
    .await?;
    sqlx::query(&format!(
        "INSERT INTO skus (merchant_id, product_id, code, name, price, unit_type, created_at, updated_at)
         SELECT {merchant}, id, 'RB' || id, name, 100, 'quantity', {now}, {now} FROM products
         WHERE merchant_id = {merchant} AND name LIKE 'Reconcile bench %'"
    ))
    .execute(&mut *tx)
    .await?;
    sqlx::query(&sellable::domain::stock::sql::seed_balances(&format!(
        "SELECT {merchant}, id, {warehouse}, {per}, {now} FROM skus WHERE code LIKE 'RB%' AND merchant_id = {merchant}"
    )))
    .execute(&mut *tx)
    .await?;
    // `per` receipts of one unit per SKU, each ledger row with its event, as the API writes them.
    sqlx::query(&over_series(
        per,
        "INSERT INTO stock_ledger (merchant_id, sku_id, warehouse_id, kind, qty, d_total, total_after, locked_after, sold_after, frozen_after, reason, actor, event_id, created_at)",
        &format!("SELECT {merchant}, s.id, {warehouse}, 'RECEIVE', 1, 1, g.i, 0, 0, 0, 'bench', 'bench', 'rb-' || s.id || '-' || g.i, {now} - g.i
                  FROM skus s CROSS JOIN g WHERE s.code LIKE 'RB%' AND s.merchant_id = {merchant}"),
    ))
    .execute(&mut *tx)
    .await?;
    let receipts = sellable::domain::trail::events::Row::new(
        "merchant_id",
        "'stock.receive'",
        ("'sku'", "CAST(sku_id AS TEXT)"),
        "created_at",
    )
    .sku("sku_id")
    .ledger("id");
    sqlx::query(&receipts.insert(&format!(
        "FROM stock_ledger WHERE actor = 'bench' AND merchant_id = {merchant} ORDER BY id"
    )))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    sellable::domain::trail::events::sequence(db).await?;
    db.analyze().await?;
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM stock_ledger")
        .fetch_one(&db.pool)
        .await?;
    let skus: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM skus")
        .fetch_one(&db.pool)
        .await?;
    let events: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM events")
        .fetch_one(&db.pool)
        .await?;
    println!(
        "scenario      reconcile  ({skus} SKUs, {rows} ledger rows, {events} events; seeded in {:.1} s)",
        seeding.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A full run, then K SKUs changed as a merchant would (a receipt each, through the API), then
/// two changed-only runs: the first looks at the K SKUs (no fewer), the second at nothing.
async fn time_runs(
    db: &sellable::infra::db::Db,
    (http, c): (&reqwest::Client, &Common),
    a: &ReconcileArgs,
    codes: &[String],
    slug: &str,
) -> anyhow::Result<bool> {
    use sellable::domain::reconcile;
    let actor = sellable::domain::Actor::system("bench");
    let timed = |r: &reconcile::Report, wall: Duration| {
        println!(
            "{:<13} {:>8.1} ms  ({} checked, {} broken, scope {})",
            match r.run.scope {
                reconcile::RunScope::Full => "full run",
                reconcile::RunScope::Changed => "changed run",
            },
            wall.as_secs_f64() * 1000.0,
            r.run.checked,
            r.broken.len(),
            r.run.scope.as_str()
        );
    };
    let t = Instant::now();
    let full = reconcile::run(db, "cli", &actor).await?;
    timed(&full, t.elapsed());
    for code in codes.iter().take(a.changed) {
        let r = http
            .post(format!("{}/api/v1/stock/adjustments", c.url))
            .bearer_auth(&c.api_key)
            .json(&json!({"sku": code, "warehouse": slug, "kind": "RECEIVE", "qty": 1, "reason": "bench",
                "idempotency_key": format!("rb-{code}")}))
            .send()
            .await?;
        anyhow::ensure!(
            r.status().is_success(),
            "receive {code}: {}",
            r.text().await?
        );
    }
    let mut ok = full.broken.is_empty();
    // The first looks at the K SKUs changed (no fewer), the second at nothing.
    for (label, least, most) in [
        ("after changes", a.changed as i64, i64::MAX),
        ("nothing new", 0, 0),
    ] {
        let t = Instant::now();
        let r = reconcile::run_changed(db, "cli", &actor).await?;
        print!("{label:<14}");
        timed(&r, t.elapsed());
        ok &= r.broken.is_empty()
            && r.run.scope == reconcile::RunScope::Changed
            && (least..=most).contains(&r.run.checked);
    }
    Ok(ok)
}

/// The sellable listing over the same catalog: judged whole (asked for fresh), caught up after a
/// price edit (its `sku.updated`), after a product made (its `sku.created`: the new SKU put in its
/// place) and after ten receipts (their events), kept when nothing changed; and single verdicts.
/// Five rounds after one that warms caches.
async fn time_kept_listings(
    (http, c): (&reqwest::Client, &Common),
    listing: &str,
    codes: &[String],
    slug: &str,
) -> anyhow::Result<()> {
    let (mut whole, mut edited, mut made, mut caught, mut kept, mut staffed, mut single) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut listed = 0;
    for round in 0..6 {
        let (us, b) = get_ok(http, &format!("{listing}&fresh=true"), &c.api_key).await?;
        listed = b["counts"]["skus"].as_i64().unwrap_or(0);
        whole.push(us);
        let sku = &codes[round % codes.len()];
        let r = http
            .patch(format!("{}/api/v1/skus/{sku}", c.url))
            .bearer_auth(&c.api_key)
            .json(&json!({"price": 2000 + round}))
            .send()
            .await?;
        anyhow::ensure!(r.status().is_success(), "price of {sku}: {}", r.status());
        edited.push(get_ok(http, listing, &c.api_key).await?.0);
        let (st, b) = post(
            http,
            c,
            "/api/v1/products",
            json!({"name": format!("bench new {round}"), "kind": "goods", "status": "ONLINE",
                "skus": [{"code": format!("BENCH-NEW-{round}-{}", std::process::id()), "name": "new", "price": 100}]}),
        )
        .await?;
        anyhow::ensure!(st == 201, "product: {st} {b}");
        made.push(get_ok(http, listing, &c.api_key).await?.0);
        for k in 0..10 {
            let code = &codes[(round * 10 + k + 1) % codes.len()];
            post(http, c, "/api/v1/stock/adjustments", json!({"sku": code, "warehouse": slug, "kind": "RECEIVE", "qty": 1, "reason": "bench", "idempotency_key": format!("rl-{round}-{k}")})).await?;
        }
        caught.push(get_ok(http, listing, &c.api_key).await?.0);
        kept.push(get_ok(http, listing, &c.api_key).await?.0);
        // A staff member added: nothing a verdict reads (it judged the catalog whole until
        // 2026-12-05, as every change without an event did).
        let r = http
            .post(format!("{}/api/v1/staff", c.url))
            .bearer_auth(&c.api_key)
            .json(&json!({"name": format!("bench {round}")}))
            .send()
            .await?;
        anyhow::ensure!(r.status().is_success(), "staff: {}", r.status());
        staffed.push(get_ok(http, listing, &c.api_key).await?.0);
        for k in 0..20 {
            let code = &codes[(round * 20 + k) % codes.len()];
            let url = format!("{}/api/v1/skus/{code}/sellable", c.url);
            single.push(get_ok(http, &url, &c.api_key).await?.0);
        }
    }
    println!("listing       {listed} SKUs judged, the first page of the blocked ones");
    for (label, lat) in [
        ("listing judged whole (asked for fresh)", &mut whole),
        ("listing caught up (after a price edit)", &mut edited),
        ("listing caught up (after a product made)", &mut made),
        ("listing caught up (after 10 receipts)", &mut caught),
        ("listing kept (nothing changed)", &mut kept),
        ("listing kept (after a staff member added)", &mut staffed),
        ("single verdict", &mut single),
    ] {
        lat.remove(0); // the first round warms caches
        lat.sort_unstable();
        println!(
            "{label:<42} p50 {}  max {}  ({} calls)",
            ms(lat, 0.5),
            ms(lat, 1.0),
            lat.len()
        );
    }
    Ok(())
}

/// Eight listings asked for fresh at once: they share one whole judgement (or two), where each
/// once made its own (eight times the CPU, and the memory of eight catalogs at once).
async fn time_fresh_together(
    (http, c): (&reqwest::Client, &Common),
    listing: &str,
) -> anyhow::Result<()> {
    let fresh = format!("{listing}&fresh=true");
    let t = Instant::now();
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let (http, url, key) = (http.clone(), fresh.clone(), c.api_key.clone());
            tokio::spawn(async move { get_ok(&http, &url, &key).await.map(|(us, _)| us) })
        })
        .collect();
    let mut together = Vec::new();
    for call in calls {
        together.push(call.await??);
    }
    together.sort_unstable();
    println!(
        "{:<42} all answered in {:.1} ms, slowest call {}",
        "8 listings asked for fresh at once",
        t.elapsed().as_secs_f64() * 1e3,
        ms(&together, 1.0)
    );
    Ok(())
}
