-- A goods line and a ledger row name their SKU and warehouse together with their merchant, and the
-- foreign key checks the pair: a row can no longer point at another merchant's SKU or warehouse,
-- and the merchant is checked through the SKU's own key. The events outbox loses its key to
-- merchants, like audit_log: a log written with the change it describes, whose rows carry the
-- keys. Why (the PostgreSQL twin measures it): each check locks its parent row there.
-- SQLite cannot alter a foreign key: the three tables are copied into tables that have the new
-- keys, with their ids and their AUTOINCREMENT counters, then their indexes are made again.
CREATE UNIQUE INDEX skus_merchant_id ON skus (merchant_id, id);
CREATE UNIQUE INDEX warehouses_merchant_id ON warehouses (merchant_id, id);

CREATE TABLE stock_reservations_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL,
    reservation_id BIGINT NOT NULL REFERENCES reservations(id),
    order_id TEXT NOT NULL,
    sku_id BIGINT NOT NULL,
    warehouse_id BIGINT NOT NULL,
    qty BIGINT NOT NULL CHECK (qty > 0),
    returned BIGINT NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('RESERVED', 'CONFIRMED', 'RELEASED', 'EXPIRED')),
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    hold TEXT NOT NULL DEFAULT 'locked' CHECK (hold IN ('locked', 'checked', 'unlimited')),
    CONSTRAINT stock_reservations_order_sku_wh UNIQUE (merchant_id, order_id, sku_id, warehouse_id),
    CONSTRAINT stock_reservations_returned CHECK (returned >= 0 AND returned <= qty),
    CONSTRAINT stock_reservations_sku_of_merchant FOREIGN KEY (merchant_id, sku_id)
        REFERENCES skus (merchant_id, id),
    CONSTRAINT stock_reservations_warehouse_of_merchant FOREIGN KEY (merchant_id, warehouse_id)
        REFERENCES warehouses (merchant_id, id)
);
INSERT INTO stock_reservations_new (id, merchant_id, reservation_id, order_id, sku_id, warehouse_id, qty, returned,
    status, expires_at, created_at, updated_at, hold)
SELECT id, merchant_id, reservation_id, order_id, sku_id, warehouse_id, qty, returned, status, expires_at,
    created_at, updated_at, hold FROM stock_reservations;
DELETE FROM sqlite_sequence WHERE name = 'stock_reservations_new';
UPDATE sqlite_sequence SET name = 'stock_reservations_new' WHERE name = 'stock_reservations';
DROP TABLE stock_reservations;
ALTER TABLE stock_reservations_new RENAME TO stock_reservations;
CREATE INDEX stock_reservations_reservation ON stock_reservations (reservation_id);
CREATE INDEX stock_reservations_sku_status_expiry ON stock_reservations (sku_id, warehouse_id, status, expires_at);

CREATE TABLE stock_ledger_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL,
    sku_id BIGINT NOT NULL,
    warehouse_id BIGINT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('RECEIVE', 'WRITE_OFF', 'COUNT', 'FREEZE', 'UNFREEZE', 'TRANSFER',
        'RESERVE', 'CONFIRM', 'RELEASE', 'EXPIRE', 'RETURN_RESTOCK', 'RETURN_DAMAGED', 'CORRECTION')),
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
    created_at BIGINT NOT NULL,
    reason_code TEXT,
    CONSTRAINT stock_ledger_sku_of_merchant FOREIGN KEY (merchant_id, sku_id)
        REFERENCES skus (merchant_id, id),
    CONSTRAINT stock_ledger_warehouse_of_merchant FOREIGN KEY (merchant_id, warehouse_id)
        REFERENCES warehouses (merchant_id, id)
);
INSERT INTO stock_ledger_new (id, merchant_id, sku_id, warehouse_id, kind, qty, d_total, d_locked, d_sold, d_frozen,
    total_after, locked_after, sold_after, frozen_after, reason, actor, order_id, event_id, created_at, reason_code)
SELECT id, merchant_id, sku_id, warehouse_id, kind, qty, d_total, d_locked, d_sold, d_frozen, total_after,
    locked_after, sold_after, frozen_after, reason, actor, order_id, event_id, created_at, reason_code
FROM stock_ledger;
DELETE FROM sqlite_sequence WHERE name = 'stock_ledger_new';
UPDATE sqlite_sequence SET name = 'stock_ledger_new' WHERE name = 'stock_ledger';
DROP TABLE stock_ledger;
ALTER TABLE stock_ledger_new RENAME TO stock_ledger;
CREATE INDEX stock_ledger_sku ON stock_ledger (sku_id, created_at);
CREATE INDEX stock_ledger_order ON stock_ledger (merchant_id, order_id);
CREATE INDEX stock_ledger_reason_code ON stock_ledger (sku_id, reason_code) WHERE reason_code IS NOT NULL;
CREATE INDEX stock_ledger_sales ON stock_ledger (merchant_id, created_at) WHERE kind = 'CONFIRM';

CREATE TABLE events_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL,
    -- Set once committed rows are sequenced: the feed's cursor and the event's public id.
    seq BIGINT,
    type TEXT NOT NULL,
    subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    sku_id BIGINT,
    -- A stock move's ledger row: its before and after are read from there.
    ledger_id BIGINT,
    -- JSON: what changed (before/after and the rest).
    data TEXT NOT NULL,
    occurred_at BIGINT NOT NULL
);
INSERT INTO events_new (id, merchant_id, seq, type, subject_kind, subject_id, sku_id, ledger_id, data, occurred_at)
SELECT id, merchant_id, seq, type, subject_kind, subject_id, sku_id, ledger_id, data, occurred_at FROM events;
DELETE FROM sqlite_sequence WHERE name = 'events_new';
UPDATE sqlite_sequence SET name = 'events_new' WHERE name = 'events';
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE UNIQUE INDEX events_seq ON events (seq);
CREATE INDEX events_merchant_seq ON events (merchant_id, seq);
CREATE INDEX events_unsequenced ON events (id) WHERE seq IS NULL;
