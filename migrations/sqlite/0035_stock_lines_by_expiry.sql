-- The gate's load (`domain::gate::load_stock`) puts back the order records of a SKU's lines whose
-- record would still live in Redis: every held line, and the settled ones whose hold ended less
-- than an hour ago. With `expires_at` in the index the settled ones are a range per warehouse and
-- status, read in proportion to the hold's lifetime and an hour of sales, not to the SKU's
-- history. It replaces the index of the same columns without `expires_at`, whose reads it still
-- answers, so a sale writes no more. Built before the old one is dropped: on PostgreSQL the build
-- blocks writes to the table (not reads), and the drop's exclusive lock is then brief.
CREATE INDEX stock_reservations_sku_status_expiry ON stock_reservations (sku_id, warehouse_id, status, expires_at);
DROP INDEX stock_reservations_sku_status;
