//! Command line and environment. Every setting has a flag and an environment variable; the
//! variable names are a contract that deployment scripts rely on.

use clap::{Args, Parser, Subcommand};

/// The largest clock offset accepted (a century, in ms): any instant the app computes from it
/// stays far inside what an i64 of milliseconds and chrono can hold.
pub const CLOCK_OFFSET_MAX_MS: i64 = 100 * 366 * 86_400_000;

/// Where the embedded default keeps its database.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://data/sellable.db";

#[derive(Debug, Parser)]
#[command(
    name = "sellable",
    version,
    about = "Back office for merchants: stock, slots and codes"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Database URL: sqlite://path/to/file.db or postgres://user@host/db.
    #[arg(long, env = "DATABASE_URL", default_value = DEFAULT_DATABASE_URL, global = true)]
    pub database_url: String,
    /// A streaming replica of DATABASE_URL (optional, PostgreSQL): reports, listings and the
    /// ledger read from it while it keeps up; decisions never do.
    #[arg(long, env = "DATABASE_READ_URL", global = true)]
    pub database_read_url: Option<String>,
    /// Redis URL (optional): the gate in front of reserve, book and code holds.
    #[arg(long, env = "REDIS_URL", global = true)]
    pub redis_url: Option<String>,
    /// Prefix of every Redis key, so several deployments (or tests) can share one Redis.
    #[arg(
        long,
        env = "SELLABLE_REDIS_PREFIX",
        default_value = "sellable",
        global = true
    )]
    pub redis_prefix: String,
    /// How long one Redis call may take before the call goes to SQL alone, in milliseconds.
    #[arg(
        long,
        env = "SELLABLE_REDIS_TIMEOUT_MS",
        default_value_t = 250,
        global = true
    )]
    pub redis_timeout_ms: u64,
    /// How long a SKU the gate found sold out in every warehouse (a slot found full, a voucher
    /// SKU found without codes) is believed so by this instance without running the script, in
    /// milliseconds (0: always ask). Its own changes end it at once; units that come back
    /// through another instance go unseen here for this long at most.
    #[arg(
        long,
        env = "SELLABLE_SOLD_OUT_MEMORY_MS",
        default_value_t = 100,
        global = true
    )]
    pub sold_out_memory_ms: u64,
    /// Where the keys for codes at rest are kept (created on first use) unless
    /// SELLABLE_CODE_ENC_KEY and SELLABLE_CODE_HASH_KEY are set.
    #[arg(
        long,
        env = "SELLABLE_CODE_KEY_FILE",
        default_value = "data/code-keys.json",
        global = true
    )]
    pub code_key_file: std::path::PathBuf,
    /// The key codes are encrypted with (64 hex characters), from the environment instead of
    /// the file: several instances must share it. Used only together with the hash key.
    #[arg(
        long,
        env = "SELLABLE_CODE_ENC_KEY",
        hide_env_values = true,
        global = true
    )]
    pub code_enc_key: Option<String>,
    /// The key codes are looked up by (64 hex characters), with the encryption key.
    #[arg(
        long,
        env = "SELLABLE_CODE_HASH_KEY",
        hide_env_values = true,
        global = true
    )]
    pub code_hash_key: Option<String>,
    /// The version of the encryption key given in the environment.
    #[arg(
        long,
        env = "SELLABLE_CODE_KEY_VERSION",
        default_value_t = 1,
        global = true
    )]
    pub code_key_version: i64,
    /// Log output: "text" for people, "json" for log collectors.
    #[arg(
        long,
        env = "SELLABLE_LOG_FORMAT",
        default_value = "text",
        global = true
    )]
    pub log_format: String,
    /// Milliseconds added to the system's clock for every business rule: the server and the
    /// CLI act as if it were that much later (negative: earlier). For tests and demos on a
    /// chosen day; leave it 0 in production. At most a century either way.
    #[arg(
        long,
        env = "SELLABLE_CLOCK_OFFSET_MS",
        default_value_t = 0,
        value_parser = clap::value_parser!(i64).range(-CLOCK_OFFSET_MAX_MS..=CLOCK_OFFSET_MAX_MS),
        allow_hyphen_values = true,
        global = true
    )]
    pub clock_offset_ms: i64,
}

impl GlobalArgs {
    /// The app's clock: the system's, shifted by `clock_offset_ms`.
    pub fn clock(&self) -> crate::infra::clock::Clock {
        crate::infra::clock::Clock::offset_by(self.clock_offset_ms)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (the default).
    Serve(ServeArgs),
    /// Apply database migrations and exit.
    Migrate,
    /// Bring the query planner's statistics up to date now (after a bulk load). The server does
    /// it hourly on SQLite, and on PostgreSQL when autovacuum is off.
    Analyze,
    /// Load the demo merchant, store, warehouses, users and products.
    Demo,
    /// Manage merchants.
    #[command(subcommand)]
    Merchant(MerchantCmd),
    /// Manage stores.
    #[command(subcommand)]
    Store(StoreCmd),
    /// Manage warehouses.
    #[command(subcommand)]
    Warehouse(WarehouseCmd),
    /// Manage users.
    #[command(subcommand)]
    User(UserCmd),
    /// Manage API keys.
    #[command(subcommand)]
    Apikey(ApikeyCmd),
    /// Check stock, slots and codes once (and Redis against SQL when REDIS_URL is set); print
    /// the findings. Exits with status 2 when an identity is broken.
    Reconcile {
        /// Check only what changed since the last run finished (what the change events name),
        /// instead of everything.
        #[arg(long)]
        changed: bool,
    },
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "SELLABLE_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// Load the demo data first when the database is empty.
    #[arg(long)]
    pub demo: bool,
    /// Mark session cookies Secure (set this behind HTTPS).
    #[arg(long, env = "SELLABLE_SECURE_COOKIES", default_value_t = false)]
    pub secure_cookies: bool,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "SELLABLE_BODY_LIMIT", default_value_t = 1024 * 1024)]
    pub body_limit: usize,
    /// Longest hold a reservation may ask for (ttl_seconds), in seconds.
    #[arg(long, env = "SELLABLE_MAX_TTL_SECONDS", default_value_t = 24 * 3600)]
    pub max_ttl_seconds: i64,
    /// How often the expiry job releases holds past their time, in seconds.
    #[arg(long, env = "SELLABLE_EXPIRY_INTERVAL_SECONDS", default_value_t = 5)]
    pub expiry_interval_seconds: u64,
    /// How many days ahead slots are materialised from schedule rules.
    #[arg(long, env = "SELLABLE_SLOT_WINDOW_DAYS", default_value_t = 28)]
    pub slot_window_days: i64,
    /// Where uploaded code files wait for their import.
    #[arg(long, env = "SELLABLE_UPLOAD_DIR", default_value = "data/uploads")]
    pub upload_dir: std::path::PathBuf,
    /// Public booking page: requests per minute per client address.
    #[arg(long, env = "SELLABLE_PUBLIC_RATE_PER_MINUTE", default_value_t = 120)]
    pub public_rate_per_minute: u32,
    /// API: requests per second one key may make on this instance, for keys without a rate of
    /// their own (`sellable apikey rate`); 0: unlimited.
    #[arg(long, env = "SELLABLE_API_RATE_PER_SECOND", default_value_t = 1000)]
    pub api_rate_per_second: u32,
    /// Webhooks may point at loopback, private and link-local addresses (a receiver on this
    /// machine or the local network). Off: such URLs are refused when registered and when sent.
    #[arg(long, env = "SELLABLE_WEBHOOK_ALLOW_PRIVATE", default_value_t = false,
          value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::Set,
          num_args = 0..=1, default_missing_value = "true")]
    pub webhook_allow_private: bool,
    /// The reverse proxies in front of this server, as comma-separated CIDRs or addresses
    /// (`127.0.0.1,10.0.0.0/8`). Only from these peers are `Forwarded` / `X-Forwarded-For` read
    /// for the client's address (audit trail, throttles, per-address caps). Default: none.
    #[arg(long, env = "SELLABLE_TRUSTED_PROXIES", default_value = "",
          value_parser = crate::infra::proxies::TrustedProxies::parse)]
    pub trusted_proxies: crate::infra::proxies::TrustedProxies,
    /// Serve `/metrics` only on this address (`127.0.0.1:9100`), on a listener of its own; the
    /// public listener then answers 404 there.
    #[arg(long, env = "SELLABLE_METRICS_BIND")]
    pub metrics_bind: Option<String>,
    /// A bearer token `/metrics` asks for (`Authorization: Bearer …`). Without it and without
    /// `SELLABLE_METRICS_BIND`, `/metrics` is not served at all.
    #[arg(long, env = "SELLABLE_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Webhook endpoints one merchant may have (not deleted).
    #[arg(long, env = "SELLABLE_MAX_WEBHOOKS_PER_MERCHANT", default_value_t = 10)]
    pub max_webhooks_per_merchant: i64,
    /// Seconds a webhook receiver has to answer (connection included).
    #[arg(long, env = "SELLABLE_WEBHOOK_TIMEOUT_SECONDS", default_value_t = 10)]
    pub webhook_timeout_seconds: u64,
    /// How often this instance looks for webhook deliveries to send, in milliseconds; 0: it sends
    /// none (other instances do).
    #[arg(long, env = "SELLABLE_WEBHOOK_POLL_MS", default_value_t = 1000)]
    pub webhook_poll_ms: u64,
    /// How often this instance compares every SKU's sellable verdict with the last one told, in
    /// seconds, and writes `sku.sellable_changed` for those that turned; 0: never (other
    /// instances do). Whole-catalog pages show verdicts at most twice this old (0: always live).
    #[arg(long, env = "SELLABLE_VERDICT_WATCH_SECONDS", default_value_t = 10)]
    pub verdict_watch_seconds: u64,
    /// Password hashes that may run at once (sign-in); 0: one less than the number of cores.
    #[arg(long, env = "SELLABLE_LOGIN_CONCURRENCY", default_value_t = 0)]
    pub login_concurrency: usize,
    /// Seconds a client has to send a request's headers, on a new connection and between
    /// requests on a kept-alive one; then the connection is closed.
    #[arg(long, env = "SELLABLE_HEADER_TIMEOUT_SECONDS", default_value_t = 10)]
    pub header_timeout_seconds: u64,
    /// Seconds an idle kept-alive connection stays open.
    #[arg(long, env = "SELLABLE_IDLE_TIMEOUT_SECONDS", default_value_t = 60)]
    pub idle_timeout_seconds: u64,
    /// Open connections at most; a new one waits in the kernel's backlog until one closes.
    #[arg(long, env = "SELLABLE_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,
    /// The counter: minutes after a redemption during which staff may undo it (撤销核销), with
    /// a reason. 0: never.
    #[arg(long, env = "SELLABLE_REDEEM_UNDO_MINUTES", default_value_t = 30)]
    pub redeem_undo_minutes: i64,
    /// Public booking: active future bookings one phone number may hold in one store.
    #[arg(long, env = "SELLABLE_MAX_BOOKINGS_PER_PHONE", default_value_t = 4)]
    pub max_bookings_per_phone: i64,
    /// Public booking: active future bookings made from one client address in one store.
    #[arg(long, env = "SELLABLE_MAX_BOOKINGS_PER_ADDRESS", default_value_t = 10)]
    pub max_bookings_per_address: i64,
    /// Single-line goods orders of one SKU (and API bookings of one slot) that arrive together are
    /// made in one transaction, at most this many (0 or 1: each in its own transaction).
    #[arg(long, env = "SELLABLE_HOT_BATCH", default_value_t = crate::domain::kernel::groups::DEFAULT_MAX)]
    pub hot_batch: usize,
    /// How often reconciliation runs on this instance, in seconds (0: never; `sellable reconcile`
    /// and the operators' button still work).
    #[arg(
        long,
        env = "SELLABLE_RECONCILE_INTERVAL_SECONDS",
        default_value_t = 300
    )]
    pub reconcile_interval_seconds: u64,
    /// How often a scheduled run checks everything, in seconds; the runs between check only
    /// what changed since the last one (0: every run checks everything).
    #[arg(
        long,
        env = "SELLABLE_RECONCILE_FULL_INTERVAL_SECONDS",
        default_value_t = 3600
    )]
    pub reconcile_full_interval_seconds: u64,
    /// "Why not sellable": goods with fewer available units than this get a low-stock warning.
    #[arg(long, env = "SELLABLE_LOW_STOCK_THRESHOLD", default_value_t = 5)]
    pub low_stock_threshold: i64,
    /// Services with fewer open slots than this in the next 7 days get a warning.
    #[arg(long, env = "SELLABLE_FEW_SLOTS_THRESHOLD", default_value_t = 3)]
    pub few_slots_threshold: i64,
    /// Vouchers whose codes run out within this many days at the recent sales rate get a warning.
    #[arg(long, env = "SELLABLE_CODE_RUNOUT_DAYS", default_value_t = 7)]
    pub code_runout_days: i64,
    /// With DATABASE_READ_URL: the most, in seconds, that a read sent to the replica may be
    /// behind; a replica further behind (or down) is passed over for the primary.
    #[arg(long, env = "SELLABLE_READ_MAX_LAG_SECONDS", default_value_t = 10)]
    pub read_max_lag_seconds: u64,
    /// Where `htmx-*.min.js` and `app.css` are served from (default: `static/` of the source
    /// tree), for packaging.
    #[arg(long, env = "SELLABLE_STATIC_DIR")]
    pub static_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum MerchantCmd {
    /// Add a merchant.
    Add {
        #[arg(long)]
        slug: String,
        #[arg(long)]
        name: String,
        /// ISO 4217 currency of the merchant's prices.
        #[arg(long, default_value = "CNY")]
        currency: String,
        /// The language its people see unless they choose another: zh-CN or en.
        #[arg(long, default_value = "en")]
        language: String,
    },
    /// Set the language a merchant's people see by default (zh-CN or en).
    SetLanguage {
        #[arg(long)]
        slug: String,
        #[arg(long)]
        language: String,
        /// Also set it as the language of every store's booking page.
        #[arg(long)]
        stores: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum StoreCmd {
    /// Add a store to a merchant.
    Add {
        #[arg(long)]
        merchant: String,
        #[arg(long)]
        slug: String,
        #[arg(long)]
        name: String,
        /// IANA timezone, e.g. Asia/Shanghai.
        #[arg(long)]
        timezone: String,
        /// ISO 3166 country of phone numbers typed without a country code, e.g. CN
        /// (default: the timezone's country).
        #[arg(long)]
        country: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum WarehouseCmd {
    /// Add a warehouse to a merchant.
    Add {
        #[arg(long)]
        merchant: String,
        #[arg(long)]
        slug: String,
        #[arg(long)]
        name: String,
        /// Higher priority warehouses are used first.
        #[arg(long, default_value_t = 0)]
        priority: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserCmd {
    /// Add a user. The password is read from stdin, or generated and printed when stdin is a terminal or empty.
    Add {
        #[arg(long)]
        email: String,
        /// operator | merchant_admin | store_staff
        #[arg(long)]
        role: String,
        #[arg(long)]
        merchant: Option<String>,
        #[arg(long)]
        store: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApikeyCmd {
    /// Create an API key for a merchant; prints the key alone on stdout.
    Create {
        #[arg(long)]
        merchant: String,
        #[arg(long, default_value = "cli")]
        name: String,
        /// Requests per second the key may make on each instance (0: unlimited); left out: the
        /// instance's default (SELLABLE_API_RATE_PER_SECOND).
        #[arg(long)]
        rate_per_second: Option<i64>,
    },
    /// Set a key's requests per second: a number (0: unlimited) or `default`.
    Rate {
        #[arg(long)]
        merchant: String,
        /// The key's name.
        #[arg(long)]
        name: String,
        rate: String,
    },
}

/// What the application needs to boot; built from the CLI in main and by hand in tests.
/// Every setting of a server run: the global flags and the server's as clap read them (each
/// setting is defined once, on its flag, with its environment variable and default), and the
/// clock they give. Tests build it as production does, from the same flags.
#[derive(Debug, Clone)]
pub struct Config {
    pub global: GlobalArgs,
    pub serve: ServeArgs,
    pub clock: crate::infra::clock::Clock,
}

impl Config {
    /// The settings of `sellable [global flags] serve [flags]` as parsed.
    pub fn from_args(global: &GlobalArgs, serve: &ServeArgs) -> Config {
        let mut serve = serve.clone();
        // A blank value (a deployment template's empty variable) is no value.
        serve.metrics_bind = serve.metrics_bind.filter(|b| !b.is_empty());
        serve.metrics_token = serve.metrics_token.filter(|t| !t.is_empty());
        Config {
            global: global.clone(),
            serve,
            clock: global.clock(),
        }
    }

    /// Every flag's default, on `database_url`, listening on a free port of 127.0.0.1: an app
    /// for a test or an embedding program. Parsed by the same flags as `sellable serve`, with
    /// every environment variable ignored, so a variable exported in a developer's shell cannot
    /// change a test.
    pub fn for_database(database_url: &str) -> Config {
        use clap::{CommandFactory, FromArgMatches};
        let no_env = |a: clap::Arg| a.env(None::<&'static str>);
        let matches = Cli::command()
            .mut_args(no_env)
            .mut_subcommand("serve", |s| s.mut_args(no_env))
            .try_get_matches_from([
                "sellable",
                "--database-url",
                database_url,
                "serve",
                "--bind",
                "127.0.0.1:0",
            ])
            .and_then(|m| Cli::from_arg_matches(&m));
        match matches {
            Ok(Cli {
                global,
                command: Some(Command::Serve(serve)),
            }) => Config::from_args(&global, &serve),
            // The flags are this file's: a test of any app shows a mistake in them at once.
            other => panic!("the flags' defaults do not parse: {other:?}"),
        }
    }

    /// The limits the "why not sellable" answer works with.
    pub fn sellable_thresholds(&self) -> crate::domain::sellable::Thresholds {
        crate::domain::sellable::Thresholds {
            window_days: self.serve.slot_window_days,
            low_stock: self.serve.low_stock_threshold,
            few_slots: self.serve.few_slots_threshold,
            code_runout_days: self.serve.code_runout_days,
        }
    }
}
