-- Slots for services: who works (staff, closures) is kept apart from how many a slot takes
-- (capacity). Leave closes slots; it never edits capacity.

-- The public booking page addresses a store by this slug alone, so it is unique across merchants.
ALTER TABLE stores ADD COLUMN public_slug TEXT;
UPDATE stores SET public_slug = (SELECT m.slug FROM merchants m WHERE m.id = stores.merchant_id) || '-' || slug;
CREATE UNIQUE INDEX stores_public_slug ON stores (public_slug);

CREATE TABLE staff (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    store_id BIGINT NOT NULL REFERENCES stores(id),
    name TEXT NOT NULL,
    active SMALLINT NOT NULL DEFAULT 1,
    -- Bumped by every one-off slot created for this person: serialises the overlap check.
    version BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    CONSTRAINT staff_store_name UNIQUE (store_id, name)
);

-- Weekly opening per service SKU and store (and staff member when set). Minutes after local midnight.
CREATE TABLE schedule_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    store_id BIGINT NOT NULL REFERENCES stores(id),
    staff_id BIGINT REFERENCES staff(id),
    weekday BIGINT NOT NULL CHECK (weekday BETWEEN 0 AND 6),
    opens_min BIGINT NOT NULL CHECK (opens_min BETWEEN 0 AND 1439),
    closes_min BIGINT NOT NULL CHECK (closes_min BETWEEN 1 AND 1440),
    slot_minutes BIGINT NOT NULL CHECK (slot_minutes BETWEEN 5 AND 1440),
    capacity BIGINT NOT NULL CHECK (capacity BETWEEN 1 AND 1000),
    created_at BIGINT NOT NULL,
    CHECK (opens_min < closes_min)
);
CREATE INDEX schedule_rules_sku ON schedule_rules (sku_id, store_id);

CREATE TABLE closures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    store_id BIGINT NOT NULL REFERENCES stores(id),
    -- NULL: the whole store.
    staff_id BIGINT REFERENCES staff(id),
    starts_at BIGINT NOT NULL,
    ends_at BIGINT NOT NULL,
    reason TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    reopened_at BIGINT,
    CHECK (starts_at < ends_at)
);
CREATE INDEX closures_store ON closures (store_id, starts_at);

CREATE TABLE slots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    sku_id BIGINT NOT NULL REFERENCES skus(id),
    store_id BIGINT NOT NULL REFERENCES stores(id),
    staff_id BIGINT REFERENCES staff(id),
    -- staff_id or 0: NULLs never collide in a unique index, and "no staff" must.
    staff_key BIGINT NOT NULL DEFAULT 0,
    starts_at BIGINT NOT NULL,
    ends_at BIGINT NOT NULL,
    capacity BIGINT NOT NULL,
    booked BIGINT NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'CLOSED')),
    closed_reason TEXT,
    closure_id BIGINT REFERENCES closures(id),
    source TEXT NOT NULL CHECK (source IN ('RULE', 'ONE_OFF')),
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT slots_unique_start UNIQUE (sku_id, store_id, staff_key, starts_at),
    CONSTRAINT slots_counts CHECK (capacity BETWEEN 1 AND 1000 AND booked >= 0 AND booked <= capacity),
    CHECK (starts_at < ends_at)
);
CREATE INDEX slots_store_time ON slots (store_id, starts_at);
CREATE INDEX slots_sku_time ON slots (sku_id, starts_at);

CREATE TABLE bookings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    slot_id BIGINT NOT NULL REFERENCES slots(id),
    reference TEXT NOT NULL UNIQUE,
    customer_name TEXT NOT NULL,
    customer_phone TEXT NOT NULL,
    customer_key TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('BOOKED', 'CANCELLED', 'ATTENDED', 'NO_SHOW')),
    idempotency_key TEXT,
    cancel_reason TEXT,
    source TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- At most one active booking per customer per slot.
CREATE UNIQUE INDEX bookings_one_active ON bookings (slot_id, customer_key) WHERE status <> 'CANCELLED';
CREATE UNIQUE INDEX bookings_idempotency ON bookings (merchant_id, idempotency_key);
CREATE INDEX bookings_slot ON bookings (slot_id, status);
