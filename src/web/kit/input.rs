//! Text that no database column can hold is refused where requests are parsed, once for every
//! route: the path, the query string, form bodies (here), JSON bodies (in `ApiJson`) and multipart
//! text fields (in `uploads`). PostgreSQL rejects a NUL byte in TEXT (SQLSTATE 22021) where SQLite
//! stores it, so without this a `%00` in any field was a 500 on one backend and a 404 on the other.
//! Control characters other than tab, line feed and carriage return are refused with it: no field
//! of ours means them, and they make logs and exports lie.

use std::convert::Infallible;
use std::future::{ready, Ready};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use tower::{Layer, Service};

use crate::messages;
use crate::web::kit::error::{error_page, ApiError};

/// A character that no field may carry.
pub fn forbidden_char(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

/// Text every field may carry.
pub fn clean(s: &str) -> bool {
    !s.chars().any(forbidden_char)
}

/// A percent-encoded path or query: clean once decoded, and valid UTF-8.
pub fn clean_percent_encoded(raw: &str) -> bool {
    if !raw.as_bytes().contains(&b'%') {
        // Undecoded, a URI holds visible ASCII only (and UTF-8 that `http` checked).
        return clean(raw);
    }
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
    std::str::from_utf8(&decoded).is_ok_and(clean)
}

/// A JSON text whose strings hold no forbidden character. Raw control characters are invalid JSON
/// anyway (the parser refuses them); this finds them written as `\u` escapes, and skips every
/// other escape so that `\\u0000` (a backslash, then the letters) passes.
pub fn clean_json(body: &[u8]) -> bool {
    // DEL and the C1 controls (U+0080–U+009F, C2 80–C2 9F in UTF-8) are valid JSON as they are.
    if memchr::memchr(0x7f, body).is_some()
        || memchr::memchr_iter(0xc2, body)
            .any(|at| body.get(at + 1).is_some_and(|b| (0x80..=0x9f).contains(b)))
    {
        return false;
    }
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\\', &body[i..]) {
        let at = i + off;
        match body.get(at + 1) {
            Some(b'u') => {
                let hex = body
                    .get(at + 2..at + 6)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u32::from_str_radix(h, 16).ok());
                if let Some(c) = hex.and_then(char::from_u32) {
                    if forbidden_char(c) {
                        return false;
                    }
                }
                i = at + 6;
            }
            _ => i = at + 2,
        }
        if i >= body.len() {
            break;
        }
    }
    true
}

/// A static file name longer than any file system allows: the file server would answer 500
/// (ENAMETOOLONG) for what is simply not there.
fn static_name_too_long(path: &str) -> bool {
    path.starts_with("/static/") && path.split('/').any(|seg| seg.len() > 255)
}

fn is_api(path: &str) -> bool {
    path.starts_with("/api/")
}

/// The answer to text that cannot be taken: JSON with a stable code under /api, a page elsewhere.
/// A path that cannot be decoded names nothing we have, so it is "not found".
fn refusal(path: &str, in_path: bool) -> Response {
    match (is_api(path), in_path) {
        (true, true) => ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            messages::page_not_found(),
        )
        .into_response(),
        (true, false) => ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_text",
            messages::invalid_text(),
        )
        .into_response(),
        (false, true) => error_page(StatusCode::NOT_FOUND, messages::page_not_found()),
        (false, false) => error_page(StatusCode::BAD_REQUEST, messages::invalid_text()),
    }
}

/// Refuses a request whose path or query carries forbidden text, before any route sees it.
/// Hand-written rather than `from_fn`, which clones and boxes the inner service on every request:
/// this runs in front of the API's hot paths.
#[derive(Clone, Default)]
pub struct GuardUri;

impl<S> Layer<S> for GuardUri {
    type Service = GuardUriService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        GuardUriService { inner }
    }
}

#[derive(Clone)]
pub struct GuardUriService<S> {
    inner: S,
}

impl<S> Service<Request> for GuardUriService<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, Ready<Result<Response, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let uri = req.uri();
        let path_ok = clean_percent_encoded(uri.path()) && !static_name_too_long(uri.path());
        let query_ok = uri.query().is_none_or(clean_percent_encoded);
        if path_ok && query_ok {
            Either::Left(self.inner.call(req))
        } else {
            Either::Right(ready(Ok(refusal(uri.path(), !path_ok))))
        }
    }
}

/// Form bodies of the pages: read (within the body limit), checked field by field, and handed on
/// unchanged. Only `application/x-www-form-urlencoded`; multipart text is checked as it streams.
pub async fn guard_form(
    axum::extract::State(state): axum::extract::State<crate::web::AppState>,
    req: Request,
    next: Next,
) -> Response {
    let is_form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        });
    if !is_form {
        return next.run(req).await;
    }
    let limit = state.config.serve.body_limit;
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => {
            return error_page(StatusCode::PAYLOAD_TOO_LARGE, messages::body_too_large());
        }
    };
    let clean_form = form_urlencoded::parse(&bytes).all(|(k, v)| clean(&k) && clean(&v));
    if !clean_form {
        return refusal(parts.uri.path(), false);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_and_control_characters_are_refused_tab_and_newlines_pass() {
        assert!(!clean("a\0b"));
        assert!(!clean("a\u{1b}b"));
        assert!(!clean("a\u{7f}"));
        assert!(clean("line one\r\nline two\tend"));
        assert!(clean("王小明 🍵 \u{200f}"));
    }

    #[test]
    fn percent_encoded_nul_and_invalid_utf8_are_refused() {
        assert!(!clean_percent_encoded("/book/%00"));
        assert!(!clean_percent_encoded("/api/v1/skus/%FF%FE/stock"));
        assert!(!clean_percent_encoded("q=%01"));
        assert!(clean_percent_encoded("/book/%E7%8E%8B"));
        assert!(clean_percent_encoded("q=a%20b&page=2"));
    }

    #[test]
    fn json_escapes_of_control_characters_are_found_but_an_escaped_backslash_is_not_one() {
        assert!(!clean_json(br#"{"name":"a\u0000"}"#));
        assert!(!clean_json(br#"{"name":"\u001B"}"#));
        assert!(clean_json(br#"{"name":"a\\u0000"}"#));
        assert!(clean_json(br#"{"reason":"one\ntwo\u000a\u0009"}"#));
        assert!(clean_json(br#"{"name":"\ud83c\udf75 \\"}"#));
        assert!(clean_json(br#"{"name":"trailing \"#));
        assert!(!clean_json("{\"name\":\"a\u{7f}\"}".as_bytes()));
        assert!(!clean_json("{\"name\":\"a\u{85}\"}".as_bytes()));
        assert!(clean_json("{\"name\":\"é ü\"}".as_bytes()));
    }
}
