//! A hot slot's bookings in groups: requests that arrive together take their places in one
//! transaction, as if each had booked alone in the order they arrived.

#[allow(unused_imports)]
use super::*;

/// The groups of bookings, by (merchant, slot).
pub type BookGroups = crate::domain::kernel::groups::Groups<
    (MerchantId, i64),
    BookLine,
    Result<GroupBooked, DomainError>,
>;

/// What a group made of a booking: its id and reference, and the slot as the group read it
/// (shared by the group's bookings) for the answer.
#[derive(Clone)]
pub struct GroupBooked {
    pub(super) id: i64,
    pub(super) reference: String,
    pub(super) slot: Arc<Slot>,
}

impl crate::domain::kernel::groups::Outcome for Result<GroupBooked, DomainError> {
    fn made(&self) -> bool {
        self.is_ok()
    }
}

/// One booking of a group: what its transaction writes.
#[derive(Clone)]
pub struct BookLine {
    pub(super) actor: Actor,
    pub(super) name: String,
    pub(super) phone_shown: String,
    pub(super) customer_key: String,
    pub(super) key: Option<String>,
    pub(super) places: i64,
    pub(super) now: i64,
    /// The language of the request: a refusal the group gives is written in it.
    pub(super) lang: crate::i18n::Lang,
}

pub(super) fn book_group(
    db: Db,
    (merchant_id, slot_id): (MerchantId, i64),
    lines: Vec<BookLine>,
) -> crate::domain::kernel::groups::Answers<Result<GroupBooked, DomainError>> {
    Box::pin(async move {
        let made = match book_together(&db, merchant_id, slot_id, &lines).await {
            Ok(Together::Short { written }) => {
                fit_together(&db, merchant_id, slot_id, &lines, &written).await
            }
            Ok(Together::Answered(answers)) => Ok(answers),
            Err(e) => Err(e),
        };
        made.unwrap_or_else(|e| {
            tracing::warn!(error = %e, bookings = lines.len(), "a group of bookings rolled back; each is made alone");
            Vec::new()
        })
    })
}

/// Each booking's answer from a group (None: made alone).
pub(super) type GroupAnswers = Vec<Option<Result<GroupBooked, DomainError>>>;

/// How a group's transaction ended.
pub(super) enum Together {
    Answered(GroupAnswers),
    /// The slot could not take the group's places: nothing was written. The bookings it would
    /// have written (the others are repeats or customers booked already), by index.
    Short {
        written: Vec<usize>,
    },
}

/// Looks at the slot, the first included, at most this many times after a group's places did
/// not fit.
pub(super) const FIT_TRIES: usize = 4;

/// After a group's places did not fit: the slot as it is now decides. Alone, in arrival order,
/// each booking that fits what is left would be made and each that does not refused; so those
/// that fit are made together once more, and the others are refused together once a look at the
/// slot has no room for any of them. A slot with no room even for the smallest refuses them at
/// once. When the bookings that fitted do not fit any more (another group, of this instance or
/// another, took the places meanwhile: at a sell-out the usual case), the slot is looked at again,
/// up to `FIT_TRIES` looks in all; made alone instead, every one of them would queue on the slot's
/// row for its own answer (that queue was the hot slot's p99). What is still undecided then goes
/// alone, and so does everything when the UPDATE was refused for another reason than places (a
/// freeze, the sale window: every booking fits the look, or the places it asked are still there).
pub(super) async fn fit_together(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    lines: &[BookLine],
    written: &[usize],
) -> Result<GroupAnswers, sqlx::Error> {
    let mut answers: GroupAnswers = (0..lines.len()).map(|_| None).collect();
    // Only the bookings the first try wrote are decided here: one it left out (a twin of another
    // in the group, by key or customer) is made alone, after its twin.
    let mut pending: Vec<usize> = written.to_vec();
    // The places a try just now asked for and did not get.
    let mut missed: Option<i64> = None;
    for look in 0..FIT_TRIES {
        if pending.is_empty() {
            break;
        }
        match fit_once(
            db,
            merchant_id,
            slot_id,
            lines,
            &mut pending,
            &mut answers,
            missed,
        )
        .await
        {
            Ok(Fit::Again(asked)) => missed = asked,
            Ok(Fit::Done) => break,
            // Nothing committed yet: the caller makes every booking alone.
            Err(e) if answers.iter().all(Option::is_none) => return Err(e),
            Err(e) => {
                // Some are booked already and must hear so: the rest go alone.
                tracing::warn!(error = %e, look, "a group's later look failed; the rest are made alone");
                break;
            }
        }
    }
    Ok(answers)
}

/// What one look at the slot came to.
pub(super) enum Fit {
    /// Decided what it could; look again (`Some`: the places a try asked and did not get).
    Again(Option<i64>),
    /// Nothing more to decide together: what is pending goes alone.
    Done,
}

/// One look of `fit_together`: refuses every pending booking when none fits, else books together
/// those that fit, in arrival order. Decided bookings leave `pending` with their answer.
pub(super) async fn fit_once(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    lines: &[BookLine],
    pending: &mut Vec<usize>,
    answers: &mut GroupAnswers,
    missed: Option<i64>,
) -> Result<Fit, sqlx::Error> {
    let slot = match slots::get(db, Scope::Merchant(merchant_id), slot_id).await {
        Ok(slot) => slot,
        Err(DomainError::Db(e)) => return Err(e),
        Err(_) => return Ok(Fit::Done),
    };
    let shut = slot.status != SlotStatus::Open || slot.started(db.now_ms());
    let mut left = slot.remaining();
    let smallest = pending.iter().map(|&i| lines[i].places).min().unwrap_or(1);
    if shut || smallest > left {
        let those: Vec<BookLine> = pending.iter().map(|&i| lines[i].clone()).collect();
        let refused = refuse_together(db, merchant_id, &slot, &those).await?;
        for (&i, a) in pending.iter().zip(refused) {
            answers[i] = a;
        }
        pending.clear();
        return Ok(Fit::Done);
    }
    if slot.frozen_finding_id.is_some() || missed.is_some_and(|asked| asked <= left) {
        // Not for want of places: alone, each hears why.
        return Ok(Fit::Done);
    }
    let mut taken = Vec::new();
    for &i in pending.iter() {
        if lines[i].places <= left {
            left -= lines[i].places;
            taken.push(i);
        }
    }
    if taken.len() == pending.len() {
        // Every booking fits: on the first look, the UPDATE refused for another reason (the sale
        // window), which each hears alone; later, places came back (a cancel), and alone each is
        // made.
        return Ok(Fit::Done);
    }
    let subset: Vec<BookLine> = taken.iter().map(|&i| lines[i].clone()).collect();
    match book_together(db, merchant_id, slot_id, &subset).await? {
        Together::Answered(mut made) => {
            made.resize_with(subset.len(), || None);
            for (&i, a) in taken.iter().zip(made) {
                answers[i] = a;
            }
            // The others did not fit what was left before those were made: the next look
            // refuses those that still do not fit.
            pending.retain(|i| !taken.contains(i));
            Ok(Fit::Again(None))
        }
        Together::Short { written: wrote } => {
            // Taken meanwhile, most likely (the next look tells). Those the try did not write
            // (known by now: a repeat) go alone.
            let unwritten: Vec<usize> = (0..subset.len())
                .filter(|k| !wrote.contains(k))
                .map(|k| taken[k])
                .collect();
            pending.retain(|i| !unwritten.contains(i));
            let asked = wrote.iter().map(|&k| subset[k].places).sum();
            Ok(Fit::Again(Some(asked)))
        }
    }
}

/// A group's transaction: one read of the slot, then the bookings (one INSERT, their audit rows
/// and events with them on PostgreSQL), one conditional update of the slot for their places, one
/// COMMIT. A booking a unique index refuses (its key used, its customer booked, twice in the
/// group) is left out, to be answered alone; when the slot is unknown or cannot take the
/// bookings, nothing is written and each is made alone. A slot that has no room for the smallest
/// booking refuses the group at once (`refuse_together`).
pub(super) async fn book_together(
    db: &Db,
    merchant_id: MerchantId,
    slot_id: i64,
    lines: &[BookLine],
) -> Result<Together, sqlx::Error> {
    // Before any write lock, as each booking alone reads it first. The conditional UPDATE below
    // still decides.
    let slot = match slots::get(db, Scope::Merchant(merchant_id), slot_id).await {
        Ok(slot) => Arc::new(slot),
        Err(DomainError::Db(e)) => return Err(e),
        Err(_) => return Ok(Together::Answered(Vec::new())),
    };
    let smallest = lines.iter().map(|l| l.places).min().unwrap_or(1);
    let first = lines
        .iter()
        .map(|l| l.now)
        .min()
        .unwrap_or_else(|| db.now_ms());
    if slot.status != SlotStatus::Open
        || slot.booked + smallest > slot.capacity
        || slot.started(first)
    {
        return Ok(Together::Answered(
            refuse_together(db, merchant_id, &slot, lines).await?,
        ));
    }
    let references: Vec<String> = lines.iter().map(|_| new_reference()).collect();
    let mut tx = db.begin_write().await?;
    let booked = write_group(
        &mut tx,
        db.dialect,
        (merchant_id, &slot),
        lines,
        &references,
    )
    .await?;
    let ids: std::collections::HashMap<&str, i64> =
        booked.iter().map(|(id, r)| (r.as_str(), *id)).collect();
    let sum: i64 = lines
        .iter()
        .zip(&references)
        .filter(|(_, r)| ids.contains_key(r.as_str()))
        .map(|(l, _)| l.places)
        .sum();
    if sum == 0 {
        return Ok(Together::Answered(Vec::new()));
    }
    // The slot must be open to every booking of the group at its own instant: not started at the
    // latest, on sale at the earliest and at the latest (a sale opening or closing in between sends
    // the group alone).
    let last = lines.iter().map(|l| l.now).max().unwrap_or(first);
    let took = take_group_places(&mut tx, (merchant_id, slot_id), sum, (first, last)).await?;
    if !took {
        tx.rollback().await?;
        let written = references
            .iter()
            .enumerate()
            .filter(|(_, r)| ids.contains_key(r.as_str()))
            .map(|(i, _)| i)
            .collect();
        return Ok(Together::Short { written });
    }
    tx.commit().await?;
    Ok(Together::Answered(
        references
            .into_iter()
            .map(|reference| {
                ids.get(reference.as_str()).map(|&id| {
                    Ok(GroupBooked {
                        id,
                        reference,
                        slot: slot.clone(),
                    })
                })
            })
            .collect(),
    ))
}

/// Writes a group's bookings, and their audit rows and events, in the transaction (one statement
/// on PostgreSQL). A booking a unique index refuses is left out: returns the ones written, by id
/// and reference.
async fn write_group(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    dialect: crate::infra::db::Dialect,
    (merchant_id, slot): (MerchantId, &Slot),
    lines: &[BookLine],
    references: &[String],
) -> Result<Vec<(i64, String)>, sqlx::Error> {
    use crate::infra::db::{json_rows, Dialect};
    use serde_json::{json, Value};
    let slot_id = slot.id;
    // Written in the order of their customers (and keys): two groups of the slot in flight then
    // wait for each other's rows in one order, never in a circle (a deadlock, which PostgreSQL breaks
    // only after a second).
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| {
        (&lines[a].customer_key, &lines[a].key).cmp(&(&lines[b].customer_key, &lines[b].key))
    });
    let rows: Vec<Value> = order
        .iter()
        .map(|&i| (&lines[i], &references[i]))
        .map(|(l, reference)| {
            let data =
                json!({"before": null, "after": "BOOKED", "slot_id": slot_id, "places": l.places});
            json!({"reference": reference, "name": l.name, "phone": l.phone_shown,
                "customer_key": l.customer_key, "idempotency_key": l.key, "source": l.actor.source,
                "at": l.now, "places": l.places, "actor": l.actor.label, "ip": l.actor.ip,
                "sku_id": slot.sku_id, "data": data.to_string()})
        })
        .collect();
    let cols = [
        ("reference", "text"),
        ("name", "text"),
        ("phone", "text"),
        ("customer_key", "text"),
        ("idempotency_key", "text"),
        ("source", "text"),
        ("at", "bigint"),
        ("places", "bigint"),
        ("actor", "text"),
        ("ip", "text"),
        ("sku_id", "bigint"),
        ("data", "text"),
    ];
    let x = json_rows(dialect, 3, &cols);
    let insert = format!(
        "INSERT INTO bookings (merchant_id, slot_id, reference, customer_name, customer_phone, customer_key, status,
            idempotency_key, source, created_at, updated_at, places)
         SELECT $1, $2, x.reference, x.name, x.phone, x.customer_key, 'BOOKED', x.idempotency_key, x.source, x.at,
            x.at, x.places FROM {x} WHERE true
         ON CONFLICT DO NOTHING RETURNING id, reference"
    );
    let audit = crate::domain::trail::audit::Row {
        merchant_id: "$1",
        actor: "x.actor",
        action: "'booking.create'",
        subject: "'booking:' || x.reference",
        detail: "'slot:' || CAST($2 AS TEXT)",
        source: "x.source",
        ip: "x.ip",
        at: "x.at",
    };
    let event =
        crate::domain::trail::events::Row::new("$1", "$4", ("'booking'", "x.reference"), "x.at")
            .sku("x.sku_id")
            .data("x.data");
    let booked: Vec<(i64, String)> = if dialect == Dialect::Postgres {
        // One statement for the rows that do not depend on the slot's count.
        sqlx::query_as(&format!(
            "WITH x AS (SELECT * FROM {x}),
             b AS ({}),
             a AS ({}),
             e AS ({})
             SELECT id, reference FROM b",
            insert.replace(&format!("FROM {x} WHERE true"), "FROM x WHERE true"),
            audit.insert("FROM x JOIN b USING (reference)"),
            event.insert("FROM x JOIN b USING (reference)")
        ))
        .bind(merchant_id)
        .bind(slot_id)
        .bind(Value::Array(rows).to_string())
        .bind(EventType::BookingBooked.as_str())
        .fetch_all(&mut **tx)
        .await?
    } else {
        let booked: Vec<(i64, String)> = sqlx::query_as(&insert)
            .bind(merchant_id)
            .bind(slot_id)
            .bind(serde_json::to_string(&rows).unwrap_or_default())
            .fetch_all(&mut **tx)
            .await?;
        // SQLite writes one transaction at a time: the audit rows and events follow in their own
        // statements, for the bookings written (by their reference).
        let kept: Vec<&Value> = rows
            .iter()
            .filter(|v| {
                booked
                    .iter()
                    .any(|(_, r)| v["reference"].as_str() == Some(r))
            })
            .collect();
        let kept = serde_json::to_string(&kept).unwrap_or_default();
        sqlx::query(&audit.insert(&format!("FROM {x}")))
            .bind(merchant_id)
            .bind(slot_id)
            .bind(&kept)
            .execute(&mut **tx)
            .await?;
        sqlx::query(&event.insert(&format!("FROM {x}")))
            .bind(merchant_id)
            .bind(slot_id)
            .bind(&kept)
            .bind(EventType::BookingBooked.as_str())
            .execute(&mut **tx)
            .await?;
        booked
    };
    Ok(booked)
}

/// The group's places, all or none, by the slot's conditional UPDATE: open, room for `sum`, not
/// started at the latest booking's instant, on sale at the earliest's and the latest's (a sale
/// opening or closing in between sends the group alone).
async fn take_group_places(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    (merchant_id, slot_id): (MerchantId, i64),
    sum: i64,
    (first, last): (i64, i64),
) -> Result<bool, sqlx::Error> {
    let took = sqlx::query(&format!(
        "UPDATE slots SET booked = booked + $4, updated_at = $1
         WHERE id = $2 AND merchant_id = $3 AND status = 'OPEN' AND booked + $4 <= capacity AND starts_at > $1
           AND frozen_finding_id IS NULL AND {} AND {}",
        crate::domain::catalog::sale::on_sale_sql("slots.sku_id", "$1"),
        crate::domain::catalog::sale::on_sale_sql("slots.sku_id", "$5")
    ))
    .bind(last)
    .bind(slot_id)
    .bind(merchant_id)
    .bind(sum)
    .bind(first)
    .execute(&mut **tx)
    .await?;
    Ok(took.rows_affected() == 1)
}

/// A group on a slot seen without room for any of its bookings, closed or started (before any
/// write): each booking hears the refusal it would have heard alone, from one look-up for the
/// whole group. Only a repeat (its key used) or a customer already booked in the slot goes
/// alone, to be answered with that booking; alone, those are asked before the slot's refusal.
pub(super) async fn refuse_together(
    db: &Db,
    merchant_id: MerchantId,
    slot: &Slot,
    lines: &[BookLine],
) -> Result<GroupAnswers, sqlx::Error> {
    use crate::infra::db::json_rows;
    use serde_json::{json, Value};
    let asked: Vec<Value> = lines
        .iter()
        .map(|l| json!({"customer_key": l.customer_key, "idempotency_key": l.key}))
        .collect();
    let known: Vec<(Option<String>, String)> = sqlx::query_as(&format!(
        "SELECT b.idempotency_key, b.customer_key FROM bookings b
         WHERE b.merchant_id = $1 AND (b.idempotency_key IN (SELECT x.idempotency_key FROM {x})
            OR (b.slot_id = $3 AND b.status <> 'CANCELLED'
                AND b.customer_key IN (SELECT x.customer_key FROM {x})))",
        x = json_rows(
            db.dialect,
            2,
            &[("customer_key", "text"), ("idempotency_key", "text")]
        )
    ))
    .bind(merchant_id)
    .bind(Value::Array(asked).to_string())
    .bind(slot.id)
    .fetch_all(&db.pool)
    .await?;
    let alone = |l: &BookLine| {
        known
            .iter()
            .any(|(key, customer)| (key.is_some() && *key == l.key) || *customer == l.customer_key)
    };
    // The refusal names what is left against each booking's party, in its request's language:
    // one per party size and language.
    let now = db.now_ms();
    let mut by_places = std::collections::HashMap::new();
    let mut answers = Vec::with_capacity(lines.len());
    for l in lines {
        if alone(l) {
            answers.push(None);
            continue;
        }
        let (code, message, details) = match by_places.get(&(l.places, l.lang)) {
            Some(why) => why,
            None => match crate::i18n::scope(l.lang, refused(db, merchant_id, slot, now, l.places))
                .await
            {
                Ok(DomainError::Conflict {
                    code,
                    message,
                    details,
                }) => by_places
                    .entry((l.places, l.lang))
                    .or_insert((code, message, details)),
                Err(DomainError::Db(e)) => return Err(e),
                // Anything else: each alone says it.
                _ => return Ok(Vec::new()),
            },
        };
        answers.push(Some(Err(DomainError::conflict(
            code,
            message.clone(),
            details.clone(),
        ))));
    }
    Ok(answers)
}

/// Takes `places` of a slot in a booking's transaction, or says no: the one conditional update
/// every booking goes through. The service must be on sale too (product online, in its sale
/// window, priced): the same rules as its verdict, decided by the same statement.
pub(super) async fn take_places(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    merchant_id: MerchantId,
    slot_id: i64,
    places: i64,
    now: i64,
) -> Result<bool, sqlx::Error> {
    let took = sqlx::query(&format!(
        "UPDATE slots SET booked = booked + $4, updated_at = $1
         WHERE id = $2 AND merchant_id = $3 AND status = 'OPEN' AND booked + $4 <= capacity AND starts_at > $1
           AND frozen_finding_id IS NULL AND {}",
        crate::domain::catalog::sale::on_sale_sql("slots.sku_id", "$1")
    ))
    .bind(now)
    .bind(slot_id)
    .bind(merchant_id)
    .bind(places)
    .execute(&mut **tx)
    .await?;
    Ok(took.rows_affected() == 1)
}

/// Gives a cancelled booking's places back to its slot, in the cancel's transaction.
pub(super) async fn free_places(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    slot_id: i64,
    places: i64,
    now: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE slots SET booked = booked - $3, updated_at = $1 WHERE id = $2 AND booked >= $3",
    )
    .bind(now)
    .bind(slot_id)
    .bind(places)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
