-- A voucher pool loaded afresh into Redis (`domain::gate::code_records`) puts back the records of
-- the orders that took its codes and whose record would still live (their hold and an hour), so
-- that their retries are recognised after a flush. Each line carries its order's expiry (which
-- never changes), and this index makes the read one range of the SKU's lines of the last hold and
-- hour: it grows with recent sales, not with the SKU's history or the longest hold allowed.
ALTER TABLE code_reservations ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
UPDATE code_reservations
SET expires_at = (SELECT r.expires_at FROM reservations r WHERE r.id = code_reservations.reservation_id);
CREATE INDEX code_reservations_sku_expiry ON code_reservations (sku_id, expires_at);
