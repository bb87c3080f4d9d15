-- The to-call list (issue 19): an active booking in a closed slot stays on the list until it is
-- moved, cancelled or its slot is over; staff mark whom they reached and note what was said.
ALTER TABLE bookings ADD COLUMN contacted_at BIGINT;
ALTER TABLE bookings ADD COLUMN contacted_by TEXT;
ALTER TABLE bookings ADD COLUMN contact_note TEXT;
CREATE INDEX slots_store_status ON slots (store_id, status, ends_at);
