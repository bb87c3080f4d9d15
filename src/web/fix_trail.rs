//! "Back to Not sellable": someone who follows a fix link from the Not sellable list (it carries
//! `from=sellable`) sees on every back-office page after it, the fix included, how many SKUs are
//! still not sellable and a link back to the list they came from, until they see a list of
//! verdicts again (Not sellable or the dashboard).

use tower_sessions::Session;

use crate::domain::sellable;
use crate::web::auth::CurrentUser;
use crate::web::AppState;

/// Set while a fix is under way: the list's path and query to go back to.
const TRAIL: &str = "fix_trail";
/// The Not sellable list last seen (path and query), for the link back.
const LIST: &str = "fix_trail_list";

/// A GET with `from=sellable` starts a trail (back to the list last seen).
pub async fn follow(session: &Session, query: Option<&str>) {
    if query.is_some_and(|q| q.split('&').any(|p| p == "from=sellable")) {
        let list: String = session
            .get(LIST)
            .await
            .ok()
            .flatten()
            .unwrap_or_else(|| "/admin/sellable".to_string());
        let _ = session.insert(TRAIL, list).await;
    }
}

/// The list is on screen: the trail ends, and this list is the one to come back to.
pub async fn at_list(session: &Session, list: String) {
    let _ = session.remove::<String>(TRAIL).await;
    let _ = session.insert(LIST, list).await;
}

/// The dashboard counts them itself: the trail ends.
pub async fn end(session: &Session) {
    let _ = session.remove::<String>(TRAIL).await;
}

/// On a trail: the SKUs still not sellable in the reader's scope, and the link back.
pub async fn left(
    state: &AppState,
    user: &CurrentUser,
    session: &Session,
) -> Option<(i64, String)> {
    let list: String = session.get(TRAIL).await.ok().flatten()?;
    let th = state.config.sellable_thresholds();
    let scope = user.actor("").scope();
    match sellable::catalog(&state.db, &th, scope, None).await {
        Ok(all) => Some((all.iter().filter(|v| !v.sellable).count() as i64, list)),
        // The banner is a convenience: a page never fails for it.
        Err(e) => {
            tracing::warn!(error = %e, "fix trail: the count of SKUs left failed");
            None
        }
    }
}
