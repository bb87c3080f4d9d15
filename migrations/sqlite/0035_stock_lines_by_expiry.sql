-- The gate's load (`domain::gate::load_stock`) puts back the order records of a SKU's lines whose
-- record would still live in Redis: every held line, and the settled ones that ended less than an
-- hour ago. With `expires_at` in the index the settled ones are a range per warehouse and status,
-- read in time with the last hour's sales, not with the SKU's history. It replaces the index of
-- the same columns without `expires_at`, whose reads it still answers, so a sale writes no more.
DROP INDEX stock_reservations_sku_status;
CREATE INDEX stock_reservations_sku_status ON stock_reservations (sku_id, warehouse_id, status, expires_at);
