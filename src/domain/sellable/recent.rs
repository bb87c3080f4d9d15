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
//! Otherwise the page judges live, as before. Nothing here decides a sale: reservations and
//! bookings never read it.

use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{read_all, Selection, Thresholds, Verdict};
use crate::domain::error::DomainResult;
use crate::domain::{MerchantId, Scope};
use crate::i18n::{self, Lang};
use crate::infra::db::{now_ms, Db};

/// How long a language asked for by a page is still judged by the watcher.
const WANTED_MS: i64 = 10 * 60_000;

/// One catalog as judged: every merchant's (`None`) or one merchant's, in one language.
#[derive(Clone)]
struct Kept {
    /// When its reading began: the clock (ms), for saying how old it is, and the instant and
    /// the count of changes then, for deciding whether it may be used.
    read_at: i64,
    began: Instant,
    changes: u64,
    verdicts: Arc<Vec<Verdict>>,
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
}

impl Recent {
    /// A change was made through this instance (and committed): nothing whose reading began
    /// before now is used.
    pub fn changed(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
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
                .is_some_and(|v| v.began > kept.began);
            if !newer {
                k.insert((merchant, lang), kept);
            }
        }
    }

    /// The freshest usable catalog for `merchant` (None: every merchant's): its own, or every
    /// merchant's narrowed to it.
    fn find(&self, merchant: Option<MerchantId>, lang: Lang, max_age: i64) -> Option<Catalog> {
        let changes = self.changes();
        let usable = |k: &Kept| k.changes == changes && self.young(k, max_age);
        let k = self.kept.lock().ok()?;
        let own = k.get(&(merchant, lang)).filter(|k| usable(k));
        let all = merchant
            .and_then(|_| k.get(&(None, lang)))
            .filter(|k| usable(k));
        let best = match (own, all) {
            (Some(a), Some(b)) if b.began > a.began => b,
            (Some(a), _) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
        Some(Catalog::narrowed(
            best.read_at,
            best.verdicts.clone(),
            merchant,
        ))
    }
}

/// A catalog's verdicts (a whole catalog, or one merchant's part of it) and when their facts
/// were read. Reads as a slice of verdicts, in merchant and code order.
#[derive(Clone)]
pub struct Catalog {
    /// When the facts were read (ms).
    pub read_at: i64,
    all: Arc<Vec<Verdict>>,
    range: Range<usize>,
}

impl Catalog {
    fn whole(read_at: i64, verdicts: Vec<Verdict>) -> Catalog {
        let range = 0..verdicts.len();
        Catalog {
            read_at,
            all: Arc::new(verdicts),
            range,
        }
    }

    /// One merchant's verdicts: a run of the list, which is ordered by merchant first.
    fn narrowed(read_at: i64, all: Arc<Vec<Verdict>>, merchant: Option<MerchantId>) -> Catalog {
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
    type Target = [Verdict];
    fn deref(&self) -> &[Verdict] {
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
    let recent = &db.caches.verdicts;
    let max_age_ms = recent.max_age();
    let merchant = scope.narrowed(merchant_id).bind();
    let lang = i18n::current();
    recent.want(lang, now_ms());
    if max_age_ms > 0 {
        if let Some(c) = recent.find(merchant, lang, max_age_ms) {
            return Ok(c);
        }
    }
    let read = read_all(db, th, Selection::Tenant(scope.narrowed(merchant_id))).await?;
    let c = Catalog::whole(read.now, read.judge(db, th));
    if max_age_ms > 0 {
        recent.keep(
            merchant,
            lang,
            Kept {
                read_at: c.read_at,
                began: read.began,
                changes: read.changes,
                verdicts: c.all.clone(),
            },
            max_age_ms,
        );
    }
    Ok(c)
}

/// Every merchant's catalog, for the watcher: judged in the current language (returned), and
/// kept in each language pages asked for lately.
pub(super) async fn judge_for_watch(db: &Db, th: &Thresholds) -> DomainResult<Arc<Vec<Verdict>>> {
    let read = read_all(db, th, Selection::Tenant(Scope::All)).await?;
    let verdicts = Arc::new(read.judge(db, th));
    let recent = &db.caches.verdicts;
    let max_age_ms = recent.max_age();
    if max_age_ms > 0 {
        let here = i18n::current();
        for lang in recent.wanted(read.now) {
            let judged = if lang == here {
                verdicts.clone()
            } else {
                Arc::new(i18n::scope(lang, async { read.judge(db, th) }).await)
            };
            recent.keep(
                None,
                lang,
                Kept {
                    read_at: read.now,
                    began: read.began,
                    changes: read.changes,
                    verdicts: judged,
                },
                max_age_ms,
            );
        }
    }
    Ok(verdicts)
}
