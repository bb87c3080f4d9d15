//! One-shot messages shown on the next page ("Product saved."), kept in the session.

use serde::{Deserialize, Serialize};
use tower_sessions::Session;

const KEY: &str = "flash";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flash {
    /// "success" | "error" | "info": also the CSS class.
    pub kind: String,
    pub text: String,
}

pub async fn push(session: &Session, kind: &str, text: String) {
    let mut all: Vec<Flash> = session.get(KEY).await.ok().flatten().unwrap_or_default();
    all.push(Flash {
        kind: kind.to_string(),
        text,
    });
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
