use serde::Serialize;

use crate::messages;

/// One invalid field: the machine code says which rule, the message says it to a person.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct FieldError {
    pub field: String,
    pub code: &'static str,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &str, code: &'static str, message: String) -> Self {
        FieldError {
            field: field.to_string(),
            code,
            message,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    /// Input broke one or more rules; nothing was written.
    #[error("invalid input")]
    Invalid(Vec<FieldError>),
    /// The object does not exist, or belongs to another tenant (the two are indistinguishable on purpose).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The signed-in role may not do this.
    #[error("forbidden")]
    Forbidden,
    /// Too many attempts; try again after the given minutes.
    #[error("throttled")]
    Throttled { minutes: i64 },
    /// This account is being tried faster than its failures allow (sign-in): the next try is
    /// taken after the given seconds.
    #[error("too fast")]
    TooFast { retry_after: u64 },
    /// The server is at its limit for this kind of work (password hashing): retry after the
    /// given seconds.
    #[error("busy")]
    Busy { retry_after: u64 },
    /// Wrong credentials.
    #[error("bad credentials")]
    BadCredentials,
    /// The request is valid but the state of things refuses it (409). `details` are extra JSON
    /// fields for API clients, e.g. `{"sku": "TEA-1", "available": 3}`.
    #[error("conflict: {code}")]
    Conflict {
        code: &'static str,
        message: String,
        details: serde_json::Value,
    },
    /// Text the database cannot store or index (a NUL byte, an unindexably long value). The web
    /// layer refuses such text before it gets here; this is the second line of defence.
    #[error("text the database cannot store: {0}")]
    BadText(String),
    #[error("database error: {0}")]
    Db(sqlx::Error),
    #[error("internal error: {0}")]
    Internal(String),
}

/// For `map_err` on an insert: a unique-key violation becomes the field error that names the
/// duplicate (its message is built only then); any other database error stays what it is.
pub fn unique_as(
    field: &str,
    code: &'static str,
    message: impl FnOnce() -> String,
) -> impl FnOnce(sqlx::Error) -> DomainError {
    let field = field.to_string();
    move |e| {
        if crate::infra::db::is_unique_violation(&e) {
            DomainError::field(&field, code, message())
        } else {
            e.into()
        }
    }
}

impl DomainError {
    pub fn conflict(code: &'static str, message: String, details: serde_json::Value) -> Self {
        DomainError::Conflict {
            code,
            message,
            details,
        }
    }

    pub fn field(field: &str, code: &'static str, message: String) -> Self {
        DomainError::Invalid(vec![FieldError::new(field, code, message)])
    }

    /// The stable code sent in JSON error bodies.
    pub fn code(&self) -> &'static str {
        match self {
            DomainError::Invalid(errs) => errs.first().map(|e| e.code).unwrap_or("invalid"),
            DomainError::NotFound(_) => "not_found",
            DomainError::Forbidden => "forbidden",
            DomainError::Throttled { .. } | DomainError::TooFast { .. } => "too_many_attempts",
            DomainError::BadCredentials => "bad_credentials",
            DomainError::Busy { .. } => "busy",
            DomainError::Conflict { code, .. } => code,
            DomainError::BadText(_) => "invalid_text",
            DomainError::Db(_) | DomainError::Internal(_) => "internal",
        }
    }

    /// The message of an `Invalid` error: its fields' messages, in order.
    pub fn invalid_message(errs: &[FieldError]) -> String {
        errs.iter()
            .map(|e| e.message.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn message(&self) -> String {
        match self {
            DomainError::Invalid(errs) => Self::invalid_message(errs),
            DomainError::NotFound(what) => messages::not_found(what),
            DomainError::Forbidden => messages::forbidden(),
            DomainError::Throttled { minutes } => messages::login_throttled(*minutes),
            DomainError::TooFast { retry_after } => messages::login_too_fast(*retry_after),
            DomainError::BadCredentials => messages::bad_login(),
            DomainError::Busy { retry_after } => messages::busy(*retry_after),
            DomainError::Conflict { message, .. } => message.clone(),
            DomainError::BadText(_) => messages::invalid_text(),
            DomainError::Db(_) | DomainError::Internal(_) => messages::internal_error(),
        }
    }
}

impl From<sqlx::Error> for DomainError {
    fn from(e: sqlx::Error) -> Self {
        // SQLSTATE 22021 (a byte sequence invalid in the encoding, NUL among them), 22P05 (an
        // untranslatable character), 22001 (too long for the column) and 54000 (an index row too
        // large): all say "this text", not "this server".
        let text_code = e
            .as_database_error()
            .and_then(|d| d.code())
            .is_some_and(|c| matches!(c.as_ref(), "22021" | "22P05" | "22001" | "54000"));
        if text_code {
            DomainError::BadText(e.to_string())
        } else {
            DomainError::Db(e)
        }
    }
}

pub type DomainResult<T> = Result<T, DomainError>;

/// An operation's outcome as /metrics labels it: ok, a conflict's code, invalid, not_found, error.
pub fn outcome<T>(r: &DomainResult<T>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(DomainError::Conflict { code, .. }) => code,
        Err(DomainError::Invalid(_)) => "invalid",
        Err(DomainError::NotFound(_)) => "not_found",
        Err(_) => "error",
    }
}

/// Runs an operation and records its outcome and latency for /metrics (`telemetry::observe_op`).
pub async fn observed<T>(
    op: &'static str,
    f: impl std::future::Future<Output = DomainResult<T>>,
) -> DomainResult<T> {
    let started = std::time::Instant::now();
    let r = f.await;
    crate::telemetry::observe_op(op, started, outcome(&r));
    r
}
