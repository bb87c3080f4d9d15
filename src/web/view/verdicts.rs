//! The verdict panel at the top of a SKU's or product's page: can it be sold now, and why not.

use crate::domain::catalog::Sku;
use crate::domain::sellable::{self, Verdict};
use crate::web::kit::error::WebError;
use crate::web::AppState;

/// The verdicts shown at the top of a SKU's page.
pub async fn of_sku(state: &AppState, sku: &Sku) -> Result<Vec<Verdict>, WebError> {
    let th = state.config.sellable_thresholds();
    Ok(vec![sellable::verdict(&state.db, &th, sku).await?])
}

/// The verdicts of a product's SKUs, for the top of its page.
pub async fn of_product(state: &AppState, product_id: i64) -> Result<Vec<Verdict>, WebError> {
    let th = state.config.sellable_thresholds();
    Ok(sellable::of_product(&state.db, &th, product_id).await?)
}
