-- The waiting list may offer a freed place and hold it instead of booking it outright (issue 19).
-- See the PostgreSQL migration of the same number. SQLite cannot change a CHECK constraint in
-- place, so the waiting list is copied into a table with the new states (nothing references it).
ALTER TABLE stores ADD COLUMN waitlist_hold_minutes BIGINT CHECK (waitlist_hold_minutes BETWEEN 1 AND 1440);
ALTER TABLE bookings ADD COLUMN hold_until BIGINT;
CREATE INDEX bookings_hold_until ON bookings (hold_until) WHERE hold_until IS NOT NULL;
CREATE TABLE waitlist_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    slot_id BIGINT NOT NULL REFERENCES slots(id),
    customer_name TEXT NOT NULL,
    customer_phone TEXT NOT NULL,
    customer_key TEXT NOT NULL,
    places BIGINT NOT NULL CHECK (places >= 1),
    status TEXT NOT NULL CHECK (status IN ('WAITING', 'OFFERED', 'BOOKED', 'DECLINED', 'CANCELLED', 'EXPIRED')),
    booking_id BIGINT REFERENCES bookings(id),
    source TEXT NOT NULL DEFAULT '',
    token TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
INSERT INTO waitlist_new (id, merchant_id, slot_id, customer_name, customer_phone, customer_key, places, status, booking_id, source, token, created_at, updated_at)
    SELECT id, merchant_id, slot_id, customer_name, customer_phone, customer_key, places, status, booking_id, source, token, created_at, updated_at FROM waitlist;
DROP TABLE waitlist;
ALTER TABLE waitlist_new RENAME TO waitlist;
CREATE UNIQUE INDEX waitlist_one_waiting ON waitlist (slot_id, customer_key) WHERE status = 'WAITING';
CREATE INDEX waitlist_slot ON waitlist (slot_id, status, id);
