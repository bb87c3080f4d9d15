-- Automatic no-shows (issue 19): a store may have bookings of a slot that ended this many
-- minutes ago, and that nobody marked, marked NO_SHOW by a job (NULL: off, the default). Who
-- marked a booking attended or no-show, and when, is kept on the booking ('auto' for the job).
ALTER TABLE stores ADD COLUMN auto_no_show_minutes BIGINT CHECK (auto_no_show_minutes IS NULL OR auto_no_show_minutes BETWEEN 1 AND 10080);
ALTER TABLE bookings ADD COLUMN marked_by TEXT;
ALTER TABLE bookings ADD COLUMN marked_at BIGINT;
