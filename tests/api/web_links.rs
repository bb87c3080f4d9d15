//! Links go through one place (`web::kit::paths`): every path it writes is answered by a route
//! of the router, so a route that moves without its link fails here, not in a customer's hands.

use crate::helpers::{Backend, TestApp};

/// Whether `path` is matched by the route pattern `route` (`{id}` matches one segment).
fn matches(route: &str, path: &str) -> bool {
    let (r, p): (Vec<&str>, Vec<&str>) = (route.split('/').collect(), path.split('/').collect());
    r.len() == p.len()
        && r.iter()
            .zip(&p)
            .all(|(r, p)| (r.starts_with('{') && r.ends_with('}') && !p.is_empty()) || r == p)
}

#[tokio::test]
async fn every_link_the_pages_write_is_a_route() {
    let app = TestApp::spawn(Backend::Sqlite)
        .await
        .expect("SQLite is embedded");
    let router = sellable::web::router(app.state.clone());
    let routes = sellable::web::route_paths(&router);
    assert!(matches("/admin/skus/{id}/stock", "/admin/skus/7/stock"));
    assert!(!matches("/admin/skus/{id}/stock", "/admin/skus/7/ledger"));
    assert!(!matches("/admin/skus/{id}", "/admin/skus/7/stock"));
    let paths = sellable::web::kit::paths::every_path("7");
    assert!(paths.len() > 100, "every path is listed: {}", paths.len());
    let unrouted: Vec<&String> = paths
        .iter()
        .filter(|p| !routes.iter().any(|r| matches(r, p)))
        .collect();
    assert!(
        unrouted.is_empty(),
        "links to paths no route answers (web::kit::paths): {unrouted:?}"
    );
}
