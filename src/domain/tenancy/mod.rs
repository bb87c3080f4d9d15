//! Who is who: merchants, stores, users and their roles, staff people, API keys.

pub mod apikeys;
pub mod people;
pub mod tenants;
pub mod users;
