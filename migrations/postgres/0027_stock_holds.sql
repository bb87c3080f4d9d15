-- Units held back from sale (the frozen bucket), one row per hold (issue 20): the SKU's stock page
-- lists what is held, why, by whom and until when; a release takes from one hold (or, from the API
-- without a hold, from the oldest first). Every change to a hold is made in the transaction that
-- moves the frozen bucket, after the balance row's UPDATE, so the open holds of a SKU × warehouse
-- always add up to its frozen units.
CREATE TABLE stock_holds (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    warehouse_id BIGINT NOT NULL REFERENCES warehouses(id),
    qty BIGINT NOT NULL CHECK (qty > 0),
    remaining BIGINT NOT NULL CHECK (remaining >= 0 AND remaining <= qty),
    reason_code TEXT,
    reason TEXT NOT NULL DEFAULT '',
    -- The day (YYYY-MM-DD, the merchant's calendar) the hold is due for release: a reminder, not
    -- an automatic release (held units may be unfit for sale).
    release_on TEXT,
    actor TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    released_at BIGINT
);
CREATE INDEX stock_holds_open ON stock_holds (sku_id, warehouse_id, id) WHERE remaining > 0;
CREATE INDEX stock_holds_merchant_open ON stock_holds (merchant_id, release_on) WHERE remaining > 0;
-- Units frozen before holds were listed become one hold per SKU × warehouse.
INSERT INTO stock_holds (merchant_id, sku_id, warehouse_id, qty, remaining, reason, actor, created_at)
SELECT merchant_id, sku_id, warehouse_id, frozen, frozen, '', 'migration', updated_at
FROM stock_balances WHERE frozen > 0;

-- What one unit cost the merchant (in cents, like prices), for the stock report's value at cost.
-- NULL: not set.
ALTER TABLE skus ADD COLUMN unit_cost BIGINT CHECK (unit_cost IS NULL OR unit_cost >= 0);

-- The name a person goes by, shown where their actions are listed (the stock ledger's "by"):
-- '' until set, and the email address stands in.
ALTER TABLE users ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
