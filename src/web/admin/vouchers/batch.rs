//! One code batch's page: a live progress bar while it imports (htmx polls the page's body block
//! until the batch is no longer CREATING), then its summary, the numbered import errors (paged,
//! and all of them as CSV), lock / unlock / invalidate of the batch or of single codes, the
//! one-time download of a generated batch, and reveal of one code's plaintext (a POST whose
//! answer is never cached). The codes list never shows plaintext.

use crate::domain::codes::import::ImportMode;
use crate::domain::codes::PENDING;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::rejection::FormRejection;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::codes::{
    self, Batch, BatchSource, BatchStatus, CodeFilter, CodeRow, CodeStatus, ImportError, OpsMove,
};
use crate::domain::{tenancy::tenants, DomainError, Scope};
use crate::messages;
use crate::web::admin::vouchers::{admin, ordered_counts, sku_value};
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::page::{PageCtx, Part};

use crate::web::kit::layout::Layout;
use crate::web::view::pager::Pager;
use crate::web::AppState;

const CODES_PER_PAGE: i64 = 50;
/// Lines of codes stored without their spaces named on the page (the API gives 100).
const NORMALISED_SHOWN: i64 = 50;

/// Which codes (page, status, search) and which page of errors the batch page shows; forms carry
/// them back.
#[derive(Deserialize, Default, Clone)]
pub struct PageQuery {
    #[serde(default)]
    page: String,
    #[serde(default)]
    errors_page: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    q: String,
}

impl PageQuery {
    /// The pairs worth keeping: pages past the first, a known status. Never the search: a code
    /// travels in request bodies only, never in an address.
    fn pairs(&self) -> Vec<(String, String)> {
        let num = |s: &str| {
            s.trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n > 1)
                .map(|n| n.to_string())
        };
        let status = self.status().map(|s| s.as_str().to_string());
        [
            ("page", num(&self.page)),
            ("errors_page", num(&self.errors_page)),
            ("status", status),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
        .collect()
    }

    fn query(&self) -> String {
        let pairs = self.pairs();
        let refs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        crate::web::view::query(&refs)
    }

    /// The status filter, when it names a status (anything else lists every code).
    fn status(&self) -> Option<CodeStatus> {
        CodeStatus::parse(self.status.trim())
    }

    /// The query without the errors' page, for the errors' own page links.
    fn without_errors_page(&self) -> String {
        PageQuery {
            errors_page: String::new(),
            ..self.clone()
        }
        .query()
    }

    /// The list's query without its page: what the pager keeps on every page link.
    fn without_page(&self) -> String {
        PageQuery {
            page: String::new(),
            ..self.clone()
        }
        .query()
    }
}

/// The page numbers an action form carries back. They only choose what is shown afterwards, so a
/// body without them (or none at all) shows the first pages.
fn page_query(form: Result<Form<PageQuery>, FormRejection>) -> PageQuery {
    form.map(|f| f.0).unwrap_or_default()
}

fn batch_url(id: i64, q: &PageQuery) -> String {
    let qs = q.query();
    if qs.is_empty() {
        paths::code_batch(id)
    } else {
        format!("{}?{qs}", paths::code_batch(id))
    }
}

pub struct BatchView {
    pub id: i64,
    pub name: String,
    pub sku_code: String,
    pub generated: bool,
    pub mode: String,
    pub status: BatchStatus,
    pub progress: i64,
    pub read: i64,
    pub imported: i64,
    pub rejected: i64,
    pub failure: Option<String>,
    pub created_by: String,
    pub created: String,
    pub finished: String,
    pub expires: String,
    /// When a generated batch was downloaded; empty while it has not been.
    pub downloaded: String,
    pub blank_lines: i64,
    pub normalised: i64,
    pub allowed: String,
}

fn batch_view(b: &Batch, tz: chrono_tz::Tz) -> BatchView {
    let local = |t: Option<i64>| {
        t.map(|t| crate::web::view::time::when(t, tz))
            .unwrap_or_default()
    };
    BatchView {
        id: b.id,
        name: b.name.clone(),
        sku_code: b.sku_code.clone(),
        generated: b.source == BatchSource::Generated,
        mode: b.mode.clone(),
        status: b.status,
        progress: b.progress(),
        read: b.lines_read,
        imported: b.imported,
        rejected: b.rejected,
        failure: b.failure_said(),
        created_by: crate::web::view::actor::said(&b.created_by),
        created: local(Some(b.created_at)),
        finished: local(b.finished_at),
        expires: local(b.expires_at),
        downloaded: local(b.downloaded_at),
        blank_lines: b.blank_lines,
        normalised: b.normalised,
        allowed: b.allowed.clone(),
    }
}

pub struct CodeView {
    pub id: i64,
    pub line: i64,
    pub status: CodeStatus,
    pub order_id: String,
    pub expires: String,
    /// A refused move on this code, shown in its row.
    pub error: Option<String>,
}

fn code_view(c: &CodeRow, tz: chrono_tz::Tz) -> CodeView {
    CodeView {
        id: c.id,
        line: c.line,
        status: c.status,
        order_id: c.order_id.clone().unwrap_or_default(),
        expires: c
            .expires_at
            .map(|t| crate::web::view::time::when(t, tz))
            .unwrap_or_default(),
        error: None,
    }
}

#[derive(Template)]
#[template(path = "admin/codes/batch.html", blocks = ["body"])]
struct BatchPage {
    layout: Layout,
    b: BatchView,
    sku_q: String,
    tz_name: String,
    can_edit: bool,
    can_download: bool,
    counts: Vec<(String, i64)>,
    errors: Vec<ImportError>,
    errors_page: i64,
    errors_pages: i64,
    codes: Vec<CodeView>,
    pager: Pager,
    /// The codes matching the filter, and every code of the batch.
    total: i64,
    all: i64,
    /// The filter shown in the form: the status chosen (empty: all) and the search as typed.
    status: String,
    search: String,
    /// The query pairs every action form carries back, so the page stays where it was.
    keep: Vec<(String, String)>,
    errors_link: String,
    /// The first lines whose codes were stored without their spaces.
    normalised_lines: Vec<i64>,
    notice: Option<String>,
    problem: Option<String>,
}

/// A batch the user may see: their merchant's, or any for operators.
async fn visible_batch(state: &AppState, user: &CurrentUser, id: i64) -> Result<Batch, WebError> {
    Ok(codes::batch(&state.db, user.actor("").scope(), id).await?)
}

async fn batch_page(
    state: &AppState,
    cx: &PageCtx,
    b: &Batch,
    q: &PageQuery,
) -> Result<BatchPage, WebError> {
    let merchant = tenants::merchant(&state.db, b.merchant_id).await?;
    let tz = merchant.tz();
    let is_admin = cx.user.account.is_admin_of(b.merchant_id);
    let mut page = BatchPage {
        layout: cx.layout().await,
        b: batch_view(b, tz),
        sku_q: format!("sku={}", sku_value(&cx.user, &merchant.slug, &b.sku_code)),
        tz_name: merchant.timezone.clone(),
        can_edit: is_admin,
        can_download: is_admin
            && b.source == BatchSource::Generated
            && b.status.imported()
            && b.downloaded_at.is_none()
            && b.created_by_user == Some(cx.user.account.id),
        counts: Vec::new(),
        errors: Vec::new(),
        errors_page: 1,
        errors_pages: 1,
        codes: Vec::new(),
        pager: Pager {
            path: paths::code_batch(b.id),
            query: q.without_page(),
            page: 1,
            pages: 1,
            target: "batch-body",
        },
        total: 0,
        all: 0,
        status: q
            .status()
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
        search: q.q.clone(),
        keep: q.pairs(),
        errors_link: format!("{}?{}", paths::code_batch(b.id), q.without_errors_page()),
        normalised_lines: Vec::new(),
        notice: None,
        problem: None,
    };
    // While the import runs the page shows the progress bar alone (and is polled every second).
    if b.status == BatchStatus::Creating {
        return Ok(page);
    }
    let (errors, errors_page, errors_pages) = codes::errors(
        &state.db,
        b.id,
        q.errors_page.trim().parse().unwrap_or(1),
        codes::ERROR_PAGE_SIZE,
    )
    .await?;
    let filter = CodeFilter {
        status: q.status(),
        search: q.q.clone(),
    };
    let found = codes::codes_of_batch(
        &state.db,
        &state.codes,
        b.merchant_id,
        b.id,
        &filter,
        q.page.trim().parse().unwrap_or(1),
        CODES_PER_PAGE,
    )
    .await?;
    let counts = codes::batch_counts(&state.db, b.merchant_id, b.id).await?;
    page.all = counts.values().sum();
    page.normalised_lines = codes::normalised_lines(&state.db, b.id, NORMALISED_SHOWN).await?;
    page.total = found.total;
    page.counts = ordered_counts(&counts);
    page.errors = errors;
    page.errors_page = errors_page;
    page.errors_pages = errors_pages;
    page.codes = found.rows.iter().map(|c| code_view(c, tz)).collect();
    page.pager.page = found.page;
    page.pager.pages = found.pages;
    Ok(page)
}

impl BatchPage {
    /// The body block for htmx (the progress poll and the action forms), the whole page otherwise.
    fn answer(&self, cx: &PageCtx, status: StatusCode) -> Result<Response, WebError> {
        cx.answer(status, self, Part::AnyHtmx, |p| p.as_body().render())
    }
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(mut q): Query<PageQuery>,
) -> Result<Response, WebError> {
    let b = visible_batch(&state, &cx.user, id).await?;
    // A search comes by POST only (a code is never put in an address); one in a link is ignored.
    q.q.clear();
    let page = batch_page(&state, &cx, &b, &q).await?;
    page.answer(&cx, StatusCode::OK)
}

/// A search of a batch's codes: by POST, so the code typed stays out of addresses, history and
/// logs, and the answer is never cached. An empty search is the plain list (a link).
pub async fn search(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(q): Form<PageQuery>,
) -> Result<Response, WebError> {
    let b = visible_batch(&state, &cx.user, id).await?;
    if q.q.trim().is_empty() {
        return Ok(Redirect::to(&batch_url(b.id, &q)).into_response());
    }
    let page = batch_page(&state, &cx, &b, &q).await?;
    let mut answer = page.answer(&cx, StatusCode::OK)?;
    answer.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    Ok(answer)
}

pub async fn errors_csv(
    State(state): State<AppState>,
    user: CurrentUser,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let b = visible_batch(&state, &user, id).await?;
    let body = codes::all_errors_csv(&state.db, b.id).await?;
    let disposition = format!("attachment; filename=\"batch-{}-errors.csv\"", b.id);
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

/// After a move: the body with a notice for htmx, a flash and the page otherwise.
async fn moved(
    state: &AppState,
    cx: &PageCtx,
    b: &Batch,
    q: &PageQuery,
    notice: String,
) -> Result<Response, WebError> {
    if cx.htmx {
        let b = codes::batch(&state.db, Scope::Merchant(b.merchant_id), b.id).await?;
        let mut page = batch_page(state, cx, &b, q).await?;
        page.notice = Some(notice);
        page.answer(cx, StatusCode::OK)
    } else {
        cx.flash(FlashKind::Success, notice).await;
        Ok(Redirect::to(&batch_url(b.id, q)).into_response())
    }
}

// ---------- moves of a whole batch ----------

async fn move_batch(
    state: AppState,
    cx: PageCtx,
    id: i64,
    form: Result<Form<PageQuery>, FormRejection>,
    mv: OpsMove,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let q = page_query(form);
    let b = codes::batch(&state.db, Scope::Merchant(merchant_id), id).await?;
    let actor = cx.actor(&paths::code_batch(b.id));
    let n = codes::move_batch(&state.db, &actor, merchant_id, b.id, mv).await?;
    let notice = messages::batch_moved(mv.label(), n);
    moved(&state, &cx, &b, &q, notice).await
}

pub async fn lock_batch(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    form: Result<Form<PageQuery>, FormRejection>,
) -> Result<Response, WebError> {
    move_batch(state, cx, id, form, OpsMove::Lock).await
}

pub async fn unlock_batch(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    form: Result<Form<PageQuery>, FormRejection>,
) -> Result<Response, WebError> {
    move_batch(state, cx, id, form, OpsMove::Unlock).await
}

pub async fn invalidate_batch(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    form: Result<Form<PageQuery>, FormRejection>,
) -> Result<Response, WebError> {
    move_batch(state, cx, id, form, OpsMove::Invalidate).await
}

#[derive(Template)]
#[template(path = "admin/codes/confirm.html")]
struct ConfirmPage {
    layout: Layout,
    batch_id: i64,
    batch_name: String,
    /// Set when one code is to be invalidated; the whole batch otherwise.
    code: Option<CodeView>,
    /// AVAILABLE codes of the batch: the ones an invalidation moves.
    available: i64,
    q: PageQuery,
    back: String,
}

/// Invalidation is final: without JavaScript a page asks first (htmx uses hx-confirm).
pub async fn confirm_invalidate_batch(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(q): Query<PageQuery>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let b = codes::batch(&state.db, Scope::Merchant(merchant_id), id).await?;
    let counts = codes::batch_counts(&state.db, merchant_id, b.id).await?;
    let page = ConfirmPage {
        layout: cx.layout().await,
        batch_id: b.id,
        batch_name: b.name.clone(),
        code: None,
        available: counts.get("AVAILABLE").copied().unwrap_or(0),
        back: batch_url(b.id, &q),
        q,
    };
    cx.whole(&page)
}

// ---------- moves of one code ----------

async fn move_code(
    state: AppState,
    cx: PageCtx,
    id: i64,
    form: Result<Form<PageQuery>, FormRejection>,
    mv: OpsMove,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let q = page_query(form);
    let code = codes::code(&state.db, merchant_id, id).await?;
    let b = codes::batch(&state.db, Scope::Merchant(merchant_id), code.batch_id).await?;
    let actor = cx.actor(&paths::code_batch(b.id));
    match codes::move_code(&state.db, &actor, merchant_id, code.id, mv).await {
        Ok(_) => {
            let notice = messages::code_moved(mv.label(), code.id);
            moved(&state, &cx, &b, &q, notice).await
        }
        // Refused by the state machine: nothing changed; say why beside the code.
        Err(DomainError::Conflict { message, .. }) => {
            let mut page = batch_page(&state, &cx, &b, &q).await?;
            match page.codes.iter_mut().find(|c| c.id == code.id) {
                Some(row) => row.error = Some(message),
                None => page.problem = Some(message),
            }
            page.answer(&cx, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn lock_code(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    form: Result<Form<PageQuery>, FormRejection>,
) -> Result<Response, WebError> {
    move_code(state, cx, id, form, OpsMove::Lock).await
}

pub async fn unlock_code(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    form: Result<Form<PageQuery>, FormRejection>,
) -> Result<Response, WebError> {
    move_code(state, cx, id, form, OpsMove::Unlock).await
}

pub async fn invalidate_code(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    form: Result<Form<PageQuery>, FormRejection>,
) -> Result<Response, WebError> {
    move_code(state, cx, id, form, OpsMove::Invalidate).await
}

pub async fn confirm_invalidate_code(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(q): Query<PageQuery>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let code = codes::code(&state.db, merchant_id, id).await?;
    let b = codes::batch(&state.db, Scope::Merchant(merchant_id), code.batch_id).await?;
    let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    let page = ConfirmPage {
        layout: cx.layout().await,
        batch_id: b.id,
        batch_name: b.name.clone(),
        code: Some(code_view(&code, tz)),
        available: 0,
        back: batch_url(b.id, &q),
        q,
    };
    cx.whole(&page)
}

// ---------- reveal ----------

#[derive(Template)]
#[template(path = "admin/codes/reveal.html", blocks = ["revealed"])]
struct RevealPage {
    layout: Layout,
    code: CodeView,
    batch_id: i64,
    batch_name: String,
    sku_code: String,
    plain: String,
}

/// Shows one code's plaintext, once, to a merchant admin; the reveal is written to the audit log.
/// A POST (never a GET: the answer must not be prefetched, bookmarked or cached).
pub async fn reveal(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    let code = codes::code(&state.db, merchant_id, id).await?;
    let b = codes::batch(&state.db, Scope::Merchant(merchant_id), code.batch_id).await?;
    let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    let actor = cx.actor(&paths::code_batch(b.id));
    let plain = codes::reveal(&state.db, &state.codes, &actor, merchant_id, code.id).await?;
    let page = RevealPage {
        layout: cx.layout().await,
        code: code_view(&code, tz),
        batch_id: b.id,
        batch_name: b.name,
        sku_code: b.sku_code,
        plain,
    };
    let mut r = cx.answer(StatusCode::OK, &page, Part::AnyHtmx, |p| {
        p.as_revealed().render()
    })?;
    // The plaintext must not linger in caches or history.
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    Ok(r)
}

// ---------- the one-time download of a generated batch ----------

#[derive(Template)]
#[template(path = "admin/codes/download.html")]
struct DownloadPage {
    layout: Layout,
    b: BatchView,
    problem: Option<String>,
}

/// The batch a download is about: generated, and by this admin (others are refused).
async fn own_generated(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
) -> Result<(Batch, chrono_tz::Tz), WebError> {
    let merchant_id = admin(user)?;
    let b = codes::batch(&state.db, Scope::Merchant(merchant_id), id).await?;
    if b.source != BatchSource::Generated || b.created_by_user != Some(user.account.id) {
        return Err(DomainError::Forbidden.into());
    }
    let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    Ok((b, tz))
}

/// The download link leads here: the file itself comes from the POST, so a prefetch or a link
/// from another site cannot use up the one download.
pub async fn download_form(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let (b, tz) = own_generated(&state, &cx.user, id).await?;
    let page = DownloadPage {
        layout: cx.layout().await,
        b: batch_view(&b, tz),
        problem: None,
    };
    cx.whole(&page)
}

pub async fn download(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let (b, tz) = own_generated(&state, &cx.user, id).await?;
    let actor = cx.actor(&paths::code_batch(b.id));
    let result = codes::download_generated(
        &state.db,
        &state.codes,
        &actor,
        codes::Generator::User(cx.user.account.id),
        b.merchant_id,
        b.id,
    )
    .await;
    match result {
        Ok((b, plain)) => {
            let mut body = plain.join("\n");
            body.push('\n');
            let disposition = format!("attachment; filename=\"batch-{}-codes.txt\"", b.id);
            Ok((
                [
                    (
                        header::CONTENT_TYPE,
                        "text/plain; charset=utf-8".to_string(),
                    ),
                    (header::CONTENT_DISPOSITION, disposition),
                    (header::CACHE_CONTROL, "no-store".to_string()),
                ],
                body,
            )
                .into_response())
        }
        Err(DomainError::Conflict { message, .. }) => {
            let b = codes::batch(&state.db, Scope::Merchant(b.merchant_id), b.id).await?;
            let page = DownloadPage {
                layout: cx.layout().await,
                b: batch_view(&b, tz),
                problem: Some(message),
            };
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}
