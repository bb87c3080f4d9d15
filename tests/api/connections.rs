//! Connection limits: slow, idle and half-sent connections are closed; a cap on open connections
//! keeps the rest answering.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{Backend, TestApp};
use crate::on_both;

async fn limited(backend: Backend, max_connections: usize) -> Option<TestApp> {
    TestApp::spawn_with(backend, |c| {
        c.serve.header_timeout_seconds = 1;
        c.serve.idle_timeout_seconds = 2;
        c.serve.max_connections = max_connections;
    })
    .await
}

fn addr(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_string()
}

/// Reads until the server closes the connection; false if it is still open after `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

async fn half_request_line_is_closed_after_the_header_timeout_while_the_api_answers(
    backend: Backend,
) {
    let Some(app) = limited(backend, 64).await else {
        return;
    };
    let mut half = TcpStream::connect(addr(&app)).await.unwrap();
    half.write_all(b"GET /api/v1/sku").await.unwrap();
    // Meanwhile the API answers.
    let api = app.acme_api().await;
    let (status, body) = api.get("/api/v1/skus/NOPE/stock").await;
    assert_eq!(status, 404, "{body}");
    assert!(
        closed_within(&mut half, Duration::from_secs(8)).await,
        "a connection that never finished its request line stays open"
    );
}

async fn a_body_that_stops_arriving_is_cut_off_after_the_idle_timeout(backend: Backend) {
    let Some(app) = limited(backend, 64).await else {
        return;
    };
    let mut slow = TcpStream::connect(addr(&app)).await.unwrap();
    slow.write_all(
        b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nemail=a",
    )
    .await
    .unwrap();
    assert!(
        closed_within(&mut slow, Duration::from_secs(10)).await,
        "a body that stopped arriving keeps its connection open"
    );
}

async fn at_the_connection_cap_a_new_request_is_answered_once_idle_connections_are_closed(
    backend: Backend,
) {
    let Some(app) = limited(backend, 4).await else {
        return;
    };
    let mut idle = Vec::new();
    for _ in 0..4 {
        idle.push(TcpStream::connect(addr(&app)).await.unwrap());
    }
    // All four turns are taken by connections that send nothing; the next request waits in the
    // backlog until the header timeout closes them, then is served.
    let r = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
        .get(app.url("/healthz"))
        .send()
        .await
        .expect("answered once a turn is free");
    assert_eq!(r.status(), 200);
    for mut s in idle {
        assert!(closed_within(&mut s, Duration::from_secs(5)).await);
    }
}

on_both!(half_request_line_is_closed_after_the_header_timeout_while_the_api_answers);
on_both!(a_body_that_stops_arriving_is_cut_off_after_the_idle_timeout);
on_both!(at_the_connection_cap_a_new_request_is_answered_once_idle_connections_are_closed);
