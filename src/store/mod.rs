//! Concrete SQL and Redis access. Domain code calls into here; nothing here knows HTTP.

pub mod bounded;
pub mod counters;
pub mod db;
pub mod sessions;
