//! Booking metrics per slot and per period (the week page and the dashboard).

#[allow(unused_imports)]
use super::*;

/// Show, no-show and vacancy for the past slots of a service in a period. Places are never summed
/// across slots into a stock-like number; these are rates.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SlotMetrics {
    pub slots: i64,
    pub capacity: i64,
    pub booked: i64,
    pub attended: i64,
    pub no_show: i64,
    /// Of the no-shows, those the store's automatic no-show marked (nobody marked them).
    pub auto_no_show: i64,
    pub unmarked: i64,
}

impl std::ops::AddAssign<&SlotMetrics> for SlotMetrics {
    fn add_assign(&mut self, m: &SlotMetrics) {
        self.slots += m.slots;
        self.capacity += m.capacity;
        self.booked += m.booked;
        self.attended += m.attended;
        self.no_show += m.no_show;
        self.auto_no_show += m.auto_no_show;
        self.unmarked += m.unmarked;
    }
}

impl SlotMetrics {
    pub fn show_rate(&self) -> Option<f64> {
        let marked = self.attended + self.no_show;
        (marked > 0).then(|| 100.0 * self.attended as f64 / marked as f64)
    }
    pub fn no_show_rate(&self) -> Option<f64> {
        let marked = self.attended + self.no_show;
        (marked > 0).then(|| 100.0 * self.no_show as f64 / marked as f64)
    }
    pub fn vacancy_rate(&self) -> Option<f64> {
        (self.capacity > 0)
            .then(|| 100.0 * (self.capacity - self.booked) as f64 / self.capacity as f64)
    }
}

/// One slot of [`metrics_by_period`]'s query with its marks counted.
#[derive(FromRow)]
pub(super) struct PeriodRow {
    pub(super) sku_id: i64,
    pub(super) starts_at: i64,
    pub(super) capacity: i64,
    pub(super) booked: i64,
    #[sqlx(try_from = "String")]
    pub(super) status: SlotStatus,
    pub(super) attended: i64,
    pub(super) no_show: i64,
    pub(super) auto_no_show: i64,
    pub(super) unmarked: i64,
}

/// The metrics of every service of a store in consecutive periods: `bounds` are the periods'
/// edges (n + 1 instants for n periods, ascending), and the answer maps (SKU id, period index) to
/// that period's figures. Slots that have not started yet do not count. One grouped query, one row
/// per slot: summing into periods happens here because period edges are local midnights, which
/// SQL cannot compute the same way on both databases.
pub async fn metrics_by_period(
    db: &Db,
    merchant_id: MerchantId,
    store_id: StoreId,
    bounds: &[i64],
) -> DomainResult<std::collections::HashMap<(i64, usize), SlotMetrics>> {
    let mut out = std::collections::HashMap::new();
    let (Some(&from), Some(&last)) = (bounds.first(), bounds.last()) else {
        return Ok(out);
    };
    let to = last.min(db.now_ms());
    let rows: Vec<PeriodRow> = sqlx::query_as(
        "SELECT s.sku_id, s.starts_at, s.capacity, s.booked, s.status,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'ATTENDED' THEN b.places ELSE 0 END), 0) AS BIGINT) AS attended,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'NO_SHOW' THEN b.places ELSE 0 END), 0) AS BIGINT) AS no_show,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'NO_SHOW' AND b.marked_by = 'auto' THEN b.places ELSE 0 END), 0) AS BIGINT) AS auto_no_show,
                CAST(COALESCE(SUM(CASE WHEN b.status = 'BOOKED' THEN b.places ELSE 0 END), 0) AS BIGINT) AS unmarked
         FROM slots s LEFT JOIN bookings b ON b.slot_id = s.id
         WHERE s.merchant_id = $1 AND s.store_id = $2 AND s.starts_at >= $3 AND s.starts_at < $4
         GROUP BY s.id, s.sku_id, s.starts_at, s.capacity, s.booked, s.status",
    )
    .bind(merchant_id)
    .bind(store_id)
    .bind(from)
    .bind(to)
    .fetch_all(&db.pool)
    .await?;
    for r in rows {
        let PeriodRow {
            sku_id,
            starts_at,
            capacity,
            booked,
            status,
            attended,
            no_show,
            auto_no_show,
            unmarked,
        } = r;
        // The period whose edges hold the start: the last edge at or before it.
        let period = bounds
            .partition_point(|&b| b <= starts_at)
            .saturating_sub(1);
        let m: &mut SlotMetrics = out.entry((sku_id, period)).or_default();
        // Places count on open slots only (a closed slot offered none); marks count on every slot.
        if status == SlotStatus::Open {
            m.slots += 1;
            m.capacity += capacity;
            m.booked += booked;
        }
        m.attended += attended;
        m.no_show += no_show;
        m.auto_no_show += auto_no_show;
        m.unmarked += unmarked;
    }
    Ok(out)
}
