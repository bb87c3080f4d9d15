-- Per service (issue 19): how long before a slot's start a customer may still book it
-- (`min_notice_minutes`), and until how long before the start a customer may still cancel or
-- reschedule it themselves (`change_cutoff_minutes`; staff can always cancel before the start).
-- 0: until the start, as before.
ALTER TABLE skus ADD COLUMN min_notice_minutes BIGINT NOT NULL DEFAULT 0 CHECK (min_notice_minutes >= 0);
ALTER TABLE skus ADD COLUMN change_cutoff_minutes BIGINT NOT NULL DEFAULT 0 CHECK (change_cutoff_minutes >= 0);
