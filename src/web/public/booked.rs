//! A customer's booking, opened by its reference: the page, the calendar file, cancelling and
//! rescheduling.

use super::*;
#[allow(unused_imports)]
use crate::domain::slots::booking::BookingStatus;
use crate::web::kit::paths;

#[derive(Template)]
#[template(path = "public/booking.html")]
pub(super) struct BookingPage {
    /// The visitor's language (see `lang`).
    pub(super) lang: Lang,
    pub(super) store: Store,
    pub(super) reference: String,
    pub(super) status: BookingStatus,
    pub(super) service: Service,
    pub(super) service_name: String,
    pub(super) duration: String,
    /// "in 2 days" / "2天后" while the slot is ahead, else empty.
    pub(super) starts_in: String,
    pub(super) date: String,
    pub(super) time: String,
    pub(super) end: String,
    pub(super) staff: String,
    pub(super) name: String,
    /// The places booked (a party).
    pub(super) places: i64,
    /// The customer may still cancel or reschedule: before the service's change cutoff.
    pub(super) can_cancel: bool,
    /// Until when ("12月3日 周四", "13:00"), in the store's timezone.
    pub(super) change_until: (String, String),
    pub(super) flashes: Vec<Flash>,
}

pub(super) async fn booking_view(
    state: &AppState,
    reference: &str,
) -> Result<(BookingPage, Store), WebError> {
    let b = booking::by_reference(&state.db, Scope::All, reference).await?;
    let slot =
        crate::domain::slots::get(&state.db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(b.merchant_id), slot.store_id).await?;
    for_store(store.language);
    let tz = store.tz();
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    let deadline = booking::change_deadline(&state.db, &b).await?;
    let page = BookingPage {
        lang: for_store(store.language),
        reference: b.reference.clone(),
        status: b.status,
        service_name: service_name(&service),
        places: b.places,
        service,
        starts_in: {
            let ahead = slot.starts_at - state.db.now_ms();
            if ahead > 0 {
                format::from_now(current(), ahead)
            } else {
                String::new()
            }
        },
        duration: format::minutes(current(), (slot.ends_at - slot.starts_at) / 60_000),
        date: format::day_long(current(), local(slot.starts_at, tz).date()),
        time: clock(slot.starts_at, tz),
        end: clock(slot.ends_at, tz),
        staff: slot.staff_name.clone().unwrap_or_default(),
        name: b.customer_name.clone(),
        can_cancel: b.status.cancellable(deadline, state.db.now_ms()),
        change_until: (
            format::day_long(current(), local(deadline, tz).date()),
            clock(deadline, tz),
        ),
        flashes: Vec::new(),
        store: store.clone(),
    };
    Ok((page, store))
}

/// The booking as a calendar file, for the customer's phone.
pub(super) async fn booking_calendar(
    State(state): State<AppState>,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let b = booking::by_reference(&state.db, Scope::All, &reference).await?;
    let slot =
        crate::domain::slots::get(&state.db, Scope::Merchant(b.merchant_id), b.slot_id).await?;
    let store =
        tenants::store_by_id(&state.db, Scope::Merchant(b.merchant_id), slot.store_id).await?;
    let lang = for_store(store.language);
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    let location = [store.name.as_str(), store.address.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    let mut description = lang.t1("public-booking-title", "reference", b.reference.as_str());
    if b.places > 1 {
        description.push_str(" · ");
        description.push_str(&lang.t1("public-party-option", "n", b.places));
    }
    if !store.phone.is_empty() {
        description.push_str(" · ");
        description.push_str(&store.phone);
    }
    let ics =
        crate::web::view::calendar::booking_ics(&crate::web::view::calendar::CalendarBooking {
            reference: &b.reference,
            cancelled: b.status == booking::BookingStatus::Cancelled,
            starts_at: slot.starts_at,
            ends_at: slot.ends_at,
            summary: &service_name(&service),
            location: &location,
            description: &description,
            store_name: &store.name,
        });
    let disposition = format!("attachment; filename=\"booking-{}.ics\"", b.reference);
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/calendar; charset=utf-8".to_string(),
            ),
            (axum::http::header::CONTENT_DISPOSITION, disposition),
        ],
        ics,
    )
        .into_response())
}

pub(super) async fn booking_page(
    State(state): State<AppState>,
    session: Session,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (mut page, _) = booking_view(&state, &reference).await?;
    page.flashes = flash::take(&session).await;
    Ok(Html(page.render()?).into_response())
}

#[derive(Template)]
#[template(path = "public/cancel.html")]
pub(super) struct CancelPage {
    /// The visitor's language (see `lang`).
    pub(super) lang: Lang,
    pub(super) store: Store,
    pub(super) reference: String,
    pub(super) service_name: String,
    pub(super) date: String,
    pub(super) time: String,
}

pub(super) async fn cancel_page(
    State(state): State<AppState>,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    if !b.can_cancel {
        return Ok(Redirect::to(&paths::public::booking(b.reference)).into_response());
    }
    let page = CancelPage {
        lang: for_store(store.language),
        store,
        reference: b.reference,
        service_name: b.service_name,
        date: b.date,
        time: b.time,
    };
    Ok(Html(page.render()?).into_response())
}

/// Past the service's change cutoff a customer's own cancel or reschedule goes back to the
/// booking's page with why; None while they may still change it.
pub(super) async fn too_late_to_change(
    state: &AppState,
    session: &Session,
    reference: &str,
) -> Result<Option<Response>, WebError> {
    let booking = booking::by_reference(&state.db, Scope::All, reference).await?;
    match booking::customer_may_change(&state.db, &booking).await {
        Ok(()) => Ok(None),
        Err(DomainError::Conflict { code, message, .. }) => {
            flash::push(session, FlashKind::Error, public_notice(code, message)).await;
            Ok(Some(
                Redirect::to(&paths::public::booking(reference)).into_response(),
            ))
        }
        Err(e) => Err(e.into()),
    }
}

pub(super) async fn cancel(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    let actor = actor(&store, "/booking/cancel", ip);
    if let Some(back) = too_late_to_change(&state, &session, &b.reference).await? {
        return Ok(back);
    }
    match booking::cancel(
        &state.db,
        &actor,
        Scope::Merchant(store.merchant_id),
        &b.reference,
        None,
    )
    .await
    {
        Ok(_) => {
            flash::push(
                &session,
                FlashKind::Success,
                messages::booking_cancelled_by_customer(),
            )
            .await
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            flash::push(&session, FlashKind::Error, public_notice(code, message)).await
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&paths::public::booking(b.reference)).into_response())
}

/// The customer's reschedule page: the nearest times of the same service with room for their
/// party, each a button.
#[derive(Template)]
#[template(path = "public/reschedule.html")]
pub(super) struct ReschedulePage {
    /// The visitor's language (see `lang`).
    pub(super) lang: Lang,
    pub(super) store: Store,
    pub(super) reference: String,
    pub(super) service_name: String,
    pub(super) date: String,
    pub(super) time: String,
    /// (day, time) of each slot it can move to.
    pub(super) choices: Vec<(String, SlotView)>,
    /// Why the last choice was refused (it filled meanwhile).
    pub(super) flashes: Vec<Flash>,
}

/// The most times the reschedule page offers.
pub(super) const RESCHEDULE_CHOICES: i64 = 12;

pub(super) async fn reschedule_page(
    State(state): State<AppState>,
    session: Session,
    Path(reference): Path<String>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    if !b.can_cancel {
        return Ok(Redirect::to(&paths::public::booking(b.reference)).into_response());
    }
    let booking = booking::by_reference(&state.db, Scope::All, &b.reference).await?;
    let slot = crate::domain::slots::get(
        &state.db,
        Scope::Merchant(store.merchant_id),
        booking.slot_id,
    )
    .await?;
    let tz = store.tz();
    let now = state.db.now_ms();
    let mut near =
        booking::nearest_free(&state.db, &slot, booking.places, RESCHEDULE_CHOICES).await?;
    // Times inside the service's minimum notice are not offered: the move would be refused.
    let notice = crate::domain::catalog::sku_by_id(
        &state.db,
        Scope::Merchant(store.merchant_id),
        slot.sku_id,
    )
    .await?
    .min_notice_minutes;
    near.retain(|s| notice <= 0 || s.starts_at - now >= notice * 60_000);
    near.sort_by_key(|s| (s.starts_at, s.id));
    let choices = near
        .iter()
        .map(|s| {
            (
                format::day_short(current(), local(s.starts_at, tz).date()),
                slot_view(s, &store, now),
            )
        })
        .collect();
    let page = ReschedulePage {
        lang: for_store(store.language),
        store,
        reference: b.reference,
        service_name: b.service_name,
        date: b.date,
        time: b.time,
        choices,
        flashes: flash::take(&session).await,
    };
    Ok(Html(page.render()?).into_response())
}

#[derive(Deserialize)]
pub struct RescheduleForm {
    #[serde(default)]
    pub(super) slot_id: String,
}

/// Moves the customer's booking to the time they chose: the new place is taken before the old one
/// is freed, and the reference stays. A time that filled meanwhile leaves the booking as it was.
pub(super) async fn reschedule(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path(reference): Path<String>,
    Form(form): Form<RescheduleForm>,
) -> Result<Response, PublicError> {
    let (b, store) = booking_view(&state, &reference).await?;
    let actor = actor(&store, "/booking/reschedule", ip);
    let target = form.slot_id.trim().parse::<i64>().unwrap_or(0);
    if let Some(back) = too_late_to_change(&state, &session, &b.reference).await? {
        return Ok(back);
    }
    match booking::move_booking(
        &state.db,
        &actor,
        Scope::Merchant(store.merchant_id),
        &b.reference,
        target,
        booking::MoveBy::Customer,
    )
    .await
    {
        Ok(_) => {
            flash::push(
                &session,
                FlashKind::Success,
                messages::booking_rescheduled(),
            )
            .await
        }
        Err(e @ (DomainError::Conflict { .. } | DomainError::Invalid(_))) => {
            let said = match e {
                DomainError::Conflict { code, message, .. } => public_notice(code, message),
                e => e.message(),
            };
            flash::push(&session, FlashKind::Error, said).await;
            return Ok(
                Redirect::to(&paths::public::booking_reschedule(b.reference)).into_response(),
            );
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Redirect::to(&paths::public::booking(b.reference)).into_response())
}
