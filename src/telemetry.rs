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
