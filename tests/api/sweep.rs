//! The attack sweep: every route of the router (read from the router itself, so a new route is
//! covered without anyone remembering), every field of the forms its pages show and of the JSON
//! bodies its API takes, sent hostile text (NUL and other control characters, lone surrogates, RTL
//! marks, emoji, 10,000 characters, numbers where text goes and the reverse), signed in with each
//! role and without, on both databases. It fails on any 5xx, on an API refusal without an `error`
//! code, and on any change to the data after a refusal.

use std::collections::{BTreeMap, BTreeSet};

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{Backend, Html, TestApp};

/// Hostile values for a text or number field.
fn hostile() -> Vec<String> {
    vec![
        "\0".into(),
        "ab\0cd".into(),
        "\u{1}\u{7}\u{1b}[2J".into(),
        "\u{202e}gnp.exe\u{200f}".into(),
        "🍵😀👩‍👩‍👧".into(),
        "x".repeat(10_000),
        "-1".into(),
        "99999999999999999999999".into(),
        "<script>alert(1)</script>\"'".into(),
        " ".into(),
    ]
}

/// Hostile values for a path segment (already percent-encoded where needed).
fn hostile_segments() -> Vec<String> {
    vec![
        "%00".into(),
        "a%00b".into(),
        "%FF%FE".into(),
        "%E2%80%AE1".into(),
        "x".repeat(3000),
        "-1".into(),
        "99999999999999999999".into(),
    ]
}

/// What the data looks like, apart from sign-in bookkeeping (sessions, failed sign-ins): a refusal
/// must leave it exactly as it was.
async fn fingerprint(app: &TestApp) -> Vec<i64> {
    let sql = [
        "SELECT COUNT(*) FROM audit_log",
        "SELECT COUNT(*) FROM stock_ledger",
        "SELECT COUNT(*) FROM stock_reservations",
        "SELECT COALESCE(CAST(SUM(version) AS BIGINT), 0) FROM stock_balances",
        "SELECT COALESCE(CAST(SUM(remaining) AS BIGINT), 0) + COUNT(*) FROM stock_holds",
        "SELECT COALESCE(CAST(SUM(COALESCE(unit_cost, 0)) AS BIGINT), 0) FROM skus",
        "SELECT COUNT(*) FROM bookings",
        "SELECT COUNT(*) FROM bookings WHERE status = 'BOOKED'",
        "SELECT COUNT(*) FROM products",
        "SELECT COALESCE(CAST(SUM(updated_at) AS BIGINT), 0) FROM products",
        "SELECT COUNT(*) FROM skus",
        "SELECT COUNT(*) FROM slots",
        "SELECT COALESCE(CAST(SUM(capacity + booked) AS BIGINT), 0) FROM slots",
        "SELECT COUNT(*) FROM slots WHERE status = 'OPEN'",
        "SELECT COUNT(*) FROM closures",
        "SELECT COUNT(*) FROM schedule_rules",
        "SELECT COUNT(*) FROM schedule_overrides",
        "SELECT COUNT(*) FROM waitlist",
        "SELECT COUNT(*) FROM waitlist WHERE status IN ('WAITING', 'OFFERED')",
        "SELECT COUNT(*) FROM staff",
        "SELECT COUNT(*) FROM code_batches",
        "SELECT COALESCE(CAST(SUM(version) AS BIGINT), 0) FROM codes",
        "SELECT COUNT(*) FROM api_keys WHERE revoked_at IS NULL",
        "SELECT COUNT(*) FROM users",
    ];
    // One round trip, not twenty: the sweep takes a fingerprint before and after each of its
    // thousands of requests, and on PostgreSQL the round trips were most of its time.
    let columns: Vec<String> = sql.iter().map(|q| format!("({q})")).collect();
    let one = format!("SELECT {}", columns.join(", "));
    let row = sqlx::query(&one)
        .fetch_one(&app.db.pool)
        .await
        .unwrap_or_else(|e| panic!("{one}: {e}"));
    (0..sql.len())
        .map(|i| {
            sqlx::Row::try_get::<i64, _>(&row, i).unwrap_or_else(|e| panic!("{}: {e}", sql[i]))
        })
        .collect()
}

/// An import started by an accepted upload writes in the background: wait for it, so that its
/// rows are not taken for a later refusal's.
async fn settle(app: &TestApp) {
    for _ in 0..200 {
        let busy: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM code_batches WHERE status = 'CREATING'")
                .fetch_one(&app.db.pool)
                .await
                .unwrap();
        if busy == 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("an import never finished");
}

#[derive(Clone)]
enum Body {
    None,
    Form(Vec<(String, String)>),
    Json(Value),
    /// Text parts, then the file part's name and content.
    Multipart(Vec<(String, String)>, String, String),
}

struct Who {
    name: &'static str,
    client: reqwest::Client,
    bearer: Option<String>,
}

struct Sweep<'a> {
    app: &'a TestApp,
    sent: usize,
    failures: Vec<String>,
    /// Requests after which a kept catalog differed from the live one, by caller, method and
    /// path (`Sweep::kept_is_live`).
    stale: BTreeMap<String, usize>,
    /// The reasons staff gave for closing slots and for closures before the sweep began (the
    /// sweep's own hostile reasons, such as "-1", are everywhere in its pages by design).
    staff_reasons: Vec<String>,
}

impl Sweep<'_> {
    async fn send(&mut self, who: &Who, method: Method, path: &str, body: Body) {
        let before = fingerprint(self.app).await;
        let mut req = who.client.request(method.clone(), self.app.url(path));
        if let Some(k) = &who.bearer {
            req = req.bearer_auth(k);
        }
        req = match &body {
            Body::None => req,
            Body::Form(f) => req.form(f),
            Body::Json(v) => req.json(v),
            Body::Multipart(fields, filename, content) => {
                let mut form = reqwest::multipart::Form::new();
                for (k, v) in fields {
                    form = form.text(k.clone(), v.clone());
                }
                form = form.part(
                    "file",
                    reqwest::multipart::Part::text(content.clone()).file_name(filename.clone()),
                );
                req.multipart(form)
            }
        };
        let r = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                self.failures
                    .push(format!("{} {method} {path}: transport error {e}", who.name));
                return;
            }
        };
        self.sent += 1;
        let status = r.status().as_u16();
        let is_json = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let text = r.text().await.unwrap_or_default();
        let shown: String = path.chars().take(120).collect();
        if status >= 500 {
            self.failures.push(format!(
                "{} {method} {shown}: {status} {}",
                who.name,
                text.chars().take(200).collect::<String>()
            ));
        }
        if path.starts_with("/api/") && status >= 400 {
            let code = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_string));
            if !is_json || code.is_none() {
                self.failures.push(format!(
                    "{} {method} {shown}: {status} without an error code: {}",
                    who.name,
                    text.chars().take(200).collect::<String>()
                ));
            }
        }
        if who.bearer.is_none() && who.name == "anonymous" && is_public_page(path) {
            for leak in self.secrets_in(path, &text).await {
                self.failures.push(format!(
                    "{} {method} {shown}: the page shows {leak}",
                    who.name
                ));
            }
        }
        if (400..500).contains(&status) {
            let after = fingerprint(self.app).await;
            if after != before {
                self.failures.push(format!(
                    "{} {method} {shown}: refused with {status} but the data changed ({before:?} → {after:?})",
                    who.name
                ));
            }
        } else {
            settle(self.app).await;
            if method != Method::GET && status < 400 {
                self.kept_is_live(who, &method, &shown).await;
            }
        }
    }

    /// What a stranger must never read on a public page (issue 52): another customer's booking
    /// reference (any but one the visitor holds, which is in the path they asked for), a reason
    /// staff gave for closing a slot or for a closure, an e-mail address of anyone who signs in.
    async fn secrets_in(&self, path: &str, text: &str) -> Vec<String> {
        let all = |sql: &'static str| async move {
            sqlx::query_scalar::<_, String>(sql)
                .fetch_all(&self.app.db.pool)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
        };
        let mut found = Vec::new();
        for r in all("SELECT reference FROM bookings").await {
            if !path.contains(&r) && text.contains(&r) {
                found.push(format!("another booking's reference {r}"));
            }
        }
        for why in &self.staff_reasons {
            if text.contains(html_escape(why).as_str()) {
                found.push(format!("staff's reason {why:?}"));
            }
        }
        for email in all("SELECT email FROM users").await {
            if text.contains(&email) {
                found.push(format!("the e-mail address {email}"));
            }
        }
        found
    }

    /// After a change the sweep's hostile text got through: each merchant's kept catalog,
    /// brought up to date from the change events (or judged whole, when the route counted its
    /// change), equals the catalog judged now. A route marked as writing its change events
    /// (`middleware::Evented`) that changed what a verdict reads without one fails here, whoever
    /// adds it.
    async fn kept_is_live(&mut self, who: &Who, method: &Method, shown: &str) {
        use sellable::domain::{sellable as s, MerchantId, Scope};
        let db = &self.app.db;
        let th = self.app.state.config.sellable_thresholds();
        let merchants: Vec<i64> = sqlx::query_scalar("SELECT id FROM merchants ORDER BY id")
            .fetch_all(&db.pool)
            .await
            .unwrap();
        for m in merchants.into_iter().map(MerchantId) {
            let kept = s::recent_catalog(db, &th, Scope::Merchant(m), None)
                .await
                .unwrap();
            let live = s::catalog(db, &th, Scope::Merchant(m), None).await.unwrap();
            let kept: Vec<&s::Verdict> = kept.iter().map(|v| &**v).collect();
            let live: Vec<&s::Verdict> = live.iter().collect();
            if kept != live {
                let differ = kept
                    .iter()
                    .zip(&live)
                    .find(|(k, l)| k != l)
                    .map(|(_, l)| l.sku.clone())
                    .unwrap_or_default();
                // Time changes verdicts too (a slot starting between the kept reading and now,
                // once): a route is named when it left a kept catalog behind twice.
                let seen = self
                    .stale
                    .entry(format!("{} {method} {shown}", who.name))
                    .or_default();
                *seen += 1;
                if *seen == 2 {
                    self.failures.push(format!(
                        "{} {method} {shown}: merchant {}'s kept catalog differed from the live \
                         one after it twice (last at SKU {differ}): the route changes a verdict \
                         without a change event",
                        who.name, m.0
                    ));
                }
                // Judged whole at the next look, so that the next request is judged on its own.
                sellable::domain::sellable::kept(db).changed();
            }
        }
    }
}

/// Real values for the path parameters, chosen by the segment before them.
async fn params(app: &TestApp) -> BTreeMap<&'static str, String> {
    let one = |sql: &'static str| async move {
        sqlx::query_scalar::<_, String>(sql)
            .fetch_one(&app.db.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let mut m = BTreeMap::new();
    m.insert(
        "products",
        one("SELECT CAST(MIN(id) AS TEXT) FROM products").await,
    );
    m.insert(
        "skus",
        one("SELECT CAST(MIN(s.id) AS TEXT) FROM skus s JOIN products p ON p.id = s.product_id WHERE p.kind = 'goods'").await,
    );
    m.insert(
        "sku_code",
        one("SELECT MIN(s.code) FROM skus s JOIN products p ON p.id = s.product_id WHERE p.kind = 'goods'").await,
    );
    m.insert(
        "voucher_code",
        one("SELECT MIN(s.code) FROM skus s JOIN products p ON p.id = s.product_id WHERE p.kind = 'voucher'").await,
    );
    m.insert(
        "service",
        one("SELECT CAST(MIN(s.id) AS TEXT) FROM skus s JOIN products p ON p.id = s.product_id WHERE p.kind = 'service'").await,
    );
    m.insert(
        "service_code",
        one("SELECT MIN(s.code) FROM skus s JOIN products p ON p.id = s.product_id WHERE p.kind = 'service'").await,
    );
    m.insert(
        "slots",
        one("SELECT CAST(MAX(id) AS TEXT) FROM slots").await,
    );
    m.insert(
        "bookings",
        one("SELECT MIN(reference) FROM bookings WHERE status = 'BOOKED'").await,
    );
    m.insert(
        "closures",
        one("SELECT CAST(MIN(id) AS TEXT) FROM closures").await,
    );
    m.insert(
        "batches",
        one("SELECT CAST(MIN(id) AS TEXT) FROM code_batches").await,
    );
    m.insert(
        "codes",
        one("SELECT CAST(MIN(id) AS TEXT) FROM codes").await,
    );
    m.insert(
        "store",
        one("SELECT MIN(public_slug) FROM stores WHERE slug = 'downtown'").await,
    );
    m.insert(
        "order_id",
        one("SELECT COALESCE(MIN(order_id), 'order-1') FROM stock_reservations").await,
    );
    m
}

/// The booking pages a stranger reaches: the store's, a slot's, a booking's and a wait's.
fn is_public_page(path: &str) -> bool {
    ["/book/", "/booking/", "/waitlist/"]
        .iter()
        .any(|p| path.starts_with(p))
}

/// Text as askama writes it into a page.
fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

/// Fills a path template: each `{param}` from the segment before it, or `hostile` for the one at
/// `target`.
fn fill(
    template: &str,
    p: &BTreeMap<&'static str, String>,
    target: Option<(usize, &str)>,
) -> String {
    let segs: Vec<&str> = template.split('/').collect();
    let mut out = Vec::new();
    let mut n = 0;
    for (i, s) in segs.iter().enumerate() {
        if s.starts_with('{') {
            let value = match target {
                Some((t, v)) if t == n => v.to_string(),
                _ => {
                    let prev = if i > 0 { segs[i - 1] } else { "" };
                    let key = match (prev, *s) {
                        ("book", _) => "store",
                        (_, "{order_id}") => "order_id",
                        (_, "{reference}") => "bookings",
                        ("services", "{sku}") => "service_code",
                        ("services", _) => "service",
                        ("skus", "{code}") => "sku_code",
                        ("code-batches", _) => "batches",
                        ("findings", _) => "products",
                        (prev, _) => p
                            .keys()
                            .find(|k| **k == prev)
                            .copied()
                            .unwrap_or("products"),
                    };
                    p.get(key).cloned().unwrap_or_else(|| "1".into())
                }
            };
            out.push(value);
            n += 1;
        } else if s.starts_with("{*") {
            out.push("app.css".into());
        } else {
            out.push((*s).to_string());
        }
    }
    out.join("/")
}

/// The forms a page shows: (method, action, fields with their shown values).
type FoundForm = (String, String, Vec<(String, String)>);

fn forms_of(page: &Html, current: &str) -> Vec<FoundForm> {
    let form_sel = scraper::Selector::parse("form").unwrap();
    let field_sel = scraper::Selector::parse("input[name], select[name], textarea[name]").unwrap();
    let option_sel = scraper::Selector::parse("option").unwrap();
    let mut out = Vec::new();
    for f in page.0.select(&form_sel) {
        let method = f.value().attr("method").unwrap_or("get").to_lowercase();
        let action = f
            .value()
            .attr("action")
            .filter(|a| !a.is_empty())
            .unwrap_or(current)
            .to_string();
        if !action.starts_with('/') {
            continue;
        }
        let mut fields = Vec::new();
        for el in f.select(&field_sel) {
            let name = el.value().attr("name").unwrap_or("").to_string();
            let value = match el.value().name() {
                "select" => el
                    .select(&option_sel)
                    .next()
                    .and_then(|o| o.value().attr("value").map(str::to_string))
                    .unwrap_or_default(),
                "textarea" => el.text().collect(),
                _ => el.value().attr("value").unwrap_or("").to_string(),
            };
            fields.push((name, value));
        }
        out.push((method, action, fields));
    }
    out
}

/// A valid-looking JSON body for every API route that takes one. A new route without one here fails
/// the sweep, which then says which.
fn example_body(
    method: &Method,
    template: &str,
    p: &BTreeMap<&'static str, String>,
) -> Option<Value> {
    let sku = p["sku_code"].clone();
    let service = p["service_code"].clone();
    let slot: i64 = p["slots"].parse().unwrap();
    let v = match (method.as_str(), template) {
        ("POST", "/api/v1/products") => json!({"name": "Sweep", "kind": "goods", "status": "DRAFT",
            "skus": [{"code": "SWEEP-1", "name": "Sweep", "price": 100}]}),
        ("PATCH", "/api/v1/products/{id}") => json!({"name": "Sweep", "status": "ONLINE"}),
        ("PATCH", "/api/v1/skus/{code}") => {
            json!({"max_per_order": 5, "max_per_customer": 9, "low_stock_threshold": 2, "price": 100, "stock_policy": "tracked", "deduct": "on_order"})
        }
        ("POST", "/api/v1/stock/adjustments") => {
            json!({"sku": sku, "warehouse": "main", "kind": "RECEIVE",
            "qty": 1, "reason": "sweep", "reason_code": "correction", "idempotency_key": "sweep-adj", "to_warehouse": "east"})
        }
        ("POST", "/api/v1/reservations") => json!({"order_id": "sweep-order", "ttl_seconds": 60,
            "items": [{"sku": sku, "qty": 1, "warehouse": "main"}]}),
        ("POST", "/api/v1/reservations/{order_id}/confirm") => json!({"payment_ref": "PAY-SWEEP"}),
        ("POST", "/api/v1/reservations/{order_id}/release") => json!({"reason": "sweep"}),
        ("POST", "/api/v1/exceptions/{id}/resolve") => {
            json!({"resolution": "refunded", "note": "sweep"})
        }
        ("POST", "/api/v1/reservations/{order_id}/codes/void")
        | ("POST", "/api/v1/reservations/{order_id}/codes/reissue") => {
            json!({"code": "SWEEP-CODE", "reason": "sweep"})
        }
        ("POST", "/api/v1/codes/redeem") => json!({"code": "SWEEP-CODE", "store": "downtown"}),
        ("POST", "/api/v1/codes/{id}/lock")
        | ("POST", "/api/v1/codes/{id}/unlock")
        | ("POST", "/api/v1/codes/{id}/invalidate")
        | ("POST", "/api/v1/codes/{id}/unredeem") => json!({"reason": "sweep"}),
        ("POST", "/api/v1/returns") => {
            json!({"return_id": "sweep-return", "order_id": p["order_id"],
            "sku": sku, "qty": 1, "condition": "restock"})
        }
        ("POST", "/api/v1/staff") => json!({"store": "downtown", "name": "Sweep"}),
        ("POST", "/api/v1/services/{sku}/schedule") => json!({"store": "downtown", "rules": [
            {"weekdays": ["mon"], "opens": "09:00", "closes": "10:00", "slot_minutes": 60, "capacity": 2}]}),
        ("POST", "/api/v1/slots") => json!({"sku": service, "store": "downtown",
            "starts_at": "2099-01-01T10:00:00Z", "ends_at": "2099-01-01T11:00:00Z", "capacity": 2}),
        ("PATCH", "/api/v1/slots/{id}") => json!({"capacity": 3}),
        ("POST", "/api/v1/slots/{id}/close") => json!({"reason": "sweep"}),
        ("POST", "/api/v1/slots/{id}/waitlist") => {
            json!({"name": "Sweep", "phone": "+86 139 0000 0001", "places": 1})
        }
        ("POST", "/api/v1/slots/{id}/open")
        | ("POST", "/api/v1/waitlist/{id}/accept")
        | ("POST", "/api/v1/waitlist/{id}/decline") => json!({}),
        ("POST", "/api/v1/closures") => {
            json!({"store": "downtown", "starts_at": "2099-02-01T10:00:00Z",
            "ends_at": "2099-02-01T11:00:00Z", "reason": "sweep"})
        }
        ("POST", "/api/v1/closures/{id}/reopen") => json!({}),
        ("POST", "/api/v1/bookings") => {
            json!({"slot_id": slot, "name": "Sweep", "phone": "+86 138 0013 8000",
            "places": 1, "idempotency_key": "sweep-book"})
        }
        ("POST", "/api/v1/bookings/{reference}/cancel") => json!({"reason": "sweep"}),
        ("POST", "/api/v1/bookings/{reference}/move") => json!({"slot_id": slot}),
        ("POST", "/api/v1/code-batches/generate") => {
            json!({"sku": p["voucher_code"], "count": 3, "length": 12, "alphabet": "digits"})
        }
        ("POST", "/api/v1/code-batches/{id}/download") => json!({}),
        // A documentation address: refused as not public, without a DNS lookup.
        ("POST", "/api/v1/webhooks") => {
            json!({"url": "https://203.0.113.7/sweep", "events": ["stock.*", "booking.cancelled"]})
        }
        ("POST", "/api/v1/webhooks/{id}/rotate") => json!({"overlap_hours": 1}),
        ("POST", "/api/v1/webhooks/{id}/pause")
        | ("POST", "/api/v1/webhooks/{id}/resume")
        | ("POST", "/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver") => json!({}),
        ("POST", "/api/v1/bookings/{reference}/attended")
        | ("POST", "/api/v1/bookings/{reference}/no-show") => json!({}),
        _ => return None,
    };
    Some(v)
}

/// Every string and number of a JSON value, by path, so each can be replaced in turn.
fn leaves(v: &Value, at: Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let mut p = at.clone();
                p.push(k.clone());
                leaves(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let mut p = at.clone();
                p.push(i.to_string());
                leaves(x, p, out);
            }
        }
        _ => out.push(at),
    }
}

fn replace(v: &Value, at: &[String], with: Value) -> Value {
    let mut v = v.clone();
    let mut cur = &mut v;
    for k in at {
        cur = match cur {
            Value::Object(m) => m.get_mut(k).unwrap(),
            Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
            _ => unreachable!(),
        };
    }
    *cur = with;
    v
}

/// The sweep's two halves, each a test of its own so that they run beside each other: each took
/// two minutes of the suite's tail when they were one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Every route's path parameters and query, and every API route's body.
    Routes,
    /// Every form each signed-in role is shown.
    Forms,
}

async fn sweep(backend: Backend, part: Part) {
    let Some(app) = TestApp::spawn_with(backend, |c| {
        // The sweep is one client sending thousands of requests: the per-address limits of the
        // public page and sign-in would answer most of them 429 and hide what lies behind.
        c.serve.public_rate_per_minute = 1_000_000;
        c.serve.expiry_interval_seconds = 3600;
        c.serve.reconcile_interval_seconds = 0;
    })
    .await
    else {
        return;
    };
    sellable::domain::demo::load(&app.db, &app.state.codes)
        .await
        .unwrap();
    // Catalogs are kept (as with the watcher on), so that every change the sweep makes is
    // checked against them (`Sweep::kept_is_live`).
    sellable::domain::sellable::kept(&app.db).set_max_age(24 * 3_600_000);
    let users = sellable::domain::demo::DEMO_USERS;
    let mut whos = vec![Who {
        name: "anonymous",
        client: app.client(),
        bearer: None,
    }];
    for u in users {
        whos.push(Who {
            name: u.role,
            client: app.sign_in(u.email, u.password).await,
            bearer: None,
        });
    }
    // A key of its own for the revoke page's id, so the sweep does not revoke the key it calls with.
    let victim = app.api_key("demo").await;
    let api_key = app.api_key("demo").await;
    let api = Who {
        name: "api key",
        client: app.client(),
        bearer: Some(api_key),
    };
    let mut p = params(&app).await;
    let victim_id: i64 = sqlx::query_scalar("SELECT MIN(id) FROM api_keys WHERE $1 <> ''")
        .bind(&victim)
        .fetch_one(&app.db.pool)
        .await
        .unwrap_or(0);
    p.insert("api-keys", victim_id.to_string());
    // A webhook of the demo merchant, for the webhook pages and routes (it sends nothing: the
    // app's sender is off in tests unless asked for).
    let demo = sellable::domain::tenancy::tenants::merchant_id_by_slug(&app.db, "demo")
        .await
        .unwrap();
    let (hook, _) = sellable::domain::integration::webhooks::create(
        &app.db,
        &app.state.codes,
        &sellable::domain::Actor::system("sweep"),
        demo,
        "http://127.0.0.1:9/sweep",
        &["*".to_string()],
        sellable::domain::integration::webhooks::Rules {
            allow_private: true,
            max_per_merchant: 10,
        },
    )
    .await
    .unwrap();
    p.insert("webhooks", hook.id.to_string());
    // A slot staff closed with a reason of their own: public pages say "not available" only.
    // Another time of the service the visitor's own booking (`bookings`) is for, later on.
    let closed_by_staff: i64 = sqlx::query_scalar(
        "SELECT MAX(s.id) FROM slots s JOIN slots mine ON mine.sku_id = s.sku_id AND mine.store_id = s.store_id
         JOIN bookings b ON b.slot_id = mine.id
         WHERE b.reference = $1 AND s.id <> mine.id AND s.starts_at > mine.starts_at",
    )
    .bind(&p["bookings"])
    .fetch_one(&app.db.pool)
    .await
    .unwrap();
    sqlx::query(
        "UPDATE slots SET status = 'CLOSED', closed_reason = 'SWEEP staff reason: Mei at the hospital'
         WHERE id = $1",
    )
    .bind(closed_by_staff)
    .execute(&app.db.pool)
    .await
    .unwrap();
    let router = sellable::web::router(app.state.clone());
    let routes = sellable::web::route_paths(&router);
    assert!(
        routes.len() > 60 && routes.iter().any(|r| r == "/api/v1/bookings"),
        "the routes should come from the router: {routes:?}"
    );
    let staff_reasons: Vec<String> = sqlx::query_scalar(
        "SELECT closed_reason FROM slots WHERE closed_reason IS NOT NULL AND closed_reason <> ''
         UNION SELECT reason FROM closures WHERE reason <> ''",
    )
    .fetch_all(&app.db.pool)
    .await
    .unwrap()
    .into_iter()
    // The schedule's own note for a slot it removed is the system's, not staff's words.
    .filter(|why: &String| {
        [sellable::i18n::Lang::En, sellable::i18n::Lang::ZhCn]
            .iter()
            .all(|l| l.t("m-removed-from-schedule") != *why)
    })
    .collect();
    assert!(
        staff_reasons
            .iter()
            .any(|r| r.starts_with("SWEEP staff reason")),
        "{staff_reasons:?}"
    );
    let mut s = Sweep {
        app: &app,
        sent: 0,
        failures: Vec::new(),
        stale: BTreeMap::new(),
        staff_reasons,
    };
    // The closed slot's own page, a wait for it, and a move of the visitor's booking into it,
    // with the page that then tells why not: as a stranger.
    if part == Part::Routes {
        let page = format!("/book/{}/slots/{closed_by_staff}", p["store"]);
        s.send(&whos[0], Method::GET, &page, Body::None).await;
        let form = Body::Form(vec![
            ("name".into(), "Stranger".into()),
            ("phone".into(), "+86 138 0013 8000".into()),
        ]);
        s.send(&whos[0], Method::POST, &format!("{page}/waitlist"), form)
            .await;
        let move_to = format!("/booking/{}/reschedule", p["bookings"]);
        let chosen = Body::Form(vec![("slot_id".into(), closed_by_staff.to_string())]);
        s.send(&whos[0], Method::POST, &move_to, chosen).await;
        s.send(&whos[0], Method::GET, &move_to, Body::None).await;
    }
    let mut no_example = BTreeSet::new();
    for template in routes.iter().filter(|_| part == Part::Routes) {
        let is_api = template.starts_with("/api/");
        let params_n = template.matches('{').count();
        let plain = fill(template, &p, None);
        // Path parameters: each one hostile in turn, every method, every caller.
        let methods = if is_api {
            vec![Method::GET, Method::POST, Method::PATCH, Method::DELETE]
        } else {
            vec![Method::GET, Method::POST]
        };
        let callers: Vec<&Who> = if is_api {
            vec![&api, &whos[0]]
        } else if template == "/logout" {
            // Signing out is the one thing a signed-in sweep must not do halfway.
            vec![&whos[0]]
        } else {
            whos.iter().collect()
        };
        let mut paths = vec![plain.clone()];
        for i in 0..params_n {
            for h in hostile_segments() {
                paths.push(fill(template, &p, Some((i, &h))));
            }
        }
        // The query string: hostile values under the names the pages filter by.
        for h in ["%00", "%FF", "abc", "-1", "99999999999999999999999"] {
            paths.push(format!(
                "{plain}?page={h}&q={h}&day={h}&date={h}&status={h}&lang={h}&next={h}&from={h}&to={h}\
                 &after={h}&before={h}&limit={h}&slot_id={h}&kind={h}&warehouse={h}&actor={h}&action={h}\
                 &subject={h}&store={h}&order_id={h}&sku={h}&week={h}&service={h}&staff={h}"
            ));
        }
        for who in &callers {
            for path in &paths {
                for m in &methods {
                    let body = if is_api && (*m == Method::POST || *m == Method::PATCH) {
                        Body::Json(json!({}))
                    } else {
                        Body::None
                    };
                    s.send(who, m.clone(), path, body).await;
                }
            }
        }
        // JSON bodies: every leaf of an example body replaced in turn.
        if is_api {
            for m in [Method::POST, Method::PATCH] {
                let probe = api
                    .client
                    .request(m.clone(), app.url(&plain))
                    .bearer_auth(api.bearer.as_deref().unwrap())
                    .json(&json!({}))
                    .send()
                    .await
                    .unwrap();
                if probe.status() == 405 || probe.status() == 404 && template.contains("{*") {
                    continue;
                }
                if probe.status() == 415 {
                    // An upload: each text part, the file's name and its content hostile in turn.
                    let base = vec![
                        ("sku".to_string(), p["sku_code"].clone()),
                        ("mode".to_string(), "valid".to_string()),
                        ("name".to_string(), "sweep".to_string()),
                        ("expires_at".to_string(), String::new()),
                    ];
                    for h in hostile() {
                        for i in 0..base.len() {
                            let mut f = base.clone();
                            f[i].1 = h.clone();
                            let body =
                                Body::Multipart(f, "codes.txt".into(), "SWEEP-CODE-1\n".into());
                            s.send(&api, m.clone(), &plain, body).await;
                        }
                        let named = Body::Multipart(
                            base.clone(),
                            format!("{h}.txt"),
                            "SWEEP-CODE-2\n".into(),
                        );
                        s.send(&api, m.clone(), &plain, named).await;
                        let content =
                            Body::Multipart(base.clone(), "codes.txt".into(), format!("{h}\n"));
                        s.send(&api, m.clone(), &plain, content).await;
                    }
                    continue;
                }
                let Some(example) = example_body(&m, template, &p) else {
                    no_example.insert(format!("{m} {template}"));
                    continue;
                };
                let mut at = Vec::new();
                leaves(&example, Vec::new(), &mut at);
                for leaf in &at {
                    let mut values: Vec<Value> = hostile().into_iter().map(Value::String).collect();
                    values.extend([
                        json!(-1),
                        json!(1.5),
                        json!(1e300),
                        json!(true),
                        json!(null),
                        json!(["a"]),
                        json!({"a": 1}),
                    ]);
                    for v in values {
                        s.send(
                            &api,
                            m.clone(),
                            &plain,
                            Body::Json(replace(&example, leaf, v)),
                        )
                        .await;
                    }
                }
                // A lone surrogate cannot be built as a serde value: sent as raw JSON text.
                let raw = serde_json::to_string(&example).unwrap().replacen(
                    "\"sweep",
                    "\"\\ud800sweep",
                    1,
                );
                if let Ok(v) = serde_json::from_str::<Value>(&raw) {
                    s.send(&api, m.clone(), &plain, Body::Json(v)).await;
                }
            }
        }
    }
    // Forms: every form every signed-in role is shown, each field hostile in turn.
    let mut seen = BTreeSet::new();
    for who in whos.iter().filter(|_| part == Part::Forms) {
        for template in &routes {
            if template.starts_with("/api/")
                || template.contains("{*")
                || template.ends_with(".csv")
            {
                continue;
            }
            let page_path = fill(template, &p, None);
            let r = who.client.get(app.url(&page_path)).send().await.unwrap();
            if r.status() != 200 {
                continue;
            }
            let page = Html::parse(&r.text().await.unwrap());
            for (method, action, fields) in forms_of(&page, &page_path) {
                let action_path = action.split('?').next().unwrap_or("").to_string();
                if action_path == "/logout"
                    || !seen.insert((who.name, method.clone(), action_path.clone()))
                {
                    continue;
                }
                for (i, (name, _)) in fields.iter().enumerate() {
                    if name.is_empty() {
                        continue;
                    }
                    for h in hostile() {
                        let mut f = fields.clone();
                        f[i].1 = h;
                        if method == "post" {
                            s.send(who, Method::POST, &action_path, Body::Form(f)).await;
                        } else {
                            let q: String = form_urlencoded::Serializer::new(String::new())
                                .extend_pairs(f.iter())
                                .finish();
                            s.send(who, Method::GET, &format!("{action_path}?{q}"), Body::None)
                                .await;
                        }
                    }
                }
            }
        }
    }
    assert!(s.sent > 2000, "the sweep sent only {} requests", s.sent);
    assert!(
        s.failures.is_empty(),
        "{} of {} hostile requests went wrong:\n{}",
        s.failures.len(),
        s.sent,
        s.failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        no_example.is_empty(),
        "these API routes take a body but the sweep has no example of it: {no_example:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_in_every_route_path_query_and_api_body_gives_no_5xx_no_codeless_api_error_and_changes_nothing_when_refused_sqlite(
) {
    sweep(Backend::Sqlite, Part::Routes).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_in_every_route_path_query_and_api_body_gives_no_5xx_no_codeless_api_error_and_changes_nothing_when_refused_postgres(
) {
    sweep(Backend::Postgres, Part::Routes).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_in_every_form_field_of_every_role_gives_no_5xx_and_changes_nothing_when_refused_sqlite(
) {
    sweep(Backend::Sqlite, Part::Forms).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_in_every_form_field_of_every_role_gives_no_5xx_and_changes_nothing_when_refused_postgres(
) {
    sweep(Backend::Postgres, Part::Forms).await;
}
