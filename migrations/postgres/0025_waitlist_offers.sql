-- The waiting list may offer a freed place and hold it instead of booking it outright (issue 19).
-- A store chooses: `waitlist_hold_minutes` NULL books the first waiting customer at once (as
-- before); N holds the place for N minutes while the customer accepts or declines on their wait's
-- page. The held place is a booking (it counts against the slot like any other, so nobody else can
-- take it) with `hold_until` set; accepting clears it, declining or letting it lapse cancels the
-- booking and the place goes to the next in line. The entry is OFFERED meanwhile, then BOOKED,
-- DECLINED or EXPIRED.
ALTER TABLE stores ADD COLUMN waitlist_hold_minutes BIGINT CHECK (waitlist_hold_minutes BETWEEN 1 AND 1440);
ALTER TABLE bookings ADD COLUMN hold_until BIGINT;
CREATE INDEX bookings_hold_until ON bookings (hold_until) WHERE hold_until IS NOT NULL;
ALTER TABLE waitlist DROP CONSTRAINT waitlist_status_check;
ALTER TABLE waitlist ADD CONSTRAINT waitlist_status_check
    CHECK (status IN ('WAITING', 'OFFERED', 'BOOKED', 'DECLINED', 'CANCELLED', 'EXPIRED'));
