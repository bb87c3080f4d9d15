//! Signed webhooks: registered by API and in the back office, each event POSTed once per
//! endpoint with a signature that verifies, retried while the receiver is down, paused after a
//! day of failures, never sent inward unless allowed, and delivered once across instances (at
//! least once when one is killed mid-burst).
//!
//! Most tests drive the sender by hand with a clock of their own (`Dispatcher::run_once` at a
//! chosen time), so that "a day later" takes no time; the process tests run the real job.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{json, Value};

use crate::gate::Process;
use crate::helpers::{Api, Backend, TestApp};
use crate::on_both;
use sellable::domain::integration::webhooks::dispatch::{Dispatcher, GIVE_UP_AFTER_MS};
use sellable::domain::integration::webhooks::signature;

const HOUR: i64 = 3_600_000;

/// One request the receiver took.
#[derive(Clone, Debug)]
struct Got {
    event_id: String,
    signature: String,
    body: Vec<u8>,
}

/// A webhook receiver on loopback: records every request, answers with the status it is set to
/// (after a delay, if set).
#[derive(Clone)]
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Got>>>,
    status: Arc<AtomicU16>,
    delay_ms: Arc<AtomicU64>,
}

async fn take(State(r): State<Receiver>, headers: HeaderMap, body: Bytes) -> (StatusCode, String) {
    let delay = r.delay_ms.load(Ordering::Relaxed);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    r.got.lock().unwrap().push(Got {
        event_id: header("sellable-event-id"),
        signature: header("sellable-signature"),
        body: body.to_vec(),
    });
    let status = StatusCode::from_u16(r.status.load(Ordering::Relaxed)).unwrap();
    (status, format!("receiver says {}", status.as_u16()))
}

async fn receiver() -> Receiver {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let r = Receiver {
        url: format!("http://{}/hook", listener.local_addr().unwrap()),
        got: Arc::default(),
        status: Arc::new(AtomicU16::new(200)),
        delay_ms: Arc::default(),
    };
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(take))
        .with_state(r.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    r
}

impl Receiver {
    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }
    fn set_status(&self, s: u16) {
        self.status.store(s, Ordering::Relaxed);
    }
}

/// An app whose sender runs only when the test says, with private addresses allowed (the
/// receiver is on loopback).
async fn app_driven_by_hand(backend: Backend) -> Option<TestApp> {
    TestApp::spawn_with(backend, |c| {
        c.serve.webhook_poll_ms = 0;
        c.serve.webhook_allow_private = true;
    })
    .await
}

fn sender(app: &TestApp, allow_private: bool) -> Dispatcher {
    Dispatcher::new(
        app.state.codes.clone(),
        Duration::from_secs(5),
        allow_private,
    )
}

async fn register(api: &Api, url: &str, events: Value) -> (i64, String) {
    let (s, b) = api
        .post("/api/v1/webhooks", json!({"url": url, "events": events}))
        .await;
    assert_eq!(s, 201, "{b}");
    (
        b["id"].as_i64().unwrap(),
        b["secret"].as_str().unwrap().to_string(),
    )
}

/// Registers acme's webhook past the API, with private addresses allowed whatever the app's
/// setting (the receiver is on loopback): (id, secret).
async fn register_by_hand(app: &TestApp, url: &str, events: &str) -> (i64, String) {
    let merchant = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, "acme")
        .await
        .unwrap();
    let (hook, secret) = sellable::domain::integration::webhooks::create(
        &app.db,
        &app.state.codes,
        &sellable::domain::Actor::system("test"),
        merchant,
        url,
        &[events.to_string()],
        sellable::domain::integration::webhooks::Rules {
            allow_private: true,
            max_per_merchant: 10,
        },
    )
    .await
    .unwrap();
    (hook.id, secret)
}

/// Every request verifies with `secret` and names, in its header, the event its body is.
fn assert_signed(got: &[Got], secret: &str) {
    for g in got {
        let now = sellable::infra::clock::wall_ms() / 1000;
        assert!(
            signature::verify(&g.signature, secret, &g.body, now, 300),
            "signature {} does not verify",
            g.signature
        );
        let body: Value = serde_json::from_slice(&g.body).unwrap();
        assert_eq!(
            body["id"].to_string(),
            g.event_id,
            "header names the body's event"
        );
    }
}

fn ids(got: &[Got]) -> Vec<i64> {
    got.iter().map(|g| g.event_id.parse().unwrap()).collect()
}

async fn feed_ids(api: &Api, types: &str) -> Vec<i64> {
    let (s, b) = api
        .get(&format!("/api/v1/events?types={types}&limit=1000"))
        .await;
    assert_eq!(s, 200, "{b}");
    b["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect()
}

async fn each_event_of_its_filter_arrives_once_signed_with_its_id(backend: Backend) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 1).await; // before the webhook: not sent
    let rx = receiver().await;
    let (id, secret) = register(&api, &rx.url, json!(["stock.*"])).await;
    assert!(
        secret.starts_with("whsec_") && secret.len() > 30,
        "{secret}"
    );
    // The same again (a retried call, a form posted twice) is refused and names the first.
    let (s, b) = api
        .post(
            "/api/v1/webhooks",
            json!({"url": rx.url, "events": ["stock.*"]}),
        )
        .await;
    assert_eq!(
        (s, &b["fields"][0]["code"]),
        (422, &json!("webhook_exists")),
        "{b}"
    );
    assert!(
        b["fields"][0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("#{id}")),
        "{b}"
    );
    for _ in 0..5 {
        api.receive("TEA", "main", 2).await;
    }
    let (s, b) = api.reserve("o-1", json!([{"sku": "TEA", "qty": 1}])).await;
    assert_eq!(s, 201, "{b}");
    let pass = sender(&app, true)
        .run_once(&app.db, app.db.now_ms())
        .await
        .unwrap();
    let got = rx.got();
    assert_signed(&got, &secret);
    let all_stock = feed_ids(&api, "stock.*").await;
    // Six stock moves since registering (five receipts, one reserve); the reservation's own
    // event is not in the filter.
    // Sent in parallel, so not in order: receivers order and deduplicate by the event id.
    let mut sent = ids(&got);
    sent.sort_unstable();
    assert_eq!(sent, all_stock[1..].to_vec(), "each once");
    assert_eq!(pass.delivered, 6);
    let first: Value = got
        .iter()
        .map(|g| serde_json::from_slice::<Value>(&g.body).unwrap())
        .find(|e| e["id"] == all_stock[1])
        .unwrap();
    assert_eq!(first["type"], "stock.receive");
    assert_eq!(first["data"]["after"]["total"], 3, "{first}");
    // A second pass sends nothing again.
    sender(&app, true)
        .run_once(&app.db, app.db.now_ms())
        .await
        .unwrap();
    assert_eq!(rx.got().len(), 6);
    // The log says so, newest first.
    let (s, b) = api
        .get(&format!("/api/v1/webhooks/{id}/deliveries?limit=2"))
        .await;
    assert_eq!(s, 200, "{b}");
    let d = &b["deliveries"][0];
    assert_eq!(d["status"], "DELIVERED", "{b}");
    assert_eq!(d["attempts"], 1);
    assert_eq!(d["last_attempt"]["status_code"], 200);
    assert_eq!(d["last_attempt"]["response"], "receiver says 200");
    assert!(b["next"].is_string(), "a next page: {b}");
}
on_both!(each_event_of_its_filter_arrives_once_signed_with_its_id);

async fn a_receiver_that_is_down_gets_every_event_with_the_same_ids_once_it_is_up(
    backend: Backend,
) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    let rx = receiver().await;
    rx.set_status(503);
    let (id, secret) = register(&api, &rx.url, json!(["*"])).await;
    for _ in 0..4 {
        api.receive("TEA", "main", 1).await;
    }
    let send = sender(&app, true);
    let t0 = app.db.now_ms();
    assert_eq!(send.run_once(&app.db, t0).await.unwrap().delivered, 0);
    let tried = ids(&rx.got());
    assert_eq!(tried.len(), 4);
    // Not due again at once: the first retry waits about 30 s.
    send.run_once(&app.db, t0 + 10_000).await.unwrap();
    assert_eq!(rx.got().len(), 4, "no retry before its backoff");
    let (_, b) = api
        .get(&format!("/api/v1/webhooks/{id}/deliveries?status=PENDING"))
        .await;
    let d = &b["deliveries"][0];
    assert_eq!(d["last_attempt"]["status_code"], 503, "{b}");
    assert_eq!(d["last_attempt"]["error"], "status");
    assert_eq!(d["last_attempt"]["response"], "receiver says 503");
    let (_, hook) = api.get(&format!("/api/v1/webhooks/{id}")).await;
    assert!(hook["failing_since"].is_string(), "{hook}");
    // Still down a minute later: retried, and failing still.
    send.run_once(&app.db, t0 + 60_000).await.unwrap();
    assert_eq!(rx.got().len(), 8, "each retried once");
    rx.set_status(200);
    let pass = send.run_once(&app.db, t0 + 10 * 60_000).await.unwrap();
    assert_eq!(pass.delivered, 4);
    let got = rx.got();
    assert_signed(&got[8..], &secret);
    let mut after: Vec<i64> = ids(&got[8..]);
    after.sort_unstable();
    let mut before = tried.clone();
    before.sort_unstable();
    assert_eq!(after, before, "the same events, by the same ids");
    let (_, hook) = api.get(&format!("/api/v1/webhooks/{id}")).await;
    assert!(
        hook.get("failing_since").is_none(),
        "a success clears it: {hook}"
    );
    assert_eq!(hook["status"], "ACTIVE");
}
on_both!(a_receiver_that_is_down_gets_every_event_with_the_same_ids_once_it_is_up);

async fn a_webhook_failing_for_a_day_is_paused_shown_and_sends_its_backlog_on_resume(
    backend: Backend,
) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    let rx = receiver().await;
    rx.set_status(500);
    let (id, _) = register(&api, &rx.url, json!(["stock.receive"])).await;
    api.receive("TEA", "main", 1).await;
    let send = sender(&app, true);
    let t0 = app.db.now_ms();
    // Failing every hour for 23 hours: still active.
    for h in 0..24 {
        send.run_once(&app.db, t0 + h * HOUR).await.unwrap();
    }
    let (_, hook) = api.get(&format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(hook["status"], "ACTIVE", "{hook}");
    let pass = send
        .run_once(&app.db, t0 + 24 * HOUR + 60_000)
        .await
        .unwrap();
    assert_eq!(pass.paused, 1);
    let (_, hook) = api.get(&format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(hook["status"], "PAUSED", "{hook}");
    assert_eq!(hook["paused_reason"], "failing");
    // Paused: nothing is sent, events queue.
    api.receive("TEA", "main", 1).await;
    let sent_before = rx.got().len();
    send.run_once(&app.db, t0 + 30 * HOUR).await.unwrap();
    assert_eq!(
        rx.got().len(),
        sent_before,
        "a paused webhook is sent nothing"
    );
    // The back office says so, on the webhooks page.
    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    let banner = format!("#webhook-failing-{id}[data-code=webhook_paused_failing]");
    let page = app.page(&admin, "/admin/webhooks").await;
    assert_eq!(page.count(&banner), 1);
    // And on the dashboard, where a merchant looks first.
    assert_eq!(app.page(&admin, "/admin").await.count(&banner), 1);
    // Resumed with the receiver fixed: both events go.
    rx.set_status(200);
    let (s, hook) = api
        .post(&format!("/api/v1/webhooks/{id}/resume"), json!({}))
        .await;
    assert_eq!((s, &hook["status"]), (200, &json!("ACTIVE")), "{hook}");
    let pass = send.run_once(&app.db, app.db.now_ms()).await.unwrap();
    assert_eq!(pass.delivered, 2, "{pass:?}");
    // A delivery failing three days is given up (and can still be sent by hand).
    rx.set_status(500);
    api.receive("TEA", "main", 1).await;
    let t1 = app.db.now_ms();
    send.run_once(&app.db, t1).await.unwrap();
    send.run_once(&app.db, t1 + GIVE_UP_AFTER_MS + HOUR)
        .await
        .unwrap();
    let (_, b) = api
        .get(&format!("/api/v1/webhooks/{id}/deliveries?status=FAILED"))
        .await;
    let failed = b["deliveries"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{b}");
    rx.set_status(200);
    let delivery = failed[0]["id"].as_i64().unwrap();
    let (s, b) = api
        .post(
            &format!("/api/v1/webhooks/{id}/deliveries/{delivery}/redeliver"),
            json!({}),
        )
        .await;
    assert_eq!(s, 202, "{b}");
    // Paused again by then (a day of failures): resumed, it sends the redelivery.
    let (_, hook) = api
        .post(&format!("/api/v1/webhooks/{id}/resume"), json!({}))
        .await;
    assert_eq!(hook["status"], "ACTIVE");
    let pass = send.run_once(&app.db, app.db.now_ms()).await.unwrap();
    assert_eq!(pass.delivered, 1, "redelivered by hand: {pass:?}");
}
on_both!(a_webhook_failing_for_a_day_is_paused_shown_and_sends_its_backlog_on_resume);

async fn loopback_and_private_urls_are_refused_when_registered_and_when_sent(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    for (url, code) in [
        ("http://127.0.0.1:9/hook", "private_address"),
        ("http://10.0.0.1/hook", "private_address"),
        ("http://[::1]/hook", "private_address"),
        ("http://169.254.169.254/latest/meta-data", "private_address"),
        ("http://localhost/hook", "private_address"),
        ("http://[64:ff9b::a9fe:a9fe]/latest", "private_address"),
        ("http://2130706433/hook", "private_address"),
        ("https://user:secret@example.com/hook", "invalid_url"),
        ("ftp://example.com/hook", "invalid_url"),
        ("not a url", "invalid_url"),
        ("", "required"),
    ] {
        let (s, b) = api
            .post("/api/v1/webhooks", json!({"url": url, "events": ["*"]}))
            .await;
        assert_eq!(s, 422, "{url}: {b}");
        assert_eq!(b["fields"][0]["code"], code, "{url}: {b}");
        assert_eq!(b["fields"][0]["field"], "url", "{url}: {b}");
    }
    let (s, b) = api
        .post(
            "/api/v1/webhooks",
            json!({"url": "https://example.com/h", "events": ["nope.*"]}),
        )
        .await;
    assert_eq!(s, 422, "{b}");
    let (_, list) = api.get("/api/v1/webhooks").await;
    assert_eq!(list["webhooks"], json!([]), "nothing was registered");
    // One that got in while private addresses were allowed is refused when sent, now they are
    // not: the receiver hears nothing.
    let rx = receiver().await;
    let hook = register_by_hand(&app, &rx.url, "*").await.0;
    api.product("goods", "TEA").await;
    api.receive("TEA", "main", 1).await;
    let pass = sender(&app, false)
        .run_once(&app.db, app.db.now_ms())
        .await
        .unwrap();
    assert!(pass.sent >= 1 && pass.delivered == 0, "{pass:?}");
    assert!(rx.got().is_empty(), "nothing reached the loopback receiver");
    let (_, b) = api
        .get(&format!("/api/v1/webhooks/{hook}/deliveries"))
        .await;
    assert_eq!(
        b["deliveries"][0]["last_attempt"]["error"], "private_address",
        "{b}"
    );
}
on_both!(loopback_and_private_urls_are_refused_when_registered_and_when_sent);

async fn a_rotated_secret_signs_beside_the_old_one_for_the_overlap_only(backend: Backend) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    let rx = receiver().await;
    let (id, old) = register(&api, &rx.url, json!(["stock.*"])).await;
    let (s, b) = api
        .post(
            &format!("/api/v1/webhooks/{id}/rotate"),
            json!({"overlap_hours": 1}),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let new = b["secret"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    assert!(b["previous_secret_until"].is_string(), "{b}");
    api.receive("TEA", "main", 1).await;
    let send = sender(&app, true);
    send.run_once(&app.db, app.db.now_ms()).await.unwrap();
    let got = rx.got();
    assert_eq!(
        got[0].signature.matches("v1=").count(),
        2,
        "{}",
        got[0].signature
    );
    assert_signed(&got, &new);
    assert_signed(&got, &old);
    // After the overlap, the new secret alone.
    api.receive("TEA", "main", 1).await;
    send.run_once(&app.db, app.db.now_ms() + 2 * HOUR)
        .await
        .unwrap();
    let last = rx.got().pop().unwrap();
    assert_eq!(last.signature.matches("v1=").count(), 1);
    let t: i64 = last.signature[2..12].parse().unwrap();
    assert!(signature::verify(&last.signature, &new, &last.body, t, 300));
    assert!(!signature::verify(
        &last.signature,
        &old,
        &last.body,
        t,
        300
    ));
    // Refusals: a bad overlap, another merchant's webhook.
    let (s, b) = api
        .post(
            &format!("/api/v1/webhooks/{id}/rotate"),
            json!({"overlap_hours": 1000}),
        )
        .await;
    assert_eq!(
        (s, &b["fields"][0]["code"]),
        (422, &json!("invalid_number")),
        "{b}"
    );
    let other = app.merchant_api("other").await;
    let (s, _) = other.get(&format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(s, 404, "another merchant's webhook does not exist for it");
    let (s, _) = other
        .post(&format!("/api/v1/webhooks/{id}/pause"), json!({}))
        .await;
    assert_eq!(s, 404);
    // Deleted: gone from the list and sent nothing more.
    let (s, _) = api
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/webhooks/{id}"),
            None,
        )
        .await;
    assert_eq!(s, 204);
    let (s, _) = api.get(&format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(s, 404);
    let before = rx.got().len();
    api.receive("TEA", "main", 1).await;
    send.run_once(&app.db, app.db.now_ms() + 3 * HOUR)
        .await
        .unwrap();
    assert_eq!(rx.got().len(), before);
}
on_both!(a_rotated_secret_signs_beside_the_old_one_for_the_overlap_only);

/// Waits until the receiver has every one of `want` (at most `secs` seconds).
async fn wait_for(rx: &Receiver, want: &HashSet<i64>, secs: u64) -> Vec<Got> {
    for _ in 0..secs * 10 {
        let got = rx.got();
        let have: HashSet<i64> = ids(&got).into_iter().collect();
        if want.is_subset(&have) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let have: HashSet<i64> = ids(&rx.got()).into_iter().collect();
    panic!(
        "{} of {} events arrived",
        want.intersection(&have).count(),
        want.len()
    );
}

const SENDER_ENV: &[(&str, &str)] = &[
    ("SELLABLE_WEBHOOK_ALLOW_PRIVATE", "1"),
    ("SELLABLE_WEBHOOK_POLL_MS", "100"),
    ("SELLABLE_WEBHOOK_TIMEOUT_SECONDS", "1"),
];

async fn two_instances_send_each_event_once(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    let rx = receiver().await;
    let _a = Process::start_with(&app, SENDER_ENV).await;
    let _b = Process::start_with(&app, SENDER_ENV).await;
    let secret = register_by_hand(&app, &rx.url, "stock.receive").await.1;
    // A slow receiver keeps both senders busy at once.
    rx.delay_ms.store(5, Ordering::Relaxed);
    for _ in 0..150 {
        api.receive("TEA", "main", 1).await;
    }
    let want: HashSet<i64> = feed_ids(&api, "stock.receive").await.into_iter().collect();
    assert_eq!(want.len(), 150);
    let got = wait_for(&rx, &want, 60).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got_all = rx.got();
    let mut seen: HashMap<i64, usize> = HashMap::new();
    for id in ids(&got_all) {
        *seen.entry(id).or_default() += 1;
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "sent twice: {twice:?}");
    assert_signed(&got, &secret);
}
on_both!(two_instances_send_each_event_once);

async fn a_sender_killed_mid_burst_leaves_no_event_unsent(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("goods", "TEA").await;
    let rx = receiver().await;
    let secret = register_by_hand(&app, &rx.url, "stock.receive").await.1;
    rx.delay_ms.store(20, Ordering::Relaxed);
    for _ in 0..200 {
        api.receive("TEA", "main", 1).await;
    }
    let want: HashSet<i64> = feed_ids(&api, "stock.receive").await.into_iter().collect();
    let mut a = Process::start_with(&app, SENDER_ENV).await;
    for _ in 0..200 {
        if rx.got().len() >= 40 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    a.kill(); // SIGKILL, mid-burst: some deliveries are claimed and unsent
    let arrived = rx.got().len();
    assert!(arrived < 200, "killed before the end ({arrived} arrived)");
    let _b = Process::start_with(&app, SENDER_ENV).await;
    // The dead instance's claims run out after their lease (2 × 1 s + 10 s), then go.
    let got = wait_for(&rx, &want, 60).await;
    assert_signed(&got, &secret);
}
on_both!(a_sender_killed_mid_burst_leaves_no_event_unsent);

async fn the_back_office_adds_pauses_rotates_and_deletes_a_webhook(backend: Backend) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    app.merchant("acme").await;
    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    let rx = receiver().await;
    let post = |path: &str, form: Vec<(&str, &str)>| {
        let req = admin.post(app.url(path)).form(&form);
        async move { req.send().await.unwrap() }
    };
    let r = post(
        "/admin/webhooks",
        vec![("url", "not a url"), ("events", "stock.*")],
    )
    .await;
    assert_eq!(r.status(), 422);
    let page = r.text().await.unwrap();
    assert!(page.contains(r#"data-field="url""#), "{page}");
    let r = post("/admin/webhooks", vec![("url", &rx.url)]).await;
    assert_eq!(r.status(), 422);
    assert!(r.text().await.unwrap().contains(r#"data-field="events""#));
    let form = vec![
        ("url", rx.url.as_str()),
        ("events", "stock.*"),
        ("events", "booking.*"),
        ("others", "slot.closed"),
    ];
    let r = post("/admin/webhooks", form.clone()).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-store");
    let page = r.text().await.unwrap();
    assert!(
        page.contains(r#"id="new-secret""#) && page.contains("whsec_"),
        "{page}"
    );
    // Posted again (a reload): refused, no second webhook.
    let r = post("/admin/webhooks", form).await;
    assert_eq!(r.status(), 422);
    let api = Api {
        base: app.base.clone(),
        key: app.api_key("acme").await,
        http: reqwest::Client::new(),
        clock: app.db.clock.clone(),
    };
    let (_, list) = api.get("/api/v1/webhooks").await;
    let hooks = list["webhooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1, "{list}");
    assert_eq!(
        hooks[0]["events"],
        json!(["booking.*", "slot.closed", "stock.*"])
    );
    let id = hooks[0]["id"].as_i64().unwrap();
    let r = post(&format!("/admin/webhooks/{id}/pause"), vec![]).await;
    assert_eq!(r.status(), 303);
    let (_, hook) = api.get(&format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(
        (&hook["status"], &hook["paused_reason"]),
        (&json!("PAUSED"), &json!("manual"))
    );
    let r = post(
        &format!("/admin/webhooks/{id}/rotate"),
        vec![("overlap_hours", "2")],
    )
    .await;
    assert_eq!(r.status(), 200);
    let page = r.text().await.unwrap();
    assert!(page.contains(r#"id="new-secret""#) && page.contains(r#"id="old-secret-until""#));
    // Delete: a confirmation first, then gone.
    let confirm = admin
        .get(app.url(&format!("/admin/webhooks/{id}/delete")))
        .send()
        .await
        .unwrap();
    assert_eq!(confirm.status(), 200);
    let r = post(&format!("/admin/webhooks/{id}/delete"), vec![]).await;
    assert_eq!(r.status(), 303);
    let (_, list) = api.get("/api/v1/webhooks").await;
    assert_eq!(list["webhooks"], json!([]));
    // Store staff do not see the page.
    let staff = app.signed_in("store_staff", Some("acme")).await;
    let r = staff.get(app.url("/admin/webhooks")).send().await.unwrap();
    assert_ne!(r.status(), 200);
}
on_both!(the_back_office_adds_pauses_rotates_and_deletes_a_webhook);

/// An address that takes connections and never answers: an endpoint that only ever times out.
async fn dead_endpoint() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    format!("http://{addr}")
}

async fn hook_of(app: &TestApp, merchant: &str, url: &str) -> i64 {
    let merchant = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, merchant)
        .await
        .unwrap();
    sellable::domain::integration::webhooks::create(
        &app.db,
        &app.state.codes,
        &sellable::domain::Actor::system("test"),
        merchant,
        url,
        &["*".to_string()],
        sellable::domain::integration::webhooks::Rules {
            allow_private: true,
            max_per_merchant: 100,
        },
    )
    .await
    .unwrap()
    .0
    .id
}

async fn one_merchants_dead_endpoints_do_not_hold_up_another_merchants_delivery(backend: Backend) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    let a = app.acme_api().await;
    let b = app.merchant_api("globex").await;
    let dead = dead_endpoint().await;
    let mut dead_hooks = Vec::new();
    for i in 0..45 {
        dead_hooks.push(hook_of(&app, "acme", &format!("{dead}/hook/{i}")).await);
    }
    let rx = receiver().await;
    hook_of(&app, "globex", &rx.url).await;
    // Merchant A's events first (each of its 45 endpoints is due several), then B's one.
    a.product("goods", "TEA").await;
    for _ in 0..4 {
        a.receive("TEA", "main", 1).await;
    }
    b.product("goods", "MILK").await;
    // The sending job's pass: B's delivery goes out in the first round and is recorded, while
    // A's endpoints still hold their (never answered) sends.
    let send = sender(&app, true);
    let pass = send.run_job(&app.db, app.db.now_ms()).await.unwrap();
    assert!(pass.delivered >= 1, "{pass:?}");
    assert!(
        !rx.got().is_empty(),
        "merchant B's receiver was sent its event"
    );
    let pending_b: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE w.merchant_id = (SELECT id FROM merchants WHERE slug = 'globex') AND d.status <> 'DELIVERED'",
    )
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(pending_b, 0, "every delivery of B is delivered");
    // No dead endpoint holds more than a few sends at once, and none was answered yet: the pass
    // did not wait for their timeouts.
    let claimed: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT webhook_id, COUNT(*) FROM webhook_deliveries WHERE attempts > 0 GROUP BY webhook_id",
    )
    .fetch_all(&app.db.pool)
    .await
    .unwrap();
    for (hook, n) in &claimed {
        if dead_hooks.contains(hook) {
            assert!(
                *n <= sellable::domain::integration::webhooks::dispatch::PER_ENDPOINT,
                "{hook}: {n}"
            );
        }
    }
    let answered_a: i64 = sqlx::query_scalar(&format!(
        "SELECT COUNT(*) FROM webhook_attempts WHERE webhook_id IN ({})",
        dead_hooks
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    ))
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    assert_eq!(answered_a, 0);
}
on_both!(one_merchants_dead_endpoints_do_not_hold_up_another_merchants_delivery);

async fn an_endpoint_failing_again_and_again_is_paused_by_the_breaker_and_the_merchant_is_told(
    backend: Backend,
) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    // A port nobody listens on: every attempt is refused at once.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let hook = hook_of(&app, "acme", &format!("http://{closed}/hook")).await;
    api.product("goods", "TEA").await;
    for _ in 0..30 {
        api.receive("TEA", "main", 1).await;
    }
    let send = sender(&app, true);
    // Passes a minute apart (retries come due again), until the breaker trips or plainly never will.
    let t0 = app.db.now_ms();
    for n in 0..40 {
        send.run_once(&app.db, t0 + n * 60_000).await.unwrap();
        let (_, b) = api.get(&format!("/api/v1/webhooks/{hook}")).await;
        if b["status"] == "PAUSED" {
            break;
        }
    }
    let attempts: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM webhook_attempts WHERE webhook_id = $1")
            .bind(hook)
            .fetch_one(&app.db.pool)
            .await
            .unwrap();
    let (s, b) = api.get(&format!("/api/v1/webhooks/{hook}")).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        (b["status"].as_str(), b["paused_reason"].as_str()),
        (Some("PAUSED"), Some("breaker")),
        "{b} after {attempts} attempts"
    );
    assert!(
        (sellable::domain::integration::webhooks::dispatch::BREAKER_AFTER
            ..sellable::domain::integration::webhooks::dispatch::BREAKER_AFTER
                + sellable::domain::integration::webhooks::dispatch::PER_ENDPOINT)
            .contains(&attempts),
        "paused once the breaker's count was reached: {attempts}"
    );
    let (_, feed) = api.get("/api/v1/events?types=webhook.paused").await;
    assert_eq!(feed["events"].as_array().unwrap().len(), 1, "{feed}");
    // The back office says so on the webhooks page, in both languages.
    let admin = app.signed_in("merchant_admin", Some("acme")).await;
    let page = app.page(&admin, "/admin/webhooks").await;
    assert_eq!(page.count("[data-code=webhook_paused_breaker]"), 1);
    // Resumed, it starts counting again.
    let (s, b) = api
        .post(&format!("/api/v1/webhooks/{hook}/resume"), json!({}))
        .await;
    assert_eq!((s, b["status"].as_str()), (200, Some("ACTIVE")), "{b}");
}
on_both!(an_endpoint_failing_again_and_again_is_paused_by_the_breaker_and_the_merchant_is_told);

async fn a_merchant_has_at_most_the_configured_number_of_webhooks(backend: Backend) {
    let Some(app) = app_driven_by_hand(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    for i in 0..10 {
        let (s, b) = api
            .post(
                "/api/v1/webhooks",
                json!({"url": format!("http://127.0.0.1:9/h{i}"), "events": ["*"]}),
            )
            .await;
        assert_eq!(s, 201, "{b}");
    }
    let (s, b) = api
        .post(
            "/api/v1/webhooks",
            json!({"url": "http://127.0.0.1:9/h10", "events": ["*"]}),
        )
        .await;
    assert_eq!(
        (s, b["error"].as_str()),
        (409, Some("too_many_webhooks")),
        "{b}"
    );
    assert_eq!(b["limit"], 10);
}
on_both!(a_merchant_has_at_most_the_configured_number_of_webhooks);
