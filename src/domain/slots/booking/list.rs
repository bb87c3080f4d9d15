//! The store's bookings as a list to search: upcoming, past or cancelled; by name, phone or
//! reference; by service and staff member; a page at a time, or all of them as CSV. Reads only.

use serde::Serialize;
use sqlx::FromRow;

use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::export::{Cell, Csv};
use crate::domain::kernel::filters::like_pattern;
use crate::domain::slots::booking::BookingStatus;
use crate::domain::slots::SlotStatus;
use crate::domain::StoreId;
use crate::infra::db::Db;

/// Which bookings: those still ahead, those that took place (or were due to), or cancelled ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum When {
    #[default]
    Upcoming,
    Past,
    Cancelled,
}

impl When {
    pub fn parse(raw: &str) -> When {
        match raw {
            "past" => When::Past,
            "cancelled" => When::Cancelled,
            _ => When::Upcoming,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            When::Upcoming => "upcoming",
            When::Past => "past",
            When::Cancelled => "cancelled",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub when: When,
    /// A name, a phone number (digits are matched against the number however it was typed) or
    /// a reference; empty: everyone.
    pub text: String,
    pub sku_id: Option<i64>,
    pub staff_id: Option<i64>,
    /// A column to sort by; None: upcoming soonest first, the others latest first.
    pub sort: Option<BookingSort>,
    pub desc: bool,
}

crate::text_enum! {
    /// The columns the bookings list sorts by.
    pub enum BookingSort {
        Time = "time",
        Service = "service",
        Staff = "staff",
        Reference = "reference",
        Name = "name",
        Status = "status",
    }
}

impl BookingSort {
    /// The ORDER BY of this column: the slot's start, then the booking, break ties the same way.
    fn order_by(self, desc: bool) -> String {
        let dir = if desc { "DESC" } else { "ASC" };
        let columns: &[&str] = match self {
            BookingSort::Time => &["s.starts_at"],
            BookingSort::Service => &["k.code"],
            // Bookings without a staff member last (first when reversed): NULLs sort apart on
            // the two databases.
            BookingSort::Staff => &["CASE WHEN st.name IS NULL THEN 1 ELSE 0 END", "st.name"],
            BookingSort::Reference => &["b.reference"],
            BookingSort::Name => &["LOWER(b.customer_name)"],
            BookingSort::Status => &["b.status"],
        };
        columns
            .iter()
            .chain(&["s.starts_at", "b.id"])
            .map(|c| format!("{c} {dir}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Debug, Clone, FromRow, Serialize)]
pub struct Listed {
    pub reference: String,
    pub customer_name: String,
    pub customer_phone: String,
    pub places: i64,
    #[sqlx(try_from = "String")]
    pub status: BookingStatus,
    pub slot_id: i64,
    pub starts_at: i64,
    pub ends_at: i64,
    pub sku_code: String,
    pub staff_name: Option<String>,
    pub cancel_reason: Option<String>,
    pub source: String,
    pub from_waitlist: i64,
    pub created_at: i64,
    /// The slot's state: a live booking in a CLOSED slot is one to call.
    #[sqlx(try_from = "String")]
    pub slot_status: SlotStatus,
    /// A place held for a waiting customer who has not accepted it yet (until then).
    pub hold_until: Option<i64>,
}

/// The WHERE clause after the store ($1) and the clock ($2), and its text binds from $3 on.
fn clause(f: &Filter) -> (String, Vec<String>, Vec<i64>) {
    let mut sql = String::from("s.store_id = $1");
    sql.push_str(match f.when {
        When::Upcoming => " AND b.status <> 'CANCELLED' AND s.ends_at > $2",
        When::Past => " AND b.status <> 'CANCELLED' AND s.ends_at <= $2",
        When::Cancelled => " AND b.status = 'CANCELLED' AND $2 > 0",
    });
    let mut texts = Vec::new();
    let text = f.text.trim();
    if !text.is_empty() {
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        texts.push(like_pattern(&text.to_lowercase()));
        texts.push(like_pattern(&text.to_uppercase()));
        let mut or = String::from(
            " AND (LOWER(b.customer_name) LIKE $3 ESCAPE '\\' OR b.reference LIKE $4 ESCAPE '\\'",
        );
        // Four digits or more read as (part of) a phone number, matched in its E.164 form.
        if digits.len() >= 4 {
            texts.push(like_pattern(&digits));
            or.push_str(" OR b.customer_key LIKE $5 ESCAPE '\\'");
        }
        or.push(')');
        sql.push_str(&or);
    }
    let mut ints = Vec::new();
    let mut n = 3 + texts.len();
    if let Some(id) = f.sku_id {
        sql.push_str(&format!(" AND s.sku_id = ${n}"));
        ints.push(id);
        n += 1;
    }
    if let Some(id) = f.staff_id {
        sql.push_str(&format!(" AND s.staff_id = ${n}"));
        ints.push(id);
    }
    (sql, texts, ints)
}

const FROM: &str = "FROM bookings b JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id
     LEFT JOIN staff st ON st.id = s.staff_id";

/// How many of the store's bookings match.
pub async fn count(db: &Db, store_id: StoreId, f: &Filter) -> DomainResult<i64> {
    let (sql, texts, ints) = clause(f);
    let count_sql = format!("SELECT CAST(COUNT(*) AS BIGINT) {FROM} WHERE {sql}");
    let mut q = sqlx::query_scalar::<_, i64>(&count_sql)
        .bind(store_id)
        .bind(db.now_ms());
    for t in &texts {
        q = q.bind(t);
    }
    for i in &ints {
        q = q.bind(i);
    }
    Ok(q.fetch_one(&db.pool).await?)
}

/// One page of the store's bookings: upcoming soonest first, the others latest first.
pub async fn page(
    db: &Db,
    store_id: StoreId,
    f: &Filter,
    limit: i64,
    offset: i64,
) -> DomainResult<Vec<Listed>> {
    let (sql, texts, ints) = clause(f);
    select(
        db,
        store_id,
        f,
        &sql,
        &texts,
        &ints,
        db.now_ms(),
        Some((limit, offset)),
    )
    .await
}

/// Every matching booking, for the CSV export (at most `max`).
pub async fn all(db: &Db, store_id: StoreId, f: &Filter, max: i64) -> DomainResult<Vec<Listed>> {
    page(db, store_id, f, max, 0).await
}

#[allow(clippy::too_many_arguments)]
async fn select(
    db: &Db,
    store_id: StoreId,
    f: &Filter,
    sql: &str,
    texts: &[String],
    ints: &[i64],
    now: i64,
    page: Option<(i64, i64)>,
) -> DomainResult<Vec<Listed>> {
    let order = match (f.sort, f.when) {
        (Some(s), _) => s.order_by(f.desc),
        (None, When::Upcoming) => "s.starts_at, b.id".to_string(),
        (None, _) => "s.starts_at DESC, b.id DESC".to_string(),
    };
    let (limit, offset) = page.unwrap_or((i64::MAX, 0));
    let list_sql = format!(
        "SELECT b.reference, b.customer_name, b.customer_phone, b.places, b.status, b.slot_id,
                s.starts_at, s.ends_at, k.code AS sku_code, st.name AS staff_name, b.cancel_reason,
                b.source, CAST(b.from_waitlist AS BIGINT) AS from_waitlist, b.created_at,
                s.status AS slot_status, b.hold_until
         {FROM} WHERE {sql} ORDER BY {order} LIMIT {limit} OFFSET {offset}"
    );
    let mut q = sqlx::query_as::<_, Listed>(&list_sql)
        .bind(store_id)
        .bind(now);
    for t in texts {
        q = q.bind(t);
    }
    for i in ints {
        q = q.bind(i);
    }
    Ok(q.fetch_all(&db.pool).await?)
}

/// The bookings as CSV, times in the store's zone as `local` writes them.
pub fn csv(rows: &[Listed], local: impl Fn(i64) -> String) -> String {
    let mut c = Csv::new(&[
        "reference",
        "starts_at",
        "ends_at",
        "service",
        "staff",
        "customer_name",
        "phone",
        "places",
        "status",
        "cancel_reason",
        "from_waitlist",
        "booked_at",
    ]);
    for r in rows {
        let (starts, ends, booked) = (local(r.starts_at), local(r.ends_at), local(r.created_at));
        c.row(&[
            Cell::from(&r.reference),
            Cell::from(&starts),
            Cell::from(&ends),
            Cell::from(&r.sku_code),
            Cell::from(r.staff_name.as_deref().unwrap_or("")),
            Cell::from(&r.customer_name),
            Cell::from(&r.customer_phone),
            Cell::Num(r.places),
            Cell::from(r.status.as_str()),
            Cell::from(r.cancel_reason.as_deref().unwrap_or("")),
            Cell::from(if r.from_waitlist != 0 { "yes" } else { "no" }),
            Cell::from(&booked),
        ]);
    }
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_match_wildcards_literally() {
        assert_eq!(like_pattern("50%_off"), "%50\\%\\_off%");
        assert_eq!(like_pattern("a\\b"), "%a\\\\b%");
    }

    #[test]
    fn a_phone_search_adds_the_digits_and_the_binds_line_up() {
        let f = Filter {
            text: "138 0013".into(),
            sku_id: Some(7),
            staff_id: Some(9),
            ..Filter::default()
        };
        let (sql, texts, ints) = clause(&f);
        assert_eq!(texts.len(), 3);
        assert!(sql.contains("customer_key LIKE $5"), "{sql}");
        assert!(
            sql.contains("s.sku_id = $6") && sql.contains("s.staff_id = $7"),
            "{sql}"
        );
        assert_eq!(ints, vec![7, 9]);
    }
}
