-- Reconciliation checks what changed since the last run: the events numbered after the last
-- finished run's watermark (`seq_upto`). A full sweep, on a slower schedule, checks everything.
ALTER TABLE reconcile_runs ADD COLUMN scope TEXT NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'changed'));
-- The events a changed-only run looked at: seq_after < seq <= seq_upto. A full run records the
-- seq_upto it started at (everything up to it was checked) and no seq_after.
ALTER TABLE reconcile_runs ADD COLUMN seq_after BIGINT;
ALTER TABLE reconcile_runs ADD COLUMN seq_upto BIGINT;
