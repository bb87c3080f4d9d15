-- Check-in before the start (issue 54, walk-through 4): staff mark a customer attended from this
-- many minutes before the slot starts (a customer arriving early is checked in as they come); a
-- no-show is still only after the start.
ALTER TABLE stores ADD COLUMN check_in_minutes BIGINT NOT NULL DEFAULT 30;
