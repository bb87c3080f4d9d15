//! Sales under load: a flash sale, a hot slot, combined orders, and the ceilings they are measured
//! against (a bare handler, PostgreSQL's own rate on one row).

#[allow(unused_imports)]
use super::*;

/// Creates an ONLINE product of `kind` with one SKU `code` priced 100.
pub(super) async fn seed_sku(
    http: &reqwest::Client,
    c: &Common,
    kind: &str,
    code: &str,
) -> anyhow::Result<()> {
    let (st, b) = post(
        http,
        c,
        "/api/v1/products",
        json!({"name": format!("Bench {code}"), "kind": kind, "status": "ONLINE",
        "skus": [{"code": code, "name": "bench", "price": 100}]}),
    )
    .await?;
    anyhow::ensure!(st == 201, "creating {code} failed: {st} {b}");
    Ok(())
}

/// Receives `units` of a goods SKU into a warehouse.
pub(super) async fn seed_stock(
    http: &reqwest::Client,
    c: &Common,
    sku: &str,
    warehouse: &str,
    units: i64,
) -> anyhow::Result<()> {
    let (st, b) = post(
        http,
        c,
        "/api/v1/stock/adjustments",
        json!({"sku": sku, "warehouse": warehouse, "kind": "RECEIVE",
        "qty": units, "reason": "bench", "idempotency_key": format!("{sku}-seed")}),
    )
    .await?;
    anyhow::ensure!(st == 201, "seeding stock failed: {st} {b}");
    Ok(())
}

/// Places booked in a service's slot, as the slots listing says (-1 when not found).
pub(super) async fn slot_booked(
    http: &reqwest::Client,
    c: &Common,
    service: &str,
    slot_id: i64,
    start: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<i64> {
    let from = (start - chrono::Duration::minutes(1))
        .to_rfc3339()
        .replace('+', "%2B");
    let slots: Value = http
        .get(format!(
            "{}/api/v1/services/{service}/slots?from={from}",
            c.url
        ))
        .bearer_auth(&c.api_key)
        .send()
        .await?
        .json()
        .await?;
    Ok(slots
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == slot_id))
        .map(|x| x["booked"].as_i64().unwrap_or(-1))
        .unwrap_or(-1))
}

pub(super) async fn flash_sale(s: FlashSale) -> anyhow::Result<bool> {
    let c = Arc::new(s.common);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(c.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    let sku = format!("BENCH-{}", chrono::Utc::now().format("%Y%m%d%H%M%S%3f"));
    seed_sku(&http, &c, "goods", &sku).await?;
    seed_stock(&http, &c, &sku, &s.warehouse, s.units).await?;

    let body_of = |sku: &str, i: usize| {
        format!(
            r#"{{"order_id":"{sku}-{i}","items":[{{"sku":"{sku}","qty":1}}],"ttl_seconds":3600}}"#
        )
    };
    let (mut all, _, elapsed) = {
        let sku = sku.clone();
        race(&c, move |mut conn, i| {
            let body = body_of(&sku, i);
            async move {
                let at = Instant::now();
                let outcome = match conn.post("/api/v1/reservations", body).await {
                    Ok((201, _)) => Outcome::Accepted(Vec::new()),
                    Ok((409, b))
                        if lean::error_code(&b).as_deref() == Some("insufficient_stock") =>
                    {
                        Outcome::Rejected
                    }
                    other => Outcome::unexpected(other),
                };
                (outcome, at.elapsed(), conn)
            }
        })
        .await?
    };

    let mut retried = None;
    if s.retry_unknown && !all.unknown.is_empty() {
        let (mut held, mut refused, mut still) = (0, 0, 0);
        for &i in &all.unknown {
            let r = http
                .post(format!("{}/api/v1/reservations", c.url))
                .bearer_auth(&c.api_key)
                .header("Content-Type", "application/json")
                .body(body_of(&sku, i))
                .send()
                .await;
            match r.as_ref().map(|r| r.status().as_u16()) {
                Ok(200 | 201) => held += 1,
                Ok(409) => refused += 1,
                _ => still += 1,
            }
        }
        all.accepted += held;
        all.rejected += refused;
        retried = Some((all.unknown.len(), held, refused, still));
    }
    let stock: Value = http
        .get(format!("{}/api/v1/skus/{sku}/stock", c.url))
        .bearer_auth(&c.api_key)
        .send()
        .await?
        .json()
        .await?;
    let locked = stock["locked"].as_i64().unwrap_or(-1);
    let total = stock["total"].as_i64().unwrap_or(-1);
    let oversold = (all.accepted as i64 - s.units).max(0) + (locked - total).max(0);
    let consistent = locked == all.accepted as i64 && total == s.units;

    report(
        &format!(
            "flash-sale  (N={} units, M={} attempts, C={} connections)",
            s.units, c.attempts, c.concurrency
        ),
        &c,
        &all,
        elapsed,
        "",
    );
    println!(
        "stock after   total={total} locked={locked} available={}",
        stock["available"]
    );
    let mut settled = all.errors == 0;
    if let Some((asked, held, refused, still)) = retried {
        println!("asked again   {asked} without a clear answer: {held} held (accepted above), {refused} refused, {still} still unanswered");
        settled = still == 0;
    }
    println!("oversold      {oversold}  (must be 0)");
    println!(
        "consistent    {}  (locked == accepted, total == N)",
        if consistent { "yes" } else { "NO" }
    );
    Ok(oversold == 0 && consistent && settled)
}

/// The sold-out answer from a handler that does nothing else: no middleware, no state, no body
/// read beyond what axum does for any request.
pub(super) async fn bare(bind: &str) -> anyhow::Result<()> {
    use axum::http::{header, StatusCode};
    let app = axum::Router::new().route(
        "/api/v1/reservations",
        axum::routing::post(|| async {
            (
                StatusCode::CONFLICT,
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"error":"insufficient_stock","message":"sold out"}"#,
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind(bind).await?;
    axum::serve(listener, app).await?;
    Ok(())
}

/// Refusals per second of whatever answers at `--url` (the bare handler): the same requests, the
/// same connections and the same generator as `flash-sale`.
pub(super) async fn ceiling(c: Common) -> anyhow::Result<bool> {
    let c = Arc::new(c);
    let (all, _, elapsed) = race(&c, move |mut conn, i| {
        let body = format!(
            r#"{{"order_id":"CEILING-{i}","items":[{{"sku":"CEILING","qty":1}}],"ttl_seconds":3600}}"#
        );
        async move {
            let at = Instant::now();
            let outcome = match conn.post("/api/v1/reservations", body).await {
                Ok((409, _)) => Outcome::Rejected,
                other => Outcome::unexpected(other),
            };
            (outcome, at.elapsed(), conn)
        }
    })
    .await?;
    report(
        &format!(
            "ceiling  (a bare handler's 409, M={} attempts, C={} connections)",
            c.attempts, c.concurrency
        ),
        &c,
        &all,
        elapsed,
        "",
    );
    Ok(all.errors == 0)
}

/// A slot of `sku` from `start`, an hour long, with `capacity` places: its id.
pub(super) async fn new_slot(
    http: &reqwest::Client,
    c: &Common,
    sku: &str,
    start: chrono::DateTime<chrono::Utc>,
    capacity: i64,
) -> anyhow::Result<i64> {
    let (st, b) = post(
        http,
        c,
        "/api/v1/slots",
        json!({"sku": sku, "starts_at": start.to_rfc3339(),
        "ends_at": (start + chrono::Duration::hours(1)).to_rfc3339(), "capacity": capacity}),
    )
    .await?;
    anyhow::ensure!(st == 201, "creating the slot failed: {st} {b}");
    Ok(b["id"].as_i64().unwrap_or_default())
}

/// `n` bookings of a slot of `sku` an hour after `start`, `c.concurrency` at a time, untimed.
pub(super) async fn warm_up_bookings(
    http: &reqwest::Client,
    c: &Arc<Common>,
    sku: &str,
    start: chrono::DateTime<chrono::Utc>,
    n: usize,
) -> anyhow::Result<()> {
    let slot_id = new_slot(http, c, sku, start + chrono::Duration::hours(1), n as i64).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..c.concurrency.min(n) {
        let next = next.clone();
        let mut conn = lean::Conn::new(&c.url, &c.api_key)?;
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return anyhow::Ok(());
                }
                let body = format!(
                    r#"{{"slot_id":{slot_id},"name":"Warm {i}","phone":"+86 139 {i:08}","idempotency_key":"warm-{slot_id}-{i}"}}"#
                );
                let (st, _) = conn.post("/api/v1/bookings", body).await?;
                anyhow::ensure!(st == 201, "a warm-up booking was answered {st}");
            }
        }));
    }
    for w in workers {
        w.await??;
    }
    println!("warm-up       {n} bookings of another slot of the service, untimed");
    Ok(())
}

pub(super) async fn hot_slot(s: HotSlot) -> anyhow::Result<bool> {
    let c = Arc::new(s.common);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(c.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    let sku = format!("HOT-{}", chrono::Utc::now().format("%Y%m%d%H%M%S%3f"));
    let (st, b) = post(
        &http,
        &c,
        "/api/v1/products",
        json!({"name": format!("Hot slot {sku}"), "kind": "service", "status": "ONLINE",
        "skus": [{"code": sku, "name": "bench", "price": 100}]}),
    )
    .await?;
    anyhow::ensure!(st == 201, "creating the service failed: {st} {b}");
    let start = chrono::Utc::now() + chrono::Duration::days(2);
    let slot_id = new_slot(&http, &c, &sku, start, s.capacity).await?;
    if s.warm_up > 0 {
        warm_up_bookings(&http, &c, &sku, start, s.warm_up.min(1000)).await?;
    }

    let tries = s.tries.max(1);
    let (all, mut winners, elapsed) = {
        race(&c, move |mut conn, i| {
            // Every customer tries `tries` times (twice: a double submit with a fresh key).
            let customer = i / tries;
            let body = format!(
                r#"{{"slot_id":{slot_id},"name":"Customer {customer}","phone":"+86 138 {customer:08}","idempotency_key":"hot-{slot_id}-{i}"}}"#
            );
            async move {
                let at = Instant::now();
                let outcome = match conn.post("/api/v1/bookings", body).await {
                    Ok((201, _)) => Outcome::Accepted(vec![customer.to_string()]),
                    Ok((409, b))
                        if matches!(
                            lean::error_code(&b).as_deref(),
                            Some("slot_full" | "already_booked")
                        ) =>
                    {
                        Outcome::Rejected
                    }
                    other => Outcome::unexpected(other),
                };
                (outcome, at.elapsed(), conn)
            }
        })
        .await?
    };
    winners.sort_unstable();
    let unique = {
        let mut w = winners.clone();
        w.dedup();
        w.len()
    };
    let duplicates = winners.len() - unique;
    let booked = slot_booked(&http, &c, &sku, slot_id, start).await?;
    let overbooked = (booked - s.capacity).max(0) + (all.accepted as i64 - s.capacity).max(0);
    let consistent = booked == all.accepted as i64;

    report(
        &format!(
            "hot-slot  (K={} places, M={} attempts, C={} connections, {} tries per customer)",
            s.capacity, c.attempts, c.concurrency, tries
        ),
        &c,
        &all,
        elapsed,
        "",
    );
    println!("slot after    booked={booked} capacity={}", s.capacity);
    println!("overbooked    {overbooked}  (must be 0)");
    println!("duplicates    {duplicates}  (must be 0)");
    println!(
        "consistent    {}  (booked == accepted)",
        if consistent { "yes" } else { "NO" }
    );
    Ok(overbooked == 0 && duplicates == 0 && consistent && all.errors == 0)
}

pub(super) async fn combined_order(s: CombinedOrder) -> anyhow::Result<bool> {
    let c = Arc::new(s.common);
    let capacity = s.capacity.unwrap_or(s.units);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(c.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    let stamp = chrono::Utc::now().format("%Y%m%d%H%M%S%3f").to_string();
    let (goods, class) = (format!("MIXG-{stamp}"), format!("MIXS-{stamp}"));
    seed_sku(&http, &c, "goods", &goods).await?;
    seed_sku(&http, &c, "service", &class).await?;
    seed_stock(&http, &c, &goods, "main", s.units).await?;
    let start = chrono::Utc::now() + chrono::Duration::days(2);
    let slot_id = new_slot(&http, &c, &class, start, capacity).await?;

    let (all, _, elapsed) = {
        let (goods, class) = (goods.clone(), class.clone());
        race(&c, move |mut conn, i| {
            let body = format!(
                r#"{{"order_id":"{goods}-{i}","ttl_seconds":3600,"items":[{{"sku":"{goods}","qty":1}},{{"sku":"{class}","slot_id":{slot_id},"places":1,"customer":{{"name":"Customer {i}","phone":"+86 138 {i:08}"}}}}]}}"#
            );
            async move {
                let at = Instant::now();
                let outcome = match conn.post("/api/v1/reservations", body).await {
                    Ok((201, _)) => Outcome::Accepted(Vec::new()),
                    Ok((409, b))
                        if matches!(
                            lean::error_code(&b).as_deref(),
                            Some("insufficient_stock" | "slot_full")
                        ) =>
                    {
                        Outcome::Rejected
                    }
                    other => Outcome::unexpected(other),
                };
                (outcome, at.elapsed(), conn)
            }
        })
        .await?
    };

    let stock: Value = http
        .get(format!("{}/api/v1/skus/{goods}/stock", c.url))
        .bearer_auth(&c.api_key)
        .send()
        .await?
        .json()
        .await?;
    let locked = stock["locked"].as_i64().unwrap_or(-1);
    let booked = slot_booked(&http, &c, &class, slot_id, start).await?;
    let accepted = all.accepted as i64;
    // An order that held its unit without its place, or its place without its unit, shows as a
    // difference between what is locked, what is booked and what was accepted.
    let half_made = (locked - accepted).abs() + (booked - accepted).abs();
    let expected = s.units.min(capacity);

    report(
        &format!(
            "combined-order  (N={} units, K={capacity} places, M={} attempts, C={} connections)",
            s.units, c.attempts, c.concurrency
        ),
        &c,
        &all,
        elapsed,
        "",
    );
    println!("after         locked={locked} booked={booked} accepted={accepted}");
    println!("half-made     {half_made}  (must be 0)");
    println!(
        "exact         {}  (accepted == min(N, K) = {expected})",
        if accepted == expected { "yes" } else { "NO" }
    );
    Ok(half_made == 0 && accepted == expected && all.errors == 0)
}
