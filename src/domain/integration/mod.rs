//! What leaves for other systems: webhooks and alerts. Reads the trail and tenancy, nothing else.

pub mod alerts;
pub mod webhooks;
