//! The change feed: a merchant's events in the order their changes committed, after a cursor.

use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::domain::trail::events::{self, Event, TypeFilter};
use crate::domain::{kernel::validate, FieldError};
use crate::web::api::{ApiCaller, ApiQuery};
use crate::web::kit::error::ApiError;
use crate::web::AppState;

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// The `next` of the previous answer; left out: from the first event.
    after: Option<String>,
    /// Event types, comma-separated; a family with `.*` (`stock.*,booking.cancelled`). Left out:
    /// all.
    types: Option<String>,
    /// At most 1000 (100 when left out).
    limit: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct EventsJson {
    events: Vec<Event>,
    /// Where to resume (`after=`): the last event's id, or the cursor given when there were none.
    next: String,
}

const LIMIT: i64 = 100;
const LIMIT_MAX: i64 = 1000;

/// The merchant's change events after a cursor, oldest first: at least once, in the order the
/// changes committed, resumable from any cursor. Every type is in the `type` enum.
#[utoipa::path(get, path = "/api/v1/events", tag = "events", operation_id = "list_events",
    params(EventsQuery),
    responses(
        (status = 200, description = "A page of events", body = EventsJson),
        (status = 422, description = "`invalid_number`, `invalid_choice`: a filter is refused", body = crate::web::api::doc::ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    caller: ApiCaller,
    ApiQuery(q): ApiQuery<EventsQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let mut errs = validate::Errors::default();
    let (after, limit) = crate::web::api::feed_page(
        &mut errs,
        q.after.as_deref(),
        q.limit.as_deref(),
        LIMIT,
        LIMIT_MAX,
    );
    let types = match TypeFilter::parse(q.types.as_deref().unwrap_or("")) {
        Ok(t) => t,
        Err(word) => {
            errs.push(FieldError::new(
                "types",
                "invalid_choice",
                crate::messages::unknown_event_type(&word),
            ));
            TypeFilter::default()
        }
    };
    if !errs.is_empty() {
        return Err(errs.refusal().into());
    }
    let list = events::feed(&state.db, caller.merchant_id, after, &types, limit).await?;
    let next = list.last().map_or(after, |e| e.id).to_string();
    Ok(Json(EventsJson { events: list, next }))
}
