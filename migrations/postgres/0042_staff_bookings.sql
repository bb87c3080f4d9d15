-- Staff book for a caller or a walk-in (issue 54). How the booking reached the store: the
-- customer themselves (the public page, the order system, the waiting list) or staff taking it
-- by phone or at the counter; and for a staff booking, who took it. Existing bookings were all
-- made by customers or their order systems.
ALTER TABLE bookings ADD COLUMN channel TEXT NOT NULL DEFAULT 'CUSTOMER' CHECK (channel IN ('CUSTOMER', 'PHONE', 'WALK_IN'));
ALTER TABLE bookings ADD COLUMN taken_by BIGINT REFERENCES users(id);
