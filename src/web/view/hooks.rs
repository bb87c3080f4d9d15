//! A webhook endpoint as pages show it, and the banner of those the sender paused.

use chrono_tz::Tz;

use crate::domain::integration::webhooks::{self, PauseReason, Webhook, WebhookStatus};
use crate::domain::{tenancy::tenants, MerchantId};
use crate::web::kit::error::WebError;
use crate::web::view::time::when;
use crate::web::AppState;

/// A webhook endpoint as the back office shows it: on its own page, in the list, and in the
/// banner of endpoints paused for failing (the dashboard shows it too).
pub struct HookView {
    pub id: i64,
    pub url: String,
    pub events: String,
    pub status: WebhookStatus,
    /// Why the sender paused it, if it did.
    pub paused_reason: Option<PauseReason>,
    pub failing_since: String,
    pub created_at: String,
    pub created_by: String,
    pub old_secret_until: String,
}

impl HookView {
    /// Why it is paused, as the page's hook (`data-reason`) and the message's argument.
    pub fn reason(&self) -> &'static str {
        self.paused_reason.map_or("", |r| r.as_str())
    }
}

pub fn hook_view(w: &Webhook, tz: Tz, now: i64) -> HookView {
    HookView {
        id: w.id,
        url: w.url.clone(),
        events: w.events.join(", "),
        status: w.status,
        paused_reason: w.paused_reason,
        failing_since: w.failing_since.map(|t| when(t, tz)).unwrap_or_default(),
        created_at: when(w.created_at, tz),
        created_by: crate::web::view::actor::said(&w.created_by),
        old_secret_until: w
            .old_secret_until
            .filter(|&t| t > now)
            .map(|t| when(t, tz))
            .unwrap_or_default(),
    }
}

/// The banner's webhooks: paused by the sender after a day of failures.
pub async fn failing_views(
    state: &AppState,
    merchant_id: MerchantId,
) -> Result<Vec<HookView>, WebError> {
    let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    let now = state.db.now_ms();
    Ok(webhooks::paused_for_failing(&state.db, merchant_id)
        .await?
        .iter()
        .map(|w| hook_view(w, tz, now))
        .collect())
}
