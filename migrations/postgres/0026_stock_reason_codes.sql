-- Why stock was adjusted, from a fixed list (issue 20): received, correction, count, damaged,
-- theft_loss, qc_hold, return_restock, promotion_donation, other. The free text `reason` stays (the
-- note); reports and the ledger filter by the code. NULL: an adjustment made before codes, or one
-- the order system sent without a code, and every move an order made.
ALTER TABLE stock_ledger ADD COLUMN reason_code TEXT;
CREATE INDEX stock_ledger_reason_code ON stock_ledger (sku_id, reason_code) WHERE reason_code IS NOT NULL;
