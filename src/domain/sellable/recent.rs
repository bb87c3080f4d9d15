//! The catalog's verdicts as last judged on this instance, for the pages that show a whole
//! catalog (the dashboard's figures, Not sellable, the count on the way back to it).
//!
//! Judging 10,000 SKUs reads some 20,000 rows: 100–150 ms on SQLite on two cores. The verdict
//! watcher judges every catalog anyway, every `SELLABLE_VERDICT_WATCH_SECONDS`; it keeps what it
//! judged here, in the languages pages asked for lately, and a page that computes live keeps its
//! result too. A page takes a kept catalog only when both hold:
//! - no change was made through this instance since its reading began (any request other than a
//!   GET that succeeded, or whose answer never went out, counted once it is over, so after its
//!   commit; a counter, not the clock, which may step back): whoever fixes something here sees it
//!   at once;
//! - it is at most `max_age` old (twice the watch interval): a change made through another
//!   instance, or by a job, shows within that.
//!
//! A kept catalog is also kept up with the change events (the read model of the listings): every
//! event numbered after its reading began names the SKUs it touched (`reconcile::changed`), and
//! those SKUs alone are judged again and put in place before the catalog is used. So a sale, a
//! hold, a booking or a stock move made through any instance shows at once, however old the rest
//! of the catalog is. The orders API's changes (reserve, confirm, release, returns, adjustments,
//! bookings), the edits of a SKU or a product (`sku.updated`, one per SKU), SKUs made
//! (`sku.created`: put in their places, in merchant and code order), the slots, closures,
//! schedules and date overrides of services (their `slot.*` events, and a schedule's
//! `sku.updated`), a staff member renamed (`sku.updated` of each service with a closure of theirs
//! over coming slots), codes moved by hand and batches of codes uploaded or generated (`code.state_changed`,
//! `code_batch.*`), stock sheets applied (their stock moves), bookings marked attended or no-show,
//! the waiting list, order exceptions settled (an order taken again writes its stock, code and
//! booking events), and the public booking pages write such events for every SKU they touch, in
//! the API and the back office alike, and are not counted as changes above
//! (`web::edge::middleware::Evented`); nor are the routes that change nothing a verdict reads (signing
//! in, one's own account, people, API keys, webhooks, looking codes up, staff added or archived,
//! warehouses, stores and their pages, the calls to make). So an
//! instance taking orders or bookings, or where the catalog, the schedules and the stores are
//! being worked on, keeps its catalog. A reconciliation run or correction (it may repair rows
//! without an event) counts when made here, and what a job changes without an event (a code
//! batch's progress, an expiry sweep, a repair) shows within `max_age`, as do the turns that time
//! alone brings (a slot starting, a sale window opening), as they do in `sku.sellable_changed`.
//! A listing asked for `fresh` judges whole whatever is kept.
//!
//! Otherwise the page judges live, as before. Nothing here decides a sale: reservations and
//! bookings never read it.

use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{degraded, read_all, Selection, Thresholds, Verdict};
use crate::domain::kernel::error::DomainResult;
use crate::domain::reconcile::changed;
use crate::domain::{MerchantId, Scope};
use crate::i18n::{self, Lang};
use crate::infra::db::Db;

/// How long a language asked for by a page is still judged by the watcher.
const WANTED_MS: i64 = 10 * 60_000;

/// A verdict as kept: shared, so that putting a few judged again in place copies pointers.
pub type Shared = Arc<Verdict>;

/// One catalog as judged: every merchant's (`None`) or one merchant's, in one language.
#[derive(Clone)]
struct Kept {
    /// When its reading began: the clock (ms), for saying how old it is, and the instant and
    /// the count of changes then, for deciding whether it may be used.
    read_at: i64,
    began: Instant,
    changes: u64,
    /// The last event it holds: the SKUs of the events after it are judged again.
    seq: i64,
    /// Whether the Redis gate was degraded when it was judged (a reason of every verdict).
    degraded: bool,
    verdicts: Arc<Vec<Shared>>,
    /// Where each SKU's verdict is in `verdicts`.
    index: Arc<HashMap<i64, usize>>,
}

impl Kept {
    fn new(read: &super::Read, degraded: bool, verdicts: Vec<Verdict>) -> Kept {
        let verdicts: Vec<Shared> = verdicts.into_iter().map(Arc::new).collect();
        let index = index_of(&verdicts);
        Kept {
            read_at: read.now,
            began: read.began,
            changes: read.changes,
            seq: read.seq,
            degraded,
            verdicts: Arc::new(verdicts),
            index: Arc::new(index),
        }
    }
}

/// The kept catalogs of this instance, beside the pool (`infra::ext`).
pub fn kept(db: &Db) -> std::sync::Arc<Recent> {
    db.ext.get::<Recent>()
}

/// The kept catalogs of this instance.
#[derive(Default)]
pub struct Recent {
    /// Changes made through this instance so far.
    changes: AtomicU64,
    /// The oldest a kept catalog may be (ms); 0 (the default): none is kept.
    max_age: AtomicI64,
    kept: Mutex<HashMap<(Option<MerchantId>, Lang), Kept>>,
    /// The languages pages asked for, and when last.
    wanted: Mutex<HashMap<Lang, i64>>,
    /// Catalogs judged whole, and kept ones brought up to date from the events: what the
    /// read model saves is seen in these (tests, `/metrics`).
    judged: AtomicU64,
    caught_up: AtomicU64,
    /// Held while a catalog is judged whole on the primary for a request, to be kept: one at a
    /// time on this instance, so that views arriving together (after a change, or asking for it
    /// fresh) wait and take what the first kept, rather than each reading every SKU at once
    /// (seconds of CPU and hundreds of MB apiece at 100,000 SKUs).
    whole: tokio::sync::Mutex<()>,
}

impl Recent {
    /// A change was made through this instance (and committed): nothing whose reading began
    /// before now is used.
    pub fn changed(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    /// How many catalogs were judged whole, and how many kept ones were brought up to date from
    /// the events instead, so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.judged.load(Ordering::Relaxed),
            self.caught_up.load(Ordering::Relaxed),
        )
    }

    /// The count of changes so far: taken before a catalog's reading begins.
    pub(super) fn changes(&self) -> u64 {
        self.changes.load(Ordering::SeqCst)
    }

    /// Twice the watch interval: a watcher's catalog is replaced before it is too old. 0 (no
    /// watcher): pages always judge live.
    pub fn set_max_age(&self, ms: i64) {
        self.max_age.store(ms.max(0), Ordering::Relaxed);
    }

    fn max_age(&self) -> i64 {
        self.max_age.load(Ordering::Relaxed)
    }

    fn young(&self, kept: &Kept, max_age: i64) -> bool {
        kept.began.elapsed() <= Duration::from_millis(max_age.max(0) as u64)
    }

    fn want(&self, lang: Lang, now: i64) {
        if let Ok(mut w) = self.wanted.lock() {
            w.insert(lang, now);
        }
    }

    /// The languages pages asked for in the last ten minutes.
    fn wanted(&self, now: i64) -> Vec<Lang> {
        self.wanted
            .lock()
            .map(|w| {
                w.iter()
                    .filter(|(_, at)| now - **at < WANTED_MS)
                    .map(|(l, _)| *l)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Keeps a catalog read at `read_at`, dropping what is too old to be used again.
    fn keep(&self, merchant: Option<MerchantId>, lang: Lang, kept: Kept, max_age: i64) {
        let changes = self.changes();
        if let Ok(mut k) = self.kept.lock() {
            // Only what could still be used is kept.
            k.retain(|_, v| v.changes == changes && self.young(v, max_age));
            let newer = k
                .get(&(merchant, lang))
                .is_some_and(|v| (v.began, v.seq) > (kept.began, kept.seq));
            if !newer {
                k.insert((merchant, lang), kept);
            }
        }
    }

    /// A catalog for `merchant` (its own or every merchant's) whose reading began at or after
    /// `since`: as fresh as a judgement asked for then.
    fn read_since(
        &self,
        merchant: Option<MerchantId>,
        lang: Lang,
        since: Instant,
        degraded: bool,
    ) -> Option<Kept> {
        let k = self.kept.lock().ok()?;
        [Some((merchant, lang)), merchant.map(|_| (None, lang))]
            .into_iter()
            .flatten()
            .filter_map(|key| k.get(&key))
            .find(|v| v.began >= since && v.degraded == degraded)
            .cloned()
    }

    /// The freshest usable catalog for `merchant` (None: every merchant's): its own, or every
    /// merchant's (to be narrowed to it), with the merchant it was kept under.
    fn find(
        &self,
        merchant: Option<MerchantId>,
        lang: Lang,
        max_age: i64,
        degraded: bool,
    ) -> Option<(Option<MerchantId>, Kept)> {
        let changes = self.changes();
        let usable =
            |k: &Kept| k.changes == changes && k.degraded == degraded && self.young(k, max_age);
        let k = self.kept.lock().ok()?;
        let own = k.get(&(merchant, lang)).filter(|k| usable(k));
        let all = merchant
            .and_then(|_| k.get(&(None, lang)))
            .filter(|k| usable(k));
        match (own, all) {
            (Some(a), Some(b)) if b.began > a.began => Some((None, b.clone())),
            (Some(a), _) => Some((merchant, a.clone())),
            (None, Some(b)) => Some((None, b.clone())),
            (None, None) => None,
        }
    }
}

/// A kept catalog with the SKUs of the events since its reading judged again and put in place,
/// and those made since (of its scope) judged and put in their places; None when they are too
/// many (the caller judges the catalog whole), one of them is gone, or the gate turned
/// meanwhile.
async fn caught_up(
    db: &Db,
    th: &Thresholds,
    under: Option<MerchantId>,
    kept: &Kept,
) -> DomainResult<Option<Kept>> {
    // No numbering here (a write, and on SQLite the write lock): the events numbered since, and
    // those committed but not numbered yet, which are seen once more after they are. The last
    // number is read first: an event numbered after that read is still taken (`touched_since`).
    let upto = crate::domain::trail::events::last_numbered(db).await?;
    let touched = changed::touched_since(db, kept.seq).await?;
    if touched.skus.len() > changed::MOST_TOUCHED {
        return Ok(None);
    }
    let (held, other): (Vec<i64>, Vec<i64>) = touched
        .skus
        .into_iter()
        .partition(|id| kept.index.contains_key(id));
    // SKUs this catalog does not hold: made since (each announced by its `sku.created`), here
    // or through another instance, unless they are another merchant's and this is one
    // merchant's catalog.
    let new = match under {
        _ if other.is_empty() => other,
        None => other,
        Some(m) => {
            let sql = format!(
                "SELECT id FROM skus WHERE merchant_id = $1 AND {}",
                crate::infra::db::id_in("id", &other)
            );
            sqlx::query_scalar::<_, i64>(&sql)
                .persistent(false)
                .bind(m.0)
                .fetch_all(&db.pool)
                .await?
        }
    };
    if held.is_empty() && new.is_empty() {
        self::kept(db).caught_up.fetch_add(1, Ordering::Relaxed);
        return Ok(Some(Kept {
            seq: upto.max(kept.seq),
            ..kept.clone()
        }));
    }
    let fresh = super::of_skus_bare(db, th, &held).await?;
    let added = super::of_skus_bare(db, th, &new).await?;
    if fresh.len() != held.len()
        || added.len() != new.len()
        || degraded(db) != kept.degraded
        || !names_agree(&kept.verdicts, &added)
    {
        return Ok(None);
    }
    let mut verdicts = (*kept.verdicts).clone();
    for v in fresh {
        let at = kept.index[&v.meta.sku_id];
        verdicts[at] = Arc::new(v);
    }
    let index = if added.is_empty() {
        kept.index.clone()
    } else {
        verdicts = with_added(verdicts, added);
        Arc::new(index_of(&verdicts))
    };
    self::kept(db).caught_up.fetch_add(1, Ordering::Relaxed);
    Ok(Some(Kept {
        seq: upto.max(kept.seq),
        verdicts: Arc::new(verdicts),
        index,
        ..kept.clone()
    }))
}

/// The order of a catalog (`facts::read_all`'s): merchant name, merchant, SKU code.
fn order_key(v: &Verdict) -> (&str, MerchantId, &str) {
    (&v.meta.merchant_name, v.meta.merchant_id, &v.sku)
}

/// Whether each SKU made since carries the merchant name its merchant's kept SKUs carry. The
/// catalog is ordered by name first, so a merchant whose name differed (no page renames one
/// today) would have its SKUs split in two runs, which `Catalog::narrowed` does not expect:
/// judged whole instead.
fn names_agree(kept: &[Shared], added: &[Verdict]) -> bool {
    if added.is_empty() {
        return true;
    }
    let names: HashMap<MerchantId, &str> = kept
        .iter()
        .map(|v| (v.meta.merchant_id, v.meta.merchant_name.as_str()))
        .collect();
    added.iter().all(|v| {
        names
            .get(&v.meta.merchant_id)
            .is_none_or(|n| *n == v.meta.merchant_name)
    })
}

/// `verdicts` with the SKUs made since merged in, in their places: one sort of the new ones and
/// one pass over the kept ones.
fn with_added(verdicts: Vec<Shared>, added: Vec<Verdict>) -> Vec<Shared> {
    let mut added: Vec<Shared> = added.into_iter().map(Arc::new).collect();
    added.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
    let mut all = Vec::with_capacity(verdicts.len() + added.len());
    let mut added = added.into_iter().peekable();
    for v in verdicts {
        while let Some(n) = added.next_if(|n| order_key(n) < order_key(&v)) {
            all.push(n);
        }
        all.push(v);
    }
    all.extend(added);
    all
}

/// Where each SKU's verdict is.
fn index_of(verdicts: &[Shared]) -> HashMap<i64, usize> {
    verdicts
        .iter()
        .enumerate()
        .map(|(i, v)| (v.meta.sku_id, i))
        .collect()
}

/// A catalog's verdicts (a whole catalog, or one merchant's part of it) and when their facts
/// were read. Reads as a slice of verdicts, in merchant and code order.
#[derive(Clone)]
pub struct Catalog {
    /// When the facts were read (ms); the SKUs touched by events since were judged later.
    pub read_at: i64,
    all: Arc<Vec<Shared>>,
    range: Range<usize>,
}

impl Catalog {
    /// One merchant's verdicts: a run of the list, which is ordered by merchant first.
    fn narrowed(read_at: i64, all: Arc<Vec<Shared>>, merchant: Option<MerchantId>) -> Catalog {
        let range = match merchant {
            None => 0..all.len(),
            Some(m) => {
                let start = all
                    .iter()
                    .position(|v| v.meta.merchant_id == m)
                    .unwrap_or(all.len());
                let len = all[start..]
                    .iter()
                    .take_while(|v| v.meta.merchant_id == m)
                    .count();
                start..start + len
            }
        };
        Catalog {
            read_at,
            all,
            range,
        }
    }
}

impl Deref for Catalog {
    type Target = [Shared];
    fn deref(&self) -> &[Shared] {
        &self.all[self.range.clone()]
    }
}

/// The catalog in scope (operators: of one merchant when `merchant_id` is given), said in the
/// current language: as kept when usable (see the module), else judged now and kept.
pub async fn recent_catalog(
    db: &Db,
    th: &Thresholds,
    scope: Scope,
    merchant_id: Option<MerchantId>,
) -> DomainResult<Catalog> {
    recent_catalog_reading(db, db, th, scope, merchant_id).await
}

/// As [`recent_catalog`], judging on `read` (the read replica, when it may be used) when no
/// kept catalog is usable; what the replica gave is not kept.
pub async fn recent_catalog_reading(
    db: &Db,
    read: &Db,
    th: &Thresholds,
    scope: Scope,
    merchant_id: Option<MerchantId>,
) -> DomainResult<Catalog> {
    let recent = &kept(db);
    let max_age_ms = recent.max_age();
    let merchant = scope.narrowed(merchant_id).bind();
    let lang = i18n::current();
    recent.want(lang, db.now_ms());
    // A handle on the replica neither numbers events (a write) nor keeps what it read: it
    // judges live (`infra::replica`).
    let keeps = max_age_ms > 0 && !db.on_replica;
    let mut from = read;
    // Looked for once, then again after waiting for any whole judgement under way (which kept
    // what this view can take). The gate's state is read each time: the wait may be long.
    let mut turn = None;
    loop {
        if keeps {
            if let Some((under, kept)) = recent.find(merchant, lang, max_age_ms, degraded(db)) {
                match caught_up(db, th, under, &kept).await {
                    Ok(Some(kept)) => {
                        let c = Catalog::narrowed(kept.read_at, kept.verdicts.clone(), merchant);
                        recent.keep(under, lang, kept, max_age_ms);
                        return Ok(c);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "a kept catalog could not catch up: judged whole")
                    }
                }
                // Judged whole on the primary, so that it is kept and replaces the one that
                // could not catch up.
                from = db;
            }
        }
        // Only a judgement that will be kept is worth waiting for: one off the replica (kept by
        // nobody, and not to be held up by a replica that hangs) or with nothing kept at all
        // (the watcher off) runs at once, as before.
        if turn.is_some() || !keeps || from.on_replica {
            break;
        }
        turn = Some(recent.whole.lock().await);
    }
    judge_whole(db, from, th, scope, merchant_id, keeps).await
}

/// The catalog in scope judged whole now on the primary, whatever is kept (an operator who
/// asked for it fresh), and kept for the pages after it.
pub async fn judged_now(
    db: &Db,
    th: &Thresholds,
    scope: Scope,
    merchant_id: Option<MerchantId>,
) -> DomainResult<Catalog> {
    let recent = &kept(db);
    let asked = Instant::now();
    let keeps = recent.max_age() > 0 && !db.on_replica;
    let lang = i18n::current();
    recent.want(lang, db.now_ms());
    let _turn = if keeps {
        Some(recent.whole.lock().await)
    } else {
        None
    };
    // One judged whole since this was asked (by a view that came at the same time) is as fresh.
    let merchant = scope.narrowed(merchant_id).bind();
    if let Some(kept) = recent.read_since(merchant, lang, asked, degraded(db)) {
        return Ok(Catalog::narrowed(kept.read_at, kept.verdicts, merchant));
    }
    judge_whole(db, db, th, scope, merchant_id, keeps).await
}

/// Judges every SKU in scope on `from` (the primary `db`, or its replica), and keeps the result
/// in the primary's caches unless it came off the replica.
async fn judge_whole(
    db: &Db,
    from: &Db,
    th: &Thresholds,
    scope: Scope,
    merchant_id: Option<MerchantId>,
    keeps: bool,
) -> DomainResult<Catalog> {
    let recent = &kept(db);
    let degraded = degraded(db);
    let read = read_all(
        from,
        th,
        Selection::Tenant(scope.narrowed(merchant_id)),
        false,
    )
    .await?;
    let kept = Kept::new(&read, degraded, read.judge(from, th));
    recent.judged.fetch_add(1, Ordering::Relaxed);
    let c = Catalog::narrowed(kept.read_at, kept.verdicts.clone(), None);
    if keeps && !from.on_replica {
        recent.keep(
            scope.narrowed(merchant_id).bind(),
            i18n::current(),
            kept,
            recent.max_age(),
        );
    }
    Ok(c)
}

/// Every merchant's catalog, for the watcher: judged in the current language (returned), and
/// kept in each language pages asked for lately.
pub(super) async fn judge_for_watch(db: &Db, th: &Thresholds) -> DomainResult<Arc<Vec<Shared>>> {
    let read = read_all(db, th, Selection::Tenant(Scope::All), false).await?;
    let degraded = degraded(db);
    let here = Kept::new(&read, degraded, read.judge(db, th));
    let verdicts = here.verdicts.clone();
    let recent = &kept(db);
    recent.judged.fetch_add(1, Ordering::Relaxed);
    let max_age_ms = recent.max_age();
    if max_age_ms > 0 {
        let lang_here = i18n::current();
        for lang in recent.wanted(read.now) {
            let judged = if lang == lang_here {
                here.clone()
            } else {
                let v = i18n::scope(lang, async { read.judge(db, th) }).await;
                Kept::new(&read, degraded, v)
            };
            recent.keep(None, lang, judged, max_age_ms);
        }
    }
    Ok(verdicts)
}
