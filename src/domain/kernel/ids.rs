//! Tenant ids as types: a merchant's id and a store's id are not interchangeable `i64`s, and a
//! query that filters by tenant takes a [`MerchantId`] (through [`crate::domain::Scope`]), never a bare
//! number with a "0 means everyone" convention.

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, sqlx::Type,
        )]
        #[serde(transparent)]
        #[sqlx(transparent)]
        pub struct $name(pub i64);

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
        impl std::str::FromStr for $name {
            type Err = std::num::ParseIntError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.parse().map($name)
            }
        }
    };
}

id_type!(
    /// A merchant (tenant): the owner of SKUs, stores, warehouses, keys and users.
    MerchantId
);
id_type!(
    /// A store (a shop of a merchant): where slots, staff and schedules live.
    StoreId
);
