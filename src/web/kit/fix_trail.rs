//! "Back to Not sellable": someone who follows a fix link from the Not sellable list (it carries
//! `from=sellable`) sees on every back-office page after it, the fix included, how many SKUs are
//! still not sellable and a link back to the list they came from, until they see a list of
//! verdicts again (Not sellable or the dashboard) or sign in anew.
//!
//! The count judges the whole catalog, so it is kept in the trail: counted again after a change
//! made in the back office (any form sent by this person) or when older than [`FRESH_MS`], not on
//! every page.

use crate::web::kit::paths;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use crate::domain::{sellable, MerchantId};
use crate::web::kit::auth::CurrentUser;
use crate::web::AppState;

/// Set while a fix is under way.
const TRAIL: &str = "fix_trail";
/// The Not sellable list last seen, for the link back.
const LIST: &str = "fix_trail_list";
/// How long a count is shown without counting again (changes by others, or through the API).
const FRESH_MS: i64 = 30_000;

/// A list of verdicts: its path and query, and the merchant an operator narrowed it to.
#[derive(Serialize, Deserialize, Clone, Default)]
struct List {
    href: String,
    merchant_id: Option<i64>,
}

#[derive(Serialize, Deserialize)]
struct Trail {
    list: List,
    /// The last count, and when it was made (ms).
    left: Option<(i64, i64)>,
}

/// A GET with `from=sellable` starts a trail (back to the list last seen).
pub async fn follow(session: &Session, query: Option<&str>) {
    if query.is_some_and(|q| q.split('&').any(|p| p == "from=sellable")) {
        let list: List = session.get(LIST).await.ok().flatten().unwrap_or(List {
            href: paths::sellable(),
            merchant_id: None,
        });
        let _ = session.insert(TRAIL, Trail { list, left: None }).await;
    }
}

/// A form was sent (perhaps the fix): the next page counts again.
pub async fn changed(session: &Session) {
    if let Ok(Some(mut t)) = session.get::<Trail>(TRAIL).await {
        if t.left.take().is_some() {
            let _ = session.insert(TRAIL, t).await;
        }
    }
}

/// The list is on screen: the trail ends, and this list is the one to come back to.
pub async fn at_list(session: &Session, href: String, merchant_id: Option<MerchantId>) {
    let _ = session.remove::<Trail>(TRAIL).await;
    let list = List {
        href,
        merchant_id: merchant_id.map(|m| m.0),
    };
    let _ = session.insert(LIST, list).await;
}

/// The dashboard counts them itself: the trail ends.
pub async fn end(session: &Session) {
    let _ = session.remove::<Trail>(TRAIL).await;
}

/// A new sign-in keeps the session's data under a new id: nothing of the last person's trail.
pub async fn forget(session: &Session) {
    let _ = session.remove::<Trail>(TRAIL).await;
    let _ = session.remove::<List>(LIST).await;
}

/// On a trail: the SKUs still not sellable in the list's scope, and the link back.
pub async fn left(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
) -> Option<(i64, String)> {
    let mut trail: Trail = session.get(TRAIL).await.ok().flatten()?;
    let now = state.db.now_ms();
    if let Some((n, _)) = trail.left.filter(|(_, at)| now - at < FRESH_MS) {
        return Some((n, trail.list.href));
    }
    let th = state.config.sellable_thresholds();
    let scope = user.actor("").scope();
    let merchant = trail.list.merchant_id.map(MerchantId);
    match sellable::recent_catalog(&state.db, &th, scope, merchant).await {
        Ok(all) => {
            let n = all.iter().filter(|v| !v.sellable).count() as i64;
            trail.left = Some((n, now));
            let href = trail.list.href.clone();
            let _ = session.insert(TRAIL, trail).await;
            Some((n, href))
        }
        // The banner is a convenience: a page never fails for it.
        Err(e) => {
            tracing::warn!(error = %e, "fix trail: the count of SKUs left failed");
            None
        }
    }
}
