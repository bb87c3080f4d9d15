//! Load generator for sellable's hot paths, run against a server that is already up.
//!
//!   KEY=$(sellable apikey create --merchant demo)
//!   cargo run --release --bin sellable-bench -- flash-sale --api-key "$KEY" --units 1000 --attempts 20000 --concurrency 64
//!
//! Each scenario seeds what it needs through the public API, fires its requests, reads the result
//! back and checks the invariant that matters (for a flash sale: nothing oversold).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};

#[derive(Parser)]
#[command(
    name = "sellable-bench",
    about = "Load scenarios against a running sellable server"
)]
struct Cli {
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Subcommand)]
enum Scenario {
    /// One SKU with N units; M single-unit reservations race for them over C connections.
    FlashSale(FlashSale),
    /// One slot with K places; M bookings (each customer tries twice) race over C connections.
    HotSlot(HotSlot),
    /// A voucher SKU with N codes; M orders of one code race over C connections, paying at once.
    CodeSale(CodeSale),
    /// Uploads a generated file of N codes and times the import to the end.
    Import(ImportArgs),
}

#[derive(Args)]
struct CodeSale {
    #[command(flatten)]
    common: Common,
    /// Codes on sale.
    #[arg(long, short = 'n', default_value_t = 1_000)]
    codes: usize,
}

#[derive(Args)]
struct ImportArgs {
    #[arg(long, env = "SELLABLE_URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    #[arg(long, env = "SELLABLE_API_KEY")]
    api_key: String,
    /// Codes in the file.
    #[arg(long, default_value_t = 1_000_000)]
    count: usize,
}

#[derive(Args)]
struct HotSlot {
    #[command(flatten)]
    common: Common,
    /// Places in the slot.
    #[arg(long, short = 'k', default_value_t = 100)]
    capacity: i64,
}

#[derive(Args)]
struct Common {
    /// Base URL of the running server.
    #[arg(long, env = "SELLABLE_URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    /// API key of the merchant to sell for.
    #[arg(long, env = "SELLABLE_API_KEY")]
    api_key: String,
    /// Concurrent connections.
    #[arg(long, short = 'c', default_value_t = 64)]
    concurrency: usize,
    /// Total attempts.
    #[arg(long, short = 'm', default_value_t = 20_000)]
    attempts: usize,
}

#[derive(Args)]
struct FlashSale {
    #[command(flatten)]
    common: Common,
    /// Units on sale.
    #[arg(long, short = 'n', default_value_t = 1_000)]
    units: i64,
    /// Warehouse to stock (a slug of the merchant).
    #[arg(long, default_value = "main")]
    warehouse: String,
}

#[derive(Default)]
struct Tally {
    accepted: usize,
    rejected: usize,
    errors: usize,
    latencies_us: Vec<u64>,
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

async fn post(
    http: &reqwest::Client,
    c: &Common,
    path: &str,
    body: Value,
) -> anyhow::Result<(u16, Value)> {
    let r = http
        .post(format!("{}{}", c.url, path))
        .bearer_auth(&c.api_key)
        .json(&body)
        .send()
        .await?;
    let status = r.status().as_u16();
    Ok((status, r.json().await.unwrap_or(Value::Null)))
}

/// What one attempt came to, with the latency that counts for the scenario.
enum Outcome {
    /// Accepted, with whatever the scenario needs to check afterwards (customers, codes).
    Accepted(Vec<String>),
    Rejected,
    Error,
}

/// Fires `c.attempts` calls over `c.concurrency` workers, each call given its index, and collects
/// outcomes, latencies and the accepted payloads. Returns the tally and the elapsed seconds.
async fn race<F, Fut>(c: &Arc<Common>, attempt: F) -> anyhow::Result<(Tally, Vec<String>, f64)>
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = (Outcome, Duration)> + Send,
{
    let attempt = Arc::new(attempt);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..c.concurrency {
        let (c, next, attempt) = (c.clone(), next.clone(), attempt.clone());
        workers.push(tokio::spawn(async move {
            let mut t = Tally::default();
            let mut payload = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= c.attempts {
                    break (t, payload);
                }
                let (outcome, latency) = attempt(i).await;
                t.latencies_us.push(latency.as_micros() as u64);
                match outcome {
                    Outcome::Accepted(p) => {
                        t.accepted += 1;
                        payload.extend(p);
                    }
                    Outcome::Rejected => t.rejected += 1,
                    Outcome::Error => t.errors += 1,
                }
            }
        }));
    }
    let mut all = Tally::default();
    let mut payload = Vec::new();
    for w in workers {
        let (t, p) = w.await?;
        all.accepted += t.accepted;
        all.rejected += t.rejected;
        all.errors += t.errors;
        all.latencies_us.extend(t.latencies_us);
        payload.extend(p);
    }
    all.latencies_us.sort_unstable();
    Ok((all, payload, started.elapsed().as_secs_f64()))
}

/// The lines every scenario prints.
fn report(scenario: &str, c: &Common, t: &Tally, elapsed: f64, latency_note: &str) {
    println!("scenario      {scenario}");
    println!("server        {}", c.url);
    println!("elapsed       {elapsed:.2} s");
    println!("attempts/s    {:.0}", c.attempts as f64 / elapsed);
    println!("accepted      {}", t.accepted);
    println!("rejected      {}", t.rejected);
    println!("rejected/s    {:.0}", t.rejected as f64 / elapsed);
    println!("errors        {}", t.errors);
    println!(
        "p50 latency   {:.2} ms{latency_note}",
        percentile(&t.latencies_us, 0.50)
    );
    println!(
        "p99 latency   {:.2} ms{latency_note}",
        percentile(&t.latencies_us, 0.99)
    );
}

async fn flash_sale(s: FlashSale) -> anyhow::Result<bool> {
    let c = Arc::new(s.common);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(c.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    let sku = format!("BENCH-{}", chrono::Utc::now().format("%Y%m%d%H%M%S%3f"));
    let (st, b) = post(
        &http,
        &c,
        "/api/v1/products",
        json!({"name": format!("Flash sale {sku}"), "kind": "goods", "status": "ONLINE",
        "skus": [{"code": sku, "name": "bench", "price": 100}]}),
    )
    .await?;
    anyhow::ensure!(st == 201, "creating the product failed: {st} {b}");
    let (st, b) = post(
        &http,
        &c,
        "/api/v1/stock/adjustments",
        json!({"sku": sku, "warehouse": s.warehouse, "kind": "RECEIVE",
        "qty": s.units, "reason": "flash sale bench", "idempotency_key": format!("{sku}-seed")}),
    )
    .await?;
    anyhow::ensure!(st == 201, "seeding stock failed: {st} {b}");

    let (all, _, elapsed) = {
        let (c2, http, sku) = (c.clone(), http.clone(), sku.clone());
        race(&c, move |i| {
            let (c, http, sku) = (c2.clone(), http.clone(), sku.clone());
            async move {
                let body = json!({"order_id": format!("{sku}-{i}"), "items": [{"sku": sku, "qty": 1}], "ttl_seconds": 3600});
                let at = Instant::now();
                let outcome = match post(&http, &c, "/api/v1/reservations", body).await {
                    Ok((201, _)) => Outcome::Accepted(Vec::new()),
                    Ok((409, b)) if b["error"] == "insufficient_stock" => Outcome::Rejected,
                    _ => Outcome::Error,
                };
                (outcome, at.elapsed())
            }
        })
        .await?
    };

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
    println!("oversold      {oversold}  (must be 0)");
    println!(
        "consistent    {}  (locked == accepted, total == N)",
        if consistent { "yes" } else { "NO" }
    );
    Ok(oversold == 0 && consistent && all.errors == 0)
}

async fn hot_slot(s: HotSlot) -> anyhow::Result<bool> {
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
    let (st, b) = post(
        &http,
        &c,
        "/api/v1/slots",
        json!({"sku": sku, "starts_at": start.to_rfc3339(),
        "ends_at": (start + chrono::Duration::hours(1)).to_rfc3339(), "capacity": s.capacity}),
    )
    .await?;
    anyhow::ensure!(st == 201, "creating the slot failed: {st} {b}");
    let slot_id = b["id"].as_i64().unwrap_or_default();

    let (all, mut winners, elapsed) = {
        let (c2, http) = (c.clone(), http.clone());
        race(&c, move |i| {
            let (c, http) = (c2.clone(), http.clone());
            async move {
                // Every customer tries twice (a double submit with a fresh key).
                let customer = i / 2;
                let body = json!({"slot_id": slot_id, "name": format!("Customer {customer}"),
                    "phone": format!("+1 555 {customer:07}"), "idempotency_key": format!("hot-{slot_id}-{i}")});
                let at = Instant::now();
                let outcome = match post(&http, &c, "/api/v1/bookings", body).await {
                    Ok((201, _)) => Outcome::Accepted(vec![customer.to_string()]),
                    Ok((409, b)) if b["error"] == "slot_full" || b["error"] == "already_booked" => Outcome::Rejected,
                    _ => Outcome::Error,
                };
                (outcome, at.elapsed())
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
    let from = (start - chrono::Duration::minutes(1))
        .to_rfc3339()
        .replace('+', "%2B");
    let slots: Value = http
        .get(format!("{}/api/v1/services/{sku}/slots?from={from}", c.url))
        .bearer_auth(&c.api_key)
        .send()
        .await?
        .json()
        .await?;
    let booked = slots
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == slot_id))
        .map(|x| x["booked"].as_i64().unwrap_or(-1))
        .unwrap_or(-1);
    let overbooked = (booked - s.capacity).max(0) + (all.accepted as i64 - s.capacity).max(0);
    let consistent = booked == all.accepted as i64;

    report(
        &format!(
            "hot-slot  (K={} places, M={} attempts, C={} connections, 2 tries per customer)",
            s.capacity, c.attempts, c.concurrency
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

/// Creates a voucher SKU and uploads `codes` to it; returns the SKU code once the batch is READY.
async fn seed_codes(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    codes: &[String],
    label: &str,
) -> anyhow::Result<(String, f64, Value)> {
    let sku = format!("{label}-{}", chrono::Utc::now().format("%Y%m%d%H%M%S%3f"));
    let r = http
        .post(format!("{url}/api/v1/products"))
        .bearer_auth(key)
        .json(&json!({"name": format!("Vouchers {sku}"), "kind": "voucher", "status": "ONLINE", "skus": [{"code": sku, "name": "bench", "price": 100}]}))
        .send()
        .await?;
    anyhow::ensure!(
        r.status().as_u16() == 201,
        "creating the voucher SKU failed: {}",
        r.text().await?
    );
    let mut file = String::with_capacity(codes.len() * 16);
    for c in codes {
        file.push_str(c);
        file.push('\n');
    }
    let started = Instant::now();
    let form = reqwest::multipart::Form::new()
        .text("sku", sku.clone())
        .text("mode", "all")
        .part(
            "file",
            reqwest::multipart::Part::bytes(file.into_bytes()).file_name("codes.txt"),
        );
    let r = http
        .post(format!("{url}/api/v1/code-batches"))
        .bearer_auth(key)
        .multipart(form)
        .send()
        .await?;
    anyhow::ensure!(
        r.status().as_u16() == 202,
        "upload failed: {}",
        r.text().await?
    );
    let id = r.json::<Value>().await?["batch_id"]
        .as_i64()
        .unwrap_or_default();
    loop {
        let b: Value = http
            .get(format!("{url}/api/v1/code-batches/{id}"))
            .bearer_auth(key)
            .send()
            .await?
            .json()
            .await?;
        if b["status"] != "CREATING" {
            return Ok((sku, started.elapsed().as_secs_f64(), b));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn random_codes(n: usize) -> Vec<String> {
    use rand::Rng;
    let alphabet = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
    let mut rng = rand::rng();
    let mut seen = std::collections::HashSet::with_capacity(n);
    while seen.len() < n {
        let c: String = (0..14)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
            .collect();
        seen.insert(c);
    }
    seen.into_iter().collect()
}

async fn import(a: ImportArgs) -> anyhow::Result<bool> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()?;
    let codes = random_codes(a.count);
    let (_, secs, batch) = seed_codes(&http, &a.url, &a.api_key, &codes, "IMPORT").await?;
    println!(
        "scenario      import  ({} codes, 14 characters, one per line)",
        a.count
    );
    println!("server        {}", a.url);
    println!("wall time     {secs:.2} s  (upload, parse, encrypt, insert, commit)");
    println!(
        "status        {}  imported={} rejected={}",
        batch["status"], batch["imported"], batch["rejected"]
    );
    Ok(batch["status"] == "READY" && batch["imported"].as_u64() == Some(a.count as u64))
}

async fn code_sale(s: CodeSale) -> anyhow::Result<bool> {
    let c = Arc::new(s.common);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(c.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    let (sku, _, batch) =
        seed_codes(&http, &c.url, &c.api_key, &random_codes(s.codes), "SALE").await?;
    anyhow::ensure!(batch["status"] == "READY", "seeding codes failed: {batch}");
    let (all, sold, elapsed) = {
        let (c2, http, sku) = (c.clone(), http.clone(), sku.clone());
        race(&c, move |i| {
            let (c, http, sku) = (c2.clone(), http.clone(), sku.clone());
            async move {
                let order = format!("{sku}-{i}");
                let at = Instant::now();
                let r = post(
                    &http,
                    &c,
                    "/api/v1/reservations",
                    json!({"order_id": order, "items": [{"sku": sku, "qty": 1}]}),
                )
                .await;
                // The latency that counts is the reserve; paying follows for accepted orders.
                let latency = at.elapsed();
                let outcome = match r {
                    Ok((201, _)) => match post(
                        &http,
                        &c,
                        &format!("/api/v1/reservations/{order}/confirm"),
                        json!({}),
                    )
                    .await
                    {
                        Ok((200, b)) => Outcome::Accepted(
                            b["items"][0]["codes"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(|c| c.as_str().unwrap_or_default().to_string())
                                .collect(),
                        ),
                        _ => Outcome::Error,
                    },
                    Ok((409, b)) if b["error"] == "insufficient_stock" => Outcome::Rejected,
                    _ => Outcome::Error,
                };
                (outcome, latency)
            }
        })
        .await?
    };
    let unique: std::collections::HashSet<&String> = sold.iter().collect();
    let twice = sold.len() - unique.len();
    report(
        &format!("code-sale  ({} codes, M={} attempts, C={} connections, each accepted order pays at once)", s.codes, c.attempts, c.concurrency),
        &c,
        &all,
        elapsed,
        "  (reserve)",
    );
    println!("codes sold    {}", sold.len());
    println!("sold twice    {twice}  (must be 0)");
    Ok(twice == 0 && all.errors == 0 && all.accepted == s.codes.min(c.attempts))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let ok = match cli.scenario {
        Scenario::FlashSale(s) => flash_sale(s).await,
        Scenario::HotSlot(s) => hot_slot(s).await,
        Scenario::CodeSale(s) => code_sale(s).await,
        Scenario::Import(a) => import(a).await,
    };
    match ok {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
