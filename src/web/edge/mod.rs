//! The edge of the process: the server loop, the middleware every request passes through (request
//! ids, traces, metrics, the marks of a change) and the health and metrics endpoints.

pub mod health;
pub mod middleware;
pub mod server;
