//! Secrets at rest: plaintext codes never stay on disk, the database holds no session id a thief
//! could present, its files are the server user's alone, and answers with code text are not cached.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::helpers::{Backend, TestApp};
use crate::on_both;

fn files_in(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn mode(p: &std::path::Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

async fn an_upload_cut_off_half_way_leaves_no_codes_on_disk(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("voucher", "GIFT").await;
    // Half a multipart upload, then the client goes away.
    let addr = app.base.trim_start_matches("http://").to_string();
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/v1/code-batches HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 100000\r\n\r\n",
        api.key
    );
    let body = "--XX\r\nContent-Disposition: form-data; name=\"sku\"\r\n\r\nGIFT\r\n--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"codes.txt\"\r\n\r\nSECRET-CODE-0001\nSECRET-CODE-0002\n";
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body.as_bytes()).await.unwrap();
    s.flush().await.unwrap();
    let uploads = app.dir.join("uploads");
    // The spool file exists while the upload streams in, readable by the server's user alone...
    let mut seen = None;
    for _ in 0..100 {
        if let Some(f) = files_in(&uploads).first() {
            seen = Some(uploads.join(f));
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = seen.expect("the upload is spooled");
    assert_eq!(mode(&seen), 0o600);
    assert_eq!(mode(&uploads), 0o700);
    drop(s);
    // ...and is gone once the client is.
    let mut left = files_in(&uploads);
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        left = files_in(&uploads);
    }
    assert!(left.is_empty(), "left on disk: {left:?}");
}

async fn spool_files_a_crash_left_behind_are_swept_at_start_up_and_nothing_else(backend: Backend) {
    let dir =
        std::env::temp_dir().join(format!("sellable-spool-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let left = format!("{}.spool", uuid::Uuid::new_v4().simple());
    std::fs::write(dir.join(&left), "SECRET-CODE-0003\n").unwrap();
    // Anything else in the folder is not ours to remove (a misconfigured folder may hold the database).
    std::fs::write(dir.join("sellable.db"), "not a spool file").unwrap();
    let spool = dir.clone();
    let Some(_app) = TestApp::spawn_with(backend, move |c| c.serve.upload_dir = spool).await else {
        return;
    };
    assert_eq!(files_in(&dir), vec!["sellable.db".to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
}

async fn sessions_are_stored_hashed_and_the_database_and_key_files_are_private(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    app.merchant("acme").await;
    let (email, password) = app.user("merchant_admin", Some("acme")).await;
    let r = app
        .client()
        .post(app.url("/login"))
        .form(&[("email", email.as_str()), ("password", password.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = r
        .cookies()
        .find(|c| c.name() == "sellable_session")
        .expect("a session cookie")
        .value()
        .to_string();
    let raw: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE id = $1")
        .bind(&cookie)
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(
        raw, 0,
        "the session id a browser presents is not in the database"
    );
    use sha2::Digest;
    let hashed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sessions WHERE id = $1")
        .bind(hex::encode(sha2::Sha256::digest(cookie.as_bytes())))
        .fetch_one(&app.db.pool)
        .await
        .unwrap();
    assert_eq!(hashed, 1);
    assert_eq!(mode(&app.dir.join("code-keys.json")), 0o600);
    if backend == Backend::Sqlite {
        assert_eq!(mode(&app.dir.join("sellable.db")), 0o600);
    }
}

async fn a_fresh_data_folder_is_private(backend: Backend) {
    let root =
        std::env::temp_dir().join(format!("sellable-data-{}", uuid::Uuid::new_v4().simple()));
    let data = root.join("data");
    let (db_url, keys) = (
        format!("sqlite://{}", data.join("sellable.db").display()),
        data.join("code-keys.json"),
    );
    let Some(app) = TestApp::spawn_with(backend, |c| {
        if backend == Backend::Sqlite {
            c.global.database_url = db_url.clone();
        }
        c.global.code_key_file = keys.clone();
    })
    .await
    else {
        return;
    };
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&keys), 0o600);
    drop(app);
    let _ = std::fs::remove_dir_all(&root);
}

async fn answers_that_carry_code_text_are_not_cached(backend: Backend) {
    let Some(app) = TestApp::spawn(backend).await else {
        return;
    };
    let api = app.acme_api().await;
    api.product("voucher", "GIFT").await;
    let form = reqwest::multipart::Form::new().text("sku", "GIFT").part(
        "file",
        reqwest::multipart::Part::text("CODE-AAAA-0001\n").file_name("codes.txt"),
    );
    let r = api
        .http
        .post(format!("{}/api/v1/code-batches", api.base))
        .bearer_auth(&api.key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    for _ in 0..100 {
        let (_, s) = api.get("/api/v1/skus/GIFT/codes/summary").await;
        if s["sellable"] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    }
    let call = |method: reqwest::Method, path: &str, body: Option<serde_json::Value>| {
        let mut req = api
            .http
            .request(method, format!("{}{}", api.base, path))
            .bearer_auth(&api.key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        req.send()
    };
    let r = call(
        reqwest::Method::POST,
        "/api/v1/reservations",
        Some(json!({"order_id": "o-1", "items": [{"sku": "GIFT", "qty": 1}]})),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["cache-control"], "no-store");
    for (method, path) in [
        (reqwest::Method::POST, "/api/v1/reservations/o-1/confirm"),
        (reqwest::Method::GET, "/api/v1/reservations/o-1"),
    ] {
        let r = call(method, path, Some(json!({}))).await.unwrap();
        assert_eq!(r.headers()["cache-control"], "no-store", "{path}");
        let body = r.text().await.unwrap();
        assert!(body.contains("CODE-AAAA-0001"), "{path}: {body}");
    }
}

on_both!(an_upload_cut_off_half_way_leaves_no_codes_on_disk);
on_both!(spool_files_a_crash_left_behind_are_swept_at_start_up_and_nothing_else);
on_both!(sessions_are_stored_hashed_and_the_database_and_key_files_are_private);
on_both!(a_fresh_data_folder_is_private);
on_both!(answers_that_carry_code_text_are_not_cached);
