-- Alerts that are a state of the whole system rather than a row's (issue 18): the Redis gate off
-- for over a minute. One row per instance that says so (name 'gate_degraded:<instance>'), renewed
-- every few seconds (seen_at) and dropped when it stops being renewed: the alert opens when the
-- first row appears and closes when the last goes, so several instances emit it once.
CREATE TABLE alerts_open (
    name TEXT PRIMARY KEY,
    since BIGINT NOT NULL,
    seen_at BIGINT NOT NULL
);
