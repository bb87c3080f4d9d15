//! Background loops. Each is safe to run on every instance at once: the work is idempotent.

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::web::AppState;

pub struct Jobs(Vec<JoinHandle<()>>);

impl Jobs {
    pub fn abort(&self) {
        for h in &self.0 {
            h.abort();
        }
    }
}

pub fn spawn(state: AppState) -> Jobs {
    let sessions = state.sessions.clone();
    let db = state.db.clone();
    let cleanup = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(300));
        loop {
            tick.tick().await;
            if let Err(e) = sessions.delete_expired().await {
                tracing::warn!(error = %e, "expired session cleanup failed");
            }
            let cutoff = crate::store::db::now_ms() - crate::domain::users::THROTTLE_WINDOW_MS;
            if let Err(e) = sqlx::query("DELETE FROM login_failures WHERE at < $1")
                .bind(cutoff)
                .execute(&db.pool)
                .await
            {
                tracing::warn!(error = %e, "login failure cleanup failed");
            }
        }
    });
    Jobs(vec![cleanup])
}
