//! The race: many clients at once against one server, their answers tallied and reported.

#[allow(unused_imports)]
use super::*;

#[derive(Default)]
pub(super) struct Tally {
    pub(super) accepted: usize,
    pub(super) rejected: usize,
    pub(super) errors: usize,
    /// The first few unexpected answers, to say what went wrong.
    pub(super) first_errors: Vec<String>,
    pub(super) latencies_us: Vec<u64>,
    /// Every answer: (when it came, in µs from the start; accepted; its latency in µs).
    pub(super) answers: Vec<(u64, bool, u64)>,
    /// The attempts (their index) that got no clear answer: the caller may ask again.
    pub(super) unknown: Vec<usize>,
}

/// The sold-out phase: the answers after the last acceptance, when every answer is a "no".
/// Its rate is what issue 6 compares (the "no" path), apart from the time the sales themselves
/// took, which differs between the modes. None when nothing was accepted or nothing came after.
pub(super) struct SoldOut {
    pub(super) after_s: f64,
    pub(super) refusals: usize,
    pub(super) per_s: f64,
    pub(super) p99_ms: f64,
}

impl Tally {
    pub(super) fn sold_out(&self, elapsed: f64) -> Option<SoldOut> {
        let last = self.answers.iter().filter(|a| a.1).map(|a| a.0).max()?;
        let mut lat: Vec<u64> = self
            .answers
            .iter()
            .filter(|a| a.0 > last && !a.1)
            .map(|a| a.2)
            .collect();
        let span = elapsed - last as f64 / 1e6;
        if lat.is_empty() || span <= 0.0 {
            return None;
        }
        lat.sort_unstable();
        Some(SoldOut {
            after_s: last as f64 / 1e6,
            refusals: lat.len(),
            per_s: lat.len() as f64 / span,
            p99_ms: percentile(&lat, 0.99),
        })
    }
}

pub(super) fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

pub(super) async fn post(
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
pub(super) enum Outcome {
    /// Accepted, with whatever the scenario needs to check afterwards (customers, codes).
    Accepted(Vec<String>),
    Rejected,
    /// Neither: the status and the start of the body, or the transport error.
    Error(String),
}

impl Outcome {
    pub(super) fn unexpected(r: anyhow::Result<(u16, Vec<u8>)>) -> Outcome {
        Outcome::Error(match r {
            Ok((status, body)) => {
                let body = String::from_utf8_lossy(&body);
                format!(
                    "HTTP {status} {}",
                    body.chars().take(300).collect::<String>()
                )
            }
            Err(e) => format!("no answer: {e:#}"),
        })
    }
}

/// Fires `c.attempts` calls over `c.concurrency` workers, each with its own connection, each call
/// given the connection (handed back with the outcome) and its index; collects outcomes, latencies
/// and the accepted payloads. Returns the tally and the elapsed seconds.
pub(super) async fn race<F, Fut>(
    c: &Arc<Common>,
    attempt: F,
) -> anyhow::Result<(Tally, Vec<String>, f64)>
where
    F: Fn(lean::Conn, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = (Outcome, Duration, lean::Conn)> + Send,
{
    let attempt = Arc::new(attempt);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..c.concurrency {
        let (c, next, attempt) = (c.clone(), next.clone(), attempt.clone());
        let mut conn = Some(lean::Conn::new(&c.url, &c.api_key)?);
        workers.push(tokio::spawn(async move {
            let mut t = Tally::default();
            let mut payload = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= c.attempts {
                    break (t, payload);
                }
                let (outcome, latency, back) = attempt(conn.take().expect("handed back"), i).await;
                conn = Some(back);
                let latency = latency.as_micros() as u64;
                t.latencies_us.push(latency);
                t.answers.push((
                    started.elapsed().as_micros() as u64,
                    matches!(outcome, Outcome::Accepted(_)),
                    latency,
                ));
                match outcome {
                    Outcome::Accepted(p) => {
                        t.accepted += 1;
                        payload.extend(p);
                    }
                    Outcome::Rejected => t.rejected += 1,
                    Outcome::Error(e) => {
                        t.errors += 1;
                        t.unknown.push(i);
                        if t.first_errors.len() < 3 {
                            t.first_errors.push(e);
                        }
                    }
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
        all.first_errors.extend(t.first_errors);
        all.latencies_us.extend(t.latencies_us);
        all.answers.extend(t.answers);
        all.unknown.extend(t.unknown);
        payload.extend(p);
    }
    all.latencies_us.sort_unstable();
    // For looking into a tail: every answer's time (since the race started, when it came back),
    // whether it was accepted, and its latency, in µs.
    if let Ok(path) = std::env::var("SELLABLE_BENCH_ANSWERS") {
        let mut csv = String::from("done_us,accepted,latency_us\n");
        let mut answers = all.answers.clone();
        answers.sort_unstable();
        for (done, accepted, latency) in answers {
            csv.push_str(&format!("{done},{},{latency}\n", u8::from(accepted)));
        }
        std::fs::write(path, csv)?;
    }
    Ok((all, payload, started.elapsed().as_secs_f64()))
}

/// The lines every scenario prints.
pub(super) fn report(scenario: &str, c: &Common, t: &Tally, elapsed: f64, latency_note: &str) {
    println!("scenario      {scenario}");
    println!("server        {}", c.url);
    println!("elapsed       {elapsed:.2} s");
    println!("attempts/s    {:.0}", c.attempts as f64 / elapsed);
    println!("accepted      {}", t.accepted);
    println!("accepted/s    {:.0}", t.accepted as f64 / elapsed);
    println!("rejected      {}", t.rejected);
    println!("rejected/s    {:.0}", t.rejected as f64 / elapsed);
    println!("errors        {}", t.errors);
    for e in t.first_errors.iter().take(3) {
        println!("  error       {e}");
    }
    println!(
        "p50 latency   {:.2} ms{latency_note}",
        percentile(&t.latencies_us, 0.50)
    );
    println!(
        "p99 latency   {:.2} ms{latency_note}",
        percentile(&t.latencies_us, 0.99)
    );
    if let Some(so) = t.sold_out(elapsed) {
        println!("sold out at   {:.2} s  (the last acceptance)", so.after_s);
        println!(
            "accept rate   {:.0}/s  (accepted over the time to the last acceptance)",
            t.accepted as f64 / so.after_s
        );
        println!(
            "sold-out/s    {:.0}  ({} refusals after it, over the time after it)",
            so.per_s, so.refusals
        );
        println!("sold-out p99  {:.2} ms{latency_note}", so.p99_ms);
    }
}
