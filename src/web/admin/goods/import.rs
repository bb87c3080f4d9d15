//! Stock sheets in the back office: upload a CSV of receipts or counts, see every line's effect
//! and every bad line numbered, then apply it all-or-nothing or the valid lines only.

use crate::web::kit::paths;
use askama::Template;
use axum::extract::multipart::MultipartRejection;
use axum::extract::{Multipart, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::stock::import::{self, ApplyMode, Preview, Sheet, SheetKind};
use crate::domain::{DomainError, FieldError, MerchantId};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::actor::People;
use crate::web::view::Errs;
use crate::web::AppState;

/// Only a merchant's admins change stock.
fn admin(user: &CurrentUser) -> Result<MerchantId, WebError> {
    match user.account.merchant_id {
        Some(m) if user.account.is_admin_of(m) => Ok(m),
        _ => Err(DomainError::Forbidden.into()),
    }
}

pub struct SheetRow {
    pub sheet: Sheet,
    pub when: String,
    pub by: String,
}

#[derive(Template)]
#[template(path = "admin/stock/import.html")]
struct ImportPage {
    layout: Layout,
    kind: String,
    errors: Errs,
    recent: Vec<SheetRow>,
    max_mb: usize,
    max_lines: usize,
}

#[derive(Template)]
#[template(path = "admin/stock/sheet.html")]
struct SheetPage {
    layout: Layout,
    sheet: Sheet,
    preview: Preview,
    when: String,
    by: String,
    errors: Errs,
}

#[derive(Deserialize, Default)]
pub struct KindQuery {
    #[serde(default)]
    kind: String,
}

async fn import_page(
    state: &AppState,
    cx: &PageCtx,
    merchant_id: MerchantId,
    kind: &str,
    errors: Vec<FieldError>,
) -> Result<ImportPage, WebError> {
    let tz = crate::domain::tenancy::tenants::merchant(&state.db, merchant_id)
        .await?
        .tz();
    let people = People::of_merchant(&state.db, merchant_id).await?;
    let recent = import::recent(&state.db, merchant_id, 20)
        .await?
        .into_iter()
        .map(|sheet| SheetRow {
            when: crate::web::view::time::when(sheet.created_at, tz),
            by: people.say(&sheet.created_by),
            sheet,
        })
        .collect();
    Ok(ImportPage {
        layout: cx.layout().await,
        kind: SheetKind::parse(kind)
            .unwrap_or(SheetKind::Counts)
            .as_str()
            .into(),
        errors: Errs(errors),
        recent,
        max_mb: import::MAX_BYTES / 1024 / 1024,
        max_lines: import::MAX_LINES,
    })
}

pub async fn form(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<KindQuery>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let page = import_page(&state, &cx, merchant_id, &q.kind, Vec::new()).await?;
    cx.whole(&page)
}

/// A sheet to fill in, for the kind asked.
pub async fn template(
    State(state): State<AppState>,
    user: CurrentUser,
    Query(q): Query<KindQuery>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&user)?;
    let kind = SheetKind::parse(q.kind.trim()).unwrap_or(SheetKind::Counts);
    let body = import::template(&state.db, merchant_id, kind).await?;
    let disposition = format!("attachment; filename=\"stock-{}.csv\"", kind.as_str());
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

pub async fn upload(
    State(state): State<AppState>,
    cx: PageCtx,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let (mut kind, mut file, mut file_name) = (String::new(), None, String::new());
    let mut refused = None;
    match multipart {
        Err(_) => refused = Some(messages::upload_not_multipart()),
        Ok(mut m) => loop {
            match m.next_field().await {
                Ok(Some(field)) => match field.name() {
                    Some("kind") => match crate::web::kit::uploads::small_text(field).await {
                        Ok(v) => kind = v,
                        Err(f) => {
                            refused = Some(f.message);
                            break;
                        }
                    },
                    Some("file") => {
                        file_name = field.file_name().unwrap_or("").to_string();
                        match field.bytes().await {
                            Ok(b) => file = Some(b),
                            Err(e) => {
                                refused = Some(e.body_text());
                                break;
                            }
                        }
                    }
                    _ => {}
                },
                Ok(None) => break,
                Err(e) => {
                    refused = Some(if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                        messages::sheet_too_large(import::MAX_BYTES / 1024 / 1024)
                    } else {
                        e.body_text()
                    });
                    break;
                }
            }
        },
    }
    let mut errors = Vec::new();
    let sheet_kind = SheetKind::parse(kind.trim());
    if sheet_kind.is_none() {
        errors.push(FieldError::new(
            "kind",
            "invalid_choice",
            messages::required(&messages::label("kind")),
        ));
    }
    match (&refused, &file) {
        (Some(m), _) => errors.push(FieldError::new("file", "upload_refused", m.clone())),
        (None, None) => errors.push(FieldError::new(
            "file",
            "required",
            messages::sheet_choose_file(),
        )),
        // A file input left empty still sends a part, with no name and no bytes.
        (None, Some(b)) if b.is_empty() && file_name.is_empty() => errors.push(FieldError::new(
            "file",
            "required",
            messages::sheet_choose_file(),
        )),
        (None, Some(b)) if b.is_empty() => {
            errors.push(FieldError::new("file", "required", messages::sheet_empty()))
        }
        _ => {}
    }
    if let (true, Some(kind), Some(bytes)) = (errors.is_empty(), sheet_kind, &file) {
        let actor = cx.actor(&paths::stock_import());
        match import::upload(&state.db, &actor, merchant_id, kind, &file_name, bytes).await {
            Ok(id) => return Ok(Redirect::to(&paths::stock_import_sheet(id)).into_response()),
            Err(DomainError::Invalid(mut e)) => errors.append(&mut e),
            Err(e) => return Err(e.into()),
        }
    }
    let page = import_page(&state, &cx, merchant_id, kind.trim(), errors).await?;
    cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
}

async fn sheet_page(state: &AppState, cx: &PageCtx, sheet: Sheet) -> Result<SheetPage, WebError> {
    let tz = crate::domain::tenancy::tenants::merchant(&state.db, sheet.merchant_id)
        .await?
        .tz();
    let people = People::of_merchant(&state.db, sheet.merchant_id).await?;
    let preview = import::preview(&state.db, &sheet).await?;
    Ok(SheetPage {
        layout: cx.layout().await,
        when: crate::web::view::time::when(sheet.applied_at.unwrap_or(sheet.created_at), tz),
        by: people.say(&sheet.created_by),
        sheet,
        preview,
        errors: Errs::default(),
    })
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let sheet = import::get(&state.db, merchant_id, id).await?;
    let page = sheet_page(&state, &cx, sheet).await?;
    cx.whole(&page)
}

#[derive(Deserialize, Default)]
pub struct ApplyForm {
    #[serde(default)]
    mode: String,
}

pub async fn apply(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<ApplyForm>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let sheet = import::get(&state.db, merchant_id, id).await?;
    let Some(mode) = ApplyMode::parse(form.mode.trim()) else {
        let mut page = sheet_page(&state, &cx, sheet).await?;
        page.errors = Errs(vec![FieldError::new(
            "mode",
            "invalid_choice",
            messages::required(&messages::label("mode")),
        )]);
        return cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page);
    };
    let actor = cx.actor(&paths::stock_import_sheet(id));
    match import::apply(&state.db, &actor, &sheet, mode).await {
        Ok(applied) => {
            cx.flash(FlashKind::Success, messages::sheet_applied(applied.lines))
                .await;
            if !applied.refused.is_empty() {
                let lines: Vec<String> =
                    applied.refused.iter().map(|b| b.line.to_string()).collect();
                cx.flash(
                    FlashKind::Warning,
                    messages::sheet_lines_refused_late(&lines.join(", ")),
                )
                .await;
            }
            Ok(Redirect::to(&paths::stock_import_sheet(id)).into_response())
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            let sheet = import::get(&state.db, merchant_id, id).await?;
            let mut page = sheet_page(&state, &cx, sheet).await?;
            page.errors = Errs(vec![FieldError::new("form", code, message)]);
            cx.whole_as(StatusCode::CONFLICT, &page)
        }
        Err(DomainError::Invalid(errors)) => {
            let sheet = import::get(&state.db, merchant_id, id).await?;
            let mut page = sheet_page(&state, &cx, sheet).await?;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
