//! Codes under load: a large import, and a sale of codes.

#[allow(unused_imports)]
use super::*;

/// Creates a voucher SKU and uploads `codes` to it; returns the SKU code once the batch is READY.
pub(super) async fn seed_codes(
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

pub(super) fn random_codes(n: usize) -> Vec<String> {
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

pub(super) async fn import(a: ImportArgs) -> anyhow::Result<bool> {
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
    Ok(batch["status"] == BatchStatus::Ready.as_str()
        && batch["imported"].as_u64() == Some(a.count as u64))
}

pub(super) async fn code_sale(s: CodeSale) -> anyhow::Result<bool> {
    let c = Arc::new(s.common);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(c.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    let (sku, _, batch) =
        seed_codes(&http, &c.url, &c.api_key, &random_codes(s.codes), "SALE").await?;
    anyhow::ensure!(
        batch["status"] == BatchStatus::Ready.as_str(),
        "seeding codes failed: {batch}"
    );
    let (all, sold, elapsed) = {
        let sku = sku.clone();
        race(&c, move |mut conn, i| {
            let order = format!("{sku}-{i}");
            let body = format!(r#"{{"order_id":"{order}","items":[{{"sku":"{sku}","qty":1}}]}}"#);
            async move {
                let at = Instant::now();
                let r = conn.post("/api/v1/reservations", body).await;
                // The latency that counts is the reserve; paying follows for accepted orders.
                let latency = at.elapsed();
                let outcome = match r {
                    Ok((201, _)) => match conn
                        .post(
                            &format!("/api/v1/reservations/{order}/confirm"),
                            "{}".into(),
                        )
                        .await
                    {
                        Ok((200, b)) => Outcome::Accepted(
                            serde_json::from_slice::<Value>(&b).unwrap_or_default()["items"][0]
                                ["codes"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(|c| c.as_str().unwrap_or_default().to_string())
                                .collect(),
                        ),
                        other => Outcome::unexpected(other),
                    },
                    Ok((409, b))
                        if lean::error_code(&b).as_deref() == Some("insufficient_stock") =>
                    {
                        Outcome::Rejected
                    }
                    other => Outcome::unexpected(other),
                };
                (outcome, latency, conn)
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
