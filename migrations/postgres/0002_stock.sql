-- Stock for goods: balances per SKU x warehouse, an append-only ledger, reservations by order.
-- available = total - locked - sold - frozen is derived, never stored.

CREATE TABLE stock_balances (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    warehouse_id BIGINT NOT NULL REFERENCES warehouses(id),
    total BIGINT NOT NULL DEFAULT 0,
    locked BIGINT NOT NULL DEFAULT 0,
    sold BIGINT NOT NULL DEFAULT 0,
    frozen BIGINT NOT NULL DEFAULT 0,
    version BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL,
    CONSTRAINT stock_balances_sku_warehouse UNIQUE (sku_id, warehouse_id),
    CONSTRAINT stock_balances_buckets CHECK (total >= 0 AND locked >= 0 AND sold >= 0 AND frozen >= 0
        AND locked + sold + frozen <= total)
);
CREATE INDEX stock_balances_merchant ON stock_balances (merchant_id, sku_id);

-- One row per change of one balance. Bucket deltas and the buckets after the change; the buckets
-- before are after minus delta. event_id makes a replayed write impossible to book twice.
CREATE TABLE stock_ledger (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    warehouse_id BIGINT NOT NULL REFERENCES warehouses(id),
    kind TEXT NOT NULL CHECK (kind IN ('RECEIVE', 'WRITE_OFF', 'COUNT', 'FREEZE', 'UNFREEZE', 'TRANSFER',
        'RESERVE', 'CONFIRM', 'RELEASE', 'EXPIRE', 'RETURN_RESTOCK', 'RETURN_DAMAGED')),
    qty BIGINT NOT NULL,
    d_total BIGINT NOT NULL DEFAULT 0,
    d_locked BIGINT NOT NULL DEFAULT 0,
    d_sold BIGINT NOT NULL DEFAULT 0,
    d_frozen BIGINT NOT NULL DEFAULT 0,
    total_after BIGINT NOT NULL,
    locked_after BIGINT NOT NULL,
    sold_after BIGINT NOT NULL,
    frozen_after BIGINT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    actor TEXT NOT NULL,
    order_id TEXT,
    event_id TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);
CREATE INDEX stock_ledger_sku ON stock_ledger (sku_id, created_at);
CREATE INDEX stock_ledger_order ON stock_ledger (merchant_id, order_id);

-- One row per order: the unit of idempotency for reserve / confirm / release.
CREATE TABLE reservations (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    order_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('RESERVED', 'CONFIRMED', 'RELEASED', 'EXPIRED')),
    -- The items as first requested, canonicalised: a retry must ask for the same thing.
    fingerprint TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT reservations_merchant_order UNIQUE (merchant_id, order_id)
);
CREATE INDEX reservations_expiry ON reservations (status, expires_at);

CREATE TABLE stock_reservations (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    reservation_id BIGINT NOT NULL REFERENCES reservations(id),
    order_id TEXT NOT NULL,
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    warehouse_id BIGINT NOT NULL REFERENCES warehouses(id),
    qty BIGINT NOT NULL CHECK (qty > 0),
    returned BIGINT NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('RESERVED', 'CONFIRMED', 'RELEASED', 'EXPIRED')),
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT stock_reservations_order_sku_wh UNIQUE (merchant_id, order_id, sku_id, warehouse_id),
    CONSTRAINT stock_reservations_returned CHECK (returned >= 0 AND returned <= qty)
);
CREATE INDEX stock_reservations_reservation ON stock_reservations (reservation_id);
CREATE INDEX stock_reservations_sku_status ON stock_reservations (sku_id, warehouse_id, status);

-- Idempotency for stock adjustments and returns: the first answer is kept and replayed.
CREATE TABLE idempotent_requests (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    scope TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    CONSTRAINT idempotent_requests_key UNIQUE (merchant_id, scope, idem_key)
);
