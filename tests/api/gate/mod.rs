//! The Redis gate and reconciliation, and staying correct when Redis or the process fails.
//! The failure tests need a real Redis and PostgreSQL (`pg!`); the SQL identities run on both.

use std::collections::HashMap;

use std::process::{Child, Command, Stdio};

use std::sync::Arc;

use std::time::Duration;

use serde_json::{json, Value};

use crate::both;

use crate::helpers::{Api, Backend, TestApp};

use sellable::domain::reconcile::{self, Correction};

use sellable::domain::{Actor, Scope};

use sellable::infra::counters::{Gate, StockCounts, Subject};

/// A test that only means something against PostgreSQL and Redis: run with one Redis, and
/// with a Redis Cluster (`TEST_REDIS_CLUSTER_URL`, which `.ci/redis-cluster` starts and prints).
/// `pg!(@one_redis name, …)`: with one Redis only, for a test that brings a Redis of its own.
#[macro_export]
macro_rules! pg {
    (@postgres |$app:ident| $body:block) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn postgres() {
            let Some($app) =
                $crate::helpers::TestApp::spawn($crate::helpers::Backend::Postgres).await
            else {
                return;
            };
            if $app.redis_url.is_none() {
                $crate::helpers::skip_or_fail("Redis", "the gate's tests need it");
                return;
            }
            $body
        }
    };
    (@one_redis $name:ident, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::pg!(@postgres |$app| $body);
        }
    };
    ($name:ident, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::pg!(@postgres |$app| $body);
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn redis_cluster() {
                let Some(url) = $crate::helpers::redis_cluster_url().await else {
                    return;
                };
                let Some($app) = $crate::helpers::TestApp::spawn_with(
                    $crate::helpers::Backend::Postgres,
                    |c| c.global.redis_url = Some(url),
                )
                .await
                else {
                    return;
                };
                $body
            }
        }
    };
}

fn gate(app: &TestApp) -> Arc<Gate> {
    app.db
        .gate
        .clone()
        .expect("the PostgreSQL test app has the Redis gate")
}

async fn reserve(api: &Api, order: &str, sku: &str, qty: i64) -> (u16, Value) {
    api.reserve(order, json!([{"sku": sku, "qty": qty}])).await
}

/// A new service with one slot of `capacity` places, 30 hours ahead; its id.
async fn service_slot(api: &Api, code: &str, capacity: i64) -> i64 {
    api.product("service", code).await;
    let starts = (api.now() + chrono::Duration::hours(30)).to_rfc3339();
    let ends = (api.now() + chrono::Duration::hours(31)).to_rfc3339();
    let (s, slot) = api
        .post("/api/v1/slots", json!({"sku": code, "store": "main-store", "starts_at": starts, "ends_at": ends, "capacity": capacity}))
        .await;
    assert_eq!(s, 201, "{slot}");
    slot["id"].as_i64().unwrap()
}

/// The merchant a slot belongs to (its Redis keys carry it).
async fn slot_merchant(app: &TestApp, slot: i64) -> i64 {
    sqlx::query_scalar("SELECT merchant_id FROM slots WHERE id = $1")
        .bind(slot)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// A lazy load (a walk-in's booking) that read an open slot from SQL with `remaining` places
/// before a change, writing what it read only now, after the change committed and Redis
/// followed it (or did not, when the slot was not loaded).
async fn late_load(app: &TestApp, g: &Arc<Gate>, slot: i64, remaining: i64) {
    let (merchant, starts_at): (i64, i64) =
        sqlx::query_as("SELECT merchant_id, starts_at FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    let read = sellable::infra::counters::SlotState {
        remaining,
        status: "OPEN".into(),
        closed_reason: String::new(),
        starts_at,
    };
    g.slot_load(merchant, slot, &read).await.unwrap();
}

/// Waits (up to 3 s) for Redis to count `remaining` places in an open slot: a job that beat the
/// test to a change gives places back (or takes them) right after its commit.
async fn until_slot(g: &Arc<Gate>, merchant: i64, slot: i64, remaining: i64, why: &str) {
    let mut seen = None;
    for _ in 0..60 {
        seen = g.slot_read(merchant, slot).await.unwrap();
        if seen == Some((remaining, "OPEN".into())) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{why}: Redis has {seen:?}, not {remaining} places");
}

async fn sku_id(app: &TestApp, code: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM skus WHERE code = $1")
        .bind(code)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

async fn warehouse_id(app: &TestApp, slug: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM warehouses WHERE slug = $1")
        .bind(slug)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// (total, locked, sold, frozen) of one balance.
/// A goods SKU with `units` in the main warehouse, the gate, and the SKU's id.
async fn goods_in_redis(app: &TestApp, code: &str, units: i64) -> (Api, Arc<Gate>, i64) {
    let api = app.acme_api().await;
    api.product("goods", code).await;
    api.receive(code, "main", units).await;
    let sku = sku_id(app, code).await;
    (api, gate(app), sku)
}

/// A voucher SKU `code` with `n` codes imported, the gate and the SKU's id.
async fn vouchers_in_redis(app: &TestApp, code: &str, n: usize) -> (Api, Arc<Gate>, i64) {
    let api = app.acme_api().await;
    api.product("voucher", code).await;
    let codes: String = (0..n).map(|i| format!("{code}-{i:04}-KEY\n")).collect();
    let file = format!("{}.txt", code.to_lowercase());
    let batch = api.import_codes(code, &file, &codes, "valid").await;
    assert_eq!(batch["imported"], n, "{batch}");
    (api, gate(app), sku_id(app, code).await)
}

async fn balance(app: &TestApp, sku: i64) -> (i64, i64, i64, i64) {
    sqlx::query_as("SELECT total, locked, sold, frozen FROM stock_balances WHERE sku_id = $1")
        .bind(sku)
        .fetch_one(&app.db.pool)
        .await
        .unwrap()
}

/// An order of 2 of `sku` paid ("paid") and one of 1 released ("gone"): what each one's retry
/// answers while Redis still has its record (neither is `insufficient_stock`).
async fn paid_and_released(api: &Api, sku: &str) -> ((u16, Value), (u16, Value)) {
    assert_eq!(reserve(api, "paid", sku, 2).await.0, 201);
    let (s, b) = api
        .post("/api/v1/reservations/paid/confirm", json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(reserve(api, "gone", sku, 1).await.0, 201);
    let (s, b) = api
        .post("/api/v1/reservations/gone/release", json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    let paid = reserve(api, "paid", sku, 2).await;
    let gone = reserve(api, "gone", sku, 1).await;
    assert_ne!(paid.1["error"], "insufficient_stock", "{paid:?}");
    assert_ne!(gone.1["error"], "insufficient_stock", "{gone:?}");
    (paid, gone)
}

async fn redis_available(g: &Arc<Gate>, sku: i64) -> Option<i64> {
    g.stock_counts(sku)
        .await
        .ok()
        .flatten()
        .map(|v| v.iter().map(|(_, c)| c.available).sum())
}

/// Many buyers, one unit each, spread over the given APIs; returns the statuses.
async fn flash_sale(apis: &[Api], sku: &str, buyers: usize, tag: &str) -> HashMap<u16, usize> {
    flash_sale_orders(apis, sku, buyers, tag).await.0
}

/// Like [`flash_sale`], with the orders that got their unit.
async fn flash_sale_orders(
    apis: &[Api],
    sku: &str,
    buyers: usize,
    tag: &str,
) -> (HashMap<u16, usize>, Vec<String>) {
    let tasks: Vec<_> = (0..buyers)
        .map(|i| {
            let api = apis[i % apis.len()].clone();
            let sku = sku.to_string();
            let order = format!("{tag}-{i}");
            tokio::spawn(async move { (reserve(&api, &order, &sku, 1).await, order) })
        })
        .collect();
    let mut by = HashMap::new();
    let mut accepted = Vec::new();
    for t in tasks {
        let ((s, b), order) = t.await.unwrap();
        if s == 201 {
            accepted.push(order);
        } else {
            assert_eq!(b["error"], "insufficient_stock", "{s} {b}");
        }
        *by.entry(s).or_insert(0) += 1;
    }
    (by, accepted)
}

fn system() -> Actor {
    Actor::system("test")
}

/// A Redis server of this test's own, so that it can be stopped and started.
struct PrivateRedis {
    port: u16,
    child: Killable,
}

impl PrivateRedis {
    fn start(port: u16) -> PrivateRedis {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs");
        std::thread::sleep(Duration::from_millis(300));
        PrivateRedis {
            port,
            child: Killable(Some(child)),
        }
    }
    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
    fn stop(&mut self) {
        self.child.kill();
    }
}

/// A child process, killed with SIGKILL and reaped when asked or when dropped.
pub(crate) struct Killable(Option<Child>);

impl Killable {
    fn kill(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Killable {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The application as its own process on the test's database (and Redis, if any), so that a test can
/// kill it with SIGKILL mid-request (`Child::kill`) and start it again on the same port.
pub(crate) struct Process {
    app_env: Vec<(String, String)>,
    port: u16,
    pub(crate) base: String,
    child: Killable,
}

impl Process {
    pub(crate) async fn start(app: &TestApp) -> Process {
        Self::start_with(app, &[]).await
    }

    /// `start`, with more environment variables for the process.
    pub(crate) async fn start_with(app: &TestApp, extra: &[(&str, &str)]) -> Process {
        let port = free_port();
        let dir = |d: &str| app.dir.join(d).to_string_lossy().into_owned();
        let mut app_env = [
            ("DATABASE_URL", app.database_url.clone()),
            ("SELLABLE_BIND", format!("127.0.0.1:{port}")),
            ("SELLABLE_CODE_KEY_FILE", dir("code-keys.json")),
            ("SELLABLE_UPLOAD_DIR", dir("uploads")),
            ("SELLABLE_EXPIRY_INTERVAL_SECONDS", "1".to_string()),
            ("SELLABLE_LOG", "warn".to_string()),
            // The test's day: both instances agree on what has expired and started.
            (
                "SELLABLE_CLOCK_OFFSET_MS",
                app.db.clock.offset_ms().to_string(),
            ),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .to_vec();
        // On SQLite alone there is no gate: the process runs without Redis, as the tests' app.
        if let (Some(url), Some(g)) = (&app.redis_url, &app.db.gate) {
            app_env.push(("REDIS_URL".into(), url.clone()));
            app_env.push(("SELLABLE_REDIS_PREFIX".into(), g.prefix().to_string()));
        }
        app_env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut p = Process {
            app_env,
            port,
            base: format!("http://127.0.0.1:{port}"),
            child: Killable(None),
        };
        p.restart().await;
        p
    }

    /// Starts the process (again) and waits until it answers `/healthz`.
    pub(crate) async fn restart(&mut self) {
        self.kill();
        self.child = Killable(Some(
            Command::new(env!("CARGO_BIN_EXE_sellable"))
                .arg("serve")
                .envs(self.app_env.iter().map(|(k, v)| (k, v)))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("server starts"),
        ));
        for _ in 0..100 {
            if reqwest::get(format!("{}/healthz", self.base))
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("server on port {} did not come up", self.port);
    }

    pub(crate) fn kill(&mut self) {
        self.child.kill();
    }
}

/// Another instance of the application on the same database.
async fn instance(
    app: &TestApp,
    redis_url: &str,
    prefix: &str,
) -> (
    String,
    sellable::infra::db::Db,
    tokio::sync::oneshot::Sender<()>,
) {
    let mut config = sellable::Config::for_database(&app.database_url);
    config.global.redis_url = Some(redis_url.to_string());
    config.global.redis_prefix = prefix.to_string();
    config.global.code_key_file = app.dir.join("code-keys.json");
    config.serve.upload_dir = app.dir.join("uploads");
    config.serve.expiry_interval_seconds = 1;
    config.serve.metrics_token = Some(crate::helpers::METRICS_TOKEN.to_string());
    config.clock = app.db.clock.clone();
    let other = sellable::build(config).await.unwrap();
    let base = format!("http://{}", other.local_addr());
    let db = other.state.db.clone();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(other.run_until(async move {
        let _ = rx.await;
    }));
    (base, db, tx)
}

mod codes;
mod failures;
mod goods;
mod ledger;
mod slots;

#[allow(unused_imports)]
use {codes::*, failures::*, goods::*, ledger::*, slots::*};
