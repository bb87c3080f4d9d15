//! The store a page is about (`?store=`, or the store of the object shown), what the signed-in
//! user may do there, and the scoped look-ups every store page shares.
//!
//! Who may do what: store staff everything on their own store (other stores answer 404), merchant
//! admins everything of their merchant, operators read (their POSTs answer 403). Every lookup is
//! scoped by merchant, so another merchant's ids are simply "not found".

use crate::domain::{MerchantId, StoreId};
use crate::web::kit::paths;
use askama::Template;
use axum::response::Response;
use chrono_tz::Tz;

use crate::domain::kernel::scope::Role;
use crate::domain::slots::{self, Slot};
use crate::domain::tenancy::tenants::{self, Store};
use crate::domain::{DomainError, Scope};
use crate::web::kit::auth::CurrentUser;
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::Opt;
use crate::web::AppState;

/// The tabs of the schedule's sub-navigation (`admin/slots/_nav.html`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Week,
    Day,
    Bookings,
    /// The stores' opening hours, and one service's schedule (`Schedule`), under one tab.
    Schedules,
    Schedule,
    ToCall,
    Closures,
    Staff,
    Metrics,
}

/// Which store a slot page shows, and what the signed-in user may do there.
#[derive(Debug, Clone)]
pub struct StoreCtx {
    pub store: Option<Store>,
    /// The `store` query value that names this store ("main-store", or "acme/main-store" for
    /// operators, who see every merchant).
    pub value: String,
    /// `store=…` for links, empty when no store is chosen.
    pub q: String,
    /// The store switcher's choices; empty for store staff (they have one store).
    pub options: Vec<Opt>,
    pub can_edit: bool,
    /// The sub-navigation tab the page belongs to.
    pub tab: Tab,
    /// The store's bookings in closed slots that nobody has reached yet: the To call tab's badge.
    pub to_call: i64,
    /// Where the store switcher sends its GET.
    pub path: String,
}

impl StoreCtx {
    pub fn tz(&self) -> Tz {
        self.store.as_ref().map(Store::tz).unwrap_or(chrono_tz::UTC)
    }
    /// The store's time zone as the page's language names it ("中国时间" / "China Time").
    pub fn tz_name(&self) -> String {
        crate::i18n::format::zone(crate::i18n::current(), self.tz().name())
    }
    pub fn store_name(&self) -> String {
        self.store
            .as_ref()
            .map(|s| s.name.clone())
            .unwrap_or_default()
    }
}

fn store_value(user: &CurrentUser, merchant_slug: &str, store: &Store) -> String {
    if user.account.role() == Role::Operator {
        format!("{merchant_slug}/{}", store.slug)
    } else {
        store.slug.clone()
    }
}

/// The store a page is about, from `?store=` and the user's role; None when an operator has not
/// picked one yet or the merchant has no store (the page shows an empty state).
pub async fn ctx(
    state: &AppState,
    user: &CurrentUser,
    raw: &str,
    tab: Tab,
    path: &str,
) -> Result<StoreCtx, WebError> {
    let raw = raw.trim();
    let u = &user.account;
    let own = u.merchant_slug.as_deref().unwrap_or("");
    let (store, options) = match (u.role(), u.merchant_id, u.store_id) {
        (Role::StoreStaff, Some(m), Some(s)) => {
            (Some(staff_store(state, m, s, own, raw).await?), Vec::new())
        }
        (Role::MerchantAdmin, Some(m), _) => admin_store(state, m, own, raw).await?,
        (Role::Operator, _, _) => operator_store(state, raw).await?,
        _ => return Err(DomainError::Forbidden.into()),
    };
    with_store(state, user, store, options, tab, path).await
}

/// Store staff have one store: `?store=` may name it (with or without the merchant) or nothing.
async fn staff_store(
    state: &AppState,
    merchant_id: MerchantId,
    store_id: StoreId,
    own: &str,
    raw: &str,
) -> Result<Store, WebError> {
    let store = tenants::store_by_id(&state.db, Scope::Merchant(merchant_id), store_id).await?;
    if !raw.is_empty() && raw != store.slug && raw != format!("{own}/{}", store.slug) {
        return Err(DomainError::NotFound("store").into());
    }
    Ok(store)
}

/// A merchant admin picks among the merchant's stores; the first when none is named.
async fn admin_store(
    state: &AppState,
    merchant_id: MerchantId,
    own: &str,
    raw: &str,
) -> Result<(Option<Store>, Vec<Opt>), WebError> {
    let stores = tenants::stores(&state.db, Scope::Merchant(merchant_id)).await?;
    let wanted = raw.strip_prefix(&format!("{own}/")).unwrap_or(raw);
    let store = if wanted.is_empty() {
        stores.first().cloned()
    } else {
        Some(
            stores
                .iter()
                .find(|s| s.slug == wanted)
                .cloned()
                .ok_or(DomainError::NotFound("store"))?,
        )
    };
    let options = stores
        .iter()
        .map(|s| Opt {
            value: s.slug.clone(),
            label: s.name.clone(),
            selected: store.as_ref().is_some_and(|c| c.id == s.id),
        })
        .collect();
    Ok((store, options))
}

/// Operators see every merchant's stores, named `merchant/store`; none until they pick one.
async fn operator_store(
    state: &AppState,
    raw: &str,
) -> Result<(Option<Store>, Vec<Opt>), WebError> {
    let merchants = tenants::merchants(&state.db, Scope::All).await?;
    let stores = tenants::stores(&state.db, Scope::All).await?;
    let slug_of = |merchant_id: MerchantId| {
        merchants
            .iter()
            .find(|m| m.id == merchant_id)
            .map(|m| (m.slug.clone(), m.name.clone()))
            .unwrap_or_default()
    };
    let store = if raw.is_empty() {
        None
    } else {
        Some(
            stores
                .iter()
                .find(|s| format!("{}/{}", slug_of(s.merchant_id).0, s.slug) == raw)
                .cloned()
                .ok_or(DomainError::NotFound("store"))?,
        )
    };
    let mut options: Vec<Opt> = stores
        .iter()
        .map(|s| {
            let (mslug, mname) = slug_of(s.merchant_id);
            Opt {
                value: format!("{mslug}/{}", s.slug),
                label: format!("{mname} · {}", s.name),
                selected: store.as_ref().is_some_and(|c| c.id == s.id),
            }
        })
        .collect();
    options.sort_by(|a, b| a.label.cmp(&b.label));
    Ok((store, options))
}

/// The context of a page whose store comes from the object shown (a slot, a closure).
pub async fn ctx_of_store(
    state: &AppState,
    user: &CurrentUser,
    store: Store,
    tab: Tab,
    path: &str,
) -> Result<StoreCtx, WebError> {
    with_store(state, user, Some(store), Vec::new(), tab, path).await
}

async fn with_store(
    state: &AppState,
    user: &CurrentUser,
    store: Option<Store>,
    options: Vec<Opt>,
    tab: Tab,
    path: &str,
) -> Result<StoreCtx, WebError> {
    let (value, to_call) = match &store {
        Some(s) => {
            let m = tenants::merchant(&state.db, s.merchant_id).await?;
            let (waiting, _) = crate::domain::slots::to_call::counts(&state.db, s.id).await?;
            (store_value(user, &m.slug, s), waiting)
        }
        None => (String::new(), 0),
    };
    Ok(StoreCtx {
        q: if value.is_empty() {
            String::new()
        } else {
            format!("store={value}")
        },
        value,
        can_edit: user.account.role() != Role::Operator,
        store,
        options,
        tab,
        to_call,
        path: path.to_string(),
    })
}

/// The merchant whose slots the user may change: operators read only.
pub fn writer(user: &CurrentUser) -> Result<MerchantId, WebError> {
    Ok(user.account.slot_writer()?)
}

/// Store staff see their own store only; another store's objects do not exist for them.
pub fn check_store(
    user: &CurrentUser,
    store_id: StoreId,
    what: &'static str,
) -> Result<(), WebError> {
    if user.account.sees_store(store_id) {
        Ok(())
    } else {
        Err(DomainError::NotFound(what).into())
    }
}

/// A slot the user may see (merchant-scoped, and store-scoped for store staff), with its store.
pub async fn visible_slot(
    state: &AppState,
    user: &CurrentUser,
    id: i64,
) -> Result<(Slot, Store), WebError> {
    let slot = slots::get(&state.db, user.actor("").scope(), id).await?;
    check_store(user, slot.store_id, "slot")?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(slot.merchant_id), slot.store_id).await?;
    Ok((slot, store))
}

#[derive(Template)]
#[template(path = "admin/slots/no_store.html")]
struct NoStorePage {
    layout: Layout,
    ctx: StoreCtx,
    operator: bool,
}

/// The empty state of every store page: pick a store (operators) or create one first.
pub async fn no_store_page(cx: &PageCtx, ctx: StoreCtx) -> Result<Response, WebError> {
    let page = NoStorePage {
        layout: cx.layout().await,
        operator: cx.user.account.role() == Role::Operator,
        ctx,
    };
    cx.whole(&page)
}
