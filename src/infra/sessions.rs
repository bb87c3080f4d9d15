//! tower-sessions store over the application's own database, so that every instance behind a
//! load balancer shares sessions without another moving part.

use sqlx::AnyPool;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};

use super::clock::wall_ms as now_ms;

#[derive(Debug, Clone)]
pub struct SqlSessionStore {
    pool: AnyPool,
}

impl SqlSessionStore {
    pub fn new(pool: AnyPool) -> Self {
        SqlSessionStore { pool }
    }

    /// Removes expired sessions; called by a background loop.
    pub async fn delete_expired(&self) -> Result<u64, sqlx::Error> {
        let r = sqlx::query("DELETE FROM sessions WHERE expires_at < $1")
            .bind(now_ms())
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected())
    }
}

/// What the table keeps of a session id: its SHA-256, so that whoever reads the database (or a
/// backup of it) finds no id to present as a cookie.
fn stored_id(id: &Id) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(id.to_string().as_bytes()))
}

fn backend(e: impl std::fmt::Display) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

fn expiry_ms(record: &Record) -> i64 {
    (record.expiry_date.unix_timestamp_nanos() / 1_000_000) as i64
}

#[async_trait::async_trait]
impl SessionStore for SqlSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        // An id collision is astronomically unlikely, but never overwrite someone else's session.
        loop {
            let r = sqlx::query(
                "INSERT INTO sessions (id, data, expires_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
            )
            .bind(stored_id(&record.id))
            .bind(&data)
            .bind(expiry_ms(record))
            .execute(&self.pool)
            .await
            .map_err(backend)?;
            if r.rows_affected() == 1 {
                return Ok(());
            }
            record.id = Id::default();
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let data = serde_json::to_string(&record.data)
            .map_err(|e| session_store::Error::Encode(e.to_string()))?;
        sqlx::query(
            "INSERT INTO sessions (id, data, expires_at) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at",
        )
        .bind(stored_id(&record.id))
        .bind(data)
        .bind(expiry_ms(record))
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let row: Option<(String, i64)> = sqlx::query_as(
            "SELECT data, expires_at FROM sessions WHERE id = $1 AND expires_at > $2",
        )
        .bind(stored_id(id))
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await
        .map_err(backend)?;
        let Some((data, expires_at)) = row else {
            return Ok(None);
        };
        let data =
            serde_json::from_str(&data).map_err(|e| session_store::Error::Decode(e.to_string()))?;
        let expiry_date =
            time::OffsetDateTime::from_unix_timestamp_nanos(expires_at as i128 * 1_000_000)
                .map_err(|e| session_store::Error::Decode(e.to_string()))?;
        Ok(Some(Record {
            id: *id,
            data,
            expiry_date,
        }))
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        sqlx::query("DELETE FROM sessions WHERE id = $1")
            .bind(stored_id(id))
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }
}
