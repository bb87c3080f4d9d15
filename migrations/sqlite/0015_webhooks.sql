-- Signed webhooks (issue 18): a merchant's endpoints, each event's delivery to each, and every
-- attempt. A webhook's cursor is the last event (seq) fanned out to it; a delivery is claimed by
-- moving next_attempt_at past its lease, so a process killed mid-send leaves it to be sent again.
CREATE TABLE webhooks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant_id BIGINT NOT NULL REFERENCES merchants(id),
    url TEXT NOT NULL,
    -- The event filter as given: types and families, comma-separated (stock.*,booking.cancelled).
    events TEXT NOT NULL,
    -- ACTIVE, PAUSED or DELETED; paused_reason: manual or failing.
    status TEXT NOT NULL,
    paused_reason TEXT,
    -- The signing secret, encrypted with the code keys (it must be read to sign, unlike API keys).
    secret_ct BLOB NOT NULL,
    secret_nonce BLOB NOT NULL,
    secret_key_version BIGINT NOT NULL,
    -- The secret before the last rotation, still signing until old_secret_until.
    old_secret_ct BLOB,
    old_secret_nonce BLOB,
    old_secret_key_version BIGINT,
    old_secret_until BIGINT,
    cursor BIGINT NOT NULL,
    -- Since when every attempt failed (NULL after a success): a day of it pauses the webhook.
    failing_since BIGINT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhooks_merchant ON webhooks (merchant_id, id);

CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id BIGINT NOT NULL REFERENCES webhooks(id),
    event_seq BIGINT NOT NULL,
    -- PENDING, DELIVERED, or FAILED (given up after three days of retries).
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    first_attempt_at BIGINT,
    delivered_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (webhook_id, event_seq);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';

CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id BIGINT NOT NULL REFERENCES webhook_deliveries(id),
    webhook_id BIGINT NOT NULL REFERENCES webhooks(id),
    at BIGINT NOT NULL,
    -- The receiver's HTTP status, or NULL when none came (refused, timed out, no connection).
    status_code BIGINT,
    latency_ms BIGINT NOT NULL,
    -- Why it failed without a status (a stable code: timeout, connect, private_address, ...).
    error TEXT,
    -- The first bytes of the receiver's answer.
    response_head TEXT
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
