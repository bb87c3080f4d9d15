-- The waiting list of a full slot (issue 19): customers wait in order; when places free, the first
-- waiting customer whose party fits is booked at once (`booking_id`), exactly once (the entry moves
-- WAITING → BOOKED by a conditional update in the booking's transaction). Nobody waits for a slot
-- that has started (EXPIRED). One waiting entry per customer per slot.
CREATE TABLE waitlist (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    slot_id BIGINT NOT NULL REFERENCES slots(id),
    customer_name TEXT NOT NULL,
    customer_phone TEXT NOT NULL,
    customer_key TEXT NOT NULL,
    places BIGINT NOT NULL CHECK (places >= 1),
    status TEXT NOT NULL CHECK (status IN ('WAITING', 'BOOKED', 'CANCELLED', 'EXPIRED')),
    booking_id BIGINT REFERENCES bookings(id),
    source TEXT NOT NULL DEFAULT '',
    -- An unguessable token: the customer's page for this wait (/waitlist/{token}).
    token TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX waitlist_one_waiting ON waitlist (slot_id, customer_key) WHERE status = 'WAITING';
CREATE INDEX waitlist_slot ON waitlist (slot_id, status, id);
-- A booking made from the waiting list says so.
ALTER TABLE bookings ADD COLUMN from_waitlist SMALLINT NOT NULL DEFAULT 0;
