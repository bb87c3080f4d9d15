//! What every room needs and no model owns: errors, ids, the caller's scope, states, input checks,
//! filters and exports, the grouping of hot rows, the key ring, and the gate's switch.

pub mod code_keys;
pub mod error;
pub mod export;
pub mod filters;
pub mod gate;
pub mod groups;
pub mod ids;
pub mod phone;
pub mod scope;
pub mod states;
pub mod validate;
