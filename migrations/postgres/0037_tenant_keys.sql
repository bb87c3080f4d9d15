-- A goods line and a ledger row name their SKU and warehouse together with their merchant, and the
-- foreign key checks the pair: a row can no longer point at another merchant's SKU or warehouse
-- (the single-column keys allowed that), and the merchant is checked through the SKU's own key.
-- That is the shape docs/scaling.md gives every key under sharding by merchant.
--
-- Why now: each check is a query that locks its parent row FOR KEY SHARE, and a hot SKU's order
-- made ten of them, five of the merchant's one row. The pairs make stock_reservations three
-- (order header, SKU, warehouse) instead of four and stock_ledger two instead of three.
--
-- The events outbox loses its key to merchants, like audit_log (which never had one): both are
-- logs written in the same transaction as the change they describe, whose own rows carry the
-- keys; a change event's key check bought nothing but two more locks of the merchant's row per
-- order. Measured with `bench/run.sh hot-accept postgres 40000 40000 64` (README).
--
-- The new keys are added NOT VALID (they hold for every row written from now on) and checked
-- against the rows already there by 0038, in its own transaction: that scan of the ledger holds
-- a lock that lets orders go on (SHARE UPDATE EXCLUSIVE), where this one's ALTERs hold their
-- tables exclusively only for as long as it takes to change the catalog.
ALTER TABLE skus ADD CONSTRAINT skus_merchant_id UNIQUE (merchant_id, id);
ALTER TABLE warehouses ADD CONSTRAINT warehouses_merchant_id UNIQUE (merchant_id, id);

ALTER TABLE stock_reservations
    DROP CONSTRAINT stock_reservations_merchant_id_fkey,
    DROP CONSTRAINT stock_reservations_sku_id_fkey,
    DROP CONSTRAINT stock_reservations_warehouse_id_fkey,
    ADD CONSTRAINT stock_reservations_sku_of_merchant FOREIGN KEY (merchant_id, sku_id)
        REFERENCES skus (merchant_id, id) NOT VALID,
    ADD CONSTRAINT stock_reservations_warehouse_of_merchant FOREIGN KEY (merchant_id, warehouse_id)
        REFERENCES warehouses (merchant_id, id) NOT VALID;

ALTER TABLE stock_ledger
    DROP CONSTRAINT stock_ledger_merchant_id_fkey,
    DROP CONSTRAINT stock_ledger_sku_id_fkey,
    DROP CONSTRAINT stock_ledger_warehouse_id_fkey,
    ADD CONSTRAINT stock_ledger_sku_of_merchant FOREIGN KEY (merchant_id, sku_id)
        REFERENCES skus (merchant_id, id) NOT VALID,
    ADD CONSTRAINT stock_ledger_warehouse_of_merchant FOREIGN KEY (merchant_id, warehouse_id)
        REFERENCES warehouses (merchant_id, id) NOT VALID;

ALTER TABLE events DROP CONSTRAINT events_merchant_id_fkey;
