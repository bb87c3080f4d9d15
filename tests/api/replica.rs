//! Reads off the primary (issue 21): with DATABASE_READ_URL, the sellable listing, the stock report
//! and the ledger come from a streaming replica while it keeps up. Decisions never do, nor the
//! pages of whoever just changed something, and a replica too far behind or down is passed over.
//!
//! The tests stop the replica's replay (`pg_wal_replay_pause()`) to make its lag visible, so the
//! ones that do take turns on the shared replica (`.ci/pg-replica`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sqlx::Connection;

use crate::helpers::{replica_admin_url, with_database, Api, Backend, TestApp};

/// Held by a test while it pauses the shared replica's replay.
static REPLAY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn on_replica(admin_url: &str, sql: &str) {
    let mut c = sqlx::AnyConnection::connect(admin_url).await.unwrap();
    sqlx::query(sql).execute(&mut c).await.unwrap();
}

/// Stops the replica's replay and waits until it has stopped.
async fn pause(admin_url: &str) {
    on_replica(admin_url, "SELECT pg_wal_replay_pause()").await;
    wait("replay to pause", || async {
        let mut c = sqlx::AnyConnection::connect(admin_url).await.unwrap();
        sqlx::query_scalar::<_, String>("SELECT pg_get_wal_replay_pause_state()")
            .fetch_one(&mut c)
            .await
            .unwrap()
            == "paused"
    })
    .await;
}

async fn resume(admin_url: &str) {
    on_replica(admin_url, "SELECT pg_wal_replay_resume()").await;
}

/// Polls `ok` every 100 ms for up to 60 s.
async fn wait<F, Fut>(what: &str, mut ok: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = Instant::now();
    while !ok().await {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waited 60 s for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An app on PostgreSQL whose read replica is the shared standby's copy of its database.
async fn replica_app(admin_url: &str, max_lag_seconds: u64) -> Option<TestApp> {
    let admin_url = admin_url.to_string();
    TestApp::spawn_with(Backend::Postgres, move |c| {
        let name = c
            .global
            .database_url
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        c.global.database_read_url = Some(with_database(&admin_url, &name));
        c.serve.read_max_lag_seconds = max_lag_seconds;
    })
    .await
}

async fn ready(app: &TestApp) -> Value {
    reqwest::get(app.url("/readyz"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Waits until the replica is in use and holds everything committed before this call.
async fn caught_up(app: &TestApp) {
    let since = now_ms();
    wait("the replica to catch up", || async {
        // Taken before asking: the lag is the server's, measured later, so this errs on the
        // side of "not yet".
        let asked = now_ms();
        let r = ready(app).await;
        let lag_ms = r["replica_lag_seconds"].as_f64().map(|s| s * 1000.0);
        r["replica"] == "ok" && lag_ms.is_some_and(|l| asked as f64 - l > since as f64)
    })
    .await;
}

/// Resumes the replica's replay when dropped, so that a test failing while it stands still does
/// not leave it so.
struct Resume(String);

impl Drop for Resume {
    fn drop(&mut self) {
        let url = self.0.clone();
        let _ = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(resume(&url))
        })
        .join();
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The shared replica, this test's turn to stop it, an app reading it with `max_lag_seconds`, and
/// acme's client with 10 units of TEA.
async fn on_the_replica(
    max_lag_seconds: u64,
) -> Option<(String, tokio::sync::MutexGuard<'static, ()>, TestApp, Api)> {
    let admin = replica_admin_url().await?;
    let turn = REPLAY.lock().await;
    resume(&admin).await;
    let app = replica_app(&admin, max_lag_seconds).await?;
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    Some((admin, turn, app, api))
}

/// A figure of `sku`'s row in a JSON list: the `field` of the row of `list` whose `sku` is it.
async fn figure(api: &Api, path: &str, list: &str, sku: &str, field: &str) -> i64 {
    let (s, b) = api.get(path).await;
    assert_eq!(s, 200, "{b}");
    b[list]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["sku"] == sku)
        .unwrap_or_else(|| panic!("{sku} not in {path}: {b}"))[field]
        .as_i64()
        .unwrap()
}

/// The listing's quantity for `sku`.
async fn listed(api: &Api, sku: &str) -> i64 {
    figure(api, "/api/v1/sellable?status=all", "items", sku, "quantity").await
}

async fn reported_available(api: &Api, sku: &str) -> i64 {
    figure(api, "/api/v1/stock/report", "rows", sku, "available").await
}

async fn ledger_kinds(api: &Api, sku: &str) -> Vec<String> {
    let (s, b) = api.get(&format!("/api/v1/skus/{sku}/ledger")).await;
    assert_eq!(s, 200, "{b}");
    b["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The same API key in a client that keeps cookies, as a browser does.
fn with_cookies(api: &Api) -> Api {
    Api {
        base: api.base.clone(),
        key: api.key.clone(),
        http: reqwest::Client::builder()
            .cookie_store(true)
            .build()
            .unwrap(),
        clock: api.clock.clone(),
    }
}

#[tokio::test]
async fn listings_reports_and_the_ledger_read_the_replica_while_decisions_and_the_writers_own_reads_see_the_primary(
) {
    let Some((admin, _turn, app, api)) = on_the_replica(300).await else {
        return;
    };
    // A merchant admin signed in (a change: its answer carries the cookie) before the replica
    // stops, so its reads may go to the replica.
    let admin_page = app.signed_in("merchant_admin", Some("acme")).await;
    caught_up(&app).await;
    assert_eq!(listed(&api, "TEA").await, 10);

    pause(&admin).await;
    let _resume = Resume(admin.clone());
    let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 3}])).await;
    assert_eq!(s, 201, "{b}");
    // The decision is the primary's: 7 are left, not the replica's 10.
    let (s, b) = api.reserve("o-2", json!([{"sku": "TEA", "qty": 8}])).await;
    assert_eq!(
        (s, b["error"].as_str()),
        (409, Some("insufficient_stock")),
        "{b}"
    );

    // What may lag does: the replica has not replayed the hold.
    assert_eq!(
        listed(&api, "TEA").await,
        10,
        "the listing reads the replica"
    );
    assert_eq!(
        reported_available(&api, "TEA").await,
        10,
        "the report reads the replica"
    );
    assert!(
        !ledger_kinds(&api, "TEA")
            .await
            .contains(&"RESERVE".to_string()),
        "the ledger reads the replica"
    );
    let csv = admin_page
        .get(app.url("/admin/stock/report.csv"))
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), 200);
    let body = csv.text().await.unwrap();
    let body = body.trim_start_matches('\u{feff}');
    let tea = csv::Reader::from_reader(body.as_bytes())
        .records()
        .map(Result::unwrap)
        .find(|r| &r[0] == "TEA")
        .expect("TEA row");
    // The figures as the replica has them: 10 on hand, 10 available, none committed.
    assert_eq!((&tea[3], &tea[4], &tea[5]), ("10", "10", "0"), "{tea:?}");
    // One SKU's verdict is not a listing: it is the primary's.
    let (s, b) = api.get("/api/v1/skus/TEA/sellable").await;
    assert_eq!((s, b["quantity"].as_i64()), (200, Some(7)), "{b}");

    // Whoever changes something reads it back at once, from the primary.
    let writer = with_cookies(&api);
    let (s, b) = writer
        .reserve("o-3", json!([{"sku": "TEA", "qty": 1}]))
        .await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(listed(&writer, "TEA").await, 6);
    assert_eq!(reported_available(&writer, "TEA").await, 6);
    assert!(ledger_kinds(&writer, "TEA")
        .await
        .contains(&"RESERVE".to_string()));
    // Others still see the replica.
    assert_eq!(listed(&api, "TEA").await, 10);

    resume(&admin).await;
    wait("the replica to replay the holds", || async {
        listed(&api, "TEA").await == 6
    })
    .await;
    assert_eq!(reported_available(&api, "TEA").await, 6);
    assert_eq!(ready(&app).await["replica"], "ok");
    app.assert_ledger_replays().await;
}

#[tokio::test]
async fn a_replica_further_behind_than_allowed_is_passed_over_for_the_primary() {
    let Some((admin, _turn, app, api)) = on_the_replica(2).await else {
        return;
    };
    caught_up(&app).await;

    pause(&admin).await;
    let _resume = Resume(admin.clone());
    let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 4}])).await;
    assert_eq!(s, 201, "{b}");
    // Within two seconds or so the replica is too far behind, and reads go to the primary.
    wait("reads to leave a lagging replica", || async {
        listed(&api, "TEA").await == 6
    })
    .await;
    assert_ne!(ready(&app).await["replica"], "ok");
    assert_eq!(reported_available(&api, "TEA").await, 6);

    resume(&admin).await;
    wait("the replica to be used again", || async {
        ready(&app).await["replica"] == "ok"
    })
    .await;
    assert_eq!(listed(&api, "TEA").await, 6);
}

#[tokio::test]
async fn a_replica_that_does_not_answer_sends_every_read_to_the_primary_and_the_instance_stays_ready(
) {
    // Nothing listens on port 1: the service starts, and reads go to the primary.
    let Some(app) = TestApp::spawn_with(Backend::Postgres, |c| {
        c.global.database_read_url = Some("postgres://postgres@127.0.0.1:1/none".into());
    })
    .await
    else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 3}])).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(listed(&api, "TEA").await, 7);
    assert_eq!(reported_available(&api, "TEA").await, 7);
    assert!(ledger_kinds(&api, "TEA")
        .await
        .contains(&"RESERVE".to_string()));
    let r = ready(&app).await;
    assert_eq!(
        (r["status"].as_str(), r["replica"].as_str()),
        (Some("ready"), Some("unreachable")),
        "{r}"
    );
}

#[tokio::test]
async fn a_read_the_replica_fails_is_read_again_from_the_primary() {
    // The primary's own server, another database on it: the probe finds it up to date (the
    // same server), and every read there fails (no tables), as a replica's read does when it
    // goes down between two probes.
    let Some(app) = TestApp::spawn_with(Backend::Postgres, |c| {
        c.global.database_read_url = Some(with_database(&c.global.database_url, "postgres"));
    })
    .await
    else {
        return;
    };
    wait("the probe to find the replica up to date", || async {
        ready(&app).await["replica"] == "ok"
    })
    .await;
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 10).await;
    let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 3}])).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(listed(&api, "TEA").await, 7);
    assert_eq!(reported_available(&api, "TEA").await, 7);
    assert!(ledger_kinds(&api, "TEA")
        .await
        .contains(&"RESERVE".to_string()));
}

#[tokio::test]
async fn a_read_url_beside_sqlite_is_refused_at_start() {
    let dir = std::env::temp_dir().join(format!("sellable-test-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut config =
        sellable::Config::for_database(&format!("sqlite://{}", dir.join("sellable.db").display()));
    config.global.code_key_file = dir.join("keys.json");
    config.serve.upload_dir = dir.join("uploads");
    config.global.database_read_url = Some("postgres://postgres@127.0.0.1:5432/postgres".into());
    let refused = sellable::build(config).await.err().expect("refused");
    assert!(
        refused.to_string().contains("DATABASE_READ_URL"),
        "{refused}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
