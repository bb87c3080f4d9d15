use askama::Template;
use axum::extract::State;
use axum::response::Html;
use tower_sessions::Session;

use crate::domain::catalog;
use crate::domain::reconcile;
use crate::domain::scope::Role;
use crate::domain::tenants;
use crate::web::auth::CurrentUser;
use crate::web::error::WebError;
use crate::web::layout::Layout;
use crate::web::AppState;

#[derive(Template)]
#[template(path = "admin/dashboard.html")]
struct DashboardPage {
    layout: Layout,
    /// Not sellable, low stock, open findings, today's bookings.
    tiles: super::sellable::Tiles,
    counts: Vec<(String, i64)>,
    total: i64,
    stores: Vec<tenants::Store>,
    warehouses: Vec<tenants::Warehouse>,
    merchants: usize,
    /// Open reconciliation findings in the user's scope (store staff: not counted).
    open_findings: i64,
}

pub async fn show(
    State(state): State<AppState>,
    user: CurrentUser,
    session: Session,
) -> Result<Html<String>, WebError> {
    let scope = user.actor("").scope();
    let tiles = super::sellable::tiles(&state, &user).await?;
    let counts = catalog::count_products(&state.db, scope).await?;
    let total = counts.iter().map(|(_, n)| n).sum();
    let stores = tenants::stores(&state.db, scope).await?;
    let warehouses = tenants::warehouses(&state.db, scope).await?;
    let merchants = tenants::merchants(&state.db, scope).await?.len();
    let open_findings = match user.0.role() {
        Role::Operator | Role::MerchantAdmin => reconcile::open_count(&state.db, scope).await?,
        Role::StoreStaff => 0,
    };
    let layout = Layout::new(&user, &session, "/admin").await;
    Ok(Html(
        DashboardPage {
            layout,
            tiles,
            counts,
            total,
            stores,
            warehouses,
            merchants,
            open_findings,
        }
        .render()?,
    ))
}
