-- Fair webhooks (issue 52, finding 4): attempts that failed in a row since the last success. An
-- endpoint that keeps failing (timing out, refusing) is paused by the circuit breaker at once,
-- rather than after a day, so it stops holding a sender's connections; the merchant is told.
ALTER TABLE webhooks ADD COLUMN failures_in_a_row BIGINT NOT NULL DEFAULT 0;
