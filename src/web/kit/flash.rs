//! One-shot messages shown on the next page ("Product saved."), kept in the session.

use serde::{Deserialize, Serialize};
use tower_sessions::Session;

const KEY: &str = "flash";

/// How a flash reads; its name is also the CSS class (`flash-success`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlashKind {
    Success,
    Error,
    Warning,
    Info,
}

impl std::fmt::Display for FlashKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FlashKind::Success => "success",
            FlashKind::Error => "error",
            FlashKind::Warning => "warning",
            FlashKind::Info => "info",
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flash {
    pub kind: FlashKind,
    pub text: String,
}

pub async fn push(session: &Session, kind: FlashKind, text: String) {
    let mut all: Vec<Flash> = session.get(KEY).await.ok().flatten().unwrap_or_default();
    all.push(Flash { kind, text });
    let _ = session.insert(KEY, all).await;
}

pub async fn take(session: &Session) -> Vec<Flash> {
    session
        .remove::<Vec<Flash>>(KEY)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}
