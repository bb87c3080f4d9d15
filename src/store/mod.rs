//! Concrete SQL (and later Redis) access. Domain code calls into here; nothing here knows HTTP.

pub mod db;
pub mod sessions;
