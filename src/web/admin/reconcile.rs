//! Reconciliation in the back office: open findings (broken identities that froze a SKU or a
//! slot), resolved ones and Redis repairs, the latest runs, and one finding's page with its
//! corrections and the unfreeze (behind a confirmation).
//!
//! Who may do what: operators see every merchant, run reconciliation, correct and unfreeze.
//! Merchant admins see their own merchant's findings and may correct and unfreeze them too: they
//! own that stock and those slots, and an unfreeze is refused while the identity is still broken,
//! so nobody can release what is still wrong. Runs cover every merchant, so only operators see
//! them and start one. Store staff are refused.

use crate::domain::reconcile::FindingKind;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::paths;
use std::collections::HashMap;

use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use chrono_tz::Tz;
use serde::Deserialize;

use crate::domain::catalog::{self, Sku, UnitType};
use crate::domain::kernel::scope::Role;
use crate::domain::reconcile::{self, Correction, Finding, FindingStatus, Run, PAGE_SIZE};
use crate::domain::slots::{self, Slot};
use crate::domain::stock::{self, Buckets};
use crate::domain::{tenancy::tenants, DomainError, FieldError, MerchantId, Scope, StoreId};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::page::PageCtx;
use crate::web::view::time::period;
use crate::web::view::Errs;

use crate::web::kit::layout::Layout;
use crate::web::AppState;

/// How many runs the list shows.
const RUNS_SHOWN: usize = 20;

/// The findings the user may see: operators every merchant, merchant admins their own.
fn viewer(user: &CurrentUser) -> Result<Scope, WebError> {
    Ok(user.account.findings_scope()?)
}

fn operator(user: &CurrentUser) -> Result<(), WebError> {
    if user.account.runs_reconciliation() {
        Ok(())
    } else {
        Err(DomainError::Forbidden.into())
    }
}

// ---------- names of what findings are about ----------

/// The merchants, stores, warehouses, SKUs and slots a list of findings mentions, looked up once.
#[derive(Default)]
struct Names {
    merchants: HashMap<MerchantId, (String, Tz)>,
    store_tz: HashMap<StoreId, Tz>,
    warehouses: HashMap<i64, String>,
    skus: HashMap<i64, Sku>,
    slots: HashMap<i64, Slot>,
}

async fn names(state: &AppState, scope: Scope, findings: &[Finding]) -> Result<Names, WebError> {
    let mut n = Names::default();
    if findings.is_empty() {
        return Ok(n);
    }
    for m in tenants::merchants(&state.db, scope).await? {
        let tz = m.tz();
        n.merchants.insert(m.id, (m.name, tz));
    }
    for s in tenants::stores(&state.db, scope).await? {
        n.store_tz.insert(s.id, s.tz());
    }
    for w in tenants::warehouses(&state.db, scope).await? {
        n.warehouses.insert(w.id, w.name);
    }
    for f in findings {
        if let Some(id) = f.sku_id.filter(|id| !n.skus.contains_key(id)) {
            match catalog::sku_by_id(&state.db, scope, id).await {
                Ok(sku) => {
                    n.skus.insert(id, sku);
                }
                Err(DomainError::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(id) = f.slot_id.filter(|id| !n.slots.contains_key(id)) {
            match slots::get(&state.db, scope, id).await {
                Ok(slot) => {
                    n.slots.insert(id, slot);
                }
                Err(DomainError::NotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(n)
}

/// A finding as the pages show it.
pub struct FindingRow {
    pub id: i64,
    pub run_id: i64,
    pub status: FindingStatus,
    pub kind: FindingKind,
    pub explain: String,
    pub merchant: String,
    pub subject: String,
    /// What the subject names, for people (empty when unknown).
    pub sku_code: String,
    pub warehouse: String,
    pub slot_time: String,
    /// The page of the SKU or slot (empty: none to link to).
    pub href: String,
    pub expected: String,
    pub found: String,
    pub action: String,
    pub created: String,
    pub resolved: String,
    pub resolved_by: String,
    pub resolution: String,
    pub is_stock: bool,
    pub is_slot: bool,
    pub correctable_slot: bool,
}

fn finding_row(f: &Finding, n: &Names) -> FindingRow {
    let (merchant, tz) = f
        .merchant_id
        .and_then(|m| n.merchants.get(&m).cloned())
        .unwrap_or((String::new(), chrono_tz::UTC));
    let sku = f.sku_id.and_then(|id| n.skus.get(&id));
    let slot = f.slot_id.and_then(|id| n.slots.get(&id));
    let href = match (slot, sku) {
        (Some(s), _) => paths::slot(s.id),
        (None, Some(k)) if k.unit_type == UnitType::Quantity => paths::sku_stock(k.id),
        (None, Some(k)) => format!("{}?sku_id={}", paths::codes(), k.id),
        (None, None) => String::new(),
    };
    let slot_time = slot
        .map(|s| {
            let tz = n.store_tz.get(&s.store_id).copied().unwrap_or(tz);
            period(s.starts_at, s.ends_at, tz)
        })
        .unwrap_or_default();
    FindingRow {
        id: f.id,
        run_id: f.run_id,
        status: f.status,
        kind: f.kind,
        explain: f.explain(),
        merchant,
        subject: f.subject.clone(),
        sku_code: sku
            .map(|k| k.code.clone())
            .or_else(|| slot.map(|s| s.sku_code.clone()))
            .unwrap_or_default(),
        warehouse: f
            .warehouse_id
            .and_then(|w| n.warehouses.get(&w).cloned())
            .unwrap_or_default(),
        slot_time,
        href,
        expected: messages::finding_value(&f.expected),
        found: messages::finding_value(&f.found),
        action: f.action.clone(),
        created: crate::web::view::time::when(f.created_at, tz),
        resolved: f
            .resolved_at
            .map(|t| crate::web::view::time::when(t, tz))
            .unwrap_or_default(),
        resolved_by: f
            .resolved_by
            .as_deref()
            .map(|s| s.trim_start_matches("user:").to_string())
            .unwrap_or_default(),
        // A repair of drift resolves itself with one fixed sentence, stored in the job's language
        // (English): said again in the reader's.
        resolution: match f.kind {
            _ if f.resolved_by.as_deref() != Some("reconciliation") => {
                f.resolution.clone().unwrap_or_default()
            }
            reconcile::FindingKind::RedisDrift => messages::drift_repaired(),
            reconcile::FindingKind::CodeCountDrift => messages::count_repaired(),
            reconcile::FindingKind::HoldDrift => messages::holds_repaired(),
            _ => f.resolution.clone().unwrap_or_default(),
        },
        is_stock: f.is_stock(),
        is_slot: f.is_slot(),
        correctable_slot: f.kind == reconcile::FindingKind::BookedMismatch,
    }
}

// ---------- the list ----------

pub struct RunRow {
    pub id: i64,
    pub trigger: String,
    /// full, or changed (what changed since the last run).
    pub scope: &'static str,
    pub actor: String,
    pub started: String,
    pub finished: bool,
    pub checked: i64,
    pub broken: i64,
    pub repaired: i64,
    pub redis: String,
    pub error: String,
}

fn utc(ms: i64) -> String {
    crate::web::view::time::when_s(ms, chrono_tz::UTC)
}

fn run_row(r: &Run) -> RunRow {
    RunRow {
        id: r.id,
        trigger: r.trigger.clone(),
        scope: r.scope.as_str(),
        actor: crate::web::view::actor::said(&r.actor),
        started: utc(r.started_at),
        finished: r.finished_at.is_some(),
        checked: r.checked,
        broken: r.broken,
        repaired: r.drift_repaired,
        redis: r.redis.clone(),
        error: r.error.clone().unwrap_or_default(),
    }
}

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    status: String,
    #[serde(default)]
    page: String,
}

#[derive(Template)]
#[template(path = "admin/reconcile/index.html")]
struct IndexPage {
    layout: Layout,
    operator: bool,
    open: i64,
    /// OPEN, RESOLVED or empty (all).
    status: String,
    findings: Vec<FindingRow>,
    page: i64,
    has_next: bool,
    runs: Vec<RunRow>,
    /// For merchant admins, who do not see the runs: when the last one started (UTC).
    last_checked: String,
}

pub async fn index(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    let scope = viewer(&cx.user)?;
    let status = FindingStatus::parse(&q.status.trim().to_ascii_uppercase())
        .map(|s| s.to_string())
        .unwrap_or_default();
    let page = q.page.trim().parse::<i64>().unwrap_or(1).max(1);
    let mut found = reconcile::findings(&state.db, scope, &status, page - 1).await?;
    let has_next = found.len() as i64 > PAGE_SIZE;
    found.truncate(PAGE_SIZE as usize);
    let n = names(&state, scope, &found).await?;
    let runs = reconcile::runs(&state.db, 0).await?;
    let operator = cx.user.account.role() == Role::Operator;
    let page = IndexPage {
        layout: cx.layout().await,
        operator,
        open: reconcile::open_count(&state.db, scope).await?,
        status,
        findings: found.iter().map(|f| finding_row(f, &n)).collect(),
        page,
        has_next,
        last_checked: runs.first().map(|r| utc(r.started_at)).unwrap_or_default(),
        runs: if operator {
            runs.iter().take(RUNS_SHOWN).map(run_row).collect()
        } else {
            Vec::new()
        },
    };
    cx.whole(&page)
}

pub async fn run(State(state): State<AppState>, cx: PageCtx) -> Result<Response, WebError> {
    operator(&cx.user)?;
    let report = reconcile::run(&state.db, "operator", &cx.actor(&paths::reconcile())).await?;
    match &report.run.error {
        Some(e) => {
            cx.flash(
                FlashKind::Error,
                messages::reconcile_run_failed(report.run.id, e),
            )
            .await
        }
        None => {
            let kind = if report.broken.is_empty() {
                FlashKind::Success
            } else {
                FlashKind::Warning
            };
            let text = messages::reconcile_run_done(
                report.run.id,
                report.run.checked,
                report.broken.len(),
                report.repaired.len(),
            );
            cx.flash(kind, text).await
        }
    }
    Ok(Redirect::to(&paths::reconcile()).into_response())
}

// ---------- one finding ----------

crate::text_enum! {
    /// What a finding can freeze: a goods SKU or a slot.
    pub enum FrozenWhat { Sku = "sku", Slot = "slot" }
}

/// What a finding froze, and whether it still does.
pub struct Frozen {
    /// What it froze; none when there is nothing to freeze (a repair).
    pub what: Option<FrozenWhat>,
    /// The SKU or slot is frozen by this finding.
    pub by_this: bool,
    /// Frozen by another open finding (0: not).
    pub by_other: i64,
}

#[derive(Template)]
#[template(path = "admin/reconcile/finding.html")]
struct FindingPage {
    layout: Layout,
    f: FindingRow,
    frozen: Frozen,
    /// The warehouse balance now, for stock findings.
    balance: Option<Buckets>,
    can_act: bool,
    reason: String,
    slot_reason: String,
    errors: Errs,
    slot_errors: Errs,
}

async fn visible_finding(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
) -> Result<(Scope, Finding), WebError> {
    let scope = viewer(user)?;
    let f = reconcile::finding(&state.db, scope, id).await?;
    Ok((scope, f))
}

async fn frozen_state(state: &AppState, scope: Scope, f: &Finding) -> Result<Frozen, WebError> {
    let by = |id: Option<i64>| match id {
        Some(x) if x == f.id => (true, 0),
        Some(x) => (false, x),
        None => (false, 0),
    };
    if let Some(slot) = f.slot_id {
        let (by_this, by_other) = by(slots::get(&state.db, scope, slot).await?.frozen_finding_id);
        return Ok(Frozen {
            what: Some(FrozenWhat::Slot),
            by_this,
            by_other,
        });
    }
    if let (Some(sku), "frozen") = (f.sku_id, f.action.as_str()) {
        let (by_this, by_other) = by(catalog::sku_by_id(&state.db, scope, sku)
            .await?
            .frozen_finding_id);
        return Ok(Frozen {
            what: Some(FrozenWhat::Sku),
            by_this,
            by_other,
        });
    }
    Ok(Frozen {
        what: None,
        by_this: false,
        by_other: 0,
    })
}

async fn finding_page(
    state: &AppState,
    cx: &PageCtx,
    scope: Scope,
    f: &Finding,
) -> Result<FindingPage, WebError> {
    let n = names(state, scope, std::slice::from_ref(f)).await?;
    let balance = match (f.is_stock(), f.sku_id, f.warehouse_id) {
        (true, Some(sku), Some(wh)) => Some(stock::buckets(&state.db, sku, wh).await?),
        _ => None,
    };
    Ok(FindingPage {
        layout: cx.layout().await,
        frozen: frozen_state(state, scope, f).await?,
        balance,
        can_act: f.status == FindingStatus::Open && cx.user.account.role().resolves_findings(),
        f: finding_row(f, &n),
        reason: String::new(),
        slot_reason: String::new(),
        errors: Errs::default(),
        slot_errors: Errs::default(),
    })
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let (scope, f) = visible_finding(&state, &cx.user, id).await?;
    cx.whole(&finding_page(&state, &cx, scope, &f).await?)
}

/// A refusal the person can act on: invalid input and conflicts go back to the form.
fn form_errors(e: DomainError) -> Result<Errs, WebError> {
    match e {
        DomainError::Invalid(errors) => Ok(Errs(errors)),
        DomainError::Conflict { code, message, .. } => {
            Ok(Errs(vec![FieldError::new("form", code, message)]))
        }
        e => Err(e.into()),
    }
}

fn finding_path(id: i64) -> String {
    paths::reconcile_finding(id)
}

#[derive(Deserialize, Default)]
pub struct CorrectForm {
    #[serde(default)]
    mode: String,
    #[serde(default)]
    reason: String,
}

pub async fn correct(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<CorrectForm>,
) -> Result<Response, WebError> {
    let (scope, f) = visible_finding(&state, &cx.user, id).await?;
    let actor = cx.actor(&finding_path(f.id));
    let result = match form.mode.trim() {
        "restore" => reconcile::correct_stock(
            &state.db,
            &actor,
            scope,
            f.id,
            Correction::Restore,
            &form.reason,
        )
        .await
        .map(|_| messages::finding_stock_restored(f.id)),
        "accept" => reconcile::correct_stock(
            &state.db,
            &actor,
            scope,
            f.id,
            Correction::Accept,
            &form.reason,
        )
        .await
        .map(|_| messages::finding_stock_accepted(f.id)),
        _ => Err(DomainError::field(
            "mode",
            "invalid_choice",
            messages::bad_choice("mode", &["restore", "accept"]),
        )),
    };
    match result {
        Ok(notice) => {
            cx.flash(FlashKind::Success, notice).await;
            Ok(Redirect::to(&finding_path(f.id)).into_response())
        }
        Err(e) => {
            let errors = form_errors(e)?;
            let f = reconcile::finding(&state.db, scope, f.id).await?;
            let mut page = finding_page(&state, &cx, scope, &f).await?;
            page.reason = form.reason;
            page.errors = errors;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
    }
}

#[derive(Deserialize, Default)]
pub struct ReasonForm {
    #[serde(default)]
    reason: String,
}

pub async fn correct_slot(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<ReasonForm>,
) -> Result<Response, WebError> {
    let (scope, f) = visible_finding(&state, &cx.user, id).await?;
    let actor = cx.actor(&finding_path(f.id));
    match reconcile::correct_slot(&state.db, &actor, scope, f.id, &form.reason).await {
        Ok(_) => {
            cx.flash(FlashKind::Success, messages::finding_slot_corrected(f.id))
                .await;
            Ok(Redirect::to(&finding_path(f.id)).into_response())
        }
        Err(e) => {
            let errors = form_errors(e)?;
            let f = reconcile::finding(&state.db, scope, f.id).await?;
            let mut page = finding_page(&state, &cx, scope, &f).await?;
            page.slot_reason = form.reason;
            page.slot_errors = errors;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
    }
}

// ---------- unfreeze, behind a confirmation ----------

#[derive(Template)]
#[template(path = "admin/reconcile/unfreeze.html")]
struct UnfreezePage {
    layout: Layout,
    f: FindingRow,
    frozen: Frozen,
    note: String,
    errors: Errs,
}

async fn unfreeze_page(
    state: &AppState,
    cx: &PageCtx,
    scope: Scope,
    f: &Finding,
) -> Result<UnfreezePage, WebError> {
    let n = names(state, scope, std::slice::from_ref(f)).await?;
    Ok(UnfreezePage {
        layout: cx.layout().await,
        frozen: frozen_state(state, scope, f).await?,
        f: finding_row(f, &n),
        note: String::new(),
        errors: Errs::default(),
    })
}

pub async fn confirm_unfreeze(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let (scope, f) = visible_finding(&state, &cx.user, id).await?;
    cx.whole(&unfreeze_page(&state, &cx, scope, &f).await?)
}

#[derive(Deserialize, Default)]
pub struct NoteForm {
    #[serde(default)]
    note: String,
}

pub async fn unfreeze(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<NoteForm>,
) -> Result<Response, WebError> {
    let (scope, f) = visible_finding(&state, &cx.user, id).await?;
    let actor = cx.actor(&finding_path(f.id));
    match reconcile::unfreeze(&state.db, &actor, scope, f.id, &form.note).await {
        Ok(done) => {
            let frozen = frozen_state(&state, scope, &done).await?;
            let notice = messages::finding_unfrozen(
                done.id,
                frozen.what.map_or("", FrozenWhat::as_str),
                Some(frozen.by_other).filter(|&o| o != 0),
            );
            cx.flash(FlashKind::Success, notice).await;
            Ok(Redirect::to(&finding_path(f.id)).into_response())
        }
        Err(e) => {
            let errors = form_errors(e)?;
            let mut page = unfreeze_page(&state, &cx, scope, &f).await?;
            page.note = form.note;
            page.errors = errors;
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
    }
}
