//! Reads under load: a catalog's verdicts and every back-office page, on a seeded catalog.

#[allow(unused_imports)]
use super::*;

/// Runs `jobs` futures at most `n` at a time; the first error stops the run.
pub(super) async fn bounded<F>(n: usize, jobs: Vec<F>) -> anyhow::Result<()>
where
    F: std::future::Future<Output = anyhow::Result<()>>,
{
    use futures_util::StreamExt;
    let mut s = futures_util::stream::iter(jobs).buffer_unordered(n);
    while let Some(r) = s.next().await {
        r?;
    }
    Ok(())
}

pub(super) async fn get_timed(
    http: &reqwest::Client,
    url: &str,
    key: &str,
) -> anyhow::Result<(u16, usize, Value, Duration)> {
    let at = Instant::now();
    let r = http.get(url).bearer_auth(key).send().await?;
    let status = r.status().as_u16();
    let body = r.bytes().await?;
    let elapsed = at.elapsed();
    Ok((
        status,
        body.len(),
        serde_json::from_slice(&body).unwrap_or(Value::Null),
        elapsed,
    ))
}

/// GETs `url`, which must answer 200: the latency in µs and the body.
pub(super) async fn get_ok(
    http: &reqwest::Client,
    url: &str,
    key: &str,
) -> anyhow::Result<(u64, Value)> {
    let (st, _, b, d) = get_timed(http, url, key).await?;
    anyhow::ensure!(st == 200, "{url}: {st}");
    Ok((d.as_micros() as u64, b))
}

pub(super) fn ms(sorted_us: &[u64], p: f64) -> String {
    format!("{:.1} ms", percentile(sorted_us, p))
}

/// A client for seeding through the API (eight requests at a time), with its timeout.
pub(super) fn seeder(
    url: &str,
    key: &str,
    timeout_s: u64,
) -> anyhow::Result<(reqwest::Client, Common)> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(timeout_s))
        .build()?;
    let c = Common {
        url: url.to_string(),
        api_key: key.to_string(),
        concurrency: 8,
        attempts: 0,
    };
    Ok((http, c))
}

/// What `seed_catalog` made: every SKU with its kind, the count of each kind and the time taken.
pub(super) struct Seeded {
    pub(super) skus: Vec<(String, &'static str)>,
    pub(super) goods: usize,
    pub(super) services: usize,
    pub(super) vouchers: usize,
    pub(super) seconds: f64,
}

/// Seeds `n` SKUs through the API (60% goods, 20% services, 20% vouchers of `codes_per_voucher`
/// codes), with the states a real catalog has: drafts and offline products, low and sold-out
/// stock, unscheduled services, empty vouchers. Returns once every import has finished.
pub(super) async fn seed_catalog(
    http: &reqwest::Client,
    c: &Common,
    n: usize,
    codes_per_voucher: usize,
) -> anyhow::Result<Seeded> {
    let stamp = chrono::Utc::now().format("%H%M%S").to_string();
    let goods = n * 6 / 10;
    let services = n / 5;
    let vouchers = n - goods - services;
    let seeding = Instant::now();
    // Products of up to 100 SKUs each; one product in ten is not online.
    let mut codes: Vec<(String, &'static str)> = Vec::with_capacity(n);
    let mut products = Vec::new();
    for (kind, n) in [
        ("goods", goods),
        ("service", services),
        ("voucher", vouchers),
    ] {
        let skus: Vec<String> = (0..n)
            .map(|i| format!("C{stamp}-{}-{i:05}", &kind[..1].to_uppercase()))
            .collect();
        for (p, chunk) in skus.chunks(100).enumerate() {
            let status = match p % 10 {
                3 => "DRAFT",
                7 => "OFFLINE",
                _ => "ONLINE",
            };
            let body = json!({"name": format!("Bench {kind} {p}"), "kind": kind, "status": status,
                "skus": chunk.iter().map(|s| json!({"code": s, "name": s, "price": 1000})).collect::<Vec<_>>()});
            products.push(body);
        }
        codes.extend(skus.into_iter().map(|s| (s, kind)));
    }
    bounded(
        4,
        products
            .into_iter()
            .map(|body| {
                let (http, c) = (&http, &c);
                async move {
                    let (st, b) = post(http, c, "/api/v1/products", body).await?;
                    anyhow::ensure!(st == 201, "product: {st} {b}");
                    Ok(())
                }
            })
            .collect(),
    )
    .await?;

    // Goods: most received (a few just below the low-stock line), some sold out by unpaid orders.
    let mut jobs = Vec::new();
    for (i, (sku, kind)) in codes.iter().enumerate() {
        let (http, c) = (&http, &c);
        let job: std::pin::Pin<Box<dyn std::future::Future<Output = anyhow::Result<()>>>> =
            match *kind {
                "goods" if i % 10 != 0 => {
                    let qty = if i % 7 == 0 { 2 } else { 10 + (i % 40) as i64 };
                    let hold = i % 13 == 0;
                    Box::pin(async move {
                        let (st, b) = post(http, c, "/api/v1/stock/adjustments", json!({"sku": sku, "warehouse": "main", "kind": "RECEIVE", "qty": qty, "reason": "bench", "idempotency_key": format!("{sku}-r")})).await?;
                        anyhow::ensure!(st == 201, "receive: {st} {b}");
                        if hold {
                            let (st, b) = post(http, c, "/api/v1/reservations", json!({"order_id": format!("{sku}-o"), "items": [{"sku": sku, "qty": qty}], "ttl_seconds": 86400})).await?;
                            anyhow::ensure!(
                                st == 201 || b["error"] == "not_on_sale",
                                "hold: {st} {b}"
                            );
                        }
                        Ok(())
                    })
                }
                "service" if i % 10 != 0 => Box::pin(async move {
                    let (st, b) = post(http, c, &format!("/api/v1/services/{sku}/schedule"), json!({"rules": [{"weekdays": ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"], "opens": "10:00", "closes": "11:00", "slot_minutes": 60, "capacity": 4}]})).await?;
                    anyhow::ensure!(st == 200, "schedule: {st} {b}");
                    Ok(())
                }),
                "voucher" if i % 10 != 0 => {
                    let mut file = String::new();
                    for k in 0..codes_per_voucher {
                        file.push_str(&format!("{sku}-{k:04}\n"));
                    }
                    Box::pin(async move {
                        let form = reqwest::multipart::Form::new()
                            .text("sku", sku.clone())
                            .text("mode", "valid")
                            .part(
                                "file",
                                reqwest::multipart::Part::bytes(file.into_bytes())
                                    .file_name("codes.txt"),
                            );
                        let r = http
                            .post(format!("{}/api/v1/code-batches", c.url))
                            .bearer_auth(&c.api_key)
                            .multipart(form)
                            .send()
                            .await?;
                        anyhow::ensure!(r.status().as_u16() == 202, "upload: {}", r.text().await?);
                        Ok(())
                    })
                }
                _ => Box::pin(async { Ok(()) }),
            };
        jobs.push(job);
    }
    bounded(c.concurrency, jobs).await?;
    // Let the imports finish.
    loop {
        let (_, _, b, _) = get_timed(
            http,
            &format!(
                "{}/api/v1/sellable?reason=batch_importing&per_page=1",
                c.url
            ),
            &c.api_key,
        )
        .await?;
        if b["total"].as_i64() == Some(0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok(Seeded {
        skus: codes,
        goods,
        services,
        vouchers,
        seconds: seeding.elapsed().as_secs_f64(),
    })
}

pub(super) async fn catalog(a: CatalogArgs) -> anyhow::Result<bool> {
    let (http, c) = seeder(&a.url, &a.api_key, 120)?;
    let Seeded {
        skus: codes,
        goods,
        services,
        vouchers,
        seconds: seeded,
    } = seed_catalog(&http, &c, a.skus, a.codes_per_voucher).await?;
    println!("scenario      catalog  ({} SKUs seeded: {goods} goods, {services} services, {vouchers} vouchers, {} codes each; {seeded:.1} s)", a.skus, a.codes_per_voucher);
    println!("server        {}", c.url);
    let ok = time_listings(&http, &c, &a).await?;
    time_busy_listings(&http, &c, &a, &codes).await?;
    time_verdicts(&http, &c, &a, &codes).await?;
    Ok(ok)
}

/// The two listings, timed: the blocked SKUs' first page and every verdict in one answer.
async fn time_listings(
    http: &reqwest::Client,
    c: &Common,
    a: &CatalogArgs,
) -> anyhow::Result<bool> {
    let mut ok = true;
    for (label, path) in [
        (
            "listing blocked, first page of 100",
            "/api/v1/sellable?status=blocked",
        ),
        (
            "listing all, every verdict in one answer",
            "/api/v1/sellable?status=all&per_page=10000",
        ),
    ] {
        let mut lat = Vec::new();
        let (mut total, mut skus, mut bytes) = (0, 0, 0);
        for _ in 0..a.runs + 1 {
            let (st, n, b, d) = get_timed(http, &format!("{}{path}", c.url), &c.api_key).await?;
            anyhow::ensure!(st == 200, "{path}: {st}");
            lat.push(d.as_micros() as u64);
            total = b["total"].as_i64().unwrap_or(0);
            skus = b["counts"]["skus"].as_i64().unwrap_or(0);
            bytes = n;
        }
        lat.remove(0); // the first warms caches
        lat.sort_unstable();
        println!("{label}");
        println!(
            "  catalog     {skus} SKUs, {total} matching, {:.1} MB answer",
            bytes as f64 / 1e6
        );
        println!(
            "  latency     p50 {}  p90 {}  max {}  ({} runs)",
            ms(&lat, 0.5),
            ms(&lat, 0.9),
            ms(&lat, 1.0),
            a.runs
        );
        ok &= skus as usize >= a.skus;
    }
    Ok(ok)
}

/// The listing as a busy instance serves it. Before each timed call, untimed: ten orders of
/// random goods (their events name the SKUs the kept catalog judges again) or one SKU's price
/// edited (its `sku.updated` event: the same); or the listing asked for fresh (`fresh=true`:
/// the catalog judged whole, as every listing was before the read model).
async fn time_busy_listings(
    http: &reqwest::Client,
    c: &Common,
    a: &CatalogArgs,
    codes: &[(String, &'static str)],
) -> anyhow::Result<()> {
    use rand::Rng;
    let mut rng = rand::rng();
    let goods_codes: Vec<&String> = codes
        .iter()
        .filter(|(_, k)| *k == "goods")
        .map(|(c, _)| c)
        .collect();
    #[derive(PartialEq)]
    enum Before {
        Orders,
        PriceEdit,
        NoEvent,
    }
    for (label, before) in [
        (
            "listing blocked, after 10 orders (the kept catalog catches up)",
            Before::Orders,
        ),
        (
            "listing blocked, after a price edit (caught up from its event)",
            Before::PriceEdit,
        ),
        (
            "listing blocked, asked for fresh (judged whole)",
            Before::NoEvent,
        ),
    ] {
        let mut lat = Vec::new();
        for run in 0..a.runs + 1 {
            if before == Before::NoEvent {
                // Nothing changes: the listing below asks to be judged whole.
            } else if before == Before::PriceEdit {
                let sku = goods_codes[rng.random_range(0..goods_codes.len())];
                let r = http
                    .patch(format!("{}/api/v1/skus/{sku}", c.url))
                    .bearer_auth(&c.api_key)
                    .json(&json!({"price": 1000 + run}))
                    .send()
                    .await?;
                anyhow::ensure!(r.status().is_success(), "price of {sku}: {}", r.status());
            } else {
                for i in 0..10 {
                    let sku = goods_codes[rng.random_range(0..goods_codes.len())];
                    // A sold-out or offline SKU refuses: nothing changed, nothing to catch up.
                    post(http, c, "/api/v1/reservations", json!({"order_id": format!("busy-{run}-{i}-{sku}"), "items": [{"sku": sku, "qty": 1}], "ttl_seconds": 3600})).await?;
                }
            }
            let fresh = if before == Before::NoEvent {
                "&fresh=true"
            } else {
                ""
            };
            let url = format!("{}/api/v1/sellable?status=blocked{fresh}", c.url);
            lat.push(get_ok(http, &url, &c.api_key).await?.0);
        }
        lat.remove(0);
        lat.sort_unstable();
        println!("{label}");
        println!(
            "  latency     p50 {}  p90 {}  max {}  ({} runs)",
            ms(&lat, 0.5),
            ms(&lat, 0.9),
            ms(&lat, 1.0),
            a.runs
        );
    }
    Ok(())
}

/// Single verdicts of random SKUs, one at a time, by kind.
async fn time_verdicts(
    http: &reqwest::Client,
    c: &Common,
    a: &CatalogArgs,
    codes: &[(String, &'static str)],
) -> anyhow::Result<()> {
    use rand::Rng;
    let mut rng = rand::rng();
    let mut by_kind: std::collections::BTreeMap<&str, Vec<u64>> = Default::default();
    let mut all = Vec::new();
    for _ in 0..a.verdicts {
        let (sku, kind) = &codes[rng.random_range(0..codes.len())];
        let (st, _, b, d) = get_timed(
            http,
            &format!("{}/api/v1/skus/{sku}/sellable", c.url),
            &c.api_key,
        )
        .await?;
        anyhow::ensure!(
            st == 200 && b["sku"] == sku.as_str(),
            "verdict {sku}: {st} {b}"
        );
        by_kind.entry(kind).or_default().push(d.as_micros() as u64);
        all.push(d.as_micros() as u64);
    }
    all.sort_unstable();
    println!("single verdict, one at a time ({} random SKUs)", a.verdicts);
    println!(
        "  latency     p50 {}  p99 {}  max {}",
        ms(&all, 0.5),
        ms(&all, 0.99),
        ms(&all, 1.0)
    );
    for (kind, mut l) in by_kind {
        l.sort_unstable();
        println!(
            "  {kind:<11} p50 {}  p99 {}  ({} calls)",
            ms(&l, 0.5),
            ms(&l, 0.99),
            l.len()
        );
    }
    Ok(())
}

pub(super) async fn pages(a: PagesArgs) -> anyhow::Result<bool> {
    let (http, c) = seeder(&a.url, &a.api_key, 600)?;
    let seeded = seed_catalog(&http, &c, a.skus, 20).await?;
    let codes = random_codes(a.codes);
    let (big, batch_id) = seed_big_voucher(&http, &c, &a, &seeded, &codes).await?;
    let browser = sign_in(&a).await?;
    let paths = page_paths(&a, &seeded, &codes, (&big, batch_id));
    time_pages(&browser, &a, &paths).await
}

/// One voucher of `a.codes` codes, some of them sold and some held so that its statuses are not
/// all one: its SKU code and its batch.
async fn seed_big_voucher(
    http: &reqwest::Client,
    c: &Common,
    a: &PagesArgs,
    seeded: &Seeded,
    codes: &[String],
) -> anyhow::Result<(String, i64)> {
    let (big, import_secs, batch) = seed_codes(http, &a.url, &a.api_key, codes, "BIG").await?;
    anyhow::ensure!(batch["status"] == "READY", "the big import: {batch}");
    let batch_id = batch["batch_id"]
        .as_i64()
        .or(batch["id"].as_i64())
        .unwrap_or_default();
    for i in 0..20 {
        let order = format!("pages-{i}-{}", chrono::Utc::now().timestamp_millis());
        let (st, b) = post(
            http,
            c,
            "/api/v1/reservations",
            json!({"order_id": order, "items": [{"sku": big, "qty": 5}]}),
        )
        .await?;
        anyhow::ensure!(st == 201, "reserve: {st} {b}");
        if i % 2 == 0 {
            let (st, b) = post(
                http,
                c,
                &format!("/api/v1/reservations/{order}/confirm"),
                json!({}),
            )
            .await?;
            anyhow::ensure!(st == 200, "confirm: {st} {b}");
        }
    }
    println!(
        "scenario      pages  ({} SKUs: {} goods, {} services, {} vouchers of 20 codes; one voucher of {} codes; seeded in {:.0} s, the big import {:.0} s)",
        a.skus, seeded.goods, seeded.services, seeded.vouchers, a.codes, seeded.seconds, import_secs
    );
    println!("server        {}", a.url);
    if let Some(cmd) = &a.settle {
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .status()?;
        anyhow::ensure!(status.success(), "the settle command `{cmd}`: {status}");
        println!("settled       {cmd}");
    }

    Ok((big, batch_id))
}

/// A browser signed in as a person is: a cookie session from the sign-in form.
async fn sign_in(a: &PagesArgs) -> anyhow::Result<reqwest::Client> {
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(120))
        .build()?;
    let r = browser
        .post(format!("{}/login", a.url))
        .form(&[
            ("email", a.email.as_str()),
            ("password", a.password.as_str()),
            ("next", "/admin"),
        ])
        .send()
        .await?;
    anyhow::ensure!(
        r.status().as_u16() == 303,
        "sign-in of {}: {}",
        a.email,
        r.status()
    );

    Ok(browser)
}

/// Every back-office page timed, by label and path (a search is a POST, marked by its form).
fn page_paths(
    a: &PagesArgs,
    seeded: &Seeded,
    codes: &[String],
    (big, batch_id): (&str, i64),
) -> Vec<(String, String)> {
    let per_page = 50;
    let last = (a.codes as i64 + per_page - 1) / per_page;
    let product_pages = (seeded.skus.len() / 100).max(1);
    vec![
        ("dashboard".into(), "/admin".into()),
        ("not sellable".into(), "/admin/sellable".into()),
        ("codes".into(), "/admin/codes".into()),
        (
            "codes of the big SKU".into(),
            format!("/admin/codes?sku={big}"),
        ),
        (
            "batch, first page".into(),
            format!("/admin/codes/batches/{batch_id}"),
        ),
        (
            "batch, middle page".into(),
            format!("/admin/codes/batches/{batch_id}?page={}", last / 2),
        ),
        (
            "batch, last page".into(),
            format!("/admin/codes/batches/{batch_id}?page={last}"),
        ),
        (
            "batch, SOLD only".into(),
            format!("/admin/codes/batches/{batch_id}?status=SOLD"),
        ),
        // A search is a POST (a code never rides in an address): marked by its form.
        (
            "batch, a code searched".into(),
            format!(
                "POST /admin/codes/batches/{batch_id}/search q={}",
                codes[codes.len() / 2].to_lowercase()
            ),
        ),
        (
            "code look-up".into(),
            format!("/admin/codes/lookup?code={}", codes[7]),
        ),
        ("products".into(), "/admin/products".into()),
        (
            "products, a far page".into(),
            format!("/admin/products?page={}", product_pages / 2),
        ),
        ("stock report".into(), "/admin/stock".into()),
        ("orders".into(), "/admin/orders".into()),
        ("audit".into(), "/admin/audit".into()),
        ("reconciliation".into(), "/admin/reconcile".into()),
        ("slots".into(), "/admin/slots".into()),
        ("bookings".into(), "/admin/bookings/list".into()),
        ("schedules".into(), "/admin/schedules".into()),
        ("people".into(), "/admin/people".into()),
        ("places".into(), "/admin/places".into()),
    ]
}

/// Each page asked `a.runs` times after one untimed: p50, p95 and max, and which pages pass
/// 100 ms at p95.
async fn time_pages(
    browser: &reqwest::Client,
    a: &PagesArgs,
    paths: &[(String, String)],
) -> anyhow::Result<bool> {
    println!(
        "{:<28} {:>9} {:>9} {:>9}  bytes",
        "page", "p50", "p95", "max"
    );
    let (mut ok, mut over) = (true, Vec::new());
    for (label, path) in paths {
        let mut lat = Vec::with_capacity(a.runs);
        let mut bytes = 0;
        for run in 0..=a.runs {
            let at = Instant::now();
            let r = match path.strip_prefix("POST ").and_then(|p| p.split_once(" q=")) {
                Some((p, q)) => {
                    browser
                        .post(format!("{}{p}", a.url))
                        .form(&[("q", q)])
                        .send()
                        .await?
                }
                None => browser.get(format!("{}{path}", a.url)).send().await?,
            };
            let status = r.status().as_u16();
            let body = r.bytes().await?;
            let took = at.elapsed();
            if status != 200 {
                println!("{label:<28} answered {status}: {path}");
                ok = false;
                break;
            }
            bytes = body.len();
            if run > 0 {
                lat.push(took.as_micros() as u64);
            }
        }
        if lat.is_empty() {
            continue;
        }
        lat.sort_unstable();
        let p95 = percentile(&lat, 0.95);
        if p95 > 100.0 {
            over.push(label.clone());
        }
        println!(
            "{label:<28} {:>9} {:>9} {:>9}  {bytes}",
            ms(&lat, 0.5),
            ms(&lat, 0.95),
            ms(&lat, 1.0)
        );
    }
    if over.is_empty() {
        println!("every page    p95 <= 100 ms");
    } else {
        println!("over 100 ms   {}", over.join(", "));
    }
    Ok(ok)
}
