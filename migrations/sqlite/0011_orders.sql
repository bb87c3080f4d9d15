-- Orders after the hold (issue 17): the payment that confirmed an order, why an order was
-- released, a payment that came after the hold expired, and the exceptions a person must settle.

-- The order system's payment reference, kept from the first confirm that carried one.
ALTER TABLE reservations ADD COLUMN payment_ref TEXT;
-- 1: confirmed after the hold had expired, with every line taken again.
ALTER TABLE reservations ADD COLUMN late_payment SMALLINT NOT NULL DEFAULT 0;
-- Why a person or the order system released the hold (empty: not said).
ALTER TABLE reservations ADD COLUMN release_reason TEXT NOT NULL DEFAULT '';
-- The back office lists orders newest first within a merchant, open holds before the rest.
CREATE INDEX reservations_merchant_status ON reservations (merchant_id, status, created_at);

-- "Paid, not held": a payment the order could not be fulfilled for. Open until a merchant admin
-- resolves it (refunded, or fulfilled after a restock). At most one open exception per order, so
-- a repeated late confirm finds the one it recorded.
CREATE TABLE order_exceptions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    reservation_id BIGINT NOT NULL REFERENCES reservations(id),
    order_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('PAID_NOT_HELD')),
    payment_ref TEXT,
    -- Why: the order's status when the payment came, and the lines that could not be taken (JSON).
    order_status TEXT NOT NULL,
    shortfall TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL CHECK (status IN ('OPEN', 'RESOLVED')),
    resolution TEXT CHECK (resolution IN ('refunded', 'fulfilled')),
    note TEXT NOT NULL DEFAULT '',
    resolved_by TEXT,
    resolved_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX order_exceptions_one_open ON order_exceptions (reservation_id) WHERE status = 'OPEN';
CREATE INDEX order_exceptions_merchant ON order_exceptions (merchant_id, status, id);

-- A place booked by an order (a goods-and-slot order): its booking carries the order.
ALTER TABLE bookings ADD COLUMN reservation_id BIGINT REFERENCES reservations(id);
CREATE INDEX bookings_reservation ON bookings (reservation_id) WHERE reservation_id IS NOT NULL;

-- Codes after sale: VOIDED (refunded or leaked) and REDEEMED (used at the counter) are final; a
-- SOLD code never goes back to sale. SQLite cannot change a CHECK in place: the table is rebuilt
-- (nothing references it yet), its ids and indexes kept.
CREATE TABLE codes_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    batch_id BIGINT NOT NULL REFERENCES code_batches(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    line BIGINT NOT NULL DEFAULT 0,
    ciphertext BLOB NOT NULL,
    nonce BLOB NOT NULL,
    key_version BIGINT NOT NULL,
    code_hash BLOB NOT NULL,
    -- A code of a batch still CREATING is never sold, whatever its status (codes::NOT_IMPORTING).
    status TEXT NOT NULL CHECK (status IN ('AVAILABLE', 'BOOKING', 'SOLD', 'LOCKED', 'EXPIRED', 'INVALID', 'VOIDED', 'REDEEMED')),
    reservation_id BIGINT REFERENCES reservations(id),
    order_id TEXT,
    expires_at BIGINT,
    sold_at BIGINT,
    version BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    redeemed_at BIGINT,
    redeemed_store_id BIGINT REFERENCES stores(id),
    CONSTRAINT codes_merchant_hash UNIQUE (merchant_id, code_hash)
);
INSERT INTO codes_new (id, merchant_id, batch_id, sku_id, line, ciphertext, nonce, key_version, code_hash,
        status, reservation_id, order_id, expires_at, sold_at, version, created_at, updated_at)
    SELECT id, merchant_id, batch_id, sku_id, line, ciphertext, nonce, key_version, code_hash,
        status, reservation_id, order_id, expires_at, sold_at, version, created_at, updated_at FROM codes;
DROP TABLE codes;
ALTER TABLE codes_new RENAME TO codes;
CREATE INDEX codes_sku_status ON codes (sku_id, status, id);
CREATE INDEX codes_batch ON codes (batch_id, status);
CREATE INDEX codes_reservation ON codes (reservation_id) WHERE reservation_id IS NOT NULL;

-- A code's after-sales history: voided, redeemed, reissued, locked, unlocked, invalidated, with
-- who, why and (for a redemption) where. Sold is the code's own sold_at and order.
CREATE TABLE code_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    code_id BIGINT NOT NULL REFERENCES codes(id),
    order_id TEXT,
    action TEXT NOT NULL CHECK (action IN ('VOIDED', 'REDEEMED', 'REISSUED', 'LOCKED', 'UNLOCKED', 'INVALIDATED')),
    reason TEXT NOT NULL DEFAULT '',
    store_id BIGINT REFERENCES stores(id),
    actor TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX code_events_code ON code_events (code_id, id);

-- Codes an order line was handed as replacements: the line's codes (current and voided) number
-- its quantity plus these, which is what reconciliation checks.
ALTER TABLE code_reservations ADD COLUMN reissued BIGINT NOT NULL DEFAULT 0;

-- An order's timeline reads its audit rows by subject ("order:<id>").
CREATE INDEX audit_log_subject ON audit_log (merchant_id, subject, id);

-- How many places (bookings) an order booked when it was reserved: reconciliation checks each
-- has its booking.
ALTER TABLE reservations ADD COLUMN places BIGINT NOT NULL DEFAULT 0;

-- Per-SKU policy: at most this many units in one order, or held and paid by one customer (the
-- reservation's customer_id); a low-stock line of its own (NULL: the global setting).
ALTER TABLE skus ADD COLUMN max_per_order BIGINT;
ALTER TABLE skus ADD COLUMN max_per_customer BIGINT;
ALTER TABLE skus ADD COLUMN low_stock_threshold BIGINT;
ALTER TABLE reservations ADD COLUMN customer_id TEXT;
CREATE INDEX reservations_customer ON reservations (merchant_id, customer_id) WHERE customer_id IS NOT NULL;
-- One row per merchant and customer, upserted at the start of an order's transaction when a line
-- has a per-customer limit: its row lock makes a customer's orders take turns, so the count of
-- what they hold that each then reads is the truth.
CREATE TABLE customer_locks (
    merchant_id BIGINT NOT NULL,
    customer_id TEXT NOT NULL,
    touched_at BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, customer_id)
);
