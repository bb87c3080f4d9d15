//! The gate on a Redis Cluster of the test's own (six nodes: three primaries, three replicas,
//! started by `.ci/redis-cluster` on ports of its own), and the drill: the primary that owns the
//! hot SKU's keys is killed (SIGKILL) in the middle of a flash sale. The gate degrades to SQL
//! (or follows the failover), nothing is oversold, the replica takes over, the gate comes back on
//! with the SKU's keys rebuilt from SQL, and every unit not sold is still for sale.
//! The other gate tests run against the shared cluster too (`pg!` in gate.rs).

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::helpers::{Backend, TestApp};

/// A private cluster on BASE..BASE+5 (and their bus ports, +10000), shut down when dropped.
struct PrivateCluster {
    base: u16,
    dir: PathBuf,
    url: String,
}

impl PrivateCluster {
    fn start() -> Option<PrivateCluster> {
        // Six consecutive ports no other test uses, derived from this process. They and their
        // bus ports (+10000: 22000-26000) stay below the kernel's ephemeral range (32768 up),
        // where a client socket could hold one, and away from the shared cluster (7000, 17000).
        let base = 12_000 + (std::process::id() % 400) as u16 * 10;
        let dir = std::env::temp_dir().join(format!("sellable-cluster-{base}"));
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".ci/redis-cluster");
        let out = Command::new("bash")
            .arg(&script)
            .arg(base.to_string())
            .arg(&dir)
            // A node silent for a second is failed over: the drill wants it quick.
            .arg("1000")
            .output();
        let mut cluster = PrivateCluster {
            base,
            dir,
            url: String::new(),
        };
        match out {
            Ok(o) if o.status.success() => {
                cluster.url = String::from_utf8_lossy(&o.stdout).trim().to_string();
                Some(cluster)
            }
            // Dropping `cluster` stops the nodes that did start.
            Ok(o) => {
                crate::helpers::skip_or_fail("Redis Cluster", &String::from_utf8_lossy(&o.stderr));
                None
            }
            Err(e) => {
                crate::helpers::skip_or_fail("Redis Cluster", &e.to_string());
                None
            }
        }
    }

    fn cli(&self, port: u16, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .arg("-p")
            .arg(port.to_string())
            .args(args)
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// The port of the primary that serves `key`'s slot now (none while a failover is on), as a
    /// node other than `dead` sees it.
    fn primary_of(&self, key: &str, dead: Option<u16>) -> Option<u16> {
        let live = (self.base..self.base + 6)
            .find(|p| Some(*p) != dead)
            .unwrap();
        let slot: u16 = self
            .cli(live, &["cluster", "keyslot", key])
            .trim()
            .parse()
            .expect("a slot number");
        let nodes = self.cli(live, &["cluster", "nodes"]);
        for line in nodes.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 9 || !f[2].contains("master") || f[2].contains("fail") {
                continue;
            }
            let port: u16 = f[1]
                .split(['@', ':'])
                .nth(1)
                .and_then(|p| p.parse().ok())
                .expect("a port");
            for range in &f[8..] {
                let (a, b) = range.split_once('-').unwrap_or((range, range));
                if let (Ok(a), Ok(b)) = (a.parse::<u16>(), b.parse::<u16>()) {
                    if (a..=b).contains(&slot) {
                        return Some(port);
                    }
                }
            }
        }
        None
    }

    fn kill(&self, port: u16) {
        let pid: i32 = self
            .cli(port, &["info", "server"])
            .lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .and_then(|p| p.trim().parse().ok())
            .expect("the node's pid");
        // SAFETY: sends a signal to a process this test started; no memory is shared.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }

    /// Whether every slot is served, asked of a node that is not `dead`.
    fn ok(&self, dead: u16) -> bool {
        let live = (self.base..self.base + 6).find(|p| *p != dead).unwrap();
        self.cli(live, &["cluster", "info"])
            .contains("cluster_state:ok")
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        for p in self.base..self.base + 6 {
            let _ = Command::new("redis-cli")
                .args(["-p", &p.to_string(), "shutdown", "nosave"])
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_primary_killed_mid_flash_sale_oversells_nothing_and_the_gate_comes_back() {
    const UNITS: i64 = 150;
    const ATTEMPTS: usize = 400;
    let Some(cluster) = PrivateCluster::start() else {
        return;
    };
    let url = cluster.url.clone();
    let Some(app) = TestApp::spawn_with(Backend::Postgres, |c| {
        c.global.redis_url = Some(url.clone())
    })
    .await
    else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "HOT").await;
    api.receive("HOT", "main", UNITS).await;
    let sku = app.sku_id("HOT").await;
    let gate = app.db.gate.clone().expect("the gate is on");
    assert!(gate.is_cluster());
    // A first order loads the SKU's keys; their primary is the one to kill.
    let (s, b) = api
        .reserve("first", json!([{"sku": "HOT", "qty": 1}]))
        .await;
    assert_eq!(s, 201, "{b}");
    let key = format!("{}:{{s{sku}}}:whs", gate.prefix());
    let victim = cluster
        .primary_of(&key, None)
        .expect("a primary serves the SKU's keys");

    // The first wave is under way when the primary dies; the second comes after, while the
    // cluster fails over.
    const FIRST_WAVE: usize = 100;
    let answered = Arc::new(AtomicUsize::new(0));
    let wave = |range: std::ops::Range<usize>| {
        range
            .map(|i| {
                let (api, answered) = (api.clone(), answered.clone());
                tokio::spawn(async move {
                    let r = api
                        .reserve(&format!("o-{i}"), json!([{"sku": "HOT", "qty": 1}]))
                        .await;
                    answered.fetch_add(1, Ordering::SeqCst);
                    (i, r)
                })
            })
            .collect::<Vec<_>>()
    };
    // Whether the gate was seen off at any moment of the sale: the kill must have been felt.
    let seen_degraded = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let (gate, seen) = (gate.clone(), seen_degraded.clone());
        tokio::spawn(async move {
            loop {
                if gate.is_degraded() {
                    seen.store(true, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    let mut tasks = wave(0..FIRST_WAVE);
    for _ in 0..15_000 {
        if answered.load(Ordering::SeqCst) >= FIRST_WAVE / 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert!(
        answered.load(Ordering::SeqCst) >= FIRST_WAVE / 4,
        "the first wave was answered"
    );
    cluster.kill(victim);
    tasks.extend(wave(FIRST_WAVE..ATTEMPTS));
    let mut held = 1; // "first"
    let mut held_after_kill = 0;
    for t in tasks {
        let (i, (s, b)) = t.await.unwrap();
        match s {
            201 => {
                held += 1;
                if i >= FIRST_WAVE {
                    held_after_kill += 1;
                }
            }
            409 => assert_eq!(b["error"], "insufficient_stock", "{b}"),
            _ => panic!("every buyer gets an answer, Redis or not: {s} {b}"),
        }
    }
    // At most FIRST_WAVE + 1 of the 150 units went before the kill.
    assert!(held_after_kill > 0, "orders sent after the kill were held");
    watch.abort();
    assert!(
        seen_degraded.load(Ordering::SeqCst),
        "the gate went to SQL alone when the primary died"
    );
    let stock = api.stock("HOT").await;
    assert_eq!(stock["locked"].as_i64(), Some(held), "{stock}");
    assert!(held <= UNITS, "nothing oversold: {held}");

    // The replica takes over, and the gate comes back on by itself.
    let mut failed_over = false;
    for _ in 0..150 {
        if cluster.ok(victim)
            && cluster
                .primary_of(&key, Some(victim))
                .is_some_and(|p| p != victim)
        {
            failed_over = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(failed_over, "a replica took the dead primary's slots");
    let mut back = false;
    for _ in 0..150 {
        if !gate.is_degraded() && gate.ping().await {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back, "the gate came back on after the failover");
    // Reconciliation puts back what the dead primary's last writes left wrong; no SQL identity
    // is broken.
    let report =
        sellable::domain::reconcile::run(&app.db, "job", &sellable::domain::Actor::system("test"))
            .await
            .unwrap();
    assert!(report.broken.is_empty(), "{report:?}");
    // Every unit not held still sells, through the gate on the new primary.
    let more = api.reserve_until_sold_out("HOT", "after").await;
    assert_eq!(
        held + more,
        UNITS,
        "held {held} in the sale and {more} after"
    );
    assert!(!gate.is_degraded(), "the sale after ran through the gate");
    app.assert_ledger_replays().await;
}
