//! The vocabulary of "why not sellable": every reason's stable code, its sentence and facts, and
//! the back-office page that fixes it. The catalog's own rules (`sale`) speak it, and so do the
//! verdicts of `sellable`, which read across stock, slots and codes.

use serde::Serialize;
use serde_json::Value;

use crate::messages;

crate::text_enum! {
    /// Why a SKU cannot be sold (or, for the last three, a warning), in the order verdicts list
    /// them. The text is the stable `code` clients branch on.
    pub enum ReasonCode {
        ProductDraft = "product_draft",
        ProductOffline = "product_offline",
        SaleNotStarted = "sale_not_started",
        SaleEnded = "sale_ended",
        NoPrice = "no_price",
        SkuFrozen = "sku_frozen",
        NoStockRecord = "no_stock_record",
        OutOfStock = "out_of_stock",
        NoSchedule = "no_schedule",
        NoSlotsInWindow = "no_slots_in_window",
        AllSlotsClosed = "all_slots_closed",
        AllSlotsFull = "all_slots_full",
        SlotsFrozen = "slots_frozen",
        NextSlotBeyondWindow = "next_slot_beyond_window",
        NoBatch = "no_batch",
        BatchFailed = "batch_failed",
        BatchPartial = "batch_partial",
        BatchImporting = "batch_importing",
        NoCodesAvailable = "no_codes_available",
        GateDegraded = "gate_degraded",
        StockUnlimited = "stock_unlimited",
        LowStock = "low_stock",
        FewSlots = "few_slots",
        CodesRunningOut = "codes_running_out",
    }
}

impl ReasonCode {
    /// The catalogue key of the link to the page that fixes this reason.
    pub fn fix(self) -> &'static str {
        use ReasonCode::*;
        match self {
            ProductDraft | ProductOffline | SaleNotStarted | SaleEnded => "fix-product",
            NoPrice => "fix-price",
            SkuFrozen | SlotsFrozen => "fix-finding",
            NoStockRecord | OutOfStock | LowStock => "fix-stock",
            NoSchedule | NoSlotsInWindow | NextSlotBeyondWindow | FewSlots => "fix-schedule",
            AllSlotsClosed => "fix-closures",
            AllSlotsFull => "fix-week",
            NoBatch | NoCodesAvailable | CodesRunningOut => "fix-codes",
            BatchFailed | BatchPartial | BatchImporting => "fix-batch",
            GateDegraded => "fix-open",
            StockUnlimited => "fix-stock",
        }
    }
}

impl ReasonCode {
    /// Warnings limit a sale, they never block it.
    pub fn is_warning(self) -> bool {
        matches!(
            self,
            ReasonCode::LowStock | ReasonCode::FewSlots | ReasonCode::CodesRunningOut
        )
    }
}

/// Where a reason is fixed: the web layer turns it into a link. A `store` is the store switcher's
/// value (`merchant/store`), empty when no store is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Fix {
    /// Nothing in the back office fixes it.
    #[default]
    Nothing,
    /// The product's page: status and sale window.
    Product { product_id: i64 },
    /// The SKU's edit form: its price.
    SkuEdit { sku_id: i64 },
    /// A reconciliation finding.
    Finding { finding_id: i64 },
    /// A goods SKU's stock page.
    Stock { sku_id: i64 },
    /// A service's weekly schedule.
    Schedule { sku_id: i64, store: String },
    /// One closure.
    Closure { closure_id: i64, store: String },
    /// A store's closures.
    Closures { store: String },
    /// The week grid, filtered to a service.
    Week { store: String, service: String },
    /// A voucher SKU's codes page.
    Codes { sku_id: i64 },
    /// One code batch.
    Batch { batch_id: i64 },
}

impl Fix {
    pub fn is_nothing(&self) -> bool {
        *self == Fix::Nothing
    }
}

/// One thing that blocks or limits a sale.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Reason {
    /// Stable, snake_case: clients branch on it.
    pub code: ReasonCode,
    pub message: String,
    pub facts: Value,
    /// Where in the back office it is fixed; the web layer makes it a link (`fix_url` in JSON).
    #[serde(skip)]
    pub fix: Fix,
    /// A blocking reason makes the SKU not sellable; the others inform.
    pub blocking: bool,
}

impl Reason {
    pub(crate) fn new(code: ReasonCode, message: String, facts: Value, fix: Fix) -> Reason {
        Reason {
            code,
            message,
            facts,
            fix,
            blocking: true,
        }
    }
    pub(crate) fn info(mut self) -> Reason {
        self.blocking = false;
        self
    }
    /// Units held by unpaid orders that this reason counts (out of stock with holds): where the
    /// back office links to the orders holding them.
    pub fn held_by_orders(&self) -> i64 {
        self.facts
            .get("held_by_unpaid_orders")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    }
    pub fn title(&self) -> String {
        messages::reason_title(self.code.as_str())
    }
    pub fn fix_label(&self) -> String {
        messages::fix_label(self.code.fix())
    }
}
