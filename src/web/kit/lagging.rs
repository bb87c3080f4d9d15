//! Reads that may be a moment behind (listings, reports, the ledger) go to the read replica, unless
//! the reader made a change the replica does not hold yet (see `infra::replica`).
//!
//! Every change answered with success carries a cookie with the time of the change; a browser
//! sends it back with its next pages, so whoever changes something sees it at once, through any
//! instance. API clients that keep no cookies get the bounded lag of `SELLABLE_READ_MAX_LAG_SECONDS`.

use axum::extract::{FromRef, FromRequestParts};
use axum::http::header::COOKIE;
use axum::http::request::Parts;
use axum::http::HeaderMap;

use crate::domain::kernel::error::DomainError;
use crate::infra::db::Db;
use crate::web::AppState;

/// The cookie that holds the time (ms) of the reader's last change.
pub const WROTE_COOKIE: &str = "sellable_wrote";

/// The database to read from: the replica or the primary (see the module).
pub struct Lagging {
    read: Db,
    primary: Db,
}

impl Lagging {
    /// The replica, when this read may go to it.
    pub fn replica(&self) -> Option<&Db> {
        self.read.on_replica.then_some(&self.read)
    }
    pub fn primary(&self) -> &Db {
        &self.primary
    }
    /// A read the replica failed is about to run again on the primary.
    pub fn falling_back(&self, e: &DomainError) {
        tracing::warn!(error = %e, "a read on the replica failed: read again on the primary");
    }
}

/// `lagging_read!(lagging, |db| expr)`: evaluates `expr` (an awaited read returning a
/// `DomainResult`) with `db` the replica when it may be used, else the primary; a read the
/// replica fails (down since the last probe, a statement cancelled by recovery) runs again on
/// the primary: a replica is never the reason a read fails. (A macro: an async closure taking
/// `&Db` would not be `Send` for every lifetime, which handlers need.)
#[macro_export]
macro_rules! lagging_read {
    ($lagging:expr, |$db:ident| $read:expr) => {{
        let lagging: &$crate::web::kit::lagging::Lagging = &$lagging;
        match lagging.replica() {
            Some($db) => match $read {
                Ok(v) => Ok(v),
                Err(e) => {
                    lagging.falling_back(&e);
                    let $db = lagging.primary();
                    $read
                }
            },
            None => {
                let $db = lagging.primary();
                $read
            }
        }
    }};
}

/// The time of the reader's last change, from its cookie (0: none).
pub fn wrote_ms(headers: &HeaderMap) -> i64 {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .filter(|c| c.name() == WROTE_COOKIE)
        .filter_map(|c| c.value().parse::<i64>().ok())
        .max()
        .unwrap_or(0)
}

impl<S> FromRequestParts<S> for Lagging
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(state);
        Ok(Lagging {
            read: state.db.lagging(wrote_ms(&parts.headers)),
            primary: state.db.clone(),
        })
    }
}
