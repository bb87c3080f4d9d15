//! SQL fragments for writers that must move stock inside a larger statement of their own (a hot
//! SKU's group of orders holds its units, writes its ledger rows and their events in one
//! statement on PostgreSQL). The balance's condition is written here, as in [`super::apply`], so
//! `stock_balances` keeps one author (the house test finds a write of it outside `stock`).

/// The conditional UPDATE that locks `qty` units of one balance, or matches no row when they are
/// not all there; it returns the buckets after the move. Each argument is an SQL expression (a
/// bound parameter, a column of the caller's CTE).
pub fn lock_units(qty: &str, now: &str, (sku_id, warehouse_id): (&str, &str)) -> String {
    format!(
        "UPDATE stock_balances SET locked = locked + {qty}, version = version + 1, updated_at = {now}
         WHERE sku_id = {sku_id} AND warehouse_id = {warehouse_id} AND total - locked - sold - frozen >= {qty}
         RETURNING total, locked, sold, frozen"
    )
}

/// The head of an INSERT of new balances with their total, for a seeder (the bench) whose
/// `select` gives `merchant_id, sku_id, warehouse_id, total, updated_at` per row; each total must
/// come with its `RECEIVE` ledger rows, as [`super::apply`] writes them.
pub fn seed_balances(select: &str) -> String {
    format!(
        "INSERT INTO stock_balances (merchant_id, sku_id, warehouse_id, total, updated_at)
         {select}"
    )
}
