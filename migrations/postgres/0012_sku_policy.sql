-- Per-SKU selling policy (issue 17).

-- When the price was last set; NULL: never set, so the SKU is `no_price`. A price of 0 set on
-- purpose is a free item and sells. SKUs priced before this migration keep their price; those at
-- 0 were unpriced by the old rule and stay so until a person sets a price (0 included).
ALTER TABLE skus ADD COLUMN priced_at BIGINT;
UPDATE skus SET priced_at = updated_at WHERE price > 0;

-- `tracked`: stock is counted and can run out. `unlimited` (digital goods): a sale never blocks
-- and never locks, and still writes its ledger row (total and sold rise together).
ALTER TABLE skus ADD COLUMN stock_policy TEXT NOT NULL DEFAULT 'tracked'
    CHECK (stock_policy IN ('tracked', 'unlimited'));
-- `on_order`: a reservation locks units and payment sells them. `on_payment`: a reservation only
-- checks and records; payment sells with the conditional update, or is refused.
ALTER TABLE skus ADD COLUMN deduct TEXT NOT NULL DEFAULT 'on_order'
    CHECK (deduct IN ('on_order', 'on_payment'));

-- How each order line of goods was held, fixed when the order was made so that a policy changed
-- later never settles an open order the wrong way: `locked` (units locked), `checked` (seen
-- available, sold at payment), `unlimited` (never counted against stock).
ALTER TABLE stock_reservations ADD COLUMN hold TEXT NOT NULL DEFAULT 'locked'
    CHECK (hold IN ('locked', 'checked', 'unlimited'));
