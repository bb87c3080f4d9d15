-- A break after each slot of a range (issue 19): a staff member's slots are spaced by the slot
-- length plus this many minutes (cleaning up, notes, a breather). 0: back to back, as before.
ALTER TABLE schedule_rules ADD COLUMN buffer_minutes BIGINT NOT NULL DEFAULT 0 CHECK (buffer_minutes BETWEEN 0 AND 240);
ALTER TABLE schedule_overrides ADD COLUMN buffer_minutes BIGINT NOT NULL DEFAULT 0 CHECK (buffer_minutes BETWEEN 0 AND 240);
