//! Show, no-show and vacancy per service and week: rates, never a stock-like sum of places.

use crate::web::kit::paths;
use crate::web::view::store::Tab;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use chrono::{Duration, NaiveDate};
use serde::Deserialize;

use crate::domain::catalog::Sku;
use crate::domain::slots::booking::{self, SlotMetrics};
use crate::domain::slots::schedule;
use crate::i18n::Lang;
use crate::web::admin::services::slots::service_options;
use crate::web::kit::error::WebError;
use crate::web::kit::layout::Layout;
use crate::web::kit::page::PageCtx;
use crate::web::view::store::{self, no_store_page, StoreCtx};
use crate::web::view::time::{day_start, monday_of, DATE_FMT};
use crate::web::view::Opt;
use crate::web::AppState;

pub const WEEKS_DEFAULT: i64 = 8;
pub const WEEKS_MAX: i64 = 26;

#[derive(Deserialize, Default)]
pub struct MetricsQuery {
    #[serde(default)]
    store: String,
    #[serde(default)]
    service: String,
    #[serde(default)]
    weeks: String,
}

pub struct WeekFigures {
    pub week: String,
    pub slots: i64,
    pub marked: i64,
    /// Of the marked, the no-shows the store's automatic no-show marked.
    pub auto_marked: i64,
    pub unmarked: i64,
    pub show: String,
    pub no_show: String,
    pub vacancy: String,
}

crate::text_enum! {
    /// The three rates a week's bars show; the text is the bar's CSS class.
    pub enum Rate { Show = "show", NoShow = "no_show", Vacancy = "vacancy" }
}

pub struct Bar {
    pub x: String,
    pub y: String,
    pub height: String,
    pub kind: Rate,
    pub week: String,
    pub value: String,
}

/// A service's figures over the whole period: the headline above its weeks.
pub struct Headline {
    pub slots: i64,
    pub marked: i64,
    pub show: String,
    pub no_show: String,
    pub vacancy: String,
}

pub struct ServiceFigures {
    pub code: String,
    pub name: String,
    pub headline: Headline,
    /// No slot of the service took place in the period: the page says so instead of an empty
    /// chart.
    pub nothing: bool,
    pub weeks: Vec<WeekFigures>,
    pub bars: Vec<Bar>,
    pub labels: Vec<(String, String)>,
    pub chart_width: i64,
}

#[derive(Template)]
#[template(path = "admin/slots/metrics.html")]
struct MetricsPage {
    layout: Layout,
    ctx: StoreCtx,
    weeks: i64,
    service: String,
    services: Vec<Opt>,
    figures: Vec<ServiceFigures>,
}

const GROUP_W: i64 = 48;
/// Room left of the bars for the percentage axis's labels.
const AXIS_W: i64 = 40;
const BAR_W: i64 = 12;

/// One service's table rows and chart, from its figures per week (empty for a week without slots).
fn service_figures(
    lang: Lang,
    sku: &Sku,
    mondays: &[NaiveDate],
    of_week: impl Fn(usize) -> SlotMetrics,
) -> ServiceFigures {
    let mut rows = Vec::new();
    let mut bars = Vec::new();
    let mut labels = Vec::new();
    let mut total = SlotMetrics::default();
    for (i, monday) in mondays.iter().enumerate() {
        let m = of_week(i);
        total += &m;
        let x0 = AXIS_W + i as i64 * GROUP_W + 6;
        for (j, (kind, r)) in [
            (Rate::Show, m.show_rate()),
            (Rate::NoShow, m.no_show_rate()),
            (Rate::Vacancy, m.vacancy_rate()),
        ]
        .into_iter()
        .enumerate()
        {
            let h = r.unwrap_or(0.0).clamp(0.0, 100.0);
            bars.push(Bar {
                x: (x0 + j as i64 * BAR_W).to_string(),
                y: format!("{:.1}", 100.0 - h),
                height: format!("{h:.1}"),
                kind,
                week: monday.format(DATE_FMT).to_string(),
                value: lang.percent(r),
            });
        }
        labels.push((
            (x0 + BAR_W * 3 / 2).to_string(),
            monday.format("%m-%d").to_string(),
        ));
        rows.push(WeekFigures {
            week: monday.format(DATE_FMT).to_string(),
            slots: m.slots,
            marked: m.attended + m.no_show,
            auto_marked: m.auto_no_show,
            unmarked: m.unmarked,
            show: lang.percent(m.show_rate()),
            no_show: lang.percent(m.no_show_rate()),
            vacancy: lang.percent(m.vacancy_rate()),
        });
    }
    ServiceFigures {
        code: sku.code.clone(),
        name: sku.name.clone(),
        headline: Headline {
            slots: total.slots,
            marked: total.attended + total.no_show,
            show: lang.percent(total.show_rate()),
            no_show: lang.percent(total.no_show_rate()),
            vacancy: lang.percent(total.vacancy_rate()),
        },
        nothing: total.slots == 0 && total.attended + total.no_show + total.unmarked == 0,
        weeks: rows,
        bars,
        labels,
        chart_width: AXIS_W + mondays.len() as i64 * GROUP_W,
    }
}

pub async fn metrics(
    State(state): State<AppState>,
    cx: PageCtx,
    Query(q): Query<MetricsQuery>,
) -> Result<Response, WebError> {
    let ctx = store::ctx(
        &state,
        &cx.user,
        &q.store,
        Tab::Metrics,
        &paths::slots_metrics(),
    )
    .await?;
    let Some(store) = ctx.store.clone() else {
        return no_store_page(&cx, ctx).await;
    };
    let tz = store.tz();
    let weeks = q
        .weeks
        .trim()
        .parse::<i64>()
        .unwrap_or(WEEKS_DEFAULT)
        .clamp(1, WEEKS_MAX);
    let skus = schedule::service_skus(&state.db, store.merchant_id).await?;
    let service = q.service.trim().to_string();
    let this_monday = monday_of(state.db.clock.today(tz));
    let mondays: Vec<NaiveDate> = (0..weeks)
        .map(|i| this_monday - Duration::days(7 * (weeks - 1 - i)))
        .collect();
    let bounds: Vec<i64> = mondays
        .iter()
        .chain(std::iter::once(&(this_monday + Duration::days(7))))
        .map(|&d| day_start(tz, d))
        .collect();
    let figures =
        booking::metrics_by_period(&state.db, store.merchant_id, store.id, &bounds).await?;
    let page = MetricsPage {
        layout: cx.layout().await,
        weeks,
        services: service_options(&skus, &service),
        figures: skus
            .iter()
            .filter(|s| service.is_empty() || s.code == service)
            .map(|sku| {
                service_figures(cx.lang, sku, &mondays, |i| {
                    figures.get(&(sku.id, i)).cloned().unwrap_or_default()
                })
            })
            .collect(),
        service,
        ctx,
    };
    cx.whole(&page)
}
