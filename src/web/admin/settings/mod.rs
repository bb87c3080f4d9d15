//! Settings: stores, people, API keys, webhooks and the audit log of who changed what.

pub mod apikeys;
pub mod audit;
pub mod people;
pub mod stores;
pub mod webhooks;
