//! Code-file uploads shared by the API and the back office: the multipart body is streamed to a
//! file under the upload directory (never held in memory), then the import starts in the
//! background and the request returns at once.

use crate::domain::MerchantId;
use axum::extract::multipart::{Field, MultipartError};
use axum::extract::Multipart;
use axum::http::StatusCode;
use futures_util::TryStreamExt;

use crate::domain::codes::import::{self, NewBatch, Source, UploadError};
use crate::domain::codes::{self, Batch};
use crate::domain::kernel::validate;
use crate::domain::{Actor, DomainError, FieldError};
use crate::messages;
use crate::web::AppState;

/// The fields of an upload form, with the file already on disk.
#[derive(Debug, Default)]
pub struct UploadForm {
    pub sku: String,
    pub mode: String,
    pub name: String,
    pub expires_at: String,
    /// The characters the batch allows (`import::Allowed`); empty: any.
    pub allowed: String,
    pub file: Option<SavedFile>,
}

#[derive(Debug)]
pub struct SavedFile {
    /// Removes the file when the form is dropped, unless the import took it over.
    pub spool: import::Spool,
    pub size: u64,
    pub filename: String,
}

/// Why an upload could not be received: a status and a sentence.
#[derive(Debug)]
pub struct UploadFailure {
    pub status: StatusCode,
    pub message: String,
}

struct StreamError(MultipartError);

impl From<StreamError> for UploadError {
    fn from(e: StreamError) -> Self {
        if e.0.status() == StatusCode::PAYLOAD_TOO_LARGE {
            UploadError::TooLarge
        } else {
            UploadError::Stream(e.0.body_text())
        }
    }
}

fn failure(e: UploadError) -> UploadFailure {
    let status = match e {
        UploadError::TooLarge | UploadError::TooManyLines => StatusCode::PAYLOAD_TOO_LARGE,
        UploadError::Stream(_) => StatusCode::BAD_REQUEST,
        UploadError::Io(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    UploadFailure {
        status,
        message: e.message(),
    }
}

/// The most bytes a multipart text part (a SKU code, a name, a date) may hold. Read while it
/// streams in and refused past it: read whole, six 60 MB `name` parts took the server from 140 to
/// 632 MB. Files have their own limits and go to disk.
pub const MAX_TEXT_PART: usize = 4 * 1024;

async fn text(field: Field<'_>) -> Result<String, UploadFailure> {
    small_text(field).await
}

/// A multipart text part, read up to `MAX_TEXT_PART` bytes while it streams (413 past it), as
/// UTF-8 without control characters (400 otherwise). For the API and the back office alike.
pub async fn small_text(mut field: Field<'_>) -> Result<String, UploadFailure> {
    let mut buf = Vec::new();
    while let Some(chunk) = field
        .chunk()
        .await
        .map_err(|e| failure(StreamError(e).into()))?
    {
        if buf.len() + chunk.len() > MAX_TEXT_PART {
            return Err(UploadFailure {
                status: StatusCode::PAYLOAD_TOO_LARGE,
                message: messages::text_part_too_long(MAX_TEXT_PART / 1024),
            });
        }
        buf.extend_from_slice(&chunk);
    }
    let v = String::from_utf8(buf).map_err(|_| UploadFailure {
        status: StatusCode::BAD_REQUEST,
        message: messages::invalid_text(),
    })?;
    clean_text(v)
}

/// Multipart text is refused here, as the page's forms are in `input::guard_form`.
fn clean_text(v: String) -> Result<String, UploadFailure> {
    if crate::web::kit::input::clean(&v) {
        Ok(v)
    } else {
        Err(UploadFailure {
            status: StatusCode::BAD_REQUEST,
            message: messages::invalid_text(),
        })
    }
}

/// Reads the multipart body. The file part is streamed to disk with the size and line limits.
pub async fn receive(
    state: &AppState,
    mut multipart: Multipart,
) -> Result<UploadForm, UploadFailure> {
    let mut form = UploadForm::default();
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                return Err(failure(StreamError(e).into()));
            }
        };
        let name = field.name().unwrap_or("").to_string();
        let result = match name.as_str() {
            "sku" => text(field).await.map(|v| form.sku = v),
            "mode" => text(field).await.map(|v| form.mode = v),
            "name" => text(field).await.map(|v| form.name = v),
            "expires_at" => text(field).await.map(|v| form.expires_at = v),
            "allowed" => text(field).await.map(|v| form.allowed = v),
            "file" if form.file.is_none() => {
                let filename =
                    match clean_text(field.file_name().unwrap_or("codes.txt").to_string()) {
                        Ok(f) => f,
                        Err(e) => {
                            return Err(e);
                        }
                    };
                let path = state.config.serve.upload_dir.join(import::spool_name());
                let stream = Box::pin(field.map_err(StreamError));
                match import::save_upload(stream, &path).await {
                    Ok((spool, size)) => {
                        form.file = Some(SavedFile {
                            spool,
                            size,
                            filename,
                        });
                        Ok(())
                    }
                    Err(e) => Err(failure(e)),
                }
            }
            _ => Ok(()),
        };
        result?;
    }
    Ok(form)
}

/// Checks the form and starts the import in the background. On refusal the file is removed.
pub async fn start(
    state: &AppState,
    actor: &Actor,
    merchant_id: MerchantId,
    user_id: Option<i64>,
    form: UploadForm,
) -> Result<Batch, DomainError> {
    let result = prepare(state, actor, merchant_id, user_id, &form).await;
    match result {
        Ok((batch, source)) => {
            // The import takes the file over and removes it when it ends.
            if let Some(f) = form.file {
                let _ = f.spool.keep();
            }
            let (db, keys, b) = (state.db.clone(), state.codes.clone(), batch.clone());
            tokio::spawn(import::run(db, keys, b, source));
            Ok(batch)
        }
        Err(e) => Err(e),
    }
}

async fn prepare(
    state: &AppState,
    actor: &Actor,
    merchant_id: MerchantId,
    user_id: Option<i64>,
    form: &UploadForm,
) -> Result<(Batch, Source), DomainError> {
    let mut errs = crate::domain::kernel::validate::Errors::default();
    let sku = match codes::voucher_sku(&state.db, merchant_id, &form.sku, "sku").await {
        Ok(s) => Some(s),
        Err(DomainError::Invalid(mut v)) => {
            errs.append(&mut v);
            None
        }
        Err(e) => return Err(e),
    };
    let mode = errs.take(import::mode(&form.mode));
    let allowed = errs.take(import::Allowed::field(&form.allowed));
    let expires_at = errs
        .take(validate::rfc3339_opt("expires_at", Some(&form.expires_at)))
        .flatten();
    if form.file.is_none() {
        errs.push(FieldError::new(
            "file",
            "required",
            messages::upload_missing_file(),
        ));
    }
    // Every field that failed left its error and a None: go on only when all parsed.
    let (Some(sku), Some(mode), Some(allowed), Some(file), true) =
        (sku, mode, allowed, form.file.as_ref(), errs.is_empty())
    else {
        return Err(errs.refusal());
    };
    let name = if form.name.trim().is_empty() {
        file.filename.clone()
    } else {
        form.name.clone()
    };
    let nb = NewBatch {
        name,
        mode,
        expires_at,
        generated: false,
        size: file.size as i64,
        user_id,
        allowed,
    };
    let batch = import::create_batch(&state.db, &state.codes, actor, &sku, nb).await?;
    let is_csv = file.filename.to_ascii_lowercase().ends_with(".csv");
    let source = if is_csv {
        Source::Csv(file.spool.path().to_path_buf())
    } else {
        Source::Text(file.spool.path().to_path_buf())
    };
    Ok((batch, source))
}

/// A batch of random codes to generate, as a form or a body asks for it.
pub struct Generate<'a> {
    pub sku_code: &'a str,
    pub name: &'a str,
    /// How many codes, of `length` characters from `alphabet`.
    pub count: i64,
    pub length: i64,
    pub alphabet: &'a str,
}

/// Starts a generated batch for `user_id` (who may download it once).
pub async fn generate(
    state: &AppState,
    actor: &Actor,
    merchant_id: MerchantId,
    user_id: Option<i64>,
    g: Generate<'_>,
) -> Result<Batch, DomainError> {
    let sku = codes::voucher_sku(&state.db, merchant_id, g.sku_code, "sku").await?;
    let (count, length, chars) = import::generation(g.count, g.length, g.alphabet)?;
    let nb = NewBatch {
        name: g.name.to_string(),
        mode: "valid".into(),
        expires_at: None,
        generated: true,
        size: count as i64,
        user_id,
        allowed: import::Allowed::Any,
    };
    let batch = import::create_batch(&state.db, &state.codes, actor, &sku, nb).await?;
    let (db, keys, b) = (state.db.clone(), state.codes.clone(), batch.clone());
    tokio::spawn(import::run(
        db,
        keys,
        b,
        Source::Generated {
            count,
            length,
            alphabet: chars,
        },
    ));
    Ok(batch)
}
