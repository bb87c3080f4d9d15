//! A store's headline figures for the dashboard: how full today is, and this week's no-show
//! rate. Both read the same tables as the Metrics tab (open slots' places; marks on any slot), so
//! the dashboard and the tab never disagree.

use chrono::{Datelike, Duration};

use crate::domain::kernel::error::DomainResult;
use crate::domain::slots::booking::{self, SlotMetrics};
use crate::domain::slots::storefront::{day_bounds, today};
use crate::domain::tenancy::tenants::Store;
use crate::infra::db::Db;

/// Today's places and this week's marks of one store.
#[derive(Debug, Clone, Default)]
pub struct StoreToday {
    /// Places booked and offered in today's open slots (those already over included).
    pub booked: i64,
    pub capacity: i64,
    /// The week so far (from Monday, the store's clock), every service together.
    pub week: SlotMetrics,
}

impl StoreToday {
    /// The share of today's places booked; None when no slot is open today.
    pub fn fill_rate(&self) -> Option<f64> {
        (self.capacity > 0).then(|| 100.0 * self.booked as f64 / self.capacity as f64)
    }
}

pub async fn of(db: &Db, store: &Store) -> DomainResult<StoreToday> {
    let day = today(db, store);
    let (from, to) = day_bounds(store, day);
    let (booked, capacity): (i64, i64) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(booked), 0) AS BIGINT), CAST(COALESCE(SUM(capacity), 0) AS BIGINT)
         FROM slots WHERE store_id = $1 AND status = 'OPEN' AND starts_at >= $2 AND starts_at < $3",
    )
    .bind(store.id)
    .bind(from)
    .bind(to)
    .fetch_one(&db.pool)
    .await?;
    let monday = day - Duration::days(i64::from(day.weekday().num_days_from_monday()));
    let bounds = [
        day_bounds(store, monday).0,
        day_bounds(store, monday + Duration::days(7)).0,
    ];
    let mut week = SlotMetrics::default();
    for m in booking::metrics_by_period(db, store.merchant_id, store.id, &bounds)
        .await?
        .values()
    {
        week += m;
    }
    Ok(StoreToday {
        booked,
        capacity,
        week,
    })
}
