//! Orders holding stock: reserve → confirm | release | expire, idempotent by order id, plus
//! returns. The order header's conditional status change decides every race: whoever moves it
//! out of RESERVED owns the lines' moves.
//!
//! This module holds the order's types and its read (`view`); `reserve` takes the hold, `settle`
//! moves it on (one transition for confirm, release and expiry), `returns` records goods coming
//! back after a sale.

pub mod aftersales;
pub mod exceptions;
pub mod gate;
pub mod read;

mod batch;
mod late;
mod reserve;
mod returns;
mod settle;

pub use batch::{hold_groups, HoldGroups, NUMBERED_FROM};
pub use late::{take_again, Retaken, Shortfall};
pub use reserve::*;
pub use returns::*;
pub use settle::*;

use std::collections::HashSet;

use crate::domain::MerchantId;
use serde::{Deserialize, Serialize};
use sqlx::{Any, FromRow, Transaction};

use crate::domain::catalog::UnitType;
use crate::domain::kernel::code_keys::CodeKeys;
use crate::domain::kernel::error::DomainResult;
use crate::domain::kernel::validate::ms_to_rfc3339;
use crate::domain::stock::{self, Buckets, Guard, Move};
use crate::domain::{Actor, DomainError, FieldError};
use crate::infra::counters::{CodeAnswer, Settle, StockAnswer, Subject};
use crate::infra::db::Db;
use crate::messages;

pub const ORDER_ID_MAX: usize = 128;
pub const MAX_LINES: usize = 100;
pub const DEFAULT_TTL_SECONDS: i64 = 15 * 60;
pub const PAYMENT_REF_MAX: usize = 128;
pub const REASON_MAX: usize = 500;

/// A payment reference as the order system sends it: trimmed, printable, at most
/// `PAYMENT_REF_MAX` characters; empty or absent is none.
pub fn payment_ref(raw: Option<&str>) -> Result<Option<String>, FieldError> {
    let Some(v) = raw.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    if v.chars().count() > PAYMENT_REF_MAX || v.chars().any(char::is_control) {
        return Err(FieldError::new(
            "payment_ref",
            "invalid_payment_ref",
            messages::bad_payment_ref(PAYMENT_REF_MAX),
        ));
    }
    Ok(Some(v.to_string()))
}

pub use crate::domain::catalog::LineHold;

#[derive(Debug, Clone)]
pub struct ItemInput {
    pub sku: String,
    pub qty: i64,
    pub warehouse: Option<String>,
    /// A line that books a place in a time slot of a service SKU (`qty` is then unused).
    pub place: Option<PlaceInput>,
}

/// A place an order books: the slot, how many places (one per booking today) and who comes.
#[derive(Debug, Clone)]
pub struct PlaceInput {
    pub slot_id: i64,
    pub places: i64,
    pub name: String,
    pub phone: String,
}

/// A booking an order made, as its answers show it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct PlaceView {
    pub reference: String,
    pub status: String,
}

#[derive(Debug, Clone)]
pub struct ReserveInput {
    pub order_id: String,
    pub items: Vec<ItemInput>,
    pub ttl_seconds: Option<i64>,
    /// The order system's customer: what they hold and bought counts against per-customer limits.
    pub customer_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct ItemView {
    pub sku: String,
    pub qty: i64,
    /// Goods: the warehouse holding the line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouse: Option<String>,
    /// Goods: how the line holds its units (`locked`, `checked` for SKUs deducted on payment,
    /// `unlimited`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<LineHold>,
    /// Vouchers of a paid order: the codes themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codes: Option<Vec<String>>,
    /// A place line: the slot booked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_id: Option<i64>,
    /// A place line: its booking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking: Option<PlaceView>,
}

/// An order's reservation as the API answers it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct ReservationView {
    pub order_id: String,
    pub status: ReservationStatus,
    pub expires_at: String,
    pub items: Vec<ItemView>,
    /// The payment that confirmed the order, as the order system named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_ref: Option<String>,
    /// Confirmed after its hold had expired, every line taken again.
    #[serde(default)]
    pub late_payment: bool,
    /// Why the hold was released, when someone said.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub release_reason: String,
}

#[derive(Debug, Clone, FromRow)]
struct Header {
    id: i64,
    #[sqlx(try_from = "String")]
    status: ReservationStatus,
    fingerprint: String,
    expires_at: i64,
    payment_ref: Option<String>,
    late_payment: i64,
    release_reason: String,
}

#[derive(Debug, Clone, FromRow)]
struct Line {
    id: i64,
    sku_id: i64,
    warehouse_id: i64,
    qty: i64,
    #[sqlx(try_from = "String")]
    hold: LineHold,
}

async fn header(db: &Db, merchant_id: MerchantId, order: &str) -> DomainResult<Option<Header>> {
    Ok(sqlx::query_as("SELECT id, status, fingerprint, expires_at, payment_ref, CAST(late_payment AS BIGINT) AS late_payment, release_reason FROM reservations WHERE merchant_id = $1 AND order_id = $2")
        .bind(merchant_id)
        .bind(order.trim())
        .fetch_optional(&db.pool)
        .await?)
}

pub async fn view(
    db: &Db,
    keys: &CodeKeys,
    merchant_id: MerchantId,
    order: &str,
) -> DomainResult<ReservationView> {
    let h = header(db, merchant_id, order)
        .await?
        .ok_or(DomainError::NotFound("reservation"))?;
    let items: Vec<(String, i64, String, String)> = sqlx::query_as(
        "SELECT s.code, l.qty, w.slug, l.hold FROM stock_reservations l
         JOIN skus s ON s.id = l.sku_id JOIN warehouses w ON w.id = l.warehouse_id
         WHERE l.reservation_id = $1 ORDER BY l.id",
    )
    .bind(h.id)
    .fetch_all(&db.pool)
    .await?;
    let mut items: Vec<ItemView> = items
        .into_iter()
        .map(|(sku, qty, warehouse, hold)| ItemView {
            sku,
            qty,
            warehouse: Some(warehouse),
            hold: LineHold::parse(&hold),
            codes: None,
            slot_id: None,
            booking: None,
        })
        .collect();
    let code_lines: Vec<(i64, String, i64)> = sqlx::query_as(
        "SELECT l.sku_id, s.code, l.qty FROM code_reservations l JOIN skus s ON s.id = l.sku_id WHERE l.reservation_id = $1 ORDER BY l.id",
    )
    .bind(h.id)
    .fetch_all(&db.pool)
    .await?;
    for (sku_id, sku, qty) in code_lines {
        // Codes are handed over once paid, and again on every read of a paid order.
        let codes = if h.status == ReservationStatus::Confirmed {
            Some(
                crate::domain::codes::codes_of_reservation(db, keys, merchant_id, h.id, sku_id)
                    .await?,
            )
        } else {
            None
        };
        items.push(ItemView {
            sku,
            qty,
            warehouse: None,
            hold: None,
            codes,
            slot_id: None,
            booking: None,
        });
    }
    // Places: the bookings the order made (a released or expired order's, cancelled).
    let places: Vec<(String, i64, String, String)> = sqlx::query_as(
        "SELECT k.code, b.slot_id, b.reference, b.status FROM bookings b
         JOIN slots s ON s.id = b.slot_id JOIN skus k ON k.id = s.sku_id
         WHERE b.reservation_id = $1 ORDER BY b.id",
    )
    .bind(h.id)
    .fetch_all(&db.pool)
    .await?;
    // A place booked again by a late payment shows its new booking only.
    let mut latest: Vec<(String, i64, String, String)> = Vec::new();
    for p in places {
        latest.retain(|l| l.1 != p.1);
        latest.push(p);
    }
    for (sku, slot_id, reference, status) in latest {
        items.push(ItemView {
            sku,
            qty: 1,
            warehouse: None,
            hold: None,
            codes: None,
            slot_id: Some(slot_id),
            booking: Some(PlaceView { reference, status }),
        });
    }
    Ok(ReservationView {
        order_id: order.trim().to_string(),
        status: h.status,
        expires_at: ms_to_rfc3339(h.expires_at),
        items,
        payment_ref: h.payment_ref,
        late_payment: h.late_payment != 0,
        release_reason: h.release_reason,
    })
}

async fn lines(tx: &mut Transaction<'_, Any>, header_id: i64) -> Result<Vec<Line>, sqlx::Error> {
    sqlx::query_as("SELECT id, sku_id, warehouse_id, qty, hold FROM stock_reservations WHERE reservation_id = $1 AND status = 'RESERVED' ORDER BY id")
        .bind(header_id)
        .fetch_all(&mut **tx)
        .await
}
