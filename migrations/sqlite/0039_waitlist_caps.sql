-- The waiting list keeps the public caps (issue 52, finding 3): an entry made on the public page
-- records the client's address (by /64 for IPv6) and the per-phone and per-address caps it was
-- made under, so joining and the booking the list later makes both stay within them. Entries
-- made by staff or the API leave them NULL: those callers answer for their own customers.
ALTER TABLE waitlist ADD COLUMN client_ip TEXT;
ALTER TABLE waitlist ADD COLUMN cap_per_phone BIGINT;
ALTER TABLE waitlist ADD COLUMN cap_per_address BIGINT;
CREATE INDEX waitlist_open_by_ip ON waitlist (client_ip) WHERE status IN ('WAITING', 'OFFERED');
CREATE INDEX waitlist_open_by_customer ON waitlist (customer_key) WHERE status IN ('WAITING', 'OFFERED');
