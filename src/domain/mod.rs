//! Business rules. No axum, no HTML: functions take a database handle and typed input and return
//! domain values or a [`DomainError`].
//!
//! The rooms, lowest first; a room imports only rooms below it, and stock, slots and codes never
//! import each other (`tests/api/house.rs` keeps it so):
//! kernel ← trail ← tenancy ← catalog ← {stock | slots | codes} ← orders ← reconcile ← sellable.
//! `integration` reads kernel, trail and tenancy; `demo` reads them all.

pub mod catalog;
pub mod codes;
pub mod demo;
pub mod integration;
pub mod kernel;
pub mod orders;
pub mod reconcile;
pub mod sellable;
pub mod slots;
pub mod stock;
pub mod tenancy;
pub mod trail;

pub use kernel::error::{DomainError, FieldError};
pub use kernel::ids::{MerchantId, StoreId};
pub use kernel::scope::{Actor, Scope};
