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

use sellable::domain::codes::BatchStatus;

/// The racing requests go through one keep-alive HTTP/1.1 connection per worker, written and read
/// by hand: the load generator shares the machine's two cores with the server it measures, so
/// every microsecond it spends is taken from the server. Through reqwest a request cost about 28 µs
/// of CPU, through hyper's client (a connection task beside each worker) about half of that; here
/// one write and usually one read. Setup and checks use reqwest.
mod lean {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    pub struct Conn {
        addr: String,
        /// The request line's tail and the fixed headers, up to `Content-Length: `.
        head: String,
        stream: Option<TcpStream>,
        buf: Vec<u8>,
        out: Vec<u8>,
    }

    impl Conn {
        pub fn new(url: &str, api_key: &str) -> anyhow::Result<Conn> {
            let addr = url
                .strip_prefix("http://")
                .ok_or_else(|| {
                    anyhow::anyhow!("the racing client speaks plain http://, not {url}")
                })?
                .trim_end_matches('/')
                .to_string();
            Ok(Conn {
                head: format!(
                    " HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {api_key}\r\nContent-Type: application/json\r\nContent-Length: "
                ),
                addr,
                stream: None,
                buf: Vec::with_capacity(4096),
                out: Vec::with_capacity(1024),
            })
        }

        /// POSTs a JSON body; answers the status and the response body. A connection that fails is
        /// dropped and the error returned; the next call opens a new one.
        pub async fn post(&mut self, path: &str, body: String) -> anyhow::Result<(u16, Vec<u8>)> {
            let r = self.exchange(path, &body).await;
            if r.is_err() {
                self.stream = None;
            }
            r
        }

        async fn exchange(&mut self, path: &str, body: &str) -> anyhow::Result<(u16, Vec<u8>)> {
            if self.stream.is_none() {
                let stream = TcpStream::connect(&self.addr).await?;
                stream.set_nodelay(true)?;
                self.stream = Some(stream);
                self.buf.clear();
            }
            let stream = self.stream.as_mut().expect("connected above");
            self.out.clear();
            self.out.extend_from_slice(b"POST ");
            self.out.extend_from_slice(path.as_bytes());
            self.out.extend_from_slice(self.head.as_bytes());
            self.out
                .extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
            self.out.extend_from_slice(b"\r\n\r\n");
            self.out.extend_from_slice(body.as_bytes());
            stream.write_all(&self.out).await?;
            loop {
                if let Some((status, head_len, body_len, close)) = parse_head(&self.buf)? {
                    let total = head_len + body_len;
                    while self.buf.len() < total {
                        read_more(stream, &mut self.buf).await?;
                    }
                    let body = self.buf[head_len..total].to_vec();
                    self.buf.drain(..total);
                    if close {
                        self.stream = None;
                    }
                    return Ok((status, body));
                }
                read_more(stream, &mut self.buf).await?;
            }
        }
    }

    async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> anyhow::Result<()> {
        buf.reserve(4096);
        if stream.read_buf(buf).await? == 0 {
            anyhow::bail!("the server closed the connection");
        }
        Ok(())
    }

    /// A complete response head in `buf`: (status, head length, Content-Length, Connection:
    /// close), or None while it is still arriving. The server answers these requests with a
    /// length, never chunked.
    fn parse_head(buf: &[u8]) -> anyhow::Result<Option<(u16, usize, usize, bool)>> {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            return Ok(None);
        };
        let head = std::str::from_utf8(&buf[..end])?;
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| anyhow::anyhow!("not an HTTP status line"))?;
        let (mut len, mut close) = (None, false);
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                len = Some(value.parse()?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                anyhow::bail!("chunked answers are not expected here");
            } else if name.eq_ignore_ascii_case("connection") {
                close = value.eq_ignore_ascii_case("close");
            }
        }
        let len = len.ok_or_else(|| anyhow::anyhow!("an answer without Content-Length"))?;
        Ok(Some((status, end + 4, len, close)))
    }

    /// The stable `error` code of a JSON error body, without building a whole JSON value.
    pub fn error_code(body: &[u8]) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct E {
            error: String,
        }
        serde_json::from_slice::<E>(body).ok().map(|e| e.error)
    }
}

mod codes;
mod ops;
mod race;
mod reads;
mod sales;

use codes::*;
use ops::*;
use race::*;
use reads::*;
use sales::*;

#[derive(Parser)]
#[command(
    name = "sellable-bench",
    about = "Load scenarios against a running sellable server"
)]
struct Cli {
    #[command(subcommand)]
    pub(crate) scenario: Scenario,
    /// Runtime threads of the load generator.
    #[arg(
        long,
        global = true,
        env = "SELLABLE_BENCH_THREADS",
        default_value_t = 1
    )]
    pub(crate) threads: usize,
}

#[derive(Subcommand)]
enum Scenario {
    /// One SKU with N units; M single-unit reservations race for them over C connections.
    FlashSale(FlashSale),
    /// Serves the sold-out answer of a flash sale from a bare axum handler, with nothing behind
    /// it: the ceiling `ceiling` measures, on the same box, to put the server's refusals beside.
    Bare(BareArgs),
    /// Fires M reservations over C connections at a server and counts its answers (run against
    /// `bare`, it is the HTTP ceiling).
    Ceiling(Common),
    /// One slot with K places; M bookings (each customer tries twice) race over C connections.
    HotSlot(HotSlot),
    /// A voucher SKU with N codes; M orders of one code race over C connections, paying at once.
    CodeSale(CodeSale),
    /// A goods SKU with N units and a slot with K places; M orders of one unit and one place
    /// (each for its own customer) race over C connections. Every order is whole or refused.
    CombinedOrder(CombinedOrder),
    /// Uploads a generated file of N codes and times the import to the end.
    Import(ImportArgs),
    /// Seeds a catalog of N SKUs (goods, services, vouchers) and times the sellable listing and
    /// single verdicts.
    Catalog(CatalogArgs),
    /// Seeds N SKUs and one voucher of M codes (1,000,000 by default), signs in to the back office
    /// and times its pages: the dashboard, "Not sellable", the codes pages, the big batch's pages
    /// (first, middle, last, by status, a search) and every list.
    Pages(PagesArgs),
    /// Queues N stock events for a paused webhook whose receiver is this process, resumes it,
    /// and times the outbox draining them (the server needs SELLABLE_WEBHOOK_ALLOW_PRIVATE=1).
    WebhookDrain(DrainArgs),
    /// Writes N goods SKUs with L ledger rows (and as many events) straight into the server's
    /// database, times a full reconciliation, changes K SKUs through the API, then times the run
    /// that checks only what changed.
    Reconcile(ReconcileArgs),
}

#[derive(Args)]
struct ReconcileArgs {
    #[arg(long, env = "SELLABLE_URL", default_value = "http://127.0.0.1:8080")]
    pub(crate) url: String,
    #[arg(long, env = "SELLABLE_API_KEY")]
    pub(crate) api_key: String,
    /// The server's database (the seed is written there directly: through the API it would take
    /// hours).
    #[arg(long, env = "DATABASE_URL")]
    pub(crate) database_url: String,
    /// Goods SKUs, one balance each in the merchant's first warehouse.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) skus: i64,
    /// Ledger rows in all (receipts of one unit, spread evenly over the SKUs), each with its event.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) ledger: i64,
    /// SKUs changed through the API between the full run and the changed-only one.
    #[arg(long, default_value_t = 100)]
    pub(crate) changed: usize,
}

#[derive(Args)]
struct BareArgs {
    #[arg(long, default_value = "127.0.0.1:18182")]
    pub(crate) bind: String,
}

#[derive(Args)]
struct DrainArgs {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Events queued before the webhook is resumed.
    #[arg(long, short = 'n', default_value_t = 10_000)]
    pub(crate) events: usize,
    #[arg(long, default_value = "main")]
    pub(crate) warehouse: String,
}

#[derive(Args)]
struct CatalogArgs {
    #[arg(long, env = "SELLABLE_URL", default_value = "http://127.0.0.1:8080")]
    pub(crate) url: String,
    #[arg(long, env = "SELLABLE_API_KEY")]
    pub(crate) api_key: String,
    /// SKUs to seed: 60% goods, 20% services, 20% vouchers.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) skus: usize,
    /// Timed requests of each listing.
    #[arg(long, default_value_t = 20)]
    pub(crate) runs: usize,
    /// Single verdicts timed, one after the other.
    #[arg(long, default_value_t = 500)]
    pub(crate) verdicts: usize,
    /// Codes uploaded per voucher SKU.
    #[arg(long, default_value_t = 20)]
    pub(crate) codes_per_voucher: usize,
}

#[derive(Args)]
struct PagesArgs {
    #[arg(long, env = "SELLABLE_URL", default_value = "http://127.0.0.1:8080")]
    pub(crate) url: String,
    #[arg(long, env = "SELLABLE_API_KEY")]
    pub(crate) api_key: String,
    /// A merchant admin of the API key's merchant (the demo's by default).
    #[arg(long, default_value = "admin@demo.local")]
    pub(crate) email: String,
    #[arg(long, default_value = "admin-demo-1")]
    pub(crate) password: String,
    /// SKUs of the catalog: 60% goods, 20% services, 20% vouchers of 20 codes.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) skus: usize,
    /// Codes of the one big voucher.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) codes: usize,
    /// Timed requests of each page (after one that warms caches).
    #[arg(long, default_value_t = 20)]
    pub(crate) runs: usize,
    /// A shell command run after seeding, before timing: `bench/run.sh` passes `sellable
    /// analyze`, so the pages are timed on a database whose planner statistics are as a running
    /// service keeps them (the hourly job on SQLite, autovacuum on PostgreSQL), not as a bulk load
    /// a second ago left them.
    #[arg(long)]
    pub(crate) settle: Option<String>,
}

#[derive(Args)]
struct CodeSale {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Codes on sale.
    #[arg(long, short = 'n', default_value_t = 1_000)]
    pub(crate) codes: usize,
}

#[derive(Args)]
struct ImportArgs {
    #[arg(long, env = "SELLABLE_URL", default_value = "http://127.0.0.1:8080")]
    pub(crate) url: String,
    #[arg(long, env = "SELLABLE_API_KEY")]
    pub(crate) api_key: String,
    /// Codes in the file.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) count: usize,
}

#[derive(Args)]
struct CombinedOrder {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Units of the goods SKU.
    #[arg(long, short = 'n', default_value_t = 1_000)]
    pub(crate) units: i64,
    /// Places in the slot (at most 1,000; default: as many as units).
    #[arg(long, short = 'k')]
    pub(crate) capacity: Option<i64>,
}

#[derive(Args)]
struct HotSlot {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Places in the slot.
    #[arg(long, short = 'k', default_value_t = 100)]
    pub(crate) capacity: i64,
    /// Tries per customer (2: a double submit with a fresh key; 1: every attempt a new customer).
    #[arg(long, default_value_t = 2)]
    pub(crate) tries: usize,
    /// Bookings made first on another slot of the service, untimed (at most 1,000): the server
    /// then has its database connections open and its statements prepared, as a running server
    /// does, and the race measures that rather than its first second.
    #[arg(long, default_value_t = 0)]
    pub(crate) warm_up: usize,
}

#[derive(Args)]
struct Common {
    /// Base URL of the running server.
    #[arg(long, env = "SELLABLE_URL", default_value = "http://127.0.0.1:8080")]
    pub(crate) url: String,
    /// API key of the merchant to sell for.
    #[arg(long, env = "SELLABLE_API_KEY")]
    pub(crate) api_key: String,
    /// Concurrent connections.
    #[arg(long, short = 'c', default_value_t = 64)]
    pub(crate) concurrency: usize,
    /// Total attempts.
    #[arg(long, short = 'm', default_value_t = 20_000)]
    pub(crate) attempts: usize,
}

#[derive(Args)]
struct FlashSale {
    #[command(flatten)]
    pub(crate) common: Common,
    /// Units on sale.
    #[arg(long, short = 'n', default_value_t = 1_000)]
    pub(crate) units: i64,
    /// Warehouse to stock (a slug of the merchant).
    #[arg(long, default_value = "main")]
    pub(crate) warehouse: String,
    /// After the race, ask again (same order id) for every attempt that got no clear answer, as
    /// an order system does after a timeout; the checks then count their answers. For runs in
    /// which an instance is killed: a request it was serving is lost, the order must not be.
    #[arg(long)]
    pub(crate) retry_unknown: bool,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let Scenario::Bare(a) = &cli.scenario {
        // The bare server runs as sellable does: tokio's default runtime, a thread per core.
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
        return match runtime.block_on(bare(&a.bind)) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    // One runtime thread by default: the generator shares the cores with the server it measures,
    // and on two cores a second thread cost more in wake-ups between threads than it gave (flash
    // sale: 36% of a core at 34.5k requests/s with one thread, 41% at 33.6k with two).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cli.threads)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> std::process::ExitCode {
    let ok = match cli.scenario {
        Scenario::FlashSale(s) => flash_sale(s).await,
        Scenario::Ceiling(c) => ceiling(c).await,
        Scenario::Bare(_) => unreachable!("served before the load generator's runtime"),
        Scenario::HotSlot(s) => hot_slot(s).await,
        Scenario::CodeSale(s) => code_sale(s).await,
        Scenario::CombinedOrder(s) => combined_order(s).await,
        Scenario::Import(a) => import(a).await,
        Scenario::Pages(a) => pages(a).await,
        Scenario::Catalog(a) => catalog(a).await,
        Scenario::WebhookDrain(a) => webhook_drain(a).await,
        Scenario::Reconcile(a) => reconcile_bench(a).await,
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
