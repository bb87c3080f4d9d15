//! Codes (vouchers and card keys) in the back office: choose a voucher SKU and see its counts and
//! batches, upload a file or generate a batch, and look up a code a customer reads out. One
//! batch's page, the ops moves, reveal and download live in `batch`.
//!
//! Who may do what: merchant admins everything of their merchant; store staff and operators read
//! (their POSTs answer 403; the look-up is a read sent as a POST so the code stays out of the
//! address). Every lookup is scoped by merchant, so another merchant's batches and codes are
//! simply "not found". A code's plaintext never goes into a URL, a log line, an error or a flash.

pub mod batch;
pub mod one;

use crate::domain::codes::import::{Alphabet, ImportMode};
use crate::domain::MerchantId;
use crate::web::kit::paths;
use askama::Template;
use axum::extract::multipart::MultipartRejection;
use axum::extract::rejection::FormRejection;
use axum::extract::{Multipart, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::codes::import::{GENERATE_MAX, MAX_BYTES, MAX_LINES};
use crate::domain::codes::{self, BatchSource, VoucherSku};
use crate::domain::kernel::scope::Role;
use crate::domain::kernel::validate::{self};
use crate::domain::{catalog, tenancy::tenants, DomainError, FieldError, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::pager::Pager;
use crate::web::view::{query, verdicts, Errs, Opt};
use crate::web::{kit::uploads, AppState};
// Used by the templates: `fix.link()`.
use crate::web::view::links::FixLink;

/// Batches listed a page on a SKU's codes page, newest first.
const BATCHES_SHOWN: i64 = 50;

/// The merchant whose codes the user may change: merchant admins only.
pub(super) fn admin(user: &CurrentUser) -> Result<MerchantId, WebError> {
    Ok(user.account.require_admin()?)
}

/// How `?sku=` names a SKU: its code for a merchant's users, `merchant/code` for operators.
pub(super) fn sku_value(user: &CurrentUser, merchant_slug: &str, code: &str) -> String {
    if user.account.merchant_id.is_some() {
        code.to_string()
    } else {
        format!("{merchant_slug}/{code}")
    }
}

/// Counts by status in display order; PENDING (a batch still importing) only when there are some.
pub(super) fn ordered_counts(
    counts: &std::collections::BTreeMap<String, i64>,
) -> Vec<(String, i64)> {
    codes::CodeStatus::NAMES
        .iter()
        .chain(&[codes::PENDING])
        .map(|s| (s.to_string(), counts.get(*s).copied().unwrap_or(0)))
        .filter(|(s, n)| s != "PENDING" || *n > 0)
        .collect()
}

// ---------- a SKU's codes page ----------

#[derive(Deserialize, Default)]
pub struct IndexQuery {
    #[serde(default)]
    sku: String,
    /// The product page links by id: it does not know an operator's merchant slug.
    #[serde(default)]
    sku_id: String,
    /// The page of the SKU's batches.
    #[serde(default)]
    page: String,
}

/// A choice in the SKU select; the template composes the label.
pub struct SkuOpt {
    pub value: String,
    /// The merchant's name, for operators only.
    pub merchant: String,
    pub code: String,
    pub name: String,
    pub selected: bool,
}

pub struct SkuInfo {
    pub value: String,
    pub code: String,
    pub name: String,
    pub product_id: i64,
}

pub struct BatchRow {
    pub id: i64,
    pub name: String,
    pub generated: bool,
    pub status: String,
    pub read: i64,
    pub imported: i64,
    pub rejected: i64,
    pub created: String,
    pub created_by: String,
}

/// The upload form's text fields, kept to re-render it.
#[derive(Debug, Clone, Default)]
pub struct UploadFields {
    mode: String,
    name: String,
    expires_at: String,
    allowed: String,
}

/// The allowed-character rules offered at upload, in the order shown.
pub const ALLOWED_RULES: [&str; 5] = ["any", "alnum", "alnum_dash", "upper_alnum", "digits"];

#[derive(Deserialize, Clone)]
pub struct GenerateForm {
    #[serde(default)]
    sku: String,
    #[serde(default)]
    count: String,
    #[serde(default)]
    length: String,
    #[serde(default)]
    alphabet: String,
    #[serde(default)]
    name: String,
}

impl Default for GenerateForm {
    fn default() -> Self {
        GenerateForm {
            sku: String::new(),
            count: "100".into(),
            length: "16".into(),
            alphabet: "unambiguous".into(),
            name: String::new(),
        }
    }
}

#[derive(Template)]
#[template(path = "admin/codes/index.html")]
struct IndexPage {
    layout: Layout,
    /// Whether the chosen SKU can be sold now, and why not.
    verdicts: Vec<crate::domain::sellable::Verdict>,
    options: Vec<SkuOpt>,
    operator: bool,
    is_admin: bool,
    sku: Option<SkuInfo>,
    counts: Vec<(String, i64)>,
    sellable: i64,
    batches: Vec<BatchRow>,
    /// Pages of the SKU's batches (none until a SKU is chosen).
    batch_pager: Option<Pager>,
    upload: UploadFields,
    upload_errors: Errs,
    generate: GenerateForm,
    generate_errors: Errs,
    tz_name: String,
    max_mb: u64,
    max_lines: u64,
    generate_max: i64,
}

/// The voucher SKU a page is about, from `?sku=` (or `?sku_id=`). A merchant's users start on
/// their first voucher SKU; operators choose one first. An unknown value is "not found".
async fn pick(
    state: &AppState,
    user: &CurrentUser,
    raw: &str,
    raw_id: &str,
) -> Result<(Vec<VoucherSku>, Option<VoucherSku>), WebError> {
    let all = codes::voucher_skus(&state.db, user.actor("").scope()).await?;
    let (raw, raw_id) = (raw.trim(), raw_id.trim());
    let chosen = if !raw_id.is_empty() {
        let id: i64 = raw_id.parse().map_err(|_| DomainError::NotFound("page"))?;
        Some(all.iter().find(|s| s.id == id).cloned())
    } else if !raw.is_empty() {
        let own = user.account.merchant_id.is_some();
        Some(
            all.iter()
                .find(|s| {
                    (own && s.code == raw) || format!("{}/{}", s.merchant_slug, s.code) == raw
                })
                .cloned(),
        )
    } else {
        None
    };
    let chosen = match chosen {
        Some(Some(s)) => Some(s),
        Some(None) => return Err(DomainError::NotFound("SKU").into()),
        None if user.account.merchant_id.is_some() => all.first().cloned(),
        None => None,
    };
    Ok((all, chosen))
}

/// Like [`pick`], but a value that names nothing falls back to the default (re-rendered forms).
async fn pick_or_default(
    state: &AppState,
    user: &CurrentUser,
    raw: &str,
) -> Result<(Vec<VoucherSku>, Option<VoucherSku>), WebError> {
    match pick(state, user, raw, "").await {
        Err(WebError::Domain(DomainError::NotFound(_))) => pick(state, user, "", "").await,
        other => other,
    }
}

fn batch_row(b: &codes::Batch, tz: chrono_tz::Tz) -> BatchRow {
    BatchRow {
        id: b.id,
        name: b.name.clone(),
        generated: b.source == BatchSource::Generated,
        status: b.status.to_string(),
        read: b.lines_read,
        imported: b.imported,
        rejected: b.rejected,
        created: crate::web::view::time::when(b.created_at, tz),
        created_by: crate::web::view::actor::said(&b.created_by),
    }
}

async fn index_page(
    state: &AppState,
    cx: &PageCtx,
    all: Vec<VoucherSku>,
    (chosen, batch_page): (Option<VoucherSku>, i64),
) -> Result<IndexPage, WebError> {
    let operator = cx.user.account.role() == Role::Operator;
    let options = all
        .iter()
        .map(|s| SkuOpt {
            value: sku_value(&cx.user, &s.merchant_slug, &s.code),
            merchant: if operator {
                s.merchant_name.clone()
            } else {
                String::new()
            },
            code: s.code.clone(),
            name: s.name.clone(),
            selected: chosen.as_ref().is_some_and(|c| c.id == s.id),
        })
        .collect();
    let mut page = IndexPage {
        layout: cx.layout().await,
        verdicts: Vec::new(),
        options,
        operator,
        is_admin: cx.user.account.role() == Role::MerchantAdmin,
        sku: None,
        counts: Vec::new(),
        sellable: 0,
        batches: Vec::new(),
        batch_pager: None,
        upload: UploadFields::default(),
        upload_errors: Errs::default(),
        generate: GenerateForm::default(),
        generate_errors: Errs::default(),
        tz_name: String::new(),
        max_mb: MAX_BYTES / (1024 * 1024),
        max_lines: MAX_LINES,
        generate_max: GENERATE_MAX,
    };
    if let Some(v) = chosen {
        page.show_sku(state, cx, v, batch_page).await?;
    }
    Ok(page)
}

impl IndexPage {
    /// The chosen SKU's part of the page: its verdict, counts and batches.
    async fn show_sku(
        &mut self,
        state: &AppState,
        cx: &PageCtx,
        v: VoucherSku,
        batch_page: i64,
    ) -> Result<(), WebError> {
        let page = self;
        let sku = catalog::sku_by_id(&state.db, Scope::Merchant(v.merchant_id), v.id).await?;
        let summary = codes::summary(&state.db, &sku).await?;
        page.verdicts = verdicts::of_sku(state, &sku).await?;
        let merchant = tenants::merchant(&state.db, v.merchant_id).await?;
        let tz = merchant.tz();
        let scope = Scope::Merchant(v.merchant_id);
        let pages = Pager::pages(
            codes::count_batches(&state.db, scope, v.id).await?,
            BATCHES_SHOWN,
        );
        let batch_page = batch_page.clamp(1, pages);
        let batches = codes::batches(
            &state.db,
            scope,
            Some(v.id),
            BATCHES_SHOWN,
            (batch_page - 1) * BATCHES_SHOWN,
        )
        .await?;
        page.batch_pager = Some(Pager {
            path: paths::codes(),
            query: query(&[("sku_id", &v.id.to_string())]),
            page: batch_page,
            pages,
            target: "",
        });
        page.batches = batches.iter().map(|b| batch_row(b, tz)).collect();
        page.counts = ordered_counts(&summary.counts);
        page.sellable = summary.sellable;
        page.tz_name = merchant.timezone;
        page.sku = Some(SkuInfo {
            value: sku_value(&cx.user, &v.merchant_slug, &v.code),
            code: sku.code,
            name: sku.name,
            product_id: sku.product_id,
        });
        Ok(())
    }
}

pub async fn index(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<IndexQuery>,
) -> Result<Response, WebError> {
    let (all, chosen) = pick(&state, &cx.user, &q.sku, &q.sku_id).await?;
    let batch_page = q.page.trim().parse().unwrap_or(1);
    let page = index_page(&state, &cx, all, (chosen, batch_page)).await?;
    cx.whole(&page)
}

/// The codes page again, with the upload form's errors.
async fn upload_refused(
    state: &AppState,
    cx: &PageCtx,
    sku: &str,
    status: StatusCode,
    fields: UploadFields,
    errors: Vec<FieldError>,
) -> Result<Response, WebError> {
    let (all, chosen) = pick_or_default(state, &cx.user, sku).await?;
    let mut page = index_page(state, cx, all, (chosen, 1)).await?;
    page.upload = fields;
    page.upload_errors = Errs(errors);
    cx.whole_as(status, &page)
}

/// Upload (multipart): the file is streamed to disk, the import starts in the background, and the
/// browser goes to the batch's page to watch it.
pub async fn upload(
    State(state): State<AppState>,
    cx: PageCtx,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, WebError> {
    let merchant_id = admin(&cx.user)?;
    // Read before the body, so no early return can leave the saved file behind.
    let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
    let multipart = match multipart {
        Ok(m) => m,
        Err(_) => {
            let e = FieldError::new("file", "upload_refused", messages::upload_not_multipart());
            let status = StatusCode::BAD_REQUEST;
            return upload_refused(&state, &cx, "", status, UploadFields::default(), vec![e]).await;
        }
    };
    let mut form = match uploads::receive(&state, multipart).await {
        Ok(f) => f,
        Err(f) => {
            let e = FieldError::new("file", "upload_refused", f.message);
            return upload_refused(&state, &cx, "", f.status, UploadFields::default(), vec![e])
                .await;
        }
    };
    let fields = UploadFields {
        mode: form.mode.clone(),
        name: form.name.clone(),
        expires_at: form.expires_at.clone(),
        allowed: form.allowed.clone(),
    };
    let sku = form.sku.clone();
    // The form's expiry is a local date and time in the merchant's timezone; the import reads
    // RFC 3339. Anything else is left as typed, and the import's check reports it.
    if let Ok(Some(ms)) = validate::local_datetime_opt("expires_at", &form.expires_at, tz) {
        form.expires_at = validate::ms_to_rfc3339(ms);
    }
    let actor = cx.actor(&paths::codes());
    match uploads::start(&state, &actor, merchant_id, Some(cx.user.account.id), form).await {
        Ok(batch) => {
            cx.flash(FlashKind::Success, messages::batch_started(batch.id))
                .await;
            Ok(Redirect::to(&paths::code_batch(batch.id)).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            upload_refused(
                &state,
                &cx,
                &sku,
                StatusCode::UNPROCESSABLE_ENTITY,
                fields,
                errors,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// Generates a batch of random codes; the browser goes to the batch's page.
pub async fn generate(
    State(state): State<AppState>,
    cx: PageCtx,
    form: Result<Form<GenerateForm>, FormRejection>,
) -> Result<Response, WebError> {
    // The role first: a refused user hears 403 whatever the body.
    let merchant_id = admin(&cx.user)?;
    let Form(form) = form?;
    // A number that does not parse is out of range: the range message says what to type.
    let count = validate::typed_int(&form.count).unwrap_or(0);
    let length = validate::typed_int(&form.length).unwrap_or(0);
    let name = if form.name.trim().is_empty() {
        messages::generated_batch_name(count)
    } else {
        form.name.clone()
    };
    let actor = cx.actor(&paths::codes());
    let request = uploads::Generate {
        sku_code: &form.sku,
        name: &name,
        count,
        length,
        alphabet: &form.alphabet,
    };
    let result = uploads::generate(
        &state,
        &actor,
        merchant_id,
        Some(cx.user.account.id),
        request,
    )
    .await;
    match result {
        Ok(batch) => {
            cx.flash(FlashKind::Success, messages::batch_started(batch.id))
                .await;
            Ok(Redirect::to(&paths::code_batch(batch.id)).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let (all, chosen) = pick_or_default(&state, &cx.user, &form.sku).await?;
            let mut page = index_page(&state, &cx, all, (chosen, 1)).await?;
            page.generate = form;
            page.generate_errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

// ---------- look-up ----------

#[derive(Deserialize, Default)]
pub struct LookupForm {
    #[serde(default)]
    code: String,
    /// Operators say whose code it is (a code's hash is keyed per merchant).
    #[serde(default)]
    merchant: String,
}

pub struct Found {
    pub id: i64,
    pub sku_code: String,
    pub sku_name: String,
    pub batch_id: i64,
    pub batch_name: String,
    pub line: i64,
    pub status: String,
    pub order_id: String,
    pub expires: String,
}

#[derive(Template)]
#[template(path = "admin/codes/lookup.html")]
struct LookupPage {
    layout: Layout,
    operator: bool,
    merchants: Vec<Opt>,
    searched: bool,
    found: Option<Found>,
    errors: Errs,
    /// What was typed, shown again in the box (the answer is never cached).
    typed: String,
}

async fn lookup_page(
    state: &AppState,
    cx: &PageCtx,
    merchant: &str,
) -> Result<LookupPage, WebError> {
    let operator = cx.user.account.role() == Role::Operator;
    let merchants = if operator {
        tenants::merchants(&state.db, Scope::All)
            .await?
            .into_iter()
            .map(|m| Opt {
                selected: m.slug == merchant.trim(),
                value: m.slug,
                label: m.name,
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(LookupPage {
        layout: cx.layout().await,
        operator,
        merchants,
        searched: false,
        found: None,
        errors: Errs::default(),
        typed: String::new(),
    })
}

/// The look-up's answers hold what a customer read out: never cached.
fn no_store(status: StatusCode, html: String) -> Response {
    (status, [(header::CACHE_CONTROL, "no-store")], Html(html)).into_response()
}

pub async fn lookup_form(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    let page = lookup_page(&state, &cx, "").await?;
    cx.whole(&page)
}

pub async fn lookup(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<LookupForm>,
) -> Result<Response, WebError> {
    let mut page = lookup_page(&state, &cx, &form.merchant).await?;
    page.typed = form.code.clone();
    let mut errs = validate::Errors::default();
    let merchant_id = match cx.user.account.merchant_id {
        Some(m) => Some(m),
        None => {
            let m = page
                .merchants
                .iter()
                .find(|o| o.selected)
                .map(|o| o.value.clone());
            match m {
                Some(slug) => Some(tenants::merchant_id_by_slug(&state.db, &slug).await?),
                None => {
                    errs.push(FieldError::new(
                        "merchant",
                        "required",
                        messages::required(&messages::label("merchant")),
                    ));
                    None
                }
            }
        }
    };
    if codes::normalize(&form.code).is_empty() {
        errs.push(FieldError::new(
            "code",
            "required",
            messages::lookup_code_required(),
        ));
    }
    let Some(merchant_id) = merchant_id.filter(|_| errs.is_empty()) else {
        page.errors = Errs(errs.0);
        return Ok(no_store(StatusCode::UNPROCESSABLE_ENTITY, page.render()?));
    };
    page.searched = true;
    if let Some(row) = codes::lookup(&state.db, &state.codes, merchant_id, &form.code).await? {
        let b = codes::batch(&state.db, Scope::Merchant(merchant_id), row.batch_id).await?;
        let tz = tenants::merchant(&state.db, merchant_id).await?.tz();
        page.found = Some(Found {
            id: row.id,
            sku_name: codes::voucher_sku(&state.db, merchant_id, &b.sku_code, "code")
                .await
                .map(|s| s.name)
                .unwrap_or_default(),
            sku_code: b.sku_code,
            batch_id: b.id,
            batch_name: b.name,
            line: row.line,
            status: row.status.to_string(),
            order_id: row.order_id.unwrap_or_default(),
            expires: row
                .expires_at
                .map(|t| crate::web::view::time::when(t, tz))
                .unwrap_or_default(),
        });
    }
    Ok(no_store(StatusCode::OK, page.render()?))
}
