-- Safety: the country a store's phone numbers default to, the client address of a public booking
-- (for the per-address cap), a customer-facing note on closures, and locks that serialise one
-- customer's bookings so the caps cannot be raced past.

-- ISO 3166 alpha-2; NULL: follows from the timezone (Asia/Shanghai → CN).
ALTER TABLE stores ADD COLUMN country TEXT;
UPDATE stores SET country = 'CN' WHERE timezone IN ('Asia/Shanghai', 'Asia/Chongqing', 'Asia/Harbin', 'Asia/Urumqi', 'PRC');

ALTER TABLE bookings ADD COLUMN client_ip TEXT;
CREATE INDEX bookings_customer ON bookings (customer_key, status);
CREATE INDEX bookings_client_ip ON bookings (client_ip, status);

-- What customers read about the slots a closure closes; the reason stays for staff.
ALTER TABLE closures ADD COLUMN public_note TEXT;

-- One row per store and customer (phone or address), upserted at the start of a public booking's
-- transaction: the row lock makes a second booking of the same customer wait until the first has
-- committed, so the count of active bookings it then reads is the truth.
CREATE TABLE booking_locks (
    store_id BIGINT NOT NULL,
    subject TEXT NOT NULL,
    touched_at BIGINT NOT NULL,
    PRIMARY KEY (store_id, subject)
);

-- Session ids are stored hashed from now on: sessions stored under raw ids can no longer be found.
DELETE FROM sessions;

-- 1 once staff set a slot's capacity by hand: rule changes leave that capacity alone.
ALTER TABLE slots ADD COLUMN capacity_edited SMALLINT NOT NULL DEFAULT 0;
