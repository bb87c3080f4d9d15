//! The API's settings: webhook endpoints and the audit log.

pub(super) mod audit;
pub(super) mod webhooks;
