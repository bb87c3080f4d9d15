//! The Redis gate: Lua counters in front of SQL for the hot paths (reserve, book, code hold).
//!
//! Redis here is a projection of SQL, never the authority: a "no" from a script ends a request
//! without touching SQL; a "yes" is followed by SQL's conditional update, and undone at once if
//! SQL refuses. Every key carries the configured prefix and a hash tag (`{s12}`, `{t3.99}`,
//! `{c7}`) so that one script's keys share a Redis Cluster slot.
//!
//! Any Redis error or timeout turns the gate off for this instance ("degraded"): calls go to SQL
//! alone and the subjects they change are remembered. A probe brings the gate back once Redis
//! answers, after dropping those subjects' keys so that they load again from SQL.
//!
//! This module holds the connection, degradation and probe, the key names and the scripts; the
//! calls of each model are `stock`, `slots` and `codes`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod codes;
mod slots;
mod sold_out;
mod stock;

use redis::aio::ConnectionManager;
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Script, Value};

/// Where the keys live: one Redis, or a Redis Cluster (`REDIS_URL` lists some of its nodes,
/// comma-separated; the client learns the rest and follows failovers). Every script's keys share
/// a hash tag, so each runs on the one node that owns its slot.
enum Target {
    One(redis::Client),
    Cluster(Box<redis::cluster::ClusterClient>),
}

/// A connection to either. Cloning is cheap: both multiplex one socket per node.
#[derive(Clone)]
enum Conn {
    One(ConnectionManager),
    Cluster(redis::cluster_async::ClusterConnection),
}

impl redis::aio::ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a redis::Cmd) -> redis::RedisFuture<'a, Value> {
        match self {
            Conn::One(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }
    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::One(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }
    fn get_db(&self) -> i64 {
        match self {
            Conn::One(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

impl Conn {
    /// The primaries' addresses, from the slot map (`CLUSTER SLOTS`: for each range, its
    /// primary first). One Redis is its own only node (None).
    async fn primaries(&mut self) -> redis::RedisResult<Option<Vec<(String, u16)>>> {
        let Conn::Cluster(c) = self else {
            return Ok(None);
        };
        let slots = c
            .route_command(
                redis::cmd("CLUSTER").arg("SLOTS").clone(),
                RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random),
            )
            .await?;
        let mut out: Vec<(String, u16)> = Vec::new();
        if let Value::Array(ranges) = slots {
            for r in ranges {
                let Value::Array(parts) = r else { continue };
                let Some(Value::Array(node)) = parts.get(2) else {
                    continue;
                };
                let host = text(node.first());
                let port = int(node.get(1)) as u16;
                if !host.is_empty() && !out.contains(&(host.clone(), port)) {
                    out.push((host, port));
                }
            }
        }
        Ok(Some(out))
    }

    /// Runs a keyless command on one node of a cluster (by address), or on the one Redis.
    async fn on_node<T: redis::FromRedisValue>(
        &mut self,
        node: Option<&(String, u16)>,
        cmd: &redis::Cmd,
    ) -> redis::RedisResult<T> {
        match (self, node) {
            (Conn::Cluster(c), Some((host, port))) => {
                let v = c
                    .route_command(
                        cmd.clone(),
                        RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                            host: host.clone(),
                            port: *port,
                        }),
                    )
                    .await?;
                redis::from_redis_value(v).map_err(Into::into)
            }
            (c, _) => cmd.query_async(c).await,
        }
    }

    /// Whether the keys can be served: PING for one Redis; for a cluster, every slot covered
    /// (`cluster_state:ok`), which after a primary's death means its replica took over.
    async fn serving(&mut self) -> redis::RedisResult<bool> {
        match self {
            Conn::One(c) => redis::cmd("PING")
                .query_async::<String>(c)
                .await
                .map(|_| true),
            Conn::Cluster(c) => {
                let v = c
                    .route_command(
                        redis::cmd("CLUSTER").arg("INFO").clone(),
                        RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random),
                    )
                    .await?;
                // RESP2 answers a bulk string, RESP3 a verbatim one: the crate reads either.
                let info: String = redis::from_redis_value(v)?;
                Ok(info.contains("cluster_state:ok"))
            }
        }
    }
}

static STOCK_LOAD: &str = include_str!("../lua/stock_load.lua");
static STOCK_RESERVE: &str = include_str!("../lua/stock_reserve.lua");
static STOCK_SETTLE: &str = include_str!("../lua/stock_settle.lua");
static STOCK_FIX: &str = include_str!("../lua/stock_fix.lua");
static FORGET: &str = include_str!("../lua/forget.lua");
static SLOT_LOAD: &str = include_str!("../lua/slot_load.lua");
static SLOT_BOOK: &str = include_str!("../lua/slot_book.lua");
static SLOT_CANCEL: &str = include_str!("../lua/slot_cancel.lua");
static SLOT_MIRROR: &str = include_str!("../lua/slot_mirror.lua");
static SLOT_FIX: &str = include_str!("../lua/slot_fix.lua");
/// The voucher pool scripts share one rule, what a lost pool is (`code_pool.lua`, prepended).
macro_rules! code_script {
    ($file:literal) => {
        concat!(
            include_str!("../lua/code_pool.lua"),
            include_str!(concat!("../lua/", $file))
        )
    };
}
static CODE_HOLD: &str = code_script!("code_hold.lua");
static CODE_REFILL: &str = code_script!("code_refill.lua");
static CODE_RETURN: &str = code_script!("code_return.lua");
static CODE_FIX: &str = code_script!("code_fix.lua");

/// How an order's held lines settle in Redis, after SQL committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// Paid: the held units are sold.
    Confirm,
    /// Cancelled or expired: the held units are available again.
    Release,
    /// SQL refused a hold Redis gave: the units go back as if never held.
    Undo,
}

impl Settle {
    /// The script's argument (`stock_settle.lua`).
    fn arg(self) -> &'static str {
        match self {
            Settle::Confirm => "C",
            Settle::Release => "X",
            Settle::Undo => "U",
        }
    }
}

/// An order's line of goods as Redis records it (`stock_reserve.lua`, `stock_settle.lua`), for a
/// load to put back after the record was lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockRecord {
    pub order: String,
    pub warehouse: i64,
    pub qty: i64,
    /// None while the line is held; how it was settled once it is (never `Undo`: an undone hold
    /// has no record).
    pub settled: Option<Settle>,
    /// Seconds the record has left.
    pub ttl_s: i64,
}

/// A thing whose quantity Redis mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A goods SKU: one hash per warehouse.
    Stock(i64),
    /// A slot of a merchant.
    Slot { merchant: i64, slot: i64 },
    /// A voucher SKU's pool of code ids.
    Codes(i64),
}

/// How many code ids a refill reads from SQL at a time.
pub const CODE_REFILL_BATCH: i64 = 2000;
/// Below this many ids left, a hold asks for a refill in the background.
pub const CODE_LOW_MARK: i64 = 200;

/// Which way a slot's place moves in Redis once SQL has decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotFollow {
    GiveBack,
    /// Taken at the app's instant `at` (ms): the customer's mark outlives the booking window.
    Take {
        at: i64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StockAnswer {
    /// Held in this warehouse.
    Held(i64),
    /// Not enough in any single warehouse; the best one has this many.
    No(i64),
    /// This order was seen before: SQL answers it.
    Seen,
    /// The SKU is not loaded yet.
    Load,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotAnswer {
    Booked,
    Full,
    Closed(String),
    Started,
    /// remaining as Redis sees it, for the refusal's details
    Seen,
    Load,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeAnswer {
    /// These ids were taken from the pool; `low` asks for a refill.
    Held {
        ids: Vec<i64>,
        low: bool,
    },
    /// The pool (and SQL behind it) has only this many.
    No(i64),
    Refill,
    Seen,
    Load,
}

/// A slot as SQL has it, for loading.
#[derive(Debug, Clone)]
pub struct SlotState {
    pub remaining: i64,
    pub status: String,
    pub closed_reason: String,
    pub starts_at: i64,
}

/// What Redis holds for one warehouse of a SKU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StockCounts {
    pub available: i64,
    pub locked: i64,
    pub sold: i64,
}

struct Scripts {
    stock_load: Script,
    stock_reserve: Script,
    stock_settle: Script,
    stock_fix: Script,
    forget: Script,
    slot_load: Script,
    slot_book: Script,
    slot_cancel: Script,
    slot_mirror: Script,
    slot_fix: Script,
    code_hold: Script,
    code_refill: Script,
    code_return: Script,
    code_fix: Script,
}

pub struct Gate {
    target: Target,
    /// Made on first use; for a cluster, made again by the probe after a failure (a fresh one
    /// reads the slot map from a live node: the old one may still send a dead primary's slots to
    /// it).
    conn: std::sync::RwLock<Option<Conn>>,
    prefix: String,
    timeout: Duration,
    scripts: Scripts,
    degraded: AtomicBool,
    /// When it degraded (ms), 0 while on: alerts wait a minute before saying so.
    degraded_since: std::sync::atomic::AtomicI64,
    /// The app's clock, for `degraded_since` (the system's until `set_clock`).
    clock: std::sync::OnceLock<crate::infra::clock::Clock>,
    probing: AtomicBool,
    touched: Mutex<HashSet<Subject>>,
    /// The loads from SQL running in this instance, by subject.
    loads: Mutex<HashMap<Subject, Arc<Load>>>,
    /// What Redis said is sold out, believed for a moment (`sold_out`).
    sold_out: sold_out::SoldOutMemory,
}

/// One subject's load from SQL: the callers that missed together wait for one load rather than
/// each reading SQL and writing Redis.
#[derive(Default)]
pub struct Load {
    /// Loads finished: a caller that saw it move while it waited has nothing left to load.
    done: std::sync::atomic::AtomicU64,
    running: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("prefix", &self.prefix)
            .field("degraded", &self.is_degraded())
            .finish()
    }
}

/// Redis failed or was too slow; the caller goes on with SQL alone.
#[derive(Debug, Clone, Copy)]
pub struct Unavailable;

type GateResult<T> = Result<T, Unavailable>;

impl Gate {
    /// `url` names one Redis, or several nodes of a Redis Cluster separated by commas.
    pub fn new(url: &str, prefix: &str, timeout: Duration) -> redis::RedisResult<Arc<Gate>> {
        let nodes: Vec<&str> = url
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        let target = if nodes.len() > 1 {
            Target::Cluster(Box::new(
                redis::cluster::ClusterClient::builder(nodes)
                    .connection_timeout(timeout.max(Duration::from_millis(200)))
                    // One retry: a call that fails degrades the gate (SQL carries on) rather than
                    // wait out a failover; the probe brings it back once the replica serves.
                    .retries(1)
                    .build()?,
            ))
        } else {
            Target::One(redis::Client::open(url)?)
        };
        Ok(Arc::new(Gate {
            target,
            conn: std::sync::RwLock::new(None),
            prefix: prefix.to_string(),
            timeout,
            scripts: Scripts {
                stock_load: Script::new(STOCK_LOAD),
                stock_reserve: Script::new(STOCK_RESERVE),
                stock_settle: Script::new(STOCK_SETTLE),
                stock_fix: Script::new(STOCK_FIX),
                forget: Script::new(FORGET),
                slot_load: Script::new(SLOT_LOAD),
                slot_book: Script::new(SLOT_BOOK),
                slot_cancel: Script::new(SLOT_CANCEL),
                slot_mirror: Script::new(SLOT_MIRROR),
                slot_fix: Script::new(SLOT_FIX),
                code_hold: Script::new(CODE_HOLD),
                code_refill: Script::new(CODE_REFILL),
                code_return: Script::new(CODE_RETURN),
                code_fix: Script::new(CODE_FIX),
            },
            degraded: AtomicBool::new(false),
            degraded_since: std::sync::atomic::AtomicI64::new(0),
            clock: std::sync::OnceLock::new(),
            probing: AtomicBool::new(false),
            touched: Mutex::new(HashSet::new()),
            loads: Mutex::new(HashMap::new()),
            sold_out: Default::default(),
        }))
    }

    /// Runs `load` for a subject unless a load of it finished while this caller waited for the
    /// one running (then the keys are there: true). `load` says whether it loaded.
    pub async fn load_once<F, Fut, E>(&self, s: Subject, load: F) -> Result<bool, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<bool, E>>,
    {
        let entry = {
            let mut loads = self.loads.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(loads.entry(s).or_default())
        };
        let seen = entry.done.load(Ordering::SeqCst);
        let out = {
            let _running = entry.running.lock().await;
            if entry.done.load(Ordering::SeqCst) != seen {
                Ok(true)
            } else {
                let out = load().await;
                if matches!(out, Ok(true)) {
                    entry.done.fetch_add(1, Ordering::SeqCst);
                }
                out
            }
        };
        // The last caller out takes the entry away (the map holds one reference, we another).
        // Ours goes while the map is locked, so two callers leaving together cannot each see
        // the other's and both leave it behind.
        let mut loads = self.loads.lock().unwrap_or_else(|e| e.into_inner());
        if Arc::strong_count(&entry) == 2 {
            loads.remove(&s);
        }
        drop(entry);
        drop(loads);
        out
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Sets each (key, value, seconds) where no key is (SET NX EX), 500 to a round trip: the
    /// order records a load puts back. The keys of one call share a hash tag: one cluster slot.
    async fn put_records(
        self: &Arc<Self>,
        what: &'static str,
        records: impl Iterator<Item = (String, String, i64)>,
    ) -> GateResult<()> {
        let records: Vec<_> = records.collect();
        for chunk in records.chunks(500) {
            let mut pipe = redis::pipe();
            for (key, value, ttl_s) in chunk {
                pipe.cmd("SET")
                    .arg(key)
                    .arg(value)
                    .arg("NX")
                    .arg("EX")
                    .arg(*ttl_s)
                    .ignore();
            }
            self.run(
                what,
                |mut c| async move { pipe.query_async::<()>(&mut c).await },
            )
            .await?;
        }
        Ok(())
    }

    /// How long a SKU found sold out in every warehouse, a slot found full or a voucher SKU found
    /// without codes is believed so without running the script (zero: not at all).
    /// Unix seconds by Redis's clock at the app's instant `app_ms` (EXPIREAT counts by Redis's
    /// clock: an app set to another day must not expire its keys at once).
    fn redis_seconds(&self, app_ms: i64) -> i64 {
        self.clock.get().map_or(app_ms, |c| c.to_wall_ms(app_ms)) / 1000
    }

    /// Stamps `degraded_since` by the app's clock, which the alert compares it with.
    pub fn set_clock(&self, clock: crate::infra::clock::Clock) {
        let _ = self.clock.set(clock);
    }

    pub fn set_sold_out_memory(&self, memory: Duration) {
        self.sold_out.set_memory(memory);
    }

    /// Whether this instance heard, less than the memory's time ago, that nothing of a subject
    /// is left.
    pub fn remembers_sold_out(&self, s: Subject) -> bool {
        self.sold_out.remembers(s)
    }

    /// Whether the sold-out memory answers this request: the subject is remembered with nothing
    /// left and none of `keys` (the order's record; a booking's customer and key marks) exists.
    /// A request that finds one is a repeat: the script answers it, as without the memory.
    async fn refused_from_memory(
        self: &Arc<Self>,
        op: &'static str,
        s: Subject,
        keys: &[&str],
    ) -> GateResult<bool> {
        if !self.sold_out.remembers(s) {
            return Ok(false);
        }
        let found: i64 = self
            .run(op, |mut c| async move {
                redis::cmd("EXISTS").arg(keys).query_async(&mut c).await
            })
            .await?;
        if found == 0 {
            metrics::counter!("sellable_gate_sold_out_remembered_total").increment(1);
        }
        Ok(found == 0)
    }

    /// True while Redis failed and the probe has not brought it back.
    pub fn is_degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }

    /// Since when (ms) this instance serves from SQL alone, while it does.
    pub fn degraded_since(&self) -> Option<i64> {
        match self.degraded_since.load(Ordering::Relaxed) {
            0 => None,
            t => self.is_degraded().then_some(t),
        }
    }

    /// Whether a call should go through Redis now.
    pub fn on(&self) -> bool {
        !self.is_degraded()
    }

    /// A subject changed in SQL without Redis following: its keys are dropped when Redis returns.
    pub fn touch(&self, s: Subject) {
        if let Ok(mut t) = self.touched.lock() {
            t.insert(s);
        }
    }

    fn connection(&self) -> GateResult<Conn> {
        // Made once (lazily: it connects on first use and reconnects by itself); after that each
        // call takes a read lock, which nothing holds for long.
        if let Some(c) = self.conn.read().ok().and_then(|c| c.clone()) {
            return Ok(c);
        }
        let c = self.fresh_connection()?;
        let mut slot = self.conn.write().map_err(|_| Unavailable)?;
        Ok(slot.get_or_insert(c).clone())
    }

    fn fresh_connection(&self) -> GateResult<Conn> {
        Ok(match &self.target {
            Target::One(client) => {
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(self.timeout.max(Duration::from_millis(200))))
                    // No second timer per command: `run` already bounds every call, connecting
                    // included.
                    .set_response_timeout(None)
                    .set_number_of_retries(1);
                Conn::One(
                    ConnectionManager::new_lazy_with_config(client.clone(), config)
                        .map_err(|_| Unavailable)?,
                )
            }
            Target::Cluster(client) => Conn::Cluster(
                client.get_pending_async_connection_with_config(
                    redis::cluster::ClusterConfig::new()
                        .set_connection_timeout(self.timeout.max(Duration::from_millis(200))),
                ),
            ),
        })
    }

    /// Whether this gate talks to a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.target, Target::Cluster(_))
    }

    /// Runs one Redis call under the timeout; a failure degrades the instance.
    async fn run<T, F, Fut>(self: &Arc<Self>, op: &'static str, f: F) -> GateResult<T>
    where
        F: FnOnce(Conn) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let conn = self.connection()?;
        let started = Instant::now();
        let out = tokio::time::timeout(self.timeout, f(conn)).await;
        static HANDLES: std::sync::LazyLock<crate::telemetry::Handles<&str, metrics::Histogram>> =
            std::sync::LazyLock::new(crate::telemetry::Handles::new);
        HANDLES
            .get(
                op,
                |&op| metrics::histogram!("sellable_gate_call_seconds", "script" => op),
            )
            .record(started.elapsed().as_secs_f64());
        match out {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                self.fail(op, &e.to_string());
                Err(Unavailable)
            }
            Err(_) => {
                self.fail(op, "timed out");
                Err(Unavailable)
            }
        }
    }

    fn fail(self: &Arc<Self>, op: &str, why: &str) {
        metrics::counter!("sellable_gate_errors_total", "script" => op.to_string()).increment(1);
        if !self.degraded.swap(true, Ordering::SeqCst) {
            self.degraded_since.store(
                self.clock
                    .get()
                    .map_or_else(crate::infra::clock::wall_ms, |c| c.now_ms()),
                Ordering::Relaxed,
            );
            tracing::warn!(
                script = op,
                error = why,
                "Redis gate degraded: serving from SQL alone"
            );
            metrics::counter!("sellable_gate_degraded_switches_total").increment(1);
            metrics::gauge!("sellable_gate_degraded").set(1.0);
        }
        self.spawn_probe();
    }

    /// Pings Redis until it answers, drops the keys of everything changed meanwhile, then turns
    /// the gate back on.
    fn spawn_probe(self: &Arc<Self>) {
        if self.probing.swap(true, Ordering::SeqCst) {
            return;
        }
        let gate = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if gate.try_recover().await {
                    break;
                }
            }
            gate.probing.store(false, Ordering::SeqCst);
        });
    }

    async fn try_recover(&self) -> bool {
        // A cluster's connection is made anew: after a failover the old one may keep sending the
        // dead primary's slots to it (it learns the new map only from a node that answers).
        let conn = if self.is_cluster() {
            self.fresh_connection()
        } else {
            self.connection()
        };
        let Ok(conn) = conn else {
            return false;
        };
        let mut c = conn.clone();
        // A fresh cluster connection first connects to every listed node (each bounded by the
        // connect timeout, in parallel), then asks: one timeout would never be enough when a
        // listed host is down.
        let budget = match self.target {
            Target::One(_) => self.timeout.max(Duration::from_millis(200)),
            Target::Cluster(_) => self.timeout.max(Duration::from_millis(200)) * 4,
        };
        let ping = tokio::time::timeout(budget, c.serving()).await;
        if !matches!(ping, Ok(Ok(true))) {
            return false;
        }
        let subjects: Vec<Subject> = self
            .touched
            .lock()
            .map(|t| t.iter().copied().collect())
            .unwrap_or_default();
        for s in &subjects {
            let mut c = conn.clone();
            let inv = self.forget_invocation(*s);
            if !matches!(
                tokio::time::timeout(
                    self.timeout.max(Duration::from_millis(200)),
                    inv.invoke_async::<i64>(&mut c)
                )
                .await,
                Ok(Ok(_))
            ) {
                return false;
            }
        }
        if let Ok(mut t) = self.touched.lock() {
            for s in &subjects {
                t.remove(s);
            }
            // Calls may have touched more subjects while we were dropping keys; keep degraded
            // until those are gone too.
            if !t.is_empty() {
                return false;
            }
            if self.is_cluster() {
                if let Ok(mut c) = self.conn.write() {
                    *c = Some(conn.clone());
                }
            }
            // What was heard before the outage may no longer hold: ask Redis again.
            self.sold_out.clear();
            self.degraded.store(false, Ordering::SeqCst);
            self.degraded_since.store(0, Ordering::Relaxed);
        }
        tracing::info!(rebuilt = subjects.len(), "Redis gate back on");
        metrics::counter!("sellable_gate_recoveries_total").increment(1);
        metrics::gauge!("sellable_gate_degraded").set(0.0);
        true
    }

    /// Checks Redis now (for /readyz and the back office header): true when it answers.
    pub async fn ping(&self) -> bool {
        let Ok(mut c) = self.connection() else {
            return false;
        };
        matches!(
            tokio::time::timeout(self.timeout.max(Duration::from_millis(200)), c.serving()).await,
            Ok(Ok(true))
        )
    }

    /// Each primary's `maxmemory-policy` (address, policy), as far as Redis lets us read it:
    /// managed services often refuse CONFIG, and that is no reason to degrade the gate, so this
    /// does not go through [`Gate::run`].
    pub async fn eviction_policies(&self) -> Vec<(String, String)> {
        let Ok(mut c) = self.connection() else {
            return Vec::new();
        };
        let limit = self.timeout.max(Duration::from_millis(200));
        let nodes = match tokio::time::timeout(limit, c.primaries()).await {
            Ok(Ok(Some(list))) => list.into_iter().map(Some).collect(),
            Ok(Ok(None)) => vec![None],
            _ => return Vec::new(),
        };
        let cmd = redis::cmd("CONFIG")
            .arg("GET")
            .arg("maxmemory-policy")
            .clone();
        let mut out = Vec::new();
        for node in nodes {
            let at = node
                .as_ref()
                .map(|(h, p)| format!("{h}:{p}"))
                .unwrap_or_else(|| "redis".into());
            // A map: RESP3 answers CONFIG GET with one, RESP2 with a flat list of pairs, and
            // both read as one.
            if let Ok(Ok(mut v)) = tokio::time::timeout(
                limit,
                c.on_node::<HashMap<String, String>>(node.as_ref(), &cmd),
            )
            .await
            {
                if let Some(policy) = v.remove("maxmemory-policy") {
                    out.push((at, policy));
                }
            }
        }
        out
    }

    // ---- key names --------------------------------------------------------------------------

    // The key layout (bench/gate.sh builds the same keys by hand to time the scripts alone:
    // change both together):
    //   stock  {prefix}:{s<sku>}:whs            warehouse ids of the SKU, in reservation order
    //          {prefix}:{s<sku>}:w:<warehouse>  hash a (available) l (locked) s (sold)
    //          {prefix}:{s<sku>}:o:<order>      an order's held lines
    //   slot   {prefix}:{t<merchant>.<slot>}    hash r (remaining) st (status) why at (starts)
    //          {prefix}:{t<merchant>.<slot>}:c:<customer>   a customer's place
    //   codes  {prefix}:{c<sku>}:pool           ids ready to hand out
    //          {prefix}:{c<sku>}:meta           hash more (SQL has more) cur (refill cursor)
    //          {prefix}:{c<sku>}:o:<order>      an order's held ids
    // Keys are joined from their parts rather than `format!`ed: every call of the hot paths
    // builds two or three, and the formatting machinery cost more than the joining.
    fn stock_base(&self, sku: i64) -> String {
        [&self.prefix, ":{s", itoa::Buffer::new().format(sku), "}:"].concat()
    }
    fn slot_key(&self, merchant: i64, slot: i64) -> String {
        let (mut m, mut t) = (itoa::Buffer::new(), itoa::Buffer::new());
        [
            &self.prefix,
            ":{t",
            m.format(merchant),
            ".",
            t.format(slot),
            "}",
        ]
        .concat()
    }
    fn code_base(&self, sku: i64) -> String {
        [&self.prefix, ":{c", itoa::Buffer::new().format(sku), "}:"].concat()
    }

    fn forget_invocation(&self, s: Subject) -> redis::ScriptInvocation<'_> {
        let mut inv = self.scripts.forget.prepare_invoke();
        match s {
            Subject::Stock(sku) => {
                inv.key(format!("{}whs", self.stock_base(sku)));
            }
            Subject::Slot { merchant, slot } => {
                inv.key(self.slot_key(merchant, slot));
            }
            Subject::Codes(sku) => {
                let b = self.code_base(sku);
                inv.key(format!("{b}meta"))
                    .key(format!("{b}pool"))
                    .key(format!("{b}lock"));
            }
        }
        inv
    }

    /// Drops a subject's keys after a change made outside the gate (adjustment, closure,
    /// import…): the next use loads it again from SQL. When Redis is unreachable the subject is
    /// remembered and dropped on recovery.
    pub async fn forget(self: &Arc<Self>, s: Subject) {
        let _changing = self.sold_out.changing(s);
        if !self.on() {
            self.touch(s);
            return;
        }
        let r = self
            .run("forget", |mut c| async move {
                self.forget_invocation(s).invoke_async::<i64>(&mut c).await
            })
            .await;
        if r.is_err() {
            self.touch(s);
        }
    }

    /// Every key matching `pattern`, walked with SCAN (never KEYS, which blocks Redis); in a
    /// cluster, on every primary, since each holds its own slots' keys.
    async fn scan(self: &Arc<Self>, pattern: String) -> GateResult<Vec<String>> {
        self.run("scan", |mut c| async move {
            let nodes = c.primaries().await?;
            let nodes: Vec<Option<&(String, u16)>> = match &nodes {
                None => vec![None],
                Some(list) => list.iter().map(Some).collect(),
            };
            let mut out = Vec::new();
            for node in nodes {
                let mut cursor: u64 = 0;
                loop {
                    let cmd = redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(&pattern)
                        .arg("COUNT")
                        .arg(1000)
                        .clone();
                    let (next, batch): (u64, Vec<String>) = c.on_node(node, &cmd).await?;
                    out.extend(batch);
                    if next == 0 {
                        break;
                    }
                    cursor = next;
                }
            }
            Ok(out)
        })
        .await
    }

    /// Every subject with keys under this prefix (reconciliation walks them).
    pub async fn loaded_subjects(self: &Arc<Self>) -> GateResult<Vec<Subject>> {
        let keys = self.scan(format!("{}:{{*", self.prefix)).await?;
        let mut seen = HashSet::new();
        let start = self.prefix.len() + 2;
        for k in keys {
            let Some(end) = k[start.min(k.len())..].find('}') else {
                continue;
            };
            let tag = &k[start..start + end];
            let subject = if let Some(rest) = tag.strip_prefix('s') {
                (k.ends_with(":whs")).then(|| rest.parse().ok().map(Subject::Stock))
            } else if let Some(rest) = tag.strip_prefix('t') {
                (k.len() == start + end + 1).then(|| {
                    let (m, s) = rest.split_once('.')?;
                    Some(Subject::Slot {
                        merchant: m.parse().ok()?,
                        slot: s.parse().ok()?,
                    })
                })
            } else if let Some(rest) = tag.strip_prefix('c') {
                (k.ends_with(":meta")).then(|| rest.parse().ok().map(Subject::Codes))
            } else {
                None
            };
            if let Some(Some(s)) = subject {
                seen.insert(s);
            }
        }
        Ok(seen.into_iter().collect())
    }

    /// Drops every key under this prefix (tests simulate a flushed Redis with it). A cluster
    /// refuses a DEL of keys in several slots, so there each subject's keys (one hash tag, one
    /// slot) go in one DEL: like a node's FLUSHALL, a subject is never seen half gone.
    pub async fn flush_prefix(self: &Arc<Self>) -> GateResult<u64> {
        let keys = self.scan(format!("{}:*", self.prefix)).await?;
        let groups: Vec<Vec<String>> = if self.is_cluster() {
            let mut by_tag: HashMap<String, Vec<String>> = HashMap::new();
            for k in keys {
                by_tag.entry(hash_tag(&k).to_owned()).or_default().push(k);
            }
            by_tag.into_values().collect()
        } else {
            keys.chunks(500).map(|c| c.to_vec()).collect()
        };
        let mut n = 0;
        for group in groups {
            n += self.del(group).await?;
        }
        Ok(n)
    }

    /// Drops, one by one, the keys under this prefix whose name after it matches `pattern`
    /// (tests simulate a key lost alone: evicted, or caught mid-way by a key-by-key flush).
    pub async fn lose_keys(self: &Arc<Self>, pattern: &str) -> GateResult<u64> {
        let mut n = 0;
        for k in self.scan(format!("{}:{pattern}", self.prefix)).await? {
            n += self.del(vec![k]).await?;
        }
        Ok(n)
    }

    async fn del(self: &Arc<Self>, keys: Vec<String>) -> GateResult<u64> {
        self.run("flush", |mut c| async move {
            redis::cmd("DEL").arg(keys).query_async::<u64>(&mut c).await
        })
        .await
    }
}

/// The part of a key Redis Cluster hashes: between the first `{` and the next `}`, when both
/// are there and something is between them; else the whole key.
fn hash_tag(key: &str) -> &str {
    key.find('{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            rest.find('}')
                .filter(|&close| close > 0)
                .map(|close| &rest[..close])
        })
        .unwrap_or(key)
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
        Some(Value::SimpleString(s)) => s.clone(),
        Some(Value::Int(i)) => i.to_string(),
        _ => String::new(),
    }
}

fn int(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Int(i)) => *i,
        other => text(other).parse().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::{hash_tag, Gate, Subject};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn callers_that_miss_together_share_one_load_and_a_later_miss_loads_again() {
        // The client connects lazily: nothing here talks to Redis.
        let gate = Gate::new("redis://127.0.0.1:1", "t", Duration::from_millis(50)).unwrap();
        let loads = Arc::new(AtomicUsize::new(0));
        let load = |loads: Arc<AtomicUsize>| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            loads.fetch_add(1, Ordering::SeqCst);
            Ok::<bool, ()>(true)
        };
        let callers: Vec<_> = (0..10)
            .map(|_| {
                let (gate, loads) = (Arc::clone(&gate), Arc::clone(&loads));
                tokio::spawn(async move { gate.load_once(Subject::Stock(7), || load(loads)).await })
            })
            .collect();
        for c in callers {
            assert_eq!(c.await.unwrap(), Ok(true));
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1, "ten misses, one load");
        assert!(
            gate.loads.lock().unwrap().is_empty(),
            "the last caller out cleans up"
        );
        // Another subject, and the same one later, load on their own.
        gate.load_once(Subject::Stock(8), || load(Arc::clone(&loads)))
            .await
            .unwrap();
        gate.load_once(Subject::Stock(7), || load(Arc::clone(&loads)))
            .await
            .unwrap();
        assert_eq!(loads.load(Ordering::SeqCst), 3);
        // A load that failed leaves the next caller to try again.
        let failed = gate
            .load_once(Subject::Stock(7), || async { Ok::<bool, ()>(false) })
            .await;
        assert_eq!(failed, Ok(false));
    }

    #[test]
    fn a_keys_hash_tag_is_what_redis_cluster_hashes() {
        assert_eq!(hash_tag("p:{s12}:w:3"), "s12");
        assert_eq!(hash_tag("p:{t1.2}"), "t1.2");
        // Redis hashes the whole key when the braces hold nothing or do not close.
        assert_eq!(hash_tag("p:{}:x"), "p:{}:x");
        assert_eq!(hash_tag("p:{open"), "p:{open");
        assert_eq!(hash_tag("plain"), "plain");
    }
}
