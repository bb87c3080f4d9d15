-- The keys 0037 added NOT VALID, checked against the rows written before them. VALIDATE takes
-- SHARE UPDATE EXCLUSIVE on the child table: reads and writes go on while it scans. A row that
-- names another merchant's SKU or warehouse stops the migration here, by name.
ALTER TABLE stock_reservations VALIDATE CONSTRAINT stock_reservations_sku_of_merchant;
ALTER TABLE stock_reservations VALIDATE CONSTRAINT stock_reservations_warehouse_of_merchant;
ALTER TABLE stock_ledger VALIDATE CONSTRAINT stock_ledger_sku_of_merchant;
ALTER TABLE stock_ledger VALIDATE CONSTRAINT stock_ledger_warehouse_of_merchant;
