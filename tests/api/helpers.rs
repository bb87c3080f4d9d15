use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use sellable::domain::{tenancy::apikeys, tenancy::tenants, tenancy::users, Actor};
use sellable::infra::clock::Clock;
use sellable::infra::counters::Gate;
use sellable::infra::db::Db;
use sellable::Config;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Runs a test body once per backend: `both!(name_that_says_the_behaviour, |app| { ... });`
#[macro_export]
macro_rules! both {
    ($name:ident, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let Some($app) =
                    $crate::helpers::TestApp::spawn($crate::helpers::Backend::Sqlite).await
                else {
                    return;
                };
                $body
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some($app) =
                    $crate::helpers::TestApp::spawn($crate::helpers::Backend::Postgres).await
                else {
                    return;
                };
                $body
            }
        }
    };
}

/// Runs `async fn name(app: TestApp)` on each day of a week that crosses a month and a year end
/// (Monday 2026-12-28 to Sunday 2027-01-03, at 10:00 in the test stores' timezone), on both
/// backends: `on_each_day!(name_that_says_the_behaviour);`. For the tests whose rules count in
/// days and weeks (schedules, overrides, closures, the waiting list, no-shows, week metrics): a
/// rule that holds on one weekday but not another fails here, whatever day the suite runs.
#[macro_export]
macro_rules! on_each_day {
    ($name:ident) => {
        mod $name {
            $crate::on_each_day!(@day $name, mon_2026_12_28, 2026, 12, 28);
            $crate::on_each_day!(@day $name, tue_2026_12_29, 2026, 12, 29);
            $crate::on_each_day!(@day $name, wed_2026_12_30, 2026, 12, 30);
            $crate::on_each_day!(@day $name, thu_2026_12_31, 2026, 12, 31);
            $crate::on_each_day!(@day $name, fri_2027_01_01, 2027, 1, 1);
            $crate::on_each_day!(@day $name, sat_2027_01_02, 2027, 1, 2);
            $crate::on_each_day!(@day $name, sun_2027_01_03, 2027, 1, 3);
        }
    };
    (@day $name:ident, $day:ident, $y:literal, $m:literal, $d:literal) => {
        mod $day {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let at = $crate::helpers::ten_oclock($y, $m, $d);
                if let Some(app) =
                    $crate::helpers::TestApp::spawn_on($crate::helpers::Backend::Sqlite, at).await
                {
                    super::super::$name(app).await
                }
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let at = $crate::helpers::ten_oclock($y, $m, $d);
                if let Some(app) =
                    $crate::helpers::TestApp::spawn_on($crate::helpers::Backend::Postgres, at)
                        .await
                {
                    super::super::$name(app).await
                }
            }
        }
    };
}

/// 10:00 on that day in the test stores' timezone (Asia/Shanghai).
pub fn ten_oclock(y: i32, m: u32, d: u32) -> chrono::DateTime<chrono::Utc> {
    use chrono::TimeZone;
    chrono_tz::Asia::Shanghai
        .with_ymd_and_hms(y, m, d, 10, 0, 0)
        .single()
        .expect("a day that exists")
        .with_timezone(&chrono::Utc)
}

/// The moment every test starts at unless it says otherwise (`TestApp::spawn_on`): Wednesday
/// 2026-12-09, 10:00 in the test stores' timezone. The app's clock is set to it and moves on
/// at the real pace, so no test depends on the day (or the hour) the suite is run.
pub fn test_day() -> chrono::DateTime<chrono::Utc> {
    ten_oclock(2026, 12, 9)
}

/// Runs `async fn name(backend: Backend)` once per backend, for tests that boot their app with
/// settings of their own (`TestApp::spawn_with`): `on_both!(name_that_says_the_behaviour);`
#[macro_export]
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::helpers::Backend::Sqlite).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::helpers::Backend::Postgres).await
            }
        }
    };
}

pub fn require_services() -> bool {
    std::env::var("REQUIRE_SERVICES").is_ok_and(|v| v == "1" || v == "true")
}

fn admin_pg_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

fn redis_url() -> String {
    std::env::var("TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// The Redis Cluster the gate's tests also run against (its nodes, comma-separated), when it
/// answers with every slot served; otherwise the test is skipped (or fails under
/// REQUIRE_SERVICES). `.ci/redis-cluster` starts one and prints its URL.
pub async fn redis_cluster_url() -> Option<String> {
    let Ok(url) = std::env::var("TEST_REDIS_CLUSTER_URL") else {
        skip_or_fail(
            "Redis Cluster",
            "TEST_REDIS_CLUSTER_URL is not set (.ci/redis-cluster starts one and prints it)",
        );
        return None;
    };
    let first = url.split(',').next().unwrap_or_default().to_string();
    let state = async {
        let client = redis::Client::open(first.as_str()).map_err(|e| e.to_string())?;
        let mut con = client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| e.to_string())?;
        redis::cmd("CLUSTER")
            .arg("INFO")
            .query_async::<String>(&mut con)
            .await
            .map_err(|e| e.to_string())
    };
    match tokio::time::timeout(std::time::Duration::from_secs(2), state).await {
        Ok(Ok(info)) if info.contains("cluster_state:ok") => Some(url),
        Ok(Ok(_)) => {
            skip_or_fail(
                "Redis Cluster",
                &format!("{first}: cluster_state is not ok"),
            );
            None
        }
        Ok(Err(e)) => {
            skip_or_fail("Redis Cluster", &format!("{first}: {e}"));
            None
        }
        Err(_) => {
            skip_or_fail("Redis Cluster", &format!("{first}: timed out"));
            None
        }
    }
}

/// A streaming replica of the test PostgreSQL (`TEST_DATABASE_READ_URL`, its `postgres`
/// database), for the tests of DATABASE_READ_URL; otherwise the test is skipped (or fails under
/// REQUIRE_SERVICES). `.ci/pg-replica` starts one and prints its URL.
pub async fn replica_admin_url() -> Option<String> {
    use sqlx::Connection;
    let Ok(url) = std::env::var("TEST_DATABASE_READ_URL") else {
        skip_or_fail(
            "PostgreSQL replica",
            "TEST_DATABASE_READ_URL is not set (.ci/pg-replica starts one and prints it)",
        );
        return None;
    };
    sqlx::any::install_default_drivers();
    let standby = async {
        let mut c = sqlx::AnyConnection::connect(&url).await?;
        sqlx::query_scalar::<_, bool>("SELECT pg_is_in_recovery()")
            .fetch_one(&mut c)
            .await
    };
    match tokio::time::timeout(std::time::Duration::from_secs(5), standby).await {
        Ok(Ok(true)) => Some(url),
        Ok(Ok(false)) => {
            skip_or_fail("PostgreSQL replica", &format!("{url} is not a standby"));
            None
        }
        Ok(Err(e)) => {
            skip_or_fail("PostgreSQL replica", &format!("{url}: {e}"));
            None
        }
        Err(_) => {
            skip_or_fail("PostgreSQL replica", &format!("{url}: timed out"));
            None
        }
    }
}

static WARNED: AtomicBool = AtomicBool::new(false);

/// Tests skipped so far, by the service they missed; printed once the test binary exits.
static SKIPPED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

/// Runs when the test binary exits (after libtest's summary line): how many tests were skipped
/// and for want of what, so a plain `cargo test` on a bare machine does not look fully green.
extern "C" fn print_skipped() {
    let skipped = SKIPPED.lock().map(|s| s.clone()).unwrap_or_default();
    let mut by_service: Vec<(&str, usize)> = Vec::new();
    for what in skipped {
        match by_service.iter_mut().find(|(w, _)| *w == what) {
            Some((_, n)) => *n += 1,
            None => by_service.push((what, 1)),
        }
    }
    let total: usize = by_service.iter().map(|(_, n)| n).sum();
    let detail: Vec<String> = by_service
        .iter()
        .map(|(w, n)| format!("{n} for want of {w}"))
        .collect();
    eprintln!(
        "\nSKIPPED {total} tests ({}): set TEST_DATABASE_URL / TEST_REDIS_URL, install chromium and \
         chromium-driver, or set REQUIRE_SERVICES=1 to fail instead.",
        detail.join(", ")
    );
}

/// Skips a service-backed test loudly (and counts it), or fails it when services are required.
pub fn skip_or_fail(what: &'static str, why: &str) {
    warn_or_fail(what, why);
    if let Ok(mut s) = SKIPPED.lock() {
        if s.is_empty() {
            // SAFETY: registers a plain function with no captured state to run at exit.
            unsafe {
                libc::atexit(print_skipped);
            }
        }
        s.push(what);
    }
    eprintln!(
        "SKIPPED (no {what}): {}",
        std::thread::current().name().unwrap_or("?")
    );
}

/// Says loudly that a service is missing, or fails the test when services are required.
pub fn warn_or_fail(what: &str, why: &str) {
    if require_services() {
        panic!("REQUIRE_SERVICES=1 but {what} is not usable: {why}");
    }
    if !WARNED.swap(true, Ordering::SeqCst) {
        eprintln!(
            "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        );
        eprintln!("!!! SKIPPING {what} TESTS: {why}");
        eprintln!(
            "!!! Set TEST_DATABASE_URL / TEST_REDIS_URL, or REQUIRE_SERVICES=1 to fail instead."
        );
        eprintln!(
            "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
        );
    }
}

/// Replaces the database name in a PostgreSQL URL.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let prefix = match base.rfind('/') {
        Some(i) if i > "postgres://".len() => &base[..i],
        _ => base,
    };
    format!("{prefix}/{name}{query}")
}

async fn pg_admin(sql: &str) -> Result<(), String> {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&admin_pg_url())
        .await
        .map_err(|e| e.to_string())?;
    sqlx::query(sql)
        .execute(&mut conn)
        .await
        .map_err(|e| e.to_string())?;
    let _ = conn.close().await;
    Ok(())
}

/// Every test's database starts as a copy of one migrated once: applying the migrations took about
/// 2 s for each PostgreSQL database (0.3 s for SQLite) on CI's box, in several hundred tests.
/// Copies are cheap: `CREATE DATABASE ... TEMPLATE` costs what a plain one does.
static PG_TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
static SQLITE_TEMPLATE: tokio::sync::OnceCell<PathBuf> = tokio::sync::OnceCell::const_new();

/// How long a template or a half-built one is left to other runs after it was last used (made, or
/// copied from by a run) before a run of another build removes it: a run of another checkout may
/// still be copying it.
const TEMPLATE_KEPT_S: u64 = 24 * 3600;

/// The migrated PostgreSQL database every test's database is copied from, named by the migrations'
/// fingerprint, so that a run of another build never copies a schema other than its own. Made
/// under a name of its own and renamed when complete: a run that dies half-way leaves no template.
/// A failure is not remembered: the next test tries again.
async fn pg_template() -> Result<String, String> {
    PG_TEMPLATE
        .get_or_try_init(build_pg_template)
        .await
        .cloned()
}

async fn build_pg_template() -> Result<String, String> {
    use sellable::infra::db::{migration_fingerprint, Dialect};
    let name = format!("sellable_tmpl_{}", migration_fingerprint(Dialect::Postgres));
    if pg_names("sellable_tmpl_%")
        .await?
        .iter()
        .any(|(n, _)| *n == name)
    {
        // The comment says when it was last used: another build's cleanup leaves it a day.
        pg_admin(&format!("COMMENT ON DATABASE {name} IS '{}'", unix_now())).await?;
        return Ok(name);
    }
    let building = format!(
        "sellable_tmpbuild_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    pg_admin(&format!("CREATE DATABASE {building}")).await?;
    let made = migrate_and_name(&building, &name).await;
    if made.is_err() {
        let _ = pg_admin(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)")).await;
    }
    made?;
    // What earlier builds left: their templates, and databases half built by runs that died.
    let now = unix_now();
    for pattern in ["sellable_tmpl_%", "sellable_tmpbuild_%"] {
        for (old, made_at) in pg_names(pattern).await? {
            // A half-built one without its time yet is being made right now.
            let building_now = made_at == 0 && pattern == "sellable_tmpbuild_%";
            if old != name && !building_now && made_at + TEMPLATE_KEPT_S < now {
                let _ = pg_admin(&format!("DROP DATABASE IF EXISTS {old} WITH (FORCE)")).await;
            }
        }
    }
    Ok(name)
}

/// Migrates the new database `building` and renames it `name` (or leaves it, when another run
/// made `name` meanwhile: that copy serves as well).
async fn migrate_and_name(building: &str, name: &str) -> Result<(), String> {
    pg_admin(&format!(
        "COMMENT ON DATABASE {building} IS '{}'",
        unix_now()
    ))
    .await?;
    let db = Db::connect(&with_database(&admin_pg_url(), building))
        .await
        .map_err(|e| e.to_string())?;
    db.pool.close().await;
    // The closed connections' server processes may take a moment to go, and a database with
    // sessions cannot be renamed.
    let mut last = String::new();
    for _ in 0..100 {
        let _ = pg_admin(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{building}'"
        ))
        .await;
        match pg_admin(&format!("ALTER DATABASE {building} RENAME TO {name}")).await {
            Ok(()) => return Ok(()),
            Err(e) => last = e,
        }
        if pg_names(name).await?.iter().any(|(n, _)| n == name) {
            pg_admin(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)")).await?;
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(format!(
        "the migrated template could not be named {name}: {last}"
    ))
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// The PostgreSQL databases LIKE `pattern`, with the time they were made (seconds since the epoch,
/// from their comment; 0 when none).
async fn pg_names(pattern: &str) -> Result<Vec<(String, u64)>, String> {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&admin_pg_url())
        .await
        .map_err(|e| e.to_string())?;
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT datname::text, COALESCE(shobj_description(oid, 'pg_database'), '0')
         FROM pg_database WHERE datname LIKE $1",
    )
    .bind(pattern)
    .fetch_all(&mut conn)
    .await
    .map_err(|e| e.to_string())?;
    let _ = conn.close().await;
    Ok(rows
        .into_iter()
        .map(|(n, made)| (n, made.parse().unwrap_or_default()))
        .collect())
}

/// The migrated SQLite file every test's database is copied from: one per test process, in the
/// system's temporary directory, checkpointed so that the one file holds everything.
async fn sqlite_template() -> Result<PathBuf, String> {
    SQLITE_TEMPLATE
        .get_or_try_init(|| async {
            let dir = std::env::temp_dir().join(format!(
                "sellable-test-template-{}",
                uuid::Uuid::new_v4().simple()
            ));
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let file = dir.join("migrated.db");
            let migrated = async {
                let db = Db::connect(&format!("sqlite://{}", file.display()))
                    .await
                    .map_err(|e| e.to_string())?;
                sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                    .execute(&db.pool)
                    .await
                    .map_err(|e| e.to_string())?;
                db.pool.close().await;
                Ok::<(), String>(())
            }
            .await;
            if let Err(e) = migrated {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
            // SAFETY: registers a plain function with no captured state to run at exit.
            unsafe {
                libc::atexit(remove_sqlite_template);
            }
            Ok(file)
        })
        .await
        .cloned()
}

/// Removes this process's migrated SQLite file when the test binary exits.
extern "C" fn remove_sqlite_template() {
    if let Some(file) = SQLITE_TEMPLATE.get() {
        if let Some(dir) = file.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

async fn redis_reachable() -> Result<(), String> {
    let client = redis::Client::open(redis_url()).map_err(|e| e.to_string())?;
    let mut con = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        client.get_multiplexed_async_connection(),
    )
    .await
    .map_err(|_| "timed out".to_string())?
    .map_err(|e| e.to_string())?;
    redis::cmd("PING")
        .query_async::<String>(&mut con)
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The settings every test's app starts from.
fn test_config(
    database_url: &str,
    redis: Option<String>,
    redis_prefix: &str,
    dir: &std::path::Path,
) -> Config {
    let mut c = Config::for_database(database_url);
    c.global.redis_url = redis;
    // Every test has its own keys in the shared Redis.
    c.global.redis_prefix = redis_prefix.to_string();
    // The whole suite shares two cores: a loaded machine must not look like a dead Redis.
    c.global.redis_timeout_ms = 3000;
    c.global.code_key_file = dir.join("code-keys.json");
    c.serve.body_limit = 64 * 1024;
    c.serve.expiry_interval_seconds = 1;
    c.serve.upload_dir = dir.join("uploads");
    // Webhooks are sent only where a test asks (most drive the sender by hand).
    c.serve.webhook_poll_ms = 0;
    // Verdicts are watched where a test asks (by hand, or with a process's own job).
    c.serve.verdict_watch_seconds = 0;
    c.clock = Clock::starting_at(test_day().timestamp_millis());
    // /metrics is served only with a token or on a listener of its own.
    c.serve.metrics_token = Some(METRICS_TOKEN.to_string());
    c
}

/// The bearer token every test app's `/metrics` asks for.
pub const METRICS_TOKEN: &str = "test-metrics-token";

/// The Prometheus text of the app at `base` (`http://host:port`), asked with the tests' token.
pub async fn metrics_text(base: &str) -> String {
    reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(METRICS_TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

pub struct TestApp {
    pub base: String,
    /// `http://host:port` of `/metrics`'s own listener, when the test gave it one.
    pub metrics_base: Option<String>,
    pub db: Db,
    pub backend: Backend,
    pub database_url: String,
    pub redis_url: Option<String>,
    pub dir: PathBuf,
    pub state: sellable::web::AppState,
    pg_database: Option<String>,
    /// Every Redis key of this test starts with it.
    redis_prefix: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestApp {
    pub async fn spawn(backend: Backend) -> Option<TestApp> {
        Self::spawn_with(backend, |_| {}).await
    }

    /// Like `spawn`, on the day (and time) `at`.
    pub async fn spawn_on(backend: Backend, at: chrono::DateTime<chrono::Utc>) -> Option<TestApp> {
        Self::spawn_with(backend, |c| {
            c.clock = Clock::starting_at(at.timestamp_millis());
        })
        .await
    }

    /// Like `spawn`, with some settings changed from the test defaults.
    pub async fn spawn_with(backend: Backend, tweak: impl FnOnce(&mut Config)) -> Option<TestApp> {
        if std::env::var("SELLABLE_TEST_LOG").is_ok() {
            sellable::telemetry::init_logging("text");
        }
        let tag = uuid::Uuid::new_v4().simple().to_string();
        // A directory of its own (database file, code keys, uploads): once removed, nothing can
        // re-create the files behind our back.
        let dir = std::env::temp_dir().join(format!("sellable-test-{tag}"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (database_url, pg_database, redis) = match backend {
            Backend::Sqlite => {
                let file = dir.join("sellable.db");
                let template = sqlite_template().await.expect("a migrated SQLite database");
                std::fs::copy(template, &file).expect("copy of the migrated SQLite database");
                (format!("sqlite://{}", file.display()), None, None)
            }
            Backend::Postgres => {
                let name = format!("sellable_test_{tag}");
                let created = match pg_template().await {
                    Ok(template) => {
                        pg_admin(&format!("CREATE DATABASE {name} TEMPLATE {template}")).await
                    }
                    Err(e) => Err(e),
                };
                if let Err(e) = created {
                    skip_or_fail("PostgreSQL", &format!("{} ({e})", admin_pg_url()));
                    return None;
                }
                let redis = match redis_reachable().await {
                    Ok(()) => Some(redis_url()),
                    Err(e) => {
                        // The app runs on SQL alone; only the tests that need the gate skip.
                        warn_or_fail("Redis", &format!("{} ({e})", redis_url()));
                        None
                    }
                };
                (with_database(&admin_pg_url(), &name), Some(name), redis)
            }
        };
        let redis_prefix = format!("t{tag}");
        let mut config = test_config(&database_url, redis, &redis_prefix, &dir);
        tweak(&mut config);
        // What the app talks to, after the test's tweak (none, one Redis, or a cluster).
        let redis = config.global.redis_url.clone();
        let app = sellable::build(config).await.expect("app builds");
        let addr = app.local_addr();
        let metrics_base = app.metrics_addr().map(|a| format!("http://{a}"));
        let db = app.state.db.clone();
        let state = app.state.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(app.run_until(async move {
            let _ = rx.await;
        }));
        Some(TestApp {
            base: format!("http://{addr}"),
            metrics_base,
            db,
            backend,
            database_url,
            redis_url: redis,
            dir: dir.clone(),
            state,
            pg_database,
            redis_prefix,
            stop: Some(tx),
        })
    }

    /// Now, by the app's clock (the day the test runs on).
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.db.clock.now()
    }

    pub fn now_ms(&self) -> i64 {
        self.db.clock.now_ms()
    }

    /// Today in the test stores' timezone (Asia/Shanghai), by the app's clock.
    pub fn today(&self) -> chrono::NaiveDate {
        self.db.clock.today(chrono_tz::Asia::Shanghai)
    }

    /// Monday of next week in the test stores' timezone: always in the future and inside the
    /// 28-day schedule window, on whatever weekday the test runs.
    pub fn next_monday(&self) -> chrono::NaiveDate {
        next_monday(self.today())
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// A browser-like client whose connections come from another loopback address (127.0.0.N):
    /// another customer's or attacker's "place" for per-address throttles and caps.
    pub fn client_from(&self, n: u8) -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .local_address(std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, n)))
            .build()
            .expect("client")
    }

    /// A browser-like client behind a reverse proxy on 127.0.0.1: every request says it forwards
    /// for `address` (`X-Forwarded-For`).
    pub fn client_forwarded_for(&self, address: &str) -> reqwest::Client {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("x-forwarded-for", address.parse().unwrap());
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .local_address(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST))
            .default_headers(h)
            .build()
            .expect("client")
    }

    /// A browser-like client: keeps cookies, does not follow redirects (tests look at them).
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client")
    }

    pub async fn merchant(&self, slug: &str) -> sellable::domain::MerchantId {
        let id = tenants::create_merchant(
            &self.db,
            &Actor::system("test"),
            slug,
            &format!("{slug} Ltd"),
            "CNY",
            "Asia/Shanghai",
        )
        .await
        .expect("merchant");
        tenants::create_store(
            &self.db,
            &Actor::system("test"),
            slug,
            "main-store",
            "Main store",
            "Asia/Shanghai",
        )
        .await
        .expect("store");
        tenants::create_warehouse(&self.db, &Actor::system("test"), slug, "main", "Main", 10)
            .await
            .expect("warehouse");
        id
    }

    /// Creates a user and returns its (email, password).
    pub async fn user(&self, role: &str, merchant: Option<&str>) -> (String, String) {
        let email = format!("{role}-{}@example.com", uuid::Uuid::new_v4().simple());
        let password = "correct horse battery".to_string();
        let store = if role == "store_staff" {
            Some("main-store")
        } else {
            None
        };
        // Password hashing is bounded process-wide, and the sign-in flood tests fill its queue
        // on purpose: a test that creates a user meanwhile waits for room, as a client would.
        for _ in 0..100 {
            let made = users::create(
                &self.db,
                &Actor::system("test"),
                users::NewUser {
                    email: &email,
                    password: &password,
                    role,
                    merchant_slug: merchant,
                    store_slug: store,
                },
            )
            .await;
            match made {
                Ok(_) => return (email, password),
                Err(sellable::domain::DomainError::Busy { .. }) => {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await
                }
                Err(e) => panic!("user: {e:?}"),
            }
        }
        panic!("password hashing stayed busy for 10 s")
    }

    /// A client signed in as a new user of that role.
    /// The id of the SKU with this code.
    pub async fn sku_id(&self, code: &str) -> i64 {
        sqlx::query_scalar("SELECT id FROM skus WHERE code = $1")
            .bind(code)
            .fetch_one(&self.db.pool)
            .await
            .unwrap()
    }

    /// Merchant `acme` (and, with `stores`, its stores) speaks `lang`.
    pub async fn speaks(&self, lang: sellable::i18n::Lang, stores: bool) {
        let m = sellable::domain::tenancy::tenants::merchant_id_by_slug(&self.db, "acme")
            .await
            .unwrap();
        sellable::domain::tenancy::tenants::set_language(
            &self.db,
            &sellable::domain::Actor::system("test"),
            m,
            lang,
            stores,
        )
        .await
        .unwrap();
    }

    pub async fn signed_in(&self, role: &str, merchant: Option<&str>) -> reqwest::Client {
        let (email, password) = self.user(role, merchant).await;
        self.sign_in(&email, &password).await
    }

    /// A client signed in with an existing user's email and password (the demo's, or one made by
    /// `user`).
    pub async fn sign_in(&self, email: &str, password: &str) -> reqwest::Client {
        let client = self.client();
        for _ in 0..100 {
            let r = client
                .post(self.url("/login"))
                .form(&[("email", email), ("password", password), ("next", "/admin")])
                .send()
                .await
                .unwrap();
            // 503: another test's sign-in flood holds every hashing turn; come back, as told.
            if r.status() == 503 {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
            assert_eq!(r.status(), 303, "sign-in of {email} should redirect");
            return client;
        }
        panic!("sign-in stayed busy for 10 s")
    }

    /// The page at `path` as `client` sees it, parsed.
    pub async fn page(&self, client: &reqwest::Client, path: &str) -> Html {
        html(client.get(self.url(path)).send().await.unwrap()).await
    }

    pub async fn api_key(&self, merchant_slug: &str) -> String {
        let m = tenants::merchant_id_by_slug(&self.db, merchant_slug)
            .await
            .unwrap();
        apikeys::create(&self.db, &Actor::system("test"), m, "test", None)
            .await
            .unwrap()
            .1
    }

    /// The booking page's slug of the test merchant's store (`main-store`).
    pub async fn public_slug(&self) -> String {
        sqlx::query_scalar(
            "SELECT public_slug FROM stores WHERE slug = 'main-store' ORDER BY id LIMIT 1",
        )
        .fetch_one(&self.db.pool)
        .await
        .unwrap()
    }

    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
            .fetch_one(&self.db.pool)
            .await
            .unwrap()
    }

    /// (booked as the slot's row says, the places of its active bookings): equal while the slot
    /// is whole.
    pub async fn slot_places(&self, slot: i64) -> (i64, i64) {
        let active: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(SUM(places), 0) AS BIGINT) FROM bookings WHERE slot_id = $1 AND status <> 'CANCELLED'",
        )
        .bind(slot)
        .fetch_one(&self.db.pool)
        .await
        .unwrap();
        (self.slot_booked(slot).await, active)
    }

    /// Runs reconciliation and asserts that it found nothing broken and repaired nothing.
    pub async fn assert_reconciled(&self) {
        let report = sellable::domain::reconcile::run(
            &self.db,
            "job",
            &sellable::domain::Actor::system("test"),
        )
        .await
        .unwrap();
        assert!(
            report.broken.is_empty() && report.repaired.is_empty(),
            "{report:?}"
        );
    }

    /// Places booked in a slot, as its row says.
    pub async fn slot_booked(&self, slot: i64) -> i64 {
        sqlx::query_scalar("SELECT booked FROM slots WHERE id = $1")
            .bind(slot)
            .fetch_one(&self.db.pool)
            .await
            .unwrap()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(name) = self.pg_database.take() {
            // Drop runs outside async; a short-lived runtime on its own thread removes the database
            // and this test's keys from the shared Redis (it would otherwise keep them until restarted).
            let redis = self
                .redis_url
                .clone()
                .map(|url| (url, self.redis_prefix.clone()));
            let _ = std::thread::spawn(move || {
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    let _ = rt.block_on(pg_admin(&format!(
                        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                    )));
                    // A gate of its own: the app's connection lived on the test's runtime.
                    if let Some(Ok(gate)) = redis.map(|(url, prefix)| {
                        Gate::new(&url, &prefix, std::time::Duration::from_secs(5))
                    }) {
                        let _ = rt.block_on(gate.flush_prefix());
                    }
                }
            })
            .join();
        }
    }
}

/// Parsed HTML with CSS-selector helpers.
pub struct Html(pub scraper::Html);

impl Html {
    pub fn parse(s: &str) -> Html {
        Html(scraper::Html::parse_document(s))
    }
    pub fn texts(&self, selector: &str) -> Vec<String> {
        let sel = scraper::Selector::parse(selector).expect("valid selector");
        self.0
            .select(&sel)
            .map(|e| e.text().collect::<String>().trim().to_string())
            .collect()
    }
    pub fn text(&self, selector: &str) -> String {
        self.texts(selector).into_iter().next().unwrap_or_default()
    }
    pub fn count(&self, selector: &str) -> usize {
        self.texts(selector).len()
    }
    pub fn attr(&self, selector: &str, attr: &str) -> Option<String> {
        self.attrs(selector, attr).into_iter().next()
    }
    /// The attribute of every element that matches and has it, in document order.
    pub fn attrs(&self, selector: &str, attr: &str) -> Vec<String> {
        let sel = scraper::Selector::parse(selector).expect("valid selector");
        self.0
            .select(&sel)
            .filter_map(|e| e.value().attr(attr))
            .map(str::to_string)
            .collect()
    }
}

pub async fn html(r: reqwest::Response) -> Html {
    Html::parse(&r.text().await.unwrap())
}

/// Where a redirect goes.
pub fn location(r: &reqwest::Response) -> String {
    r.headers()["location"].to_str().unwrap().to_string()
}

/// A JSON API client bound to one key.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub key: String,
    pub http: reqwest::Client,
    /// The app's clock: the day the test runs on.
    pub clock: Clock,
}

impl Api {
    /// Now, by the app's clock.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    /// Monday of next week in the test stores' timezone, by the app's clock.
    pub fn next_monday(&self) -> chrono::NaiveDate {
        next_monday(self.clock.today(chrono_tz::Asia::Shanghai))
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{}", self.base, path))
            .bearer_auth(&self.key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let body = r.json().await.unwrap_or(serde_json::Value::Null);
        crate::contract::check(method.as_str(), path, status, &body);
        (status, body)
    }
    pub async fn post(&self, path: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }
    pub async fn get(&self, path: &str) -> (u16, serde_json::Value) {
        self.call(reqwest::Method::GET, path, None).await
    }
    /// `PATCH /api/v1/skus/{code}`: a SKU's price, limits and service rules.
    pub async fn patch_sku(&self, code: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
        self.call(
            reqwest::Method::PATCH,
            &format!("/api/v1/skus/{code}"),
            Some(body),
        )
        .await
    }

    /// Creates an ONLINE product with one SKU of the given kind.
    /// Books a slot for a customer; `key` is the idempotency key (a fresh one when None).
    pub async fn book(
        &self,
        slot: i64,
        name: &str,
        phone: &str,
        key: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let key = key.map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string);
        let body = serde_json::json!({"slot_id": slot, "name": name, "phone": phone, "idempotency_key": key});
        self.post("/api/v1/bookings", body).await
    }

    /// Books `slot` and expects it booked: the booking's reference.
    pub async fn booked(&self, slot: i64, name: &str, phone: &str) -> String {
        let (s, b) = self.book(slot, name, phone, None).await;
        assert_eq!(s, 201, "{b}");
        b["reference"].as_str().unwrap().to_string()
    }

    /// A code batch once its import has finished (no longer `CREATING`).
    pub async fn batch_done(&self, id: i64) -> serde_json::Value {
        for _ in 0..200 {
            let (s, b) = self.get(&format!("/api/v1/code-batches/{id}")).await;
            assert_eq!(s, 200, "{b}");
            if b["status"] != "CREATING" {
                return b;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("batch {id} did not finish");
    }

    /// Uploads codes as a file and waits for the import: the finished batch.
    pub async fn import_codes(
        &self,
        sku: &str,
        filename: &str,
        text: &str,
        mode: &str,
    ) -> serde_json::Value {
        let (s, b) = self
            .upload(sku, filename, text.as_bytes().to_vec(), mode)
            .await;
        assert_eq!(s, 202, "{b}");
        assert_eq!(b["status"], "CREATING");
        self.batch_done(b["batch_id"].as_i64().unwrap()).await
    }

    /// A one-off slot of `sku` from `starts` to `ends` with `capacity` places; its id.
    pub async fn one_off(
        &self,
        sku: &str,
        starts: chrono::DateTime<chrono::Utc>,
        ends: chrono::DateTime<chrono::Utc>,
        capacity: i64,
    ) -> i64 {
        let body = serde_json::json!({"sku": sku, "starts_at": starts.to_rfc3339(),
            "ends_at": ends.to_rfc3339(), "capacity": capacity});
        let (s, b) = self.post("/api/v1/slots", body).await;
        assert_eq!(s, 201, "{b}");
        b["id"].as_i64().unwrap()
    }

    /// A new service `sku` taking parties of up to `max` places, with one slot of `capacity`
    /// places a day ahead; the slot's id.
    pub async fn party_slot(&self, sku: &str, max: i64, capacity: i64) -> i64 {
        self.product("service", sku).await;
        let (s, b) = self
            .patch_sku(sku, serde_json::json!({"max_places": max}))
            .await;
        assert_eq!((s, b["max_places"].as_i64()), (200, Some(max)), "{b}");
        let start = self.now() + chrono::Duration::hours(24);
        self.one_off(sku, start, start + chrono::Duration::hours(1), capacity)
            .await
    }

    /// Uploads a code file for a voucher SKU through the API.
    pub async fn upload(
        &self,
        sku: &str,
        filename: &str,
        bytes: Vec<u8>,
        mode: &str,
    ) -> (u16, serde_json::Value) {
        let form = reqwest::multipart::Form::new()
            .text("sku", sku.to_string())
            .text("mode", mode.to_string())
            .part(
                "file",
                reqwest::multipart::Part::bytes(bytes).file_name(filename.to_string()),
            );
        let r = self
            .http
            .post(format!("{}/api/v1/code-batches", self.base))
            .bearer_auth(&self.key)
            .multipart(form)
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let body = r.json().await.unwrap_or(serde_json::Value::Null);
        crate::contract::check("POST", "/api/v1/code-batches", status, &body);
        (status, body)
    }

    /// Reserves an order's lines (`[{"sku": …, "qty": …}, …]`).
    /// Reserves one unit of `sku` at a time (orders `{prefix}-0`, `{prefix}-1`, …) until the
    /// answer is `insufficient_stock`: how many units that held.
    pub async fn reserve_until_sold_out(&self, sku: &str, prefix: &str) -> i64 {
        let mut held = 0;
        loop {
            let (s, b) = self
                .reserve(
                    &format!("{prefix}-{held}"),
                    serde_json::json!([{"sku": sku, "qty": 1}]),
                )
                .await;
            if s == 409 {
                assert_eq!(b["error"], "insufficient_stock", "{b}");
                return held;
            }
            assert_eq!(s, 201, "{b}");
            held += 1;
        }
    }

    pub async fn reserve(&self, order: &str, items: serde_json::Value) -> (u16, serde_json::Value) {
        let body = serde_json::json!({"order_id": order, "items": items});
        self.post("/api/v1/reservations", body).await
    }

    pub async fn product(&self, kind: &str, code: &str) {
        let (s, b) = self
            .post(
                "/api/v1/products",
                serde_json::json!({"name": format!("Product {code}"), "kind": kind, "status": "ONLINE",
                                   "skus": [{"code": code, "name": code, "price": 100}]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
    }

    pub async fn adjust(
        &self,
        sku: &str,
        warehouse: &str,
        kind: &str,
        qty: i64,
    ) -> (u16, serde_json::Value) {
        self.post(
            "/api/v1/stock/adjustments",
            serde_json::json!({"sku": sku, "warehouse": warehouse, "kind": kind, "qty": qty, "reason": "test",
                               "idempotency_key": uuid::Uuid::new_v4().to_string()}),
        )
        .await
    }

    pub async fn receive(&self, sku: &str, warehouse: &str, qty: i64) {
        let (s, b) = self.adjust(sku, warehouse, "RECEIVE", qty).await;
        assert_eq!(s, 201, "{b}");
    }

    pub async fn stock(&self, sku: &str) -> serde_json::Value {
        let (s, b) = self.get(&format!("/api/v1/skus/{sku}/stock")).await;
        assert_eq!(s, 200, "{b}");
        b
    }
}

impl TestApp {
    /// A merchant "acme" (warehouse "main", priority 10) with an API client.
    pub async fn acme_api(&self) -> Api {
        self.merchant("acme").await;
        Api {
            base: self.base.clone(),
            key: self.api_key("acme").await,
            http: reqwest::Client::new(),
            clock: self.db.clock.clone(),
        }
    }

    /// Any merchant (warehouse "main") with an API client of its own.
    pub async fn merchant_api(&self, slug: &str) -> Api {
        self.merchant(slug).await;
        Api {
            base: self.base.clone(),
            key: self.api_key(slug).await,
            http: reqwest::Client::new(),
            clock: self.db.clock.clone(),
        }
    }

    /// Adds a warehouse to a merchant.
    pub async fn warehouse(&self, merchant: &str, slug: &str, priority: i64) {
        tenants::create_warehouse(
            &self.db,
            &Actor::system("test"),
            merchant,
            slug,
            slug,
            priority,
        )
        .await
        .expect("warehouse");
    }

    /// The ledger identity holds: every balance equals the sum of its ledger moves.
    pub async fn assert_ledger_replays(&self) {
        let bad = sellable::domain::stock::ledger::replay_mismatches(
            &self.db,
            sellable::domain::Scope::All,
        )
        .await
        .unwrap();
        assert!(
            bad.is_empty(),
            "ledger does not replay to balances: {bad:?}"
        );
    }
}

/// The `field:code` pairs of a 422 answer's `fields`, in order.
pub fn field_codes(b: &serde_json::Value) -> Vec<String> {
    b["fields"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|f| {
                    format!(
                        "{}:{}",
                        f["field"].as_str().unwrap_or(""),
                        f["code"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The store page's form (`/admin/stores/{id}`) with nothing said on the booking page, English,
/// and these two minute fields.
pub fn store_form(auto_no_show: &str, waitlist_hold: &str) -> Vec<(&'static str, String)> {
    vec![
        ("address", String::new()),
        ("phone", String::new()),
        ("description", String::new()),
        ("language", "en".to_string()),
        ("auto_no_show", auto_no_show.to_string()),
        ("waitlist_hold", waitlist_hold.to_string()),
    ]
}

/// Monday of the week after `today`'s.
pub fn next_monday(today: chrono::NaiveDate) -> chrono::NaiveDate {
    use chrono::Datelike;
    today + chrono::Duration::days(7 - today.weekday().num_days_from_monday() as i64)
}

/// `hour`:00 on `day` in Shanghai, the zone of the tests' stores.
pub fn at(day: chrono::NaiveDate, hour: u32) -> chrono::DateTime<chrono::Utc> {
    use chrono::TimeZone;
    chrono_tz::Asia::Shanghai
        .from_local_datetime(&day.and_hms_opt(hour, 0, 0).unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc)
}

/// [`at`] as the API writes an instant (RFC 3339 to the second, in UTC with `Z`).
pub fn at_text(day: chrono::NaiveDate, hour: u32) -> String {
    at(day, hour).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
