//! The waiting list: joining it, a place on it, and a held offer accepted or declined.

use super::*;
#[allow(unused_imports)]
use crate::domain::slots::waitlist::WaitStatus;
use crate::web::kit::paths;

/// A customer joins a full slot's waiting list from its page: their own page for the wait
/// follows, which shows the booking once a place freed for them.
pub(super) async fn join_waitlist(
    State(state): State<AppState>,
    ip: ClientIp,
    Path((store_slug, id)): Path<(String, String)>,
    Form(form): Form<BookForm>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store_slug).await?;
    let slot = slot_of(&state, &store, &id).await?;
    let input = crate::domain::slots::waitlist::JoinInput {
        slot_id: slot.id,
        name: form.name.clone(),
        phone: form.phone.clone(),
        places: form.places(),
        region: store.phone_region(),
        public: Some(public_caps(&state, &store, &ip)),
    };
    let actor = actor(&store, &paths::public::book(store_slug), ip);
    match crate::domain::slots::waitlist::join(&state.db, &actor, store.merchant_id, input).await {
        Ok(e) => Ok(Redirect::to(&paths::public::waitlist(&e.token)).into_response()),
        Err(DomainError::Invalid(errors)) => {
            Ok(refused(&state, store, slot, form, Refused::Fields(errors)).await?)
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            let fresh = storefront::slot(&state.db, &store, slot.id).await?;
            let why = Refused::Conflict {
                code,
                notice: public_notice(code, message),
            };
            Ok(refused(&state, store, fresh, form, why).await?)
        }
        Err(e) => Err(PublicError::at(&store)(e)),
    }
}

#[derive(Template)]
#[template(path = "public/waitlist.html")]
pub(super) struct WaitPage {
    /// The visitor's language (see `lang`).
    pub(super) lang: Lang,
    pub(super) store: Store,
    pub(super) token: String,
    pub(super) service_name: String,
    pub(super) date: String,
    pub(super) time: String,
    pub(super) status: WaitStatus,
    pub(super) position: i64,
    pub(super) places: i64,
    /// The booking a freed place became.
    pub(super) booking: Option<String>,
    /// While a place is offered: until when it is held (the store's clock).
    pub(super) held_until: String,
    /// The page asks "give the place back?" before declining.
    pub(super) confirm_decline: bool,
    /// The page asks "leave the waiting list?" before taking the customer off it.
    pub(super) confirm_leave: bool,
    pub(super) flashes: Vec<Flash>,
}

/// The customer's page for their wait: their position, the place offered to them, or the booking
/// a freed place became.
pub(super) async fn waitlist_page(
    State(state): State<AppState>,
    session: Session,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let page = wait_page(&state, &token, false, flash::take(&session).await).await?;
    Ok(Html(page.render()?).into_response())
}

/// "Leave the waiting list?", before a waiting customer gives up their turn.
pub(super) async fn leave_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let mut page = wait_page(&state, &token, false, Vec::new()).await?;
    page.confirm_leave = true;
    Ok(Html(page.render()?).into_response())
}

/// A waiting customer leaves the list; their page then says so.
pub(super) async fn leave_list(
    State(state): State<AppState>,
    ip: ClientIp,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let (e, _, store) = wait_and_store(&state, &token).await?;
    let actor = actor(&store, "/waitlist/leave", ip);
    let token = e.token.clone();
    crate::domain::slots::waitlist::cancel(&state.db, &actor, e.merchant_id, e.id)
        .await
        .map_err(PublicError::at(&store))?;
    Ok(Redirect::to(&paths::public::waitlist(token)).into_response())
}

/// "Give the place back?", before declining an offer (works without JavaScript).
pub(super) async fn decline_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    let page = wait_page(&state, &token, true, Vec::new()).await?;
    Ok(Html(page.render()?).into_response())
}

pub(super) async fn wait_page(
    state: &AppState,
    token: &str,
    confirm_decline: bool,
    flashes: Vec<Flash>,
) -> Result<WaitPage, PublicError> {
    let (e, slot, store) = wait_and_store(state, token).await?;
    let lang = for_store(store.language);
    let tz = store.tz();
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    Ok(WaitPage {
        lang,
        token: e.token,
        service_name: service_name(&service),
        date: format::day_long(current(), local(slot.starts_at, tz).date()),
        time: clock(slot.starts_at, tz),
        status: e.status,
        position: e.position,
        places: e.places,
        booking: e.booking_reference,
        held_until: e.hold_until.map(|ms| clock(ms, tz)).unwrap_or_default(),
        confirm_decline,
        confirm_leave: false,
        flashes,
        store,
    })
}

/// The customer takes the place held for them: on to their booking's page.
pub(super) async fn accept_offer(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    answer_offer(&state, ip, &session, &token, true).await
}

/// The customer gives the held place back: it goes to the next in line.
pub(super) async fn decline_offer(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(token): Path<String>,
) -> Result<Response, PublicError> {
    answer_offer(&state, ip, &session, &token, false).await
}

/// Accepts (on to the booking, with a word of success) or declines (back to the wait's page,
/// which says it) a held offer; a refusal goes back to the wait's page with why.
pub(super) async fn answer_offer(
    state: &AppState,
    ip: ClientIp,
    session: &Session,
    token: &str,
    accept: bool,
) -> Result<Response, PublicError> {
    use crate::domain::slots::waitlist;
    let (e, _, store) = wait_and_store(state, token).await?;
    let path = if accept {
        "/waitlist/accept"
    } else {
        "/waitlist/decline"
    };
    let actor = actor(&store, path, ip);
    let back = paths::public::waitlist(&e.token);
    let answered = if accept {
        waitlist::accept(&state.db, &actor, e).await
    } else {
        waitlist::decline(&state.db, &actor, e).await
    };
    match answered {
        Ok(done) if accept => {
            flash::push(
                session,
                FlashKind::Success,
                messages::waitlist_offer_accepted(),
            )
            .await;
            let to = done.booking_reference.map_or(back, paths::public::booking);
            Ok(Redirect::to(&to).into_response())
        }
        Ok(_) => Ok(Redirect::to(&back).into_response()),
        Err(DomainError::Conflict { code, message, .. }) => {
            flash::push(session, FlashKind::Error, public_notice(code, message)).await;
            Ok(Redirect::to(&back).into_response())
        }
        Err(e) => Err(PublicError::at(&store)(e)),
    }
}

/// A wait by its token, with its slot and store.
pub(super) async fn wait_and_store(
    state: &AppState,
    token: &str,
) -> Result<
    (
        crate::domain::slots::waitlist::Entry,
        crate::domain::slots::Slot,
        Store,
    ),
    PublicError,
> {
    let e = crate::domain::slots::waitlist::by_token(&state.db, token).await?;
    let slot =
        crate::domain::slots::get(&state.db, Scope::Merchant(e.merchant_id), e.slot_id).await?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(e.merchant_id), slot.store_id).await?;
    Ok((e, slot, store))
}
