-- Change events through a transactional outbox (issue 18). A change writes its event row in its
-- own transaction, with seq NULL. The sequencer (one at a time, on any instance) numbers the
-- committed rows in the order it finds them: a row that commits late gets a later number, so a
-- reader walking seq never passes over one that was still in flight.
CREATE TABLE events (
    id BIGSERIAL PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    -- Set once committed rows are sequenced: the feed's cursor and the event's public id.
    seq BIGINT,
    type TEXT NOT NULL,
    subject_kind TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    sku_id BIGINT,
    -- A stock move's ledger row: its before and after are read from there.
    ledger_id BIGINT,
    -- JSON: what changed (before/after and the rest).
    data TEXT NOT NULL,
    occurred_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX events_seq ON events (seq);
CREATE INDEX events_merchant_seq ON events (merchant_id, seq);
CREATE INDEX events_unsequenced ON events (id) WHERE seq IS NULL;

-- The last number the sequencer gave: its row lock makes one sequencer run at a time.
CREATE TABLE event_sequence (
    id BIGINT PRIMARY KEY,
    last_seq BIGINT NOT NULL
);
INSERT INTO event_sequence (id, last_seq) VALUES (1, 0);
