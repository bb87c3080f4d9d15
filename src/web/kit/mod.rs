//! What every page and every API handler shares, and nothing else: the page context and the
//! layout, errors, extractors (the signed-in user, the client's address, inputs, uploads), flash
//! messages and the language. The kit imports no feature (`admin`, `api`, `public`): the house
//! test checks it, so a feature can lean on the kit without the kit leaning back.

pub mod auth;
pub mod client_addr;
pub mod error;
pub mod fix_trail;
pub mod flash;
pub mod ids;
pub mod input;
pub mod lagging;
pub mod lang;
pub mod layout;
pub mod page;
pub mod paths;
pub mod uploads;
