-- Alerts that are a state of the whole system rather than a row's (issue 18): the Redis gate off
-- for over a minute. One row while the condition lasts, so that of several instances only the
-- first to see it opens it (and writes its event), and only one closes it.
CREATE TABLE alerts_open (
    name TEXT PRIMARY KEY,
    since BIGINT NOT NULL
);
