//! "Frozen by reconciliation": the banner on a SKU's or slot's page while a finding holds it.

use crate::domain::MerchantId;
use crate::domain::{reconcile, DomainError, Scope};
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::AppState;

/// "Frozen by reconciliation": the finding that froze a SKU or slot, for its page's banner.
pub struct FrozenBanner {
    pub finding: i64,
    pub explain: String,
    /// Link to the finding (the user may open the reconciliation pages).
    pub link: bool,
}

pub async fn frozen_banner(
    state: &AppState,
    user: &CurrentUser,
    merchant_id: MerchantId,
    finding: Option<i64>,
) -> Result<Option<FrozenBanner>, WebError> {
    let Some(id) = finding else {
        return Ok(None);
    };
    let explain = match reconcile::finding(&state.db, Scope::Merchant(merchant_id), id).await {
        Ok(f) => f.explain(),
        Err(DomainError::NotFound(_)) => String::new(),
        Err(e) => return Err(e.into()),
    };
    Ok(Some(FrozenBanner {
        finding: id,
        explain,
        link: user.account.findings_scope().is_ok(),
    }))
}
