//! A store's booking pages: the store's days and times, a slot, and the booking form.

use super::*;
#[allow(unused_imports)]
use crate::web::kit::paths;

#[derive(Template)]
#[template(path = "public/store.html", blocks = ["picker"])]
pub(super) struct StorePage {
    /// The visitor's language (see `lang`).
    pub(super) lang: Lang,
    /// The picker alone was asked for: the language switcher comes along out of band, so that
    /// its links keep the newly chosen day.
    pub(super) switch_oob: bool,
    pub(super) store: Store,
    pub(super) services: Vec<Service>,
    pub(super) service: String,
    pub(super) days: Vec<DayView>,
    /// Empty cells before the first day, so that days sit under their weekday (Monday first).
    pub(super) pad: Vec<()>,
    pub(super) weekdays: [&'static str; 7],
    /// The months the window spans, as its heading: "2026年12月 – 2027年1月".
    pub(super) months: String,
    pub(super) day: String,
    pub(super) day_label: String,
    pub(super) times: Vec<TimeGroup>,
}

#[derive(Deserialize, Default)]
pub struct PickQuery {
    #[serde(default)]
    pub(super) service: String,
    #[serde(default)]
    pub(super) day: String,
}

pub(super) async fn store_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(store): Path<String>,
    Query(q): Query<PickQuery>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store).await?;
    let services = storefront::services(&state.db, &store).await?;
    let today = storefront::today(&state.db, &store);
    // The days offered are the window the schedule makes slots for.
    let window = state.config.serve.slot_window_days.max(1);
    let service = services
        .iter()
        .find(|s| s.code == q.service)
        .or(services.first())
        .cloned();
    let room = match &service {
        Some(s) => storefront::days_with_room(&state.db, &store, s.sku_id, today, window).await?,
        None => Default::default(),
    };
    // The day asked for; without one, the first day with a free time (today may have none left).
    let day = NaiveDate::parse_from_str(q.day.trim(), "%Y-%m-%d")
        .ok()
        .filter(|d| *d >= today && *d < today + chrono::Duration::days(window))
        .or_else(|| room.iter().min().copied())
        .unwrap_or(today);
    let now = state.db.now_ms();
    let slots = match &service {
        Some(s) => storefront::day_slots(&state.db, &store, s.sku_id, day)
            .await?
            .iter()
            .map(|x| slot_view(x, &store, now))
            .collect(),
        None => Vec::new(),
    };
    let days = (0..window)
        .map(|i| {
            let d = today + chrono::Duration::days(i);
            DayView {
                date: d.format("%Y-%m-%d").to_string(),
                label: format::day_short(current(), d),
                number: chrono::Datelike::day(&d),
                selected: d == day,
                has_room: room.contains(&d),
                month: if i == 0 || chrono::Datelike::day(&d) == 1 {
                    format::month(current(), d)
                } else {
                    String::new()
                },
            }
        })
        .collect();
    let pad = vec![(); chrono::Datelike::weekday(&today).num_days_from_monday() as usize];
    let last = today + chrono::Duration::days(window - 1);
    let ym = |d: NaiveDate| (chrono::Datelike::year(&d), chrono::Datelike::month(&d));
    let months = if ym(last) == ym(today) {
        format::month(current(), today)
    } else {
        format!(
            "{} – {}",
            format::month(current(), today),
            format::month(current(), last)
        )
    };
    let page = StorePage {
        lang: for_store(store.language),
        switch_oob: crate::web::kit::page::is_htmx(&headers)
            && headers.get("HX-Target").is_some_and(|t| t == "picker"),
        services,
        service: service.map(|s| s.code).unwrap_or_default(),
        days,
        pad,
        months,
        weekdays: crate::domain::slots::schedule::WEEKDAYS,
        day: day.format("%Y-%m-%d").to_string(),
        day_label: format::day_long(current(), day),
        times: group_by_time(slots),
        store,
    };
    Ok(answer_to(&headers, &page, Part::Target("picker"), |p| {
        p.as_picker().render()
    })?)
}

#[derive(Template)]
#[template(path = "public/slot.html")]
pub(super) struct SlotPage {
    /// The visitor's language (see `lang`).
    pub(super) lang: Lang,
    pub(super) store: Store,
    pub(super) slot: SlotView,
    pub(super) service: Service,
    /// The slot's length ("60分钟"): what the customer books, whatever the service's usual one.
    pub(super) duration: String,
    pub(super) date: String,
    /// The slot's local day (`YYYY-MM-DD`): "all times" goes back to it.
    pub(super) day: String,
    pub(super) name: String,
    pub(super) phone: String,
    /// The party size chosen, and the choices offered (1 up to the service's party size or the
    /// places left, whichever is smaller).
    pub(super) places: i64,
    pub(super) party: Vec<i64>,
    pub(super) idempotency_key: String,
    pub(super) errors: crate::web::view::Errs,
    /// Why the slot cannot be taken, when it cannot.
    pub(super) refusal: Option<String>,
    /// Why the last submit was refused although the slot may still be open (already booked,
    /// too many bookings, a used form), and its stable code.
    pub(super) notice: Option<String>,
    pub(super) refusal_code: Option<&'static str>,
    pub(super) alternatives: Vec<(String, SlotView)>,
    /// A full slot ahead: its waiting list takes parties of these sizes.
    pub(super) wait_party: Vec<i64>,
}

impl SlotPage {
    /// Refused at a cap: the store's phone is offered, since staff can still book.
    pub(super) fn at_a_cap(&self) -> bool {
        matches!(
            self.refusal_code,
            Some(crate::domain::slots::booking::TOO_MANY_BOOKINGS)
                | Some(crate::domain::slots::waitlist::TOO_MANY_WAITS)
        )
    }
}

pub(super) async fn slot_page_for(
    state: &AppState,
    store: Store,
    slot: Slot,
) -> Result<SlotPage, WebError> {
    let now = state.db.now_ms();
    let tz = store.tz();
    let view = slot_view(&slot, &store, now);
    let refusal = if view.bookable {
        None
    } else if slot.status == SlotStatus::Closed {
        Some(messages::slot_not_available(
            slot.public_note.as_deref().unwrap_or(""),
        ))
    } else if slot.starts_at <= now {
        Some(messages::slot_started())
    } else {
        Some(messages::slot_full())
    };
    let service = storefront::service(&state.db, &store, slot.sku_id).await?;
    // Too soon for the service's notice: no form, and the nearest times that are not.
    let notice = service.min_notice_minutes;
    let refusal = refusal.or_else(|| {
        (notice > 0 && slot.starts_at - now < notice * 60_000)
            .then(|| messages::too_late_to_book(notice))
    });
    let alternatives = if refusal.is_some() {
        booking::nearest_free(&state.db, &slot, 1, 5)
            .await?
            .iter()
            .filter(|s| s.starts_at - now >= notice * 60_000)
            .map(|s| {
                (
                    format::day_short(current(), local(s.starts_at, tz).date()),
                    slot_view(s, &store, now),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let party = (1..=service
        .max_places
        .min(slot.remaining())
        .clamp(1, PARTY_CHOICES))
        .collect();
    // Full (not closed, not started): the customer may wait for a place instead.
    let full = slot.status == SlotStatus::Open && slot.remaining() == 0 && slot.starts_at > now;
    let wait_party = if full {
        (1..=service.max_places.clamp(1, PARTY_CHOICES)).collect()
    } else {
        Vec::new()
    };
    Ok(SlotPage {
        lang: for_store(store.language),
        slot: view,
        service,
        duration: format::minutes(current(), (slot.ends_at - slot.starts_at) / 60_000),
        date: format::day_long(current(), local(slot.starts_at, tz).date()),
        day: local(slot.starts_at, tz)
            .date()
            .format("%Y-%m-%d")
            .to_string(),
        name: String::new(),
        phone: String::new(),
        places: 1,
        party,
        idempotency_key: form_token(state, slot.id),
        errors: crate::web::view::Errs::default(),
        refusal,
        notice: None,
        refusal_code: None,
        alternatives,
        wait_party,
        store,
    })
}

/// The most party sizes the picker lists; a service taking larger parties is booked by staff.
pub(super) const PARTY_CHOICES: i64 = 20;

pub(super) async fn slot_page(
    State(state): State<AppState>,
    Path((store, id)): Path<(String, String)>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store).await?;
    let slot = slot_of(&state, &store, &id).await?;
    Ok(Html(slot_page_for(&state, store, slot).await?.render()?).into_response())
}

/// A slot of this store by the id in its address; a bad or foreign id is "not found" on the
/// store's page.
pub(super) async fn slot_of(
    state: &AppState,
    store: &Store,
    id: &str,
) -> Result<Slot, PublicError> {
    let id: i64 = id
        .parse()
        .map_err(|_| PublicError::at(store)(DomainError::NotFound("slot")))?;
    storefront::slot(&state.db, store, id)
        .await
        .map_err(PublicError::at(store))
}

/// The booking form's token: issued by the server for one slot, signed, and used once. It becomes
/// the booking's idempotency key (so a double submit books once), in a space of its own: a client
/// can neither choose a key nor send another customer's (which handed out their booking).
pub(super) fn form_token(state: &AppState, slot_id: i64) -> String {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let mac = hex::encode(state.codes.sign_form(&format!("book:{slot_id}:{nonce}")));
    format!("{nonce}.{mac}")
}

/// The nonce of a token issued for this slot (the booking's key, in the public key space), or
/// None for one we did not issue.
pub(super) fn token_key(state: &AppState, slot_id: i64, token: &str) -> Option<String> {
    let (nonce, mac) = token.trim().split_once('.')?;
    let same = state
        .codes
        .form_signed(&format!("book:{slot_id}:{nonce}"), mac);
    same.then(|| nonce.to_string())
}

/// The session remembers the keys of the forms it sent, so that only the browser that booked
/// sees the booking again on a repeated submit.
pub(super) const SENT_FORMS: &str = "sent_booking_forms";

#[derive(Deserialize)]
pub struct BookForm {
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) phone: String,
    /// The party size; left out (an old form) books one place.
    #[serde(default)]
    pub(super) places: String,
    #[serde(default)]
    pub(super) idempotency_key: String,
}

impl BookForm {
    /// The party size as chosen: empty is one place; anything not a number is 0, which the
    /// domain refuses beside the field.
    pub(super) fn places(&self) -> i64 {
        match self.places.trim() {
            "" => 1,
            p => p.parse().unwrap_or(0),
        }
    }
}

/// The booking key a submitted form may use: a token we issued for this slot and not already
/// used by another browser. None: a forged, foreign or used token.
pub(super) async fn usable_key(
    state: &AppState,
    store: &Store,
    slot_id: i64,
    token: &str,
    sent: &[String],
) -> Result<Option<String>, WebError> {
    let Some(key) = token_key(state, slot_id, token) else {
        return Ok(None);
    };
    let elsewhere = !sent.contains(&key)
        && booking::key_used(&state.db, store.merchant_id, &booking::public_key(&key)).await?;
    Ok((!elsewhere).then_some(key))
}

/// A public booking: the form's fields, its key, and the store's caps per phone and address.
pub(super) fn book_input(
    state: &AppState,
    store: &Store,
    slot_id: i64,
    form: &BookForm,
    key: &str,
    ip: &ClientIp,
) -> BookInput {
    BookInput {
        slot_id,
        places: form.places(),
        name: form.name.clone(),
        phone: form.phone.clone(),
        idempotency_key: Some(key.to_string()),
        region: store.phone_region(),
        public: Some(public_caps(state, store, ip)),
        staff: None,
    }
}

/// The caps a customer on the public pages books and waits under: per phone number and per
/// client address (an IPv6 client by its /64), in this store.
pub(super) fn public_caps(state: &AppState, store: &Store, ip: &ClientIp) -> booking::PublicCaps {
    booking::PublicCaps {
        store_id: store.id,
        client_ip: crate::domain::kernel::scope::address_key(&ip.0),
        per_phone: state.config.serve.max_bookings_per_phone,
        per_address: state.config.serve.max_bookings_per_address,
    }
}

pub(super) async fn book(
    State(state): State<AppState>,
    ip: ClientIp,
    session: Session,
    Path((store_slug, id)): Path<(String, String)>,
    Form(form): Form<BookForm>,
) -> Result<Response, PublicError> {
    let store = store_at(&state, &store_slug).await?;
    let slot = slot_of(&state, &store, &id).await?;
    let mut sent: Vec<String> = session
        .get(SENT_FORMS)
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    let Some(key) = usable_key(&state, &store, slot.id, &form.idempotency_key, &sent).await? else {
        // Nothing booked, nothing shown: a fresh form.
        let why = Refused::Conflict {
            code: "form_used",
            notice: messages::form_used(),
        };
        return Ok(refused(&state, store, slot, form, why).await?);
    };
    let input = book_input(&state, &store, slot.id, &form, &key, &ip);
    let actor = actor(&store, &paths::public::book(store_slug), ip);
    match booking::book(&state.db, &actor, store.merchant_id, input).await {
        Ok(b) => {
            if !sent.contains(&key) {
                sent.push(key);
            }
            // The last few are enough for a double submit.
            let keep = sent.len().saturating_sub(20);
            let _ = session.insert(SENT_FORMS, &sent[keep..]).await;
            let reference = b.booking.reference;
            let notice = messages::booking_confirmed(&reference);
            flash::push(&session, FlashKind::Success, notice).await;
            Ok(Redirect::to(&paths::public::booking(reference)).into_response())
        }
        Err(DomainError::Invalid(errors)) => {
            Ok(refused(&state, store, slot, form, Refused::Fields(errors)).await?)
        }
        Err(DomainError::Conflict { code, message, .. }) => {
            let fresh = storefront::slot(&state.db, &store, slot.id).await?;
            let notice = public_notice(code, message);
            let why = Refused::Conflict { code, notice };
            Ok(refused(&state, store, fresh, form, why).await?)
        }
        Err(e) => Err(e.into()),
    }
}
