//! Logs and metrics. The Prometheus recorder is process-global (the metrics crate allows one), so
//! several apps in one test process share it.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;

static PROMETHEUS: OnceLock<PrometheusHandle> = OnceLock::new();

pub fn prometheus() -> PrometheusHandle {
    PROMETHEUS
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets(&[
                    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                ])
                .expect("static buckets are valid")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder may already be installed (e.g. by a test harness); then ours only renders.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

pub fn init_logging(format: &str) {
    let filter = EnvFilter::try_from_env("SELLABLE_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_sessions=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Metric handles kept by their label values. `counter!("name", "label" => value)` builds a key
/// (label strings, a hash) and looks it up in the recorder on every call; on the gate's sold-out
/// path that came to a twentieth of a refusal's cost. Handles found once are reused: a lookup by a
/// small key, then an atomic add.
pub struct Handles<K, V> {
    map: std::sync::RwLock<std::collections::HashMap<K, V, foldhash::fast::RandomState>>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Handles<K, V> {
    pub fn new() -> Self {
        // The recorder must be in place first, or the handles made here would record nowhere.
        prometheus();
        Handles {
            map: std::sync::RwLock::new(std::collections::HashMap::default()),
        }
    }

    /// The handles for `key`, made by `make` the first time.
    pub fn get(&self, key: K, make: impl FnOnce(&K) -> V) -> V {
        if let Some(v) = self.map.read().ok().and_then(|m| m.get(&key).cloned()) {
            return v;
        }
        let v = make(&key);
        if let Ok(mut m) = self.map.write() {
            m.entry(key).or_insert_with(|| v.clone());
        }
        v
    }
}

impl<K: std::hash::Hash + Eq, V: Clone> Default for Handles<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

/// Counts a gate decision (`op`: reserve, book…; `result`: yes, no, miss…) for /metrics.
pub fn count_gate(op: &'static str, result: &'static str) {
    static HANDLES: std::sync::LazyLock<Handles<(&str, &str), metrics::Counter>> =
        std::sync::LazyLock::new(Handles::new);
    HANDLES
        .get((op, result), |&(op, result)| {
            metrics::counter!("sellable_gate_total", "op" => op, "result" => result)
        })
        .increment(1);
}

/// Counts a group of changes to one hot row (`row`: stock, slot) by what its transaction came to
/// (`held`: made at least one; `refused`: answered only refusals, such as sold out; `alone`: sent
/// every change back to be made one by one), and the sizes of the groups, for /metrics: how much
/// the hot paths are grouping.
pub fn count_group(
    row: &'static str,
    size: usize,
    result: crate::domain::kernel::groups::GroupResult,
) {
    type GroupHandles = Handles<
        (&'static str, crate::domain::kernel::groups::GroupResult),
        (metrics::Counter, metrics::Histogram),
    >;
    static HANDLES: std::sync::LazyLock<GroupHandles> = std::sync::LazyLock::new(Handles::new);
    let (counter, histogram) = HANDLES.get((row, result), |&(row, result)| {
        (
            metrics::counter!("sellable_groups_total", "row" => row, "result" => result.label()),
            metrics::histogram!("sellable_group_size", "row" => row),
        )
    });
    counter.increment(1);
    histogram.record(size as f64);
}

/// Records a domain operation's outcome (ok, a conflict's code, invalid…) and latency for
/// /metrics.
pub fn observe_op(op: &'static str, started: std::time::Instant, outcome: &'static str) {
    type OpHandles = Handles<(&'static str, &'static str), (metrics::Counter, metrics::Histogram)>;
    static HANDLES: std::sync::LazyLock<OpHandles> = std::sync::LazyLock::new(Handles::new);
    let (counter, histogram) = HANDLES.get((op, outcome), |&(op, outcome)| {
        (
            metrics::counter!("sellable_op_total", "op" => op, "outcome" => outcome),
            metrics::histogram!("sellable_op_seconds", "op" => op),
        )
    });
    counter.increment(1);
    histogram.record(started.elapsed().as_secs_f64());
}
