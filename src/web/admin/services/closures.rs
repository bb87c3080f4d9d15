//! Closures: a staff member on leave or the whole store shut for a period. Creating one closes
//! every slot it covers and lists the bookings to call; staff then cancel those bookings in bulk
//! (freeing the places) or reopen the closure, which reopens its slots.

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::domain::kernel::validate::{self, REASON_MAX};
use crate::domain::slots::closures::{self, Closure, ClosureForm as ClosureFields};
use crate::domain::tenancy::tenants::{self, Store};
use crate::domain::{slots::booking, slots::staff, DomainError, Scope};
use crate::messages;
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::flash::FlashKind;
use crate::web::kit::ids::PathId;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::{PageCtx, Part};
use crate::web::view::store::{self, check_store, ctx_of_store, no_store_page, writer, StoreCtx};
use crate::web::view::time::{closure_period, period};
use crate::web::view::{link, paginate, Errs, Opt};
use crate::web::AppState;

const PER_PAGE: usize = 30;
/// Slots listed on a closure's page; the count says how many there are in all.
const SLOTS_SHOWN: usize = 50;

crate::text_enum! {
    /// Where a closure stands: still ahead or under way, over, or reopened by someone.
    pub enum ClosureState { Active = "active", Ended = "ended", Reopened = "reopened" }
}

crate::text_enum! {
    /// What a closure's confirmation page asks: cancel its bookings, or reopen its slots.
    pub enum ClosureAction { Cancel = "cancel", Reopen = "reopen" }
}

pub struct ClosureRow {
    pub id: i64,
    /// The staff member's name; empty for the whole store.
    pub who: String,
    pub period: String,
    pub reason: String,
    pub created_by: String,
    pub state: ClosureState,
    pub reopened_at: String,
}

fn closure_row(c: &Closure, store: &Store, now: i64) -> ClosureRow {
    let tz = store.tz();
    ClosureRow {
        id: c.id,
        who: c.staff_name.clone().unwrap_or_default(),
        period: closure_period(c.starts_at, c.ends_at, tz),
        reason: c.reason.clone(),
        created_by: crate::web::view::actor::said(&c.created_by),
        state: if c.reopened_at.is_some() {
            ClosureState::Reopened
        } else if c.ends_at <= now {
            ClosureState::Ended
        } else {
            ClosureState::Active
        },
        reopened_at: c
            .reopened_at
            .map(|t| crate::web::view::time::when(t, tz))
            .unwrap_or_default(),
    }
}

// ---------- list and create ----------

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    page: String,
}

/// The "who" value that means the whole store: an explicit choice, never the default.
const WHOLE_STORE: &str = "*";

#[derive(Deserialize, Default, Clone)]
pub struct ClosureForm {
    #[serde(default)]
    store: String,
    /// A staff member's id, or `*` for the whole store.
    #[serde(default)]
    staff: String,
    /// "days" (whole days, the default: leave is taken in days) or "times".
    #[serde(default)]
    span: String,
    #[serde(default)]
    from_date: String,
    /// The last day closed, inclusive.
    #[serde(default)]
    until_date: String,
    #[serde(default)]
    starts_at: String,
    #[serde(default)]
    ends_at: String,
    #[serde(default)]
    reason: String,
    /// What customers read about the closed slots (optional; the reason is for staff only).
    #[serde(default)]
    public_note: String,
}

#[derive(Template)]
#[template(path = "admin/slots/closures.html")]
struct ListPage {
    layout: Layout,
    ctx: StoreCtx,
    rows: Vec<ClosureRow>,
    page: i64,
    pages: i64,
    total: i64,
    staff: Vec<Opt>,
    form: ClosureForm,
    errors: Errs,
    /// Per closure id: bookings it touched, and those still to call.
    counts: std::collections::HashMap<i64, (i64, i64)>,
}

/// What the form says, in the domain's terms: the staff value, and the period as local times.
struct Fields {
    staff: String,
    starts_at: String,
    ends_at: String,
}

impl ClosureForm {
    /// The domain's fields and the form's own errors: who must be chosen (a person, or the whole
    /// store on purpose), and whole days become midnight to the midnight after the last day.
    fn fields(&self) -> (Fields, Vec<crate::domain::FieldError>) {
        use crate::domain::FieldError;
        use crate::web::view::time::parse_day;
        let mut errs = Vec::new();
        let staff = match self.staff.trim() {
            "" => {
                errs.push(FieldError::new(
                    "staff",
                    "required",
                    messages::closure_who_required(),
                ));
                String::new()
            }
            WHOLE_STORE => String::new(),
            id => id.to_string(),
        };
        if !self.by_days() {
            let f = Fields {
                staff,
                starts_at: self.starts_at.clone(),
                ends_at: self.ends_at.clone(),
            };
            return (f, errs);
        }
        let bad = |field: &str| {
            FieldError::new(
                field,
                "invalid_date",
                messages::bad_time_or_date(&messages::label("date")),
            )
        };
        let from = parse_day(&self.from_date);
        let until = match self.until_date.trim() {
            // One day off: the last day is the first.
            "" => from,
            raw => parse_day(raw),
        };
        if from.is_none() {
            errs.push(bad("from_date"));
        }
        if until.is_none() {
            errs.push(bad("until_date"));
        }
        let (mut starts_at, mut ends_at) = (String::new(), String::new());
        if let (Some(from), Some(until)) = (from, until) {
            if until < from {
                errs.push(FieldError::new(
                    "until_date",
                    "invalid_period",
                    messages::last_day_before_first(),
                ));
            }
            let day_after = until.succ_opt().unwrap_or(until);
            starts_at = format!("{}T00:00", from.format("%Y-%m-%d"));
            ends_at = format!("{}T00:00", day_after.format("%Y-%m-%d"));
        }
        (
            Fields {
                staff,
                starts_at,
                ends_at,
            },
            errs,
        )
    }

    /// Whole days unless times were chosen.
    pub fn by_days(&self) -> bool {
        self.span != "times"
    }
}

impl ListPage {
    pub fn affected(&self, id: &i64) -> i64 {
        self.counts.get(id).map_or(0, |c| c.0)
    }
    pub fn to_call(&self, id: &i64) -> i64 {
        self.counts.get(id).map_or(0, |c| c.1)
    }
}

async fn list_page(
    state: &AppState,
    cx: &PageCtx,
    ctx: StoreCtx,
    store: &Store,
    page: &str,
    form: ClosureForm,
) -> Result<ListPage, WebError> {
    let now = state.db.now_ms();
    let mut rows: Vec<ClosureRow> = closures::closures(&state.db, store.merchant_id, store.id)
        .await?
        .iter()
        .map(|c| closure_row(c, store, now))
        .collect();
    // Active first, then ended, then reopened; each as the domain orders them (latest first).
    rows.sort_by_key(|r| match r.state {
        ClosureState::Active => 0,
        ClosureState::Ended => 1,
        ClosureState::Reopened => 2,
    });
    let (rows, page, pages, total) = paginate(rows, page, PER_PAGE);
    let staff = staff::staff_of_store(&state.db, store.merchant_id, store.id)
        .await?
        .into_iter()
        .map(|s| Opt {
            selected: s.id.to_string() == form.staff,
            value: s.id.to_string(),
            label: s.name,
        })
        .collect::<Vec<Opt>>();
    Ok(ListPage {
        layout: cx.layout().await,
        ctx,
        rows,
        page,
        pages,
        total,
        staff,
        form,
        errors: Errs::default(),
        counts: closures::booking_counts(&state.db, store.id).await?,
    })
}

pub async fn list(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<ListQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(
        &state,
        &cx.user,
        &q.store,
        Tab::Closures,
        &paths::closures(),
    )
    .await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let form = ClosureForm {
        store: ctx.value.clone(),
        ..Default::default()
    };
    let page = list_page(&state, &cx, ctx, &store, &q.page, form).await?;
    cx.whole(&page)
}

pub async fn create(
    State(state): State<AppState>,
    cx: PageCtx,
    Form(form): Form<ClosureForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let ctx = store::ctx(
        &state,
        &cx.user,
        &form.store,
        Tab::Closures,
        &paths::closures(),
    )
    .await?;
    let store = ctx.store.clone().ok_or(DomainError::NotFound("store"))?;
    let (fields, mut errs) = form.fields();
    let fields_in = ClosureFields {
        staff: &fields.staff,
        starts_at: &fields.starts_at,
        ends_at: &fields.ends_at,
        reason: &form.reason,
        public_note: &form.public_note,
    };
    let result = match fields_in.parse(&state.db, merchant_id, &store).await {
        Ok(input) if errs.is_empty() => {
            let actor = cx.actor(&paths::closures());
            closures::create_closure(&state.db, &actor, merchant_id, &store, input).await
        }
        Ok(_) => {
            // The form's own refusal: say what else is wrong too, all at once.
            if let Err(e) = validate::name("reason", &form.reason, REASON_MAX) {
                errs.push(e);
            }
            Err(DomainError::Invalid(Vec::new()))
        }
        Err(e) => Err(e),
    };
    // With whole days the form has dates: the domain's instants are named by them.
    let result = result.map_err(|e| match e {
        DomainError::Invalid(more) => {
            for e in more {
                let field = match (form.by_days(), e.field.as_str()) {
                    (true, "starts_at") => "from_date",
                    (true, "ends_at") => "until_date",
                    (_, f) => f,
                };
                if !errs.iter().any(|x| x.field == field) {
                    errs.push(crate::domain::FieldError::new(field, e.code, e.message));
                }
            }
            DomainError::Invalid(std::mem::take(&mut errs))
        }
        other => other,
    });
    match result {
        Ok((closure, contacts)) => {
            let closed = closures::closure_slots(&state.db, merchant_id, closure.id)
                .await?
                .len();
            let notice = messages::closure_created(closed, contacts.len());
            cx.flash(FlashKind::Success, notice).await;
            let to = link(&paths::closure(closure.id), &[("store", &ctx.value)]);
            Ok(Redirect::to(&to).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = list_page(&state, &cx, ctx, &store, "1", form).await?;
            page.errors = Errs(errors);
            cx.whole_as(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }
        Err(e) => Err(e.into()),
    }
}

// ---------- one closure ----------

#[derive(Deserialize, Default)]
pub struct StoreQuery {
    #[serde(default)]
    store: String,
}

#[derive(Deserialize, Default, Clone)]
pub struct ReasonForm {
    #[serde(default)]
    reason: String,
}

pub struct SlotLine {
    pub id: i64,
    pub time: String,
    pub sku_code: String,
    pub staff: String,
    pub booked: i64,
    pub capacity: i64,
}

pub struct ContactRow {
    pub reference: String,
    pub name: String,
    pub phone: String,
    pub slot_id: i64,
    pub time: String,
}

#[derive(Template)]
#[template(path = "admin/slots/closure.html", blocks = ["body"])]
struct ClosurePage {
    layout: Layout,
    ctx: StoreCtx,
    c: ClosureRow,
    slots: Vec<SlotLine>,
    slots_total: usize,
    contacts: Vec<ContactRow>,
    reason: String,
    errors: Errs,
    notice: Option<String>,
}

/// A closure the user may see, with its store. Operators have no merchant of their own: the
/// `store` in the query names it.
async fn visible_closure(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
    store_param: &str,
) -> Result<(Closure, Store), WebError> {
    let merchant_id = match user.account.merchant_id {
        Some(m) => m,
        None => store::ctx(state, user, store_param, Tab::Closures, &paths::closures())
            .await?
            .store
            .map(|s| s.merchant_id)
            .ok_or(DomainError::NotFound("closure"))?,
    };
    let c = closures::closure(&state.db, merchant_id, id).await?;
    check_store(user, c.store_id, "closure")?;
    let store = tenants::store_by_id(&state.db, Scope::Merchant(merchant_id), c.store_id).await?;
    Ok((c, store))
}

async fn closure_page(
    state: &AppState,
    cx: &PageCtx,
    c: &Closure,
    store: Store,
) -> Result<ClosurePage, WebError> {
    let tz = store.tz();
    let closed = closures::closure_slots(&state.db, store.merchant_id, c.id).await?;
    let contacts = closures::closure_contacts(&state.db, store.merchant_id, c.id).await?;
    let slots_total = closed.len();
    let lines = closed
        .iter()
        .take(SLOTS_SHOWN)
        .map(|s| SlotLine {
            id: s.id,
            time: period(s.starts_at, s.ends_at, tz),
            sku_code: s.sku_code.clone(),
            staff: s.staff_name.clone().unwrap_or_default(),
            booked: s.booked,
            capacity: s.capacity,
        })
        .collect();
    let contacts = contacts
        .into_iter()
        .map(|x| ContactRow {
            time: crate::web::view::time::when(x.starts_at, tz),
            reference: x.reference,
            name: x.customer_name,
            phone: x.customer_phone,
            slot_id: x.slot_id,
        })
        .collect();
    Ok(ClosurePage {
        layout: cx.layout().await,
        c: closure_row(c, &store, state.db.now_ms()),
        ctx: ctx_of_store(state, &cx.user, store, Tab::Closures, &paths::closures()).await?,
        slots: lines,
        slots_total,
        contacts,
        reason: String::new(),
        errors: Errs::default(),
        notice: None,
    })
}

impl ClosurePage {
    fn answer(&self, cx: &PageCtx, status: StatusCode) -> Result<Response, WebError> {
        cx.answer(status, self, Part::AnyHtmx, |p| p.as_body().render())
    }
}

pub async fn show(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(q): Query<StoreQuery>,
) -> Result<Response, WebError> {
    let (c, store) = visible_closure(&state, &cx.user, id, &q.store).await?;
    let page = closure_page(&state, &cx, &c, store).await?;
    page.answer(&cx, StatusCode::OK)
}

async fn closure_done(
    state: &AppState,
    cx: &PageCtx,
    id: i64,
    notice: String,
) -> Result<Response, WebError> {
    let (c, store) = visible_closure(state, &cx.user, id, "").await?;
    if cx.htmx {
        let mut page = closure_page(state, cx, &c, store).await?;
        page.notice = Some(notice);
        page.answer(cx, StatusCode::OK)
    } else {
        cx.flash(FlashKind::Success, notice).await;
        let ctx = ctx_of_store(state, &cx.user, store, Tab::Closures, &paths::closures()).await?;
        Ok(Redirect::to(&format!("{}?{}", paths::closure(c.id), ctx.q)).into_response())
    }
}

#[derive(Template)]
#[template(path = "admin/slots/closure_confirm.html")]
struct ConfirmPage {
    layout: Layout,
    ctx: StoreCtx,
    c: ClosureRow,
    action: ClosureAction,
    contacts: usize,
    reason: String,
    errors: Errs,
}

async fn confirm_page(
    state: &AppState,
    cx: &PageCtx,
    id: i64,
    action: ClosureAction,
    reason: String,
) -> Result<ConfirmPage, WebError> {
    let (c, store) = visible_closure(state, &cx.user, id, "").await?;
    let contacts = closures::closure_contacts(&state.db, store.merchant_id, c.id)
        .await?
        .len();
    Ok(ConfirmPage {
        layout: cx.layout().await,
        c: closure_row(&c, &store, state.db.now_ms()),
        ctx: ctx_of_store(state, &cx.user, store, Tab::Closures, &paths::closures()).await?,
        action,
        contacts,
        reason,
        errors: Errs::default(),
    })
}

/// Bulk cancel without JavaScript: a page that says how many bookings go (htmx uses hx-confirm).
pub async fn confirm_cancel_bookings(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Query(form): Query<ReasonForm>,
) -> Result<Response, WebError> {
    writer(&cx.user)?;
    let page = confirm_page(&state, &cx, id, ClosureAction::Cancel, form.reason).await?;
    cx.whole(&page)
}

pub async fn cancel_bookings(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
    Form(form): Form<ReasonForm>,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (c, store) = visible_closure(&state, &cx.user, id, "").await?;
    // Customers are told why: a bulk cancellation needs its reason.
    let result = match validate::name("reason", &form.reason, REASON_MAX) {
        Ok(reason) => {
            let actor = cx.actor(&paths::closure(c.id));
            booking::cancel_for_closure(&state.db, &actor, merchant_id, c.id, &reason).await
        }
        Err(e) => Err(DomainError::Invalid(vec![e])),
    };
    match result {
        Ok(n) => {
            let notice = messages::closure_bookings_cancelled(n);
            closure_done(&state, &cx, id, notice).await
        }
        Err(DomainError::Invalid(errors)) => {
            let mut page = closure_page(&state, &cx, &c, store).await?;
            page.reason = form.reason;
            page.errors = Errs(errors);
            page.answer(&cx, StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn confirm_reopen(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    writer(&cx.user)?;
    let page = confirm_page(&state, &cx, id, ClosureAction::Reopen, String::new()).await?;
    cx.whole(&page)
}

pub async fn reopen(
    State(state): State<AppState>,
    cx: PageCtx,
    PathId(id): PathId,
) -> Result<Response, WebError> {
    let merchant_id = writer(&cx.user)?;
    let (c, _) = visible_closure(&state, &cx.user, id, "").await?;
    let actor = cx.actor(&paths::closure(c.id));
    closures::reopen_closure(&state.db, &actor, merchant_id, c.id).await?;
    let notice = messages::closure_reopened();
    closure_done(&state, &cx, id, notice).await
}
