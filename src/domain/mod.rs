//! Business rules. No axum, no HTML: functions take a database handle and typed input and return
//! domain values or a [`DomainError`].

pub mod aftersales;
pub mod alerts;
pub mod apikeys;
pub mod audit;
pub mod booking_list;
pub mod bookings;
pub mod cache;
pub mod catalog;
pub mod closures;
pub mod code_import;
pub mod code_keys;
pub mod codes;
pub mod demo;
pub mod error;
pub mod events;
pub mod exceptions;
pub mod export;
pub mod filters;
pub mod gate;
pub mod ids;
pub mod ledger;
pub mod no_show;
pub mod orders;
pub mod reconcile;
pub mod reservations;
pub mod schedule;
pub mod scope;
pub mod sellable;
pub mod slots;
pub mod staff;
pub mod states;
pub mod stock;
pub mod stock_reasons;
pub mod store_today;
pub mod storefront;
pub mod tenants;
pub mod to_call;
pub mod users;
pub mod validate;
pub mod waitlist;
pub mod webhooks;

pub use error::{DomainError, FieldError};
pub use ids::{MerchantId, StoreId};
pub use scope::{Actor, Scope};
