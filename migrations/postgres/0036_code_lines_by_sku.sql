-- A voucher pool loaded afresh into Redis (`domain::gate::code_records`) puts back the records of
-- the orders that took its codes recently (the longest hold and an hour), so that their retries
-- are recognised after a flush. This index makes that a range read of the SKU's recent lines, not
-- a scan of every order's.
CREATE INDEX code_reservations_sku_created ON code_reservations (sku_id, created_at);
