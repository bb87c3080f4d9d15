-- Codes (vouchers, card keys): one row per code, encrypted at rest, found by a keyed hash.

CREATE TABLE code_batches (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    name TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('UPLOAD', 'GENERATED')),
    -- valid: import the valid lines; all: all or nothing.
    mode TEXT NOT NULL CHECK (mode IN ('valid', 'all')),
    status TEXT NOT NULL CHECK (status IN ('CREATING', 'READY', 'PARTIAL', 'FAILED')),
    lines_read BIGINT NOT NULL DEFAULT 0,
    imported BIGINT NOT NULL DEFAULT 0,
    rejected BIGINT NOT NULL DEFAULT 0,
    -- Bytes of the upload, and how far the import got: the progress bar.
    bytes_total BIGINT NOT NULL DEFAULT 0,
    bytes_done BIGINT NOT NULL DEFAULT 0,
    expires_at BIGINT,
    key_version BIGINT NOT NULL,
    failure TEXT,
    -- Bumped while an import runs; a CREATING batch whose heartbeat stopped was abandoned.
    heartbeat_at BIGINT,
    created_by TEXT NOT NULL,
    created_by_user BIGINT,
    -- Generated batches can be downloaded once, by whoever generated them.
    downloaded_at BIGINT,
    created_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE INDEX code_batches_sku ON code_batches (sku_id, id);

CREATE TABLE code_import_errors (
    id BIGSERIAL PRIMARY KEY,
    batch_id BIGINT NOT NULL REFERENCES code_batches(id),
    line BIGINT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX code_import_errors_batch ON code_import_errors (batch_id, line);

CREATE TABLE codes (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    batch_id BIGINT NOT NULL REFERENCES code_batches(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    line BIGINT NOT NULL DEFAULT 0,
    ciphertext BYTEA NOT NULL,
    nonce BYTEA NOT NULL,
    key_version BIGINT NOT NULL,
    code_hash BYTEA NOT NULL,
    -- A code of a batch still CREATING is never sold, whatever its status (codes::NOT_IMPORTING).
    status TEXT NOT NULL CHECK (status IN ('AVAILABLE', 'BOOKING', 'SOLD', 'LOCKED', 'EXPIRED', 'INVALID')),
    reservation_id BIGINT REFERENCES reservations(id),
    order_id TEXT,
    expires_at BIGINT,
    sold_at BIGINT,
    version BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT codes_merchant_hash UNIQUE (merchant_id, code_hash)
);
CREATE INDEX codes_sku_status ON codes (sku_id, status, id);
CREATE INDEX codes_batch ON codes (batch_id, status);
-- Partial: most codes are held by no order, and imports should not pay for indexing NULLs.
CREATE INDEX codes_reservation ON codes (reservation_id) WHERE reservation_id IS NOT NULL;

-- What each order holds of a voucher SKU, kept after the codes return to the pool on release.
CREATE TABLE code_reservations (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    reservation_id BIGINT NOT NULL REFERENCES reservations(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    qty BIGINT NOT NULL CHECK (qty > 0),
    status TEXT NOT NULL CHECK (status IN ('RESERVED', 'CONFIRMED', 'RELEASED', 'EXPIRED')),
    created_at BIGINT NOT NULL,
    CONSTRAINT code_reservations_line UNIQUE (reservation_id, sku_id)
);
