//! Infrastructure: the pool and its dialect, migrations, the Redis gate and its Lua scripts, the
//! session store, and bounded blocking work. (Not `store`: a store is a shop everywhere else.)
//! Domain code calls into here; nothing here knows HTTP.

pub mod bounded;
pub mod cache;
pub mod clock;
pub mod counters;
pub mod db;
pub mod ext;
pub mod outbound;
pub mod proxies;
pub mod replica;
pub mod sessions;
