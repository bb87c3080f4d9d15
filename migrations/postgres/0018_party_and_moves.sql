-- Party sizes (issue 19): a booking takes `places` of its slot (default 1), and a service says
-- how many one booking may take (`skus.max_places`, default 1: a service takes parties only once
-- the merchant says so). A slot's `booked` counts places, so capacity, the conditional update and
-- reconciliation all count places; a customer still holds one booking per slot.
ALTER TABLE bookings ADD COLUMN places BIGINT NOT NULL DEFAULT 1 CHECK (places >= 1);
ALTER TABLE skus ADD COLUMN max_places BIGINT NOT NULL DEFAULT 1 CHECK (max_places >= 1 AND max_places <= 1000);

-- Moves (issue 19): staff move a booking to another slot of the same service, keeping its
-- reference; the slot it last came from is kept on the booking (the audit log has every move).
-- No foreign key: a schedule save may delete that slot once nothing is booked in it.
ALTER TABLE bookings ADD COLUMN moved_from_slot_id BIGINT;
