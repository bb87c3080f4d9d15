//! The database pool: one `AnyPool` for SQLite and PostgreSQL, migrations per dialect, and the
//! few places where the two dialects differ.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone)]
pub struct Db {
    pub pool: AnyPool,
    pub dialect: Dialect,
    /// The Redis gate in front of the hot paths, when REDIS_URL is set.
    pub gate: Option<std::sync::Arc<super::counters::Gate>>,
    /// Password hashes, a few at a time (see `bounded`).
    pub hashers: std::sync::Arc<super::bounded::Bounded>,
    /// What the rooms of the domain keep beside the pool: their caches, by type (`ext`).
    pub ext: std::sync::Arc<super::ext::Extensions>,
    /// A streaming replica for reads that may be a moment behind (`DATABASE_READ_URL`).
    pub replica: Option<std::sync::Arc<super::replica::Replica>>,
    /// This handle reads the replica (`lagging`): it must not write, nor keep what it read as
    /// current.
    pub on_replica: bool,
    /// What "now" is for every business rule (`clock`): the system's, or the day a test set.
    pub clock: super::clock::Clock,
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("unsupported database URL {0:?}: use sqlite://… or postgres://…")]
    UnsupportedUrl(String),
    #[error("cannot create the directory for the SQLite file {path}: {source}")]
    CreateDir {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Sql(#[from] sqlx::Error),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl Db {
    /// SQLite plans by the statistics `ANALYZE` leaves, and has none until it runs: a database
    /// never analysed drove the bookings list from the store's 50,000 slots (84 ms) rather than
    /// its 7 bookings (0.2 ms with statistics). `PRAGMA optimize` analyses the tables that need
    /// it, sampling (`analysis_limit`) so a table of a million codes costs milliseconds.
    /// PostgreSQL's autovacuum keeps its own statistics; where it is turned off, nothing would,
    /// and a store's day on the dashboard walked every future slot of the store (22 ms instead of
    /// 2 ms): then this analyses (sampled, as PostgreSQL always does).
    pub async fn refresh_statistics(&self) -> Result<(), sqlx::Error> {
        match self.dialect {
            Dialect::Sqlite => {
                let mut conn = self.pool.acquire().await?;
                sqlx::query("PRAGMA analysis_limit = 1000")
                    .execute(&mut *conn)
                    .await?;
                sqlx::query("PRAGMA optimize = 0x10002")
                    .execute(&mut *conn)
                    .await?;
            }
            Dialect::Postgres => {
                let autovacuum: String = sqlx::query_scalar("SELECT current_setting('autovacuum')")
                    .fetch_one(&self.pool)
                    .await?;
                if autovacuum == "off" {
                    sqlx::query("ANALYZE").execute(&self.pool).await?;
                }
            }
        }
        Ok(())
    }

    /// Analyses every table now, whatever keeps the statistics otherwise: after a bulk load
    /// (`sellable analyze`), so that the next queries are planned on what is there.
    pub async fn analyze(&self) -> Result<(), sqlx::Error> {
        let mut conn = self.pool.acquire().await?;
        if self.dialect == Dialect::Sqlite {
            sqlx::query("PRAGMA analysis_limit = 1000")
                .execute(&mut *conn)
                .await?;
        }
        sqlx::query("ANALYZE").execute(&mut *conn).await?;
        Ok(())
    }

    /// After a change made outside the Redis gate (adjustment, closure, import,
    /// reconciliation…): drops the subjects' keys so their next use loads them from SQL. Does
    /// nothing without Redis.
    pub async fn forget(&self, subjects: impl IntoIterator<Item = super::counters::Subject>) {
        // Collected first: the future must not hold a borrowing iterator across awaits.
        let subjects: Vec<super::counters::Subject> = subjects.into_iter().collect();
        if let Some(g) = &self.gate {
            for s in subjects {
                g.forget(s).await;
            }
        }
    }

    /// Connects (creating the SQLite file and its directory when needed) and runs migrations.
    pub async fn connect(url: &str) -> Result<Db, DbError> {
        sqlx::any::install_default_drivers();
        let dialect = dialect_of(url)?;
        let pool = match dialect {
            Dialect::Sqlite => {
                ensure_sqlite_dir(url)?;
                let url = with_create_mode(url);
                let opts = AnyConnectOptions::from_str(&url)?;
                AnyPoolOptions::new()
                    // SQLite has one writer; a handful of connections serve readers while it waits.
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(30))
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            conn.execute("PRAGMA journal_mode = WAL").await?;
                            conn.execute("PRAGMA busy_timeout = 10000").await?;
                            conn.execute("PRAGMA foreign_keys = ON").await?;
                            conn.execute("PRAGMA synchronous = NORMAL").await?;
                            Ok(())
                        })
                    })
                    .connect_with(opts)
                    .await?
            }
            Dialect::Postgres => {
                AnyPoolOptions::new()
                    .max_connections(32)
                    .acquire_timeout(Duration::from_secs(30))
                    .connect(url)
                    .await?
            }
        };
        let db = Db {
            pool,
            dialect,
            gate: None,
            hashers: std::sync::Arc::new(super::bounded::Bounded::new(
                super::bounded::default_concurrency(),
            )),
            ext: Default::default(),
            replica: None,
            on_replica: false,
            clock: Default::default(),
        };
        db.migrate().await?;
        Ok(db)
    }

    /// Milliseconds since the epoch by the app's clock: the one time representation in every
    /// table.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    pub async fn migrate(&self) -> Result<(), DbError> {
        match self.dialect {
            Dialect::Sqlite => SQLITE_MIGRATOR.run(&self.pool).await?,
            Dialect::Postgres => POSTGRES_MIGRATOR.run(&self.pool).await?,
        }
        Ok(())
    }

    /// Starts a transaction that will write. On SQLite it takes the write lock up front
    /// (`BEGIN IMMEDIATE`): a deferred transaction that reads and then writes fails at once with
    /// SQLITE_BUSY when another writer got in between, instead of waiting its turn.
    pub async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, sqlx::Error> {
        match self.dialect {
            Dialect::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await,
            Dialect::Postgres => self.pool.begin().await,
        }
    }

    /// This database for a read that may be a moment behind (a listing, a report, the ledger),
    /// by someone whose last change was at `wrote_ms` (0: none known): the replica while it is
    /// close enough behind and holds that change, else the primary (see `infra::replica`).
    /// Never for a decision, and never for a write: a replica refuses writes.
    pub fn lagging(&self, wrote_ms: i64) -> Db {
        match &self.replica {
            Some(r) if r.usable_for(wrote_ms) => Db {
                pool: r.pool.clone(),
                replica: None,
                on_replica: true,
                ..self.clone()
            },
            _ => self.clone(),
        }
    }

    /// Reachability check for /readyz.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").execute(&self.pool).await.is_ok()
    }
}

pub fn dialect_of(url: &str) -> Result<Dialect, DbError> {
    if url.starts_with("sqlite:") {
        Ok(Dialect::Sqlite)
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Ok(Dialect::Postgres)
    } else {
        Err(DbError::UnsupportedUrl(url.to_string()))
    }
}

fn migrator(dialect: Dialect) -> &'static sqlx::migrate::Migrator {
    match dialect {
        Dialect::Sqlite => &SQLITE_MIGRATOR,
        Dialect::Postgres => &POSTGRES_MIGRATOR,
    }
}

/// The migration versions shipped for a dialect (a test checks both dialects list the same).
pub fn migration_versions(dialect: Dialect) -> Vec<i64> {
    migrator(dialect).iter().map(|m| m.version).collect()
}

/// A short fingerprint of the migrations shipped for a dialect (their versions and checksums): two
/// databases migrated by builds with the same fingerprint have the same schema. The test suite
/// names the migrated database it copies for every test by it.
pub fn migration_fingerprint(dialect: Dialect) -> String {
    use sha2::Digest;
    let mut hash = sha2::Sha256::new();
    for m in migrator(dialect).iter() {
        hash.update(m.version.to_le_bytes());
        hash.update(&m.checksum);
    }
    hex::encode(&hash.finalize()[..8])
}

fn sqlite_path(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    if path.is_empty() || path == ":memory:" || path.starts_with("file:") {
        None
    } else {
        Some(path)
    }
}

/// The database file and its folder are this user's alone: the file holds sessions, customers'
/// phone numbers and the audit trail. A new folder is made 0700; the file is created 0600 before
/// SQLite opens it (its -wal and -shm files take the same mode), and an older 0644 file is
/// narrowed to 0600.
fn ensure_sqlite_dir(url: &str) -> Result<(), DbError> {
    if let Some(path) = sqlite_path(url) {
        let err = |p: &Path| {
            let p = p.display().to_string();
            move |source| DbError::CreateDir { path: p, source }
        };
        let file = Path::new(path);
        if let Some(dir) = file.parent() {
            if !dir.as_os_str().is_empty() {
                create_private_dir(dir).map_err(err(dir))?;
            }
        }
        make_private_file(file).map_err(err(file))?;
    }
    Ok(())
}

/// Creates a folder (and its parents) that only this user can enter; an existing one is left as is.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Creates an empty file readable by this user only, or narrows an existing one to 0600.
fn make_private_file(file: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(file)
        {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
            }
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(())
    }
}

/// The first run creates the SQLite file rather than failing on its absence.
fn with_create_mode(url: &str) -> String {
    if sqlite_path(url).is_some() && !url.contains("mode=") {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}mode=rwc")
    } else {
        url.to_string()
    }
}

/// Unique-constraint violations become field errors, never 500s.
pub fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(e) if e.is_unique_violation())
}

/// `$2, $3, …` for an IN list that follows `offset` other parameters.
fn placeholders(n: usize, offset: usize) -> String {
    (1..=n)
        .map(|i| format!("${}", i + offset))
        .collect::<Vec<_>>()
        .join(",")
}

/// `col IN (1,2,3)`, or a condition nothing meets for no ids. Only for ids read from the
/// database (integers, never text from a request), which are then written into the statement.
pub fn id_in(col: &str, ids: &[i64]) -> String {
    if ids.is_empty() {
        return "1 = 0".into();
    }
    let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    format!("{col} IN ({list})")
}

/// ` AND col IN (…)` for a list of ids, nothing for None (every row).
pub fn and_id_in(col: &str, ids: Option<&[i64]>) -> String {
    ids.map(|ids| format!(" AND {}", id_in(col, ids)))
        .unwrap_or_default()
}

/// `($1, $2), ($3, $4), …`: the VALUES of a multi-row INSERT of `rows` rows of `cols` columns.
pub fn value_rows(rows: usize, cols: usize) -> String {
    (0..rows)
        .map(|r| format!("({})", placeholders(cols, r * cols)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rows of a JSON array of objects, bound as one parameter (`$n`), as a table `x` of the given
/// columns (name, PostgreSQL type): a multi-row INSERT … SELECT FROM this has one text whatever the
/// number of rows, so each connection prepares it once. Rows come in the array's order.
pub fn json_rows(dialect: Dialect, param: usize, cols: &[(&str, &str)]) -> String {
    match dialect {
        Dialect::Postgres => format!(
            "json_to_recordset(${param}::json) AS x({})",
            cols.iter()
                .map(|(c, t)| format!("{c} {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Dialect::Sqlite => format!(
            "(SELECT {} FROM json_each(${param}) ORDER BY key) AS x",
            cols.iter()
                .map(|(c, _)| format!("json_extract(value, '$.{c}') AS {c}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Runs `sql` (with `{ids}` standing for the IN list) over chunks of ids, after `pre` binds:
/// bound parameters rather than ids spliced into the text, and chunks small enough for every
/// database's parameter limit.
pub async fn by_ids<T>(db: &Db, sql: &str, pre: &[i64], ids: &[i64]) -> Result<Vec<T>, sqlx::Error>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        let text = sql.replace("{ids}", &placeholders(chunk.len(), pre.len()));
        let mut q = sqlx::query_as::<_, T>(&text);
        for p in pre {
            q = q.bind(*p);
        }
        for id in chunk {
            q = q.bind(*id);
        }
        out.extend(q.fetch_all(&db.pool).await?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_list_is_written_as_numbers_and_an_empty_one_matches_nothing() {
        assert_eq!(id_in("b.sku_id", &[]), "1 = 0");
        assert_eq!(id_in("b.sku_id", &[3, 10]), "b.sku_id IN (3,10)");
        assert_eq!(and_id_in("s.id", None), "");
        assert_eq!(and_id_in("s.id", Some(&[7])), " AND s.id IN (7)");
    }
}
