//! sellable: a back office for merchants. `build` assembles the whole application from a
//! [`Config`], so `main` and the integration tests boot it the same way.

pub mod config;
pub mod domain;
pub mod i18n;
pub mod infra;
pub mod jobs;
pub mod messages;
pub mod telemetry;
pub mod web;

use std::net::SocketAddr;

use tokio::net::TcpListener;

pub use config::Config;

/// mimalloc instead of glibc's malloc: on the gate's hot path glibc spent a quarter of the server's
/// CPU in malloc/free and in its arena locks (perf, flash-sale bench); mimalloc's per-thread heaps
/// take neither lock.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
use infra::db::Db;

/// A built application: bound to its address, ready to serve.
pub struct App {
    pub listener: TcpListener,
    /// `/metrics` on a listener of its own (`SELLABLE_METRICS_BIND`).
    pub metrics_listener: Option<TcpListener>,
    pub state: web::AppState,
}

impl App {
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("bound listener has an address")
    }

    /// Where `/metrics` listens when it has a listener of its own.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
    }

    /// Serves until the process is asked to stop (Ctrl-C or SIGTERM), then drains requests.
    pub async fn run(self) -> anyhow::Result<()> {
        self.run_until(shutdown_signal()).await
    }

    pub async fn run_until(
        self,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let jobs = jobs::spawn(
            &self.state.db,
            &self.state.sessions,
            &self.state.codes,
            jobs::JobSettings::from_config(&self.state.config),
        );
        let router = web::router(self.state.clone());
        let c = &self.state.config;
        let limits = web::edge::server::Limits {
            max_connections: c.serve.max_connections,
            header_timeout: std::time::Duration::from_secs(c.serve.header_timeout_seconds.max(1)),
            idle_timeout: std::time::Duration::from_secs(c.serve.idle_timeout_seconds.max(1)),
        };
        let metrics = self.metrics_listener.map(|listener| {
            let router = web::edge::health::metrics_routes().with_state(self.state.clone());
            tokio::spawn(web::edge::server::serve(
                listener,
                router,
                limits,
                std::future::pending::<()>(),
            ))
        });
        web::edge::server::serve(self.listener, router, limits, stop).await?;
        if let Some(m) = metrics {
            m.abort();
        }
        jobs.abort();
        Ok(())
    }
}

/// Connects to the database (running migrations), binds the listener and builds the state.
pub async fn build(config: Config) -> anyhow::Result<App> {
    let db = Db::connect(&config.global.database_url).await?;
    build_with_db(config, db).await
}

pub async fn build_with_db(config: Config, mut db: Db) -> anyhow::Result<App> {
    let listener = TcpListener::bind(&config.serve.bind).await?;
    let metrics_listener = match &config.serve.metrics_bind {
        Some(addr) => Some(TcpListener::bind(addr).await?),
        None => None,
    };
    if metrics_listener.is_none() && config.serve.metrics_token.is_none() {
        tracing::info!(
            "/metrics is off: set SELLABLE_METRICS_BIND or SELLABLE_METRICS_TOKEN to serve it"
        );
    }
    db.clock = config.clock.clone();
    db.hashers = std::sync::Arc::new(infra::bounded::Bounded::new(
        match config.serve.login_concurrency {
            0 => infra::bounded::default_concurrency(),
            n => n,
        },
    ));
    db.gate = gate_for(&config)?;
    db.replica = replica_for(&config, &db)?;
    // Pages show a catalog the watcher judged when it is young enough (`domain::sellable::recent`).
    domain::sellable::kept(&db).set_max_age(config.serve.verdict_watch_seconds as i64 * 2000);
    domain::orders::hold_groups(&db).set_max(config.serve.hot_batch);
    domain::slots::cache::of(&db)
        .booked
        .set_max(config.serve.hot_batch);
    let keys = load_code_keys(&config.global)?;
    // Plaintext codes a crash left in the spool folder: no import of this process runs yet.
    let swept = domain::codes::import::sweep_spool(&config.serve.upload_dir, None);
    if swept > 0 {
        tracing::warn!(
            files = swept,
            "removed code upload files left from an earlier run"
        );
    }
    let state = web::AppState::new(config, db, keys);
    Ok(App {
        listener,
        metrics_listener,
        state,
    })
}

/// The Redis gate when REDIS_URL is set. Redis being down at start is not fatal: the gate
/// starts degraded and comes on when Redis answers.
pub fn gate_for(config: &Config) -> anyhow::Result<Option<std::sync::Arc<infra::counters::Gate>>> {
    match &config.global.redis_url {
        Some(url) => {
            let gate = infra::counters::Gate::new(
                url,
                &config.global.redis_prefix,
                std::time::Duration::from_millis(config.global.redis_timeout_ms.max(1)),
            )?;
            gate.set_sold_out_memory(std::time::Duration::from_millis(
                config.global.sold_out_memory_ms,
            ));
            gate.set_clock(config.clock.clone());
            Ok(Some(gate))
        }
        None => Ok(None),
    }
}

/// The read replica when DATABASE_READ_URL is set: PostgreSQL's, beside a PostgreSQL primary.
/// It is connected when first used, so a replica down at start does not stop the service.
pub fn replica_for(
    config: &Config,
    db: &Db,
) -> anyhow::Result<Option<std::sync::Arc<infra::replica::Replica>>> {
    let Some(url) = &config.global.database_read_url else {
        return Ok(None);
    };
    let replica_pg = infra::db::dialect_of(url).ok() == Some(infra::db::Dialect::Postgres);
    if !replica_pg || db.dialect != infra::db::Dialect::Postgres {
        anyhow::bail!(
            "DATABASE_READ_URL names a streaming replica of a PostgreSQL DATABASE_URL (postgres://…); \
             on SQLite leave it unset"
        );
    }
    sqlx::any::install_default_drivers();
    Ok(Some(std::sync::Arc::new(infra::replica::Replica::new(
        url,
        std::time::Duration::from_secs(config.serve.read_max_lag_seconds),
    )?)))
}

/// The keys for codes at rest: the ones given in the environment (`SELLABLE_CODE_ENC_KEY` and
/// `SELLABLE_CODE_HASH_KEY`), or the key file's, which is created (with a warning to back it up)
/// on first use.
pub fn load_code_keys(
    global: &config::GlobalArgs,
) -> anyhow::Result<std::sync::Arc<domain::kernel::code_keys::CodeKeys>> {
    use domain::kernel::code_keys::CodeKeys;
    if let (Some(enc), Some(mac)) = (&global.code_enc_key, &global.code_hash_key) {
        return Ok(std::sync::Arc::new(CodeKeys::given(
            global.code_key_version,
            enc,
            mac,
        )?));
    }
    let file = global.code_key_file.as_path();
    let (keys, created) = CodeKeys::load(file)?;
    if created {
        tracing::warn!(file = %file.display(), "{}", messages::code_keys_created(&file.display().to_string()));
    }
    Ok(std::sync::Arc::new(keys))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
